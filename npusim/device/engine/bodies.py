"""The rare opcodes' bodies (``B_*``): MEM_WRITE_VALUE, MEM_WAIT_VALUE, STREAM_ACTIVE, SQE_UPDATE,
STREAM_SWITCH, LABEL_SWITCH and the address modes of MEMCPY, each a cfunc built at its first use
in a process (``body``, ``provide``) and called by ``run`` through its address, as kernels are.
"""
from __future__ import annotations

import threading

import numpy as np
from numba import cfunc, njit

from .. import sqe as S
from ..memview import ACC_R, ACC_W, rec_access, view_at
from ..timing import T_BW_H2H, T_WAKEUP
from .layout import (E_BODY, E_COLS, E_FRAME, E_MEM_WAITERS, E_NEED, F_BAD_ADDRESS, F_CTX, F_DUR,
                     F_LABEL, F_LHEAD, F_MEM, F_NCTX, F_NLHEAD, F_NMEM, F_NPOOL, F_NSQS, F_NTC,
                     F_NTREE, F_NXT, F_POOL, F_POS, F_Q, F_REC, F_SCH, F_SQS, F_START, F_TC,
                     F_TREE, F_TSTART, F_VAL, F_X, INF, Q_BASE, Q_COLS, Q_DEPTH, Q_HEAD, Q_STATE,
                     Q_TAIL, Q_WAIT, Q_WAIT_SINCE, SCH_COLS, S_ACTIVE, T_LEAF, W_MEMORY, W_NONE,
                     X_DONE, X_FAULT, X_PARK, X_YIELD, _MEMCPY_KIND, _NB, _NW, _WORD)
from .sched import _fault, _head_row, _next_start, _park, _start_sq, _t_set, _wrote_memory
from .opcodes import _BODY_SIG, _compare, _move, _peek, _range_ok, _read_value, _write_value


