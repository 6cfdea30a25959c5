"""The collector and a program holding thousands of graphs (issue 40 part 3, docs/architecture.md
§17 "The collector"): the time of one full collection (``gc.collect()``) with 1,000 and 4,000
captured graphs alive, in one process, same run: plain; after ``npusim.freeze_permanent()``
(``gc.freeze``) called once the device, the kernel and the capture/replay paths are warm, the
graphs built after it; and after a second call once the graphs are built:

    pytest -p no:nbmake -o addopts="" bench/test_gc_freeze.py -s

Each graph: a GLOBAL capture of 4 launches on one stream, kept (not destroyed). A full
collection walks every tracked container: numba's dispatchers and type caches (~100,000 objects
once the engine is compiled), the runtime's handles, and each graph's models, streams, events
and lists. Frozen, those are in the permanent generation and the collection walks only what was
made since. The figures are medians of ``ROUNDS`` collections; nothing is asserted about time.

Measured (loaded 2-core machine): 1,000 graphs, 159,000 tracked objects: 75 ms plain, 1.9 ms
frozen at warm-up, < 0.01 ms frozen after the graphs; 4,000 graphs, 222,000 objects: 169 / 45 /
< 0.01 ms (docs/architecture.md §17 "The collector": the decision, opt-in).
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


def _warm():
    """A fresh simulator, warmed up: device 0, the sample kernel, a stream, a buffer and its
    args block, one captured graph replayed (the capture and replay paths compiled)."""
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
    w = _graphs(1, easy, a, s)
    _ok(acl.mdl.ri_execute_async(w[0], s))
    _ok(acl.rt.synchronize_stream(s))
    return easy, a, s


def _graphs(n: int, easy, a, s) -> list[int]:
    """``n`` captured graphs of 4 EasyOPf launches each (kept)."""
    models = []
    for _ in range(n):
        _ok(acl.mdl.ri_capture_begin(s, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL))
        for _ in range(4):
            _ok(acl.rt.launch_kernel(easy, 1, a, 8, s))
        models.append(_ok(*acl.mdl.ri_capture_end(s)))
    return models


def _full_ms() -> float:
    times = []
    for _ in range(ROUNDS):
        t0 = time.perf_counter()
        gc.collect()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)) * 1e3


def measure(n: int) -> tuple[float, float, float, int]:
    """Full-collection ms with ``n`` graphs alive: plain; frozen after warm-up (the graphs built
    after ``freeze_permanent``: the collection walks them, not numba's and the engine's
    objects); frozen after the graphs too. And the tracked objects, plain."""
    gc.unfreeze()
    models = _graphs(n, *_warm())
    tracked = len(gc.get_objects())
    plain = _full_ms()
    del models
    gc.unfreeze()
    args = _warm()
    npusim.freeze_permanent()
    models = _graphs(n, *args)
    warm = _full_ms()
    npusim.freeze_permanent()
    after = _full_ms()
    gc.unfreeze()
    assert len(models) == n
    npusim.reset()
    return plain, warm, after, tracked


def test_full_collection_with_thousands_of_graphs(benchmark, bench_report):
    rows = benchmark.pedantic(lambda: [(n, *measure(n)) for n in GRAPHS], rounds=1,
                              iterations=1)
    bench_report("[gc] one full collection (gc.collect) with N captured graphs alive: plain, "
                 "npusim.freeze_permanent() after warm-up (graphs built after it), and after "
                 "the graphs too (median of 5)")
    bench_report("  graphs   tracked objects   plain ms   frozen at warm-up ms   "
                 "frozen after graphs ms   plain / warm-up frozen")
    for n, plain, warm, after, tracked in rows:
        benchmark.extra_info[f"{n} graphs"] = dict(plain_ms=round(plain, 2),
                                                   warm_frozen_ms=round(warm, 2),
                                                   all_frozen_ms=round(after, 3),
                                                   tracked=tracked)
        bench_report(f"  {n:6d} {tracked:17,d} {plain:10.2f} {warm:22.2f} {after:24.3f} "
                     f"{plain / max(warm, 1e-6):22.1f}x")
