"""Bounds-checked views of simulated memory, for kernel bodies (numba, nopython).

A kernel never indexes the arena with a raw address. It asks for a typed view of ``n`` elements at
a device address; the view is handed out only when the whole range lies inside one live
allocation. Otherwise the first fault is recorded in the context array and the kernel gets a view
of the *sink* (a scratch region past the addressable arena), so the kernel finishes harmlessly and
the engine reports a kernel exception for the task — never a crash of the Python process.

Arguments are read the way a real kernel reads them: from 8-byte slots of the args area in device
memory (pointers and integers little-endian, a float in the low 4 bytes; ``spec/kernel.md`` §5.2).

**Access recording** (``npusim.analysis``): when ``ctx[C_REC]`` is non-zero it is the address of
an int64 *record array* (layout below, owned by ``npusim.device.recording``) and every checked view
appends (task, address, bytes, kind) to it: ``u32`` and the other plain views count as read+write,
the ``r_*`` views (``r_u32``, ``r_f32`` ...) as reads; the args slots are not recorded. The engine
appends one task row per executed SQE (and the operands of copies, memsets and cond-word reads).
With recording off the cost is one test of ``ctx[C_REC]`` per view.
"""
from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import intrinsic
from numba.np.arrayobj import populate_array

from .memory import (C_DEV_BASE, C_REC, C_DEV_SIZE, C_FAULT, C_FAULT_ADDR, C_FAULT_SIZE,
                     C_HOST_BASE, C_HOST_OFF, C_HOST_SIZE, C_SINK_OFF, C_SINK_SIZE, CT_PTAB,
                     CT_PT_HOST, DEV_ALIGN, DEV_SHIFT, FAULT_OUT_OF_BOUNDS, FAULT_UNMAPPED,
                     HOST_ALIGN, HOST_SHIFT, PT_CAP, PT_DEV_STRIDE, PT_HOST_STRIDE)


@njit(cache=True, inline="always")
def to_off(ctx, addr):
    """Arena offset of a device or pinned-host address, -1 if unmapped."""
    d = addr - ctx[C_DEV_BASE]
    if 0 <= d < ctx[C_DEV_SIZE]:
        return d
    h = addr - ctx[C_HOST_BASE]
    if 0 <= h < ctx[C_HOST_SIZE]:
        return ctx[C_HOST_OFF] + h
    return -1


@njit(cache=True, forceinline=True)
def check(ctx, addr, nbytes):
    """Arena offset of ``[addr, addr+nbytes)`` if it lies in one live allocation, else -1.

    One load from the page table (``npusim.device.memory``, "the page table") answers the ranges
    that are inside their block, whatever the number of live blocks; the rest (faults, and
    ranges longer than the table's capped entries) take ``_search``, the exact answer. Compiled
    once by numba and inlined by LLVM (``forceinline``) into ``_atk``: as a call, its arguments
    (the context array's fields) and status return cost more than the lookup.
    """
    d = addr - ctx[C_DEV_BASE]
    if 0 <= d < ctx[C_DEV_SIZE] and nbytes >= 0:
        e = view_at(ctx[len(ctx) - CT_PTAB] + 4 * (d >> DEV_SHIFT), 1, np.int32)[0]
        if (d & (DEV_ALIGN - 1)) + nbytes < e:
            return d
    else:
        h = addr - ctx[C_HOST_BASE]
        if 0 <= h < ctx[C_HOST_SIZE] and nbytes >= 0:
            t = len(ctx)
            e = view_at(ctx[t - CT_PTAB] + 4 * (ctx[t - CT_PT_HOST] + (h >> HOST_SHIFT)), 1,
                        np.int32)[0]
            if (h & (HOST_ALIGN - 1)) + nbytes < e:
                return ctx[C_HOST_OFF] + h
    return _search(ctx, addr, nbytes)


@njit(cache=True, inline="always")
def _entry(pt, k):
    """Page-table entry ``k`` (``pt``: the table's address)."""
    return view_at(pt + 4 * k, 1, np.int32)[0]


@njit(cache=True, inline="always")
def _gstart(ctx, hk, k):
    """Arena offset where granule ``k`` starts (``hk``: the first pinned-host entry)."""
    if k < hk:
        return k << DEV_SHIFT
    return ctx[C_HOST_OFF] + ((k - hk) << HOST_SHIFT)


