"""Args handles of ``acl.rt`` (spec/kernel.md §5; ``api_impl.cc`` KernelArgs*, ``args_inner.h``):
a host buffer a launch copies to device args memory (``aclrtLaunchKernelWithConfig``,
:mod:`.api_launch`), its parameters, placeholders, the overflow and inter-core sync slots.

Check orders and argument forms: :mod:`.api_kernel`.
"""
from __future__ import annotations

import threading
import weakref

import numpy as np

from ..kernel.program import REG_CPU, REG_NON_CPU, runtime_features
from .api_device import profile
from .api_kernel import (ARGS_HANDLE_SIZE, E_ACL, E_CTX, E_PARAM, E_UNSUPPORTED,
                         MAX_ARGS_BUFF_SIZE, MAX_PARAM_CNT, MAX_SYSTEM_PARAM_CNT, OK,
                         PARA_DETAIL_SIZE, _bytes_of, _ctx, _get, _required, _writable)
from .hostmem import PAGEABLE_MEM
from .runtime import RT


class ParaDetail:
    __slots__ = ("handle", "owner", "type", "offset", "size", "data_offset")

    def __init__(self, owner, ptype, offset, size):
        self.handle = 0
        self.owner, self.type, self.offset, self.size, self.data_offset = owner, ptype, offset, \
            size, 0


