"""Function handles as the per-task APIs need them: the kernel-table id a function handle
launches, and back. Low in the layers (handles and the Kernel module's loader only), so
``tasks.py`` (``aclmdlRITaskSetParams`` / ``GetParams``) calls it directly."""
from __future__ import annotations

from .. import errors as ERR
from ..kernel import loader as L
from .runtime import RT


def resolve_function(func):
    """The kernel-table id a function handle launches: (kid, code); NULL -> 107000."""
    k, code = RT.handles.get("function", func)
    if code:
        return None, code
    if k is None:
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    return k.kid, ERR.ACL_SUCCESS


def function_handle_of(kid: int):
    """The live function handle that last launched kernel ``kid``, else None."""
    h = L.LAST_HANDLE_OF_KID.get(kid)
    if h is None:
        return None
    k, code = RT.handles.get("function", h)
    return h if k is not None and not code else None
