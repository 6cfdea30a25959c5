"""Task groups and task update (``spec/aclgraph.md`` §7).

A task group is a list of (capture stream, position) of the kernel tasks captured between
``aclmdlRICaptureTaskGrpBegin`` and ``...End`` (after ``taskPrefetchCount`` NOPs the begin call
captures, so prefetched SQEs can still be rewritten). ``aclmdlRICaptureTaskUpdateBegin`` on a
*non-capturing* stream then turns the next kernel launches on that stream into updates of the
group's tasks, in order: each launch builds the new SQE and enqueues an ``SQE_UPDATE`` on the
update stream, which copies it over the captured SQE **when the update stream runs it** — so an
update that is not ordered before a replay (no event) is observed stale, as on the device.

The SQs whose rows an ``SQE_UPDATE`` may rewrite never run ahead of the others (the engine's
``Q_EXACT``, ``engine/loop.py`` "run-ahead"): a group's capture streams are marked when it is
closed, and every SQ an update or a rewrite targets when the update is queued.
"""
from __future__ import annotations

from .. import errors as ERR
from ..device import engine as E
from ..device import sqe as S
from ..device.sqe import SQE_STRUCT
from ..device.kernels import TABLE, UNIT_AICPU
from . import model as M
from .recording import site
from .runtime import RT, profile
from .stream import lookup, resolve_same_ctx

NONE, SAMPLE, UPDATE = 0, 1, 2


class TaskGroup:
    def __init__(self):
        self.entries: list[tuple] = []       # (capture stream, position)
        self.is_update = False
        self.update_index = 0
        self.handle = 0
        self.model = None                    # the capture model owning the group
        self.updater = None                  # the stream updating it (between Begin and End)
        self.update_site = None              # the source line of that aclmdlRICaptureTaskUpdateBegin
        self.ended_site = None               # ... and of the last update's End

    def describe(self) -> str:
        return f"task group 0x{self.handle:x} ({len(self.entries)} task(s))"

    def since(self) -> str:
        return f" since {self.update_site}" if self.update_site is not None else ""

    def submit_update(self, stream, op: int, a0=0, a1=0, a2=0, a3=0, flag=0, blocks=0) -> int:
        """``Stream.submit`` of a stream updating this group: ``update_task``."""
        return update_task(stream, op, a0, a1, a2, a3, flag, blocks)

    def debug_lines(self, dev_id: int, model_id: int, index: int) -> list[str]:
        """The task-group lines of aclmdlRIDebugPrint: first, last, and both sides of every
        change of stream (§10)."""
        if not self.entries:
            return [f"device_id={dev_id}, model_id={model_id}, taskGroupId={index} is empty."]
        keep = {0, len(self.entries) - 1}
        for i in range(1, len(self.entries)):
            if self.entries[i][0] is not self.entries[i - 1][0]:
                keep |= {i - 1, i}
        return [f"device_id={dev_id}, model_id={model_id}, taskGroupId={index}, "
                f"stream_id={self.entries[i][0].id}, task_id={self.entries[i][1] & 0xFFFF}."
                for i in sorted(keep)]


def _status(stream) -> int:
    """The task-group status of a user stream (a model's own stream has none)."""
    return NONE if stream.is_model else stream.tg_status


# ---- hooks called while capturing and submitting ----
def before_capture(stream, link, op: int) -> int:
    """IsTaskGroupBreak: a task on a capture stream without a group while the model has one open
    -> 107034, sticky on the model, capture invalidated. Returns 0 or the code."""
    model = link.model
    if model.taskgrp_streams and link.cstream.task_group is None:
        # §7 SetTaskGroupErrCode *stores* the code (the last violation wins; read at TaskGrpEnd)
        model.taskgrp_err = ERR.ACL_ERROR_STREAM_TASK_GROUP_INTR
        model.terminate_capture()
        return ERR.ACL_ERROR_STREAM_TASK_GROUP_INTR
    return ERR.ACL_SUCCESS


def packable(cs, op: int, a0: int) -> int:
    """PackingTaskGroup: only AI Core / vector kernels may join an open group (STREAM_ACTIVE of a
    cascade is skipped); anything else -> 507009, sticky, capture invalidated."""
    if cs.task_group is None or op == S.OP_STREAM_ACTIVE:
        return ERR.ACL_SUCCESS
    if op == S.OP_KERNEL and TABLE.entries[a0].unit != UNIT_AICPU:
        return ERR.ACL_SUCCESS
    model = cs.model
    model.taskgrp_err = ERR.ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT     # stored, last wins (§7)
    model.terminate_capture()
    return ERR.ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT


