"""The engine's scheduler structures are kept between runs (``engine/layout.py`` "sched", ``engine/sched.py``): each run
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

import tracemalloc

import numpy as np
import pytest

import npusim.kernel.builtin  # noqa: F401  (registers the sample kernel bodies)
from npusim.device import engine as E
from npusim.device import sqe as S
from npusim.device.state import DeviceState
from npusim.profiles import get_profile
from npusim.runtime.runtime import RT

import helpers.acl as H


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


# ---- hostile use: SQs torn down while on the list ----
def test_sqs_discarded_and_freed_while_on_the_list_leave_it_consistent():
    """A parked SQ is discarded (stream abort) and freed, its index is reused by a model SQ, and
    another parked SQ's stream is freed outright: the next runs drop them, run the rest and
    return at rest."""
    d = _device()
    slot = d.alloc_slot()
    a, b, c = d.alloc_sq(64), d.alloc_sq(64), d.alloc_sq(64)
    d.push(a, S.OP_EVENT_WAIT, 0, slot, 1)
    d.push(b, S.OP_EVENT_WAIT, 0, slot, 1)
    d.push(c, S.OP_NOP, 0)
    assert d.run() == E.R_DEADLOCK
    assert _live(d) == sorted([a, b, c])        # the run began with all three
    assert d.discard(a, 0) == 1
    d.free_sq(a)
    m = d.alloc_sq(16, kind=E.K_MODEL)          # reuses a's index, idle
    assert m == a
    d.free_sq(b)                                # parked, freed without a discard
    assert d.run() == E.R_IDLE
    assert d.run() == E.R_IDLE
    assert _live(d) == []
    _at_rest(d)


# ---- real threads ----
def test_threads_launching_and_synchronizing_keep_the_list_exact(acl):
    """Four threads each launch EasyOPf (x += 1) on streams of their own and synchronize at
    their own pace, with every device's live-list check on (tests/conftest.py): every run finds
    every SQ in play on the list, and every count is right."""
    assert acl.rt.set_device(0) == acl.ACL_SUCCESS
    easy = H.easy_opf()
    rounds, counts = 80, {}

    def worker(i):
        s, x, args = H.worker_stream()
        for k in range(rounds):
            assert acl.rt.launch_kernel(easy, 1, args, 8, s) == acl.ACL_SUCCESS
            if k % (3 + i) == 0:
                assert acl.rt.synchronize_stream(s) == acl.ACL_SUCCESS
        assert acl.rt.synchronize_stream(s) == acl.ACL_SUCCESS
        counts[i] = int(H.read(x, 1)[0])
        assert acl.rt.destroy_stream(s) == acl.ACL_SUCCESS

    H.on_threads(worker, 4, timeout=120)
    assert counts == {i: rounds for i in range(4)}
    d = RT.devices[0].state
    assert d.check_sched
    d.run()
    _at_rest(d)


# ---- 1,000 cycles: nothing grows ----
def test_a_thousand_replay_cycles_keep_the_list_and_buffer_flat(acl):
    """With 200 graphs resident, 1,000 cycles of replay + synchronize of one of them: the sched
    buffer is the same object after the first cycle, the live list every synchronize returns with
    holds the stream alone (not 200 graphs' SQs), and the Python heap does not grow."""
    assert acl.rt.set_device(0) == acl.ACL_SUCCESS
    easy = H.easy_opf()
    s, _ = acl.rt.create_stream()
    _, args = H.counter()
    graphs = []
    for _ in range(200):
        assert acl.mdl.ri_capture_begin(s, 2) == acl.ACL_SUCCESS
        for _ in range(4):
            assert acl.rt.launch_kernel(easy, 1, args, 8, s) == acl.ACL_SUCCESS
        m, ret = acl.mdl.ri_capture_end(s)
        assert ret == acl.ACL_SUCCESS
        assert acl.mdl.ri_execute_async(m, s) == acl.ACL_SUCCESS
        graphs.append(m)
    assert acl.rt.synchronize_stream(s) == acl.ACL_SUCCESS
    d = RT.devices[0].state
    d.check_sched = False                   # the O(SQs) check is not what is measured here

    def cycle():
        assert acl.mdl.ri_execute_async(graphs[7], s) == acl.ACL_SUCCESS
        assert acl.rt.synchronize_stream(s) == acl.ACL_SUCCESS

    cycle()
    buf = d.sched
    longest = 0
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(1000):
            cycle()
            longest = max(longest, int(d.sched[0]))
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert d.sched is buf
    assert longest == 1, longest    # the stream its execute went to (the graph's SQ drained)
    assert grown < 64 * 1024, grown
    _at_rest(d)


def test_an_sqe_update_of_a_runnable_head_re_keys_its_sq():
    """SQE_UPDATE names the SQ whose ring holds the row it writes (a2): when that row is the
    SQ's head and the SQ is runnable, the SQ's key follows the new row's doorbell at once. Here
    A's head is due at 1,000 and C's at 500; B's update at 0 makes A's head due at 5, so A runs
    before C — in the order the reference interpreter's full scan gives."""
    from npusim.testing import reference
    d = _device()
    d.set_tracing(True)
    a, b, c, src = d.alloc_sq(64), d.alloc_sq(64), d.alloc_sq(64), d.alloc_sq(8, kind=E.K_MODEL)
    d.push(src, S.OP_NOP, 5)
    d.push(a, S.OP_NOP, 1000)
    d.push(c, S.OP_NOP, 500)
    d.push(b, S.OP_SQE_UPDATE, 0, d.row_of(src, 0), d.row_of(a, 0), a)
    d.flush()
    args = [x.copy() for x in reference.engine_args(d)]     # the reference runs on copies
    args[13][E.E_HORIZON] = E.INF                           # as DeviceState.run sets it
    assert reference.run(*args) == E.R_IDLE
    want = [(int(r["sq"]), int(r["start"])) for r in args[12][:int(args[13][E.E_TRACE_N])]]
    assert d.run() == E.R_IDLE
    got = [(int(r["sq"]), int(r["start"])) for r in d.trace_rows()]
    assert got == want
    assert [q for q, _ in got] == [b, a, c] and got[1][1] == 5
    _at_rest(d)
