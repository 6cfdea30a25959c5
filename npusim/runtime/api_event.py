"""Events and notifies (docs/eager_api_checks.md §6–7): check orders and device tasks."""
from __future__ import annotations

from .. import errors as ERR
from ..device import engine as E
from ..device import sqe as S
from ..device.launchjit import forget as _forget
from ..device.recording import OBS_SQ
from . import api_stream as AS
from . import capture
from .capture import event_captured, stream_capturing
from .device import DeadlockError, sync_cost
from .event import (ACL_EVENT_CAPTURE_STREAM_PROGRESS, ACL_EVENT_DEVICE_USE_ONLY,
                    ACL_EVENT_EXTERNAL, ACL_EVENT_IPC, ACL_EVENT_SYNC, ACL_EVENT_TIME_LINE, EX,
                    FLAG, LEGACY, LEGACY_RT_FLAG, RT_EVENT_DDSYNC, _WAITABLE, Event, Notify)
from .model import CAPTURING
from .runtime import RT
from .stream import refused

ACL_EVENT_STATUS_COMPLETE, ACL_EVENT_STATUS_NOT_READY = 0, 1          # aclrtQueryEvent
ACL_EVENT_RECORDED_STATUS_NOT_READY, ACL_EVENT_RECORDED_STATUS_COMPLETE = 0, 1  # ...Status
ACL_NOTIFY_DEFAULT, ACL_NOTIFY_DEVICE_USE_ONLY = 0, 1
ACL_EVENT_RECORD_DEFAULT, ACL_EVENT_RECORD_EXTERNAL = 0x0, 0x1      # acl_rt.h:100-103
ACL_EVENT_WAIT_DEFAULT, ACL_EVENT_WAIT_EXTERNAL = 0x0, 0x1
_OLD_OR = ACL_EVENT_SYNC | ACL_EVENT_CAPTURE_STREAM_PROGRESS | RT_EVENT_DDSYNC | ACL_EVENT_TIME_LINE


def _create(kind: str, flag: int):
    ctx = RT.current_context
    if ctx is None:
        return None, ERR.ACL_ERROR_RT_CONTEXT_NULL
    if kind == FLAG and ctx.device.live_events >= ctx.device.profile.max_events:
        return None, ERR.ACL_ERROR_RT_NO_EVENT_RESOURCE
    RT.tick(ctx.device.timing.host_api_ns)
    return RT.handles.add("event", Event(ctx, kind, flag)), ERR.ACL_SUCCESS


def create_event():
    return _create(LEGACY, LEGACY_RT_FLAG)


def create_event_with_flag(flag: int):
    flag = int(flag)
    ok = (flag != 0 and flag & ~_OLD_OR == 0) or flag in (ACL_EVENT_DEVICE_USE_ONLY,
                                                         ACL_EVENT_EXTERNAL)
    if not ok:
        RT.tls.explain(f"flag: 0x{int(flag):x} is not a combination of the "
                       f"aclrtCreateEventExWithFlag flags")
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    return _create(FLAG, flag)


def create_event_ex_with_flag(flag: int):
    flag = int(flag)
    ok = (flag != 0 and flag & ~_OLD_OR == 0) or flag == ACL_EVENT_IPC
    if not ok:
        RT.tls.explain(f"flag: 0x{int(flag):x} is not a combination of the "
                       f"aclrtCreateEventWithFlag flags")
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    return _create(EX, flag)


def _event(h):
    if not h:
        return None, ERR.ACL_ERROR_INVALID_PARAM
    return RT.handles.get("event", h)


