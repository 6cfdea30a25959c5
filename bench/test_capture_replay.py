"""ACL Graph capture and replay at scale: ``pytest bench/test_capture_replay.py -s``.

For a 1,000,000-task single-stream graph (EasyOPf launched through ``acl.rt.launch_kernel``) on
the default profile (software SQ, capture depth 32768: 31 cascade streams) and on the classic
profile Ascend310P (depth 2048: ~497 cascade streams):

* capture: tasks/s and host µs per captured task through the facade, against the same launches
  issued eagerly in the same run (the reference: what the program costs without a graph);
* replay: M SQE/s of the engine running the model's rings, against the pure-Python interpretation
  of the same SQE arrays (``npusim.testing.reference``, timed on a 20,000-SQE slice and scaled);
* peak memory per captured task (tracemalloc, on a 200,000-task capture);
* the whole 1M capture + first replay wall time (target under 10 s).

``NPUSIM_BENCH_10M=1`` also captures 10,000,000 tasks on the classic profile: the graph needs
more than the 1024 SQ/CQ pairs a graph may hold, so its first execution fails with 207005.
"""
from __future__ import annotations

import os
import time
import tracemalloc

import numpy as np
import pytest

import npusim
from npusim import acl
from npusim.device import engine as E
from npusim.runtime.api_device import device

N = 1_000_000
PROFILES = ("Ascend910B", "Ascend310P")
RESULTS: dict = {}


def _ok(*values):
    *vals, ret = values
    assert ret == 0, ret
    return vals[0] if len(vals) == 1 else tuple(vals)


def _setup(profile):
    npusim.reset()
    npusim.configure(profile=profile, trace=False)
    acl.init()
    acl.rt.set_device(0)
    lib = _ok(*acl.rt.binary_load_from_file(npusim.samples.binary_path()))
    easy = _ok(*acl.rt.binary_get_function(lib, "EasyOPf"))
    x = _ok(*acl.rt.malloc(64, 0))
    args = _ok(*acl.rt.malloc(8, 0))
    slot = np.array([x], np.uint64)
    acl.rt.memcpy(args, 8, acl.util.numpy_to_ptr(slot), 8, acl.ACL_MEMCPY_HOST_TO_DEVICE)
    stream = _ok(*acl.rt.create_stream())
    return easy, args, stream, x


def _capture(easy, args, stream, n):
    launch = acl.rt.launch_kernel
    _ok(acl.mdl.ri_capture_begin(stream, 0))
    t0 = time.perf_counter()
    for _ in range(n):
        launch(easy, 1, args, 8, stream)
    dt = time.perf_counter() - t0
    return _ok(*acl.mdl.ri_capture_end(stream)), dt


@pytest.mark.parametrize("profile", PROFILES)
def test_capture_and_replay_1m(benchmark, profile):
    easy, args, stream, x = _setup(profile)
    # reference: the same launches issued eagerly (20,000 of them, scaled)
    n_ref = 20_000
    t0 = time.perf_counter()
    for _ in range(n_ref):
        acl.rt.launch_kernel(easy, 1, args, 8, stream)
    eager_us = (time.perf_counter() - t0) / n_ref * 1e6
    _ok(acl.rt.synchronize_stream(stream))

    wall0 = time.perf_counter()
    model, cap_s = _capture(easy, args, stream, N)
    t1 = time.perf_counter()
    _ok(acl.mdl.ri_execute_async(model, stream))
    _ok(acl.rt.synchronize_stream(stream))
    first_replay_s = time.perf_counter() - t1
    total_s = time.perf_counter() - wall0
    streams = len(_ok(*acl.mdl.ri_get_streams(model)))

    def replay():
        _ok(acl.mdl.ri_execute_async(model, stream))
        _ok(acl.rt.synchronize_stream(stream))

    benchmark.pedantic(replay, rounds=3, iterations=1)
    replay_s = benchmark.stats.stats.median
    data = int(np.frombuffer(device(0).state.mem.view(x, 4), np.uint32)[0])
    assert data == n_ref + N * 4               # eager reference + first replay + 3 rounds
    sqe = N + streams + 1                      # kernels + cascade hops + EndGraph
    # pure-Python reference on a slice of the same model SQ (at most 20,000 SQEs, no hop)
    ref_rate = _reference_rate(20_000)
    r = dict(profile=profile, cascade_streams=streams,
             capture_tasks_per_s=N / cap_s, capture_us_per_task=cap_s / N * 1e6,
             eager_launch_us=eager_us, capture_vs_eager=eager_us / (cap_s / N * 1e6),
             replay_M_sqe_per_s=sqe / replay_s / 1e6, reference_M_sqe_per_s=ref_rate / 1e6,
             replay_vs_reference=sqe / replay_s / ref_rate,
             first_replay_s=first_replay_s, capture_plus_first_replay_s=total_s)
    RESULTS[profile] = r
    benchmark.extra_info.update(r)
    print(f"\n[{profile}] {streams} capture streams | capture {r['capture_tasks_per_s']/1e3:.0f}k "
          f"tasks/s ({r['capture_us_per_task']:.2f} us/task; eager launch {eager_us:.2f} us) | "
          f"replay {r['replay_M_sqe_per_s']:.1f} M SQE/s vs pure Python "
          f"{r['reference_M_sqe_per_s']:.3f} M SQE/s ({r['replay_vs_reference']:.0f}x) | "
          f"1M capture + first replay {total_s:.2f} s")


