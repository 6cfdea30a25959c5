"""The device engine: one jitted loop that runs every SQ of a device in simulated time.

State lives in plain arrays owned by ``npusim.device.state.DeviceState`` (their column layouts are
defined below, one block per table):

* ``pool``  — the SQE pool (``SQE_DTYPE`` rows). SQ ``q`` owns rows ``[base, base+depth)`` used as a
  ring: position ``p`` is row ``base + p % depth``. Eager streams keep appending (head and tail only
  grow); a model stream is replayed by resetting its head to 0 when it is activated.
* ``sqs``   — int64 ``[n, Q_COLS]``: per SQ ring bounds, clock, state, what it waits on, its first
  fault. The clock ``Q_TIME`` is the simulated time (ns) at which the SQ is free again.
* ``sync``  — int64 ``[n, Y_COLS]``: event/notify slots (value, time set, number of parked waiters).
* ``models``— CSR arrays (``mptr``, ``msq``): the head SQs that MODEL_EXECUTE activates.
* ``conds``/``cmodels`` — int64 ``[n, CD_COLS]``: one row per cond handle; its sub-models' engine
  model ids are ``cmodels[CD_MBASE:]``.
* ``ctx``/``mem`` — the memory context and arena (``memory.py``); kernels get both.
* ``kaddr``/``kcost`` — the kernel table (``kernels.py``): body address, cost and unit per kernel.
* ``tc``    — the cost vector (``timing.py``).
* ``trace`` — optional preallocated trace rows; ``st`` — the engine state (``E_*``).

**Scheduling** (``run``) is exact in simulated time: the runnable SQ with the earliest next start
runs, and it keeps running while it stays no later than the second earliest (so a single stream
runs in a tight loop). A wait that is not satisfied parks its SQ; the record that satisfies it
un-parks it, and its clock jumps to the record's time. When nothing can run but something is
parked, that is a deadlock: the engine returns ``R_DEADLOCK`` and the host explains it. The
runnable SQs are the leaves of a tournament tree and parked ones are on per-slot waiter lists,
so neither a pick nor a wake scans all SQs. Both live in ``sched``, a buffer the device keeps
between runs, with the list of SQs in play (``live``): each run builds them from that list and
clears them from it when it returns, so a run's fixed cost follows the SQs in play, not the SQs
that exist (idle model SQs of resident graphs, drained streams and their sync slots cost
nothing).

**Semantics** are one small function per opcode (``_op_*``, each documented; ``_execute`` is the
opcode table). An opcode function does the SQE's work and says what happens next (``X_*``): done,
done and parked SQs were woken (the running SQ yields), parked, or faulted.

The engine never decides API errors; it reports device faults (kernel exception, bad address,
unknown opcode, runaway WHILE) by returning ``R_FAULT`` with the SQ and position, and the host maps
them to ACL codes. Every fault leaves the SQ the same way (``_fault_exit``): its clock at the end
of what the faulting SQE was charged, its head past it.

``npusim.testing.reference`` is the same semantics in plain Python (the test oracle), function for
function; a change here is made there too, and ``tests/device/test_engine_reference.py`` compares them.
"""
from __future__ import annotations

import threading

import numpy as np
from llvmlite import ir
from numba import cfunc, njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from . import sqe as S
from .kernels import (KC_BODY_NS, KC_UNIT, UNIT_AIC, UNIT_AICPU, UNIT_DMA, UNIT_SCALAR,
                      call_kernel)
from .memory import C_FAULT, C_FAULT_ADDR, C_FAULT_SIZE, C_REC
from .memview import ACC_R, ACC_W, rec_access, rec_task, rec_unpark, rec_val, to_off, view_at
from .timing import (T_AIC_CORES, T_AICPU_CORES, T_AIV_CORES, T_BW_H2H, T_KERNEL_DEFAULT,
                     T_KERNEL_PER_BLOCK, T_MEMSET_BW, T_WAKEUP)

# ================================================================ tables

