"""Cross-stream capture (spec/aclgraph.md §4, §9.1): joins through events, the join-back rule of
EndCapture (107025), conflicts between models (107032), isolation (107024), the default stream
(107031), which events work in capture, and the capture events' reset between replays."""
from __future__ import annotations

import pytest

from npusim import acl
from npusim.device import sqe as S
from npusim.runtime import model as M

from helpers.capture import (ACTIVE, INVALIDATED, NONE, OK, begin, end, join, join_back,
                          lk, model, new_buf, new_event, new_stream, record, run,
                          status_of, u32, wait)

E = acl
UNJOINED = E.ACL_ERROR_RT_STREAM_UNJOINED


def assert_end_fails(s, code, mh=None):
    assert acl.mdl.ri_capture_end(s) == (None, code)
    assert status_of(s) == NONE
    if mh is not None:                            # a failed EndCapture destroys the root model
        assert acl.mdl.ri_destroy(mh) == E.ACL_ERROR_RT_INVALID_HANDLE


# ---------------------------------------------------------------- joins and replay data
def test_fork_join_replay_order(dev0):
    """origin: x+=1 | side: y*=2 after the fork, y+=1 | origin: x*=2 after the join."""
    s, side = new_stream(), new_stream()
    x, y = new_buf(), new_buf()
    mh = begin(s)
    lk(s, "EasyOPf", x)
    e1, e2 = new_event(), new_event()
    record(e1, s)
    wait(side, e1)                                  # side joins the capture
    assert acl.mdl.ri_capture_get_info(side)[:2] == (ACTIVE, mh)
    lk(side, "EasyOPf", y)
    lk(side, "ShortOPf", y)
    record(e2, side)
    wait(s, e2)
    lk(s, "ShortOPf", x)
    assert end(s) == mh
    m = model(mh)
    assert len(m.streams) == 2
    origin, joined = m.streams
    assert origin.original and origin.head and not joined.original and joined.head
    run(mh, s, times=3)
    # x: ((0+1)*2+1)*2+1)*2 = 14, y: same recurrence
    assert u32(x)[0] == 14 and u32(y)[0] == 14


def test_transitive_join_returns_through_the_middle_stream(dev0):
    """The dev-guide figure: S3 depends on S2 which depends on the origin; S3 returns to S2,
    then S2 returns to the origin (the indirect join-back the guide allows)."""
    s, s2, s3 = new_stream(), new_stream(), new_stream()
    x = new_buf(16)
    mh = begin(s)
    lk(s, "EasyOPf", x)                             # task1: x = 1
    join(s, s2)
    lk(s2, "ShortOPf", x)                           # task2: x = 2
    join(s2, s3)
    assert acl.mdl.ri_capture_get_info(s3)[:2] == (ACTIVE, mh)
    lk(s3, "EasyOPf", x)                            # task3: x = 3
    join_back(s3, s2)
    join_back(s2, s)
    lk(s, "ShortOPf", x)                            # task4: x = 6
    assert end(s) == mh
    for h in (s, s2, s3):
        assert status_of(h) == NONE
    run(mh, s)
    assert u32(x)[0] == 6
    run(mh, s)
    assert u32(x)[0] == ((6 + 1) * 2 + 1) * 2


def test_joined_streams_run_concurrently_on_replay(dev0):
    """Two LongOPf kernels on two branches overlap: the replay takes ~one kernel, not two."""
    from helpers.acl import LONG_NS, host_ns
    s, a, b = new_stream(), new_stream(), new_stream()
    x = new_buf()
    mh = begin(s)
    join(s, a)
    join(s, b)
    lk(a, "LongOPf", x, blocks=1)
    lk(b, "LongOPf", x + 4, blocks=1)
    join_back(a, s)
    join_back(b, s)
    end(s)
    t0 = host_ns()
    run(mh, s)
    took = host_ns() - t0
    assert LONG_NS <= took < 2 * LONG_NS
    assert list(u32(x, 2)) == [1, 1]


