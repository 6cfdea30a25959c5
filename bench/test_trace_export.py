"""Trace export at scale: ``pytest bench/test_trace_export.py -s``.

A recorded device trace of 20,000 kernel launches with an event record and wait between two
named streams every launch (80,000 rows with the waits and records, plus the host's API calls),
exported to Chrome / Perfetto JSON two ways in the same run: the vectorised path
(``Trace.chrome_json``, what ``to_chrome`` writes) and the per-row reference it replaced
(``json.dumps(Trace.events())``). Reported: median wall time, rows/s, bytes, and the ratio; the
two texts parse to the same events. A 1,000,000-row trace (the rows tiled) shows the vectorised
path's rate at scale.
"""
from __future__ import annotations

import json
import time

import numpy as np
import pytest

import npusim
from npusim.trace.chrome import Trace

N = 20_000


@pytest.fixture(scope="module")
def trace():
    npusim.reset()
    npusim.configure(trace=True)
    dev = npusim.Device("Ascend910B")
    a, b = dev.stream(name="compute"), dev.stream(name="comm")
    x = dev.malloc(64, name="x").fill(0)
    ev = dev.event()
    for _ in range(N):
        a.launch("EasyOPf", 1, (x,))
        a.record(ev)
        b.wait(ev)
        b.launch("EasyOPf", 1, (x,))
    dev.synchronize()
    tr = dev.trace()
    npusim.reset()
    return tr


def _median(fn, rounds):
    ts = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts)), out


def test_vectorised_export_against_the_per_row_path(benchmark, trace, bench_report):
    n = len(trace) + len(trace.host)
    old_s, old = _median(lambda: json.dumps({"traceEvents": trace.events(),
                                             "displayTimeUnit": "ns"}), 3)
    benchmark.pedantic(trace.chrome_json, rounds=5, iterations=1, warmup_rounds=1)
    new_s = benchmark.stats.stats.median
    new = trace.chrome_json()
    assert json.loads(new) == json.loads(old)
    ratio = old_s / new_s
    bench_report(f"trace export, {len(trace)} device rows + {len(trace.host)} host calls: "
                 f"per-row {old_s * 1e3:.0f} ms ({n / old_s:,.0f} rows/s, {len(old) / 1e6:.1f} MB)"
                 f" | vectorised {new_s * 1e3:.0f} ms ({n / new_s:,.0f} rows/s, "
                 f"{len(new) / 1e6:.1f} MB) | x{ratio:.1f}")
    benchmark.extra_info.update(rows=n, per_row_s=old_s, vectorised_s=new_s, ratio=ratio)
    assert ratio > 1


def test_a_million_rows(benchmark, trace, bench_report):
    reps = -(-1_000_000 // len(trace))
    big = Trace(np.tile(trace.rows, reps)[:1_000_000], trace.stream_names, 0, (), (),
                np.tile(trace.waiting, reps)[:1_000_000], trace.buffer_names)
    benchmark.pedantic(big.chrome_json, rounds=3, iterations=1, warmup_rounds=0)
    s = benchmark.stats.stats.median
    bench_report(f"trace export, 1,000,000 device rows: vectorised {s:.2f} s "
                 f"({1e6 / s:,.0f} rows/s)")
    benchmark.extra_info.update(rows=1_000_000, seconds=s)
