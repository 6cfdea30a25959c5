"""Cascade capture streams (spec/aclgraph.md §5): the exact trigger per chip profile
(captured SQEs + 32 + expandStreamRsvTaskNum >= depth: 32736 on A2/A3, 32728 on 950, 2016 on the
classic 310P), the STREAM_ACTIVE hop, what the new stream inherits, and replays that run every
task in order across the cascade."""
from __future__ import annotations

import pytest

from npusim import acl
from npusim.device import sqe as S
from npusim.runtime import model as M

from helpers.capture import (OK, begin, chip, end, join, join_back, lk, model, new_buf,  # noqa: F401
                          new_event, new_stream, record, run, u32, wait)

U32 = 1 << 32


def apply(ops, x=0, times=1):
    """What a replay of ``ops`` ("E": x+=1, "S": x*=2) does to a u32."""
    for _ in range(times):
        for op in ops:
            x = (x + 1) % U32 if op == "E" else (x * 2) % U32
    return x


def capture_ops(s, x, ops):
    for op in ops:
        lk(s, "EasyOPf" if op == "E" else "ShortOPf", x)


def pattern(n, around):
    """n ops, all "E" except an S/E/S/E run centred on position ``around`` (the cascade)."""
    ops = ["E"] * n
    for i, op in zip(range(around - 2, around + 2), "SESE"):
        if 0 <= i < n:
            ops[i] = op
    return ops


def check_cascade(m, at):
    first, second = m.streams[0], m.streams[1]
    assert first.sqe_num == at                      # the STREAM_ACTIVE is not counted
    assert first.task_count == at + 1
    assert first.last_op == S.OP_STREAM_ACTIVE and not first.last_level
    assert second.original and not second.head and second.last_level
    assert second.parent is first
    rows = _rows(first)
    assert int(rows[-1]["a0"]) == second.sq         # the hop activates the new stream


def _rows(cs):
    from npusim.runtime.dump import tasks
    return tasks(cs)


@pytest.mark.parametrize("profile,at", [("Ascend910B", 32736), ("Ascend950", 32728),
                                        ("Ascend310P", 2016)])
def test_exact_trigger_and_replay_across_the_cascade(chip, profile, at):
    chip(profile)
    s = new_stream()
    x = new_buf()
    m_h = begin(s)
    m = model(m_h)
    assert m.cascade_at == at
    ops = pattern(at + 3, at)
    capture_ops(s, x, ops[:at])
    assert len(m.streams) == 1 and m.streams[0].sqe_num == at
    capture_ops(s, x, ops[at:at + 1])               # the task that triggers the cascade
    assert len(m.streams) == 2
    check_cascade(m, at)
    assert m.streams[1].task_count == 1             # the trigger went to the new stream
    capture_ops(s, x, ops[at + 1:])
    assert end(s) == m_h
    run(m_h, s)
    assert u32(x)[0] == apply(ops)
    run(m_h, s)
    assert u32(x)[0] == apply(ops, times=2)


def test_classic_profile_multiple_cascades_and_endgraph_at_end_capture(chip):
    chip("Ascend310P")
    s = new_stream()
    x = new_buf()
    mh = begin(s)
    ops = ["E"] * 5000
    for i in (100, 2015, 2016, 4031, 4032, 4999):
        ops[i] = "S"
    capture_ops(s, x, ops)
    assert end(s) == mh
    m = model(mh)
    assert [cs.sqe_num for cs in m.streams][:2] == [2016, 2016]
    assert len(m.streams) == 3 and m.streams[2].task_count >= 5000 - 2 * 2016
    assert [cs.head for cs in m.streams] == [True, False, False]
    # classic (non SW-SQ): EndGraph is appended at EndCapture, before any execution (§1.3)
    assert not m.sw_sq and m.has_endgraph and m.streams[-1].last_op == S.OP_END_GRAPH
    run(mh, s, times=2)
    assert u32(x)[0] == apply(ops, times=2)


