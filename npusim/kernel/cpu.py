"""CPU (AICPU) kernels: the JSON description, the .so stand-in, and Python behaviours.

The real runtime never runs AICPU code itself: it ships the ``.so`` (load modes 1/2) to the AICPU
scheduler and launches tasks naming a function in it. The simulator has no AICPU, so a CPU
kernel's *behaviour* is a Python callable bound by kernel name with :func:`register_cpu_kernel`
(or the ``@npusim.cpu_kernel("OpType")`` decorator) — the stand-in for the function in the .so.
It runs on the host, at the point of simulated time where the engine reaches the task, through a
ctypes callback with the kernel C ABI (so it is dispatched from the jitted engine loop like every
other body). The callable gets a :class:`CpuKernelContext`; an exception in it, or a non-zero
return value, is a kernel exception of the task. A CPU kernel with no registered behaviour does
nothing (the no-op body).

JSON (json_parse.cc ``GetCpuKernelFromJson``): a top-level object whose keys are op types; each
value's ``"opInfo"`` object gives ``functionName``, ``kernelSo``, ``opKernelLib``, ``userDefined``;
entries without ``opInfo`` are skipped.
"""
from __future__ import annotations

import ctypes
import json
import zlib

import numpy as np

from ..device.kernels import KERNEL_TRAP, TABLE, UNIT_AICPU
from ..runtime.runtime import RT
from .program import AICPU_PREFIX, aicpu_kernel_type

_PROTO = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p,
                          ctypes.c_int64, ctypes.c_int64, ctypes.c_int64)


class JsonError(Exception):
    pass


def parse_cpu_json(text: bytes | str) -> list[tuple[str, str, str, int]]:
    """(op type, function name, kernel so, aicpu kernel type) per JSON entry with an opInfo."""
    try:
        obj = json.loads(text)
    except (ValueError, UnicodeDecodeError) as e:
        raise JsonError(str(e)) from e
    if not isinstance(obj, dict):
        raise JsonError("top level is not an object")
    out = []
    for op, val in obj.items():
        info = val.get("opInfo") if isinstance(val, dict) else None
        if not isinstance(info, dict):
            continue

        def s(key):
            v = info.get(key, "")
            return v if isinstance(v, str) else ""
        out.append((op, s("functionName"), s("kernelSo"),
                    aicpu_kernel_type(s("opKernelLib"), s("userDefined"))))
    return out


def so_name_from_data(data: bytes, seen: set) -> str:
    """BinaryLoader::GenerateSoNameFromData: hash of the first min(1024, len) bytes + length; if
    that name was generated before in this process, the hash of the whole buffer."""
    name = f"{zlib.crc32(data[:1024])}_{len(data)}"
    if name in seen:
        name = f"{zlib.crc32(data)}_{len(data)}"
    seen.add(name)
    return name + ".so"


class CpuKernelContext:
    """What a CPU kernel behaviour sees: its block, its args address, checked memory access."""

    def __init__(self, device, args_addr: int, block_idx: int, block_num: int):
        self.device = device
        self.args_addr = args_addr
        self.block_idx = block_idx
        self.block_num = block_num

    def view(self, addr: int, count: int, dtype=np.uint8) -> np.ndarray:
        """A writable view of ``count`` items at a device address; IndexError (a kernel
        exception) when the range is not inside one live allocation."""
        dtype = np.dtype(dtype)
        n = int(count) * dtype.itemsize
        mem = self.device.state.mem
        if not mem.check_range(int(addr), n):
            raise IndexError(f"0x{int(addr):x}+{n} is not device memory")
        return mem.view(int(addr), n).view(dtype)

    def args(self, nbytes: int) -> bytes:
        """The first ``nbytes`` of the args area (CPU args are packed, 1-byte aligned)."""
        return self.view(self.args_addr, nbytes).tobytes()

    def slots(self, n: int) -> list[int]:
        """``n`` 8-byte little-endian slots of the args area."""
        return [int(v) for v in self.view(self.args_addr, n, np.int64)]


def _device_of(memp: int):
    for d in RT.devices.values():
        if d.state.mem.arena.ctypes.data == memp:
            return d
    return None


class _CpuBody:
    """A ctypes callback with the kernel C ABI around a Python callable (kept alive here)."""

    def __init__(self, fn):
        self.fn = fn

        def trampoline(memp, msize, ctxp, args, b, nb):
            try:
                dev = _device_of(memp)
                rc = fn(CpuKernelContext(dev, args, b, nb))
                return 0 if rc is None else int(rc)
            except BaseException:              # noqa: BLE001 - a fault of the task, not of us
                return KERNEL_TRAP
        self.callback = _PROTO(trampoline)
        self.address = ctypes.cast(self.callback, ctypes.c_void_p).value


def register_cpu_kernel(name: str, fn, cost_ns: int = 0) -> int:
    """Bind ``fn(ctx: CpuKernelContext) -> int | None`` as the behaviour of the CPU kernel (op
    type / kernel name) ``name``; returns its kernel-table id."""
    return TABLE.register(AICPU_PREFIX + name, _CpuBody(fn), cost_ns, UNIT_AICPU)


def cpu_kernel(name: str, cost_ns: int = 0):
    """Decorator form of :func:`register_cpu_kernel`."""
    def wrap(fn):
        register_cpu_kernel(name, fn, cost_ns)
        return fn
    return wrap
