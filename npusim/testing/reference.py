"""The reference semantics of the device engine, in plain Python: the test oracle and bench baseline.

``run`` has the signature and the contract of ``npusim.device.engine.run`` and is a drop-in for
it (``DeviceState.run`` works with it monkeypatched in): the same state arrays, the same
scheduling rule (the runnable SQ with the earliest next start runs, and keeps running while it is
no later than the second earliest — a synchronization: earlier — or, run-ahead, on with its
private tasks up to its next synchronization (``_turn_ends``); ties go to the lowest SQ index), parked waits woken by records
and memory writes, ``R_DEADLOCK`` when only parked SQs are left, ``R_FAULT`` with the same ``E_*``
details, the same timing formulas and the same trace rows. Kernel bodies are the very cfuncs the
engine calls, called through ctypes.

It is laid out like the engine: one function per opcode (``OPCODES`` is the opcode table), one
exit for faults (``_fault_exit``), and the scheduler loop in ``_run``. An opcode function gets the
run (``Run``: the device tables) and the SQE being executed (``Task``), does the SQE's work,
adjusts the task's timing (``start``, ``dur``), next position and trace fields, and returns what
happens next (``X_*``). Read it as the definition of what each SQE does; the engine is the same
definition compiled for speed.

Why a second implementation: numba does not bounds-check and the engine is built for speed; an
independent, readable interpreter of the same SQEs lets ``tests/device/test_engine_reference.py`` compare
final states on random programs to the nanosecond, and gives ``bench/`` the "pure-Python
interpretation of the same SQEs" that design.md §6 measures against. It is written the way a
careful pure-Python simulator would be, not slowed down on purpose: the small SQ/sync/cond tables
are lists for the run (written back on every return) and each SQE row is read once.

Any change of engine semantics is made here too (the tests will say so).
"""
from __future__ import annotations

import ctypes
import inspect

from ..device import engine as _engine
from ..device import sqe as S
from ..device.engine import (_OP_UNIT, COND_IF, COND_JUMP_AT, COND_WAIT_AT, COND_WHILE, CD_ADDR,
                             CD_INLOOP, CD_ITER, CD_LAST, CD_MAX, CD_MBASE, CD_N, CD_TAKEN, CD_TYPE,
                             E_CONTEND, E_EXACT, E_FKIND, E_HORIZON, E_INFO, E_INFO2, E_MEM_WAITERS,
                             E_NOW, E_NSQ, E_POOL, E_POS, E_SQ, E_STATUS, E_STEPS, E_STEP_LIMIT,
                             E_STOP_A, E_STOP_B, E_STOP_KIND, E_TRACE_N, E_TRACE_ON, F_BAD_ADDRESS,
                             F_BAD_OP, F_KERNEL_OOB, F_KERNEL_TRAP, F_LABEL, F_RUNAWAY, INF,
                             K_MODEL, P_AIC,
                             P_AICPU, P_AIV, P_MAX, P_STRIDE, Q_BASE, Q_DEPTH, Q_DISPATCH, Q_DONE,
                             Q_ERR, Q_ERR_POS, Q_EXACT, Q_HEAD, Q_KIND, Q_STATE, Q_STOP_ON_FAIL,
                             Q_TAIL, Q_TIME, Q_WAIT, Q_WAIT_SINCE, R_DEADLOCK, R_FAULT, R_GO,
                             R_HORIZON, R_IDLE, R_STEPS, R_STOPPED, R_TRACE_FULL, STOP_NONE,
                             STOP_SLOT, STOP_SQ_POS, S_ACTIVE, S_IDLE, S_PARKED, W_MEMORY, W_NONE,
                             X_DONE, X_FAULT, X_PARK, X_YIELD, Y_TIME, Y_VAL, Y_WAITERS)
from ..device.kernels import KC_BODY_NS, KC_UNIT, TABLE, UNIT_AIC, UNIT_AICPU
from ..device.memory import (C_DEV_BASE, C_DEV_SIZE, C_FAULT, C_FAULT_ADDR, C_FAULT_SIZE,
                             C_HOST_BASE, C_HOST_OFF, C_HOST_SIZE, C_REC)
from ..device.memview import ACC_R, ACC_W, rec_access, rec_task, rec_unpark, rec_val
from ..device.timing import (T_AIC_CORES, T_AICPU_CORES, T_AIV_CORES, T_BW_H2H,
                             T_KERNEL_DEFAULT, T_KERNEL_PER_BLOCK, T_MEMSET_BW, T_WAKEUP)

_KERNEL_CFUNC = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p,
                                 ctypes.c_int64, ctypes.c_int64, ctypes.c_int64)
_kernel_fns: dict[int, object] = {}

_OPU = [int(u) for u in _OP_UNIT]
_U64 = (1 << 64) - 1
_WIDTH_MASK = {1: 0xFF, 2: 0xFFFF, 4: 0xFFFFFFFF}


# ================================================================ the run and the task

