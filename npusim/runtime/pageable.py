"""Pageable host memory: numpy arrays the user registered with ``acl.util.numpy_to_ptr``.

Each registered array gets an address range of its own (from ``PAGEABLE_BASE``), which stays
valid exactly as long as the array lives — like the raw pointer pyACL hands out, which points
into the array's buffer. The registry holds the array only weakly, so registering never keeps
an array (or its memory) alive, and a dead array's range is forgotten. ``Runtime.reset``
clears it.
"""
from __future__ import annotations

import bisect
import sys
import threading
import weakref

import numpy as np

from ..device.memory import PAGEABLE_BASE

_finalizing = sys.is_finalizing


class PageableRegistry:
    __slots__ = ("_starts", "_items", "_by_id", "_next", "_lock", "_real")

    def __init__(self):
        self._starts: list[int] = []
        self._items: list[tuple[int, int, weakref.ref]] = []      # start, size, the array
        self._by_id: dict[int, int] = {}                          # id(array) -> start
        self._next = PAGEABLE_BASE
        self._lock = threading.RLock()       # a weakref callback may run inside register
        self._real = False                   # real-memory mode: arrays keep their own address

    def use_real_addresses(self) -> None:
        """Real-host-memory mode (``hostmem.use_real_memory``): an array is registered at its
        buffer's real address, as pyACL's pointer is, so a C pointer into it and the address
        handed out agree (an unregistered address there is real memory too: same bytes)."""
        self._real = True

    def register(self, array: np.ndarray) -> int:
        """The address of ``array``'s buffer (the same for the same live array)."""
        if not isinstance(array, np.ndarray) or not array.flags.c_contiguous:
            raise ValueError("numpy_to_ptr needs a C-contiguous numpy array")
        key = id(array)
        with self._lock:
            start = self._by_id.get(key)
            if start is not None:
                return start
            size = max(array.nbytes, 1)
            if self._real:
                start = array.ctypes.data
            else:
                start = self._next
                self._next += -(-size // 4096) * 4096 + 4096
            ref = weakref.ref(array, lambda _r, k=key, s=start: self._forget(k, s))
            i = bisect.bisect(self._starts, start)
            self._starts.insert(i, start)
            self._items.insert(i, (start, size, ref))
            self._by_id[key] = start
        return start

    def _forget(self, key: int, start: int) -> None:
        try:
            with self._lock:
                if self._by_id.get(key) == start:
                    del self._by_id[key]
                i = bisect.bisect_left(self._starts, start)
                while i < len(self._starts) and self._starts[i] == start:
                    if self._items[i][2]() is None:    # the dead one (real addresses: arrays
                        del self._starts[i]            # sharing a buffer share a start)
                        del self._items[i]
                        break
                    i += 1
        except (TypeError, AttributeError):
            if not _finalizing():   # at interpreter shutdown the module's globals may be
                raise               # gone already, and nothing looks registrations up again

    def find(self, addr: int):
        """(start, size, uint8 view of the whole array) of the live registration holding
        ``addr``, else None."""
        with self._lock:
            i = bisect.bisect(self._starts, addr) - 1
            if i < 0:
                return None
            start, size, ref = self._items[i]
        array = ref()
        if array is None or addr >= start + size:
            return None
        return start, size, array.reshape(-1).view(np.uint8)

    def __len__(self) -> int:
        return len(self._items)

    def clear(self) -> None:
        with self._lock:
            self._starts.clear()
            self._items.clear()
            self._by_id.clear()
