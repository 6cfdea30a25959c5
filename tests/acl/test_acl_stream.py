"""Streams through the facade: create, destroy, synchronize, query, failure mode
(docs/eager_api_checks.md §4)."""
from __future__ import annotations

import pytest

from npusim import acl
from helpers.acl import LONG_NS, host_ns, in_fresh_thread, launch, read, stream_done


def _other_context_stream():
    """A stream of a second context on device 0; the thread is back on the primary context."""
    acl.rt.create_context(0)
    s, ret = acl.rt.create_stream()
    assert ret == acl.ACL_SUCCESS
    acl.rt.set_device(0)
    return s


def _destroyed_stream():
    s, _ = acl.rt.create_stream()
    acl.rt.destroy_stream(s)
    return s


# ---- create ----
def test_create_stream_returns_handle(dev0):
    s, ret = acl.rt.create_stream()
    assert ret == acl.ACL_SUCCESS and isinstance(s, int) and s != 0


def test_create_stream_without_context_returns_107002():
    assert acl.rt.create_stream() == (None, acl.ACL_ERROR_RT_CONTEXT_NULL)


def test_create_stream_on_fresh_thread_returns_107002(dev0):
    assert in_fresh_thread(acl.rt.create_stream) == (None, acl.ACL_ERROR_RT_CONTEXT_NULL)


def test_create_stream_with_config_clamps_priority_and_drops_unknown_bits(dev0):
    s, ret = acl.rt.create_stream_with_config(99, 0x1000)
    assert ret == acl.ACL_SUCCESS and s


def test_create_stream_with_config_device_use_only_plus_other_bit_returns_107000(dev0):
    _, ret = acl.rt.create_stream_with_config(
        0, acl.ACL_STREAM_DEVICE_USE_ONLY | acl.ACL_STREAM_FAST_LAUNCH)
    assert ret == acl.ACL_ERROR_RT_PARAM_INVALID


def test_persistent_stream_sync_and_query_succeed_at_once(dev0, buf):
    s, _ = acl.rt.create_stream_with_config(0, acl.ACL_STREAM_PERSISTENT)
    launch(s, "LongOPf", 1, (buf,))
    assert acl.rt.synchronize_stream(s) == acl.ACL_SUCCESS
    assert acl.rt.stream_query(s) == (acl.ACL_STREAM_STATUS_COMPLETE, acl.ACL_SUCCESS)
    assert host_ns() < LONG_NS


# ---- destroy ----
def test_destroy_stream_succeeds(stream):
    assert acl.rt.destroy_stream(stream) == acl.ACL_SUCCESS


def test_destroy_stream_null_returns_100000(dev0):
    assert acl.rt.destroy_stream(0) == acl.ACL_ERROR_INVALID_PARAM


def test_destroy_stream_twice_returns_107017(stream):
    acl.rt.destroy_stream(stream)
    assert acl.rt.destroy_stream(stream) == acl.ACL_ERROR_RT_INVALID_HANDLE == 107017


def test_destroy_stream_wrong_handle_type_returns_107017(dev0):
    ev, _ = acl.rt.create_event()
    assert acl.rt.destroy_stream(ev) == acl.ACL_ERROR_RT_INVALID_HANDLE


def test_destroy_stream_of_other_context_returns_107003(dev0):
    s = _other_context_stream()
    assert acl.rt.destroy_stream(s) == acl.ACL_ERROR_RT_STREAM_CONTEXT == 107003


def test_destroy_stream_without_context_returns_107002(stream):
    assert in_fresh_thread(acl.rt.destroy_stream, stream) == acl.ACL_ERROR_RT_CONTEXT_NULL


def test_destroy_stream_waits_for_pending_tasks(stream, buf):
    launch(stream, "LongOPf", 1, (buf,))
    acl.rt.destroy_stream(stream)
    assert host_ns() >= LONG_NS
    assert read(buf, 1)[0] == 1


# ---- synchronize ----
def test_synchronize_stream_runs_its_tasks(stream, buf):
    launch(stream, "EasyOPf", 4, (buf,))
    assert acl.rt.synchronize_stream(stream) == acl.ACL_SUCCESS
    assert list(read(buf, 5)) == [1, 1, 1, 1, 0]


def test_synchronize_null_stream_is_the_default_stream(dev0, buf):
    launch(None, "EasyOPf", 1, (buf,))
    assert acl.rt.synchronize_stream(None) == acl.ACL_SUCCESS
    assert read(buf, 1)[0] == 1


def test_synchronize_stream_destroyed_returns_107017(dev0):
    assert acl.rt.synchronize_stream(_destroyed_stream()) == acl.ACL_ERROR_RT_INVALID_HANDLE


