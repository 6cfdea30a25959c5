"""Conditional control flow on the device (``spec/aclgraph.md`` §8.5, §6.3 step 4): which
sub-model a cond task runs for each value of its word, WHILE loops, ASSIGN_DEFAULT, nesting
(IF inside WHILE inside SWITCH), the runaway-WHILE bound, and what traces and dumps show.

Branch bodies increment their own u32 counter (EasyOPf), so every check is on data.
"""
from __future__ import annotations

import time

import numpy as np
import pytest

import npusim
from npusim import acl
from npusim import errors as E
from npusim.runtime import api_device

from helpers.acl import LONG_NS, host_ns
from helpers.capture import OK, begin, end, join, join_back, model, new_buf, new_stream, u32
from helpers.cond import (ASSIGN_DEFAULT, IF, SWITCH, USER, WHILE, add, capture_sub, cond,
                       cond_obj, i64, k, set_i64, set_word, sub_begin, sub_end, word)

U64 = 2 ** 64 - 1


def counters(x: int, n: int = 8) -> list[int]:
    return [int(v) for v in u32(x, n)]


def launch(mh: int, s: int) -> int:
    """One root launch and a synchronize; the synchronize's code."""
    assert acl.mdl.ri_execute_async(mh, s) == OK
    return acl.rt.synchronize_stream(s)


def branchy(typ: int, size: int, flag: int = USER, default: int = 0):
    """A root graph with one cond task whose branch i does x[i] += 1.
    Returns (model, word address, x, exe stream)."""
    s, sub_s, exe = new_stream(), new_stream(), new_stream()
    x = new_buf()
    mh = begin(s)
    h, p = cond(mh, default, flag)
    for i, sub in enumerate(add(h, typ, size, s)):
        capture_sub(sub_s, sub, lambda i=i: k(sub_s, "EasyOPf", x + 4 * i))
    assert end(s) == mh
    return mh, p, x, exe


# ---------------------------------------------------------------- IF
@pytest.mark.parametrize("value, taken", [(1, 0), (0, None), (7, 0), (1 << 63, 0),
                                          (0xFFFF_FFFF_0000_0000, 0), (U64, 0)])
def test_if_one_branch(dev0, value, taken):
    """IF runs model 0 on any non-zero 64-bit word; on zero it skips (no wait, no hang)."""
    mh, p, x, exe = branchy(IF, 1)
    set_word(p, value)
    assert launch(mh, exe) == OK
    assert counters(x, 2) == ([1, 0] if taken == 0 else [0, 0])
    assert word(p) == value                               # flag 0: the runtime never writes it


@pytest.mark.parametrize("value, taken", [(1, 0), (0, 1), (42, 0), (1 << 63, 0)])
def test_if_two_branches(dev0, value, taken):
    mh, p, x, exe = branchy(IF, 2)
    set_word(p, value)
    for _ in range(3):
        assert launch(mh, exe) == OK
    want = [0, 0]
    want[taken] = 3
    assert counters(x, 2) == want


def test_if_condition_set_by_a_captured_kernel(dev0):
    """The word is read when the cond task runs: a kernel captured before it decides."""
    s, sub_s, exe = new_stream(), new_stream(), new_stream()
    x = new_buf()
    mh = begin(s)
    h, p = cond(mh)
    k(s, "CondSetU64", p, 1)
    t, e = add(h, IF, 2, s)
    capture_sub(sub_s, t, lambda: k(sub_s, "EasyOPf", x))
    capture_sub(sub_s, e, lambda: k(sub_s, "EasyOPf", x + 4))
    k(s, "CondSetU64", p, 0)                               # after the cond task: next launch
    end(s)
    assert launch(mh, exe) == OK and counters(x, 2) == [1, 0]
    assert word(p) == 0
    assert launch(mh, exe) == OK and counters(x, 2) == [2, 0]


