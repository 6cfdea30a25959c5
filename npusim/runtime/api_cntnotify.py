"""Chapter 09: counting notifies (``aclrtCntNotify*``) — Ascend 950 only.

A counting notify is one sync slot holding a uint32 counter. A record is an EVENT_RECORD task
with the ``sqe.CNT`` flag whose mode sets, adds, ORs or ANDs its value into the counter when it
runs; a wait is an EVENT_WAIT task with ``CNT`` that parks its stream until the counter
compares true with its value (less, equal, bigger, bigger-or-equal, all mask bits set) and,
with ``isClear``, clears it; a reset is a record that sets 0 (``api_impl_david.cc:1074-1095``).
The engine wakes a parked wait at every record and it re-checks (``device/engine/opcodes.py``
``_cnt_record``, ``_cnt_holds``). Like events and notifies, the slot is freed once no queued
task names it.

Support and check order (hicann/runtime): on Atlas A2 / A3 (and 310P) the standard runtime's
``rtCntNotifyCreateServer`` / ``rtsCntNotify*`` answer 207000 before any check
(``api_c_stub.cc``), after the acl layer's NULL ``info`` check (100000, ``notify.cpp:160-185``).
On 950 (``api_david.cc:60-200``, ``api_error_standard_soc.cc:39-110``,
``api_impl_david.cc:1020-1125``): create — a flag other than 0 107000, no current device
107002; record / wait — NULL info 100000, the notify handle (NULL 107000, invalid 107017), the
stream handle 107017, a record mode other than 0 / 1 / 2 / 4 or a wait mode above 4 107000, no
context 107002, another context's stream 107003 (NULL: the default stream); reset the same
without the info; get id / destroy the handle checks only. The wait's ``timeout`` (seconds, 0:
forever) is not simulated: a wait that can never be satisfied is reported by the deadlock
diagnosis (as ``aclrtStreamWaitEventWithTimeout``, fidelity row 240).
"""
from __future__ import annotations

from .. import errors as ERR
from ..device import engine as E
from ..device import sqe as S
from . import stream as ST
from .event import SlotHolder
from .runtime import RT

OK = ERR.ACL_SUCCESS

# aclrtCntNotifyRecordMode / aclrtCntNotifyWaitMode (acl_rt.h:917-936)
ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE, ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE = 0, 1
ACL_RT_CNT_NOTIFY_RECORD_BIT_OR_MODE, ACL_RT_CNT_NOTIFY_RECORD_BIT_AND_MODE = 2, 4
(ACL_RT_CNT_NOTIFY_WAIT_LESS_MODE, ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE,
 ACL_RT_CNT_NOTIFY_WAIT_BIGGER_MODE, ACL_RT_CNT_NOTIFY_WAIT_BIGGER_OR_EQUAL_MODE,
 ACL_RT_CNT_NOTIFY_WAIT_EQUAL_WITH_BITMASK_MODE) = range(5)
_RECORD_MODES = (0, 1, 2, 4)
_WAIT_MODE_MAX = 5
_U32 = 0xFFFF_FFFF


class CntNotify(SlotHolder):
    """One counting notify: a sync slot of its device holding the counter."""
    __slots__ = ()

    def release(self) -> bool:
        if not super().release():
            return False
        RT.handles.remove(self.handle)
        return True

    def describe(self) -> str:
        return f"counting notify 0x{self.handle:x}"

    def value(self) -> int:
        """The counter as the device holds it now (for tests and diagnoses)."""
        return int(self.device.state.sync[self.slot, E.Y_VAL])


def _supported() -> bool:
    """Counting notifies exist on Ascend 950 only (chapter 09: 不支持 on A3 / A2 / 310P)."""
    return RT.profile_in_force().is_v200


def _not_supported():
    RT.tls.explain("counting notifies are supported on Ascend 950 only (the Atlas A2 / A3 "
                   "runtime answers 207000: api_c_stub.cc)")
    return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT


def _field(info, name: str) -> int | None:
    """A struct field of a dict argument (missing: 0, as a zero-initialised C struct); None for
    a value no uint32 / enum field can hold."""
    v = info.get(name, 0)
    if isinstance(v, bool) or not isinstance(v, int) or not -2 ** 31 <= v <= _U32:
        return None
    return v


def _cnt(h):
    """(notify, code): NULL 107000 (the error decorator's NULL check), invalid 107017."""
    if not h:
        RT.tls.explain("cntNotify is NULL")
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    return RT.handles.get("cnt_notify", h)


def cnt_notify_create(flag):
    """aclrtCntNotifyCreate -> (counting notify, code): on the current device (950); a flag
    other than 0 107000; no current device 107002; on A2 / A3 207000."""
    if not _supported():
        return None, _not_supported()
    if flag != 0:
        RT.tls.explain(f"flag {flag} is not 0")
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    ctx = RT.current_context
    if ctx is None:
        return None, ERR.ACL_ERROR_RT_CONTEXT_NULL
    n = CntNotify(ctx)
    n.handle = RT.handles.add("cnt_notify", n)
    return n.handle, OK


