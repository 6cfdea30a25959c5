"""aclmdlRICaptureBegin / CaptureToModelRIBegin / CaptureEnd / CaptureGetInfo: every check of
spec/aclgraph.md §1.1–1.4 in its order, the capture status rules of §3.1/§3.5, and the operations
refused during capture (§3.4)."""
from __future__ import annotations

import numpy as np
import pytest

from npusim import acl
from npusim.runtime import model as M

from helpers.capture import (ACTIVE, GLOBAL, INVALIDATED, NONE, OK, RELAXED, THREAD_LOCAL, begin,
                          chip, current_ctx, default_stream_handle, end, join, join_back, launch,
                          lk, make_sub_model, model, new_buf, new_event, new_stream,
                          no_acl_graph, on_thread, record, run, status_of, u32, wait)  # noqa: F401

E = acl


# ---------------------------------------------------------------- §1.1 aclmdlRICaptureBegin
def test_begin_null_stream_is_invalid_param(dev0):
    assert acl.mdl.ri_capture_begin(None, GLOBAL) == E.ACL_ERROR_INVALID_PARAM
    assert acl.mdl.ri_capture_begin(0, GLOBAL) == E.ACL_ERROR_INVALID_PARAM


def test_capture_family_without_acl_graph_feature_is_207000(no_acl_graph):
    s = new_stream()
    nf = E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert acl.mdl.ri_capture_begin(s, GLOBAL) == nf
    assert acl.mdl.ri_capture_begin(s, 7) == nf                  # chip check comes before mode
    assert acl.mdl.ri_capture_begin(0xDEAD, GLOBAL) == nf         # ... and before the handle
    assert acl.mdl.ri_capture_end(s)[1] == nf
    assert acl.mdl.ri_capture_get_info(s)[2] == nf
    assert acl.mdl.ri_capture_thread_exchange_mode(GLOBAL)[1] == nf
    assert acl.mdl.ri_capture_to_model_ri_begin(s, make_sub_model(), GLOBAL) == nf
    # the NULL checks of the ACL layer still come first
    assert acl.mdl.ri_capture_begin(None, GLOBAL) == E.ACL_ERROR_INVALID_PARAM


def test_begin_invalid_handle_107017(dev0):
    s = new_stream()
    e = new_event()
    assert acl.mdl.ri_capture_begin(e, GLOBAL) == E.ACL_ERROR_RT_INVALID_HANDLE   # wrong kind
    assert acl.rt.destroy_stream(s) == OK
    assert acl.mdl.ri_capture_begin(s, GLOBAL) == E.ACL_ERROR_RT_INVALID_HANDLE   # destroyed
    assert acl.mdl.ri_capture_begin(s, 99) == E.ACL_ERROR_RT_INVALID_HANDLE       # before mode


@pytest.mark.parametrize("mode", [3, -1, 100])
def test_begin_bad_mode_107000(dev0, mode):
    s = new_stream()
    assert acl.mdl.ri_capture_begin(s, mode) == E.ACL_ERROR_RT_PARAM_INVALID
    assert status_of(s) == NONE


@pytest.mark.parametrize("flag", [acl.ACL_STREAM_DEVICE_USE_ONLY, acl.ACL_STREAM_CPU_SCHEDULE])
def test_begin_unsupported_stream_flags_507000(dev0, flag):
    s = new_stream(flag)
    assert acl.mdl.ri_capture_begin(s, GLOBAL) == E.ACL_ERROR_RT_INTERNAL_ERROR
    assert acl.mdl.ri_capture_begin(s, 3) == E.ACL_ERROR_RT_PARAM_INVALID    # mode first
    assert status_of(s) == NONE


def test_persistent_stream_captures_on_v100_not_on_v200(chip):
    chip("Ascend910B")
    s = new_stream(acl.ACL_STREAM_PERSISTENT)
    assert acl.mdl.ri_capture_begin(s, GLOBAL) == OK
    end(s)
    chip("Ascend950")                       # v200 also rejects PERSISTENT (§1.1 step 4)
    s = new_stream(acl.ACL_STREAM_PERSISTENT)
    assert acl.mdl.ri_capture_begin(s, GLOBAL) == E.ACL_ERROR_RT_INTERNAL_ERROR


