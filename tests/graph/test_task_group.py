"""Task groups: ``aclmdlRICaptureTaskGrpBegin`` / ``aclmdlRICaptureTaskGrpEnd``
(``spec/aclgraph.md`` §7, §3.5, §10, §11).

Covers the check order of both calls, the prefetch NOPs per profile, what a group may hold
(507009 otherwise, sticky on the model), work on another capturing stream while a group is open
(107034 + invalidation), 507903 on an invalidated capture, the NULL handle on every error, the
sticky error code, EndCapture with a group open, and the task-group lines of aclmdlRIDebugPrint.
"""
from __future__ import annotations

import logging

import pytest

from npusim import acl
from npusim import errors as E
from npusim.device import sqe as S
from npusim.runtime import model as M

from helpers.acl import in_fresh_thread
from helpers.capture import (ACTIVE, INVALIDATED, OK, begin, chip, end, join, join_back,  # noqa: F401
                          model, new_buf, new_event, new_stream, no_acl_graph, record, run,
                          status_of, wait)
from helpers.taskgroup import (AICPU_KERNEL, KL, grp_begin, grp_end, kl, model_streams,
                            register_test_kernels, tasks_of, types_of, u32)

DEFAULT, KERNEL = acl.ACL_MODEL_RI_TASK_DEFAULT, acl.ACL_MODEL_RI_TASK_KERNEL


# ---- prefetch NOPs (§7, §11 taskPrefetchCount) ----
@pytest.mark.parametrize("profile,nops", [("Ascend910B", 8), ("Ascend910_93", 8),
                                          ("Ascend950", 8), ("Ascend310P", 10)])
def test_prefetch_nops_per_profile(chip, profile, nops):
    chip(profile)
    s = new_stream()
    x = new_buf()
    mh = begin(s)
    KL(s, "EasyOPf", x)
    grp_begin(s)
    KL(s, "EasyOPf", x)
    KL(s, "ShortOPf", x)
    g = grp_end(s)
    mh = end(s)
    (cs,) = model_streams(mh)
    # the kernel before the group, taskPrefetchCount NOPs (task type DEFAULT), the two kernels
    assert types_of(cs)[:3 + nops] == [KERNEL] + [DEFAULT] * nops + [KERNEL, KERNEL]
    m = model(mh)
    assert m.task_groups[0].entries == [(m.streams[0], 1 + nops), (m.streams[0], 2 + nops)]
    assert g
    run(mh, s)
    assert u32(x)[0] == ((0 + 1) + 1) * 2                  # NOPs execute as nothing


def test_prefetch_nops_are_captured_even_without_kernels(stream):
    mh = begin(stream)
    grp_begin(stream)
    grp_end(stream)
    grp_begin(stream)
    grp_end(stream)
    mh = end(stream)
    assert types_of(model_streams(mh)[0]) == [DEFAULT] * 16


@pytest.mark.parametrize("room", [0, 1, 5, 7, 8, 9, 12])
def test_prefetch_nops_around_the_cascade_trigger(dev0, monkeypatch, room):
    """The NOPs take task positions, sequence ids and cascade-trigger SQEs one by one, whether
    they are written in one call (room for all of them before the trigger) or one at a time
    (a cascade among them): with ``room`` SQEs left before the trigger, the first ``room`` NOPs
    stay on the origin stream and the rest follow the STREAM_ACTIVE hop on a cascade stream."""
    import dataclasses
    from npusim.runtime import api_device
    d = api_device.device(0)
    monkeypatch.setattr(d, "profile", dataclasses.replace(d.profile, capture_sq_depth_swsq=64))
    s = new_stream()
    x = new_buf()
    mh = begin(s)
    cascade_at = model(mh).cascade_at                      # 64 - 32 reserved
    for _ in range(cascade_at - room):
        KL(s, "EasyOPf", x)
    grp_begin(s)
    KL(s, "EasyOPf", x)
    grp_end(s)
    KL(s, "EasyOPf", x)
    mh = end(s)
    nops = d.profile.task_prefetch_count
    streams = model(mh).streams
    first = [int(r["op"]) for r in _rows(streams[0])]
    kept = min(room, nops)
    assert first[cascade_at - room:cascade_at - room + kept] == [S.OP_NOP] * kept
    ops = [int(r["op"]) for cs in streams for r in _rows(cs)
           if int(r["op"]) not in (S.OP_STREAM_ACTIVE, S.OP_NOTIFY_RECORD)]
    assert ops[:cascade_at - room + nops + 2] == \
        [S.OP_KERNEL] * (cascade_at - room) + [S.OP_NOP] * nops + [S.OP_KERNEL] * 2
    if room >= nops:
        assert len(streams) == 1 or all(int(r["op"]) != S.OP_NOP for r in _rows(streams[1]))
    else:
        assert [int(r["op"]) for r in _rows(streams[1])][:nops - room] == \
            [S.OP_NOP] * (nops - room)
    seqs = [acl.mdl.ri_task_get_seq_id(t) for h in model_streams(mh)[::-1] for t in tasks_of(h)]
    assert [c for _, c in seqs] == [OK] * len(seqs)
    assert sorted(v for v, _ in seqs) == list(range(len(seqs)))   # one id each, none twice
    for cs in streams:                                     # task ids are positions
        assert [int(r["task_id"]) for r in _rows(cs)] == list(range(cs.task_count))
    run(mh, s)
    assert u32(x)[0] == cascade_at - room + 2              # every kernel ran once


