"""The data mover of HCCL steps: a copy or an inline reduce over raw host addresses (layer 1).

One HCCL step moves bytes from one NPU's memory to another's, the SDMA engine reducing them into
the destination on the way for a ``Reduce_Inline`` step (spec/hccl.md §4). The lowering
(``npusim/hccl/lower.py``, through ``runtime/peer.py`` ``move``) launches the kernel body
:func:`hccl_move` (kernel-table name :data:`MOVE_BODY`, id :data:`MOVE_KID`, DMA unit) on the
stream of the step. Its args area (:data:`MOVE_ARGS` 8-byte slots) names each end by device id
and arena offset, found in ``device/peer.py``'s arena table when the task runs (a device that
was reset since traps: a kernel fault), then ``nbytes``, ``op`` and ``dtype``:
``op`` an HcclReduceOp or -1 for a plain copy (memmove semantics: the ranges may overlap),
``dtype`` an HcclDataType. The element rules (docs/fidelity.md row 388) are those of
``npusim.hccl.algo.reduce_np``, the numpy reference: integers wrap (two's complement); fp16 and
bf16 are widened to fp32, combined and rounded to nearest even at every step (as the runtime's
own SDMA reduce, ``runtime/api_reduce.py``, row 150); fp32 / fp64 in their own type; MAX / MIN
propagate a NaN like numpy's ``maximum`` / ``minimum``; a type without a reduction (INT128, the
8-bit floats) or an unknown op traps (a kernel exception).

The body checks each end against its arena, not against live allocations (the lowering checked
those at submit). While accesses are recorded it logs a read of the source and a write (a copy)
or an atomic reduce (``ACC_REDUCE``, an inline reduce) of the destination at their device
addresses (``device/peer.py`` ``record``), so the cross-device race detector sees every move.
Blocks split the bytes (element-aligned), so a launch on several blocks moves the same data.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..device import memview as V
from ..device import peer as P
from ..device.half import bf2f, f2bf, f2h, h2f
from ..device.kernels import KERNEL_TRAP, TABLE, UNIT_DMA, arena, compiled_body
from ..device.memory import C_REC as _C_REC
from ..device.memview import view_at
from . import types as T

MOVE_BODY = "__npusim_hccl_move"
MOVE_ARGS = 8
OP_COPY = -1

_SUM, _PROD, _MAX, _MIN = (T.HCCL_REDUCE_SUM, T.HCCL_REDUCE_PROD, T.HCCL_REDUCE_MAX,
                           T.HCCL_REDUCE_MIN)
_I8, _I16, _I32, _F16, _F32, _I64, _U64, _U8, _U16, _U32, _F64, _BF16 = (
    T.HCCL_DATA_TYPE_INT8, T.HCCL_DATA_TYPE_INT16, T.HCCL_DATA_TYPE_INT32,
    T.HCCL_DATA_TYPE_FP16, T.HCCL_DATA_TYPE_FP32, T.HCCL_DATA_TYPE_INT64,
    T.HCCL_DATA_TYPE_UINT64, T.HCCL_DATA_TYPE_UINT8, T.HCCL_DATA_TYPE_UINT16,
    T.HCCL_DATA_TYPE_UINT32, T.HCCL_DATA_TYPE_FP64, T.HCCL_DATA_TYPE_BFP16)

_SIZES = np.zeros(256, np.int64)
for _t, _s in T.DATA_TYPE_SIZE.items():
    _SIZES[_t] = _s


@njit(cache=True, inline="always")
def _op(op, a, b):
    if op == _SUM:
        return a + b
    if op == _PROD:
        return a * b
    if op == _MAX:
        if a != a:
            return a
        if b != b:
            return b
        return a if a >= b else b
    if a != a:
        return a
    if b != b:
        return b
    return a if a <= b else b


@njit(cache=True, inline="always")
def _loop(d, s, op):
    for i in range(d.size):
        d[i] = _op(op, d[i], s[i])


@njit(cache=True)
def move(dst, src, nbytes, op, dtype, b, nb):
    """Block ``b`` of ``nb`` of one step: ``dst = src`` (op -1, memmove) or ``dst = dst OP src``
    over ``nbytes`` at absolute host addresses. Returns 0, or 1 for a type / op it cannot
    reduce."""
    if nbytes <= 0:
        return 0
    es = np.int64(1) if op == OP_COPY else _SIZES[dtype & 255] if 0 <= dtype < 256 else 0
    if es == 0 or (op != OP_COPY and (op < 0 or op > _MIN)):
        return 1
    n = nbytes // es
    nb = max(nb, 1)
    lo, hi = n * b // nb, n * (b + 1) // nb
    if hi <= lo:
        return 0
    cnt = hi - lo
    if op == OP_COPY:
        d = view_at(dst + lo, cnt, np.uint8)
        s = view_at(src + lo, cnt, np.uint8)
        if dst > src and dst < src + nbytes:          # overlap, destination above: backwards
            for i in range(cnt - 1, -1, -1):
                d[i] = s[i]
        else:
            for i in range(cnt):
                d[i] = s[i]
        return 0
    off = lo * es
    if dtype == _F32:
        _loop(view_at(dst + off, cnt, np.float32), view_at(src + off, cnt, np.float32), op)
    elif dtype == _F64:
        _loop(view_at(dst + off, cnt, np.float64), view_at(src + off, cnt, np.float64), op)
    elif dtype == _F16:
        d = view_at(dst + off, cnt, np.uint16)
        s = view_at(src + off, cnt, np.uint16)
        for i in range(cnt):
            d[i] = f2h(np.float32(_op(op, h2f(d[i]), h2f(s[i]))))
    elif dtype == _BF16:
        d = view_at(dst + off, cnt, np.uint16)
        s = view_at(src + off, cnt, np.uint16)
        for i in range(cnt):
            d[i] = f2bf(np.float32(_op(op, bf2f(d[i]), bf2f(s[i]))))
    elif dtype == _I8:
        _loop(view_at(dst + off, cnt, np.int8), view_at(src + off, cnt, np.int8), op)
    elif dtype == _U8:
        _loop(view_at(dst + off, cnt, np.uint8), view_at(src + off, cnt, np.uint8), op)
    elif dtype == _I16:
        _loop(view_at(dst + off, cnt, np.int16), view_at(src + off, cnt, np.int16), op)
    elif dtype == _U16:
        _loop(view_at(dst + off, cnt, np.uint16), view_at(src + off, cnt, np.uint16), op)
    elif dtype == _I32:
        _loop(view_at(dst + off, cnt, np.int32), view_at(src + off, cnt, np.int32), op)
    elif dtype == _U32:
        _loop(view_at(dst + off, cnt, np.uint32), view_at(src + off, cnt, np.uint32), op)
    elif dtype == _I64:
        _loop(view_at(dst + off, cnt, np.int64), view_at(src + off, cnt, np.int64), op)
    elif dtype == _U64:
        _loop(view_at(dst + off, cnt, np.uint64), view_at(src + off, cnt, np.uint64), op)
    else:
        return 1
    return 0


def hccl_move(memp, msize, ctxp, args, b, nb):
    """The kernel body (``KERNEL_SIG``): args (dst device, dst arena offset, src device, src
    arena offset, nbytes, op, dtype, the address of ``device.peer.ARENAS``), the layout of
    ``runtime/peer.py`` ``move``: each side is looked up in the arena table when the task runs
    (a device that is gone traps instead of being read)."""
    mem, ctx = arena(memp, msize, ctxp)
    try:
        a = V.args(mem, ctx, args, MOVE_ARGS)
        n = a[4]
        table = view_at(a[7], P.MAX_DEVICES * P.A_COLS, np.int64)
        d = P.span(table, a[0], a[1], n)
        s = P.span(table, a[2], a[3], n)
        if d == 0 or s == 0:
            return KERNEL_TRAP
        if b == 0 and ctx[_C_REC] != 0:
            P.record(ctx, a[0], a[1], a[2], a[3], n,
                     V.ACC_W if a[5] == OP_COPY else P.ACC_REDUCE)
        if move(d, s, n, a[5], a[6], b, nb):
            return KERNEL_TRAP
        return 0
    except Exception:
        return KERNEL_TRAP


MOVE_KID = TABLE.register_lazy(MOVE_BODY, lambda: compiled_body(hccl_move), 0, unit=UNIT_DMA,
                               params=(("dst_dev", "i64"), ("dst_off", "i64"),
                                       ("src_dev", "i64"), ("src_off", "i64"),
                                       ("nbytes", "u64"), ("op", "i64"), ("dtype", "u64"),
                                       ("table", "u64")))
"""Kernel-table id of :func:`hccl_move` (compiled at its first use)."""
