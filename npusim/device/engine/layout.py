"""The engine's tables: the column layout of every array ``run`` works on (SQ table, sync slots,
cond table, engine state and its core pools, body frame, trace rows, the scheduler's buffer), its
return and fault codes, and which opcodes are rare bodies — each defined once, here.

The host (``state.py``, ``runtime/``) and the reference interpreter (``npusim.testing.reference``)
read these names through ``npusim.device.engine``; jitted code freezes them, so this file is one
of ``jitcache.ABI_FILES``.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import sqe as S
from ..kernels import UNIT_DMA, UNIT_SCALAR

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
Q_EXACT = 14        # 1: the SQ never runs ahead (task updates rewrite its rows: SQE_UPDATE), and
                    # every SQE of it is ordered like a synchronization (``loop.py``, run-ahead)
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
B_LABEL_SWITCH = 6
N_BODIES = 7
_OP_BODY = np.full(256, -1, np.int64)   # per opcode byte: its body (B_*), -1 inlined,
_OP_BODY[S.N_OPCODES:] = -2             # -2 not an opcode (F_BAD_OP)
_OP_BODY[S.OP_MEM_WRITE_VALUE] = B_MEM_WRITE_VALUE
_OP_BODY[S.OP_MEM_WAIT_VALUE] = B_MEM_WAIT_VALUE
_OP_BODY[S.OP_STREAM_ACTIVE] = B_STREAM_ACTIVE
_OP_BODY[S.OP_SQE_UPDATE] = B_SQE_UPDATE
_OP_BODY[S.OP_STREAM_SWITCH] = B_STREAM_SWITCH
_OP_BODY[S.OP_LABEL_SWITCH] = B_LABEL_SWITCH
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
E_EXACT = 18        # 1: exact time order (no SQ runs ahead of the others); run-ahead is also off
                    # while E_CONTEND is on (``loop.py``, "Run-ahead")
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
F_LABEL = np.int64(6)   # LABEL_SWITCH to an index with no label set, or to a busy other SQ
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
# private opcodes (run-ahead, ``loop.py``): their effects reach no other SQ but through memory
# (a race unless a synchronization orders it), so an SQ may run them ahead of the others; every
# other opcode (and a MEMCPY with an address mode, which reads pointers) is a synchronization
_OP_PRIV = np.zeros(256, np.bool_)
_OP_PRIV[[S.OP_NOP, S.OP_KERNEL, S.OP_MEMCPY, S.OP_MEMSET]] = True
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
