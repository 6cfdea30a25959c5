"""External record / wait (``spec/aclgraph.md`` §9.4): a graph ordered against a stream and
against another graph, rebound at every launch; the checks and their codes; the sample port."""
from __future__ import annotations

import numpy as np
import pytest

import npusim
from npusim import acl
from npusim import errors as E

from helpers.acl import launch, read
from helpers.capture import begin, end, new_buf, new_stream
from helpers.examples import load

OK = acl.ACL_SUCCESS
REC, WAIT = acl.ACL_EVENT_RECORD_EXTERNAL, acl.ACL_EVENT_WAIT_EXTERNAL
D2D = acl.ACL_MEMCPY_DEVICE_TO_DEVICE


def ex_event() -> int:
    ev, ret = acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC)
    assert ret == OK
    return ev


def copy(dst, src, s, n=4):
    assert acl.rt.memcpy_async(dst, n, src, n, D2D, s) == OK


def test_a_graph_waits_for_a_stream_record(dev0):
    ext, gs = new_stream(), new_stream()
    ev, buf, dst = ex_event(), new_buf(), new_buf()
    mh = begin(gs)
    assert acl.rt.stream_wait_event_with_flag(gs, ev, 0, WAIT) == OK
    copy(dst, buf, gs)
    mh = end(gs)
    assert launch(ext, "LongOPf", 1, [buf]) == OK          # buf[0] = 1 after 50 ms
    assert acl.rt.record_event(ev, ext) == OK
    assert acl.mdl.ri_execute_async(mh, gs) == OK
    assert acl.rt.synchronize_stream(gs) == OK
    assert read(dst, 1).tolist() == [1]                     # the copy waited for the kernel


def test_without_a_record_before_the_launch_the_external_wait_is_satisfied(dev0):
    gs = new_stream()
    ev, buf, dst = ex_event(), new_buf(), new_buf()
    mh = begin(gs)
    assert acl.rt.stream_wait_event_with_flag(gs, ev, 0, WAIT) == OK
    copy(dst, buf, gs)
    mh = end(gs)
    assert acl.mdl.ri_execute_async(mh, gs) == OK
    assert acl.rt.synchronize_stream(gs) == OK


def test_a_stream_waits_for_a_graph_record_of_each_launch(dev0):
    gs, ext = new_stream(), new_stream()
    ev, buf, dst = ex_event(), new_buf(), new_buf()
    mh = begin(gs)
    assert launch(gs, "LongOPf", 1, [buf]) == OK
    assert acl.rt.record_event_with_flag(ev, gs, REC) == OK
    mh = end(gs)
    for i in (1, 2):
        assert acl.mdl.ri_execute_async(mh, gs) == OK
        assert acl.rt.stream_wait_event(ext, ev) == OK     # waits for *this* launch's record
        copy(dst, buf, ext)
        assert acl.rt.synchronize_stream(ext) == OK
        assert read(dst, 1).tolist() == [i]
    assert acl.rt.synchronize_event(ev) == OK
    assert acl.rt.query_event_status(ev) == (acl.ACL_EVENT_RECORDED_STATUS_COMPLETE, OK)


def test_graph_to_graph(dev0):
    s1, s2 = new_stream(), new_stream()
    ev, buf, dst = ex_event(), new_buf(), new_buf()
    begin(s1)
    assert launch(s1, "LongOPf", 1, [buf]) == OK
    assert acl.rt.record_event_with_flag(ev, s1, REC) == OK
    m1 = end(s1)
    begin(s2)
    assert acl.rt.stream_wait_event_with_flag(s2, ev, 0, WAIT) == OK
    copy(dst, buf, s2)
    m2 = end(s2)
    assert acl.mdl.ri_execute_async(m1, s1) == OK
    assert acl.mdl.ri_execute_async(m2, s2) == OK
    assert acl.rt.synchronize_stream(s2) == OK
    assert read(dst, 1).tolist() == [1]


def test_the_tasks_report_event_types_and_the_external_flag_in_params(dev0):
    gs = new_stream()
    ev, w = ex_event(), ex_event()
    begin(gs)
    assert acl.rt.stream_wait_event_with_flag(gs, w, 0, WAIT) == OK
    assert acl.rt.record_event_with_flag(ev, gs, REC) == OK
    mh = end(gs)
    (cs,), _ = acl.mdl.ri_get_streams(mh)
    tasks, _ = acl.mdl.ri_get_tasks_by_stream(cs)
    types = [acl.mdl.ri_task_get_type(t)[0] for t in tasks[:2]]
    assert types == [acl.ACL_MODEL_RI_TASK_EVENT_WAIT, acl.ACL_MODEL_RI_TASK_EVENT_RECORD]
    pw = acl.mdl.ri_task_get_params(tasks[0])[0]
    pr = acl.mdl.ri_task_get_params(tasks[1])[0]
    assert (pw["event"], pw["wait_flag"]) == (w, 1)
    assert (pr["event"], pr["record_flag"]) == (ev, 1)