def _event_and_stream(eh, sh, need_wait_task: bool, refuse_new_mode: bool = False,
                      op: str = "", op_flag: int = 0):
    """The shared prefix of record / wait / reset: (event, stream, code). ``refuse_new_mode``:
    reset's 207000 for Ex events, checked after the context but before 107003 (impl.cc:2210).
    ``op`` ("record" / "wait") with its flag: the ApiErrorDecorator checks of §9.4 — EXTERNAL
    only for an Ex event made with exactly ACL_EVENT_SYNC (207000); the event's record (wait)
    flag, fixed by its first record (wait) whatever that call returned, never changes (107000);
    no EXTERNAL in a sub-graph (207000)."""
    # _event(eh) and AS.lookup(sh) without their frames (the record / wait hot path)
    if not eh:
        return None, None, ERR.ACL_ERROR_INVALID_PARAM
    handles = RT.handles                  # lookups read as attributes, then called (as in
    get = handles.event                   # api_launch.launch_kernel: not method-style)
    try:
        ev = get(eh)
    except TypeError:
        ev = None
    if ev is None:
        return None, None, ERR.ACL_ERROR_RT_INVALID_HANDLE
    if sh is None or sh == 0:
        s = None
    else:
        get = handles.stream
        try:
            s = get(sh)
        except TypeError:
            s = None
        if s is None:
            return None, None, ERR.ACL_ERROR_RT_INVALID_HANDLE
    if ev.flag == ACL_EVENT_DEVICE_USE_ONLY:
        RT.tls.explain("eh: an ACL_EVENT_DEVICE_USE_ONLY event cannot be recorded or waited for "
                       "from the host")
        return None, None, ERR.ACL_ERROR_RT_PARAM_INVALID
    if ev.flag & ACL_EVENT_IPC and s is not None and stream_capturing(s):
        return None, None, ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    if need_wait_task and not ev.flag & _WAITABLE:        # ev.has_wait_task, inline
        return None, None, ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    if op:
        external = op_flag == ACL_EVENT_RECORD_EXTERNAL     # (== ACL_EVENT_WAIT_EXTERNAL)
        if external and (not ev.new_mode or ev.flag != ACL_EVENT_SYNC):
            return None, None, ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
        if op == "record":                      # the flag: not fixed yet (None), or this one
            if ev.record_flag not in (None, op_flag):
                RT.tls.explain("eh: the event was recorded with another flag before (a record flag "
                               "is fixed by its first record)")
                return None, None, ERR.ACL_ERROR_RT_PARAM_INVALID
            ev.record_flag = op_flag
        else:
            if ev.wait_flag not in (None, op_flag):
                RT.tls.explain("eh: the event was waited for with another flag before (a wait flag "
                               "is fixed by its first wait)")
                return None, None, ERR.ACL_ERROR_RT_PARAM_INVALID
            ev.wait_flag = op_flag
        if external and s is not None and s.capture is not None and s.capture.model.sub:
            return None, None, ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    # AS.resolve(s), inline: context (107002), default stream, a model's stream (207000)
    tls = RT.tls                              # RT.current_context, inline
    ctx = tls.current                 # curCtx if set, else curRef
    if ctx is None or ctx.destroyed:
        ctx = tls.primary
        if ctx is None or ctx.destroyed:
            return None, None, ERR.ACL_ERROR_RT_CONTEXT_NULL
    if s is None:
        s = ctx.default_stream
    elif s.is_model:
        return None, None, ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    if refuse_new_mode and ev.new_mode:
        return None, None, ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    if s.bound is not None:
        # a stream bound to a built model (ApiImpl::EventRecord / StreamWaitEvent: new-mode and
        # default events on a model stream, 207000); npusim refuses every event there
        # (docs/fidelity.md row 90)
        RT.tls.explain("events on a stream bound to a built model are not simulated")
        return None, None, ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    if s.ctx is not ctx:
        return None, None, ERR.ACL_ERROR_RT_STREAM_CONTEXT
    if ctx.failure_code:
        return None, None, ctx.failure_code
    return ev, s, ERR.ACL_SUCCESS


def record_event(eh, sh) -> int:
    """aclrtRecordEvent (and the DEFAULT flag of aclrtRecordEventWithFlag): the record hot path,
    ``record_value`` and ``note_task`` inline."""
    ev, s, code = _event_and_stream(eh, sh, False, False, "record", ACL_EVENT_RECORD_DEFAULT)
    if code:
        return code
    link = s.capture
    if link is not None and not ev.flag & ACL_EVENT_EXTERNAL:
        code = capture.record(ev, s)
        if code:                        # a conflict may have ended captures
            _forget()
        return code
    if ev.kind == FLAG:                 # ev.record_value()
        v = 1
    else:
        v = ev.seq = ev.seq + 1
    pos = s.submit(S.OP_EVENT_RECORD, s.device.timing.host_event_record_ns, ev.slot, v)
    if pos < 0:
        ev.seq -= ev.kind != FLAG
        return -pos
    ev.last = (s, pos)
    if link is not None:                # ev.note_task(s, pos)
        ev.models.add(link.model)
    else:
        ev.fences[s] = pos
    return ERR.ACL_SUCCESS


