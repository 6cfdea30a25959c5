"""Deadlocks: when no stream can make progress the synchronize returns an error code at once (in
well under a second of wall time) and the diagnosis says who waits on what (design.md §4)."""
from __future__ import annotations


import pytest

import npusim
from npusim import acl
from npusim.runtime.runtime import RT
from helpers.acl import launch, read, stream_done


def _streams(n):
    out = []
    for _ in range(n):
        s, ret = acl.rt.create_stream()
        assert ret == acl.ACL_SUCCESS
        out.append(s)
    return out


def _cross_wait_events():
    """s1 waits for B then records A; s2 waits for A then records B (hardware-flag events, whose
    wait before a record blocks)."""
    s1, s2 = _streams(2)
    ev_a, _ = acl.rt.create_event_with_flag(acl.ACL_EVENT_SYNC)
    ev_b, _ = acl.rt.create_event_with_flag(acl.ACL_EVENT_SYNC)
    assert acl.rt.stream_wait_event(s1, ev_b) == acl.ACL_SUCCESS
    assert acl.rt.record_event(ev_a, s1) == acl.ACL_SUCCESS
    assert acl.rt.stream_wait_event(s2, ev_a) == acl.ACL_SUCCESS
    assert acl.rt.record_event(ev_b, s2) == acl.ACL_SUCCESS
    return s1, s2, ev_a, ev_b


def _cross_wait_notifies():
    s1, s2 = _streams(2)
    n_a, _ = acl.rt.create_notify(0)
    n_b, _ = acl.rt.create_notify(0)
    acl.rt.wait_and_reset_notify(n_b, s1)
    acl.rt.record_notify(n_a, s1)
    acl.rt.wait_and_reset_notify(n_a, s2)
    acl.rt.record_notify(n_b, s2)
    return s1, s2, n_a, n_b


def _diagnosis() -> str:
    return RT.devices[0].last_error_detail


def test_event_deadlock_sync_returns_507046_at_once(dev0):
    """Detected, not waited out: the simulated host clock moves by less than a second (a
    timeout would move it by the wait's length); no timed assert on the wall clock."""
    s1, *_ = _cross_wait_events()
    t0 = RT.host_ns
    ret = acl.rt.synchronize_stream(s1)
    assert RT.host_ns - t0 < 1_000_000_000
    assert ret == acl.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT == 507046


def test_event_deadlock_diagnosis_names_both_waits(dev0):
    s1, s2, ev_a, ev_b = _cross_wait_events()
    acl.rt.synchronize_stream(s1)
    msg = _diagnosis()
    assert "deadlock" in msg
    assert f"event 0x{ev_a:x}" in msg and f"event 0x{ev_b:x}" in msg
    assert msg.count(" waits ") == 2
    assert "would record it" in msg


def test_notify_deadlock_sync_returns_507046_with_diagnosis(dev0):
    s1, s2, n_a, n_b = _cross_wait_notifies()
    t0 = RT.host_ns
    assert acl.rt.synchronize_stream(s2) == acl.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    assert RT.host_ns - t0 < 1_000_000_000
    msg = _diagnosis()
    assert f"notify 0x{n_a:x}" in msg and f"notify 0x{n_b:x}" in msg


def test_deadlock_synchronize_device_returns_507046(dev0):
    _cross_wait_events()
    assert acl.rt.synchronize_device() == acl.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT


def test_deadlock_synchronize_event_returns_507047(dev0):
    _, _, ev_a, _ = _cross_wait_events()
    assert acl.rt.synchronize_event(ev_a) == acl.ACL_ERROR_RT_EVENT_SYNC_TIMEOUT


def test_deadlocked_streams_query_not_ready(dev0):
    s1, s2, *_ = _cross_wait_events()
    acl.rt.synchronize_stream(s1)
    assert not stream_done(s1) and not stream_done(s2)


def test_wait_on_an_event_nobody_records_is_diagnosed(dev0):
    (s,) = _streams(1)
    ev, _ = acl.rt.create_event_with_flag(acl.ACL_EVENT_SYNC)
    acl.rt.stream_wait_event(s, ev)
    assert acl.rt.synchronize_stream(s) == acl.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    assert "nothing queued on any stream records it" in _diagnosis()


def test_deadlock_is_resolved_by_a_later_record(dev0, buf):
    s1, s2, ev_a, _ = _cross_wait_events()
    launch(s1, "EasyOPf", 1, (buf,))
    launch(s2, "EasyOPf", 1, (buf + 4,))
    acl.rt.synchronize_stream(s1)
    (s3,) = _streams(1)
    acl.rt.record_event(ev_a, s3)                  # unblocks s2, whose record unblocks s1
    assert acl.rt.synchronize_stream(s1) == acl.ACL_SUCCESS
    assert acl.rt.synchronize_stream(s2) == acl.ACL_SUCCESS
    assert list(read(buf, 2)) == [1, 1]


def test_deadlock_leaves_other_streams_usable(dev0, buf):
    _cross_wait_events()
    acl.rt.synchronize_device()
    (s3,) = _streams(1)
    launch(s3, "EasyOPf", 1, (buf,))
    assert acl.rt.synchronize_stream(s3) == acl.ACL_SUCCESS
    assert read(buf, 1)[0] == 1


def test_deadlock_raises_timeout_error_with_diagnosis_in_pythonic_api():
    dev = npusim.Device()
    s1, s2 = dev.stream(), dev.stream()
    a, b = dev.event(kind="flag"), dev.event(kind="flag")
    s1.wait(b)
    s1.record(a)
    s2.wait(a)
    s2.record(b)
    t0 = RT.host_ns
    with pytest.raises(npusim.errors.AclTimeoutError) as info:
        s1.synchronize()
    assert RT.host_ns - t0 < 1_000_000_000          # detected, not waited out (simulated time)
    assert info.value.code == 507046
    msg = str(info.value)
    assert "deadlock" in msg
    assert f"event 0x{a.handle:x}" in msg and f"event 0x{b.handle:x}" in msg
