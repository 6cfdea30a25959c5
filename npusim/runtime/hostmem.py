"""Host memory the runtime did not allocate: numpy arrays registered as pageable memory, and
the lookup that classifies any pointer (device, pinned host, pageable, unknown).

The runtime treats pageable memory differently from pinned memory (an async copy with it becomes
a synchronous one; a capturing stream refuses it), so the simulator keeps the two apart: pinned
memory lives in a device's arena, pageable memory stays in the user's numpy array.

In real-host-memory mode (:func:`use_real_memory`, issue 39: the C library) pinned memory is
also real memory at its own address (``device/memory.py`` ``Memory._make_real``), and any host
address outside npusim's claimed ranges is the process's own memory, pageable to the runtime
(docs/fidelity.md rows 470-474).
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np

from ..device.memory import (_REAL_HOST, DEV_BASE, DEV_STRIDE, HOST_BASE, HOST_STRIDE, PAGE,
                             REAL_HOST_BASE, USER_TOP, claim, claim_above, claimed, real_host, set_real_host)
from .runtime import RT

DEVICE, PINNED, PAGEABLE, UNKNOWN = "device", "pinned", "pageable", "unknown"


@dataclass
class Where:
    kind: str
    device: object = None        # Device owning the arena (DEVICE, PINNED)
    array: np.ndarray = None     # uint8 view of the registered array (PAGEABLE)
    offset: int = 0              # offset inside ``array`` (PAGEABLE)
    start: int = 0               # start address of the allocation / registration
    size: int = 0                # its size in bytes

    def fits(self, addr: int, n: int) -> bool:
        return self.kind != UNKNOWN and self.start <= addr and addr + n <= self.start + self.size


_HOST_BASE = HOST_BASE
"""Start of device 0's pinned-host range: ``memory.REAL_HOST_BASE`` in real-memory mode (both
lie above every device range, so the comparison in :func:`device_of` tells the two apart)."""

PAGEABLE_MEM = RT.pageable
"""The runtime's registry of pageable arrays (``pageable.py``), cleared by ``reset``."""


def device_of(addr: int):
    """The open device whose device or pinned-host address range holds ``addr``, or None.
    Every device has its own ranges (``Memory.place``: device d's at ``DEV_BASE + d *
    DEV_STRIDE`` and ``HOST_BASE + d * HOST_STRIDE``), so the address names the one device to
    ask: O(1) however many devices are open."""
    if addr >= _HOST_BASE:
        d = (addr - _HOST_BASE) // HOST_STRIDE
    else:
        d = (addr - DEV_BASE) // DEV_STRIDE
    dev = RT.devices.get(d)
    if dev is None:
        return None
    mem = dev.state.mem
    return dev if mem.is_device(addr) or mem.is_pinned_host(addr) else None


def locate(addr) -> Where:
    """Classify an address: device memory or pinned host memory of some device's arena (live
    allocations only), a registered pageable array, or unknown."""
    if not isinstance(addr, (int, np.integer)) or addr <= 0:
        return Where(UNKNOWN)
    addr = int(addr)
    dev = device_of(addr)
    if dev is not None:
        mem = dev.state.mem
        a = mem.allocation_of(addr)
        if a is None:
            return Where(UNKNOWN)
        return Where(DEVICE if mem.is_device(addr) else PINNED, dev, start=a[0], size=a[1])
    hit = PAGEABLE_MEM.find(addr)
    if hit is not None:
        start, size, data = hit
        return Where(PAGEABLE, array=data, offset=addr - start, start=start, size=size)
    if _REAL_HOST[0]:
        return _real_pageable(addr)
    return Where(UNKNOWN)


def _real_pageable(addr: int) -> Where:
    """Real-memory mode: an address in none of npusim's ranges is the process's own memory
    (a C program's malloc, stack, static data), pageable to the runtime — reachable up to the
    next simulated range (a copy never runs into a reservation). The null page, the simulated
    ranges themselves and anything past the user address space stay unknown."""
    if addr < PAGE or addr >= USER_TOP or claimed(addr):
        return Where(UNKNOWN)
    return Where(PAGEABLE, start=addr, size=claim_above(addr) - addr)


def host_bytes(w: Where, addr: int, n: int) -> np.ndarray:
    """A uint8 view of ``n`` bytes at ``addr`` (the caller checked ``w.fits``)."""
    if w.kind == PAGEABLE:
        if w.array is None:                  # the process's own memory (real-memory mode)
            return np.frombuffer((ctypes.c_char * n).from_address(addr), np.uint8)
        o = addr - w.start
        return w.array[o:o + n]
    return w.device.state.mem.view(addr, n)


# ---- real host memory (issue 39): C programs read and write host memory themselves ----
def real_memory() -> bool:
    """Is this process in real-host-memory mode (:func:`use_real_memory`)?"""
    return real_host()


def use_real_memory() -> None:
    """Switch the process into real-host-memory mode (the C library, ``npusim.cabi``, calls it
    at load): pinned host memory (``aclrtMallocHost`` ...) is real memory at the address the
    runtime hands out, aliasing the arena the engine uses (``device/memory.py``, ``claim``);
    any host address outside npusim's ranges is the process's own memory, pageable to the
    runtime; ``acl.util.numpy_to_ptr`` hands out an array's real address.

    Call it before any device opens: with one open it raises RuntimeError (its arena is made
    already). It claims at once the pinned-host ranges of every device of the profile in force
    (before any arena is mapped: an arena of 100 GiB placed by the kernel could otherwise cover
    them); a range the process uses already raises ``memory.AddressTaken`` (a RuntimeError)
    naming the mapping there. Idempotent; there is no way back."""
    if real_host():
        return
    if RT.devices:
        raise RuntimeError("use_real_memory() must be called before any device is opened "
                           f"(open: {sorted(RT.devices)})")
    global _HOST_BASE
    from .device import pinned_host_bytes
    prof = RT.profile_in_force()
    size = pinned_host_bytes(prof)
    for d in range(prof.device_count):
        claim(REAL_HOST_BASE + d * HOST_STRIDE, size, f"device {d}'s pinned host memory")
    PAGEABLE_MEM.use_real_addresses()
    _HOST_BASE = REAL_HOST_BASE
    set_real_host()
