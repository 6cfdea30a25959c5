"""Run-ahead against exact order on generated programs (docs/architecture.md §5, "Run-ahead").

With core contention off, the engine lets the running SQ go on with its private SQEs (NOP,
kernel, memset, a memcpy without an address mode) past the turn's limit, up to its next
synchronization; ``E_EXACT`` (``configure(exact_order=True)``) turns that off. Every simulated
time must be the same either way, and so must the data of a program without races.

Each seeded program (``NPUSIM_RUNAHEAD_PROGRAMS``, default 1,500) has 1-6 eager streams and up to
two model SQs, and draws, in one global order (every wait after the record or value write it
waits for): private SQEs, event records and waits, notify pairs, value writes and waits,
STREAM_ACTIVE / MODEL_EXECUTE of a model (each model at most once: a graph is not launched again
while it runs) and SQE_UPDATE of a model's rows (that model SQ is ``Q_EXACT``, as
``runtime/taskgroup.py`` marks a task group's streams). Data flows between streams only by
hand-off: a stream writes its current buffer, records a notify, and moves to a fresh buffer; the
stream that waits on that notify may then read the sealed buffer. One program in four is racy
instead (private SQEs on any buffer): its times are compared, not its data. Runs go through a
horizon or a stop condition first in some programs, as the host's waits do.

Both runs start from one built state; compared: every trace row's times (by SQ and position),
the SQ and sync tables, the engine state up to its own words, and the memory. The reference
interpreter (``npusim.testing.reference``) runs one program in ten in exact order and must agree
with the engine (``test_engine_reference.py`` compares them with run-ahead on).
"""
from __future__ import annotations

import inspect
import os

import numpy as np

import npusim.kernel.builtin  # noqa: F401  (registers the sample kernel bodies)
from npusim.device import engine as E
from npusim.device import sqe as S
from npusim.device.kernels import TABLE
from npusim.device.state import DeviceState
from npusim.profiles import get_profile
from npusim.testing import reference as R

PROGRAMS = int(os.environ.get("NPUSIM_RUNAHEAD_PROGRAMS", "1500"))
PROFILE = get_profile("Ascend910B")
EASY, SHORT = TABLE.id("EasyOPf"), TABLE.id("ShortOPf")
PARAMS = inspect.signature(E.run.py_func).parameters
NAMES = [n for n in PARAMS]
SQS, SYNC, MEM, TRACE, ST = (NAMES.index(n) for n in ("sqs", "sync", "mem", "trace", "st"))
BUF, N_WORDS, N_EVENTS, PER_STREAM = 64, 3, 3, 6


def _drive(fn, args) -> list[int]:
    """Run like ``DeviceState.run``: build a missing body, resume after a fault."""
    codes = []
    st = args[ST]
    for _ in range(10_000):
        r = int(fn(*args))
        if r == E.R_NEED_BODY:
            E.provide(st)
            continue
        codes.append(r)
        if r != E.R_FAULT:
            return codes
    raise AssertionError("never settled")


