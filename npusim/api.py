"""The Pythonic API: objects over handles, exceptions over codes.

Every method goes through the ``npusim.acl`` facade and raises ``AclError`` (with ``.code`` and the
ACL name) where the facade returns a non-zero code, so both APIs share one set of rules.
"""
from __future__ import annotations

import os
import sys
import warnings

import numpy as np

from . import acl
from .analysis import clear_errors, set_recording, stop
from .analysis.lint import HINTS, explain
from .device.kernels import KC_BODY_NS, TABLE, UNIT_AIC
from .errors import AclTimeoutError, CaptureWarning, DeviceError, check, class_for
from .faults import clear_injections
from .kernel.printf import ensure_buffer
from .runtime import api_device, args as _args
from .runtime.api_device import profile
from .runtime.api_mdl import model_of
from .runtime.api_random import pack_task_info
from .runtime.cost import Roofline, declared_params, restore_model, set_model
from .runtime.dump import to_dot, to_dot_streams
from .runtime.argcheck import MODES as _CHECK_MODES, param_types
from .runtime.functions import table_function, with_duration
from .runtime.runtime import RT
from .trace.chrome import Trace


def configure(profile: str | None = None, trace: bool | None = None, **options) -> None:
    """Choose the chip profile and simulator options before ``acl.init`` / ``Device(...)``.

    ``timing={...}`` overrides timing constants; ``hbm_bytes=``/``host_bytes=`` size the arenas;
    ``record_accesses=True`` records source lines and memory accesses for ``npusim.analysis``;
    ``check_args="warn"`` (default: an ``ArgumentWarning``, the code unchanged, as the runtime
    launches it), ``"error"`` (refused with 107000) or ``"off"``: launches and task updates
    whose arguments do not match the kernel's declared parameters (``runtime/argcheck.py``).
    ``contention=True``: kernels of different streams share each device's AI Core, vector and
    AI CPU cores (``docs/timing.md`` "Contention"; default False: they overlap freely); it
    applies to open devices from the host's current time on, and to devices opened later.
    """
    if options.get("check_args", "warn") not in _CHECK_MODES:
        raise ValueError(f"check_args={options['check_args']!r}: one of {_CHECK_MODES}")
    if "record_accesses" in options:
        set_recording(options.pop("record_accesses"))
    if "contention" in options:
        options["contention"] = bool(options["contention"])
        for d in list(RT.devices.values()):
            d.set_contention(options["contention"])
    RT.configure(profile=profile, trace=trace, **options)


def reset() -> None:
    """Forget all simulator state (devices, handles, memory) and configuration (profile,
    tracing, options) and every armed fault injection, like starting a new process."""
    clear_injections()
    stop()                                      # recording off, logs and lint errors forgotten
    clear_errors()
    RT.reset(config=True)


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


def _cause(code: int) -> str:
    """The runtime's own reason for the facade call that just failed with ``code`` (what
    ``acl.get_recent_err_msg()`` adds after the code's meaning), for codes the linter does not
    explain."""
    msg = RT.tls.recent_error
    if not msg or code in HINTS or f" returned {code} " not in msg or " — " not in msg:
        return ""
    return msg.split(" — ", 1)[1]


def _ok(code: int) -> None:
    if code:
        dev = _detail(code)
        check(code, "; ".join(d for d in (dev, explain(code), "" if dev else _cause(code)) if d))


