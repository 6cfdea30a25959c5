"""Streams: create, destroy, synchronize, query, failure mode (docs/eager_api_checks.md §4)."""
from __future__ import annotations

from .. import errors as ERR
from ..device import engine as E
from ..device.recording import OBS_SQ
from .capture import stream_capturing
from .device import DeadlockError, sync_cost
from .runtime import RT
from .stream import (ACL_CONTINUE_ON_FAILURE, ACL_STOP_ON_FAILURE,  # noqa: F401
                     ACL_STREAM_CPU_SCHEDULE, ACL_STREAM_DEVICE_USE_ONLY, ACL_STREAM_FAST_LAUNCH,
                     ACL_STREAM_FAST_SYNC, ACL_STREAM_HUGE, ACL_STREAM_PERSISTENT, NO_SYNC_FLAGS,
                     STREAM_FLAGS, Stream, lookup, notify_state, resolve, resolve_same_ctx)
from .stream import ACL_RT_STREAM_STATE_CREATE_POST

ACL_STREAM_STATUS_COMPLETE, ACL_STREAM_STATUS_NOT_READY = 0, 1


def _count_streams(dev) -> int:
    return sum(len(c.streams) for c in dev.contexts if not c.destroyed)


def create_stream():
    return create_stream_with_config(0, 0)


def create_stream_with_config(priority: int = 0, flag: int = 0):
    flag = int(flag) & STREAM_FLAGS                      # unknown bits are dropped
    if flag & ACL_STREAM_DEVICE_USE_ONLY and flag != ACL_STREAM_DEVICE_USE_ONLY:
        RT.tls.explain(f"flag: 0x{flag:x} combines ACL_STREAM_DEVICE_USE_ONLY with other flags")
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    ctx = RT.current_context
    if ctx is None:
        return None, ERR.ACL_ERROR_RT_CONTEXT_NULL
    dev = ctx.device
    if _count_streams(dev) >= dev.profile.max_user_streams:
        return None, ERR.ACL_ERROR_RT_NO_STREAM_RESOURCE
    RT.tick(dev.timing.host_api_ns)
    s = Stream(ctx, flags=flag, priority=min(max(int(priority), 0), 7))
    h = RT.handles.add("stream", s)
    notify_state(s, ACL_RT_STREAM_STATE_CREATE_POST)     # aclrtRegStreamStateCallback
    return h, ERR.ACL_SUCCESS


def destroy_stream(h) -> int:
    if not h:
        return ERR.ACL_ERROR_INVALID_PARAM
    s, code = lookup(h)
    if code:
        return code
    if s.is_default:            # its handle from aclrtCtxGetCurrentDefaultStream: the context owns it
        RT.tls.explain(f"h: 0x{h:x} is a context's default stream "
                       f"(aclrtCtxGetCurrentDefaultStream): the context destroys it")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    if stream_capturing(s):
        return ERR.ACL_ERROR_RT_STREAM_CAPTURED
    s, code = resolve_same_ctx(s)
    if code:
        return code
    if s.bound is not None:     # TearDownOwnedStream: a stream bound to a model (107005)
        RT.tls.explain("The stream is bound to a model: unbind it (aclmdlRIUnbindStream) first")
        return ERR.ACL_ERROR_RT_STREAM_MODEL
    try:                                                   # waits for pending tasks [doc 06]
        s.device.wait_sq(s.sq, s.tail)
    except DeadlockError:
        pass
    s.device.take_sq_error(s.sq)          # an unreported fault must not pass to the SQ's next owner
    s.release()
    return ERR.ACL_SUCCESS


def synchronize_stream(h, timeout_ms: int = -1) -> int:
    s, code = lookup(h)
    if code:
        return code
    if s is not None and stream_capturing(s):
        return ERR.ACL_ERROR_RT_STREAM_CAPTURED
    if s is not None and s.flags & NO_SYNC_FLAGS:
        return ERR.ACL_SUCCESS
    s, code = resolve(s)
    if code:
        return code
    if s.ctx.failure_code:
        return s.ctx.failure_code
    dev = s.device
    start = RT.host_ns
    try:
        dev.wait_sq(s.sq, s.tail)
    except DeadlockError as e:
        RT.tls.explain(e.diagnosis)
        # a hang the real stack ends with its own code (an HCCL notify wait: 107020 once
        # HCCL_EXEC_TIMEOUT expires, docs/fidelity.md row 390), unless the caller's own
        # timeout comes first
        return e.code if e.code and timeout_ms <= 0 else ERR.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    finally:
        waited = sync_cost(dev.timing, start)
    if timeout_ms > 0 and waited > timeout_ms * 1_000_000:
        return ERR.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    return s.ctx.failure_code or dev.take_sq_error(s.sq)