def packed(cs, op: int, pos: int) -> None:
    if cs.task_group is not None and op == S.OP_KERNEL:
        cs.task_group.entries.append((cs, pos))


def _exact(state, sq: int) -> None:
    """SQ ``sq``'s rows may be rewritten in stream order by an SQE_UPDATE: it never runs ahead,
    and each of its SQEs is ordered like a synchronization (``engine.Q_EXACT``)."""
    if 0 <= sq < len(state.sqs):
        state.sqs[sq, E.Q_EXACT] = 1


def update_task(stream, op: int, a0=0, a1=0, a2=0, a3=0, flag=0, blocks=0) -> int:
    """A launch on a stream in task-update mode: rewrite the group's next task. Returns the
    update SQE's position on the update stream, or a negative code."""
    g = stream.tg_update
    if op != S.OP_KERNEL or TABLE.entries[a0].unit == UNIT_AICPU:
        # §7: only AI Core / vector kernel launches (flag SUPPORT) update; an AI CPU kernel is
        # another task type (KERNEL_AICPU) -> 507009, like any non-kernel task
        what = "an AI CPU kernel" if op == S.OP_KERNEL else f"a task of type {S.OP_NAME.get(op, op)}"
        RT.tls.explain(f"{stream.describe()} is in task-update mode for {g.describe()}"
                       f"{g.since()}: {what} cannot update a task; only AI Core / vector kernel "
                       f"launches are allowed until aclmdlRICaptureTaskUpdateEnd")
        return -ERR.ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT
    if g.update_index >= len(g.entries):
        n = len(g.entries)
        RT.tls.explain(f"task update: this is kernel launch {g.update_index + 1} on "
                       f"{stream.describe()} since aclmdlRICaptureTaskUpdateBegin"
                       f"{g.since().replace(' since', ' at')}, but task group 0x{g.handle:x} "
                       f"captured {n} task(s): "
                       f"expected {n} launch(es), got {g.update_index + 1} "
                       f"(RT_ERROR_STREAM_TASKGRP_UPDATE) — launch exactly one kernel per captured "
                       f"task between Begin and End, then end the update")
        return -ERR.ACL_ERROR_RT_INTERNAL_ERROR             # RT_ERROR_STREAM_TASKGRP_UPDATE
    cs, pos = g.entries[g.update_index]
    if cs.model.destroyed:
        # the captured task no longer exists (model destroyed mid-update): UpdateTask's "task not
        # found" branch, RT_ERROR_STREAM_TASKGRP_UPDATE -> 507000; its freed ring is not touched
        RT.tls.explain("task update: the group's model was destroyed during the update")
        return -ERR.ACL_ERROR_RT_INTERNAL_ERROR
    # §7: the launch *takes* the next group entry (Stream::UpdateTask advances the index) before
    # the new kernel is checked against it, so a refused launch (capturing stream, type mismatch,
    # 207019) still uses up its entry: TaskUpdateEnd then counts it as updated.
    g.update_index += 1
    if stream.capture is not None:
        # a stream that began capturing while in UPDATE: the re-init refuses it (§7, 107027)
        RT.tls.explain(f"{stream.describe()} began a capture while updating {g.describe()}"
                       f"{g.since()}: end the capture and the update before launching")
        return -ERR.ACL_ERROR_RT_STREAM_CAPTURED
    st = stream.device.state
    st.flush(cs.sq)                      # only the captured ring is read (usually nothing staged)
    dst = cs.ring_base() + pos           # a capture stream never wraps (model.py)
    # the captured SQE's fields (struct, not a numpy record: ~10x cheaper per task)
    old = SQE_STRUCT.unpack_from(st.pool, 64 * dst)
    _, old_flag, _, old_task_id, old_kid = old[:5]
    if TABLE.entries[a0].unit != TABLE.entries[old_kid].unit:
        RT.tls.explain("task update: the new kernel runs on another core type than the captured "
                       "one (RT_ERROR_KERNEL_TYPE): update an AI Core task with an AI Core "
                       "kernel, a vector task with a vector kernel")
        return -ERR.ACL_ERROR_RT_INTERNAL_ERROR             # RT_ERROR_KERNEL_TYPE
    if not stream.device.profile.software_sq:
        return -ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT_UPDATE_OP
    pay = stream.device.update_payload()
    # a5 (the analysis site of the captured task) stays: a race report names the captured line
    src, slot = pay.stage((S.OP_KERNEL, old_flag, blocks & 0xFFFF, old_task_id, a0, a1, a2, a3,
                          0, old[9], 0))
    _exact(st, cs.sq)
    stream.tg_update = None                                # submit the copy as a plain task
    try:
        p = stream.submit(S.OP_SQE_UPDATE, stream.device.timing.host_task_update_ns,
                          a0=src, a1=dst, a2=cs.sq)
    finally:
        stream.tg_update = g
    if p >= 0:
        pay.users[slot] = (stream.sq, p + 1)
    return p


