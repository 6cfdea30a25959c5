"""Chapters 06 / 07 / 11-09 beyond the first round: stream and event queries, stream attributes,
value write / wait (eager and captured), the default-stream handle."""
from __future__ import annotations

import numpy as np
import pytest

import npusim
from npusim import acl
from npusim import errors as E

from helpers.acl import in_fresh_thread, launch, read, write
from helpers.capture import begin, end, model, new_buf, new_stream, run

OK = acl.ACL_SUCCESS


# ---- streams ----
def test_stream_queries_report_what_the_stream_was_created_with(dev0):
    s, _ = acl.rt.create_stream_with_config(3, acl.ACL_STREAM_FAST_LAUNCH | acl.ACL_STREAM_FAST_SYNC)
    sid, ret = acl.rt.stream_get_id(s)
    assert ret == OK and isinstance(sid, int)
    other, _ = acl.rt.create_stream()
    assert acl.rt.stream_get_id(other)[0] != sid
    assert acl.rt.stream_get_priority(s) == (3, OK)
    assert acl.rt.stream_get_flags(s) == (acl.ACL_STREAM_FAST_LAUNCH | acl.ACL_STREAM_FAST_SYNC, OK)
    assert acl.rt.stream_get_flags(other) == (0, OK)
    # NULL: the default stream
    dflt, ret = acl.rt.ctx_get_current_default_stream()
    assert ret == OK and dflt
    assert acl.rt.stream_get_id(None) == acl.rt.stream_get_id(dflt)
    assert acl.rt.stream_get_priority(None) == (0, OK)


def test_stream_queries_codes(dev0):
    assert acl.rt.stream_get_id(0x7777_0001)[1] == E.ACL_ERROR_RT_INVALID_HANDLE
    assert in_fresh_thread(acl.rt.stream_get_id, None)[1] == E.ACL_ERROR_RT_CONTEXT_NULL
    assert in_fresh_thread(acl.rt.get_stream_available_num)[1] == E.ACL_ERROR_RT_CONTEXT_NULL
    assert in_fresh_thread(acl.rt.ctx_get_current_default_stream)[1] == E.ACL_ERROR_RT_CONTEXT_NULL


def test_available_streams_count_down_and_back(dev0):
    n0, ret = acl.rt.get_stream_available_num()
    assert ret == OK and n0 > 0
    s, _ = acl.rt.create_stream()
    assert acl.rt.get_stream_available_num() == (n0 - 1, OK)
    assert acl.rt.destroy_stream(s) == OK
    assert acl.rt.get_stream_available_num() == (n0, OK)


def test_the_default_stream_handle_launches_and_cannot_be_destroyed(dev0, buf):
    dflt, _ = acl.rt.ctx_get_current_default_stream()
    assert launch(dflt, "EasyOPf", 4, [buf]) == OK
    assert acl.rt.synchronize_stream(dflt) == OK
    assert read(buf, 4).tolist() == [1, 1, 1, 1]
    assert acl.rt.destroy_stream(dflt) == E.ACL_ERROR_RT_PARAM_INVALID
    assert launch(None, "EasyOPf", 4, [buf]) == OK          # still there
    assert acl.rt.synchronize_stream(None) == OK


