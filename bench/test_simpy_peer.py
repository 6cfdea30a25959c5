"""The peer baseline: npusim against a SimPy model of the same program, measured in the same run.

The program (design.md §6's "cost that stays flat as the work grows"): 8 streams x 20,000 kernel
launches of the 1-block ``EasyOPf`` (each stream on its own buffer); every 16 launches each stream
records its event, and the next stream waits on it before its own next 16 launches. The chain does
not wrap around (stream 0 waits on nobody): a ring would make stream 0 wait for stream 7's
previous block, which serialises all eight streams into one chain.

npusim runs it through ``npusim.acl`` only, three ways:

* eager: launches, records and waits issued on the 8 streams, through ``synchronize_stream`` of
  all of them (tasks/s of wall time);
* captured: the same program in one GLOBAL capture of stream 0; streams 1-7 join through a fork
  event recorded on stream 0 and join back through one event each before
  ``acl.mdl.ri_capture_end`` (tasks/s of the capture, ``ri_capture_end`` included);
* replayed: ``acl.mdl.ri_execute_async`` of that model and ``synchronize_stream`` (tasks/s).

The SimPy model of the same program: a ``simpy.Environment``, the 25 AI cores of the default
profile as ``simpy.Resource(capacity=25)``, each kernel a process holding one core for
``EasyOPf``'s 2,000 ns body; each record a fresh ``simpy.Event`` succeeded by its stream, each
wait a ``yield`` of that event. Tasks counted on both sides: kernels + records + waits of the
program (the capture's fork and join-back events, 22 tasks, are not counted).

The one-stream case on a single stream: capture of 20,000 launches, eager launches, eager
``memset_async`` (64 bytes) and eager ``memcpy_async`` device-to-device (64 bytes), each through
a synchronize, against SimPy's one-stream rate (20,000 kernel processes on one stream).

The issue's targets, reported and not asserted: 8 streams: eager >= 5x SimPy, capture >= 6x
(issue 40),
replay >= 300x (issue 40: revised from 500x; printed with run-ahead, the default, and in exact
order, ``configure(exact_order=True)``); one stream: capture >= 500 k tasks/s and >= 4x SimPy,
eager work >= 300 k tasks/s
and >= 2.5x SimPy. Run:

    pytest -p no:nbmake -o addopts="" bench/test_simpy_peer.py -s

``NPUSIM_PEER_LAUNCHES`` sets the launches per stream (default 20,000, the issue's size).

Issue 40 (run-ahead, docs/architecture.md §5; loaded machine, paired rounds, exact order ->
run-ahead in the same run): 8-stream replay 373x -> 554x SimPy in one run, 202x -> 280x in
another; one replay 15.4 / 11.3 ms exact, 8.8 ms with run-ahead.

Measured (session 3, 2 loaded cores; CPU time per task, best of 3, the previous and this host
layer interleaved; SimPy ~8.0 us per task): 8-stream eager 2.20 -> 1.87 us (3.6x -> 4.3x SimPy),
8-stream capture 2.69 -> 2.27 (3.0x -> 3.5x), 1-stream capture 2.12 -> 1.80 (3.7x -> 4.3x, 556 k
tasks/s), eager launch 2.21 -> 1.92, memset_async 3.02 -> 2.40, memcpy_async 3.24 -> 2.95 us
(2.4x -> 2.6x). Replay is the engine's (~80 ns per SQE; 500x needs ~15).

Session 4 (2 loaded cores; same-process best of 5, the previous host layer and this one run
alternately in fresh interpreters, per task): 1-stream capture 1.75 -> 1.33-1.53 us (3.2x -> 3.6-
4.3x SimPy), eager launch 1.68 -> 1.30-1.44 us (3.3x -> 3.8-4.4x), 8-stream eager 1.88 -> 1.47-
1.53 us (3.4x -> 4.1x), 8-stream capture 2.12 -> 1.76-1.86 us (3.0x -> 3.4x); memset and memcpy
unchanged (their cost is api_memory's checks). One replay of the 8-stream model is one engine call:
188,783 SQEs (160,000 kernels, 10,008 records, 8,764 waits, 10,008 event resets, the EndGraph) in
~11 ms, ~59 ns per SQE, with ~50 us of host work around it (execute + synchronize); 500x SimPy is
~2 ms, ~11 ns per SQE: the engine's to win, not the host's.

Session 5 (the previous host layer and this one alternately, 3 runs each, medians of the
same-run ratios): 8-stream eager 3.81x -> 3.93x SimPy, 8-stream capture 3.00x -> 3.64x, 1-stream
capture 3.58x -> 3.70x, eager launch 3.67x -> 3.68x, memset 2.84x -> 3.07x, memcpy 2.46x ->
2.53x; the run-to-run spread (+-15 %) is as large as most of these steps. The change in Python
work per call is exact in ``bench/test_host_opcodes.py`` (a launch: 429 -> 407 opcodes eager,
451 -> 435 captured).

Session 6 (main and this host layer alternately in fresh interpreters, 5 runs each, medians of the
same-run ratios to SimPy): 8-stream eager 4.29x -> 4.59x, 8-stream capture 3.29x -> 3.71x,
1-stream capture 3.92x -> 4.30x, eager launch 4.15x -> 4.39x, memset 2.93x -> 3.67x, memcpy
3.30x -> 3.37x. Still short of 5x on 8 streams: a launch's host cost is now mostly single opcodes
that do a lot (the facade's RLock ~80 ns, ``pack_into`` ~115 ns, one thread-local read ~30 ns)
and three or four Python frames; the captured launch's remaining share is in
``CaptureStream.append_kernel`` / ``_appended`` (``runtime/model.py``).

Session 12: why the replay is ~200-270x and not 500x. One replay is ~188,800 SQEs, 85 % of them
kernels, in ~5.1 ms at best (27 ns per SQE); 500x SimPy needs ~13.5 ns. The same 160,000 kernels
captured on one stream replay at 15.7 ns per SQE (a kernel SQE: the loop ~5 ns, the EasyOPf body
~5.5 ns called by address, its cost model and core pool ~4 ns), and the 8 streams of this program
take one scheduler turn per SQE (the pure-Python oracle's count on a 320-launch prefix: 2,863
turns for ~3,000 SQEs; ``reference.run(..., stats=)``), because their kernels interleave in
simulated time: each turn adds the tree's re-key and the running SQ's reloads, ~10 ns. So the
target is past this engine's design (exact time order, kernels whose memory effects are unknown
until they run, so no SQ can run ahead of another), not a missing fast path.

Session 14: the ratios are read from paired rounds (``paired_ratios``: SimPy and every npusim
mode back to back, five times, the median of each ratio); the modes' own benchmarks run seconds
to a minute apart, and the same 8-stream eager code read 4.1x in one run and 5.9x in another
within the hour. ``CaptureStream.append_kernel`` does ``_appended``'s bookkeeping inline
(captured launch 1.27-1.40 -> 1.21-1.23 us, four interleaved pairs). Two runs of this tree,
paired: 8-stream eager 4.3x / 4.4x, capture 4.1x / 4.0x, replay 231x / 231x; one stream:
capture 4.4x / 4.4x (3.9-4.0x before the change, separately timed), launches 4.2x / 4.3x,
memsets 3.4x / 3.5x, copies 3.1x / 3.2x.
"""
from __future__ import annotations