def _out(result):
    *outs, code = result
    _ok(code)
    return outs[0] if len(outs) == 1 else tuple(outs)


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
        own codes otherwise), ``TypeError`` for anything else than the three."""
        if isinstance(kernel, Function):
            kernel.launch(self, blocks, args, duration_ns=duration_ns)
        else:
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


class Device:
    """A simulated NPU. ``Device("Ascend910B")`` initialises ACL with that chip profile (a
    different profile than the one in force starts a fresh simulator) and sets the device.
    ``contention``: True/False switches this device's shared core pools on or off
    (``docs/timing.md`` "Contention"; None: as ``configure(contention=)`` left it), as the
    :attr:`contention` property does."""

    def __init__(self, profile: str | None = None, id: int = 0, contention: bool | None = None):
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
        if contention is not None:
            self.contention = contention

    @property
    def profile(self):
        return self._dev.profile

    @property
    def contention(self) -> bool:
        """Kernels of different streams share this device's cores (a pool per unit: a kernel
        waits until min(blocks, cores) of its unit's cores are free), or overlap freely (the
        default). Setting it applies from the host's current time on (``docs/timing.md``)."""
        return self._dev.state.contention

    @contention.setter
    def contention(self, on: bool) -> None:
        self._dev.set_contention(bool(on))

    def __repr__(self):
        return f"Device({self.profile.name!r}, id={self.id})"

    @property
    def default_stream(self) -> Stream:
        return Stream(self, None)

    def stream(self, name: str = "", persistent: bool = False) -> Stream:
        """A new stream; ``name`` labels it in traces, plots and messages; ``persistent=True``:
        ACL_STREAM_PERSISTENT, for a built model."""
        if persistent:
            s = Stream(self, _out(acl.rt.create_stream_with_config(
                0, acl.ACL_STREAM_PERSISTENT)))
        else:
            s = Stream(self, _out(acl.rt.create_stream()))
        if name:
            s.name = name
        return s

    def build_model(self) -> "BuiltModel":
        """aclmdlRIBuildBegin: a model built from bound persistent streams (``BuiltModel``)."""
        return BuiltModel(_out(acl.mdl.ri_build_begin(0)))

    def event(self, flag: int = acl.ACL_EVENT_SYNC, kind: str = "ex") -> Event:
        """An event: ``kind`` "ex" (aclrtCreateEventExWithFlag with ``flag`` | TIME_LINE, the
        default), "sync" (aclrtCreateEventExWithFlag(ACL_EVENT_SYNC) exactly: the event external
        records and waits take), "flag" (aclrtCreateEventWithFlag) or "legacy"
        (aclrtCreateEvent)."""
        if kind == "legacy":
            return Event(_out(acl.rt.create_event()))
        if kind == "sync":
            return Event(_out(acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC)))
        make = acl.rt.create_event_ex_with_flag if kind == "ex" else acl.rt.create_event_with_flag
        return Event(_out(make(flag | acl.ACL_EVENT_TIME_LINE if kind == "ex" else flag)))

    def external_event(self) -> ExternalEvent:
        """An event like ``torch.npu.ExternalEvent`` (aclrtCreateEventWithFlag(EXTERNAL)):
        ``record(stream)``, ``wait(stream)``, ``reset(stream)``."""
        return ExternalEvent(_out(acl.rt.create_event_with_flag(acl.ACL_EVENT_EXTERNAL)))

    def malloc(self, size: int, policy: int = acl.ACL_MEM_MALLOC_HUGE_FIRST,
               name: str = "") -> Buffer:
        """Device memory; ``name`` labels it in fault messages and traces."""
        return Buffer(self, _out(acl.rt.malloc(size, policy)), size, name=name)

    def malloc_host(self, size: int, name: str = "") -> Buffer:
        return Buffer(self, _out(acl.rt.malloc_host(size)), size, host=True, name=name)

    def synchronize(self) -> None:
        _ok(acl.rt.synchronize_device())

    def launch(self, kernel: "str | UserKernel | Function", stream: Stream | None = None,
               blocks: int = 1, args=(), duration_ns: int = 0) -> None:
        """Launch a kernel of the kernel table by its table name (the built-in sample kernels,
        any other ``TABLE.register`` entry), a ``@npusim.kernel`` object (the body it defined,
        even when another kernel took the same name since) or a loaded :class:`Function` on
        ``stream`` (None: the default stream), through
        ``acl.rt.launch_kernel_with_host_args``, with ``args`` packed as :meth:`Function.launch`
        packs them. ``duration_ns`` > 0 makes the task run exactly that long (the kernel
        table's handle for that duration, ``runtime/functions.py``). An unknown name raises
        107000 (as ``aclrtBinaryGetFunction``)."""
        if isinstance(kernel, Function):
            kernel.launch(stream, blocks, args, duration_ns=duration_ns)
            return
        if _is_user_kernel(kernel):              # its own body, by the key it registered
            func = table_function(kernel.body_key, duration_ns)
        elif isinstance(kernel, str):
            func = table_function(kernel, duration_ns)
        else:
            raise TypeError(f"launch takes a kernel name (str), a @npusim.kernel or a loaded "
                            f"Function (lib['name']), not {type(kernel).__name__} {kernel!r}")
        if func is None:
            check(acl.ACL_ERROR_RT_PARAM_INVALID, TABLE.unknown(kernel))
        ctx = RT.current_context
        if ctx is not None:
            ensure_buffer(ctx.device)            # device printf of the by-name kernels
        data = _host_args(args, param_types(func))
        _ok(acl.rt.launch_kernel_with_host_args(func, blocks, stream.handle if stream else None,
                                                None, data, len(data)))

    @property
    def max_while_iterations(self) -> int:
        """The runaway-WHILE bound: a WHILE still looping after this many iterations is stopped
        and reported (507046 with the handle and last value) instead of hanging."""
        return self._dev.max_while_iterations

    @max_while_iterations.setter
    def max_while_iterations(self, n: int) -> None:
        self._dev.max_while_iterations = n

    @property
    def now_ns(self) -> int:
        """The host's simulated clock (ns)."""
        return RT.host_ns

    def trace(self):
        """The recorded device trace (``npusim.configure(trace=True)`` before the work)."""
        return Trace.from_device(self._dev)

    def reset(self) -> None:
        _ok(acl.rt.reset_device(self.id))