def cnt_notify_destroy(cnt_notify) -> int:
    """aclrtCntNotifyDestroy: the handle checks; its slot is freed once no queued task names
    it."""
    if not _supported():
        return _not_supported()
    n, code = _cnt(cnt_notify)
    if code:
        return code
    n.release()
    return OK


def _task_checks(cnt_notify, stream, info, bad_modes, needs_info=True):
    """The shared checks of record / wait / reset, in the runtime's order: (notify, stream,
    code). ``bad_modes()`` (called once ``info`` is a dict) answers why its modes are refused,
    or ``""``; reset passes ``needs_info=False`` (it has no info)."""
    if needs_info and info is None:
        RT.tls.explain("info is NULL")
        return None, None, ERR.ACL_ERROR_INVALID_PARAM
    if info is not None and not isinstance(info, dict):
        RT.tls.explain(f"info {info!r} is not a dict of the struct's fields")
        return None, None, ERR.ACL_ERROR_INVALID_PARAM
    if not _supported():
        return None, None, _not_supported()
    n, code = _cnt(cnt_notify)
    if code:
        return None, None, code
    s, code = ST.lookup(stream)
    if code:
        return None, None, code
    why = bad_modes()
    if why:
        RT.tls.explain(why)
        return None, None, ERR.ACL_ERROR_RT_PARAM_INVALID
    s, code = ST.resolve_same_ctx(s)
    if code:
        return None, None, code
    return n, s, OK


def _submit(n, s, flag: int, value: int, record: bool) -> int:
    op = S.OP_EVENT_RECORD if record else S.OP_EVENT_WAIT
    cost = s.device.timing.host_event_record_ns if record else s.device.timing.host_event_wait_ns
    pos = s.submit(op, cost, a0=n.slot, a1=value & _U32, flag=flag)
    if pos >= 0:
        n.note_task(s, pos)
    return ST.refused(pos)


def cnt_notify_record(cnt_notify, stream, info) -> int:
    """aclrtCntNotifyRecord: in stream order, the counter becomes ``info["value"]``, or adds,
    ORs, ANDs it (``info["mode"]``: ACL_RT_CNT_NOTIFY_RECORD_*); waits parked on it re-check.
    NULL info 100000; a mode other than 0 / 1 / 2 / 4 107000."""
    mode = _field(info, "mode") if isinstance(info, dict) else None
    value = _field(info, "value") if isinstance(info, dict) else None

    def bad_modes() -> str:
        if mode not in _RECORD_MODES or value is None or value < 0:
            return (f"info mode {info.get('mode')!r} is not SET_VALUE(0), ADD(1), BIT_OR(2) or "
                    "BIT_AND(4), or its value is not a uint32")
        return ""
    n, s, code = _task_checks(cnt_notify, stream, info, bad_modes)
    if code:
        return code
    return _submit(n, s, S.CNT | mode, value, True)


def cnt_notify_wait_with_timeout(cnt_notify, stream, info) -> int:
    """aclrtCntNotifyWaitWithTimeout: holds the stream until the counter compares true with
    ``info["value"]`` (``info["mode"]``: LESS, EQUAL, BIGGER, BIGGER_OR_EQUAL, EQUAL_WITH_BITMASK
    — ``(counter & value) == value``); ``info["isClear"]`` non-zero clears the counter when the
    wait ends. ``info["timeout"]`` (seconds) is not simulated (the deadlock diagnosis reports a
    wait that can never end). NULL info 100000; a mode above 4 107000."""
    fields = {k: _field(info, k) for k in ("mode", "value", "timeout", "isClear")} \
        if isinstance(info, dict) else {}

    def bad_modes() -> str:
        if any(v is None for v in fields.values()) or not 0 <= fields["mode"] < _WAIT_MODE_MAX \
                or fields["value"] < 0:
            return f"info mode {info.get('mode')!r} is not in [0, 5), or a field is not a uint32"
        return ""
    n, s, code = _task_checks(cnt_notify, stream, info, bad_modes)
    if code:
        return code
    clear = S.WAIT_RESET if fields["isClear"] & 0xFF else 0
    return _submit(n, s, S.CNT | (fields["mode"] << 1) | clear, fields["value"], False)


def cnt_notify_reset(cnt_notify, stream) -> int:
    """aclrtCntNotifyReset: a record that sets the counter to 0, in stream order
    (``api_impl_david.cc:1086``)."""
    n, s, code = _task_checks(cnt_notify, stream, None, lambda: "", needs_info=False)
    if code:
        return code
    return _submit(n, s, S.CNT | ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE, 0, True)


def cnt_notify_get_id(cnt_notify):
    """aclrtCntNotifyGetId -> (id, code): its sync slot on the device (as aclrtGetNotifyId)."""
    if not _supported():
        return None, _not_supported()
    n, code = _cnt(cnt_notify)
    if code:
        return None, code
    return int(n.slot), OK