# ---- SQ table: sqs, int64 [n, Q_COLS] ----
Q_BASE, Q_DEPTH, Q_HEAD, Q_TAIL, Q_TIME, Q_STATE = 0, 1, 2, 3, 4, 5
Q_WAIT = 6          # what the SQ is parked on: a sync slot, W_MEMORY, or W_NONE
Q_WAIT_SINCE = 7    # simulated time the parked wait began (for the trace)
Q_ERR = 8           # first device fault on this SQ (F_* below), 0 none
Q_ERR_POS = 9       # position of that fault
Q_STOP_ON_FAIL = 10 # 1: skip the SQ's later tasks after a fault (ACL_STOP_ON_FAILURE)
Q_DISPATCH = 11     # per-SQE dispatch cost in ns (eager and model SQs differ)
Q_KIND = 12         # K_EAGER or K_MODEL
Q_DONE = 13         # SQEs executed (statistics)
Q_COLS = 16
# Q_STATE values
S_FREE, S_IDLE, S_ACTIVE, S_PARKED = 0, 1, 2, 3
# Q_KIND values
K_EAGER, K_MODEL = 0, 1
# Q_WAIT values that are not sync slots (the host reads any negative value as "not a slot")
W_NONE = -1         # not waiting
W_MEMORY = -2       # a MEM_WAIT_VALUE: woken by any memory write

# ---- sync slots: sync, int64 [n, Y_COLS] ----
Y_VAL, Y_TIME, Y_WAITERS = 0, 1, 2      # value, time it was last set, parked waiters
Y_COLS = 3

# ---- cond table: conds, int64 [n, CD_COLS] (one row per cond handle) ----
CD_ADDR = 0         # device address of the cond word (an int64)
CD_TYPE = 1         # COND_IF / COND_WHILE / COND_SWITCH
CD_N = 2            # number of branches (sub-models)
CD_MBASE = 3        # index into cmodels of branch 0's engine model id
CD_ITER = 4         # WHILE: iterations of the current loop
CD_INLOOP = 5       # WHILE: 1 while COND_FIRST is reached by the JumpBack
CD_MAX = 6          # WHILE: the iteration bound (F_RUNAWAY when reached)
CD_LAST = 7         # the word value last read
CD_TAKEN = 8        # the branch last taken, -1 skip
CD_COLS = 10
COND_IF, COND_WHILE, COND_SWITCH = 0, 1, 2
# a cond task's SQEs: COND_FIRST at p, COND_NOTIFY_WAIT at p + COND_WAIT_AT, and for a WHILE
# COND_JUMP_BACK at p + COND_JUMP_AT (which jumps back by COND_JUMP_AT to COND_FIRST)
COND_WAIT_AT, COND_JUMP_AT = 1, 2

# ---- rare opcodes: bodies compiled at their first use ----
# Every opcode function is compiled with the engine, once per process from an empty cache (about
# 0.3-0.8 s each); the rare ones below are not: each is a cfunc (``_BODY_SIG``) that ``run`` calls
# by its address in st[E_BODY + B_*], as it calls kernels, so a process that never uses one never
# compiles it. The body finds the engine's arrays and the SQE's operands in the frame words
# (E_FRAME + F_*) and leaves its results there. A hot opcode stays inlined: a body call costs
# the frame's stores and the views' rebuild (about 20 ns), nothing a task update, a cascade hop
# or a host-function handshake notices, too much for a WHILE iteration (COND_*).
B_MEM_WRITE_VALUE, B_MEM_WAIT_VALUE, B_STREAM_ACTIVE, B_SQE_UPDATE, B_STREAM_SWITCH = range(5)
B_MEMCPY_MODE = 5           # a MEMCPY with an address mode in its flag (sqe.MEMCPY_MODES)
N_BODIES = 6
_OP_BODY = np.full(256, -1, np.int64)   # per opcode byte: its body (B_*), -1 inlined,
_OP_BODY[S.N_OPCODES:] = -2             # -2 not an opcode (F_BAD_OP)
_OP_BODY[S.OP_MEM_WRITE_VALUE] = B_MEM_WRITE_VALUE
_OP_BODY[S.OP_MEM_WAIT_VALUE] = B_MEM_WAIT_VALUE
_OP_BODY[S.OP_STREAM_ACTIVE] = B_STREAM_ACTIVE
_OP_BODY[S.OP_SQE_UPDATE] = B_SQE_UPDATE
_OP_BODY[S.OP_STREAM_SWITCH] = B_STREAM_SWITCH
_OP_BODY[S.OP_MEMCPY] = -3              # inlined, but its address modes are B_MEMCPY_MODE
# frame words (st[E_FRAME + F_*]): the arrays (address, rows) a body rebuilds, the SQE and its
# SQ, the times; then what the body did (_execute's results)
(F_POOL, F_NPOOL, F_SQS, F_NSQS, F_TREE, F_NTREE, F_SCH, F_LHEAD, F_NLHEAD, F_MEM, F_NMEM, F_CTX,
 F_NCTX, F_TC, F_NTC, F_Q, F_POS, F_START, F_DUR, F_REC) = range(20)
