"""The engine's opcodes: device-memory access (intrinsics, value reads and writes), core pools,
cond words, one ``_op_*`` function per hot opcode and the opcode table ``_execute``, with the call
of a rare opcode's body by address (``_call_body``; the bodies are in ``bodies.py``).
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from .. import sqe as S
from ..kernels import KC_BODY_NS, KC_UNIT, UNIT_AIC, UNIT_AICPU, call_kernel
from ..memory import C_FAULT, C_FAULT_ADDR, C_FAULT_SIZE
from ..memview import ACC_R, ACC_W, rec_access, rec_val, to_off
from ..timing import (T_AICPU_CORES, T_AIC_CORES, T_AIV_CORES, T_BW_H2H, T_KERNEL_DEFAULT,
                      T_KERNEL_PER_BLOCK, T_MEMSET_BW, T_WAKEUP)
from .layout import (CD_ADDR, CD_INLOOP, CD_ITER, CD_LAST, CD_MAX, CD_MBASE, CD_N, CD_TAKEN,
                     CD_TYPE, COND_IF, COND_JUMP_AT, COND_WAIT_AT, COND_WHILE, E_BODY, E_CONTEND,
                     E_FRAME, E_POOL, F_BAD_ADDRESS, F_CTX, F_DUR, F_KERNEL_OOB, F_KERNEL_TRAP,
                     F_LHEAD, F_MEM, F_NCTX, F_NLHEAD, F_NMEM, F_NPOOL, F_NSQS, F_NTC, F_NTREE,
                     F_NXT, F_POOL, F_POS, F_Q, F_REC, F_RUNAWAY, F_SCH, F_SQS, F_START, F_TC,
                     F_TREE, F_TSTART, F_VAL, F_X, P_AIC, P_AICPU, P_AIV, P_MAX, P_STRIDE, Q_WAIT,
                     Q_WAIT_SINCE, W_NONE, X_DONE, X_FAULT, X_PARK, X_YIELD, Y_TIME, Y_VAL,
                     Y_WAITERS, _BYTE, _MEMCPY_KIND, _WORD)
from .sched import _activate, _fault, _park, _set_slot, _wake, _wrote_memory


@njit(cache=True)
def _range_ok(ctx, mem, addr, n):
    """Arena offset of an engine-side access (copies, value ops), -1 if outside the arena."""
    off = to_off(ctx, addr)
    if off < 0 or n < 0 or off + n > mem.size:
        return -1
    return off


@intrinsic
def _fill(typingctx, addr, byte, n):
    """``n`` bytes at ``addr`` (an int) set to ``byte``: the C library's memset, not a loop."""
    def codegen(context, builder, signature, llargs):
        ptr = builder.inttoptr(llargs[0], ir.IntType(8).as_pointer())
        cgutils.memset(builder, ptr, llargs[2], builder.trunc(llargs[1], ir.IntType(8)))
        return context.get_dummy_value()
    return types.void(types.int64, types.int64, types.int64), codegen


@intrinsic
def _move(typingctx, dst, src, n):
    """``n`` bytes from ``src`` to ``dst`` (ints; the ranges may overlap): memmove."""
    def codegen(context, builder, signature, llargs):
        i8p = ir.IntType(8).as_pointer()
        cgutils.raw_memmove(builder, builder.inttoptr(llargs[0], i8p),
                            builder.inttoptr(llargs[1], i8p), llargs[2], 1)
        return context.get_dummy_value()
    return types.void(types.int64, types.int64, types.int64), codegen


@intrinsic
def _peek(typingctx, addr, ty):
    """The value of number type ``ty`` (``np.int64``, ``np.uint32`` ...) at ``addr`` (an int):
    one unaligned load (an array view of the bytes would compile a view, its checks and an
    index)."""
    t = ty.instance_type

    def codegen(context, builder, signature, llargs):
        ptr = builder.inttoptr(llargs[0], context.get_value_type(t).as_pointer())
        return builder.load(ptr, align=1)
    return t(types.int64, ty), codegen


