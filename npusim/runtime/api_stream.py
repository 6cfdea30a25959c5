"""Streams: create, destroy, synchronize, query, failure mode (docs/eager_api_checks.md §4)."""
from __future__ import annotations

from .. import errors as ERR
from ..device import engine as E
from ..device.recording import OBS_SQ
from .capture import stream_capturing
from .device import DeadlockError
from .runtime import RT
from .stream import (ACL_CONTINUE_ON_FAILURE, ACL_STOP_ON_FAILURE,  # noqa: F401
                     ACL_STREAM_CPU_SCHEDULE, ACL_STREAM_DEVICE_USE_ONLY, ACL_STREAM_FAST_LAUNCH,
                     ACL_STREAM_FAST_SYNC, ACL_STREAM_HUGE, ACL_STREAM_PERSISTENT, NO_SYNC_FLAGS,
                     STREAM_FLAGS, Stream, lookup, resolve, resolve_same_ctx)

ACL_STREAM_STATUS_COMPLETE, ACL_STREAM_STATUS_NOT_READY = 0, 1


def _count_streams(dev) -> int:
    return sum(len(c.streams) for c in dev.contexts if not c.destroyed)


def create_stream():
    return create_stream_with_config(0, 0)


def create_stream_with_config(priority: int = 0, flag: int = 0):
    flag = int(flag) & STREAM_FLAGS                      # unknown bits are dropped
    if flag & ACL_STREAM_DEVICE_USE_ONLY and flag != ACL_STREAM_DEVICE_USE_ONLY:
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    ctx = RT.current_context
    if ctx is None:
        return None, ERR.ACL_ERROR_RT_CONTEXT_NULL
    dev = ctx.device
    if _count_streams(dev) >= dev.profile.max_user_streams:
        return None, ERR.ACL_ERROR_RT_NO_STREAM_RESOURCE
    RT.tick(dev.timing.host_api_ns)
    s = Stream(ctx, flags=flag, priority=min(max(int(priority), 0), 7))
    return RT.handles.add("stream", s), ERR.ACL_SUCCESS


def destroy_stream(h) -> int:
    if not h:
        return ERR.ACL_ERROR_INVALID_PARAM
    s, code = lookup(h)
    if code:
        return code
    if stream_capturing(s):
        return ERR.ACL_ERROR_RT_STREAM_CAPTURED
    s, code = resolve_same_ctx(s)
    if code:
        return code
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
    RT.tick(dev.timing.host_sync_ns)
    start = RT.host_ns
    try:
        dev.wait_sq(s.sq, s.tail)
    except DeadlockError:
        return ERR.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    if timeout_ms > 0 and RT.host_ns - start > timeout_ms * 1_000_000:
        return ERR.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    return s.ctx.failure_code or dev.take_sq_error(s.sq)


def synchronize_stream_with_timeout(h, timeout_ms: int) -> int:
    if timeout_ms < -1:
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    if timeout_ms == 0:
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
