"""Events and notifies through the facade: the three event kinds, their check orders and device
semantics, elapsed time, and notifies (docs/eager_api_checks.md §6-7)."""
from __future__ import annotations

import pytest

from npusim import acl
from helpers.acl import LONG_NS, host_ns, in_fresh_thread, launch, read, stream_done

SYNC, TIME_LINE = acl.ACL_EVENT_SYNC, acl.ACL_EVENT_TIME_LINE
MS = 1_000_000


def _ex(flag=SYNC | TIME_LINE):
    e, ret = acl.rt.create_event_ex_with_flag(flag)
    assert ret == acl.ACL_SUCCESS
    return e


def _flag(flag=SYNC):
    e, ret = acl.rt.create_event_with_flag(flag)
    assert ret == acl.ACL_SUCCESS
    return e


def _legacy():
    e, ret = acl.rt.create_event()
    assert ret == acl.ACL_SUCCESS
    return e


MAKERS = {"ex": _ex, "flag": _flag, "legacy": _legacy}


def _stream():
    s, ret = acl.rt.create_stream()
    assert ret == acl.ACL_SUCCESS
    return s


def _other_context_stream():
    acl.rt.create_context(0)
    s = _stream()
    acl.rt.set_device(0)
    return s


def _destroyed(e):
    acl.rt.destroy_event(e)
    return e


# ---- creation ----
def test_create_event_succeeds(dev0):
    e, ret = acl.rt.create_event()
    assert ret == acl.ACL_SUCCESS and e


@pytest.mark.parametrize("flag", [SYNC, SYNC | TIME_LINE, acl.ACL_EVENT_CAPTURE_STREAM_PROGRESS,
                                  TIME_LINE, acl.ACL_EVENT_DEVICE_USE_ONLY,
                                  acl.ACL_EVENT_EXTERNAL])
def test_create_event_with_flag_valid_flags_succeed(dev0, flag):
    assert acl.rt.create_event_with_flag(flag)[1] == acl.ACL_SUCCESS


@pytest.mark.parametrize("flag", [0, acl.ACL_EVENT_IPC, SYNC | acl.ACL_EVENT_DEVICE_USE_ONLY,
                                  acl.ACL_EVENT_EXTERNAL | SYNC, 0x100])
def test_create_event_with_flag_invalid_flags_return_107000(dev0, flag):
    assert acl.rt.create_event_with_flag(flag) == (None, acl.ACL_ERROR_RT_PARAM_INVALID)


@pytest.mark.parametrize("flag", [SYNC, TIME_LINE, SYNC | TIME_LINE, acl.ACL_EVENT_IPC])
def test_create_event_ex_valid_flags_succeed(dev0, flag):
    assert acl.rt.create_event_ex_with_flag(flag)[1] == acl.ACL_SUCCESS


@pytest.mark.parametrize("flag", [0, acl.ACL_EVENT_DEVICE_USE_ONLY, acl.ACL_EVENT_EXTERNAL,
                                  acl.ACL_EVENT_IPC | SYNC])
def test_create_event_ex_invalid_flags_return_107000(dev0, flag):
    assert acl.rt.create_event_ex_with_flag(flag) == (None, acl.ACL_ERROR_RT_PARAM_INVALID)


@pytest.mark.parametrize("make", [lambda: acl.rt.create_event(),
                                  lambda: acl.rt.create_event_with_flag(SYNC),
                                  lambda: acl.rt.create_event_ex_with_flag(SYNC)])
def test_create_event_without_context_returns_107002(make):
    assert make() == (None, acl.ACL_ERROR_RT_CONTEXT_NULL)


def test_create_event_checks_flag_before_context():
    assert acl.rt.create_event_with_flag(0) == (None, acl.ACL_ERROR_RT_PARAM_INVALID)


# ---- record ----
@pytest.mark.parametrize("kind", MAKERS)
def test_record_event_succeeds(stream, kind):
    assert acl.rt.record_event(MAKERS[kind](), stream) == acl.ACL_SUCCESS