def _is_user_kernel(obj) -> bool:
    """Is ``obj`` a ``@npusim.kernel`` (``kernel.decorator.UserKernel``)? Told by its fields:
    the decorator module imports this one (``UserKernel.load``), so this one does not import
    it."""
    return isinstance(getattr(obj, "body_key", None), str) and hasattr(obj, "kid")


def _kernel_id(kernel) -> int:
    """The kernel-table id of a kernel named by its table name or defined name (a
    ``@npusim.kernel``'s), of a ``@npusim.kernel`` object, or of a loaded binary's
    :class:`Function`; KeyError when there is none."""
    if isinstance(kernel, Function):
        k, code = RT.handles.get("function", kernel.handle)
        _ok(code)
        return k.kid
    if _is_user_kernel(kernel):
        return kernel.kid
    if not isinstance(kernel, str):
        raise TypeError(f"a kernel by its name, a @npusim.kernel or a loaded Function, not "
                        f"{kernel!r}")
    return TABLE.id(kernel)          # KeyError naming the close matches


def roofline(flops=0, bytes=0) -> Roofline:
    """A per-launch roofline cost for ``set_kernel_cost(name, cost=...)`` or
    ``@npusim.kernel(cost=...)``: ``flops`` and ``bytes`` of the whole launch, each a number or
    a callable of ``(blocks, *args)``; the duration is ``ceil(max(flops / (rate * min(blocks,
    cores)), bytes / hbm_bytes_per_ns)) + blocks * kernel_per_block_ns`` (``docs/timing.md``)."""
    return Roofline(flops, bytes)


def set_kernel_cost(name, ns: int | None = None, flops_per_block: float | None = None,
                    bytes_per_block: float | None = None, *, cost=None, params=None) -> int:
    """Set how long kernel ``name`` runs (a table name, a ``@npusim.kernel`` or its defined
    name, or a loaded :class:`Function`; a ``@npusim.kernel`` object also has ``set_cost``).

    * ``cost=``: per launch, evaluated on the host at every launch from the launch itself — a
      callable ``cost(blocks, *args) -> ns`` or :func:`roofline` — and written into the task
      (captured tasks keep it; a task update recomputes it from the new arguments). ``params``
      tells how the argument slots are read (``"ptr"``, ``"i64"``, ``"u32"``, ``"f32"``, ...;
      default: a ``@npusim.kernel``'s declared types, else every slot as an ``i64``).
    * otherwise per wave of blocks: a constant ``ns``, or a roofline from the work of one block
      — max(flops / the core's throughput, a full wave's bytes / HBM bandwidth) with the profile
      in force; this removes a per-launch model.

    The last call wins; :func:`reset_kernel_cost` goes back to the kernel's own. Returns the
    body time per wave in ns (``docs/timing.md``)."""
    kid = _kernel_id(name)
    if cost is not None:
        set_model(kid, cost, declared_params(kid) if params is None else params)
        return int(TABLE.cost[kid, KC_BODY_NS])
    set_model(kid, None)
    if ns is None:
        p = profile()
        t = p.timing
        aic = TABLE.entries[kid].unit == UNIT_AIC
        rate = t.aic_flops_per_ns if aic else t.aiv_flops_per_ns
        cores = p.aic_cores if aic else p.aiv_cores
        ns = max((flops_per_block or 0) / max(rate, 1),
                 (bytes_per_block or 0) * cores / max(t.hbm_bytes_per_ns, 1))
    TABLE.set_cost(kid, max(1, int(round(ns))))
    return int(TABLE.cost[kid, KC_BODY_NS])


