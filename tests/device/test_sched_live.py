"""The engine's scheduler structures are kept between runs (``engine.py`` "sched"): each run
builds its tree and waiter lists from the live list, the SQs in play, and puts them back at rest
when it returns.

What must hold: a run considers only the SQs in play and the ones the host pushed to or made
(idle model SQs, drained streams and their slots are not on the list, however many there are);
the structures are at rest after every return (idle, horizon, stop, fault, deadlock); a parked
SQ stays on the list across runs and is woken by a later run's record; the deadlock names the
lowest parked SQ, as the full scan did; an SQ table or sync table that grows between runs keeps
the list; and the suite's check (``NPUSIM_CHECK_SCHED``) catches an SQ made runnable behind the
device's back. Behaviour against the reference interpreter is ``test_engine_reference.py``'s.
"""
from __future__ import annotations

import numpy as np
import pytest

import npusim.kernel.builtin  # noqa: F401  (registers the sample kernel bodies)
from npusim.device import engine as E
from npusim.device import sqe as S
from npusim.device.state import DeviceState
from npusim.profiles import get_profile


def _device() -> DeviceState:
    d = DeviceState(get_profile("Ascend910B"), 1 << 16, 1 << 12)
    d.check_sched = True
    return d


def _live(d: DeviceState) -> list[int]:
    return sorted(d._livev[:int(d.sched[0])].tolist())


def _at_rest(d: DeviceState) -> None:
    d._check_sched()            # raises when a list, leaf or mark is held


def test_idle_model_sqs_are_not_on_the_live_list():
    d = _device()
    models = [d.alloc_sq(16, kind=E.K_MODEL) for _ in range(500)]
    for q in models:            # resident graphs: rows written, never activated
        d.push(q, S.OP_NOP, 0)
    q = d.alloc_sq(64)
    d.push(q, S.OP_NOP, 0)
    assert d.run() == E.R_IDLE
    assert int(d.sqs[q, E.Q_HEAD]) == 1
    # the run started from the 501 SQs the host made and pushed to; it returns with those in
    # play, none (all idle or drained), and the next run starts from nothing
    assert d.run() == E.R_IDLE
    assert _live(d) == []
    d.push(q, S.OP_NOP, 0)
    d.flush()
    d.ready_sched()
    assert _live(d) == [q]
    assert d.run() == E.R_IDLE
    _at_rest(d)


def test_parked_sq_stays_on_the_list_and_a_later_record_wakes_it():
    d = _device()
    slot = d.alloc_slot()
    a, b = d.alloc_sq(64), d.alloc_sq(64)
    d.push(a, S.OP_EVENT_WAIT, 0, slot, 1)
    d.push(a, S.OP_NOP, 0)
    assert d.run() == E.R_DEADLOCK and int(d.st[E.E_SQ]) == a
    assert int(d.sqs[a, E.Q_STATE]) == E.S_PARKED
    assert _live(d) == [a]
    _at_rest(d)
    assert d.run() == E.R_DEADLOCK           # a run that starts from a parked SQ keeps it
    assert _live(d) == [a]
    d.push(b, S.OP_EVENT_RECORD, 0, slot, 1)
    assert d.run() == E.R_IDLE
    assert int(d.sqs[a, E.Q_HEAD]) == 2 and int(d.sqs[b, E.Q_HEAD]) == 1
    _at_rest(d)


def test_deadlock_names_the_lowest_parked_sq():
    d = _device()
    s1, s2 = d.alloc_slot(), d.alloc_slot()
    qs = [d.alloc_sq(64) for _ in range(6)]
    for q in (qs[4], qs[2], qs[5]):         # pushed in another order than their indices
        d.push(q, S.OP_EVENT_WAIT, 0, s1 if q != qs[2] else s2, 1)
    assert d.run() == E.R_DEADLOCK
    assert int(d.st[E.E_SQ]) == qs[2]
    _at_rest(d)


