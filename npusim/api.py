"""The Pythonic API: objects over handles, exceptions over codes.

Every method goes through the ``npusim.acl`` facade and raises ``AclError`` (with ``.code`` and the
ACL name) where the facade returns a non-zero code, so both APIs share one set of rules.
"""
from __future__ import annotations

import numpy as np

from . import acl
from .errors import AclTimeoutError, DeviceError, check, class_for
from .runtime import api_device, api_launch, args as _args
from .runtime.runtime import RT


def configure(profile: str | None = None, trace: bool | None = None, **options) -> None:
    """Choose the chip profile and simulator options before ``acl.init`` / ``Device(...)``.

    ``timing={...}`` overrides timing constants; ``hbm_bytes=``/``host_bytes=`` size the arenas.
    """
    RT.configure(profile=profile, trace=trace, **options)


def reset() -> None:
    """Forget all simulator state (devices, handles, memory), like starting a new process."""
    RT.reset()


def _detail(code: int) -> str:
    """The device's explanation for a device fault or a timeout (deadlock); other codes are
    about the call itself, which an older, unrelated explanation must not decorate."""
    if not issubclass(class_for(code), (DeviceError, AclTimeoutError)):
        return ""
    for d in RT.devices.values():
        if d.last_error_detail:
            msg, d.last_error_detail = d.last_error_detail, ""
            return msg
    return ""


def _ok(code: int) -> None:
    if code:
        check(code, _detail(code))


def _out(result):
    *outs, code = result
    _ok(code)
    return outs[0] if len(outs) == 1 else tuple(outs)


class Buffer:
    """Device (or pinned host) memory: ``int(buf)`` is its address, so it can be a kernel arg."""

    def __init__(self, device: "Device", ptr: int, size: int, host: bool = False):
        self.device, self.ptr, self.size, self.host = device, ptr, size, host

    def __int__(self):
        return self.ptr

    __index__ = __int__

    def __repr__(self):
        return f"Buffer(0x{self.ptr:x}, {self.size} bytes{', pinned host' if self.host else ''})"

    def write(self, data, offset: int = 0) -> "Buffer":
        """Synchronous copy of a numpy array (or bytes) into this buffer."""
        src = np.ascontiguousarray(np.frombuffer(data, np.uint8) if isinstance(data, bytes)
                                   else data)
        kind = acl.ACL_MEMCPY_HOST_TO_HOST if self.host else acl.ACL_MEMCPY_HOST_TO_DEVICE
        _ok(acl.rt.memcpy(self.ptr + offset, self.size - offset, acl.util.numpy_to_ptr(src),
                          src.nbytes, kind))
        return self

    def read(self, dtype=np.uint8, count: int | None = None, offset: int = 0) -> np.ndarray:
        """Synchronous copy of this buffer (or ``count`` items of it) into a new numpy array."""
        dtype = np.dtype(dtype)
        count = (self.size - offset) // dtype.itemsize if count is None else count
        out = np.zeros(count, dtype)
        kind = acl.ACL_MEMCPY_HOST_TO_HOST if self.host else acl.ACL_MEMCPY_DEVICE_TO_HOST
        _ok(acl.rt.memcpy(acl.util.numpy_to_ptr(out), out.nbytes, self.ptr + offset, out.nbytes,
                          kind))
        return out

    def fill(self, value: int, stream: "Stream | None" = None) -> "Buffer":
        if stream is None:
            _ok(acl.rt.memset(self.ptr, self.size, value, self.size))
        else:
            _ok(acl.rt.memset_async(self.ptr, self.size, value, self.size, stream.handle))
        return self

    def free(self) -> None:
        _ok(acl.rt.free_host(self.ptr) if self.host else acl.rt.free(self.ptr))