@njit(cache=True)
def _search(ctx, addr, nbytes):
    """``check``'s exact answer (the page table's slow path): the arena offset when
    ``[addr, addr+nbytes)`` lies in the last block starting at or before ``addr`` (so an empty
    range at a block's end is in it), else -1 with the kernel's first fault recorded in
    ``ctx[C_FAULT..C_FAULT_SIZE]``. Its block is the one covering ``addr``'s granule; with none
    there, only an empty range at the granule's start can lie in the block before, when that
    block ends exactly there. A capped entry (a block of 2 GiB or more) is followed by strides
    to its exact end (``npusim.device.memory``, "the page table")."""
    off = to_off(ctx, addr)
    if off < 0 or nbytes < 0:
        if ctx[C_FAULT] == 0:
            ctx[C_FAULT], ctx[C_FAULT_ADDR], ctx[C_FAULT_SIZE] = FAULT_UNMAPPED, addr, nbytes
        return -1
    t = len(ctx)
    pt, hk = ctx[t - CT_PTAB], ctx[t - CT_PT_HOST]
    if off < ctx[C_HOST_OFF]:
        k = off >> DEV_SHIFT
    else:
        k = hk + ((off - ctx[C_HOST_OFF]) >> HOST_SHIFT)
    g = _gstart(ctx, hk, k)
    e = _entry(pt, k)
    hi = np.int64(-1)
    if e != 0:
        if e == PT_CAP + 1:
            stride = PT_DEV_STRIDE if k < hk else PT_HOST_STRIDE
            step = stride * (DEV_ALIGN if k < hk else HOST_ALIGN)
            while e == PT_CAP + 1:
                k += stride
                g += step
                e = _entry(pt, k)
        hi = g + e - 1
    elif nbytes == 0 and off == g and k > 0:
        pe = _entry(pt, k - 1)
        if pe != 0 and pe != PT_CAP + 1 and _gstart(ctx, hk, k - 1) + pe - 1 == off:
            hi = off
    if hi < 0 or off + nbytes > hi:
        if ctx[C_FAULT] == 0:
            ctx[C_FAULT], ctx[C_FAULT_ADDR], ctx[C_FAULT_SIZE] = FAULT_OUT_OF_BOUNDS, addr, nbytes
        return -1
    return off


@intrinsic
def view_at(typingctx, addr, shape, dtype):
    """A C-contiguous array of ``dtype`` (``np.uint8``, ``a.dtype`` ...) and ``shape`` (an int
    or a tuple of ints) at ``addr`` (an int or a pointer), owning nothing (no reference count).
    ``numba.carray`` does the same through an implementation numba compiles once per dtype and
    shape type; this is lowered in place."""
    if isinstance(dtype, types.NumberClass):
        ty = dtype.instance_type
    elif isinstance(dtype, types.DType):
        ty = dtype.dtype
    else:
        return None
    if isinstance(shape, types.Integer):
        dims = (shape,)
    elif isinstance(shape, types.BaseTuple) and all(isinstance(t, types.Integer) for t in shape):
        dims = tuple(shape)
    else:
        return None
    if not isinstance(addr, (types.Integer, types.CPointer, types.RawPointer)):
        return None
    arrty = types.Array(ty, len(dims), "C")

    def codegen(context, builder, signature, llargs):
        lt = context.get_data_type(ty)
        if isinstance(addr, types.Integer):
            data = builder.inttoptr(llargs[0], lt.as_pointer())
        else:
            data = builder.bitcast(llargs[0], lt.as_pointer())
        if isinstance(shape, types.Integer):
            vals = [llargs[1]]
        else:
            vals = [builder.extract_value(llargs[1], i) for i in range(len(dims))]
        n = [context.cast(builder, v, t, types.intp) for v, t in zip(vals, dims)]
        size = context.get_abi_sizeof(lt)
        strides = [context.get_constant(types.intp, size)]
        for d in reversed(n[1:]):
            strides.insert(0, builder.mul(strides[0], d))
        ary = context.make_array(arrty)(context, builder)
        populate_array(ary, data=data, shape=n, strides=strides, itemsize=size, meminfo=None)
        return ary._getvalue()
    return arrty(addr, shape, dtype), codegen


