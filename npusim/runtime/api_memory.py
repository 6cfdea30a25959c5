"""Memory APIs: malloc/free, host memory, memcpy and memset, sync and async
(docs/eager_api_checks.md §5)."""
from __future__ import annotations

import numpy as np

from .. import errors as ERR
from ..device import sqe as S
from ..device.memory import OutOfMemory
from . import api_stream as AS
from .capture import stream_capturing, unsafe_call_blocked
from .device import DeadlockError
from .handles import CREATE_HOOKS
from .api_peer import may_access
from .peer import move as peer_move
from .hostmem import DEVICE, PAGEABLE, PINNED, UNKNOWN, host_bytes, locate
from .runtime import RT
from .stream import refused

ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEM_MALLOC_HUGE_ONLY, ACL_MEM_MALLOC_NORMAL_ONLY = 0, 1, 2
ACL_MEM_MALLOC_HUGE_FIRST_P2P, ACL_MEM_MALLOC_HUGE_ONLY_P2P = 3, 4
ACL_MEM_MALLOC_NORMAL_ONLY_P2P, ACL_MEM_MALLOC_HUGE1G_ONLY, ACL_MEM_MALLOC_HUGE1G_ONLY_P2P = 5, 6, 7
ACL_MEMCPY_HOST_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE = 0, 1
ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_DEVICE_TO_DEVICE = 2, 3
ACL_MEMCPY_DEFAULT, ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE = 4, 5
_VALID_KINDS = range(0, 6)
_HOST = (PINNED, PAGEABLE)
_KIND_OF = {(PINNED, DEVICE): 1, (PAGEABLE, DEVICE): 1, (DEVICE, PINNED): 2, (DEVICE, PAGEABLE): 2,
            (DEVICE, DEVICE): 3}
# pageable (unregistered) copies: kinds the runtime accepts per (src, dst) (MemcpyKindReviseMap)
_PAGEABLE_OK = {(PAGEABLE, DEVICE): {1, 3}, (DEVICE, PAGEABLE): {2, 3}, (PINNED, PAGEABLE): {0, 1},
                (PAGEABLE, PINNED): {0, 2}, (PAGEABLE, PAGEABLE): {0, 1, 2, 3}}


def _refuse(code: int, why: str) -> int:
    """``code``, with the reason (``RT.tls.explain``): failures only."""
    RT.tls.explain(why)
    return code


def _hex(p) -> str:
    return f"0x{int(p) & 0xFFFF_FFFF_FFFF_FFFF:x}"


def _null_args(**named) -> str:
    """The first of the named pointer arguments that is NULL: ``"dst is NULL"``."""
    for n, v in named.items():
        if not v:
            return f"{n} is NULL"
    return ""