class Program:
    """One generated program, built on a fresh DeviceState."""

    def __init__(self, seed: int):
        rng = np.random.default_rng(seed)
        self.racy = rng.random() < 0.25
        ns = int(rng.integers(1, 7))
        nm = int(rng.integers(0, 3))
        d = self.d = DeviceState(PROFILE, 1 << 16, 1 << 12, trace_capacity=1 << 10)
        d.set_tracing(True)
        self.streams = [[] for _ in range(ns)]
        nbufs = (ns + nm) * PER_STREAM
        self.bufs = [d.mem.malloc(BUF) for _ in range(nbufs)]
        for i, b in enumerate(self.bufs):
            d.mem.view(b, BUF)[:] = (np.arange(BUF) * (i + 3)).astype(np.uint8)
        self.argv = d.mem.malloc(8 * nbufs)
        d.mem.view(self.argv, 8 * nbufs)[:] = np.array(self.bufs, np.int64).view(np.uint8)
        self.words = d.mem.malloc(8 * N_WORDS)
        events = [d.alloc_slot() for _ in range(N_EVENTS)]
        # writers: the streams, then the models; each writes buffer cur[w] of its own list
        own = [list(range(w * PER_STREAM, (w + 1) * PER_STREAM)) for w in range(ns + nm)]
        cur = [0] * (ns + nm)
        readable = [set() for _ in range(ns + nm)]       # sealed buffers each may read

        def private(w):
            mine = own[w][min(cur[w], PER_STREAM - 1)]
            pick = (lambda: int(rng.integers(0, nbufs))) if self.racy else (lambda: mine)
            src = [mine] + sorted(readable[w])
            k = rng.integers(0, 4)
            if k == 0:
                return dict(op=S.OP_NOP)
            if k == 1:
                return dict(op=S.OP_KERNEL, a0=int(rng.choice((EASY, SHORT))),
                            a1=self.argv + 8 * pick(), a2=8, blocks=int(rng.integers(0, 5)),
                            a3=int(rng.choice((0, 0, 777))))
            off = int(rng.integers(0, BUF))
            n = int(rng.integers(0, BUF - off + 1))
            if k == 2:
                return dict(op=S.OP_MEMSET, a0=self.bufs[pick()] + off,
                            a1=int(rng.integers(0, 256)), a2=n)
            s = int(rng.choice(src)) if not self.racy else pick()
            return dict(op=S.OP_MEMCPY, a0=self.bufs[pick()] + off, a1=self.bufs[s] + off, a2=n,
                        flag=int(rng.integers(0, 4)))

        self.models = [[private(ns + m) for _ in range(int(rng.integers(1, 6)))]
                       for m in range(nm)]
        self.templates = [private(ns + m) for m in range(nm) for _ in range(2)]
        self.model_sqs = [d.alloc_sq(len(rows), kind=E.K_MODEL,
                                     dispatch_ns=int(rng.choice((0, 300))))
                          for rows in self.models]
        template_sq = d.alloc_sq(max(1, len(self.templates)), kind=E.K_MODEL)
        d.set_model_heads([[m] for m in self.model_sqs])
        launched = [False] * nm
        rec = [0] * N_EVENTS
        wval = [0] * N_WORDS
        n_notify = 0
        notifies = []
        kinds = ["private"] * 6 + ["record", "wait", "handoff", "mwrite", "mwait"]
        if nm:
            kinds += ["launch", "update"]
        for _ in range(int(rng.integers(0, 60))):
            s = int(rng.integers(0, ns))
            kind = kinds[int(rng.integers(0, len(kinds)))]
            if kind == "private":
                self.streams[s].append(private(s))
            elif kind == "record":
                ev = int(rng.integers(0, N_EVENTS))
                rec[ev] += 1
                self.streams[s].append(dict(op=S.OP_EVENT_RECORD, a0=events[ev], a1=rec[ev]))
            elif kind == "wait":
                ev = int(rng.integers(0, N_EVENTS))
                if rec[ev]:
                    self.streams[s].append(dict(op=S.OP_EVENT_WAIT, a0=events[ev],
                                                a1=int(rng.integers(1, rec[ev] + 1))))
            elif kind == "handoff":                     # s seals its buffer for ``other``
                other = int(rng.integers(0, ns))
                slot = d.alloc_slot()
                notifies.append(slot)
                n_notify += 1
                sealed = own[s][min(cur[s], PER_STREAM - 1)]
                self.streams[s].append(dict(op=S.OP_NOTIFY_RECORD, a0=slot))
                self.streams[other].append(dict(op=S.OP_NOTIFY_WAIT, a0=slot))
                if cur[s] < PER_STREAM - 1:
                    cur[s] += 1
                    readable[other].add(sealed)
            elif kind == "mwrite":
                w = int(rng.integers(0, N_WORDS))
                wval[w] += 1
                self.streams[s].append(dict(op=S.OP_MEM_WRITE_VALUE, a0=self.words + 8 * w,
                                            a1=wval[w], a2=8))
            elif kind == "mwait":
                w = int(rng.integers(0, N_WORDS))
                if wval[w]:
                    self.streams[s].append(dict(op=S.OP_MEM_WAIT_VALUE, a0=self.words + 8 * w,
                                                a1=int(rng.integers(1, wval[w] + 1)), a2=8,
                                                flag=S.WAIT_GEQ))
            elif kind == "launch":
                m = int(rng.integers(0, nm))
                if not launched[m]:
                    launched[m] = True
                    self.streams[s].append(
                        dict(op=S.OP_MODEL_EXECUTE, a0=m) if rng.random() < 0.5 else
                        dict(op=S.OP_STREAM_ACTIVE, a0=self.model_sqs[m]))
            else:                                       # update: a template over a model row
                m = int(rng.integers(0, nm))
                t = 2 * m + int(rng.integers(0, 2))
                self.streams[s].append(dict(
                    op=S.OP_SQE_UPDATE, a0=d.row_of(template_sq, t),
                    a1=d.row_of(self.model_sqs[m], int(rng.integers(0, len(self.models[m])))),
                    a2=self.model_sqs[m]))
                d.sqs[self.model_sqs[m], E.Q_EXACT] = 1
        for q, rows in zip(self.model_sqs, self.models):
            for i, row in enumerate(rows):
                d.push(q, t_submit=0, task_id=i, **row)
        for i, row in enumerate(self.templates):
            d.push(template_sq, t_submit=0, task_id=i, **row)
        self.qs = []
        for rows in self.streams:
            q = d.alloc_sq(max(1, len(rows)), dispatch_ns=int(rng.choice((0, 300, 1500))))
            t = 0
            for i, row in enumerate(rows):
                t += int(rng.choice((0, 0, 0, 250, 5000)))
                d.push(q, t_submit=t, task_id=i, **row)
            self.qs.append(q)
        phase = rng.integers(0, 3)
        self.phases = []
        if phase == 1:
            self.phases.append((int(rng.integers(0, 20_000)), E.STOP_NONE, 0, 0))
        elif phase == 2:
            q = self.qs[int(rng.integers(0, ns))]
            self.phases.append((E.INF, E.STOP_SQ_POS, q, int(rng.integers(0, 8))))
        self.phases.append((E.INF, E.STOP_NONE, 0, 0))
        self.d.st[E.E_HORIZON] = E.INF

    def run(self, exact: bool, fn=E.run) -> list[np.ndarray]:
        args = [a.copy() for a in R.engine_args(self.d)]
        args[ST][E.E_EXACT] = int(exact)
        for horizon, kind, a, b in self.phases:
            st = args[ST]
            st[E.E_HORIZON], st[E.E_STOP_KIND], st[E.E_STOP_A], st[E.E_STOP_B] = (horizon, kind,
                                                                                  a, b)
            _drive(fn, args)
        return args


