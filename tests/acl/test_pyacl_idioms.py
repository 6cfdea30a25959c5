"""pyACL programs' own idioms behave as on the hardware (docs/pyacl.md; docs/fidelity.md rows
200-204): ``bytes_to_ptr`` hands out the object's own, writable buffer; ``acl.media.dvpp_malloc``
/ ``dvpp_free`` allocate with DVPP's rules; a report thread that never set a context serves
its callbacks; ``acl.util`` shows only pyACL's helpers."""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from npusim import acl
from npusim.runtime.api_dvpp import dvpp_size

H2D, D2H, H2H = (acl.ACL_MEMCPY_HOST_TO_DEVICE, acl.ACL_MEMCPY_DEVICE_TO_HOST,
                 acl.ACL_MEMCPY_HOST_TO_HOST)


# ---- bytes_to_ptr: the bytes object's own buffer ----
def test_the_samples_read_back_lands_in_the_tobytes_buffer(dev0):
    data = np.arange(16, dtype=np.float32) + 0.5
    dev, _ = acl.rt.malloc(data.nbytes, 0)
    assert acl.rt.memcpy(dev, data.nbytes, acl.util.bytes_to_ptr(data.tobytes()), data.nbytes,
                         H2D) == 0
    buf = np.zeros(16, np.float32).tobytes()
    ptr = acl.util.bytes_to_ptr(buf)
    assert acl.rt.memcpy(ptr, data.nbytes, dev, data.nbytes, D2H) == 0
    assert np.frombuffer(buf, np.float32).tolist() == data.tolist()
    assert acl.util.ptr_to_bytes(ptr, data.nbytes) == data.tobytes()
    assert acl.rt.free(dev) == 0