F_X, F_NXT, F_VAL, F_TSTART = range(20, 24)     # start and duration: back in F_START, F_DUR
F_WORDS = 24

# ---- engine state: st, int64 [E_COLS] ----
E_STATUS = 0        # the last R_* code
E_SQ, E_POS = 1, 2  # R_FAULT: the SQ and position; R_DEADLOCK: a parked SQ (E_SQ)
E_INFO, E_INFO2 = 3, 4      # R_FAULT: kind-specific details (address and size, kernel and rc)
E_TRACE_ON, E_TRACE_N = 5, 6
E_STEPS = 7         # SQEs executed
E_NOW = 8           # latest end time of any SQE
E_NSQ = 9           # rows of the SQ table in use
E_STOP_KIND, E_STOP_A, E_STOP_B = 10, 11, 12    # stop condition (STOP_*) and its operands
E_HORIZON = 13      # do not start an SQE later than this
E_MEM_WAITERS = 14  # SQs parked on W_MEMORY
E_FKIND = 15        # R_FAULT: the fault kind (F_*)
E_STEP_LIMIT = 16   # stop (R_STEPS) once E_STEPS reaches it; 0 = no limit (progress reports)
E_CONTEND = 17      # 1: kernels of all SQs share the device's cores (the pools below), 0: free
E_POOL = 24         # the core pools (contention, docs/timing.md): per unit (P_AIC, P_AIV, P_AICPU)
                    # P_STRIDE words from E_POOL + unit * P_STRIDE: the cores in the pool (n),
                    # the ring's head, then n slots: the time each core is free from, ascending
                    # from the head on (a sorted ring, _take_cores)
P_MAX = 128         # cores a pool holds (a unit with more shares 128)
P_STRIDE = P_MAX + 2
P_AIC, P_AIV, P_AICPU = 0, 1, 2
E_BODY = E_POOL + 3 * P_STRIDE  # N_BODIES words: the address of each rare opcode's body (B_*
                    # above), 0 while it is not built (run returns R_NEED_BODY before the SQE)
E_NEED = E_BODY + N_BODIES      # R_NEED_BODY: the body (B_*) the SQE needs
E_RESUME, E_RESUME_LIMIT = E_NEED + 1, E_NEED + 2   # R_NEED_BODY: 1 + the SQ whose turn it broke
                    # off, and that turn's limit: the next run goes on with that turn (0: none)
E_FRAME = E_NEED + 3            # F_WORDS words: a body call's operands, then its results
E_COLS = E_FRAME + F_WORDS      # (the words from E_BODY on are the engine's own: the reference
                                # keeps none of them)
# stop conditions (E_STOP_KIND): SQ E_STOP_A's head reaches E_STOP_B; slot E_STOP_A's value
# reaches E_STOP_B
STOP_NONE, STOP_SQ_POS, STOP_SLOT = 0, 1, 2

