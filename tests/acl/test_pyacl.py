"""pyACL's spellings, argument conventions, helpers, callbacks and the drop-in (docs/pyacl.md)."""
from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

import npusim
from npusim import acl
from npusim.acl import pyacl

H2D, D2H = acl.ACL_MEMCPY_HOST_TO_DEVICE, acl.ACL_MEMCPY_DEVICE_TO_HOST


# ---- names ----
def test_pyacl_context_spellings_are_the_same_function_as_the_c_derived_ones():
    assert acl.rt.set_context is acl.rt.set_current_context
    assert acl.rt.get_context is acl.rt.get_current_context


def test_set_context_and_get_context_round_trip(dev0):
    ctx, ret = acl.rt.create_context(0)
    assert ret == 0
    assert acl.rt.set_context(ctx) == 0
    assert acl.rt.get_context() == (ctx, 0)


def test_set_context_of_a_hostile_value_returns_a_code():
    assert acl.rt.set_context("ctx") == acl.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.set_context(0) == acl.ACL_ERROR_INVALID_PARAM


def test_run_mode_is_host():
    assert acl.rt.get_run_mode() == (acl.ACL_HOST, 0)


def test_version_is_the_headers_version():
    assert acl.get_version() == (1, 17, 0, 0)


def test_soc_name_follows_the_profile():
    npusim.configure(profile="Ascend950")
    assert acl.get_soc_name() == "Ascend950PR_9599"


# ---- query_event_wait_status ----
def test_event_wait_status_is_not_ready_until_the_wait_ran(dev0, stream):
    s2, _ = acl.rt.create_stream()
    ev, _ = acl.rt.create_event()
    gate, _ = acl.rt.create_event_with_flag(acl.ACL_EVENT_SYNC)
    assert acl.rt.stream_wait_event(stream, gate) == 0       # holds `stream` until recorded
    assert acl.rt.record_event(ev, s2) == 0
    assert acl.rt.stream_wait_event(stream, ev) == 0
    assert acl.rt.query_event_wait_status(ev) == (acl.ACL_EVENT_WAIT_STATUS_NOT_READY, 0)
    assert acl.rt.record_event(gate, s2) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert acl.rt.query_event_wait_status(ev) == (acl.ACL_EVENT_WAIT_STATUS_COMPLETE, 0)


def test_event_wait_status_refuses_ex_events(dev0):
    ev, _ = acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC)
    assert acl.rt.query_event_wait_status(ev) == (None, acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT)


# ---- acl.util ----
def test_ptr_to_numpy_takes_numpy_type_numbers_and_dtypes(dev0):
    ptr, _ = acl.rt.malloc_host(64)
    a = acl.util.ptr_to_numpy(ptr, (16,), 5)                 # NPY_INT32
    b = acl.util.ptr_to_numpy(ptr, (16,), np.int32)
    assert a.dtype == np.int32 and b.dtype == np.int32
    assert acl.util.ptr_to_numpy(ptr, (32,), 23).dtype == np.float16      # NPY_HALF
    assert acl.util.ptr_to_numpy(ptr, (16,), 11).dtype == np.float32      # NPY_FLOAT
    a[:] = 7
    assert b.tolist() == [7] * 16


def test_ptr_to_numpy_refuses_an_unknown_type_number(dev0):
    ptr, _ = acl.rt.malloc_host(64)
    with pytest.raises(ValueError):
        acl.util.ptr_to_numpy(ptr, (16,), 1234)


def test_bytes_to_ptr_points_into_the_bytes_object_and_copies_from_it(dev0):
    data = np.arange(16, dtype=np.int32).tobytes()
    ptr = acl.util.bytes_to_ptr(data)
    assert acl.util.bytes_to_ptr(data) == ptr
    dev, _ = acl.rt.malloc(64, 0)
    assert acl.rt.memcpy(dev, 64, ptr, 64, H2D) == 0
    out, _ = acl.rt.malloc_host(64)
    assert acl.rt.memcpy(out, 64, dev, 64, D2H) == 0
    assert acl.util.ptr_to_bytes(out, 64) == data
    assert acl.util.ptr_to_numpy(ptr, (16,), np.int32).tolist() == list(range(16))


def test_bytes_to_ptr_of_a_bytearray_is_writable_memory(dev0):
    buf = bytearray(64)
    ptr = acl.util.bytes_to_ptr(buf)
    dev, _ = acl.rt.malloc(64, 0)
    assert acl.rt.memset(dev, 64, 3, 64) == 0
    assert acl.rt.memcpy(ptr, 64, dev, 64, D2H) == 0
    assert bytes(buf) == b"\x03" * 64


def test_a_copy_into_a_one_byte_bytes_object_is_refused(dev0):
    # CPython shares one-byte bytes objects (docs/fidelity.md row 200); longer ones are written
    # (tests/acl/test_pyacl_idioms.py)
    ptr = acl.util.bytes_to_ptr(bytes([7]))
    dev, _ = acl.rt.malloc(64, 0)
    assert acl.rt.memcpy(ptr, 1, dev, 1, D2H) == acl.ACL_ERROR_RT_PARAM_INVALID


