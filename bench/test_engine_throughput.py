"""Engine throughput and memory (pytest-benchmark): ``pytest bench -s --benchmark-only``.

Each speed figure is compared with the pure-Python interpreter of the same SQEs
(``npusim.testing.reference``) measured in the same run (design.md §6). The reference needs
seconds where the engine needs milliseconds, so it runs a ~20,000-SQE prefix of the same program
and its rate is scaled to the full size; the output says so. Before timing, both run the same
small program from identical copies of the state and must end identical, so the two rates are
rates of the same semantics.

Targets (from the scale issue): single stream >= 50 M SQE/s and >= 300x the pure-Python
baseline; 64 chained streams >= 20 M SQE/s; <= 64 bytes of engine memory per queued SQE. Time targets are printed, not asserted (a loaded
machine must not fail CI); the memory bound is asserted.

Session 14: the single-stream ratio is read from interleaved pairs (``_paired_ratio``). The two
benchmarks' medians gave 265-505x within one hour: the reference's three rounds are timed in
their own test, and its first is cold. Paired, the ratio still moves with the hour, because
numba's code and the interpreter do not slow down alike: 337 / 353 / 342x in one hour, 257 /
271 / 263 / 269x in a later one. A script of the same pairs read 7.08 ms per engine round
(7.04 back to back) against 36.3 ms for the reference's 20,000 SQEs: 256x.
"""
from __future__ import annotations

import time

import numpy as np
import pytest

import engine_programs as P
from npusim.device import engine as E
from npusim.testing import reference as R

N = 1_000_000                  # single stream
REF_N = 20_000                 # reference prefix of the same SQE array
STREAMS, ITERS = 64, 3_906     # 64 chained streams x 3,906 iterations x 4 SQEs = 999,936 SQEs
REF_ITERS = 78                 # reference: 64 x 78 x 4 = 19,968 SQEs
TARGET_MSQE, TARGET_RATIO = 50.0, 300.0
TARGET_CHAIN_MSQE = 20.0
PAIRS = 7                      # interleaved engine / reference rounds for a ratio


def _same_on_engine_and_reference(d) -> None:
    """Run ``d`` on both implementations from identical copies; they must end identical."""
    eng = [a.copy() for a in P.engine_args(d)]
    ref = [a.copy() for a in P.engine_args(d)]
    assert E.run(*eng) == R.run(*ref) == E.R_IDLE
    for x, y in zip(R.outcome(eng), R.outcome(ref)):
        assert np.array_equal(x, y)


def _median(benchmark) -> float:
    return benchmark.stats.stats.median


def _rate(steps: int, seconds: float) -> float:
    return steps / seconds / 1e6


# ---------------------------------------------------------------- (a) one stream, 1M SQEs

@pytest.fixture(scope="module")
def single():
    _same_on_engine_and_reference(P.single_stream(2_000)[0])
    d, q = P.single_stream(N)
    return d, q, P.Snapshot(d)


def test_single_stream_engine(benchmark, single, bench_report, bench_results):
    d, q, snap = single
    r = benchmark.pedantic(E.run, setup=snap.restore, rounds=10, warmup_rounds=1, iterations=1)
    assert r == E.R_IDLE and d.sqs[q, E.Q_HEAD] == N and d.st[E.E_STEPS] == N
    rate = _rate(N, _median(benchmark))
    bench_results["single_engine"] = rate
    benchmark.extra_info.update(sqes=N, msqe_per_s=round(rate, 2), mix=P.MIX_TEXT)
    bench_report(f"[engine] single stream, {N:,} SQEs ({P.MIX_TEXT}):")
    bench_report(f"  engine     {rate:8.2f} M SQE/s  (median of 10 rounds, "
                 f"{_median(benchmark) * 1e3:.1f} ms per run)")


def _paired_ratio(fast, n_fast: int, slow, n_slow: int, pairs: int = PAIRS) -> float:
    """The median over ``pairs`` interleaved rounds of (engine rate / reference rate), each pair
    timed back to back: the reference round takes ~50 ms and the engine's ~7 ms, and this
    machine drifts by 2x between minutes, so two separately timed tests (the benchmarks above)
    give a ratio that moves with the drift, 265-505x for the same code in one hour. ``fast`` and
    ``slow``: snapshots whose restore gives the engine's and the reference's arguments."""
    ratios = []
    for _ in range(pairs):
        args, _ = fast.restore()
        t0 = time.perf_counter()
        assert E.run(*args) == E.R_IDLE
        t_fast = time.perf_counter() - t0
        args, _ = slow.restore()
        t0 = time.perf_counter()
        assert R.run(*args) == E.R_IDLE
        t_slow = time.perf_counter() - t0
        ratios.append((n_fast / t_fast) / (n_slow / t_slow))
    return float(np.median(ratios))