def record_event_with_flag(eh, sh, flag: int) -> int:
    """aclrtRecordEventWithFlag: DEFAULT is aclrtRecordEvent; EXTERNAL (an Ex event made with
    ACL_EVENT_SYNC, on a capturing stream: else 107029) captures a record that every launch of
    the graph publishes as the event's latest record, for a stream or another graph to wait on
    (§9.4). NULL event, a flag other than 0/1: 100000 (acl layer)."""
    if not eh or flag not in (ACL_EVENT_RECORD_DEFAULT, ACL_EVENT_RECORD_EXTERNAL):
        RT.tls.explain("eh is NULL" if not eh else
                       f"flag: {flag} is not ACL_EVENT_RECORD_DEFAULT (0) or _EXTERNAL (1)")
        return ERR.ACL_ERROR_INVALID_PARAM
    return _record(eh, sh, flag)


def _record(eh, sh, flag: int) -> int:
    if flag == ACL_EVENT_RECORD_DEFAULT:
        return record_event(eh, sh)
    ev, s, code = _event_and_stream(eh, sh, need_wait_task=False, op="record", op_flag=flag)
    if code:
        return code
    if s.capture is None:                                   # ACL_EVENT_RECORD_EXTERNAL
        return ERR.ACL_ERROR_RT_STREAM_NOT_CAPTURED
    return capture.external(ev, s, is_record=True)


def stream_wait_event(sh, eh) -> int:
    """aclrtStreamWaitEvent (and the DEFAULT flag of aclrtStreamWaitEventWithFlag): the wait hot
    path, ``wait_value`` and ``note_task`` inline."""
    ev, s, code = _event_and_stream(eh, sh, True, False, "wait", ACL_EVENT_WAIT_DEFAULT)
    if code:
        return code
    link = s.capture
    m = ev.capture_model                # event_captured(ev), inline
    if link is not None or (m is not None and m.status in CAPTURING):
        if link is None:
            _forget()                   # the stream joins the capture: its launches change
        code = capture.wait(s, ev)
        if code:                        # a conflict may have ended captures
            _forget()
        return code
    if ev.last is None:
        if ev.kind == EX:
            return ERR.ACL_SUCCESS                         # wait before any record: a no-op
        if ev.kind == LEGACY:
            RT.tls.explain("eh: a legacy event (aclrtCreateEvent) waited for before any record "
                           "(aclrtRecordEvent first)")
            return ERR.ACL_ERROR_RT_PARAM_INVALID          # "event has not been recorded"
    pos = s.submit(S.OP_EVENT_WAIT, s.device.timing.host_event_wait_ns, ev.slot,
                   1 if ev.kind == FLAG else ev.seq)       # ev.wait_value()
    if pos >= 0:
        ev.fences[s] = pos              # ev.note_task(s, pos): the stream does not capture
        return ERR.ACL_SUCCESS
    return -pos                         # refused(pos)


def stream_wait_event_with_flag(sh, eh, timeout: int, flag: int) -> int:
    """aclrtStreamWaitEventWithFlag: DEFAULT is aclrtStreamWaitEventWithTimeout (``timeout`` in
    seconds); EXTERNAL (timeout 0 only; an Ex event made with ACL_EVENT_SYNC; a capturing stream,
    else 107029) captures a wait that every launch of the graph binds to the event's latest
    record before that launch — a stream's or another graph's (§9.4). NULL event, a flag other
    than 0/1, EXTERNAL with a timeout: 100000 (acl layer)."""
    if not eh or flag not in (ACL_EVENT_WAIT_DEFAULT, ACL_EVENT_WAIT_EXTERNAL):
        RT.tls.explain("eh is NULL" if not eh else
                       f"flag: {flag} is not ACL_EVENT_WAIT_DEFAULT (0) or _EXTERNAL (1)")
        return ERR.ACL_ERROR_INVALID_PARAM
    if flag == ACL_EVENT_WAIT_EXTERNAL and timeout != 0:
        RT.tls.explain(f"timeout: {timeout}, but an EXTERNAL wait takes timeout 0")
        return ERR.ACL_ERROR_INVALID_PARAM
    return _wait(sh, eh, flag)


def _wait(sh, eh, flag: int) -> int:
    if flag == ACL_EVENT_WAIT_DEFAULT:
        return stream_wait_event(sh, eh)
    ev, s, code = _event_and_stream(eh, sh, need_wait_task=True, op="wait", op_flag=flag)
    if code:
        return code
    if s.capture is None:                                   # ACL_EVENT_WAIT_EXTERNAL
        return ERR.ACL_ERROR_RT_STREAM_NOT_CAPTURED
    return capture.external(ev, s, is_record=False)