class Run:
    """The device tables of one ``run`` call. The SQ, sync and cond tables and the engine state
    are lists of lists here (``run`` writes them back); the pool, memory and context stay numpy."""
    __slots__ = ("pool", "Q", "Y", "mptr", "msq", "conds", "cmodels", "mem", "ctx", "kaddr",
                 "kcost", "tc", "trace", "st", "rec_on", "memp", "msize", "ctxp", "submit",
                 "turns")

    def __init__(self, pool, Q, Y, mptr, msq, conds, cmodels, mem, ctx, kaddr, kcost, tc, trace,
                 st):
        self.pool, self.Q, self.Y, self.mptr, self.msq = pool, Q, Y, mptr, msq
        self.conds, self.cmodels, self.mem, self.ctx = conds, cmodels, mem, ctx
        self.kaddr, self.kcost, self.tc, self.trace, self.st = kaddr, kcost, tc, trace, st
        self.rec_on = ctx[C_REC] != 0               # access recording: the engine's record calls
        self.memp, self.msize, self.ctxp = mem.ctypes.data, mem.size, ctx.ctypes.data
        self.submit = pool["t_submit"]              # a view: SQE_UPDATE writes show through
        self.turns = 0                              # picks that ran an SQ (``run``'s ``stats``)


class Task:
    """The SQE being executed: where it is, its fields, and what the opcode makes of it."""
    __slots__ = ("q", "pos", "row", "op", "flag", "blocks", "task_id", "a0", "a1", "a2", "a3",
                 "a4", "a5", "start", "dur", "nxt", "val", "tstart")

    def __init__(self, q, pos, row, fields, start, dispatch):
        self.q, self.pos, self.row = q, pos, row
        (self.op, self.flag, self.blocks, self.task_id, self.a0, self.a1, self.a2, self.a3,
         self.a4, self.a5, _t_submit) = fields
        self.start = self.tstart = start    # start; the trace row's start (a woken wait: earlier)
        self.dur = dispatch                 # + the opcode's fixed cost and its own part
        self.nxt = pos + 1                  # the SQ's next position
        self.val = 0                        # the trace value (cond tasks)

    @property
    def end(self):
        return self.start + self.dur


# ================================================================ shared steps

def _fault(m, t, kind, info, info2):
    """Report a device fault of task ``t`` (its SQ keeps its first one)."""
    qr = m.Q[t.q]
    if qr[Q_ERR] == 0:
        qr[Q_ERR] = kind
        qr[Q_ERR_POS] = t.pos
    st = m.st
    st[E_SQ], st[E_POS], st[E_INFO], st[E_INFO2], st[E_FKIND] = t.q, t.pos, info, info2, kind
    return X_FAULT


def _fault_exit(m, t):
    """The one way out after a fault: the SQ's clock at the end of what the task was charged, its
    head past the task (which is not counted as executed)."""
    qr = m.Q[t.q]
    qr[Q_TIME] = t.end
    qr[Q_HEAD] = t.pos + 1
    return R_FAULT


def _wake(m, on):
    """Un-park every SQ parked on ``on`` (a slot or W_MEMORY)."""
    for qi in m.Q[:m.st[E_NSQ]]:
        if qi[Q_STATE] == S_PARKED and qi[Q_WAIT] == on:
            qi[Q_STATE] = S_ACTIVE


def _park(m, t, on):
    """Park the task's SQ on ``on`` at the task's start; the task runs when the SQ is woken."""
    qr = m.Q[t.q]
    if qr[Q_WAIT] != on:
        qr[Q_WAIT_SINCE] = t.start
    qr[Q_STATE] = S_PARKED
    qr[Q_WAIT] = on
    qr[Q_TIME] = t.start
    if m.rec_on:
        rec_unpark(m.ctx)
    return X_PARK


def _set_slot(m, slot, value, time):
    """Record ``value`` into a sync slot at ``time``; X_YIELD when parked waiters were woken."""
    y = m.Y[slot]
    if value > y[Y_VAL]:
        y[Y_VAL] = value
    y[Y_TIME] = time
    if y[Y_WAITERS] > 0:
        y[Y_WAITERS] = 0
        _wake(m, slot)
        return X_YIELD
    return X_DONE


def _wrote_memory(m):
    """After any memory write: wake the value waits; X_YIELD if there were any."""
    if m.st[E_MEM_WAITERS] > 0:
        m.st[E_MEM_WAITERS] = 0
        _wake(m, W_MEMORY)
        return X_YIELD
    return X_DONE


def _start_sq(m, a, time):
    """Start SQ ``a`` from position 0, no earlier than ``time``."""
    qa = m.Q[a]
    qa[Q_HEAD] = 0
    qa[Q_STATE] = S_ACTIVE
    if qa[Q_TIME] < time:
        qa[Q_TIME] = time


def _activate(m, model, time):
    """Start every head SQ of engine model ``model``."""
    for j in range(m.mptr[model], m.mptr[model + 1]):
        _start_sq(m, m.msq[j], time)


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


def _range_ok(m, addr, n):
    """Arena offset of ``n`` bytes at ``addr``, -1 if they are not all in the arena."""
    off = _to_off(m.ctx, addr)
    if off < 0 or n < 0 or off + n > m.mem.size:
        return -1
    return off


def _read_value(mem, off, width):
    """The unsigned ``width``-byte value at ``off`` (8 bytes: signed)."""
    if width in (1, 2, 4):
        return int.from_bytes(mem[off:off + width].tobytes(), "little")
    return int.from_bytes(mem[off:off + 8].tobytes(), "little", signed=True)


def _write_value(mem, off, width, value):
    """Store the low ``width`` bytes of ``value`` at ``off``."""
    mask = _WIDTH_MASK.get(width)
    if mask is None:
        mem[off:off + 8] = list((value & _U64).to_bytes(8, "little"))
    else:
        mem[off:off + width] = list((value & mask).to_bytes(width, "little"))