def rewrite_task(stream, cs, pos: int, a0: int, a1: int) -> int:
    """Rewrite operands a0 / a1 of the captured task at ``pos`` of capture stream ``cs`` in
    ``stream``'s order: an SQE_UPDATE on ``stream`` copies the rebuilt SQE (same opcode, flag,
    task id and other operands) over it when it runs, like a task update. Used at every launch
    of a graph with external events (§9.4: the runtime's refresh table, written by an async copy
    on the launch stream). Returns the SQE_UPDATE's position or a negative code."""
    st = stream.device.state
    st.flush(cs.sq)
    dst = cs.ring_base() + pos
    row = list(SQE_STRUCT.unpack_from(st.pool, 64 * dst))
    row[4], row[5] = a0, a1
    row[-1] = 0                                            # t_submit: 0 in models
    pay = stream.device.update_payload()
    src, slot = pay.stage(tuple(row))
    _exact(st, cs.sq)
    p = stream.submit(S.OP_SQE_UPDATE, 0, a0=src, a1=dst, a2=cs.sq)
    if p >= 0:
        pay.users[slot] = (stream.sq, p + 1)
    return p


# ---- APIs (§7) ----
def _feature() -> int:
    return ERR.ACL_SUCCESS if profile().acl_graph else ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT


def ri_capture_task_grp_begin(stream) -> int:
    if not stream:
        return ERR.ACL_ERROR_INVALID_PARAM
    code = _feature()
    if code:
        return code
    s, code = lookup(stream)
    if code:
        return code
    if s.capture is None:
        return ERR.ACL_ERROR_RT_STREAM_NOT_CAPTURED
    s, code = resolve_same_ctx(s)
    if code:
        return code
    if _status(s) != NONE:
        return ERR.ACL_ERROR_STREAM_TASK_GROUP_STATUS
    model = s.capture.model
    # the prefetch NOPs (Stream.submit of each: no group is open on s, so its capture takes
    # them; one call for all of them)
    p = s.capture.submit_nops(s, s.device.profile.task_prefetch_count)
    if p < 0:
        return -p
    if s.capture is None or s.capture.model is not model:
        return ERR.ACL_ERROR_STREAM_CAPTURE_CONFLICT
    g = TaskGroup()
    g.model = model
    s.tg_status = SAMPLE
    s.capture.cstream.task_group = g
    model.taskgrp_streams.add(s.capture.cstream)
    return ERR.ACL_SUCCESS


def ri_capture_task_grp_end(stream):
    """(task-group handle or None, code)."""
    if not stream:
        return None, ERR.ACL_ERROR_INVALID_PARAM
    code = _feature()
    if code:
        return None, code
    s, code = lookup(stream)
    if code:
        return None, code
    if s.capture is None:
        return None, ERR.ACL_ERROR_RT_STREAM_NOT_CAPTURED
    s, code = resolve_same_ctx(s)
    if code:
        return None, code
    if _status(s) != SAMPLE:
        return None, ERR.ACL_ERROR_STREAM_TASK_GROUP_STATUS
    cs = s.capture.cstream
    model = s.capture.model
    g = cs.task_group
    if g is None:
        # SAMPLE left over from a capture that ended with the group open (EndCapture 107033):
        # the new capture stream has no group -> RT_ERROR_STREAM_TASKGRP_NULL (507000), status
        # unchanged (§7 TaskGrpEnd; the status returns to NONE only once a group is closed)
        RT.tls.explain("aclmdlRICaptureTaskGrpEnd: no task group is open on this capture "
                       "(RT_ERROR_STREAM_TASKGRP_NULL; the group opened before was left by an "
                       "earlier capture's end)")
        return None, ERR.ACL_ERROR_RT_INTERNAL_ERROR
    code = model.taskgrp_err
    handle = None
    if not code and (model.status == M.CAPTURE_INVALIDATED or s.capture.status == 2):
        code = ERR.ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED
    if not code:
        model.task_groups.append(g)
        handle = RT.handles.add("taskgrp", g)
        for c in {id(c): c for c, _ in g.entries}.values():     # their rows may be updated
            _exact(s.device.state, c.sq)
    c = cs
    while c is not None and c.task_group is g:             # close it on the whole cascade
        c.task_group = None
        model.taskgrp_streams.discard(c)
        c = c.parent
    s.tg_status = NONE
    return handle, code