def test_record_event_null_stream_uses_default_stream(dev0):
    e = _ex()
    assert acl.rt.record_event(e, None) == acl.ACL_SUCCESS
    assert acl.rt.synchronize_event(e) == acl.ACL_SUCCESS


def test_record_event_null_event_returns_100000(stream):
    assert acl.rt.record_event(0, stream) == acl.ACL_ERROR_INVALID_PARAM


def test_record_event_destroyed_event_returns_107017(stream):
    assert acl.rt.record_event(_destroyed(_ex()), stream) == acl.ACL_ERROR_RT_INVALID_HANDLE


def test_record_event_stale_stream_returns_107017(dev0):
    s = _stream()
    acl.rt.destroy_stream(s)
    assert acl.rt.record_event(_ex(), s) == acl.ACL_ERROR_RT_INVALID_HANDLE


def test_record_event_wrong_handle_type_returns_107017(stream):
    assert acl.rt.record_event(stream, stream) == acl.ACL_ERROR_RT_INVALID_HANDLE


def test_record_event_device_use_only_returns_107000(stream):
    e = _flag(acl.ACL_EVENT_DEVICE_USE_ONLY)
    assert acl.rt.record_event(e, stream) == acl.ACL_ERROR_RT_PARAM_INVALID


def test_record_event_without_context_returns_107002(stream):
    e = _ex()
    assert in_fresh_thread(acl.rt.record_event, e, stream) == acl.ACL_ERROR_RT_CONTEXT_NULL


def test_record_event_other_context_stream_returns_107003(dev0):
    e = _ex()
    s = _other_context_stream()
    assert acl.rt.record_event(e, s) == acl.ACL_ERROR_RT_STREAM_CONTEXT


# ---- wait: check order ----
def test_stream_wait_event_null_event_returns_100000(stream):
    assert acl.rt.stream_wait_event(stream, 0) == acl.ACL_ERROR_INVALID_PARAM


def test_stream_wait_event_destroyed_event_returns_107017(stream):
    assert acl.rt.stream_wait_event(stream, _destroyed(_ex())) == acl.ACL_ERROR_RT_INVALID_HANDLE


@pytest.mark.parametrize("flag", [TIME_LINE, acl.ACL_EVENT_CAPTURE_STREAM_PROGRESS])
def test_stream_wait_event_without_wait_task_returns_207000(stream, flag):
    e = _flag(flag)
    acl.rt.record_event(e, stream)
    assert acl.rt.stream_wait_event(stream, e) == acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT


def test_stream_wait_event_without_context_returns_107002(stream):
    e = _flag()
    assert in_fresh_thread(acl.rt.stream_wait_event, stream, e) == acl.ACL_ERROR_RT_CONTEXT_NULL


def test_stream_wait_event_other_context_stream_returns_107003(dev0):
    e = _flag()
    s = _other_context_stream()
    assert acl.rt.stream_wait_event(s, e) == acl.ACL_ERROR_RT_STREAM_CONTEXT


# ---- wait: semantics per kind (§6.3) ----
def test_ex_wait_before_record_is_a_no_op(stream, buf):
    assert acl.rt.stream_wait_event(stream, _ex()) == acl.ACL_SUCCESS
    launch(stream, "EasyOPf", 1, (buf,))
    assert acl.rt.synchronize_stream(stream) == acl.ACL_SUCCESS
    assert read(buf, 1)[0] == 1


def test_ex_wait_before_record_is_not_bound_to_a_later_record(stream, buf):
    e = _ex()
    acl.rt.stream_wait_event(stream, e)
    launch(stream, "EasyOPf", 1, (buf,))
    other = _stream()
    launch(other, "LongOPf", 1, (buf,))
    acl.rt.record_event(e, other)
    acl.rt.synchronize_stream(stream)
    assert host_ns() < LONG_NS