def test_parent_waits_for_the_branch(dev0):
    """NotifyWait: the parent (and the exe stream's synchronize) wait for the chosen sub-model;
    a skip waits for nothing."""
    s, sub_s, exe = new_stream(), new_stream(), new_stream()
    x = new_buf()
    mh = begin(s)
    h, p = cond(mh)
    (t,) = add(h, IF, 1, s)
    capture_sub(sub_s, t, lambda: k(sub_s, "LongOPf", x))
    k(s, "ShortOPf", x)                                    # after the branch: (x + 1) * 2
    end(s)
    set_word(p, 1)
    t0 = host_ns()
    assert launch(mh, exe) == OK
    assert host_ns() - t0 >= LONG_NS
    assert counters(x, 1) == [2]
    set_word(p, 0)
    t0 = host_ns()
    assert launch(mh, exe) == OK
    assert host_ns() - t0 < LONG_NS // 10
    assert counters(x, 1) == [4]


# ---------------------------------------------------------------- WHILE
def while_graph(flag: int = USER, default: int = 0):
    """WHILE (counter > 0): body = CountDown(counter, word); x[0] += 1."""
    s, sub_s, exe = new_stream(), new_stream(), new_stream()
    x, cnt = new_buf(), new_buf(8)
    mh = begin(s)
    h, p = cond(mh, default, flag)
    (body,) = add(h, WHILE, 1, s)

    def work():
        k(sub_s, "CountDown", cnt, p)
        k(sub_s, "EasyOPf", x)
    capture_sub(sub_s, body, work)
    end(s)
    return mh, p, x, cnt, exe, h


@pytest.mark.parametrize("n", [1, 2, 10, 1000])
def test_while_runs_n_iterations(dev0, n):
    mh, p, x, cnt, exe, _ = while_graph()
    set_i64(cnt, n)
    set_word(p, 1)
    assert launch(mh, exe) == OK
    assert counters(x, 1) == [n] and i64(cnt) == 0 and word(p) == 0


def test_while_with_the_word_0_runs_no_iteration(dev0):
    mh, p, x, cnt, exe, _ = while_graph()
    set_i64(cnt, 5)
    assert word(p) == 0                                    # 0 at creation
    assert launch(mh, exe) == OK
    assert counters(x, 1) == [0] and i64(cnt) == 5


def test_while_body_clears_the_word_with_a_copy(dev0):
    """The runtime sample's loop: the body's D2D copy of a zero ends it after one run."""
    s, sub_s, exe = new_stream(), new_stream(), new_stream()
    x, zero = new_buf(), new_buf(8)
    mh = begin(s)
    h, p = cond(mh)
    (body,) = add(h, WHILE, 1, s)

    def work():
        k(sub_s, "EasyOPf", x)
        assert acl.rt.memcpy_async(p, 8, zero, 8, acl.ACL_MEMCPY_DEVICE_TO_DEVICE, sub_s) == OK
    capture_sub(sub_s, body, work)
    end(s)
    set_word(p, 123)
    assert launch(mh, exe) == OK
    assert counters(x, 1) == [1] and word(p) == 0


def test_while_body_with_a_fork_and_join(dev0):
    """Normal capture rules inside a sub-model: the body forks to a side stream and joins."""
    s, sub_s, side, exe = new_stream(), new_stream(), new_stream(), new_stream()
    x, cnt = new_buf(), new_buf(8)
    mh = begin(s)
    h, p = cond(mh, 1, ASSIGN_DEFAULT)
    (body,) = add(h, WHILE, 1, s)

    def work():
        join(sub_s, side)
        k(side, "EasyOPf", x + 4)
        k(sub_s, "CountDown", cnt, p)
        join_back(side, sub_s)
    capture_sub(sub_s, body, work)
    end(s)
    assert len(model(body).streams) == 2
    set_i64(cnt, 4)
    assert launch(mh, exe) == OK
    assert counters(x, 2) == [0, 4]


def test_cascades_in_a_while_body_and_around_the_cond_task(dev0, monkeypatch):
    """A body longer than one capture ring cascades (STREAM_ACTIVE hops, §5) and every replay
    of the body walks the chain; a cond task captured right at a cascade point keeps its 3 SQEs
    together on one ring (JumpBack returns 2 SQEs back)."""
    import dataclasses
    d = api_device.device(0)
    monkeypatch.setattr(d, "profile", dataclasses.replace(d.profile, capture_sq_depth_swsq=40))
    s, b, exe = new_stream(), new_stream(), new_stream()
    x, cnt = new_buf(), new_buf(8)
    mh = begin(s)
    for _ in range(7):                                     # cascade_at = 40 - 32 = 8 SQEs
        k(s, "EasyOPf", x + 8)
    h, p = cond(mh, 1, ASSIGN_DEFAULT)
    (body,) = add(h, WHILE, 1, s)                          # 7 + 3 SQEs: crosses the limit
    k(s, "EasyOPf", x + 8)

    def work():
        k(b, "CountDown", cnt, p)
        for _ in range(25):
            k(b, "EasyOPf", x)
    capture_sub(b, body, work)
    end(s)
    assert len(model(body).streams) >= 4 and len(model(mh).streams) >= 2
    set_i64(cnt, 6)
    assert launch(mh, exe) == OK
    assert counters(x, 3) == [150, 0, 8]