def null_size_flags(who: str, size, flags=0, **pointers) -> int:
    """The leading checks the managed and virtual memory calls share, in their order (the acl
    layer's ``ACL_REQUIRES_NOT_NULL`` / ``ACL_REQUIRES_POSITIVE`` / reserved flags): each named
    pointer NULL, ``size`` 0, ``flags`` not 0 -> 100000 with the reason; else 0."""
    why = _null_args(**pointers)
    if why:
        return _refuse(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: {why}")
    if not size:
        return _refuse(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: size must be positive")
    if flags != 0:
        return _refuse(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: flags is reserved and must be 0")
    return ERR.ACL_SUCCESS


def _kind_or_null(dst, src, kind) -> str:
    why = _null_args(dst=dst, src=src)
    return why or f"kind: {kind} is not an aclrtMemcpyKind (0..4, 7)"


def _sizes(dest_max, count, what: str = "dest_max") -> str:
    if count < 0:
        return f"count: {count} is negative"
    if dest_max == 0:
        return f"{what} is 0"
    return f"count: {count} bytes exceed {what} ({dest_max})"


def _range(name: str, p, count, w) -> str:
    """Why ``count`` bytes at ``p`` are not memory the process holds."""
    if w.kind == UNKNOWN:
        return f"{name}: {_hex(p)} is not memory of this process (no allocation, pinned " \
               f"buffer or registered array holds it)"
    return f"{name}: {count} bytes at {_hex(p)} run past the end of its {w.kind} memory"


def _real_kind(src_kind: str, dst_kind: str) -> int:
    return _KIND_OF.get((src_kind, dst_kind), ACL_MEMCPY_HOST_TO_HOST)


def _copy_cost(dev_timing, kind: int, n: int) -> int:
    bw = {1: dev_timing.memcpy_h2d_bytes_per_ns, 2: dev_timing.memcpy_d2h_bytes_per_ns}.get(
        kind, dev_timing.memcpy_d2d_bytes_per_ns)
    return dev_timing.memcpy_setup_ns + n // max(bw, 1)


# ---- allocation ----
def malloc(size, policy=ACL_MEM_MALLOC_HUGE_FIRST):
    return _malloc_device(size, policy, pad=True)


def _malloc_device(size, policy, pad: bool):
    if not isinstance(size, (int, np.integer)) or size <= 0:
        return None, ERR.ACL_ERROR_INVALID_PARAM
    ctx = RT.current_context
    if ctx is None:
        return None, ERR.ACL_ERROR_RT_CONTEXT_NULL
    dev = ctx.device
    pad = 0 if not pad or policy in (ACL_MEM_MALLOC_HUGE1G_ONLY, ACL_MEM_MALLOC_HUGE1G_ONLY_P2P) \
        else dev.profile.malloc_padding
    nbytes = -(-(int(size) + pad) // 32) * 32 if pad else -(-int(size) // 32) * 32
    RT.tick(dev.timing.host_malloc_ns)
    try:
        return _created(dev.state.mem.malloc(nbytes, user=True)), ERR.ACL_SUCCESS
    except OutOfMemory:
        return None, ERR.ACL_ERROR_RT_MEMORY_ALLOCATION


def _created(ptr: int) -> int:
    """A program's allocation, told to the creation hooks (``handles.CREATE_HOOKS``)."""
    if CREATE_HOOKS:
        for hook in CREATE_HOOKS:
            hook("malloc", ptr)
    return ptr


def malloc_align32(size, policy=ACL_MEM_MALLOC_HUGE_FIRST):
    """aclrtMallocAlign32: aclrtMalloc without its tail padding (the size rounded to 32 bytes)."""
    return _malloc_device(size, policy, pad=False)


def malloc_cached(size, policy=ACL_MEM_MALLOC_HUGE_FIRST):
    """aclrtMallocCached: device memory the host caches; simulated memory is always coherent,
    so it is aclrtMalloc (aclrtMemFlush / aclrtMemInvalidate are refused by design)."""
    return malloc(size, policy)


def malloc_with_cfg(size, policy=ACL_MEM_MALLOC_HUGE_FIRST, cfg=None):
    """aclrtMallocWithCfg: aclrtMalloc; the aclrtMallocConfig attributes (module id, device id,
    VA flags) change nothing the simulator models."""
    return malloc(size, policy)


def malloc_for_task_scheduler(size, policy=ACL_MEM_MALLOC_HUGE_FIRST, cfg=None):
    """aclrtMallocForTaskScheduler: memory the task scheduler reads; device memory here."""
    return malloc(size, policy)


def malloc_host_with_cfg(size, cfg=None):
    """aclrtMallocHostWithCfg: aclrtMallocHost (the config changes nothing simulated)."""
    return malloc_host(size)


def free_with_dev_sync(ptr) -> int:
    """aclrtFreeWithDevSync: wait for the device's work, then aclrtFree."""
    return _free_synced(ptr, free)


def free_host_with_dev_sync(ptr) -> int:
    """aclrtFreeHostWithDevSync: wait for the device's work, then aclrtFreeHost."""
    return _free_synced(ptr, free_host)


def _free_synced(ptr, release) -> int:
    if not ptr:
        return _refuse(ERR.ACL_ERROR_INVALID_PARAM, "ptr is NULL")
    w = locate(ptr)
    if w.device is not None:
        w.device.advance_to_host()
        for ctx in list(w.device.contexts):
            for st in list(ctx.streams):
                if not st.destroyed:
                    try:
                        w.device.wait_sq(st.sq, st.tail)
                    except DeadlockError as e:
                        RT.tls.explain(e.diagnosis)
                        return ERR.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    return release(ptr)


(ACL_DDR_MEM, ACL_HBM_MEM, ACL_DDR_MEM_HUGE, ACL_DDR_MEM_NORMAL, ACL_HBM_MEM_HUGE,
 ACL_HBM_MEM_NORMAL, ACL_DDR_MEM_P2P_HUGE, ACL_DDR_MEM_P2P_NORMAL, ACL_HBM_MEM_P2P_HUGE,
 ACL_HBM_MEM_P2P_NORMAL, ACL_HBM_MEM_HUGE1G, ACL_HBM_MEM_P2P_HUGE1G, ACL_MEM_NORMAL, ACL_MEM_HUGE,
 ACL_MEM_HUGE1G, ACL_MEM_P2P_NORMAL, ACL_MEM_P2P_HUGE) = range(17)      # aclrtMemAttr (acl_rt.h)
_MEM_ATTRS = range(0, 18)                     # ... and ACL_MEM_P2P_HUGE1G
_DDR_ATTRS = (0, 2, 3, 6, 7)                  # the DDR kinds


def get_mem_info(attr):
    """aclrtGetMemInfo: (free, total, code) bytes of the current device's memory of ``attr``:
    the chip's HBM (``Profile.hbm_bytes``) for the HBM and generic kinds (allocations, physical
    handles, images and the runtime's own buffers count as used; reserved addresses do not); the DDR kinds (0, 0) — the simulated chips have HBM only. An
    attribute outside aclrtMemAttr: 107000; no context: 107002."""
    if attr not in _MEM_ATTRS:
        return None, None, _refuse(ERR.ACL_ERROR_RT_PARAM_INVALID,
                                   f"attr: {attr} is not an aclrtMemAttr (0..17)")
    ctx = RT.current_context
    if ctx is None:
        return None, None, ERR.ACL_ERROR_RT_CONTEXT_NULL
    if attr in _DDR_ATTRS:
        return 0, 0, ERR.ACL_SUCCESS
    mem = ctx.device.state.mem
    return mem.hbm_size - mem.phys_used, mem.hbm_size, ERR.ACL_SUCCESS


def _not_freeable(ptr, w, what: str) -> int:
    return _refuse(ERR.ACL_ERROR_RT_PARAM_INVALID,
                   f"ptr: {_hex(ptr)} is not the start of a live {what} allocation of this "
                   f"process (freed already, " + ("inside one, " if w.kind != UNKNOWN and
                                                   w.start != ptr else "") +
                   f"{w.kind} memory, or never allocated)")


def free(ptr) -> int:
    if not ptr:
        return _refuse(ERR.ACL_ERROR_INVALID_PARAM, "ptr is NULL")
    w = locate(ptr)
    if w.kind != DEVICE or w.start != ptr or not w.device.state.mem.is_user(int(ptr)):
        return _not_freeable(ptr, w, "device")          # double free, host, interior or not ours
    RT.tick(w.device.timing.host_free_ns)
    w.device.state.mem.free(int(ptr))
    return ERR.ACL_SUCCESS


def malloc_host(size):
    if not isinstance(size, (int, np.integer)) or size <= 0:
        return None, ERR.ACL_ERROR_INVALID_PARAM
    ctx = RT.current_context
    if ctx is None:
        return None, ERR.ACL_ERROR_RT_CONTEXT_NULL
    RT.tick(ctx.device.timing.host_malloc_ns)
    try:
        return (_created(ctx.device.state.mem.malloc(-(-int(size) // 32) * 32, host=True,
                                                     user=True)), ERR.ACL_SUCCESS)
    except OutOfMemory:
        return None, ERR.ACL_ERROR_RT_MEMORY_ALLOCATION


def free_host(ptr) -> int:
    if not ptr:
        return _refuse(ERR.ACL_ERROR_INVALID_PARAM, "ptr is NULL")
    w = locate(ptr)
    if w.kind != PINNED or w.start != ptr or not w.device.state.mem.is_user(int(ptr)):
        return _not_freeable(ptr, w, "pinned host (aclrtMallocHost)")
    RT.tick(w.device.timing.host_free_ns)
    w.device.state.mem.free(int(ptr), host=True)
    return ERR.ACL_SUCCESS


# ---- copies ----
def _sync_copy(dst, src, count, sw, dw) -> int:
    """The driver copy of aclrtMemcpy (``ApiImpl::MemCopySync`` -> ``Driver::MemCopySync``, no
    stream order): the host waits for the copy, and its bytes move at the copy's end, after the
    device has run up to then -- a kernel launched just before, not synchronized, has written
    its output by the time a 1 MiB copy ends (the memory samples' ``WriteDo`` then
    ``aclrtMemcpy``; fidelity row 501)."""
    dev = (sw.device or dw.device)
    if dev is not None:
        RT.tick(_copy_cost(dev.timing, _real_kind(sw.kind, dw.kind), count))
    for w in (sw, dw):
        if w.device is not None:
            w.device.advance_to_host()
    host_bytes(dw, dst, count)[:] = host_bytes(sw, src, count)
    return ERR.ACL_SUCCESS


def memcpy(dst, dest_max, src, count, kind) -> int:
    if count == 0:
        return ERR.ACL_SUCCESS
    if not dst or not src or kind not in _VALID_KINDS:
        return _refuse(ERR.ACL_ERROR_INVALID_PARAM, _kind_or_null(dst, src, kind))
    if dest_max == 0 or count > dest_max or count < 0:
        return _refuse(ERR.ACL_ERROR_RT_PARAM_INVALID, _sizes(dest_max, count))
    if dst == src:
        return ERR.ACL_SUCCESS
    if RT.current_context is None:
        return ERR.ACL_ERROR_RT_CONTEXT_NULL
    if unsafe_call_blocked():
        return ERR.ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT
    sw, dw = locate(src), locate(dst)
    if not sw.fits(src, count) or not dw.fits(dst, count):
        return _refuse(ERR.ACL_ERROR_RT_PARAM_INVALID, _range("src", src, count, sw)
                       if not sw.fits(src, count) else _range("dst", dst, count, dw))
    RT.tick(RT.current_context.device.timing.host_api_ns)
    return _sync_copy(dst, src, count, sw, dw)


def _stream_of(h):
    """``AS.lookup(h)`` without its two frames: (stream or None for NULL, 0), or (None, 107017)
    for a handle that is not a live stream."""
    if h is None or h == 0:
        return None, ERR.ACL_SUCCESS
    try:
        s = RT.handles.stream(h)
    except TypeError:
        return None, ERR.ACL_ERROR_RT_INVALID_HANDLE
    if s is None:
        return None, ERR.ACL_ERROR_RT_INVALID_HANDLE
    return s, ERR.ACL_SUCCESS


def memcpy_async(dst, dest_max, src, count, kind, stream) -> int:
    if count == 0:
        return ERR.ACL_SUCCESS
    if not dst or not src or kind not in _VALID_KINDS:
        return _refuse(ERR.ACL_ERROR_INVALID_PARAM, _kind_or_null(dst, src, kind))
    s, code = _stream_of(stream)
    if code:
        return code
    if dest_max == 0 or count > dest_max or count < 0:
        return _refuse(ERR.ACL_ERROR_RT_PARAM_INVALID, _sizes(dest_max, count))
    tls = RT.tls                              # RT.current_context, inline
    ctx = tls.current                 # curCtx if set, else curRef
    if ctx is None or ctx.destroyed:
        ctx = tls.primary
        if ctx is None or ctx.destroyed:
            return ERR.ACL_ERROR_RT_CONTEXT_NULL
    if s is not None and not s.is_model and s.ctx is ctx and dst != src and \
            s.device.state.mem.device_pair_fits(src, dst, count):
        # device to device on the stream's own device, the hot path: no kind to correct, no
        # pageable copy, the same stream checks as below
        if ctx.failure_code:
            return ctx.failure_code
        pos = s.submit(S.OP_MEMCPY, s.device.timing.host_memcpy_async_ns, dst, src, count, 0,
                       ACL_MEMCPY_DEVICE_TO_DEVICE)
        return -pos if pos < 0 else ERR.ACL_SUCCESS
    sw, dw = locate(src), locate(dst)
    if not sw.fits(src, count) or not dw.fits(dst, count):
        return _refuse(ERR.ACL_ERROR_RT_PARAM_INVALID, _range("src", src, count, sw)
                       if not sw.fits(src, count) else _range("dst", dst, count, dw))
    pageable = PAGEABLE in (sw.kind, dw.kind)
    if pageable:
        ok = _PAGEABLE_OK[(sw.kind, dw.kind)]
        if kind != ACL_MEMCPY_DEFAULT and {5: 1}.get(kind, kind) not in ok:
            return _refuse(ERR.ACL_ERROR_RT_PARAM_INVALID,
                           f"kind: {kind} does not match the memory given (src {sw.kind}, dst "
                           f"{dw.kind})")
    real = _real_kind(sw.kind, dw.kind)                 # the runtime corrects the kind
    if real == ACL_MEMCPY_HOST_TO_HOST:
        return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    if dst == src:
        return ERR.ACL_SUCCESS
    if pageable:                                        # stream sync + synchronous copy
        if s is not None and stream_capturing(s):
            RT.tls.explain("an async copy with pageable host memory (a numpy array, not "
                           "aclrtMallocHost memory) cannot be captured: it turns synchronous; "
                           "use malloc_host for async copies during capture (aclrtMallocHost; "
                           "Device.malloc_host in the Pythonic API)")
            return ERR.ACL_ERROR_RT_PARAM_INVALID
        code = AS.synchronize_stream(stream)
        if code:
            return code
        if unsafe_call_blocked():
            return ERR.ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC
        return _sync_copy(dst, src, count, sw, dw)
    s, code = AS.resolve_same_ctx(s)
    if code:
        return code
    if s.ctx.failure_code:
        return s.ctx.failure_code
    if sw.device is not s.device or dw.device is not s.device:
        return _peer_copy(s, dst, src, count, sw, dw)
    return refused(s.submit(S.OP_MEMCPY, s.device.timing.host_memcpy_async_ns, a0=int(dst),
                            a1=int(src), a2=int(count), flag=real))


def _peer_copy(s, dst, src, count, sw, dw) -> int:
    """An async copy that reaches another device's memory: a peer copy task on the stream
    (``runtime/peer.py``) once the stream's device has enabled access to that device
    (``aclrtDeviceEnablePeerAccess``; docs/fidelity.md row 372). Pinned host memory of another
    device is host memory every device reaches."""
    for name, w in (("src", sw), ("dst", dw)):
        if w.kind == DEVICE and not may_access(s.device.id, w.device.id):
            return _refuse(ERR.ACL_ERROR_RT_PARAM_INVALID,
                           f"{name}: memory of device {w.device.id}, and device {s.device.id} "
                           f"(the stream's) has not enabled peer access to it: call "
                           f"aclrtDeviceEnablePeerAccess({w.device.id}, 0) on device "
                           f"{s.device.id} first")
    t = s.device.profile.timing
    dur = t.memcpy_setup_ns + count // max(1, t.memcpy_d2d_bytes_per_ns)
    return refused(peer_move(s, int(dst), int(src), int(count), dur,
                             s.device.timing.host_memcpy_async_ns))


# ---- memset ----
def memset(ptr, max_count, value, count) -> int:
    if count == 0:
        return ERR.ACL_SUCCESS
    if not ptr:
        return _refuse(ERR.ACL_ERROR_INVALID_PARAM, "ptr is NULL")
    if RT.current_context is None:
        return ERR.ACL_ERROR_RT_CONTEXT_NULL
    if unsafe_call_blocked():
        return ERR.ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT
    if count > max_count or count < 0:
        return _refuse(ERR.ACL_ERROR_RT_PARAM_INVALID, _sizes(max_count, count, "max_count"))
    w = locate(ptr)
    if not w.fits(ptr, count):
        return _refuse(ERR.ACL_ERROR_RT_PARAM_INVALID, _range("ptr", ptr, count, w))
    if w.device is not None:
        w.device.advance_to_host()
    host_bytes(w, ptr, count)[:] = np.uint8(int(value) & 0xFF)
    RT.tick(RT.current_context.device.timing.host_api_ns)
    return ERR.ACL_SUCCESS


def memset_async(ptr, max_count, value, count, stream) -> int:
    if count == 0:
        return ERR.ACL_SUCCESS
    if not ptr:
        return _refuse(ERR.ACL_ERROR_INVALID_PARAM, "ptr is NULL")
    s, code = _stream_of(stream)
    if code:
        return code
    if count > max_count or count < 0:
        return _refuse(ERR.ACL_ERROR_RT_PARAM_INVALID, _sizes(max_count, count, "max_count"))
    # AS.resolve_same_ctx(s), inline: context (107002), default stream, a model's stream
    # (207000), another context's stream (107003)
    tls = RT.tls                              # RT.current_context, inline
    ctx = tls.current                 # curCtx if set, else curRef
    if ctx is None or ctx.destroyed:
        ctx = tls.primary
        if ctx is None or ctx.destroyed:
            return ERR.ACL_ERROR_RT_CONTEXT_NULL
    if s is None:
        s = ctx.default_stream
    elif s.is_model:
        return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    elif s.ctx is not ctx:
        return ERR.ACL_ERROR_RT_STREAM_CONTEXT
    # the stream's device memory, at once (``locate(ptr).fits`` for it: devices' ranges are
    # disjoint); None: not the stream's device memory, ask ``locate``
    fits = s.device.state.mem.device_fits(ptr, count)
    if fits is None:
        w = locate(ptr)
        if not w.fits(ptr, count):
            return _refuse(ERR.ACL_ERROR_RT_PARAM_INVALID, _range("ptr", ptr, count, w))
        if w.kind in (PINNED, PAGEABLE):       # host memory is set at once, out of stream order
            if w.device is not None:
                w.device.advance_to_host()
            host_bytes(w, ptr, count)[:] = np.uint8(int(value) & 0xFF)
            return ERR.ACL_SUCCESS
        if w.device is not s.device:
            return _refuse(ERR.ACL_ERROR_RT_PARAM_INVALID,
                           "ptr: memory of another device than the stream's")
    elif not fits:
        return _refuse(ERR.ACL_ERROR_RT_PARAM_INVALID,
                       f"ptr: {count} bytes at {_hex(ptr)} run past the end of its allocation")
    if s.ctx.failure_code:
        return s.ctx.failure_code
    pos = s.submit(S.OP_MEMSET, s.device.timing.host_memset_async_ns, int(ptr),
                   int(value) & 0xFF, int(count))
    return -pos if pos < 0 else ERR.ACL_SUCCESS


# ---- stream memory operations (chapter 11-09) ----
ACL_STREAM_WAIT_VALUE_GEQ, ACL_STREAM_WAIT_VALUE_EQ = 0, 1
ACL_STREAM_WAIT_VALUE_AND, ACL_STREAM_WAIT_VALUE_NOR = 2, 3
_WAIT_HOW = {ACL_STREAM_WAIT_VALUE_GEQ: S.WAIT_GEQ, ACL_STREAM_WAIT_VALUE_EQ: S.WAIT_EQ,
             ACL_STREAM_WAIT_VALUE_AND: S.WAIT_AND, ACL_STREAM_WAIT_VALUE_NOR: S.WAIT_NOR}


def _value_task(dev_addr, flag: int, stream, flag_ok: bool):
    """The shared checks of aclrtValueWrite / aclrtValueWait, in the runtime's order: NULL address
    (acl layer, 100000), chip feature (TASK_VALUE_WAIT, 207000), stream handle, flag, device
    memory (``ApiErrorDecorator::MemWriteValue``, 107000), context (107002), default stream and
    context of the stream (107003) (``ApiImpl::MemWriteValue``): (stream, code)."""
    if not dev_addr:
        return None, _refuse(ERR.ACL_ERROR_INVALID_PARAM, "dev_addr is NULL")
    if not RT.profile_in_force().has_task_value_wait:
        return None, ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    s, code = AS.lookup(stream)
    if code:
        return None, code
    if not flag_ok:
        return None, _refuse(ERR.ACL_ERROR_RT_PARAM_INVALID, f"flag: {flag} is not allowed here")
    w = locate(dev_addr)
    if w.kind != DEVICE or not w.fits(int(dev_addr), 8):
        return None, _refuse(ERR.ACL_ERROR_RT_PARAM_INVALID,
                             f"dev_addr: {_hex(dev_addr)} does not hold 8 bytes of device memory")
    if RT.current_context is None:
        return None, ERR.ACL_ERROR_RT_CONTEXT_NULL
    if s is None:
        s = RT.current_context.default_stream
    if s.ctx is not RT.current_context:
        return None, ERR.ACL_ERROR_RT_STREAM_CONTEXT
    if w.device is not s.device:
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    return s, ERR.ACL_SUCCESS


def value_write(dev_addr, value: int, flag: int, stream) -> int:
    """aclrtValueWrite: a MEM_WRITE_VALUE task that stores the 64-bit ``value`` at ``dev_addr``
    in stream order (``memory_stars.cc`` MemWriteValue); ``flag`` is reserved and must be 0.
    Captured like any task on a capturing stream (task type VALUE_WRITE)."""
    s, code = _value_task(dev_addr, flag, stream, flag == 0)
    if code:
        return code
    v = int(value) & 0xFFFF_FFFF_FFFF_FFFF
    return refused(s.submit(S.OP_MEM_WRITE_VALUE, s.device.timing.host_api_ns, a0=int(dev_addr),
                            a1=v - (1 << 64) if v >= 1 << 63 else v, a2=8))


def value_wait(dev_addr, value: int, flag: int, stream) -> int:
    """aclrtValueWait: a MEM_WAIT_VALUE task that holds the stream until the 64-bit word at
    ``dev_addr`` satisfies ``flag`` against ``value``: GEQ ``(int64)(*a - v) >= 0``, EQ, AND
    ``(*a & v) != 0``, NOR ``~(*a | v) != 0`` (chapter 11-09); other flags 107000."""
    s, code = _value_task(dev_addr, flag, stream, flag in _WAIT_HOW)
    if code:
        return code
    v = int(value) & 0xFFFF_FFFF_FFFF_FFFF
    return refused(s.submit(S.OP_MEM_WAIT_VALUE, s.device.timing.host_api_ns, a0=int(dev_addr),
                            a1=v - (1 << 64) if v >= 1 << 63 else v, a2=8, flag=_WAIT_HOW[flag]))


# ---- 2-D copy (chapter 11-03) ----
MAX_MEMCPY2D_HEIGHT, MAX_MEMCPY2D_WIDTH = 5_242_880, 5_000_000     # internal_error_define.hpp


def memcpy2d(dst, dpitch, src, spitch, width, height, kind) -> int:
    """aclrtMemcpy2d: ``height`` rows of ``width`` bytes, ``spitch`` / ``dpitch`` apart, host to
    device or device to host, synchronously. Check order: a zero width or height copies nothing
    (0); acl (``CheckMemcpy2dParam``): NULL dst / src, width above either pitch, a kind other
    than H2D / D2H / D2D / DEFAULT → 100000; rt (``MemCopy2DCheckParam``): height above 5 Mi rows
    or width above 5,000,000 bytes → 107000; a D2D kind → 207000 (the sync 2-D copy is H2D / D2H
    only); the kind the memory really is must be H2D or D2H (107000); no context 107002; a
    capture mode that blocks synchronous calls 107030; rows outside an allocation 107000."""
    if width == 0 or height == 0:
        return ERR.ACL_SUCCESS
    if not dst or not src or width > spitch or width > dpitch or \
            kind not in (ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST,
                         ACL_MEMCPY_DEVICE_TO_DEVICE, ACL_MEMCPY_DEFAULT):
        return ERR.ACL_ERROR_INVALID_PARAM
    if height > MAX_MEMCPY2D_HEIGHT or width > MAX_MEMCPY2D_WIDTH:
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    if kind == ACL_MEMCPY_DEVICE_TO_DEVICE:
        return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    sw, dw = locate(src), locate(dst)
    if _real_kind(sw.kind, dw.kind) not in (ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST):
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    if RT.current_context is None:
        return ERR.ACL_ERROR_RT_CONTEXT_NULL
    if unsafe_call_blocked():
        return ERR.ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT
    last_s, last_d = int(src) + (height - 1) * spitch, int(dst) + (height - 1) * dpitch
    if not sw.fits(int(src), 1) or not sw.fits(last_s, width) or \
            not dw.fits(int(dst), 1) or not dw.fits(last_d, width):
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    for w in (sw, dw):
        if w.device is not None:
            w.device.advance_to_host()
    span_s, span_d = (height - 1) * spitch + width, (height - 1) * dpitch + width
    src_rows = np.lib.stride_tricks.as_strided(host_bytes(sw, int(src), span_s),
                                               (height, width), (spitch, 1))
    dst_rows = np.lib.stride_tricks.as_strided(host_bytes(dw, int(dst), span_d),
                                               (height, width), (dpitch, 1))
    dst_rows[:] = src_rows
    dev = sw.device or dw.device
    RT.tick(RT.current_context.device.timing.host_api_ns +
            _copy_cost(dev.timing, _real_kind(sw.kind, dw.kind), width * height))
    return ERR.ACL_SUCCESS


# ---- 32-bit fill (chapter 11-03) ----
def memset_d32(ptr, mem_size, value, n) -> int:
    """aclrtMemsetD32: ``n`` 32-bit words of ``value`` at ``ptr`` (device or pinned host memory),
    synchronously. Order (``aclrtMemsetD32Impl``): n 0 → 0; NULL ptr, a pointer not 4-byte
    aligned, ``n * 4 > mem_size``, memory not from aclrtMalloc / aclrtMallocHost → 100000; no
    context 107002; a blocking capture mode 107030; past the allocation 107000."""
    if n == 0:
        return ERR.ACL_SUCCESS
    if not ptr or int(ptr) & 3 or n * 4 > mem_size:
        return ERR.ACL_ERROR_INVALID_PARAM
    w = locate(ptr)
    if w.kind not in (DEVICE, PINNED):
        return ERR.ACL_ERROR_INVALID_PARAM
    if RT.current_context is None:
        return ERR.ACL_ERROR_RT_CONTEXT_NULL
    if unsafe_call_blocked():
        return ERR.ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT
    if not w.fits(int(ptr), 4 * n):
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    w.device.advance_to_host()
    host_bytes(w, int(ptr), 4 * n).view(np.uint32)[:] = np.uint32(int(value) & 0xFFFF_FFFF)
    RT.tick(w.device.timing.host_api_ns + _copy_cost(w.device.timing, 1, 4 * n))
    return ERR.ACL_SUCCESS


ACL_RT_MEM_TYPE_DEV, ACL_RT_MEM_TYPE_DVPP, ACL_RT_MEM_TYPE_RSVD = 0x2, 0x8, 0x10   # acl_rt.h
_RT_MEM_TYPES = 0x2 | 0x20 | 0x8     # RT_MEM_MASK_DEV / RSVD / DVPP_TYPE (ApiErrorDecorator)


def check_mem_type(addr_list, size, mem_type, reserve=0):
    """aclrtCheckMemType: (1 when each of the first ``size`` addresses is memory of a type in
    ``mem_type``, else 0, code). NULL list 100000 (acl); the rt layer (``ApiErrorDecorator::
    CheckMemType``): reserve not 0, size 0 (or past the list), a type bit outside its mask
    DEV 0x2 | RSVD 0x20 | DVPP 0x8 → 107000 — so ACL_RT_MEM_TYPE_RSVD (0x10 in ``acl_rt.h``) is
    refused, as there; no context 107002. The simulator's device memory is all DEV memory (from
    aclrtMalloc); pinned host memory and unknown addresses are no device memory type."""
    if addr_list is None:
        return None, ERR.ACL_ERROR_INVALID_PARAM
    if reserve != 0 or size == 0 or size > len(addr_list) or mem_type & ~_RT_MEM_TYPES:
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    if RT.current_context is None:
        return None, ERR.ACL_ERROR_RT_CONTEXT_NULL
    if not mem_type & ACL_RT_MEM_TYPE_DEV:
        return 0, ERR.ACL_SUCCESS
    ok = all(isinstance(a, (int, np.integer)) and locate(a).kind == DEVICE
             for a in list(addr_list)[:size])
    return int(ok), ERR.ACL_SUCCESS