# ---------------------------------------------------------------- §4.3 join-back (107025)
def test_side_stream_never_joined_back(dev0):
    s, side = new_stream(), new_stream()
    x = new_buf()
    mh = begin(s)
    join(s, side)
    lk(side, "EasyOPf", x)
    assert_end_fails(s, UNJOINED, mh)
    assert status_of(side) == NONE


def test_side_stream_whose_only_task_is_the_join_wait(dev0):
    s, side = new_stream(), new_stream()
    mh = begin(s)
    join(s, side)                               # last task on side: a wait
    assert_end_fails(s, UNJOINED, mh)


def test_side_record_nobody_waits_for(dev0):
    s, side = new_stream(), new_stream()
    mh = begin(s)
    join(s, side)
    record(new_event(), side)                   # a record, but never waited
    assert_end_fails(s, UNJOINED, mh)


def test_tasks_after_the_final_record_107025(dev0):
    """task5 of the dev-guide figure: work on a side stream after it returned to the origin."""
    s, side = new_stream(), new_stream()
    x = new_buf()
    mh = begin(s)
    join(s, side)
    lk(side, "EasyOPf", x)
    join_back(side, s)
    lk(side, "EasyOPf", x)                      # task5
    assert_end_fails(s, UNJOINED, mh)


def test_second_record_after_the_join_back_is_not_waited(dev0):
    s, side = new_stream(), new_stream()
    mh = begin(s)
    join(s, side)
    join_back(side, s)
    record(new_event(), side)                   # the last record is a new, unwaited one
    assert_end_fails(s, UNJOINED, mh)


def test_last_record_is_an_external_event_107025(dev0):
    """The recorded event must not be EXTERNAL: its record is a plain (captured) task."""
    s, side = new_stream(), new_stream()
    ext, ret = acl.rt.create_event_with_flag(acl.ACL_EVENT_EXTERNAL)
    assert ret == OK
    mh = begin(s)
    join(s, side)
    join_back(side, s)
    assert acl.rt.record_event(ext, side) == OK            # captured as an ordinary record
    assert model(mh).streams[1].last_op == S.OP_EVENT_RECORD
    assert_end_fails(s, UNJOINED, mh)


def test_side_joined_only_through_another_side_that_never_returns(dev0):
    s, s2, s3 = new_stream(), new_stream(), new_stream()
    mh = begin(s)
    join(s, s2)
    join(s2, s3)
    join_back(s3, s2)            # s3 -> s2, but s2's last task is this wait
    assert_end_fails(s, UNJOINED, mh)


def test_no_side_stream_waited_by_the_origin_107025(dev0):
    """Rule 4: every side stream's last record is waited (here by an added stream), but none by
    the origin."""
    s, side, added = new_stream(), new_stream(), new_stream()
    mh = begin(s)
    assert acl.rt.stream_add_to_model(added, mh) == OK
    join(s, side)
    e = new_event()
    record(e, side)
    wait(added, e)
    assert_end_fails(s, UNJOINED, mh)


def test_weak_rule_one_side_reaching_the_origin_is_enough(dev0):
    """§12.9: each side stream's last record must be waited by someone, and one side stream must
    be waited by the origin. Here s3 is waited only by the added stream."""
    s, s2, s3, added = new_stream(), new_stream(), new_stream(), new_stream()
    x = new_buf()
    mh = begin(s)
    assert acl.rt.stream_add_to_model(added, mh) == OK
    join(s, s2)
    join(s, s3)
    lk(s3, "EasyOPf", x)
    e = new_event()
    record(e, s3)
    wait(added, e)
    join_back(s2, s)
    assert end(s) == mh
    run(mh, s)
    assert u32(x)[0] == 1


