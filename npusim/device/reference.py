"""A pure-Python interpreter of the engine's SQE arrays: test oracle and benchmark baseline.

``run`` has the signature and the semantics of ``npusim.device.engine.run``, so it is a drop-in
(``DeviceState.run`` works with it monkeypatched in): the same state arrays, the same scheduling
rule (the runnable SQ with the earliest next start runs, and keeps running while it is no later
than the second earliest), parked waits woken by records and memory writes, ``R_DEADLOCK`` when
only parked SQs are left, ``R_FAULT`` with the same ``E_*`` details, the same timing formulas and
the same trace rows. Kernel bodies are the very cfuncs the engine calls, called through ctypes.

Why a second implementation: the engine is one long jitted loop whose bugs would be invisible
(numba does not bounds-check); an independent, readable interpreter of the same SQEs lets
``tests/test_engine_reference.py`` compare final states on random programs, and gives
``bench/`` the "pure-Python interpretation of the same SQEs" that design.md §6 measures against.

It is written the way a careful pure-Python simulator would be, not slowed down on purpose: the
small SQ/sync tables are copied into lists for the run (and written back on every return), each
SQE row is read once with ``.item()``. Keep it in step with ``engine.py``: any change of engine
semantics must be made here too (the tests will say so).
"""
from __future__ import annotations

import ctypes
import inspect

from . import engine as _engine
from . import sqe as S
from .engine import (_OP_UNIT, COND_IF, COND_WHILE, E_FKIND, E_HORIZON, E_INFO, E_INFO2,
                     E_MEM_WAITERS, E_NOW, E_NSQ, E_POS, E_SQ, E_STATUS, E_STEPS, E_STEP_LIMIT,
                     E_STOP_A, E_STOP_B, E_STOP_KIND, E_TRACE_N, E_TRACE_ON, F_BAD_ADDRESS,
                     F_BAD_OP, F_KERNEL_OOB, F_KERNEL_TRAP, F_RUNAWAY, INF, K_ADDR, K_INLOOP,
                     K_ITER, K_LAST, K_MAX, K_MBASE, K_MODEL, K_N, K_TAKEN, K_TYPE, Q_BASE,
                     Q_DEPTH, Q_DISPATCH, Q_DONE, Q_ERR, Q_ERR_POS, Q_HEAD, Q_KIND, Q_STATE,
                     Q_STOP_ON_FAIL, Q_TAIL, Q_TIME, Q_WAIT, Q_WAIT_SINCE, R_DEADLOCK, R_FAULT,
                     R_HORIZON, R_IDLE, R_STEPS, R_STOPPED, R_TRACE_FULL, STOP_NONE, STOP_SLOT,
                     STOP_SQ_POS, S_ACTIVE, S_IDLE, S_PARKED, Y_TIME, Y_VAL, Y_WAITERS)
from .kernels import TABLE, UNIT_AIC, UNIT_AICPU
from .memory import (C_DEV_BASE, C_DEV_SIZE, C_FAULT, C_FAULT_ADDR, C_FAULT_SIZE, C_HOST_BASE,
                     C_HOST_OFF, C_HOST_SIZE, C_REC)
from .memview import ACC_R, ACC_W, rec_access, rec_task, rec_unpark, rec_val
from .timing import (T_AIC_CORES, T_AICPU_CORES, T_AIV_CORES, T_BW_H2H, T_KERNEL_DEFAULT,
                     T_KERNEL_PER_BLOCK, T_MEMSET_BW, T_WAKEUP)

_KERNEL_CFUNC = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p,
                                 ctypes.c_int64, ctypes.c_int64, ctypes.c_int64)
_kernel_fns: dict[int, object] = {}

_OPU = [int(u) for u in _OP_UNIT]
_U64 = (1 << 64) - 1
_WIDTH_MASK = {1: 0xFF, 2: 0xFFFF, 4: 0xFFFFFFFF}


def _kernel(addr: int):
    """A ctypes callable for the kernel cfunc at ``addr`` (cached: building one costs ~10 µs)."""
    fn = _kernel_fns.get(addr)
    if fn is None:
        fn = _kernel_fns[addr] = _KERNEL_CFUNC(addr)
    return fn