def test_begin_without_current_context_107002(dev0):
    s = new_stream()
    assert on_thread(acl.mdl.ri_capture_begin, s, GLOBAL) == E.ACL_ERROR_RT_CONTEXT_NULL
    assert status_of(s) == NONE


def test_begin_stream_of_other_context_107003(dev0):
    s = new_stream()
    ctx2, ret = acl.rt.create_context(0)             # becomes current
    assert ret == OK
    assert acl.mdl.ri_capture_begin(s, GLOBAL) == E.ACL_ERROR_RT_STREAM_CONTEXT
    s2 = new_stream()                                 # a stream of ctx2 captures fine
    begin(s2)
    end(s2)


def test_begin_model_stream_107005(dev0):
    s = new_stream()
    begin(s)
    mh = end(s)
    streams, ret = acl.mdl.ri_get_streams(mh)
    assert ret == OK and len(streams) == 1
    assert acl.mdl.ri_capture_begin(streams[0], GLOBAL) == E.ACL_ERROR_RT_STREAM_MODEL


def test_begin_default_stream_207000(dev0):
    d = default_stream_handle()
    assert acl.mdl.ri_capture_begin(d, GLOBAL) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT


def test_begin_on_capturing_stream_107027(dev0):
    s = new_stream()
    mh = begin(s)
    assert acl.mdl.ri_capture_begin(s, GLOBAL) == E.ACL_ERROR_RT_STREAM_CAPTURED
    assert acl.mdl.ri_capture_begin(s, RELAXED) == E.ACL_ERROR_RT_STREAM_CAPTURED
    side = new_stream()
    join(s, side)                                     # a joined stream is capturing too
    assert acl.mdl.ri_capture_begin(side, GLOBAL) == E.ACL_ERROR_RT_STREAM_CAPTURED
    join_back(side, s)
    assert end(s) == mh                               # nothing changed by the refusals


def test_begin_on_invalidated_stream_107027(dev0):
    a, b = new_stream(), new_stream()
    begin(a)
    begin(b)
    e = new_event()
    record(e, a)
    assert acl.rt.record_event(e, b) == E.ACL_ERROR_STREAM_CAPTURE_CONFLICT   # models invalidated
    assert status_of(b) == ACTIVE                      # §13.8: the stream's status stays ACTIVE
    assert acl.mdl.ri_capture_begin(b, GLOBAL) == E.ACL_ERROR_RT_STREAM_CAPTURED


def test_begin_success_state(dev0):
    s = new_stream()
    assert acl.mdl.ri_capture_begin(s, THREAD_LOCAL) == OK
    status, mh, ret = acl.mdl.ri_capture_get_info(s)
    assert (status, ret) == (ACTIVE, OK) and mh
    m = model(mh)
    assert m.status == M.CAPTURE_ACTIVE and not m.sub
    (cs,) = m.streams
    assert cs.original and cs.head and cs.last_level and cs.user_stream is not None
    assert stream_obj_capture_mode(s) == THREAD_LOCAL
    end(s)


def stream_obj_capture_mode(s):
    from helpers.capture import stream_obj
    return stream_obj(s).capture.mode


def test_each_begin_makes_a_new_model(dev0):
    a, b = new_stream(), new_stream()
    ma, mb = begin(a), begin(b)
    assert ma != mb
    assert end(a) == ma and end(b) == mb
    mc = begin(a)
    assert mc not in (ma, mb)
    end(a)


# ---------------------------------------------------------------- §1.2 ToModelRIBegin
def test_to_model_ri_begin_null_args(dev0):
    s = new_stream()
    sub = make_sub_model()
    assert acl.mdl.ri_capture_to_model_ri_begin(None, sub, GLOBAL) == E.ACL_ERROR_INVALID_PARAM
    assert acl.mdl.ri_capture_to_model_ri_begin(s, None, GLOBAL) == E.ACL_ERROR_INVALID_PARAM


def test_to_model_ri_begin_bad_handles_107017(dev0):
    s = new_stream()
    e = new_event()
    assert acl.mdl.ri_capture_to_model_ri_begin(s, e, GLOBAL) == E.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.mdl.ri_capture_to_model_ri_begin(e, make_sub_model(), GLOBAL) == \
        E.ACL_ERROR_RT_INVALID_HANDLE