def reset_event(eh, sh) -> int:
    ev, s, code = _event_and_stream(eh, sh, need_wait_task=True, refuse_new_mode=True)
    if code:
        return code
    if event_captured(ev):
        return capture.reset(ev, s)
    if s.capture is not None and not ev.flag & ACL_EVENT_EXTERNAL:
        # §13.7 ApiImpl::EventReset: a legacy event without the EXTERNAL flag on a capturing
        # stream (ToBeCaptured) is refused, not captured
        return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    pos = s.submit(S.OP_EVENT_RESET, s.device.timing.host_event_reset_ns, a0=ev.slot)
    if pos >= 0:
        ev.note_task(s, pos)
    return refused(pos)


def _observable(ev) -> int:
    """Checks shared by query / synchronize / elapsed: capture binding, external events."""
    if ev.flag & ACL_EVENT_EXTERNAL:
        return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    if event_captured(ev):
        return ERR.ACL_ERROR_RT_EVENT_CAPTURED
    if ev.ctx.failure_code:
        return ev.ctx.failure_code
    return ERR.ACL_SUCCESS


def _observed(eh):
    """(event, code) of query / timestamp APIs: the handle, then ``_observable``."""
    ev, code = _event(eh)
    if code:
        return None, code
    code = _observable(ev)
    return (None, code) if code else (ev, ERR.ACL_SUCCESS)


def synchronize_event(eh, timeout_ms: int = -1) -> int:
    ev, code = _observed(eh)
    if code:
        return code
    t = ev.device.timing
    if ev.last is None or ev.last[0].destroyed:
        RT.tick(t.host_sync_ns)
        return ERR.ACL_SUCCESS
    stream, pos = ev.last
    start = RT.host_ns
    try:
        ev.device.wait_sq(stream.sq, pos + 1)
    except DeadlockError as e:
        RT.tls.explain(e.diagnosis)
        return e.code or ERR.ACL_ERROR_RT_EVENT_SYNC_TIMEOUT
    finally:
        waited = sync_cost(t, start)
    if timeout_ms > 0 and waited > timeout_ms * 1_000_000:
        return ERR.ACL_ERROR_RT_EVENT_SYNC_TIMEOUT
    return stream.ctx.failure_code if stream.stop_on_failure else ERR.ACL_SUCCESS


def synchronize_event_with_timeout(eh, timeout_ms: int) -> int:
    if timeout_ms < -1 or timeout_ms == 0:
        RT.tls.explain(f"timeout_ms: {timeout_ms} (-1 waits forever; a timeout is >= 1 ms)")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    return synchronize_event(eh, timeout_ms)


def _done(ev) -> bool:
    RT.tick(ev.device.timing.host_api_ns)
    ev.device.advance_to_host()
    done = ev.record_done()
    log = ev.device.state.access_log
    if done and log is not None and ev.last is not None:   # a query that saw it orders too
        log.observe(OBS_SQ, ev.last[0].sq, ev.last[1] + 1)
    return done


def query_event(eh):
    """aclrtQueryEvent (deprecated): COMPLETE(0) / NOT_READY(1); Ex events are refused."""
    ev, code = _event(eh)
    if code:
        return None, code
    if ev.new_mode or ev.flag & ACL_EVENT_IPC:
        return None, ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    code = _observable(ev)
    if code:
        return None, code
    return (ACL_EVENT_STATUS_COMPLETE if _done(ev) else ACL_EVENT_STATUS_NOT_READY), 0


def query_event_status(eh):
    """aclrtQueryEventStatus: NOT_READY(0) / COMPLETE(1); before any record an Ex event is
    COMPLETE and the others NOT_READY (event.cc:1193-1198)."""
    ev, code = _observed(eh)
    if code:
        return None, code
    if ev.last is None:
        st = ACL_EVENT_RECORDED_STATUS_COMPLETE if ev.new_mode else \
            ACL_EVENT_RECORDED_STATUS_NOT_READY
        return st, ERR.ACL_SUCCESS
    done = _done(ev)
    return (ACL_EVENT_RECORDED_STATUS_COMPLETE if done else
            ACL_EVENT_RECORDED_STATUS_NOT_READY), ERR.ACL_SUCCESS


ACL_EVENT_WAIT_STATUS_COMPLETE, ACL_EVENT_WAIT_STATUS_NOT_READY = 0, 1     # aclrtEventWaitStatus