def test_synchronize_stream_without_context_returns_107002(stream):
    assert in_fresh_thread(acl.rt.synchronize_stream, stream) == acl.ACL_ERROR_RT_CONTEXT_NULL


def test_synchronize_stream_of_other_context_succeeds(dev0):
    s = _other_context_stream()
    assert acl.rt.synchronize_stream(s) == acl.ACL_SUCCESS


@pytest.mark.parametrize("timeout", [0, -2])
def test_synchronize_stream_with_bad_timeout_returns_107000(stream, timeout):
    assert acl.rt.synchronize_stream_with_timeout(stream, timeout) == \
        acl.ACL_ERROR_RT_PARAM_INVALID


def test_synchronize_stream_with_timeout_minus_one_waits_forever(stream, buf):
    launch(stream, "LongOPf", 1, (buf,))
    assert acl.rt.synchronize_stream_with_timeout(stream, -1) == acl.ACL_SUCCESS


def test_synchronize_stream_with_timeout_expiry_returns_507046(stream, buf):
    launch(stream, "LongOPf", 1, (buf,))
    assert acl.rt.synchronize_stream_with_timeout(stream, 1) == \
        acl.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT == 507046


# ---- query ----
def test_stream_query_idle_stream_is_complete(stream):
    assert acl.rt.stream_query(stream) == (acl.ACL_STREAM_STATUS_COMPLETE, acl.ACL_SUCCESS)


def test_stream_query_running_kernel_is_not_ready(stream, buf):
    launch(stream, "LongOPf", 1, (buf,))
    assert acl.rt.stream_query(stream) == (acl.ACL_STREAM_STATUS_NOT_READY, acl.ACL_SUCCESS)


def test_stream_query_after_synchronize_is_complete(stream, buf):
    launch(stream, "LongOPf", 1, (buf,))
    acl.rt.synchronize_stream(stream)
    assert stream_done(stream)


def test_stream_query_destroyed_returns_107017(dev0):
    _, ret = acl.rt.stream_query(_destroyed_stream())
    assert ret == acl.ACL_ERROR_RT_INVALID_HANDLE


def test_stream_query_without_context_returns_107002(stream):
    _, ret = in_fresh_thread(acl.rt.stream_query, stream)
    assert ret == acl.ACL_ERROR_RT_CONTEXT_NULL


def test_stream_query_of_other_context_succeeds(dev0):
    s = _other_context_stream()
    assert acl.rt.stream_query(s) == (acl.ACL_STREAM_STATUS_COMPLETE, acl.ACL_SUCCESS)


# ---- failure mode: CONTINUE (default) ----
def test_continue_mode_sync_reports_507035_once_then_0(stream):
    launch(stream, "ErrorOPf")
    assert acl.rt.synchronize_stream(stream) == acl.ACL_ERROR_RT_VECTOR_CORE_EXCEPTION == 507035
    assert acl.rt.synchronize_stream(stream) == acl.ACL_SUCCESS


def test_continue_mode_later_tasks_still_run(stream, buf):
    launch(stream, "EasyOPf", 1, (buf,))
    launch(stream, "ErrorOPf")
    launch(stream, "EasyOPf", 1, (buf,))
    acl.rt.synchronize_stream(stream)
    assert read(buf, 1)[0] == 2


def test_continue_mode_fault_does_not_affect_other_streams(stream, buf):
    other, _ = acl.rt.create_stream()
    launch(stream, "ErrorOPf")
    launch(other, "EasyOPf", 1, (buf,))
    assert acl.rt.synchronize_stream(other) == acl.ACL_SUCCESS
    assert acl.rt.synchronize_stream(stream) == acl.ACL_ERROR_RT_VECTOR_CORE_EXCEPTION


def test_continue_mode_launch_after_fault_succeeds(stream, buf):
    launch(stream, "ErrorOPf")
    acl.rt.synchronize_stream(stream)
    assert launch(stream, "EasyOPf", 1, (buf,)) == acl.ACL_SUCCESS
    assert acl.rt.synchronize_stream(stream) == acl.ACL_SUCCESS


# ---- failure mode: STOP ----
def test_set_stream_failure_mode_stop_succeeds(stream):
    assert acl.rt.set_stream_failure_mode(stream, acl.ACL_STOP_ON_FAILURE) == acl.ACL_SUCCESS


def test_set_stream_failure_mode_same_mode_twice_succeeds(stream):
    acl.rt.set_stream_failure_mode(stream, acl.ACL_STOP_ON_FAILURE)
    assert acl.rt.set_stream_failure_mode(stream, acl.ACL_STOP_ON_FAILURE) == acl.ACL_SUCCESS