def _times(args) -> np.ndarray:
    """The trace rows' (SQ, position, opcode, start, end, value), in (SQ, position) order."""
    t = args[TRACE][:int(args[ST][E.E_TRACE_N])]
    assert len(t) < len(args[TRACE]), "trace buffer too small for the program"
    rows = np.stack([t["sq"].astype(np.int64), t["pos"].astype(np.int64),
                     t["op"].astype(np.int64), t["start"], t["end"], t["val"]], axis=1)
    return rows[np.lexsort((rows[:, 1], rows[:, 0]))]


def _compare(a, b, racy: bool = False) -> None:
    assert np.array_equal(_times(a), _times(b)), "SQE times"
    assert np.array_equal(a[SQS], b[SQS]), "SQ table"
    assert np.array_equal(a[SYNC], b[SYNC]), "sync slots"
    sa, sb = a[ST][:E.E_BODY].copy(), b[ST][:E.E_BODY].copy()
    sa[E.E_EXACT] = sb[E.E_EXACT] = 0
    sa[E.E_TRACE_N] = sb[E.E_TRACE_N] = 0
    assert np.array_equal(sa, sb), "engine state"
    if not racy:
        assert np.array_equal(a[MEM], b[MEM]), "memory of a race-free program"


def test_run_ahead_matches_exact_order_on_generated_programs():
    racy = turns_saved = 0
    for seed in range(PROGRAMS):
        p = Program(seed)
        exact, ahead = p.run(True), p.run(False)
        try:
            _compare(exact, ahead, p.racy)
            if seed % 10 == 0:                          # the oracle, in exact order
                _compare(exact, p.run(True, R.run), p.racy)
        except AssertionError as e:
            raise AssertionError(f"program seed {seed} (racy={p.racy}): {e}") from None
        racy += p.racy
    assert 0 < racy < PROGRAMS or PROGRAMS < 8


