"""aclGetRecentErrMsg (``acl.get_recent_err_msg()``): the last failure's text on this thread,
cleared when read; the capture linter's fix and the deadlock wait-for chain reach it."""
from __future__ import annotations

from npusim import acl
from npusim import errors as E

from helpers.acl import in_fresh_thread, launch
from helpers.capture import begin, new_stream

OK = acl.ACL_SUCCESS


def test_nothing_failed_means_none(dev0):
    assert acl.get_recent_err_msg() is None
    s, _ = acl.rt.create_stream()
    assert acl.rt.synchronize_stream(s) == OK
    assert acl.get_recent_err_msg() is None


def test_a_failure_names_the_call_and_the_code_and_reading_clears_it(dev0):
    assert acl.rt.destroy_stream(None) == E.ACL_ERROR_INVALID_PARAM
    msg = acl.get_recent_err_msg()
    assert "acl.rt.destroy_stream" in msg and "100000" in msg and "ACL_ERROR_INVALID_PARAM" in msg
    assert acl.get_recent_err_msg() is None


def test_a_later_success_keeps_the_last_failure(dev0):
    assert acl.rt.malloc(0)[1] != OK
    s, _ = acl.rt.create_stream()
    assert "acl.rt.malloc" in acl.get_recent_err_msg()


def test_an_argument_refused_at_the_boundary_is_explained(dev0):
    assert acl.rt.malloc(8.5)[1] != OK
    assert "acl.rt.malloc" in acl.get_recent_err_msg()


def test_the_capture_linter_fix_and_line_reach_it(dev0):
    s = new_stream()
    begin(s)
    assert acl.rt.synchronize_stream(s) == E.ACL_ERROR_RT_STREAM_CAPTURED
    msg = acl.get_recent_err_msg()
    assert "107027" in msg and "fix:" in msg and "test_recent_err_msg.py" in msg


def test_the_deadlock_chain_reaches_it(dev0, buf):
    a, b = new_stream(), new_stream()
    e1, _ = acl.rt.create_event()
    e2, _ = acl.rt.create_event()
    assert acl.rt.record_event(e1, a) == OK
    assert acl.rt.reset_event(e1, a) == OK
    assert acl.rt.stream_wait_event(a, e1) == OK            # a waits for a record never queued
    assert launch(a, "EasyOPf", 1, [buf]) == OK
    ret = acl.rt.synchronize_stream(a)
    assert ret == E.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    msg = acl.get_recent_err_msg()
    assert "deadlock" in msg and "wait-for chain" in msg


def test_per_thread(dev0):
    assert acl.rt.destroy_stream(None) != OK
    assert in_fresh_thread(acl.get_recent_err_msg) is None
    assert acl.get_recent_err_msg() is not None


def test_task_update_count_mismatch_is_explained_in_both_apis():
    import numpy as np
    import npusim
    dev = npusim.Device("Ascend910B")
    s, u = dev.stream(), dev.stream()
    q = dev.malloc(64).fill(0)
    with npusim.graph(stream=s):
        npusim.graph_task_group_begin(s)
        s.launch("EasyOPf", 1, (q,))
        handle = npusim.graph_task_group_end(s)
    npusim.graph_task_update_begin(u, handle)
    try:
        npusim.graph_task_update_end(u)                    # no launch between begin and end
    except npusim.AclError as e:
        assert e.code == E.ACL_ERROR_RT_INTERNAL_ERROR
        assert "no kernel was launched" in str(e) and "none of the 1 task(s)" in str(e)
    else:
        raise AssertionError("update end with no launch must fail")
    npusim.graph_task_update_begin(u, handle)
    u.launch("EasyOPf", 1, (q,))
    try:
        u.launch("EasyOPf", 1, (q,))                       # one more than the group holds
    except npusim.AclError as e:
        assert "expected 1 launch(es), got 2" in str(e)
    assert int(q.read(np.uint32, 1)[0]) == 0


def test_pageable_copy_during_capture_says_use_malloc_host(dev0):
    import numpy as np
    s = new_stream()
    host = np.zeros(16, np.uint8)
    dst, _ = acl.rt.malloc(16)
    begin(s)
    ret = acl.rt.memcpy_async(dst, 16, acl.util.numpy_to_ptr(host), 16,
                              acl.ACL_MEMCPY_HOST_TO_DEVICE, s)
    assert ret == E.ACL_ERROR_RT_PARAM_INVALID
    assert "aclrtMallocHost" in acl.get_recent_err_msg()