def test_unjoined_check_ignores_added_streams(dev0):
    s, added = new_stream(), new_stream()
    x = new_buf()
    mh = begin(s)
    assert acl.rt.stream_add_to_model(added, mh) == OK
    lk(added, "EasyOPf", x)                     # ends with a kernel: exempt (§4.5)
    assert end(s) == mh
    run(mh, s)
    assert u32(x)[0] == 1


# ---------------------------------------------------------------- §4.1 conflicts (107032)
def test_record_of_another_models_event_107032_invalidates_both(dev0):
    a, b = new_stream(), new_stream()
    ma, mb = begin(a), begin(b)
    e = new_event()
    record(e, a)
    assert acl.rt.record_event(e, b) == E.ACL_ERROR_STREAM_CAPTURE_CONFLICT
    assert model(ma).status == M.CAPTURE_INVALIDATED
    assert model(mb).status == M.CAPTURE_INVALIDATED
    assert status_of(b) == ACTIVE and status_of(a) == ACTIVE      # §13.8: models, not streams
    assert_end_fails(a, E.ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, ma)
    assert_end_fails(b, E.ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, mb)


def test_wait_across_models_107032_invalidates_both(dev0):
    a, b = new_stream(), new_stream()
    ma, mb = begin(a), begin(b)
    e = new_event()
    record(e, a)
    assert acl.rt.stream_wait_event(b, e) == E.ACL_ERROR_STREAM_CAPTURE_CONFLICT
    assert model(ma).status == M.CAPTURE_INVALIDATED
    assert model(mb).status == M.CAPTURE_INVALIDATED
    assert_end_fails(a, E.ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, ma)
    assert_end_fails(b, E.ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, mb)


def test_joined_stream_waiting_on_the_other_model_107032(dev0):
    a, b, side = new_stream(), new_stream(), new_stream()
    ma, mb = begin(a), begin(b)
    join(a, side)                               # side captures into model a
    e = new_event()
    record(e, b)
    assert acl.rt.stream_wait_event(side, e) == E.ACL_ERROR_STREAM_CAPTURE_CONFLICT
    assert status_of(side) == ACTIVE                                  # §13.8
    assert_end_fails(a, E.ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, ma)
    assert_end_fails(b, E.ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, mb)
    assert status_of(side) == NONE


def test_joining_an_invalidated_model_fails_507000(dev0):
    """§3.5 / §6.2: once a model is invalidated, joining it fails (507000)."""
    a, b, late = new_stream(), new_stream(), new_stream()
    ma, mb = begin(a), begin(b)
    e = new_event()
    record(e, a)
    assert acl.rt.record_event(e, b) == E.ACL_ERROR_STREAM_CAPTURE_CONFLICT
    e2 = new_event()
    record(e2, a)                               # still captured after invalidation
    assert acl.rt.stream_wait_event(late, e2) == E.ACL_ERROR_RT_INTERNAL_ERROR
    assert status_of(late) == NONE
    assert_end_fails(a, E.ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, ma)
    assert_end_fails(b, E.ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, mb)


def test_two_simultaneous_captures_are_independent(dev0):
    a, b, a2, b2 = new_stream(), new_stream(), new_stream(), new_stream()
    x, y = new_buf(), new_buf()
    ma, mb = begin(a), begin(b)
    join(a, a2)
    join(b, b2)
    lk(a2, "EasyOPf", x)
    lk(b2, "EasyOPf", y)
    lk(b2, "EasyOPf", y)
    join_back(a2, a)
    join_back(b2, b)
    assert end(b) == mb                         # end order does not matter
    assert end(a) == ma
    run(ma, a)
    run(mb, b)
    run(mb, a)                                  # any non-capturing stream may launch a model
    assert u32(x)[0] == 1 and u32(y)[0] == 4