# ---------------------------------------------------------------- SWITCH
@pytest.mark.parametrize("value, taken", [
    (0, 0), (1, 1), (2, 2), (3, None), (4, None), (1000, None), (2 ** 32, None),
    (U64, None),                         # -1 as a signed 64-bit value
    (1 << 63, None),                     # INT64_MIN: bit 63 set compares negative, skips
    ((1 << 63) | 1, None)])
def test_switch_signed_compare(dev0, value, taken):
    mh, p, x, exe = branchy(SWITCH, 3)
    set_word(p, value)
    assert launch(mh, exe) == OK
    want = [0, 0, 0]
    if taken is not None:
        want[taken] = 1
    assert counters(x, 3) == want


def test_switch_of_one_and_many(dev0):
    mh, p, x, exe = branchy(SWITCH, 1)
    for v, want in ((0, 1), (1, 1), (0, 2)):
        set_word(p, v)
        assert launch(mh, exe) == OK and counters(x, 1) == [want]
    mh, p, x, exe = branchy(SWITCH, 16)
    for v in range(16):
        set_word(p, v)
        assert launch(mh, exe) == OK
    assert counters(x, 16) == [1] * 16


# ---------------------------------------------------------------- ASSIGN_DEFAULT
def test_assign_default_rewrites_at_every_root_launch(dev0):
    mh, p, x, exe = branchy(IF, 2, ASSIGN_DEFAULT, default=1)
    assert word(p) == 0                                    # not at creation / capture end
    for i in range(3):
        set_word(p, 0)                                     # overridden by the default
        assert launch(mh, exe) == OK
        assert word(p) == 1
    assert counters(x, 2) == [3, 0]


def test_assign_default_resets_a_while_word_each_launch(dev0):
    mh, p, x, cnt, exe, _ = while_graph(ASSIGN_DEFAULT, default=1)
    for n in (3, 2, 1):
        set_i64(cnt, n)
        assert word(p) in (0, 1)
        assert launch(mh, exe) == OK
        assert word(p) == 0                                # the body cleared it
    assert counters(x, 1) == [6]


def test_flag_0_never_writes_the_word(dev0):
    mh, p, x, cnt, exe, _ = while_graph(USER, default=1)
    set_i64(cnt, 3)
    assert launch(mh, exe) == OK                           # word 0 at creation: no iteration
    assert counters(x, 1) == [0] and word(p) == 0
    set_word(p, 1)
    assert launch(mh, exe) == OK
    assert counters(x, 1) == [3] and word(p) == 0
    assert launch(mh, exe) == OK                           # the body's 0 stays: skip
    assert counters(x, 1) == [3]


def test_assign_default_is_a_32_bit_value(dev0):
    """defaultLaunchValue is a uint32_t: the largest is written zero-extended into the 64-bit
    word; a value beyond 32 bits is refused at the facade (docs/fidelity.md, argument boundary)."""
    mh, p, x, exe = branchy(SWITCH, 3, ASSIGN_DEFAULT, default=(1 << 32) - 1)
    assert launch(mh, exe) == OK
    assert word(p) == 0xFFFF_FFFF
    assert acl.mdl.ri_cond_handle_create(mh, (1 << 32) + 2, ASSIGN_DEFAULT) == \
        (None, acl.ACL_ERROR_RT_PARAM_INVALID)


