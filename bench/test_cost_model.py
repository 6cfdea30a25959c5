"""What per-launch cost models cost the host: ``pytest bench/test_cost_model.py -s``.

The capture hot path (``acl.rt.launch_kernel`` of the 1-block EasyOPf on a capturing stream,
5,000 launches a round), in the same run: no cost model anywhere (the launch core's one truth
test), a model set on another kernel (a dict miss per launch), and a model on EasyOPf itself (the
args read from device memory and a Python callable per launch). Reported as µs per launch and
ratios to the first.
"""
from __future__ import annotations

import time

import numpy as np
import npusim
from npusim import acl

N = 5000


def _ok(*values):
    *vals, ret = values
    assert ret == 0, ret
    return vals[0] if len(vals) == 1 else tuple(vals)


def _capture_round(func, args, size, stream):
    _ok(acl.mdl.ri_capture_begin(stream, 0))
    t0 = time.perf_counter()
    for _ in range(N):
        acl.rt.launch_kernel(func, 1, args, size, stream)
    dt = time.perf_counter() - t0
    mh = _ok(*acl.mdl.ri_capture_end(stream))
    _ok(acl.mdl.ri_destroy(mh))
    return dt / N


def _median(fn, rounds=7):
    return float(np.median([fn() for _ in range(rounds)]))


def test_launch_cost_with_and_without_models(easy_launch, bench_report, benchmark):
    func, args, stream = easy_launch
    one = lambda: _capture_round(func, args, 8, stream)          # noqa: E731
    one()                                                         # warm
    base = _median(one)
    npusim.set_kernel_cost("LongOPf", cost=lambda blocks, *a: 1000)
    try:
        other = _median(one)
        npusim.set_kernel_cost("EasyOPf", cost=lambda blocks, x: 1000 + blocks)
        try:
            own = _median(one)
        finally:
            npusim.reset_kernel_cost("EasyOPf")
    finally:
        npusim.reset_kernel_cost("LongOPf")
    benchmark.pedantic(one, rounds=3, iterations=1)
    bench_report(f"capture launch: no model {base * 1e6:.2f} µs | a model on another kernel "
                 f"{other * 1e6:.2f} µs (x{other / base:.2f}) | a model on this kernel "
                 f"{own * 1e6:.2f} µs (x{own / base:.2f})")
    benchmark.extra_info.update(no_model_us=base * 1e6, other_model_us=other * 1e6,
                                own_model_us=own * 1e6)
