"""Stream-ordered memory pools (API reference chapter 11-10): ``aclrtMemPoolCreate / Destroy /
SetAttr / GetAttr / MallocAsync / FreeAsync / TrimTo``.

What the runtime does (``src/runtime/api/impl/api_impl_soma.cc``, ``feature/soma/soma.cc``,
``feature/soma/stream_mem_pool.cc``):

* a pool is a range of device addresses of ``maxSize`` (rounded up to 2 MiB; 0: the whole HBM,
  rounded down), physical memory is committed as blocks are handed out;
* ``aclrtMemPoolMallocAsync`` takes a block on the host at once (sizes rounded up to 2 MiB,
  ``DEVICE_POOL_MIN_BLOCK_SIZE``) and puts an AI CPU task ("SomaMemMng", MALLOC) on the stream;
  ``aclrtMemPoolFreeAsync`` returns the block to the pool on the host at once ("cached": still
  reserved, not released) and puts the FREE task on the stream. A pointer the pool does not
  know is taken as memory of aclrtMalloc: a host function on the stream frees it
  (``MemPoolFreeAsyncCallback`` -> ``DevFreeStatic``);
* nothing refuses these calls on a capturing stream: the tasks are captured like any AI CPU
  task (and the host function like any host function), the block is taken once, at capture
  time, and every replay uses the same addresses;
* errors of the pool layer (``RT_ERROR_MEM_POOL_NULL``, ``RT_ERROR_POOL_OP_INVALID``,
  ``RT_ERROR_MEM_POOL_ALLOC``, ``RT_ERROR_POOL_PROP_INVALID``, ``RT_ERROR_POOL_PTR_NOTFOUND``)
  are not in ``errcode_manage.cc``'s table, so the program sees 507000
  (``ACL_ERROR_RT_INTERNAL_ERROR``, ``ErrorcodeManage::GetRtExtErrCode``).

Reuse (docs/fidelity.md #270): a later MallocAsync *on the stream that allocated* a cached block
takes the smallest cached block of that stream that is large enough (the doc's "一个Stream内进行内存
复用", the source's ``SingleStreamReuse``); with ``ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC`` on,
any cached block whose FREE task has already run on the device (eager streams) may be taken by
another stream (the doc's "机会主义内存复用"); otherwise a block comes from the pool's free space
(best fit). Event-dependency and internal-dependency reuse are not simulated: those attributes
are kept and reported only. Cached blocks go back to free space (and
their pages to the OS) with ``aclrtMemPoolTrimTo``; the implicit trim at a synchronize is a no-op
in the source (``SomaApi::MemPoolTrimImplicit``) and so in npusim. Only the Atlas A2 has the
chapter (doc 11-10 "产品支持情况"); other chips get 207000.
"""
from __future__ import annotations

import itertools
import threading
import weakref

import numpy as np

from .. import errors as ERR
from ..device import engine as E
from ..device import sqe as S
from ..device.kernels import TABLE, UNIT_AICPU, compiled_body
from ..device.memory import OutOfMemory, zero_fill
from . import args as A
from .device import CENSUS_HOOKS, CLOSE_HOOKS
from .runtime import RT, profile
from .stream import lookup, refused, resolve_same_ctx

ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES = 0x1
ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC = 0x2
ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES = 0x3
ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD = 0x4
ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT = 0x5
ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH = 0x6
ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT = 0x7
ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH = 0x8
BLOCK = 2 << 20                  # DEVICE_POOL_MIN_BLOCK_SIZE, DEVICE_POOL_ALIGN_SIZE
_MALLOC, _FREE = 0, 1            # AicpuOpType of the SomaMemMng task [inferred values]
SOMA_BODY = "__npusim_soma_mem_mng"
E_POOL = ERR.ACL_ERROR_RT_INTERNAL_ERROR          # the pool layer's codes, as the program sees them


def soma_mem_mng(memp, msize, ctxp, args, b, nb):
    """The SomaMemMng AI CPU task: the driver's bookkeeping of the block; no data moves."""
    return 0


