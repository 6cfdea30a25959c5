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
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from .. import errors as ERR
from ..device import sqe as S
from ..runtime import model as M
from ..runtime.recording import REC, Site
from ..runtime.runtime import RT
from ..runtime.stream import lookup

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
}


@dataclass
class LintError:
    """One refused call: what failed, where, why, and how to fix it."""
    code: int
    name: str
    api: str
    site: Site | None
    hint: str
    detail: str = ""

    def __str__(self) -> str:
        where = f"{self.site}: " if self.site is not None else ""
        d = f" — {self.detail}" if self.detail else ""
        return f"{where}{self.api} returned {self.code} {self.name}{d}\n    fix: {self.hint}"

    def message(self) -> str:
        """The text appended to an ``AclError`` message."""
        d = f"{self.detail}; " if self.detail else ""
        at = f" [{self.site}]" if self.site is not None else ""
        return f"{d}fix: {self.hint}{at}"


_errors: deque = deque(maxlen=256)


def last_errors(n: int | None = None) -> list[LintError]:
    """The capture errors recorded so far (newest last; at most 256 are kept)."""
    out = list(_errors)
    return out if n is None else out[-n:]


def clear() -> None:
    _errors.clear()


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


def on_error(api: str, code: int, args=(), snap=None) -> LintError:
    """Record a refused facade call (called by the facade wrapper)."""
    c = ERR.BY_VALUE.get(code)
    key = api.rsplit(".", 1)[-1]
    e = LintError(code, c.name if c else str(code), api, REC.site(2), hint(code, key) or "",
                  _detail(code, key, args, snap))
    _errors.append(e)
    return e


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
    detail = RT.tls.take_detail()
    if code in HINTS:
        text += " — " + on_error(api, code, args, snap).message()
    elif detail:
        text += " — " + detail
    RT.tls.recent_error = text


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
