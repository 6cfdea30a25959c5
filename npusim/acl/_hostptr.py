"""The implementation of ``acl.util`` (pyACL's numpy / bytes <-> host pointer helpers and report
threads) and the facade's record of registered host buffers the runtime cannot treat as ordinary
pageable memory. ``acl.util`` (``util.py``) re-exports only pyACL's documented helpers.

Unlike the ACL functions the pointer helpers return no code: a misuse raises ``ValueError``
(pyACL's helpers raise too), and nothing else. ``start_thread`` / ``stop_thread`` return codes
as pyACL's do (docs/pyacl.md). Registered arrays the runtime cannot treat as ordinary pageable
memory — read-only arrays and arrays of zero bytes — are kept in :data:`GUARDED`, which the
facade's argument boundary (``_boundary.py``) consults for copy sources and targets: a read-only
array is refused as a copy or memset target, and no copy may reach past an array's bytes
(107000), before the runtime touches it.

``bytes_to_ptr`` (docs/fidelity.md row 200): pyACL's C helper hands out the address of the
object's payload, and C writes through it whatever Python thinks of ``bytes``; the canonical
read-back of Huawei's samples (``buf = a.tobytes(); memcpy(bytes_to_ptr(buf), ..., D2H);
np.frombuffer(buf)``) relies on that. So the registered array is a writable ``ctypes`` view of
the ``bytes`` object's own payload (its address checked to lie inside the object), held together
with the object while anything else refers to it.
"""
from __future__ import annotations

import ctypes
import math
import operator
import sys
import threading

import numpy as np

from ..runtime.api_managed import is_managed
from ..runtime.hostmem import DEVICE, PAGEABLE, PAGEABLE_MEM, PINNED, host_bytes, locate

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



def numpy_contiguous_to_ptr(data_in: np.ndarray):
    """pyACL's ``ptr, data_out = acl.util.numpy_contiguous_to_ptr(data_in)``: ``data_out`` is
    ``data_in`` itself when it is C-contiguous, else a C-contiguous copy of it, and ``ptr`` is
    the address of ``data_out`` (:func:`numpy_to_ptr`), valid while ``data_out`` lives.
    ``ValueError`` for anything but a numpy array."""
    if not isinstance(data_in, np.ndarray):
        raise ValueError("numpy_contiguous_to_ptr needs a numpy array")
    data_out = np.ascontiguousarray(data_in)
    return numpy_to_ptr(data_out), data_out

def guarded(addr: int):
    """(start, bytes, writeable) of the guarded registration holding ``addr``, or None."""
    for start, (n, w) in GUARDED.items():
        if start <= addr <= start + n:
            return start, n, w
    return None


# numpy's type numbers (``NPY_TYPES``: 0 NPY_BOOL, 5 NPY_INT, 7 NPY_LONG, 11 NPY_FLOAT,
# 23 NPY_HALF ...), as pyACL's ``ptr_to_numpy(ptr, shape, npy_type)`` takes them
NPY_TYPES: dict[int, np.dtype] = {np.dtype(c).num: np.dtype(c) for c in "?bBhHiIlLqQefdg"}


def _dtype(t) -> np.dtype:
    if isinstance(t, (int, np.integer)) and not isinstance(t, bool):
        if int(t) not in NPY_TYPES:
            raise ValueError(f"{t} is not a numpy type number of a plain dtype")
        return NPY_TYPES[int(t)]
    return np.dtype(t)


def ptr_to_numpy(ptr: int, shape, dtype) -> np.ndarray:
    """A numpy view of host memory (pinned from ``malloc_host``, a registered array, or managed
    memory from ``acl.rt.mem_alloc_managed``, which the host reaches directly; read-only
    when the registered array is). ``dtype`` is numpy's type number (pyACL's ``npy_type``:
    5 = int32, 11 = float32, 23 = float16 ...) or anything ``numpy.dtype`` takes.

    Reading pinned memory observes the device: work the device would have finished by the host's
    current time has run. ``ValueError`` when ``ptr`` is not host memory of that size, or the
    shape or dtype is not one.
    """
    try:
        dtype = _dtype(dtype)
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
    if (w.kind not in (PINNED, PAGEABLE) and not (w.kind == DEVICE and is_managed(ptr))) or \
            not w.fits(ptr, n) or (g is not None and ptr + n > g[0] + g[1]):
        raise ValueError(f"0x{ptr:x} is not host memory of {n} bytes "
                         "(use acl.rt.malloc_host or acl.util.numpy_to_ptr)")
    if w.device is not None:
        w.device.advance_to_host()
    try:
        return host_bytes(w, ptr, n).view(dtype).reshape(shape)
    except (TypeError, ValueError) as e:   # a dtype numpy cannot view bytes as
        raise ValueError(f"ptr_to_numpy: {e}") from None