_KID = TABLE.register_lazy(SOMA_BODY, lambda: compiled_body(soma_mem_mng), 0, unit=UNIT_AICPU,
                           params=(("size", "u64"), ("va", "ptr"), ("pool", "u64"),
                                   ("op", "u64"), ("flag", "u64")))
_IDS = itertools.count(1)
_LOCK = threading.RLock()


class MemPool:
    """One pool: its address range, its free space and its blocks (busy and cached)."""
    __slots__ = ("handle", "id", "device", "base", "size", "free", "busy", "cached",
                 "reserved", "max_reserved", "used", "max_used", "attrs", "__weakref__")

    def __init__(self, device, base: int, size: int):
        self.device, self.base, self.size = device, base, size
        self.id = next(_IDS)
        self.free: list[list[int]] = [[base, size]]        # [start, size], by address, merged
        self.busy: dict[int, tuple[int, object]] = {}       # address -> (size, its stream)
        self.cached: list[list] = []     # [start, size, alloc stream, (free stream, pos) | None]
        self.reserved = self.max_reserved = self.used = self.max_used = 0
        self.attrs = {ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES: 0,
                      ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC: 0,
                      ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES: 0,
                      ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD: 0}
        self.handle = RT.handles.add("mempool", self)

    # ---- blocks (stream_mem_pool.cc SegmentAlloc / SegmentFree / TrimTo) ----
    def alloc(self, n: int, stream) -> int | None:
        fit = [c for c in self.cached if c[2] is stream and c[1] >= n]
        if not fit and self.attrs[ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC]:
            fit = [c for c in self.cached if c[1] >= n and self._freed(c)]
        if fit:                                           # SingleStreamReuse: best fit
            c = min(fit, key=lambda c: (c[1], c[0]))
            addr = c[0]
            if c[1] == n:
                self.cached.remove(c)
            else:
                c[0], c[1] = c[0] + n, c[1] - n
        else:
            holes = [h for h in self.free if h[1] >= n]
            if not holes:
                return None
            h = min(holes, key=lambda h: (h[1], h[0]))     # AllocFromFreeSegs: best fit
            try:
                self.device.state.mem.charge(n)
            except OutOfMemory:
                return None
            addr = h[0]
            if h[1] == n:
                self.free.remove(h)
            else:
                h[0], h[1] = h[0] + n, h[1] - n
            self.reserved += n
            self.max_reserved = max(self.max_reserved, self.reserved)
        self.busy[addr] = (n, stream)
        self.used += n
        self.max_used = max(self.max_used, self.used)
        return addr

    def release(self, addr: int) -> int:
        n, stream = self.busy.pop(addr)
        self.used -= n
        self.cached.append([addr, n, stream, None])
        return n

    def _freed(self, c: list) -> bool:
        """Has the FREE task that cached block ``c`` run on the device (opportunistic reuse by
        another stream: "不保证内存复用一定成功")? ``c[3]`` is (its stream, its position in the
        stream's SQ), None when it was not an eager task (a captured free never ran)."""
        if c[3] is None:
            return False
        s, pos = c[3]
        self.device.advance_to_host()
        return s.destroyed or int(self.device.state.sqs[s.sq, E.Q_HEAD]) > pos

    def trim_to(self, keep: int) -> None:
        mem = self.device.state.mem
        for c in sorted(self.cached, key=lambda c: c[1]):
            if self.reserved <= keep:
                break
            take = min(c[1], self.reserved - keep)
            start = c[0] + c[1] - take                     # the block's tail goes
            c[1] -= take
            if c[1] == 0:
                self.cached.remove(c)
            self.reserved -= take
            mem.uncharge(take)
            off = start - mem.dev_base
            zero_fill(mem.arena, off, off + take)          # its pages go back to the OS
            self._to_free(start, take)

    def _to_free(self, start: int, n: int) -> None:
        self.free.append([start, n])
        self.free.sort()
        merged: list[list[int]] = []
        for h in self.free:
            if merged and merged[-1][0] + merged[-1][1] == h[0]:
                merged[-1][1] += h[1]
            else:
                merged.append(h)
        self.free = merged

    def destroy(self) -> None:
        mem = self.device.state.mem
        mem.uncharge(self.reserved)
        self.reserved = self.used = 0
        self.busy.clear()
        self.cached.clear()
        mem.release_block(self.base)
        RT.handles.remove(self.handle)

    def holding(self, addr: int) -> bool:
        return self.base <= addr < self.base + self.size


