"""Kernel bodies of the runtime's example kernels and the control-flow helpers (numba cfuncs).

Each body has the ``KERNEL_SIG`` C ABI (``npusim.device.kernels``), reads its arguments from the
8-byte slots of its args area, and touches memory only through checked views (inputs through the
read-only ``V.r_*`` views, so the race detector tells reads from writes). The bodies are
registered in the kernel table under the kernel names of the real samples (``spec/kernel.md`` §7),
so a binary whose kernels carry those names launches these behaviours (``npusim.samples`` ships
one). A view's check is inlined into the body that asks for it (``memview._atk``), so a body's
machine code holds the views' code: numba's disk cache keys a body by its own file only, and a
body cached before a change to the views keeps the old code until this file changes or the cache
is cleared. Each body catches its own exceptions and returns ``KERNEL_TRAP``: a bug in a body is
a kernel exception, never a crash. ``DeviceWrite``, ``DeviceRead`` and ``KernelPrint`` print
through the device printf buffer (``npusim.kernel.printf``); ``add_custom_tiling`` is the body of
the placeholder build of ``add_custom`` (bound through the binary's BODY_TLV record).

The bodies are plain Python functions here: each is compiled into a ``cfunc`` (or loaded from
numba's disk cache) at the first launch that uses it (``KernelTable.register_lazy``), so
``import npusim`` compiles none of them.

Durations (the ``cost_ns`` registered with each) are the simulator's stand-in for the real kernels'
run times; see ``docs/timing.md``.
"""
from __future__ import annotations

import numpy as np

from ..device import memview as V
from ..device.half import f2h, h2f
from ..device.kernels import KERNEL_TRAP, TABLE, UNIT_AIV, arena, compiled_body
from .printf import format_id, printf

FMT_SOURCE = format_id("Source data: %d\n")
FMT_DESTINATION = format_id("Destination data: %d\n")
FMT_HELLO = format_id("Hello World\n")


def easy_op(memp, msize, ctxp, args, b, nb):
    """EasyOPf(u32* x): x[block_idx] += 1."""
    mem, ctx = arena(memp, msize, ctxp)
    try:
        x = V.u32(mem, ctx, V.args(mem, ctx, args, 1)[0] + 4 * b, 1)
        x[0] += np.uint32(1)
        return 0
    except Exception:
        return KERNEL_TRAP


def short_op(memp, msize, ctxp, args, b, nb):
    """ShortOPf(u32* x): x[block_idx] *= 2."""
    mem, ctx = arena(memp, msize, ctxp)
    try:
        x = V.u32(mem, ctx, V.args(mem, ctx, args, 1)[0] + 4 * b, 1)
        x[0] *= np.uint32(2)
        return 0
    except Exception:
        return KERNEL_TRAP


def error_op(memp, msize, ctxp, args, b, nb):
    """ErrorOPf(): executes ``trap`` — always a kernel exception."""
    return KERNEL_TRAP


def add_custom(memp, msize, ctxp, args, b, nb):
    """add_custom(half* x, half* y, half* z): z = x + y on block b's 2048-element slice."""
    mem, ctx = arena(memp, msize, ctxp)
    try:
        n = 2048
        off = 2 * n * b
        a = V.args(mem, ctx, args, 3)
        x = V.r_u16(mem, ctx, a[0] + off, n)
        y = V.r_u16(mem, ctx, a[1] + off, n)
        z = V.u16(mem, ctx, a[2] + off, n)
        for i in range(min(len(x), len(y), len(z))):
            z[i] = f2h(h2f(x[i]) + h2f(y[i]))
        return 0
    except Exception:
        return KERNEL_TRAP


def add_custom_tiling(memp, msize, ctxp, args, b, nb):
    """add_custom(half* x, half* y, half* z, int32* totalLength, int32* tileNum) of
    add_custom_tiling.cpp (the placeholder sample): 8 cores' worth of blocks (USE_CORE_NUM), block b
    adds its totalLength/8 slice; tileNum 0 returns early."""
    mem, ctx = arena(memp, msize, ctxp)
    try:
        a = V.args(mem, ctx, args, 5)
        total = np.int64(V.r_i32(mem, ctx, a[3], 1)[0])
        tiles = np.int64(V.r_i32(mem, ctx, a[4], 1)[0])
        if tiles <= 0:
            return 0
        n = total // 8
        off = 2 * n * b
        x = V.r_u16(mem, ctx, a[0] + off, n)
        y = V.r_u16(mem, ctx, a[1] + off, n)
        z = V.u16(mem, ctx, a[2] + off, n)
        for i in range(min(len(x), len(y), len(z))):
            z[i] = f2h(h2f(x[i]) + h2f(y[i]))
        return 0
    except Exception:
        return KERNEL_TRAP


def device_write(memp, msize, ctxp, args, b, nb):
    """DeviceWrite(int* devPtr, int value): devPtr[block_idx] = value; printf "Source data: %d"."""
    mem, ctx = arena(memp, msize, ctxp)
    try:
        s = V.args(mem, ctx, args, 2)
        value = np.int32(s[1] & 0xFFFFFFFF)
        p = V.i32(mem, ctx, s[0] + 4 * b, 1)
        p[0] = value
        printf(mem, ctx, FMT_SOURCE, b, np.int64(value))
        return 0
    except Exception:
        return KERNEL_TRAP


def device_read(memp, msize, ctxp, args, b, nb):
    """DeviceRead(int* devPtr): printf "Destination data: %d" with devPtr[block_idx]."""
    mem, ctx = arena(memp, msize, ctxp)
    try:
        s = V.args(mem, ctx, args, 1)
        p = V.r_i32(mem, ctx, s[0] + 4 * b, 1)
        printf(mem, ctx, FMT_DESTINATION, b, np.int64(p[0]))
        return 0
    except Exception:
        return KERNEL_TRAP