def test_single_stream_reference(benchmark, single, bench_report, bench_results):
    d, q, pristine = single
    snap = pristine.with_tails({q: REF_N})
    r = benchmark.pedantic(R.run, setup=snap.restore, rounds=3, iterations=1)
    assert r == E.R_IDLE and d.st[E.E_STEPS] == REF_N
    rate = _rate(REF_N, _median(benchmark))
    benchmark.extra_info.update(sqes=REF_N, scaled_to=N, msqe_per_s=round(rate, 4))
    bench_report(f"  reference  {rate:8.4f} M SQE/s  (pure Python, the first {REF_N:,} SQEs of "
                 f"the same array, scaled: {N / rate / 1e6:.1f} s for {N:,})")
    eng = bench_results.get("single_engine")
    if eng:
        ratio = _paired_ratio(pristine, N, snap, REF_N)
        benchmark.extra_info["engine_over_reference"] = round(ratio, 1)
        bench_report(f"  engine / reference = {ratio:,.0f}x (median of {PAIRS} interleaved pairs; "
                     f"the two benchmarks' medians: {eng / rate:,.0f}x)   targets: >= "
                     f"{TARGET_MSQE:.0f} M SQE/s {'met' if eng >= TARGET_MSQE else 'MISSED'}, >= "
                     f"{TARGET_RATIO:.0f}x {'met' if ratio >= TARGET_RATIO else 'MISSED'}")


# ---------------------------------------------------------------- (b) 64 streams chained by events

@pytest.fixture(scope="module")
def chained():
    _same_on_engine_and_reference(P.chained_streams(8, 20)[0])
    d, qs = P.chained_streams(STREAMS, ITERS)
    return d, qs, P.Snapshot(d)


def test_chained_streams_engine(benchmark, chained, bench_report, bench_results):
    d, qs, snap = chained
    n = STREAMS * ITERS * len(P.CHAIN)
    r = benchmark.pedantic(E.run, setup=snap.restore, rounds=5, warmup_rounds=1, iterations=1)
    assert r == E.R_IDLE and d.st[E.E_STEPS] == n
    rate = _rate(n, _median(benchmark))
    bench_results["chain_engine"] = rate
    benchmark.extra_info.update(sqes=n, streams=STREAMS, msqe_per_s=round(rate, 2))
    bench_report(f"[engine] {STREAMS} streams chained by events (stream i waits for stream i-1's "
                 f"record; wait, EasyOPf, memset, record), {n:,} SQEs:")
    bench_report(f"  engine     {rate:8.2f} M SQE/s  (median of 5 rounds, "
                 f"{_median(benchmark) * 1e3:.1f} ms per run; target >= {TARGET_CHAIN_MSQE:.0f} M "
                 f"SQE/s {'met' if rate >= TARGET_CHAIN_MSQE else 'MISSED'})")


def test_chained_streams_reference(benchmark, bench_report, bench_results):
    d, _ = P.chained_streams(STREAMS, REF_ITERS)
    n = STREAMS * REF_ITERS * len(P.CHAIN)
    snap = P.Snapshot(d)
    r = benchmark.pedantic(R.run, setup=snap.restore, rounds=3, iterations=1)
    assert r == E.R_IDLE and d.st[E.E_STEPS] == n
    rate = _rate(n, _median(benchmark))
    benchmark.extra_info.update(sqes=n, streams=STREAMS, msqe_per_s=round(rate, 4))
    full = STREAMS * ITERS * len(P.CHAIN)
    bench_report(f"  reference  {rate:8.4f} M SQE/s  (pure Python, {STREAMS} streams x {REF_ITERS} "
                 f"iterations = {n:,} SQEs, scaled: {full / rate / 1e6:.1f} s for {full:,})")
    eng = bench_results.get("chain_engine")
    if eng:
        benchmark.extra_info["engine_over_reference"] = round(eng / rate, 1)
        bench_report(f"  engine / reference = {eng / rate:,.0f}x")


# ---------------------------------------------------------------- (c) memory per queued SQE

def test_memory_per_queued_sqe(benchmark, bench_report):
    """Queue 1M SQEs (timed: the host writes whole columns), then count the engine's bytes."""
    d, _ = benchmark.pedantic(P.single_stream, args=(N,), rounds=3, iterations=1)
    half, _ = P.single_stream(N // 2)
    chain, _ = P.chained_streams(STREAMS, ITERS)
    n_chain = STREAMS * ITERS * len(P.CHAIN)
    use, alloc = P.engine_bytes(d)
    marginal = (use - P.engine_bytes(half)[0]) / (N - N // 2)
    c_use, c_alloc = P.engine_bytes(chain)
    row = d.pool.dtype.itemsize
    benchmark.extra_info.update(bytes_per_sqe_marginal=marginal, bytes_per_sqe=use / N,
                                bytes_per_sqe_allocated=alloc / N,
                                bytes_per_sqe_64_streams=c_use / n_chain)
    bench_report("[engine] memory per queued SQE (SQE pool + SQ table + sync table):")
    bench_report(f"  each further SQE        {marginal:9.4f} B   (one {row}-byte pool row)")
    bench_report(f"  1 stream, {N:,}     {use / N:9.4f} B in use, {alloc / N:.4f} B allocated")
    bench_report(f"  {STREAMS} streams, {n_chain:,}  {c_use / n_chain:9.4f} B in use, "
                 f"{c_alloc / n_chain:.4f} B allocated (pool growth slack included)")
    bench_report(f"  (the per-SQ and per-slot tables are fixed costs: {use - row * N:,} B for 1 "
                 f"stream, {c_use - row * n_chain:,} B for {STREAMS})")
    assert marginal <= 64                      # the target: 64 bytes per queued SQE
    assert (use - row * N) / N < 0.01          # fixed tables: per stream/slot, not per SQE
    assert (c_use - row * n_chain) / n_chain < 0.01
