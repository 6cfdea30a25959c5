"""Per-call cost of the C path (``npusim cabi``'s libascendcl.so, docs/cabi.md "Overhead"):
``aclrtGetDevice``, ``aclrtMemsetAsync`` and ``aclrtLaunchKernel`` (both on a capturing stream, so
the engine does not run) called N times in a C loop and timed inside C, printed next to the same
calls from Python (``acl.rt.get_device`` ...) in the same run, with the difference (the C path's
own cost: the crossing, the integer conversions and the output write-back) and the ratio; and
the bare crossing (a no-op function of the library). Best of 5 rounds each (the machine's load
moves single rounds by more than the difference). Run:

    pytest -p no:nbmake -o addopts="" bench/test_cabi_overhead.py -s
"""
from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import time

import numpy as np
import pytest

import npusim
from npusim import acl

CALLS = 10000
ROUNDS = 5
HERE = pathlib.Path(__file__).resolve().parent


def _ok(*values):
    *vals, ret = values
    assert ret == 0, ret
    return vals[0] if len(vals) == 1 else tuple(vals)


def _c_path(tmp: pathlib.Path) -> dict[str, float]:
    from npusim.cabi import build
    try:
        build.check_tools()
    except RuntimeError as e:
        pytest.skip(str(e))
    include = pathlib.Path(os.environ.get("NPUSIM_CABI_TEST_HEADERS", build.INCLUDE))
    if not (include / "acl" / "acl.h").exists():
        pytest.skip(f"no acl/acl.h under {include}")
    lib = tmp / "lib64"
    build.build_library(lib, include)
    exe = tmp / "overhead"
    cc = shutil.which(os.environ.get("CC", "cc")) or "gcc"
    subprocess.run([cc, "-O2", "-I", str(include), str(HERE / "cabi_c" / "overhead.c"), "-L",
                    str(lib), "-lascendcl", f"-Wl,-rpath,{lib}", "-o", str(exe)], check=True)
    out = subprocess.run([str(exe), str(npusim.samples.binary_path()), str(CALLS)], check=True,
                         capture_output=True, text=True).stdout
    return {k: float(v) for k, v in (line.split() for line in out.splitlines())}


def _py_path() -> dict[str, float]:
    npusim.reset()
    acl.init()
    acl.rt.set_device(0)
    s = _ok(*acl.rt.create_stream())
    lib = _ok(*acl.rt.binary_load_from_file(npusim.samples.binary_path()))
    fn = _ok(*acl.rt.binary_get_function(lib, "EasyOPf"))
    x = _ok(*acl.rt.malloc(64, 0))
    args = _ok(*acl.rt.malloc(8, 0))
    get, memset, launch = acl.rt.get_device, acl.rt.memset_async, acl.rt.launch_kernel
    out = {}
    for r in range(ROUNDS + 1):               # the best of ROUNDS after a warm-up
        t0 = time.perf_counter_ns()
        for _ in range(CALLS):
            get()
        t1 = time.perf_counter_ns()
        assert acl.mdl.ri_capture_begin(s, 0) == 0
        t2 = time.perf_counter_ns()
        for _ in range(CALLS):
            memset(x, 64, 0, 64, s)
        t3 = time.perf_counter_ns()
        for _ in range(CALLS):
            launch(fn, 1, args, 8, s)
        t4 = time.perf_counter_ns()
        acl.mdl.ri_destroy(_ok(*acl.mdl.ri_capture_end(s)))
        now = {"get_device": (t1 - t0) / CALLS, "memset_async": (t3 - t2) / CALLS,
               "launch_kernel": (t4 - t3) / CALLS}
        if r:
            out = {k: min(v, out.get(k, v)) for k, v in now.items()}
    acl.rt.reset_device(0)
    return out


def test_cabi_overhead(benchmark, tmp_path, bench_report):
    c = _c_path(tmp_path)
    py = benchmark.pedantic(_py_path, rounds=1, iterations=1)
    bench_report(f"cabi crossing (C -> embedded Python, a no-op extern): {c['crossing']:.0f} "
                 "ns/call")
    benchmark.extra_info["ns_crossing"] = round(c["crossing"], 1)
    for name in ("get_device", "memset_async", "launch_kernel"):
        benchmark.extra_info[f"ns_c_{name}"] = round(c[name], 1)
        benchmark.extra_info[f"ns_py_{name}"] = round(py[name], 1)
        bench_report(f"cabi {name}: C {c[name]:.0f} ns/call, Python {py[name]:.0f} ns/call -> "
                     f"C path +{c[name] - py[name]:.0f} ns ({c[name] / py[name]:.2f}x), "
                     f"best of {ROUNDS} rounds of {CALLS} calls, timed inside C / in Python")
    assert np.isfinite(list(c.values())).all()
