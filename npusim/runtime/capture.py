"""Stream capture rules: modes, task redirection, cascades, cross-stream joins, EndCapture.

A user stream that captures carries a ``CaptureLink``: the model, its current capture stream and
its own capture status (ACTIVE or INVALIDATED — the stream's status and the model's are separate
flags, §3.5). Every task submitted on it is written into the current capture stream instead of
running; when that stream is nearly full a cascade stream is chained with a STREAM_ACTIVE (§5).
"""
from __future__ import annotations

import threading

from .. import errors as ERR
from ..device import sqe as S
from ..device.launchjit import (M_CASCADE as _M_CASCADE, M_COLS as _M_COLS,
                                M_TASK_NS as _M_TASK_NS, R_COLS as _R_COLS,
                                R_SQE_NUM as _R_SQE_NUM)
from . import model as M
from . import taskgroup as TG
from .event import _WAITABLE, EX
from .runtime import MODE_NONE, RT, profile
from .stream import ACL_STREAM_CPU_SCHEDULE, ACL_STREAM_DEVICE_USE_ONLY, ACL_STREAM_PERSISTENT

GLOBAL, THREAD_LOCAL, RELAXED, MODE_MAX = 0, 1, 2, MODE_NONE
ACTIVE, INVALIDATED = M.STREAM_ACTIVE, M.STREAM_INVALIDATED   # a stream's capture status
# stream flags a capture refuses (StreamFlagIsSupportCapture, v100; v200 adds PERSISTENT)
_NO_CAPTURE_FLAGS = ACL_STREAM_DEVICE_USE_ONLY | ACL_STREAM_CPU_SCHEDULE


class CaptureLink:
    """A user stream's part in a capture: the model, its current capture stream, its own
    capture status (§3.5) and mode (§3.2). ``Stream.submit`` hands tasks to ``submit``."""

    __slots__ = ("model", "cstream", "kind", "status", "mode", "thread")

    def __init__(self, model, cstream, kind: str, mode: int = MODE_MAX):
        self.model = model
        self.cstream = cstream          # current (last-level) capture stream
        self.kind = kind                # "origin" | "joined" | "added"
        self.status = ACTIVE
        self.mode = mode
        self.thread = threading.get_native_id()    # the OS thread id (§13.12), never reused
                                                    # while the thread lives, unlike get_ident

    def submit(self, stream, op: int, a0=0, a1=0, a2=0, a3=0, flag=0, blocks=0) -> int:
        """A task submitted on the capturing stream: recorded into the model (``append``)."""
        return append(stream, op, a0, a1, a2, a3, flag, blocks)

    def submit_nops(self, stream, n: int) -> int:
        """``n`` NOP tasks submitted on the capturing stream (``append_nops``): 0 or -code."""
        return append_nops(stream, n)


# ---- what the eager APIs ask about capture ----
def stream_capturing(stream) -> bool:
    return stream.capture is not None


def context_capturing(ctx) -> bool:
    """Is any stream of ``ctx`` capturing? Asked of the streams that entered a capture
    (``ctx.capturing``, kept by ``enter``), not of every stream: those that have left capture
    or were destroyed since are dropped here."""
    c = ctx.capturing
    if not c:
        return False
    streams = ctx.streams
    now = {s for s in c if s.capture is not None and s in streams}
    if len(now) != len(c):
        c.intersection_update(now)
    return bool(now)


def event_captured(ev) -> bool:
    """Is the event bound to a model that is still capturing (107028 for sync/query)?"""
    m = ev.capture_model
    return m is not None and m.is_capturing


def bad_capture_flags(s) -> bool:
    """StreamFlagIsSupportCapture: does the stream have a flag a capture refuses?"""
    bad = _NO_CAPTURE_FLAGS | (ACL_STREAM_PERSISTENT if profile().is_v200 else 0)
    return bool(s.flags & bad)


# ---- mode bookkeeping (§3.2) ----
def _tls():
    return RT.tls


def _ctx_refs(ctx):
    return ctx.capture_refs


def _min_mode(refs) -> int:
    return next((m for m in range(3) if refs[m] > 0), MODE_MAX)


def mode_enter(stream, mode: int) -> None:
    stream.capture.mode = mode
    stream.capture.thread = threading.get_native_id()
    _ctx_refs(stream.ctx)[mode] += 1
    _tls().capture_refs[mode] += 1