def test_assign_default_is_a_host_write_at_launch_not_stream_ordered(dev0):
    """§6.3 step 4: a synchronous host write when aclmdlRIExecuteAsync is called. A kernel
    queued on the exe stream before the launch (behind a 50 ms kernel) writes the word later,
    so the graph sees the kernel's value, not the default."""
    mh, p, x, exe = branchy(IF, 2, ASSIGN_DEFAULT, default=1)
    y = new_buf()
    k(exe, "LongOPf", y)
    k(exe, "CondSetU64", p, 0)
    assert launch(mh, exe) == OK
    assert counters(x, 2) == [0, 1]


def test_nested_default_written_once_per_root_launch_not_per_iteration(dev0):
    """Handles of sub-models get their default at the root launch only (§8.5): an IF inside a
    WHILE body whose branch clears its own word runs in the first iteration only."""
    s, s1, s2, exe = new_stream(), new_stream(), new_stream(), new_stream()
    x, cnt = new_buf(), new_buf(8)
    mh = begin(s)
    hw, pw = cond(mh, 1, ASSIGN_DEFAULT)
    (body,) = add(hw, WHILE, 1, s)
    sub_begin(s1, body)
    hi, pi = cond(body, 1, ASSIGN_DEFAULT)
    k(s1, "CountDown", cnt, pw)
    k(s1, "EasyOPf", x)
    (then,) = add(hi, IF, 1, s1)

    def work():
        k(s2, "EasyOPf", x + 4)
        k(s2, "CondSetU64", pi, 0)
    capture_sub(s2, then, work)
    sub_end(s1)
    end(s)
    for run in (1, 2):
        set_i64(cnt, 3)
        assert launch(mh, exe) == OK
        assert counters(x, 2) == [3 * run, run]


def test_assign_default_list_follows_the_cond_tasks_added(dev0):
    """The model keeps the list of handles each launch writes (made once, not walked per
    launch) and makes it again when a cond task is added below it: a list asked for early in
    the capture does not hide a nested handle added later, and a handle whose cond task was
    refused is never written."""
    s, s1, s2, exe = new_stream(), new_stream(), new_stream(), new_stream()
    x = new_buf()
    mh = begin(s)
    hw, pw = cond(mh, 0, ASSIGN_DEFAULT)
    assert model(mh).default_conds() == []                 # no cond task yet
    (branch,) = add(hw, IF, 1, s)
    assert model(mh).default_conds() == [cond_obj(hw)]
    sub_begin(s1, branch)
    hd, pd = cond(branch, 5, ASSIGN_DEFAULT)
    hn, pn = cond(branch, 9, ASSIGN_DEFAULT)
    assert acl.mdl.ri_add_cond_task(hn, IF, 3, s1) == (None, acl.ACL_ERROR_RT_PARAM_INVALID)
    (then,) = add(hd, IF, 1, s1)                           # a nested handle, added later
    capture_sub(s2, then, lambda: k(s2, "EasyOPf", x))
    sub_end(s1)
    end(s)
    for _ in range(2):
        set_word(pd, 0)
        assert launch(mh, exe) == OK
        assert word(pw) == 0 and word(pd) == 5 and word(pn) == 0
    assert counters(x, 1) == [0]                           # the root's IF skips (word 0)