def test_sw_sq_endgraph_waits_for_the_first_execution(dev0):
    s = new_stream()
    x = new_buf()
    mh = begin(s)
    lk(s, "EasyOPf", x)
    end(s)
    m = model(mh)
    assert m.sw_sq and not m.has_endgraph
    assert m.streams[0].last_op == S.OP_KERNEL
    run(mh, s)
    assert m.has_endgraph and m.streams[0].last_op == S.OP_END_GRAPH
    run(mh, s)
    assert u32(x)[0] == 2


def test_cascade_on_a_joined_stream(chip):
    chip("Ascend310P")
    s, side = new_stream(), new_stream()
    x, y = new_buf(), new_buf()
    mh = begin(s)
    lk(s, "EasyOPf", x)
    join(s, side)
    ops = ["E"] * 2500
    ops[2014] = ops[2016] = "S"
    capture_ops(side, y, ops)
    join_back(side, s)                              # the record lands on the cascade stream
    lk(s, "ShortOPf", x)
    assert end(s) == mh
    m = model(mh)
    sides = [cs for cs in m.streams if not cs.original]
    assert len(sides) == 2 and sides[0].head and not sides[1].head
    assert sides[1].last_op == S.OP_EVENT_RECORD and not sides[0].last_level
    run(mh, s, times=2)
    assert u32(y)[0] == apply(ops, times=2)
    assert u32(x)[0] == apply("ES", times=2)


def test_cascade_on_an_added_stream(chip):
    chip("Ascend310P")
    s, added = new_stream(), new_stream()
    y = new_buf()
    mh = begin(s)
    assert acl.rt.stream_add_to_model(added, mh) == OK
    capture_ops(added, y, ["E"] * 2100)
    m = model(mh)
    css = m.added[next(iter(m.added))]
    assert len(css) == 2 and all(cs.added for cs in css)
    assert end(s) == mh
    assert css[-1].last_op == S.OP_NOTIFY_RECORD       # the EndCapture join notify
    run(mh, s)
    assert u32(y)[0] == 2100


def test_internal_tasks_use_the_reserve_and_cascade_when_it_runs_out(chip):
    """EndCapture's event resets go to the origin's last stream; past the ring they cascade."""
    chip("Ascend310P")
    s, side = new_stream(), new_stream()
    x = new_buf()
    mh = begin(s)
    capture_ops(s, x, ["E"] * 2014)
    e0 = new_event()
    record(e0, s)
    wait(side, e0)
    ev = new_event()
    for _ in range(40):                 # 40 capture events (a new one per record)
        record(ev, side)
    wait(s, ev)                         # origin: 2016 SQEs, no cascade yet
    m = model(mh)
    assert len(m.streams) == 2 and m.streams[0].sqe_num == 2016
    assert end(s) == mh
    origins = [cs for cs in m.streams if cs.original]
    assert len(origins) == 2            # 41 resets + EndGraph did not fit in 2048
    assert origins[0].task_count == 2048 and origins[0].last_op == S.OP_STREAM_ACTIVE
    assert origins[1].last_op == S.OP_END_GRAPH
    run(mh, s, times=2)
    assert u32(x)[0] == 2 * 2014


def test_task_ids_restart_on_each_capture_stream(chip):
    chip("Ascend310P")
    s = new_stream()
    x = new_buf()
    mh = begin(s)
    capture_ops(s, x, ["E"] * 2020)
    end(s)
    m = model(mh)
    ids0 = [int(r["task_id"]) for r in _rows(m.streams[0])]
    ids1 = [int(r["task_id"]) for r in _rows(m.streams[1])]
    assert ids0 == list(range(2017)) and ids1[:4] == [0, 1, 2, 3]


def test_status_constants():
    assert M.STATUS_NAMES[M.READY] == "READY" and M.READY == 5