def mode_exit(stream) -> None:
    """Decrements the *calling* thread's counters (a RELAXED capture ended on another thread
    leaves the begin thread's counters untouched, as the runtime does)."""
    link = stream.capture
    mode, link.mode = link.mode, MODE_MAX
    if mode == MODE_MAX:
        return
    refs = _ctx_refs(stream.ctx)
    refs[mode] = max(0, refs[mode] - 1)
    t = _tls().capture_refs
    t[mode] = max(0, t[mode] - 1)


def exchange_mode(mode: int) -> int:
    t = _tls()
    old, t.exchange_mode = t.exchange_mode, mode
    return old


def unsafe_call_blocked() -> bool:
    """Context::IsCaptureModeSupport (§3.3): would a synchronous memory call be refused?"""
    ctx = RT.current_context
    if ctx is None:
        return False
    c = _min_mode(_ctx_refs(ctx))
    if c == MODE_MAX:
        return False
    t = _tls()
    x, tm = t.exchange_mode, _min_mode(t.capture_refs)
    if x == RELAXED:
        return False
    if x == GLOBAL and (c == GLOBAL or tm == THREAD_LOCAL):
        return True
    if x == THREAD_LOCAL and tm in (GLOBAL, THREAD_LOCAL):
        return True
    return False



# ---- entering capture ----
def enter(stream, model, kind: str, original: bool, head: bool = True):
    """Give a user stream a new capture stream in ``model`` and put it in capture."""
    cs = M.CaptureStream(model, original=original, head=head, user_stream=stream,
                         added=(kind == "added"))
    stream.capture = CaptureLink(model, cs, kind)
    stream.ctx.capturing.add(stream)
    model.participants.add(stream)
    if kind == "added":
        model.added.setdefault(stream, []).append(cs)
    if model.status in (M.NONE, M.CAPTURE_ACTIVE):
        model.status = M.CAPTURE_ACTIVE
    return cs


def invalidate(stream) -> None:
    """SingleStreamTerminateCapture: the stream and its model are invalidated."""
    if stream.capture is not None:
        stream.capture.status = INVALIDATED
        stream.capture.model.terminate_capture()


# ---- tasks ----
def append(stream, op: int, a0=0, a1=0, a2=0, a3=0, flag=0, blocks=0, sqes: int = 1) -> int:
    """Write a task submitted on a capturing stream into its capture stream (§3.1, §5).

    The cascade trigger: captured SQEs + 32 + expandStreamRsvTaskNum >= the stream's depth.
    Returns the task's position, or a negative ACL code when the task is refused (task-group
    rules, §7). ``sqes``: the SQEs the task takes on the chip (toward the cascade trigger)."""
    link = stream.capture
    model = link.model
    if model.destroyed:                  # its model went (a failed EndCapture of its root)
        return -ERR.ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED
    mv = model.device.state._mv          # the model's mseq words (launchjit.M_*)
    j = model.mrow * _M_COLS
    RT.host_ns += mv[j + _M_TASK_NS]     # model.capture_task_ns
    if model.taskgrp_streams:
        code = TG.before_capture(stream, link, op)
        if code:
            return -code
    cs = link.cstream
    if cs.state._rv[cs.sq * _R_COLS + _R_SQE_NUM] >= mv[j + _M_CASCADE]:   # cascade due
        cs = cascade(stream)
    if cs.task_group is None:
        return cs.append(op, sqes, a0, a1, a2, a3, flag, blocks)
    code = TG.packable(cs, op, a0)
    if code:
        cs.sqe_num += 1                      # the SQE was taken before the packing failed
        return -code
    pos = cs.append(op, 1, a0, a1, a2, a3, flag, blocks)
    TG.packed(cs, op, pos)
    return pos


def append_nops(stream, n: int) -> int:
    """``n`` NOP tasks (a task group's prefetch NOPs, §7): the same as ``n`` ``append`` calls,
    written in one when nothing can step in between them — no task-group rule applies (no
    group open in the model) and the last of them is still short of the cascade trigger.
    Returns 0 or a negative ACL code, as ``append``."""
    link = stream.capture
    model = link.model
    cs = link.cstream
    if model.destroyed or model.taskgrp_streams or cs.task_group is not None \
            or cs.sqe_num + n > model.cascade_at:
        for _ in range(n):
            p = append(stream, S.OP_NOP)
            if p < 0:
                return p
        return 0
    RT.host_ns += n * model.capture_task_ns
    cs.append_nops(n)
    return 0


