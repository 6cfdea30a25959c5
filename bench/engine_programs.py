"""SQE programs for the engine benchmarks, written straight into a ``DeviceState``'s arrays.

Programs are built with whole-column numpy writes (no per-SQE Python), so building a million SQEs
takes milliseconds and the benchmarks time only the engine (or the reference interpreter).
"""
from __future__ import annotations

import numpy as np

import npusim.kernel.builtin  # noqa: F401  (registers the sample kernel bodies)
from npusim.device import engine as E
from npusim.testing import reference as R
from npusim.device import sqe as S
from npusim.device.kernels import TABLE
from npusim.device.state import DeviceState
from npusim.profiles import get_profile

PROFILE = get_profile("Ascend910B")

# the single-stream mix, repeated: 3/8 NOP, 2/8 MEMSET of 64 bytes, 1/8 each EVENT_RECORD,
# EVENT_WAIT (on the event just recorded) and a 1-block EasyOPf kernel
MIX = np.array([S.OP_NOP, S.OP_MEMSET, S.OP_EVENT_RECORD, S.OP_EVENT_WAIT, S.OP_KERNEL,
                S.OP_NOP, S.OP_NOP, S.OP_MEMSET], np.uint8)
MIX_TEXT = "3/8 NOP, 2/8 MEMSET 64 B, 1/8 EVENT_RECORD, 1/8 EVENT_WAIT, 1/8 EasyOPf (1 block)"


def new_device() -> DeviceState:
    d = DeviceState(PROFILE, 1 << 24, 1 << 20)
    d.st[E.E_HORIZON] = E.INF
    return d


def _kernel_args(d: DeviceState, n: int) -> tuple[np.ndarray, int]:
    """``n`` u32 counters and an args area per counter (one pointer slot each)."""
    x = d.mem.malloc(4 * n)
    argv = d.mem.malloc(8 * n)
    d.mem.view(argv, 8 * n)[:] = (x + 4 * np.arange(n, dtype=np.int64)).view(np.uint8)
    return argv + 8 * np.arange(n, dtype=np.int64), x


def _easy_opf() -> int:
    """EasyOPf's kernel id, its body built: it is a lazy built-in, and these programs write
    KERNEL rows straight into the pool (no launch path builds it for them)."""
    kid = TABLE.id("EasyOPf")
    TABLE.ensure(kid)
    return kid


def _fill(rows: np.ndarray, ops: np.ndarray, kargs, buf: int, slot_rec: int, slot_wait: int,
          seq: np.ndarray) -> None:
    rows["op"] = ops
    k = ops == S.OP_KERNEL
    rows["a0"][k], rows["a1"][k], rows["a2"][k] = _easy_opf(), kargs, 8
    rows["blocks"][k] = 1
    m = ops == S.OP_MEMSET
    rows["a0"][m], rows["a1"][m], rows["a2"][m] = buf, 7, 64
    r = ops == S.OP_EVENT_RECORD
    rows["a0"][r], rows["a1"][r] = slot_rec, seq[r]
    w = ops == S.OP_EVENT_WAIT
    rows["a0"][w], rows["a1"][w] = slot_wait, seq[w]
    rows["task_id"] = np.arange(len(rows)) & 0xFFFF


def single_stream(n: int) -> tuple[DeviceState, int]:
    """One eager SQ holding ``n`` SQEs of the ``MIX``; each wait waits for the record before it."""
    d = new_device()
    q = d.alloc_sq(n)
    kargs, _ = _kernel_args(d, 1)
    buf = d.mem.malloc(64)
    slot = d.alloc_slot()
    ops = np.resize(MIX, n)
    seq = np.cumsum(ops == S.OP_EVENT_RECORD)          # a wait's value = the last record's
    base = int(d.sqs[q, E.Q_BASE])
    _fill(d.pool[base:base + n], ops, kargs[0], buf, slot, slot, seq)
    d.sqs[q, E.Q_TAIL] = n
    return d, q


CHAIN = np.array([S.OP_EVENT_WAIT, S.OP_KERNEL, S.OP_MEMSET, S.OP_EVENT_RECORD], np.uint8)


def chained_streams(n_streams: int, iters: int) -> tuple[DeviceState, list[int]]:
    """``n_streams`` eager SQs; iteration k of stream i waits for stream i-1's k-th record, runs a
    kernel and a memset, and records its own event (stream 0 has a NOP in place of the wait)."""
    d = new_device()
    n = iters * len(CHAIN)
    qs = [d.alloc_sq(n) for _ in range(n_streams)]
    slots = [d.alloc_slot() for _ in range(n_streams)]
    kargs, _ = _kernel_args(d, n_streams)
    buf = d.mem.malloc(64 * n_streams)
    seq = np.repeat(np.arange(1, iters + 1), len(CHAIN))
    for i, q in enumerate(qs):
        ops = np.tile(CHAIN, iters)
        if i == 0:
            ops[ops == S.OP_EVENT_WAIT] = S.OP_NOP
        base = int(d.sqs[q, E.Q_BASE])
        _fill(d.pool[base:base + n], ops, kargs[i], buf + 64 * i, slots[i], slots[i - 1], seq)
        d.sqs[q, E.Q_TAIL] = n
    return d, qs


engine_args = R.engine_args


class Snapshot:
    """The engine-visible state of a device (SQ, sync and engine tables), restorable before each
    benchmark round. Memory is not restored: the programs' results do not steer them."""

    def __init__(self, d: DeviceState):
        self.d = d
        self.sqs, self.sync, self.st = d.sqs.copy(), d.sync.copy(), d.st.copy()

    def with_tails(self, tails: dict[int, int]) -> "Snapshot":
        """A copy in which SQ ``q`` holds only its first ``tails[q]`` SQEs."""
        snap = Snapshot(self.d)
        snap.sqs, snap.sync, snap.st = self.sqs.copy(), self.sync.copy(), self.st.copy()
        for q, n in tails.items():
            snap.sqs[q, E.Q_TAIL] = snap.sqs[q, E.Q_HEAD] + n
        return snap

    def restore(self):
        d = self.d
        d.sqs[:], d.sync[:], d.st[:] = self.sqs, self.sync, self.st
        d.touch_all()                   # the SQ table was written wholesale
        return engine_args(d), {}


def engine_bytes(d: DeviceState) -> tuple[int, int]:
    """(in use, allocated) bytes of the engine's per-device tables: the SQE pool (rows given to
    SQ rings), the SQ table (rows of live SQs) and the sync table (slots handed out)."""
    nsq = int(d.st[E.E_NSQ])
    in_use = (d.pool_used * d.pool.dtype.itemsize + nsq * d.sqs.shape[1] * d.sqs.itemsize
              + d.nslots * d.sync.shape[1] * d.sync.itemsize)
    return in_use, d.pool.nbytes + d.sqs.nbytes + d.sync.nbytes
