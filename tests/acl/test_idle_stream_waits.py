"""Host waits cost what is busy, not what was made (``Device.wait_sq``, ``api_device``).

A synchronize of a stream that has finished takes no engine run (its stop condition would hold
before the first pick); a device synchronize waits only on the unseen streams
(``DeviceState.unseen``: pushed to since a device-wide wait last saw them done), in the
order the streams were made, and reads fault codes only when one is pending. What must hold:
the same codes, host clock and data as waiting on every stream — including a stream whose work
a run for another wait executed, which then left play with a clock past the host's; a fault on
a stream is reported by the device synchronize that follows it, once; a stream destroyed among
hundreds leaves the others' order and codes alone.
"""
from __future__ import annotations

from npusim import acl
from npusim.runtime import device as D
from npusim.runtime.runtime import RT

from helpers.acl import LONG_NS, host_ns, launch, read

OK = acl.ACL_SUCCESS


def _count_calls(monkeypatch, name: str) -> list:
    """Record the arguments of every call of ``Device.<name>`` (it still runs)."""
    calls = []
    real = getattr(D.Device, name)

    def counted(self, *a, **k):
        calls.append(a)
        return real(self, *a, **k)
    monkeypatch.setattr(D.Device, name, counted)
    return calls


def _streams(n):
    out = []
    for _ in range(n):
        s, ret = acl.rt.create_stream()
        assert ret == OK
        out.append(s)
    return out


def test_synchronize_of_a_finished_stream_runs_no_engine(dev0, buf, monkeypatch):
    s = _streams(1)[0]
    assert launch(s, "EasyOPf", 1, (buf,), duration_ns=LONG_NS) == OK
    assert acl.rt.synchronize_stream(s) == OK
    done_at = host_ns()
    runs = _count_calls(monkeypatch, "_run")
    for _ in range(5):
        assert acl.rt.synchronize_stream(s) == OK
    assert runs == []
    assert host_ns() >= done_at >= LONG_NS


def test_device_synchronize_waits_on_the_busy_streams_only(dev0, buf, monkeypatch):
    """500 idle streams and two busy ones: the device synchronize runs the engine for the two,
    the host clock ends past both, and their kernels' data is there."""
    idle = _streams(500)
    a, b = _streams(2)
    assert acl.rt.synchronize_device() == OK           # forgets the 502 new, empty SQs
    start = host_ns()
    for s in (a, b):
        for _ in range(3):
            assert launch(s, "EasyOPf", 1, (buf,)) == OK
    runs, waits = _count_calls(monkeypatch, "_run"), _count_calls(monkeypatch, "wait_sq")
    assert acl.rt.synchronize_device() == OK
    assert 1 <= len(runs) <= 2 and len(waits) == 2      # a's and b's, not 502
    assert int(read(buf, 1)[0]) == 6
    assert host_ns() >= start + 3 * 2_000                # three 2 us kernels on each stream
    runs.clear()
    waits.clear()
    assert acl.rt.synchronize_device() == OK           # everything done: no run at all
    assert runs == [] and len(waits) <= 2
    for s in idle + [a, b]:
        assert acl.rt.destroy_stream(s) == OK


def test_a_fault_is_reported_by_the_next_device_synchronize_once(dev0):
    streams = _streams(300)
    bad = streams[150]
    assert acl.rt.synchronize_device() == OK
    assert launch(bad, "ErrorOPf") == OK
    assert acl.rt.synchronize_device() == acl.ACL_ERROR_RT_VECTOR_CORE_EXCEPTION
    assert acl.rt.synchronize_device() == OK
    assert acl.rt.synchronize_stream(bad) == OK       # reported once
    for s in streams:
        assert acl.rt.destroy_stream(s) == OK


def test_streams_destroyed_among_many_keep_the_rest_in_order(dev0):
    streams = _streams(200)
    for s in streams[::3]:
        assert acl.rt.destroy_stream(s) == OK
    ctx = RT.current_context
    left = [s for i, s in enumerate(streams) if i % 3]
    handles = [s.handle for s in ctx.streams if not s.is_default]
    assert handles == left                              # creation order, O(1) removals
    assert acl.rt.synchronize_device() == OK
    for s in left:
        assert acl.rt.destroy_stream(s) == OK
    assert [s for s in ctx.streams if not s.is_default] == []


def test_device_synchronize_sees_a_joined_capture_among_many_streams(dev0):
    """The capture check asks only the streams that entered a capture: a side stream joined
    into a capture among 200 streams makes the device synchronize refuse (107xxx as before), and
    once the capture ends the check forgets both streams."""
    streams = _streams(200)
    origin, side = streams[10], streams[190]
    ev, _ = acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC)
    back, _ = acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC)
    assert acl.mdl.ri_capture_begin(origin, acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED) == OK
    assert acl.rt.record_event(ev, origin) == OK
    assert acl.rt.stream_wait_event(side, ev) == OK            # side joins the capture
    assert acl.rt.synchronize_device() == acl.ACL_ERROR_RT_STREAM_CAPTURED
    assert acl.rt.record_event(back, side) == OK
    assert acl.rt.stream_wait_event(origin, back) == OK
    m, ret = acl.mdl.ri_capture_end(origin)
    assert ret == OK
    assert acl.rt.synchronize_device() == OK
    assert not RT.current_context.capturing
    assert acl.mdl.ri_destroy(m) == OK
    for s in streams:
        assert acl.rt.destroy_stream(s) == OK