def test_to_model_ri_begin_root_model_107000(dev0):
    s = new_stream()
    mh = begin(s)
    s2 = new_stream()
    # a root model can never be captured into: capturing or finished
    assert acl.mdl.ri_capture_to_model_ri_begin(s2, mh, GLOBAL) == E.ACL_ERROR_RT_PARAM_INVALID
    end(s)
    assert acl.mdl.ri_capture_to_model_ri_begin(s2, mh, GLOBAL) == E.ACL_ERROR_RT_PARAM_INVALID


def test_to_model_ri_begin_captures_a_sub_model_exactly_once(dev0):
    s, s2 = new_stream(), new_stream()
    sub = make_sub_model()
    assert acl.mdl.ri_capture_to_model_ri_begin(s, sub, 3) == E.ACL_ERROR_RT_PARAM_INVALID
    assert acl.mdl.ri_capture_to_model_ri_begin(s, sub, GLOBAL) == OK
    assert acl.mdl.ri_capture_get_info(s)[:2] == (ACTIVE, sub)       # no new model
    assert model(sub).status == M.CAPTURE_ACTIVE
    # status != NONE -> 107026, checked before the stream's status (107027)
    assert acl.mdl.ri_capture_to_model_ri_begin(s, sub, GLOBAL) == E.ACL_ERROR_RT_MODEL_CAPTURED
    assert acl.mdl.ri_capture_to_model_ri_begin(s2, sub, GLOBAL) == \
        E.ACL_ERROR_RT_MODEL_CAPTURED
    assert end(s) == sub
    assert model(sub).status == M.READY
    assert acl.mdl.ri_capture_to_model_ri_begin(s2, sub, GLOBAL) == \
        E.ACL_ERROR_RT_MODEL_CAPTURED
    # the origin stream of another capture cannot be used either
    sub2 = make_sub_model()
    begin(s2)
    assert acl.mdl.ri_capture_to_model_ri_begin(s2, sub2, GLOBAL) == \
        E.ACL_ERROR_RT_STREAM_CAPTURED
    end(s2)


def test_sub_model_end_failure_leaves_it_ready_not_destroyed(dev0):
    s, side = new_stream(), new_stream()
    sub = make_sub_model()
    assert acl.mdl.ri_capture_to_model_ri_begin(s, sub, GLOBAL) == OK
    join(s, side)                                                 # never joined back
    assert acl.mdl.ri_capture_end(s) == (None, E.ACL_ERROR_RT_STREAM_UNJOINED)
    assert model(sub).status == M.READY                           # still a live handle
    assert status_of(s) == NONE and status_of(side) == NONE


def test_sub_model_refuses_model_apis_207000(dev0):
    s = new_stream()
    sub = make_sub_model()
    assert acl.mdl.ri_capture_to_model_ri_begin(s, sub, GLOBAL) == OK
    end(s)
    nf = E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert acl.mdl.ri_execute_async(sub, s) == nf
    assert acl.mdl.ri_destroy(sub) == nf
    assert acl.mdl.ri_get_streams(sub)[1] == nf
    assert acl.mdl.ri_update(sub) == nf


# ---------------------------------------------------------------- §1.3 aclmdlRICaptureEnd
def test_end_null_and_bad_handle(dev0):
    assert acl.mdl.ri_capture_end(None) == (None, E.ACL_ERROR_INVALID_PARAM)
    assert acl.mdl.ri_capture_end(new_event()) == (None, E.ACL_ERROR_RT_INVALID_HANDLE)


def test_end_unsupported_flags_507000_before_not_captured(dev0):
    s = new_stream(acl.ACL_STREAM_DEVICE_USE_ONLY)
    assert acl.mdl.ri_capture_end(s) == (None, E.ACL_ERROR_RT_INTERNAL_ERROR)


def test_end_context_checks(dev0):
    s = new_stream()
    mh = begin(s)
    assert on_thread(acl.mdl.ri_capture_end, s) == (None, E.ACL_ERROR_RT_CONTEXT_NULL)
    primary = current_ctx()
    _, ret = acl.rt.create_context(0)
    assert ret == OK
    assert acl.mdl.ri_capture_end(s) == (None, E.ACL_ERROR_RT_STREAM_CONTEXT)
    assert status_of(s) == ACTIVE                                # capture continues
    assert acl.rt.set_current_context(primary) == OK
    assert end(s) == mh