def test_an_async_copy_and_a_memset_land_in_bytes_too(dev0, stream):
    buf = bytes(64)
    ptr = acl.util.bytes_to_ptr(buf)
    dev, _ = acl.rt.malloc(64, 0)
    assert acl.rt.memset(dev, 64, 9, 64) == 0
    assert acl.rt.memcpy_async(ptr, 64, dev, 64, D2H, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert buf == b"\x09" * 64
    assert acl.rt.memset(ptr, 64, 1, 32) == 0
    assert buf == b"\x01" * 32 + b"\x09" * 32
    assert acl.rt.free(dev) == 0


def test_ptr_to_numpy_of_a_bytes_pointer_is_a_writable_view_of_the_object(dev0):
    buf = bytes(16)
    view = acl.util.ptr_to_numpy(acl.util.bytes_to_ptr(buf), (4,), np.int32)
    view[:] = [1, 2, 3, 4]
    assert np.frombuffer(buf, np.int32).tolist() == [1, 2, 3, 4]


def test_the_same_object_gives_the_same_address_and_another_object_another(dev0):
    a, b = bytes(32), bytes(32)
    assert acl.util.bytes_to_ptr(a) == acl.util.bytes_to_ptr(a)
    assert acl.util.bytes_to_ptr(a) != acl.util.bytes_to_ptr(b)


def test_a_memoryview_of_bytes_is_the_bytes_buffer_at_its_offset(dev0):
    buf = bytes(64)
    view = memoryview(buf)[16:48]
    ptr = acl.util.bytes_to_ptr(view)
    dev, _ = acl.rt.malloc(32, 0)
    assert acl.rt.memset(dev, 32, 5, 32) == 0
    assert acl.rt.memcpy(ptr, 32, dev, 32, D2H) == 0
    assert buf == bytes(16) + b"\x05" * 32 + bytes(16)
    assert acl.rt.free(dev) == 0


def test_a_memoryview_of_a_bytearray_is_writable_and_a_strided_one_is_refused(dev0):
    arr = bytearray(8)
    ptr = acl.util.bytes_to_ptr(memoryview(arr))
    assert acl.rt.memcpy(ptr, 8, acl.util.bytes_to_ptr(b"abcdefgh"), 8, H2H) == 0
    assert bytes(arr) == b"abcdefgh"
    with pytest.raises(ValueError):
        acl.util.bytes_to_ptr(memoryview(bytes(8))[::2])


def test_a_copy_past_the_end_of_a_bytes_object_is_refused(dev0):
    buf = bytes(16)
    ptr = acl.util.bytes_to_ptr(buf)
    dev, _ = acl.rt.malloc(64, 0)
    assert acl.rt.memcpy(ptr, 64, dev, 64, D2H) == acl.ACL_ERROR_RT_PARAM_INVALID
    assert buf == bytes(16)
    assert acl.rt.free(dev) == 0


def test_a_one_byte_bytes_object_stays_read_only_and_python_s_constant_survives(dev0):
    one = bytes([0])                     # CPython's shared b"\x00"
    ptr = acl.util.bytes_to_ptr(one)
    dev, _ = acl.rt.malloc(32, 0)
    assert acl.rt.memset(dev, 32, 7, 32) == 0
    assert acl.rt.memcpy(ptr, 1, dev, 1, D2H) == acl.ACL_ERROR_RT_PARAM_INVALID
    assert "read-only" in acl.get_recent_err_msg()
    assert b"\x00" == bytes(1) and one == b"\x00"
    assert acl.rt.free(dev) == 0


def test_a_bytes_pointer_is_forgotten_once_the_object_is_gone(dev0):
    buf = bytes(range(32))
    ptr = acl.util.bytes_to_ptr(buf)
    del buf
    acl.util.bytes_to_ptr(b"another object")      # each call drops the dead ones
    with pytest.raises(ValueError):
        acl.util.ptr_to_bytes(ptr, 32)


@pytest.mark.parametrize("bad", ["text", 12, None, 1.5, np.zeros(4), [1, 2]])
def test_bytes_to_ptr_of_anything_else_raises_value_error_as_pyacl_does(bad):
    with pytest.raises(ValueError):
        acl.util.bytes_to_ptr(bad)


# ---- acl.media.dvpp_malloc / dvpp_free ----
@pytest.mark.parametrize("size, allocated", [(0, 32), (1, 64), (32, 64), (33, 96), (100, 160),
                                             (4096, 4128)])
def test_dvpp_sizes_round_up_to_32_and_add_32(size, allocated):
    assert dvpp_size(size) == allocated


def test_dvpp_malloc_gives_128_byte_aligned_device_memory_of_the_documented_size(dev0):
    import npusim
    before = npusim.census().devices[0]["device allocations"]
    ptrs = []
    for size in (1, 100, 1000, 4097):
        ptr, ret = acl.media.dvpp_malloc(size)
        assert ret == 0 and ptr % 128 == 0
        ptrs.append(ptr)
        # the whole documented allocation is usable device memory
        assert acl.rt.memset(ptr, dvpp_size(size), 1, dvpp_size(size)) == 0
    assert npusim.census().devices[0]["device allocations"] == before + 4
    for ptr in ptrs:
        assert acl.media.dvpp_free(ptr) == 0
    assert npusim.census().devices[0]["device allocations"] == before


def test_dvpp_memory_round_trips_data_like_any_device_memory(dev0, stream):
    data = np.arange(64, dtype=np.uint8).tobytes()
    ptr, ret = acl.media.dvpp_malloc(len(data))
    assert ret == 0
    out = bytes(64)
    assert acl.rt.memcpy_async(ptr, 64, acl.util.bytes_to_ptr(data), 64, H2D, stream) == 0
    assert acl.rt.memcpy_async(acl.util.bytes_to_ptr(out), 64, ptr, 64, D2H, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert out == data
    assert acl.media.dvpp_free(ptr) == 0


def test_dvpp_malloc_without_a_context_is_107002(acl):
    results = []
    t = threading.Thread(target=lambda: results.append(acl.media.dvpp_malloc(64)))
    t.start()
    t.join()
    assert results == [(None, acl.ACL_ERROR_RT_CONTEXT_NULL)]


@pytest.mark.parametrize("bad", [-1, None, 1.5, "64", 2 ** 64, np.nan])
def test_dvpp_malloc_of_a_hostile_size_is_100000(dev0, bad):
    assert acl.media.dvpp_malloc(bad) == (None, acl.ACL_ERROR_INVALID_PARAM)


def test_dvpp_malloc_of_more_than_the_device_has_is_207001(dev0):
    assert acl.media.dvpp_malloc(1 << 60) == (None, acl.ACL_ERROR_RT_MEMORY_ALLOCATION)
    assert "ALIGN_UP" in acl.get_recent_err_msg()


def test_dvpp_free_codes(dev0):
    ptr, _ = acl.media.dvpp_malloc(64)
    host, _ = acl.rt.malloc_host(64)
    assert acl.media.dvpp_free(0) == acl.ACL_ERROR_INVALID_PARAM
    assert acl.media.dvpp_free(None) == acl.ACL_ERROR_INVALID_PARAM
    assert acl.media.dvpp_free(ptr + 32) == acl.ACL_ERROR_RT_PARAM_INVALID     # inside a block
    assert acl.media.dvpp_free(host) == acl.ACL_ERROR_RT_PARAM_INVALID         # host memory
    assert acl.media.dvpp_free(ptr) == 0
    assert acl.media.dvpp_free(ptr) == acl.ACL_ERROR_RT_PARAM_INVALID          # twice
    assert acl.rt.free_host(host) == 0


def test_acl_rt_free_frees_dvpp_memory_and_dvpp_free_frees_acl_rt_malloc_memory(dev0):
    a, _ = acl.media.dvpp_malloc(64)
    b, _ = acl.rt.malloc(64, 0)
    assert acl.rt.free(a) == 0
    assert acl.media.dvpp_free(b) == 0


def test_the_rest_of_acl_media_is_still_refused_with_its_reason(dev0):
    assert acl.media.dvpp_create_channel(1) == 207000
    assert "media / DVPP" in acl.get_recent_err_msg()
    assert acl.media.vdec_create_channel(1) == 207000


# ---- callbacks served by a report thread without a context ----
def _report_thread(stop):
    def loop(args_list):
        while not stop.is_set():
            acl.rt.process_report(args_list[0])
    tid, ret = acl.util.start_thread(loop, [50])
    assert ret == 0
    return tid


def test_a_report_thread_without_a_context_serves_blocking_callbacks(dev0, stream):
    stop, ran = threading.Event(), []
    tid = _report_thread(stop)
    assert acl.rt.subscribe_report(tid, stream) == 0
    for i in range(4):
        assert acl.rt.launch_callback(ran.append, i, acl.ACL_CALLBACK_BLOCK, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert ran == [0, 1, 2, 3]
    assert acl.rt.unsubscribe_report(tid, stream) == 0
    stop.set()
    assert acl.util.stop_thread(tid) == 0


def test_a_blocking_callback_holds_a_copy_until_the_thread_ran_it(dev0, stream):
    stop = threading.Event()
    tid = _report_thread(stop)
    assert acl.rt.subscribe_report(tid, stream) == 0
    src = bytes(16)
    dst = bytes(16)
    dev, _ = acl.rt.malloc(16, 0)
    src_ptr = acl.util.bytes_to_ptr(src)

    def fill(_):
        acl.util.ptr_to_numpy(src_ptr, (16,), np.uint8)[:] = 42
    assert acl.rt.launch_callback(fill, None, acl.ACL_CALLBACK_BLOCK, stream) == 0
    assert acl.rt.memcpy_async(dev, 16, src_ptr, 16, H2D, stream) == 0
    assert acl.rt.memcpy_async(acl.util.bytes_to_ptr(dst), 16, dev, 16, D2H, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert dst == b"\x2a" * 16
    assert acl.rt.unsubscribe_report(tid, stream) == 0
    stop.set()
    assert acl.util.stop_thread(tid) == 0
    assert acl.rt.free(dev) == 0


def test_a_report_thread_that_has_exited_is_a_deadlock_reported_at_once(dev0, stream):
    tid, _ = acl.util.start_thread(lambda args: None, [])
    assert acl.util.stop_thread(tid) == 0
    assert acl.rt.subscribe_report(tid, stream) == 0
    assert acl.rt.launch_callback(lambda d: None, None, acl.ACL_CALLBACK_BLOCK, stream) == 0
    assert acl.rt.synchronize_stream(stream) == acl.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    assert "deadlock" in acl.get_recent_err_msg()
    assert acl.rt.unsubscribe_report(tid, stream) == 0


def test_a_thread_id_no_thread_has_is_a_deadlock_reported_at_once(dev0, stream):
    ids = {t.ident for t in threading.enumerate()}
    tid = next(i for i in range(12345, 10 ** 6) if i not in ids)
    assert acl.rt.subscribe_report(tid, stream) == 0
    assert acl.rt.launch_callback(lambda d: None, None, acl.ACL_CALLBACK_BLOCK, stream) == 0
    assert acl.rt.synchronize_stream(stream) == acl.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    assert acl.rt.unsubscribe_report(tid, stream) == 0


def test_a_live_report_thread_that_stops_serving_is_a_deadlock_after_the_stall_wait(
        dev0, stream, monkeypatch):
    from npusim.runtime.runtime import RT
    monkeypatch.setattr(RT, "stall_wait_s", 0.05)
    release = threading.Event()
    tid, _ = acl.util.start_thread(lambda args: release.wait(), [])   # alive, never reports
    assert acl.rt.subscribe_report(tid, stream) == 0
    assert acl.rt.launch_callback(lambda d: None, None, acl.ACL_CALLBACK_BLOCK, stream) == 0
    assert acl.rt.synchronize_stream(stream) == acl.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    assert acl.rt.unsubscribe_report(tid, stream) == 0
    release.set()
    assert acl.util.stop_thread(tid) == 0


def test_a_report_thread_serves_a_graph_s_blocking_callback_without_a_context(dev0, stream):
    stop, ran = threading.Event(), []
    tid = _report_thread(stop)
    assert acl.rt.subscribe_report(tid, stream) == 0
    assert acl.mdl.ri_capture_begin(stream, acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED) == 0
    assert acl.rt.launch_callback(ran.append, "replay", acl.ACL_CALLBACK_BLOCK, stream) == 0
    model, ret = acl.mdl.ri_capture_end(stream)
    assert ret == 0
    for _ in range(2):
        assert acl.mdl.ri_execute_async(model, stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0
    assert ran == ["replay", "replay"]
    assert acl.mdl.ri_destroy(model) == 0
    assert acl.rt.unsubscribe_report(tid, stream) == 0
    stop.set()
    assert acl.util.stop_thread(tid) == 0


# ---- acl.util: pyACL's helpers only ----
PYACL_UTIL = {"numpy_to_ptr", "ptr_to_numpy", "numpy_contiguous_to_ptr", "bytes_to_ptr",
              "ptr_to_bytes", "start_thread", "stop_thread"}


def test_acl_util_exposes_exactly_pyacl_s_documented_helpers():
    # identifiers only: where pytest imported npusim through its assertion rewriter (the
    # installed plugin's package, as in a checkout installed with pip -e), the module also holds
    # the rewriter's "@py_builtins" / "@pytest_ar", which no program can spell
    public = {n for n in dir(acl.util) if n.isidentifier() and not n.startswith("_")}
    assert public == PYACL_UTIL
    assert set(acl.util.__all__) == PYACL_UTIL
    assert all(callable(getattr(acl.util, n)) for n in PYACL_UTIL)


def test_time_is_not_spent_waiting_for_a_served_callback(dev0, stream):
    # behaviour, not timing: the wait returns because the thread ran the callback (the stall
    # wait of a second would otherwise have ended it as a deadlock, 507046)
    stop, ran = threading.Event(), []
    tid = _report_thread(stop)
    assert acl.rt.subscribe_report(tid, stream) == 0
    assert acl.rt.launch_callback(lambda d: (time.sleep(0.01), ran.append(d)), 1,
                                  acl.ACL_CALLBACK_BLOCK, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0 and ran == [1]
    assert acl.rt.unsubscribe_report(tid, stream) == 0
    stop.set()
    assert acl.util.stop_thread(tid) == 0


@pytest.mark.parametrize("bad", [-1, 1.5, "0x10", 2 ** 64, np.nan, [1], object(), b"\x00"])
def test_dvpp_free_of_a_hostile_pointer_is_a_code(dev0, bad):
    assert acl.media.dvpp_free(bad) in (acl.ACL_ERROR_INVALID_PARAM,
                                        acl.ACL_ERROR_RT_PARAM_INVALID)


def test_a_memoryview_pointer_lives_as_long_as_the_object_it_views(dev0):
    arr = bytearray(range(16))
    ptr = acl.util.bytes_to_ptr(memoryview(arr))     # the view itself is dropped at once
    acl.util.bytes_to_ptr(b"a sweep")
    assert acl.util.ptr_to_bytes(ptr, 16) == bytes(range(16))
    del arr
    acl.util.bytes_to_ptr(b"another sweep")
    with pytest.raises(ValueError):
        acl.util.ptr_to_bytes(ptr, 16)


def test_dvpp_malloc_is_an_injection_point_and_traced(dev0):
    import npusim
    from npusim.runtime.runtime import RT
    with npusim.faults.inject(acl.ACL_ERROR_RT_MEMORY_ALLOCATION, "acldvppMalloc"):
        assert acl.media.dvpp_malloc(64) == (None, acl.ACL_ERROR_RT_MEMORY_ALLOCATION)
    npusim.configure(trace=True)
    ptr, ret = acl.media.dvpp_malloc(64)
    assert ret == 0 and acl.media.dvpp_free(ptr) == 0
    assert [n for n, _, _ in RT.host_trace[-2:]] == ["acldvpp.dvpp_malloc", "acldvpp.dvpp_free"]