def query_event_wait_status(eh):
    """aclrtQueryEventWaitStatus: COMPLETE(0) once every eager task naming the event (its
    stream waits, and the records they wait for) has run, NOT_READY(1) before. Ex (new-mode),
    EXTERNAL and IPC events -> 207000, an event bound to a capture -> 107028
    (``ApiErrorDecorator::EventQueryWaitStatus``, api_error.cc; api_impl.cc:2299)."""
    ev, code = _event(eh)
    if code:
        return None, code
    if ev.new_mode or ev.flag & (ACL_EVENT_EXTERNAL | ACL_EVENT_IPC):
        return None, ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    code = _observable(ev)
    if code:
        return None, code
    RT.tick(ev.device.timing.host_api_ns)
    ev.device.advance_to_host()
    sqs = ev.device.state.sqs
    done = all(s.destroyed or sqs[s.sq, E.Q_HEAD] > pos for s, pos in ev.fences.items())
    return (ACL_EVENT_WAIT_STATUS_COMPLETE if done else ACL_EVENT_WAIT_STATUS_NOT_READY), 0


def event_elapsed_time(start_h, end_h):
    """Milliseconds between two completed records (float); may be negative."""
    if not start_h or not end_h:
        return None, ERR.ACL_ERROR_INVALID_PARAM
    a, code = RT.handles.get("event", start_h)
    if code:
        return None, code
    b, code = RT.handles.get("event", end_h)
    if code:
        return None, code
    for ev in (a, b):
        code = _observable(ev)
        if code:
            return None, code
        if ev.flag & ACL_EVENT_IPC:
            return None, ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    if a.last is None or b.last is None:
        return None, ERR.ACL_ERROR_RT_INTERNAL_ERROR
    if not (_done(a) and _done(b)):
        return None, ERR.ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID
    return (b.timestamp() - a.timestamp()) / 1e6, ERR.ACL_SUCCESS


def destroy_event(eh) -> int:
    ev, code = _event(eh)
    if code:
        return code
    ev.release()
    RT.handles.remove(eh)
    return ERR.ACL_SUCCESS


# ---- notifies ----
def create_notify(flag: int = ACL_NOTIFY_DEFAULT):
    if flag not in (ACL_NOTIFY_DEFAULT, ACL_NOTIFY_DEVICE_USE_ONLY):
        RT.tls.explain(f"flag: {flag} is not ACL_NOTIFY_DEFAULT or ACL_NOTIFY_DEVICE_USE_ONLY")
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    ctx = RT.current_context
    if ctx is None:
        return None, ERR.ACL_ERROR_RT_CONTEXT_NULL
    dev = ctx.device
    if dev.live_notifies >= dev.profile.max_notifies:
        return None, ERR.ACL_ERROR_RT_NO_NOTIFY_RESOURCE
    return RT.handles.add("notify", Notify(ctx, flag)), ERR.ACL_SUCCESS


def _notify_and_stream(nh, sh):
    if not nh:
        return None, None, ERR.ACL_ERROR_INVALID_PARAM
    n, code = RT.handles.get("notify", nh)
    if code:
        return None, None, code
    s, code = AS.lookup(sh)
    if code:
        return None, None, code
    s, code = AS.resolve_same_ctx(s)
    if code:
        return None, None, code
    return n, s, ERR.ACL_SUCCESS


def record_notify(nh, sh) -> int:
    n, s, code = _notify_and_stream(nh, sh)
    if code:
        return code
    pos = s.submit(S.OP_NOTIFY_RECORD, s.device.timing.host_event_record_ns, a0=n.slot)
    if pos >= 0:
        n.note_task(s, pos)
    return refused(pos)


def wait_and_reset_notify(nh, sh, timeout_s: int = 0) -> int:
    n, s, code = _notify_and_stream(nh, sh)
    if code:
        return code
    pos = s.submit(S.OP_NOTIFY_WAIT, s.device.timing.host_event_wait_ns, a0=n.slot)
    if pos >= 0:
        n.note_task(s, pos)
    return refused(pos)


def destroy_notify(nh) -> int:
    if not nh:
        return ERR.ACL_ERROR_INVALID_PARAM
    n, code = RT.handles.get("notify", nh)
    if code:
        return code
    if RT.current_context is None:
        return ERR.ACL_ERROR_RT_CONTEXT_NULL
    n.release()
    RT.handles.remove(nh)
    return ERR.ACL_SUCCESS


