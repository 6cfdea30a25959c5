"""The engine's scheduler: the tournament tree of runnable SQs, the waiter lists of parked ones,
the live list a run builds and clears (``_build`` / ``_finish``), and the steps every opcode
shares to park, wake, start or fault an SQ (package docstring, "Scheduling").
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from ..memview import rec_unpark, view_at
from .layout import (E_FKIND, E_INFO, E_INFO2, E_MEM_WAITERS, E_POS, E_SQ, E_STATUS, INF, L_NEXT,
                     L_ON, L_PREV, Q_BASE, Q_DEPTH, Q_ERR, Q_ERR_POS, Q_HEAD, Q_STATE, Q_TAIL,
                     Q_TIME, Q_WAIT, Q_WAIT_SINCE, R_DEADLOCK, R_FAULT, R_IDLE, R_NONE, S_ACTIVE,
                     S_PARKED, T_LEAF, T_LIVE, T_ROW, X_DONE, X_YIELD, Y_TIME, Y_VAL, Y_WAITERS,
                     _AHEAD, _NB, _NW)


# ================================================================ shared steps

@njit(cache=True, inline="always")
def _borrow(a):
    """A view of ``a`` that does not own it (no reference count). Numba increfs and decrefs
    every array argument of every inlined call; on borrowed views that is a null test, not an
    atomic add, so the per-opcode functions cost nothing per SQE. ``run``'s caller keeps the
    arrays alive."""
    return view_at(a.ctypes.data, a.shape, a.dtype)


@njit(cache=True, inline="always")
def _carve(a, off, shape):
    """A borrowed int64 view of ``shape`` (an int or a tuple) at ``a[off:]`` (``a``: int64,
    kept alive by the caller)."""
    return view_at(a.ctypes.data + 8 * off, shape, np.int64)


@njit(cache=True)
def _finish(sqs, st, sched, tree, sch, lhead, live, r):
    """Every return of ``run``: the scheduler structures back at rest, and the code (also left
    in ``st[E_STATUS]``). The live list becomes the SQs in play now: the ones this run started
    with (still parked or with work, or not: the next run drops those) and every SQ holding a
    leaf (activated, woken or still runnable). Every waiter list's SQs are among them (an SQ
    parks in its own turn, holding its leaf, or was parked when the run began), so clearing
    their words leaves the structures at rest. ``R_NONE`` (nothing runnable) becomes
    R_DEADLOCK with the lowest parked SQ in ``E_SQ`` when one is parked, else R_IDLE."""
    n = sched[0]
    cap = tree[0]
    nsq = sch.shape[0]
    for j in range(cap):
        a = tree[_NB + _NW * (cap + j) + 1]
        if a < nsq and sch[a, T_LIVE] < 0:
            sch[a, T_LIVE] = 1
            live[n] = a
            n += 1
    sched[0] = n
    parked = nsq
    for i in range(n):
        a = live[i]
        li = sch[a, L_ON]
        if li >= 0:
            lhead[li] = -1
        sch[a, L_ON], sch[a, T_LEAF], sch[a, T_LIVE] = -1, -1, -1
        if sqs[a, Q_STATE] == S_PARKED and a < parked:
            parked = a
    if r == R_NONE:
        r = R_IDLE
        st[E_SQ] = -1
        if parked < nsq:
            st[E_SQ] = parked
            r = R_DEADLOCK
    st[E_STATUS] = r
    return r


@njit(cache=True)
def _fault(sqs, st, q, pos, kind, info, info2):
    """Report a device fault of SQE ``pos`` of SQ ``q`` (the SQ keeps its first one)."""
    if sqs[q, Q_ERR] == 0:
        sqs[q, Q_ERR] = kind
        sqs[q, Q_ERR_POS] = pos
    st[E_SQ], st[E_POS], st[E_INFO], st[E_INFO2], st[E_FKIND] = q, pos, info, info2, kind


@njit(cache=True, inline="always")
def _fault_exit(sqs, q, pos, end):
    """The one way out after a fault: the faulting SQE held its SQ until ``end`` (what it was
    charged up to the fault), the SQ resumes after it; it is not counted as executed."""
    sqs[q, Q_TIME] = end
    sqs[q, Q_HEAD] = pos + 1
    return R_FAULT


@njit(cache=True, inline="always")
def _wake(sqs, pool, tree, sch, lhead, li):
    """Un-park every SQ on waiter list ``li`` (they re-check their wait when they next run)."""
    a = lhead[li]
    lhead[li] = -1
    while a >= 0:
        nxt = sch[a, L_NEXT]
        sch[a, L_ON] = -1
        sqs[a, Q_STATE] = S_ACTIVE
        _ready(sqs, pool, tree, sch, a)
        a = nxt


@njit(cache=True, inline="always")
def _park(sqs, ctx, sch, lhead, q, on, start, rec_on):
    """Park SQ ``q`` on ``on`` (a slot or W_MEMORY) at ``start``; its SQE runs when woken."""
    if sqs[q, Q_WAIT] != on:
        sqs[q, Q_WAIT_SINCE] = start
    sqs[q, Q_STATE] = S_PARKED
    sqs[q, Q_WAIT] = on
    sqs[q, Q_TIME] = start
    _l_add(sch, lhead, q, on if on >= 0 else lhead.shape[0] - 1)
    if rec_on:
        rec_unpark(ctx)


@njit(cache=True, inline="always")
def _set_slot(sqs, pool, sync, tree, sch, lhead, slot, value, t):
    """Record ``value`` into a sync slot at time ``t``; X_YIELD when parked waiters were woken."""
    if value > sync[slot, Y_VAL]:
        sync[slot, Y_VAL] = value
    sync[slot, Y_TIME] = t
    if sync[slot, Y_WAITERS] > 0:
        sync[slot, Y_WAITERS] = 0
        _wake(sqs, pool, tree, sch, lhead, slot)
        return X_YIELD
    return X_DONE


@njit(cache=True)
def _wake_memory(sqs, pool, st, tree, sch, lhead):
    """Un-park the value waits (a plain call: rare, and not a copy of ``_wake`` per write site)."""
    st[E_MEM_WAITERS] = 0
    _wake(sqs, pool, tree, sch, lhead, lhead.shape[0] - 1)


@njit(cache=True, inline="always")
def _wrote_memory(sqs, pool, st, tree, sch, lhead):
    """After any memory write: wake the value waits (they re-read); X_YIELD if there were any."""
    if st[E_MEM_WAITERS] > 0:
        _wake_memory(sqs, pool, st, tree, sch, lhead)
        return X_YIELD
    return X_DONE


@njit(cache=True, inline="always")
def _activate(sqs, pool, tree, sch, lhead, mptr, msq, m, t, q):
    """Start every head SQ of engine model ``m`` at time ``t`` (head back to 0); ``q`` runs."""
    for j in range(mptr[m], mptr[m + 1]):
        _start_sq(sqs, pool, tree, sch, lhead, msq[j], t, q)


@njit(cache=True, inline="always")
def _start_sq(sqs, pool, tree, sch, lhead, a, t, q):
    """Start SQ ``a`` from position 0, no earlier than ``t`` (``q`` is the running SQ, which the
    scheduler puts back itself). A parked SQ leaves its waiter list."""
    sqs[a, Q_HEAD] = 0
    if sqs[a, Q_STATE] == S_PARKED:
        _l_remove(sch, lhead, a)
    sqs[a, Q_STATE] = S_ACTIVE
    if sqs[a, Q_TIME] < t:
        sqs[a, Q_TIME] = t
    if a != q:
        _ready(sqs, pool, tree, sch, a)


# ================================================================ scheduling

# The runnable SQs (ACTIVE, with an SQE to run) are the leaves of a tournament tree whose nodes
# hold the (next start, SQ) pair winning their subtree: the root is the SQ the linear scan over
# all SQs would pick, ties to the lowest index. Parked SQs are on a doubly linked waiter list per
# sync slot (and one for memory waits), so a record wakes exactly its waiters. Idle and drained
# SQs hold no leaf and cost nothing per pick (a parked SQ keeps its leaf, keyed INF). Every
# change of an SQ's next start while it is in the tree re-keys it (activation, SQE_UPDATE of its
# head row); the running SQ keeps its leaf during its turn and is re-keyed when the turn ends.

@njit(cache=True, inline="always")
def _head_row(sqs, a):
    return sqs[a, Q_BASE] + sqs[a, Q_HEAD] % sqs[a, Q_DEPTH]


@intrinsic
def _prefetch(typingctx, addr):
    """Ask the CPU to bring the cache line at ``addr`` (an int) in; never faults."""
    def codegen(context, builder, signature, llargs):
        i32 = ir.IntType(32)
        ptr = builder.inttoptr(llargs[0], ir.IntType(8).as_pointer())
        fnty = ir.FunctionType(ir.VoidType(), [ptr.type, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        builder.call(fn, [ptr, i32(0), i32(3), i32(1)])      # read, keep, data cache
        return context.get_dummy_value()
    return types.void(types.int64), codegen


@njit(cache=True, inline="always")
def _next_start(sqs, pool, sch, a):
    """When SQ ``a``'s head SQE can start: its clock, or the SQE's doorbell if later. Its head
    row is kept for its next turn (T_ROW), and a few SQEs further on are prefetched: with many
    streams taking turns the hardware prefetcher loses track of the rings, and by the time
    ``a`` gets there the rows are in cache."""
    t = sqs[a, Q_TIME]
    base, depth, h = sqs[a, Q_BASE], sqs[a, Q_DEPTH], sqs[a, Q_HEAD]
    row = base + (h if h < depth else h % depth)    # a model SQ's head: no division
    sch[a, T_ROW] = row
    ts = pool[row].t_submit
    _prefetch_ahead(pool, row, base, depth)
    return ts if ts > t else t


@njit(cache=True, inline="always")
def _prefetch_ahead(pool, row, base, depth):
    """Prefetch the row _AHEAD SQEs after ``row`` in its ring; returns its address."""
    r = row + _AHEAD
    if r >= base + depth:
        r -= depth
    a = pool.ctypes.data + 64 * r
    _prefetch(a)
    return a


@njit(cache=True, inline="always")
def _prefetch_turn(pool, row, base, depth):
    """At the end of a turn that stopped at ``row``: prefetch the rows _AHEAD and _AHEAD + 1
    SQEs after it. A turn of chained streams runs about two SQEs (run-ahead stops at each
    synchronization), and a prefetch a turn left every other row a miss: 256 chained streams,
    29.3 against 23.0 ns/SQE. ``_next_start`` keeps one row: a change to what ``run`` inlines
    moves the single stream's loop (a version with two rows there too cost it 7%)."""
    # the next line: at the ring's end the next ring's first row, or past the pool: no fault
    _prefetch(_prefetch_ahead(pool, row, base, depth) + 64)


