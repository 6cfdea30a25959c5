"""``Device`` of the Pythonic API: its streams, events, buffers, launches by name, built models.
"""
from __future__ import annotations

from .. import acl
from ..device.kernels import TABLE
from ..errors import check
from ..kernel.printf import ensure_buffer
from ..runtime import api_device
from ..runtime.api_device import profile
from ..runtime.argcheck import param_types
from ..runtime.functions import table_function
from ..runtime.runtime import RT
from ..trace.chrome import Trace
from .base import _ok, _out
from .stream import Buffer, Event, ExternalEvent, Stream
from .kernel import Function, _host_args, _is_user_kernel
from .graph import BuiltModel


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

    def _use(self) -> None:
        """Make this device the thread's current one (its primary context), as every call that
        makes something on a device needs: with several ``Device`` objects, each works on its
        own device whichever was set last (one thread may drive every rank)."""
        ctx = RT.current_context
        dev = getattr(self, "_dev", None)       # None: a Device made without __init__
        if ctx is None or dev is None or ctx.device is dev:
            return                              # (no context: the call says so, 107002)
        p = dev.primary
        if p is None or p.destroyed or RT.devices.get(self.id) is not dev:
            _ok(acl.rt.set_device(self.id))
            self._dev = api_device.device(self.id)
        else:
            _ok(acl.rt.set_current_context(p.handle))

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
        self._use()
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
        self._use()
        return BuiltModel(_out(acl.mdl.ri_build_begin(0)))

    def event(self, flag: int = acl.ACL_EVENT_SYNC, kind: str = "ex") -> Event:
        """An event: ``kind`` "ex" (aclrtCreateEventExWithFlag with ``flag`` | TIME_LINE, the
        default), "sync" (aclrtCreateEventExWithFlag(ACL_EVENT_SYNC) exactly: the event external
        records and waits take), "flag" (aclrtCreateEventWithFlag) or "legacy"
        (aclrtCreateEvent)."""
        self._use()
        if kind == "legacy":
            return Event(_out(acl.rt.create_event()))
        if kind == "sync":
            return Event(_out(acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC)))
        make = acl.rt.create_event_ex_with_flag if kind == "ex" else acl.rt.create_event_with_flag
        return Event(_out(make(flag | acl.ACL_EVENT_TIME_LINE if kind == "ex" else flag)))

    def external_event(self) -> ExternalEvent:
        """An event like ``torch.npu.ExternalEvent`` (aclrtCreateEventWithFlag(EXTERNAL)):
        ``record(stream)``, ``wait(stream)``, ``reset(stream)``."""
        self._use()
        return ExternalEvent(_out(acl.rt.create_event_with_flag(acl.ACL_EVENT_EXTERNAL)))

    def malloc(self, size: int, policy: int = acl.ACL_MEM_MALLOC_HUGE_FIRST,
               name: str = "") -> Buffer:
        """Device memory; ``name`` labels it in fault messages and traces."""
        self._use()
        return Buffer(self, _out(acl.rt.malloc(size, policy)), size, name=name)

    def malloc_host(self, size: int, name: str = "") -> Buffer:
        self._use()
        return Buffer(self, _out(acl.rt.malloc_host(size)), size, host=True, name=name)

    def synchronize(self) -> None:
        self._use()
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
        if self is not None:            # Device.launch(None, ...): the current device
            self._use()
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
        """The recorded device trace (``npusim.configure(trace=True)`` before the work); every
        device's in one: ``npusim.trace.world()``."""
        return Trace.from_device(self._dev)

    def reset(self) -> None:
        _ok(acl.rt.reset_device(self.id))
