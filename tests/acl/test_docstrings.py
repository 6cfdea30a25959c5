"""Every facade function with a real signature (not the ``*args, **kwargs`` of the functions
refused by design) documents its C name, the shape of what it returns and its codes: a walk over
``npusim.acl``, ``acl.rt`` and ``acl.mdl``. ``acl.util`` holds pyACL's own helpers (no C
function; docs/pyacl.md); ``install_as_acl`` / ``uninstall_as_acl`` are npusim's."""
from __future__ import annotations

import inspect
import re
import types

from npusim import acl

NPUSIM_OWN = {"install_as_acl", "uninstall_as_acl"}
C_NAME = re.compile(r"\b(?:acl|rt)[a-zA-Z]*[A-Z]\w*")


def facade_functions():
    for mod in (acl, acl.rt, acl.mdl):
        for name in dir(mod):
            f = getattr(mod, name)
            if name.startswith("_") or name in NPUSIM_OWN or not isinstance(f, types.FunctionType):
                continue
            params = inspect.signature(f).parameters.values()
            if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
                continue
            yield f"{mod.__name__}.{name}", f


def test_every_facade_function_documents_c_name_return_shape_and_codes():
    seen, bad = 0, []
    for name, f in facade_functions():
        seen += 1
        doc = f.__doc__ or ""
        missing = [what for what, ok in (("C name", C_NAME.search(doc)),
                                         ("return shape", "return" in doc.lower()),
                                         ("codes", "Codes:" in doc or "no code" in doc))
                   if not ok]
        if missing:
            bad.append((name, missing))
    assert seen > 150
    assert not bad, bad


def test_the_codes_line_names_the_function_s_own_codes():
    doc = acl.rt.launch_kernel.__doc__
    assert "Codes: 0 success" in doc and "107017 ACL_ERROR_RT_INVALID_HANDLE" in doc
    assert "107033 ACL_ERROR_STREAM_TASK_GROUP_STATUS" in acl.mdl.ri_capture_task_update_end.__doc__