def test_legacy_wait_before_record_returns_107000(stream):
    assert acl.rt.stream_wait_event(stream, _legacy()) == acl.ACL_ERROR_RT_PARAM_INVALID


@pytest.mark.parametrize("kind", MAKERS)
def test_wait_after_record_waits_for_the_recorded_work(stream, buf, kind):
    e = MAKERS[kind]()
    other = _stream()
    launch(other, "LongOPf", 1, (buf,))
    acl.rt.record_event(e, other)
    assert acl.rt.stream_wait_event(stream, e) == acl.ACL_SUCCESS
    acl.rt.synchronize_stream(stream)
    assert host_ns() >= LONG_NS


def test_ex_wait_binds_to_latest_record_at_issue_time(stream, buf):
    e = _ex()
    other = _stream()
    launch(other, "LongOPf", 1, (buf,))
    acl.rt.record_event(e, other)
    acl.rt.stream_wait_event(stream, e)
    launch(other, "LongOPf", 1, (buf,))
    acl.rt.record_event(e, other)              # a later record does not move the issued wait
    acl.rt.synchronize_stream(stream)
    assert LONG_NS <= host_ns() < 2 * LONG_NS


def test_flag_wait_before_record_blocks_until_recorded(stream, buf):
    e = _flag()
    acl.rt.stream_wait_event(stream, e)
    launch(stream, "EasyOPf", 1, (buf,))
    assert not stream_done(stream)
    acl.rt.record_event(e, _stream())
    assert acl.rt.synchronize_stream(stream) == acl.ACL_SUCCESS
    assert read(buf, 1)[0] == 1


def test_flag_wait_does_not_reset_the_event(stream, buf):
    e = _flag()
    acl.rt.record_event(e, stream)
    other = _stream()
    for s in (stream, other, other):
        acl.rt.stream_wait_event(s, e)
        launch(s, "EasyOPf", 1, (buf,))
    assert acl.rt.synchronize_device() == acl.ACL_SUCCESS
    assert read(buf, 1)[0] == 3


def test_reset_event_clears_a_flag_event(stream, buf):
    e = _flag()
    recorder = _stream()
    acl.rt.record_event(e, recorder)
    assert acl.rt.reset_event(e, recorder) == acl.ACL_SUCCESS
    acl.rt.synchronize_stream(recorder)
    acl.rt.stream_wait_event(stream, e)
    launch(stream, "EasyOPf", 1, (buf,))
    assert not stream_done(stream)
    acl.rt.record_event(e, recorder)
    assert acl.rt.synchronize_stream(stream) == acl.ACL_SUCCESS
    assert read(buf, 1)[0] == 1


# ---- reset: check order ----
def test_reset_event_legacy_is_accepted(stream):
    e = _legacy()
    acl.rt.record_event(e, stream)
    assert acl.rt.reset_event(e, stream) == acl.ACL_SUCCESS


def test_reset_event_ex_returns_207000(stream):
    assert acl.rt.reset_event(_ex(), stream) == acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT


def test_reset_event_ex_is_refused_before_the_context_check(dev0):
    e = _ex()
    s = _other_context_stream()
    assert acl.rt.reset_event(e, s) == acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT


def test_reset_event_without_wait_task_returns_207000(stream):
    assert acl.rt.reset_event(_flag(TIME_LINE), stream) == acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT


def test_reset_event_null_returns_100000(stream):
    assert acl.rt.reset_event(0, stream) == acl.ACL_ERROR_INVALID_PARAM


def test_reset_event_destroyed_returns_107017(stream):
    assert acl.rt.reset_event(_destroyed(_flag()), stream) == acl.ACL_ERROR_RT_INVALID_HANDLE


def test_reset_event_without_context_returns_107002(stream):
    e = _flag()
    assert in_fresh_thread(acl.rt.reset_event, e, stream) == acl.ACL_ERROR_RT_CONTEXT_NULL


