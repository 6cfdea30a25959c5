"""The collector and a program holding thousands of graphs (issue 40 part 3, docs/architecture.md
§17 "The collector"): the time of one full collection (``gc.collect()``) with 1,000 and 4,000
captured graphs alive, plain and after ``npusim.freeze_permanent()`` (``gc.freeze`` once the
devices, the kernels and the graphs are built), in one process, same run:

    pytest -p no:nbmake -o addopts="" bench/test_gc_freeze.py -s

Each graph: a GLOBAL capture of 4 launches on one stream, kept (not destroyed). A full
collection walks every tracked container: numba's dispatchers and type caches (~100,000 objects
once the engine is compiled), the runtime's handles, and each graph's models, streams, events
and lists. Frozen, those are in the permanent generation and the collection walks only what was
made since. The figures are medians of ``ROUNDS`` collections; nothing is asserted about time.
"""
from __future__ import annotations

import gc
import time

import numpy as np

import npusim
from npusim import acl

GRAPHS = (1000, 4000)
ROUNDS = 5


def _ok(*values):
    *vals, ret = values
    assert ret == 0, ret
    return vals[0] if len(vals) == 1 else tuple(vals)


def _build(n: int) -> list[int]:
    """``n`` captured graphs of 4 EasyOPf launches each, on a fresh simulator."""
    npusim.reset()
    acl.init()
    acl.rt.set_device(0)
    lib = _ok(*acl.rt.binary_load_from_file(npusim.samples.binary_path()))
    easy = _ok(*acl.rt.binary_get_function(lib, "EasyOPf"))
    s = _ok(*acl.rt.create_stream())
    x = _ok(*acl.rt.malloc(64, 0))
    a = _ok(*acl.rt.malloc(8, 0))
    slot = np.array([x], np.uint64)
    _ok(acl.rt.memcpy(a, 8, acl.util.numpy_to_ptr(slot), 8, acl.ACL_MEMCPY_HOST_TO_DEVICE))
    models = []
    for _ in range(n):
        _ok(acl.mdl.ri_capture_begin(s, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL))
        for _ in range(4):
            _ok(acl.rt.launch_kernel(easy, 1, a, 8, s))
        models.append(_ok(*acl.mdl.ri_capture_end(s)))
    _ok(acl.mdl.ri_execute_async(models[0], s))     # the replay path compiled too
    _ok(acl.rt.synchronize_stream(s))
    return models


def _full_ms() -> float:
    times = []
    for _ in range(ROUNDS):
        t0 = time.perf_counter()
        gc.collect()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)) * 1e3


def measure(n: int) -> tuple[float, float, int, int]:
    """(plain ms, frozen ms, tracked objects, frozen objects) of a full collection with ``n``
    graphs alive."""
    gc.unfreeze()
    models = _build(n)
    tracked = len(gc.get_objects())
    plain = _full_ms()
    frozen_n = npusim.freeze_permanent()
    frozen = _full_ms()
    gc.unfreeze()
    assert len(models) == n
    npusim.reset()
    return plain, frozen, tracked, frozen_n


def test_full_collection_with_thousands_of_graphs(benchmark, bench_report):
    rows = benchmark.pedantic(lambda: [(n, *measure(n)) for n in GRAPHS], rounds=1,
                              iterations=1)
    bench_report("[gc] one full collection (gc.collect) with N captured graphs alive, plain and "
                 "after npusim.freeze_permanent() (median of 5)")
    bench_report("  graphs   tracked objects   plain ms   frozen ms   plain / frozen")
    for n, plain, frozen, tracked, nfrozen in rows:
        benchmark.extra_info[f"{n} graphs"] = dict(plain_ms=round(plain, 2),
                                                   frozen_ms=round(frozen, 2),
                                                   tracked=tracked, frozen=nfrozen)
        bench_report(f"  {n:6d} {tracked:17,d} {plain:10.2f} {frozen:11.2f} "
                     f"{plain / max(frozen, 1e-6):14.1f}x")
