"""The installed packages' versions (chapter 24: ``aclsysGetVersionStr``, ``aclsysGetVersionNum``),
read as the runtime reads them: from ``version.info`` files of the CANN install that
``ASCEND_HOME_PATH`` names (``src/acl/aclrt_impl/acl.cpp:903-1248``); and the CANN attributes
(``aclGetCannAttributeList`` / ``aclGetCannAttribute``), found from the library's own directory
(``src/acl/utils/cann_info_utils.cpp``: :func:`cann_attributes`).

npusim has no CANN of its own, but ``npusim cabi --prefix DIR`` writes a CANN-shaped install whose
``bin/setenv.bash`` exports ``ASCEND_HOME_PATH=DIR``; it writes ``share/info/runtime/version.info``
with :data:`RUNTIME_VERSION`, the version of the runtime source npusim follows
(``hicann/runtime`` ``version.cmake``: ``npu-runtime`` 9.1.0). So a program started from that
environment reads 9.1.0 / 90100000, and a process without one gets the runtime's own 100003, as
on a machine without CANN. The same install holds ``data/ascendcl_config/swFeatureList.json``
(:data:`FEATURE_MINIMUMS`), so the attributes are found next to ``lib64/libascendcl.so`` as the
runtime finds them. docs/fidelity.md rows 510, 511.
"""
from __future__ import annotations

import json
import os
import re

from .. import errors as ERR
from .runtime import RT, null_param

RUNTIME_VERSION = "9.1.0"
"""The ``npu-runtime`` package version of the runtime source npusim follows (version.cmake)."""
VERSION_MAX = 128
"""``ACL_PKG_VERSION_MAX_SIZE``: the caller's buffer for a version string, NUL included."""
INSTALL_INFO = "/etc/ascend_install.info"
"""Where the driver's and firmware's install paths are recorded (``Driver_Install_Path_Param=``)."""

_KEYS = {"driver": "Driver_Install_Path_Param=", "firmware": "Firmware_Install_Path_Param="}
_WEIGHTS = (("alpha", 300), ("beta", 200), ("rc", 100))


def _other_spelling(name: str) -> str | None:
    """The name the runtime tries second: ``-`` as ``_``, else ``_`` as ``-``."""
    if "-" in name:
        return name.replace("-", "_")
    if "_" in name:
        return name.replace("_", "-")
    return None


def _key_line(path: str, key: str) -> str | None:
    """What follows ``key`` on the first line holding it, trimmed; None: no file or no line."""
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            for line in f:
                if key in line:
                    return line.split(key, 1)[1].strip()
    except OSError:
        return None
    return None


def _version_file(name: str) -> str | None:
    """The ``version.info`` of package ``name``, or None (``GetPkgVersionInfoPath``)."""
    if name in _KEYS:
        base = _key_line(INSTALL_INFO, _KEYS[name])
        return os.path.join(base, name, "version.info") if base else None
    home = os.environ.get("ASCEND_HOME_PATH", "")
    if not home or not os.path.exists(home):
        return None
    return os.path.join(os.path.realpath(home), "share", "info", name, "version.info")


def _read_version(pkg_name: str | None):
    """(version string, code): the first ``Version=`` line of the package's file, trying the
    other spelling of its name second; 100003 when neither gives a non-empty one; a NULL name
    100000."""
    if pkg_name is None:
        return None, null_param("pkgName")
    for name in (pkg_name, _other_spelling(pkg_name)):
        if name is None:
            continue
        path = _version_file(name)
        v = _key_line(path, "Version=") if path else None
        if v:
            return v, ERR.ACL_SUCCESS
    RT.tls.explain(f"no version of package {pkg_name!r}: ASCEND_HOME_PATH="
                   f"{os.environ.get('ASCEND_HOME_PATH', '(unset)')!s} has no "
                   f"share/info/{pkg_name}/version.info with a Version= line (`npusim cabi "
                   f"--prefix DIR` writes one; source DIR/bin/setenv.bash)")
    return None, ERR.ACL_ERROR_INVALID_FILE