def test_reset_event_other_context_stream_returns_107003(dev0):
    e = _flag()
    s = _other_context_stream()
    assert acl.rt.reset_event(e, s) == acl.ACL_ERROR_RT_STREAM_CONTEXT


def test_reset_event_does_not_change_query_status(stream):
    e = _flag()
    acl.rt.record_event(e, stream)
    acl.rt.reset_event(e, stream)
    acl.rt.synchronize_stream(stream)
    assert acl.rt.query_event_status(e) == (acl.ACL_EVENT_RECORDED_STATUS_COMPLETE, 0)


# ---- query status (aclrtQueryEventStatus: NOT_READY=0, COMPLETE=1) ----
@pytest.mark.parametrize("kind,status", [("ex", acl.ACL_EVENT_RECORDED_STATUS_COMPLETE),
                                         ("legacy", acl.ACL_EVENT_RECORDED_STATUS_NOT_READY),
                                         ("flag", acl.ACL_EVENT_RECORDED_STATUS_NOT_READY)])
def test_query_event_status_before_record(dev0, kind, status):
    assert acl.rt.query_event_status(MAKERS[kind]()) == (status, acl.ACL_SUCCESS)


def test_query_event_status_pending_record_is_not_ready(stream, buf):
    e = _ex()
    launch(stream, "LongOPf", 1, (buf,))
    acl.rt.record_event(e, stream)
    assert acl.rt.query_event_status(e) == (acl.ACL_EVENT_RECORDED_STATUS_NOT_READY, 0)


def test_query_event_status_after_sync_is_complete(stream, buf):
    e = _ex()
    launch(stream, "LongOPf", 1, (buf,))
    acl.rt.record_event(e, stream)
    acl.rt.synchronize_event(e)
    assert acl.rt.query_event_status(e) == (acl.ACL_EVENT_RECORDED_STATUS_COMPLETE, 0)


def test_query_event_status_null_returns_100000():
    assert acl.rt.query_event_status(0) == (None, acl.ACL_ERROR_INVALID_PARAM)


def test_query_event_status_destroyed_returns_107017(dev0):
    assert acl.rt.query_event_status(_destroyed(_ex())) == (None, acl.ACL_ERROR_RT_INVALID_HANDLE)


def test_query_event_status_external_returns_207000(dev0):
    assert acl.rt.query_event_status(_flag(acl.ACL_EVENT_EXTERNAL)) == \
        (None, acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT)


def test_query_event_status_needs_no_context(dev0):
    e = _ex()
    assert in_fresh_thread(acl.rt.query_event_status, e) == \
        (acl.ACL_EVENT_RECORDED_STATUS_COMPLETE, acl.ACL_SUCCESS)


# ---- aclrtQueryEvent (deprecated: COMPLETE=0, NOT_READY=1) ----
def test_query_event_on_ex_returns_207000(dev0):
    assert acl.rt.query_event(_ex()) == (None, acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT)


def test_query_event_before_record_is_complete(dev0):
    assert acl.rt.query_event(_legacy()) == (acl.ACL_EVENT_STATUS_COMPLETE, acl.ACL_SUCCESS)


def test_query_event_pending_record_is_not_ready(stream, buf):
    e = _legacy()
    launch(stream, "LongOPf", 1, (buf,))
    acl.rt.record_event(e, stream)
    assert acl.rt.query_event(e) == (acl.ACL_EVENT_STATUS_NOT_READY, acl.ACL_SUCCESS)


def test_query_event_external_returns_207000(dev0):
    assert acl.rt.query_event(_flag(acl.ACL_EVENT_EXTERNAL)) == \
        (None, acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT)


def test_query_event_null_returns_100000():
    assert acl.rt.query_event(0) == (None, acl.ACL_ERROR_INVALID_PARAM)


# ---- synchronize ----
def test_synchronize_event_never_recorded_returns_0_at_once(dev0):
    assert acl.rt.synchronize_event(_flag()) == acl.ACL_SUCCESS


