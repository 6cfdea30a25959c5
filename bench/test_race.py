"""The race detector at scale: ``pytest bench/test_race.py -s``.

A 100,000-task graph on 8 streams, captured with source recording on: the origin stream forks 7
streams with events; each of the 8 streams launches ``VectorAddKernel`` 12,500 times, reading one
shared input buffer (read by every stream: no race) and writing its own ring of 16 output buffers;
every 500 launches each stream records an event its neighbour waits on; all streams join the
origin at the end. On the default profile (software SQ, capture depth 32768) and on Ascend310P
(depth 2048: each stream is a chain of cascade streams).

Reported, in the same run: the plain replay (execute + synchronize, best of 3), and
``npusim.analysis.races(graph)`` — a replay with accesses recorded plus the analysis — as wall
time, tasks/s, and its ratio to the plain replay; also the cost of capturing with source
recording against capturing without.
"""
from __future__ import annotations

import time

import numpy as np
import pytest

import npusim
from npusim import acl

N_TASKS = 100_000
N_STREAMS = 8
RING = 16
SYNC_EVERY = 500


def _ok(*values):
    *vals, ret = values
    assert ret == 0, ret
    return vals[0] if len(vals) == 1 else tuple(vals)


def _args(fields) -> int:
    """Device args area holding 8-byte slots."""
    buf = np.zeros(len(fields), np.uint64)
    for i, v in enumerate(fields):
        buf[i] = np.array([v], np.float32).view(np.uint32)[0] if isinstance(v, float) else v
    p = _ok(*acl.rt.malloc(buf.nbytes, 0))
    _ok(acl.rt.memcpy(p, buf.nbytes, acl.util.numpy_to_ptr(buf), buf.nbytes,
                      acl.ACL_MEMCPY_HOST_TO_DEVICE))
    return p


def _build(profile):
    npusim.reset()
    npusim.configure(profile=profile, trace=False)
    acl.init()
    acl.rt.set_device(0)
    lib = _ok(*acl.rt.binary_load_from_file(npusim.samples.binary_path()))
    vadd = _ok(*acl.rt.binary_get_function(lib, "VectorAddKernel"))
    n = 16
    shared = _ok(*acl.rt.malloc(4 * n, 0))
    streams = [_ok(*acl.rt.create_stream()) for _ in range(N_STREAMS)]
    args = [[_args([shared, shared, _ok(*acl.rt.malloc(4 * n, 0)), 1.0, n])
             for _ in range(RING)] for _ in range(N_STREAMS)]
    return vadd, streams, args


def _capture(vadd, streams, args):
    ev = lambda: _ok(*acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC))  # noqa: E731
    s0 = streams[0]
    _ok(acl.mdl.ri_capture_begin(s0, 0))
    fork = ev()
    _ok(acl.rt.record_event(fork, s0))
    for s in streams[1:]:
        _ok(acl.rt.stream_wait_event(s, fork))
    ring_ev = [ev() for _ in streams]
    per = N_TASKS // N_STREAMS
    launch = acl.rt.launch_kernel
    for j in range(per):
        for i, s in enumerate(streams):
            launch(vadd, 1, args[i][j % RING], 40, s)
        if j % SYNC_EVERY == SYNC_EVERY - 1:
            for i, s in enumerate(streams):
                acl.rt.record_event(ring_ev[i], s)
            for i, s in enumerate(streams):
                acl.rt.stream_wait_event(s, ring_ev[i - 1])
    for s in streams[1:]:
        e = ev()
        _ok(acl.rt.record_event(e, s))
        _ok(acl.rt.stream_wait_event(s0, e))
    return _ok(*acl.mdl.ri_capture_end(s0))


@pytest.mark.parametrize("profile", ("Ascend910B", "Ascend310P"))
def test_race_detector_100k_tasks_8_streams(profile, bench_report):
    vadd, streams, args = _build(profile)
    t0 = time.perf_counter()
    plain = _capture(vadd, streams, args)
    cap_plain = time.perf_counter() - t0
    with npusim.analysis.record(accesses=False):            # source lines only
        t0 = time.perf_counter()
        model = _capture(vadd, streams, args)
        cap_rec = time.perf_counter() - t0
    exe = _ok(*acl.rt.create_stream())
    npusim.analysis.races(model, exe)                        # warm-up: numba compile / cache
    replay = []
    for _ in range(3):
        t0 = time.perf_counter()
        _ok(acl.mdl.ri_execute_async(model, exe))
        _ok(acl.rt.synchronize_stream(exe))
        replay.append(time.perf_counter() - t0)
    t_replay = min(replay)
    t0 = time.perf_counter()
    rep = npusim.analysis.races(model, exe)
    t_race = time.perf_counter() - t0
    assert len(rep) == 0, str(rep)[:2000]
    assert rep.tasks >= N_TASKS and rep.dropped == 0
    n_sq = len(acl.mdl.ri_get_streams(model)[0])
    bench_report(
        f"race detector, {profile}: {rep.tasks:,} tasks on {N_STREAMS} streams "
        f"({n_sq} capture streams incl. cascades, {rep.lanes} lanes), {rep.accesses:,} access "
        f"rows: races(graph) {t_race:.2f} s (recorded replay, then analysis {rep.seconds:.2f} s "
        f"= {rep.tasks / rep.seconds / 1e6:.2f} M tasks/s); plain replay {t_replay * 1e3:.1f} ms "
        f"→ races/replay = {t_race / t_replay:.1f}x (analysis alone {rep.seconds / t_replay:.1f}x)")
    bench_report(
        f"  capture of the same graph: {cap_plain:.2f} s plain, {cap_rec:.2f} s with source "
        f"lines recorded ({cap_rec / cap_plain:.2f}x)")
    acl.mdl.ri_destroy(plain)
    assert t_race < 30
