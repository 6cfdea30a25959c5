"""Capture linter: for every capture error, the offending call's source line and a one-line fix.

The facade functions (``acl.rt.*``, ``acl.mdl.*``) are wrapped once at import
(``npusim.acl._hosttrace``); when one returns a code of ``HINTS`` the wrapper calls ``on_error``,
which records a ``LintError``: the code, the API, the user source line that made the call
(``npusim.runtime.recording.site``, a frame walk done only on this error path), the fix hint and,
for the codes whose cause lies elsewhere, what caused it — the side stream that was not joined back
(107025), the call that invalidated the capture (507903 and the invalidating task-group errors),
the sub-graph still capturing (107045), the capture a stream or event belongs to (107027 / 107028 /
107032). ``last_errors()`` returns them, newest last; the Pythonic API puts the same hint and line
into its ``AclError`` messages (``explain``).

``HINTS`` is the one table of hints; ``API_HINTS`` refines a hint for one API.

**Warnings** (``severity="warning"``, code 0: the call succeeds, as on the runtime). Work issued
eagerly, by the thread that began it, on a stream while a GLOBAL capture of another stream of its
context is in progress, on a stream that capture never joined (the classic un-joined communication stream: the work runs now,
once, and is not in the graph): one ``LintError`` per stream and capture, in ``last_errors()``,
and a :class:`npusim.errors.CaptureWarning` at the user's line.
"""
from __future__ import annotations

import threading
import warnings
from collections import deque
from dataclasses import dataclass

from .. import errors as ERR
from ..device import sqe as S
from ..runtime import model as M
from ..runtime.recording import REC, Site
from ..runtime.runtime import RT, set_recent_error
from ..runtime.stream import EAGER_IN_CAPTURE_HOOKS, lookup

HINTS: dict[int, str] = {
    107024: "a capturing stream waits on an event recorded outside the capture (or a captured "
            "wait has no captured record): record the event inside the same capture, or reset it "
            "and make the dependency before aclmdlRICaptureBegin",
    107025: "a stream that joined the capture was not joined back: end it with "
            "aclrtRecordEvent(e, side) and make the origin wait on e "
            "(aclrtStreamWaitEvent(origin, e)) before aclmdlRICaptureEnd",
    107026: "the model is capturing (or the sub-model was captured already): end the capture "
            "first, and capture each sub-model once",
    107027: "the stream is capturing: end the capture (aclmdlRICaptureEnd) before synchronizing, "
            "querying or destroying it, or do this on a stream that is not capturing",
    107028: "the event belongs to a capture in progress: synchronize, query or time it only "
            "after aclmdlRICaptureEnd (inside a graph, order work with aclrtStreamWaitEvent)",
    107029: "the stream is not capturing: begin a capture on it (aclmdlRICaptureBegin) or pass "
            "the stream that captures",
    107030: "a synchronous memory call is blocked by the capture mode: move it before the "
            "capture, or allow it with aclmdlRICaptureThreadExchangeMode(RELAXED) around it",
    107031: "the default stream cannot take part in a capture: record, wait and reset events on "
            "a created stream",
    107032: "the event and the stream belong to different captures: use one event per graph "
            "(the capture is invalidated: capture it again)",
    107033: "task-group calls out of order: pair every aclmdlRICaptureTaskGrpBegin with "
            "aclmdlRICaptureTaskGrpEnd on the same capturing stream before ending the capture",
    107034: "a task was captured on another stream while a task group was open: issue the "
            "group's tasks only on the stream that opened it, then close the group",
    107036: "the capture was not begun on this stream: end it on the origin stream (the one "
            "passed to aclmdlRICaptureBegin), not on a stream that joined",
    107037: "the model is still running: synchronize its execution stream before destroying or "
            "updating it",
    107038: "the capture ended on another thread than the one that began it: end it on the "
            "same thread, or begin it in RELAXED mode",
    107040: "the model cannot be updated now: update a captured model that is not running, "
            "after aclmdlRICaptureTaskUpdateBegin/End",
    107041: "an async copy with pageable host memory turns synchronous and is blocked by a "
            "capture in progress: use pinned memory (aclrtMallocHost) or the RELAXED mode",
    107045: "a sub-graph (cond branch) is still capturing: end every branch capture "
            "(aclmdlRICaptureEnd on its stream) before ending the parent capture",
    507009: "this task type is not allowed here: only AI Core kernel launches go in a task "
            "group or a task update",
    507903: "the capture was invalidated by an earlier call (the one named as 'invalidated "
            "by'): fix that call and capture the graph again",
}