# ---------------------------------------------------------------- §4.1 isolation and events
def test_wait_on_event_recorded_outside_the_capture_107024(dev0):
    s, other = new_stream(), new_stream()
    e = new_event()
    record(e, other)                            # an ordinary record before the capture
    mh = begin(s)
    assert acl.rt.stream_wait_event(s, e) == E.ACL_ERROR_RT_CAPTURE_DEPENDENCY
    assert model(mh).status == M.CAPTURE_ACTIVE  # isolation does not invalidate
    assert end(s) == mh


def test_wait_on_never_recorded_ex_event_captures_nothing(dev0):
    s = new_stream()
    mh = begin(s)
    wait(s, new_event())
    assert model(mh).n_tasks() == 0
    end(s)


@pytest.mark.parametrize("make", ["legacy", "with_flag"])
def test_old_mode_events_refused_in_capture_207000(dev0, make):
    s = new_stream()
    if make == "legacy":
        e, ret = acl.rt.create_event()
    else:
        e, ret = acl.rt.create_event_with_flag(acl.ACL_EVENT_SYNC)
    assert ret == OK
    mh = begin(s)
    nf = E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert acl.rt.record_event(e, s) == nf
    assert acl.rt.stream_wait_event(s, e) == nf
    assert model(mh).status == M.CAPTURE_ACTIVE and model(mh).n_tasks() == 0
    assert end(s) == mh


def test_marker_event_record_captures_nothing_wait_is_refused(dev0):
    """An Ex event with only TIME_LINE (no wait task): record returns 0 and captures nothing;
    a wait is refused with 207000 (§9.1)."""
    s = new_stream()
    e = new_event(acl.ACL_EVENT_TIME_LINE)
    mh = begin(s)
    assert acl.rt.record_event(e, s) == OK
    assert model(mh).n_tasks() == 0
    assert acl.rt.stream_wait_event(s, e) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert end(s) == mh


def test_external_event_record_and_wait_are_plain_captured_tasks(dev0):
    """§4.2: an ACL_EVENT_EXTERNAL event never "captures"; its record/wait on a capturing stream
    are captured as ordinary tasks, so a graph can wait on the host's stream work."""
    s, prod = new_stream(), new_stream()
    x = new_buf()
    ext, ret = acl.rt.create_event_with_flag(acl.ACL_EVENT_EXTERNAL)
    assert ret == OK
    mh = begin(s)
    wait(s, ext)                                # captured wait on the fixed hardware flag
    lk(s, "ShortOPf", x)
    assert [cs.last_op for cs in model(mh).streams] == [S.OP_KERNEL]
    end(s)
    lk(prod, "LongOPf", x)                      # x = 1 after 50 ms
    record(ext, prod)
    run(mh, s)                                  # the graph waited for prod's record
    assert u32(x)[0] == 2


def test_wait_on_default_stream_for_a_captured_event_107031(dev0):
    s = new_stream()
    e = new_event()
    mh = begin(s)
    record(e, s)
    assert acl.rt.stream_wait_event(None, e) == E.ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT
    assert model(mh).status == M.CAPTURE_ACTIVE
    assert end(s) == mh


def test_record_captured_event_on_default_stream_is_an_ordinary_record(dev0):
    s = new_stream()
    e = new_event()
    begin(s)
    record(e, s)
    assert acl.rt.record_event(e, None) == OK           # the default stream does not capture
    end(s)


def test_reset_of_ex_event_in_capture_is_207000(dev0):
    s = new_stream()
    e = new_event()
    begin(s)
    record(e, s)
    assert acl.rt.reset_event(e, s) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    end(s)


@pytest.mark.parametrize("flag", [acl.ACL_STREAM_DEVICE_USE_ONLY, acl.ACL_STREAM_CPU_SCHEDULE])
def test_join_with_unsupported_stream_flags_507000(dev0, flag):
    """§4.1: CaptureEventWait refuses a stream whose flags cannot capture (507000)."""
    s = new_stream()
    bad = new_stream(flag)
    mh = begin(s)
    e = new_event()
    record(e, s)
    assert acl.rt.stream_wait_event(bad, e) == E.ACL_ERROR_RT_INTERNAL_ERROR
    assert status_of(bad) == NONE
    assert end(s) == mh