def test_synchronize_event_waits_for_the_record(stream, buf):
    e = _ex()
    launch(stream, "LongOPf", 1, (buf,))
    acl.rt.record_event(e, stream)
    assert acl.rt.synchronize_event(e) == acl.ACL_SUCCESS
    assert host_ns() >= LONG_NS


def test_synchronize_event_does_not_wait_for_later_work(stream, buf):
    e = _ex()
    acl.rt.record_event(e, stream)
    launch(stream, "LongOPf", 1, (buf,))
    acl.rt.synchronize_event(e)
    assert host_ns() < LONG_NS


def test_synchronize_event_null_returns_100000():
    assert acl.rt.synchronize_event(0) == acl.ACL_ERROR_INVALID_PARAM


def test_synchronize_event_destroyed_returns_107017(dev0):
    assert acl.rt.synchronize_event(_destroyed(_ex())) == acl.ACL_ERROR_RT_INVALID_HANDLE


def test_synchronize_event_external_returns_207000(dev0):
    assert acl.rt.synchronize_event(_flag(acl.ACL_EVENT_EXTERNAL)) == \
        acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT


@pytest.mark.parametrize("timeout", [0, -2])
def test_synchronize_event_with_bad_timeout_returns_107000(dev0, timeout):
    assert acl.rt.synchronize_event_with_timeout(_ex(), timeout) == \
        acl.ACL_ERROR_RT_PARAM_INVALID


def test_synchronize_event_with_timeout_expiry_returns_507047(stream, buf):
    e = _ex()
    launch(stream, "LongOPf", 1, (buf,))
    acl.rt.record_event(e, stream)
    assert acl.rt.synchronize_event_with_timeout(e, 1) == \
        acl.ACL_ERROR_RT_EVENT_SYNC_TIMEOUT == 507047


def test_synchronize_event_after_stop_mode_fault_returns_the_fault(stream):
    e = _ex()
    acl.rt.set_stream_failure_mode(stream, acl.ACL_STOP_ON_FAILURE)
    launch(stream, "ErrorOPf")
    acl.rt.record_event(e, stream)
    assert acl.rt.synchronize_event(e) == acl.ACL_ERROR_RT_VECTOR_CORE_EXCEPTION


# ---- elapsed time ----
def _two_records_around_kernel(stream, buf, make):
    a, b = make(), make()
    acl.rt.record_event(a, stream)
    launch(stream, "EasyOPf", 1, (buf,), duration_ns=MS)
    acl.rt.record_event(b, stream)
    acl.rt.synchronize_stream(stream)
    return a, b


@pytest.mark.parametrize("kind", ["ex", "legacy"])
def test_elapsed_time_spans_the_kernel(stream, buf, kind):
    a, b = _two_records_around_kernel(stream, buf, MAKERS[kind])
    ms, ret = acl.rt.event_elapsed_time(a, b)
    assert ret == acl.ACL_SUCCESS
    assert 1.0 <= ms < 1.05


def test_elapsed_time_reversed_is_negative(stream, buf):
    a, b = _two_records_around_kernel(stream, buf, _legacy)
    ms, ret = acl.rt.event_elapsed_time(b, a)
    assert ret == acl.ACL_SUCCESS and ms <= -1.0


def test_elapsed_time_without_time_line_is_zero(stream, buf):
    a, b = _two_records_around_kernel(stream, buf, lambda: _ex(SYNC))
    assert acl.rt.event_elapsed_time(a, b) == (0.0, acl.ACL_SUCCESS)


def test_elapsed_time_never_recorded_returns_507000(stream):
    a, b = _legacy(), _legacy()
    acl.rt.record_event(a, stream)
    acl.rt.synchronize_stream(stream)
    assert acl.rt.event_elapsed_time(a, b) == (None, acl.ACL_ERROR_RT_INTERNAL_ERROR)