def test_end_model_stream_107005(dev0):
    s = new_stream()
    begin(s)
    mh = end(s)
    (cs,), _ = acl.mdl.ri_get_streams(mh)
    assert acl.mdl.ri_capture_end(cs) == (None, E.ACL_ERROR_RT_STREAM_MODEL)


def test_end_default_stream_207000(dev0):
    assert acl.mdl.ri_capture_end(default_stream_handle()) == \
        (None, E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT)


def test_end_not_capturing_107029(dev0):
    s = new_stream()
    assert acl.mdl.ri_capture_end(s) == (None, E.ACL_ERROR_RT_STREAM_NOT_CAPTURED)
    begin(s)
    end(s)
    assert acl.mdl.ri_capture_end(s) == (None, E.ACL_ERROR_RT_STREAM_NOT_CAPTURED)


def test_end_on_joined_or_added_stream_107036_changes_nothing(dev0):
    s, side, added = new_stream(), new_stream(), new_stream()
    mh = begin(s)
    join(s, side)
    assert acl.rt.stream_add_to_model(added, mh) == OK
    assert acl.mdl.ri_capture_end(side) == (None, E.ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED)
    assert acl.mdl.ri_capture_end(added) == (None, E.ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED)
    assert status_of(side) == ACTIVE and status_of(added) == ACTIVE
    assert model(mh).status == M.CAPTURE_ACTIVE
    join_back(side, s)
    assert end(s) == mh


def test_end_success_resets_every_participant(dev0):
    s, side, added = new_stream(), new_stream(), new_stream()
    x = new_buf()
    mh = begin(s)
    e = new_event()
    record(e, s)
    wait(side, e)
    assert acl.mdl.ri_capture_get_info(side)[:2] == (ACTIVE, mh)    # joined: the same model
    assert acl.rt.stream_add_to_model(added, mh) == OK
    assert acl.mdl.ri_capture_get_info(added)[:2] == (ACTIVE, mh)
    assert acl.rt.synchronize_event(e) == E.ACL_ERROR_RT_EVENT_CAPTURED
    lk(side, "EasyOPf", x)
    join_back(side, s)
    assert end(s) == mh
    m = model(mh)
    assert m.status == M.READY
    for h in (s, side, added):
        assert acl.mdl.ri_capture_get_info(h) == (NONE, None, OK)
    assert acl.rt.synchronize_event(e) == OK                       # event no longer bound
    # later tasks on the streams run eagerly
    lk(side, "EasyOPf", x)
    assert acl.rt.synchronize_stream(side) == OK
    assert u32(x)[0] == 1


def test_empty_capture_gives_a_runnable_model(dev0):
    s = new_stream()
    begin(s)
    mh = end(s)
    run(mh, s, times=2)
    assert acl.mdl.ri_destroy(mh) == OK


def test_end_of_invalidated_capture_507903_destroys_the_root(dev0):
    a, b = new_stream(), new_stream()
    x = new_buf()
    ma, mb = begin(a), begin(b)
    e = new_event()
    record(e, a)
    assert acl.rt.stream_wait_event(b, e) == E.ACL_ERROR_STREAM_CAPTURE_CONFLICT
    # tasks are still captured after invalidation (§3.5)
    n = model(mb).n_tasks()
    assert launch(b, "EasyOPf", 1, (x,)) == OK
    assert model(mb).n_tasks() == n + 1
    # both models are invalidated; both streams still report ACTIVE (§13.8)
    assert status_of(b) == ACTIVE and status_of(a) == ACTIVE
    assert model(ma).status == M.CAPTURE_INVALIDATED
    for s, mh in ((a, ma), (b, mb)):
        assert acl.mdl.ri_capture_end(s) == (None, E.ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED)
        assert status_of(s) == NONE
        assert acl.mdl.ri_destroy(mh) == E.ACL_ERROR_RT_INVALID_HANDLE      # destroyed