def _rows(cs):
    st = cs.model.device.state
    return [st.pool[st.row_of(cs.sq, p)] for p in range(cs.task_count)]


# ---- TaskGrpBegin check order ----
def test_grp_begin_checks(dev0, no_acl_graph):
    s = new_stream()
    assert acl.mdl.ri_capture_task_grp_begin(None) == E.ACL_ERROR_INVALID_PARAM
    assert acl.mdl.ri_capture_task_grp_begin(s) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT


def test_grp_begin_check_order(stream):
    other = new_stream()
    gone = new_stream()
    assert acl.rt.destroy_stream(gone) == OK
    assert acl.mdl.ri_capture_task_grp_begin(None) == E.ACL_ERROR_INVALID_PARAM
    assert acl.mdl.ri_capture_task_grp_begin(gone) == E.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.mdl.ri_capture_task_grp_begin(other) == E.ACL_ERROR_RT_STREAM_NOT_CAPTURED
    # not capturing is decided before the context (decorator before ApiImpl)
    assert in_fresh_thread(acl.mdl.ri_capture_task_grp_begin, other) == \
        E.ACL_ERROR_RT_STREAM_NOT_CAPTURED
    mh = begin(stream)
    assert in_fresh_thread(acl.mdl.ri_capture_task_grp_begin, stream) == \
        E.ACL_ERROR_RT_CONTEXT_NULL
    ctx1, ret = acl.rt.get_current_context()
    ctx2, ret = acl.rt.create_context(0)
    assert ret == OK
    assert acl.mdl.ri_capture_task_grp_begin(stream) == E.ACL_ERROR_RT_STREAM_CONTEXT
    assert acl.rt.set_current_context(ctx1) == OK
    grp_begin(stream)
    assert acl.mdl.ri_capture_task_grp_begin(stream) == E.ACL_ERROR_STREAM_TASK_GROUP_STATUS
    n = model(mh).n_tasks()
    assert n == 8                                          # the refused begin added no NOPs
    grp_end(stream)
    end(stream)
    assert acl.rt.destroy_context(ctx2) == OK


# ---- TaskGrpEnd check order ----
def test_grp_end_checks(dev0, no_acl_graph):
    s = new_stream()
    assert acl.mdl.ri_capture_task_grp_end(None) == (None, E.ACL_ERROR_INVALID_PARAM)
    assert acl.mdl.ri_capture_task_grp_end(s) == (None, E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT)


def test_grp_end_check_order(stream):
    other = new_stream()
    gone = new_stream()
    assert acl.rt.destroy_stream(gone) == OK
    assert acl.mdl.ri_capture_task_grp_end(None) == (None, E.ACL_ERROR_INVALID_PARAM)
    assert acl.mdl.ri_capture_task_grp_end(gone) == (None, E.ACL_ERROR_RT_INVALID_HANDLE)
    assert acl.mdl.ri_capture_task_grp_end(other) == (None, E.ACL_ERROR_RT_STREAM_NOT_CAPTURED)
    begin(stream)
    assert acl.mdl.ri_capture_task_grp_end(stream) == \
        (None, E.ACL_ERROR_STREAM_TASK_GROUP_STATUS)         # no group open
    grp_begin(stream)
    assert in_fresh_thread(acl.mdl.ri_capture_task_grp_end, stream) == \
        (None, E.ACL_ERROR_RT_CONTEXT_NULL)
    ctx1, _ = acl.rt.get_current_context()
    ctx2, ret = acl.rt.create_context(0)
    assert acl.mdl.ri_capture_task_grp_end(stream) == (None, E.ACL_ERROR_RT_STREAM_CONTEXT)
    assert acl.rt.set_current_context(ctx1) == OK
    g = grp_end(stream)                                    # still open after the refusals
    assert acl.mdl.ri_capture_task_grp_end(stream) == \
        (None, E.ACL_ERROR_STREAM_TASK_GROUP_STATUS)         # closed: status back to NONE
    mh = end(stream)
    assert model(mh).task_groups == [g_obj(g)]
    assert acl.rt.destroy_context(ctx2) == OK