# ---- the record array: header words, then task rows, then access rows (all int64) ----
RH_TN, RH_TCAP, RH_AN, RH_ACAP, RH_DROP, RH_TOFF, RH_AOFF, RH_FULL, RH_LEN, RH_LASTDROP = range(10)
RH_SIZE = 16
TASK_COLS = 8        # sq, pos, op (NOP when skipped after a fault), a0, a1, val (branch), a4, a5
ACC_COLS = 4         # task row, address, bytes, kind
ACC_R, ACC_W, ACC_RW = map(np.int64, (1, 2, 3))    # typed: one compiled rec_access (engine.F_*)
REC_MARGIN = 4       # task rows kept free: RH_FULL is raised before the table is full


@njit(cache=True, inline="always")
def _rec(ctx):
    p = ctx[C_REC]
    return view_at(p, view_at(p, RH_SIZE, np.int64)[RH_LEN], np.int64)


@njit(cache=True)
def rec_access(ctx, addr, nbytes, kind):
    """Append an access of the current task (the last task row); merges with the previous row
    when it extends or repeats it (per-block views of one buffer make one row)."""
    r = _rec(ctx)
    task = r[RH_TN] - 1
    n = r[RH_AN]
    if n > 0:
        j = r[RH_AOFF] + ACC_COLS * (n - 1)
        if r[j] == task and r[j + 3] == kind:
            lo, hi = r[j + 1], r[j + 1] + r[j + 2]
            if lo <= addr and addr + nbytes <= hi:
                return
            if addr == hi:
                r[j + 2] += nbytes
                return
    if n >= r[RH_ACAP]:
        r[RH_DROP] += 1
        return
    j = r[RH_AOFF] + ACC_COLS * n
    r[j], r[j + 1], r[j + 2], r[j + 3] = task, addr, nbytes, kind
    r[RH_AN] = n + 1
    if 4 * (n + 1) >= 3 * r[RH_ACAP]:
        r[RH_FULL] = 1


@njit(cache=True)
def rec_task(ctx, q, pos, op, a0, a1, a4, a5):
    """Append the task row of the SQE the engine is about to execute. True when the record
    array is nearly full: the engine then stops after this SQE so the host can grow it."""
    r = _rec(ctx)
    n = r[RH_TN]
    if n >= r[RH_TCAP]:
        r[RH_DROP] += 1
        r[RH_LASTDROP] = 1
        return True
    r[RH_LASTDROP] = 0
    j = r[RH_TOFF] + TASK_COLS * n
    r[j], r[j + 1], r[j + 2], r[j + 3] = q, pos, op, a0
    r[j + 4], r[j + 5], r[j + 6], r[j + 7] = a1, 0, a4, a5
    r[RH_TN] = n + 1
    if n + 1 + REC_MARGIN >= r[RH_TCAP]:
        r[RH_FULL] = 1
    return r[RH_FULL] != 0


@njit(cache=True)
def rec_unpark(ctx):
    """The task just recorded parked (a wait not yet satisfied): forget its row."""
    r = _rec(ctx)
    if r[RH_LASTDROP] != 0:
        r[RH_LASTDROP] = 0
        r[RH_DROP] -= 1
    elif r[RH_TN] > 0:
        r[RH_TN] -= 1


@njit(cache=True)
def rec_val(ctx, val):
    """The value column of the current task row (a cond task's branch)."""
    r = _rec(ctx)
    if r[RH_LASTDROP] == 0 and r[RH_TN] > 0:
        r[r[RH_TOFF] + TASK_COLS * (r[RH_TN] - 1) + 5] = val


