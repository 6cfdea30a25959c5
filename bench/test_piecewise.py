"""The piecewise-graph program of a serving framework — ``pytest bench/test_piecewise.py -s
--benchmark-only``.

490 graphs (49 layers' pieces × 10 batch sizes), each 30 kernel tasks with a fork/join to a side
stream and a 4-kernel task group (the attention that is updated every step). Printed: the capture
cost per kernel launch and per graph (wall, all 490 graphs), the first decode step's extra cost
per graph (first execution: BuildSqCq), and one decode step of one size — its 49 graphs
each updated (task-update begin, 4 launches on the update stream, end) and replayed, ordered by
an event, then a synchronize — in wall ms per step (median of the steps). Each also in CPU time
of the process (``time.process_time``), what to read on a loaded machine.

Session 11: ``ri_capture_end`` on the facade's one-frame path saves 1.9 us per end (15.6 -> 13.7,
each call timed over 2,000 graphs, three rounds against the previous tree). On the whole graph
that is within this machine's drift: three same-tree A/B pairs in one later hour gave 192.0 /
187.8 / 183.1 -> 176.4 / 182.2 / 183.7 us per graph, while the same code measured 135-164 us
half an hour earlier.

Session 13: the SQE pool grows by a longer view of reserved pages (``state.POOL_RESERVE``), not
by ``ndarray.resize``, which remapped or copied the whole pool at each step: with 490 graphs
resident every capture's new rings grew a pool that kept getting larger. Two same-run pairs,
c3d3a81 against the change: capture 9.82 / 10.56 -> 4.40 / 4.51 us per launch, one 30-task
graph 294.7 / 316.9 -> 132.0 / 135.4 us; the decode step 2.79 / 1.85 -> 1.94 / 1.82 ms. A
third pair in a slower hour: 13.23 -> 6.29 us per launch, 396.8 -> 188.7 us per graph. Run
alone (a script, not pytest), the old tree's capture costs 181-213 us per graph against
155-193: how much each resize copies depends on the process's allocation history (glibc's
dynamic mmap threshold), and a pytest process is the heavier case.

Session 14, a correction: most of session 13's gain above was where a full collection of
CPython's cyclic collector fell, not the pool. The old tree ran from a fresh clone, where pytest
imports npusim through the ordinary loader; this checkout's npusim is the installed plugin's
package, which pytest imports through its assertion rewriter. The two allocate differently, and
in the fresh clone one full collection (50 ms over ~100,000 objects, mostly numba's) lands
inside the 490 captures. Fresh clones of both commits, each run after a ``gc.collect()``: c3d3a81
4.15 / 4.27, the pool change 3.96 / 4.13 us per launch. The bench now prints the collector's
time in the window (``gc_clock.py``) and the figure without it. In a fresh clone of this commit:
223.7 us per graph with one full collection in the window, 116.8 without; in this checkout 118.8
with none, 115.2 without. Kept graphs make the collector's cost real, not only noise: a graph
leaves ~36 tracked objects, and CPython runs a full collection each time the surviving objects
grow by a quarter: 4,000 kept graphs of this shape took two full collections (164 ms), 46 us
per graph (docs/architecture.md, "Host objects and the cyclic collector").
"""
from __future__ import annotations

import statistics
import time

import numpy as np

import npusim as ns
from gc_clock import GcClock
from npusim import acl

SIZES, LAYERS, TASKS, GROUP = 10, 49, 30, 4
RELAXED = 2


def _ok(r):
    code = r[-1] if isinstance(r, tuple) else r
    assert code == 0, r
    return r[0] if isinstance(r, tuple) and len(r) == 2 else r


