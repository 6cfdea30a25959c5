"""Task update: ``aclmdlRICaptureTaskUpdateBegin`` / ``aclmdlRICaptureTaskUpdateEnd`` and the kernel
launches in between (``spec/aclgraph.md`` §7; ``spec/landscape.md`` §4.2-4.4).

Each launch on an updating stream takes the group's next task and enqueues an SQE_UPDATE on that
stream; the captured SQE changes when the update stream *runs* it. So an update that is not
ordered before a replay is observed stale, and an external event (record on the update stream,
wait on the replay stream or inside the graph) makes the new arguments visible — both shown here,
with the SQE_UPDATE in the device trace.
"""
from __future__ import annotations

import numpy as np
import pytest

import npusim
from npusim import acl
from npusim import errors as E
from npusim.runtime import api_mdl
from npusim.runtime.runtime import RT

from helpers.acl import LONG_NS, in_fresh_thread, stream_done
from helpers.capture import (OK, begin, chip, end, model, new_buf, new_event, new_stream,  # noqa: F401
                          no_acl_graph, run)
from helpers.taskgroup import (AIC_KERNEL, AICPU_KERNEL, KL, external_event, grp_begin, grp_end, kl,
                            register_test_kernels, tasks_of, model_streams, upd_begin, upd_end,
                            update, u32)

STATUS = E.ACL_ERROR_STREAM_TASK_GROUP_STATUS


def one_kernel_graph(s, x, kernel: str = "EasyOPf", blocks: int = 1):
    """Capture ``kernel(x)`` in a task group on ``s``: (model handle, group handle)."""
    begin(s)
    grp_begin(s)
    KL(s, kernel, x, blocks=blocks)
    g = grp_end(s)
    return end(s), g


def kernel_args(mh, index: int = -1):
    """(kernel id, args address, numBlocks) of the captured kernel tasks, read through
    aclmdlRITaskGetParams (what the SQE holds now)."""
    out = []
    for t in tasks_of(model_streams(mh)[0]):
        p, ret = acl.mdl.ri_task_get_params(t)
        if ret == OK and p["type"] == acl.ACL_MODEL_RI_TASK_KERNEL:
            out.append((p["args"], p["num_blocks"]))
    return out[index] if index is not None else out


# ---- TaskUpdateBegin check order ----
def test_update_begin_checks_chip(dev0, no_acl_graph):
    s = new_stream()
    assert acl.mdl.ri_capture_task_update_begin(s, 0x1234) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert acl.mdl.ri_capture_task_update_end(s) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT


def test_update_begin_check_order(stream):
    x = new_buf()
    mh, g = one_kernel_graph(stream, x)
    u = new_stream()
    gone = new_stream()
    assert acl.rt.destroy_stream(gone) == OK
    # ACL NULL checks come first (the capturing stream below would say 107027)
    assert acl.mdl.ri_capture_task_update_begin(None, g) == E.ACL_ERROR_INVALID_PARAM
    assert acl.mdl.ri_capture_task_update_begin(u, None) == E.ACL_ERROR_INVALID_PARAM
    assert acl.mdl.ri_capture_task_update_begin(gone, g) == E.ACL_ERROR_RT_INVALID_HANDLE
    cap = new_stream()
    begin(cap)
    assert acl.mdl.ri_capture_task_update_begin(cap, g) == E.ACL_ERROR_RT_STREAM_CAPTURED
    (cs,) = model_streams(mh)                              # a model stream (aclmdlRIGetStreams)
    assert acl.mdl.ri_capture_task_update_begin(cs, g) == E.ACL_ERROR_RT_STREAM_MODEL
    assert in_fresh_thread(acl.mdl.ri_capture_task_update_begin, u, g) == \
        E.ACL_ERROR_RT_CONTEXT_NULL
    ctx1, _ = acl.rt.get_current_context()
    ctx2, _ = acl.rt.create_context(0)
    assert acl.mdl.ri_capture_task_update_begin(u, g) == E.ACL_ERROR_RT_STREAM_CONTEXT
    assert acl.rt.set_current_context(ctx1) == OK
    upd_begin(u, g)
    assert acl.mdl.ri_capture_task_update_begin(u, g) == STATUS      # u already updating
    u2 = new_stream()
    assert acl.mdl.ri_capture_task_update_begin(u2, g) == STATUS     # g updated by u
    KL(u, "EasyOPf", x)
    upd_end(u)
    upd_begin(u2, g)                                       # free again once u ended
    KL(u2, "EasyOPf", x)
    upd_end(u2)
    acl.mdl.ri_capture_end(cap)
    assert acl.rt.destroy_context(ctx2) == OK


