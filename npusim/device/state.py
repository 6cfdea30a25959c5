"""One simulated device: the arrays the engine runs on, and the host-side bookkeeping around them.

``DeviceState`` hands out SQ rings (slices of the SQE pool), sync slots (events, notifies) and model
head lists; appends SQEs; and runs the engine up to a horizon or a stop condition, growing the
trace buffer and logging device faults as it goes. It knows nothing about ACL rules: those live in
``npusim.runtime``.
"""
from __future__ import annotations

import mmap
import os
import time
from dataclasses import dataclass

import numpy as np

from . import engine as E
from . import launchjit as LJ
from .kernels import TABLE
from .memory import MAP_NORESERVE as _MAP_NORESERVE, Memory, may_reserve as _may_reserve
from .sqe import OP_KERNEL, SQE_DTYPE, SQE_STRUCT
from .timing import cost_vector
from ..progress import Progress

PROGRESS_STEPS = 4_000_000      # the engine returns after this many SQEs so a bar can move
_PACK_INTO = SQE_STRUCT.pack_into
_UNPACK_FROM = SQE_STRUCT.unpack_from    # (op, flag, blocks, task_id, a0 ... a5, t_submit)
_RESUMED = frozenset((E.R_FAULT, E.R_STEPS, E.R_TRACE_FULL, E.R_NEED_BODY))
"""Engine returns after which ``DeviceState.run`` resumes the run (the others end it)."""
_Y_COLS = E.Y_COLS
_ZERO_SLOT = memoryview(bytes(8 * E.Y_COLS)).cast("q")     # one sync row of zeros
_ZERO_RING = memoryview(bytes(8 * LJ.R_COLS)).cast("q")    # one rings row of zeros
_ZERO_MROW = memoryview(bytes(8 * LJ.M_COLS)).cast("q")    # one mseq row of zeros
_R_COLS, _R_BASE, _R_DEPTH, _R_TAIL, _R_STAGED = (LJ.R_COLS, LJ.R_BASE, LJ.R_DEPTH, LJ.R_TAIL,
                                                 LJ.R_STAGED)
_QUIET_CODES = (int(E.R_IDLE), int(E.R_DEADLOCK))
_Y_VAL, _Y_TIME, _Y_WAITERS = int(E.Y_VAL), int(E.Y_TIME), int(E.Y_WAITERS)
_Q_COLS, _Q_STATE, _Q_WAIT = int(E.Q_COLS), int(E.Q_STATE), int(E.Q_WAIT)
_S_PARKED, _S_ACTIVE = int(E.S_PARKED), int(E.S_ACTIVE)


def _words(a: np.ndarray) -> memoryview:
    """The int64 words of C-contiguous array ``a``, flat (read and written as Python ints)."""
    return memoryview(a).cast("B").cast("q")


CHECK_SCHED = "NPUSIM_CHECK_SCHED"
"""Environment variable: ``1`` checks before every engine run of a device made after it is set
that the live list holds every SQ in play and that the scheduler structures are at rest
(``tests/conftest.py`` sets it; O(SQs) a run)."""

RUNAWAY_WALL_S = 1.0            # a WHILE spinning this long (wall) on an unchanged word is stopped

POOL_RESERVE = 1 << 33
"""Bytes of address space a device reserves for its SQE pool (128 M SQEs). The pool is a view of
the first rows of that mapping and grows by taking a longer view: nothing is copied or moved, and
only the pages SQEs were written to are memory. (Growing a numpy array in place, ``resize``, cost
1.4-2.2 s on the way to a 10 M-task graph on this machine: each step remapped or copied the whole
pool.) Not made where the reservation would be charged in full (strict overcommit,
``vm.overcommit_memory`` 2) or could exhaust a limit on the address space (``RLIMIT_AS``); there,
and past the reservation, the pool is an array that grows in place by a quarter."""
_HUGE_FROM = 4 << 20        # huge pages from 4 MiB on, as numpy's own large arrays (a small
                            # device's first rows stay on small pages: not 2 MiB per device)


def _pool_mapping():
    """An anonymous private mapping of POOL_RESERVE bytes (zero pages until written), or None."""
    if POOL_RESERVE <= 0 or not _may_reserve():
        return None
    try:
        m = mmap.mmap(-1, POOL_RESERVE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
                      | _MAP_NORESERVE)
    except (OSError, ValueError, OverflowError, AttributeError):
        return None
    if POOL_RESERVE > _HUGE_FROM:
        try:                                # fewer faults and TLB misses on a large pool
            m.madvise(mmap.MADV_HUGEPAGE, _HUGE_FROM, POOL_RESERVE - _HUGE_FROM)
        except (OSError, ValueError, AttributeError):
            pass
    return m


