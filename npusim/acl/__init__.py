"""``npusim.acl``: the pyACL-style facade (contract: design.md §3.1).

C prefix -> module (``aclrt*`` -> ``acl.rt``, ``aclmdl*`` -> ``acl.mdl``), CamelCase -> snake_case;
outputs come first in a tuple and the error code last; a call with no outputs returns just the code.
Misuse never raises: it returns the code the real runtime returns. Constants carry their C names.

Wrapping, outermost first: the argument boundary (``_boundary.py``: hostile Python values become
the value C would see, or a code, before anything runs), the host trace and capture linter
(``_hosttrace.py``), the fault-injection point (``npusim.faults``), the runtime function.
"""
from __future__ import annotations

from .. import errors as _errors
from ..runtime import api_lifecycle as _life
from ..runtime.runtime import ERROR_WATCHERS as _ERROR_WATCHERS
from ..runtime.runtime import profile as _profile
from . import mdl, rt, util
from .constants import *  # noqa: F401,F403  (enum constants with their C names)

for _c in _errors._TABLE:
    globals()[_c[0]] = _c[1]


from .. import faults as _faults  # noqa: E402
from ..analysis import lint as _lint  # noqa: E402
from . import _boundary, _launchmemo  # noqa: E402
from ._hosttrace import instrument as _instrument  # noqa: E402

_faults.instrument(rt, "acl.rt")     # fault-injection points (npusim.inject), inside the trace
_faults.instrument(mdl, "acl.mdl")
_instrument(rt, "aclrt")
rt.launch_kernel = _launchmemo.front(rt.launch_kernel)   # repeated launches: one compiled call
_instrument(mdl, "aclmdlRI")


def _told(api: str, code: int) -> int:
    """A failure of ``acl.init`` / ``acl.finalize``, which set no recent error message (the
    real ones only log at INFO level, acl.cpp:388-391), told to ``npusim run --explain``."""
    if code and _ERROR_WATCHERS:
        c = _errors.BY_VALUE.get(code)
        for watch in _ERROR_WATCHERS:
            watch(f"{api} returned {code} {c.name}: {c.meaning}" if c else
                  f"{api} returned {code}")
    return code


def init(config_path=None) -> int:
    """aclInit: fixes the chip profile (NPUSIM_PROFILE / npusim.configure) and calls the init
    callbacks (aclInitCallbackRegister, runtime/api_lifecycle.py)."""
    return _told("acl.init", _life.init(config_path))


def finalize() -> int:
    """aclFinalize: calls the finalize callbacks (aclFinalizeCallbackRegister)."""
    return _told("acl.finalize", _life.finalize())


def get_recent_err_msg():
    """aclGetRecentErrMsg: the text of this thread's last failed ``acl.*`` call — the code, its
    name and meaning, and what npusim knows of the cause (the capture linter's detail, fix and
    source line; the deadlock wait-for chain) — or None when nothing failed since the last call.
    Reading it clears it (chapter 13: "获取并清空"). Per thread, like the runtime's default.

    Returns the text (str) or None; no code (it cannot fail)."""
    return _lint.recent_error()


def get_soc_name():
    """aclrtGetSocName: the SoC version string of the chip profile in force (``Ascend910B1``
    ...), as a real board reports it; pyACL returns the string, no code."""
    return _profile().soc_version


def get_version():
    """aclrtGetVersion: (major, minor, patch, code) of the ACL headers npusim follows."""
    return ACL_MAJOR_VERSION, ACL_MINOR_VERSION, ACL_PATCH_VERSION, 0  # noqa: F405


init = _boundary.wrap("acl.init", "init", init, 0)       # init and finalize are not traced
finalize = _boundary.wrap("acl.finalize", "finalize", finalize, 0)
get_soc_name = _boundary.wrap("acl.get_soc_name", "get_soc_name", get_soc_name, -1)
get_version = _boundary.wrap("acl.get_version", "get_version", get_version, 3)

# chapters 02 / 24 (issue 36 item 3): the acl-level functions beyond init / finalize; C
# functions that return a value (aclDataTypeSize, the fp16 conversions) return it
from ..runtime import api_util as _util  # noqa: E402
from ..runtime import api_version as _version  # noqa: E402
from ..runtime.api_refused import install as _install_refused  # noqa: E402

for _attr, _fn, _outs in (
        ("init_callback_register", _life.init_callback_register, 0),
        ("init_callback_un_register", _life.init_callback_un_register, 0),
        ("finalize_callback_register", _life.finalize_callback_register, 0),
        ("finalize_callback_un_register", _life.finalize_callback_un_register, 0),
        ("finalize_reference", _life.finalize_reference, 1),
        ("data_type_size", _util.data_type_size, -1),
        ("float16_to_float", _util.float16_to_float, -1),
        ("float_to_float16", _util.float_to_float16, -1),
        ("get_device_capability", _util.get_device_capability, 1),
        ("get_cann_attribute_list", _version.get_cann_attribute_list, 2),
        ("get_cann_attribute", _version.get_cann_attribute, 1)):
    # raw: the one-frame path, whose failures set the recent error message (lint.failed)
    globals()[_attr] = _boundary.wrap(f"acl.{_attr}", _attr, _fn, _outs, raw=_fn)
app_log = _util.app_log          # void, varargs: it checks its own arguments
_install_refused(globals(), "")  # the acl-level functions refused by design

# pyACL's spellings (docs/pyacl.md): the same wrapped function under a second name; pyACL
# functions of areas npusim does not simulate return 207000 with a message
from . import dump, log, media, op, platform, prof, pyacl, sys, tdt  # noqa: E402
from .pyacl import install_as_acl, uninstall_as_acl  # noqa: E402,F401

# acl.media.dvpp_malloc / dvpp_free (the rest of acl.media is refused): wrapped like acl.rt's
_faults.instrument(media, "acl.media")
_instrument(media, "acldvpp")

for (_short, _name), _target in pyacl.ALIASES.items():
    _module = globals()[_short]
    setattr(_module, _name, vars(_module)[_target])
mdl.__getattr__ = pyacl.refused_getattr("mdl")      # aclmdl offline-model and dump functions
rt.__getattr__ = pyacl.refused_getattr("rt")        # aclrt functions of areas not simulated
__getattr__ = pyacl.refused_getattr("acl")          # aclCreateDataBuffer ...


__all__ = ["init", "finalize", "get_recent_err_msg", "get_soc_name", "get_version", "rt", "mdl",
           "util", "media", "prof", "op", "tdt", "dump", "log", "sys", "platform",
           "install_as_acl", "uninstall_as_acl"]