def kernel_print(memp, msize, ctxp, args, b, nb):
    """KernelPrint(): printf "Hello World" (once per block)."""
    mem, ctx = arena(memp, msize, ctxp)
    try:
        printf(mem, ctx, FMT_HELLO, b)
        return 0
    except Exception:
        return KERNEL_TRAP


def add_kernel(memp, msize, ctxp, args, b, nb):
    """AddKernel(float* a, float* b, float* dst, u32 total): dst = a + b on block slices
    of total/numBlocks elements (the remainder is ignored, as in the sample)."""
    mem, ctx = arena(memp, msize, ctxp)
    try:
        s = V.args(mem, ctx, args, 4)
        per = np.int64(V.slot_u32(s, 3)) // max(nb, 1)
        off = 4 * per * b
        a = V.r_f32(mem, ctx, s[0] + off, per)
        c = V.r_f32(mem, ctx, s[1] + off, per)
        d = V.f32(mem, ctx, s[2] + off, per)
        for i in range(min(len(a), len(c), len(d))):
            d[i] = a[i] + c[i]
        return 0
    except Exception:
        return KERNEL_TRAP


def vector_add(memp, msize, ctxp, args, b, nb):
    """VectorAddKernel(float* a, float* b, float* dst, float alpha, u32 n): every block computes
    dst[i] = a[i] + alpha * b[i] for all n (as the quickstart sample does)."""
    mem, ctx = arena(memp, msize, ctxp)
    try:
        s = V.args(mem, ctx, args, 5)
        n = np.int64(V.slot_u32(s, 4))
        alpha = V.slot_f32(s, 3)
        a = V.r_f32(mem, ctx, s[0], n)
        c = V.r_f32(mem, ctx, s[1], n)
        d = V.f32(mem, ctx, s[2], n)
        for i in range(min(len(a), len(c), len(d))):
            d[i] = a[i] + alpha * c[i]
        return 0
    except Exception:
        return KERNEL_TRAP


def cond_set_u64(memp, msize, ctxp, args, b, nb):
    """CondSetU64(u64* ptr, u64 value): *ptr = value (block 0 only)."""
    mem, ctx = arena(memp, msize, ctxp)
    try:
        if b == 0:
            s = V.args(mem, ctx, args, 2)
            p = V.i64(mem, ctx, s[0], 1)
            p[0] = s[1]
        return 0
    except Exception:
        return KERNEL_TRAP


def count_down(memp, msize, ctxp, args, b, nb):
    """CountDown(i64* counter, u64* cond): counter -= 1; cond = 1 if counter > 0 else 0."""
    mem, ctx = arena(memp, msize, ctxp)
    try:
        if b == 0:
            s = V.args(mem, ctx, args, 2)
            c = V.i64(mem, ctx, s[0], 1)
            w = V.i64(mem, ctx, s[1], 1)
            c[0] -= 1
            w[0] = 1 if c[0] > 0 else 0
        return 0
    except Exception:
        return KERNEL_TRAP


# name, body, cost of one wave in ns, unit, declared parameters (the sample binary's PARAM_INFO)
BUILTINS = (
    ("EasyOPf", easy_op, 2_000, UNIT_AIV, ("ptr",)),
    ("ShortOPf", short_op, 2_000, UNIT_AIV, ("ptr",)),
    ("LongOPf", None, 0, UNIT_AIV, ("ptr",)),   # bound below: EasyOPf's body, a long duration
    ("ErrorOPf", error_op, 1_000, UNIT_AIV, ()),
    ("add_custom", add_custom, 8_000, UNIT_AIV, ("ptr", "ptr", "ptr")),
    ("add_custom_tiling", add_custom_tiling, 8_000, UNIT_AIV, ("ptr",) * 5),
    ("AddKernel", add_kernel, 6_000, UNIT_AIV, ("ptr", "ptr", "ptr", "u32")),
    ("VectorAddKernel", vector_add, 4_000, UNIT_AIV, ("ptr", "ptr", "ptr", "f32", "u32")),
    ("CondSetU64", cond_set_u64, 1_000, UNIT_AIV, ("ptr", "u64")),
    ("CountDown", count_down, 1_000, UNIT_AIV, ("ptr", "ptr")),
    ("DeviceWrite", device_write, 2_000, UNIT_AIV, ("ptr", "i32")),
    ("DeviceRead", device_read, 2_000, UNIT_AIV, ("ptr",)),
    ("KernelPrint", kernel_print, 2_000, UNIT_AIV, ()),
)
PARAMS = {name: types for name, _, _, _, types in BUILTINS}
"""Declared parameter types of each built-in body (``samples/build.py`` writes them)."""
LONG_OP_NS = 1_400_000_000
"""LongOPf's duration (``example/kernel_func/long_OP.cpp``): 10000 x 25000 iterations of a chain
of five dependent scalar float operations (three multiply-adds, a compare, a select) on the AI
Core's scalar unit, [chosen] 2 cycles each at 1.8 GHz: 2.5e8 x 10 / 1.8 GHz = 1.39 s. The
samples' READMEs agree that it outlasts a second: ``aclrtSynchronizeStreamWithTimeout(stream1,
1000)`` after one LongOP returns 507046 (``1_basic_features/stream/2_multi_stream``). Fidelity
row 503."""


def register_builtins() -> None:
    for name, body, cost, unit, types in BUILTINS:
        if name == "LongOPf":
            body, cost = easy_op, LONG_OP_NS
        TABLE.register_lazy(name, lambda fn=body: compiled_body(fn), cost, unit=unit,
                            params=tuple((f"arg{i}", t) for i, t in enumerate(types)))


register_builtins()