def test_elapsed_time_pending_record_returns_107006(stream, buf):
    a, b = _legacy(), _legacy()
    acl.rt.record_event(a, stream)
    launch(stream, "LongOPf", 1, (buf,))
    acl.rt.record_event(b, stream)
    assert acl.rt.event_elapsed_time(a, b) == \
        (None, acl.ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID)


@pytest.mark.parametrize("which", [0, 1])
def test_elapsed_time_null_returns_100000(dev0, which):
    pair = [_legacy(), _legacy()]
    pair[which] = 0
    assert acl.rt.event_elapsed_time(*pair) == (None, acl.ACL_ERROR_INVALID_PARAM)


def test_elapsed_time_destroyed_returns_107017(dev0):
    assert acl.rt.event_elapsed_time(_legacy(), _destroyed(_legacy())) == \
        (None, acl.ACL_ERROR_RT_INVALID_HANDLE)


# ---- destroy ----
def test_destroy_event_succeeds(dev0):
    assert acl.rt.destroy_event(_ex()) == acl.ACL_SUCCESS


def test_destroy_event_twice_returns_107017(dev0):
    assert acl.rt.destroy_event(_destroyed(_ex())) == acl.ACL_ERROR_RT_INVALID_HANDLE


def test_destroy_event_null_returns_100000():
    assert acl.rt.destroy_event(0) == acl.ACL_ERROR_INVALID_PARAM


def test_destroy_event_needs_no_context(dev0):
    e = _ex()
    assert in_fresh_thread(acl.rt.destroy_event, e) == acl.ACL_SUCCESS


def test_destroy_event_with_pending_record_does_not_block(stream, buf):
    e = _ex()
    launch(stream, "LongOPf", 1, (buf,))
    acl.rt.record_event(e, stream)
    assert acl.rt.destroy_event(e) == acl.ACL_SUCCESS
    assert host_ns() < LONG_NS
    assert acl.rt.synchronize_stream(stream) == acl.ACL_SUCCESS


# ---- notifies (§7) ----
def _notify():
    n, ret = acl.rt.create_notify(acl.ACL_NOTIFY_DEFAULT)
    assert ret == acl.ACL_SUCCESS
    return n


@pytest.mark.parametrize("flag", [acl.ACL_NOTIFY_DEFAULT, acl.ACL_NOTIFY_DEVICE_USE_ONLY])
def test_create_notify_succeeds(dev0, flag):
    n, ret = acl.rt.create_notify(flag)
    assert ret == acl.ACL_SUCCESS and n


def test_create_notify_bad_flag_returns_107000(dev0):
    assert acl.rt.create_notify(2) == (None, acl.ACL_ERROR_RT_PARAM_INVALID)


def test_create_notify_without_context_returns_107002():
    assert acl.rt.create_notify(0) == (None, acl.ACL_ERROR_RT_CONTEXT_NULL)


def test_destroy_notify_succeeds(dev0):
    assert acl.rt.destroy_notify(_notify()) == acl.ACL_SUCCESS


def test_destroy_notify_null_returns_100000():
    assert acl.rt.destroy_notify(0) == acl.ACL_ERROR_INVALID_PARAM


def test_destroy_notify_twice_returns_107017(dev0):
    n = _notify()
    acl.rt.destroy_notify(n)
    assert acl.rt.destroy_notify(n) == acl.ACL_ERROR_RT_INVALID_HANDLE


def test_destroy_notify_without_context_returns_107002(dev0):
    n = _notify()
    assert in_fresh_thread(acl.rt.destroy_notify, n) == acl.ACL_ERROR_RT_CONTEXT_NULL


@pytest.mark.parametrize("api", ["record", "wait"])
def test_notify_task_null_notify_returns_100000(stream, api):
    call = acl.rt.record_notify if api == "record" else acl.rt.wait_and_reset_notify
    assert call(0, stream) == acl.ACL_ERROR_INVALID_PARAM