def g_obj(h):
    from npusim.runtime.runtime import RT
    g, code = RT.handles.get("taskgrp", h)
    assert code == OK
    return g


def test_group_handles_are_distinct_and_owned_by_the_model(stream):
    x = new_buf()
    mh = begin(stream)
    hs = []
    for k in ("EasyOPf", "ShortOPf", "EasyOPf"):
        grp_begin(stream)
        KL(stream, k, x)
        hs.append(grp_end(stream))
        KL(stream, "EasyOPf", x)                           # between groups: not packed
    mh = end(stream)
    assert len(set(hs)) == 3
    m = model(mh)
    assert [g_obj(h) for h in hs] == m.task_groups
    assert [len(g.entries) for g in m.task_groups] == [1, 1, 1]
    assert not m.taskgrp_streams and not m.taskgrp_err


# ---- 507009: only AI Core / vector kernels in a group (PackingTaskGroup) ----
@pytest.mark.parametrize("what", ["memcpy_async", "memset_async", "event_record", "aicpu_kernel"])
def test_non_kernel_task_in_group_is_507009_and_sticky(stream, what):
    register_test_kernels()
    x = new_buf()
    host = new_buf()
    mh = begin(stream)
    grp_begin(stream)
    KL(stream, "EasyOPf", x)
    if what == "memcpy_async":
        code = acl.rt.memcpy_async(x, 4, host, 4, acl.ACL_MEMCPY_DEVICE_TO_DEVICE, stream)
    elif what == "memset_async":
        code = acl.rt.memset_async(x, 4, 0, 4, stream)
    elif what == "event_record":
        code = acl.rt.record_event(new_event(), stream)
    else:
        code = kl(stream, AICPU_KERNEL, x)
    assert code == E.ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT
    m = model(mh)
    assert m.status == M.CAPTURE_INVALIDATED               # SetTaskGroupErrCode -> TerminateCapture
    assert status_of(stream) == ACTIVE                     # the stream's own status is separate
    KL(stream, "EasyOPf", x)                               # tasks are still captured
    assert acl.mdl.ri_capture_task_grp_end(stream) == (None, E.ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT)
    assert m.task_groups == []
    # the stored code is never cleared: a later clean group fails the same way
    grp_begin(stream)
    KL(stream, "EasyOPf", x)
    assert acl.mdl.ri_capture_task_grp_end(stream) == (None, E.ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT)
    assert acl.mdl.ri_capture_end(stream) == (None, E.ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED)


def test_stream_active_of_a_cascade_is_not_packed(stream):
    x = new_buf()
    mh = begin(stream)
    m = model(mh)
    m.cascade_at = 12                                      # cascade every 12 SQEs (§5)
    grp_begin(stream)
    for _ in range(20):
        KL(stream, "EasyOPf", x)
    g = grp_end(stream)
    mh = end(stream)
    assert len(m.streams) == 3
    assert len(g_obj(g).entries) == 20                     # kernels only, no STREAM_ACTIVE
    assert m.status == M.READY
    run(mh, stream)
    assert u32(x)[0] == 20


# ---- 107034: another capturing stream works while a group is open (IsTaskGroupBreak) ----
def test_task_on_other_capturing_stream_is_107034_and_invalidates(stream):
    side = new_stream()
    x = new_buf()
    mh = begin(stream)
    join(stream, side)
    m = model(mh)
    grp_begin(stream)
    KL(stream, "EasyOPf", x)
    side_cs = m.streams[1]
    before = side_cs.task_count
    assert kl(side, "EasyOPf", x) == E.ACL_ERROR_STREAM_TASK_GROUP_INTR
    assert side_cs.task_count == before                    # refused before allocation
    assert m.status == M.CAPTURE_INVALIDATED
    assert (status_of(stream), status_of(side)) == (ACTIVE, ACTIVE)
    # any task type is refused, not only kernels
    assert acl.rt.record_event(new_event(), side) == E.ACL_ERROR_STREAM_TASK_GROUP_INTR
    assert acl.mdl.ri_capture_task_grp_end(stream) == (None, E.ACL_ERROR_STREAM_TASK_GROUP_INTR)
    # the group is closed: the side stream may capture again, but the model stays invalidated
    join_back(side, stream)
    assert acl.mdl.ri_capture_end(stream) == (None, E.ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED)


