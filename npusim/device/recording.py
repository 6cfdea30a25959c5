"""The access log of one device: the record array the engine and kernel views append to.

While accesses are recorded (``npusim.analysis.record()``, ``configure(record_accesses=True)``)
a device owns one ``AccessLog``. Its int64 array (layout in ``npusim.device.memview``: a header,
``TASK_COLS`` words per executed SQE, ``ACC_COLS`` words per memory access) is published to the
engine and to kernels as ``ctx[C_REC]``, the array's address. The engine appends a task row when
it starts an SQE (and drops it again when the SQE parks on a wait), so a kernel's accesses are
tagged with the row of the task that made them. When a table is nearly full the engine stops at
the next SQE boundary (``R_STEPS``) and ``DeviceState.run`` calls ``make_room``, which doubles it.

The log also keeps, in task-row time, the allocations (for naming buffers) and the frees (an
address range freed and allocated again is a new buffer, never a race with the old one), and the
host's observations of the device (``observe``: a synchronize that returned), which order tasks
submitted after them (``npusim.analysis.race``). Observations are numbered in one host order
across every live log (``seqs``), and each one is noted in the other live logs too
(``OBS_PEER``, which orders nothing on its own): a task a device runs after the host saw
*another* device reach a point is then known to follow it (the cross-device pass,
``race.analyze_devices``).
"""
from __future__ import annotations

import bisect

import numpy as np

from .engine import CD_MBASE
from .memory import C_REC
from .sqe import OP_COND_FIRST, OP_MODEL_EXECUTE
from .memview import (ACC_COLS, RH_ACAP, RH_AN, RH_AOFF, RH_DROP, RH_FULL, RH_LEN, RH_SIZE,
                      RH_TCAP, RH_TN, RH_TOFF, TASK_COLS)

OBS_SQ, OBS_SLOT, OBS_ALL = 0, 1, 2     # observation kinds: SQ reached a position, slot, device
OBS_PEER = 3        # the host observed another device (its own log has the observation)
_LIVE: list = []    # every open AccessLog (observations are noted in each)
_SEQ = [0]          # the host order of observations, across logs