@njit(cache=True, inline="always")
def _t_later(kc, c, ks, s):
    """(kc, c) comes after (ks, s): by key, ties to the lower SQ index (no branch)."""
    return (ks < kc) | ((ks == kc) & (s < c))


@njit(cache=True)
def _t_grow(tree, sch):
    """Double the leaves (all are in use): the old ones keep their place, the new ones are free."""
    cap = tree[0]
    fb = tree[1]
    for j in range(cap):
        o, n = _NB + _NW * (cap + j), _NB + _NW * (2 * cap + j)
        tree[n], tree[n + 1], tree[n + 2] = tree[o], tree[o + 1], INF
        f = n + _NW * cap
        tree[f], tree[f + 1], tree[f + 2] = INF, sch.shape[0], INF
        tree[fb + 1 + j] = 2 * cap - 1 - j
    tree[fb] = cap
    tree[0] = 2 * cap
    _t_rebuild(tree)


@njit(cache=True)
def _t_rebuild(tree):
    """Every inner node from the leaves."""
    for i in range(tree[0] - 1, 0, -1):
        n, l, r = _NB + _NW * i, _NB + _NW * 2 * i, _NB + _NW * (2 * i + 1)
        w, o = l, r
        if _t_later(tree[l], tree[l + 1], tree[r], tree[r + 1]):
            w, o = r, l
        tree[n], tree[n + 1] = tree[w], tree[w + 1]
        tree[n + 2] = min(tree[w + 2], tree[o])


