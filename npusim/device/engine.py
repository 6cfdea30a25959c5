"""The device engine: one jitted loop that runs every SQ of a device in simulated time.

State lives in plain arrays owned by ``npusim.device.state.DeviceState``:

* ``pool``  — the SQE pool (``SQE_DTYPE`` rows). SQ ``q`` owns rows ``[base, base+depth)`` used as a
  ring: position ``p`` is row ``base + p % depth``. Eager streams keep appending (head and tail only
  grow); a model stream is replayed by resetting its head to 0 when it is activated.
* ``sqs``   — int64 ``[n, Q_COLS]``: per SQ ring bounds, clock, state, what it waits on, its first
  fault. The clock ``Q_TIME`` is the simulated time (ns) at which the SQ is free again.
* ``sync``  — int64 ``[n, 3]``: event/notify slots (value, time set, number of parked waiters).
* ``models``— CSR arrays (``mptr``, ``msq``): the head SQs that MODEL_EXECUTE activates.
* ``ctx``/``mem`` — the memory context and arena (``memory.py``); kernels get both.
* ``trace`` — optional preallocated trace rows.

Scheduling is exact in simulated time: the runnable SQ with the earliest next start runs, and it
keeps running while it stays no later than the second earliest (so a single stream runs in a tight
loop). A wait that is not satisfied parks its SQ; the record that satisfies it un-parks it, and
its clock jumps to the record's time. When nothing can run but something is parked, that is a
deadlock: the engine returns ``R_DEADLOCK`` and the host explains it.

The engine never decides API errors; it reports device faults (kernel exception, bad address) by
returning ``R_FAULT`` with the SQ and position, and the host maps them to ACL codes.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from . import sqe as S
from .kernels import UNIT_AIC, UNIT_AICPU, UNIT_AIV, UNIT_DMA, UNIT_SCALAR, call_kernel
from .memory import C_FAULT, C_FAULT_ADDR, C_FAULT_SIZE, C_REC
from .memview import ACC_R, ACC_W, rec_access, rec_task, rec_unpark, rec_val, to_off
from .timing import (T_AIC_CORES, T_AICPU_CORES, T_AIV_CORES, T_BW_H2H, T_KERNEL_DEFAULT,
                     T_KERNEL_PER_BLOCK, T_MEMSET_BW, T_WAKEUP)

# ---- SQ table columns ----
Q_BASE, Q_DEPTH, Q_HEAD, Q_TAIL, Q_TIME, Q_STATE = 0, 1, 2, 3, 4, 5
Q_WAIT = 6          # sync slot it is parked on, or -2 for a memory wait, -1 none
Q_WAIT_SINCE = 7    # simulated time the parked wait began (for the trace)
Q_ERR = 8           # first device fault on this SQ (F_* below), 0 none
Q_ERR_POS = 9       # position of that fault
Q_STOP_ON_FAIL = 10 # 1: skip the SQ's later tasks after a fault (ACL_STOP_ON_FAILURE)
Q_DISPATCH = 11     # per-SQE dispatch cost in ns (eager and model SQs differ)
Q_KIND = 12         # K_EAGER or K_MODEL
Q_DONE = 13         # SQEs executed (statistics)
Q_COLS = 16

# SQ states
S_FREE, S_IDLE, S_ACTIVE, S_PARKED = 0, 1, 2, 3
# SQ kinds
K_EAGER, K_MODEL = 0, 1

# sync slot columns
Y_VAL, Y_TIME, Y_WAITERS = 0, 1, 2

# device fault kinds (the host maps them to ACL codes)
F_NONE, F_KERNEL_TRAP, F_KERNEL_OOB, F_BAD_ADDRESS, F_BAD_OP, F_RUNAWAY = 0, 1, 2, 3, 4, 5

# cond table columns (one row per cond handle; its sub-models' engine ids are in ``cmodels``)
K_ADDR, K_TYPE, K_N, K_MBASE, K_ITER, K_INLOOP, K_MAX, K_LAST, K_TAKEN = range(9)
K_COLS = 10
COND_IF, COND_WHILE, COND_SWITCH = 0, 1, 2

# engine state array
E_STATUS, E_SQ, E_POS, E_INFO, E_INFO2 = 0, 1, 2, 3, 4
E_TRACE_ON, E_TRACE_N, E_STEPS, E_NOW, E_NSQ = 5, 6, 7, 8, 9
E_STOP_KIND, E_STOP_A, E_STOP_B, E_HORIZON, E_MEM_WAITERS, E_FKIND = 10, 11, 12, 13, 14, 15
E_STEP_LIMIT = 16   # stop (R_STEPS) once E_STEPS reaches it; 0 = no limit (progress reports)
E_COLS = 24

# return codes
R_IDLE, R_HORIZON, R_STOPPED, R_DEADLOCK, R_FAULT, R_TRACE_FULL, R_STEPS = 0, 1, 2, 3, 4, 5, 6
# stop conditions
STOP_NONE, STOP_SQ_POS, STOP_SLOT = 0, 1, 2

INF = np.int64(2 ** 62)

TRACE_DTYPE = np.dtype([("sq", np.int32), ("op", np.uint8), ("unit", np.uint8),
                        ("blocks", np.uint16), ("task_id", np.uint32), ("pos", np.int32),
                        ("start", np.int64), ("end", np.int64), ("a0", np.int64),
                        ("val", np.int64)])   # cond tasks: the branch taken (-1 skip); value

_OP_UNIT = np.array([UNIT_SCALAR] * S.N_OPCODES, np.uint8)
_OP_UNIT[S.OP_MEMCPY] = UNIT_DMA
_OP_UNIT[S.OP_MEMSET] = UNIT_DMA


@njit(cache=True, inline="always")
def _wake(sqs, nsq, slot):
    """Un-park every SQ parked on ``slot`` (they re-check their wait when they next run)."""
    for i in range(nsq):
        if sqs[i, Q_STATE] == S_PARKED and sqs[i, Q_WAIT] == slot:
            sqs[i, Q_STATE] = S_ACTIVE


@njit(cache=True, inline="always")
def _set_slot(sqs, sync, st, slot, value, t):
    """Record ``value`` into a sync slot at time ``t``; True when parked waiters were woken
    (the running SQ must then yield, so the woken ones run in time order)."""
    if value > sync[slot, Y_VAL]:
        sync[slot, Y_VAL] = value
    sync[slot, Y_TIME] = t
    if sync[slot, Y_WAITERS] > 0:
        sync[slot, Y_WAITERS] = 0
        _wake(sqs, st[E_NSQ], slot)
        return True
    return False


@njit(cache=True, inline="always")
def _wake_mem_waiters(sqs, st):
    if st[E_MEM_WAITERS] > 0:
        st[E_MEM_WAITERS] = 0
        _wake(sqs, st[E_NSQ], -2)
        return True
    return False


@njit(cache=True, inline="always")
def _activate(sqs, mptr, msq, m, t):
    """Start every head SQ of engine model ``m`` at time ``t`` (head back to 0)."""
    for j in range(mptr[m], mptr[m + 1]):
        a = msq[j]
        sqs[a, Q_HEAD] = 0
        sqs[a, Q_STATE] = S_ACTIVE
        if sqs[a, Q_TIME] < t:
            sqs[a, Q_TIME] = t


@njit(cache=True, inline="always")
def _cond_branch(typ, n, v):
    """The sub-model a cond task launches for word ``v``, -1 to skip (§8.5): IF takes 0 on
    non-zero, 1 (if it has two) on zero; WHILE takes 0 on non-zero; SWITCH takes v when
    0 <= v < n, compared signed."""
    if typ == COND_IF:
        if v != 0:
            return 0
        return 1 if n == 2 else -1
    if typ == COND_WHILE:
        return 0 if v != 0 else -1
    return v if 0 <= v < n else -1


@njit(cache=True, inline="always")
def _read_value(mem, off, width):
    if width == 1:
        return np.int64(mem[off])
    if width == 2:
        return np.int64(mem[off:off + 2].view(np.uint16)[0])
    if width == 4:
        return np.int64(mem[off:off + 4].view(np.uint32)[0])
    return mem[off:off + 8].view(np.int64)[0]


@njit(cache=True)
def _write_value(mem, off, width, value):
    if width == 1:
        mem[off] = np.uint8(value & 0xFF)
    elif width == 2:
        mem[off:off + 2].view(np.uint16)[0] = np.uint16(value & 0xFFFF)
    elif width == 4:
        mem[off:off + 4].view(np.uint32)[0] = np.uint32(value & 0xFFFFFFFF)
    else:
        mem[off:off + 8].view(np.int64)[0] = value


@njit(cache=True, inline="always")
def _compare(cur, value, how):
    if how == S.WAIT_GEQ:
        return cur >= value
    if how == S.WAIT_EQ:
        return cur == value
    if how == S.WAIT_AND:
        return (cur & value) != 0
    return cur != value


@njit(cache=True)
def _range_ok(ctx, mem, addr, n):
    """Arena offset of an engine-side access (copies, value ops), -1 if outside the arena."""
    off = to_off(ctx, addr)
    if off < 0 or n < 0 or off + n > mem.size:
        return -1
    return off


@njit(cache=True, inline="always")
def _fault(sqs, st, q, pos, kind, info, info2):
    if sqs[q, Q_ERR] == 0:
        sqs[q, Q_ERR] = kind
        sqs[q, Q_ERR_POS] = pos
    st[E_SQ], st[E_POS], st[E_INFO], st[E_INFO2], st[E_FKIND] = q, pos, info, info2, kind


@njit(cache=True, inline="always")
def _pick(sqs, pool, nsq):
    """The runnable SQ with the earliest next start, that start, and the second earliest."""
    best, bt, second = -1, INF, INF
    for i in range(nsq):
        if sqs[i, Q_STATE] != S_ACTIVE:
            continue
        h = sqs[i, Q_HEAD]
        if h >= sqs[i, Q_TAIL]:
            continue
        t = sqs[i, Q_TIME]
        ts = pool[sqs[i, Q_BASE] + h % sqs[i, Q_DEPTH]].t_submit
        if ts > t:
            t = ts
        if t < bt:
            second = bt
            best, bt = i, t
        elif t < second:
            second = t
    return best, bt, second


@njit(cache=True)
def run(pool, sqs, sync, mptr, msq, conds, cmodels, mem, ctx, kaddr, kcost, tc, trace, st):
    """Run until idle, the horizon, the stop condition, a deadlock, a fault or a full trace.

    Returns (and stores in ``st[E_STATUS]``) one of the ``R_*`` codes.
    """
    nsq = st[E_NSQ]
    horizon = st[E_HORIZON]
    stop_kind, stop_a, stop_b = st[E_STOP_KIND], st[E_STOP_A], st[E_STOP_B]
    trace_on = st[E_TRACE_ON]
    tcap = trace.shape[0]
    memp = mem.ctypes
    msize = mem.size
    ctxp = ctx.ctypes
    rec_on = ctx[C_REC] != 0        # access recording (npusim.analysis): task rows, operands
    while True:
        if st[E_STEP_LIMIT] != 0 and st[E_STEPS] >= st[E_STEP_LIMIT]:
            st[E_STATUS] = R_STEPS
            return R_STEPS
        # stop conditions that may already hold
        if stop_kind == STOP_SQ_POS and sqs[stop_a, Q_HEAD] >= stop_b:
            st[E_STATUS] = R_STOPPED
            return R_STOPPED
        if stop_kind == STOP_SLOT and sync[stop_a, Y_VAL] >= stop_b:
            st[E_STATUS] = R_STOPPED
            return R_STOPPED
        q, t0, limit = _pick(sqs, pool, nsq)
        if q < 0:
            st[E_SQ] = -1
            for i in range(nsq):
                if sqs[i, Q_STATE] == S_PARKED:
                    st[E_SQ] = i
                    st[E_STATUS] = R_DEADLOCK
                    return R_DEADLOCK
            st[E_STATUS] = R_IDLE
            return R_IDLE
        if t0 > horizon:
            st[E_STATUS] = R_HORIZON
            return R_HORIZON
        if limit > horizon:
            limit = horizon
        base, depth = sqs[q, Q_BASE], sqs[q, Q_DEPTH]
        dispatch = sqs[q, Q_DISPATCH]
        first = True
        while sqs[q, Q_HEAD] < sqs[q, Q_TAIL]:
            pos = sqs[q, Q_HEAD]
            e = pool[base + pos % depth]
            start = sqs[q, Q_TIME]
            if e.t_submit > start:
                start = e.t_submit
            if start > limit and not first:
                break
            first = False
            op = e.op
            if op >= S.N_OPCODES:           # before any per-opcode table is indexed
                _fault(sqs, st, q, pos, F_BAD_OP, op, 0)
                sqs[q, Q_HEAD] = pos + 1
                st[E_STATUS] = R_FAULT
                return R_FAULT
            dur = dispatch + tc[op]
            unit = np.int64(_OP_UNIT[op])
            trace_start = start
            nxt = pos + 1
            woke = False
            val = np.int64(0)
            skip = sqs[q, Q_ERR] != 0 and sqs[q, Q_STOP_ON_FAIL] != 0
            if rec_on:                  # nearly full log: stop after this SQE (R_STEPS), grow
                if rec_task(ctx, q, pos, S.OP_NOP if skip else op, e.a0, e.a1, e.a4, e.a5):
                    st[E_STEP_LIMIT] = st[E_STEPS] + 1
            if skip:
                dur = 0
            elif op == S.OP_NOP:
                pass
            elif op == S.OP_KERNEL:
                k = e.a0
                nb = np.int64(e.blocks)
                unit = kcost[k, 2]
                cores = tc[T_AIV_CORES]
                if unit == UNIT_AIC:
                    cores = tc[T_AIC_CORES]
                elif unit == UNIT_AICPU:
                    cores = tc[T_AICPU_CORES]
                if e.a3 > 0:
                    dur += e.a3
                else:
                    waves = (nb + cores - 1) // cores
                    if waves < 1:
                        waves = 1
                    body = kcost[k, 0] if kcost[k, 0] > 0 else tc[T_KERNEL_DEFAULT]
                    dur += waves * body + nb * tc[T_KERNEL_PER_BLOCK]
                ctx[C_FAULT] = 0
                addr = kaddr[k]
                for b in range(nb):
                    rc = call_kernel(addr, memp, msize, ctxp, e.a1, b, nb)
                    if rc != 0 or ctx[C_FAULT] != 0:
                        if ctx[C_FAULT] != 0:
                            _fault(sqs, st, q, pos, F_KERNEL_OOB, ctx[C_FAULT_ADDR],
                                   ctx[C_FAULT_SIZE])
                        else:
                            _fault(sqs, st, q, pos, F_KERNEL_TRAP, k, rc)
                        ctx[C_FAULT] = 0
                        sqs[q, Q_TIME] = start + dur
                        sqs[q, Q_HEAD] = pos + 1
                        st[E_STATUS] = R_FAULT
                        return R_FAULT
                woke = _wake_mem_waiters(sqs, st)
            elif op == S.OP_MEMCPY:
                n = e.a2
                d = _range_ok(ctx, mem, e.a0, n)
                s = _range_ok(ctx, mem, e.a1, n)
                if d < 0 or s < 0:
                    _fault(sqs, st, q, pos, F_BAD_ADDRESS, e.a0 if d < 0 else e.a1, n)
                    sqs[q, Q_HEAD] = pos + 1
                    st[E_STATUS] = R_FAULT
                    return R_FAULT
                if rec_on:
                    rec_access(ctx, e.a1, n, ACC_R)
                    rec_access(ctx, e.a0, n, ACC_W)
                if d != s and n > 0:
                    if d < s + n and s < d + n:
                        mem[d:d + n] = mem[s:s + n].copy()
                    else:
                        mem[d:d + n] = mem[s:s + n]
                dur += n // tc[T_BW_H2H + (e.flag & 3)]
                woke = _wake_mem_waiters(sqs, st)
            elif op == S.OP_MEMSET:
                n = e.a2
                d = _range_ok(ctx, mem, e.a0, n)
                if d < 0:
                    _fault(sqs, st, q, pos, F_BAD_ADDRESS, e.a0, n)
                    sqs[q, Q_HEAD] = pos + 1
                    st[E_STATUS] = R_FAULT
                    return R_FAULT
                if rec_on:
                    rec_access(ctx, e.a0, n, ACC_W)
                mem[d:d + n] = np.uint8(e.a1 & 0xFF)
                dur += n // tc[T_MEMSET_BW]
                woke = _wake_mem_waiters(sqs, st)
            elif op == S.OP_EVENT_RECORD or op == S.OP_NOTIFY_RECORD or op == S.OP_END_GRAPH:
                v = e.a1 if op == S.OP_EVENT_RECORD else 1
                woke = _set_slot(sqs, sync, st, e.a0, v, start + dur)
            elif op == S.OP_EVENT_RESET:
                sync[e.a0, Y_VAL] = 0
            elif op == S.OP_EVENT_WAIT or op == S.OP_NOTIFY_WAIT or op == S.OP_COND_NOTIFY_WAIT:
                slot = e.a0
                want = e.a1 if op == S.OP_EVENT_WAIT else 1
                if sync[slot, Y_VAL] < want:
                    if sqs[q, Q_WAIT] != slot:
                        sqs[q, Q_WAIT_SINCE] = start
                    sqs[q, Q_STATE] = S_PARKED
                    sqs[q, Q_WAIT] = slot
                    sync[slot, Y_WAITERS] += 1
                    sqs[q, Q_TIME] = start
                    if rec_on:
                        rec_unpark(ctx)
                    break
                if sqs[q, Q_WAIT] == slot:
                    trace_start = sqs[q, Q_WAIT_SINCE]
                    sqs[q, Q_WAIT] = -1
                    if sync[slot, Y_TIME] + tc[T_WAKEUP] > start:
                        start = sync[slot, Y_TIME] + tc[T_WAKEUP]
                elif sync[slot, Y_TIME] > start:
                    start = sync[slot, Y_TIME]
                if op != S.OP_EVENT_WAIT or (e.flag & S.WAIT_RESET) != 0:
                    sync[slot, Y_VAL] = 0
            elif op == S.OP_MEM_WRITE_VALUE:
                d = _range_ok(ctx, mem, e.a0, e.a2)
                if d < 0:
                    _fault(sqs, st, q, pos, F_BAD_ADDRESS, e.a0, e.a2)
                    sqs[q, Q_HEAD] = pos + 1
                    st[E_STATUS] = R_FAULT
                    return R_FAULT
                _write_value(mem, d, e.a2, e.a1)
                woke = _wake_mem_waiters(sqs, st)
            elif op == S.OP_MEM_WAIT_VALUE:
                d = _range_ok(ctx, mem, e.a0, e.a2)
                if d < 0:
                    _fault(sqs, st, q, pos, F_BAD_ADDRESS, e.a0, e.a2)
                    sqs[q, Q_HEAD] = pos + 1
                    st[E_STATUS] = R_FAULT
                    return R_FAULT
                if not _compare(_read_value(mem, d, e.a2), e.a1, e.flag):
                    if sqs[q, Q_WAIT] != -2:
                        sqs[q, Q_WAIT_SINCE] = start
                    sqs[q, Q_STATE] = S_PARKED
                    sqs[q, Q_WAIT] = -2
                    st[E_MEM_WAITERS] += 1
                    sqs[q, Q_TIME] = start
                    if rec_on:
                        rec_unpark(ctx)
                    break
                if sqs[q, Q_WAIT] == -2:
                    trace_start = sqs[q, Q_WAIT_SINCE]
                    sqs[q, Q_WAIT] = -1
                    start += tc[T_WAKEUP]
            elif op == S.OP_STREAM_ACTIVE:
                a = e.a0
                sqs[a, Q_HEAD] = 0
                sqs[a, Q_STATE] = S_ACTIVE
                if sqs[a, Q_TIME] < start + dur:
                    sqs[a, Q_TIME] = start + dur
            elif op == S.OP_MODEL_EXECUTE:
                _activate(sqs, mptr, msq, e.a0, start + dur)
            elif op == S.OP_COND_FIRST or op == S.OP_COND_JUMP_BACK:
                c = e.a0
                d = _range_ok(ctx, mem, conds[c, K_ADDR], 8)
                if d < 0:
                    _fault(sqs, st, q, pos, F_BAD_ADDRESS, conds[c, K_ADDR], 8)
                    sqs[q, Q_HEAD] = pos + 1
                    st[E_STATUS] = R_FAULT
                    return R_FAULT
                if rec_on:
                    rec_access(ctx, conds[c, K_ADDR], 8, ACC_R)
                val = mem[d:d + 8].view(np.int64)[0]
                conds[c, K_LAST] = val
                if op == S.OP_COND_FIRST:
                    if conds[c, K_INLOOP] == 0:
                        conds[c, K_ITER] = 0
                    conds[c, K_INLOOP] = 0
                    k = _cond_branch(conds[c, K_TYPE], conds[c, K_N], val)
                    conds[c, K_TAKEN] = k
                    if rec_on:
                        rec_val(ctx, k)
                    if k < 0:               # skip: past the NotifyWait (and JumpBack)
                        nxt = pos + (3 if conds[c, K_TYPE] == COND_WHILE else 2)
                    else:
                        _activate(sqs, mptr, msq, cmodels[conds[c, K_MBASE] + k], start + dur)
                    val = k
                elif val != 0:              # WHILE: run the body again
                    conds[c, K_ITER] += 1
                    if conds[c, K_ITER] >= conds[c, K_MAX]:
                        _fault(sqs, st, q, pos, F_RUNAWAY, c, val)
                        conds[c, K_INLOOP] = 0
                        sqs[q, Q_TIME] = start + dur
                        sqs[q, Q_HEAD] = pos + 1
                        st[E_STATUS] = R_FAULT
                        return R_FAULT
                    conds[c, K_INLOOP] = 1
                    nxt = pos - 2
            elif op == S.OP_SQE_UPDATE:
                pool[e.a1] = pool[e.a0]
            else:
                _fault(sqs, st, q, pos, F_BAD_OP, op, 0)
                sqs[q, Q_HEAD] = pos + 1
                st[E_STATUS] = R_FAULT
                return R_FAULT
            end = start + dur
            sqs[q, Q_TIME] = end
            sqs[q, Q_HEAD] = nxt
            sqs[q, Q_DONE] += 1
            st[E_STEPS] += 1
            if end > st[E_NOW]:
                st[E_NOW] = end
            if trace_on != 0:
                n = st[E_TRACE_N]
                if n < tcap:
                    r = trace[n]
                    r.sq, r.op, r.unit, r.blocks = q, op, unit, e.blocks
                    r.task_id, r.pos, r.start, r.end, r.a0 = e.task_id, pos, trace_start, end, e.a0
                    r.val = val
                st[E_TRACE_N] = n + 1
                if n + 1 >= tcap:
                    st[E_STATUS] = R_TRACE_FULL
                    return R_TRACE_FULL
            if stop_kind != STOP_NONE:
                if stop_kind == STOP_SQ_POS and q == stop_a and nxt >= stop_b:
                    break
                if stop_kind == STOP_SLOT and sync[stop_a, Y_VAL] >= stop_b:
                    break
            if sqs[q, Q_STATE] != S_ACTIVE or woke or st[E_STEPS] == st[E_STEP_LIMIT]:
                break
        if sqs[q, Q_HEAD] >= sqs[q, Q_TAIL] and sqs[q, Q_KIND] == K_MODEL \
                and sqs[q, Q_STATE] == S_ACTIVE:
            sqs[q, Q_STATE] = S_IDLE