def synchronize_stream_with_timeout(h, timeout_ms: int) -> int:
    if timeout_ms < -1:
        RT.tls.explain(f"timeout_ms: {timeout_ms} (-1 waits forever; a timeout is >= 1 ms)")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    if timeout_ms == 0:
        RT.tls.explain("timeout_ms is 0 (-1 waits forever; a timeout is >= 1 ms)")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    return synchronize_stream(h, timeout_ms)


def stream_query(h):
    s, code = lookup(h)
    if code:
        return None, code
    if s is not None and stream_capturing(s):
        return None, ERR.ACL_ERROR_RT_STREAM_CAPTURED
    if s is not None and s.flags & NO_SYNC_FLAGS:
        return ACL_STREAM_STATUS_COMPLETE, ERR.ACL_SUCCESS
    s, code = resolve(s)
    if code:
        return None, code
    if s.ctx.failure_code:
        return None, s.ctx.failure_code
    RT.tick(s.device.timing.host_api_ns)
    s.device.advance_to_host()
    sq = s.device.state.sqs[s.sq]       # the engine may have started the last task, not ended it
    done = sq[E.Q_HEAD] >= s.tail and sq[E.Q_TIME] <= RT.host_ns
    if done and s.device.state.access_log is not None:     # analysis: the host saw it finish
        s.device.state.access_log.observe(OBS_SQ, s.sq, s.tail)
    return (ACL_STREAM_STATUS_COMPLETE if done else ACL_STREAM_STATUS_NOT_READY), ERR.ACL_SUCCESS


def set_stream_failure_mode(h, mode: int) -> int:
    s, code = lookup(h)
    if code:
        return code
    if s is None:                                          # NULL: the default stream, if any
        s, code = resolve(None)
        if code:
            return ERR.ACL_ERROR_RT_PARAM_INVALID
    if s.flags & ACL_STREAM_DEVICE_USE_ONLY or s.is_model:   # a model's own stream: 207000
        return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    if RT.current_context is None:
        return ERR.ACL_ERROR_RT_CONTEXT_NULL
    mode = int(mode) & 1
    # the stream's own mode, which only this call sets; the other streams of a STOP context keep
    # CONTINUE as their own mode, although they fail like STOP streams (stream.cc:4303-4352)
    own = s.failure_mode
    if mode == own:
        return ERR.ACL_SUCCESS
    if mode == ACL_CONTINUE_ON_FAILURE:                    # STOP -> CONTINUE is refused
        return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    if s.ctx is not RT.current_context:
        return ERR.ACL_ERROR_RT_STREAM_CONTEXT
    s.failure_mode = ACL_STOP_ON_FAILURE
    ctx = s.ctx                                            # the whole context switches mode
    ctx.stop_on_failure = True
    for t in ctx.streams:
        t.set_stop_on_failure()
    return ERR.ACL_SUCCESS


# ---- queries and attributes (chapter 06; ApiImpl::StreamGetPriority/Flags, rtsStreamGet*) ----
ACL_STREAM_ATTR_FAILURE_MODE, ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK = 1, 2
ACL_STREAM_ATTR_USER_CUSTOM_TAG, ACL_STREAM_ATTR_CACHE_OP_INFO, ACL_STREAM_ATTR_PRIORITY = 3, 4, 5


def _queried(h):
    """The stream a query names: handle check (107017), context (107002), NULL = the current
    context's default stream; a model's own stream is allowed (it has an id and flags)."""
    s, code = lookup(h)
    if code:
        return None, code
    ctx = RT.current_context
    if ctx is None:
        return None, ERR.ACL_ERROR_RT_CONTEXT_NULL
    return (ctx.default_stream if s is None else s), ERR.ACL_SUCCESS


def stream_get_id(stream):
    """aclrtStreamGetId: (stream id, code); NULL is the default stream."""
    s, code = _queried(stream)
    return (None, code) if code else (s.id, ERR.ACL_SUCCESS)


def stream_get_priority(stream):
    """aclrtStreamGetPriority: (priority the stream was created with, code); model streams 0."""
    s, code = _queried(stream)
    if code:
        return None, code
    return (0 if s.is_model else s.priority), ERR.ACL_SUCCESS


def stream_get_flags(stream):
    """aclrtStreamGetFlags: (the ACL flags the stream was created with, OR-ed; 0 for none)."""
    s, code = _queried(stream)
    return (None, code) if code else (s.flags & STREAM_FLAGS, ERR.ACL_SUCCESS)


def get_stream_available_num():
    """aclrtGetStreamAvailableNum: (streams the current device can still create, code)."""
    ctx = RT.current_context
    if ctx is None:
        return None, ERR.ACL_ERROR_RT_CONTEXT_NULL
    dev = ctx.device
    return max(dev.profile.max_user_streams - _count_streams(dev), 0), ERR.ACL_SUCCESS


def _own_stream(h):
    """A stream of the current context (NULL: its default stream): ApiImpl's check order."""
    s, code = _queried(h)
    if code:
        return None, code
    if s.ctx is not RT.current_context:
        return None, ERR.ACL_ERROR_RT_STREAM_CONTEXT
    if s.is_model:
        return None, ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    return s, ERR.ACL_SUCCESS


