"""Engine rate with core contention off and on, in the same run (docs/timing.md "Contention"):
``pytest bench/test_contention.py -s``.

Three programs, each run from the same snapshot with ``E_CONTEND`` 0 and 1: the single-stream
mix of ``test_engine_throughput.py`` (1/8 kernels), its 64 streams chained by events (1/4
kernels), and 16 independent streams of 1-block kernels only (every SQE takes cores from the
shared pool of the 910B's 50 vector cores). Off, a kernel costs one branch more than before
contention existed (compare ``test_engine_throughput.py`` before and after); on, it costs the
pool update (a sorted ring: O(blocks) when the kernel ends last, the usual case). Rates are printed, not asserted; before timing, engine and reference
must end identical with contention on.
"""
from __future__ import annotations

import numpy as np
import pytest

import engine_programs as P
from npusim.device import engine as E
from npusim.device import sqe as S
from npusim.testing import reference as R

N = 1_000_000
STREAMS, ITERS = 64, 3_906
KSTREAMS, KPER = 16, 62_500          # 16 streams x 62,500 kernels = 1,000,000 SQEs


def kernel_streams(n_streams: int, per: int):
    """``n_streams`` eager SQs of ``per`` 1-block EasyOPf kernels each (explicit 1 us)."""
    d = P.new_device()
    qs = [d.alloc_sq(per) for _ in range(n_streams)]
    kargs, _ = P._kernel_args(d, n_streams)
    buf = d.mem.malloc(64)
    for i, q in enumerate(qs):
        base = int(d.sqs[q, E.Q_BASE])
        rows = d.pool[base:base + per]
        P._fill(rows, np.full(per, S.OP_KERNEL, np.uint8), kargs[i], buf, 0, 0,
                np.zeros(per, np.int64))
        rows["a3"] = 1000
        d.sqs[q, E.Q_TAIL] = per
    return d, qs


PROGRAMS = {
    "single stream mix": (lambda: P.single_stream(N), lambda: P.single_stream(2_000), N),
    "64 chained streams": (lambda: P.chained_streams(STREAMS, ITERS),
                           lambda: P.chained_streams(8, 20), STREAMS * ITERS * 4),
    "16 kernel streams": (lambda: kernel_streams(KSTREAMS, KPER),
                          lambda: kernel_streams(4, 300), KSTREAMS * KPER),
}


def _same_on_engine_and_reference(d) -> None:
    d.set_contention(True)
    eng = [a.copy() for a in P.engine_args(d)]
    ref = [a.copy() for a in P.engine_args(d)]
    assert E.run(*eng) == R.run(*ref) == E.R_IDLE
    for x, y in zip(R.outcome(eng), R.outcome(ref)):
        assert np.array_equal(x, y)


@pytest.fixture(scope="module", params=list(PROGRAMS))
def program(request):
    make, small, n = PROGRAMS[request.param]
    _same_on_engine_and_reference(small()[0])
    d, _ = make()
    snaps = {}
    for on in (False, True):
        d.set_contention(on)
        snaps[on] = P.Snapshot(d)
    return request.param, d, n, snaps


@pytest.mark.parametrize("on", [False, True], ids=["off", "on"])
def test_contention_rate(benchmark, program, on, bench_report, bench_results):
    name, d, n, snaps = program
    r = benchmark.pedantic(E.run, setup=snaps[on].restore, rounds=10, warmup_rounds=1,
                           iterations=1)
    assert r == E.R_IDLE and d.st[E.E_STEPS] == n and d.st[E.E_CONTEND] == int(on)
    rate = n / benchmark.stats.stats.median / 1e6
    bench_results[(name, on)] = rate
    benchmark.extra_info.update(sqes=n, msqe_per_s=round(rate, 2), contention=on,
                                end_ns=int(d.now))
    line = f"[contention {'on ' if on else 'off'}] {name:<20} {rate:7.2f} M SQE/s  " \
           f"(median of 10, simulated end {d.now / 1e6:.3f} ms)"
    off = bench_results.get((name, False))
    if on and off:
        line += f"  on/off {rate / off:.3f}"
    bench_report(line)