class ArgsHandle:
    """RtArgsHandle: a host buffer (64 KiB, or the user's), its layout and its state."""

    def __init__(self):
        self.handle = 0
        self.buffer = np.zeros(MAX_ARGS_BUFF_SIZE, np.uint8)
        self.buffer_addr = PAGEABLE_MEM.register(self.buffer)
        self.params: list[ParaDetail] = []
        self.kernel = None
        self.reset(None, MAX_ARGS_BUFF_SIZE, MAX_PARAM_CNT)

    def reset(self, kernel, buffer_size: int, max_params: int) -> None:
        for p in self.params:
            RT.handles.remove(p.handle)                  # ResetKernelArgsParamHandles
        self.params = []
        self.kernel = kernel
        self.buffer_size = buffer_size
        self.max_params = max_params
        self.args_size = self.sys_param_size = 0
        self.placeholders = 0
        self.got_ph_buffer = self.overflow_done = False
        self.finalized = self.updating = False

    @property
    def align(self) -> int:
        return 1 if self.kernel is not None and self.kernel.reg_type == REG_CPU else 8

    def aligned_end(self) -> int:
        a = self.align
        return -(-self.args_size // a) * a


_TLS = threading.local()


def _sys_params(kernel, rfeats) -> int:
    """GetToBeCalSystemParaNum: system params before the user's (overflow is not among them)."""
    n = kernel.system_para_num
    if n == 0:
        return 0
    n = n - 1 if kernel.support_overflow else n
    if not rfeats.inter_core_sync_addr and kernel.need_ffts_addr and n > 1:
        n -= 1
    return n


def _func_for_args(func):
    """The args-handle family's function handle."""
    return _required("function", func)


def kernel_args_init(func):
    """aclrtKernelArgsInit: the calling thread's one args handle (re-initialised each time, which
    invalidates its previous parameter handles), a 64 KiB buffer, at most 128 parameters."""
    k, code = _func_for_args(func)
    if code:
        return None, code
    h = getattr(_TLS, "args", None)
    if h is None or RT.handles.get("args", h.handle)[1] or not h.handle:
        h = ArgsHandle()
        RT.handles.add("args", h)
        _TLS.args = h
    h.reset(k, MAX_ARGS_BUFF_SIZE, MAX_PARAM_CNT)
    if k.reg_type == REG_NON_CPU:
        h.sys_param_size = 8 * _sys_params(k, runtime_features(profile()))
        h.args_size = h.sys_param_size
    return h.handle, OK


def _null(v) -> bool:
    """A NULL ``void*``: None, or an integer 0 (what the facade passes for a NULL host pointer,
    docs/fidelity.md row 290)."""
    return v is None or (isinstance(v, (int, np.integer)) and not v)


def _positive_size(size, data=None) -> int | None:
    """A size argument the acl layer accepts (> 0; ``None`` with ``data``: its length), else
    None (the caller returns 100000)."""
    try:
        n = int(size) if size is not None or data is None else len(data)
    except (TypeError, ValueError):
        return None
    return n if n > 0 else None


class _ByMemory:
    """args-handle memory (an address, or the live object holding it) -> the ArgsHandle living
    there: the C handle *is* that memory, so initialising the same memory again replaces the
    handle there, and the registry does not grow with every call. Objects are held weakly."""

    def __init__(self):
        self.by_addr: dict = {}
        self.by_obj: dict = {}         # id(obj) -> (weakref to obj, ArgsHandle)

    def get(self, mem):
        if isinstance(mem, (int, np.integer)):
            return self.by_addr.get(int(mem))
        ent = self.by_obj.get(id(mem))
        return ent[1] if ent is not None and ent[0]() is mem else None

    def put(self, mem, h) -> None:
        if isinstance(mem, (int, np.integer)):
            self.by_addr[int(mem)] = h
            return
        key = id(mem)
        try:
            ref = weakref.ref(mem, lambda _r, k=key: self.by_obj.pop(k, None))
        except TypeError:
            return                     # not weakly referable (bytes): a new handle each time
        self.by_obj[key] = (ref, h)


_BY_MEMORY = _ByMemory()


def kernel_args_init_by_user_mem(func, args_handle_mem, user_host_mem, actual_args_size):
    """aclrtKernelArgsInitByUserMem: acl (NULLs, size 0 -> 100000) -> 107017 -> a new handle on
    the user's buffer (``user_host_mem``: host pointer or writable array) with at most
    userParaNum (AI Core) or 128 (CPU) parameters. ``args_handle_mem`` (the handle's memory in C)
    is checked for NULL only; the handle comes back as the output."""
    if not func or _null(args_handle_mem) or _null(user_host_mem):
        return None, E_ACL                      # kernel.cpp:296-298 (argsHandle NULL was taken)
    size = _positive_size(actual_args_size)
    if size is None:
        return None, E_ACL
    k, code = _get("function", func)
    if code:
        return None, code
    buf = _writable(user_host_mem, size)
    if buf is None or len(buf) < size:
        RT.tls.explain(f"user_host_mem: not {size} bytes (actual_args_size) of writable host "
                       f"memory")
        return None, E_PARAM
    h = _BY_MEMORY.get(args_handle_mem)
    if h is None or not h.handle or RT.handles.get("args", h.handle)[1]:
        h = ArgsHandle.__new__(ArgsHandle)
        h.handle, h.params = 0, []
        _BY_MEMORY.put(args_handle_mem, h)
    else:                  # the handle lives in that memory: initialising it again replaces it
        RT.handles.remove(h.handle)
    for p in h.params:
        RT.handles.remove(p.handle)
    h.params = []
    h.buffer = buf[:size]
    h.buffer_addr = int(user_host_mem) if isinstance(user_host_mem, (int, np.integer)) \
        else PAGEABLE_MEM.register(h.buffer)
    cpu = k.reg_type == REG_CPU
    h.reset(k, size, MAX_PARAM_CNT if cpu else min(k.user_para_num, 255))
    if not cpu:
        h.sys_param_size = 8 * _sys_params(k, runtime_features(profile()))
        h.args_size = h.sys_param_size
    RT.handles.add("args", h)
    return h.handle, OK


def kernel_args_get_mem_size(func, user_args_size):
    """aclrtKernelArgsGetMemSize: userArgsSize + 8*8 + userParaNum*8 (AI Core), or userArgsSize
    (CPU)."""
    k, code = _func_for_args(func)
    if code:
        return None, code
    n = int(user_args_size)
    if k.reg_type == REG_NON_CPU:   # size_t arithmetic: wraps past 2**64 (api_impl.cc:8554)
        return (n + MAX_SYSTEM_PARAM_CNT * 8 + k.user_para_num * 8) & 0xFFFFFFFFFFFFFFFF, OK
    return n, OK


def kernel_args_get_handle_mem_size(func):
    """aclrtKernelArgsGetHandleMemSize: sizeof(RtArgsHandle) + n * sizeof(ParaDetail) (LP64:
    104 + 48 n), n = userParaNum (AI Core) or 128 (CPU)."""
    k, code = _func_for_args(func)
    if code:
        return None, code
    n = MAX_PARAM_CNT if k.reg_type == REG_CPU else k.user_para_num
    return ARGS_HANDLE_SIZE + n * PARA_DETAIL_SIZE, OK


def kernel_args_append(args, param, param_size=None):
    """aclrtKernelArgsAppend: acl (args, param NULL; size 0 -> 100000) -> 107017 -> finalized
    (207000) -> after a placeholder buffer (207000) -> parameter count (107000) -> buffer
    overflow (107000); the bytes go at the aligned end. ``param``: bytes-like, or a host pointer
    with ``param_size``."""
    if not args or param is None or (isinstance(param, (int, np.integer)) and not param):
        return None, E_ACL
    size = _positive_size(param_size, param)
    if size is None:
        return None, E_ACL
    h, code = _get("args", args)
    if code:
        return None, code
    if h.finalized:
        return None, E_UNSUPPORTED
    if h.got_ph_buffer:
        return None, E_UNSUPPORTED
    if len(h.params) + 1 > h.max_params:
        RT.tls.explain(f"args: the handle holds its most parameters ({h.max_params})")
        return None, E_PARAM
    off = h.aligned_end()
    if off + size > h.buffer_size:
        RT.tls.explain(f"param_size: {size} bytes at offset {off} overflow the args buffer "
                       f"({h.buffer_size} bytes)")
        return None, E_PARAM
    data = _bytes_of(param, size)
    if data is None:
        RT.tls.explain(f"param: not {size} bytes of host data")
        return None, E_PARAM
    h.buffer[off:off + size] = np.frombuffer(data, np.uint8)
    p = ParaDetail(h, 0, off, size)
    h.params.append(p)
    h.args_size = off + size
    return RT.handles.add("param", p), OK


def kernel_args_append_place_holder(args):
    """aclrtKernelArgsAppendPlaceHolder: after a placeholder buffer (207000) -> finalized
    (207000) -> count (107000) -> overflow (107000); reserves an 8-byte pointer slot."""
    if not args:
        return None, E_ACL
    h, code = _get("args", args)
    if code:
        return None, code
    if h.got_ph_buffer or h.finalized:
        return None, E_UNSUPPORTED
    if len(h.params) + 1 > h.max_params:
        return None, E_PARAM
    off = h.aligned_end()
    if off + 8 > h.buffer_size:
        return None, E_PARAM
    p = ParaDetail(h, 1, off, 8)
    h.params.append(p)
    h.args_size = off + 8
    h.placeholders += 1
    return RT.handles.add("param", p), OK


_OVERFLOW_ADDR: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
"""Context -> its overflow-status word in device memory (allocated on first use)."""
_C2C_ADDR: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
"""Device -> its inter-core sync word in device memory (allocated on first use)."""


def _overflow_addr(ctx) -> int:
    addr = _OVERFLOW_ADDR.get(ctx)
    if addr is None:
        addr = _OVERFLOW_ADDR[ctx] = ctx.device.state.mem.malloc(64)
    return addr


def _process_overflow(h) -> int:
    """ProcessOverFlowArgs: once, for AI Core kernels with system params and overflow support,
    an 8-byte slot with the context's overflow-status address at the aligned end."""
    k = h.kernel
    if k.reg_type == REG_CPU or h.overflow_done or k.system_para_num == 0 \
            or not k.support_overflow:
        return OK
    off = h.aligned_end()
    if off + 8 > h.buffer_size:
        return E_PARAM
    ctx = _ctx()
    if ctx is None:
        return E_CTX
    h.buffer[off:off + 8] = np.frombuffer(_overflow_addr(ctx).to_bytes(8, "little"), np.uint8)
    h.args_size = off + 8
    h.overflow_done = True
    return OK


def kernel_args_get_place_holder_buffer(args, param, data_size):
    """aclrtKernelArgsGetPlaceHolderBuffer -> host pointer (int) of the data region: acl (NULLs,
    size 0 -> 100000) -> 107017 -> not a placeholder (107000) -> finalized (207000) -> the
    overflow slot -> overflow (107000)."""
    if not args or not param:
        return None, E_ACL
    size = _positive_size(data_size)
    if size is None:
        return None, E_ACL
    h, code = _get("args", args)
    if code:
        return None, code
    p, code = _get("param", param)
    if code:
        return None, code
    if p.type == 0:
        RT.tls.explain("param: not a placeholder (aclrtKernelArgsAppendPlaceHolder)")
        return None, E_PARAM
    if h.finalized:
        return None, E_UNSUPPORTED
    code = _process_overflow(h)
    if code:
        return None, code
    off = h.aligned_end()
    if off + size > h.buffer_size:
        RT.tls.explain(f"data_size: {size} bytes at offset {off} overflow the args buffer "
                       f"({h.buffer_size} bytes)")
        return None, E_PARAM
    h.got_ph_buffer = True
    p.data_offset = off
    h.args_size = off + size
    return h.buffer_addr + off, OK


def kernel_args_para_update(args, param, data, param_size=None) -> int:
    """aclrtKernelArgsParaUpdate: only normal parameters of the same size (107000); the handle
    must be finalized again before a launch."""
    if not args or not param or _null(data):
        RT.tls.explain("args is NULL" if not args else "param is NULL" if not param else
                       "data is NULL")
        return E_ACL                            # kernel.cpp:371-373 (param 0 was 107000)
    size = _positive_size(param_size, data)
    if size is None:
        RT.tls.explain("param_size: 0, or no size for a data pointer (give param_size)")
        return E_ACL
    h, code = _get("args", args)
    if code:
        return code
    p, code = _get("param", param)
    if code:
        return code
    if p.type != 0 or p.size != size:
        RT.tls.explain("param: a placeholder cannot be updated" if p.type != 0 else
                       f"param_size (or len(data)): {size} bytes for a {p.size}-byte "
                       f"parameter")
        return E_PARAM
    b = _bytes_of(data, size)
    if b is None:
        RT.tls.explain(f"data: not {size} bytes of host data")
        return E_PARAM
    h.buffer[p.offset:p.offset + size] = np.frombuffer(b, np.uint8)
    h.updating = True
    return OK


def _c2c_addr(device) -> int:
    addr = _C2C_ADDR.get(device)
    if addr is None:
        addr = _C2C_ADDR[device] = device.state.mem.malloc(64)
    return addr


def kernel_args_finalize(args) -> int:
    """aclrtKernelArgsFinalize: the overflow slot if not done; on chips with the inter-core sync
    address, kernels needing it get it in the first 8 bytes; finalized, not updating."""
    if not args:
        return E_ACL
    h, code = _get("args", args)
    if code:
        return code
    code = _process_overflow(h)
    if code:
        return code
    ctx = _ctx()
    if ctx is None:
        return E_CTX
    k = h.kernel
    if k.reg_type == REG_NON_CPU and k.need_ffts_addr and \
            runtime_features(ctx.device.profile).inter_core_sync_addr and h.buffer_size >= 8:
        h.buffer[0:8] = np.frombuffer(_c2c_addr(ctx.device).to_bytes(8, "little"), np.uint8)
    h.finalized, h.updating = True, False
    return OK

