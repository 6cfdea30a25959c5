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

**Cached across processes.** The generated wrapper is written once to a file in the kernel cache
(``$NPUSIM_KERNEL_CACHE``, else ``$XDG_CACHE_HOME/npusim/kernels`` or ``~/.cache/npusim/kernels``;
``NPUSIM_KERNEL_CACHE=0`` turns it off) named by a hash of the wrapper, the body's source, its
file and name, the scalar globals it reads, the numba and Python versions and the files the body
inlines from npusim (``npusim.device.jitcache.SALT``: memview, memory, kernels, printf, this
file ...); the ``cfunc`` is compiled with numba's ``cache=True`` from that file, so its object
code — the body linked in — is stored by numba and a second process loads it instead of
compiling (``UserKernel.cfunc.cache_hits``). As with any numba cache, a change in a function of
the user's own that the body calls, or in a non-scalar global it reads, is not seen: clear the
cache then. A body whose source cannot be read
(typed at a prompt, ``exec``), that is a closure, or whose module is not importable (code
``exec``'d in a namespace of its own: numba reloads a cached function by importing its module)
is compiled in memory, as before.
"""
from __future__ import annotations

import hashlib
import importlib.util
import inspect
import os
import sys
import tempfile

import numba
import numpy as np
from numba import cfunc, njit

from ..device import jitcache as _jitcache
from ..device import memview as V
from ..device.kernels import (KERNEL_SIG, KERNEL_TRAP, PARAM_TYPES, TABLE, UNIT_AIC, UNIT_AICPU,
                              UNIT_AIV, arena)
from ..runtime import cost as _cost
from .elf import FuncType
from .elfwrite import KernelSpec, ParamSpec, write_elf
from .program import BODY_TLV

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


CACHE_ENV = "NPUSIM_KERNEL_CACHE"


WRAPPER_HEAD = (
    "import numpy as np\n"
    "from npusim.device import memview as V\n"
    "from npusim.device.kernels import KERNEL_TRAP, arena\n"
    "from npusim.kernel.decorator import _f64, _i32\n"
    "body = None    # the kernel's body (njit dispatcher), set before the wrapper compiles\n\n")
"""The imports of a cached wrapper file: what the generated ``kernel_entry`` calls."""


def cache_dir() -> str | None:
    """The directory of the generated wrappers (created on first use), or None when the
    cache is off (``NPUSIM_KERNEL_CACHE=0``) or no directory can be written."""
    d = os.environ.get(CACHE_ENV)
    if d == "0":
        return None
    if not d:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        d = os.path.join(base, "npusim", "kernels")
    try:
        os.makedirs(d, exist_ok=True)
    except OSError:
        return None
    return d if os.access(d, os.W_OK) else None


_SCALARS = (int, float, bool, complex, str, bytes)


def _key(src: str, fn) -> str | None:
    """What the compiled wrapper depends on, hashed: None when it cannot be told from the
    source — unknown source, or a closure (numba freezes its cells into the code) — or when
    numba could not load it back: a body whose module is not importable (code ``exec``'d in a
    namespace of its own, e.g. a documentation runner), whose cached environment numba
    rebuilds by importing the module by name."""
    if fn.__closure__ or fn.__module__ not in sys.modules:
        return None
    try:
        body_src = inspect.getsource(fn)
    except (OSError, TypeError):
        return None
    # scalar globals the body reads are frozen into the code too: their values count
    consts = [f"{n}={fn.__globals__[n]!r}" for n in fn.__code__.co_names
              if isinstance(fn.__globals__.get(n), _SCALARS)]
    h = hashlib.sha256()
    for part in (src, body_src, fn.__code__.co_filename, fn.__module__, fn.__qualname__,
                 numba.__version__, sys.version, _jitcache.SALT, *consts):
        h.update(part.encode("utf-8", "surrogateescape") + b"\0")
    return h.hexdigest()[:32]


def _wrapper_file(src: str, fn) -> str | None:
    """The cache file holding ``src`` (written once: numba keys its cache on the file's time
    stamp), or None when the wrapper cannot be cached."""
    d = cache_dir()
    key = _key(src, fn) if d is not None else None
    if key is None:
        return None
    path = os.path.join(d, f"k_{key}.py")
    if not os.path.exists(path):
        try:
            fd, tmp = tempfile.mkstemp(dir=d, suffix=".tmp")
            with os.fdopen(fd, "w") as f:
                f.write(f"# npusim kernel wrapper of {fn.__module__}.{fn.__qualname__}\n"
                        f"{WRAPPER_HEAD}{src}")
            os.replace(tmp, path)                   # atomic: concurrent processes agree
        except OSError:
            return None
    return path


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
                 unit: str = "aiv", entry: int | None = None, path=None, cost=None):
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
        self.kid = TABLE.register(self.body_key, self.cfunc, cost_ns, self.unit,
                                  tuple(zip(self.param_names, self.param_types)), self.name)
        _cost.declare(self.kid, self.param_types, cost)     # per-launch cost (runtime/cost.py)
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
        path = _wrapper_file(src, self.fn)
        if path is None:
            ns = {"arena": arena, "V": V, "np": np, "body": self.body,
                  "KERNEL_TRAP": KERNEL_TRAP, "_i32": _i32, "_f64": _f64}
            exec(compile(src, f"<npusim kernel {self.name}>", "exec"), ns)
            return cfunc(KERNEL_SIG)(ns["kernel_entry"])
        # an importable module (numba's cache re-imports it by name when it loads the code)
        name = "npusim_kernel_" + os.path.basename(path)[:-3]
        mod = sys.modules.get(name)
        if mod is None:
            spec = importlib.util.spec_from_file_location(name, path)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            sys.modules[name] = mod
        mod.body = self.body            # the generated module's one free name (see WRAPPER_HEAD)
        return cfunc(KERNEL_SIG, cache=True)(mod.kernel_entry)

    def set_cost(self, cost, params=None) -> None:
        """A per-launch cost model for this kernel (``npusim.set_kernel_cost``'s ``cost=``);
        ``params`` default to the declared parameter types. None removes it."""
        _cost.set_model(self.kid, cost, self.param_types if params is None else params)

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
           unit: str = "aiv", entry: int | None = None, path=None, cost=None):
    """Decorator: ``@npusim.kernel`` or ``@npusim.kernel(name=..., cost_ns=..., path=...)``.

    ``cost_ns``: the body time of one wave of blocks (the kernel table's cost model).
    ``cost``: a per-launch cost instead — ``cost(blocks, *args) -> ns`` with the arguments read
    as the parameters declare them, or ``npusim.roofline(flops=..., bytes=...)`` — evaluated on
    the host at every launch (``runtime/cost.py``, ``docs/timing.md``)."""
    def wrap(f):
        return UserKernel(f, name=name, params=params, cost_ns=cost_ns, unit=unit, entry=entry,
                          path=path, cost=cost)
    return wrap(fn) if fn is not None else wrap


def binary(*kernels: UserKernel, path=None) -> bytes:
    """One ELF holding several Python kernels (each bound to its own body)."""
    data = write_elf([k.spec() for k in kernels])
    if path is not None:
        with open(os.fspath(path), "wb") as f:
            f.write(data)
    return data


__all__ = ["kernel", "binary", "UserKernel", "kernel_spec", "PARAM_TYPES", "UNIT_AICPU"]