@njit(cache=True, inline="always")
def _t_set(tree, sch, a, key, release):
    """SQ ``a`` is runnable from ``key`` on (INF: not runnable): it takes a leaf, or gives its
    leaf back when it is not runnable and ``release`` (a parked SQ keeps its leaf, keyed INF,
    for the wake that is likely to come), and its leaf-to-root path is replayed. Each level
    meets the (key, SQ, runner-up key) of the sibling subtree, whose address does not depend on
    the last comparison, so the loads of all levels overlap; the node's runner-up is the best of
    the loser's key and the winner side's runner-up."""
    j = sch[a, T_LEAF]
    c = a
    if j < 0:
        if key == INF:
            return
        fb = tree[1]
        if tree[fb] == 0:
            _t_grow(tree, sch)
        n = tree[fb]
        j = tree[fb + n]
        tree[fb] = n - 1
        sch[a, T_LEAF] = j
    elif key == INF and release:
        fb = tree[1]
        n = tree[fb] + 1
        tree[fb] = n
        tree[fb + n] = j
        sch[a, T_LEAF] = -1
        c = sch.shape[0]
    i, kc, k2 = tree[0] + j, key, INF
    n = _NB + _NW * i
    tree[n], tree[n + 1], tree[n + 2] = kc, c, k2
    while i > 1:
        o = _NB + _NW * (i ^ 1)
        ks, s, ks2 = tree[o], tree[o + 1], tree[o + 2]
        take = _t_later(kc, c, ks, s)
        k2 = min(ks2, kc) if take else min(k2, ks)
        c = s if take else c
        kc = ks if take else kc
        i >>= 1
        n = _NB + _NW * i
        tree[n], tree[n + 1], tree[n + 2] = kc, c, k2


