"""Host-side scaling: cost per operation against work size — ``pytest bench/test_scaling_host.py
-s --benchmark-only``. Each table prints the wall time per operation at each size and the ratio
of the largest size's cost to the smallest's (flat = within 20 %).

* **replays queued**: N ``aclmdlRIExecuteAsync`` of a 33-task, 2-stream graph queued before one
  synchronize (per replay, the synchronize included);
* **resident graphs**: with N graphs resident (built, their SQs idle) on the device: capture +
  first replay + synchronize + destroy of one more 30-task graph (per graph), one replay of a
  resident graph with its synchronize, and the synchronize of an idle stream. Session 9 (the
  engine's scheduler kept between runs, built from the SQs in play; same-run A/B against
  5adf7d3, each from its own tree): replay + synchronize 9.71 / 9.81 / 9.99 / 12.88 us at 1 / 10
  / 100 / 1,000 graphs (x1.33) -> 9.87 / 9.84 / 9.76 / 9.92 (x1.00); idle synchronize 4.23 /
  4.23 / 4.57 / 7.39 (x1.75) -> 4.26 / 4.28 / 4.32 / 4.35 (x1.02). The first row of the graph's
  whole life was 196 us against 136 at 10 graphs only because it ran first (warm-up, now done
  before the table);
* **streams made**: with N streams made on the context (idle, their work done), the
  synchronize of the device (one stream busy with a memset), the create + destroy of one more
  stream, and the synchronize of a finished stream (per call); and context create + destroy
  with N contexts made. Session 10 (a device synchronize visits the unseen streams, in play or
  pushed to since; a finished SQ's wait takes no engine run; contexts and their streams in
  dicts). Same-run A/B against eea3b69, each from its own tree, of the same calls in a scan
  script, µs at 10 / 100 / 1,000: ``aclrtSynchronizeDevice`` with N idle streams 49.6 / 408 /
  3,960 -> 1.32 / 1.29 / 1.33; stream create + destroy 15.3 / 17.2 / 36.2 -> 10.1 / 11.5 /
  10.0; synchronize of a finished stream 5.1-5.5 -> 2.8-3.1; context create + destroy 20.5 /
  23.1 / 41.0 -> 14.5 / 15.3 / 14.0;
* **live allocations**: one ``malloc`` + ``free`` pair while N other blocks stay allocated, in
  the middle of the address range and at its end, on ``Memory`` itself and through
  ``aclrtMalloc``/``aclrtFree`` (per pair). Session 10 (the page table the only table of live
  blocks: no sorted lists, no table in the context array; same-run A/B against eea3b69, each from
  its own tree, two rounds): ``Memory`` in the middle 7.99-8.47 / 18.1-18.6 us at 10 / 10,000
  blocks (x2.1-2.3) -> 2.90-3.18 / 3.35-3.51 (x1.11-1.15); at the end 7.2-7.5 / 7.7-8.1 ->
  3.0-3.2 / 3.8-3.9 (x1.19-1.30: the table's and dicts' cache misses, no scan);
  ``aclrtMalloc`` + ``aclrtFree`` in the middle 15.5-16.7 / 27.6-28.3 (x1.7-1.8) -> 8.7-9.1 /
  9.3-9.4 (x1.02-1.08). First fit over N holes too small for the request: a 1 KiB malloc +
  free above N holes of 512 B scanned every hole below, 6.4-6.9 / 9.6-10.3 / 46-48 / 404-426
  us at 10 / 100 / 1,000 / 10,000 holes; with the holes in runs with bounds on their largest
  hole (``_Region``, same addresses) 6.8 / 10.5 / 11.1 / 12.6 (x1.8). The runs cost the common
  case ~0.5-1 us a pair (``Memory`` in the middle 2.7-3.3 -> 3.8-4.3; the same-run A/B against
  the page-table tree, two rounds);
* **events and updates**: with N events alive, a record + wait pair, a query and one more
  event's create + destroy (per call); with N graphs resident, one task update (begin, 4
  launches, end). Session 12 (one run, after a warm-up pass): record + wait 6.03 / 6.56 / 5.98 /
  6.59 us at 10 / 100 / 1,000 / 10,000 events (x1.09), query 7.64 / 7.93 / 8.09 / 7.54 (x0.99),
  create + destroy 7.29 / 7.45 / 7.79 / 7.83 (x1.07); task update 37.8 / 38.2 / 36.3 us at
  10 / 100 / 1,000 graphs (x0.96). Without the warm-up pass the 10-event row read 30-60 % high
  (the first Setup of the process);
* **graph size**: capture of an N-task single-stream graph through ``aclrtLaunchKernel`` plus
  its first replay (per task): the median of warm graphs (the same Setup's first graph of the size
  not counted) up to 100,000 tasks, a single graph from 1,000,000 up. A graph's fixed costs
  (begin, end, first execution's build, one engine run) are ~45 us in this host layer, so the
  10-task row is ~4x the per-task cost of large graphs: flat needs a fixed cost near 3 us. ``NPUSIM_BENCH_10M=1`` adds 10,000,000 (``test_graph_10m.py``
  runs that size alone, with its peak RSS).

Measured (session 3, 2 loaded cores, same-run A/B of the previous and this host layer, CPU time,
best of 3): 10,000 queued replays 41-44 -> 19-20 us per replay, x3.5-3.8 -> x1.75-1.9 of the
10-replay cost (target: flat within 20 %). A full ring costs an engine run per replay (0.89 now,
1.77 before: MODEL_EXECUTE and its EndGraph wait share one wait), and a run costs ~3 us of host
bookkeeping plus the engine call's fixed cost: flat needs a cheaper engine call (its per-call
scheduler build and dispatch), not more host work removed.
"""
from __future__ import annotations

