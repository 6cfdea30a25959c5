"""``acl.util``: numpy <-> host pointer helpers (pyACL's acl.util).

Unlike the ACL functions these return no code: a misuse raises ``ValueError`` (pyACL's helpers
raise too), and nothing else. Registered arrays the runtime cannot treat as ordinary pageable
memory — read-only arrays and arrays of zero bytes — are kept in :data:`GUARDED`, which the
facade's argument boundary (``_boundary.py``) consults for copy sources and targets: a read-only
array is refused as a copy or memset target, and no copy may reach past an array's bytes
(107000), before the runtime touches it.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from ..runtime.hostmem import PAGEABLE, PAGEABLE_MEM, PINNED, host_bytes, locate

# start address -> (bytes, writeable) of registered arrays that are read-only or empty
GUARDED: dict[int, tuple[int, bool]] = {}


def numpy_to_ptr(array: np.ndarray) -> int:
    """Register a C-contiguous numpy array as pageable host memory; returns its address (the
    same address for the same array). ``ValueError`` for anything else."""
    if not isinstance(array, np.ndarray) or not array.flags.c_contiguous:
        raise ValueError("numpy_to_ptr needs a C-contiguous numpy array")
    start = PAGEABLE_MEM.register(array)
    if not array.flags.writeable or array.nbytes == 0:
        GUARDED[start] = (array.nbytes, bool(array.flags.writeable))
    return start


def guarded(addr: int):
    """(start, bytes, writeable) of the guarded registration holding ``addr``, or None."""
    for start, (n, w) in GUARDED.items():
        if start <= addr <= start + n:
            return start, n, w
    return None


def ptr_to_numpy(ptr: int, shape, dtype) -> np.ndarray:
    """A numpy view of host memory (pinned from ``malloc_host`` or a registered array; read-only
    when the registered array is).

    Reading pinned memory observes the device: work the device would have finished by the host's
    current time has run. ``ValueError`` when ``ptr`` is not host memory of that size, or the
    shape or dtype is not one.
    """
    try:
        dtype = np.dtype(dtype)
        shape = (operator.index(shape),) if np.ndim(shape) == 0 else \
            tuple(operator.index(d) for d in shape)
        ptr = operator.index(ptr)
    except Exception as e:     # noqa: BLE001 -- any hostile shape, dtype or pointer
        raise ValueError(f"ptr_to_numpy: bad argument ({e})") from None
    if any(d < 0 for d in shape) or dtype.hasobject:
        raise ValueError("ptr_to_numpy needs a non-negative shape and a plain dtype")
    n = math.prod(shape) * dtype.itemsize
    w = locate(ptr)
    g = guarded(ptr)
    if w.kind not in (PINNED, PAGEABLE) or not w.fits(ptr, n) or \
            (g is not None and ptr + n > g[0] + g[1]):
        raise ValueError(f"0x{ptr:x} is not host memory of {n} bytes "
                         "(use acl.rt.malloc_host or acl.util.numpy_to_ptr)")
    if w.device is not None:
        w.device.advance_to_host()
    try:
        return host_bytes(w, ptr, n).view(dtype).reshape(shape)
    except (TypeError, ValueError) as e:   # a dtype numpy cannot view bytes as
        raise ValueError(f"ptr_to_numpy: {e}") from None
