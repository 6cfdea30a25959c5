"""Simulated time of eager work: streams run concurrently, events order them, durations add up,
the host clock moves when the host waits, work is lazy but exact, and a full stream ring makes
the host wait (design.md §4)."""
from __future__ import annotations

import contextlib

import pytest

import npusim
import npusim.analysis
from npusim import acl
from npusim.runtime.runtime import RT
from helpers.acl import LONG_NS, host_ns, launch, read, stream_done

MS = 1_000_000
SLACK_MS = 0.05          # dispatch, record and wake-up costs around a 1 ms kernel: a few µs


def _streams(n):
    return [acl.rt.create_stream()[0] for _ in range(n)]


def _timeline_event():
    e, ret = acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC | acl.ACL_EVENT_TIME_LINE)
    assert ret == acl.ACL_SUCCESS
    return e


def _elapsed(a, b) -> float:
    ms, ret = acl.rt.event_elapsed_time(a, b)
    assert ret == acl.ACL_SUCCESS
    return ms


def _scratch():
    p, _ = acl.rt.malloc(64, 0)
    return p


def test_kernel_durations_on_one_stream_add_up(stream, buf):
    start, end = _timeline_event(), _timeline_event()
    acl.rt.record_event(start, stream)
    for _ in range(3):
        launch(stream, "EasyOPf", 1, (buf,), duration_ns=MS)
    acl.rt.record_event(end, stream)
    acl.rt.synchronize_stream(stream)
    assert 3.0 <= _elapsed(start, end) < 3.0 + 3 * SLACK_MS


def test_two_streams_run_concurrently(dev0, buf):
    s1, s2 = _streams(2)
    t0 = host_ns()
    launch(s1, "EasyOPf", 1, (buf,), duration_ns=10 * MS)
    launch(s2, "EasyOPf", 1, (buf + 4,), duration_ns=10 * MS)
    acl.rt.synchronize_stream(s1)
    acl.rt.synchronize_stream(s2)
    assert 10 * MS <= host_ns() - t0 < 11 * MS


def test_event_wait_serializes_two_streams(dev0, buf):
    s1, s2 = _streams(2)
    start, mid, end = _timeline_event(), _timeline_event(), _timeline_event()
    acl.rt.record_event(start, s1)
    launch(s1, "EasyOPf", 1, (buf,), duration_ns=MS)
    acl.rt.record_event(mid, s1)
    acl.rt.stream_wait_event(s2, mid)
    launch(s2, "EasyOPf", 1, (buf + 4,), duration_ns=MS)
    acl.rt.record_event(end, s2)
    acl.rt.synchronize_stream(s2)
    assert 1.0 <= _elapsed(start, mid) < 1.0 + SLACK_MS
    assert 2.0 <= _elapsed(start, end) < 2.0 + 2 * SLACK_MS


def test_host_clock_moves_to_the_end_of_the_awaited_work(stream, buf):
    t0 = host_ns()
    launch(stream, "LongOPf", 1, (buf,))
    assert host_ns() - t0 < LONG_NS / 1000                 # launching costs µs, not the kernel
    acl.rt.synchronize_stream(stream)
    assert host_ns() - t0 >= LONG_NS


def test_host_clock_does_not_wait_for_other_streams(dev0, buf):
    slow, fast = _streams(2)
    launch(slow, "LongOPf", 1, (_scratch(),))
    launch(fast, "EasyOPf", 1, (buf,))
    acl.rt.synchronize_stream(fast)
    assert host_ns() < LONG_NS
    assert not stream_done(slow)


def test_default_stream_has_no_implicit_barrier(dev0, buf):
    """[inferred] eager_api_checks.md §0: the default stream is an ordinary stream."""
    (s,) = _streams(1)
    launch(None, "LongOPf", 1, (_scratch(),))
    launch(s, "EasyOPf", 1, (buf,))
    acl.rt.synchronize_stream(s)
    assert host_ns() < LONG_NS


def test_idle_synchronize_costs_only_the_call(stream):
    t0 = host_ns()
    acl.rt.synchronize_stream(stream)
    assert host_ns() - t0 <= RT.devices[0].timing.host_sync_ns


def test_submitted_work_does_not_run_before_it_is_observed(stream, buf):
    launch(stream, "EasyOPf", 1, (buf,))
    assert RT.devices[0].state.mem.view(buf, 4).view("u4")[0] == 0    # lazy: nothing ran
    acl.rt.synchronize_stream(stream)
    assert read(buf, 1)[0] == 1