def test_codes(dev0):
    gs, other = new_stream(), new_stream()
    ev = ex_event()
    legacy, _ = acl.rt.create_event()
    flag_ev, _ = acl.rt.create_event_with_flag(acl.ACL_EVENT_SYNC)
    timeline, _ = acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC | acl.ACL_EVENT_TIME_LINE)
    assert acl.rt.record_event_with_flag(None, gs, REC) == E.ACL_ERROR_INVALID_PARAM
    assert acl.rt.record_event_with_flag(ev, gs, 2) == E.ACL_ERROR_INVALID_PARAM
    assert acl.rt.stream_wait_event_with_flag(gs, ev, 0, 2) == E.ACL_ERROR_INVALID_PARAM
    assert acl.rt.stream_wait_event_with_flag(gs, ev, 5, WAIT) == E.ACL_ERROR_INVALID_PARAM
    assert acl.rt.record_event_with_flag(ev, gs, REC) == E.ACL_ERROR_RT_STREAM_NOT_CAPTURED
    begin(gs)
    for bad in (legacy, flag_ev, timeline):                 # Ex + exactly ACL_EVENT_SYNC only
        assert acl.rt.record_event_with_flag(bad, gs, REC) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert acl.rt.record_event_with_flag(ev, gs, REC) == OK
    assert acl.rt.record_event_with_flag(ev, gs, REC) == E.ACL_ERROR_RT_PARAM_INVALID   # twice
    assert acl.rt.stream_wait_event_with_flag(gs, ev, 0, WAIT) == \
        E.ACL_ERROR_RT_PARAM_INVALID                        # both directions in one graph
    assert acl.rt.record_event(ev, other) == E.ACL_ERROR_RT_PARAM_INVALID   # flag is EXTERNAL now
    end(gs)


def test_the_wait_flag_is_fixed_by_the_first_wait(dev0):
    s = new_stream()
    ev = ex_event()
    assert acl.rt.stream_wait_event(s, ev) == OK            # DEFAULT, fixed
    begin(s)
    assert acl.rt.stream_wait_event_with_flag(s, ev, 0, WAIT) == E.ACL_ERROR_RT_PARAM_INVALID
    end(s)


def test_refused_without_software_sq():
    npusim.configure(profile="Ascend310P")
    assert acl.init() == OK and acl.rt.set_device(0) == OK
    s = new_stream()
    ev = ex_event()
    begin(s)
    assert acl.rt.record_event_with_flag(ev, s, REC) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT


def test_sample_4_model_sync_external(capsys):
    mod = load("model_ri_sync_external")
    out = mod.main()
    for r in out:
        assert r.tolist() == list(range(1, 9))
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["[INFO]  === Scenario 1: Stream Record + Graph Wait External ===",
                     "[INFO]  Check result success.",
                     "[INFO]  === Scenario 2: Graph Record External + Stream Wait ===",
                     "[INFO]  Check result success.",
                     "[INFO]  === Scenario 3: Graph1 Record External + Graph2 Wait External ===",
                     "[INFO]  Check result success."]


def test_pythonic_external_event_orders_an_update_before_each_replay():
    """The torch_npu shape: the graph waits on an ExternalEvent and resets it; each step updates
    the task group on an update stream and records the event there; then the graph replays."""
    dev = npusim.Device("Ascend910B")
    s, u = dev.stream(), dev.stream()
    q, k = dev.malloc(64).fill(0), dev.malloc(64).fill(0)
    ev = dev.external_event()
    assert isinstance(ev, npusim.ExternalEvent)
    with npusim.graph(stream=s) as g:
        ev.wait(s)
        ev.reset(s)
        npusim.graph_task_group_begin(s)
        s.launch("EasyOPf", 1, (q,))
        handle = npusim.graph_task_group_end(s)
    done = dev.event()
    for target in (k, k, q):
        u.wait(done)
        npusim.graph_task_update_begin(u, handle)
        u.launch("EasyOPf", 1, (target,))
        npusim.graph_task_update_end(u)
        ev.record(u)
        g.replay(s)
        s.record(done)
    s.synchronize()
    assert (int(q.read(np.uint32, 1)[0]), int(k.read(np.uint32, 1)[0])) == (1, 2)


def test_pythonic_external_record_and_wait_between_graphs():
    dev = npusim.Device("Ascend910B")
    s1, s2 = dev.stream(), dev.stream()
    src, dst = dev.malloc(64).fill(0), dev.malloc(64).fill(0)
    ev = dev.event(kind="sync")
    with npusim.graph(stream=s1) as g1:
        s1.launch("LongOPf", 1, (src,))
        s1.record(ev, external=True)
    with npusim.graph(stream=s2) as g2:
        s2.wait(ev, external=True)
        s2.copy(dst.ptr, src.ptr, 4, acl.ACL_MEMCPY_DEVICE_TO_DEVICE)
    g1.replay(s1)
    g2.replay(s2)
    s2.synchronize()
    assert int(dst.read(np.uint32, 1)[0]) == 1