def _to_off(ctx, addr):
    d = addr - int(ctx[C_DEV_BASE])
    if 0 <= d < int(ctx[C_DEV_SIZE]):
        return d
    h = addr - int(ctx[C_HOST_BASE])
    if 0 <= h < int(ctx[C_HOST_SIZE]):
        return int(ctx[C_HOST_OFF]) + h
    return -1


def _range_ok(ctx, mem, addr, n):
    off = _to_off(ctx, addr)
    if off < 0 or n < 0 or off + n > mem.size:
        return -1
    return off


def _read_value(mem, off, width):
    if width in (1, 2, 4):
        return int.from_bytes(mem[off:off + width].tobytes(), "little")
    return int.from_bytes(mem[off:off + 8].tobytes(), "little", signed=True)


def _write_value(mem, off, width, value):
    mask = _WIDTH_MASK.get(width)
    if mask is None:
        mem[off:off + 8] = list((value & _U64).to_bytes(8, "little"))
    else:
        mem[off:off + width] = list((value & mask).to_bytes(width, "little"))


def _compare(cur, value, how):
    if how == S.WAIT_GEQ:
        return cur >= value
    if how == S.WAIT_EQ:
        return cur == value
    if how == S.WAIT_AND:
        return (cur & value) != 0
    return cur != value


