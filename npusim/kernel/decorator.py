"""``@npusim.kernel``: write a kernel in Python, get a real kernel binary back.

::

    import npusim
    from npusim.device import memview as V

    @npusim.kernel
    def scale(mem, ctx, block_idx, block_num, x: "ptr", n: "u32", alpha: "f32"):
        v = V.f32(mem, ctx, x, n)
        for i in range(n):
            v[i] *= alpha

    lib = npusim.load_binary(scale)          # or bytes(scale), scale.save("scale.o")
    lib["scale"].launch(stream, blocks=1, args=(buf, 16, 2.0))

The body is compiled with ``numba.njit(boundscheck=True)``; its first four parameters are the
device arena, the context array, the block index and the block count, the others are the kernel's
parameters, one 8-byte args slot each, typed by their annotation (:data:`PARAM_TYPES`; default
``"i64"``). Device memory is reached only through :mod:`npusim.device.memview` views and device
printf through :func:`npusim.kernel.printf.printf`; read inputs through the read-only views
(``V.r_f32`` ...) so the race detector (``npusim.analysis``) does not count them as writes. A
generated ``cfunc`` with the kernel C ABI reads the slots, calls the body and turns any exception
(an index out of bounds, a ``raise``) into a kernel exception of the task. It is registered in the kernel table under a binding key unique to
the Python function, and the ELF written by :mod:`npusim.kernel.elfwrite` names that key in a
:data:`npusim.kernel.program.BODY_TLV` record, so loading the file and launching its kernel runs
exactly this body, whatever the kernel is called.
"""
from __future__ import annotations

import inspect
import os
import tempfile

import numpy as np
from numba import cfunc, njit

from ..device import memview as V
from ..device.kernels import KERNEL_SIG, KERNEL_TRAP, TABLE, UNIT_AIC, UNIT_AICPU, UNIT_AIV, arena
from .elf import FuncType
from .elfwrite import KernelSpec, ParamSpec, write_elf
from .program import BODY_TLV

PARAM_TYPES = {"ptr": 8, "i64": 8, "u64": 8, "i32": 4, "u32": 4, "f32": 4, "f64": 8}
"""Declared parameter types and their byte size in PARAM_INFO (each still takes an 8-byte slot;
small scalars sit in its low bytes)."""
_ALIASES = {int: "i64", float: "f32", "int": "i64", "float": "f32", "pointer": "ptr"}
UNITS = {"aiv": (UNIT_AIV, FuncType.AIV), "aic": (UNIT_AIC, FuncType.AIC),
         "aicore": (UNIT_AIC, FuncType.AICORE)}
_CONVERT = {
    "ptr": "s[{i}]", "i64": "s[{i}]", "u64": "np.uint64(s[{i}])",
    "u32": "V.slot_u32(s, {i})", "i32": "_i32(s[{i}])", "f32": "V.slot_f32(s, {i})",
    "f64": "_f64(s[{i}])",
}


@njit(cache=True, inline="always")
def _i32(v):
    u = v & 0xFFFFFFFF
    return np.int32(u - 4294967296 if u >= 2147483648 else u)


@njit(cache=True, inline="always")
def _f64(v):
    return np.array([v], np.int64).view(np.float64)[0]


def code_bytes(name: str) -> bytes:
    """Placeholder machine code for a kernel symbol (the simulator runs bodies, not code)."""
    return (b"NPUSIM:" + name.encode("utf-8", "replace"))[:32].ljust(32, b"\0")


def kernel_spec(name: str, params=(), body_key: str | None = None, entry: int | None = None,
                func_type: int = FuncType.AIV) -> KernelSpec:
    """A conforming kernel symbol with the metadata a compiled Ascend C kernel carries:
    KERNEL_TYPE, DFX arg info (userArgsNum = params + 1), PARAM_SUMMARY/PARAM_INFO (8-byte slots),
    an optional FUNCTION_ENTRY_INFO, and the body binding TLV when the key is not the name."""
    ptypes = [_ptype(p) for p in params]
    return KernelSpec(
        name, code_bytes(name), func_type=func_type, dfx_arg_count=len(ptypes) + 1,
        params=[ParamSpec(offset=8 * i, size=PARAM_TYPES[t]) for i, t in enumerate(ptypes)],
        param_total_size=8 * len(ptypes), function_entry=entry,
        extra_tlvs=((BODY_TLV, body_key.encode()),) if body_key and body_key != name else ())


def _ptype(t) -> str:
    if isinstance(t, str):                    # "ptr", or "'ptr'" under postponed annotations
        t = t.strip().strip("'\"")
    t = _ALIASES.get(t, t)
    if t is inspect.Parameter.empty or t is None:
        return "i64"
    if not isinstance(t, str) or t not in PARAM_TYPES:
        raise TypeError(f"kernel parameter type {t!r}: use one of {sorted(PARAM_TYPES)}")
    return t


