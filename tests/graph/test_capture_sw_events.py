"""Hardware vs software capture events (spec/aclgraph.md §9.2, ``IsUseHardwareEvent`` in
``capture_model_utils.cc``, ``event_capture.cc``): with more than 8192 free events a capture's
cross-stream record / wait are EVENT_RECORD / EVENT_WAIT SQEs on an internal event; at 8192 or
fewer (or on a chip without RT_FEATURE_DEVICE_GET_RESOURCE_NUM_DYNAMIC) they are a
MEM_WRITE_VALUE of 1 / a MEM_WAIT_VALUE (GEQ 1) on a byte of device memory, reset by a
MEM_WRITE_VALUE of 0, still reported as EVENT_RECORD / EVENT_WAIT / EVENT_RESET tasks. 310P
(no RT_FEATURE_TASK_VALUE_WAIT) always uses hardware events."""
from __future__ import annotations

import dataclasses

import pytest

from npusim import acl
from npusim.device import sqe as S
from npusim.runtime import dump
from npusim.runtime.runtime import RT

from helpers.capture import (OK, begin, chip, end, join, join_back,  # noqa: F401 (fixtures)
                             lk, model, new_buf, new_event, new_stream, run, u32)
from helpers.taskgroup import model_streams, tasks_of, types_of

T = acl
R, W, X, K = (T.ACL_MODEL_RI_TASK_EVENT_RECORD, T.ACL_MODEL_RI_TASK_EVENT_WAIT,
              T.ACL_MODEL_RI_TASK_EVENT_RESET, T.ACL_MODEL_RI_TASK_KERNEL)


def fill_events(leave: int = 8192) -> list[int]:
    """Create real events until the driver reports ``leave`` free (aclrtGetEventAvailNum)."""
    free, ret = acl.rt.get_event_avail_num()
    assert ret == OK
    evs = [new_event() for _ in range(free - leave)]
    assert acl.rt.get_event_avail_num() == (leave, OK)
    return evs


def fork_join(s):
    """origin: x+=1 | side (after the fork): y*=2, y+=1 | origin (after the join): x*=2."""
    side = new_stream()
    x, y = new_buf(), new_buf()
    mh = begin(s)
    lk(s, "EasyOPf", x)
    join(s, side)
    lk(side, "EasyOPf", y)
    lk(side, "ShortOPf", y)
    join_back(side, s)
    lk(s, "ShortOPf", x)
    assert end(s) == mh
    return mh, x, y


def ops(m):
    return {cs.original: [int(r["op"]) for r in dump.task_rows(cs)] for cs in m.streams}


def test_plenty_of_free_events_capture_hardware_events(dev0):
    s = new_stream()
    assert acl.rt.get_event_avail_num()[0] > 8192
    mh, x, y = fork_join(s)
    m = model(mh)
    assert all(ce.hardware for ce in m.capture_events) and not m.sw_events
    o = ops(m)
    assert o[True] == [S.OP_KERNEL, S.OP_EVENT_RECORD, S.OP_EVENT_WAIT, S.OP_KERNEL,
                       S.OP_EVENT_RESET, S.OP_EVENT_RESET]
    assert o[False] == [S.OP_EVENT_WAIT, S.OP_KERNEL, S.OP_KERNEL, S.OP_EVENT_RECORD]
    run(mh, s, times=3)
    assert u32(x)[0] == 14 and u32(y)[0] == 14


@pytest.mark.parametrize("leave", [8192, 100])
def test_few_free_events_capture_software_events(dev0, leave):
    evs = fill_events(leave)
    s = new_stream()
    mh, x, y = fork_join(s)
    m = model(mh)
    assert len(m.capture_events) == 2 and not any(ce.hardware for ce in m.capture_events)
    # the fork and the join made 2 user events; the capture events took no event id
    assert acl.rt.get_event_avail_num() == (leave - 2, OK)
    o = ops(m)
    assert o[True] == [S.OP_KERNEL, S.OP_MEM_WRITE_VALUE, S.OP_MEM_WAIT_VALUE, S.OP_KERNEL,
                       S.OP_MEM_WRITE_VALUE, S.OP_MEM_WRITE_VALUE]
    assert o[False] == [S.OP_MEM_WAIT_VALUE, S.OP_KERNEL, S.OP_KERNEL, S.OP_MEM_WRITE_VALUE]
    origin = next(cs for cs in m.streams if cs.original)
    rows = dump.task_rows(origin)
    a, b = (ce.addr for ce in m.capture_events)
    # record: 1 (1 byte) to the slot; wait: GEQ 1, no reset; EndCapture: one reset (0) each
    assert [(int(r["a0"]), int(r["a1"]), int(r["a2"])) for r in rows[[1, 4, 5]]] == \
        [(a, 1, 1), (a, 0, 1), (b, 0, 1)]
    assert (int(rows[2]["a0"]), int(rows[2]["a1"]), int(rows[2]["a2"]), int(rows[2]["flag"])) \
        == (b, 1, 1, S.WAIT_GEQ)
    assert origin.sqe_num == len(rows) + 4 - 1             # the wait counts MEM_WAIT_SQE_NUM
    for n in range(1, 5):                                   # replays: ordering and data hold
        run(mh, s)
        want = 0
        for _ in range(n):
            want = (want + 1) * 2
        assert u32(x)[0] == want and u32(y)[0] == want
        assert all(m.device.state.mem.view(ce.addr, 1)[0] == 0 for ce in m.capture_events)
    assert acl.mdl.ri_destroy(mh) == OK
    for e in evs[:10]:
        assert acl.rt.destroy_event(e) == OK


