"""What the eager APIs need to know about capture (stream capture itself arrives with the ACL
Graph layer): whether a stream or any stream of a context is capturing."""
from __future__ import annotations


def stream_capturing(stream) -> bool:
    return getattr(stream, "capture", None) is not None


def context_capturing(ctx) -> bool:
    return any(stream_capturing(s) for s in ctx.streams)


def event_captured(ev) -> bool:
    """Is the event bound to a model that is still capturing (107028 for sync/query)?"""
    model = getattr(ev, "capture_model", None)
    return model is not None and model.is_capturing


def capture_mode_blocked() -> bool:
    """Would the calling thread's capture mode block an unsafe synchronous call (107030)?"""
    from .runtime import RT
    check = getattr(RT, "capture_mode_check", None)
    return bool(check and check())