def test_set_stream_failure_mode_continue_on_continue_stream_succeeds(stream):
    assert acl.rt.set_stream_failure_mode(stream, acl.ACL_CONTINUE_ON_FAILURE) == \
        acl.ACL_SUCCESS


def test_set_stream_failure_mode_stop_to_continue_returns_207000(stream):
    acl.rt.set_stream_failure_mode(stream, acl.ACL_STOP_ON_FAILURE)
    assert acl.rt.set_stream_failure_mode(stream, acl.ACL_CONTINUE_ON_FAILURE) == \
        acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT == 207000


def test_set_stream_failure_mode_null_stream_is_default_stream(dev0):
    assert acl.rt.set_stream_failure_mode(None, acl.ACL_STOP_ON_FAILURE) == acl.ACL_SUCCESS


@pytest.mark.parametrize("null", [None, 0])
def test_set_stream_failure_mode_null_stream_without_context_returns_107000(null):
    assert acl.rt.set_stream_failure_mode(null, acl.ACL_STOP_ON_FAILURE) == \
        acl.ACL_ERROR_RT_PARAM_INVALID


def test_set_stream_failure_mode_without_context_returns_107002(stream):
    assert in_fresh_thread(acl.rt.set_stream_failure_mode, stream, acl.ACL_STOP_ON_FAILURE) == \
        acl.ACL_ERROR_RT_CONTEXT_NULL


def test_set_stream_failure_mode_destroyed_returns_107017(dev0):
    assert acl.rt.set_stream_failure_mode(_destroyed_stream(), acl.ACL_STOP_ON_FAILURE) == \
        acl.ACL_ERROR_RT_INVALID_HANDLE


def test_set_stream_failure_mode_other_context_returns_107003(dev0):
    s = _other_context_stream()
    assert acl.rt.set_stream_failure_mode(s, acl.ACL_STOP_ON_FAILURE) == \
        acl.ACL_ERROR_RT_STREAM_CONTEXT


def test_set_stream_failure_mode_device_use_only_returns_207000(dev0):
    s, _ = acl.rt.create_stream_with_config(0, acl.ACL_STREAM_DEVICE_USE_ONLY)
    assert acl.rt.set_stream_failure_mode(s, acl.ACL_STOP_ON_FAILURE) == \
        acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT


def _stop_stream_with_fault(stream, buf):
    acl.rt.set_stream_failure_mode(stream, acl.ACL_STOP_ON_FAILURE)
    launch(stream, "EasyOPf", 1, (buf,))
    launch(stream, "ErrorOPf")
    launch(stream, "EasyOPf", 1, (buf,))


def test_stop_mode_sync_returns_507035(stream, buf):
    _stop_stream_with_fault(stream, buf)
    assert acl.rt.synchronize_stream(stream) == acl.ACL_ERROR_RT_VECTOR_CORE_EXCEPTION


def test_stop_mode_skips_later_tasks(stream, buf):
    _stop_stream_with_fault(stream, buf)
    acl.rt.synchronize_stream(stream)
    assert read(buf, 1)[0] == 1


def test_stop_mode_error_is_sticky(stream, buf):
    _stop_stream_with_fault(stream, buf)
    acl.rt.synchronize_stream(stream)
    assert acl.rt.synchronize_stream(stream) == acl.ACL_ERROR_RT_VECTOR_CORE_EXCEPTION


def test_stop_mode_error_is_sticky_for_other_streams_of_the_context(stream, buf):
    other, _ = acl.rt.create_stream()
    _stop_stream_with_fault(stream, buf)
    acl.rt.synchronize_stream(stream)
    assert acl.rt.synchronize_stream(other) == acl.ACL_ERROR_RT_VECTOR_CORE_EXCEPTION
    assert acl.rt.synchronize_stream(None) == acl.ACL_ERROR_RT_VECTOR_CORE_EXCEPTION


def test_stop_mode_error_is_sticky_for_a_new_stream(stream, buf):
    _stop_stream_with_fault(stream, buf)
    acl.rt.synchronize_stream(stream)
    new, _ = acl.rt.create_stream()
    assert acl.rt.synchronize_stream(new) == acl.ACL_ERROR_RT_VECTOR_CORE_EXCEPTION


def test_stop_mode_launch_after_fault_returns_sticky_code(stream, buf):
    _stop_stream_with_fault(stream, buf)
    acl.rt.synchronize_stream(stream)
    assert launch(stream, "EasyOPf", 1, (buf,)) == acl.ACL_ERROR_RT_VECTOR_CORE_EXCEPTION