API_HINTS: dict[tuple[int, str], str] = {
    (107027, "ri_execute_async"): "the execution stream is capturing: launch the graph on a "
                                  "stream that is not capturing",
    (107027, "synchronize_device"): "a stream of this context is capturing: end the capture "
                                    "before synchronizing the device",
    (107027, "ri_capture_begin"): "the stream already captures: end that capture first",
    (107033, "ri_capture_task_update_begin"): "task-update calls out of order: end every "
                                              "update (aclmdlRICaptureTaskUpdateEnd) before "
                                              "beginning the next, one stream per group",
    (107033, "ri_capture_task_update_end"): "task-update calls out of order: call "
                                            "aclmdlRICaptureTaskUpdateEnd once per "
                                            "aclmdlRICaptureTaskUpdateBegin, on the same stream",
    (507009, "launch_kernel"): "only AI Core / vector kernels update a task group's tasks",
}


ADVICE: dict[int, str] = {
    100000: "a required argument is NULL / None or out of range at the ACL layer (a handle, a "
            "pointer, a count of 0): check the call's arguments against its C signature",
    100002: "acl.init (or a binary load) was called again: call it once per process",
    100003: "a file the call reads is missing or has no such entry: a package's version.info "
            "(under $ASCEND_HOME_PATH/share/info: `npusim cabi --prefix DIR` writes one, and "
            "DIR/bin/setenv.bash sets the variable)",
    100006: "a file the call reads is not in its format: the install's data/ascendcl_config/"
            "swFeatureList.json must be JSON (`npusim cabi --prefix DIR` writes it anew)",
    100037: "acl.finalize was called again: finalize once, after every resource is released",
    500000: "an internal ACL-layer failure: an init / finalize callback of that type is registered "
            "already or not at all (aclInitCallbackRegister ...), a callback failed, or a "
            "package's version does not fit the call's form; see the message for which",
    107000: "an argument the runtime checks is invalid (a size, a flag, an enum, a NULL the "
            "runtime layer refuses, an unknown kernel name): see the call's check order in "
            "docs/eager_api_checks.md",
    507031: "the label was made in another context: create, set and destroy a label in the "
            "context that is current when it is used (aclrtSetCurrentContext)",
    507002: "a model stream's task queue is full: a stream bound to a built model (or a capture "
            "stream) holds at most the profile's stream depth of tasks; split the work over more "
            "bound streams",
    107001: "the device id does not exist on this chip profile: use 0 .. device count - 1 "
            "(acl.rt.get_device_count)",
    507033: "the device is not opened in this process (aclrtSetDeviceResLimit and the other "
            "device resource-limit calls need it): call acl.rt.set_device(dev_id) first",
    107002: "this thread has no current context: call acl.rt.set_device (or "
            "set_current_context) on this thread first",
    107003: "the stream belongs to another context than the current one: switch context or use "
            "a stream of the current one",
    107004: "the model was captured in another context than the current one: launch it in its "
            "own context",
    107005: "a capture (model) stream where a user stream is expected, or a stream that is not "
            "part of this model: pass a stream you created",
    107006: "the event has no timestamp to read: record it with a TIME_LINE event and wait for "
            "it before asking for the elapsed time",
    107011: "the stream is not subscribed to a report thread (or already is): "
            "acl.rt.subscribe_report once per stream before aclrtLaunchCallback",
    107012: "the thread is not subscribed (or already is): subscribe the report thread once",
    107015: "the callback's stream is not registered to a report thread: "
            "acl.rt.subscribe_report(thread, stream) first",
    107017: "the handle is stale (destroyed, or from before a reset), foreign, or of another "
            "kind (a stream where an event is expected): pass a live handle of the right kind",
    107039: "the output array is shorter than the count the runtime has to write: pass a "
            "larger array (ask for the count first)",
    107042: "the binary has no symbol of that name: check the name against the binary's "
            "symbols (npusim elf <file>)",
    107043: "no device variable is registered for that host address (aclrtGetSymbolAddress, "
            "aclrtMemcpyToSymbol ...): register it with acl.rt.register_variable(binary, "
            "host_var, name, size) after loading the binary, and keep the binary loaded",
    207000: "this chip profile or this simulator does not support the call or its flag (see "
            "docs/fidelity.md and docs/api_coverage.md): use another profile or API",
    207001: "out of device (or pinned host) memory: free buffers, or size the arena with "
            "npusim.configure(hbm_bytes=...)",
    207005: "the device ran out of SQ/CQ pairs for a graph (its streams, cascades and "
            "sub-graphs): fewer capture streams per graph, or destroy idle graphs",
    207007: "too many FLAG events: destroy events you no longer need",
    207008: "too many streams (default streams count): destroy streams you no longer need",
    207009: "too many notifies: destroy notifies you no longer need",
    207019: "the driver of this chip cannot update this task: update it on a software-SQ chip "
            "profile, or recapture the graph",
    507000: "the runtime refused the call for an internal reason (a task-group update count, a "
            "state the API does not allow now): the explanation names it when npusim knows it",
    507007: "the context could not be released (a stream or model still uses it): destroy them "
            "first",
    507011: "the model cannot execute now (not captured completely, updating, or invalidated): "
            "end its capture / update first",
    507012: "a report thread waited and no report came: check the callbacks' streams",
    507015: "an AI Core kernel faulted (a trap or an out-of-bounds access): the message names "
            "the kernel and the task; run it in npusim.analysis.record() for its source line",
    507018: "an AI CPU kernel faulted: the message names the kernel and the task",
    507035: "a vector kernel faulted (a trap or an out-of-bounds access): the message names the "
            "kernel and the task; check its arguments (npusim checks them against the declared "
            "parameters)",
    507046: "the stream can never finish: it waits on an event or notify nothing will record "
            "(the wait-for chain names who waits on whom), or a WHILE loop ran away",
    507047: "the event can never complete: its record waits on something that never happens "
            "(the wait-for chain names it)",
    200006: "a reserved argument (flags) has a value the runtime does not support yet: pass 0 "
            "(the reason names the argument)",
    107020: "a task on the stream waits for something no device will do (an HCCL notify wait: "
            "the ranks' collectives differ or a rank did not issue its part; the message "
            "names the communicator, the op and the ranks): make every rank issue the same "
            "collectives in the same order, and replay graphs of the same capture",
}
"""A specific message for every code npusim returns that the capture linter (``HINTS``) does not
explain: what usually causes it here and what to do. ``failed`` adds it to the recent error
message when the runtime gave no reason of its own (``RT.tls.explain``)."""