def test_bytes_to_ptr_lets_go_of_a_dead_bytes_object(dev0):
    data = bytes(range(32))
    ptr = acl.util.bytes_to_ptr(data)
    del data
    acl.util.bytes_to_ptr(b"other")                  # each call drops dead registrations
    with pytest.raises(ValueError):
        acl.util.ptr_to_bytes(ptr, 32)


def test_bytes_to_ptr_refuses_other_types():
    with pytest.raises(ValueError):
        acl.util.bytes_to_ptr("text")


def test_start_thread_runs_the_function_with_the_list_and_returns_its_ident():
    seen = []

    def body(args_list):
        seen.append((args_list, threading.get_ident()))

    tid, ret = acl.util.start_thread(body, [1, "a"])
    assert ret == 0
    assert acl.util.stop_thread(tid) == 0
    assert seen == [([1, "a"], tid)]


def test_stop_thread_of_an_unknown_id_and_start_thread_of_a_non_function_return_codes():
    assert acl.util.stop_thread(12345) == acl.ACL_ERROR_INVALID_PARAM
    assert acl.util.start_thread(42, []) == (None, acl.ACL_ERROR_INVALID_PARAM)


# ---- callbacks on a report thread ----
class ReportThread:
    """pyACL's report-thread pattern: set the context, loop on process_report."""

    def __init__(self, ctx):
        self.ctx, self.running, self.codes = ctx, True, []
        self.tid, ret = acl.util.start_thread(self.loop, [ctx])
        assert ret == 0

    def loop(self, args_list):
        assert acl.rt.set_context(args_list[0]) == 0
        while self.running:
            self.codes.append(acl.rt.process_report(20))

    def stop(self):
        self.running = False
        assert acl.util.stop_thread(self.tid) == 0


@pytest.fixture
def ctx_stream():
    assert acl.init() == 0 and acl.rt.set_device(0) == 0
    ctx, _ = acl.rt.create_context(0)
    s, _ = acl.rt.create_stream()
    return ctx, s


def test_callbacks_run_on_the_report_thread_with_their_user_data_list(ctx_stream):
    ctx, s = ctx_stream
    rt = ReportThread(ctx)
    got = []
    assert acl.rt.subscribe_report(rt.tid, s) == 0
    for i, block in enumerate((acl.ACL_CALLBACK_NO_BLOCK, acl.ACL_CALLBACK_BLOCK)):
        assert acl.rt.launch_callback(lambda d: got.append((d, threading.get_ident())),
                                      [i, "x"], block, s) == 0
    assert acl.rt.synchronize_stream(s) == 0
    assert acl.rt.unsubscribe_report(rt.tid, s) == 0
    rt.stop()
    assert got == [([0, "x"], rt.tid), ([1, "x"], rt.tid)]


def test_a_blocking_callback_holds_its_stream_until_the_report_thread_ran_it(ctx_stream):
    ctx, s = ctx_stream
    me = threading.get_ident()
    assert acl.rt.subscribe_report(me, s) == 0
    assert acl.rt.launch_callback(lambda d: None, [], acl.ACL_CALLBACK_BLOCK, s) == 0
    host, _ = acl.rt.malloc_host(8)
    dev, _ = acl.rt.malloc(8, 0)
    assert acl.rt.memset_async(dev, 8, 5, 8, s) == 0
    assert acl.rt.stream_query(s) == (acl.ACL_STREAM_STATUS_NOT_READY, 0)
    assert acl.rt.process_report(100) == 0              # this thread is the report thread
    assert acl.rt.synchronize_stream(s) == 0
    assert acl.rt.memcpy(host, 8, dev, 8, D2H) == 0
    assert acl.util.ptr_to_bytes(host, 8) == b"\x05" * 8


def test_a_callback_on_an_unsubscribed_stream_is_refused(ctx_stream):
    _, s = ctx_stream
    assert acl.rt.launch_callback(print, [], acl.ACL_CALLBACK_BLOCK, s) == \
        acl.ACL_ERROR_RT_STREAM_NO_CB_REG


def test_launch_callback_checks_block_type_then_function(ctx_stream):
    _, s = ctx_stream
    assert acl.rt.subscribe_report(threading.get_ident(), s) == 0
    assert acl.rt.launch_callback(print, [], 2, s) == acl.ACL_ERROR_INVALID_PARAM
    assert acl.rt.launch_callback(None, [], 1, s) == acl.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.launch_callback(print, [], 1.0, s) == acl.ACL_ERROR_INVALID_PARAM


def test_a_stream_subscribed_twice_is_refused(ctx_stream):
    _, s = ctx_stream
    assert acl.rt.subscribe_report(1, s) == 0
    assert acl.rt.subscribe_report(2, s) == acl.ACL_ERROR_RT_STREAM_SUBSCRIBE


