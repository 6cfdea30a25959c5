"""How the engine's cost per operation grows with the work around it (pytest-benchmark):
``pytest bench/test_engine_scaling.py -s --benchmark-only``.

* Chained streams, 1 -> 256 (``engine_programs.chained_streams``: stream i waits for stream
  i-1's record; wait, EasyOPf, memset, record): ns per SQE against the number of streams. Each SQE
  of a wide chain is one scheduler pick, so this is the cost of a pick against the number of
  runnable and parked SQs.
* SWITCH, 2 -> 1,000 branches (``test_cond._switch_loop``: a WHILE whose body counts down and
  evaluates the SWITCH): µs per evaluation against the number of branches, i.e. against the
  number of idle model SQs on the device.

The results are printed as tables (``bench_report``); nothing is asserted about time.
"""
from __future__ import annotations

import time

import numpy as np
import pytest

import engine_programs as P
from npusim.device import engine as E
from test_cond import _switch_loop, _time_launches, device  # noqa: F401  (device: a fixture)

STREAMS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
SQES = 250_000                  # per chain size (rounded down to whole iterations)
BRANCHES = (2, 10, 100, 1000)


def _chain_ns_per_sqe(n_streams: int, rounds: int = 5) -> float:
    iters = max(1, SQES // (n_streams * len(P.CHAIN)))
    d, _ = P.chained_streams(n_streams, iters)
    snap = P.Snapshot(d)
    n = n_streams * iters * len(P.CHAIN)
    times = []
    for _ in range(rounds + 1):
        args, _ = snap.restore()
        t0 = time.perf_counter()
        assert E.run(*args) == E.R_IDLE
        times.append(time.perf_counter() - t0)
    assert d.st[E.E_STEPS] == n
    return float(np.median(times[1:])) / n * 1e9


def test_chained_streams_scaling(benchmark, bench_report):
    rows = benchmark.pedantic(lambda: [(s, _chain_ns_per_sqe(s)) for s in STREAMS],
                              rounds=1, iterations=1)
    benchmark.extra_info["ns_per_sqe_by_streams"] = {s: round(ns, 1) for s, ns in rows}
    bench_report(f"[engine] chained streams, ~{SQES:,} SQEs each: cost per SQE against streams")
    bench_report("  streams   ns/SQE   M SQE/s")
    for s, ns in rows:
        bench_report(f"  {s:7d} {ns:8.1f} {1e3 / ns:9.2f}")


@pytest.mark.parametrize("n_branches", BRANCHES)
def test_switch_scaling(benchmark, device, n_branches, bench_report):  # noqa: F811
    g = _switch_loop(n_branches, 1000)          # 1,000 evaluations per launch
    loop = _switch_loop(0, 1000)
    s = benchmark.pedantic(lambda: _time_launches(g), rounds=1, iterations=1)
    loop_s = _time_launches(loop)
    us, loop_us = s / 1000 * 1e6, loop_s / 1000 * 1e6
    benchmark.extra_info.update(branches=n_branches, us_per_evaluation=round(us, 3),
                                loop_us_per_iteration=round(loop_us, 3))
    if n_branches == BRANCHES[0]:
        bench_report("[engine] SWITCH in a WHILE, 1,000 evaluations per launch: cost per "
                     "evaluation against branches (idle model SQs)")
        bench_report("  branches   us/evaluation   same loop without the SWITCH, us")
    bench_report(f"  {n_branches:8d} {us:15.3f} {loop_us:12.3f}")
