"""Memory of other devices, reached from a task: the arena table and the peer copy body.

A device's engine sees only its own arena (``memory.py``). A task that moves data between two
devices — an ``aclrtMemcpyAsync`` between devices with peer access enabled, or one step of an
HCCL collective (``../shared/spec/hccl.md`` §4: SDMA copies over HCCS between device address
ranges) — is a kernel task of the runtime's own (:data:`COPY_BODY`, on the DMA unit, called by
address like any kernel) whose arguments name each side by *device id and arena offset*, never
by a host pointer: the body looks both up in :data:`ARENAS` when it runs, so a task that
outlives a device (a graph captured on device 0 that copies from device 1, replayed after
device 1 was reset) faults as a bad access instead of touching memory that is gone.

``ARENAS`` holds, per device id, the address and size of the device's arena (0 while the device
is not registered); ``runtime/peer.py`` registers a device at its first peer task and clears
its row when the device closes. The table's own address is the last argument of every peer
task, so the body finds it without a global.

**Recording.** While accesses are recorded (``ctx[C_REC]`` set, ``npusim.device.recording``) a
peer body logs, on the executing device's log, a read of the source range and a write (an
atomic reduce, :data:`ACC_REDUCE`, for an inline reduce) of the destination range at their
*device addresses* (:func:`record`): another device's address is just a number to the log,
and the cross-device race detector (``npusim.analysis.race.analyze_devices``) merges the logs.
Off, it costs one word test.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from . import memview as V
from .kernels import KERNEL_TRAP, TABLE, UNIT_DMA, arena, compiled_body
from .memory import C_DEV_BASE, C_DEV_SIZE, C_HOST_BASE, C_REC, DEV_BASE, DEV_STRIDE, HOST_STRIDE
from .memview import ACC_R, ACC_W, rec_access, view_at

MAX_DEVICES = 64
"""Device ids a peer task can name (the runtime's ``RT_MAX_DEV_NUM`` is 64)."""
A_PTR, A_SIZE, A_COLS = 0, 1, 2
ARENAS = np.zeros(MAX_DEVICES * A_COLS, np.int64)
"""Per device id: (address of its arena's first byte, the arena's size); 0 when unregistered."""

ACC_REDUCE = np.int64(4)
"""Access kind of an inline reduce into its destination (beside ``memview.ACC_R``/``ACC_W``):
the SDMA engine reduces atomically, so two reduces into one range are not a race with each other
(``../shared/spec/hccl.md`` §4, the mesh Reduce_Inline of several peers into one buffer);
either is with a plain read or write."""

COPY_BODY = "__npusim_peer_copy"
COPY_ARGS = 6       # dst device, dst offset, src device, src offset, bytes, ARENAS' address


@njit(cache=True, inline="always")
def span(table, dev, off, n):
    """The host address of ``n`` bytes at arena offset ``off`` of device ``dev``, or 0 when the
    device is not registered or the range is outside its arena."""
    if dev < 0 or dev >= MAX_DEVICES or off < 0 or n < 0:
        return np.int64(0)
    p, size = table[dev * A_COLS + A_PTR], table[dev * A_COLS + A_SIZE]
    if p == 0 or off + n > size:
        return np.int64(0)
    return p + off


@njit(cache=True, inline="always")
def address(ctx, dev, off):
    """The device address of arena offset ``off`` of device ``dev`` (``memory.py`` ``to_addr``
    on that device: HBM below its ``dev_size``, pinned host above). The split is the executing
    device's ``dev_size``: every device of a process is made from one profile."""
    ds = ctx[C_DEV_SIZE]
    if off < ds:
        return DEV_BASE + dev * DEV_STRIDE + off
    # pinned-host ranges start where the executing device's ctx says (``memory.host_base``:
    # they move in real-host-memory mode), device d's HOST_STRIDE * d above device 0's
    me = (ctx[C_DEV_BASE] - DEV_BASE) // DEV_STRIDE
    return ctx[C_HOST_BASE] + (dev - me) * HOST_STRIDE + off - ds


@njit(cache=True)
def record(ctx, dst_dev, dst_off, src_dev, src_off, n, wkind):
    """While accesses are recorded: log the current task's read of ``n`` source bytes and its
    ``wkind`` access (``ACC_W``, or :data:`ACC_REDUCE` for an inline reduce) of the
    destination."""
    if ctx[C_REC] != 0 and n > 0:
        rec_access(ctx, address(ctx, src_dev, src_off), n, ACC_R)
        rec_access(ctx, address(ctx, dst_dev, dst_off), n, wkind)


def peer_copy(memp, msize, ctxp, args, b, nb):
    """The peer copy task: ``COPY_ARGS`` words (dst device, dst offset, src device, src
    offset, bytes, the table's address). A side that is gone traps (a kernel fault)."""
    mem, ctx = arena(memp, msize, ctxp)
    a = V.args(mem, ctx, args, COPY_ARGS)
    n = a[4]
    table = view_at(a[5], MAX_DEVICES * A_COLS, np.int64)
    d = span(table, a[0], a[1], n)
    s = span(table, a[2], a[3], n)
    if d == 0 or s == 0:
        return KERNEL_TRAP
    if b == 0 and ctx[C_REC] != 0:
        record(ctx, a[0], a[1], a[2], a[3], n, ACC_W)
    if n > 0:
        view_at(d, n, np.uint8)[:] = view_at(s, n, np.uint8)
    return 0


COPY_KID = TABLE.register_lazy(COPY_BODY, lambda: compiled_body(peer_copy), 0, unit=UNIT_DMA,
                               params=(("dst_dev", "i64"), ("dst_off", "i64"),
                                       ("src_dev", "i64"), ("src_off", "i64"),
                                       ("n", "u64"), ("table", "u64")))