@pytest.mark.parametrize("stop", ["horizon", "stop", "fault", "slice"])
def test_every_return_leaves_the_structures_at_rest(stop):
    d = _device()
    qs = [d.alloc_sq(64) for _ in range(3)]
    for i, q in enumerate(qs):
        for j in range(8):
            d.push(q, S.OP_NOP, 100 * j + i)
    if stop == "fault":
        d.push(qs[1], 255, 0)               # an unknown opcode faults, the run resumes
    if stop == "fault":                     # DeviceState.run logs it and calls again
        assert d.run() == E.R_IDLE and len(d.faults) == 1
    elif stop == "horizon":
        assert d.run(horizon=350) == E.R_HORIZON
    elif stop == "stop":
        assert d.run(stop_kind=E.STOP_SQ_POS, stop_a=qs[0], stop_b=4) == E.R_STOPPED
    elif stop == "slice":
        d.st[E.E_STEP_LIMIT] = 5            # one engine call of 5 SQEs, then its return
        d.st[E.E_HORIZON] = E.INF
        mem = d.mem
        d.flush()
        d.ready_sched()
        r = E.run(d.pool, d.sqs, d.sync, d.mptr, d.msq, d.conds, d.cmodels, mem.arena,
                  mem.ctx, npusim.device.kernels.TABLE.addr, npusim.device.kernels.TABLE.cost,
                  d.tc, d.trace, d.st, d.sched)
        assert r == E.R_STEPS
        d.st[E.E_STEP_LIMIT] = 0
    _at_rest(d)
    assert d.run() == E.R_IDLE
    assert [int(d.sqs[q, E.Q_HEAD]) for q in qs] == [8, 9 if stop == "fault" else 8, 8]
    _at_rest(d)


def test_tables_that_grow_between_runs_keep_the_list():
    d = _device()
    slot = d.alloc_slot()
    a = d.alloc_sq(64)
    d.push(a, S.OP_EVENT_WAIT, 0, slot, 1)
    assert d.run() == E.R_DEADLOCK
    rows, slots = len(d.sqs), len(d.sync)
    more = [d.alloc_sq(8, kind=E.K_MODEL) for _ in range(rows)]      # the SQ table doubles
    for _ in range(slots):                                            # and the sync table
        d.alloc_slot()
    assert len(d.sqs) > rows and len(d.sync) > slots
    b = d.alloc_sq(64)
    d.push(b, S.OP_EVENT_RECORD, 0, slot, 1)
    assert d.run() == E.R_IDLE
    assert int(d.sqs[a, E.Q_HEAD]) == 1
    assert d.run() == E.R_IDLE              # the run after drops the drained ones
    assert more and _live(d) == []
    _at_rest(d)


def test_the_check_catches_an_sq_made_runnable_behind_the_devices_back():
    d = _device()
    q = d.alloc_sq(64)
    assert d.run() == E.R_IDLE
    base = int(d.sqs[q, E.Q_BASE])
    d.pool[base]["op"] = S.OP_NOP
    d.sqs[q, E.Q_TAIL] = 1                  # neither push nor touch
    with pytest.raises(AssertionError, match="not on the live list"):
        d.run()
    d.touch(q)
    assert d.run() == E.R_IDLE
    assert int(d.sqs[q, E.Q_HEAD]) == 1


def test_engine_run_cost_does_not_follow_idle_sqs():
    """The work a run does for SQs, counted, not timed: the live list a run starts from holds
    what the host touched, whatever the number of idle SQs."""
    d = _device()
    q = d.alloc_sq(64)
    d.run()
    for n in (10, 1000):
        for _ in range(n):
            d.alloc_sq(8, kind=E.K_MODEL)
        d.run()                              # the run that meets the new SQs once
        d.push(q, S.OP_NOP, 0)
        d.flush()
        d.ready_sched()
        assert _live(d) == [q]
        assert d.run() == E.R_IDLE
    assert np.count_nonzero(d.sqs[:, E.Q_KIND] == E.K_MODEL) == 1010
