"""Records delivered from another device in a batch (``DeviceState.signal_many``,
``take_records``, ``quiet``: ``runtime/peer.py``'s pump and stall hook, docs/fidelity.md row
420): the same slot values, times and wake-ups as one ``signal`` per record."""
from __future__ import annotations

import numpy as np

from npusim.device import engine as E
from npusim.device import sqe as S
from npusim.device.state import DeviceState
from npusim.profiles import get_profile


def _parked():
    """A device with three SQs parked on notify waits: two on slot a, one on slot b; slot c
    has no waiter. Each SQ then writes its own word."""
    d = DeviceState(get_profile("Ascend910B"), 1 << 20, 1 << 16)
    w = d.mem.malloc(64)
    a, b, c = d.alloc_slot(), d.alloc_slot(), d.alloc_slot()
    qs = [d.alloc_sq(16) for _ in range(3)]
    for i, (q, slot) in enumerate(zip(qs, (a, a, b))):
        d.push(q, S.OP_NOTIFY_WAIT, 0, a0=slot)
        d.push(q, S.OP_MEMSET, 0, a0=w + 8 * i, a1=i + 1, a2=8)
    assert d.run() == E.R_DEADLOCK
    return d, (a, b, c), qs, w


def _same(x: DeviceState, y: DeviceState) -> None:
    assert np.array_equal(x.sync, y.sync)
    assert np.array_equal(x.sqs, y.sqs)
    assert x._touched == y._touched


def test_signal_many_is_signal_of_each_and_runs_the_same():
    one, (a, b, c), qs, w = _parked()
    many, *_ = _parked()
    assert one.quiet() and many.quiet()                 # parked: a run would do nothing
    for slot, t in ((a, 5_000), (b, 7_000), (c, 9_000)):
        one.signal(slot, t)
    many.signal_many([a, b, c], [5_000, 7_000, 9_000])
    _same(one, many)
    assert not one.quiet() and not many.quiet()         # woken waits: runs to do
    assert one.run() == many.run() == E.R_DEADLOCK      # a notify wait consumes: one of
    _same(one, many)                                    # slot a's two waiters parks again
    assert one.st[E.E_NOW] == many.st[E.E_NOW]
    assert list(one.mem.view(w, 24)) == list(many.mem.view(w, 24))
    assert sorted(many.mem.view(w, 24)[::8].tolist()) == [0, 1, 3] or \
        sorted(many.mem.view(w, 24)[::8].tolist()) == [0, 2, 3]


def test_a_second_wait_on_the_same_slot_is_woken_from_the_hint():
    """The second time a slot's single waiter is woken, ``signal_many`` finds it from the SQ
    it woke there before (checked: parked on that slot) — the same result as ``signal``."""
    one, (a, b, c), qs, w = _parked()
    many, *_ = _parked()
    one.signal(b, 1_000)
    many.signal_many([b], [1_000])
    assert one.run() == many.run() == E.R_DEADLOCK      # slot a's waiters still parked
    for d in (one, many):
        d.push(qs[2], S.OP_NOTIFY_WAIT, 0, a0=b)        # parks again on b, alone
        d.push(qs[2], S.OP_MEMSET, 0, a0=w + 16, a1=9, a2=8)
        assert d.run() == E.R_DEADLOCK
    _same(one, many)
    one.signal(b, 50_000)
    many.signal_many([b], [50_000])
    _same(one, many)
    assert one.run() == many.run() == E.R_DEADLOCK
    _same(one, many)
    assert list(many.mem.view(w + 16, 8)) == [9] * 8


def test_take_records_takes_the_recorded_slots_with_their_times():
    d = DeviceState(get_profile("Ascend910B"), 1 << 20, 1 << 16)
    x, y = d.alloc_slot(), d.alloc_slot()
    q = d.alloc_sq(8, dispatch_ns=100)
    d.push(q, S.OP_NOTIFY_RECORD, 0, a0=y)
    assert d.run() == E.R_IDLE
    t = int(d.sync[y, E.Y_TIME])
    assert t > 0
    assert d.take_records([x, y]) == [(1, t)]
    assert d.sync[y, E.Y_VAL] == 0 and d.take_records([x, y]) == []