def _i32(v):
    return ((v + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def run(pool, sqs, sync, mptr, msq, conds, cmodels, mem, ctx, kaddr, kcost, tc, trace, st):
    """Run until idle, the horizon, the stop condition, a deadlock, a fault or a full trace.

    Same contract as ``engine.run``: returns (and stores in ``st[E_STATUS]``) one of ``R_*``.
    """
    Q = sqs.tolist()          # the small tables are written back on every return
    Y = sync.tolist()
    C = conds.tolist()
    T = st.tolist()
    try:
        r = _run(pool, Q, Y, mptr.tolist(), msq.tolist(), C, cmodels.tolist(), mem, ctx,
                 kaddr.tolist(), kcost.tolist(), tc.tolist(), trace, T)
    finally:
        for arr, rows in ((sqs, Q), (sync, Y), (conds, C)):
            if len(rows):
                arr[:] = rows
        st[:] = T
    return r


def engine_args(d) -> list:
    """The argument list ``DeviceState.run`` passes to the engine, for a ``DeviceState`` ``d``
    (built from the engine's parameter names, so it follows the engine's signature)."""
    if hasattr(d, "flush"):
        d.flush()                       # SQEs pushed on the host may be staged until a run
    special = {"mem": d.mem.arena, "ctx": d.mem.ctx, "kaddr": TABLE.addr, "kcost": TABLE.cost}
    return [special[n] if n in special else getattr(d, n)
            for n in inspect.signature(_engine.run.py_func).parameters]


def _wake(Q, nsq, slot):
    for i in range(nsq):
        qi = Q[i]
        if qi[Q_STATE] == S_PARKED and qi[Q_WAIT] == slot:
            qi[Q_STATE] = S_ACTIVE


def _set_slot(Q, Y, st, slot, value, t):
    """True when parked waiters were woken (the running SQ then yields)."""
    y = Y[slot]
    if value > y[Y_VAL]:
        y[Y_VAL] = value
    y[Y_TIME] = t
    if y[Y_WAITERS] > 0:
        y[Y_WAITERS] = 0
        _wake(Q, st[E_NSQ], slot)
        return True
    return False


def _wake_mem_waiters(Q, st):
    if st[E_MEM_WAITERS] > 0:
        st[E_MEM_WAITERS] = 0
        _wake(Q, st[E_NSQ], -2)
        return True
    return False


def _activate(Q, mptr, msq, m, t):
    for j in range(mptr[m], mptr[m + 1]):
        a = Q[msq[j]]
        a[Q_HEAD] = 0
        a[Q_STATE] = S_ACTIVE
        if a[Q_TIME] < t:
            a[Q_TIME] = t


def _cond_branch(typ, n, v):
    if typ == COND_IF:
        if v != 0:
            return 0
        return 1 if n == 2 else -1
    if typ == COND_WHILE:
        return 0 if v != 0 else -1
    return v if 0 <= v < n else -1


def _fault(Q, st, q, pos, kind, info, info2):
    if Q[q][Q_ERR] == 0:
        Q[q][Q_ERR] = kind
        Q[q][Q_ERR_POS] = pos
    st[E_SQ], st[E_POS], st[E_INFO], st[E_INFO2], st[E_FKIND] = q, pos, info, info2, kind


def _pick(Q, submit_col, nsq):
    best, bt, second = -1, INF, INF
    for i in range(nsq):
        qi = Q[i]
        if qi[Q_STATE] != S_ACTIVE:
            continue
        h = qi[Q_HEAD]
        if h >= qi[Q_TAIL]:
            continue
        t = qi[Q_TIME]
        ts = int(submit_col[qi[Q_BASE] + h % qi[Q_DEPTH]])
        if ts > t:
            t = ts
        if t < bt:
            second = bt
            best, bt = i, t
        elif t < second:
            second = t
    return best, bt, second


def _ret(st, r):
    st[E_STATUS] = r
    return r


def _run(pool, Q, Y, mptr, msq, conds, cmodels, mem, ctx, kaddr, kcost, tc, trace, st):
    nsq = st[E_NSQ]
    horizon = st[E_HORIZON]
    stop_kind, stop_a, stop_b = st[E_STOP_KIND], st[E_STOP_A], st[E_STOP_B]
    trace_on = st[E_TRACE_ON]
    tcap = trace.shape[0]
    memp, msize, ctxp = mem.ctypes.data, mem.size, ctx.ctypes.data
    ntc, nopu = len(tc), len(_OPU)
    submit_col = pool["t_submit"]          # a view: SQE_UPDATE writes show through
    rec_on = ctx[C_REC] != 0               # access recording: the engine's record calls
    while True:
        if st[E_STEP_LIMIT] != 0 and st[E_STEPS] >= st[E_STEP_LIMIT]:
            return _ret(st, R_STEPS)
        if stop_kind == STOP_SQ_POS and Q[stop_a][Q_HEAD] >= stop_b:
            return _ret(st, R_STOPPED)
        if stop_kind == STOP_SLOT and Y[stop_a][Y_VAL] >= stop_b:
            return _ret(st, R_STOPPED)
        q, t0, limit = _pick(Q, submit_col, nsq)
        if q < 0:
            st[E_SQ] = -1
            for i in range(nsq):
                if Q[i][Q_STATE] == S_PARKED:
                    st[E_SQ] = i
                    return _ret(st, R_DEADLOCK)
            return _ret(st, R_IDLE)
        if t0 > horizon:
            return _ret(st, R_HORIZON)
        if limit > horizon:
            limit = horizon
        qr = Q[q]
        base, depth, dispatch = qr[Q_BASE], qr[Q_DEPTH], qr[Q_DISPATCH]
        first = True
        while qr[Q_HEAD] < qr[Q_TAIL]:
            pos = qr[Q_HEAD]
            row = base + pos % depth
            op, flag, blocks, task_id, a0, a1, a2, a3, _a4, _a5, t_submit = pool[row].item()
            start = qr[Q_TIME]
            if t_submit > start:
                start = t_submit
            if start > limit and not first:
                break
            first = False
            dur = dispatch + (tc[op] if op < ntc else 0)
            unit = _OPU[op] if op < nopu else 0
            trace_start = start
            nxt = pos + 1
            woke = False
            val = 0
            skip = qr[Q_ERR] != 0 and qr[Q_STOP_ON_FAIL] != 0
            if rec_on:
                if rec_task(ctx, q, pos, S.OP_NOP if skip else op, a0, a1, _a4, _a5):
                    st[E_STEP_LIMIT] = st[E_STEPS] + 1
            if skip:
                dur = 0
            elif op == S.OP_NOP:
                pass
            elif op == S.OP_KERNEL:
                k = a0
                nb = blocks
                kc = kcost[k]
                unit = kc[2]
                cores = tc[T_AIV_CORES]
                if unit == UNIT_AIC:
                    cores = tc[T_AIC_CORES]
                elif unit == UNIT_AICPU:
                    cores = tc[T_AICPU_CORES]
                if a3 > 0:
                    dur += a3
                else:
                    waves = (nb + cores - 1) // cores
                    if waves < 1:
                        waves = 1
                    body = kc[0] if kc[0] > 0 else tc[T_KERNEL_DEFAULT]
                    dur += waves * body + nb * tc[T_KERNEL_PER_BLOCK]
                ctx[C_FAULT] = 0
                fn = _kernel(kaddr[k])
                for b in range(nb):
                    rc = fn(memp, msize, ctxp, a1, b, nb)
                    if rc != 0 or ctx[C_FAULT] != 0:
                        if ctx[C_FAULT] != 0:
                            _fault(Q, st, q, pos, F_KERNEL_OOB, int(ctx[C_FAULT_ADDR]),
                                   int(ctx[C_FAULT_SIZE]))
                        else:
                            _fault(Q, st, q, pos, F_KERNEL_TRAP, k, rc)
                        ctx[C_FAULT] = 0
                        qr[Q_TIME] = start + dur
                        qr[Q_HEAD] = pos + 1
                        return _ret(st, R_FAULT)
                woke = _wake_mem_waiters(Q, st)
            elif op == S.OP_MEMCPY:
                n = a2
                d = _range_ok(ctx, mem, a0, n)
                s = _range_ok(ctx, mem, a1, n)
                if d < 0 or s < 0:
                    _fault(Q, st, q, pos, F_BAD_ADDRESS, a0 if d < 0 else a1, n)
                    qr[Q_HEAD] = pos + 1
                    return _ret(st, R_FAULT)
                if rec_on:
                    rec_access(ctx, a1, n, ACC_R)
                    rec_access(ctx, a0, n, ACC_W)
                if d != s and n > 0:
                    mem[d:d + n] = mem[s:s + n]      # numpy copies overlapping ranges correctly
                dur += n // tc[T_BW_H2H + (flag & 3)]
                woke = _wake_mem_waiters(Q, st)
            elif op == S.OP_MEMSET:
                n = a2
                d = _range_ok(ctx, mem, a0, n)
                if d < 0:
                    _fault(Q, st, q, pos, F_BAD_ADDRESS, a0, n)
                    qr[Q_HEAD] = pos + 1
                    return _ret(st, R_FAULT)
                if rec_on:
                    rec_access(ctx, a0, n, ACC_W)
                mem[d:d + n] = a1 & 0xFF
                dur += n // tc[T_MEMSET_BW]
                woke = _wake_mem_waiters(Q, st)
            elif op == S.OP_EVENT_RECORD or op == S.OP_NOTIFY_RECORD or op == S.OP_END_GRAPH:
                v = a1 if op == S.OP_EVENT_RECORD else 1
                woke = _set_slot(Q, Y, st, a0, v, start + dur)
            elif op == S.OP_EVENT_RESET:
                Y[a0][Y_VAL] = 0
            elif op == S.OP_EVENT_WAIT or op == S.OP_NOTIFY_WAIT or op == S.OP_COND_NOTIFY_WAIT:
                slot = a0
                y = Y[slot]
                want = a1 if op == S.OP_EVENT_WAIT else 1
                if y[Y_VAL] < want:
                    if qr[Q_WAIT] != slot:
                        qr[Q_WAIT_SINCE] = start
                    qr[Q_STATE] = S_PARKED
                    qr[Q_WAIT] = slot
                    y[Y_WAITERS] += 1
                    qr[Q_TIME] = start
                    if rec_on:
                        rec_unpark(ctx)
                    break
                if qr[Q_WAIT] == slot:
                    trace_start = qr[Q_WAIT_SINCE]
                    qr[Q_WAIT] = -1
                    if y[Y_TIME] + tc[T_WAKEUP] > start:
                        start = y[Y_TIME] + tc[T_WAKEUP]
                elif y[Y_TIME] > start:
                    start = y[Y_TIME]
                if op != S.OP_EVENT_WAIT or (flag & S.WAIT_RESET) != 0:
                    y[Y_VAL] = 0
            elif op == S.OP_MEM_WRITE_VALUE:
                d = _range_ok(ctx, mem, a0, a2)
                if d < 0:
                    _fault(Q, st, q, pos, F_BAD_ADDRESS, a0, a2)
                    qr[Q_HEAD] = pos + 1
                    return _ret(st, R_FAULT)
                _write_value(mem, d, a2, a1)
                woke = _wake_mem_waiters(Q, st)
            elif op == S.OP_MEM_WAIT_VALUE:
                d = _range_ok(ctx, mem, a0, a2)
                if d < 0:
                    _fault(Q, st, q, pos, F_BAD_ADDRESS, a0, a2)
                    qr[Q_HEAD] = pos + 1
                    return _ret(st, R_FAULT)
                if not _compare(_read_value(mem, d, a2), a1, flag):
                    if qr[Q_WAIT] != -2:
                        qr[Q_WAIT_SINCE] = start
                    qr[Q_STATE] = S_PARKED
                    qr[Q_WAIT] = -2
                    st[E_MEM_WAITERS] += 1
                    qr[Q_TIME] = start
                    if rec_on:
                        rec_unpark(ctx)
                    break
                if qr[Q_WAIT] == -2:
                    trace_start = qr[Q_WAIT_SINCE]
                    qr[Q_WAIT] = -1
                    start += tc[T_WAKEUP]
            elif op == S.OP_STREAM_ACTIVE:
                a = Q[a0]
                a[Q_HEAD] = 0
                a[Q_STATE] = S_ACTIVE
                if a[Q_TIME] < start + dur:
                    a[Q_TIME] = start + dur
            elif op == S.OP_MODEL_EXECUTE:
                _activate(Q, mptr, msq, a0, start + dur)
            elif op == S.OP_COND_FIRST or op == S.OP_COND_JUMP_BACK:
                c = conds[a0]
                d = _range_ok(ctx, mem, c[K_ADDR], 8)
                if d < 0:
                    _fault(Q, st, q, pos, F_BAD_ADDRESS, c[K_ADDR], 8)
                    qr[Q_HEAD] = pos + 1
                    return _ret(st, R_FAULT)
                if rec_on:
                    rec_access(ctx, c[K_ADDR], 8, ACC_R)
                val = int.from_bytes(mem[d:d + 8].tobytes(), "little", signed=True)
                c[K_LAST] = val
                if op == S.OP_COND_FIRST:
                    if c[K_INLOOP] == 0:
                        c[K_ITER] = 0
                    c[K_INLOOP] = 0
                    k = _cond_branch(c[K_TYPE], c[K_N], val)
                    c[K_TAKEN] = k
                    if rec_on:
                        rec_val(ctx, k)
                    if k < 0:               # skip: past the NotifyWait (and JumpBack)
                        nxt = pos + (3 if c[K_TYPE] == COND_WHILE else 2)
                    else:
                        _activate(Q, mptr, msq, cmodels[c[K_MBASE] + k], start + dur)
                    val = k
                elif val != 0:              # WHILE: run the body again
                    c[K_ITER] += 1
                    if c[K_ITER] >= c[K_MAX]:
                        _fault(Q, st, q, pos, F_RUNAWAY, a0, val)
                        c[K_INLOOP] = 0
                        qr[Q_TIME] = start + dur
                        qr[Q_HEAD] = pos + 1
                        return _ret(st, R_FAULT)
                    c[K_INLOOP] = 1
                    nxt = pos - 2
            elif op == S.OP_SQE_UPDATE:
                pool[a1] = pool[a0]
                if a1 == row:     # the engine reads the trace fields from the (updated) row
                    _, _, blocks, task_id, a0 = pool[row].item()[:5]
            else:
                _fault(Q, st, q, pos, F_BAD_OP, op, 0)
                qr[Q_HEAD] = pos + 1
                return _ret(st, R_FAULT)
            end = start + dur
            qr[Q_TIME] = end
            qr[Q_HEAD] = nxt
            qr[Q_DONE] += 1
            st[E_STEPS] += 1
            if end > st[E_NOW]:
                st[E_NOW] = end
            if trace_on != 0:
                n = st[E_TRACE_N]
                if n < tcap:
                    trace[n] = (q, op, unit & 0xFF, blocks, task_id, _i32(pos), trace_start, end,
                                a0, val)
                st[E_TRACE_N] = n + 1
                if n + 1 >= tcap:
                    return _ret(st, R_TRACE_FULL)
            if stop_kind != STOP_NONE:
                if stop_kind == STOP_SQ_POS and q == stop_a and nxt >= stop_b:
                    break
                if stop_kind == STOP_SLOT and Y[stop_a][Y_VAL] >= stop_b:
                    break
            if qr[Q_STATE] != S_ACTIVE or woke or st[E_STEPS] == st[E_STEP_LIMIT]:
                break
        if qr[Q_HEAD] >= qr[Q_TAIL] and qr[Q_KIND] == K_MODEL and qr[Q_STATE] == S_ACTIVE:
            qr[Q_STATE] = S_IDLE
