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
"""
from __future__ import annotations

from dataclasses import dataclass

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
    func: object            # the numba cfunc (kept alive: the table stores its address)
    cost_ns: int            # body time of one wave of blocks (0: the profile's default)
    unit: int


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

    def register(self, name: str, func, cost_ns: int = 0, unit: int = UNIT_AIV) -> int:
        """Add a kernel body (a cfunc with KERNEL_SIG); returns its id. Re-registering a name
        replaces the body behind the same id (the way a reloaded binary rebinds a stub)."""
        entry = KernelEntry(name, func, int(cost_ns), int(unit))
        kid = self.by_name.get(name)
        if kid is None:
            kid = len(self.entries)
            self.entries.append(entry)
            self.by_name[name] = kid
            self.addr = np.append(self.addr, np.int64(func.address))
            self.cost = np.vstack([self.cost, np.zeros((1, KC_COLS), np.int64)])
        else:
            self.entries[kid] = entry
            self.addr[kid] = func.address
        self.cost[kid, KC_BODY_NS], self.cost[kid, KC_UNIT] = entry.cost_ns, unit
        return kid

    def set_cost(self, kid: int, cost_ns: int) -> None:
        """Override a kernel's body time per wave (ns)."""
        self.cost[kid, KC_BODY_NS] = cost_ns

    def id(self, name: str) -> int:
        return self.by_name[name]

    def name(self, kid: int) -> str:
        return self.entries[kid].name


TABLE = KernelTable()
