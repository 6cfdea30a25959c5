"""Leak loops: 1,000 cycles of each resource kind, per-cycle time and memory at the start and the
end of the loop — ``pytest bench/test_leak_loops.py -s --benchmark-only``.

Each kind runs 100 warm-up cycles, then 1,000 measured ones. Printed per kind: the median wall
time of the first and of the last 100 cycles and their ratio (flat = within 20 %), the Python
heap grown per cycle (tracemalloc) and the resource census before and after (it must be equal).
The benchmark figure pytest-benchmark keeps is one cycle. Kinds: event create/record/sync/
destroy, notify record/wait, stream create/destroy, malloc/free, capture → replay → destroy,
the same with an IF cond branch, ``aclrtResetDevice`` of a device holding a stream, a graph,
an event and a notify, ``numpy_to_ptr`` of temporaries, the replay of a graph whose 10
kernels all fault (a bad pointer) with the synchronize that reports it, and (stop 48) a built
model with a label switch, a user allocator registered and read back, and the overflow status
read and reset.

Session 12: the faulting replay grew the heap by ~185 B per fault (the device's fault log kept
every fault ever logged, for three readers that each kept their own count into it); the device
now hands each run's faults to its readers and drops them.
"""
from __future__ import annotations

import gc
import statistics
import time
import tracemalloc

import numpy as np
import pytest

import npusim as ns
from npusim import acl

N, WARM, EDGE = 1000, 100, 100
RELAXED = 2


def _ok(r):
    code = r[-1] if isinstance(r, tuple) else r
    assert code == 0, r
    return r[0] if isinstance(r, tuple) and len(r) == 2 else r