# ---------------------------------------------------------------- nesting
def test_nested_if_inside_while_inside_switch(dev0):
    """SWITCH(3) on the root; case 1 is a WHILE whose body counts down, bumps x[1], sets the
    IF word from a second counter and runs IF(then: x[2], else: x[3]); cases 0 and 2 bump x[0]
    and x[4]. End order: IF branches, WHILE body, case, root."""
    s0, s1, s2, s3, exe = (new_stream() for _ in range(5))
    x, cnt, cnt2 = new_buf(), new_buf(8), new_buf(8)
    mh = begin(s0)
    hs, ps = cond(mh)
    case0, case1, case2 = add(hs, SWITCH, 3, s0)
    capture_sub(s1, case0, lambda: k(s1, "EasyOPf", x))
    sub_begin(s1, case1)
    hw, pw = cond(case1, 1, ASSIGN_DEFAULT)
    (body,) = add(hw, WHILE, 1, s1)
    sub_begin(s2, body)
    hi, pi = cond(body)
    k(s2, "CountDown", cnt, pw)
    k(s2, "EasyOPf", x + 4)
    k(s2, "CountDown", cnt2, pi)
    then, else_ = add(hi, IF, 2, s2)
    capture_sub(s3, then, lambda: k(s3, "EasyOPf", x + 8))
    capture_sub(s3, else_, lambda: k(s3, "EasyOPf", x + 12))
    assert sub_end(s2) == body
    assert sub_end(s1) == case1
    capture_sub(s1, case2, lambda: k(s1, "EasyOPf", x + 16))
    assert end(s0) == mh
    assert len(model(mh).all_models()) == 7

    def run(v, n=0, n2=0):
        set_word(ps, v)
        set_i64(cnt, n)
        set_i64(cnt2, n2)
        assert launch(mh, exe) == OK
        return counters(x, 5)

    assert run(1, 5, 3) == [0, 5, 2, 3, 0]                 # cnt2 3,2 -> then; 1,0,-1 -> else
    assert word(pw) == 0 and i64(cnt) == 0 and i64(cnt2) == -2
    assert run(0) == [1, 5, 2, 3, 0]
    assert run(2) == [1, 5, 2, 3, 1]
    assert run(3) == [1, 5, 2, 3, 1]
    assert run(U64) == [1, 5, 2, 3, 1]
    assert run(1, 2, 2) == [1, 7, 3, 4, 1]                  # the WHILE word was reset to 1
    assert run(1, 1, 0) == [1, 8, 3, 5, 1]


def test_nested_pythonic(dev0):
    """The same nesting through npusim.graph: Branch objects take conditions and cond tasks."""
    d = npusim.Device()
    s0, s1, s2, s3 = (d.stream() for _ in range(4))
    x, cnt, cnt2 = d.malloc(64).fill(0), d.malloc(8), d.malloc(8)
    with npusim.graph(stream=s0) as g:
        cs = g.condition(0, assign_default=False)
        case0, case1, case2 = g.cond_switch(cs, 3, s1)
        with case0:
            s1.launch("EasyOPf", 1, (x,))
        with case1:
            cw = case1.condition(1)
            with case1.cond_while(cw, s2) as body:
                ci = body.condition(0, assign_default=False)
                s2.launch("CountDown", 1, (cnt, cw))
                s2.launch("EasyOPf", 1, (int(x) + 4,))
                s2.launch("CountDown", 1, (cnt2, ci))
                then, else_ = body.cond_if(ci, s3, with_else=True)
                with then:
                    s3.launch("EasyOPf", 1, (int(x) + 8,))
                with else_:
                    s3.launch("EasyOPf", 1, (int(x) + 12,))
        with case2:
            s1.launch("EasyOPf", 1, (int(x) + 16,))
    word_buf = npusim.Buffer(d, cs.ptr, 8)
    word_buf.write(np.array([1], np.uint64))
    cnt.write(np.array([4], np.int64))
    cnt2.write(np.array([1], np.int64))
    g.replay()
    s0.synchronize()
    assert list(x.read(np.uint32, 5)) == [0, 4, 0, 4, 0]
    word_buf.write(np.array([2], np.uint64))
    g.replay()
    s0.synchronize()
    assert list(x.read(np.uint32, 5)) == [0, 4, 0, 4, 1]
    assert "sub-model" in g.to_dot()


def test_deep_nesting_has_no_depth_limit(dev0):
    """IF inside IF ... 12 levels deep; the innermost body runs when every word is non-zero."""
    depth = 12
    root_s, exe = new_stream(), new_stream()
    streams = [new_stream() for _ in range(depth)]
    x = new_buf()
    mh = begin(root_s)
    owner, s, words = mh, root_s, []
    for lvl in range(depth):
        h, p = cond(owner, 1, ASSIGN_DEFAULT)
        words.append(p)
        (sub,) = add(h, IF, 1, s)
        sub_begin(streams[lvl], sub)
        owner, s = sub, streams[lvl]
    k(s, "EasyOPf", x)
    for lvl in reversed(range(depth)):
        sub_end(streams[lvl])
    end(root_s)
    assert launch(mh, exe) == OK and counters(x, 1) == [1]
    assert len(model(mh).all_models()) == depth + 1