def _update_stream(stream):
    """The checks task-update begin and end share (§7): (stream, code)."""
    code = _feature()
    if code:
        return None, code
    s, code = lookup(stream)
    if code:
        return None, code
    if s.capture is not None:
        return None, ERR.ACL_ERROR_RT_STREAM_CAPTURED
    if s.is_model or s.bound is not None:
        # Stream::IsModelStream (model_ != nullptr) is true for a stream bound to a built model
        # too (api_error_aclgraph.cc:93, 108; stream.hpp:332)
        RT.tls.explain(f"{s.describe()} is a model stream (bound to a model): task update is "
                       f"not supported on it")
        return None, ERR.ACL_ERROR_RT_STREAM_MODEL
    return resolve_same_ctx(s)


def ri_capture_task_update_begin(stream, handle) -> int:
    if not stream or not handle:
        return ERR.ACL_ERROR_INVALID_PARAM
    s, code = _update_stream(stream)
    if code:
        return code
    if _status(s) != NONE:
        cur = s.tg_update
        RT.tls.explain(f"{s.describe()} is still updating {cur.describe()}{cur.since()}: end that "
                       f"update (aclmdlRICaptureTaskUpdateEnd) before beginning another"
                       if cur is not None else f"{s.describe()} has a task group open")
        return ERR.ACL_ERROR_STREAM_TASK_GROUP_STATUS
    g, code = RT.handles.get("taskgrp", handle)
    if g is None or g.model is None or g.model.destroyed:
        # the runtime does not validate this raw pointer (§0.3); a group of a destroyed model
        # is freed memory there (undefined) — refused here rather than rewriting SQ rings the
        # freed model gave back (another model may own them now)
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    if g.is_update:
        who = g.updater.describe() if g.updater is not None else "another stream"
        RT.tls.explain(f"{g.describe()} is still being updated by {who}{g.since()}: end that "
                       f"update (aclmdlRICaptureTaskUpdateEnd on {who}) first")
        return ERR.ACL_ERROR_STREAM_TASK_GROUP_STATUS
    s.tg_status = UPDATE
    g.is_update, g.update_index = True, 0
    g.updater, g.update_site = s, site()
    s.tg_update = g
    return ERR.ACL_SUCCESS


def ri_capture_task_update_end(stream) -> int:
    if not stream:
        return ERR.ACL_ERROR_INVALID_PARAM
    s, code = _update_stream(stream)
    if code:
        return code
    if _status(s) != UPDATE:
        RT.tls.explain(f"{s.describe()} is not updating a task group: no "
                       f"aclmdlRICaptureTaskUpdateBegin on it since its last update ended"
                       if _status(s) == NONE else f"{s.describe()} has a task group open")
        return ERR.ACL_ERROR_STREAM_TASK_GROUP_STATUS
    g = s.tg_update
    s.tg_status, s.tg_update = NONE, None
    g.is_update, g.updater = False, None
    if g.update_index != len(g.entries):
        at = g.since().replace(" since", " at")
        if g.update_index == 0:
            RT.tls.explain(f"aclmdlRICaptureTaskUpdateEnd: no kernel was launched on "
                           f"{s.describe()} since aclmdlRICaptureTaskUpdateBegin{at}, so none of "
                           f"the {len(g.entries)} task(s) of {g.describe()} was updated "
                           f"(RT_ERROR_STREAM_TASKGRP_UPDATE): launch one kernel per captured "
                           f"task between Begin and End")
        else:
            RT.tls.explain(f"aclmdlRICaptureTaskUpdateEnd: {g.update_index} of the "
                           f"{len(g.entries)} task(s) of {g.describe()} were updated since "
                           f"aclmdlRICaptureTaskUpdateBegin{at} (RT_ERROR_STREAM_TASKGRP_UPDATE): "
                           f"expected {len(g.entries)} kernel launches, got {g.update_index}")
        return ERR.ACL_ERROR_RT_INTERNAL_ERROR             # unupdated tasks remain
    return ERR.ACL_SUCCESS