def test_stop_mode_synchronize_device_returns_sticky_code(stream, buf):
    _stop_stream_with_fault(stream, buf)
    acl.rt.synchronize_stream(stream)
    assert acl.rt.synchronize_device() == acl.ACL_ERROR_RT_VECTOR_CORE_EXCEPTION


def test_stop_mode_does_not_affect_other_contexts(stream, buf):
    _stop_stream_with_fault(stream, buf)
    acl.rt.synchronize_stream(stream)
    acl.rt.create_context(0)
    s, _ = acl.rt.create_stream()
    assert launch(s, "EasyOPf", 1, (buf,)) == acl.ACL_SUCCESS
    assert acl.rt.synchronize_stream(s) == acl.ACL_SUCCESS


def test_stop_mode_synchronous_memcpy_still_works(stream, buf):
    _stop_stream_with_fault(stream, buf)
    acl.rt.synchronize_stream(stream)
    assert read(buf, 1)[0] == 1                   # read() asserts the memcpy returned 0


def test_stop_mode_on_one_stream_switches_the_whole_context(stream, buf):
    other, _ = acl.rt.create_stream()
    acl.rt.set_stream_failure_mode(stream, acl.ACL_STOP_ON_FAILURE)
    launch(other, "ErrorOPf")
    launch(other, "EasyOPf", 1, (buf,))
    assert acl.rt.synchronize_stream(other) == acl.ACL_ERROR_RT_VECTOR_CORE_EXCEPTION
    assert read(buf, 1)[0] == 0
    assert acl.rt.synchronize_stream(stream) == acl.ACL_ERROR_RT_VECTOR_CORE_EXCEPTION


def test_set_stream_failure_mode_device_use_only_is_checked_before_the_context(dev0):
    s, _ = acl.rt.create_stream_with_config(0, acl.ACL_STREAM_DEVICE_USE_ONLY)
    assert in_fresh_thread(acl.rt.set_stream_failure_mode, s, acl.ACL_STOP_ON_FAILURE) == \
        acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT


def test_stop_mode_record_event_returns_sticky_code(stream, buf):
    _stop_stream_with_fault(stream, buf)
    acl.rt.synchronize_stream(stream)
    ev, _ = acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC)
    assert acl.rt.record_event(ev, stream) == acl.ACL_ERROR_RT_VECTOR_CORE_EXCEPTION


def test_stop_mode_memcpy_async_returns_sticky_code(stream, buf):
    _stop_stream_with_fault(stream, buf)
    acl.rt.synchronize_stream(stream)
    host, _ = acl.rt.malloc_host(64)
    assert acl.rt.memcpy_async(host, 64, buf, 64, acl.ACL_MEMCPY_DEVICE_TO_HOST, stream) == \
        acl.ACL_ERROR_RT_VECTOR_CORE_EXCEPTION


def test_unreported_fault_of_a_destroyed_stream_does_not_reach_a_new_stream(stream):
    launch(stream, "ErrorOPf")
    acl.rt.destroy_stream(stream)                  # runs the task; its fault is never reported
    new, _ = acl.rt.create_stream()
    assert acl.rt.synchronize_stream(new) == acl.ACL_SUCCESS


def test_other_stream_of_a_stop_context_keeps_continue_as_its_own_mode(stream):
    other, _ = acl.rt.create_stream()
    acl.rt.set_stream_failure_mode(stream, acl.ACL_STOP_ON_FAILURE)
    assert acl.rt.set_stream_failure_mode(other, acl.ACL_CONTINUE_ON_FAILURE) == acl.ACL_SUCCESS


def test_new_stream_of_a_stop_context_keeps_continue_as_its_own_mode(stream):
    acl.rt.set_stream_failure_mode(stream, acl.ACL_STOP_ON_FAILURE)
    new, _ = acl.rt.create_stream()
    assert acl.rt.set_stream_failure_mode(new, acl.ACL_CONTINUE_ON_FAILURE) == acl.ACL_SUCCESS


def test_new_stream_of_a_stop_context_skips_tasks_after_a_fault(stream, buf):
    acl.rt.set_stream_failure_mode(stream, acl.ACL_STOP_ON_FAILURE)
    new, _ = acl.rt.create_stream()
    launch(new, "ErrorOPf")
    launch(new, "EasyOPf", 1, (buf,))
    assert acl.rt.synchronize_stream(new) == acl.ACL_ERROR_RT_VECTOR_CORE_EXCEPTION
    assert read(buf, 1)[0] == 0