def test_pythonic_if_while_and_errors(dev0):
    d = npusim.Device()
    s, b = d.stream(), d.stream()
    x, cnt = d.malloc(64).fill(0), d.malloc(8)
    g = npusim.graph(stream=s)
    with pytest.raises(ValueError):
        g.condition()                                      # only while capturing
    with g:
        c = g.condition(default=1)                         # ASSIGN_DEFAULT by default
        then = g.cond_if(c, b)                             # one Branch without an else
        with then:
            b.launch("EasyOPf", 1, (x,))
        w = g.condition(default=1)
        with g.cond_while(w, b):
            b.launch("CountDown", 1, (cnt, w))
            b.launch("EasyOPf", 1, (int(x) + 4,))
    assert isinstance(then, npusim.api.Branch)
    cnt.write(np.array([3], np.int64))
    g.replay()
    s.synchronize()
    assert list(x.read(np.uint32, 2)) == [1, 3]
    # a branch never captured: EndCapture raises 107045 and the graph is gone
    g2 = npusim.graph(stream=s)
    with pytest.raises(npusim.AclError) as ei:
        with g2:
            g2.cond_switch(g2.condition(), 2, b)
    assert ei.value.code == E.ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING
    assert g2.handle is None
    # an error inside a branch ends its capture; the graph's exit then cleans up
    g3 = npusim.graph(stream=s)
    with pytest.raises(RuntimeError):
        with g3:
            with g3.cond_if(g3.condition(), b):
                raise RuntimeError("boom")
    assert acl.mdl.ri_capture_get_info(s.handle)[0] == 0
    assert acl.mdl.ri_capture_get_info(b.handle)[0] == 0


# ---------------------------------------------------------------- runaway WHILE
def runaway_graph(default: int = 7):
    """A WHILE whose body never changes its word (flag 0, so the word can be fixed later)."""
    s, sub_s, exe = new_stream(), new_stream(), new_stream()
    x = new_buf()
    mh = begin(s)
    h, p = cond(mh)
    (body,) = add(h, WHILE, 1, s)
    capture_sub(sub_s, body, lambda: k(sub_s, "EasyOPf", x))
    end(s)
    set_word(p, default)
    return mh, p, x, exe, h


def test_a_while_spinning_on_an_unchanged_word_is_stopped_by_the_wall_time_watchdog(dev0):
    """With the default bound (1e8 iterations, ~30 s of wall time) a WHILE whose body never
    changes its word is stopped once it has spun ``runaway_wall_s`` with the word unchanged;
    the bound is restored for later launches."""
    mh, p, x, exe, h = runaway_graph(7)
    dev = api_device.device(0)
    dev.state.runaway_wall_s = 0.2
    assert acl.mdl.ri_execute_async(mh, exe) == OK
    assert acl.rt.synchronize_stream(exe) == E.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    msg = dev.last_error_detail
    assert "runaway WHILE" in msg and "still 7" in msg and "with the word unchanged" in msg
    assert 0 < counters(x, 1)[0] < 100_000_000
    from npusim.device import engine
    assert int(dev.state.conds[0, engine.CD_MAX]) == dev.max_while_iterations   # restored
    set_word(p, 0)
    assert launch(mh, exe) == OK


def test_runaway_while_stops_at_the_device_bound(dev0):
    mh, p, x, exe, h = runaway_graph(7)
    dev = api_device.device(0)
    dev.max_while_iterations = 1000
    dev.publish_models()
    assert acl.mdl.ri_execute_async(mh, exe) == OK
    assert acl.rt.synchronize_stream(exe) == E.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    msg = dev.last_error_detail
    assert "runaway WHILE" in msg and f"0x{h:x}" in msg and "still 7" in msg
    assert "1000 iterations" in msg
    assert counters(x, 1) == [1000]
    # reported once; the simulator goes on: the exe stream, the model, other work
    assert acl.rt.synchronize_stream(exe) == OK
    set_word(p, 0)
    assert launch(mh, exe) == OK and counters(x, 1) == [1000]
    other, op, ox, oexe = branchy(IF, 1)
    set_word(op, 1)
    assert launch(other, oexe) == OK and counters(ox, 1) == [1]


def test_iteration_bound_is_exact(dev0):
    """A loop of exactly ``max_iterations`` body runs ends normally; one more is a runaway."""
    mh, p, x, cnt, exe, h = while_graph(ASSIGN_DEFAULT, default=1)
    cond_obj(h).max_iterations = 10
    api_device.device(0).publish_models()
    for n, code, runs in ((9, OK, 9), (10, OK, 10), (11, E.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, 10)):
        set_i64(cnt, n)
        before = counters(x, 1)[0]
        assert launch(mh, exe) == code
        assert counters(x, 1)[0] - before == runs