def test_piecewise_490_graphs(benchmark, bench_report):
    ns.reset()
    _ok(acl.init())
    _ok(acl.rt.set_device(0))
    s, side, upd = (_ok(acl.rt.create_stream()) for _ in range(3))
    fork, join, done = (_ok(acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC))
                        for _ in range(3))
    b = _ok(acl.rt.binary_load_from_file(ns.samples.binary_path(), None))
    f = _ok(acl.rt.binary_get_function(b, "EasyOPf"))
    x = _ok(acl.rt.malloc(64, 0))
    args = _ok(acl.rt.malloc(8, 0))
    ptr = np.array([x], np.uint64)
    _ok(acl.rt.memcpy(args, 8, acl.util.numpy_to_ptr(ptr), 8, 1))

    def launch(stream, n):
        for _ in range(n):
            _ok(acl.rt.launch_kernel(f, 1, args, 8, stream))

    graphs = []                                   # (model, task group) per size and layer
    with GcClock() as clock:
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(SIZES):
            row = []
            for _ in range(LAYERS):
                _ok(acl.mdl.ri_capture_begin(s, RELAXED))
                launch(s, 8)
                _ok(acl.mdl.ri_capture_task_grp_begin(s))
                launch(s, GROUP)
                g = _ok(acl.mdl.ri_capture_task_grp_end(s))
                _ok(acl.rt.record_event(fork, s))
                _ok(acl.rt.stream_wait_event(side, fork))
                launch(side, 8)
                _ok(acl.rt.record_event(join, side))
                _ok(acl.rt.stream_wait_event(s, join))
                launch(s, TASKS - 8 - GROUP - 8)
                row.append((_ok(acl.mdl.ri_capture_end(s)), g))
            graphs.append(row)
        capture_us = (time.perf_counter() - t0) / (SIZES * LAYERS * TASKS) * 1e6
        capture_cpu = (time.process_time() - c0) / (SIZES * LAYERS * TASKS) * 1e6
    gc_us = clock.total / (SIZES * LAYERS * TASKS) * 1e6  # the collector's share (gc_clock.py)

    def step(size):
        for m, g in graphs[size]:
            _ok(acl.mdl.ri_capture_task_update_begin(upd, g))
            launch(upd, GROUP)
            _ok(acl.mdl.ri_capture_task_update_end(upd))
            _ok(acl.rt.record_event(done, upd))
            _ok(acl.rt.stream_wait_event(s, done))
            _ok(acl.mdl.ri_execute_async(m, s))
        _ok(acl.rt.synchronize_stream(s))

    t1 = time.perf_counter()
    step(0)                                       # first execution builds every graph of size 0
    first_ms = (time.perf_counter() - t1) * 1e3
    times, cpu = [], []
    for _ in range(10):
        t1, c1 = time.perf_counter(), time.process_time()
        step(0)
        times.append(time.perf_counter() - t1)
        cpu.append(time.process_time() - c1)
    step_ms = statistics.median(times) * 1e3
    step_cpu = statistics.median(cpu) * 1e3
    bench_report(f"piecewise program: {SIZES * LAYERS} graphs of {TASKS} tasks (fork/join, "
                 f"{GROUP}-kernel task group): capture {capture_us:.2f} us per launch "
                 f"({capture_cpu:.2f} CPU; target <= 10); decode step ({LAYERS} updates + "
                 f"{LAYERS} replays + sync) {step_ms:.2f} ms wall ({step_cpu:.2f} CPU; target "
                 f"<= 3)")
    bench_report(f"piecewise program: one {TASKS}-task graph captured in "
                 f"{capture_us * TASKS:.1f} us ({capture_cpu * TASKS:.1f} CPU; begin, task group, "
                 f"fork/join, end; target <= 150), {(capture_us - gc_us) * TASKS:.1f} us without "
                 f"the collector ({clock.describe()} in the 490 captures); the first decode step "
                 f"(its {LAYERS} graphs' first executions) {first_ms:.2f} ms, "
                 f"{(first_ms - step_ms) / LAYERS * 1e3:.1f} us more per graph than a later step")
    benchmark.pedantic(lambda: step(0), rounds=3, iterations=1)