import os
import time

import numpy as np
import pytest

import npusim as ns
from npusim import acl

RELAXED = 2


def _ok(r):
    code = r[-1] if isinstance(r, tuple) else r
    assert code == 0, r
    return r[0] if isinstance(r, tuple) and len(r) == 2 else r


class Setup:
    def __init__(self, profile: str = "Ascend910B"):
        ns.reset()
        ns.configure(profile=profile)
        _ok(acl.init())
        _ok(acl.rt.set_device(0))
        self.s = _ok(acl.rt.create_stream())
        self.side = _ok(acl.rt.create_stream())
        self.x = _ok(acl.rt.malloc(64, 0))
        binary = _ok(acl.rt.binary_load_from_file(ns.samples.binary_path(), None))
        self.func = _ok(acl.rt.binary_get_function(binary, "EasyOPf"))
        self.args = _ok(acl.rt.malloc(8, 0))
        ptr = np.array([self.x], np.uint64)
        _ok(acl.rt.memcpy(self.args, 8, acl.util.numpy_to_ptr(ptr), 8, 1))
        self.e1 = _ok(acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC))
        self.e2 = _ok(acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC))

    def launch(self, s, n=1):
        for _ in range(n):
            _ok(acl.rt.launch_kernel(self.func, 1, self.args, 8, s))

    def fork_join_graph(self, n: int = 30):
        """n kernels: half on the origin, half on a side stream joined by events."""
        _ok(acl.mdl.ri_capture_begin(self.s, RELAXED))
        self.launch(self.s, n // 2)
        _ok(acl.rt.record_event(self.e1, self.s))
        _ok(acl.rt.stream_wait_event(self.side, self.e1))
        self.launch(self.side, n - n // 2)
        _ok(acl.rt.record_event(self.e2, self.side))
        _ok(acl.rt.stream_wait_event(self.s, self.e2))
        return _ok(acl.mdl.ri_capture_end(self.s))


def _table(bench_report, title, unit, rows):
    bench_report(f"{title}:")
    for size, per in rows:
        bench_report(f"  {size:>10,}  {per:10.2f} {unit}")
    per = [r[1] for r in rows]
    bench_report(f"  largest / smallest: x{per[-1] / per[0]:.2f}   max / min: x{max(per) / min(per):.2f}")


def test_replays_queued(benchmark, bench_report):
    """Each size is timed ``reps`` times on one built graph (about 3,000 replays per size, at
    least 5 rounds) and the median round is the row: one round of 10 replays is ~60 us of wall
    time, too short to read from a single sample."""
    rows = []
    for n in (10, 100, 1000, 10_000):
        p = Setup()
        m = p.fork_join_graph(32)
        _ok(acl.mdl.ri_execute_async(m, p.s))           # built (first execution)
        _ok(acl.rt.synchronize_stream(p.s))
        times = []
        for _ in range(max(5, 3000 // n)):
            t0 = time.perf_counter()
            for _ in range(n):
                _ok(acl.mdl.ri_execute_async(m, p.s))
            _ok(acl.rt.synchronize_stream(p.s))
            times.append((time.perf_counter() - t0) / n * 1e6)
        rows.append((n, float(np.median(times))))
    _table(bench_report, "replays queued before one synchronize (33-task, 2-stream graph; "
           "median round)", "us/replay", rows)
    benchmark.pedantic(lambda: None, rounds=1)


def _median_us(fn, reps: int, rounds: int = 7) -> float:
    """Median over ``rounds`` of the wall time per call of ``reps`` calls of ``fn`` (us)."""
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        times.append((time.perf_counter() - t0) / reps * 1e6)
    return float(np.median(times))


def test_resident_graphs(benchmark, bench_report):
    """Three costs against the graphs resident on the device (each built, its SQs idle): a new
    graph's whole life (capture, first replay, synchronize, destroy), one replay of a resident
    graph with its synchronize, and the synchronize of an idle stream. One graph's life runs
    first, unmeasured, so the first row is not the first use of each path."""
    life, replay, idle = [], [], []
    p = Setup()
    resident = []

    def one_life():
        m = p.fork_join_graph(30)
        _ok(acl.mdl.ri_execute_async(m, p.s))
        _ok(acl.rt.synchronize_stream(p.s))
        _ok(acl.mdl.ri_destroy(m))

    def one_replay():
        _ok(acl.mdl.ri_execute_async(resident[0], p.s))
        _ok(acl.rt.synchronize_stream(p.s))

    one_life()
    for n in (1, 10, 100, 1000):
        while len(resident) < n:
            m = p.fork_join_graph(30)
            _ok(acl.mdl.ri_execute_async(m, p.s))
            resident.append(m)
        _ok(acl.rt.synchronize_stream(p.s))
        life.append((n, _median_us(one_life, 10, 5)))
        replay.append((n, _median_us(one_replay, 200)))
        idle.append((n, _median_us(lambda: _ok(acl.rt.synchronize_stream(p.s)), 1000)))
    _table(bench_report, "one 30-task fork/join graph captured, replayed once and destroyed, "
           "with N graphs resident", "us/graph", life)
    _table(bench_report, "one replay of a resident 30-task graph + synchronize, with N graphs "
           "resident", "us/replay", replay)
    _table(bench_report, "synchronize of an idle stream, with N graphs resident", "us/sync", idle)
    benchmark.pedantic(lambda: None, rounds=1)


def test_events_and_updates(benchmark, bench_report):
    """The event calls with N events alive (made, never recorded): a record + wait pair across
    two streams, ``aclrtQueryEventStatus`` of a recorded event, and one more event's create +
    destroy; and a task update (``aclmdlRICaptureTaskUpdateBegin``, 4 launches, ``End``) of one
    graph with N graphs resident, each holding a 4-kernel task group."""
    def event_calls(n: int) -> tuple[float, float, float]:
        p = Setup()
        alive = [_ok(acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC)) for _ in range(n)]

        def record_wait():
            _ok(acl.rt.record_event(p.e1, p.s))
            _ok(acl.rt.stream_wait_event(p.side, p.e1))
        us = [_median_us(record_wait, 200)]
        _ok(acl.rt.synchronize_device())
        us.append(_median_us(lambda: acl.rt.query_event_status(p.e1), 1000))
        us.append(_median_us(lambda: _ok(acl.rt.destroy_event(
            _ok(acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC)))), 300))
        assert len(alive) == n
        return us

    event_calls(10)                 # warm-up: the first row is not the paths' first use
    pair, query, life = [], [], []
    for n in (10, 100, 1000, 10_000):
        a, b, c = event_calls(n)
        pair.append((n, a))
        query.append((n, b))
        life.append((n, c))
    _table(bench_report, "record + wait pair with N events alive", "us/pair", pair)
    _table(bench_report, "aclrtQueryEventStatus with N events alive", "us/call", query)
    _table(bench_report, "event create + destroy with N events alive", "us/pair", life)
    update = []
    p = Setup()
    upd = _ok(acl.rt.create_stream())
    groups = []
    for n in (10, 100, 1000):
        while len(groups) < n:
            _ok(acl.mdl.ri_capture_begin(p.s, RELAXED))
            _ok(acl.mdl.ri_capture_task_grp_begin(p.s))
            p.launch(p.s, 4)
            g = _ok(acl.mdl.ri_capture_task_grp_end(p.s))
            groups.append((_ok(acl.mdl.ri_capture_end(p.s)), g))
        m, g = groups[0]
        _ok(acl.mdl.ri_execute_async(m, p.s))
        _ok(acl.rt.synchronize_stream(p.s))

        def task_update():
            _ok(acl.mdl.ri_capture_task_update_begin(upd, g))
            p.launch(upd, 4)
            _ok(acl.mdl.ri_capture_task_update_end(upd))
        update.append((n, _median_us(task_update, 200)))
    _table(bench_report, "task update of one graph's 4-kernel group with N graphs resident",
           "us/update", update)
    benchmark.pedantic(lambda: None, rounds=1)


@pytest.mark.parametrize("profile", ["Ascend910B"])
def test_graph_size(benchmark, bench_report, profile):
    sizes = [10, 1000, 100_000, 1_000_000]
    if os.environ.get("NPUSIM_BENCH_10M"):
        sizes.append(10_000_000)
    rows = []
    for n in sizes:
        p = Setup(profile)

        def once():
            t0 = time.perf_counter()
            _ok(acl.mdl.ri_capture_begin(p.s, RELAXED))
            p.launch(p.s, n)
            m = _ok(acl.mdl.ri_capture_end(p.s))
            _ok(acl.mdl.ri_execute_async(m, p.s))
            _ok(acl.rt.synchronize_stream(p.s))
            dt = time.perf_counter() - t0
            _ok(acl.mdl.ri_destroy(m))
            return dt
        if n <= 100_000:
            once()                              # warm: this Setup's first graph of the size
        # the median of enough graphs for ~0.2 M tasks (small graphs), one graph from 1 M up
        reps = max(1, min(201, 200_000 // n))
        rows.append((n, sorted(once() for _ in range(reps))[reps // 2] / n * 1e6))
    _table(bench_report, f"capture + first replay of an N-task graph ({profile}; median of "
           f"warm graphs up to 100,000 tasks, one graph above)", "us/task", rows)
    benchmark.pedantic(lambda: None, rounds=1)


def test_streams_made(benchmark, bench_report):
    """Host calls with N streams made and idle: a device synchronize (one other stream busy
    with a memset each time), one more stream's create + destroy, and the synchronize of a
    finished stream."""
    sync_dev, life, done = [], [], []
    for n in (10, 100, 1000):
        p = Setup()
        idle = [_ok(acl.rt.create_stream()) for _ in range(n)]
        _ok(acl.rt.synchronize_device())

        def device_sync():
            _ok(acl.rt.memset_async(p.x, 64, 0, 64, p.s))
            _ok(acl.rt.synchronize_device())
        sync_dev.append((n, _median_us(device_sync, 200)))
        life.append((n, _median_us(
            lambda: _ok(acl.rt.destroy_stream(_ok(acl.rt.create_stream()))), 200)))
        done.append((n, _median_us(lambda: _ok(acl.rt.synchronize_stream(idle[0])), 1000)))
    _table(bench_report, "aclrtSynchronizeDevice with N idle streams (one busy)", "us/call",
           sync_dev)
    _table(bench_report, "stream create + destroy with N streams made", "us/pair", life)
    _table(bench_report, "synchronize of a finished stream with N streams made", "us/call", done)
    ctx_life = []
    for n in (10, 100, 1000):
        Setup()
        made = [_ok(acl.rt.create_context(0)) for _ in range(n)]

        def context_life():
            _ok(acl.rt.destroy_context(_ok(acl.rt.create_context(0))))
            _ok(acl.rt.set_current_context(made[0]))
        ctx_life.append((n, _median_us(context_life, 200)))
    _table(bench_report, "context create + destroy with N contexts made", "us/pair", ctx_life)
    benchmark.pedantic(lambda: None, rounds=1)


def test_live_allocations(benchmark, bench_report):
    """malloc + free with N blocks live: the page table's entries of the one block change and
    nothing ordered by address is kept, so the pair's cost does not depend on N."""
    from npusim.device.memory import Memory
    sizes = (10, 100, 1000, 10_000)
    reps = 2000

    def per_pair(malloc, free, n, middle):
        live = [malloc(256) for _ in range(n)]
        hole = None
        if middle:                       # a hole in the middle: the pair lands there
            hole = live[n // 2]
            free(hole)
        t0 = time.perf_counter()
        for _ in range(reps):
            free(malloc(256))
        dt = (time.perf_counter() - t0) / reps * 1e6
        for a in live:
            if a != hole:
                free(a)
        return dt

    for where, middle in (("at the end", False), ("in the middle", True)):
        mem = Memory(1 << 30, 1 << 20)
        rows = [(n, per_pair(mem.malloc, mem.free, n, middle)) for n in sizes]
        _table(bench_report, f"Memory.malloc + free with N blocks live, {where}", "us/pair", rows)
    rows = []
    for n in sizes:                      # first fit over N holes below, each too small
        mem = Memory(1 << 30, 1 << 20)
        blocks = [mem.malloc(512) for _ in range(2 * n)]
        for a in blocks[::2]:
            mem.free(a)                  # n holes of 512 B, each too small for 1 KiB
        rows.append((n, _median_us(lambda: mem.free(mem.malloc(1024)), 200, 5)))
    _table(bench_report, "Memory.malloc(1 KiB) + free with N smaller holes below (first fit)",
           "us/pair", rows)
    p = Setup()
    rows = [(n, per_pair(lambda b: _ok(acl.rt.malloc(b, 0)), lambda a: _ok(acl.rt.free(a)),
                         n, True)) for n in sizes]
    _table(bench_report, "aclrtMalloc + aclrtFree with N blocks live, in the middle", "us/pair",
           rows)
    benchmark.pedantic(lambda: None, rounds=1)
