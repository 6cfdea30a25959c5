"""Cost of the facade's argument boundary (``npusim/acl/_boundary.py``) on the hot path.

``acl.rt.launch_kernel`` on a capturing stream (the capture benchmark's call) through the whole
facade, against the same call one layer in (``acl.rt.launch_kernel.__wrapped__``: the host-trace
wrapper, fault-injection point and runtime function, without the boundary), in the same run.
Prints µs per call of each, the difference (target: <= 0.3 µs) and the ratio. Run:

    pytest -p no:nbmake -o addopts="" bench/test_facade_overhead.py -s
"""
from __future__ import annotations

import time

import numpy as np

from npusim import acl

CALLS = 2000
ROUNDS = 21


def _ok(*values):
    *vals, ret = values
    assert ret == 0, ret
    return vals[0] if len(vals) == 1 else tuple(vals)


def _per_call(launch, easy, args, stream) -> float:
    """Seconds per captured launch of ``launch`` (one capture of CALLS launches)."""
    assert acl.mdl.ri_capture_begin(stream, 0) == 0
    t0 = time.perf_counter()
    for _ in range(CALLS):
        launch(easy, 1, args, 8, stream)
    dt = time.perf_counter() - t0
    acl.mdl.ri_destroy(_ok(*acl.mdl.ri_capture_end(stream)))
    return dt / CALLS


def test_boundary_overhead_on_captured_launch(benchmark, easy_launch, bench_report):
    easy, args, stream = easy_launch
    wrapped = acl.rt.launch_kernel
    inner = wrapped.__wrapped__
    assert wrapped(easy, 1, args, 8, stream) == inner(easy, 1, args, 8, stream) == 0
    both = {"wrapped": [], "inner": []}

    def run():                       # interleaved, so drift hits both alike
        both["inner"].append(_per_call(inner, easy, args, stream))
        both["wrapped"].append(_per_call(wrapped, easy, args, stream))
    benchmark.pedantic(run, rounds=ROUNDS, iterations=1, warmup_rounds=1)
    w = float(np.median(both["wrapped"])) * 1e6
    i = float(np.median(both["inner"])) * 1e6
    w_min, i_min = min(both["wrapped"]) * 1e6, min(both["inner"]) * 1e6
    benchmark.extra_info.update(us_wrapped=round(w, 3), us_inner=round(i, 3),
                                us_boundary=round(w - i, 3), ratio=round(w / i, 3),
                                us_boundary_min=round(w_min - i_min, 3), target_us_boundary=0.3)
    bench_report(f"facade boundary on captured launch_kernel: {w:.3f} us/call with, {i:.3f} "
                 f"without -> +{w - i:.3f} us ({w / i:.3f}x; target <= +0.3 us), medians of "
                 f"{ROUNDS} interleaved rounds x {CALLS} calls; best rounds {w_min:.3f} vs "
                 f"{i_min:.3f} -> +{w_min - i_min:.3f} us")