def test_overflow_switch_and_attributes(dev0):
    s, _ = acl.rt.create_stream()
    assert acl.rt.get_stream_overflow_switch(s) == (0, OK)
    assert acl.rt.set_stream_overflow_switch(s, 1) == OK
    assert acl.rt.get_stream_overflow_switch(s) == (1, OK)
    assert acl.rt.set_stream_overflow_switch(s, 2) == E.ACL_ERROR_INVALID_PARAM
    assert acl.rt.get_stream_attribute(s, acl.ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK) == (1, OK)
    assert acl.rt.set_stream_attribute(s, acl.ACL_STREAM_ATTR_USER_CUSTOM_TAG, 77) == OK
    assert acl.rt.get_stream_attribute(s, acl.ACL_STREAM_ATTR_USER_CUSTOM_TAG) == (77, OK)
    assert acl.rt.set_stream_attribute(s, acl.ACL_STREAM_ATTR_PRIORITY, 5) == OK
    assert acl.rt.stream_get_priority(s) == (5, OK)
    assert acl.rt.set_stream_attribute(s, acl.ACL_STREAM_ATTR_FAILURE_MODE,
                                       acl.ACL_STOP_ON_FAILURE) == OK
    assert acl.rt.get_stream_attribute(s, acl.ACL_STREAM_ATTR_FAILURE_MODE) == \
        (acl.ACL_STOP_ON_FAILURE, OK)
    assert acl.rt.set_stream_attribute(s, 99, 0) == E.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.get_stream_attribute(s, 0)[1] == E.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.set_stream_attribute(s, acl.ACL_STREAM_ATTR_USER_CUSTOM_TAG, None) == \
        E.ACL_ERROR_RT_PARAM_INVALID


# ---- events ----
def test_event_ids_timestamps_and_available_count(dev0, buf):
    n0, ret = acl.rt.get_event_avail_num()
    assert ret == OK and n0 > 0
    s, _ = acl.rt.create_stream()
    ev, _ = acl.rt.create_event_with_flag(acl.ACL_EVENT_TIME_LINE)
    assert acl.rt.get_event_avail_num() == (n0 - 1, OK)
    eid, ret = acl.rt.get_event_id(ev)
    assert ret == OK and eid >= 0
    other, _ = acl.rt.create_event()
    assert acl.rt.get_event_id(other)[0] != eid
    assert launch(s, "LongOPf", 1, [buf]) == OK
    assert acl.rt.record_event(ev, s) == OK
    assert acl.rt.event_get_timestamp(ev)[1] == E.ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID  # not yet
    assert acl.rt.synchronize_stream(s) == OK
    us, ret = acl.rt.event_get_timestamp(ev)
    assert ret == OK and us * 1000 >= 50_000_000          # after LongOPf's 50 ms
    assert acl.rt.destroy_event(ev) == OK
    assert acl.rt.get_event_id(ev)[1] != OK


def test_event_wait_status_follows_the_wait_tasks(dev0, buf):
    a, b = new_stream(), new_stream()
    ev, _ = acl.rt.create_event()
    assert acl.rt.query_event_wait_status(ev) == (acl.ACL_EVENT_WAIT_STATUS_COMPLETE, OK)
    assert launch(a, "LongOPf", 1, [buf]) == OK
    assert acl.rt.record_event(ev, a) == OK
    assert acl.rt.stream_wait_event(b, ev) == OK
    assert acl.rt.query_event_wait_status(ev) == (acl.ACL_EVENT_WAIT_STATUS_NOT_READY, OK)
    assert acl.rt.synchronize_stream(b) == OK
    assert acl.rt.query_event_wait_status(ev) == (acl.ACL_EVENT_WAIT_STATUS_COMPLETE, OK)
    ex, _ = acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC)
    assert acl.rt.query_event_wait_status(ex)[1] == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert acl.rt.query_event_wait_status(None)[1] == E.ACL_ERROR_INVALID_PARAM


def test_wait_with_timeout_orders_like_a_wait(dev0, buf):
    a, b = new_stream(), new_stream()
    ev, _ = acl.rt.create_event()
    assert launch(a, "LongOPf", 1, [buf]) == OK
    assert acl.rt.record_event(ev, a) == OK
    assert acl.rt.stream_wait_event_with_timeout(b, ev, -1) == E.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.stream_wait_event_with_timeout(b, ev, 5) == OK
    assert launch(b, "EasyOPf", 1, [buf]) == OK
    ts, _ = acl.rt.create_event_with_flag(acl.ACL_EVENT_TIME_LINE)
    assert acl.rt.record_event(ts, b) == OK
    assert acl.rt.synchronize_stream(b) == OK
    assert acl.rt.event_get_timestamp(ts)[0] * 1000 >= 50_000_000
    assert acl.rt.set_op_wait_timeout(30) == OK