def test_end_failure_destroys_root_and_releases_streams(dev0):
    s, side = new_stream(), new_stream()
    x = new_buf()
    mh = begin(s)
    join(s, side)
    lk(side, "EasyOPf", x)
    assert acl.mdl.ri_capture_end(s) == (None, E.ACL_ERROR_RT_STREAM_UNJOINED)
    assert acl.mdl.ri_execute_async(mh, s) == E.ACL_ERROR_RT_INVALID_HANDLE
    assert status_of(side) == NONE
    begin(side)                                   # the side stream is free to capture again
    end(side)


# ---------------------------------------------------------------- §1.4 aclmdlRICaptureGetInfo
def test_get_info_checks(dev0):
    assert acl.mdl.ri_capture_get_info(None)[2] == E.ACL_ERROR_INVALID_PARAM
    assert acl.mdl.ri_capture_get_info(new_event())[2] == E.ACL_ERROR_RT_INVALID_HANDLE
    s = new_stream()
    assert acl.mdl.ri_capture_get_info(s) == (NONE, None, OK)


def test_get_info_needs_no_context(dev0):
    s = new_stream()
    mh = begin(s)
    assert on_thread(acl.mdl.ri_capture_get_info, s) == (ACTIVE, mh, OK)
    end(s)


# ---------------------------------------------------------------- §3.4 refused during capture
def test_sync_query_destroy_of_capturing_stream_107027(dev0):
    s, side = new_stream(), new_stream()
    mh = begin(s)
    join(s, side)
    for h in (s, side):
        assert acl.rt.synchronize_stream(h) == E.ACL_ERROR_RT_STREAM_CAPTURED
        assert acl.rt.synchronize_stream_with_timeout(h, 100) == E.ACL_ERROR_RT_STREAM_CAPTURED
        assert acl.rt.stream_query(h)[1] == E.ACL_ERROR_RT_STREAM_CAPTURED
        assert acl.rt.destroy_stream(h) == E.ACL_ERROR_RT_STREAM_CAPTURED
    assert acl.rt.synchronize_device() == E.ACL_ERROR_RT_STREAM_CAPTURED
    # none of these invalidated the capture
    assert status_of(s) == ACTIVE and model(mh).status == M.CAPTURE_ACTIVE
    join_back(side, s)
    end(s)
    assert acl.rt.synchronize_device() == OK
    assert acl.rt.destroy_stream(side) == OK


def test_device_sync_checks_only_the_current_context(dev0):
    s = new_stream()
    begin(s)
    primary = current_ctx()
    _, ret = acl.rt.create_context(0)
    assert ret == OK
    assert acl.rt.synchronize_device() == OK
    assert acl.rt.set_current_context(primary) == OK
    assert acl.rt.synchronize_device() == E.ACL_ERROR_RT_STREAM_CAPTURED
    end(s)


def test_event_sync_query_elapsed_of_captured_event_107028(dev0):
    s = new_stream()
    e0 = new_event(acl.ACL_EVENT_SYNC | acl.ACL_EVENT_TIME_LINE)
    e = new_event(acl.ACL_EVENT_SYNC | acl.ACL_EVENT_TIME_LINE)
    record(e0, s)                      # an ordinary record before the capture
    assert acl.rt.synchronize_stream(s) == OK
    begin(s)
    record(e, s)
    assert acl.rt.synchronize_event(e) == E.ACL_ERROR_RT_EVENT_CAPTURED
    assert acl.rt.query_event_status(e)[1] == E.ACL_ERROR_RT_EVENT_CAPTURED
    assert acl.rt.event_elapsed_time(e0, e)[1] == E.ACL_ERROR_RT_EVENT_CAPTURED
    # a record of a captured event on a non-capturing stream is an ordinary record (§4.2)
    other = new_stream()
    record(e, other)
    assert acl.rt.synchronize_event(e) == E.ACL_ERROR_RT_EVENT_CAPTURED
    assert status_of(other) == NONE
    end(s)
    assert acl.rt.synchronize_event(e) == OK
    assert acl.rt.query_event_status(e) == (acl.ACL_EVENT_RECORDED_STATUS_COMPLETE, OK)


def test_event_state_after_capture_is_the_state_before_it(dev0):
    s = new_stream()
    e = new_event()
    begin(s)
    record(e, s)                        # the capture never records the real event
    end(s)
    # never recorded outside: an Ex event before any record is COMPLETE, waits are no-ops
    assert acl.rt.query_event_status(e) == (acl.ACL_EVENT_RECORDED_STATUS_COMPLETE, OK)
    other = new_stream()
    wait(other, e)
    assert acl.rt.synchronize_stream(other) == OK