@dataclass
class Fault:
    """A device fault reported by the engine (kernel exception, bad address, ...)."""
    sq: int
    pos: int
    kind: int
    info: int
    info2: int
    op: int
    time: int
    kernel: int = -1     # kernel id when the faulting task is a kernel


class DeviceState:
    def __init__(self, profile, dev_size: int, host_size: int, trace_capacity: int = 1 << 16,
                 hbm_size: int | None = None):
        self.profile = profile
        self.mem = Memory(dev_size, host_size, hbm_size)
        self._pool_map = _pool_mapping()        # the pool's reserved pages (POOL_RESERVE)
        self.pool = np.zeros(0, SQE_DTYPE)
        # the compiled launch path's arrays (launchjit.py): per-SQ ring bookkeeping (``rings``:
        # the staged tail, a user stream's room and task ids, a capture stream's counts), per-
        # model capture order (``mseq``), and the directory of their addresses (``jdir``) the
        # jitted calls read them through; reserved (zero pages until used), re-pointed if grown
        self.rings = np.zeros((LJ.SQ_RESERVE, LJ.R_COLS), np.int64)
        self._rv = _words(self.rings)           # its words as Python ints (the properties)
        self.mseq = np.zeros((LJ.MODEL_RESERVE, LJ.M_COLS), np.int64)
        self._mv = _words(self.mseq)
        self._free_mrows: list[int] = []
        self.nmrows = 0                         # mseq rows handed out (census: "model rows")
        self.jdir = np.zeros(LJ.J_COLS, np.int64)
        self.jaddr = int(self.jdir.ctypes.data)
        timing = profile.timing
        self.jdir[LJ.J_LAUNCH_NS] = timing.host_kernel_launch_ns
        self.jdir[LJ.J_DOORBELL_NS] = timing.doorbell_ns
        LJ.STATES[self.jaddr] = self
        self._grow_pool(1 << 14)
        self.pool_used = 0
        self._staged: dict[int, None] = {}      # SQs with staged rows (tails in rings R_TAIL)
        self._free_rings: dict[int, list[int]] = {}     # depth -> free bases
        self.sqs = np.zeros((64, E.Q_COLS), np.int64)
        self._free_sqs: list[int] = []
        self.freed_dispatch: dict[int, int] = {}   # freed SQ -> its dispatch cost (trace rows)
        self.sync = np.zeros((256, E.Y_COLS), np.int64)
        self._syncv = _words(self.sync)     # its words, flat: a slot's row is zeroed as a slice
        self.nslots = 0
        self._free_slots: list[int] = []
        self.mptr = np.zeros(1, np.int64)
        self.msq = np.zeros(0, np.int64)
        self.conds = np.zeros((0, E.CD_COLS), np.int64)
        self.cmodels = np.zeros(0, np.int64)
        self.st = np.zeros(E.E_COLS, np.int64)
        self._stv = memoryview(self.st)     # the same words, read and written as Python ints
        # the engine's scheduler structures, at rest between runs (engine/layout.py "sched"), laid out
        # for the SQ table and sync table sizes in _sched_for; _touched: SQs pushed to (or
        # made) since the last run, for its live list
        self.sched = np.zeros(0, np.int64)
        self._sched_for = (-1, -1)
        self._livev = memoryview(self.sched)
        self._touched: set[int] = set()
        # SQs pushed to since a wait on every stream last saw them done (``unseen``)
        self._unseen: set[int] = set()
        self._wake_hint: dict[int, int] = {}    # slot -> the SQ signal_many woke there last
        self.check_sched = os.environ.get(CHECK_SCHED) == "1"
        self.trace = np.zeros(0, E.TRACE_DTYPE)
        self._trace_capacity = trace_capacity
        self.trace_max_rows = 4 << 20       # 4M rows (192 MiB); later SQEs are not recorded
        self.trace_dropped = False
        self.tc = cost_vector(profile)
        self.faults: list[Fault] = []   # logged since the host last took them (take_faults)
        self.access_log = None          # recording.AccessLog while accesses are recorded
        self.runaway_wall_s = RUNAWAY_WALL_S   # None: only the iteration bound stops a WHILE
        self.runaway_stopped: dict = {}        # cond -> (iterations, its real bound): stopped
                                               # by the wall-time watchdog (read by diagnoses)

    def take_faults(self) -> list[Fault]:
        """The faults logged since the last call, handed over and dropped from the log: the log
        holds only what the host has not seen, so a program that faults in every replay keeps
        its memory flat (``runtime.device.Device._after_run`` takes them after every run)."""
        faults, self.faults = self.faults, []
        return faults

    # ---- tracing ----
    def set_tracing(self, on: bool) -> None:
        self.st[E.E_TRACE_ON] = 1 if on else 0
        if on and len(self.trace) == 0:
            self.trace = np.zeros(self._trace_capacity, E.TRACE_DTYPE)

    def trace_rows(self) -> np.ndarray:
        return self.trace[:min(int(self.st[E.E_TRACE_N]), len(self.trace))]

    def clear_trace(self) -> None:
        """Forget the recorded trace rows (the buffer is kept; recording goes on)."""
        self.st[E.E_TRACE_N] = 0
        self.trace_dropped = False

    # ---- core contention (docs/timing.md "Contention") ----
    @property
    def contention(self) -> bool:
        """Kernels of all SQs share the device's cores (a pool per unit), or overlap freely."""
        return bool(self.st[E.E_CONTEND])

    def set_contention(self, on: bool) -> None:
        """Switch the shared core pools on or off (no change when already so); a switch frees
        every core (a pool is only kept while contention is on)."""
        if bool(self.st[E.E_CONTEND]) != bool(on):
            self.st[E.E_CONTEND] = 1 if on else 0
            self.reset_cores()

    # ---- run-ahead (docs/architecture.md §5) ----
    @property
    def exact_order(self) -> bool:
        """Exact time order forced: no SQ runs ahead of the others between synchronizations
        (run-ahead is off anyway while contention is on)."""
        return bool(self.st[E.E_EXACT])

    def set_exact_order(self, on: bool) -> None:
        self.st[E.E_EXACT] = 1 if on else 0

    def reset_cores(self) -> None:
        """Every core of every pool free (a device reset)."""
        self.st[E.E_POOL:E.E_BODY] = 0

    # ---- pool and SQs ----
    def _pool_alloc(self, depth: int) -> int:
        free = self._free_rings.get(depth)
        if free:
            return free.pop()
        base = self.pool_used
        if base + depth > len(self.pool):
            self._grow_pool(base + depth)
        self.pool_used = base + depth
        return base

    def _grow_pool(self, need: int) -> None:
        """At least ``need`` rows: a longer view of the reserved pages (doubling, so few views
        are made; rows written stay where they are, a view taken before still reads them, and
        rows not yet written cost no memory), else the array grows in place by a quarter."""
        m = self._pool_map
        if m is not None:
            rows = min(max(need, 2 * len(self.pool)), len(m) // SQE_DTYPE.itemsize)
            if rows >= need:
                self.pool = np.frombuffer(m, SQE_DTYPE, count=rows)
                self.repoint()
                return
            self._pool_map = None               # past the reservation: an array of its own
            self.pool = self.pool.copy()
        self.pool.resize(max(need, len(self.pool) + len(self.pool) // 4), refcheck=False)
        self.repoint()

    def repoint(self) -> None:
        """Point the directory (``jdir``) at the pool, ``rings``, ``mseq`` and ``CTL`` as they are
        now: after any of them was made anew or grown (the jitted calls read them through it)."""
        j = self.jdir
        j[LJ.J_POOL], j[LJ.J_POOL_ROWS] = self.pool.ctypes.data, len(self.pool)
        j[LJ.J_RINGS], j[LJ.J_RINGS_ROWS] = self.rings.ctypes.data, len(self.rings)
        j[LJ.J_MSEQ], j[LJ.J_MSEQ_ROWS] = self.mseq.ctypes.data, len(self.mseq)
        j[LJ.J_CTL] = LJ.CTL.ctypes.data

    def alloc_mrow(self) -> int:
        """A zeroed ``mseq`` row for a model (its capture order counters; no last stream)."""
        if self._free_mrows:
            m = self._free_mrows.pop()
        else:
            m = self.nmrows
            if m >= len(self.mseq):
                self.mseq = np.concatenate([self.mseq, np.zeros_like(self.mseq)])
                self._mv = _words(self.mseq)
                self.repoint()
            self.nmrows += 1
        i = m * LJ.M_COLS
        mv = self._mv
        mv[i:i + LJ.M_COLS] = _ZERO_MROW
        mv[i + LJ.M_LAST] = -1
        return m

    def free_mrow(self, m: int) -> None:
        self._free_mrows.append(m)

    def mrows_in_use(self) -> int:
        return self.nmrows - len(self._free_mrows)

    def alloc_sq(self, depth: int, kind: int = E.K_EAGER, dispatch_ns: int = 0) -> int:
        """A new SQ with a ring of ``depth`` SQEs; eager SQs start active, model SQs idle."""
        if self._free_sqs:
            q = self._free_sqs.pop()
        else:
            q = int(self.st[E.E_NSQ])
            if q >= len(self.sqs):
                self.sqs = np.concatenate([self.sqs, np.zeros_like(self.sqs)])
            if q >= len(self.rings):
                self.rings = np.concatenate([self.rings, np.zeros_like(self.rings)])
                self._rv = _words(self.rings)
                self.repoint()
            self.st[E.E_NSQ] = q + 1
        i = q * LJ.R_COLS
        self._rv[i:i + LJ.R_COLS] = _ZERO_RING
        row = self.sqs[q]
        row[:] = 0
        row[E.Q_BASE], row[E.Q_DEPTH] = self._pool_alloc(depth), depth
        row[E.Q_STATE] = E.S_ACTIVE if kind == E.K_EAGER else E.S_IDLE
        row[E.Q_KIND], row[E.Q_DISPATCH], row[E.Q_WAIT] = kind, dispatch_ns, E.W_NONE
        self._touched.add(q)
        return q

    def grow_sq(self, q: int, depth: int) -> None:
        """Move a never-wrapped SQ (a capture stream, written from position 0) to a larger ring:
        capture streams start small and grow, so a thousand tiny sub-models don't each hold a
        32768-SQE ring."""
        self.flush(q)
        old_base, old_depth = int(self.sqs[q, E.Q_BASE]), int(self.sqs[q, E.Q_DEPTH])
        n = int(self.sqs[q, E.Q_TAIL])
        base = self._pool_alloc(depth)
        self.pool[base:base + n] = self.pool[old_base:old_base + n]
        self._free_rings.setdefault(old_depth, []).append(old_base)
        self.sqs[q, E.Q_BASE], self.sqs[q, E.Q_DEPTH] = base, depth

    def free_sq(self, q: int) -> None:
        self._unstage(q)
        self._unseen.discard(q)
        row = self.sqs[q]
        self._free_rings.setdefault(int(row[E.Q_DEPTH]), []).append(int(row[E.Q_BASE]))
        self.freed_dispatch[q] = int(row[E.Q_DISPATCH])     # its trace rows outlive it
        row[:] = 0
        row[E.Q_STATE] = E.S_FREE
        self._free_sqs.append(q)

    def discard(self, q: int, now: int) -> int:
        """Drop the SQEs of SQ ``q`` that have not started (a stream abort or forced destroy):
        staged rows are written first, then the head jumps to the tail; a parked wait leaves its
        waiter count, and a task still running at ``now`` ends there. Returns how many SQEs
        were dropped. (The engine rebuilds its waiter lists at every run from this table.)"""
        self.flush(q)
        row = self.sqs[q]
        dropped = int(row[E.Q_TAIL] - row[E.Q_HEAD])
        if row[E.Q_STATE] == E.S_PARKED:
            w = int(row[E.Q_WAIT])
            if w >= 0:
                self.sync[w, E.Y_WAITERS] = max(0, int(self.sync[w, E.Y_WAITERS]) - 1)
            elif w == E.W_MEMORY:
                self.st[E.E_MEM_WAITERS] = max(0, int(self.st[E.E_MEM_WAITERS]) - 1)
            row[E.Q_STATE] = E.S_ACTIVE if row[E.Q_KIND] == E.K_EAGER else E.S_IDLE
        row[E.Q_WAIT] = E.W_NONE
        row[E.Q_HEAD] = row[E.Q_TAIL]
        if row[E.Q_TIME] > now:
            row[E.Q_TIME] = now
        return dropped

    def clear_sq(self, q: int) -> None:
        """Empty an idle model SQ (head and tail back to 0, staged rows dropped): its tasks are
        gone and new ones are written from position 0 (aclrtPersistentTaskClean)."""
        self._unstage(q)
        self.sqs[q, E.Q_HEAD] = self.sqs[q, E.Q_TAIL] = 0

    def tail(self, q: int) -> int:
        """Position after the last SQE pushed on ``q`` (staged ones included)."""
        i = q * _R_COLS
        if self._rv[i + _R_STAGED]:
            return self._rv[i + _R_TAIL]
        return int(self.sqs[q, E.Q_TAIL])

    def pending(self, q: int) -> int:
        return self.tail(q) - int(self.sqs[q, E.Q_HEAD])

    def row_of(self, q: int, pos: int) -> int:
        return int(self.sqs[q, E.Q_BASE] + pos % self.sqs[q, E.Q_DEPTH])

    def push(self, q: int, op: int, t_submit: int, a0=0, a1=0, a2=0, a3=0, a4=0, a5=0, flag=0,
             blocks=0, task_id=0) -> int:
        """Append one SQE at the tail of SQ ``q`` (the caller made sure the ring has room).

        The row is packed straight into its ring slot (one ``struct.pack_into``: a numpy row
        write per task would cost more than the rest of a launch call); only the new tail is
        staged, and ``flush`` publishes it before every engine run (or when a reader needs it).
        The engine never reads a row at or past the published tail, and the slot is free (the
        caller's room check), so an unpublished row is invisible to it."""
        if op == OP_KERNEL:                     # a lazy kernel body is built before its SQE
            entries = TABLE.entries             # (its entry has no func until then; an id
            if not 0 <= a0 < len(entries) or entries[a0].func is None:   # outside: a no-op)
                TABLE.ensure(a0)
        rv = self._rv
        i = q * _R_COLS
        if not rv[i + _R_STAGED]:
            self.stage(q)
        pos = rv[i + _R_TAIL]
        _PACK_INTO(self.pool, (rv[i + _R_BASE] + pos % rv[i + _R_DEPTH]) << 6, op, flag, blocks,
                   task_id, a0, a1, a2, a3, a4, a5, t_submit)
        rv[i + _R_TAIL] = pos + 1
        return pos

    def stage(self, q: int) -> int:
        """Stage SQ ``q`` (its ``rings`` row takes base, depth and tail from its SQ table row;
        nothing when it is staged already): pushes pack their row at ``base + tail % depth`` and
        advance the staged tail. Returns the row's first word index in ``_rv``."""
        rv = self._rv
        i = q * _R_COLS
        if rv[i + _R_STAGED]:
            return i
        row = self.sqs[q]
        rv[i + _R_BASE], rv[i + _R_DEPTH], rv[i + _R_TAIL] = (
            int(row[E.Q_BASE]), int(row[E.Q_DEPTH]), int(row[E.Q_TAIL]))
        rv[i + _R_STAGED] = 1
        self._staged[q] = None
        self._touched.add(q)                    # its new rows may make it runnable
        self._unseen.add(q)                     # and they may move its clock
        return i

    def _unstage(self, q: int) -> None:
        """Drop SQ ``q``'s staged tail (not published)."""
        if self._staged.pop(q, 0) is None:
            self._rv[q * _R_COLS + _R_STAGED] = 0

    def flush(self, only: int | None = None) -> None:
        """Publish the staged tails (all SQs, or one): O(SQs pushed to since the last flush),
        the rows are already in their rings."""
        if not self._staged:
            return
        rv = self._rv
        if only is None:
            staged, self._staged = self._staged, {}
            sqs = self.sqs
            for q in staged:
                i = q * _R_COLS
                sqs[q, E.Q_TAIL] = rv[i + _R_TAIL]
                rv[i + _R_STAGED] = 0
        elif self._staged.pop(only, 0) is None:
            i = only * _R_COLS
            self.sqs[only, E.Q_TAIL] = rv[i + _R_TAIL]
            rv[i + _R_STAGED] = 0

    # ---- sync slots ----
    def alloc_slot(self) -> int:
        """A zeroed sync slot (every capture record takes one: a memoryview slice write, not a
        numpy row assignment, which costs three times as much)."""
        if self._free_slots:
            s = self._free_slots.pop()
        else:
            s = self.nslots
            if s >= len(self.sync):
                self.sync = np.concatenate([self.sync, np.zeros_like(self.sync)])
                self._syncv = _words(self.sync)          # the only place ``sync`` is replaced
            self.nslots += 1
        i = s * _Y_COLS
        self._syncv[i:i + _Y_COLS] = _ZERO_SLOT
        return s

    def free_slot(self, s: int) -> None:
        i = s * _Y_COLS
        self._syncv[i:i + _Y_COLS] = _ZERO_SLOT
        self._free_slots.append(s)

    # ---- census (npusim.census) ----
    def signal(self, slot: int, t: int, value: int = 1) -> None:
        """A record of ``slot`` made elsewhere (another device's notify, ``runtime/peer.py``)
        at simulated time ``t``: the slot holds at least ``value`` from ``t`` on, and the SQs
        parked on it run again at their next run (each re-executes its wait, which ends no
        earlier than ``t`` plus the wake-up, as when a record on this device woke it). The
        parked SQs are on the live list (a run leaves every SQ in play there): O(SQs in
        play). One slot of :meth:`signal_many`."""
        self.signal_many((slot,), (t,), value)

    def signal_many(self, slots, times, value: int = 1) -> None:
        """``signal`` of each of ``slots`` (distinct ints) at the matching ``times``, for all of
        them at once (``runtime/peer.py`` ``pump`` delivers a batch of records to one device
        at a time). Python ints over the tables' words: a few slots and SQs each time, where
        numpy's per-call cost would dominate. A slot one SQ parked on (``Y_WAITERS`` 1) whose
        SQ is the one woken there last time (``_wake_hint``, checked: parked on that slot)
        wakes it without the pass over the SQs in play."""
        syncv = self._syncv
        woken: dict = {}
        for s, t in zip(slots, times):
            i = s * _Y_COLS
            if value > syncv[i + _Y_VAL]:
                syncv[i + _Y_VAL] = value
            syncv[i + _Y_TIME] = t
            w = syncv[i + _Y_WAITERS]
            if w > 0:
                syncv[i + _Y_WAITERS] = 0
                woken[s] = w
        if not woken:
            return
        sqv = _words(self.sqs)
        hint = self._wake_hint
        rest = set()
        for s, w in woken.items():
            q = hint.get(s, -1) if w == 1 else -1
            if q >= 0:
                i = q * _Q_COLS
                if sqv[i + _Q_STATE] == _S_PARKED and sqv[i + _Q_WAIT] == s:
                    sqv[i + _Q_STATE] = _S_ACTIVE
                    self.touch(q)
                    continue
            rest.add(s)
        if not rest:
            return
        n = int(self.sched[0]) if len(self.sched) else 0
        for q in set(self._livev[:n].tolist()) | self._touched:
            i = q * _Q_COLS
            s = sqv[i + _Q_WAIT]
            if sqv[i + _Q_STATE] == _S_PARKED and s in rest:
                sqv[i + _Q_STATE] = _S_ACTIVE
                hint[s] = q
                self.touch(q)

    def take_records(self, slots) -> list:
        """Of ``slots`` (ints), those recorded (value > 0): ``(index into slots, record time)``
        each, the slot's value cleared to 0 (``runtime/peer.py`` ``pump`` moves them on)."""
        syncv = self._syncv
        out = []
        k = 0
        for s in slots:
            i = s * _Y_COLS + _Y_VAL
            if syncv[i] > 0:
                syncv[i] = 0
                out.append((k, syncv[s * _Y_COLS + _Y_TIME]))
            k += 1
        return out

    def quiet(self) -> bool:
        """A run now would do nothing: the last one ended with nothing runnable (R_IDLE or
        R_DEADLOCK) and no SQ was pushed to, staged or touched since (a woken waiter is
        touched: ``signal``). Memory-value waits are not re-checked by a run either."""
        return (self._stv[E.E_STATUS] in _QUIET_CODES and not self._touched
                and not self._staged)

    def slots_in_use(self) -> int:
        return self.nslots - len(self._free_slots)

    def sqs_in_use(self) -> int:
        return int(self.st[E.E_NSQ]) - len(self._free_sqs)

    # ---- models ----
    def set_model_heads(self, heads: list[list[int]]) -> None:
        """Replace the model head table: ``heads[m]`` are the SQs MODEL_EXECUTE m activates."""
        self.mptr = np.zeros(len(heads) + 1, np.int64)
        self.mptr[1:] = np.cumsum([len(h) for h in heads])
        self.msq = np.array([q for h in heads for q in h], np.int64)

    def set_conds(self, rows: list[tuple[int, int, int, int]], cmodels: list[int]) -> None:
        """Replace the cond table: one (word address, type, number of branches, first index
        into ``cmodels``, iteration bound) per cond handle, and the flat list of their
        sub-models' engine ids. The loop state of existing rows (iteration counts) is kept."""
        old = self.conds
        t = np.zeros((len(rows), E.CD_COLS), np.int64)
        t[:len(old)] = old[:len(rows)]
        for i, (addr, typ, n, mbase, bound) in enumerate(rows):
            t[i, E.CD_ADDR], t[i, E.CD_TYPE], t[i, E.CD_N] = addr, typ, n
            t[i, E.CD_MBASE], t[i, E.CD_MAX] = mbase, bound
        self.conds = t
        self.cmodels = np.array(cmodels, np.int64)

    def _watch_runaway(self, t0: float, seen: dict) -> None:
        """Between engine slices: a WHILE still looping after ``runaway_wall_s`` of wall time in
        this run whose cond word has not changed since the last slice (its body does not write
        it, or writes the same value) is stopped at its next JumpBack: its bound becomes the
        iterations done so far, so it faults F_RUNAWAY as at the iteration bound. A loop whose
        word keeps changing (a countdown) runs to its bound."""
        t = self.conds
        for c in np.nonzero((t[:, E.CD_TYPE] == E.COND_WHILE) & (t[:, E.CD_ITER] > 0))[0]:
            c = int(c)
            now = (int(t[c, E.CD_ITER]), int(t[c, E.CD_LAST]))
            before = seen.get(c)
            seen[c] = now
            if self.runaway_wall_s is None or before is None or now[1] != before[1] or \
                    now[0] <= before[0] or time.perf_counter() - t0 < self.runaway_wall_s:
                continue
            self.runaway_stopped[c] = (now[0] + 1, int(t[c, E.CD_MAX]))
            t[c, E.CD_MAX] = now[0] + 1

    # ---- the scheduler's live list ----
    def touch(self, q: int) -> None:
        """SQ ``q``'s row was written directly (not through ``alloc_sq``/``push``/``stage``):
        the next run considers it."""
        self._touched.add(q)
        self._unseen.add(q)

    def unseen(self) -> set[int]:
        """The SQs a wait on every stream must look at: those pushed to since such a wait last
        saw them done (``seen``). Every SQ with work left is among them (its work was pushed),
        and so is one whose work a run for another wait executed and which then left the live
        list, its clock maybe past the host's. A copy, O(SQs pushed to since), not O(SQs)."""
        return set(self._unseen)

    def seen(self, q: int) -> None:
        """A wait on every stream has seen SQ ``q`` done (or it has no stream to wait on)."""
        self._unseen.discard(q)

    def touch_all(self) -> None:
        """The SQ table was written wholesale: the next run considers every SQ."""
        self._touched.update(range(int(self.st[E.E_NSQ])))
        self._unseen.update(range(int(self.st[E.E_NSQ])))

    def ready_sched(self) -> None:
        """Before an engine run: lay ``sched`` out for the current table sizes (when the SQ or
        sync table grew: a new buffer at rest, the live list kept), then add the SQs touched
        since the last run to the live list. O(SQs touched), not O(SQs)."""
        shape = (len(self.sqs), len(self.sync))
        sched = self.sched
        if shape != self._sched_for:
            _, _, o_live, o_tree, words, _ = E.sched_layout(*shape)
            kept = self._livev[:int(sched[0])].tolist() if len(sched) else []
            sched = self.sched = np.full(words, -1, np.int64)
            sched[0] = 0
            self._livev = memoryview(sched)[o_live:o_tree]
            self._sched_for = shape
            self._touched.update(kept)
        touched = self._touched
        if touched:
            lv, n = self._livev, int(sched[0])
            if n + len(touched) > len(lv):      # no run compacted the list since (a caller
                touched |= set(lv[:n].tolist())   # that reads the arrays without running):
                n = 0                           # at most len(sqs) ids, each once
            for q in touched:
                lv[n] = q
                n += 1
            sched[0] = n
            touched.clear()
        if self.check_sched:
            self._check_sched()

    def _check_sched(self) -> None:
        """CHECK_SCHED: every SQ the engine could run or wake is on the live list, and the
        structures are at rest (AssertionError naming what is not)."""
        if not len(self.sched):
            self.ready_sched()              # laid out by the first run
        nsq = int(self.st[E.E_NSQ])
        q = self.sqs[:nsq]
        state = q[:, E.Q_STATE]
        play = np.nonzero(((state == E.S_ACTIVE) & (q[:, E.Q_HEAD] < q[:, E.Q_TAIL]))
                          | (state == E.S_PARKED))[0]
        live = set(self._livev[:int(self.sched[0])].tolist())
        missing = sorted(set(play.tolist()) - live)
        assert not missing, f"SQs in play but not on the live list: {missing}"
        rows = self._sched_for[0]
        o_sch, o_lhead, o_live, _, _, _ = E.sched_layout(*self._sched_for)
        sch = self.sched[o_sch:o_lhead].reshape(rows, E.SCH_COLS)
        held = np.nonzero((sch[:, [E.L_ON, E.T_LEAF, E.T_LIVE]] != -1).any(axis=1))[0]
        assert not len(held), f"SQs holding a list, leaf or live mark between runs: {held}"
        assert (self.sched[o_lhead:o_live] == -1).all(), "waiter lists not empty between runs"

    # ---- running ----
    def run(self, horizon: int = int(E.INF), stop_kind: int = E.STOP_NONE, stop_a: int = 0,
            stop_b: int = 0) -> int:
        """Run the engine; faults are logged and the run resumes, a full trace buffer grows.

        Returns R_IDLE, R_HORIZON, R_STOPPED or R_DEADLOCK.

        Its fixed cost is paid by every host wait (a full ring runs the engine once per
        submit): the run that returns at once costs the stop words and the engine call; the
        progress bar and the runaway watchdog's memory are made only when a run is long enough
        to come back for a slice (``R_STEPS``)."""
        if self._staged:
            self.flush()
        self.ready_sched()
        if self.access_log is not None:
            self.access_log.make_room()
        st = self.st
        sv = self._stv                          # st's words as Python ints (no numpy scalars)
        sv[E.E_HORIZON], sv[E.E_STOP_KIND], sv[E.E_STOP_A], sv[E.E_STOP_B] = (
            horizon, stop_kind, stop_a, stop_b)
        sv[E.E_STEP_LIMIT] = sv[E.E_STEPS] + PROGRESS_STEPS
        sv[E.E_RESUME] = 0                      # a turn left by a run that was interrupted
        t0 = time.perf_counter()                # the watchdog's wall clock starts here
        mem = self.mem
        r = E.run(self.pool, self.sqs, self.sync, self.mptr, self.msq, self.conds, self.cmodels,
                  mem.arena, mem.ctx, TABLE.addr, TABLE.cost, self.tc, self.trace, st,
                  self.sched)
        if r in _RESUMED:
            return self._run_on(r, t0)
        sv[E.E_STEP_LIMIT] = 0
        return r

    def _run_on(self, r: int, t0: float) -> int:
        """The rest of a run whose engine call returned ``r`` (a fault, a slice done, a full
        trace buffer or a body to build; ``t0``: the wall time the run started): log, grow,
        build or watch, and call the engine again until it stops."""
        st = self.st
        sv = self._stv
        progress = Progress("device", "SQE")
        seen: dict = {}                         # watchdog: cond -> (iterations, word) last slice
        while True:
            if r == E.R_FAULT:                  # one per faulting task: words, not numpy scalars
                q, pos, kind, c = sv[E.E_SQ], sv[E.E_POS], sv[E.E_FKIND], sv[E.E_INFO]
                fields = _UNPACK_FROM(self.pool, self.row_of(q, pos) << 6)
                op = fields[0]
                self.faults.append(Fault(q, pos, kind, c, sv[E.E_INFO2], op,
                                         int(self.sqs[q, E.Q_TIME]),
                                         fields[4] if op == OP_KERNEL else -1))
                if kind == E.F_RUNAWAY and c in self.runaway_stopped:
                    self.conds[c, E.CD_MAX] = self.runaway_stopped[c][1]   # its real bound
            elif r == E.R_STEPS:                    # a slice done (or a full access log)
                if self.access_log is not None:
                    self.access_log.make_room()
                progress.update(PROGRESS_STEPS)
                self._watch_runaway(t0, seen)
                st[E.E_STEP_LIMIT] = st[E.E_STEPS] + PROGRESS_STEPS
            elif r == E.R_NEED_BODY:            # a rare opcode's first use in this process
                E.provide(st)                   # (raising, it leaves E_RESUME: run clears it)
            elif r == E.R_TRACE_FULL:
                if len(self.trace) >= self.trace_max_rows:     # keep the first rows, stop
                    self.st[E.E_TRACE_ON] = 0
                    self.trace_dropped = True
                else:
                    grown = np.zeros(min(2 * len(self.trace), self.trace_max_rows),
                                     E.TRACE_DTYPE)
                    grown[:len(self.trace)] = self.trace
                    self.trace = grown
            else:
                progress.close()
                sv[E.E_STEP_LIMIT] = 0
                return r
            mem = self.mem
            self.ready_sched()
            r = E.run(self.pool, self.sqs, self.sync, self.mptr, self.msq, self.conds,
                      self.cmodels, mem.arena, mem.ctx, TABLE.addr, TABLE.cost, self.tc,
                      self.trace, st, self.sched)

    @property
    def now(self) -> int:
        """The latest simulated time any SQE has finished at."""
        return int(self.st[E.E_NOW])