def test_software_event_tasks_report_event_types_and_params(dev0):
    fill_events()
    s = new_stream()
    mh, _, _ = fork_join(s)
    m = model(mh)
    side_h, origin_h = model_streams(mh)                   # newest first: the origin is last
    assert types_of(origin_h) == [K, R, W, K, X, X]
    assert types_of(side_h) == [W, K, K, R]
    # params as for hardware capture events (GetCaptureRecord/Wait/ResetTaskParams)
    user = {ce.addr: ce.user_event for ce in m.capture_events}
    t = tasks_of(origin_h)
    p, ret = acl.mdl.ri_task_get_params(t[1])
    assert ret == OK and p["type"] == R and p["record_flag"] == 0
    assert p["event"] == user[m.capture_events[0].addr].handle
    p, ret = acl.mdl.ri_task_get_params(t[2])
    assert ret == OK and p["type"] == W and p["wait_flag"] == 0
    assert p["event"] == user[m.capture_events[1].addr].handle
    p, ret = acl.mdl.ri_task_get_params(t[4])
    assert ret == OK and p["type"] == X and p["reset_flag"] == 0
    # event tasks for set-params, as a hardware event task: EVENT_* parameters are refused
    # (107000, model FAULT); VALUE_WRITE ones convert any task that is not DEFAULT
    # (UpdateWriteValueTaskParams, docs/fidelity.md row 294; this was 107000)
    assert acl.mdl.ri_task_set_params(
        t[1], {"type": T.ACL_MODEL_RI_TASK_VALUE_WRITE, "dev_addr": 0, "value": 0}) == OK
    # dumps name them EVENT_RECORD / EVENT_WAIT / EVENT_RESET with the software event id
    lines = dump.debug_lines(m)
    types = [ln.split("task_type=")[1].split(",")[0].rstrip(".") for ln in lines[1:-1]]
    kern = types[1]
    assert types == ["EVENT_WAIT", kern, kern, "EVENT_RECORD",              # side, then origin
                     kern, "EVENT_RECORD", "EVENT_WAIT", kern, "EVENT_RESET", "EVENT_RESET"]
    assert "MEM_WRITE_VALUE" not in "\n".join(lines) and "MEM_WAIT_VALUE" not in "\n".join(lines)
    ids = {ce.id for ce in m.capture_events}
    assert {int(ln.split("event_id=")[1].rstrip(".")) for ln in lines if "event_id=" in ln} == ids
    names = {r["name"] for r in dump.json_records(m, False)}
    assert {f"EVENT_RECORD_{i}" for i in ids} <= names and not any("MEM_" in n for n in names)
    dot = dump.to_dot(m)
    assert "EVENT_WAIT_" in dot and "MEM_WAIT" not in dot


def test_without_dynamic_resource_feature_always_software(dev0, monkeypatch):
    monkeypatch.setattr(RT, "profile", dataclasses.replace(RT.profile,
                                                           resource_num_dynamic=False))
    s = new_stream()
    assert acl.rt.get_event_avail_num()[0] > 8192
    mh, x, y = fork_join(s)
    assert not any(ce.hardware for ce in model(mh).capture_events)
    run(mh, s, times=3)
    assert u32(x)[0] == 14 and u32(y)[0] == 14


def test_310p_always_hardware_events(chip):
    chip("Ascend310P")
    fill_events(10)
    s = new_stream()
    mh, x, y = fork_join(s)
    m = model(mh)
    assert all(ce.hardware for ce in m.capture_events)
    assert ops(m)[False] == [S.OP_EVENT_WAIT, S.OP_KERNEL, S.OP_KERNEL, S.OP_EVENT_RECORD]
    run(mh, s, times=3)
    assert u32(x)[0] == 14 and u32(y)[0] == 14


def test_mode_is_chosen_per_record(dev0):
    """The free count is read at each capture record: a graph captured before the events ran
    low keeps its hardware events; the next capture uses software ones."""
    s = new_stream()
    mh1, _, _ = fork_join(s)
    evs = fill_events()
    mh2, x, y = fork_join(s)
    assert all(ce.hardware for ce in model(mh1).capture_events)
    assert not any(ce.hardware for ce in model(mh2).capture_events)
    for e in evs[:6]:            # 8196 free, 8194 once the next fork and join made theirs
        assert acl.rt.destroy_event(e) == OK
    mh3, _, _ = fork_join(s)
    assert all(ce.hardware for ce in model(mh3).capture_events)
    run(mh1, s, times=2)
    run(mh2, s, times=2)
    assert u32(x)[0] == 6 and u32(y)[0] == 6