def reset_kernel_cost(name) -> None:
    """Undo :func:`set_kernel_cost`: the kernel's registered body time and the cost model its
    ``@npusim.kernel(cost=...)`` declared, if any."""
    kid = _kernel_id(name)
    TABLE.set_cost(kid, TABLE.entries[kid].cost_ns)
    restore_model(kid)


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
            handle, code = acl.mdl.ri_capture_end(self.stream.handle)   # the body's error wins
            if code == 0 and handle:
                acl.mdl.ri_destroy(handle)                 # don't leak the half-made graph

    # ---- use ----
    def replay(self, stream: Stream | None = None) -> None:
        """Launch the graph on ``stream`` (default: the capture stream); asynchronous."""
        s = stream or self.stream
        h = s.handle if s else None
        if not h:               # the default stream by its handle: NULL is refused on SW-SQ chips
            h = _out(acl.rt.ctx_get_current_default_stream())
        _ok(acl.mdl.ri_execute_async(self.handle, h))

    def destroy(self) -> None:
        _ok(acl.mdl.ri_destroy(self.handle))
        self.handle = None

    @property
    def _model(self):
        m, code = model_of(self.handle)
        _ok(code)
        return m

    @property
    def num_tasks(self) -> int:
        """The SQEs the graph's capture streams hold — internal tasks included: the prefetch NOPs
        a task group begins with (``task_prefetch_count`` per group), cascade hops
        (STREAM_ACTIVE), EndCapture's event resets and notifies, the EndGraph record — so it
        is more than the number of kernels and copies issued."""
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

    # ---- conditional control flow (IF / WHILE / SWITCH sub-graphs) ----
    def condition(self, default: int = 0, assign_default: bool = True) -> "Condition":
        """A cond handle of the graph being captured: an 8-byte word in device memory that cond
        tasks read. ``assign_default`` rewrites it to ``default`` at every replay."""
        if self._capturing_model is None:
            raise ValueError("a condition is created while the graph captures")
        h = _out(acl.mdl.ri_cond_handle_create(self._capturing_model, default,
                                               1 if assign_default else 0))
        return Condition(h, _out(acl.mdl.ri_cond_handle_get_cond_ptr(h)))

    def cond_if(self, cond: "Condition", stream: Stream, with_else: bool = False):
        """IF: returns the branch(es) to capture — ``then`` runs when the word is non-zero,
        ``else_`` (``with_else=True``) when it is zero. Use each as ``with branch: ...``
        issuing the body on ``stream``."""
        br = self._cond(cond, acl.ACL_MODEL_RI_COND_TYPE_IF, 2 if with_else else 1, stream)
        return tuple(br) if with_else else br[0]

    def cond_while(self, cond: "Condition", stream: Stream) -> "Branch":
        """WHILE: the body runs while the word is non-zero; it must change the word."""
        return self._cond(cond, acl.ACL_MODEL_RI_COND_TYPE_WHILE, 1, stream)[0]

    def cond_switch(self, cond: "Condition", n: int, stream: Stream) -> list["Branch"]:
        """SWITCH: case ``v`` runs when 0 <= word < n, nothing otherwise."""
        return self._cond(cond, acl.ACL_MODEL_RI_COND_TYPE_SWITCH, n, stream)

    def _cond(self, cond, kind, n, stream):
        subs = _out(acl.mdl.ri_add_cond_task(cond.handle, kind, n, self._capture_stream.handle))
        return [Branch(sub, stream, self.mode) for sub in subs]

    @property
    def _capturing_model(self):
        s = self._capture_stream
        if s is None:
            return None
        status, model = _out(acl.mdl.ri_capture_get_info(s.handle))
        return model if status else None

    @property
    def _capture_stream(self):
        return self.stream

    def to_dot(self, path=None, level: str = "task") -> str:
        """Graphviz DOT of the captured DAG: one node per task (stream order, cascades,
        event/notify edges, cond branches), or with ``level="stream"`` one node per capture
        stream — readable for graphs of millions of tasks."""
        text = (to_dot_streams if level == "stream" else to_dot)(self._model)
        if path is not None:
            with open(path, "w") as f:
                f.write(text)
        return text