def _compare(cur, value, how):
    """A MEM_WAIT_VALUE comparison (``sqe.WAIT_*``)."""
    if how == S.WAIT_GEQ:
        d = (cur - value) & 0xFFFF_FFFF_FFFF_FFFF        # int64 difference, wrapped
        return d < 1 << 63
    if how == S.WAIT_EQ:
        return cur == value
    if how == S.WAIT_AND:
        return (cur & value) != 0
    return ~(cur | value) != 0                           # WAIT_NOR


def _unit_cores(m, k):
    """Kernel ``k``'s core pool (P_*) and its unit's core count."""
    unit, tc = m.kcost[k][KC_UNIT], m.tc
    if unit == UNIT_AIC:
        return P_AIC, tc[T_AIC_CORES]
    if unit == UNIT_AICPU:
        return P_AICPU, tc[T_AICPU_CORES]
    return P_AIV, tc[T_AIV_CORES]


def _kernel_ns(m, k, nb):
    """Cost-model duration of ``nb`` blocks of kernel ``k``: waves of blocks over the unit's
    cores times the body time of one wave, plus a per-block cost."""
    kc, tc = m.kcost[k], m.tc
    cores = _unit_cores(m, k)[1]
    waves = max(1, (nb + cores - 1) // cores)
    body = kc[KC_BODY_NS] if kc[KC_BODY_NS] > 0 else tc[T_KERNEL_DEFAULT]
    return waves * body + nb * tc[T_KERNEL_PER_BLOCK]


def _take_cores(m, k, nb, ready, dur):
    """Contention: the kernel takes the w = min(nb, C) cores of its unit's pool free first and
    starts when the last of them is free (no earlier than ``ready``); they are busy until it
    ends. The pool follows the unit's count C: added cores are free since 0, a smaller C keeps
    the C free first. Returns the start. The pool's layout is the engine's sorted ring (n, head,
    the free times ascending from the head on; a resize first lays the ring out from slot 0)."""
    T = m.st
    u, c = _unit_cores(m, k)
    c = max(1, min(c, P_MAX))
    b = E_POOL + u * P_STRIDE
    f = b + 2
    n, h = T[b], T[b + 1]
    free = [T[f + (h + i) % n] for i in range(n)]
    if n != c:
        T[f:f + n] = free
        free = ([0] * (c - n) + free)[:c]
        T[f:f + c] = free
        h = 0
    w = max(1, min(nb, c))
    start = max(ready, free[w - 1])
    free = sorted(free[w:] + [start + dur] * w)
    h = (h + w) % c
    for i in range(c):
        T[f + (h + i) % c] = free[i]
    T[b], T[b + 1] = c, h
    return start


def _cond_branch(typ, n, v):
    """The sub-model a cond task launches for word ``v``, -1 to skip (§8.5)."""
    if typ == COND_IF:
        if v != 0:
            return 0
        return 1 if n == 2 else -1
    if typ == COND_WHILE:
        return 0 if v != 0 else -1
    return v if 0 <= v < n else -1


def _cond_word(m, t, c):
    """The value of cond ``c``'s word (reading it is the task's data access); None after
    reporting a bad address."""
    addr = c[CD_ADDR]
    d = _range_ok(m, addr, 8)
    if d < 0:
        _fault(m, t, F_BAD_ADDRESS, addr, 8)
        return None
    if m.rec_on:
        rec_access(m.ctx, addr, 8, ACC_R)
    v = int.from_bytes(m.mem[d:d + 8].tobytes(), "little", signed=True)
    c[CD_LAST] = v
    return v


# ================================================================ opcodes

def op_nop(m, t):
    """NOP: only the dispatch and fixed cost."""
    return X_DONE


def op_kernel(m, t):
    """KERNEL: call the body once per block; the duration is the explicit a3 or the kernel's cost
    model. A trap (non-zero status) or a bad access faults the task. With contention on it
    first waits for its cores (``_take_cores``): the trace row starts at its real start, its
    value is the time it waited."""
    k, nb, ctx = t.a0, t.blocks, m.ctx
    t.dur += t.a3 if t.a3 > 0 else _kernel_ns(m, k, nb)
    if m.st[E_CONTEND]:
        s = _take_cores(m, k, nb, t.start, t.dur)
        t.val = s - t.start
        t.start = t.tstart = s
    ctx[C_FAULT] = 0
    fn = _kernel(m.kaddr[k])
    for b in range(nb):
        rc = fn(m.memp, m.msize, m.ctxp, t.a1, b, nb)
        if rc != 0 or ctx[C_FAULT] != 0:
            if ctx[C_FAULT] != 0:
                _fault(m, t, F_KERNEL_OOB, int(ctx[C_FAULT_ADDR]), int(ctx[C_FAULT_SIZE]))
            else:
                _fault(m, t, F_KERNEL_TRAP, k, rc)
            ctx[C_FAULT] = 0
            return X_FAULT
    return _wrote_memory(m)


def op_memcpy(m, t):
    """MEMCPY a2 bytes a1 -> a0 (overlap-safe) at the bandwidth of the memcpy kind (flag); an
    address mode in the flag is :func:`op_memcpy_mode`."""
    if t.flag & S.MEMCPY_MODES:
        return op_memcpy_mode(m, t)
    n = t.a2
    d, s = _range_ok(m, t.a0, n), _range_ok(m, t.a1, n)
    if d < 0 or s < 0:
        return _fault(m, t, F_BAD_ADDRESS, t.a0 if d < 0 else t.a1, n)
    if m.rec_on:
        rec_access(m.ctx, t.a1, n, ACC_R)
        rec_access(m.ctx, t.a0, n, ACC_W)
    if d != s and n > 0:
        m.mem[d:d + n] = m.mem[s:s + n]        # numpy copies overlapping ranges correctly
    t.dur += n // m.tc[T_BW_H2H + (t.flag & 3)]
    return _wrote_memory(m)


def op_memcpy_mode(m, t):
    """MEMCPY with an address mode, resolved when the task runs: MEMCPY_PTR (a0 / a1 hold the
    dst / src pointers, a3 the offsets dst | src << 32), MEMCPY_DESC (a descriptor at a0:
    length u32 at +12, src +16, dst +24), MEMCPY_2D (a2 = width | height << 32, a3 = src pitch |
    dst pitch << 32; each row overlap-safe)."""
    mode = t.flag & S.MEMCPY_MODES
    width, height, sp, dp = t.a2, 1, 0, 0
    if mode == S.MEMCPY_2D:
        dst, src = t.a0, t.a1
        width, height, sp, dp = t.a2 & 0xFFFFFFFF, t.a2 >> 32, t.a3 & 0xFFFFFFFF, t.a3 >> 32
    elif mode == S.MEMCPY_PTR:
        pd, ps = _range_ok(m, t.a0, 8), _range_ok(m, t.a1, 8)
        if pd < 0 or ps < 0:
            return _fault(m, t, F_BAD_ADDRESS, t.a0 if pd < 0 else t.a1, 8)
        if m.rec_on:
            rec_access(m.ctx, t.a0, 8, ACC_R)
            rec_access(m.ctx, t.a1, 8, ACC_R)
        dst = _read_value(m.mem, pd, 8) + (t.a3 & 0xFFFFFFFF)
        src = _read_value(m.mem, ps, 8) + (t.a3 >> 32)
    else:
        size = S.MEMCPY_DESC_DST_AT + 8
        pd = _range_ok(m, t.a0, size)
        if pd < 0:
            return _fault(m, t, F_BAD_ADDRESS, t.a0, size)
        if m.rec_on:
            rec_access(m.ctx, t.a0, size, ACC_R)
        width = _read_value(m.mem, pd + S.MEMCPY_DESC_LEN_AT, 4)
        src = _read_value(m.mem, pd + S.MEMCPY_DESC_SRC_AT, 8)
        dst = _read_value(m.mem, pd + S.MEMCPY_DESC_DST_AT, 8)
    span_d, span_s = (height - 1) * dp + width, (height - 1) * sp + width
    d, s = _range_ok(m, dst, span_d), _range_ok(m, src, span_s)
    if d < 0 or s < 0:
        return _fault(m, t, F_BAD_ADDRESS, dst if d < 0 else src, span_d if d < 0 else span_s)
    if m.rec_on:
        rec_access(m.ctx, src, span_s, ACC_R)
        rec_access(m.ctx, dst, span_d, ACC_W)
    for r in range(height):
        rd, rs = d + r * dp, s + r * sp
        if rd != rs and width > 0:
            m.mem[rd:rd + width] = m.mem[rs:rs + width].copy()
    t.dur += width * height // m.tc[T_BW_H2H + (t.flag & 3)]
    return _wrote_memory(m)


def op_memset(m, t):
    """MEMSET a2 bytes at a0 to the byte a1 (flag MEMSET_D32: the 32-bit word a1), at the
    memset bandwidth."""
    n = t.a2
    d = _range_ok(m, t.a0, n)
    if d < 0:
        return _fault(m, t, F_BAD_ADDRESS, t.a0, n)
    if m.rec_on:
        rec_access(m.ctx, t.a0, n, ACC_W)
    if t.flag & S.MEMSET_D32:
        for i in range(4):
            m.mem[d + i:d + n:4] = (t.a1 >> (8 * i)) & 0xFF
    else:
        m.mem[d:d + n] = t.a1 & 0xFF
    t.dur += n // m.tc[T_MEMSET_BW]
    return _wrote_memory(m)


def op_event_record(m, t):
    """EVENT_RECORD: slot a0 takes the value a1 (if larger) at the task's end; with CNT (a
    counting notify) the uint32 counter becomes a1, old + a1, old | a1 or old & a1."""
    if t.flag & S.CNT:
        y = m.Y[t.a0]
        old, v, mode = y[Y_VAL], t.a1 & 0xFFFFFFFF, t.flag & 7
        y[Y_VAL] = {S.CNT_RECORD_ADD: (old + v) & 0xFFFFFFFF, S.CNT_RECORD_OR: old | v,
                    S.CNT_RECORD_AND: old & v}.get(mode, v)
        y[Y_TIME] = t.end
        if y[Y_WAITERS] > 0:
            y[Y_WAITERS] = 0
            _wake(m, t.a0)
            return X_YIELD
        return X_DONE
    return _set_slot(m, t.a0, t.a1, t.end)


def op_notify_record(m, t):
    """NOTIFY_RECORD and END_GRAPH: slot a0 is set to 1 at the task's end."""
    return _set_slot(m, t.a0, 1, t.end)


def op_event_reset(m, t):
    """EVENT_RESET: slot a0 back to 0."""
    m.Y[t.a0][Y_VAL] = 0
    return X_DONE


_CNT_HOLDS = {S.CNT_WAIT_LESS: lambda c, v: c < v, S.CNT_WAIT_EQ: lambda c, v: c == v,
              S.CNT_WAIT_BIGGER: lambda c, v: c > v, S.CNT_WAIT_GEQ: lambda c, v: c >= v,
              S.CNT_WAIT_MASK: lambda c, v: (c & v) == v}


def _sync_wait(m, t, want, consume, cnt_mode=-1):
    """Park until slot a0 >= ``want`` (a counting notify, ``cnt_mode`` >= 0: until its
    condition holds). Satisfied at once, the task starts no earlier than the record; woken, a
    wakeup after it (the trace row starts when the wait began)."""
    slot = t.a0
    y, qr = m.Y[slot], m.Q[t.q]
    if (y[Y_VAL] < want) if cnt_mode < 0 else \
            not _CNT_HOLDS.get(cnt_mode, _CNT_HOLDS[S.CNT_WAIT_MASK])(y[Y_VAL], want & 0xFFFFFFFF):
        y[Y_WAITERS] += 1
        return _park(m, t, slot)
    if qr[Q_WAIT] == slot:
        t.tstart = qr[Q_WAIT_SINCE]
        qr[Q_WAIT] = W_NONE
        t.start = max(t.start, y[Y_TIME] + m.tc[T_WAKEUP])
    else:
        t.start = max(t.start, y[Y_TIME])
    if consume:
        y[Y_VAL] = 0
    return X_DONE


def op_event_wait(m, t):
    """EVENT_WAIT: wait for slot a0 >= a1; the flag WAIT_RESET consumes it."""
    return _sync_wait(m, t, t.a1, t.flag & S.WAIT_RESET,
                      (t.flag >> 1) & 7 if t.flag & S.CNT else -1)


def op_notify_wait(m, t):
    """NOTIFY_WAIT and COND_NOTIFY_WAIT: wait for slot a0 >= 1, and consume it."""
    return _sync_wait(m, t, 1, True)


def op_mem_write_value(m, t):
    """MEM_WRITE_VALUE: the low a2 bytes of a1 to address a0."""
    d = _range_ok(m, t.a0, t.a2)
    if d < 0:
        return _fault(m, t, F_BAD_ADDRESS, t.a0, t.a2)
    _write_value(m.mem, d, t.a2, t.a1)
    return _wrote_memory(m)


def op_mem_wait_value(m, t):
    """MEM_WAIT_VALUE: park until the a2-byte value at a0 compares true with a1 (flag: the
    comparison); re-checked after every memory write, a wakeup after it."""
    d = _range_ok(m, t.a0, t.a2)
    if d < 0:
        return _fault(m, t, F_BAD_ADDRESS, t.a0, t.a2)
    if not _compare(_read_value(m.mem, d, t.a2), t.a1, t.flag):
        m.st[E_MEM_WAITERS] += 1
        return _park(m, t, W_MEMORY)
    qr = m.Q[t.q]
    if qr[Q_WAIT] == W_MEMORY:
        t.tstart = qr[Q_WAIT_SINCE]
        qr[Q_WAIT] = W_NONE
        t.start += m.tc[T_WAKEUP]
    return X_DONE


def op_stream_active(m, t):
    """STREAM_ACTIVE: start SQ a0 from position 0 at the task's end (a cascade hop)."""
    _start_sq(m, t.a0, t.end)
    return X_YIELD                      # an activation ends the turn


def op_model_execute(m, t):
    """MODEL_EXECUTE: start every head SQ of model a0 at the task's end (a graph launch)."""
    _activate(m, t.a0, t.end)
    return X_YIELD                      # an activation ends the turn


def op_cond_first(m, t):
    """COND_FIRST of cond a0: read the word, start the branch it selects at the task's end, or
    skip the cond task (past its NotifyWait and, for a WHILE, its JumpBack). The trace value is
    the branch (-1 skip). Entered from outside the loop, a WHILE's iteration count restarts."""
    c = m.conds[t.a0]
    v = _cond_word(m, t, c)
    if v is None:
        return X_FAULT
    if c[CD_INLOOP] == 0:
        c[CD_ITER] = 0
    c[CD_INLOOP] = 0
    k = _cond_branch(c[CD_TYPE], c[CD_N], v)
    c[CD_TAKEN] = t.val = k
    if m.rec_on:
        rec_val(m.ctx, k)
    if k < 0:
        t.nxt = t.pos + (COND_JUMP_AT if c[CD_TYPE] == COND_WHILE else COND_WAIT_AT) + 1
        return X_DONE
    _activate(m, m.cmodels[c[CD_MBASE] + k], t.end)
    return X_YIELD                      # an activation ends the turn


def op_cond_jump_back(m, t):
    """COND_JUMP_BACK of WHILE cond a0: a non-zero word runs the body again (back to COND_FIRST)
    up to the iteration bound (then F_RUNAWAY); zero leaves the loop. Trace value: the word."""
    c = m.conds[t.a0]
    v = _cond_word(m, t, c)
    if v is None:
        return X_FAULT
    t.val = v
    if v == 0:
        return X_DONE
    c[CD_ITER] += 1
    if c[CD_ITER] >= c[CD_MAX]:
        c[CD_INLOOP] = 0
        return _fault(m, t, F_RUNAWAY, t.a0, v)
    c[CD_INLOOP] = 1
    t.nxt = t.pos - COND_JUMP_AT
    return X_DONE


def op_sqe_update(m, t):
    """SQE_UPDATE: copy pool row a0 over pool row a1 (a task update, in stream order). The trace
    row reads the task's fields from its row afterwards, so updating the task's own row shows."""
    m.pool[t.a1] = m.pool[t.a0]
    if t.a1 == t.row:
        _, _, t.blocks, t.task_id, t.a0 = m.pool[t.row].item()[:5]
    return X_YIELD                      # it may change an SQ's next start: the turn ends


def op_stream_switch(m, t):
    """STREAM_SWITCH: compare the signed value at a0 with the one at a1 (4 bytes, 8 with
    SWITCH_INT64; the flag's low nibble: left OP right). True: start SQ a2 at the task's end and
    stop this SQ (next position its tail). Trace value 1 taken, 0 not."""
    w = 8 if t.flag & S.SWITCH_INT64 else 4
    lo, ro = _range_ok(m, t.a0, w), _range_ok(m, t.a1, w)
    if lo < 0 or ro < 0:
        return _fault(m, t, F_BAD_ADDRESS, t.a0 if lo < 0 else t.a1, w)
    if m.rec_on:
        rec_access(m.ctx, t.a0, w, ACC_R)
        rec_access(m.ctx, t.a1, w, ACC_R)
    lv = int.from_bytes(m.mem[lo:lo + w].tobytes(), "little", signed=True)
    rv = int.from_bytes(m.mem[ro:ro + w].tobytes(), "little", signed=True)
    taken = _SWITCH[t.flag & S.SWITCH_COND](lv, rv) if (t.flag & S.SWITCH_COND) < 5 else lv <= rv
    t.val = 1 if taken else 0
    if not taken:
        return X_DONE
    _start_sq(m, t.a2, t.end)
    t.nxt = m.Q[t.q][Q_TAIL]
    return X_YIELD                      # an activation ends the turn


def op_label_switch(m, t):
    """LABEL_SWITCH: the uint32 index at a0, clamped to a1 - 1, picks slot index of the label
    list at a2 (a3 slots: the label's SQ and position, int64 each, -1 unset). The same SQ goes
    on at the label's position, which must lie ahead; another SQ starts there at the task's end
    and this one stops (next position its tail), unless it is running with work queued. No
    label, a jump back or that busy SQ: F_LABEL. Trace value: the index."""
    io = _range_ok(m, t.a0, 4)
    if io < 0:
        return _fault(m, t, F_BAD_ADDRESS, t.a0, 4)
    if m.rec_on:
        rec_access(m.ctx, t.a0, 4, ACC_R)
    idx = int.from_bytes(m.mem[io:io + 4].tobytes(), "little")
    if idx >= t.a1:
        idx = t.a1 - 1
    if idx < 0 or idx >= t.a3:
        t.val = idx if idx >= 0 else 0
        return _fault(m, t, F_LABEL, idx, t.a3)
    t.val = idx
    so = _range_ok(m, t.a2 + 16 * idx, 16)
    if so < 0:
        return _fault(m, t, F_BAD_ADDRESS, t.a2 + 16 * idx, 16)
    if m.rec_on:
        rec_access(m.ctx, t.a2 + 16 * idx, 16, ACC_R)
    a = int.from_bytes(m.mem[so:so + 8].tobytes(), "little", signed=True)
    at = int.from_bytes(m.mem[so + 8:so + 16].tobytes(), "little", signed=True)
    if a < 0 or a >= len(m.Q) or at < 0 or at > m.Q[a][Q_TAIL]:
        return _fault(m, t, F_LABEL, idx, a)
    if a == t.q:
        if at <= t.pos:
            return _fault(m, t, F_LABEL, idx, at)
        t.nxt = at
        return X_DONE
    qa = m.Q[a]
    if qa[Q_STATE] == S_ACTIVE and qa[Q_HEAD] < qa[Q_TAIL]:
        return _fault(m, t, F_LABEL, idx, a)
    _start_sq(m, a, t.end)
    qa[Q_HEAD] = at
    t.nxt = m.Q[t.q][Q_TAIL]
    return X_YIELD                      # an activation ends the turn


_SWITCH = (lambda a, b: a == b, lambda a, b: a != b, lambda a, b: a > b, lambda a, b: a >= b,
           lambda a, b: a < b)
"""aclrtCondition EQ, NE, GT, GE, LT (LE, and anything above it, is the engine's last branch)."""


OPCODES = {
    S.OP_NOP: op_nop, S.OP_KERNEL: op_kernel, S.OP_MEMCPY: op_memcpy, S.OP_MEMSET: op_memset,
    S.OP_EVENT_RECORD: op_event_record, S.OP_EVENT_WAIT: op_event_wait,
    S.OP_EVENT_RESET: op_event_reset, S.OP_NOTIFY_RECORD: op_notify_record,
    S.OP_NOTIFY_WAIT: op_notify_wait, S.OP_MEM_WRITE_VALUE: op_mem_write_value,
    S.OP_MEM_WAIT_VALUE: op_mem_wait_value, S.OP_STREAM_ACTIVE: op_stream_active,
    S.OP_END_GRAPH: op_notify_record, S.OP_MODEL_EXECUTE: op_model_execute,
    S.OP_COND_FIRST: op_cond_first, S.OP_COND_NOTIFY_WAIT: op_notify_wait,
    S.OP_COND_JUMP_BACK: op_cond_jump_back, S.OP_SQE_UPDATE: op_sqe_update,
    S.OP_STREAM_SWITCH: op_stream_switch, S.OP_LABEL_SWITCH: op_label_switch,
}
assert sorted(OPCODES) == list(range(S.N_OPCODES))
_OP_FN = [OPCODES[op] for op in range(S.N_OPCODES)]


# ================================================================ scheduling

def run(pool, sqs, sync, mptr, msq, conds, cmodels, mem, ctx, kaddr, kcost, tc, trace, st,
        sched=None, *, stats: dict | None = None):
    """Run until idle, the horizon, the stop condition, a deadlock, a fault, a full trace or the
    step limit. Same contract as ``engine.run``: returns (and stores in ``st[E_STATUS]``) one of
    the ``R_*`` codes. ``sched`` (the engine's scheduler structures) is not used: this
    interpreter scans every SQ at every pick, which is what they stand for.

    ``stats``: a dict that gets ``"turns"``, the picks that ran an SQ — a turn runs its SQ while
    its next start stays no later than the second earliest, so SQEs per turn says how much of a
    program's cost is scheduling (``bench/test_engine_scaling.py`` prints it). The engine makes
    the same picks (its tree is this scan's answer) and does not count them."""
    Q, Y, C, T = sqs.tolist(), sync.tolist(), conds.tolist(), st.tolist()
    m = Run(pool, Q, Y, mptr.tolist(), msq.tolist(), C, cmodels.tolist(), mem, ctx,
            kaddr.tolist(), kcost.tolist(), tc.tolist(), trace, T)
    try:
        T[E_STATUS] = r = _run(m)
    finally:                        # the small tables are written back on every return
        if stats is not None:
            stats["turns"] = m.turns
        for arr, rows in ((sqs, Q), (sync, Y), (conds, C)):
            if len(rows):
                arr[:] = rows
        st[:] = T
    return r


def engine_args(d) -> list:
    """The argument list ``DeviceState.run`` passes to the engine, for a ``DeviceState`` ``d``
    (built from the engine's parameter names, so it follows the engine's signature)."""
    d.flush()                           # SQEs pushed on the host may be staged until a run
    d.ready_sched()                     # and the SQs they went to join the live list
    special = {"mem": d.mem.arena, "ctx": d.mem.ctx, "kaddr": TABLE.addr, "kcost": TABLE.cost}
    return [special[n] if n in special else getattr(d, n)
            for n in inspect.signature(_engine.run.py_func).parameters]


def outcome(args: list) -> list:
    """Of a ``run`` argument list, the arrays the engine and this interpreter must leave
    identical: all but ``sched``, the engine's own scheduler structures, and ``st`` up to
    ``E_BODY`` (the words after it are the engine's own: its bodies' addresses and frame)."""
    return [a[:_engine.E_BODY] if n == "st" else a
            for n, a in zip(inspect.signature(_engine.run.py_func).parameters, args)
            if n != "sched"]


def _pick(m):
    """The runnable SQ with the earliest next start, that start, and the second earliest (ties go
    to the lowest SQ index)."""
    best, bt, second = -1, INF, INF
    submit = m.submit
    for i, qi in enumerate(m.Q[:m.st[E_NSQ]]):
        if qi[Q_STATE] != S_ACTIVE:
            continue
        h = qi[Q_HEAD]
        if h >= qi[Q_TAIL]:
            continue
        t = qi[Q_TIME]
        ts = int(submit[qi[Q_BASE] + h % qi[Q_DEPTH]])
        if ts > t:
            t = ts
        if t < bt:
            second = bt
            best, bt = i, t
        elif t < second:
            second = t
    return best, bt, second


def _stop_holds(m):
    """R_STEPS or R_STOPPED when the step limit or the stop condition holds, else R_GO."""
    st = m.st
    if st[E_STEP_LIMIT] != 0 and st[E_STEPS] >= st[E_STEP_LIMIT]:
        return R_STEPS
    if st[E_STOP_KIND] == STOP_SQ_POS and m.Q[st[E_STOP_A]][Q_HEAD] >= st[E_STOP_B]:
        return R_STOPPED
    if st[E_STOP_KIND] == STOP_SLOT and m.Y[st[E_STOP_A]][Y_VAL] >= st[E_STOP_B]:
        return R_STOPPED
    return R_GO


def _nothing_runnable(m):
    """R_DEADLOCK (with a parked SQ in E_SQ) when something is parked, else R_IDLE."""
    m.st[E_SQ] = -1
    for i, qi in enumerate(m.Q[:m.st[E_NSQ]]):
        if qi[Q_STATE] == S_PARKED:
            m.st[E_SQ] = i
            return R_DEADLOCK
    return R_IDLE


def _retire(m, t, end):
    """A task executed: its SQ is free at ``end`` and goes on at ``t.nxt``."""
    qr, st = m.Q[t.q], m.st
    qr[Q_TIME] = end
    qr[Q_HEAD] = t.nxt
    qr[Q_DONE] += 1
    st[E_STEPS] += 1
    if end > st[E_NOW]:
        st[E_NOW] = end


def _trace_row(m, t, ran, end):
    """Append the task's trace row (``ran``: not skipped after a fault); True when the buffer is
    full."""
    st, trace = m.st, m.trace
    n = st[E_TRACE_N]
    if n < trace.shape[0]:
        unit = m.kcost[t.a0][KC_UNIT] if t.op == S.OP_KERNEL and ran else _OPU[t.op]
        pos = ((t.pos + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)       # the int32 column
        trace[n] = (t.q, t.op, unit & 0xFF, t.blocks, t.task_id, pos, t.tstart, end, t.a0,
                    t.val)
    st[E_TRACE_N] = n + 1
    return n + 1 >= trace.shape[0]


def _stop_after(m, t):
    """The stop condition holds after the task moved its SQ (the SQ yields)."""
    st = m.st
    if st[E_STOP_KIND] == STOP_SQ_POS:
        return t.q == st[E_STOP_A] and t.nxt >= st[E_STOP_B]
    if st[E_STOP_KIND] == STOP_SLOT:
        return m.Y[st[E_STOP_A]][Y_VAL] >= st[E_STOP_B]
    return False


def _turn_ends(m, t, qr, limit, horizon, ahead):
    """Whether SQ ``q``'s turn ends before task ``t`` (its start >= the turn's ``limit``, not the
    turn's first task). A private task (NOP, KERNEL, MEMSET, a MEMCPY without an address mode, or
    any task skipped after a fault; not on a Q_EXACT SQ) touches nothing another SQ reads but
    memory, so it commutes with every other SQ's tasks: it goes on at a tie, and when its SQ may
    run ahead (``ahead``: contention and E_EXACT off; a model SQ always, an eager SQ in a run
    without a stop condition) past the limit up to the horizon. Any other task is a
    synchronization: at a tie it ends the turn, so the tied SQs are picked again, lowest index
    first, and the synchronizations of a program run in (start, SQ) order either way."""
    ran = qr[Q_ERR] == 0 or qr[Q_STOP_ON_FAIL] == 0
    private = qr[Q_EXACT] == 0 and (not ran or t.op in _PRIVATE and not (
        t.op == S.OP_MEMCPY and t.flag & S.MEMCPY_MODES))
    if not private:
        return True
    if t.start == limit:
        return False
    return not (ahead and t.start <= horizon)


_PRIVATE = frozenset((S.OP_NOP, S.OP_KERNEL, S.OP_MEMCPY, S.OP_MEMSET))


def _run(m):
    st, pool, tc, rec_on = m.st, m.pool, m.tc, m.rec_on
    horizon, trace_on, stop_on = st[E_HORIZON], st[E_TRACE_ON] != 0, st[E_STOP_KIND] != STOP_NONE
    # run-ahead (_turn_ends): contention and E_EXACT off; an eager SQ only in a run without a
    # stop condition (the host acts from the time a wait for one SQ or slot returns at)
    ahead = st[E_CONTEND] == 0 and st[E_EXACT] == 0
    ahead_eager = ahead and not stop_on
    while True:
        r = _stop_holds(m)
        if r != R_GO:
            return r
        q, t0, limit = _pick(m)
        if q < 0:
            return _nothing_runnable(m)
        if t0 > horizon:
            return R_HORIZON
        m.turns += 1
        limit = min(limit, horizon)
        # run SQ q while its next start stays no later than ``limit`` (always at least once)
        qr = m.Q[q]
        base, depth, dispatch = qr[Q_BASE], qr[Q_DEPTH], qr[Q_DISPATCH]
        first = True
        while qr[Q_HEAD] < qr[Q_TAIL]:
            pos = qr[Q_HEAD]
            row = base + pos % depth
            fields = pool[row].item()
            t_submit = fields[-1]
            t = Task(q, pos, row, fields, t_submit if t_submit > qr[Q_TIME] else qr[Q_TIME],
                     dispatch)
            if t.start >= limit and not first and _turn_ends(
                    m, t, qr, limit, horizon, ahead_eager or ahead and qr[Q_KIND] == K_MODEL):
                break
            first = False
            if t.op >= S.N_OPCODES:
                _fault(m, t, F_BAD_OP, t.op, 0)
                return _fault_exit(m, t)
            ran = qr[Q_ERR] == 0 or qr[Q_STOP_ON_FAIL] == 0
            if rec_on and rec_task(m.ctx, q, pos, t.op if ran else S.OP_NOP, t.a0, t.a1,
                                     t.a4, t.a5):
                st[E_STEP_LIMIT] = st[E_STEPS] + 1      # nearly full log: stop after this task
            if ran:
                t.dur += tc[t.op]
                x = _OP_FN[t.op](m, t)
                if x == X_PARK:
                    break
                if x == X_FAULT:
                    return _fault_exit(m, t)
            else:                           # skipped after a fault (ACL_STOP_ON_FAILURE)
                x, t.dur = X_DONE, 0
            end = t.start + t.dur
            _retire(m, t, end)
            if trace_on and _trace_row(m, t, ran, end):
                return R_TRACE_FULL
            if x == X_YIELD or qr[Q_STATE] != S_ACTIVE or st[E_STEPS] == st[E_STEP_LIMIT] \
                    or stop_on and _stop_after(m, t):
                break
        if qr[Q_HEAD] >= qr[Q_TAIL] and qr[Q_KIND] == K_MODEL and qr[Q_STATE] == S_ACTIVE:
            qr[Q_STATE] = S_IDLE            # a drained model SQ waits for its next activation