def set_stream_overflow_switch(stream, flag: int) -> int:
    """aclrtSetStreamOverflowSwitch: the stream's overflow-detection switch (0 or 1; the acl
    layer refuses other values with 100000). Only tasks issued after the call see it. A chip
    without the switch (310P: HWTS) returns 0 at once, the stream unchecked
    (``rtSetStreamOverflowSwitch``, api_c_stream.cc); then the handle, a capturing stream
    107027 (``ApiErrorDecorator::SetStreamOverflowSwitch``), the context checks. The saturation
    mode is not checked (api_overflow.py)."""
    if flag not in (0, 1):
        RT.tls.explain(f"flag: {flag} is not 0 (off) or 1 (on)")
        return ERR.ACL_ERROR_INVALID_PARAM
    if not RT.profile_in_force().stars:
        return ERR.ACL_SUCCESS
    s, code = lookup(stream)
    if code:
        return code
    if s is not None and stream_capturing(s):
        RT.tls.explain("the stream is capturing")
        return ERR.ACL_ERROR_RT_STREAM_CAPTURED
    s, code = _own_stream(stream)
    if code:
        return code
    s.overflow_switch = flag
    return ERR.ACL_SUCCESS


def get_stream_overflow_switch(stream):
    """aclrtGetStreamOverflowSwitch: (switch, code); 1 on a chip without the switch (310P:
    ``ApiImpl::GetStreamOverflowSwitch`` answers 1 where the chip has no STARS)."""
    s, code = _own_stream(stream)
    if code:
        return None, code
    return (s.overflow_switch if RT.profile_in_force().stars else 1), ERR.ACL_SUCCESS


def set_stream_attribute(stream, stm_attr_type: int, value) -> int:
    """aclrtSetStreamAttribute: ``value`` is the union member the attribute selects (an int:
    failureMode, overflowSwitch, userCustomTag, cacheOpInfoSwitch, streamPriority). NULL value:
    107000; an unknown attribute: 107000 (``rtsStreamSetAttribute``)."""
    if value is None:
        RT.tls.explain("value is NULL (None)")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    s, code = lookup(stream)
    if code:
        return code
    if stm_attr_type == ACL_STREAM_ATTR_FAILURE_MODE:
        return set_stream_failure_mode(stream, value)
    if stm_attr_type == ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK:
        return set_stream_overflow_switch(stream, value)
    if stm_attr_type not in (ACL_STREAM_ATTR_USER_CUSTOM_TAG, ACL_STREAM_ATTR_CACHE_OP_INFO,
                             ACL_STREAM_ATTR_PRIORITY):
        RT.tls.explain(f"stm_attr_type: {stm_attr_type} cannot be set (USER_CUSTOM_TAG, "
                       f"CACHE_OP_INFO, PRIORITY)")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    s, code = _own_stream(stream)
    if code:
        return code
    if not 0 <= value <= 0xFFFF_FFFF:
        RT.tls.explain(f"value: {value} is not a uint32_t")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    if stm_attr_type == ACL_STREAM_ATTR_USER_CUSTOM_TAG:
        s.custom_tag = value
    elif stm_attr_type == ACL_STREAM_ATTR_CACHE_OP_INFO:
        if value not in (0, 1):
            RT.tls.explain(f"value: {value} is not 0 or 1 for CACHE_OP_INFO")
            return ERR.ACL_ERROR_RT_PARAM_INVALID
        s.cache_op_info = value
    else:
        s.priority = min(value, 7)
    return ERR.ACL_SUCCESS


def get_stream_attribute(stream, stm_attr_type: int):
    """aclrtGetStreamAttribute: (the union member's value, code)."""
    s, code = lookup(stream)
    if code:
        return None, code
    if stm_attr_type not in range(ACL_STREAM_ATTR_FAILURE_MODE, ACL_STREAM_ATTR_PRIORITY + 1):
        RT.tls.explain(f"stm_attr_type: {stm_attr_type} is not an aclrtStreamAttr")
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    s, code = _own_stream(stream)
    if code:
        return None, code
    return {ACL_STREAM_ATTR_FAILURE_MODE: s.failure_mode,
            ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK: s.overflow_switch,
            ACL_STREAM_ATTR_USER_CUSTOM_TAG: s.custom_tag,
            ACL_STREAM_ATTR_CACHE_OP_INFO: s.cache_op_info,
            ACL_STREAM_ATTR_PRIORITY: s.priority}[stm_attr_type], ERR.ACL_SUCCESS


def ctx_get_current_default_stream():
    """aclrtCtxGetCurrentDefaultStream: (the current context's default stream, code)."""
    ctx = RT.current_context
    if ctx is None:
        return None, ERR.ACL_ERROR_RT_CONTEXT_NULL
    s = ctx.default_stream
    if not s.handle:
        RT.handles.add("stream", s)
    return s.handle, ERR.ACL_SUCCESS
