"""Kernel dispatch: the C ABI every kernel body has, the call intrinsic, and the kernel table.

A kernel is a numba ``cfunc`` with the signature ``KERNEL_SIG``::

    int64 kernel(uint8* mem, int64 mem_size, int64* ctx, int64 args_addr, int64 block_idx,
                 int64 block_num)

It returns 0, or a non-zero status for a kernel exception (a trap). The engine calls it through
its address (``call_kernel``), so adding a kernel never recompiles the engine, and the compiled
engine and the built-in kernels are all cached on disk. A kernel body catches its own exceptions
(``try/except`` inside the cfunc): an ``IndexError`` from a bounds-checked user kernel becomes a
kernel exception of that task, not a crash.

The table holds, per kernel id: the function address, the cost model (ns base + ns per wave of
blocks), and the execution unit (AIC / AIV / AICPU) used by traces and the timing model.

Cold start: a body registered with ``register_lazy`` is compiled (or loaded from numba's disk
cache) at its first use, not at import, so a process pays only for the kernels it launches.
``ensure(kid)`` builds a pending body and stores its address; it is called wherever a kernel id
is written into an SQE (the launch core ``submit_kernel``, per-task set-params and
``DeviceState.push``), so the engine never sees a pending body's address (0).
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from functools import cache
from typing import Callable

import numpy as np
from llvmlite import ir
from numba import cfunc, njit, types
from numba.extending import intrinsic

from .memory import C_LEN
from .memview import view_at

KERNEL_SIG = types.int64(types.CPointer(types.uint8), types.int64, types.CPointer(types.int64),
                         types.int64, types.int64, types.int64)


@cache
def compiled_body(fn):
    """The ``cfunc`` (``KERNEL_SIG``) of kernel body ``fn``, compiled once per process and
    cached on disk: what every lazily registered body's builder returns (the built-ins, the
    fallback bodies, the runtime's own DSA and SDMA bodies)."""
    return cfunc(KERNEL_SIG, cache=True)(fn)

# execution units (trace rows, timing model)
UNIT_SCALAR, UNIT_AIC, UNIT_AIV, UNIT_DMA, UNIT_AICPU = 0, 1, 2, 3, 4
UNIT_NAMES = ("SCALAR", "AIC", "AIV", "DMA", "AICPU")

KERNEL_TRAP = 1          # status a kernel returns for a trap / caught exception

# columns of the cost table (KernelTable.cost, int64 [n, KC_COLS]; the engine's ``kcost``)
KC_BODY_NS = 0           # body time of one wave of blocks in ns (0: the profile's default)
KC_RESERVED = 1
KC_UNIT = 2              # execution unit (UNIT_*)
KC_COLS = 3


@intrinsic
def call_kernel(typingctx, addr, memp, msize, ctxp, args, bidx, bnum):
    """Call the kernel cfunc at ``addr`` (an int64) with the KERNEL_SIG arguments."""
    sig = types.int64(types.int64, types.CPointer(types.uint8), types.int64,
                      types.CPointer(types.int64), types.int64, types.int64, types.int64)

    def codegen(context, builder, signature, llargs):
        i64 = ir.IntType(64)
        fnty = ir.FunctionType(i64, [ir.IntType(8).as_pointer(), i64, i64.as_pointer(), i64, i64,
                                     i64])
        fn = builder.inttoptr(llargs[0], fnty.as_pointer())
        return builder.call(fn, llargs[1:])
    return sig, codegen


@njit(cache=True)
def arena(memp, msize, ctxp):
    """Rebuild the arena and context arrays from the raw pointers a kernel receives."""
    n = view_at(ctxp, C_LEN + 1, np.int64)[C_LEN]
    return view_at(memp, msize, np.uint8), view_at(ctxp, n, np.int64)


PARAM_TYPES = {"ptr": 8, "i64": 8, "u64": 8, "i32": 4, "u32": 4, "f32": 4, "f64": 8}
"""Declared kernel parameter types and their byte size in PARAM_INFO (each still takes an 8-byte
args slot; small scalars sit in its low bytes)."""


@dataclass
class KernelEntry:
    name: str
    func: object            # the numba cfunc (kept alive: the table stores its address);
    #                         None while a lazy body is pending
    cost_ns: int            # body time of one wave of blocks (0: the profile's default)
    unit: int
    build: Callable[[], object] | None = None   # a lazy body's builder (returns the cfunc)
    params: tuple = ()      # the body's declared parameters: (name, type of PARAM_TYPES) pairs
    label: str = ""         # the name users know it by (a ``@npusim.kernel``'s own name), when
    #                         the table key is another (its binding key); "" -> ``name``


