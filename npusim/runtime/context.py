"""Contexts: a device binding, its default stream, its streams, and its failure state.

Per thread the runtime keeps (``curCtx``, ``curRef``): an explicit context set by
``aclrtCreateContext``/``aclrtSetCurrentContext``, or the device's primary context referenced by
``aclrtSetDevice``. The current context is the first that is still valid (docs/eager_api_checks.md
§0, §3).
"""
from __future__ import annotations

from .stream import ACL_RT_STREAM_STATE_CREATE_POST, Stream, notify_state


class Context:
    __slots__ = ("device", "primary", "destroyed", "streams", "failure_code", "stop_on_failure",
                 "handle", "capture_refs", "default_stream", "capturing", "__weakref__")

    def __init__(self, device, primary: bool):
        self.device = device
        self.primary = primary
        self.destroyed = False
        self.streams: dict = {}         # its streams, in creation order (a dict: O(1) removal)
        self.failure_code = 0          # sticky code once a STOP_ON_FAILURE stream faulted
        self.stop_on_failure = False
        self.handle = 0
        self.capture_refs = [0, 0, 0]  # captures of this context's streams per mode (§3.2)
        self.capturing: set = set()    # streams given a capture link (capture.enter), some may
        #                                have left capture since: context_capturing prunes them
        device.contexts[self] = None
        self.default_stream = Stream(self, is_default=True)
        notify_state(self.default_stream, ACL_RT_STREAM_STATE_CREATE_POST)

    def describe(self) -> str:
        return f"{'primary ' if self.primary else ''}context of device {self.device.id}"