def test_run_ahead_takes_fewer_turns():
    """Two streams of private SQEs submitted in alternation: exact order takes one turn per SQE,
    run-ahead one turn per stream (the oracle counts turns); the times are the same."""
    d = DeviceState(PROFILE, 1 << 16, 1 << 12, trace_capacity=64)
    d.st[E.E_HORIZON] = E.INF
    a, b = d.alloc_sq(16), d.alloc_sq(16)
    for q, t0 in ((a, 0), (b, 500)):
        for i in range(8):
            d.push(q, S.OP_NOP, t0 + 1000 * i)
    res = {}
    for exact in (True, False):
        args = [x.copy() for x in R.engine_args(d)]
        args[ST][E.E_EXACT] = int(exact)
        stats: dict = {}
        assert R.run(*args, stats=stats) == E.R_IDLE
        res[exact] = stats["turns"], args[SQS][[a, b], E.Q_TIME].tolist()
    assert res[True][0] == 16 and res[False][0] == 2
    assert res[True][1] == res[False][1]


def test_turns_ending_at_the_rings_and_the_pools_end():
    """A turn's end prefetches two rows a few SQEs on (``sched._prefetch_turn``): at a ring's end
    they wrap to its start, and the second may lie past the pool. Two streams in lockstep (each
    iteration: wait for the other, two NOPs, record) whose exact-size rings are the pool's last
    rows, in a pool cut to end there: turns end all along the rings, and the trace's times, the
    tables, the engine state and the memory agree with exact order and with the oracle."""
    d = DeviceState(PROFILE, 1 << 16, 1 << 12, trace_capacity=256)
    d.set_tracing(True)
    d.st[E.E_HORIZON] = E.INF
    iters = 7
    n = 4 * iters           # a record 5 rows before a ring's end: its prefetch passes the end
    qs = [d.alloc_sq(n) for _ in range(2)]
    slots = [d.alloc_slot() for _ in range(2)]
    for k in range(1, iters + 1):
        for i, q in enumerate(qs):
            d.push(q, S.OP_EVENT_WAIT, 0, a0=slots[1 - i], a1=k - i)     # stream 1 leads
            d.push(q, S.OP_NOP, 0)
            d.push(q, S.OP_NOP, 0)
            d.push(q, S.OP_EVENT_RECORD, 0, a0=slots[i], a1=k)
    d.flush()
    assert d.pool_used == int(d.sqs[qs[1], E.Q_BASE]) + n
    pool = NAMES.index("pool")
    runs = []
    for exact, fn in ((True, E.run), (False, E.run), (False, R.run)):
        args = [a.copy() for a in R.engine_args(d)]
        args[pool] = args[pool][:d.pool_used].copy()            # the pool ends at the last ring
        args[ST][E.E_EXACT] = int(exact)
        assert _drive(fn, args) == [E.R_IDLE]
        assert (args[SQS][qs, E.Q_HEAD] == n).all()
        runs.append(args)
    _compare(runs[0], runs[1])
    _compare(runs[1], runs[2])


def test_contention_keeps_exact_order():
    """With contention on, no SQ runs ahead: kernels take cores in time order."""
    d = DeviceState(PROFILE, 1 << 16, 1 << 12, trace_capacity=64)
    d.st[E.E_HORIZON] = E.INF
    d.set_contention(True)
    a, b = d.alloc_sq(16), d.alloc_sq(16)
    for q, t0 in ((a, 0), (b, 500)):
        for i in range(4):
            d.push(q, S.OP_NOP, t0 + 1000 * i)
    stats: dict = {}
    assert R.run(*R.engine_args(d), stats=stats) == E.R_IDLE
    assert stats["turns"] == 8