# ---- trace rows ----
TRACE_DTYPE = np.dtype([("sq", np.int32), ("op", np.uint8), ("unit", np.uint8),
                        ("blocks", np.uint16), ("task_id", np.uint32), ("pos", np.int32),
                        ("start", np.int64), ("end", np.int64), ("a0", np.int64),
                        ("val", np.int64)])   # cond tasks: the branch taken (-1 skip); value

# device fault kinds (the host maps them to ACL codes). np.int64, not int: numba compiles a plain
# (not inlined) function once per distinct *literal* argument, and a jitted function sees an int
# constant as a literal; typed constants (and ``_WORD``) keep one compiled ``_fault``,
# ``_range_ok`` and ``rec_access`` whatever their callers pass.
F_NONE, F_KERNEL_TRAP, F_KERNEL_OOB, F_BAD_ADDRESS, F_BAD_OP, F_RUNAWAY = map(np.int64, range(6))
_WORD = np.int64(8)             # bytes of a pointer word or a cond word

# return codes of run (np.int64 for the reason given at F_*: ``run`` hands them to ``_finish``,
# which would otherwise be compiled once per code, five times; the host compares them with ints)
R_IDLE, R_HORIZON, R_STOPPED, R_DEADLOCK, R_FAULT, R_TRACE_FULL, R_STEPS = map(np.int64, range(7))
R_NEED_BODY = np.int64(7)   # a rare opcode's body is not built: st[E_NEED] is its B_* (the host
                            # builds it, ``provide``, and runs again; the SQE has not run)
R_GO = np.int64(-1)     # (internal) no reason to return
R_NONE = np.int64(-2)   # (internal) nothing runnable: R_IDLE, or R_DEADLOCK when an SQ is parked

# what an opcode function says happens next
X_DONE = 0          # executed; the SQ may go on with its next SQE
X_YIELD = 1         # executed and parked SQs were woken: the SQ yields so they run in time order
X_PARK = 2          # a wait not satisfied: the SQ is parked, the SQE not executed
X_FAULT = 3         # a device fault was reported (_fault): the run returns R_FAULT

INF = np.int64(2 ** 62)

_OP_UNIT = np.array([UNIT_SCALAR] * S.N_OPCODES, np.uint8)    # trace unit (kernels: their own)
_OP_UNIT[S.OP_MEMCPY] = UNIT_DMA
_OP_UNIT[S.OP_MEMSET] = UNIT_DMA
_BYTE, _MEMCPY_KIND = 0xFF, 3         # memset value mask; SQE flag bits of the memcpy kind
_AHEAD = 4          # SQEs of an SQ prefetched ahead of its head when it is re-keyed

# ---- the scheduler's own structures: sched, int64, kept by the device between runs ----
# sched holds: word 0 the length of the live list, then sch [len(sqs), SCH_COLS], lhead
# [len(sync) + 1], live [2 len(sqs)] and the tree (sched_layout gives where each starts). Between runs
# every lhead word and every SQ's L_ON, T_LEAF and T_LIVE are -1 ("at rest"): a run sets what it
# uses for the SQs on the live list and puts those back (_finish), so nothing costs per SQ that
# is not in play.
# tree: int64 [_NB + (2 * _NW + 1) * capmax + 1], capmax the power of two >= len(sqs): a tournament
# (winner) tree over the runnable SQs, one leaf each. tree[0] = cap, the leaves in use (a power
# of two, doubled when they run out); node i in 1 .. 2cap-1 is the _NW words from
# tree[_NB + _NW * i]: (key, SQ) of the SQ winning its subtree, its key the SQ's next start, then
# the earliest key of the rest of the subtree (the runner-up's; the root's is a turn's limit)
# (leaf cap + j: the SQ on leaf j, or (INF, len(sqs)), and INF for the rest); tree[1] is where
# the free-leaf stack starts: its size, then the free leaves.
_NB = 2
_NW = 4             # words per node: key, SQ, runner-up key, one unused (32-byte nodes)
# sch: int64 [len(sqs), SCH_COLS], per SQ:
L_ON = 0            # the waiter list it is on (a sync slot, or the memory list), -1 none
L_NEXT, L_PREV = 1, 2       # its neighbours on that list, -1 none
T_LEAF = 3          # its leaf in the tree, -1 none
T_ROW = 4           # while it is in the tree: the pool row of its head (set with its key)
T_LIVE = 5          # 1 while it is on this run's live list, -1 not
SCH_COLS = 6
# lhead: int64 [len(sync) + 1]: the first SQ parked on each slot, then on W_MEMORY; -1 none
# live: int64 [2 len(sqs)], sched[0] of them used: the SQ ids a run considers. When a run returns
# they are the SQs in play (each once); the host adds the SQs it pushed to or made since
# (DeviceState._touched), and the next run drops duplicates and the SQs that have nothing to do.
SCHED_SCH = 1       # sched word where sch starts (word 0: the live list's length)