@njit(cache=True)
def _op_memcpy_mode(e, sqs, pool, st, tree, sch, lhead, q, pos, dur, mem, ctx, tc, rec_on):
    """MEMCPY with an address mode, resolved when the task runs (so a graph replay reads the
    pointers and descriptors as they are then):

    * MEMCPY_PTR: dst = *(u64*)a0 + (a3 & 0xFFFFFFFF), src = *(u64*)a1 + (a3 >> 32), a2 bytes;
    * MEMCPY_DESC: the descriptor at a0 gives length (u32 at +12), src (+16) and dst (+24);
    * MEMCPY_2D: (a2 >> 32) rows of (a2 & 0xFFFFFFFF) bytes, src rows (a3 & 0xFFFFFFFF) apart
      and dst rows (a3 >> 32) apart (rows may overlap; each row is copied overlap-safe).

    A pointer word, descriptor or row outside the arena faults with F_BAD_ADDRESS; recorded
    accesses are the words read and the spans copied."""
    mode = e.flag & S.MEMCPY_MODES
    width, height, sp, dp = e.a2, np.int64(1), np.int64(0), np.int64(0)
    if mode == S.MEMCPY_2D:
        dst, src = e.a0, e.a1
        width, height = e.a2 & 0xFFFFFFFF, e.a2 >> 32
        sp, dp = e.a3 & 0xFFFFFFFF, e.a3 >> 32
    elif mode == S.MEMCPY_PTR:
        pd = _range_ok(ctx, mem, e.a0, _WORD)
        ps = _range_ok(ctx, mem, e.a1, _WORD)
        if pd < 0 or ps < 0:
            _fault(sqs, st, q, pos, F_BAD_ADDRESS, e.a0 if pd < 0 else e.a1, _WORD)
            return X_FAULT, dur
        if rec_on:
            rec_access(ctx, e.a0, _WORD, ACC_R)
            rec_access(ctx, e.a1, _WORD, ACC_R)
        dst = _read_value(mem, pd, 8) + (e.a3 & 0xFFFFFFFF)
        src = _read_value(mem, ps, 8) + (e.a3 >> 32)
    else:                                           # MEMCPY_DESC
        pd = _range_ok(ctx, mem, e.a0, S.MEMCPY_DESC_DST_AT + 8)
        if pd < 0:
            _fault(sqs, st, q, pos, F_BAD_ADDRESS, e.a0, S.MEMCPY_DESC_DST_AT + 8)
            return X_FAULT, dur
        if rec_on:
            rec_access(ctx, e.a0, S.MEMCPY_DESC_DST_AT + 8, ACC_R)
        width = _read_value(mem, pd + S.MEMCPY_DESC_LEN_AT, 4)
        src = _read_value(mem, pd + S.MEMCPY_DESC_SRC_AT, 8)
        dst = _read_value(mem, pd + S.MEMCPY_DESC_DST_AT, 8)
    span_d = (height - 1) * dp + width
    span_s = (height - 1) * sp + width
    d = _range_ok(ctx, mem, dst, span_d)
    s = _range_ok(ctx, mem, src, span_s)
    if d < 0 or s < 0:
        _fault(sqs, st, q, pos, F_BAD_ADDRESS, dst if d < 0 else src,
               span_d if d < 0 else span_s)
        return X_FAULT, dur
    if rec_on:
        rec_access(ctx, src, span_s, ACC_R)
        rec_access(ctx, dst, span_d, ACC_W)
    base = mem.ctypes.data
    for r in range(height):
        rd, rs = d + r * dp, s + r * sp
        if rd != rs and width > 0:
            _move(base + rd, base + rs, width)
    n = width * height
    return (_wrote_memory(sqs, pool, st, tree, sch, lhead),
            dur + n // tc[T_BW_H2H + (e.flag & _MEMCPY_KIND)])


@njit(cache=True)
def _op_mem_write_value(e, sqs, pool, st, tree, sch, lhead, q, pos, mem, ctx):
    """MEM_WRITE_VALUE: the low a2 bytes of a1 to address a0."""
    d = _range_ok(ctx, mem, e.a0, e.a2)
    if d < 0:
        _fault(sqs, st, q, pos, F_BAD_ADDRESS, e.a0, e.a2)
        return X_FAULT
    _write_value(mem, d, e.a2, e.a1)
    return _wrote_memory(sqs, pool, st, tree, sch, lhead)


@njit(cache=True)
def _op_mem_wait_value(e, sqs, st, sch, lhead, q, pos, start, mem, ctx, tc, rec_on):
    """MEM_WAIT_VALUE: park until the a2-byte value at a0 compares true with a1 (flag: the
    comparison); re-checked after every memory write, a wakeup after it."""
    d = _range_ok(ctx, mem, e.a0, e.a2)
    if d < 0:
        _fault(sqs, st, q, pos, F_BAD_ADDRESS, e.a0, e.a2)
        return X_FAULT, start, start
    if not _compare(_read_value(mem, d, e.a2), e.a1, e.flag):
        _park(sqs, ctx, sch, lhead, q, W_MEMORY, start, rec_on)
        st[E_MEM_WAITERS] += 1
        return X_PARK, start, start
    tstart = start
    if sqs[q, Q_WAIT] == W_MEMORY:
        tstart = sqs[q, Q_WAIT_SINCE]
        sqs[q, Q_WAIT] = W_NONE
        start += tc[T_WAKEUP]
    return X_DONE, start, tstart


@njit(cache=True)
def _op_stream_active(e, sqs, pool, tree, sch, lhead, q, end):
    """STREAM_ACTIVE: start SQ a0 from position 0 at the SQE's end (a cascade hop)."""
    _start_sq(sqs, pool, tree, sch, lhead, e.a0, end, q)


@njit(cache=True)
def _op_sqe_update(e, sqs, pool, tree, sch):
    """SQE_UPDATE: copy pool row a0 over pool row a1 (a task update, in stream order); a2 is the
    SQ whose ring holds a1. When the row is that SQ's head and the SQ is runnable, its start
    (t_submit) may have changed: re-key it (its own leaf, found in O(1))."""
    pool[e.a1] = pool[e.a0]
    a = e.a2
    if 0 <= a < sch.shape[0]:
        j = sch[a, T_LEAF]
        if j >= 0 and tree[_NB + _NW * (tree[0] + j)] < INF and _head_row(sqs, a) == e.a1:
            _t_set(tree, sch, a, _next_start(sqs, pool, sch, a), True)


@njit(cache=True)
def _op_stream_switch(e, sqs, pool, st, tree, sch, lhead, q, pos, end, mem, ctx, rec_on):
    """STREAM_SWITCH: compare the signed value at a0 with the one at a1 (4 bytes, 8 with
    SWITCH_INT64; the condition in the flag's low nibble: left OP right). True: start SQ a2 from
    position 0 at the SQE's end and stop this SQ (its later SQEs are skipped: next position its
    tail), as a taken switch leaves only the target stream running. Trace value 1 taken, 0 not.
    Returns (X_*, next position, trace value)."""
    w = 8 if (e.flag & S.SWITCH_INT64) != 0 else 4
    lo = _range_ok(ctx, mem, e.a0, w)
    ro = _range_ok(ctx, mem, e.a1, w)
    if lo < 0 or ro < 0:
        _fault(sqs, st, q, pos, F_BAD_ADDRESS, e.a0 if lo < 0 else e.a1, w)
        return X_FAULT, pos + 1, np.int64(0)
    if rec_on:
        rec_access(ctx, e.a0, w, ACC_R)
        rec_access(ctx, e.a1, w, ACC_R)
    base = mem.ctypes.data
    if w == 8:
        lv, rv = _peek(base + lo, np.int64), _peek(base + ro, np.int64)
    else:
        lv, rv = np.int64(_peek(base + lo, np.int32)), np.int64(_peek(base + ro, np.int32))
    c = e.flag & S.SWITCH_COND
    if c == S.SWITCH_EQ:
        taken = lv == rv
    elif c == S.SWITCH_NE:
        taken = lv != rv
    elif c == S.SWITCH_GT:
        taken = lv > rv
    elif c == S.SWITCH_GE:
        taken = lv >= rv
    elif c == S.SWITCH_LT:
        taken = lv < rv
    else:
        taken = lv <= rv
    if not taken:
        return X_DONE, pos + 1, np.int64(0)
    _start_sq(sqs, pool, tree, sch, lhead, e.a2, end, q)
    return X_YIELD, sqs[q, Q_TAIL], np.int64(1)     # an activation ends the turn


_IDX_BYTES, _SLOT_BYTES = np.int64(4), np.int64(16)   # LABEL_SWITCH's index word, a label's slot


@njit(cache=True)
def _op_label_switch(e, sqs, pool, st, tree, sch, lhead, q, pos, end, mem, ctx, rec_on):
    """LABEL_SWITCH (aclrtSwitchLabelByIndex): the uint32 index at a0, clamped to a1 - 1, picks
    slot index of the label list at a2 (a3 slots of 16 bytes: the label's SQ and position as two
    int64, -1 while the label is not set). The same SQ goes on at the label's position, which
    must lie ahead ([chosen] a backward jump, a loop the hardware would run until a timeout,
    is F_LABEL: npusim has no bound for it); another SQ starts there at the SQE's end and this
    one stops (its next position its tail), unless that SQ is running with work queued. An
    index with no label set, or that busy SQ: F_LABEL. Trace value: the index. Returns (X_*,
    next position, trace value)."""
    io = _range_ok(ctx, mem, e.a0, _IDX_BYTES)
    if io < 0:
        _fault(sqs, st, q, pos, F_BAD_ADDRESS, e.a0, _IDX_BYTES)
        return X_FAULT, pos + 1, np.int64(0)
    if rec_on:
        rec_access(ctx, e.a0, _IDX_BYTES, ACC_R)
    base = mem.ctypes.data
    idx = np.int64(_peek(base + io, np.uint32))
    if idx >= e.a1:
        idx = e.a1 - 1              # maxValue 0: -1, no label
    if idx < 0 or idx >= e.a3:
        _fault(sqs, st, q, pos, F_LABEL, idx, e.a3)
        return X_FAULT, pos + 1, idx
    so = _range_ok(ctx, mem, e.a2 + _SLOT_BYTES * idx, _SLOT_BYTES)
    if so < 0:
        _fault(sqs, st, q, pos, F_BAD_ADDRESS, e.a2 + _SLOT_BYTES * idx, _SLOT_BYTES)
        return X_FAULT, pos + 1, idx
    if rec_on:
        rec_access(ctx, e.a2 + _SLOT_BYTES * idx, _SLOT_BYTES, ACC_R)
    a, at = _peek(base + so, np.int64), _peek(base + so + 8, np.int64)
    if a < 0 or a >= sqs.shape[0] or at < 0 or at > sqs[a, Q_TAIL]:
        _fault(sqs, st, q, pos, F_LABEL, idx, a)
        return X_FAULT, pos + 1, idx
    if a == q:
        if at <= pos:
            _fault(sqs, st, q, pos, F_LABEL, idx, at)
            return X_FAULT, pos + 1, idx
        return X_DONE, at, idx
    if sqs[a, Q_STATE] == S_ACTIVE and sqs[a, Q_HEAD] < sqs[a, Q_TAIL]:
        _fault(sqs, st, q, pos, F_LABEL, idx, a)
        return X_FAULT, pos + 1, idx
    _start_sq(sqs, pool, tree, sch, lhead, a, end, q)
    sqs[a, Q_HEAD] = at             # it starts at the label, not at 0: re-keyed there
    _t_set(tree, sch, a, _next_start(sqs, pool, sch, a), True)
    return X_YIELD, sqs[q, Q_TAIL], idx     # an activation ends the turn


@njit(cache=True, inline="always")
def _frame(stp):
    """In a body: the SQE (its pool row), the engine's arrays and the SQE's operands from the
    frame (``_call_body``)."""
    st = view_at(stp, E_COLS, np.int64)
    f = E_FRAME
    pool = view_at(st[f + F_POOL], st[f + F_NPOOL], S.SQE_DTYPE)
    sqs = view_at(st[f + F_SQS], (st[f + F_NSQS], Q_COLS), np.int64)
    tree = view_at(st[f + F_TREE], st[f + F_NTREE], np.int64)
    sch = view_at(st[f + F_SCH], (st[f + F_NSQS], SCH_COLS), np.int64)
    lhead = view_at(st[f + F_LHEAD], st[f + F_NLHEAD], np.int64)
    mem = view_at(st[f + F_MEM], st[f + F_NMEM], np.uint8)
    ctx = view_at(st[f + F_CTX], st[f + F_NCTX], np.int64)
    tc = view_at(st[f + F_TC], st[f + F_NTC], np.int64)
    q, pos = st[f + F_Q], st[f + F_POS]
    return (pool[sqs[q, Q_BASE] + pos % sqs[q, Q_DEPTH]], pool, sqs, st, tree, sch, lhead, mem,
            ctx, tc, q, pos, st[f + F_START], st[f + F_DUR], st[f + F_REC] != 0)


@njit(cache=True, inline="always")
def _answer(st, x, start, dur, nxt, val, tstart):
    """In a body: _execute's results into the frame."""
    f = E_FRAME
    st[f + F_X], st[f + F_START], st[f + F_DUR] = x, start, dur
    st[f + F_NXT], st[f + F_VAL], st[f + F_TSTART] = nxt, val, tstart
    return 0


def _b_mem_write_value(stp):
    e, pool, sqs, st, tree, sch, lhead, mem, ctx, tc, q, pos, start, dur, rec_on = _frame(stp)
    x = _op_mem_write_value(e, sqs, pool, st, tree, sch, lhead, q, pos, mem, ctx)
    return _answer(st, x, start, dur, pos + 1, 0, start)


def _b_mem_wait_value(stp):
    e, pool, sqs, st, tree, sch, lhead, mem, ctx, tc, q, pos, start, dur, rec_on = _frame(stp)
    x, start, tstart = _op_mem_wait_value(e, sqs, st, sch, lhead, q, pos, start, mem, ctx, tc,
                                          rec_on)
    return _answer(st, x, start, dur, pos + 1, 0, tstart)


def _b_stream_active(stp):
    e, pool, sqs, st, tree, sch, lhead, mem, ctx, tc, q, pos, start, dur, rec_on = _frame(stp)
    _op_stream_active(e, sqs, pool, tree, sch, lhead, q, start + dur)
    return _answer(st, X_YIELD, start, dur, pos + 1, 0, start)     # an activation ends the turn


def _b_sqe_update(stp):
    e, pool, sqs, st, tree, sch, lhead, mem, ctx, tc, q, pos, start, dur, rec_on = _frame(stp)
    _op_sqe_update(e, sqs, pool, tree, sch)
    return _answer(st, X_YIELD, start, dur, pos + 1, 0, start)     # it may re-key an SQ


def _b_stream_switch(stp):
    e, pool, sqs, st, tree, sch, lhead, mem, ctx, tc, q, pos, start, dur, rec_on = _frame(stp)
    x, nxt, val = _op_stream_switch(e, sqs, pool, st, tree, sch, lhead, q, pos, start + dur, mem,
                                    ctx, rec_on)
    return _answer(st, x, start, dur, nxt, val, start)


def _b_label_switch(stp):
    e, pool, sqs, st, tree, sch, lhead, mem, ctx, tc, q, pos, start, dur, rec_on = _frame(stp)
    x, nxt, val = _op_label_switch(e, sqs, pool, st, tree, sch, lhead, q, pos, start + dur, mem,
                                   ctx, rec_on)
    return _answer(st, x, start, dur, nxt, val, start)


def _b_memcpy_mode(stp):
    e, pool, sqs, st, tree, sch, lhead, mem, ctx, tc, q, pos, start, dur, rec_on = _frame(stp)
    x, dur = _op_memcpy_mode(e, sqs, pool, st, tree, sch, lhead, q, pos, dur, mem, ctx, tc,
                             rec_on)
    return _answer(st, x, start, dur, pos + 1, 0, start)


_BODIES = (_b_mem_write_value, _b_mem_wait_value, _b_stream_active, _b_sqe_update,
           _b_stream_switch, _b_memcpy_mode, _b_label_switch)     # by B_*


_BUILT: dict = {}                   # B_* -> its cfunc, kept alive for its address
_BUILDING = threading.Lock()


def body(b: int):
    """The cfunc of body ``b`` (B_*), compiled once per process, or loaded from numba's disk
    cache (a few ms) by every process after the first. Built under a lock, so two threads that
    need it at once compile it once and every device holds the address of the one cfunc the
    process keeps (numba never unloads compiled code, so a second one would only be waste)."""
    f = _BUILT.get(b)
    if f is None:
        with _BUILDING:
            f = _BUILT.get(b)
            if f is None:
                f = _BUILT[b] = cfunc(_BODY_SIG, cache=True)(_BODIES[b])
    return f


def provide(st: np.ndarray) -> None:
    """After ``run`` returned R_NEED_BODY: build the body ``st[E_NEED]`` names and store its
    address in ``st``; calling ``run`` again runs on from the SQE that needed it."""
    b = int(st[E_NEED])
    st[E_BODY + b] = body(b).address
