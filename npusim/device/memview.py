"""Bounds-checked views of simulated memory, for kernel bodies (numba, nopython).

A kernel never indexes the arena with a raw address. It asks for a typed view of ``n`` elements at
a device address; the view is handed out only when the whole range lies inside one live
allocation. Otherwise the first fault is recorded in the context array and the kernel gets a view
of the *sink* (a scratch region past the addressable arena), so the kernel finishes harmlessly and
the engine reports a kernel exception for the task — never a crash of the Python process.

Arguments are read the way a real kernel reads them: from 8-byte slots of the args area in device
memory (pointers and integers little-endian, a float in the low 4 bytes; ``spec/kernel.md`` §5.2).
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import carray, njit, types
from numba.extending import intrinsic

from .memory import (C_ALLOC, C_DEV_BASE, C_DEV_SIZE, C_FAULT, C_FAULT_ADDR, C_FAULT_SIZE,
                     C_HOST_BASE, C_HOST_OFF, C_HOST_SIZE, C_NALLOC, C_SINK_OFF, C_SINK_SIZE,
                     FAULT_OUT_OF_BOUNDS, FAULT_UNMAPPED)


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


@njit(cache=True, inline="always")
def check(ctx, addr, nbytes):
    """Arena offset of ``[addr, addr+nbytes)`` if it lies in one live allocation, else -1.

    The first failure of a kernel is recorded in ``ctx[C_FAULT..C_FAULT_SIZE]``.
    """
    off = to_off(ctx, addr)
    if off < 0 or nbytes < 0:
        if ctx[C_FAULT] == 0:
            ctx[C_FAULT], ctx[C_FAULT_ADDR], ctx[C_FAULT_SIZE] = FAULT_UNMAPPED, addr, nbytes
        return -1
    lo, hi = 0, ctx[C_NALLOC]          # binary search: last allocation with start <= off
    while lo < hi:
        mid = (lo + hi) // 2
        if ctx[C_ALLOC + 2 * mid] <= off:
            lo = mid + 1
        else:
            hi = mid
    i = lo - 1
    if i < 0 or off + nbytes > ctx[C_ALLOC + 2 * i + 1]:
        if ctx[C_FAULT] == 0:
            ctx[C_FAULT], ctx[C_FAULT_ADDR], ctx[C_FAULT_SIZE] = FAULT_OUT_OF_BOUNDS, addr, nbytes
        return -1
    return off


@intrinsic
def _voidptr(typingctx, addr):
    """An integer address as a ``void*`` (for ``numba.carray``)."""
    def codegen(context, builder, signature, llargs):
        return builder.inttoptr(llargs[0], ir.IntType(8).as_pointer())
    return types.voidptr(types.intp), codegen


@njit(cache=True, inline="always")
def _at(mem, ctx, addr, n, size):
    """(host pointer, element count) of a checked range: the range itself, or the sink (with
    as many elements as fit in it) when the range faulted."""
    off = check(ctx, addr, n * size)
    if off < 0:
        return (_voidptr(mem.ctypes.data + ctx[C_SINK_OFF]),
                min(max(n, 0), ctx[C_SINK_SIZE] // size))
    return _voidptr(mem.ctypes.data + off), n


@njit(cache=True, inline="always")
def u8(mem, ctx, addr, n):
    p, m = _at(mem, ctx, addr, n, 1)
    return carray(p, m, np.uint8)


@njit(cache=True, inline="always")
def u16(mem, ctx, addr, n):
    """fp16 data is viewed as uint16 and converted with ``npusim.device.half``."""
    p, m = _at(mem, ctx, addr, n, 2)
    return carray(p, m, np.uint16)


@njit(cache=True, inline="always")
def u32(mem, ctx, addr, n):
    p, m = _at(mem, ctx, addr, n, 4)
    return carray(p, m, np.uint32)


@njit(cache=True, inline="always")
def i32(mem, ctx, addr, n):
    p, m = _at(mem, ctx, addr, n, 4)
    return carray(p, m, np.int32)


@njit(cache=True, inline="always")
def f32(mem, ctx, addr, n):
    p, m = _at(mem, ctx, addr, n, 4)
    return carray(p, m, np.float32)


@njit(cache=True, inline="always")
def i64(mem, ctx, addr, n):
    p, m = _at(mem, ctx, addr, n, 8)
    return carray(p, m, np.int64)


@njit(cache=True, inline="always")
def u64(mem, ctx, addr, n):
    p, m = _at(mem, ctx, addr, n, 8)
    return carray(p, m, np.uint64)


@njit(cache=True, inline="always")
def args(mem, ctx, addr, n):
    """The first ``n`` 8-byte slots of an args area, as int64 (pointers and integers)."""
    return i64(mem, ctx, addr, n)


@njit(cache=True, inline="always")
def slot_u32(slots, i):
    """A u32 argument: the low 4 bytes of slot ``i``."""
    return np.uint32(slots[i] & 0xFFFFFFFF)


@njit(cache=True, inline="always")
def slot_f32(slots, i):
    """A float argument: the low 4 bytes of slot ``i``."""
    return np.array([np.uint32(slots[i] & 0xFFFFFFFF)], np.uint32).view(np.float32)[0]
