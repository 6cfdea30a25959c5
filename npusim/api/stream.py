"""``Buffer``, ``Stream``, ``Event`` and ``ExternalEvent`` of the Pythonic API, and
``random_task_info`` (the task info ``Stream.random`` hands aclrtRandomNumAsync).
"""
from __future__ import annotations

import numpy as np

from .. import acl
from ..runtime.api_random import pack_task_info
from ..runtime.runtime import RT
from .base import _ok, _out


class Buffer:
    """Device (or pinned host) memory: ``int(buf)`` is its address, so it can be a kernel arg.
    ``name``: the user's name for it (``Device.malloc(size, name=...)``), shown by fault
    messages and traces."""

    def __init__(self, device: "Device", ptr: int, size: int, host: bool = False,
                 name: str = ""):
        self.device, self.ptr, self.size, self.host = device, ptr, size, host
        self.name = name
        if name:
            device._dev.state.mem.set_label(ptr, name)

    def __int__(self):
        return self.ptr

    __index__ = __int__

    def __repr__(self):
        name = f" {self.name!r}" if self.name else ""
        return (f"Buffer{name}(0x{self.ptr:x}, {self.size} bytes"
                f"{', pinned host' if self.host else ''})")

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

    def _use(self) -> None:
        """Make the stream's device current (``Device._use``): a graph, a task update or a
        launch on it works whichever ``Device`` acted last."""
        use = getattr(self.device, "_use", None)
        if use is not None and self.handle:
            use()

    def __repr__(self):
        name = self.name
        return f"Stream(0x{self.handle or 0:x}{f', {name!r}' if name else ''})"

    @property
    def name(self) -> str:
        """The user's name for the stream ("" when it has none)."""
        return self._runtime_stream().label

    @name.setter
    def name(self, value: str) -> None:
        self._runtime_stream().set_label(value)

    def _runtime_stream(self):
        if not self.handle:
            ctx = RT.current_context
            if ctx is None:
                _ok(acl.ACL_ERROR_RT_CONTEXT_NULL)
            return ctx.default_stream
        s, code = RT.handles.get("stream", self.handle)
        _ok(code)
        return s

    def synchronize(self) -> None:
        _ok(acl.rt.synchronize_stream(self.handle))

    def query(self) -> bool:
        """True when every task issued so far has finished (at the host's current time)."""
        return _out(acl.rt.stream_query(self.handle)) == acl.ACL_STREAM_STATUS_COMPLETE

    def record(self, event: "Event", external: bool = False) -> None:
        """aclrtRecordEvent; ``external=True``: aclrtRecordEventWithFlag(EXTERNAL) on a capturing
        stream — every replay of the graph publishes a record of ``event`` (an event from
        ``Device.event(kind="sync")``) that streams and other graphs can wait on."""
        if external:
            _ok(acl.rt.record_event_with_flag(event.handle, self.handle,
                                              acl.ACL_EVENT_RECORD_EXTERNAL))
        else:
            _ok(acl.rt.record_event(event.handle, self.handle))

    def wait(self, event: "Event", external: bool = False) -> None:
        """aclrtStreamWaitEvent; ``external=True``: aclrtStreamWaitEventWithFlag(EXTERNAL) on a
        capturing stream — every replay waits for the event's latest record before it."""
        if external:
            _ok(acl.rt.stream_wait_event_with_flag(self.handle, event.handle, 0,
                                                   acl.ACL_EVENT_WAIT_EXTERNAL))
        else:
            _ok(acl.rt.stream_wait_event(self.handle, event.handle))

    def reset(self, event: "Event") -> None:
        """aclrtResetEvent on this stream (captured when the stream captures)."""
        _ok(acl.rt.reset_event(event.handle, self.handle))

    def copy(self, dst, src, count: int, kind: int = acl.ACL_MEMCPY_DEFAULT) -> None:
        _ok(acl.rt.memcpy_async(int(dst), count, int(src), count, kind, self.handle))

    def launch(self, kernel: "str | UserKernel | Function", blocks: int = 1, args=(),
               duration_ns: int = 0) -> None:
        """Launch ``kernel`` on this stream: a kernel-table name (the built-in sample kernels, a
        ``@npusim.kernel`` by the name it was defined with), a ``@npusim.kernel`` object itself
        or a :class:`Function` of a loaded binary — the one launch method for all three.
        ``args`` are packed by the kernel's declared parameter types (``Function.launch``);
        ``duration_ns`` > 0 makes the task run exactly that long. aclrtLaunchKernelWithHostArgs;
        raises ``AclError`` (107000 for an unknown name, with the close matches; the launch's
        own codes otherwise), ``TypeError`` for anything else than the three. ``Device.launch``
        sorts the three out (a :class:`Function` launches itself on this stream)."""
        self.device.launch(kernel, self, blocks, args, duration_ns)

    def destroy(self, force: bool = False) -> None:
        """aclrtDestroyStream (waits for the stream's tasks); ``force=True``:
        aclrtDestroyStreamForce (the tasks not started yet are discarded)."""
        _ok((acl.rt.destroy_stream_force if force else acl.rt.destroy_stream)(self.handle))

    # ---- stream control (chapter 06) ----
    def abort(self) -> None:
        """aclrtStreamAbort: discard the tasks not started yet; the stream stays usable."""
        _ok(acl.rt.stream_abort(self.handle))

    def stop(self) -> None:
        """aclrtStreamStop: the task running now ends; queued tasks stay."""
        _ok(acl.rt.stream_stop(self.handle))

    def activate(self, other: "Stream") -> None:
        """aclrtActiveStream(other, self): when this stream's task runs (both bound to a built
        model), ``other`` starts from its first task."""
        _ok(acl.rt.active_stream(other.handle, self.handle))

    def switch(self, left, op: str, right, target: "Stream", dtype: str = "int32") -> None:
        """aclrtSwitchStream: when this task runs, ``*left op *right`` (device addresses of
        int32 or int64 values; ``op`` one of == != > >= < <=) starts ``target`` and stops this
        stream. Both streams must be bound to a built model."""
        _ok(acl.rt.switch_stream(int(left), _CONDITIONS[op], int(right),
                                 {"int32": acl.ACL_RT_SWITCH_INT32,
                                  "int64": acl.ACL_RT_SWITCH_INT64}[dtype],
                                 target.handle, None, self.handle))

    def clean(self) -> None:
        """aclrtPersistentTaskClean: drop the tasks of a bound persistent stream (its model
        built and idle) so new ones can be issued."""
        _ok(acl.rt.persistent_task_clean(self.handle))

    def random(self, out, num: int, counter, dist: str = "uniform", dtype: str = "float32",
               seed: int = 0, **params) -> int:
        """aclrtRandomNumAsync: ``num`` random numbers into ``out`` when the task runs (Philox,
        keyed by ``seed``, from the 16-byte counter at device address ``counter``, which the
        task reads then); ``dist`` / ``dtype`` / ``params`` as :func:`random_task_info`.
        Returns the task's id (aclrtGetThreadLastTaskId): on a stream bound to a built model,
        the id ``BuiltModel.update_random`` takes."""
        _ok(acl.rt.random_num_async(random_task_info(out, num, counter, dist, dtype, seed,
                                                     **params), self.handle, None))
        return _out(acl.rt.get_thread_last_task_id())