def get_version_str(pkg_name):
    """aclsysGetVersionStr -> (version string, code): checks in order: NULL (100000 in C, both
    pointers); the file (100003); a version of 128 characters or more 500000."""
    v, code = _read_version(pkg_name)
    if code:
        return None, code
    if len(v.encode("utf-8", "surrogateescape")) >= VERSION_MAX:
        RT.tls.explain(f"the version of {pkg_name!r} is {len(v)} characters; the buffer holds "
                       f"{VERSION_MAX - 1}")
        return None, ERR.ACL_ERROR_INTERNAL_ERROR
    return v, ERR.ACL_SUCCESS


_NUM = re.compile(r"(\d+)\.(\d+)\.(\d+)(.*)\Z", re.S)


def version_number(v: str) -> int | None:
    """``major * 10,000,000 + minor * 100,000 + patch * 1,000``, less 300 / 200 / 100 for an
    alpha / beta / rc suffix plus its number (``8.5.0.beta.1`` -> 80,499,801); None when ``v``
    is not ``X.Y.Z`` with such a suffix at most (``aclsysGetVersionNum``'s rules)."""
    m = _NUM.match(v)
    if m is None:
        return None
    num = int(m[1]) * 10_000_000 + int(m[2]) * 100_000 + int(m[3]) * 1_000
    rest = m[4].lower()
    if not rest:
        return num
    for word, weight in _WEIGHTS:
        at = rest.find(word)
        if at < 0:
            continue
        tail = rest[at + len(word):]
        if at > 1 or not re.fullmatch(r"[.-]?\d+", tail):
            return None
        return num - weight + int(tail.lstrip(".-"))
    return None


def get_version_num(pkg_name):
    """aclsysGetVersionNum -> (version number, code): the file as for the string (100003), then
    :func:`version_number`; a version that does not follow its form 500000."""
    v, code = _read_version(pkg_name)
    if code:
        return None, code
    n = version_number(v)
    if n is None:
        RT.tls.explain(f"version {v!r} of {pkg_name!r} is not X.Y.Z with an optional alpha / "
                       f"beta / rc number")
        return None, ERR.ACL_ERROR_INTERNAL_ERROR
    return n, ERR.ACL_SUCCESS


# ---- the CANN attributes (cann_info_utils.cpp) ----
ACL_CANN_ATTR_UNDEFINED, ACL_CANN_ATTR_INF_NAN, ACL_CANN_ATTR_BF16, ACL_CANN_ATTR_JIT_COMPILE = (
    -1, 0, 1, 2)
"""aclCannAttr (acl_base_rt.h)."""
ATTRIBUTES = ((ACL_CANN_ATTR_INF_NAN, "INF_NAN", "support_inf_nan"),
              (ACL_CANN_ATTR_BF16, "BF16", "support_bf16"),
              (ACL_CANN_ATTR_JIT_COMPILE, "JIT_COMPILE", ""))
"""(attribute, its name in swFeatureList.json, the SoCInfo key it also needs, "" none), in the
enum's order, the order of the list."""
FEATURE_MINIMUMS = {"BF16": {"runtimeVersion": "7.1"}, "INF_NAN": {"runtimeVersion": "7.1"},
                    "JIT_COMPILE": {"runtimeVersion": "6.4"}}
"""The runtime version each attribute needs (``src/acl/config/swFeatureList.json``), written by
``npusim cabi`` into the install's ``data/ascendcl_config/swFeatureList.json``."""
SW_CONFIG = os.path.join("data", "ascendcl_config", "swFeatureList.json")
RUNTIME_INFO = os.path.join("share", "info", "runtime", "version.info")
_SEARCH_DEPTH = 8
_library: list = []             # [the directory of the loaded libascendcl.so], once found


def _library_dir() -> str | None:
    """The directory this process mapped ``libascendcl.so`` from (/proc/self/maps: npusim's C
    library, when a C program runs on it), None in a Python process without it. Looked up at
    the first query that needs it, kept once found (a loaded library is never unloaded)."""
    if not _library:
        try:
            with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
                for line in f:
                    path = line.rstrip("\n").split(maxsplit=5)[-1]
                    if path.endswith("/libascendcl.so"):
                        _library.append(os.path.dirname(path))
                        break
        except OSError:
            pass
    return _library[0] if _library else None


