"""Device variables (API reference chapter 11-11): ``aclrtGetSymbolAddress``, ``aclrtGetSymbolSize``,
``aclrtMemcpyToSymbol(Async)``, ``aclrtMemcpyFromSymbol(Async)``.

What a "symbol" is: the address of a *host* variable that stands for a device global variable
(``acl_rt_api.h``: the C++ template passes ``&symbol``). The Ascend C toolchain's generated code
registers each such pair when the program starts, with ``rtRegisterVariable(binHandle, hostVar,
deviceVarName, size, flags, reserve)`` (``src/runtime/api/api_c_standard_soc.cc:1550``); the
runtime keeps a table host address -> (binary, the global's offset in its ELF, the registered
size) (``src/runtime/core/src/kernel/symbol_table.cc`` ``SymbolTable::Register``). A lookup
(``rtSymbolLookup``, ``ApiImpl::SymbolLookup`` in ``api_impl.cc:413``) needs a context (107002),
an entry for the host address (else ``RT_ERROR_INVALID_SYMBOL``: 107043), loads the binary onto
the context's device (``Load2Device``) and answers base + offset and the registered size.

npusim keeps the same table. A Python program has no toolchain stub, so it registers the pairs
itself with ``acl.rt.register_variable(binary, host_var, device_var_name, size, flags=0)`` — the
facade of ``rtRegisterVariable``, which in C returns nothing; npusim returns the code the
registration's own steps produce (107017 a bad binary handle, 107042 no such global, 0 for a
host address registered already: the first registration stays) [docs/fidelity.md #276].
``host_var`` is any non-zero int naming the host variable: its address
(``acl.util.numpy_to_ptr(arr)``), or any token the program keeps.

The copies follow ``src/acl/aclrt_impl/memory.cpp`` 2253-2450: count 0 succeeds at once; NULL
symbol / dst / src, ``count > dstMax``, a kind other than H2D / D2H (per direction) or DEFAULT,
``offset + count`` beyond the symbol: 100000; then the lookup's codes; then the copy's own
(``aclrtMemcpy`` / ``aclrtMemcpyAsync`` with kind D2H / H2D, ``dstMax`` of a to-symbol copy the
symbol's size less the offset).
"""
from __future__ import annotations

import threading

from .. import errors as ERR
from ..kernel import loader as L
from . import api_memory as AM
from .runtime import RT

ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_DEFAULT = 1, 2, 4


class _Entry:
    """One registered host variable: the binary (its handle), the global's name and offset, the
    registered size."""
    __slots__ = ("binary", "name", "offset", "size", "flags")

    def __init__(self, binary: int, name: str, offset: int, size: int, flags: int):
        self.binary, self.name, self.offset, self.size, self.flags = binary, name, offset, size, flags


_TABLE: dict[int, _Entry] = {}          # host variable -> entry (SymbolTable::symbolMap_)
_LOCK = threading.Lock()


def _fail(code: int, why: str) -> int:
    RT.tls.explain(why)
    return code


def register_variable(binary, host_var, device_var_name, size, flags=0) -> int:
    """rtRegisterVariable (what the toolchain's start-up code calls): enter ``host_var`` ->
    the global ``device_var_name`` of ``binary`` with ``size`` bytes. See the module text."""
    who = "rtRegisterVariable"
    prog, code = RT.handles.get("binary", binary)
    if code or prog is None:
        return _fail(code or ERR.ACL_ERROR_RT_INVALID_HANDLE, f"{who}: binHandle is not a loaded "
                     "binary")
    if not host_var:
        return _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: hostVar is NULL")
    sym = prog.image.globals.get(device_var_name) if isinstance(device_var_name, str) else None
    if sym is None:
        return _fail(ERR.ACL_ERROR_RT_SYMBOL_NOT_FOUND, f"{who}: the binary has no global "
                     f"{device_var_name!r}")
    with _LOCK:
        stale = [h for h, e in _TABLE.items() if RT.handles.get("binary", e.binary)[1]]
        for h in stale:                      # entries of unloaded binaries (their handle died)
            del _TABLE[h]
        _TABLE.setdefault(int(host_var), _Entry(binary, device_var_name, sym[0], size, flags))
    return ERR.ACL_SUCCESS


def _lookup(symbol):
    """(device address, size, code) of a registered host variable on the current device."""
    ctx = RT.current_context
    if ctx is None:
        return None, None, _fail(ERR.ACL_ERROR_RT_CONTEXT_NULL, "symbol lookup: no current "
                                 "context")
    e = _TABLE.get(symbol)
    prog = RT.handles.get("binary", e.binary)[0] if e is not None else None
    if prog is None:
        return None, None, _fail(ERR.ACL_ERROR_RT_INVALID_SYMBOL, "symbol lookup: no device "
                                 "variable is registered for this host address "
                                 "(rtRegisterVariable / acl.rt.register_variable)")
    code = L.load_to_device(prog, ctx.device)
    if code:
        return None, None, code
    return prog.base_on(ctx.device) + e.offset, e.size, ERR.ACL_SUCCESS


def get_symbol_address(symbol):
    """aclrtGetSymbolAddress: (device address, code) of the device variable ``symbol`` (a
    registered host address) on the current context's device."""
    if not symbol:
        return None, _fail(ERR.ACL_ERROR_INVALID_PARAM, "aclrtGetSymbolAddress: symbol is NULL")
    addr, _, code = _lookup(symbol)
    return (None, code) if code else (addr, ERR.ACL_SUCCESS)