_POOLS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()   # Device -> [MemPool]


def _pools(dev) -> list:
    return _POOLS.setdefault(dev, [])


def release_device(dev) -> None:
    """Destroy every pool of ``dev`` (its last reset, ``npusim.reset``)."""
    with _LOCK:
        for pool in _POOLS.pop(dev, []):
            pool.destroy()


CLOSE_HOOKS.append(release_device)
CENSUS_HOOKS.append(lambda dev: {"memory pools": len(_POOLS.get(dev, ()))})


def _fail(code: int, why: str) -> int:
    RT.tls.explain(why)
    return code


def _pool(h):
    obj, code = RT.handles.get("mempool", h)
    return None if code or obj is None else obj


def _supported() -> bool:
    return profile().name == "Ascend910B"


def _not_supported(who: str) -> int:
    return _fail(ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT, f"{who}: stream-ordered memory pools are "
                 f"supported on the Atlas A2 only (doc 11-10), not on {profile().name}")


# ---- create / destroy ----
def mem_pool_create(pool_props):
    """aclrtMemPoolCreate: (pool, code). ``pool_props`` an aclrtMemPoolProps dict: allocType 0
    (PINNED), handleType, location {"type": 1 (DEVICE), "id": device}, maxSize (0: the device's
    HBM), reserved (absent or 32 zero bytes)."""
    who = "aclrtMemPoolCreate"
    if not isinstance(pool_props, dict):
        return None, _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: poolProps is NULL or not an "
                           "aclrtMemPoolProps")
    loc = pool_props.get("location")
    vals = [pool_props.get(k, 0) for k in ("allocType", "handleType", "maxSize")]
    lt = loc.get("type") if isinstance(loc, dict) else None
    lid = loc.get("id", 0) if isinstance(loc, dict) else None
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in vals):
        return None, _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: a field of poolProps is not a "
                           "non-negative integer")
    alloc_type, _, max_size = vals
    if alloc_type != 0:
        return None, _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: poolProps->allocType must be "
                           "MEM_ALLOCATION_TYPE_PINNED(0)")
    if lt != 1 or not isinstance(lid, int) or isinstance(lid, bool):
        return None, _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: poolProps->location.type must be "
                           "MEM_LOCATION_TYPE_DEVICE(1)")
    reserved = pool_props.get("reserved", b"")
    if not isinstance(reserved, (bytes, bytearray, list, tuple)) or any(reserved):
        return None, _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: poolProps->reserved is reserved "
                           "and must be zeros")
    if not _supported():
        return None, _not_supported(who)
    if not 0 <= lid < profile().device_count:
        return None, _fail(ERR.ACL_ERROR_RT_INVALID_DEVICEID, f"{who}: location.id {lid} is not a "
                           "device")
    if RT.current_context is None:
        return None, _fail(ERR.ACL_ERROR_RT_CONTEXT_NULL, f"{who}: no current context")
    from .api_device import device
    dev = device(lid)
    total = dev.state.mem.hbm_size
    size = total // BLOCK * BLOCK if max_size == 0 else -(-max_size // BLOCK) * BLOCK
    if size > total or size == 0:
        return None, _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: maxSize {max_size} rounded "
                           f"to 2 MiB ({size}) exceeds the device's memory ({total})")
    try:
        with _LOCK:
            base = dev.state.mem.reserve_block(size, BLOCK)
            pool = MemPool(dev, base, size)
            _pools(dev).append(pool)
    except OutOfMemory:
        return None, _fail(ERR.ACL_ERROR_RT_MEMORY_ALLOCATION, f"{who}: no free range of {size} "
                           "device addresses")
    return pool.handle, ERR.ACL_SUCCESS