def test_update_begin_on_sampling_stream_is_107027(stream):
    """A stream with a group open is capturing: the decorator's 107027 comes before 107033."""
    x = new_buf()
    mh, g = one_kernel_graph(new_stream(), x)
    begin(stream)
    grp_begin(stream)
    assert acl.mdl.ri_capture_task_update_begin(stream, g) == E.ACL_ERROR_RT_STREAM_CAPTURED


def test_update_begin_bad_or_dead_group(stream):
    x = new_buf()
    u = new_stream()
    # the runtime takes the handle as a raw pointer; the simulator refuses what is not a group
    assert acl.mdl.ri_capture_task_update_begin(u, new_event()) == E.ACL_ERROR_RT_PARAM_INVALID
    mh, g = one_kernel_graph(stream, x)
    assert acl.mdl.ri_destroy(mh) == OK
    # a group of a destroyed model is freed memory in the runtime: refused, the stream stays NONE
    assert acl.mdl.ri_capture_task_update_begin(u, g) == E.ACL_ERROR_RT_PARAM_INVALID
    assert acl.mdl.ri_capture_task_update_end(u) == STATUS


def test_model_destroyed_mid_update(stream):
    x, y = new_buf(), new_buf()
    mh, g = one_kernel_graph(stream, x)
    u = new_stream()
    upd_begin(u, g)
    assert acl.mdl.ri_destroy(mh) == OK
    # UpdateTask cannot find the captured task any more: RT_ERROR_STREAM_TASKGRP_UPDATE
    assert kl(u, "EasyOPf", y) == E.ACL_ERROR_RT_INTERNAL_ERROR
    assert acl.mdl.ri_capture_task_update_end(u) == E.ACL_ERROR_RT_INTERNAL_ERROR


# ---- TaskUpdateEnd check order ----
def test_update_end_check_order(stream):
    x = new_buf()
    mh, g = one_kernel_graph(stream, x)
    u = new_stream()
    gone = new_stream()
    assert acl.rt.destroy_stream(gone) == OK
    assert acl.mdl.ri_capture_task_update_end(None) == E.ACL_ERROR_INVALID_PARAM
    assert acl.mdl.ri_capture_task_update_end(gone) == E.ACL_ERROR_RT_INVALID_HANDLE
    cap = new_stream()
    begin(cap)
    assert acl.mdl.ri_capture_task_update_end(cap) == E.ACL_ERROR_RT_STREAM_CAPTURED
    (cs,) = model_streams(mh)
    assert acl.mdl.ri_capture_task_update_end(cs) == E.ACL_ERROR_RT_STREAM_MODEL
    assert acl.mdl.ri_capture_task_update_end(u) == STATUS              # not updating
    upd_begin(u, g)
    KL(u, "EasyOPf", x)
    assert in_fresh_thread(acl.mdl.ri_capture_task_update_end, u) == E.ACL_ERROR_RT_CONTEXT_NULL
    upd_end(u)
    assert acl.mdl.ri_capture_task_update_end(u) == STATUS              # back to NONE
    acl.mdl.ri_capture_end(cap)


# ---- counts: too few / too many ----
def test_too_few_updates_is_507000_at_end_and_releases_the_group(stream):
    x = new_buf()
    begin(stream)
    grp_begin(stream)
    KL(stream, "EasyOPf", x)
    KL(stream, "EasyOPf", x)
    g = grp_end(stream)
    mh = end(stream)
    u = new_stream()
    upd_begin(u, g)
    KL(u, "ShortOPf", x)
    assert acl.mdl.ri_capture_task_update_end(u) == E.ACL_ERROR_RT_INTERNAL_ERROR
    # the stream is back to NONE and the group is free: a new update starts from its first task
    upd_begin(u, g)
    KL(u, "ShortOPf", x)
    KL(u, "ShortOPf", x)
    upd_end(u)
    assert acl.rt.synchronize_stream(u) == OK
    assert acl.rt.memset(x, 4, 0, 4) == OK
    run(mh, stream)
    assert u32(x)[0] == 0                                  # 0 * 2 * 2


def test_zero_updates_of_a_nonempty_group_is_507000(stream):
    """The dev guide's loop 0 (TaskUpdateBegin + TaskUpdateEnd with no launch) fails this way."""
    x = new_buf()
    mh, g = one_kernel_graph(stream, x)
    u = new_stream()
    upd_begin(u, g)
    assert acl.mdl.ri_capture_task_update_end(u) == E.ACL_ERROR_RT_INTERNAL_ERROR


