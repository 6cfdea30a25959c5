"""Handles: the plain non-zero ints the facade hands out, and their validation.

The real runtime validates a handle by the magic word embedded in the object it points to: the
wrong type, or a destroyed object (magic reset to 0), gives ``ACL_ERROR_RT_INVALID_HANDLE``
(107017); a NULL handle passes validation and is judged by the API's own null checks
(``spec/aclgraph.md`` §0.3, ``spec/kernel.md`` §0). The registry reproduces that: a handle maps to
its live object; anything else non-zero — stale, foreign, or of another kind — is invalid.
"""
from __future__ import annotations

import itertools
import threading

from .. import errors as ERR

# kind -> high bits of its handles, so handles look like pointers and kinds never collide
_KIND_BASE = {
    "context": 0x5A10_0000_0000, "stream": 0x5A20_0000_0000, "event": 0x5A30_0000_0000,
    "notify": 0x5A40_0000_0000, "model": 0x5A50_0000_0000, "binary": 0x5A60_0000_0000,
    "function": 0x5A70_0000_0000, "args": 0x5A80_0000_0000, "param": 0x5A90_0000_0000,
    "cond": 0x5AA0_0000_0000, "taskgrp": 0x5AB0_0000_0000, "task": 0x5AC0_0000_0000,
    "cnt_notify": 0x5AD0_0000_0000,          # counting notifies (runtime/api_cntnotify.py)
    # chapter 11 memory (runtime/api_vmm.py, api_mempool.py)
    "physmem": 0x5AE0_0000_0000, "mempool": 0x5AF0_0000_0000,
    "binary_desc": 0x5B00_0000_0000,      # aclrtCreateBinary's descriptor (api_binary.py)
    "hccl_comm": 0x5B10_0000_0000,        # a rank of an HCCL communicator (hccl/comm.py)
    "allocator_desc": 0x5B20_0000_0000,   # aclrtAllocatorCreateDesc's (api_allocator.py)
    "label": 0x5B30_0000_0000, "label_list": 0x5B40_0000_0000,     # chapter 10 (api_label.py)
}
_STRIDE = 0x40

CREATE_HOOKS: list = []
"""Callbacks ``hook(kind, value)`` told of every handle the runtime hands out and of every
allocation a program makes (kind ``"malloc"``, value the pointer): the pytest plugin's leak report
records where each was created. Empty, they cost one list test per creation."""


class Registry:
    """Live objects by handle. ``get`` returns (object, code): code is 0, or 107017."""

    def __init__(self):
        self._live: dict[int, tuple[str, object]] = {}
        self._of_kind: dict[str, dict[int, object]] = {k: {} for k in _KIND_BASE}
        """The same live handles split by kind (``add`` and ``remove`` keep both): one lookup
        answers "a live handle of this kind" without testing the kind."""
        self.entry = self._live.get
        """``entry(h)`` -> ``(kind, obj)`` of a live handle, else None: the raw lookup for hot
        paths that test the kind themselves (a bound ``dict.get``, so no Python frame)."""
        self.stream = self._of_kind["stream"].get
        self.event = self._of_kind["event"].get
        self.function = self._of_kind["function"].get
        """``stream(h)`` / ``event(h)`` / ``function(h)`` -> the live object of that kind with
        handle ``h``, else None (NULL, stale, or another kind's handle): the hot paths' lookups
        (bound ``dict.get``s: no Python frame, no kind test; an unhashable ``h`` raises
        TypeError, as ``entry`` does)."""
        self._counters = {k: itertools.count(1) for k in _KIND_BASE}
        self._lock = threading.Lock()

    def add(self, kind: str, obj) -> int:
        with self._lock:
            h = _KIND_BASE[kind] + next(self._counters[kind]) * _STRIDE
            self._live[h] = (kind, obj)
            self._of_kind[kind][h] = obj
        obj.handle = h
        if CREATE_HOOKS:
            for hook in CREATE_HOOKS:
                hook(kind, h)
        return h

    def remove(self, h: int) -> None:
        ent = self._live.pop(h, None)
        if ent is not None:
            self._of_kind[ent[0]].pop(h, None)

    def get(self, kind: str, h):
        """(obj, 0) for a live handle of this kind, (None, 0) for NULL, else (None, 107017)."""
        if h is None or h == 0:
            return None, ERR.ACL_SUCCESS
        try:
            obj = self._of_kind[kind][h]
        except (KeyError, TypeError):
            return None, ERR.ACL_ERROR_RT_INVALID_HANDLE
        return obj, ERR.ACL_SUCCESS

    def counts(self) -> dict:
        """Live handles per kind (``npusim.census``)."""
        out: dict = {}
        for k, _ in list(self._live.values()):
            out[k] = out.get(k, 0) + 1
        return out

    def live(self, kind: str) -> list:
        return list(self._of_kind.get(kind, {}).values())

    def clear(self) -> None:
        self._live.clear()
        for d in self._of_kind.values():
            d.clear()