@dataclass
class LintError:
    """One refused call: what failed, where, why, and how to fix it."""
    code: int
    name: str
    api: str
    site: Site | None
    hint: str
    detail: str = ""
    severity: str = "error"      # "warning": the call succeeded (code 0)

    def __str__(self) -> str:
        where = f"{self.site}: " if self.site is not None else ""
        d = f" — {self.detail}" if self.detail else ""
        if self.severity == "warning":
            return f"{where}warning: {self.api}{d}\n    fix: {self.hint}"
        return f"{where}{self.api} returned {self.code} {self.name}{d}\n    fix: {self.hint}"

    def message(self) -> str:
        """The text appended to an ``AclError`` message."""
        d = f"{self.detail}; " if self.detail else ""
        at = f" [{self.site}]" if self.site is not None else ""
        return f"{d}fix: {self.hint}{at}"


_errors: deque = deque(maxlen=256)
_warned: set = set()         # (model handle, stream handle) pairs warned about already


def last_errors(n: int | None = None) -> list[LintError]:
    """The capture errors recorded so far (newest last; at most 256 are kept)."""
    out = list(_errors)
    return out if n is None else out[-n:]


def clear() -> None:
    _errors.clear()
    _warned.clear()


def hint(code: int, api: str = "") -> str | None:
    return API_HINTS.get((code, api)) or HINTS.get(code)


# ---- details: what caused the error ----
def _obj(kind: str, h):
    try:
        o, code = RT.handles.get(kind, h)
    except Exception:                   # noqa: BLE001 — a detail must never raise
        return None
    return None if code else o


def _stream(h):
    if h is None:
        return None
    try:
        s, code = lookup(h)
    except Exception:                   # noqa: BLE001
        return None
    return None if code else s


def _task_site(cs, pos: int) -> Site | None:
    st = cs.model.device.state
    st.flush(cs.sq)
    if 0 <= pos < cs.task_count:
        return REC.site_of(int(st.pool[st.row_of(cs.sq, pos)]["a5"]))
    return None