@intrinsic
def _poke(typingctx, addr, value, ty):
    """Store the low bytes of ``value`` (an int) at ``addr`` as number type ``ty``."""
    t = ty.instance_type

    def codegen(context, builder, signature, llargs):
        lt = context.get_value_type(t)
        v = llargs[1] if lt.width == 64 else builder.trunc(llargs[1], lt)
        builder.store(v, builder.inttoptr(llargs[0], lt.as_pointer()), align=1)
        return context.get_dummy_value()
    return types.void(types.int64, types.int64, ty), codegen


@njit(cache=True, inline="always")
def _read_value(mem, off, width):
    """The unsigned ``width``-byte value at ``off`` (8 bytes: signed)."""
    p = mem.ctypes.data + off
    if width == 1:
        return np.int64(_peek(p, np.uint8))
    if width == 2:
        return np.int64(_peek(p, np.uint16))
    if width == 4:
        return np.int64(_peek(p, np.uint32))
    return _peek(p, np.int64)


@njit(cache=True)
def _write_value(mem, off, width, value):
    """Store the low ``width`` bytes of ``value`` at ``off``."""
    p = mem.ctypes.data + off
    if width == 1:
        _poke(p, value, np.uint8)
    elif width == 2:
        _poke(p, value, np.uint16)
    elif width == 4:
        _poke(p, value, np.uint32)
    else:
        _poke(p, value, np.int64)


@njit(cache=True, inline="always")
def _compare(cur, value, how):
    """A MEM_WAIT_VALUE comparison (``sqe.WAIT_*``)."""
    if how == S.WAIT_GEQ:
        return (cur - value) >= 0            # int64 arithmetic: wraps like the hardware's
    if how == S.WAIT_EQ:
        return cur == value
    if how == S.WAIT_AND:
        return (cur & value) != 0
    return ~(cur | value) != 0               # WAIT_NOR


@njit(cache=True, inline="always")
def _kernel_ns(kcost, tc, k, nb):
    """Cost-model duration of ``nb`` blocks of kernel ``k``: waves of blocks over the unit's
    cores times the body time of one wave, plus a per-block cost."""
    unit = kcost[k, KC_UNIT]
    cores = tc[T_AIV_CORES]
    if unit == UNIT_AIC:
        cores = tc[T_AIC_CORES]
    elif unit == UNIT_AICPU:
        cores = tc[T_AICPU_CORES]
    waves = np.int64(1)             # one wave (no division) when the blocks fit the cores
    if nb > cores or cores <= 0:
        waves = (nb + cores - 1) // cores
        if waves < 1:
            waves = 1
    body = kcost[k, KC_BODY_NS] if kcost[k, KC_BODY_NS] > 0 else tc[T_KERNEL_DEFAULT]
    return waves * body + nb * tc[T_KERNEL_PER_BLOCK]


@njit(cache=True)
def _reverse(a, lo, hi):
    """Reverse ``a[lo:hi]`` in place."""
    hi -= 1
    while lo < hi:
        a[lo], a[hi] = a[hi], a[lo]
        lo += 1
        hi -= 1


@njit(cache=True)
def _resize_pool(st, b, c):
    """The pool at ``st[b]`` to ``c`` cores: the ring laid out from slot 0, then cores added
    (free since 0) in front, or the last ones dropped (the c free first are kept)."""
    f = b + 2
    n, h = st[b], st[b + 1]
    if h != 0:
        _reverse(st, f, f + h)
        _reverse(st, f + h, f + n)
        _reverse(st, f, f + n)
    if n < c:
        sh = c - n
        for i in range(n - 1, -1, -1):
            st[f + i + sh] = st[f + i]
        for i in range(sh):
            st[f + i] = 0
    st[b], st[b + 1] = c, 0


