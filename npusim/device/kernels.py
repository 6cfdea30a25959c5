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

from dataclasses import dataclass
from typing import Callable

import numpy as np
from llvmlite import ir
from numba import carray, njit, types
from numba.extending import intrinsic

from .memory import C_LEN

KERNEL_SIG = types.int64(types.CPointer(types.uint8), types.int64, types.CPointer(types.int64),
                         types.int64, types.int64, types.int64)

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
    n = carray(ctxp, 1)[0 + C_LEN]
    return carray(memp, msize), carray(ctxp, n)


@dataclass
class KernelEntry:
    name: str
    func: object            # the numba cfunc (kept alive: the table stores its address);
    #                         None while a lazy body is pending
    cost_ns: int            # body time of one wave of blocks (0: the profile's default)
    unit: int
    build: Callable[[], object] | None = None   # a lazy body's builder (returns the cfunc)
    label: str = ""         # the name users gave it (``@npusim.kernel``'s defined name) when it
    #                         differs from the table name: traces and messages show it


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

    def register(self, name: str, func, cost_ns: int = 0, unit: int = UNIT_AIV,
                 label: str = "") -> int:
        """Add a kernel body (a cfunc with KERNEL_SIG); returns its id. Re-registering a name
        replaces the body behind the same id (the way a reloaded binary rebinds a stub).
        ``label``: the name traces and messages show (default: ``name``)."""
        return self._put(KernelEntry(name, func, int(cost_ns), int(unit), label=label))

    def register_lazy(self, name: str, build: Callable[[], object], cost_ns: int = 0,
                      unit: int = UNIT_AIV) -> int:
        """Add a kernel body compiled at its first use: ``build()`` returns the cfunc (call it
        once; ``ensure`` does). Otherwise as ``register``."""
        return self._put(KernelEntry(name, None, int(cost_ns), int(unit), build))

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
        return self.by_name[name]

    def name(self, kid: int) -> str:
        return self.entries[kid].name

    def label(self, kid: int) -> str:
        """The name to show for kernel ``kid``: its label, else its table name."""
        e = self.entries[kid]
        return e.label or e.name

    def find(self, name: str) -> int | None:
        """The id of the kernel called ``name``: its table name, else the latest kernel
        labelled so (a ``@npusim.kernel``'s defined name); None when there is none."""
        kid = self.by_name.get(name)
        if kid is None:
            for i in range(len(self.entries) - 1, -1, -1):
                if self.entries[i].label == name:
                    return i
        return kid


TABLE = KernelTable()