class BuiltModel:
    """A model built with aclmdlRIBuildBegin (``spec/aclgraph.md`` §1.13): bind persistent
    streams (``Device.stream(persistent=True)``), issue their tasks (they are kept, not run),
    ``end_task`` on one stream, ``build_end``, then ``execute`` / ``launch`` any number of
    times. Streams bound with ``head=False`` run when another stream's ``activate`` or taken
    ``switch`` task starts them."""

    def __init__(self, handle: int):
        self.handle = handle

    def __repr__(self):
        return f"BuiltModel(0x{self.handle or 0:x})"

    def bind(self, stream: Stream, head: bool = False) -> Stream:
        """aclmdlRIBindStream; ``head``: the stream starts when the model runs."""
        _ok(acl.mdl.ri_bind_stream(self.handle, stream.handle,
                                   acl.ACL_MODEL_STREAM_FLAG_HEAD if head
                                   else acl.ACL_MODEL_STREAM_FLAG_DEFAULT))
        return stream

    def unbind(self, stream: Stream) -> None:
        _ok(acl.mdl.ri_unbind_stream(self.handle, stream.handle))

    def end_task(self, stream: Stream) -> None:
        """aclmdlRIEndTask: the model's EndGraph after ``stream``'s tasks (one per model)."""
        _ok(acl.mdl.ri_end_task(self.handle, stream.handle))

    def build_end(self) -> "BuiltModel":
        _ok(acl.mdl.ri_build_end(self.handle, None))
        return self

    def execute(self, timeout_ms: int = -1) -> None:
        """aclmdlRIExecute: run the model on the default stream and wait (``timeout_ms`` of
        simulated time, -1 for ever)."""
        _ok(acl.mdl.ri_execute(self.handle, timeout_ms))

    def launch(self, stream: Stream | None = None) -> None:
        """aclmdlRIExecuteAsync on ``stream`` (default: the default stream)."""
        _ok(acl.mdl.ri_execute_async(self.handle, stream.handle if stream else None))

    @property
    def streams(self) -> list[int]:
        return _out(acl.mdl.ri_get_streams(self.handle))

    def update_random(self, stream: Stream, task_id: int, src, exec_stream: Stream | None = None
                      ) -> None:
        """aclrtTaskUpdateAsync(ACL_RT_UPDATE_RANDOM_TASK): when ``exec_stream`` (default: the
        default stream) reaches it, random task ``task_id`` of the bound ``stream`` takes the
        result, counter and parameter addresses, seed and count of the task info at device
        address ``src`` (the bytes :func:`random_task_info` gives)."""
        info = {"id": acl.ACL_RT_UPDATE_RANDOM_TASK,
                "val": {"randomTaskAttr": {"srcAddr": int(src), "size": 104}}}
        _ok(acl.rt.task_update_async(stream.handle, task_id, info,
                                     exec_stream.handle if exec_stream else None))

    def destroy(self) -> None:
        _ok(acl.mdl.ri_destroy(self.handle))
        self.handle = None


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


def graph_task_update_begin(stream: Stream, handle: "int | TaskGroup") -> None:
    """The next kernel launches on ``stream`` (not capturing) rewrite the group's tasks, in
    order; each rewrite takes effect when ``stream`` runs it. ``handle``: what
    ``graph_task_group_end`` returned, or a :class:`TaskGroup` whose block ended."""
    _ok(acl.mdl.ri_capture_task_update_begin(stream.handle, int(handle)))