def append_task(stream, rows, sqe_num: int) -> int:
    """A task made of several SQEs (a cond task): one cascade check for all of them, then the
    rows back to back on one capture stream. Returns the first row's position or -code."""
    link = stream.capture
    model = link.model
    if model.destroyed:                  # its model went (a failed EndCapture of its root)
        return -ERR.ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED
    RT.host_ns += model.capture_task_ns
    if model.taskgrp_streams:
        code = TG.before_capture(stream, link, rows[0][0])
        if code:
            return -code
    cs = link.cstream
    if cs.sqe_num >= model.cascade_at:
        cs = cascade(stream)
    if cs.task_group is not None:
        code = TG.packable(cs, rows[0][0], rows[0][1].get("a0", 0))
        if code:
            cs.sqe_num += sqe_num
            return -code
    first = cs.append(rows[0][0], sqe_num, **rows[0][1])
    for op, fields in rows[1:]:
        cs.append(op, 0, **fields)
    return first


def cascade(stream):
    """AllocCascadeCaptureStream for a user stream's current capture stream."""
    link = stream.capture
    new = cascade_from(link.cstream)
    link.cstream = new
    if new.added:
        link.model.added.setdefault(stream, []).append(new)
    return new


def cascade_from(old):
    """Chain a new capture stream after ``old`` with a STREAM_ACTIVE (not counted in
    captureSqeNum: the 32-SQE reserve covers it). The new stream inherits original/added and the
    open task group; only ``old`` is no longer last-level."""
    new = M.CaptureStream(old.model, original=old.original, head=False,
                          user_stream=old.user_stream, added=old.added, parent=old)
    old.append(S.OP_STREAM_ACTIVE, 0, a0=new.sq)
    old.last_level = False
    old.model.device.state.flush(old.sq)     # a full ring: write it now, keep staging small
    old.model.capture_progress.update(old.task_count)
    new.task_group = old.task_group
    return new


def append_internal(cs, op: int, **fields):
    """A task the runtime itself adds (event resets, notifies, EndGraph) at the end of capture
    stream ``cs``, cascading when the ring has no room; returns the stream written to."""
    if cs.tail + 2 > cs.depth:
        cs = cascade_from(cs)
    cs.append(op, **fields)
    return cs


# ---- events (§4.1) ----
MEM_WAIT_SQE_NUM = 4
"""SQEs of a software capture event's wait (``MEM_WAIT_SQE_NUM``, ``SubmitMemWaitValueTask``):
written as one MEM_WAIT_VALUE row, counted as 4 toward the cascade trigger."""


def use_hardware_event(dev) -> bool:
    """IsUseHardwareEvent (``capture_model_utils.cc:53-73``, spec/aclgraph.md §9.2): hardware
    without ``RT_FEATURE_TASK_VALUE_WAIT`` (310P), software without
    ``RT_FEATURE_DEVICE_GET_RESOURCE_NUM_DYNAMIC``, else hardware only while the driver reports
    more than ``HARD_EVENT_RESVERD_MAX`` (8192) free events."""
    prof = profile()
    if not prof.has_task_value_wait:
        return True
    if not prof.resource_num_dynamic:
        return False
    return dev.free_events() > prof.hw_event_reserve


def event_task(stream, ce, kind: int) -> int:
    """Capture capture event ``ce``'s record / wait / reset task (``kind``: OP_EVENT_*) on
    ``stream``: an EVENT_* SQE (hardware) or a MEM_WRITE_VALUE / MEM_WAIT_VALUE (software)."""
    if ce.hardware:                 # CaptureEvent.fields of a hardware event, positionally
        return append(stream, kind, ce.slot, 0 if kind == S.OP_EVENT_RESET else 1)
    sqes = MEM_WAIT_SQE_NUM if kind == S.OP_EVENT_WAIT else 1
    return append(stream, sqes=sqes, **ce.fields(kind))