def test_empty_group_updates_with_no_launch(stream):
    begin(stream)
    grp_begin(stream)
    g = grp_end(stream)
    end(stream)
    u = new_stream()
    update(u, g, [])
    upd_begin(u, g)
    assert kl(u, "EasyOPf", new_buf()) == E.ACL_ERROR_RT_INTERNAL_ERROR   # nothing to update
    upd_end(u)


def test_too_many_updates_is_507000_on_the_launch(stream):
    x, y = new_buf(), new_buf()
    mh, g = one_kernel_graph(stream, x)
    u = new_stream()
    upd_begin(u, g)
    KL(u, "EasyOPf", y)
    tail = RT.handles.get("stream", u)[0].tail
    assert kl(u, "EasyOPf", y) == E.ACL_ERROR_RT_INTERNAL_ERROR
    assert RT.handles.get("stream", u)[0].tail == tail     # nothing enqueued
    upd_end(u)                                             # the count matches
    assert acl.rt.synchronize_stream(u) == OK
    run(mh, stream)
    assert (u32(x)[0], u32(y)[0]) == (0, 1)


# ---- type rules ----
@pytest.mark.parametrize("captured,new", [("EasyOPf", AIC_KERNEL), (AIC_KERNEL, "EasyOPf")])
def test_kernel_type_mismatch_is_507000_and_uses_up_the_entry(stream, captured, new):
    register_test_kernels()
    x, y = new_buf(), new_buf()
    mh, g = one_kernel_graph(stream, x, captured)
    u = new_stream()
    upd_begin(u, g)
    assert kl(u, new, y) == E.ACL_ERROR_RT_INTERNAL_ERROR          # RT_ERROR_KERNEL_TYPE
    # Stream::UpdateTask advanced the index before the type check: the group counts as
    # fully updated and a further launch has no task left
    assert kl(u, captured, y) == E.ACL_ERROR_RT_INTERNAL_ERROR
    upd_end(u)
    assert acl.rt.synchronize_stream(u) == OK
    run(mh, stream)
    assert (u32(x)[0], u32(y)[0]) == (1, 0)                # the captured task is unchanged


@pytest.mark.parametrize("what", ["memcpy_async", "memset_async", "event_record",
                                  "aicpu_kernel"])
def test_non_kernel_task_on_updating_stream_is_507009(stream, what):
    register_test_kernels()
    x, y = new_buf(), new_buf()
    mh, g = one_kernel_graph(stream, x)
    u = new_stream()
    upd_begin(u, g)
    if what == "memcpy_async":
        code = acl.rt.memcpy_async(y, 4, x, 4, acl.ACL_MEMCPY_DEVICE_TO_DEVICE, u)
    elif what == "memset_async":
        code = acl.rt.memset_async(y, 4, 7, 4, u)
    elif what == "event_record":
        code = acl.rt.record_event(new_event(), u)
    else:
        code = kl(u, AICPU_KERNEL, y)
    assert code == E.ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT
    KL(u, "EasyOPf", y)                                    # the entry was not used up
    upd_end(u)
    assert acl.rt.synchronize_stream(u) == OK
    assert u32(y)[0] == 0                                  # the refused task did not run
    run(mh, stream)
    assert (u32(x)[0], u32(y)[0]) == (0, 1)


def test_310p_update_is_207019(chip):
    """Classic (no SW-SQ) chips: the simulator takes the TS as lacking
    TS_FEATURE_CAPTURE_SQE_UPDATE, so a NO_MIX kernel update is 207019 (after the entry)."""
    chip("Ascend310P")
    s = new_stream()
    x, y = new_buf(), new_buf()
    mh, g = one_kernel_graph(s, x)
    u = new_stream()
    upd_begin(u, g)
    assert kl(u, "EasyOPf", y) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT_UPDATE_OP
    upd_end(u)
    run(mh, s)
    assert (u32(x)[0], u32(y)[0]) == (1, 0)