def graph_task_update_end(stream: Stream) -> None:
    _ok(acl.mdl.ri_capture_task_update_end(stream.handle))


def _user_site() -> tuple[str, int]:
    """(file, line) of the first caller outside this module: where the user wrote the call."""
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename == __file__:
        f = f.f_back
    return (f.f_code.co_filename, f.f_lineno) if f is not None else ("<unknown>", 0)


class _ContextManagerOnly:
    """A context manager that says so when it is used without ``with``: a message naming the
    fix when its result is asked for, and a ``CaptureWarning`` at the line that made it when it
    is dropped without ever being entered (the launches after it went on as if it were not
    there)."""

    __slots__ = ("_site", "_entered")
    _usage = ""                                   # the ``with`` line to show, per subclass

    def __init__(self):
        self._site = _user_site()
        self._entered = False

    def _not_entered(self, what: str) -> str:
        f, line = self._site
        return (f"{what}: {type(self).__name__} made at {f}:{line} is a context manager and "
                f"was never entered — write `{self._usage}` and launch inside the block")

    def __del__(self):
        if self._entered or sys.meta_path is None:    # used as meant, or interpreter shutdown
            return
        f, line = self._site
        warnings.warn_explicit(self._not_entered("nothing was captured or updated"),
                               CaptureWarning, f, line)


class TaskGroup(_ContextManagerOnly):
    """``with npusim.task_group(stream) as tg:`` — the kernels launched on the capturing
    ``stream`` inside the block form a task group (aclmdlRICaptureTaskGrpBegin / End); ``tg.handle``
    is the group's handle once the block ends (None before; ``int(tg)`` too). ``with
    tg.update(stream): ...`` then rewrites its tasks, in order, with the kernels launched on
    ``stream`` (not capturing) inside that block (aclmdlRICaptureTaskUpdateBegin / End): one
    launch per captured task; each rewrite takes effect when ``stream`` runs it, so order it
    before the next replay (an event, or the same stream). Both raise ``AclError`` with the
    call's code (107033 out of order, 507000 a launch count that does not match the group, with
    the counts). The same calls as functions: :func:`graph_task_group_begin` /
    :func:`graph_task_group_end` and :func:`graph_task_update_begin` /
    :func:`graph_task_update_end`."""

    __slots__ = ("stream", "handle")
    _usage = "with npusim.task_group(stream) as tg:"

    def __init__(self, stream: Stream):
        super().__init__()
        self.stream = stream
        self.handle: int | None = None

    def __enter__(self) -> "TaskGroup":
        self._entered = True
        graph_task_group_begin(self.stream)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.handle = graph_task_group_end(self.stream)
        else:
            acl.mdl.ri_capture_task_grp_end(self.stream.handle)     # the body's error wins

    def __int__(self) -> int:
        if self.handle is None:
            raise self._group_missing("the task group has no handle")
        return self.handle

    __index__ = __int__

    def __repr__(self):
        h = f"0x{self.handle:x}" if self.handle is not None else "no handle yet"
        return f"TaskGroup({self.stream!r}, {h})"

    def _group_missing(self, what: str) -> Exception:
        """The error for using the group's handle before there is one: TypeError when the
        group was never entered (used without ``with``), ValueError inside its block."""
        if not self._entered:
            return TypeError(self._not_entered(what))
        return ValueError(f"{what}: its `with` block has not ended yet (the handle comes at "
                          "the block's end)")

    def update(self, stream: Stream) -> "TaskUpdate":
        """An update of this group on ``stream``, as a context manager: ``with tg.update(u):``."""
        if self.handle is None:
            raise self._group_missing("the task group is updated before it was captured")
        return TaskUpdate(stream, self.handle)


class TaskUpdate(_ContextManagerOnly):
    """``with npusim.task_update(stream, handle):`` (or ``with tg.update(stream):``) — see
    :class:`TaskGroup`."""

    __slots__ = ("stream", "handle")
    _usage = "with tg.update(stream):"

    def __init__(self, stream: Stream, handle: int):
        super().__init__()
        self.stream, self.handle = stream, handle

    def __enter__(self) -> "TaskUpdate":
        self._entered = True
        graph_task_update_begin(self.stream, self.handle)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            graph_task_update_end(self.stream)
        else:
            acl.mdl.ri_capture_task_update_end(self.stream.handle)  # the body's error wins