class Program:
    def __init__(self):
        ns.reset()
        _ok(acl.init())
        _ok(acl.rt.set_device(0))
        self.s = _ok(acl.rt.create_stream())
        self.side = _ok(acl.rt.create_stream())
        self.x = _ok(acl.rt.malloc(256, 0))

        self._faulting = None
        self._index = None                      # the label switch's index word (labels)

    def faulting_replay(self):
        if self._faulting is None:              # 10 EasyOPf launches reading x[0] at address 0
            lib = _ok(acl.rt.binary_load_from_file(ns.samples.binary_path(), None))
            f = _ok(acl.rt.binary_get_function(lib, "EasyOPf"))
            args = _ok(acl.rt.malloc(8, 0))
            _ok(acl.rt.memset(args, 8, 0, 8))
            _ok(acl.mdl.ri_capture_begin(self.s, RELAXED))
            for _ in range(10):
                _ok(acl.rt.launch_kernel(f, 1, args, 8, self.s))
            self._faulting = _ok(acl.mdl.ri_capture_end(self.s))
        _ok(acl.mdl.ri_execute_async(self._faulting, self.s))
        assert acl.rt.synchronize_stream(self.s) == acl.ACL_ERROR_RT_VECTOR_CORE_EXCEPTION

    def event(self):
        e = _ok(acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC))
        _ok(acl.rt.record_event(e, self.s))
        _ok(acl.rt.synchronize_event(e))
        _ok(acl.rt.destroy_event(e))

    def notify(self):
        n = _ok(acl.rt.create_notify(0))
        _ok(acl.rt.record_notify(n, self.s))
        _ok(acl.rt.wait_and_reset_notify(n, self.side, 0))
        _ok(acl.rt.synchronize_stream(self.side))
        _ok(acl.rt.destroy_notify(n))

    def stream(self):
        _ok(acl.rt.destroy_stream(_ok(acl.rt.create_stream())))

    def malloc(self):
        _ok(acl.rt.free(_ok(acl.rt.malloc(1024, 0))))

    def graph(self):
        _ok(acl.mdl.ri_capture_begin(self.s, RELAXED))
        _ok(acl.rt.memset_async(self.x, 256, 1, 256, self.s))
        m = _ok(acl.mdl.ri_capture_end(self.s))
        _ok(acl.mdl.ri_execute_async(m, self.s))
        _ok(acl.rt.synchronize_stream(self.s))
        _ok(acl.mdl.ri_destroy(m))

    def cond_graph(self):
        _ok(acl.mdl.ri_capture_begin(self.s, RELAXED))
        _, mh, _ = acl.mdl.ri_capture_get_info(self.s)
        h = _ok(acl.mdl.ri_cond_handle_create(mh, 1, 1))
        subs = _ok(acl.mdl.ri_add_cond_task(h, 0, 1, self.s))
        _ok(acl.mdl.ri_capture_to_model_ri_begin(self.side, subs[0], RELAXED))
        _ok(acl.rt.memset_async(self.x, 256, 2, 256, self.side))
        _ok(acl.mdl.ri_capture_end(self.side))
        m = _ok(acl.mdl.ri_capture_end(self.s))
        _ok(acl.mdl.ri_execute_async(m, self.s))
        _ok(acl.rt.synchronize_stream(self.s))
        _ok(acl.mdl.ri_destroy(m))

    def reset_device(self):
        _ok(acl.rt.set_device(1))
        t = _ok(acl.rt.create_stream())
        y = _ok(acl.rt.malloc(256, 0))
        _ok(acl.mdl.ri_capture_begin(t, RELAXED))
        _ok(acl.rt.memset_async(y, 256, 1, 256, t))
        m = _ok(acl.mdl.ri_capture_end(t))
        _ok(acl.mdl.ri_execute_async(m, t))
        _ok(acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC))
        _ok(acl.rt.create_notify(0))
        _ok(acl.rt.reset_device(1))
        _ok(acl.rt.free(y))
        _ok(acl.rt.set_device(0))

    def numpy_to_ptr(self):
        acl.util.numpy_to_ptr(np.zeros(64, np.uint8))

    def labels(self):
        """A built model whose switch jumps to label 1, run, then every label resource freed."""
        idx = self._label_index()
        m = _ok(acl.mdl.ri_build_begin(0))
        t = _ok(acl.rt.create_stream_with_config(0, acl.ACL_STREAM_PERSISTENT))
        _ok(acl.mdl.ri_bind_stream(m, t, acl.ACL_MODEL_STREAM_FLAG_HEAD))
        l0, l1 = _ok(acl.rt.create_label()), _ok(acl.rt.create_label())
        lst = _ok(acl.rt.create_label_list([l0, l1], 2))
        _ok(acl.rt.switch_label_by_index(idx, 2, lst, t))
        _ok(acl.rt.set_label(l0, t))
        _ok(acl.rt.memset_async(self.x, 1, 7, 1, t))
        _ok(acl.rt.set_label(l1, t))
        _ok(acl.mdl.ri_end_task(m, t))
        _ok(acl.mdl.ri_build_end(m, None))
        _ok(acl.mdl.ri_execute_async(m, self.s))
        _ok(acl.rt.synchronize_stream(self.s))
        _ok(acl.mdl.ri_unbind_stream(m, t))
        _ok(acl.mdl.ri_destroy(m))
        _ok(acl.rt.destroy_label_list(lst))
        _ok(acl.rt.destroy_label(l0))
        _ok(acl.rt.destroy_label(l1))
        _ok(acl.rt.destroy_stream(t))

    def _label_index(self):
        if self._index is None:
            self._index = _ok(acl.rt.malloc(4, 0))
            _ok(acl.rt.memset(self._index, 4, 0, 4))
            _ok(acl.rt.memset(self._index, 1, 1, 1))           # index 1 (little-endian)
        return self._index

    def allocator(self):
        d = acl.rt.allocator_create_desc()
        for fn, v in ((acl.rt.allocator_set_obj_to_desc, 0x10),
                      (acl.rt.allocator_set_alloc_func_to_desc, 0x20),
                      (acl.rt.allocator_set_free_func_to_desc, 0x30),
                      (acl.rt.allocator_set_get_addr_from_block_func_to_desc, 0x40)):
            _ok(fn(d, v))
        _ok(acl.rt.allocator_register(self.s, d))
        assert acl.rt.allocator_get_by_stream(self.s)[1] == 0x10
        _ok(acl.rt.allocator_unregister(self.s))
        _ok(acl.rt.allocator_destroy_desc(d))

    def overflow_status(self):
        _ok(acl.rt.get_overflow_status(self.x, 64, self.s))
        _ok(acl.rt.reset_overflow_status(self.s))
        _ok(acl.rt.synchronize_stream(self.s))


KINDS = ["event", "notify", "stream", "malloc", "graph", "cond_graph", "reset_device",
         "numpy_to_ptr", "faulting_replay", "labels", "allocator", "overflow_status"]


@pytest.mark.parametrize("kind", KINDS)
def test_leak_loop(benchmark, bench_report, kind):
    p = Program()
    body = getattr(p, kind)
    for _ in range(WARM):
        body()
    gc.collect()
    before = ns.census()
    times = []
    tracemalloc.start()
    m0 = tracemalloc.get_traced_memory()[0]
    for _ in range(N):
        t0 = time.perf_counter()
        body()
        times.append(time.perf_counter() - t0)
    gc.collect()
    grown = (tracemalloc.get_traced_memory()[0] - m0) / N
    tracemalloc.stop()
    first = statistics.median(times[:EDGE]) * 1e6
    last = statistics.median(times[-EDGE:]) * 1e6
    leaked = ns.census().diff(before)
    bench_report(f"leak loop {kind:13s}: first {EDGE} cycles {first:8.1f} us, last {EDGE} "
                 f"{last:8.1f} us (x{last / first:4.2f}); heap {grown:+7.1f} B/cycle; "
                 f"census {'unchanged' if not leaked else leaked}")
    assert not leaked
    benchmark.pedantic(body, rounds=20, iterations=1)