class KernelTable:
    """Process-wide table of kernel bodies: id -> address, cost model and unit.

    Ids are stable for the life of the process; the engine receives the arrays by value at each
    run, so registering a kernel later is cheap.
    """

    def __init__(self):
        self.entries: list[KernelEntry] = []
        self.by_name: dict[str, int] = {}
        self.addr = np.zeros(0, np.int64)
        self.cost = np.zeros((0, KC_COLS), np.int64)    # KC_* columns
        self.pending = np.zeros(0, np.bool_)    # True: a lazy body not built yet (addr 0)
        self.by_label: dict[str, int] = {}      # label -> id (the latest body of that label)

    def register(self, name: str, func, cost_ns: int = 0, unit: int = UNIT_AIV,
                 params: tuple = (), label: str = "") -> int:
        """Add a kernel body (a cfunc with KERNEL_SIG); returns its id. Re-registering a name
        replaces the body behind the same id (the way a reloaded binary rebinds a stub).
        ``params``: the body's declared (name, type) parameters (argument checks); ``label``:
        the name users call it by when ``name`` is a binding key (traces, messages, lookups)."""
        return self._put(KernelEntry(name, func, int(cost_ns), int(unit), None, tuple(params),
                                     label))

    def register_lazy(self, name: str, build: Callable[[], object], cost_ns: int = 0,
                      unit: int = UNIT_AIV, params: tuple = (), label: str = "") -> int:
        """Add a kernel body compiled at its first use: ``build()`` returns the cfunc (call it
        once; ``ensure`` does). Otherwise as ``register``."""
        return self._put(KernelEntry(name, None, int(cost_ns), int(unit), build, tuple(params),
                                     label))

    def _put(self, entry: KernelEntry) -> int:
        addr = 0 if entry.func is None else int(entry.func.address)
        kid = self.by_name.get(entry.name)
        if kid is None:
            kid = len(self.entries)
            self.entries.append(entry)
            self.by_name[entry.name] = kid
            self.addr = np.append(self.addr, np.int64(addr))
            self.cost = np.vstack([self.cost, np.zeros((1, KC_COLS), np.int64)])
            self.pending = np.append(self.pending, entry.func is None)
        else:
            self.entries[kid] = entry
            self.addr[kid] = addr
            self.pending[kid] = entry.func is None
        self.cost[kid, KC_BODY_NS], self.cost[kid, KC_UNIT] = entry.cost_ns, entry.unit
        if entry.label and not entry.name.startswith("__npusim"):
            self.by_label[entry.label] = kid
        return kid

    def ensure(self, kid: int) -> None:
        """Build kernel ``kid``'s body if it is still pending (a no-op for a compiled one or an
        id outside the table: the engine reports a bad id itself)."""
        if 0 <= kid < len(self.pending) and self.pending[kid]:
            e = self.entries[kid]
            e.func = e.build()
            self.addr[kid] = e.func.address
            self.pending[kid] = False

    def body(self, kid: int):
        """Kernel ``kid``'s cfunc (built if pending)."""
        self.ensure(kid)
        return self.entries[kid].func

    def set_cost(self, kid: int, cost_ns: int) -> None:
        """Override a kernel's body time per wave (ns)."""
        self.cost[kid, KC_BODY_NS] = cost_ns

    def saved_costs(self) -> np.ndarray:
        """A copy of every kernel's cost row, for :meth:`restore_costs` (a sweep point puts back
        what ``set_kernel_cost`` changed, so the next point does not inherit it)."""
        return self.cost.copy()

    def restore_costs(self, saved: np.ndarray) -> None:
        """Put back the cost rows of :meth:`saved_costs` (kernels registered since keep theirs)."""
        self.cost[:len(saved)] = saved

    def id(self, name: str) -> int:
        """The id of a table key, else of a label (a ``@npusim.kernel`` by the name it was
        defined with); KeyError naming the close matches otherwise."""
        kid = self.find(name)
        if kid is None:
            raise KeyError(self.unknown(name))
        return kid

    def find(self, name: str) -> int | None:
        kid = self.by_name.get(name)
        return self.by_label.get(name) if kid is None else kid

    def unknown(self, name: str) -> str:
        """The message for a kernel name the table does not hold, with the close matches."""
        known = [n for n in list(self.by_label) + [e.label or e.name for e in self.entries]
                 if not n.startswith(("__npusim", "aicpu:__npusim", "py:"))]
        close = difflib.get_close_matches(str(name), sorted(set(known)), n=3)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        return f"no kernel named {name!r} in the kernel table{hint}"

    def name(self, kid: int) -> str:
        """The name users know kernel ``kid`` by (its label, else its table key)."""
        e = self.entries[kid]
        return e.label or e.name

    def label(self, kid: int) -> str:
        """The name to show for kernel ``kid`` in traces and plots (the same as :meth:`name`)."""
        return self.name(kid)


TABLE = KernelTable()
