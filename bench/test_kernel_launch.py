"""Kernel-module benchmarks (pytest-benchmark): run ``pytest bench/test_kernel_launch.py``.

* eager launch throughput through ``npusim.acl``: ``aclrtLaunchKernel`` of the 1-block EasyOPf on
  one stream, then a synchronize (kernels/s and host µs per launch, in ``extra_info``);
* the capture hot path: ``acl.rt.launch_kernel`` on a capturing stream (µs per call; target
  <= 3 µs);
* lookup by entry in a 100,000-kernel binary: the sorted entry table with ``bisect`` (the
  runtime's ``HalfSearch``) against a linear scan of the same table in the same run (µs per
  lookup, speed-up ratio), plus the full ``acl.rt.binary_get_function_by_entry`` call.
Numbers are host wall-clock on the machine running the bench; read them as ratios and orders of
magnitude.
"""
from __future__ import annotations

import random
import time

import pytest

from npusim import acl
from npusim.kernel.elfwrite import KernelSpec, write_elf
from npusim.runtime.runtime import RT

LAUNCHES = 10_000
CAPTURE_LAUNCHES = 5000
BIG = 100_000
LOOKUPS = 2000


def _ok(*values):
    *vals, ret = values
    assert ret == 0, ret
    return vals[0] if len(vals) == 1 else tuple(vals)


def test_eager_launch_throughput(benchmark, easy_launch):
    easy, args, stream = easy_launch
    launch = acl.rt.launch_kernel
    host = {}

    def run():
        t0 = time.perf_counter()
        for _ in range(LAUNCHES):
            launch(easy, 1, args, 8, stream)
        t1 = time.perf_counter()
        assert acl.rt.synchronize_stream(stream) == 0
        host["launch_s"] = t1 - t0
    benchmark.pedantic(run, rounds=5, iterations=1, warmup_rounds=1)
    total = benchmark.stats.stats.min
    benchmark.extra_info.update(
        launches=LAUNCHES, kernels_per_s=round(LAUNCHES / total),
        host_us_per_launch_incl_sync=round(total / LAUNCHES * 1e6, 2),
        host_us_per_launch_call=round(host["launch_s"] / LAUNCHES * 1e6, 2))


def test_capture_launch_hot_path(benchmark, easy_launch):
    easy, args, stream = easy_launch
    launch = acl.rt.launch_kernel

    def run():
        assert acl.mdl.ri_capture_begin(stream, 0) == 0
        t0 = time.perf_counter()
        for _ in range(CAPTURE_LAUNCHES):
            launch(easy, 1, args, 8, stream)
        dt = time.perf_counter() - t0
        model = _ok(*acl.mdl.ri_capture_end(stream))
        acl.mdl.ri_destroy(model)
        return dt
    benchmark.pedantic(run, rounds=5, iterations=1, warmup_rounds=1)
    us = benchmark.stats.stats.min / CAPTURE_LAUNCHES * 1e6
    benchmark.extra_info.update(launches=CAPTURE_LAUNCHES, us_per_captured_launch=round(us, 2),
                                target_us=3.0)


@pytest.fixture(scope="module")
def big_binary(easy_launch):
    data = write_elf([KernelSpec(f"k_{3 * i}", b"\0" * 8) for i in range(BIG)])
    b = _ok(*acl.rt.binary_load_from_data(data))
    prog = RT.handles.get("binary", b)[0]
    assert len(prog.entry_keys) == BIG
    rnd = random.Random(0)
    keys = [3 * rnd.randrange(BIG) for _ in range(LOOKUPS)]
    return b, prog, keys


def test_lookup_by_entry_binary_search(benchmark, big_binary):
    b, prog, keys = big_binary
    lookup = prog.kernel_by_entry

    def run():
        for k in keys:
            lookup(k)
    benchmark.pedantic(run, rounds=20, iterations=1, warmup_rounds=1)
    bisect_us = benchmark.stats.stats.min / LOOKUPS * 1e6
    linear = prog.kernel_by_entry_linear            # the baseline, same run, same table
    sample = keys[:50]
    t0 = time.perf_counter()
    for k in sample:
        assert linear(k) is lookup(k)
    linear_us = (time.perf_counter() - t0) / len(sample) * 1e6
    benchmark.extra_info.update(kernels=BIG, us_per_lookup=round(bisect_us, 3),
                                linear_scan_us_per_lookup=round(linear_us, 1),
                                speedup_vs_linear=round(linear_us / bisect_us))


def test_get_function_by_entry_api(benchmark, big_binary):
    b, prog, keys = big_binary
    get = acl.rt.binary_get_function_by_entry

    def run():
        for k in keys:
            get(b, k)
    benchmark.pedantic(run, rounds=10, iterations=1, warmup_rounds=1)
    benchmark.extra_info.update(
        kernels=BIG, us_per_api_call=round(benchmark.stats.stats.min / LOOKUPS * 1e6, 2))