def record(ev, stream) -> int:
    """aclrtRecordEvent on a capturing stream. The 8-stream capture's hot path: the profile is
    read once, and ``bad_capture_flags``, ``use_hardware_event`` and ``event_task`` run inline
    (the same checks in the same order)."""
    if ev.kind != EX:
        return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    if stream.is_default:
        return ERR.ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT
    if not ev.flag & _WAITABLE:                            # ev.has_wait_task
        return ERR.ACL_SUCCESS                             # captures nothing
    prof = RT.profile
    if prof is None:
        prof = profile()
    if stream.flags & (_NO_CAPTURE_FLAGS | (ACL_STREAM_PERSISTENT if prof.is_v200 else 0)):
        return ERR.ACL_ERROR_RT_INTERNAL_ERROR             # §4.1: S flags unsupported
    link = stream.capture
    model = link.model
    old = ev.capture_model
    if old is not None and old is not model and old.is_capturing:
        old.terminate_capture()
        model.terminate_capture()       # §13.8: the models, not the stream's ACTIVE status
        return ERR.ACL_ERROR_STREAM_CAPTURE_CONFLICT
    # a new capture event per record (software: isNewEvt always, api_impl_capture_event.cc);
    # use_hardware_event(stream.device), inline
    if not prof.has_task_value_wait:
        hardware = True
    elif not prof.resource_num_dynamic:
        hardware = False
    else:
        hardware = stream.device.free_events() > prof.hw_event_reserve
    ce = M.CaptureEvent(model, ev, hardware)
    ev.capture_event, ev.capture_model = ce, model
    model.user_events.add(ev)
    if hardware:                    # event_task(stream, ce, OP_EVENT_RECORD), inline
        pos = append(stream, S.OP_EVENT_RECORD, ce.slot, 1)
    else:
        pos = append(stream, **ce.fields(S.OP_EVENT_RECORD))
    if pos < 0:
        return -pos
    ce.recorded = True
    cs = link.cstream
    cs.last_op, cs.last_event = S.OP_EVENT_RECORD, ce       # a record, whatever its SQE
    return ERR.ACL_SUCCESS


def external(ev, stream, is_record: bool) -> int:
    """aclrtRecordEventWithFlag / aclrtStreamWaitEventWithFlag with the EXTERNAL flag on a
    capturing stream (§9.4, ``SubmitExternalEventTaskCommon``): one EVENT_RECORD / EVENT_WAIT
    task naming the user event's own slot, whose value the model's every launch rebinds
    (``api_mdl.refresh_external``): a record publishes a new record of the event, a wait waits
    for the event's latest record before that launch (none: satisfied). Checks: the chip (value
    wait tasks and software SQs, 207000), then one external task per event and graph
    (``CheckExternalEventConstraints``: a second one, either direction, 107000)."""
    prof = profile()
    if not (prof.has_task_value_wait and prof.software_sq):
        return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    model = stream.capture.model
    if ev in model.ext_records or ev in model.ext_waits:
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    op = S.OP_EVENT_RECORD if is_record else S.OP_EVENT_WAIT
    pos = append(stream, op, ev.slot, 0)
    if pos < 0:
        return -pos
    (model.ext_records if is_record else model.ext_waits)[ev] = (stream.capture.cstream, pos)
    ev.models.add(model)                                   # the graph names the event's slot
    return ERR.ACL_SUCCESS


def wait(stream, ev) -> int:
    """aclrtStreamWaitEvent where the event is capturing (joins a non-capturing stream) or the
    stream is capturing (§4.1)."""
    m = ev.capture_model                                   # event_captured(ev), inline
    if m is not None and m.status in M.CAPTURING:
        prof = RT.profile                                  # bad_capture_flags, inline
        if prof is None:
            prof = profile()
        if stream.flags & (_NO_CAPTURE_FLAGS | (ACL_STREAM_PERSISTENT if prof.is_v200 else 0)):
            return ERR.ACL_ERROR_RT_INTERNAL_ERROR         # §4.1: S2 flags unsupported
        if stream.is_default:
            return ERR.ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT
        model = ev.capture_model
        if stream.capture is None:
            if model.status != M.CAPTURE_ACTIVE:
                return ERR.ACL_ERROR_RT_INTERNAL_ERROR     # §3.5: joining an invalidated model
            enter(stream, model, "joined", original=False, head=True)
        elif stream.capture.model is not model:
            model.terminate_capture()
            stream.capture.model.terminate_capture()     # §13.8: the stream stays ACTIVE
            return ERR.ACL_ERROR_STREAM_CAPTURE_CONFLICT
        ce = ev.capture_event
        if ce.hardware:             # event_task(stream, ce, OP_EVENT_WAIT), inline
            pos = append(stream, S.OP_EVENT_WAIT, ce.slot, 1)
        else:
            pos = append(stream, sqes=MEM_WAIT_SQE_NUM, **ce.fields(S.OP_EVENT_WAIT))
        if pos < 0:
            return -pos
        ce.waited_by.add(stream.capture.cstream)
        return ERR.ACL_SUCCESS
    # the stream captures, the event does not
    if ev.kind != EX and not ev.flag & 0x20:
        return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    if ev.kind == EX and ev.last is not None and not ev.flag & 0x20:
        return ERR.ACL_ERROR_RT_CAPTURE_DEPENDENCY         # recorded outside: isolation
    if ev.kind == EX and ev.last is None:
        return ERR.ACL_SUCCESS                             # a wait on nothing is a no-op
    pos = append(stream, S.OP_EVENT_WAIT, ev.slot, ev.wait_value())
    if pos < 0:
        return -pos
    ev.models.add(stream.capture.model)                    # the graph names the event's slot
    return ERR.ACL_SUCCESS


