"""The engine's loop: ``run``, over every SQ of a device in simulated time, and the steps of a
turn (stop conditions, retiring an SQE, trace rows).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import sqe as S
from ..kernels import KC_UNIT
from ..memory import C_REC
from ..memview import rec_task
from .layout import (B_MEMCPY_MODE, E_BODY, E_CONTEND, E_EXACT, E_HORIZON, E_NEED, E_NOW, E_NSQ,
                     E_RESUME, E_RESUME_LIMIT, E_STEPS, E_STEP_LIMIT, E_STOP_A, E_STOP_B,
                     E_STOP_KIND, E_TRACE_N, E_TRACE_ON, F_BAD_OP, F_NONE, INF, K_MODEL, Q_BASE,
                     Q_DEPTH, Q_DISPATCH, Q_DONE, Q_ERR, Q_EXACT, Q_HEAD, Q_KIND, Q_STATE,
                     Q_STOP_ON_FAIL, Q_TAIL, Q_TIME, R_GO, R_HORIZON, R_NEED_BODY, R_NONE, R_STEPS,
                     R_STOPPED, R_TRACE_FULL, SCH_COLS, STOP_NONE, STOP_SLOT, STOP_SQ_POS, S_ACTIVE,
                     S_IDLE, S_PARKED, T_LEAF, T_ROW, X_DONE, X_FAULT, X_PARK, X_YIELD, Y_VAL, _NB,
                     _NW, _OP_BODY, _OP_UNIT, _OP_PRIV, sched_layout)
from .sched import (_borrow, _build, _carve, _fault, _fault_exit, _finish, _next_start,
                    _prefetch_turn, _t_second, _t_set)
from .opcodes import _execute


@njit(cache=True, inline="always")
def _stop_holds(sqs, sync, st):
    """R_STEPS or R_STOPPED when the step limit or the stop condition holds, else R_GO."""
    if st[E_STEP_LIMIT] != 0 and st[E_STEPS] >= st[E_STEP_LIMIT]:
        return R_STEPS
    kind = st[E_STOP_KIND]
    if kind == STOP_SQ_POS and sqs[st[E_STOP_A], Q_HEAD] >= st[E_STOP_B]:
        return R_STOPPED
    if kind == STOP_SLOT and sync[st[E_STOP_A], Y_VAL] >= st[E_STOP_B]:
        return R_STOPPED
    return R_GO


@njit(cache=True, inline="always")
def _retire(sqs, st, q, nxt, end):
    """An SQE executed: the SQ is free at ``end`` and goes on at ``nxt``."""
    sqs[q, Q_TIME] = end
    sqs[q, Q_HEAD] = nxt
    sqs[q, Q_DONE] += 1
    st[E_STEPS] += 1
    if end > st[E_NOW]:
        st[E_NOW] = end


@njit(cache=True)
def _trace_row(trace, st, kcost, e, q, op, pos, ran, start, end, val):
    """Append the trace row of an executed SQE (``ran``: not skipped after a fault); True when
    the buffer is full (the host grows it)."""
    n = st[E_TRACE_N]
    cap = trace.shape[0]
    if n < cap:
        r = trace[n]
        r.sq, r.op, r.blocks, r.task_id, r.pos = q, op, e.blocks, e.task_id, pos
        r.unit = kcost[e.a0, KC_UNIT] if op == S.OP_KERNEL and ran else _OP_UNIT[op]
        r.start, r.end, r.a0, r.val = start, end, e.a0, val
    st[E_TRACE_N] = n + 1
    return n + 1 >= cap


@njit(cache=True, inline="always")
def _stop_after(sync, st, q, nxt):
    """The stop condition holds after SQ ``q`` moved to ``nxt`` (the SQ yields)."""
    kind = st[E_STOP_KIND]
    if kind == STOP_SQ_POS:
        return q == st[E_STOP_A] and nxt >= st[E_STOP_B]
    if kind == STOP_SLOT:
        return sync[st[E_STOP_A], Y_VAL] >= st[E_STOP_B]
    return False


# how an SQ's turn treats the limit (``_turn_ends``' ``mode``): bits
_M_AHEAD, _M_EXACT, _M_SKIP = 1, 2, 4   # may run ahead; Q_EXACT; its SQEs are skipped (a fault)


@njit(cache=True, inline="always")
def _mode(sqs, st, q, ran):
    """SQ ``q``'s ``_M_*`` bits (``ran``: its SQEs run, not skipped after a fault). Run-ahead: with
    contention and E_EXACT off, a model SQ in every run, an eager SQ in a run without a stop
    condition (a host wait for one SQ or slot returns at a time the host then acts from: an
    eager task past it may still read what the host writes next)."""
    ahead = st[E_CONTEND] == 0 and st[E_EXACT] == 0 and (
        st[E_STOP_KIND] == STOP_NONE or sqs[q, Q_KIND] == K_MODEL)
    return ((_M_AHEAD if ahead else 0) | (_M_EXACT if sqs[q, Q_EXACT] != 0 else 0)
            | (0 if ran else _M_SKIP))


@njit(cache=True, inline="always")
def _turn_ends(op, flag, start, limit, horizon, mode):
    """Whether the turn ends before an SQE (opcode ``op``, flag ``flag``, next start ``start``
    >= the turn's ``limit``; not the turn's first SQE); ``mode``: the SQ's ``_M_*`` bits. A
    private SQE (``_OP_PRIV``: its effects reach no other SQ but through memory; skipped after a
    fault: none) goes on at a tie, and when its SQ may run ahead past the limit, up to the
    horizon: it commutes with every other SQ's SQEs. A synchronization (every other SQE, and
    every SQE of a Q_EXACT SQ) at a tie ends the turn, so the SQs whose next starts tie are
    picked again, the lowest index first: the synchronizations run in (start, SQ) order whether
    SQs run ahead or not. ``run`` asks it outside the loop over a turn's SQEs: the loop stops
    at an SQE that starts at or past the limit, and goes on with it when this says so. So the
    loop of a stream alone is the one it was before run-ahead: the test of the limit and a
    break (with the call, or its values, in the loop, LLVM spills more of the loop's values:
    single stream 104-105 M SQE/s against 109-110 M without, same runs)."""
    if mode & _M_EXACT:
        return True
    if not (mode & _M_SKIP) and not (_OP_PRIV[op] and not (op == S.OP_MEMCPY and
                                                           flag & S.MEMCPY_MODES)):
        return True
    if start == limit:
        return False
    return not (mode & _M_AHEAD and start <= horizon)


@njit(cache=True)
def run(pool, sqs, sync, mptr, msq, conds, cmodels, mem, ctx, kaddr, kcost, tc, trace, st,
        sched):
    """Run until idle, the horizon, the stop condition, a deadlock, a fault, a full trace, the
    step limit or an SQE whose body is not built (R_NEED_BODY: ``provide``). Returns (and
    stores in ``st[E_STATUS]``) one of the ``R_*`` codes. ``sched``: the scheduler's
    structures, at rest (``sched_layout(len(sqs), len(sync))``)."""
    pool, sqs, sync, mptr, msq, conds, cmodels = (_borrow(pool), _borrow(sqs), _borrow(sync),
                                                  _borrow(mptr), _borrow(msq), _borrow(conds),
                                                  _borrow(cmodels))
    mem, ctx, kaddr, kcost, tc, trace, st = (_borrow(mem), _borrow(ctx), _borrow(kaddr),
                                             _borrow(kcost), _borrow(tc), _borrow(trace),
                                             _borrow(st))
    sched = _borrow(sched)
    rows = sqs.shape[0]
    o_sch, o_lhead, o_live, o_tree, words, capmax = sched_layout(rows, sync.shape[0])
    sch = _carve(sched, o_sch, (rows, SCH_COLS))
    lhead = _carve(sched, o_lhead, o_live - o_lhead)
    live = _carve(sched, o_live, o_tree - o_live)
    tree = _carve(sched, o_tree, words - o_tree)
    tree[1] = _NB + 2 * _NW * capmax    # the free-leaf stack
    _build(sqs, pool, sched, tree, sch, lhead, live, st[E_NSQ])
    horizon = st[E_HORIZON]
    trace_on = st[E_TRACE_ON] != 0
    memp, msize, ctxp = mem.ctypes, mem.size, ctx.ctypes
    rec_on = ctx[C_REC] != 0        # access recording (npusim.analysis): task rows, operands
    while True:
        r = _stop_holds(sqs, sync, st)
        if r != R_GO:
            return _finish(sqs, st, sched, tree, sch, lhead, live, r)
        top, q = tree[_NB + _NW], tree[_NB + _NW + 1]
        if top == INF:
            return _finish(sqs, st, sched, tree, sch, lhead, live, R_NONE)
        if top > horizon:
            return _finish(sqs, st, sched, tree, sch, lhead, live, R_HORIZON)
        # the top SQ runs (it keeps its leaf, re-keyed when it stops) while its next start
        # stays no later than the second earliest
        limit = _t_second(tree)
        if limit > horizon:
            limit = horizon
        if st[E_RESUME] != 0:       # the turn R_NEED_BODY broke off goes on: the same picks
            a = st[E_RESUME] - 1    # as if it had not returned (a tie keeps the turn's SQ;
            st[E_RESUME] = 0        # SQs it started since may be earlier, as in that turn)
            j = sch[a, T_LEAF] if 0 <= a < rows else -1
            r_limit = min(st[E_RESUME_LIMIT], horizon)
            if j >= 0 and tree[_NB + _NW * (tree[0] + j)] <= r_limit:   # else stale
                q, limit = a, r_limit
        # run SQ q while its next start stays no later than ``limit`` (always at least once)
        # (within a turn only this loop moves q's head and clock, and a fault ends the run, so
        # they, its row and whether its SQEs run are kept in locals)
        base, depth, dispatch = sqs[q, Q_BASE], sqs[q, Q_DEPTH], sqs[q, Q_DISPATCH]
        pos, tail, now = sqs[q, Q_HEAD], sqs[q, Q_TAIL], sqs[q, Q_TIME]
        ran = sqs[q, Q_ERR] == 0 or sqs[q, Q_STOP_ON_FAIL] == 0
        row = sch[q, T_ROW]
        first = True
        later = -1                  # q's next start when it stopped for a later one (its key)
        need = -1                   # the body it stopped for (R_NEED_BODY), -1 none
        while True:                 # the turn: re-entered when it goes on past its limit
            while pos < tail:
                e = pool[row]
                start = max(now, e.t_submit)
                if start >= limit and not first:
                    later = start
                    break
                first = False
                op = e.op
                b = _OP_BODY[op]
                if b < -1:                  # a MEMCPY, or not an opcode
                    if b == -2:             # before any per-opcode table is indexed
                        _fault(sqs, st, q, pos, F_BAD_OP, np.int64(op), F_NONE)
                        return _finish(sqs, st, sched, tree, sch, lhead, live,
                                       _fault_exit(sqs, q, pos, start + dispatch))
                    b = B_MEMCPY_MODE if e.flag & S.MEMCPY_MODES else -1
                if b >= 0 and ran and st[E_BODY + b] == 0:
                    need, later = b, start  # stop before it: the host builds the body
                    break
                if rec_on:                  # nearly full log: stop after this SQE (R_STEPS), grow
                    if rec_task(ctx, q, pos, op if ran else S.OP_NOP, e.a0, e.a1, e.a4, e.a5):
                        st[E_STEP_LIMIT] = st[E_STEPS] + 1
                if ran:
                    x, start, dur, nxt, val, tstart = _execute(
                        e, op, b, q, pos, start, dispatch + tc[op], pool, sqs, sync, mptr, msq,
                        conds, cmodels, mem, ctx, kaddr, kcost, tc, st, tree, sch, lhead, memp,
                        msize, ctxp, rec_on)
                    if x == X_PARK:
                        break
                    if x == X_FAULT:
                        return _finish(sqs, st, sched, tree, sch, lhead, live,
                                       _fault_exit(sqs, q, pos, start + dur))
                else:                       # skipped after a fault (ACL_STOP_ON_FAILURE)
                    x, dur, nxt, val, tstart = X_DONE, np.int64(0), pos + 1, np.int64(0), start
                now = start + dur
                _retire(sqs, st, q, nxt, now)
                if trace_on and _trace_row(trace, st, kcost, e, q, op, pos, ran, tstart, now, val):
                    return _finish(sqs, st, sched, tree, sch, lhead, live, R_TRACE_FULL)
                if x == X_YIELD or sqs[q, Q_STATE] != S_ACTIVE or st[E_STEPS] == st[E_STEP_LIMIT] \
                        or _stop_after(sync, st, q, nxt):
                    break
                if nxt == pos + 1:          # the next row without a division
                    row += 1
                    if row == base + depth:
                        row = base
                else:                       # a jump (WHILE back, cond skip) within the ring:
                    row += nxt - pos        # no division either
                    if row >= base + depth or row < base:
                        row = base + nxt % depth
                pos = nxt
            if need >= 0:
                break
            if later < 0:
                break
            e = pool[row]               # at or past the limit: a private SQE may go on
            mode = _mode(sqs, st, q, ran)
            if _turn_ends(np.int64(e.op), np.int64(e.flag), later, limit, st[E_HORIZON], mode):
                break
            later, first = -1, True     # it goes on: the loop runs its first SQE unchecked
        key, release = later, True  # the common turn end: its next start is known already
        if later >= 0:
            _prefetch_turn(pool, row, base, depth)
            sch[q, T_ROW] = row
        elif sqs[q, Q_STATE] == S_ACTIVE and sqs[q, Q_HEAD] < sqs[q, Q_TAIL]:
            key = _next_start(sqs, pool, sch, q)
        else:
            key = INF                   # parked (it keeps its leaf), or nothing left to run
            release = sqs[q, Q_STATE] != S_PARKED
            if sqs[q, Q_STATE] == S_ACTIVE and sqs[q, Q_KIND] == K_MODEL:
                sqs[q, Q_STATE] = S_IDLE    # a drained model SQ waits for its next activation
        _t_set(tree, sch, q, key, release)
        if need >= 0:
            st[E_NEED], st[E_RESUME], st[E_RESUME_LIMIT] = need, q + 1, limit
            return _finish(sqs, st, sched, tree, sch, lhead, live, R_NEED_BODY)