def mem_pool_destroy(mem_pool) -> int:
    """aclrtMemPoolDestroy: NULL 100000; not a live pool 507000. Blocks still handed out go
    with it (a user pool is always deletable: ``canDeleteOutsideDestruction``)."""
    if not mem_pool:
        return _fail(ERR.ACL_ERROR_INVALID_PARAM, "aclrtMemPoolDestroy: memPool is NULL")
    with _LOCK:
        pool = _pool(mem_pool)
        if pool is None:
            return _fail(E_POOL, "aclrtMemPoolDestroy: the pool is not created or destroyed "
                         "(RT_ERROR_MEM_POOL_NULL)")
        pool.device.advance_to_host()
        _pools(pool.device).remove(pool)
        pool.destroy()
    return ERR.ACL_SUCCESS


# ---- attributes ----
_READ_ONLY = (ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT)


def mem_pool_set_attr(mem_pool, attr, value) -> int:
    """aclrtMemPoolSetAttr: the three reuse switches (any int; stored as 0 / 1), the release
    threshold (at most the pool's size), and the two high-water marks (only 0: a reset).
    NULL pool 100000; NULL value, a dead pool, a read-only attribute 107000; an unknown
    attribute or a value out of range 507000 (``RT_ERROR_POOL_PROP_INVALID``)."""
    who = "aclrtMemPoolSetAttr"
    if not mem_pool:
        return _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: memPool is NULL")
    if value is None:
        return _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: value is NULL")
    with _LOCK:
        pool = _pool(mem_pool)
        if pool is None:
            return _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: the pool is not created")
        if attr in _READ_ONLY:
            return _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: attribute {attr} is read-only")
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2 ** 64:
            return _fail(E_POOL, f"{who}: value is not an integer of the attribute's type")
        if attr in (1, 2, 3):
            pool.attrs[attr] = 1 if value & 0xFFFFFFFF else 0
        elif attr == ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD:
            if value > pool.size:
                return _fail(E_POOL, f"{who}: release threshold {value} is above the pool's size "
                             f"{pool.size}")
            pool.attrs[attr] = value
        elif attr in (ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH, ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH):
            if value != 0:
                return _fail(E_POOL, f"{who}: attribute {attr} only takes 0 (a reset)")
            if attr == ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH:
                pool.max_reserved = 0
            else:
                pool.max_used = 0
        else:
            return _fail(E_POOL, f"{who}: attribute {attr} is not an aclrtMemPoolAttr")
    return ERR.ACL_SUCCESS


def mem_pool_get_attr(mem_pool, attr):
    """aclrtMemPoolGetAttr: (value, code). NULL pool 100000; a dead pool 107000; an unknown
    attribute 507000."""
    who = "aclrtMemPoolGetAttr"
    if not mem_pool:
        return None, _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: memPool is NULL")
    pool = _pool(mem_pool)
    if pool is None:
        return None, _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: the pool is not created")
    if attr in pool.attrs:
        return pool.attrs[attr], ERR.ACL_SUCCESS
    live = {ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT: pool.reserved,
            ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH: pool.max_reserved,
            ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT: pool.used,
            ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH: pool.max_used}
    if attr in live:
        return live[attr], ERR.ACL_SUCCESS
    return None, _fail(E_POOL, f"{who}: attribute {attr} is not an aclrtMemPoolAttr")


# ---- allocation ----
def _task(s, pool: MemPool, va: int, n: int, op: int) -> tuple[int, int]:
    """Queue the SomaMemMng task: (code, its position in the stream)."""
    addr = A.place(s, np.array([n, va, pool.id, op, 0], np.int64).tobytes())
    t = s.device.timing
    pos = s.submit(S.OP_KERNEL, t.host_malloc_ns, _KID, addr, 40, t.memcpy_setup_ns, 0, 1)
    return (refused(pos), pos) if pos < 0 else (ERR.ACL_SUCCESS, pos)