def test_updating_stream_that_starts_capturing(stream):
    """Capture begin does not look at the task-group status; the launch then reaches the update
    path, takes the entry and is refused by the re-init (107027); TaskUpdateEnd on the
    capturing stream is 107027 too."""
    x, y = new_buf(), new_buf()
    mh, g = one_kernel_graph(stream, x)
    u = new_stream()
    upd_begin(u, g)
    assert acl.mdl.ri_capture_begin(u, acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED) == OK
    assert kl(u, "EasyOPf", y) == E.ACL_ERROR_RT_STREAM_CAPTURED
    assert acl.mdl.ri_capture_task_update_end(u) == E.ACL_ERROR_RT_STREAM_CAPTURED
    end(u)                                                 # an empty graph (nothing captured)
    upd_end(u)                                             # not capturing any more: 0 (entry used)
    run(mh, stream)
    assert (u32(x)[0], u32(y)[0]) == (1, 0)                # the captured task is unchanged


# ---- what an update changes ----
def test_update_changes_kernel_args_and_blocks(stream):
    x, y = new_buf(), new_buf()
    begin(stream)
    grp_begin(stream)
    KL(stream, "EasyOPf", x)
    KL(stream, "EasyOPf", x)
    KL(stream, "EasyOPf", x)
    g = grp_end(stream)
    KL(stream, "EasyOPf", x)                               # outside the group: unchanged
    mh = end(stream)
    u = new_stream()
    upd_begin(u, g)
    KL(u, "ShortOPf", y)                                   # another kernel of the same type
    KL(u, "EasyOPf", y, blocks=4)                          # more blocks
    KL(u, "EasyOPf", x)
    upd_end(u)
    assert acl.rt.synchronize_stream(u) == OK
    assert acl.rt.memset(y, 64, 0, 64) == OK
    run(mh, stream)
    assert u32(x)[0] == 2
    assert list(u32(y, 5)) == [1, 1, 1, 1, 0]              # (0*2)+1 on blocks 0-3
    assert [b for _, b in kernel_args(mh, None)] == [1, 4, 1, 1]


def test_update_of_a_group_spanning_a_cascade(stream):
    x, y = new_buf(), new_buf()
    m = model(begin(stream))
    m.cascade_at = 12
    grp_begin(stream)
    for _ in range(10):
        KL(stream, "EasyOPf", x)
    g = grp_end(stream)
    mh = end(stream)
    assert len(m.streams) == 2
    u = new_stream()
    update(u, g, [("EasyOPf", y)] * 10)
    assert acl.rt.synchronize_stream(u) == OK
    run(mh, stream)
    assert (u32(x)[0], u32(y)[0]) == (0, 10)


def test_update_is_not_done_when_update_end_returns(stream):
    """'Success does not mean the update has executed' (§7): the SQE changes when the update
    stream runs the SQE_UPDATE."""
    x, y, z = new_buf(), new_buf(), new_buf()
    mh, g = one_kernel_graph(stream, x)
    u = new_stream()
    KL(u, "LongOPf", z)                                    # the update stream is busy
    before = kernel_args(mh)
    update(u, g, [("EasyOPf", y)])
    assert kernel_args(mh) == before                       # not applied yet
    assert not stream_done(u)
    assert acl.rt.synchronize_stream(u) == OK
    assert kernel_args(mh) != before


def test_update_repeatedly_with_sync(stream):
    bufs = [new_buf() for _ in range(4)]
    mh, g = one_kernel_graph(stream, bufs[0])
    u = new_stream()
    for i in range(8):
        update(u, g, [("EasyOPf", bufs[i % 4])])
        assert acl.rt.synchronize_stream(u) == OK
        run(mh, stream)
    assert [int(u32(b)[0]) for b in bufs] == [2, 2, 2, 2]


def test_host_cost_per_updated_task(stream):
    x = new_buf()
    begin(stream)
    grp_begin(stream)
    for _ in range(5):
        KL(stream, "EasyOPf", x)
    g = grp_end(stream)
    end(stream)
    u = new_stream()
    upd_begin(u, g)
    t = RT.profile.timing.host_task_update_ns
    for _ in range(5):
        h0 = RT.host_ns
        KL(u, "EasyOPf", x)
        assert RT.host_ns - h0 == t                        # one SQE rebuilt + queued
    upd_end(u)


# ---- ordering: the pair ----
def _trace_rows(dev, since: int = 0):
    t = dev.trace()
    return [(t.stream_names.get(int(r["sq"])), t.name_of(r), int(r["start"]), int(r["end"]))
            for r in t.rows[since:]]