class Stream:
    def __init__(self, device: "Device", handle: int | None):
        self.device, self.handle = device, handle

    def __repr__(self):
        return f"Stream(0x{self.handle or 0:x})"

    def synchronize(self) -> None:
        _ok(acl.rt.synchronize_stream(self.handle))

    def query(self) -> bool:
        """True when every task issued so far has finished (at the host's current time)."""
        return _out(acl.rt.stream_query(self.handle)) == acl.ACL_STREAM_STATUS_COMPLETE

    def record(self, event: "Event") -> None:
        _ok(acl.rt.record_event(event.handle, self.handle))

    def wait(self, event: "Event") -> None:
        _ok(acl.rt.stream_wait_event(self.handle, event.handle))

    def copy(self, dst, src, count: int, kind: int = acl.ACL_MEMCPY_DEFAULT) -> None:
        _ok(acl.rt.memcpy_async(int(dst), count, int(src), count, kind, self.handle))

    def launch(self, kernel: str, blocks: int = 1, args=(), duration_ns: int = 0) -> None:
        """Launch a built-in kernel by name with its arguments packed into 8-byte slots."""
        self.device.launch(kernel, self, blocks, args, duration_ns)

    def destroy(self) -> None:
        _ok(acl.rt.destroy_stream(self.handle))


class Event:
    def __init__(self, handle: int):
        self.handle = handle

    def synchronize(self) -> None:
        _ok(acl.rt.synchronize_event(self.handle))

    def query(self) -> bool:
        return _out(acl.rt.query_event_status(self.handle)) == \
            acl.ACL_EVENT_RECORDED_STATUS_COMPLETE

    def elapsed_ms(self, end: "Event") -> float:
        return _out(acl.rt.event_elapsed_time(self.handle, end.handle))

    def destroy(self) -> None:
        _ok(acl.rt.destroy_event(self.handle))


class Device:
    """A simulated NPU. ``Device("Ascend910B")`` initialises ACL with that chip profile (a
    different profile than the one in force starts a fresh simulator) and sets the device."""

    def __init__(self, profile: str | None = None, id: int = 0):
        if profile is not None and RT.profile is not None and \
                RT.profile.name != api_device.get_profile(profile).name:
            RT.reset()
        if profile is not None:
            RT.configure(profile=profile)
        if not RT.initialized:
            acl.init()
        _ok(acl.rt.set_device(id))
        self.id = id
        self._dev = api_device.device(id)

    @property
    def profile(self):
        return self._dev.profile

    def __repr__(self):
        return f"Device({self.profile.name!r}, id={self.id})"

    @property
    def default_stream(self) -> Stream:
        return Stream(self, None)

    def stream(self) -> Stream:
        return Stream(self, _out(acl.rt.create_stream()))

    def event(self, flag: int = acl.ACL_EVENT_SYNC, kind: str = "ex") -> Event:
        """An event: ``kind`` "ex" (aclrtCreateEventExWithFlag, the default), "flag"
        (aclrtCreateEventWithFlag) or "legacy" (aclrtCreateEvent)."""
        if kind == "legacy":
            return Event(_out(acl.rt.create_event()))
        make = acl.rt.create_event_ex_with_flag if kind == "ex" else acl.rt.create_event_with_flag
        return Event(_out(make(flag | acl.ACL_EVENT_TIME_LINE if kind == "ex" else flag)))

    def malloc(self, size: int, policy: int = acl.ACL_MEM_MALLOC_HUGE_FIRST) -> Buffer:
        return Buffer(self, _out(acl.rt.malloc(size, policy)), size)

    def malloc_host(self, size: int) -> Buffer:
        return Buffer(self, _out(acl.rt.malloc_host(size)), size, host=True)

    def synchronize(self) -> None:
        _ok(acl.rt.synchronize_device())

    def launch(self, kernel: str, stream: Stream | None = None, blocks: int = 1, args=(),
               duration_ns: int = 0) -> None:
        from .device.kernels import TABLE
        from .runtime import api_stream as AS
        s, code = AS.lookup(stream.handle if stream else None)
        _ok(code)
        s, code = AS.resolve_same_ctx(s)
        _ok(code)
        if kernel not in TABLE.by_name:          # as aclrtBinaryGetFunction: not found -> 107000
            _ok(acl.ACL_ERROR_RT_PARAM_INVALID)
        addr = _args.place(s, _args.pack([int(a) if hasattr(a, "__index__") and
                                          not isinstance(a, (float, np.floating)) else a
                                          for a in args]))
        _ok(api_launch.launch(s, TABLE.id(kernel), blocks, addr, 8 * len(args), duration_ns))

    @property
    def now_ns(self) -> int:
        """The host's simulated clock (ns)."""
        return RT.host_ns

    def trace(self):
        """The recorded device trace (``npusim.configure(trace=True)`` before the work)."""
        from .trace.chrome import Trace
        return Trace.from_device(self._dev)

    def reset(self) -> None:
        _ok(acl.rt.reset_device(self.id))