def mem_pool_malloc_async(size, mem_pool, stream):
    """aclrtMemPoolMallocAsync: (address, code). NULL pool or stream 100000; size 0: (None, 0)
    and nothing happens (``aclrtMemPoolMallocAsyncImpl``); a bad stream handle 107017; no
    context 107002, another context's stream 107003; a dead pool, or no room 507000."""
    who = "aclrtMemPoolMallocAsync"
    if not mem_pool:
        return None, _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: memPool is NULL")
    if not stream:
        return None, _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: stream is NULL")
    if size == 0:
        return None, ERR.ACL_SUCCESS
    s, code = lookup(stream)
    if code:
        return None, code
    s, code = resolve_same_ctx(s)
    if code:
        return None, code
    if size > 2 ** 64 - BLOCK:
        return None, _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: size {size} overflows")
    n = -(-size // BLOCK) * BLOCK
    with _LOCK:
        pool = _pool(mem_pool)
        if pool is None:
            return None, _fail(E_POOL, f"{who}: the pool is not created or destroyed")
        if pool.device is not s.device:
            return None, _fail(E_POOL, f"{who}: the pool is on device {pool.device.id}, the "
                               f"stream on device {s.device.id}")
        addr = pool.alloc(n, s)
        if addr is None:
            return None, _fail(E_POOL, f"{who}: no block of {n} bytes in the pool (its free "
                               "space, or the HBM, is used up; cached blocks of other streams "
                               "are not reused: aclrtMemPoolTrimTo frees them)")
        code, _ = _task(s, pool, addr, n, _MALLOC)
        if code:                                        # the source gives the block back
            pool.release(addr)
            return None, code
    return addr, ERR.ACL_SUCCESS


def mem_pool_free_async(ptr, stream) -> int:
    """aclrtMemPoolFreeAsync: NULL ptr 100000; NULL stream 507000 (``RT_ERROR_STREAM_NULL``);
    a bad handle 107017; another context's stream 107003; a pool address that is not a block
    507000; a block goes back to its pool at once and a FREE task goes on the stream. Any
    other pointer is taken as aclrtMalloc memory: a host function on the stream frees it."""
    who = "aclrtMemPoolFreeAsync"
    if not ptr:
        return _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: ptr is NULL")
    s, code = lookup(stream)
    if code:
        return code
    if s is None:
        return _fail(E_POOL, f"{who}: stream is NULL (RT_ERROR_STREAM_NULL)")
    s, code = resolve_same_ctx(s)
    if code:
        return code
    with _LOCK:
        pool = next((p for p in _pools(s.device) if p.holding(ptr)), None)
        if pool is None:
            from . import api_callback as CB
            from . import api_memory as AM

            def free_it(_):
                AM.free(ptr)
            return CB.launch_host_func(stream, free_it, None)
        if ptr not in pool.busy:
            return _fail(E_POOL, f"{who}: {ptr:#x} is not a block of its pool "
                         "(RT_ERROR_POOL_PTR_NOTFOUND)")
        n = pool.release(ptr)
        code, pos = _task(s, pool, ptr, n, _FREE)
        if not code and s.capture is None and not s.is_model and s.bound is None:
            pool.cached[-1][3] = (s, pos)               # an eager task: its completion counts
        return code


def mem_pool_trim_to(mem_pool, min_bytes_to_keep) -> int:
    """aclrtMemPoolTrimTo: release cached blocks until the pool holds ``min_bytes_to_keep``
    bytes. NULL 100000; a dead pool 507000; more than the pool's size, or less than what is
    handed out, 507000 (``RT_ERROR_POOL_OP_INVALID``); at least what it holds: nothing."""
    who = "aclrtMemPoolTrimTo"
    if not mem_pool:
        return _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: memPool is NULL")
    with _LOCK:
        pool = _pool(mem_pool)
        if pool is None:
            return _fail(E_POOL, f"{who}: the pool is not created or destroyed")
        keep = min_bytes_to_keep
        if keep > pool.size:
            return _fail(E_POOL, f"{who}: {keep} is more than the pool's size {pool.size}")
        if keep >= pool.reserved:
            return ERR.ACL_SUCCESS
        if keep < pool.used:
            return _fail(E_POOL, f"{who}: {keep} is less than the bytes handed out ({pool.used})")
        pool.device.advance_to_host()
        pool.trim_to(keep)
    return ERR.ACL_SUCCESS