def test_device_synchronize_moves_the_clock_past_work_that_ran_unwatched(dev0, buf):
    """A's 50 ms kernel is executed (its SQE retired, A's clock at its end) by the run that
    waits on B's short one; the host is then far before A's end. C's synchronize starts a run
    that drops the finished A from play. The device synchronize must still move the host clock
    to A's end, as waiting on every stream did."""
    a, b, c = _streams(3)
    assert launch(a, "EasyOPf", 1, (buf,), duration_ns=LONG_NS) == OK
    assert launch(b, "EasyOPf", 1, (buf,)) == OK
    assert acl.rt.synchronize_stream(b) == OK           # executes A's kernel too
    assert host_ns() < LONG_NS
    assert launch(c, "EasyOPf", 1, (buf,)) == OK
    assert acl.rt.synchronize_stream(c) == OK
    assert host_ns() < LONG_NS
    assert acl.rt.synchronize_device() == OK
    assert host_ns() >= LONG_NS
    assert acl.rt.synchronize_device_with_timeout(1) == OK
    for s in (a, b, c):
        assert acl.rt.destroy_stream(s) == OK


def test_device_synchronize_with_timeout_counts_work_that_ran_unwatched(dev0, buf):
    """The same, through aclrtSynchronizeDeviceWithTimeout: A's 50 ms kernel is past a 1 ms
    timeout (507046), however it was executed."""
    a, b, c = _streams(3)
    assert launch(a, "EasyOPf", 1, (buf,), duration_ns=LONG_NS) == OK
    assert launch(b, "EasyOPf", 1, (buf,)) == OK
    assert acl.rt.synchronize_stream(b) == OK
    assert launch(c, "EasyOPf", 1, (buf,)) == OK
    assert acl.rt.synchronize_stream(c) == OK
    assert acl.rt.synchronize_device_with_timeout(1) == acl.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    for s in (a, b, c):
        assert acl.rt.destroy_stream(s) == OK


def test_work_pushed_during_a_streams_wait_keeps_it_unseen(dev0, buf, monkeypatch):
    """A callback (or another thread, during a stall) can push onto a stream while the device
    synchronize waits on it. That stream is not marked seen: when a later run executes the new
    50 ms kernel for another wait, the next device synchronize still ends past it."""
    a, b, c = _streams(3)
    assert launch(a, "EasyOPf", 1, (buf,)) == OK
    real, pushed = D.Device.wait_sq, []

    def wait_then_push(self, sq, pos):
        real(self, sq, pos)
        if not pushed and sq == next(s.sq for s in RT.current_context.streams if s.handle == a):
            pushed.append(sq)               # what a callback run during the wait might do
            assert launch(a, "EasyOPf", 1, (buf,), duration_ns=LONG_NS) == OK
    monkeypatch.setattr(D.Device, "wait_sq", wait_then_push)
    assert acl.rt.synchronize_device() == OK
    monkeypatch.setattr(D.Device, "wait_sq", real)
    assert pushed and host_ns() < LONG_NS
    assert launch(b, "EasyOPf", 1, (buf,)) == OK
    assert acl.rt.synchronize_stream(b) == OK           # executes the long kernel too
    assert launch(c, "EasyOPf", 1, (buf,)) == OK
    assert acl.rt.synchronize_stream(c) == OK           # a run that drops A from play
    assert host_ns() < LONG_NS
    assert acl.rt.synchronize_device() == OK
    assert host_ns() >= LONG_NS
    for s in (a, b, c):
        assert acl.rt.destroy_stream(s) == OK


# ---- real threads and long loops ----
def test_threads_launching_while_others_synchronize_the_device(acl):
    """Four threads: two launch EasyOPf on streams of their own and synchronize the device every
    few launches, two only synchronize the device. Every count is right at the end, each
    launcher's last device synchronize saw its stream's work done, and nothing is left unseen
    once all streams are done and one more device synchronize ran."""
    import helpers.acl as H
    assert acl.rt.set_device(0) == acl.ACL_SUCCESS
    easy = H.easy_opf()
    rounds, counts = 60, {}

    def worker(i):
        s, x, args = H.worker_stream()
        if i < 2:
            for k in range(rounds):
                assert acl.rt.launch_kernel(easy, 1, args, 8, s) == OK
                if k % 5 == 4:
                    assert acl.rt.synchronize_device() == OK
            assert acl.rt.synchronize_device() == OK
            assert H.stream_done(s)
            counts[i] = int(read(x, 1)[0])
        else:
            for _ in range(rounds // 3):
                assert acl.rt.synchronize_device() == OK
        assert acl.rt.destroy_stream(s) == OK

    H.on_threads(worker, 4, timeout=120)
    assert counts == {0: rounds, 1: rounds}
    assert acl.rt.synchronize_device() == OK
    state = RT.devices[0].state
    assert not [q for q in state.unseen() if q in RT.devices[0].streams]


def test_a_thousand_launch_and_device_synchronize_cycles_stay_flat(dev0, buf):
    """1,000 cycles of a launch on one of 100 streams and a device synchronize: the unseen set
    holds exactly the stream just used and is empty of streams after each synchronize, and the
    Python heap does not grow."""
    import tracemalloc
    streams = _streams(100)
    assert acl.rt.synchronize_device() == OK
    state = RT.current_context.device.state
    by_sq = RT.current_context.device.streams
    sqs = [next(t.sq for t in RT.current_context.streams if t.handle == h) for h in streams]
    tracemalloc.start()
    try:
        for k in range(1000):
            assert launch(streams[k % 100], "EasyOPf", 1, (buf,)) == OK
            assert [q for q in state.unseen() if q in by_sq] == [sqs[k % 100]]
            assert acl.rt.synchronize_device() == OK
            assert not [q for q in state.unseen() if q in by_sq]
            if k == 99:
                before = tracemalloc.get_traced_memory()[0]
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 64 * 1024, grown
    assert int(read(buf, 1)[0]) == 1000
    for s in streams:
        assert acl.rt.destroy_stream(s) == OK