# ---- value write / wait (chapter 11-09) ----
def test_value_write_then_wait_across_streams(dev0, buf):
    a, b = new_stream(), new_stream()
    word = new_buf(8)
    write(word, np.zeros(1, np.uint64))
    assert acl.rt.value_wait(word, 7, acl.ACL_STREAM_WAIT_VALUE_EQ, b) == OK
    assert launch(b, "EasyOPf", 1, [buf]) == OK
    assert acl.rt.stream_query(b)[0] == acl.ACL_STREAM_STATUS_NOT_READY   # parked on the value
    assert launch(a, "LongOPf", 1, [new_buf()]) == OK
    assert acl.rt.value_write(word, 7, 0, a) == OK
    assert acl.rt.synchronize_stream(b) == OK
    assert read(word, 1, np.uint64).tolist() == [7]
    assert read(buf, 1).tolist() == [1]


@pytest.mark.parametrize("flag,cur,value,passes", [
    (0, 10, 9, True), (0, 9, 10, False), (0, 0, 2 ** 64 - 1, True),   # GEQ: (int64)(cur - v) >= 0
    (1, 5, 5, True), (1, 5, 6, False),
    (2, 0b0110, 0b0100, True), (2, 0b0010, 0b0100, False),
    (3, 0, 0, True), (3, 2 ** 64 - 1, 0, False), (3, 0xF0, 0x0F, True)])
def test_value_wait_comparisons(dev0, buf, flag, cur, value, passes):
    s = new_stream()
    word = new_buf(8)
    write(word, np.array([cur], np.uint64))
    assert acl.rt.value_wait(word, value, flag, s) == OK
    assert launch(s, "EasyOPf", 1, [buf]) == OK
    if passes:
        assert acl.rt.synchronize_stream(s) == OK
        assert read(buf, 1).tolist() == [1]
    else:
        assert acl.rt.stream_query(s)[0] == acl.ACL_STREAM_STATUS_NOT_READY
        assert read(buf, 1).tolist() == [0]


def test_value_task_codes(dev0):
    s = new_stream()
    word = new_buf(8)
    host, _ = acl.rt.malloc_host(8)
    assert acl.rt.value_write(0, 1, 0, s) == E.ACL_ERROR_INVALID_PARAM
    assert acl.rt.value_write(word, 1, 1, s) == E.ACL_ERROR_RT_PARAM_INVALID       # flag reserved
    assert acl.rt.value_wait(word, 1, 4, s) == E.ACL_ERROR_RT_PARAM_INVALID        # no such flag
    assert acl.rt.value_write(host, 1, 0, s) == E.ACL_ERROR_RT_PARAM_INVALID       # not device
    assert acl.rt.value_write(word, 1, 0, 0x7777_0001) != OK
    assert in_fresh_thread(acl.rt.value_write, word, 1, 0, None) == E.ACL_ERROR_RT_CONTEXT_NULL


def test_value_tasks_are_refused_without_the_chip_feature():
    npusim.configure(profile="Ascend310P")
    assert acl.init() == OK and acl.rt.set_device(0) == OK
    word, _ = acl.rt.malloc(8)
    assert acl.rt.value_write(word, 1, 0, None) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert acl.rt.value_wait(word, 1, 0, None) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT


def test_value_tasks_are_captured_and_replayed(dev0, buf):
    s, exe = new_stream(), new_stream()
    word = new_buf(8)
    mh = begin(s)
    assert acl.rt.value_wait(word, 2, acl.ACL_STREAM_WAIT_VALUE_GEQ, s) == OK
    assert launch(s, "EasyOPf", 1, [buf]) == OK
    assert acl.rt.value_write(word, 0, 0, s) == OK
    end(s)
    types = [acl.mdl.ri_task_get_type(t)[0]
             for t in acl.mdl.ri_get_tasks_by_stream(acl.mdl.ri_get_streams(mh)[0][-1])[0]]
    assert acl.ACL_MODEL_RI_TASK_VALUE_WAIT in types and acl.ACL_MODEL_RI_TASK_VALUE_WRITE in types
    write(word, np.array([3], np.uint64))
    run(mh, exe)
    assert read(buf, 1).tolist() == [1]
    assert read(word, 1, np.uint64).tolist() == [0]        # the graph's write ran after


# ---- allocation variants and memory info (chapters 11-01, 11-02) ----
def test_allocation_variants_and_mem_info(dev0):
    free0, total = acl.rt.get_mem_info(acl.ACL_HBM_MEM)[:2]
    assert 0 < free0 <= total
    ptrs = []
    for make in (acl.rt.malloc_align32, acl.rt.malloc_cached):
        p, ret = make(100, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        assert ret == OK and p % 32 == 0
        ptrs.append(p)
    p, ret = acl.rt.malloc_with_cfg(100, acl.ACL_MEM_MALLOC_HUGE_FIRST, None)
    assert ret == OK
    ptrs.append(p)
    p, ret = acl.rt.malloc_for_task_scheduler(64, acl.ACL_MEM_MALLOC_HUGE_FIRST, None)
    assert ret == OK
    ptrs.append(p)
    assert acl.rt.get_mem_info(acl.ACL_HBM_MEM)[0] < free0
    for make in (acl.rt.malloc_align32, acl.rt.malloc_with_cfg):
        assert make(0, 0)[1] == E.ACL_ERROR_INVALID_PARAM
    s = new_stream()
    assert launch(s, "LongOPf", 1, [ptrs[0]]) == OK
    during = acl.rt.get_mem_info(acl.ACL_HBM_MEM)[0]
    assert acl.rt.free_with_dev_sync(ptrs[0]) == OK              # waits for LongOPf first
    for p in ptrs[1:]:
        assert acl.rt.free(p) == OK
    assert acl.rt.get_mem_info(acl.ACL_HBM_MEM)[0] > during   # (the stream's args ring stays)
    assert acl.rt.free_with_dev_sync(None) == E.ACL_ERROR_INVALID_PARAM
    h, ret = acl.rt.malloc_host_with_cfg(64, None)
    assert ret == OK
    assert acl.rt.free_host_with_dev_sync(h) == OK
    assert acl.rt.get_mem_info(acl.ACL_DDR_MEM)[:2] == (0, 0)
    assert acl.rt.get_mem_info(99)[-1] == E.ACL_ERROR_RT_PARAM_INVALID
    assert in_fresh_thread(acl.rt.get_mem_info, acl.ACL_HBM_MEM)[-1] == E.ACL_ERROR_RT_CONTEXT_NULL


# ---- aclrtMemcpy2d ----
def test_memcpy2d_copies_rows_between_pitches(dev0):
    src = np.arange(4 * 16, dtype=np.uint8).reshape(4, 16)       # 4 rows, pitch 16
    dev, _ = acl.rt.malloc(4 * 32)                               # pitch 32 on the device
    write(dev, np.zeros(4 * 32, np.uint8))
    assert acl.rt.memcpy2d(dev, 32, acl.util.numpy_to_ptr(src), 16, 10, 4,
                           acl.ACL_MEMCPY_HOST_TO_DEVICE) == OK
    got = read(dev, 4 * 32, np.uint8).reshape(4, 32)
    assert (got[:, :10] == src[:, :10]).all() and not got[:, 10:].any()
    back = np.zeros((4, 8), np.uint8)
    assert acl.rt.memcpy2d(acl.util.numpy_to_ptr(back), 8, dev, 32, 8, 4,
                           acl.ACL_MEMCPY_DEVICE_TO_HOST) == OK
    assert (back == src[:, :8]).all()


def test_memcpy2d_codes(dev0):
    a, _ = acl.rt.malloc(256)
    b, _ = acl.rt.malloc(256)
    host = np.zeros(256, np.uint8)
    h = acl.util.numpy_to_ptr(host)
    H2D = acl.ACL_MEMCPY_HOST_TO_DEVICE
    assert acl.rt.memcpy2d(a, 16, h, 16, 0, 4, H2D) == OK                 # nothing to copy
    assert acl.rt.memcpy2d(0, 16, h, 16, 8, 4, H2D) == E.ACL_ERROR_INVALID_PARAM
    assert acl.rt.memcpy2d(a, 16, h, 8, 9, 4, H2D) == E.ACL_ERROR_INVALID_PARAM   # width > spitch
    assert acl.rt.memcpy2d(a, 16, h, 16, 8, 4, 0) == E.ACL_ERROR_INVALID_PARAM    # H2H kind
    assert acl.rt.memcpy2d(a, 16, b, 16, 8, 4, acl.ACL_MEMCPY_DEVICE_TO_DEVICE) == \
        E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert acl.rt.memcpy2d(a, 16, b, 16, 8, 4, acl.ACL_MEMCPY_DEFAULT) == \
        E.ACL_ERROR_RT_PARAM_INVALID                                         # really D2D
    assert acl.rt.memcpy2d(a, 64, h, 64, 8, 8, H2D) == E.ACL_ERROR_RT_PARAM_INVALID  # past a
    assert acl.rt.memcpy2d(a, 16, h, 16, 8, 6_000_000, H2D) == E.ACL_ERROR_RT_PARAM_INVALID


def test_memset_d32(dev0):
    p, _ = acl.rt.malloc(64)
    write(p, np.zeros(16, np.uint32))
    assert acl.rt.memset_d32(p, 64, 0xDEADBEEF, 10) == OK
    assert read(p, 16).tolist() == [0xDEADBEEF] * 10 + [0] * 6
    h, _ = acl.rt.malloc_host(16)
    assert acl.rt.memset_d32(h, 16, 7, 4) == OK
    assert acl.rt.memset_d32(p, 64, 1, 0) == OK
    assert acl.rt.memset_d32(p, 36, 1, 10) == E.ACL_ERROR_INVALID_PARAM          # 40 > 36
    assert acl.rt.memset_d32(p + 2, 60, 1, 4) == E.ACL_ERROR_INVALID_PARAM        # unaligned
    assert acl.rt.memset_d32(0, 64, 1, 4) == E.ACL_ERROR_INVALID_PARAM
    pageable = np.zeros(4, np.uint32)
    assert acl.rt.memset_d32(acl.util.numpy_to_ptr(pageable), 16, 1, 4) == \
        E.ACL_ERROR_INVALID_PARAM                                             # not acl memory
    assert acl.rt.memset_d32(p, 1 << 20, 1, 1 << 16) == E.ACL_ERROR_RT_PARAM_INVALID   # past p


# ---- notifies (chapter 08) ----
def test_notify_id_and_batch_reset(dev0, buf):
    a, b = new_stream(), new_stream()
    n1, _ = acl.rt.create_notify(0)
    n2, _ = acl.rt.create_notify(0)
    i1, ret = acl.rt.get_notify_id(n1)
    assert ret == OK and acl.rt.get_notify_id(n2)[0] != i1
    assert acl.rt.get_notify_id(None)[1] == E.ACL_ERROR_INVALID_PARAM
    assert acl.rt.record_notify(n1, a) == OK
    assert acl.rt.synchronize_stream(a) == OK
    assert acl.rt.notify_batch_reset([n1, n2], 2) == OK      # n1's record is gone
    assert acl.rt.synchronize_stream(None) == OK
    assert acl.rt.wait_and_reset_notify(n1, b) == OK
    assert launch(b, "EasyOPf", 1, [buf]) == OK
    assert acl.rt.stream_query(b)[0] == acl.ACL_STREAM_STATUS_NOT_READY   # waits for a record
    assert acl.rt.record_notify(n1, a) == OK
    assert acl.rt.synchronize_stream(b) == OK
    assert acl.rt.notify_batch_reset(None, 1) == E.ACL_ERROR_INVALID_PARAM
    assert acl.rt.notify_batch_reset([n1], 0) == E.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.notify_batch_reset([n1, None], 2) == E.ACL_ERROR_RT_PARAM_INVALID


# ---- op execute timeouts (chapter 12) ----
def test_op_timeouts_round_up_to_whole_steps(dev0):
    step, ret = acl.rt.get_op_time_out_interval()
    assert ret == OK and step == 4_294_967                        # 2**32 ns
    assert acl.rt.get_op_execute_timeout() == (1_090_922, OK)    # the 1091 s default
    assert acl.rt.set_op_execute_time_out_v2(50) == (step, OK)   # one step at least
    assert acl.rt.get_op_execute_timeout() == (-(-step // 1000), OK)
    assert acl.rt.set_op_execute_time_out_v2(10 * step + 1) == (11 * step, OK)
    assert acl.rt.set_op_execute_time_out_v2(0) == (254 * step, OK)      # 0: the maximum
    assert acl.rt.set_op_execute_time_out_v2(10 ** 12) == (254 * step, OK)
    assert acl.rt.set_op_execute_time_out(30) == OK
    assert acl.rt.get_op_execute_timeout()[0] == -(-7 * step // 1000)    # 30 s -> 7 steps
    assert acl.rt.set_op_execute_time_out_with_ms(5000) == OK
    assert acl.rt.get_op_execute_timeout()[0] == -(-2 * step // 1000)
    assert in_fresh_thread(acl.rt.get_op_time_out_interval)[1] == E.ACL_ERROR_RT_CONTEXT_NULL


def test_check_mem_type(dev0):
    a, _ = acl.rt.malloc(64)
    b, _ = acl.rt.malloc(64)
    h, _ = acl.rt.malloc_host(64)
    DEV = acl.ACL_RT_MEM_TYPE_DEV
    assert acl.rt.check_mem_type([a, b], 2, DEV, 0) == (1, OK)
    assert acl.rt.check_mem_type([a, h], 2, DEV, 0) == (0, OK)        # pinned host memory
    assert acl.rt.check_mem_type([a, h], 1, DEV, 0) == (1, OK)        # only the first is read
    assert acl.rt.check_mem_type([a], 1, acl.ACL_RT_MEM_TYPE_DVPP, 0) == (0, OK)
    assert acl.rt.check_mem_type([a], 1, DEV | acl.ACL_RT_MEM_TYPE_DVPP, 0) == (1, OK)
    assert acl.rt.check_mem_type(None, 1, DEV, 0)[1] == E.ACL_ERROR_INVALID_PARAM
    assert acl.rt.check_mem_type([a], 0, DEV, 0)[1] == E.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.check_mem_type([a], 2, DEV, 0)[1] == E.ACL_ERROR_RT_PARAM_INVALID   # past it
    assert acl.rt.check_mem_type([a], 1, DEV, 1)[1] == E.ACL_ERROR_RT_PARAM_INVALID   # reserve
    # the acl header's RSVD bit (0x10) is not in the rt layer's mask (0x20): refused, as there
    assert acl.rt.check_mem_type([a], 1, acl.ACL_RT_MEM_TYPE_RSVD, 0)[1] == \
        E.ACL_ERROR_RT_PARAM_INVALID
    assert in_fresh_thread(acl.rt.check_mem_type, [a], 1, DEV, 0)[1] == E.ACL_ERROR_RT_CONTEXT_NULL
