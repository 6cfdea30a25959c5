"""Kernels of the Pythonic API: ``Function`` and ``Binary`` (loaded binaries, ``load_binary``),
kernel cost models (``roofline``, ``set_kernel_cost``, ``reset_kernel_cost``) and the packing of
host launch arguments (``_host_args``).
"""
from __future__ import annotations

import numpy as np
import os

from .. import acl
from ..device.kernels import KC_BODY_NS, TABLE, UNIT_AIC
from ..runtime import args as _args
from ..runtime.api_device import profile
from ..runtime.argcheck import param_types
from ..runtime.cost import Roofline, declared_params, restore_model, set_model
from ..runtime.functions import with_duration
from ..runtime.runtime import RT
from .base import _ok, _out
from .stream import Stream


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