def test_pageable_async_copy_on_capturing_stream_107000(dev0):
    s = new_stream()
    x = new_buf()
    host = np.zeros(16, np.uint32)
    begin(s)
    ret = acl.rt.memcpy_async(x, 64, acl.util.numpy_to_ptr(host), 64,
                              acl.ACL_MEMCPY_HOST_TO_DEVICE, s)
    assert ret == E.ACL_ERROR_RT_PARAM_INVALID
    assert status_of(s) == ACTIVE
    end(s)


def test_pinned_async_copy_is_captured_and_rereads_host_memory_each_replay(dev0):
    s = new_stream()
    x = new_buf()
    h, ret = acl.rt.malloc_host(64)
    assert ret == OK
    view = acl.util.ptr_to_numpy(h, 16, np.uint32)
    view[:] = 5
    begin(s)
    assert acl.rt.memcpy_async(x, 64, h, 64, acl.ACL_MEMCPY_HOST_TO_DEVICE, s) == OK
    lk(s, "EasyOPf", x)
    mh = end(s)
    assert u32(x)[0] == 0                           # nothing ran during capture
    run(mh, s)
    assert u32(x)[0] == 6
    view[:] = 10                                    # the captured copy re-reads the host buffer
    run(mh, s)
    assert u32(x)[0] == 11


def test_launch_returns_zero_and_runs_nothing_while_capturing(dev0):
    s = new_stream()
    x = new_buf()
    begin(s)
    for _ in range(3):
        lk(s, "EasyOPf", x)
    mh = end(s)
    assert u32(x)[0] == 0
    assert model(mh).n_tasks() == 3
    run(mh, s)
    assert u32(x)[0] == 3


# ---------------------------------------------------------------- §1.3 step 6: sub-models
def test_end_with_an_uncaptured_sub_model_107045_destroys_the_root(dev0):
    """EndCapture fails with 107045 while a descendant sub-model is not READY (a created but
    never captured one included); the failure destroys the root (§1.3, §8.4)."""
    from npusim.runtime import cond as CD
    s, s2 = new_stream(), new_stream()
    mh = begin(s)
    ch, ret = CD.ri_cond_handle_create(mh, 1, 1)
    assert ret == OK
    subs, ret = CD.ri_add_cond_task(ch, 0, 2, s)          # IF with a then and an else model
    assert ret == OK and len(subs) == 2
    assert acl.mdl.ri_capture_to_model_ri_begin(s2, subs[0], GLOBAL) == OK
    # the sub-model capture itself is still open
    assert acl.mdl.ri_capture_end(s) == (None, E.ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING)
    assert acl.mdl.ri_destroy(mh) == E.ACL_ERROR_RT_INVALID_HANDLE
    assert status_of(s) == NONE


def test_end_after_every_sub_model_is_captured(dev0):
    from npusim.runtime import cond as CD
    s, s2 = new_stream(), new_stream()
    x = new_buf()
    mh = begin(s)
    ch, ret = CD.ri_cond_handle_create(mh, 1, 1)
    assert ret == OK
    subs, ret = CD.ri_add_cond_task(ch, 0, 2, s)
    assert ret == OK
    for sub, k in zip(subs, ("EasyOPf", "ShortOPf")):
        assert acl.mdl.ri_capture_to_model_ri_begin(s2, sub, GLOBAL) == OK
        lk(s2, k, x)
        assert acl.mdl.ri_capture_end(s2) == (sub, OK)
    assert end(s) == mh
    assert model(mh).status == M.READY and all(model(h).status == M.READY for h in subs)


def test_captured_launch_args_outlive_the_streams_args_ring(dev0):
    """A captured kernel re-reads its args at every replay, so they must not live in the
    stream's args ring, which eager launches reuse after rtsqDepth launches."""
    s = new_stream()
    x, y = new_buf(), new_buf()
    mh = begin(s)
    lk(s, "EasyOPf", x)
    end(s)
    for _ in range(2100):                       # wraps the stream's 2048-slot args ring
        lk(s, "EasyOPf", y)
    run(mh, s)
    assert u32(x)[0] == 1 and u32(y)[0] == 2100