class UserKernel:
    """A Python kernel: its body, its kernel-table id, and its ELF binary."""

    def __init__(self, fn, name: str | None = None, params=None, cost_ns: int = 0,
                 unit: str = "aiv", entry: int | None = None, path=None):
        sig = inspect.signature(fn)
        names = list(sig.parameters)
        if len(names) < 4:
            raise TypeError("a kernel body takes (mem, ctx, block_idx, block_num, *params)")
        declared = names[4:]
        if params is None:
            params = [sig.parameters[p].annotation for p in declared]
        elif len(params) != len(declared):
            raise TypeError(f"{len(params)} parameter types for {len(declared)} parameters")
        self.fn = fn
        self.name = name or fn.__name__
        self.param_names = declared
        self.param_types = [_ptype(p) for p in params]
        self.body_key = f"py:{fn.__module__}.{fn.__qualname__}"
        self.unit, self.func_type = UNITS[unit]
        self.entry = entry
        self.body = njit(boundscheck=True)(fn)
        self.cfunc = self._wrapper()
        self.kid = TABLE.register(self.body_key, self.cfunc, cost_ns, self.unit)
        self.elf = write_elf([self.spec()])
        self._path = None
        if path is not None:
            self.save(path)

    def _wrapper(self):
        n = len(self.param_types)
        conv = "\n".join(f"        p{i} = " + _CONVERT[t].format(i=i)
                         for i, t in enumerate(self.param_types))
        call = ", ".join(f"p{i}" for i in range(n))
        src = (
            "def kernel_entry(memp, msize, ctxp, args, b, nb):\n"
            "    mem, ctx = arena(memp, msize, ctxp)\n"
            "    try:\n"
            + (f"        s = V.args(mem, ctx, args, {n})\n" if n else "")
            + (conv + "\n" if n else "")
            + f"        body(mem, ctx, b, nb{', ' if n else ''}{call})\n"
            "        return 0\n"
            "    except Exception:\n"
            "        return KERNEL_TRAP\n")
        ns = {"arena": arena, "V": V, "np": np, "body": self.body, "KERNEL_TRAP": KERNEL_TRAP,
              "_i32": _i32, "_f64": _f64}
        exec(compile(src, f"<npusim kernel {self.name}>", "exec"), ns)
        return cfunc(KERNEL_SIG)(ns["kernel_entry"])

    def spec(self) -> KernelSpec:
        return kernel_spec(self.name, self.param_types, self.body_key, self.entry, self.func_type)

    def __bytes__(self) -> bytes:
        return self.elf

    def save(self, path) -> str:
        """Write the ELF to ``path``; returns the path."""
        path = os.fspath(path)
        with open(path, "wb") as f:
            f.write(self.elf)
        self._path = path
        return path

    @property
    def path(self) -> str:
        """A file holding the ELF (a temporary one unless :meth:`save` was called)."""
        if self._path is None:
            fd, p = tempfile.mkstemp(prefix=f"npusim_{self.name}_", suffix=".o")
            os.close(fd)
            self.save(p)
        return self._path

    def load(self):
        """``npusim.load_binary(self)``."""
        from ..api import load_binary
        return load_binary(self.elf)

    def __call__(self, *args, **kwargs):
        raise TypeError(f"kernel {self.name!r} runs on the device: load it and launch it "
                        "(npusim.load_binary(k)[name].launch(stream, blocks, args))")

    def __repr__(self):
        params = ", ".join(f"{n}: {t}" for n, t in zip(self.param_names, self.param_types))
        return f"<npusim kernel {self.name}({params}) -> {len(self.elf)}-byte ELF>"


def kernel(fn=None, *, name: str | None = None, params=None, cost_ns: int = 0,
           unit: str = "aiv", entry: int | None = None, path=None):
    """Decorator: ``@npusim.kernel`` or ``@npusim.kernel(name=..., cost_ns=..., path=...)``."""
    def wrap(f):
        return UserKernel(f, name=name, params=params, cost_ns=cost_ns, unit=unit, entry=entry,
                          path=path)
    return wrap(fn) if fn is not None else wrap


def binary(*kernels: UserKernel, path=None) -> bytes:
    """One ELF holding several Python kernels (each bound to its own body)."""
    data = write_elf([k.spec() for k in kernels])
    if path is not None:
        with open(os.fspath(path), "wb") as f:
            f.write(data)
    return data


__all__ = ["kernel", "binary", "UserKernel", "kernel_spec", "PARAM_TYPES", "UNIT_AICPU"]
