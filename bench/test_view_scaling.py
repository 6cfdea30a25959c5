"""A kernel view's cost against the number of live allocations (pytest-benchmark):
``pytest bench/test_view_scaling.py -s --benchmark-only -q -p no:randomly``, or
``python bench/test_view_scaling.py`` for the table alone (what an A/B against another checkout,
``PYTHONPATH=<checkout>``, runs in alternating fresh interpreters).

The built-in bodies ``EasyOPf`` (two views: its args slot and ``x``) and ``CountDown`` (three:
args, counter, cond word) are called directly through their cfunc address in a jitted loop
(``kernels.call_kernel``, as the engine calls them), on a ``Memory`` holding 5 / 35 / 200 /
2,000 live device blocks with the kernel's buffers in the middle of them. Every view finds the
block holding its address (``memview.check``): printed as ns per call against live
allocations, so a cost that grows with what is resident shows as a growing column. Best of
``REPEATS`` timings of ``CALLS`` calls; nothing is asserted.
"""
from __future__ import annotations

import time

import numpy as np
from numba import njit

import npusim  # noqa: F401  (registers the built-in kernels)
from npusim.device.kernels import TABLE, call_kernel
from npusim.device.memory import Memory

LIVE = (5, 35, 200, 2_000)
CALLS = 200_000
REPEATS = 7


@njit(cache=True)
def _calls(fn, mem, ctx, args, k):
    s = 0
    for _ in range(k):
        s += call_kernel(fn, mem.ctypes, mem.size, ctx.ctypes, args, 0, 1)
    return s


def _setup(live: int):
    """A Memory with ``live`` device blocks; the two kernel buffers and the args block sit in
    the middle of the address range (all blocks small: 64 B, the first-fit order)."""
    m = Memory(1 << 26, 1 << 20)
    before = (live - 3) // 2
    for _ in range(before):
        m.malloc(64)
    x, w, args = m.malloc(64), m.malloc(64), m.malloc(16)
    for _ in range(live - 3 - before):
        m.malloc(64)
    assert sum(m.n_allocations()) == live
    m.view(args, 16)[:] = np.array([x, w], np.int64).view(np.uint8)
    m.view(x, 8)[:] = np.array([1 << 40], np.int64).view(np.uint8)
    return m, args


def per_call_ns(name: str, live: int) -> float:
    kid = TABLE.id(name)
    TABLE.ensure(kid)
    fn = int(TABLE.addr[kid])
    m, args = _setup(live)
    ctx = m.ctx
    assert _calls(fn, m.arena, ctx, args, 10) == 0
    best = float("inf")
    for _ in range(REPEATS):
        t = time.perf_counter_ns()
        _calls(fn, m.arena, ctx, args, CALLS)
        best = min(best, (time.perf_counter_ns() - t) / CALLS)
    assert ctx[8] == 0, "a view faulted"          # C_FAULT
    return best


def table() -> list[str]:
    lines = ["kernel      " + "".join(f"{n:>9,}" for n in LIVE) + "   (ns per call, live allocations)"]
    for name in ("EasyOPf", "CountDown"):
        lines.append(f"{name:<12}" + "".join(f"{per_call_ns(name, n):9.2f}" for n in LIVE))
    return lines


def test_view_cost_against_live_allocations(benchmark, bench_report):
    lines = benchmark.pedantic(table, rounds=1, iterations=1)
    for line in lines:
        bench_report(line)


if __name__ == "__main__":
    print("\n".join(table()))