def _find_up(start: str, rel: str) -> str | None:
    """The first of ``start`` and its parents (``_SEARCH_DEPTH`` at most) holding ``rel``."""
    d = start
    for _ in range(_SEARCH_DEPTH):
        if os.path.isfile(os.path.join(d, rel)):
            return d
        parent = os.path.dirname(d.rstrip("/"))
        if not parent or parent == d:
            return None
        d = parent
    return None


def _where(first: str, lib: str, rel: str) -> str:
    """``first`` if it holds ``rel``, else the nearest of ``lib`` and its parents that does, else
    ``first`` (``GetConfigInstallPath``: the expected place, then the search up)."""
    if os.path.isfile(os.path.join(first, rel)):
        return first
    return _find_up(lib, rel) or first


def _minimum(text) -> int | None:
    """``"7.1"`` -> 7010 (``1000 * major + 10 * minor`` of the first two parts); None: unset or
    not that form."""
    m = re.match(r"\s*(\d+)\.(\d+)", str(text)) if text is not None else None
    return 1000 * int(m[1]) + 10 * int(m[2]) if m else None


def cann_attributes():
    """({attribute: 0 / 1}, code): ``CannInfoUtils::Initialize``. The library's directory D
    (npusim's C library; [chosen] in Python, which has none, ``$ASCEND_HOME_PATH/lib64``);
    ``swFeatureList.json`` under D's parent, else under the nearest of D's parents that has it
    (missing 100003, not JSON 100006); the runtime's ``version.info`` under the parent of that,
    else the nearest of D's parents (missing or no ``Version=`` 500000). An attribute is
    available when the runtime's version reaches the one it needs (none set: always) and the
    chip's SoCInfo key, where it names one, is 1 (``Profile.soc_features``)."""
    lib = _library_dir()
    if lib is None:
        home = os.environ.get("ASCEND_HOME_PATH", "")
        lib = os.path.join(home, "lib64") if home else ""
    if not lib:
        RT.tls.explain("no libascendcl.so directory: ASCEND_HOME_PATH is unset (`npusim cabi "
                       "--prefix DIR` writes an install; source DIR/bin/setenv.bash)")
        return None, ERR.ACL_ERROR_INVALID_FILE
    base = _where(os.path.dirname(lib.rstrip("/")), lib, SW_CONFIG)
    try:
        with open(os.path.join(base, SW_CONFIG), encoding="utf-8") as f:
            config = json.load(f)
    except OSError:
        RT.tls.explain(f"no {SW_CONFIG} above {lib}")
        return None, ERR.ACL_ERROR_INVALID_FILE
    except ValueError:
        RT.tls.explain(f"{os.path.join(base, SW_CONFIG)} is not JSON")
        return None, ERR.ACL_ERROR_PARSE_FILE
    install = _where(os.path.dirname(base.rstrip("/")), lib, RUNTIME_INFO)
    line = _key_line(os.path.join(install, RUNTIME_INFO), "Version=")
    current = _minimum(line) if line else None
    if current is None:
        RT.tls.explain(f"no runtime version in {os.path.join(install, RUNTIME_INFO)}")
        return None, ERR.ACL_ERROR_INTERNAL_ERROR
    features = RT.profile_in_force().soc_features
    out = {}
    for attr, name, key in ATTRIBUTES:
        entry = config.get(name) if isinstance(config, dict) else None
        need = _minimum(entry.get("runtimeVersion")) if isinstance(entry, dict) else None
        out[attr] = int((need is None or current >= need) and (not key or key in features))
    return out, ERR.ACL_SUCCESS


def get_cann_attribute_list():
    """aclGetCannAttributeList -> (the available attributes, their count, code)."""
    attrs, code = cann_attributes()
    if code:
        return None, None, code
    avail = [a for a, on in attrs.items() if on]
    return avail, len(avail), ERR.ACL_SUCCESS


def get_cann_attribute(cann_attr):
    """aclGetCannAttribute -> (1 available / 0 not, code); an attribute that is not one of
    :data:`ATTRIBUTES` 100000 (after the files are read)."""
    attrs, code = cann_attributes()
    if code:
        return None, code
    if cann_attr not in attrs:
        RT.tls.explain(f"cannAttr: {cann_attr} is not INF_NAN (0), BF16 (1) or JIT_COMPILE (2)")
        return None, ERR.ACL_ERROR_INVALID_PARAM
    return attrs[cann_attr], ERR.ACL_SUCCESS