def _invalidation(model) -> str:
    inv = model.invalidated_by
    if inv is not None:
        return f"invalidated by {inv.api or 'a call'} at {inv}"
    return "the capture was invalidated" if model.status == M.CAPTURE_INVALIDATED else ""


def _subgraphs(model) -> str:
    return "; ".join(f"sub-graph {sub.describe()} is {M.STATUS_NAMES[sub.status]}"
                     for sub in model.all_models()[1:] if sub.status != M.READY)


def _unjoined(model) -> str:
    """The side streams EndCapture's join-back rule (§4.3) refuses, and why."""
    parts = []
    sides = [cs for cs in model.streams if not cs.original and cs.last_level and not cs.added]
    origin_joined = False
    for cs in sides:
        ce = cs.last_event
        who = cs.user_stream.describe() if cs.user_stream is not None else cs.describe()
        first = _task_site(cs, 0)
        joined = f" (it joined at {first})" if first is not None else ""
        if cs.last_op != S.OP_EVENT_RECORD or ce is None:
            last = S.OP_NAME.get(cs.last_op, "nothing")
            parts.append(f"{who}{joined} ends with {last}, not an event record the origin waits on")
        elif not ce.waited_by:
            parts.append(f"{who}{joined} ends with an event record that no stream waits on")
        elif any(w.original for w in ce.waited_by if w is not cs):
            origin_joined = True
    if sides and not origin_joined and not parts:
        parts.append("no side stream's last record is waited on by the origin stream")
    return "; ".join(parts)


def _open_groups(model) -> str:
    who = [cs.user_stream.describe() if cs.user_stream is not None else cs.describe()
           for cs in model.streams if cs.task_group is not None]
    return f"a task group is open on {', '.join(who)}" if who else ""


def _origin(model) -> str:
    cs = next((c for c in model.streams if c.original), None)
    if cs is None or cs.user_stream is None:
        return ""
    return f"the capture of {model.describe()} began on {cs.user_stream.describe()}"


_CAUSES = {107025: _unjoined, 507903: _invalidation, 107045: _subgraphs, 107033: _open_groups,
           107034: _open_groups, 107036: _origin}


def pre_capture_end(stream, *a, **k):
    """Snapshot taken before aclmdlRICaptureEnd (the model is destroyed when it fails)."""
    s = _stream(stream)
    if s is None or s.capture is None:
        return None
    m = s.capture.model
    try:
        return {code: fn(m) for code, fn in _CAUSES.items()}
    except Exception:                   # noqa: BLE001
        return None


PRE = {"ri_capture_end": pre_capture_end}
"""Facade functions whose errors need the state before the call: name -> snapshot function."""


def _detail(code: int, api: str, args, snap) -> str:
    try:
        if snap and snap.get(code):
            return snap[code]
        if code in (107027, 107032) and args:
            s = _stream(args[0]) if api != "ri_execute_async" else _stream(
                args[1] if len(args) > 1 else None)
            if s is not None and s.capture is not None:
                m = s.capture.model
                began = m.begun_at
                b = f" (begun at {began})" if began is not None else ""
                return f"{s.describe()} is capturing into {m.describe()}{b}"
        if code == 107028 and args:
            ev = _obj("event", args[0])
            m = ev.capture_model if ev is not None else None
            if m is not None:
                return f"the event is bound to {m.describe()}, still capturing"
        if code in _CAUSES:
            for a in args:
                s = _stream(a) if isinstance(a, int) else None
                if s is not None and s.capture is not None:
                    return _CAUSES[code](s.capture.model)
    except Exception:                   # noqa: BLE001 — a detail must never break the call
        return ""
    return ""


def on_error(api: str, code: int, args=(), snap=None, explained: str = "") -> LintError:
    """Record a refused facade call (called by the facade wrapper); ``explained``: the runtime's
    own reason (``RT.tls.explain``), used when the linter finds no cause of its own."""
    c = ERR.BY_VALUE.get(code)
    key = api.rsplit(".", 1)[-1]
    e = LintError(code, c.name if c else str(code), api, REC.site(2), hint(code, key) or "",
                  _detail(code, key, args, snap) or explained)
    _errors.append(e)
    return e


ARG_REASONS: list = []
"""Declared here, filled by ``acl/_boundary.py`` (which knows each facade function's
parameters): ``reason(api, code, args) -> str``, asked by :func:`failed` for a 100000 / 107000
whose runtime function gave no reason of its own — the argument that is NULL or 0, by name, or
"" when none is."""