def task_group(stream: Stream) -> TaskGroup:
    """A task group captured on ``stream`` as a context manager (:class:`TaskGroup`):
    ``with npusim.task_group(stream) as tg:``."""
    return TaskGroup(stream)


def task_update(stream: Stream, group: "TaskGroup | int") -> TaskUpdate:
    """An update of ``group`` (a :class:`TaskGroup` or its handle) on ``stream`` as a context
    manager (:class:`TaskUpdate`): ``with npusim.task_update(stream, tg):``."""
    if isinstance(group, TaskGroup) and group.handle is None:
        raise group._group_missing("the task group is updated before it was captured")
    return TaskUpdate(stream, int(group))


# ---- kernel binaries (Kernel module), design.md §3.2 ----
def _host_args(args, types=()) -> bytearray:
    """Launch arguments as ``aclrtLaunchKernelWithHostArgs`` gets them from the Pythonic API:
    8-byte slots packed by the kernel's declared parameter types (``types``; an int for an f32
    parameter becomes that float), else ints and buffers as 64-bit values and floats as fp32 in
    the low half; no arguments: one zero slot."""
    vals = [a if isinstance(a, (float, np.floating)) else int(a) for a in args]
    return bytearray(_args.pack_typed(vals, types) if vals else bytes(8))


class Function:
    """A kernel of a loaded binary (``aclrtFuncHandle``): ``lib["EasyOPf"]``."""

    def __init__(self, binary: "Binary", handle: int, name: str):
        self.binary, self.handle, self.name = binary, handle, name

    def __repr__(self):
        return f"Function({self.name!r}, 0x{self.handle:x})"

    def launch(self, stream: "Stream | None" = None, blocks: int = 1, args=(), config=None,
               duration_ns: int = 0) -> None:
        """aclrtLaunchKernelWithHostArgs on ``stream`` (None: the default stream) with ``args``
        packed as 8-byte slots by the kernel's declared parameter types (PARAM_INFO and, for a
        ``@npusim.kernel`` or a sample kernel, the types: a Python int to an ``f32`` parameter
        becomes that float); undeclared ones as ints / buffers (64-bit) and floats (fp32, low
        half). A launch without arguments still carries one zero slot. ``duration_ns`` > 0 makes
        the task run exactly that long. On a capturing stream the launch is recorded into the
        graph; on a stream updating a task group it updates the group's next task. Raises
        ``AclError`` with the launch's code (107000 parameter errors, 107017 handles, ...)."""
        func = self.handle
        if duration_ns:
            func = with_duration(func, duration_ns) or func
        data = _host_args(args, param_types(func))
        h = stream.handle if isinstance(stream, Stream) else stream
        _ok(acl.rt.launch_kernel_with_host_args(func, blocks, h, config, data, len(data)))

    def set_cost(self, cost, params=None) -> None:
        """A per-launch cost model for this kernel's body: ``set_kernel_cost(self, cost=...)``."""
        set_kernel_cost(self, cost=cost, params=params)

    def attribute(self, attr: int) -> int:
        return _out(acl.rt.get_function_attribute(self.handle, attr))

    @property
    def addresses(self) -> tuple[int, int]:
        """(aic, aiv) device addresses of the code (``aclrtGetFunctionAddr``)."""
        return _out(acl.rt.get_function_addr(self.handle))

    @property
    def sizes(self) -> tuple[int, int]:
        return _out(acl.rt.get_function_size(self.handle))