class AccessLog:
    def __init__(self, state, tasks: int = 1 << 15, accesses: int = 1 << 16):
        mem = state.mem
        self.mem = mem
        self.arr = self._alloc(tasks, accesses)
        self.allocs: list[tuple[int, int, int]] = []      # (task row, address, size)
        self.frees: list[tuple[int, int, int]] = []       # (task row, address, size)
        self.observations: list[tuple[int, int, int, int]] = []   # (task row, kind, a, b)
        self.seqs: list[int] = []   # per observation: its number in the host order (all logs)
        self.tables: list = []      # (task row, mptr, msq, cond CD_MBASE, cmodels) in force
        for off, size in mem.blocks():                    # buffers that exist already
            self.allocs.append((0, mem.to_addr(off), size))
        mem.observer = self
        mem.ctx[C_REC] = self.arr.ctypes.data
        self.on_tables(state)
        _LIVE.append(self)

    def on_tables(self, st) -> None:
        """The model/cond tables changed (``Device.publish_models``): keep a copy, so the
        activations of MODEL_EXECUTE and COND_FIRST rows are read in the tables the engine used."""
        mb = st.conds[:, CD_MBASE].copy() if len(st.conds) else np.zeros(0, np.int64)
        snap = (self.n_tasks, st.mptr.copy(), st.msq.copy(), mb, st.cmodels.copy())
        if self.tables and self.tables[-1][0] == snap[0]:
            self.tables[-1] = snap
        else:
            self.tables.append(snap)

    def activations(self, T: np.ndarray, t0: int) -> tuple[np.ndarray, np.ndarray]:
        """CSR (ptr, sqs) of the SQs each row of ``T`` (rows from ``t0``) activated through a
        model launch or a cond task's branch (STREAM_ACTIVE hops are read from the row)."""
        n = T.shape[0]
        counts = np.zeros(n + 1, np.int64)
        out: list[int] = []
        rows = np.nonzero((T[:, 2] == OP_MODEL_EXECUTE) | (T[:, 2] == OP_COND_FIRST))[0]
        starts = [t[0] for t in self.tables]
        for r in rows.tolist():
            i = bisect.bisect_right(starts, t0 + r) - 1
            if i < 0:
                continue
            _, mptr, msq, mbase, cmodels = self.tables[i]
            m = int(T[r, 3])
            if T[r, 2] == OP_COND_FIRST:
                k = int(T[r, 5])
                if k < 0 or m >= len(mbase) or mbase[m] + k >= len(cmodels):
                    continue
                m = int(cmodels[mbase[m] + k])
            if 0 <= m < len(mptr) - 1:
                heads = msq[mptr[m]:mptr[m + 1]].tolist()
                out.extend(heads)
                counts[r + 1] = len(heads)
        return np.cumsum(counts), np.array(out, np.int64)

    @staticmethod
    def _alloc(tasks: int, accesses: int) -> np.ndarray:
        a = np.zeros(RH_SIZE + TASK_COLS * tasks + ACC_COLS * accesses, np.int64)
        a[RH_TCAP], a[RH_ACAP] = tasks, accesses
        a[RH_TOFF], a[RH_AOFF] = RH_SIZE, RH_SIZE + TASK_COLS * tasks
        a[RH_LEN] = len(a)
        return a

    # ---- engine side ----
    def make_room(self) -> None:
        """Grow a nearly full table (the engine stopped at an SQE boundary for it)."""
        a = self.arr
        if not a[RH_FULL]:
            return
        tn, an = int(a[RH_TN]), int(a[RH_AN])
        tcap, acap = int(a[RH_TCAP]), int(a[RH_ACAP])
        if 2 * tn >= tcap:
            tcap *= 2
        if 2 * an >= acap:
            acap *= 2
        b = self._alloc(tcap, acap)
        b[RH_TN], b[RH_AN], b[RH_DROP] = tn, an, a[RH_DROP]
        b[RH_SIZE:RH_SIZE + TASK_COLS * tn] = a[a[RH_TOFF]:a[RH_TOFF] + TASK_COLS * tn]
        ao = int(b[RH_AOFF])
        b[ao:ao + ACC_COLS * an] = a[a[RH_AOFF]:a[RH_AOFF] + ACC_COLS * an]
        self.arr = b
        self.mem.ctx[C_REC] = b.ctypes.data

    def close(self) -> None:
        if self in _LIVE:
            _LIVE.remove(self)
        self.mem.ctx[C_REC] = 0
        if self.mem.observer is self:
            self.mem.observer = None

    # ---- host side ----
    @property
    def n_tasks(self) -> int:
        return int(self.arr[RH_TN])

    @property
    def dropped(self) -> int:
        return int(self.arr[RH_DROP])

    def tasks(self, start: int = 0, end: int | None = None) -> np.ndarray:
        a = self.arr
        n = int(a[RH_TN]) if end is None else end
        o = int(a[RH_TOFF])
        return a[o:o + TASK_COLS * n].reshape(n, TASK_COLS)[start:]

    def accesses(self) -> np.ndarray:
        a = self.arr
        n, o = int(a[RH_AN]), int(a[RH_AOFF])
        return a[o:o + ACC_COLS * n].reshape(n, ACC_COLS)

    def on_malloc(self, addr: int, size: int) -> None:
        self.allocs.append((self.n_tasks, addr, size))

    def on_free(self, addr: int, size: int) -> None:
        self.frees.append((self.n_tasks, addr, size))

    def observe(self, kind: int, a: int = 0, b: int = 0) -> int:
        """The host saw the device reach a point (a wait returned); returns the new host epoch
        (the tag of every task the host submits from now on)."""
        _SEQ[0] += 1
        self.observations.append((self.n_tasks, kind, a, b))
        self.seqs.append(_SEQ[0])
        for other in _LIVE:
            if other is not self:
                other.observations.append((other.n_tasks, OBS_PEER, 0, 0))
                other.seqs.append(_SEQ[0])
        return len(self.observations)

    @property
    def epoch(self) -> int:
        return len(self.observations)

    def clear(self) -> None:
        """Forget the rows recorded so far (allocations stay known)."""
        a = self.arr
        a[RH_TN] = a[RH_AN] = a[RH_DROP] = a[RH_FULL] = 0
        self.frees.clear()
        # epochs stay numbered (queued SQEs carry them); the old ones order nothing any more
        self.observations = [(-1, k, x, y) for _, k, x, y in self.observations]
        self.tables = [(0,) + self.tables[-1][1:]] if self.tables else []
        self.allocs = [(0, ad, sz) for _, ad, sz in self.allocs]

    def allocation(self, addr: int, row: int) -> tuple[int, int] | None:
        """(start, size) of the buffer that held ``addr`` at task row ``row`` (the latest
        allocation made before it that contains the address)."""
        best = None
        for r, ad, sz in self.allocs:
            if r > row:
                break
            if ad <= addr < ad + max(sz, 1):
                best = (ad, sz)
        return best