def test_runaway_while_per_handle_bound_and_pythonic_message(dev0):
    mh, p, x, exe, h = runaway_graph(1 << 63)
    cond_obj(h).max_iterations = 50
    api_device.device(0).publish_models()
    assert acl.mdl.ri_execute_async(mh, exe) == OK
    s = npusim.Stream(None, exe)
    with pytest.raises(npusim.AclError) as ei:
        s.synchronize()
    assert ei.value.code == E.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    assert "runaway WHILE" in str(ei.value) and f"0x{h:x}" in str(ei.value)
    assert "50 iterations" in str(ei.value)
    assert counters(x, 1) == [50]
    assert acl.rt.synchronize_device() == OK


def test_runaway_inside_a_nested_model_reports_on_the_root_exe_stream(dev0):
    s, s1, s2, exe = new_stream(), new_stream(), new_stream(), new_stream()
    x = new_buf()
    mh = begin(s)
    h, p = cond(mh, 1, ASSIGN_DEFAULT)
    (outer,) = add(h, IF, 1, s)
    sub_begin(s1, outer)
    hw, pw = cond(outer, 3, ASSIGN_DEFAULT)
    (body,) = add(hw, WHILE, 1, s1)
    capture_sub(s2, body, lambda: k(s2, "EasyOPf", x))
    sub_end(s1)
    end(s)
    cond_obj(hw).max_iterations = 20
    api_device.device(0).publish_models()
    assert acl.mdl.ri_execute_async(mh, exe) == OK
    assert acl.rt.synchronize_stream(exe) == E.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    assert counters(x, 1) == [20]
    assert launch(mh, exe) == E.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT   # each launch runs away
    assert counters(x, 1) == [40]


# ---------------------------------------------------------------- trace and dumps
@pytest.fixture
def traced():
    npusim.configure(trace=True)
    yield
    npusim.configure(trace=False)


def test_trace_shows_the_branch_taken(dev0, traced):
    from npusim.device import sqe as S
    dev = api_device.device(0)
    mh, p, x, exe = branchy(SWITCH, 3)
    for v in (2, 0, 5, U64):
        set_word(p, v)
        assert launch(mh, exe) == OK
    mw, pw, xw, cnt, exe_w, _ = while_graph()
    set_i64(cnt, 3)
    set_word(pw, 1)
    assert launch(mw, exe_w) == OK
    from npusim.trace.chrome import Trace
    tr = Trace.from_device(dev)
    first = [int(r["val"]) for r in tr.rows if r["op"] == S.OP_COND_FIRST]
    jump = [int(r["val"]) for r in tr.rows if r["op"] == S.OP_COND_JUMP_BACK]
    assert first == [2, 0, -1, -1, 0, 0, 0]                 # SWITCH runs, then 3 WHILE entries
    assert jump == [1, 1, 0]                                # word re-read after each body
    ev = [e for e in tr.events() if e["name"] == "COND_FIRST"]
    assert [e["args"]["branch"] for e in ev] == first


def test_dot_shows_sub_models_and_branches(dev0):
    from npusim.runtime.dump import to_dot
    s, s1, s2 = new_stream(), new_stream(), new_stream()
    x = new_buf()
    mh = begin(s)
    h, p = cond(mh)
    a, b = add(h, IF, 2, s)
    capture_sub(s1, a, lambda: k(s1, "EasyOPf", x))
    sub_begin(s1, b)
    hw, pw = cond(b)
    (body,) = add(hw, WHILE, 1, s1)
    capture_sub(s2, body, lambda: k(s2, "EasyOPf", x))
    sub_end(s1)
    end(s)
    dot = to_dot(model(mh))
    for m in model(mh).all_models()[1:]:
        assert f'label="model {m.id} (sub-model)"' in dot
    assert 'label="IF first"' in dot and 'label="WHILE first"' in dot
    assert 'label="branch 0"' in dot and 'label="branch 1"' in dot
    assert 'label="loop"' in dot
    assert dot.count("subgraph cluster_m") == 4