import os
import time

import numpy as np
import pytest

import npusim
from npusim import acl

simpy = pytest.importorskip("simpy")

STREAMS = 8
LAUNCHES = int(os.environ.get("NPUSIM_PEER_LAUNCHES", "20000"))   # per stream
BLOCK = 16                          # launches between a stream's records
ONE = 20_000                        # the one-stream case
CORES = 25                          # AI cores of the default profile (Ascend910B)
KERNEL_NS = 2_000                   # EasyOPf's body (npusim/kernel/builtin.py)
ROUNDS = 3
PAIRS = 5                           # paired rounds of SimPy and npusim (test_ratios)
R: dict = {}                        # rates (tasks/s) by name, for the ratios


def _ok(*values):
    *vals, ret = values
    assert ret == 0, ret
    return vals[0] if len(vals) == 1 else tuple(vals)


def program_tasks(streams: int, launches: int) -> int:
    """Kernels + records + waits of the program (every stream records; streams 1.. wait)."""
    blocks = launches // BLOCK
    return streams * launches + streams * blocks + (streams - 1) * blocks


# ---------------------------------------------------------------- npusim through npusim.acl
class Program:
    """The device side of the program: 8 streams, a buffer and an args block per stream, one
    event per stream (plus the capture's fork and join-back events)."""

    def __init__(self):
        npusim.reset()
        acl.init()
        acl.rt.set_device(0)
        lib = _ok(*acl.rt.binary_load_from_file(npusim.samples.binary_path()))
        self.easy = _ok(*acl.rt.binary_get_function(lib, "EasyOPf"))
        self.streams = [_ok(*acl.rt.create_stream()) for _ in range(STREAMS)]
        self.bufs, self.args = [], []
        for _ in range(STREAMS):
            x = _ok(*acl.rt.malloc(64, 0))
            _ok(acl.rt.memset(x, 64, 0, 64))
            a = _ok(*acl.rt.malloc(8, 0))
            slot = np.array([x], np.uint64)
            _ok(acl.rt.memcpy(a, 8, acl.util.numpy_to_ptr(slot), 8,
                              acl.ACL_MEMCPY_HOST_TO_DEVICE))
            self.bufs.append(x)
            self.args.append(a)
        new = acl.rt.create_event_ex_with_flag
        self.events = [_ok(*new(acl.ACL_EVENT_SYNC)) for _ in range(STREAMS)]
        self.fork = _ok(*new(acl.ACL_EVENT_SYNC))
        self.joins = [_ok(*new(acl.ACL_EVENT_SYNC)) for _ in range(STREAMS)]
        self.src = _ok(*acl.rt.malloc(64, 0))          # the one-stream copies' source
        self.dst = _ok(*acl.rt.malloc(64, 0))
        self.launched = 0                              # launches per stream so far (data check)

    def issue(self, launches: int) -> int:
        """Issue the program on the 8 streams; returns the OR of every code."""
        launch, record, wait = (acl.rt.launch_kernel, acl.rt.record_event,
                                acl.rt.stream_wait_event)
        easy, streams, args, events = self.easy, self.streams, self.args, self.events
        bad = 0
        for _ in range(launches // BLOCK):
            for i in range(STREAMS):
                s, a = streams[i], args[i]
                if i:
                    bad |= wait(s, events[i - 1])
                for _ in range(BLOCK):
                    bad |= launch(easy, 1, a, 8, s)
                bad |= record(events[i], s)
        return bad

    def sync(self):
        for s in self.streams:
            _ok(acl.rt.synchronize_stream(s))

    def eager(self, launches: int) -> None:
        """The program run eagerly: issued on the 8 streams (every code 0), then synchronized."""
        assert self.issue(launches) == 0
        self.sync()

    def capture(self, launches: int):
        s0, rest = self.streams[0], self.streams[1:]
        _ok(acl.mdl.ri_capture_begin(s0, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL))
        _ok(acl.rt.record_event(self.fork, s0))
        for s in rest:
            _ok(acl.rt.stream_wait_event(s, self.fork))
        assert self.issue(launches) == 0
        for s, e in zip(rest, self.joins):
            _ok(acl.rt.record_event(e, s))
            _ok(acl.rt.stream_wait_event(s0, e))
        return _ok(*acl.mdl.ri_capture_end(s0))

    def replay(self, model):
        _ok(acl.mdl.ri_execute_async(model, self.streams[0]))
        _ok(acl.rt.synchronize_stream(self.streams[0]))

    def count(self, i: int) -> int:
        """EasyOPf launches that ran on stream ``i``'s buffer (x[0] += 1 each)."""
        _ok(acl.rt.synchronize_device())
        host = np.zeros(1, np.uint32)
        _ok(acl.rt.memcpy(acl.util.numpy_to_ptr(host), 4, self.bufs[i], 4,
                          acl.ACL_MEMCPY_DEVICE_TO_HOST))
        return int(host[0])

    def check(self):
        """Every stream's buffer counts every launch of the program that ran on it."""
        assert [self.count(i) for i in range(STREAMS)] == [self.launched] * STREAMS


@pytest.fixture(scope="module")
def prog():
    p = Program()
    # warm-up: compile the engine paths of each mode once, outside the measured rounds
    p.eager(4 * BLOCK)
    p.launched += 4 * BLOCK
    m = p.capture(4 * BLOCK)
    p.replay(m)
    p.launched += 4 * BLOCK
    _ok(acl.mdl.ri_destroy(m))
    p.check()
    yield p
    npusim.reset()


# ---------------------------------------------------------------- the SimPy model
def simpy_program(streams: int, launches: int) -> int:
    """The same program in SimPy; returns the simulated makespan (ns)."""
    env = simpy.Environment()
    cores = simpy.Resource(env, capacity=CORES)
    blocks = launches // BLOCK
    recorded = [[env.event() for _ in range(blocks)] for _ in range(streams)]

    def kernel():
        with cores.request() as req:
            yield req
            yield env.timeout(KERNEL_NS)

    def stream(i):
        for b in range(blocks):
            if i:
                yield recorded[i - 1][b]
            for _ in range(BLOCK):
                yield env.process(kernel())
            recorded[i][b].succeed()

    for i in range(streams):
        env.process(stream(i))
    env.run()
    return int(env.now)


def _rate(benchmark, name: str, tasks: int, bench_report) -> float:
    median = benchmark.stats.stats.median
    rate = tasks / median
    R[name] = rate
    benchmark.extra_info.update(tasks=tasks, tasks_per_s=round(rate))
    bench_report(f"[peer] {name:<24} {tasks:>8} tasks  median {median * 1e3:9.2f} ms  "
                 f"{rate / 1e3:10.1f} k tasks/s")
    return rate


# ---------------------------------------------------------------- 8 streams
def test_8stream_simpy(benchmark, bench_report):
    makespan = benchmark.pedantic(simpy_program, args=(STREAMS, LAUNCHES), rounds=ROUNDS,
                                  iterations=1)
    # a pipeline: stream i starts one block after stream i-1; 8 kernels never exceed 25 cores
    assert makespan == (LAUNCHES // BLOCK + STREAMS - 1) * BLOCK * KERNEL_NS
    _rate(benchmark, "8-stream simpy", program_tasks(STREAMS, LAUNCHES), bench_report)


def test_8stream_eager(benchmark, prog, bench_report):
    benchmark.pedantic(prog.eager, args=(LAUNCHES,), rounds=ROUNDS, iterations=1)
    prog.launched += ROUNDS * LAUNCHES
    prog.check()
    _rate(benchmark, "8-stream eager", program_tasks(STREAMS, LAUNCHES), bench_report)


def test_8stream_capture_and_replay(benchmark, prog, bench_report):
    tasks = program_tasks(STREAMS, LAUNCHES)
    times = []
    model = None
    for _ in range(ROUNDS):
        if model is not None:
            _ok(acl.mdl.ri_destroy(model))
        t0 = time.perf_counter()
        model = prog.capture(LAUNCHES)
        times.append(time.perf_counter() - t0)
    assert len(_ok(*acl.mdl.ri_get_streams(model))) >= STREAMS
    cap = float(np.median(times))
    R["8-stream capture"] = tasks / cap
    bench_report(f"[peer] {'8-stream capture':<24} {tasks:>8} tasks  median {cap * 1e3:9.2f} ms  "
                 f"{tasks / cap / 1e3:10.1f} k tasks/s")
    benchmark.pedantic(prog.replay, args=(model,), rounds=ROUNDS, iterations=1)
    prog.launched += ROUNDS * LAUNCHES
    prog.check()
    _rate(benchmark, "8-stream replay", tasks, bench_report)
    npusim.configure(exact_order=True)      # the same replay without run-ahead
    exact = []
    for _ in range(ROUNDS):
        t, _ = _timed(prog.replay, model)
        exact.append(t)
    npusim.configure(exact_order=False)
    prog.launched += ROUNDS * LAUNCHES
    prog.check()
    t = float(np.median(exact))
    R["8-stream replay, exact order"] = tasks / t
    bench_report(f"[peer] {'8-stream replay, exact':<24} {tasks:>8} tasks  median "
                 f"{t * 1e3:9.2f} ms  {tasks / t / 1e3:10.1f} k tasks/s")
    benchmark.extra_info.update(capture_tasks_per_s=round(tasks / cap))
    _ok(acl.mdl.ri_destroy(model))


# ---------------------------------------------------------------- one stream
# each mode as a function of the program, so the paired ratios (test_ratios) time the same code
def capture_one(prog):
    """One GLOBAL capture of ONE launches on stream 0; returns the model."""
    s, easy, a = prog.streams[0], prog.easy, prog.args[0]
    launch = acl.rt.launch_kernel
    _ok(acl.mdl.ri_capture_begin(s, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL))
    bad = 0
    for _ in range(ONE):
        bad |= launch(easy, 1, a, 8, s)
    m = _ok(*acl.mdl.ri_capture_end(s))
    assert bad == 0
    return m


def launch_one(prog):
    s, easy, a = prog.streams[0], prog.easy, prog.args[0]
    launch = acl.rt.launch_kernel
    bad = 0
    for _ in range(ONE):
        bad |= launch(easy, 1, a, 8, s)
    _ok(acl.rt.synchronize_stream(s))
    assert bad == 0


def memset_one(prog):
    s, x = prog.streams[0], prog.dst
    memset = acl.rt.memset_async
    bad = 0
    for i in range(ONE):
        bad |= memset(x, 64, i & 0xFF, 64, s)
    _ok(acl.rt.synchronize_stream(s))
    assert bad == 0


def memcpy_one(prog):
    s, src, dst = prog.streams[0], prog.src, prog.dst
    copy = acl.rt.memcpy_async
    d2d = acl.ACL_MEMCPY_DEVICE_TO_DEVICE
    bad = 0
    for _ in range(ONE):
        bad |= copy(dst, 64, src, 64, d2d, s)
    _ok(acl.rt.synchronize_stream(s))
    assert bad == 0


def test_1stream_simpy(benchmark, bench_report):
    makespan = benchmark.pedantic(simpy_program, args=(1, ONE), rounds=ROUNDS, iterations=1)
    assert makespan == ONE * KERNEL_NS
    # one stream has no waits; its records are not issued in the npusim one-stream runs
    _rate(benchmark, "1-stream simpy", ONE, bench_report)


def test_1stream_capture(benchmark, prog, bench_report):
    models = []
    benchmark.pedantic(lambda: models.append(capture_one(prog)), rounds=ROUNDS, iterations=1)
    for m in models:
        _ok(acl.mdl.ri_destroy(m))
    _rate(benchmark, "1-stream capture", ONE, bench_report)


def test_1stream_eager_launch(benchmark, prog, bench_report):
    before = prog.count(0)
    benchmark.pedantic(launch_one, args=(prog,), rounds=ROUNDS, iterations=1)
    assert prog.count(0) == before + ROUNDS * ONE
    _rate(benchmark, "1-stream eager launch", ONE, bench_report)


def test_1stream_eager_memset(benchmark, prog, bench_report):
    benchmark.pedantic(memset_one, args=(prog,), rounds=ROUNDS, iterations=1)
    host = np.zeros(64, np.uint8)
    _ok(acl.rt.memcpy(acl.util.numpy_to_ptr(host), 64, prog.dst, 64,
                      acl.ACL_MEMCPY_DEVICE_TO_HOST))
    assert (host == (ONE - 1) & 0xFF).all()
    _rate(benchmark, "1-stream eager memset", ONE, bench_report)


def test_1stream_eager_memcpy_d2d(benchmark, prog, bench_report):
    pattern = np.arange(64, dtype=np.uint8)
    _ok(acl.rt.memcpy(prog.src, 64, acl.util.numpy_to_ptr(pattern), 64,
                      acl.ACL_MEMCPY_HOST_TO_DEVICE))
    benchmark.pedantic(memcpy_one, args=(prog,), rounds=ROUNDS, iterations=1)
    host = np.zeros(64, np.uint8)
    _ok(acl.rt.memcpy(acl.util.numpy_to_ptr(host), 64, prog.dst, 64,
                      acl.ACL_MEMCPY_DEVICE_TO_HOST))
    assert (host == pattern).all()
    _rate(benchmark, "1-stream eager memcpy d2d", ONE, bench_report)


# ---------------------------------------------------------------- the ratios
def _timed(fn, *args) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t0, out


def paired_ratios(prog, pairs: int = PAIRS) -> dict:
    """Each mode's rate over SimPy's, as the median over ``pairs`` rounds in each of which
    SimPy and every npusim mode of the same program run back to back (8 streams: SimPy, eager,
    capture, replay of that capture; one stream: SimPy, capture, launches, memsets, copies).
    The benchmarks above time each mode in its own test, seconds to a minute apart; this
    machine's speed drifts by up to 2x over that (the 8-stream eager ratio read 4.1x and 5.9x
    for the same code in one hour), and a pair of runs seconds apart drifts far less."""
    got: dict = {}

    def add(name, ratio):
        got.setdefault(name, []).append(ratio)
    for _ in range(pairs):
        t_peer, _ = _timed(simpy_program, STREAMS, LAUNCHES)
        t, _ = _timed(prog.eager, LAUNCHES)
        add("8-stream eager", t_peer / t)
        t, model = _timed(prog.capture, LAUNCHES)
        add("8-stream capture", t_peer / t)
        t, _ = _timed(prog.replay, model)
        add("8-stream replay", t_peer / t)
        npusim.configure(exact_order=True)          # the same replay in exact time order
        t, _ = _timed(prog.replay, model)
        npusim.configure(exact_order=False)
        add("8-stream replay, exact order", t_peer / t)
        _ok(acl.mdl.ri_destroy(model))
        t_peer, _ = _timed(simpy_program, 1, ONE)
        t, model = _timed(capture_one, prog)
        add("1-stream capture", t_peer / t)
        _ok(acl.mdl.ri_destroy(model))
        for name, fn in (("1-stream eager launch", launch_one),
                         ("1-stream eager memset", memset_one),
                         ("1-stream eager memcpy d2d", memcpy_one)):
            t, _ = _timed(fn, prog)
            add(name, t_peer / t)
    return {name: float(np.median(r)) for name, r in got.items()}


TARGETS = [("8-stream eager", "8-stream simpy", 5), ("8-stream capture", "8-stream simpy", 6),
           ("8-stream replay", "8-stream simpy", 300),
           ("8-stream replay, exact order", "8-stream simpy", 300),
           ("1-stream capture", "1-stream simpy", 4),
           ("1-stream eager launch", "1-stream simpy", 2.5),
           ("1-stream eager memset", "1-stream simpy", 2.5),
           ("1-stream eager memcpy d2d", "1-stream simpy", 2.5)]


def test_ratios(benchmark, prog, bench_report):
    """The issue's ratios, from paired rounds (``paired_ratios``; the target is read there),
    beside the ratio of the separate benchmarks' medians above. Takes ``benchmark`` (one empty
    round) so ``--benchmark-only`` runs it too."""
    benchmark.pedantic(lambda: None, rounds=1)
    paired = paired_ratios(prog)
    benchmark.extra_info.update({f"{k} / simpy (paired)": round(v, 2) for k, v in paired.items()})
    bench_report(f"[peer] {STREAMS} streams x {LAUNCHES} launches (issue size 8 x 20000), "
                 f"one stream {ONE} tasks; absolute targets: 1-stream capture >= 500 k tasks/s, "
                 f"1-stream eager >= 300 k tasks/s; ratios: the median of {PAIRS} paired rounds "
                 f"(the separate benchmarks' medians)")
    for name, ref, target in TARGETS:
        sep = f"{R[name] / R[ref]:6.1f}x" if name in R and ref in R else "     -"
        bench_report(f"[peer] {name:<26} / {ref:<15} = {paired[name]:8.1f}x  ({sep})  "
                     f"(target >= {target}x: {'met' if paired[name] >= target else 'MISSED'})")