@njit(cache=True, inline="always")
def _take_cores(st, kcost, tc, k, nb, ready, dur):
    """Contention (E_CONTEND): kernel ``k`` of ``nb`` blocks, ready at ``ready`` and running
    ``dur``, takes the w = min(nb, C) cores of its unit's pool that are free first and starts
    when the last of them is (no earlier than ``ready``); they are busy until it ends. Returns
    its start. A pool follows its unit's core count C (aclrtSetDeviceResLimit): cores added are
    free since 0, a smaller C keeps the C free first.

    The pool is a sorted ring (P_STRIDE words: n, head, the free times from the head on,
    ascending): the w cores taken are the first w, and their end usually goes last, so a
    kernel costs O(w) plus the entries that free after it."""
    unit = kcost[k, KC_UNIT]
    b, c = E_POOL + P_AIV * P_STRIDE, tc[T_AIV_CORES]
    if unit == UNIT_AIC:
        b, c = E_POOL + P_AIC * P_STRIDE, tc[T_AIC_CORES]
    elif unit == UNIT_AICPU:
        b, c = E_POOL + P_AICPU * P_STRIDE, tc[T_AICPU_CORES]
    c = min(max(c, 1), P_MAX)
    if st[b] != c:
        _resize_pool(st, b, c)
    f = b + 2
    h = st[b + 1]
    w = min(max(nb, 1), c)
    j = h + w - 1
    if j >= c:
        j -= c
    start = max(st[f + j], ready)
    end = start + dur
    h += w                      # the first w leave; the ring now ends with their w slots
    if h >= c:
        h -= c
    st[b + 1] = h
    i = c - w - 1               # entries freeing after ``end`` move w places on
    while i >= 0:
        p = h + i
        if p >= c:
            p -= c
        if st[f + p] <= end:
            break
        r = p + w
        if r >= c:
            r -= c
        st[f + r] = st[f + p]
        i -= 1
    i += 1
    p = h + i
    if p >= c:
        p -= c
    while w > 0:                # w copies of ``end`` after the entries freeing no later
        st[f + p] = end
        p += 1
        if p == c:
            p = 0
        w -= 1
    return start


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
def _cond_word(sqs, st, conds, mem, ctx, q, pos, c, rec_on):
    """Arena offset of cond ``c``'s word (reading it is the cond task's data access); -1 after
    reporting a bad address."""
    addr = conds[c, CD_ADDR]
    d = _range_ok(ctx, mem, addr, _WORD)
    if d < 0:
        _fault(sqs, st, q, pos, F_BAD_ADDRESS, addr, _WORD)
    elif rec_on:
        rec_access(ctx, addr, _WORD, ACC_R)
    return d


# ================================================================ opcodes
# Each returns X_* first; then what it changes of the SQE's (start, duration, next position,
# trace value). ``dur`` comes in as the dispatch plus the opcode's fixed cost.

@njit(cache=True, forceinline=True)
def _op_kernel(e, sqs, pool, st, tree, sch, lhead, q, pos, start, dur, ctx, kaddr, kcost, tc,
               memp, msize, ctxp):
    """KERNEL: call the body (by address) once per block; the duration is the SQE's explicit one
    (a3) or the kernel's cost model. A trap (non-zero status) or a bad access faults the task.
    With contention on it first waits for its cores (``_take_cores``): the trace row starts at
    its real start and its value is the time it waited. Returns (X_*, start, duration, trace
    value, trace start)."""
    k = e.a0
    nb = np.int64(e.blocks)
    dur += e.a3 if e.a3 > 0 else _kernel_ns(kcost, tc, k, nb)
    waited = np.int64(0)
    if st[E_CONTEND] != 0:
        s = _take_cores(st, kcost, tc, k, nb, start, dur)
        waited = s - start
        start = s
    ctx[C_FAULT] = 0
    addr = kaddr[k]
    for b in range(nb):
        rc = call_kernel(addr, memp, msize, ctxp, e.a1, b, nb)
        if rc != 0 or ctx[C_FAULT] != 0:
            if ctx[C_FAULT] != 0:
                _fault(sqs, st, q, pos, F_KERNEL_OOB, ctx[C_FAULT_ADDR], ctx[C_FAULT_SIZE])
            else:
                _fault(sqs, st, q, pos, F_KERNEL_TRAP, k, rc)
            ctx[C_FAULT] = 0
            return X_FAULT, start, dur, waited, start
    return _wrote_memory(sqs, pool, st, tree, sch, lhead), start, dur, waited, start