def test_unordered_update_is_observed_stale():
    """No event between the update and the replay: the update stream is busy behind LongOPf,
    so the replay runs the captured (old) arguments although the host issued the update first;
    the new arguments show only in a later replay. The trace shows the SQE_UPDATE on the update
    stream after the replay's kernel."""
    npusim.configure(trace=True)
    try:
        dev = npusim.Device()
        s, u = new_stream(), new_stream()
        old, new, busy = new_buf(), new_buf(), new_buf()
        mh, g = one_kernel_graph(s, old)
        KL(u, "LongOPf", busy)
        update(u, g, [("EasyOPf", new)])                   # host: update first ...
        assert acl.mdl.ri_execute_async(mh, s) == OK       # ... then the replay
        assert acl.rt.synchronize_stream(s) == OK
        assert (u32(old)[0], u32(new)[0]) == (1, 0)        # stale arguments observed
        assert not stream_done(u)                          # the update has not run yet
        assert acl.rt.synchronize_stream(u) == OK
        run(mh, s)
        assert (u32(old)[0], u32(new)[0]) == (1, 1)        # the next replay sees the update
        rows = _trace_rows(dev)
        upd = [r for r in rows if r[1] == "SQE_UPDATE"]
        assert len(upd) == 1 and upd[0][0].startswith("stream ")   # on the user update stream
        kernels = [r for r in rows if r[1] == "EasyOPf"]
        assert [r[0].startswith("capture stream") for r in kernels] == [True, True]
        assert kernels[0][3] <= upd[0][2] < kernels[1][2]  # between the two replays
        assert upd[0][2] >= LONG_NS                        # behind LongOPf
    finally:
        npusim.configure(trace=False)


@pytest.mark.parametrize("how", ["wait_on_replay_stream", "wait_inside_graph"])
def test_event_ordered_update_is_observed(how):
    """An external event orders the update before the replay: recorded on the update stream
    after TaskUpdateEnd, waited either by the replay stream before the launch (eager) or by the
    graph itself before the group (the dev guide / torch_npu ExternalEvent pattern)."""
    npusim.configure(trace=True)
    try:
        dev = npusim.Device()
        s, u = new_stream(), new_stream()
        old, new, busy = new_buf(), new_buf(), new_buf()
        if how == "wait_on_replay_stream":
            e = new_event()
            mh, g = one_kernel_graph(s, old)
        else:
            e = external_event()
            begin(s)
            assert acl.rt.stream_wait_event(s, e) == OK    # captured wait
            assert acl.rt.reset_event(e, s) == OK          # captured reset (next replay waits)
            grp_begin(s)
            KL(s, "EasyOPf", old)
            g = grp_end(s)
            mh = end(s)
        KL(u, "LongOPf", busy)
        update(u, g, [("EasyOPf", new)])
        assert acl.rt.record_event(e, u) == OK
        if how == "wait_on_replay_stream":
            assert acl.rt.stream_wait_event(s, e) == OK
        assert acl.mdl.ri_execute_async(mh, s) == OK
        assert acl.rt.synchronize_stream(s) == OK
        assert (u32(old)[0], u32(new)[0]) == (0, 1)        # the new arguments observed
        rows = _trace_rows(dev)
        upd = next(r for r in rows if r[1] == "SQE_UPDATE")
        kern = next(r for r in rows if r[1] == "EasyOPf")
        assert upd[0].startswith("stream ") and kern[0].startswith("capture stream")
        assert LONG_NS <= upd[3] <= kern[2]                # update, then the kernel
    finally:
        npusim.configure(trace=False)


def test_dev_guide_loop_with_captured_external_event(stream):
    """Replays in a loop, each preceded by an update of the group on the update stream and a
    record of the external event the graph waits on; no host sync between update and replay."""
    e = external_event()
    bufs = [new_buf() for _ in range(3)]
    busy = new_buf()
    begin(stream)
    assert acl.rt.stream_wait_event(stream, e) == OK
    assert acl.rt.reset_event(e, stream) == OK
    grp_begin(stream)
    KL(stream, "EasyOPf", bufs[0])
    g = grp_end(stream)
    mh = end(stream)
    u = new_stream()
    for i in range(6):
        assert acl.mdl.ri_execute_async(mh, stream) == OK  # launched before the update
        KL(u, "LongOPf", busy)
        update(u, g, [("EasyOPf", bufs[i % 3])])
        assert acl.rt.record_event(e, u) == OK
    assert acl.rt.synchronize_stream(stream) == OK
    assert [int(u32(b)[0]) for b in bufs] == [2, 2, 2]