@njit(cache=True, forceinline=True)
def _atk(mem, ctx, addr, n, size, kind):
    """The one compiled body behind every view (``kind``: ACC_*, 0 not recorded). The views
    pass int64 arguments whatever the kernel passed (literal counts, uint32 addresses ...), so
    numba types and lowers it once for all kernels instead of once per argument type or
    literal. LLVM inlines it (and ``check``) at each view (``forceinline``): a kernel's views
    are then a few loads and compares each, not two calls (CountDown's three views: 56 -> 13 ns
    a call, bench/test_cond.py's WHILE)."""
    off = check(ctx, addr, n * size)
    if off < 0:
        return mem.ctypes.data + ctx[C_SINK_OFF], min(max(n, 0), ctx[C_SINK_SIZE] // size)
    if ctx[C_REC] != 0 and kind != 0:
        rec_access(ctx, addr, n * size, kind)
    return mem.ctypes.data + off, n


@njit(cache=True, inline="always")
def _at(mem, ctx, addr, n, size):
    """(host address, element count) of a checked range: the range itself, or the sink (with
    as many elements as fit in it) when the range faulted. Recorded as read+write."""
    return _atk(mem, ctx, np.int64(addr), np.int64(n), np.int64(size), ACC_RW)


@njit(cache=True, inline="always")
def _at_r(mem, ctx, addr, n, size):
    """``_at`` for a range the kernel only reads (recorded as a read)."""
    return _atk(mem, ctx, np.int64(addr), np.int64(n), np.int64(size), ACC_R)


@njit(cache=True, inline="always")
def u8(mem, ctx, addr, n):
    p, m = _at(mem, ctx, addr, n, 1)
    return view_at(p, m, np.uint8)


@njit(cache=True, inline="always")
def u16(mem, ctx, addr, n):
    """fp16 data is viewed as uint16 and converted with ``npusim.device.half``."""
    p, m = _at(mem, ctx, addr, n, 2)
    return view_at(p, m, np.uint16)


@njit(cache=True, inline="always")
def u32(mem, ctx, addr, n):
    p, m = _at(mem, ctx, addr, n, 4)
    return view_at(p, m, np.uint32)


@njit(cache=True, inline="always")
def i32(mem, ctx, addr, n):
    p, m = _at(mem, ctx, addr, n, 4)
    return view_at(p, m, np.int32)


@njit(cache=True, inline="always")
def f32(mem, ctx, addr, n):
    p, m = _at(mem, ctx, addr, n, 4)
    return view_at(p, m, np.float32)


@njit(cache=True, inline="always")
def i64(mem, ctx, addr, n):
    p, m = _at(mem, ctx, addr, n, 8)
    return view_at(p, m, np.int64)


@njit(cache=True, inline="always")
def u64(mem, ctx, addr, n):
    p, m = _at(mem, ctx, addr, n, 8)
    return view_at(p, m, np.uint64)


# read-only views: the same data, recorded as reads (declare a kernel's inputs with them)
@njit(cache=True, inline="always")
def r_u8(mem, ctx, addr, n):
    p, m = _at_r(mem, ctx, addr, n, 1)
    return view_at(p, m, np.uint8)


@njit(cache=True, inline="always")
def r_u16(mem, ctx, addr, n):
    p, m = _at_r(mem, ctx, addr, n, 2)
    return view_at(p, m, np.uint16)


@njit(cache=True, inline="always")
def r_u32(mem, ctx, addr, n):
    p, m = _at_r(mem, ctx, addr, n, 4)
    return view_at(p, m, np.uint32)


@njit(cache=True, inline="always")
def r_i32(mem, ctx, addr, n):
    p, m = _at_r(mem, ctx, addr, n, 4)
    return view_at(p, m, np.int32)


@njit(cache=True, inline="always")
def r_f32(mem, ctx, addr, n):
    p, m = _at_r(mem, ctx, addr, n, 4)
    return view_at(p, m, np.float32)


@njit(cache=True, inline="always")
def r_i64(mem, ctx, addr, n):
    p, m = _at_r(mem, ctx, addr, n, 8)
    return view_at(p, m, np.int64)


@njit(cache=True, inline="always")
def r_u64(mem, ctx, addr, n):
    p, m = _at_r(mem, ctx, addr, n, 8)
    return view_at(p, m, np.uint64)


@njit(cache=True, inline="always")
def args(mem, ctx, addr, n):
    """The first ``n`` 8-byte slots of an args area, as int64 (pointers and integers); not
    recorded (the args area belongs to the launch, not to the program's data)."""
    p, m = _atk(mem, ctx, np.int64(addr), np.int64(n), np.int64(8), np.int64(0))
    return view_at(p, m, np.int64)


@njit(cache=True, inline="always")
def slot_u32(slots, i):
    """A u32 argument: the low 4 bytes of slot ``i``."""
    return np.uint32(slots[i] & 0xFFFFFFFF)


@njit(cache=True, inline="always")
def slot_f32(slots, i):
    """A float argument: the low 4 bytes of slot ``i``."""
    return np.array([np.uint32(slots[i] & 0xFFFFFFFF)], np.uint32).view(np.float32)[0]