def test_unsubscribe_checks_the_stream_then_the_thread(ctx_stream):
    _, s = ctx_stream
    assert acl.rt.unsubscribe_report(1, s) == acl.ACL_ERROR_RT_STREAM_SUBSCRIBE
    assert acl.rt.subscribe_report(1, s) == 0
    assert acl.rt.unsubscribe_report(2, s) == acl.ACL_ERROR_RT_THREAD_SUBSCRIBE
    assert acl.rt.unsubscribe_report(1, s) == 0


def test_process_report_codes(ctx_stream):
    _, s = ctx_stream
    assert acl.rt.process_report(0) == acl.ACL_ERROR_INVALID_PARAM
    assert acl.rt.process_report(-2) == acl.ACL_ERROR_INVALID_PARAM
    assert acl.rt.process_report(10) == acl.ACL_ERROR_RT_THREAD_SUBSCRIBE
    assert acl.rt.subscribe_report(threading.get_ident(), s) == 0
    assert acl.rt.process_report(10) == acl.ACL_ERROR_RT_REPORT_TIMEOUT


def test_unsubscribing_releases_a_blocking_callback_never_processed(ctx_stream):
    _, s = ctx_stream
    assert acl.rt.subscribe_report(7, s) == 0
    assert acl.rt.launch_callback(print, [], acl.ACL_CALLBACK_BLOCK, s) == 0
    assert acl.rt.unsubscribe_report(7, s) == 0
    assert acl.rt.synchronize_stream(s) == 0


def test_a_callback_that_raises_is_reported_and_the_stream_goes_on(ctx_stream, capsys):
    _, s = ctx_stream
    assert acl.rt.subscribe_report(threading.get_ident(), s) == 0

    def bad(_):
        raise RuntimeError("boom")
    assert acl.rt.launch_callback(bad, [], acl.ACL_CALLBACK_BLOCK, s) == 0
    assert acl.rt.process_report(100) == 0
    assert acl.rt.synchronize_stream(s) == 0
    assert "boom" in capsys.readouterr().err


# ---- refused areas ----
@pytest.mark.parametrize("fn, expect", [
    (lambda: acl.mdl.load_from_file("model.om"), (None, 207000)),
    (lambda: acl.mdl.execute(1, 2, 3), 207000),
    (lambda: acl.mdl.query_size("model.om"), (None, None, 207000)),
    (lambda: acl.mdl.create_desc(), None),
    (lambda: acl.media.dvpp_create_channel(1), 207000),
    (lambda: acl.media.any_new_dvpp_function(1, 2), 207000),
    (lambda: acl.prof.init("/tmp"), 207000),
    (lambda: acl.op.execute_v2(), 207000),
])
def test_unsimulated_areas_return_207000_in_pyacl_s_return_shape(fn, expect):
    assert fn() == expect


def test_a_refusal_names_its_area_once_on_stderr(capsys):
    # a name no other test refuses: "once" is per process, whatever ran before on this worker
    fn = pyacl.refusal("acl.mdl.unload_once_test", 0, "offline-model inference from .om files")
    assert fn(1) == fn(1) == 207000
    err = capsys.readouterr().err
    assert err.count("acl.mdl.unload_once_test is not simulated (offline-model inference") == 1


def test_a_whole_unsimulated_area_answers_any_name_and_other_modules_do_not(capsys):
    assert acl.prof.a_name_only_this_test_uses() == 207000
    assert "acl.prof.a_name_only_this_test_uses is not simulated (profiling)" in \
        capsys.readouterr().err
    with pytest.raises(AttributeError):
        acl.rt.no_such_function
    with pytest.raises(AttributeError):
        acl.mdl.no_such_function


# ---- the drop-in ----
def test_install_as_acl_makes_import_acl_the_facade():
    saved = {k: sys.modules.pop(k) for k in list(sys.modules) if k == "acl" or
             k.startswith("acl.")}
    try:
        assert npusim.install_as_acl() is acl
        import acl as imported
        import acl.rt as imported_rt
        assert imported is acl and imported_rt is acl.rt
        npusim.uninstall_as_acl()
        assert "acl" not in sys.modules
    finally:
        npusim.uninstall_as_acl()
        sys.modules.update(saved)


def test_install_as_acl_leaves_another_acl_alone_unless_forced():
    other = type(sys)("acl")
    saved = sys.modules.get("acl")
    sys.modules["acl"] = other
    try:
        with pytest.raises(RuntimeError):
            npusim.install_as_acl()
        assert sys.modules["acl"] is other
        assert npusim.install_as_acl(force=True) is acl
        npusim.uninstall_as_acl()
        assert sys.modules["acl"] is other
    finally:
        if saved is None:
            sys.modules.pop("acl", None)
        else:
            sys.modules["acl"] = saved


def test_pyacl_aliases_keep_one_injection_point():
    npusim.inject(507000, "aclrtSetCurrentContext")
    try:
        assert acl.rt.set_context(1) == 507000
    finally:
        npusim.clear_injections()
    assert pyacl.ALIASES[("rt", "set_context")] == "set_current_context"