def test_update_overruns_the_previous_replay_without_a_done_event(stream):
    """The other half of the ordering (vllm-ascend's "CPU records the event before the previous
    replay finishes"): the graph's external-event wait orders update -> replay, but nothing
    orders replay i -> update i+1. Replay 1 passes its wait (update 1's record) and is still in
    the long operator before the group when update 2's SQE_UPDATE lands, so replay 1 runs
    update 2's arguments and update 1 is never observed. Waiting on the update stream for an
    event recorded after each replay fixes it (test_pythonic_task_group_and_update)."""
    e = external_event()
    q, k, busy = new_buf(), new_buf(), new_buf()
    begin(stream)
    assert acl.rt.stream_wait_event(stream, e) == OK
    assert acl.rt.reset_event(e, stream) == OK
    KL(stream, "LongOPf", busy)                            # the layers before the updated one
    grp_begin(stream)
    KL(stream, "EasyOPf", q)
    g = grp_end(stream)
    mh = end(stream)
    u = new_stream()
    for target in (q, k):
        update(u, g, [("EasyOPf", target)])
        assert acl.rt.record_event(e, u) == OK
        assert acl.mdl.ri_execute_async(mh, stream) == OK
    assert acl.rt.synchronize_stream(stream) == OK
    assert (u32(q)[0], u32(k)[0]) == (0, 2)


# ---- the Pythonic API (torch_npu NPUGraph shape) ----
def test_pythonic_task_group_and_update():
    dev = npusim.Device()
    s, u = dev.stream(), dev.stream()
    q, k = dev.malloc(64).fill(0), dev.malloc(64).fill(0)
    ev = dev.event(acl.ACL_EVENT_EXTERNAL, kind="flag")
    with npusim.graph(stream=s) as gr:
        s.wait(ev)
        _ok(acl.rt.reset_event(ev.handle, s.handle))
        npusim.graph_task_group_begin(s)
        s.launch("EasyOPf", 1, (q,))
        handle = npusim.graph_task_group_end(s)
    assert handle
    done = dev.event()                                     # "previous replay finished"
    for target in (q, k, k):
        u.wait(done)                                       # don't rewrite a task still to run
        npusim.graph_task_update_begin(u, handle)
        u.launch("EasyOPf", 1, (target,))
        npusim.graph_task_update_end(u)
        u.record(ev)
        gr.replay(s)
        s.record(done)
    s.synchronize()
    assert (int(q.read(np.uint32, 1)[0]), int(k.read(np.uint32, 1)[0])) == (1, 2)
    with pytest.raises(npusim.AclError) as ei:
        npusim.graph_task_update_end(u)
    assert ei.value.code == STATUS
    npusim.graph_task_update_begin(u, handle)
    with pytest.raises(npusim.AclError) as ei:
        npusim.graph_task_update_end(u)                    # too few
    assert ei.value.code == E.ACL_ERROR_RT_INTERNAL_ERROR
    with pytest.raises(npusim.AclError) as ei:
        npusim.graph_task_group_begin(s)                   # not capturing
    assert ei.value.code == E.ACL_ERROR_RT_STREAM_NOT_CAPTURED


def _ok(code):
    assert code == OK, code


def test_capture_stream_handle_helper_is_model_stream(stream):
    """(sanity for the 107005 tests: aclmdlRIGetStreams hands out model streams)"""
    x = new_buf()
    mh, g = one_kernel_graph(stream, x)
    m = model(mh)
    assert model_streams(mh) == [api_mdl.capture_stream_handle(m.streams[0])]


def test_payload_ring_reuse_waits_for_the_update_stream(stream, monkeypatch):
    """The rebuilt SQEs wait in a ring until the update stream copies them; a slot is reused
    only after the SQE_UPDATE reading it has run (the host waits, as for a full stream)."""
    from npusim.runtime import device as D
    monkeypatch.setattr(D, "PAYLOAD_DEPTH", 4)             # before the device makes its ring
    x, y, busy = new_buf(), new_buf(), new_buf()
    begin(stream)
    grp_begin(stream)
    for _ in range(10):
        KL(stream, "EasyOPf", x)
    g = grp_end(stream)
    mh = end(stream)
    u = new_stream()
    KL(u, "LongOPf", busy)
    h0 = RT.host_ns
    update(u, g, [("EasyOPf", y)] * 10)
    assert RT.host_ns - h0 >= LONG_NS                      # the 5th update waited for LongOPf
    assert acl.rt.synchronize_stream(u) == OK
    run(mh, stream)
    assert (u32(x)[0], u32(y)[0]) == (0, 10)
