"""``npusim.sweep`` on the local Dask cluster against ``client="serial"`` — ``pytest
bench/test_sweep.py -s -p no:nbmake -o addopts=""``.

The sweep: the eager-vs-graph comparison (``npusim.trace.savings.compare``) over 6 kernel counts
(32 ... 1024) x 10 kernel durations x 4 profiles = 240 points, each a fresh simulator; the same
points serially in this process and on a LocalCluster of one worker process per core (started by
the sweep, ``client=None``, start-up included, and on a cluster already running). Printed: the
wall time of each, the speed-up, and the cluster's cost per point, measured on 240 points that do
nothing (a started cluster, so it is scheduling, pickling, the round trip and the point's two
``npusim.reset()``), next to the same trivial points in this process; and the simulation time per
point in each place (a new worker's first point loads the compiled engine and kernels). Nothing
is asserted on time.
"""
from __future__ import annotations

import logging
import sys
import time

import cloudpickle
import pytest

import npusim
from npusim.profiles import PROFILES
from npusim.sweep import workers_of_machine
from npusim.trace.savings import compare

distributed = pytest.importorskip("distributed")

AXES = dict(n=[32, 64, 128, 256, 512, 1024],
            kernel_ns=[250, 500, 1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 128_000],
            profile=list(PROFILES))


def speedup(n: int, kernel_ns: int, profile: str) -> dict:
    c = compare(n, kernel_ns, profile)
    return {"speedup": c.speedup, "saved_cpu_ns": c.saved_cpu_ns, "saved_npu_ns": c.saved_npu_ns}


def nothing(i: int) -> int:
    return i


def test_sweep_local_cluster_vs_serial(benchmark, bench_report):
    cloudpickle.register_pickle_by_value(sys.modules[__name__])   # workers need only npusim
    npusim.sweep(speedup, n=[8], kernel_ns=[1000], profile=list(PROFILES), client="serial")
    t0 = time.perf_counter()
    serial = npusim.sweep(speedup, client="serial", **AXES)
    t_serial = time.perf_counter() - t0
    out = {}

    def on_cluster():
        t = time.perf_counter()
        out["df"] = npusim.sweep(speedup, **AXES)                  # client=None: a new cluster
        out["t"] = time.perf_counter() - t
    benchmark.pedantic(on_cluster, rounds=1, iterations=1)
    dist, t_cold = out["df"], out["t"]
    cols = ["n", "kernel_ns", "profile", "speedup", "saved_cpu_ns", "saved_npu_ns", "error"]
    assert len(serial) == 240 and dist[cols].equals(serial[cols])
    W = workers_of_machine()
    t = time.perf_counter()
    with distributed.LocalCluster(n_workers=W, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=logging.ERROR) as lc, \
            distributed.Client(lc) as client:
        t_start = time.perf_counter() - t
        npusim.sweep(speedup, n=[8] * W, kernel_ns=[1000], profile=list(PROFILES),
                     client=client)             # each worker loads the engine and kernels
        t = time.perf_counter()
        warm = npusim.sweep(speedup, client=client, **AXES)
        t_warm = time.perf_counter() - t
        t = time.perf_counter()
        npusim.sweep(nothing, i=range(240), client=client)
        t_nothing = time.perf_counter() - t
    t = time.perf_counter()
    npusim.sweep(nothing, i=range(240), client="serial")
    t_nothing_serial = time.perf_counter() - t
    assert warm[cols].equals(serial[cols])
    cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    per_point = serial["wall_s"].median() * 1e3
    benchmark.extra_info.update(serial_s=round(t_serial, 3), cluster_s=round(t_cold, 3),
                                warm_cluster_s=round(t_warm, 3),
                                overhead_ms_per_point=round(t_nothing / 240 * 1e3, 3))
    bench_report(f"[sweep] 240 points (eager vs graph, median {per_point:.1f} ms of simulation "
                 f"each), {W} worker processes:")
    bench_report(f"  serial {t_serial:6.2f} s; local cluster started by the sweep {t_cold:6.2f} s "
                 f"(speed-up {t_serial / t_cold:.2f}x); on a running cluster {t_warm:6.2f} s "
                 f"(speed-up {t_serial / t_warm:.2f}x)")
    bench_report(f"  median simulation per point: {per_point:.1f} ms in this process, "
                 f"{warm['wall_s'].median() * 1e3:.1f} ms on the workers; the first point of a "
                 f"new worker {dist.groupby('worker')['wall_s'].max().median():.2f} s (it loads "
                 f"the compiled engine)")
    bench_report(f"  cluster start-up {t_start:.2f} s; cost per point on the cluster "
                 f"{t_nothing / 240 * 1e3:.2f} ms (240 empty points), in this process "
                 f"{t_nothing_serial / 240 * 1e3:.3f} ms")