@pytest.mark.parametrize("api", ["record", "wait"])
def test_notify_task_destroyed_notify_returns_107017(stream, api):
    n = _notify()
    acl.rt.destroy_notify(n)
    call = acl.rt.record_notify if api == "record" else acl.rt.wait_and_reset_notify
    assert call(n, stream) == acl.ACL_ERROR_RT_INVALID_HANDLE


@pytest.mark.parametrize("api", ["record", "wait"])
def test_notify_task_stale_stream_returns_107017(dev0, api):
    n, s = _notify(), _stream()
    acl.rt.destroy_stream(s)
    call = acl.rt.record_notify if api == "record" else acl.rt.wait_and_reset_notify
    assert call(n, s) == acl.ACL_ERROR_RT_INVALID_HANDLE


@pytest.mark.parametrize("api", ["record", "wait"])
def test_notify_task_without_context_returns_107002(stream, api):
    n = _notify()
    call = acl.rt.record_notify if api == "record" else acl.rt.wait_and_reset_notify
    assert in_fresh_thread(call, n, stream) == acl.ACL_ERROR_RT_CONTEXT_NULL


@pytest.mark.parametrize("api", ["record", "wait"])
def test_notify_task_other_context_stream_returns_107003(dev0, api):
    n = _notify()
    s = _other_context_stream()
    call = acl.rt.record_notify if api == "record" else acl.rt.wait_and_reset_notify
    assert call(n, s) == acl.ACL_ERROR_RT_STREAM_CONTEXT


def test_notify_wait_blocks_until_recorded(stream, buf):
    n = _notify()
    assert acl.rt.wait_and_reset_notify(n, stream) == acl.ACL_SUCCESS
    launch(stream, "EasyOPf", 1, (buf,))
    assert not stream_done(stream)
    assert acl.rt.record_notify(n, _stream()) == acl.ACL_SUCCESS
    assert acl.rt.synchronize_stream(stream) == acl.ACL_SUCCESS
    assert read(buf, 1)[0] == 1


def test_notify_wait_consumes_the_record(stream, buf):
    n, recorder = _notify(), _stream()
    acl.rt.record_notify(n, recorder)
    for _ in range(2):
        acl.rt.wait_and_reset_notify(n, stream)
        launch(stream, "EasyOPf", 1, (buf,))
    acl.rt.synchronize_stream(recorder)
    assert not stream_done(stream)
    assert read(buf, 1)[0] == 1
    acl.rt.record_notify(n, recorder)
    assert acl.rt.synchronize_stream(stream) == acl.ACL_SUCCESS
    assert read(buf, 1)[0] == 2


def test_one_notify_record_releases_one_of_two_waiters(dev0, buf):
    n = _notify()
    waiters = [_stream(), _stream()]
    for i, s in enumerate(waiters):
        acl.rt.wait_and_reset_notify(n, s)
        launch(s, "EasyOPf", 1, (buf + 4 * i,))
    recorder = _stream()
    acl.rt.record_notify(n, recorder)
    acl.rt.synchronize_stream(recorder)
    assert sorted(stream_done(s) for s in waiters) == [False, True]
    assert sum(read(buf, 2)) == 1


def test_two_notify_records_before_a_wait_count_once(stream, buf):
    n, recorder = _notify(), _stream()
    acl.rt.record_notify(n, recorder)
    acl.rt.record_notify(n, recorder)
    acl.rt.synchronize_stream(recorder)
    for _ in range(2):
        acl.rt.wait_and_reset_notify(n, stream)
        launch(stream, "EasyOPf", 1, (buf,))
    assert not stream_done(stream)
    assert read(buf, 1)[0] == 1


@pytest.mark.parametrize("call", [acl.rt.synchronize_event, acl.rt.destroy_event,
                                  lambda h: acl.rt.query_event_status(h)[1],
                                  lambda h: acl.rt.query_event(h)[1]])
def test_event_api_given_a_stream_handle_returns_107017(stream, call):
    assert call(stream) == acl.ACL_ERROR_RT_INVALID_HANDLE