_CONDITIONS = {"==": acl.ACL_RT_EQUAL, "!=": acl.ACL_RT_NOT_EQUAL, ">": acl.ACL_RT_GREATER,
               ">=": acl.ACL_RT_GREATER_OR_EQUAL, "<": acl.ACL_RT_LESS,
               "<=": acl.ACL_RT_LESS_OR_EQUAL}


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


class ExternalEvent(Event):
    """An event made with ACL_EVENT_EXTERNAL, shaped like ``torch.npu.ExternalEvent``: a graph
    captures a wait on it (and a reset after), and each step records it eagerly — e.g. on the
    update stream after a task update — so the replay runs only after the update
    (``Device.external_event()``)."""

    def record(self, stream: "Stream") -> None:
        stream.record(self)

    def wait(self, stream: "Stream") -> None:
        stream.wait(self)

    def reset(self, stream: "Stream") -> None:
        stream.reset(self)


_RANDOM_DIST = {"dropout": (acl.ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK, ("ratio",)),
                "uniform": (acl.ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, ("low", "high")),
                "normal": (acl.ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS, ("mean", "stddev")),
                "truncated_normal": (acl.ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS,
                                     ("mean", "stddev"))}
_RANDOM_DEFAULTS = {"ratio": 0.5, "low": 0.0, "high": 1.0, "mean": 0.0, "stddev": 1.0}
_RANDOM_TYPES = {"float32": (acl.ACL_FLOAT, 4), "float16": (acl.ACL_FLOAT16, 2),
                 "bfloat16": (acl.ACL_BF16, 2), "int32": (acl.ACL_INT32, 4),
                 "uint32": (acl.ACL_UINT32, 4), "int64": (acl.ACL_INT64, 8),
                 "uint64": (acl.ACL_UINT64, 8)}


def random_task_info(out, num: int, counter, dist: str = "uniform", dtype: str = "float32",
                     seed: int = 0, **params) -> bytes:
    """The 104 bytes of an ``aclrtRandomNumTaskInfo`` (acl_rt.h): ``dist`` one of
    uniform (``low``, ``high``), normal / truncated_normal (``mean``, ``stddev``), dropout
    (``ratio``: a bitmask of ``num`` bits, 1 = kept); ``dtype`` float32 / float16 /
    bfloat16 (every dist), int32 / uint32 / int64 / uint64 (uniform; ``low`` / ``high``
    integers). ``out`` / ``counter``: device addresses; ``seed``, ``num`` by value."""
    func, names = _RANDOM_DIST[dist]
    data_type, size = _RANDOM_TYPES[dtype]
    unknown = set(params) - set(names)
    if unknown:
        raise TypeError(f"{dist} takes {names}, not {sorted(unknown)}")
    member = {"dropout": ("dropoutBitmaskInfo", ("dropoutRation",)),
              "uniform": ("uniformDisInfo", ("min", "max"))}.get(
                  dist, ("normalDisInfo", ("mean", "stddev")))
    vals = [params.get(n, _RANDOM_DEFAULTS[n]) for n in names]
    floats = data_type in (acl.ACL_FLOAT, acl.ACL_FLOAT16, acl.ACL_BF16)
    vals = [float(v) if floats else int(v) for v in vals]
    fields = {c: {"valueOrAddr": v, "size": size} for c, v in zip(member[1], vals)}
    return pack_task_info({
        "dataType": data_type,
        "randomNumFuncParaInfo": {"funcType": func, "paramInfo": {member[0]: fields}},
        "randomResultAddr": int(out), "randomCounterAddr": int(counter),
        "randomSeed": {"valueOrAddr": int(seed), "size": 8},
        "randomNum": {"valueOrAddr": int(num), "size": 8}})