def reset(ev, stream) -> int:
    if stream.is_default:
        return ERR.ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT
    if stream.capture is None:
        ev.capture_model.terminate_capture()
        return ERR.ACL_ERROR_RT_INTERNAL_ERROR
    if stream.capture.model is not ev.capture_model:
        ev.capture_model.terminate_capture()
        stream.capture.model.terminate_capture()         # §13.8: the stream stays ACTIVE
        return ERR.ACL_ERROR_STREAM_CAPTURE_CONFLICT
    pos = event_task(stream, ev.capture_event, S.OP_EVENT_RESET)
    return -pos if pos < 0 else ERR.ACL_SUCCESS


# ---- EndCapture (§1.3, §4.3) ----
def validate_join_back(model) -> int:
    """CheckCaptureModelValidity: side streams must end with a record the origin waits for."""
    if not model.streams:
        return ERR.ACL_ERROR_RT_STREAM_UNJOINED
    if any(cs.task_group is not None for cs in model.streams):
        return ERR.ACL_ERROR_STREAM_TASK_GROUP_STATUS
    sides = [cs for cs in model.streams if not cs.original and cs.last_level and not cs.added]
    joined_origin = False
    for cs in sides:
        ce = cs.last_event
        if cs.last_op != S.OP_EVENT_RECORD or ce is None or not ce.waited_by:
            return ERR.ACL_ERROR_RT_STREAM_UNJOINED
        if ce.user_event.flag & 0x20:
            return ERR.ACL_ERROR_RT_STREAM_UNJOINED
        if any(w.original for w in ce.waited_by if w is not cs):
            joined_origin = True
    if sides and not joined_origin:
        return ERR.ACL_ERROR_RT_STREAM_UNJOINED
    return ERR.ACL_SUCCESS


def exit_capture(model) -> None:
    """ExitCaptureNotify: model READY, participants back to NONE, user events unbound."""
    model.status = M.READY
    model.capture_progress.close()
    for s in list(model.participants):
        s.capture = None
    model.participants.clear()
    for ev in model.user_events:
        ev.capture_model = None
        ev.capture_event = None
    model.user_events.clear()


def finish(model) -> None:
    """The tail of EndCapture once the stream checks and :func:`finish_refusal` passed:
    added-stream notifies, capture-event resets, EndGraph for classic models."""
    origin = model.origin_stream()
    for s, css in model.added.items():                     # join added streams with a notify
        slot = model.new_slot()
        append_internal(css[-1], S.OP_NOTIFY_RECORD, a0=slot)
        origin = append_internal(origin, S.OP_NOTIFY_WAIT, a0=slot)
    for ce in model.capture_events:                        # clear capture events for next replay
        if ce.hardware:             # append_internal(origin, **ce.fields(RESET)), inline
            if origin.task_count + 2 > origin.depth:
                origin = cascade_from(origin)
            origin.append(S.OP_EVENT_RESET, 1, ce.slot, 0)
        else:
            origin = append_internal(origin, **ce.fields(S.OP_EVENT_RESET))
    if not model.sw_sq:
        add_endgraph(model)


def finish_refusal(model) -> int:
    """EndCapture's validation once the stream checks passed: the code it refuses the capture
    with (0: none, :func:`finish` follows); changes nothing."""
    if any(s.capture is not None and s.capture.status == INVALIDATED
           for s in model.participants) or model.status == M.CAPTURE_INVALIDATED:
        return ERR.ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED
    for sub in model.all_models()[1:]:
        if sub.status != M.READY:
            return ERR.ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING
    code = validate_join_back(model)
    if code:
        return code
    for ce in model.capture_events:
        if not ce.recorded:
            return ERR.ACL_ERROR_RT_CAPTURE_DEPENDENCY
    return ERR.ACL_SUCCESS


def add_endgraph(model) -> None:
    """EndGraph: a notify record on the root's last-level original capture stream."""
    if not model.has_endgraph:
        append_internal(model.origin_stream(), S.OP_END_GRAPH, a0=model.endgraph_slot)
        model.has_endgraph = True