_MODES = {"global": 0, "thread_local": 1, "relaxed": 2}


class Graph:
    """A captured model (``aclmdlRI``): replay it, inspect it, destroy it.

    Made by ``npusim.graph(stream=...)``, in the shape of ``torch.npu.graph``.
    """

    def __init__(self, stream: Stream | None = None, mode: str | int = "global"):
        self.stream = stream
        self.mode = _MODES[mode] if isinstance(mode, str) else int(mode)
        self.handle: int | None = None

    # ---- capture ----
    def capture_begin(self, stream: Stream | None = None) -> None:
        self.stream = stream or self.stream
        if self.stream is None:
            raise ValueError("graph capture needs a stream (the default stream cannot capture)")
        _ok(acl.mdl.ri_capture_begin(self.stream.handle, self.mode))

    def capture_end(self) -> None:
        self.handle = _out(acl.mdl.ri_capture_end(self.stream.handle))

    def __enter__(self) -> "Graph":
        self.capture_begin()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.capture_end()
        elif self.stream is not None and self.stream.handle:
            acl.mdl.ri_capture_end(self.stream.handle)     # leave capture; the error wins

    # ---- use ----
    def replay(self, stream: Stream | None = None) -> None:
        """Launch the graph on ``stream`` (default: the capture stream); asynchronous."""
        s = stream or self.stream
        _ok(acl.mdl.ri_execute_async(self.handle, s.handle if s else None))

    def destroy(self) -> None:
        _ok(acl.mdl.ri_destroy(self.handle))
        self.handle = None

    @property
    def _model(self):
        from .runtime.api_mdl import _model
        m, code = _model(self.handle)
        _ok(code)
        return m

    @property
    def num_tasks(self) -> int:
        return self._model.n_tasks()

    @property
    def streams(self) -> list[int]:
        return _out(acl.mdl.ri_get_streams(self.handle))

    def debug_print(self) -> list[str]:
        """aclmdlRIDebugPrint; returns the log lines too."""
        _ok(acl.mdl.ri_debug_print(self.handle))
        return self._model.last_debug_lines

    def to_json(self, path, verbose: bool = False) -> str:
        """aclmdlRIDebugJsonPrint to ``path``."""
        _ok(acl.mdl.ri_debug_json_print(self.handle, str(path), 1 if verbose else 0))
        return str(path)

    def to_dot(self, path=None) -> str:
        """Graphviz DOT of the captured DAG (stream order, cascades, event/notify edges)."""
        from .runtime.dump import to_dot
        text = to_dot(self._model)
        if path is not None:
            with open(path, "w") as f:
                f.write(text)
        return text


def graph(stream: Stream | None = None, mode: str | int = "global") -> Graph:
    """``with npusim.graph(stream=s) as g: ...`` captures the work issued on ``s`` (and on the
    streams it joins through events) into ``g``."""
    return Graph(stream, mode)


# ---- task groups and task update, in the shape of torch_npu's graph_task_* functions ----
def graph_task_group_begin(stream: Stream) -> None:
    """Open a task group on a capturing stream (captures the profile's prefetch NOPs)."""
    _ok(acl.mdl.ri_capture_task_grp_begin(stream.handle))


def graph_task_group_end(stream: Stream) -> int:
    """Close the task group; returns its handle (for ``graph_task_update_begin``)."""
    return _out(acl.mdl.ri_capture_task_grp_end(stream.handle))


def graph_task_update_begin(stream: Stream, handle: int) -> None:
    """The next kernel launches on ``stream`` (not capturing) rewrite the group's tasks, in
    order; each rewrite takes effect when ``stream`` runs it."""
    _ok(acl.mdl.ri_capture_task_update_begin(stream.handle, handle))


def graph_task_update_end(stream: Stream) -> None:
    _ok(acl.mdl.ri_capture_task_update_end(stream.handle))
