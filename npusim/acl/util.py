"""``acl.util``: numpy <-> host pointer helpers (pyACL's acl.util)."""
from __future__ import annotations

import numpy as np

from ..runtime.hostmem import PAGEABLE, PAGEABLE_MEM, PINNED, host_bytes, locate


def numpy_to_ptr(array: np.ndarray) -> int:
    """Register a C-contiguous numpy array as pageable host memory; returns its address (the
    same address for the same array)."""
    return PAGEABLE_MEM.register(array)


def ptr_to_numpy(ptr: int, shape, dtype) -> np.ndarray:
    """A writable numpy view of host memory (pinned from ``malloc_host`` or a registered array).

    Reading pinned memory observes the device: work the device would have finished by the host's
    current time has run. ``ValueError`` when ``ptr`` is not host memory of that size.
    """
    dtype = np.dtype(dtype)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    n = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    w = locate(ptr)
    if w.kind not in (PINNED, PAGEABLE) or not w.fits(int(ptr), n):
        raise ValueError(f"0x{int(ptr or 0):x} is not host memory of {n} bytes "
                         "(use acl.rt.malloc_host or acl.util.numpy_to_ptr)")
    if w.device is not None:
        w.device.advance_to_host()
    return host_bytes(w, int(ptr), n).view(dtype).reshape(shape)