def failed(api: str, code: int, args=(), snap=None) -> None:
    """Every non-zero facade return (called by the facade wrapper): the thread's recent error
    message, which ``acl.get_recent_err_msg()`` (aclGetRecentErrMsg) returns once. A code of
    ``HINTS`` is also recorded as a ``LintError`` and its detail, fix and line go into the text;
    otherwise the runtime's own reason for this failure (``RT.tls.explain``: the deadlock
    wait-for chain, ...), if it gave one."""
    c = ERR.BY_VALUE.get(code)
    if code // 1000 % 100 == 7:       # the runtime's own codes (107xxx, 207xxx, 507xxx), not
        RT.tls.last_error = code      # the acl layer's: aclrtGetLastError / PeekAtLastError
    text = f"{api} returned {code} {c.name}: {c.meaning}" if c else f"{api} returned {code}"
    own = RT.tls.error_detail             # the runtime's reason (the boundary's note aside)
    detail = RT.tls.take_detail()
    if not own and (code == 100000 or code == 107000) and ARG_REASONS:
        guess = ARG_REASONS[0](api, code, args)
        if guess:
            detail = f"{detail}; {guess}" if detail else guess
    if code in HINTS:
        text += " — " + on_error(api, code, args, snap, detail).message()
    elif detail:
        text += " — " + detail
    elif code in ADVICE:
        text += " — " + ADVICE[code]
    set_recent_error(text)


def recent_error() -> str | None:
    """aclGetRecentErrMsg: the text of this thread's last failed facade call, then cleared."""
    t = RT.tls
    msg, t.recent_error = t.recent_error, None
    return msg


def explain(code: int) -> str:
    """For the Pythonic API's ``AclError``: the recorded error of this call (same code, same
    source line) as ``detail; fix: hint [file:line]``, or "" for codes without a hint."""
    if code not in HINTS:
        return ""
    site = REC.site(2)
    for e in reversed(_errors):
        if e.code == code and e.site == site:
            return e.message()
    e = LintError(code, ERR.name_of(code), site.api if site else "", site, hint(code) or "")
    _errors.append(e)
    return e.message()


# ---- warnings: eager work during a GLOBAL capture
UNJOINED_HINT = ("to put this work in the graph, join the stream first: record an event on the "
                 "capturing stream and make this stream wait on it (aclrtStreamWaitEvent), and "
                 "join it back (record here, wait on the origin) before aclmdlRICaptureEnd; "
                 "to keep it out of the graph, issue it before the capture begins")


def eager_in_capture(stream) -> None:
    """``Stream.submit`` of a non-capturing stream while a GLOBAL capture of its context is in
    progress (``runtime.stream.EAGER_IN_CAPTURE_HOOKS``): warn once per stream and capture."""
    try:
        me = threading.get_native_id()      # work of other threads is theirs, not the capture's
        models = {s.capture.model for s in stream.ctx.streams
                  if s.capture is not None and s.capture.mode == 0 and s.capture.thread == me}
        for m in models:
            key = (m.handle, stream.handle)
            if key in _warned or m.destroyed:
                continue
            _warned.add(key)
            where = REC.site(2)
            began = f" (begun at {m.begun_at})" if m.begun_at is not None else ""
            cs = next((c for c in m.streams if c.original), None)
            on = f" on {cs.user_stream.describe()}" if cs is not None and \
                cs.user_stream is not None else ""
            detail = (f"{stream.describe()} runs this task now, eagerly, during the GLOBAL "
                      f"capture of {m.describe()}{on}{began}: the stream never joined that "
                      f"capture, so the task is not part of the graph and will not run at its "
                      f"replays")
            e = LintError(0, "warning", where.api if where is not None else "", where,
                          UNJOINED_HINT, detail, "warning")
            _errors.append(e)
            msg = f"{detail}; fix: {UNJOINED_HINT}"
            if where is not None:
                warnings.warn_explicit(msg, ERR.CaptureWarning, where.file, where.line)
            else:
                warnings.warn(msg, ERR.CaptureWarning, stacklevel=2)
    except ERR.CaptureWarning:
        raise                           # warnings turned into errors (-W error) propagate
    except Exception:                   # noqa: BLE001 — a lint must never break the call
        return


EAGER_IN_CAPTURE_HOOKS.append(eager_in_capture)