def get_symbol_size(symbol):
    """aclrtGetSymbolSize: (size, code): the size registered for ``symbol``."""
    if not symbol:
        return None, _fail(ERR.ACL_ERROR_INVALID_PARAM, "aclrtGetSymbolSize: symbol is NULL")
    _, size, code = _lookup(symbol)
    return (None, code) if code else (size, ERR.ACL_SUCCESS)


def _symbol_range(symbol, count, offset):
    """GetSymbolInfo: (device address, size, code), the range checked against the symbol."""
    addr, size, code = _lookup(symbol)
    if code:
        return None, None, code
    if offset + count > size or offset + count >= 2 ** 64:
        return None, None, _fail(ERR.ACL_ERROR_INVALID_PARAM, f"offset {offset} + count {count} "
                                 f"must be <= the symbol's size {size}")
    return addr, size, ERR.ACL_SUCCESS


def _check_from(dst, symbol, count, dst_max, kind) -> int:
    if not symbol:
        return _fail(ERR.ACL_ERROR_INVALID_PARAM, "symbol is NULL")
    if not dst:
        return _fail(ERR.ACL_ERROR_INVALID_PARAM, "dst is NULL")
    if count > dst_max:
        return _fail(ERR.ACL_ERROR_INVALID_PARAM, f"count {count} must not be greater than "
                     f"dstMax {dst_max}")
    if kind not in (ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_DEFAULT):
        return _fail(ERR.ACL_ERROR_INVALID_PARAM, f"kind {kind}: only ACL_MEMCPY_DEVICE_TO_HOST "
                     "or ACL_MEMCPY_DEFAULT")
    return ERR.ACL_SUCCESS


def _from_source(dst, dst_max, symbol, count, offset, kind):
    """(device address of ``symbol`` + ``offset``, code) for a from-symbol copy: the argument
    checks, then the lookup and the range (shared by the synchronous and async copy)."""
    code = _check_from(dst, symbol, count, dst_max, kind)
    if code:
        return None, code
    addr, _, code = _symbol_range(symbol, count, offset)
    return (None, code) if code else (addr + offset, ERR.ACL_SUCCESS)


def _check_to(symbol, src, kind) -> int:
    if not symbol:
        return _fail(ERR.ACL_ERROR_INVALID_PARAM, "symbol is NULL")
    if not src:
        return _fail(ERR.ACL_ERROR_INVALID_PARAM, "src is NULL")
    if kind not in (ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEFAULT):
        return _fail(ERR.ACL_ERROR_INVALID_PARAM, f"kind {kind}: only ACL_MEMCPY_HOST_TO_DEVICE "
                     "or ACL_MEMCPY_DEFAULT")
    return ERR.ACL_SUCCESS


def _to_target(symbol, src, count, offset, kind):
    """(device address of ``symbol`` + ``offset``, the bytes left in the symbol from there,
    code) for a to-symbol copy: the argument checks, then the lookup and the range."""
    code = _check_to(symbol, src, kind)
    if code:
        return None, None, code
    addr, size, code = _symbol_range(symbol, count, offset)
    return (None, None, code) if code else (addr + offset, size - offset, ERR.ACL_SUCCESS)


def memcpy_from_symbol(dst, dst_max, symbol, count, offset=0, kind=ACL_MEMCPY_DEVICE_TO_HOST) -> int:
    """aclrtMemcpyFromSymbol: ``count`` bytes from ``offset`` of the device variable to host
    ``dst`` (a synchronous device-to-host copy)."""
    if count == 0:
        return ERR.ACL_SUCCESS
    src, code = _from_source(dst, dst_max, symbol, count, offset, kind)
    if code:
        return code
    return AM.memcpy(dst, dst_max, src, count, ACL_MEMCPY_DEVICE_TO_HOST)


def memcpy_from_symbol_async(dst, dst_max, symbol, count, offset=0,
                             kind=ACL_MEMCPY_DEVICE_TO_HOST, stream=None) -> int:
    """aclrtMemcpyFromSymbolAsync: the same as a device-to-host aclrtMemcpyAsync on ``stream``."""
    if count == 0:
        return ERR.ACL_SUCCESS
    src, code = _from_source(dst, dst_max, symbol, count, offset, kind)
    if code:
        return code
    return AM.memcpy_async(dst, dst_max, src, count, ACL_MEMCPY_DEVICE_TO_HOST, stream)


def memcpy_to_symbol(symbol, src, count, offset=0, kind=ACL_MEMCPY_HOST_TO_DEVICE) -> int:
    """aclrtMemcpyToSymbol: ``count`` bytes of host ``src`` to ``offset`` of the device
    variable (a synchronous host-to-device copy)."""
    if count == 0:
        return ERR.ACL_SUCCESS
    dst, dst_max, code = _to_target(symbol, src, count, offset, kind)
    if code:
        return code
    return AM.memcpy(dst, dst_max, src, count, ACL_MEMCPY_HOST_TO_DEVICE)


def memcpy_to_symbol_async(symbol, src, count, offset=0, kind=ACL_MEMCPY_HOST_TO_DEVICE,
                           stream=None) -> int:
    """aclrtMemcpyToSymbolAsync: the same as a host-to-device aclrtMemcpyAsync on ``stream``."""
    if count == 0:
        return ERR.ACL_SUCCESS
    dst, dst_max, code = _to_target(symbol, src, count, offset, kind)
    if code:
        return code
    return AM.memcpy_async(dst, dst_max, src, count, ACL_MEMCPY_HOST_TO_DEVICE, stream)