@njit(cache=True, inline="always")
def _t_second(tree):
    """The earliest key of the runnable SQs other than the top one: the root's runner-up key
    (kept by every replay, so a turn's limit costs no walk of the top's path)."""
    return tree[_NB + _NW + 2]


@njit(cache=True)
def _ready(sqs, pool, tree, sch, a):
    """SQ ``a`` is ACTIVE: into the tree (or re-keyed there) if it has an SQE to run."""
    if sqs[a, Q_HEAD] < sqs[a, Q_TAIL]:
        _t_set(tree, sch, a, _next_start(sqs, pool, sch, a), True)


@njit(cache=True, inline="always")
def _l_add(sch, lhead, a, li):
    """SQ ``a`` onto waiter list ``li``."""
    h = lhead[li]
    sch[a, L_ON], sch[a, L_NEXT], sch[a, L_PREV] = li, h, -1
    if h >= 0:
        sch[h, L_PREV] = a
    lhead[li] = a


@njit(cache=True, inline="always")
def _l_remove(sch, lhead, a):
    """SQ ``a`` off its waiter list."""
    li, p, n = sch[a, L_ON], sch[a, L_PREV], sch[a, L_NEXT]
    if p >= 0:
        sch[p, L_NEXT] = n
    else:
        lhead[li] = n
    if n >= 0:
        sch[n, L_PREV] = p
    sch[a, L_ON] = -1


@njit(cache=True)
def _build(sqs, pool, sched, tree, sch, lhead, live, nsq):
    """The tree of runnable SQs and the waiter lists, from the SQ table rows of the SQs on the
    live list (the host may have changed any of them since the last run; an SQ off the list
    has nothing to run and waits on nothing). The list is kept to the SQs that are in play:
    each once, parked or active with an SQE to run."""
    n = 0           # leaves
    m = 0           # SQs kept on the list
    for i in range(sched[0]):
        a = live[i]
        if a < 0 or a >= nsq or sch[a, T_LIVE] >= 0:
            continue
        state = sqs[a, Q_STATE]
        if state == S_ACTIVE:
            if sqs[a, Q_HEAD] >= sqs[a, Q_TAIL]:
                continue
            sch[a, T_LEAF] = n
            n += 1
        elif state == S_PARKED:
            on = sqs[a, Q_WAIT]
            _l_add(sch, lhead, a, on if on >= 0 else lhead.shape[0] - 1)
        else:
            continue
        sch[a, T_LIVE] = 1
        live[m] = a
        m += 1
    sched[0] = m
    cap = 1
    while cap < n:
        cap *= 2
    tree[0] = cap
    none = sch.shape[0]
    for j in range(cap):
        o = _NB + _NW * (cap + j)
        tree[o], tree[o + 1], tree[o + 2] = INF, none, INF
    for i in range(m):
        a = live[i]
        j = sch[a, T_LEAF]
        if j >= 0:
            o = _NB + _NW * (cap + j)
            tree[o], tree[o + 1] = _next_start(sqs, pool, sch, a), a
    fb = tree[1]
    tree[fb] = cap - n
    for k in range(cap - n):
        tree[fb + 1 + k] = cap - 1 - k
    _t_rebuild(tree)