def test_event_rerecorded_wait_binds_to_latest_record(dev0):
    """Software capture events: every record makes a new capture event; a wait binds to the
    latest one at issue time."""
    s, side = new_stream(), new_stream()
    x = new_buf()
    mh = begin(s)
    e = new_event()
    record(e, s)
    wait(side, e)
    lk(s, "LongOPf", x)
    record(e, s)                                # a second record after the long kernel
    wait(side, e)                               # side waits for the LongOPf
    lk(side, "ShortOPf", x)
    join_back(side, s)
    end(s)
    assert len(model(mh).capture_events) == 3
    run(mh, s)
    assert u32(x)[0] == 2                       # (0+1)*2: the ShortOPf ran after the LongOPf


def test_capture_events_are_reset_between_replays(dev0):
    """EndCapture appends an EVENT_RESET per capture event to the origin (§1.3, §9.2), so the
    second replay's waits really wait: otherwise the ShortOPf would overtake the LongOPf."""
    s, side = new_stream(), new_stream()
    x = new_buf()
    mh = begin(s)
    join(s, side)
    lk(side, "LongOPf", x)                      # x += 1 after 50 ms
    join_back(side, s)
    lk(s, "ShortOPf", x)                        # x *= 2 once the side returned
    end(s)
    m = model(mh)
    resets = [cs for cs in m.streams if cs.original]
    assert resets[0].last_op in (S.OP_EVENT_RESET, S.OP_END_GRAPH)
    assert acl.mdl.ri_execute_async(mh, s) == OK
    assert acl.mdl.ri_execute_async(mh, s) == OK
    assert acl.rt.synchronize_stream(s) == OK
    assert u32(x)[0] == ((0 + 1) * 2 + 1) * 2
    # no capture event is left set after a replay
    st = m.device.state
    assert all(st.sync[ce.slot, 0] == 0 for ce in m.capture_events)


def test_added_and_joined_streams_return_to_none_and_run_eagerly(dev0):
    s, side, added = new_stream(), new_stream(), new_stream()
    x = new_buf()
    mh = begin(s)
    join(s, side)
    assert acl.rt.stream_add_to_model(added, mh) == OK
    join_back(side, s)
    end(s)
    for h in (side, added):
        assert status_of(h) == NONE
        lk(h, "EasyOPf", x)
        assert acl.rt.synchronize_stream(h) == OK
    assert u32(x)[0] == 2


def test_open_task_group_at_end_capture_107033(dev0):
    """§4.3 rule 2: a task group still open in the model fails EndCapture (and destroys it)."""
    s = new_stream()
    mh = begin(s)
    assert acl.mdl.ri_capture_task_grp_begin(s) == OK
    assert_end_fails(s, E.ACL_ERROR_STREAM_TASK_GROUP_STATUS, mh)


def test_ipc_and_device_use_only_events_in_capture(dev0):
    """§9.1: IPC events are refused on a capturing stream (207000); DEVICE_USE_ONLY events are
    refused by record/wait everywhere (107000). Neither invalidates the capture."""
    s = new_stream()
    ipc, ret = acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_IPC)
    assert ret == OK
    duo, ret = acl.rt.create_event_with_flag(acl.ACL_EVENT_DEVICE_USE_ONLY)
    assert ret == OK
    mh = begin(s)
    assert acl.rt.record_event(ipc, s) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert acl.rt.stream_wait_event(s, ipc) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert acl.rt.record_event(duo, s) == E.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.stream_wait_event(s, duo) == E.ACL_ERROR_RT_PARAM_INVALID
    assert model(mh).status == M.CAPTURE_ACTIVE and model(mh).n_tasks() == 0
    assert end(s) == mh