@njit(cache=True)
def _op_memcpy(e, sqs, pool, st, tree, sch, lhead, q, pos, dur, mem, ctx, tc, rec_on):
    """MEMCPY a2 bytes a1 -> a0 (overlap-safe) at the bandwidth of the memcpy kind in the flag;
    an address mode in the flag (``sqe.MEMCPY_MODES``) is :func:`_op_memcpy_mode` (a body)."""
    n = e.a2
    d = _range_ok(ctx, mem, e.a0, n)
    s = _range_ok(ctx, mem, e.a1, n)
    if d < 0 or s < 0:
        _fault(sqs, st, q, pos, F_BAD_ADDRESS, e.a0 if d < 0 else e.a1, n)
        return X_FAULT, dur
    if rec_on:
        rec_access(ctx, e.a1, n, ACC_R)
        rec_access(ctx, e.a0, n, ACC_W)
    if d != s and n > 0:        # memmove: overlap-safe, as if through a copy
        _move(mem.ctypes.data + d, mem.ctypes.data + s, n)
    return (_wrote_memory(sqs, pool, st, tree, sch, lhead),
            dur + n // tc[T_BW_H2H + (e.flag & _MEMCPY_KIND)])


@njit(cache=True, forceinline=True)
def _op_memset(e, sqs, pool, st, tree, sch, lhead, q, pos, dur, mem, ctx, tc, rec_on):
    """MEMSET a2 bytes at a0 to the byte a1 (flag MEMSET_D32: to the 32-bit word a1, a2 a
    multiple of 4), at the memset bandwidth."""
    n = e.a2
    d = _range_ok(ctx, mem, e.a0, n)
    if d < 0:
        _fault(sqs, st, q, pos, F_BAD_ADDRESS, e.a0, n)
        return X_FAULT, dur
    if rec_on:
        rec_access(ctx, e.a0, n, ACC_W)
    if e.flag & S.MEMSET_D32:
        _fill_d32(mem, d, n, e.a1)
    else:
        _fill(mem.ctypes.data + d, e.a1 & _BYTE, n)     # libc at every length: no loop to set up
    bw = tc[T_MEMSET_BW]
    if n >= bw:                 # a short fill takes no bandwidth time: skip the division
        dur += n // bw
    return _wrote_memory(sqs, pool, st, tree, sch, lhead), dur


@njit(cache=True)
def _fill_d32(mem, d, n, value):
    """n bytes at arena offset d: the little-endian 32-bit ``value`` repeated (a last partial
    word: its low bytes)."""
    p = mem.ctypes.data + d
    w = n - n % 4
    for i in range(0, w, 4):
        _poke(p + i, value, np.uint32)
    for i in range(w, n):
        _poke(p + i, value >> (8 * (i - w)), np.uint8)


@njit(cache=True, forceinline=True)
def _op_record(e, op, sqs, pool, sync, tree, sch, lhead, end):
    """EVENT_RECORD (value a1), NOTIFY_RECORD and END_GRAPH (value 1): set slot a0 at the SQE's
    end and wake what is parked on it."""
    if op == S.OP_EVENT_RECORD and (e.flag & S.CNT) != 0:
        return _cnt_record(e, sqs, pool, sync, tree, sch, lhead, end)
    v = e.a1 if op == S.OP_EVENT_RECORD else 1
    return _set_slot(sqs, pool, sync, tree, sch, lhead, e.a0, v, end)


@njit(cache=True)
def _cnt_record(e, sqs, pool, sync, tree, sch, lhead, end):
    """A counting notify's record (EVENT_RECORD with CNT): the uint32 counter in slot a0
    becomes a1, old + a1, old | a1 or old & a1 (the mode in the flag's low bits) — it may go
    down, unlike an event's slot — and what is parked on the slot re-checks its condition."""
    old = sync[e.a0, Y_VAL]
    mode = e.flag & 7
    v = e.a1 & 0xFFFFFFFF
    if mode == S.CNT_RECORD_ADD:
        v = (old + v) & 0xFFFFFFFF
    elif mode == S.CNT_RECORD_OR:
        v = old | v
    elif mode == S.CNT_RECORD_AND:
        v = old & v
    sync[e.a0, Y_VAL] = v
    sync[e.a0, Y_TIME] = end
    if sync[e.a0, Y_WAITERS] > 0:
        sync[e.a0, Y_WAITERS] = 0
        _wake(sqs, pool, tree, sch, lhead, e.a0)
        return X_YIELD
    return X_DONE


@njit(cache=True, inline="always")
def _cnt_holds(cur, value, mode):
    """A counting notify's wait condition (aclrtCntNotifyWaitMode)."""
    if mode == S.CNT_WAIT_LESS:
        return cur < value
    if mode == S.CNT_WAIT_EQ:
        return cur == value
    if mode == S.CNT_WAIT_BIGGER:
        return cur > value
    if mode == S.CNT_WAIT_GEQ:
        return cur >= value
    return (cur & value) == value                # CNT_WAIT_MASK


@njit(cache=True)
def _op_event_reset(e, sync):
    """EVENT_RESET: slot a0 back to 0."""
    sync[e.a0, Y_VAL] = 0


@njit(cache=True, forceinline=True)
def _op_sync_wait(e, op, sqs, sync, sch, lhead, ctx, tc, q, start, rec_on):
    """EVENT_WAIT (slot a0 >= a1; with CNT a counting notify's condition, ``_cnt_holds``),
    NOTIFY_WAIT and COND_NOTIFY_WAIT (slot a0 >= 1): park until it holds. Satisfied at once, it starts no earlier than the record; woken, a wakeup after it
    (the trace row then starts when the wait began). Notify waits (and WAIT_RESET) consume."""
    slot = e.a0
    want = e.a1 if op == S.OP_EVENT_WAIT else 1
    if (sync[slot, Y_VAL] < want) if (op != S.OP_EVENT_WAIT or (e.flag & S.CNT) == 0) else \
            not _cnt_holds(sync[slot, Y_VAL], e.a1 & 0xFFFFFFFF, (e.flag >> 1) & 7):
        _park(sqs, ctx, sch, lhead, q, slot, start, rec_on)
        sync[slot, Y_WAITERS] += 1
        return X_PARK, start, start
    tstart = start
    if sqs[q, Q_WAIT] == slot:
        tstart = sqs[q, Q_WAIT_SINCE]
        sqs[q, Q_WAIT] = W_NONE
        if sync[slot, Y_TIME] + tc[T_WAKEUP] > start:
            start = sync[slot, Y_TIME] + tc[T_WAKEUP]
    elif sync[slot, Y_TIME] > start:
        start = sync[slot, Y_TIME]
    if op != S.OP_EVENT_WAIT or (e.flag & S.WAIT_RESET) != 0:
        sync[slot, Y_VAL] = 0
    return X_DONE, start, tstart


@njit(cache=True)
def _op_model_execute(e, sqs, pool, tree, sch, lhead, mptr, msq, q, end):
    """MODEL_EXECUTE: start every head SQ of model a0 at the SQE's end (a graph launch)."""
    _activate(sqs, pool, tree, sch, lhead, mptr, msq, e.a0, end, q)


@njit(cache=True, forceinline=True)
def _op_cond_first(e, sqs, pool, st, tree, sch, lhead, conds, cmodels, mptr, msq, mem, ctx, q,
                   pos, end, rec_on):
    """COND_FIRST of cond a0: read the word, start the branch it selects at the SQE's end, or
    skip the cond task (past its NotifyWait and, for a WHILE, its JumpBack). The trace value is
    the branch (-1 skip). Entered from outside the loop, a WHILE's iteration count restarts."""
    c = e.a0
    d = _cond_word(sqs, st, conds, mem, ctx, q, pos, c, rec_on)
    if d < 0:
        return X_FAULT, pos + 1, np.int64(0)
    v = _peek(mem.ctypes.data + d, np.int64)
    conds[c, CD_LAST] = v
    if conds[c, CD_INLOOP] == 0:
        conds[c, CD_ITER] = 0
    conds[c, CD_INLOOP] = 0
    k = _cond_branch(conds[c, CD_TYPE], conds[c, CD_N], v)
    conds[c, CD_TAKEN] = k
    if rec_on:
        rec_val(ctx, k)
    if k < 0:
        last = COND_JUMP_AT if conds[c, CD_TYPE] == COND_WHILE else COND_WAIT_AT
        return X_DONE, pos + last + 1, k
    _activate(sqs, pool, tree, sch, lhead, mptr, msq, cmodels[conds[c, CD_MBASE] + k], end, q)
    return X_YIELD, pos + 1, k          # an activation ends the turn


@njit(cache=True, forceinline=True)
def _op_cond_jump_back(e, sqs, st, conds, mem, ctx, q, pos, rec_on):
    """COND_JUMP_BACK of WHILE cond a0: a non-zero word runs the body again (back to COND_FIRST),
    up to the cond's iteration bound (then F_RUNAWAY); zero leaves the loop. Trace value: the
    word."""
    c = e.a0
    d = _cond_word(sqs, st, conds, mem, ctx, q, pos, c, rec_on)
    if d < 0:
        return X_FAULT, pos + 1, np.int64(0)
    v = _peek(mem.ctypes.data + d, np.int64)
    conds[c, CD_LAST] = v
    if v == 0:
        return X_DONE, pos + 1, v
    conds[c, CD_ITER] += 1
    if conds[c, CD_ITER] >= conds[c, CD_MAX]:
        _fault(sqs, st, q, pos, F_RUNAWAY, c, v)
        conds[c, CD_INLOOP] = 0
        return X_FAULT, pos + 1, v
    conds[c, CD_INLOOP] = 1
    return X_DONE, pos - COND_JUMP_AT, v


@njit(cache=True, inline="always")
def _execute(e, op, b, q, pos, start, dur, pool, sqs, sync, mptr, msq, conds, cmodels, mem, ctx,
             kaddr, kcost, tc, st, tree, sch, lhead, memp, msize, ctxp, rec_on):
    """The opcode table: run SQE ``e`` (opcode ``op``) of SQ ``q`` at ``pos``; ``b`` its body
    (B_*, built: a rare opcode) or < 0 (inlined). Inlined into ``run`` by numba; the opcode
    functions it calls are compiled once each and inlined by LLVM (``forceinline``) or plain
    calls, so this table stays small: numba's own inlining copies a callee's IR once per block
    of it (1.5 s when the opcodes were inlined here).

    Returns (X_*, start, duration, next position, trace value, trace start)."""
    if b >= 0:
        return _call_body(b, q, pos, start, dur, pool, sqs, mem, ctx, tc, st, tree, sch, lhead,
                          rec_on)
    x, nxt, val, tstart = X_DONE, pos + 1, np.int64(0), start
    if op == S.OP_NOP:
        pass
    elif op == S.OP_KERNEL:
        x, start, dur, val, tstart = _op_kernel(e, sqs, pool, st, tree, sch, lhead, q, pos,
                                                start, dur, ctx, kaddr, kcost, tc, memp, msize,
                                                ctxp)
    elif op == S.OP_MEMSET:
        x, dur = _op_memset(e, sqs, pool, st, tree, sch, lhead, q, pos, dur, mem, ctx, tc,
                            rec_on)
    elif op == S.OP_MEMCPY:
        x, dur = _op_memcpy(e, sqs, pool, st, tree, sch, lhead, q, pos, dur, mem, ctx, tc,
                            rec_on)
    elif op == S.OP_EVENT_RECORD or op == S.OP_NOTIFY_RECORD or op == S.OP_END_GRAPH:
        x = _op_record(e, op, sqs, pool, sync, tree, sch, lhead, start + dur)
    elif op == S.OP_EVENT_WAIT or op == S.OP_NOTIFY_WAIT or op == S.OP_COND_NOTIFY_WAIT:
        x, start, tstart = _op_sync_wait(e, op, sqs, sync, sch, lhead, ctx, tc, q, start, rec_on)
    elif op == S.OP_EVENT_RESET:
        _op_event_reset(e, sync)
    elif op == S.OP_MODEL_EXECUTE:
        _op_model_execute(e, sqs, pool, tree, sch, lhead, mptr, msq, q, start + dur)
        x = X_YIELD             # an activation ends the turn (the SQs it started may be next)
    elif op == S.OP_COND_FIRST:
        x, nxt, val = _op_cond_first(e, sqs, pool, st, tree, sch, lhead, conds, cmodels, mptr,
                                     msq, mem, ctx, q, pos, start + dur, rec_on)
    else:       # OP_COND_JUMP_BACK (every other opcode is a body)
        x, nxt, val = _op_cond_jump_back(e, sqs, st, conds, mem, ctx, q, pos, rec_on)
    return x, start, dur, nxt, val, tstart


# ---- the rare opcodes' bodies (B_*): cfuncs called by address, built at first use ----

_BODY_SIG = types.int64(types.CPointer(types.int64))
"""A body's C signature: it gets ``st`` (its frame words at E_FRAME) and returns 0."""


@intrinsic
def _call_at(typingctx, addr, stp):
    """Call the body cfunc at ``addr`` (an int64) with the address ``stp`` of ``st``."""
    def codegen(context, builder, signature, llargs):
        i64 = ir.IntType(64)
        fn = builder.inttoptr(llargs[0], ir.FunctionType(i64, [i64.as_pointer()]).as_pointer())
        return builder.call(fn, [builder.inttoptr(llargs[1], i64.as_pointer())])
    return types.int64(types.int64, types.int64), codegen


@njit(cache=True, inline="always")
def _call_body(b, q, pos, start, dur, pool, sqs, mem, ctx, tc, st, tree, sch, lhead, rec_on):
    """Run SQE ``pos`` of SQ ``q`` through body ``b``: the arrays and operands into the frame,
    the call, _execute's results out of it."""
    f = E_FRAME
    st[f + F_POOL], st[f + F_NPOOL] = pool.ctypes.data, pool.shape[0]
    st[f + F_SQS], st[f + F_NSQS] = sqs.ctypes.data, sqs.shape[0]
    st[f + F_TREE], st[f + F_NTREE] = tree.ctypes.data, tree.shape[0]
    st[f + F_SCH], st[f + F_LHEAD], st[f + F_NLHEAD] = (sch.ctypes.data, lhead.ctypes.data,
                                                        lhead.shape[0])
    st[f + F_MEM], st[f + F_NMEM] = mem.ctypes.data, mem.shape[0]
    st[f + F_CTX], st[f + F_NCTX] = ctx.ctypes.data, ctx.shape[0]
    st[f + F_TC], st[f + F_NTC] = tc.ctypes.data, tc.shape[0]
    st[f + F_Q], st[f + F_POS], st[f + F_START], st[f + F_DUR] = q, pos, start, dur
    st[f + F_REC] = 1 if rec_on else 0
    st[f + F_X] = -1                # left as is by a body that raised (a cfunc cannot)
    _call_at(st[E_BODY + b], st.ctypes.data)
    if st[f + F_X] < 0:
        raise RuntimeError("a rare opcode's body raised (numba printed it above): the run "
                           "cannot go on with its results")
    return (st[f + F_X], st[f + F_START], st[f + F_DUR], st[f + F_NXT], st[f + F_VAL],
            st[f + F_TSTART])