def test_observation_before_the_work_starts_sees_old_data(stream, buf):
    launch(stream, "LongOPf", 1, (_scratch(),))
    launch(stream, "EasyOPf", 1, (buf,))
    assert read(buf, 1)[0] == 0                # a synchronous copy at the host's time
    acl.rt.synchronize_stream(stream)
    assert read(buf, 1)[0] == 1


def _two_stream_program():
    """Deterministic submissions; returns (start event, end events of two streams)."""
    acl.init()
    acl.rt.set_device(0)
    p, _ = acl.rt.malloc(64, 0)
    s1, s2 = _streams(2)
    start, e1, e2 = _timeline_event(), _timeline_event(), _timeline_event()
    acl.rt.record_event(start, s1)
    launch(s1, "EasyOPf", 1, (p,), duration_ns=3 * MS)
    acl.rt.record_event(e1, s1)
    launch(s2, "EasyOPf", 1, (p + 4,), duration_ns=MS)
    acl.rt.record_event(e2, s2)
    return (s1, s2), start, (e1, e2)


def test_results_do_not_depend_on_observation_order():
    times = []
    for sync_order in ((0, 1), (1, 0)):
        npusim.reset()
        streams, start, ends = _two_stream_program()
        for i in sync_order:
            acl.rt.synchronize_stream(streams[i])
        times.append([_elapsed(start, e) for e in ends])
    assert times[0] == times[1]


def test_more_tasks_than_the_ring_holds_make_the_host_wait(stream, buf):
    depth = RT.devices[0].profile.max_task_num_per_stream          # 2013 on Ascend910B
    n = depth + 87
    for _ in range(n):
        assert launch(stream, "EasyOPf", 1, (buf,), duration_ns=MS) == acl.ACL_SUCCESS
    s, _ = RT.handles.get("stream", stream)
    assert RT.devices[0].state.pending(s.sq) <= depth
    assert host_ns() >= (n - depth) * MS                    # waited for the first 87 to finish
    assert acl.rt.synchronize_stream(stream) == acl.ACL_SUCCESS
    assert read(buf, 1)[0] == n


def test_flag_record_then_reset_releases_the_waiter_parked_before(dev0, buf):
    waiter, recorder = _streams(2)
    e, _ = acl.rt.create_event_with_flag(acl.ACL_EVENT_SYNC)
    acl.rt.stream_wait_event(waiter, e)
    launch(waiter, "EasyOPf", 1, (buf,))
    launch(recorder, "LongOPf", 1, (_scratch(),))
    acl.rt.record_event(e, recorder)
    acl.rt.reset_event(e, recorder)
    assert acl.rt.synchronize_stream(waiter) == acl.ACL_SUCCESS


def _behind_program(record: bool):
    """A stream far behind the host (1 ms kernels, 2.5 rings of them) next to a second stream
    whose short kernels wait on its events: the host clock after every call and the elapsed
    times of the events. Recording accesses makes a full ring run the engine up to the host's
    time before waiting (the path that logs no observation): both paths must agree."""
    npusim.reset()
    assert acl.init() == acl.ACL_SUCCESS and acl.rt.set_device(0) == acl.ACL_SUCCESS
    slow, fast = _streams(2)
    x = _scratch()
    depth = RT.devices[0].profile.max_task_num_per_stream
    marks = [_timeline_event() for _ in range(6)]
    clock = []
    ctx = npusim.analysis.record() if record else contextlib.nullcontext()
    with ctx:
        t0 = host_ns()
        for i in range(5 * depth // 2):
            assert launch(slow, "EasyOPf", 1, (x,), duration_ns=MS) == acl.ACL_SUCCESS
            if i % 997 == 0:
                e = marks[i // 997]
                assert acl.rt.record_event(e, slow) == acl.ACL_SUCCESS
                assert acl.rt.stream_wait_event(fast, e) == acl.ACL_SUCCESS
                assert launch(fast, "EasyOPf", 1, (x,)) == acl.ACL_SUCCESS
            clock.append(host_ns() - t0)
        assert acl.rt.synchronize_device() == acl.ACL_SUCCESS
    return clock, [_elapsed(marks[0], e) for e in marks[1:]]


def test_a_full_ring_behind_the_host_waits_as_running_to_the_host_time_first_would():
    assert _behind_program(record=False) == _behind_program(record=True)
