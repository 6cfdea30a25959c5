"""User memory allocators registered on a stream (chapter 11-08 and the 25-03 operation APIs of
``aclrtAllocatorDesc``): ``aclrtAllocatorCreateDesc`` / ``DestroyDesc``, the ``Set*ToDesc``
functions, ``aclrtAllocatorRegister`` / ``Unregister`` / ``GetByStream``.

The runtime keeps them in one table of the process keyed by the stream's handle, and never calls
them itself: they are there for other components (single-operator execution, dynamic-shape model
execution) to query (``src/acl/aclrt_impl/allocator.cpp``; ``11-08_custom_memory_allocator.md``).
So does npusim: :data:`TABLE` of ``RT.callbacks``, emptied with the process (``npusim.reset()``).
docs/fidelity.md row 512.
"""
from __future__ import annotations

from .. import errors as ERR
from .runtime import RT, null_param

TABLE = "allocators"
"""``RT.callbacks`` entry: stream handle -> (the desc handle, a copy of its five fields)."""
_FIELDS = ("obj", "alloc", "free", "advise", "get_addr")
_REQUIRED = ("obj", "alloc", "free", "get_addr")       # the advise function is optional


class AllocatorDesc:
    """An ``aclrtAllocatorDesc``: the allocator object and its four functions (None: not set;
    the runtime leaves them uninitialised, npusim starts them at NULL)."""

    __slots__ = ("handle", "obj", "alloc", "free", "advise", "get_addr")

    def __init__(self):
        self.handle = 0
        self.obj = self.alloc = self.free = self.advise = self.get_addr = None


def _desc(allocator_desc):
    """The live desc of a handle; None for NULL, or for a handle that is not one (the runtime
    would use the pointer as it is: npusim refuses it with the same 100000)."""
    d, code = RT.handles.get("allocator_desc", allocator_desc)
    return None if code else d


def allocator_create_desc():
    """aclrtAllocatorCreateDesc -> a new desc's handle (NULL only when memory runs out)."""
    return RT.handles.add("allocator_desc", AllocatorDesc())


def allocator_destroy_desc(allocator_desc) -> int:
    """aclrtAllocatorDestroyDesc: NULL 100000. A registration made from it keeps working (it
    holds a copy)."""
    d = _desc(allocator_desc)
    if d is None:
        return null_param("allocatorDesc")
    RT.handles.remove(d.handle)
    return ERR.ACL_SUCCESS


def _set(allocator_desc, field: str, value, what: str) -> int:
    """The ``Set*ToDesc`` functions: a NULL desc, then a NULL value, 100000."""
    d = _desc(allocator_desc)
    if d is None:
        return null_param("allocatorDesc")
    if value is None:
        return null_param(what)
    setattr(d, field, value)
    return ERR.ACL_SUCCESS


def allocator_set_obj_to_desc(allocator_desc, allocator) -> int:
    """aclrtAllocatorSetObjToDesc: the allocator object the functions are called with."""
    return _set(allocator_desc, "obj", allocator, "allocator")


def allocator_set_alloc_func_to_desc(allocator_desc, fn) -> int:
    """aclrtAllocatorSetAllocFuncToDesc."""
    return _set(allocator_desc, "alloc", fn, "func")


def allocator_set_free_func_to_desc(allocator_desc, fn) -> int:
    """aclrtAllocatorSetFreeFuncToDesc."""
    return _set(allocator_desc, "free", fn, "func")


def allocator_set_alloc_advise_func_to_desc(allocator_desc, fn) -> int:
    """aclrtAllocatorSetAllocAdviseFuncToDesc."""
    return _set(allocator_desc, "advise", fn, "func")


def allocator_set_get_addr_from_block_func_to_desc(allocator_desc, fn) -> int:
    """aclrtAllocatorSetGetAddrFromBlockFuncToDesc."""
    return _set(allocator_desc, "get_addr", fn, "func")


def allocator_register(stream, allocator_desc) -> int:
    """aclrtAllocatorRegister: checks in order: a NULL stream (the default stream cannot be
    named), a NULL desc, a desc without its object or its alloc / free / get-address function:
    100000. The stream is not otherwise checked (no context, capture or liveness test); a second
    registration replaces the first. The desc's fields are copied."""
    if not stream:
        return null_param("stream")
    d = _desc(allocator_desc)
    if d is None:
        return null_param("allocatorDesc")
    for f in _REQUIRED:
        if getattr(d, f) is None:
            return null_param(f"the desc's {f} (aclrtAllocatorSet*ToDesc)")
    RT.callbacks.setdefault(TABLE, {})[stream] = (d.handle,) + tuple(getattr(d, f)
                                                                     for f in _FIELDS)
    return ERR.ACL_SUCCESS


def allocator_unregister(stream) -> int:
    """aclrtAllocatorUnregister: NULL 100000; else success, registered or not."""
    if not stream:
        return null_param("stream")
    RT.callbacks.get(TABLE, {}).pop(stream, None)
    return ERR.ACL_SUCCESS


def allocator_get_by_stream(stream):
    """aclrtAllocatorGetByStream -> (desc, allocator, alloc, free, advise, get-address, code):
    the desc's handle as registered (even if destroyed since) and the copied fields. A NULL
    stream, or one with no allocator, 100000 and no outputs."""
    if not stream:
        return (None,) * 6 + (null_param("stream"),)
    entry = RT.callbacks.get(TABLE, {}).get(stream)
    if entry is None:
        RT.tls.explain("the stream is not registered with any allocator")
        return (None,) * 6 + (ERR.ACL_ERROR_INVALID_PARAM,)
    return entry + (ERR.ACL_SUCCESS,)