def test_group_begin_on_second_stream_while_one_is_open_is_107034(stream):
    side = new_stream()
    mh = begin(stream)
    join(stream, side)
    grp_begin(stream)
    # TaskGrpBegin's first NOP on `side` is the interrupting task
    assert acl.mdl.ri_capture_task_grp_begin(side) == E.ACL_ERROR_STREAM_TASK_GROUP_INTR
    assert model(mh).status == M.CAPTURE_INVALIDATED
    assert acl.mdl.ri_capture_task_grp_end(side) == (None, E.ACL_ERROR_STREAM_TASK_GROUP_STATUS)
    assert acl.mdl.ri_capture_task_grp_end(stream) == (None, E.ACL_ERROR_STREAM_TASK_GROUP_INTR)


def test_no_group_open_other_streams_capture_freely(stream):
    side = new_stream()
    x, y = new_buf(), new_buf()
    mh = begin(stream)
    join(stream, side)
    grp_begin(stream)
    KL(stream, "EasyOPf", x)
    g = grp_end(stream)
    KL(side, "EasyOPf", y)                                 # group closed: fine
    join_back(side, stream)
    mh = end(stream)
    run(mh, stream)
    assert (u32(x)[0], u32(y)[0]) == (1, 1)
    assert len(g_obj(g).entries) == 1


def test_last_stored_error_wins(stream):
    """SetTaskGroupErrCode assigns: a 507009 after a 107034 is what TaskGrpEnd returns."""
    side = new_stream()
    x = new_buf()
    begin(stream)
    join(stream, side)
    grp_begin(stream)
    assert kl(side, "EasyOPf", x) == E.ACL_ERROR_STREAM_TASK_GROUP_INTR
    assert acl.rt.memset_async(x, 4, 0, 4, stream) == E.ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT
    assert acl.mdl.ri_capture_task_grp_end(stream) == (None, E.ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT)


# ---- 507903: TaskGrpEnd in an invalidated capture ----
def test_grp_end_in_invalidated_capture_is_507903(stream):
    other = new_stream()
    x = new_buf()
    e = new_event()
    mh = begin(stream)
    begin(other)
    record(e, other)                                       # e now belongs to the other capture
    grp_begin(stream)
    KL(stream, "EasyOPf", x)
    # waiting on an event of another capture: 107032, both models invalidated (§3.5, §13.8: the
    # stream's own status stays ACTIVE) — no task-group error is stored
    assert acl.rt.stream_wait_event(stream, e) == E.ACL_ERROR_STREAM_CAPTURE_CONFLICT
    assert status_of(stream) == ACTIVE
    assert model(mh).taskgrp_err == 0
    assert acl.mdl.ri_capture_task_grp_end(stream) == \
        (None, E.ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED)
    # closed all the same: a new group can be opened (begin has no validity check), and ends 507903
    grp_begin(stream)
    assert acl.mdl.ri_capture_task_grp_end(stream) == \
        (None, E.ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED)
    assert acl.mdl.ri_capture_end(stream) == (None, E.ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED)
    assert acl.mdl.ri_capture_end(other) == (None, E.ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED)


def test_group_opened_after_invalidation_ends_507903(stream):
    other = new_stream()
    e = new_event()
    begin(stream)
    begin(other)
    record(e, other)
    assert acl.rt.stream_wait_event(stream, e) == E.ACL_ERROR_STREAM_CAPTURE_CONFLICT
    grp_begin(stream)                                      # accepted on an invalidated stream
    assert acl.mdl.ri_capture_task_grp_end(stream) == \
        (None, E.ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED)