@njit(cache=True)
def sched_layout(rows, slots):
    """Where sched's parts start for an SQ table of ``rows`` rows and ``slots`` sync slots:
    (sch, lhead, live, tree, the buffer's length in words), and the tree's capmax. The one
    definition of the layout (``run`` and ``DeviceState`` both call it)."""
    capmax = 1
    while capmax < rows:
        capmax *= 2
    o_sch = SCHED_SCH
    o_lhead = o_sch + rows * SCH_COLS
    o_live = o_lhead + slots + 1
    o_tree = o_live + 2 * rows
    return o_sch, o_lhead, o_live, o_tree, o_tree + _NB + (2 * _NW + 1) * capmax + 1, capmax


# ---- old names, kept while other modules move to the ones above ----
K_ADDR, K_TYPE, K_N, K_MBASE, K_ITER, K_INLOOP, K_MAX, K_LAST, K_TAKEN = range(9)
K_COLS = CD_COLS


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
    return X_DONE, pos + 1, k


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
    return X_DONE, sqs[q, Q_TAIL], np.int64(1)


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
    return _answer(st, X_DONE, start, dur, pos + 1, 0, start)


def _b_sqe_update(stp):
    e, pool, sqs, st, tree, sch, lhead, mem, ctx, tc, q, pos, start, dur, rec_on = _frame(stp)
    _op_sqe_update(e, sqs, pool, tree, sch)
    return _answer(st, X_DONE, start, dur, pos + 1, 0, start)


def _b_stream_switch(stp):
    e, pool, sqs, st, tree, sch, lhead, mem, ctx, tc, q, pos, start, dur, rec_on = _frame(stp)
    x, nxt, val = _op_stream_switch(e, sqs, pool, st, tree, sch, lhead, q, pos, start + dur, mem,
                                    ctx, rec_on)
    return _answer(st, x, start, dur, nxt, val, start)


def _b_memcpy_mode(stp):
    e, pool, sqs, st, tree, sch, lhead, mem, ctx, tc, q, pos, start, dur, rec_on = _frame(stp)
    x, dur = _op_memcpy_mode(e, sqs, pool, st, tree, sch, lhead, q, pos, dur, mem, ctx, tc,
                             rec_on)
    return _answer(st, x, start, dur, pos + 1, 0, start)


_BODIES = (_b_mem_write_value, _b_mem_wait_value, _b_stream_active, _b_sqe_update,
           _b_stream_switch, _b_memcpy_mode)     # by B_*


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
    """Prefetch the row _AHEAD SQEs after ``row`` in its ring."""
    r = row + _AHEAD
    if r >= base + depth:
        r -= depth
    _prefetch(pool.ctypes.data + 64 * r)


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
        while pos < tail:
            e = pool[row]
            start = max(now, e.t_submit)
            if start > limit and not first:
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
        key, release = later, True  # the common turn end: its next start is known already
        if later >= 0:
            _prefetch_ahead(pool, row, base, depth)
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