# ---- pyACL's bytes helpers ----
# the objects given to bytes_to_ptr (of a memoryview: the object it views), by the address of
# their registration: (the object, the array registered, how many references this table itself
# makes to the object); an entry is dropped once nothing but this table refers to the object
# (checked at each call)
_BYTES: dict[int, tuple[object, np.ndarray, int]] = {}
_PAYLOAD = bytes.__basicsize__ - 1      # offset of a bytes object's payload (CPython's ob_sval)


def _sweep_bytes() -> None:
    for start in list(_BYTES):
        obj, _arr, own = _BYTES[start]
        # references: this table's, ``obj`` here and getrefcount's argument
        if sys.getrefcount(obj) <= own + 2:
            del _BYTES[start]
            GUARDED.pop(start, None)
        del obj, _arr


def _payload_view(data, ro: np.ndarray) -> np.ndarray:
    """A writable uint8 view of the ``bytes`` payload ``ro`` reads, or ``ro`` itself when that
    is not one (an empty or one-byte ``bytes`` — CPython shares those objects interpreter-wide,
    so writing into them would change every ``b"\\x00"`` of the process; or a read-only buffer
    of another kind, whose memory may really be read-only)."""
    owner = data.obj if isinstance(data, memoryview) else data
    if type(owner) is not bytes or len(owner) <= 1 or ro.nbytes == 0:
        return ro
    addr = ro.ctypes.data
    first = id(owner) + _PAYLOAD
    if not (first <= addr and addr + ro.nbytes <= first + len(owner)):
        return ro                            # not CPython's layout: stay read-only
    return np.frombuffer((ctypes.c_char * ro.nbytes).from_address(addr), dtype=np.uint8)


def bytes_to_ptr(data) -> int:
    """pyACL's ``ptr = acl.util.bytes_to_ptr(data)``: the host address of the object's own
    buffer (no copy), valid as long as the object lives. As with pyACL's C helper, copies into
    that address land in the object — a ``bytes`` object too, though Python calls it immutable
    (one-byte and empty ones excepted: they are read-only, a copy into them -> 107000). A
    ``bytearray`` or a C-contiguous ``memoryview`` work the same. ``ValueError`` for anything
    else."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ValueError("bytes_to_ptr needs a bytes, bytearray or memoryview object")
    if isinstance(data, memoryview) and not data.c_contiguous:
        raise ValueError("bytes_to_ptr needs a C-contiguous memoryview")
    _sweep_bytes()
    for start, (held, _, _) in _BYTES.items():
        if held is data and PAGEABLE_MEM.find(start) is not None:
            return start
    owner = data.obj if isinstance(data, memoryview) else data    # whose life the address has
    before = sys.getrefcount(owner)
    ro = np.frombuffer(data, dtype=np.uint8)
    arr = _payload_view(data, ro) if ro.flags.writeable is False else ro
    # ``arr`` over the memoryview itself holds it, and so its reference to the object (counted
    # in ``before`` already)
    view_held = arr is ro and owner is not data
    del ro
    start = numpy_to_ptr(arr)
    _BYTES[start] = (owner, arr, 0)
    own = sys.getrefcount(owner) - before + view_held   # the references the entry, arr make
    _BYTES[start] = (owner, arr, own)
    return start


def ptr_to_bytes(ptr: int, size: int) -> bytes:
    """pyACL's ``bytes_out = acl.util.ptr_to_bytes(ptr, size)``: a copy of ``size`` bytes of
    host memory (pinned, registered, or a ``bytes_to_ptr`` buffer). ``ValueError`` when that
    is not host memory of that size."""
    try:
        size = operator.index(size)
    except Exception as e:     # noqa: BLE001 -- any hostile size
        raise ValueError(f"ptr_to_bytes: bad size ({e})") from None
    return ptr_to_numpy(ptr, (size,), np.uint8).tobytes()


# ---- pyACL's threads ----
_THREADS: dict[int, threading.Thread] = {}


def start_thread(func, args_list):
    """pyACL's ``thr_id, ret = acl.util.start_thread(thr_func, args_list)``: ``thr_func(args_list)``
    runs in a new thread; ``thr_id`` is its ``pthread_self`` value (``Thread.ident``), the id
    ``acl.rt.subscribe_report`` takes. Like any new thread it has no context until it sets one.
    A ``func`` that is not callable -> (None, 100000)."""
    if not callable(func):
        return None, 100000
    try:
        t = threading.Thread(target=func, args=(args_list,), daemon=True,
                             name="acl.util.start_thread")
        t.start()
    except Exception:          # noqa: BLE001 -- e.g. no more threads: a code, as pyACL's
        return None, 100000
    _THREADS[t.ident] = t
    return t.ident, 0


def stop_thread(thr_id) -> int:
    """pyACL's ``ret = acl.util.stop_thread(thr_id)``: wait for that thread to end (it ends when
    its function returns). An id ``start_thread`` did not return -> 100000."""
    t = _THREADS.pop(int(thr_id), None) if isinstance(thr_id, (int, np.integer)) else None
    if t is None:
        return 100000
    if t is not threading.current_thread():
        t.join()
    return 0