# ---- EndCapture with a group open (§4.3 step 2) ----
def test_end_capture_with_open_group_is_107033_and_leaves_the_stream_sampling(stream):
    x = new_buf()
    begin(stream)
    grp_begin(stream)
    KL(stream, "EasyOPf", x)
    assert acl.mdl.ri_capture_end(stream) == (None, E.ACL_ERROR_STREAM_TASK_GROUP_STATUS)
    # the capture is over (root model destroyed), but nothing closed the group: the user
    # stream's task-group status is still SAMPLE (only TaskGrpEnd resets it, §7)
    assert acl.mdl.ri_capture_task_grp_end(stream) == (None, E.ACL_ERROR_RT_STREAM_NOT_CAPTURED)
    mh = begin(stream)
    assert acl.mdl.ri_capture_task_grp_begin(stream) == E.ACL_ERROR_STREAM_TASK_GROUP_STATUS
    # TaskGrpEnd finds SAMPLE but no group on the new capture stream: TASKGRP_NULL -> 507000
    assert acl.mdl.ri_capture_task_grp_end(stream) == (None, E.ACL_ERROR_RT_INTERNAL_ERROR)
    assert acl.mdl.ri_capture_task_grp_begin(stream) == E.ACL_ERROR_STREAM_TASK_GROUP_STATUS
    KL(stream, "EasyOPf", x)                               # no group: an ordinary captured task
    mh = end(stream)
    assert model(mh).task_groups == []
    # the stream can never update a group either
    assert acl.mdl.ri_capture_task_update_begin(stream, 0x1234) == \
        E.ACL_ERROR_STREAM_TASK_GROUP_STATUS


# ---- a group that spans a cascade, and the debug-print lines (§10) ----
def _grp_lines(caplog, mh):
    with caplog.at_level(logging.INFO, logger="npusim.aclgraph"):
        caplog.clear()
        assert acl.mdl.ri_debug_print(mh) == OK
    lines = [r.getMessage() for r in caplog.records if r.name == "npusim.aclgraph"]
    return [ln for ln in lines if "taskGroupId" in ln]


def test_debug_print_group_lines(stream, caplog):
    x = new_buf()
    mh = begin(stream)
    m = model(mh)
    m.cascade_at = 14                                      # capture streams of 14 SQEs
    grp_begin(stream)                                      # 8 NOPs: positions 0-7
    for _ in range(12):                                    # 6 on stream A, 6+... on B
        KL(stream, "EasyOPf", x)
    grp_end(stream)
    grp_begin(stream)                                      # an empty group
    grp_end(stream)
    grp_begin(stream)
    KL(stream, "ShortOPf", x)                              # a one-task group
    grp_end(stream)
    mh = end(stream)
    dev, mid = 0, m.id
    a, b = m.streams[0], m.streams[1]
    g0 = m.task_groups[0].entries
    # A holds NOPs 0-7, kernels 8-13, then the STREAM_ACTIVE (14); B continues from position 0
    assert [p for c, p in g0 if c is a] == list(range(8, 14))
    assert [p for c, p in g0 if c is b] == list(range(0, 6))

    def ln(i, cs, pos):
        return (f"device_id={dev}, model_id={mid}, taskGroupId={i}, stream_id={cs.id}, "
                f"task_id={pos}.")
    lines = _grp_lines(caplog, mh)
    last = m.task_groups[2].entries[0]
    assert lines == [
        ln(0, a, 8), ln(0, a, 13), ln(0, b, 0), ln(0, b, 5),   # first, both sides, last
        f"device_id={dev}, model_id={mid}, taskGroupId=1 is empty.",
        ln(2, last[0], last[1]),                              # one entry: printed once
    ]
    run(mh, stream)
    assert u32(x)[0] == 24


def test_debug_print_group_lines_three_streams(stream, caplog):
    x = new_buf()
    mh = begin(stream)
    m = model(mh)
    m.cascade_at = 10
    grp_begin(stream)                                      # NOPs 0-7 on A
    for _ in range(14):                                    # A: 8,9 | B: 0-9 | C: 0,1
        KL(stream, "EasyOPf", x)
    grp_end(stream)
    mh = end(stream)
    a, b, c = m.streams[:3]
    lines = _grp_lines(caplog, mh)
    got = [(ln.split("stream_id=")[1].split(",")[0], int(ln.split("task_id=")[1][:-1]))
           for ln in lines]
    ids = {a.id: "A", b.id: "B", c.id: "C"}
    got = [(ids[int(s)], t) for s, t in got]
    assert got == [("A", 8), ("A", 9), ("B", 0), ("B", 9), ("C", 0), ("C", 1)]