def _reference_rate(n: int) -> float:
    """SQE/s of the pure-Python interpreter on the first ``n`` SQEs of the last model."""
    from npusim.testing import reference
    st = device(0).state
    st.flush()
    m = next(reversed(device(0).models))         # the newest model
    cs = m.streams[0]
    n = min(n, cs.task_count - 1)              # stop before the cascade hop
    pool, sqs, sync = st.pool.copy(), st.sqs.copy(), st.sync.copy()
    q = cs.sq
    sqs[:, E.Q_STATE] = np.where(sqs[:, E.Q_STATE] == E.S_FREE, E.S_FREE, E.S_IDLE)
    sqs[q, E.Q_HEAD], sqs[q, E.Q_TAIL], sqs[q, E.Q_STATE] = 0, n, E.S_ACTIVE
    stt = st.st.copy()
    stt[E.E_TRACE_ON] = 0
    stt[E.E_HORIZON], stt[E.E_STOP_KIND] = int(E.INF), E.STOP_NONE
    mem = st.mem.arena
    args = (pool, sqs, sync, st.mptr, st.msq, st.conds, st.cmodels, mem, st.mem.ctx.copy(),
            __import__("npusim.device.kernels", fromlist=["TABLE"]).TABLE.addr,
            __import__("npusim.device.kernels", fromlist=["TABLE"]).TABLE.cost, st.tc,
            np.zeros(0, E.TRACE_DTYPE), stt)
    t0 = time.perf_counter()
    try:
        reference.run(*args)
    except TypeError:          # older reference signature (without the cond table)
        reference.run(*(args[:5] + args[7:]))
    return n / (time.perf_counter() - t0)


def test_peak_memory_per_captured_task():
    easy, args, stream, _ = _setup("Ascend910B")
    n = 200_000
    tracemalloc.start()
    _capture(easy, args, stream, n)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    per = peak / n
    RESULTS["peak_bytes_per_task"] = per
    print(f"\n[memory] peak {per:.0f} bytes per captured task (target <= 150)")
    assert per <= 150


@pytest.mark.skipif(os.environ.get("NPUSIM_BENCH_10M") != "1",
                    reason="set NPUSIM_BENCH_10M=1 for the 10,000,000-task classic capture")
def test_10m_classic_graph_exceeds_sqcq_budget():
    easy, args, stream, _ = _setup("Ascend310P")
    model, cap_s = _capture(easy, args, stream, 10_000_000)
    streams = len(_ok(*acl.mdl.ri_get_streams(model)))
    code = acl.mdl.ri_execute_async(model, stream)
    print(f"\n[10M classic] {streams} capture streams, capture {cap_s:.1f} s, first execute -> "
          f"{code}")
    assert streams > 1024 and code == acl.ACL_ERROR_RT_RESOURCE_ALLOC_FAIL