# ---- queries (chapter 07; ApiImpl::EventGetTimeStamp / GetEventID / GetAvailEventNum) ----
def event_get_timestamp(eh):
    """aclrtEventGetTimestamp: (microseconds since device start at which the latest record
    completed, code). Same checks as aclrtQueryEventStatus; a record not yet run: 107000."""
    ev, code = _observed(eh)
    if code:
        return None, code
    if ev.last is not None and not _done(ev):
        return None, ERR.ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID
    ns = int(ev.device.state.sync[ev.slot, E.Y_TIME]) if ev.last is not None else 0
    return ns // 1000, ERR.ACL_SUCCESS


def get_event_id(eh):
    """aclrtGetEventId: (the event's hardware event id, code): its slot on the device."""
    ev, code = _event(eh)
    return (None, code) if code else (int(ev.slot), ERR.ACL_SUCCESS)


def get_event_avail_num():
    """aclrtGetEventAvailNum: (events the current device can still create, code)."""
    ctx = RT.current_context
    if ctx is None:
        return None, ERR.ACL_ERROR_RT_CONTEXT_NULL
    return ctx.device.free_events(), ERR.ACL_SUCCESS


def stream_wait_event_with_timeout(sh, eh, timeout: int) -> int:
    """aclrtStreamWaitEventWithTimeout: as aclrtStreamWaitEvent; ``timeout`` in seconds, 0 =
    never (a wait that can never be satisfied is reported by the deadlock diagnosis instead of
    after a timeout); negative: 107000."""
    if timeout < 0:
        RT.tls.explain(f"timeout: {timeout} is negative (seconds; 0 waits forever)")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    return stream_wait_event(sh, eh)


def set_op_wait_timeout(timeout: int) -> int:
    """aclrtSetOpWaitTimeout: the process-wide event-wait timeout in seconds (0: none). Kept and
    reported (``npusim.acl`` has no wall-clock waits: stuck waits are diagnosed as deadlocks)."""
    RT.op_wait_timeout_s = int(timeout)
    return ERR.ACL_SUCCESS


def get_notify_id(nh):
    """aclrtGetNotifyId: (the notify's id — its sync slot —, code); NULL 100000, no context
    107002 (``ApiImpl::GetNotifyID``)."""
    if not nh:
        return None, ERR.ACL_ERROR_INVALID_PARAM
    n, code = RT.handles.get("notify", nh)
    if code:
        return None, code
    if RT.current_context is None:
        return None, ERR.ACL_ERROR_RT_CONTEXT_NULL
    return int(n.slot), ERR.ACL_SUCCESS


def notify_batch_reset(notifies, num) -> int:
    """aclrtNotifyBatchReset: reset each notify in turn (``rtsNotifyBatchReset`` ->
    ``rtNotifyReset``), stopping at the first failure: NULL array 100000 (acl); num 0 107000; a
    NULL entry 107000; a stale one 107017; no context 107002; a chip without STARS 207000. The
    reset is a task on the context's default stream (``Notify::Reset(defaultStream)``)."""
    if notifies is None:
        return ERR.ACL_ERROR_INVALID_PARAM
    if num <= 0 or num > len(notifies):
        RT.tls.explain(f"num: {num} is not in 1..len(notifies) ({len(notifies)})")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    for nh in list(notifies)[:num]:
        if not nh:
            RT.tls.explain("notifies: an element is NULL")
            return ERR.ACL_ERROR_RT_PARAM_INVALID
        n, code = RT.handles.get("notify", nh)
        if code:
            return code
        ctx = RT.current_context
        if ctx is None:
            return ERR.ACL_ERROR_RT_CONTEXT_NULL
        if not ctx.device.profile.software_sq:          # STARS chips (910B / 910_93 / 950)
            return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
        s = ctx.default_stream
        pos = s.submit(S.OP_EVENT_RESET, s.device.timing.host_event_reset_ns, a0=n.slot)
        if pos < 0:
            return -pos
        n.note_task(s, pos)
    return ERR.ACL_SUCCESS


# Record and wait void the launch memo (acl/_launchmemo.py) only where they change what a memoized
# launch depends on — a stream joining a capture, a failure, Stream.submit's Python path — not
# at the start of their locked region: a graph of blocks of launches between a record and a wait
# would otherwise miss the memo at each block's first launch of every stream. A captured record
# sets its capture stream's ``last_event``, which the memo's hit clears as the general path does.
record_event.voids_memo_itself = True
stream_wait_event.voids_memo_itself = True