class Binary:
    """A loaded kernel binary (``aclrtBinHandle``); index it by kernel name."""

    def __init__(self, handle: int):
        self.handle = handle
        self._funcs: dict[str, Function] = {}

    def __repr__(self):
        return f"Binary(0x{self.handle:x}, kernels={self.names})"

    @property
    def _program(self):
        obj, code = RT.handles.get("binary", self.handle)
        _ok(code or (0 if obj is not None else acl.ACL_ERROR_RT_INVALID_HANDLE))
        return obj

    @property
    def names(self) -> list[str]:
        """Registered kernel names, in the runtime's (byte-wise) order."""
        return list(self._program.kernels)

    def __contains__(self, name: str) -> bool:
        return name in self._program.kernels

    def __getitem__(self, name: str) -> Function:
        f = self._funcs.get(name)
        if f is None:
            f = self._funcs[name] = Function(
                self, _out(acl.rt.binary_get_function(self.handle, name)), name)
        return f

    def by_entry(self, entry: int) -> Function:
        """The kernel of an entry key (tiling key / function entry)."""
        h = _out(acl.rt.binary_get_function_by_entry(self.handle, entry))
        k, _ = RT.handles.get("function", h)
        return Function(self, h, k.name)

    @property
    def dev_address(self) -> tuple[int | None, int]:
        """(aligned device address or None while lazily unloaded, image size)."""
        return _out(acl.rt.binary_get_dev_address(self.handle))

    def global_(self, name: str) -> tuple[int, int]:
        """(device address, size) of a global variable of the binary."""
        return _out(acl.rt.binary_get_global(self.handle, name))

    def on_exception(self, callback, user_data=None) -> None:
        """``callback(info, user_data)`` when a kernel of this binary faults."""
        _ok(acl.rt.binary_set_exception_callback(self.handle, callback, user_data))

    def unload(self) -> None:
        _ok(acl.rt.binary_unload(self.handle))
        self._funcs.clear()

    def __enter__(self) -> "Binary":
        return self

    def __exit__(self, *exc) -> None:
        self.unload()


def load_binary(source, lazy: bool = False, magic: int | None = None) -> Binary:
    """Load a kernel binary: a path (``aclrtBinaryLoadFromFile``), bytes or a ``@npusim.kernel``
    (``aclrtBinaryLoadFromData``). Initialises ACL and device 0 when nothing is set yet."""
    if not RT.initialized:
        acl.init()
    if RT.current_context is None:
        _ok(acl.rt.set_device(0))
    opts = {acl.ACL_RT_BINARY_LOAD_OPT_LAZY_LOAD: 1} if lazy else {}
    if isinstance(source, (str, os.PathLike)):
        return Binary(_out(acl.rt.binary_load_from_file(os.fspath(source), opts or None)))
    if magic is not None:
        opts[acl.ACL_RT_BINARY_LOAD_OPT_MAGIC] = magic
    data = bytes(source) if not isinstance(source, (bytes, bytearray, memoryview)) else source
    return Binary(_out(acl.rt.binary_load_from_data(data, opts or None)))


class Condition:
    """A cond handle: ``ptr`` is the device address of its 8-byte word (a kernel argument)."""

    def __init__(self, handle: int, ptr: int):
        self.handle, self.ptr = handle, ptr

    def __int__(self):
        return self.ptr

    __index__ = __int__

    def __repr__(self):
        return f"Condition(0x{self.handle:x}, word at 0x{self.ptr:x})"


class Branch:
    """One sub-graph of a cond task: ``with branch:`` captures the work issued on its stream
    into the sub-model (aclmdlRICaptureToModelRIBegin ... aclmdlRICaptureEnd)."""

    def __init__(self, model: int, stream: Stream, mode: int = 0):
        self.model, self.stream, self.mode = model, stream, mode

    def __enter__(self) -> "Branch":
        _ok(acl.mdl.ri_capture_to_model_ri_begin(self.stream.handle, self.model, self.mode))
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        handle, code = acl.mdl.ri_capture_end(self.stream.handle)
        if exc_type is None:
            _ok(code)

    # Nesting (spec/aclgraph.md §8.1, §8.4: a sub-model that is capturing may own cond handles
    # and cond tasks, with no depth limit): inside ``with branch:`` the same calls as on a Graph
    # create the condition in the sub-model and add the cond task on the branch's stream.
    condition = Graph.condition
    cond_if = Graph.cond_if
    cond_while = Graph.cond_while
    cond_switch = Graph.cond_switch
    _cond = Graph._cond
    _capturing_model = Graph._capturing_model

    @property
    def _capture_stream(self):
        return self.stream
