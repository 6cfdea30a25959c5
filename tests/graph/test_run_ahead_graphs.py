"""Run-ahead on captured graphs (docs/architecture.md §5, "Run-ahead"): each program runs twice
from a fresh simulator, once with ``npusim.configure(exact_order=True)`` and once with run-ahead
(the default with contention off); every traced SQE's start and end and every buffer read back
must be the same. Programs: a four-stream graph with forks, cross-stream events and join-backs,
replayed three times; a cascade (the classic 310P's 2,016-SQE ring); a task group
updated on another stream between replays, ordered by an external event (the captured stream is
``Q_EXACT``); a WHILE cond graph; eager streams chained by events.
"""
from __future__ import annotations

import numpy as np

import npusim
from npusim import acl
from npusim.device import engine as E
from npusim.runtime.runtime import RT

from helpers.capture import OK, begin, end, join, join_back, new_buf, new_event, new_stream, \
    record, u32, wait
from helpers.capture import lk
from helpers.cond import WHILE, add, capture_sub, cond, k, set_i64, set_word
from helpers.taskgroup import KL, external_event, grp_begin, grp_end, update


def _fresh(exact: bool, profile: str = "Ascend910B") -> None:
    npusim.reset()
    npusim.configure(profile=profile, trace=True, exact_order=exact)
    assert acl.init() == OK
    assert acl.rt.set_device(0) == OK


def _times() -> np.ndarray:
    """Every traced SQE of device 0: (SQ, position, opcode, start, end), sorted."""
    st = RT.devices[0].state
    assert not st.trace_dropped
    t = st.trace_rows()
    rows = np.stack([t["sq"].astype(np.int64), t["pos"].astype(np.int64),
                     t["op"].astype(np.int64), t["start"], t["end"]], axis=1)
    return rows[np.lexsort(rows.T[::-1])]


def _both(program, profile: str = "Ascend910B"):
    """Run ``program`` (returns the data it read back) in exact order and with run-ahead."""
    out = []
    for exact in (True, False):
        _fresh(exact, profile)
        assert RT.devices[0].state.exact_order == exact
        data = program()
        out.append((data, _times()))
    (d0, t0), (d1, t1) = out
    assert len(t0) > 0
    assert np.array_equal(t0, t1), "SQE times differ between exact order and run-ahead"
    assert d0 == d1, "data differ between exact order and run-ahead"
    return d0


def test_multi_stream_graph_replays():
    def program():
        s = [new_stream() for _ in range(4)]
        exe = new_stream()
        bufs = [new_buf() for _ in range(4)]
        mid = [new_event() for _ in range(3)]
        begin(s[0])
        for i in (1, 2, 3):
            join(s[0], s[i])
        for r in range(20):
            for i in range(4):
                lk(s[i], "EasyOPf" if (r + i) % 3 else "ShortOPf", bufs[i], blocks=1 + i % 3)
            if r % 5 == 4:                      # stream i+1 waits for stream i's block
                for i in range(3):
                    record(mid[i], s[i])
                    wait(s[i + 1], mid[i])
        for i in (1, 2, 3):
            join_back(s[i], s[0])
        mh = end(s[0])
        for r in range(3):
            assert acl.mdl.ri_execute_async(mh, exe) == OK
        assert acl.rt.synchronize_stream(exe) == OK
        return [u32(b, 4).tolist() for b in bufs]
    _both(program)


def test_cascade_replay():
    def program():
        s, side, exe = new_stream(), new_stream(), new_stream()
        x, y = new_buf(), new_buf()
        begin(s)
        join(s, side)
        for i in range(2100):                   # past the 310P's 2,016-SQE ring: a cascade
            lk(s, "EasyOPf" if i % 7 else "ShortOPf", x)
            if i % 300 == 0:
                lk(side, "EasyOPf", y)
        join_back(side, s)
        mh = end(s)
        for _ in range(2):
            assert acl.mdl.ri_execute_async(mh, exe) == OK
        assert acl.rt.synchronize_stream(exe) == OK
        return [u32(x).tolist(), u32(y).tolist()]
    _both(program, "Ascend310P")


def test_task_update_between_replays():
    def program():
        s, exe, upd, other = new_stream(), new_stream(), new_stream(), new_stream()
        x, y, z = new_buf(), new_buf(), new_buf()
        ev = external_event()
        begin(s)
        assert acl.rt.stream_wait_event(s, ev) == OK
        grp_begin(s)
        KL(s, "EasyOPf", x)
        KL(s, "EasyOPf", x)
        g = grp_end(s)
        mh = end(s)
        out = []
        for r in range(4):
            for _ in range(30):                 # unrelated work running alongside
                lk(other, "EasyOPf", z)
            update(upd, g, [("EasyOPf" if r % 2 else "ShortOPf", y), ("EasyOPf", x)])
            assert acl.rt.record_event(ev, upd) == OK
            assert acl.mdl.ri_execute_async(mh, exe) == OK
            assert acl.rt.synchronize_stream(exe) == OK
            out.append([u32(x).tolist(), u32(y).tolist()])
        assert acl.rt.synchronize_stream(other) == OK
        return out + [u32(z).tolist()]
    _both(program)


def test_while_cond_graph():
    def program():
        s, sub_s, exe, other = new_stream(), new_stream(), new_stream(), new_stream()
        x, cnt, z = new_buf(), new_buf(8), new_buf()
        mh = begin(s)
        h, p = cond(mh)
        (body,) = add(h, WHILE, 1, s)

        def work():
            k(sub_s, "CountDown", cnt, p)
            k(sub_s, "EasyOPf", x)
        capture_sub(sub_s, body, work)
        end(s)
        set_i64(cnt, 25)
        set_word(p, 1)
        for _ in range(50):
            lk(other, "ShortOPf", z)
        assert acl.mdl.ri_execute_async(mh, exe) == OK
        assert acl.rt.synchronize_stream(exe) == OK
        assert acl.rt.synchronize_stream(other) == OK
        return [u32(x).tolist(), u32(z).tolist()]
    assert _both(program)[0] == [25]


def test_eager_chained_streams():
    def program():
        n = 6
        s = [new_stream() for _ in range(n)]
        ev = [new_event() for _ in range(n)]
        b = [new_buf() for _ in range(n)]
        for r in range(40):
            for i in range(n):
                lk(s[i], "EasyOPf", b[i], blocks=1 + (r + i) % 4)
                if r % 8 == 7:
                    record(ev[i], s[i])
                    if i + 1 < n:
                        wait(s[i + 1], ev[i])
        for x in s:
            assert acl.rt.synchronize_stream(x) == OK
        return [u32(x, 4).tolist() for x in b]
    _both(program)


def test_exact_order_switch_reaches_open_devices():
    _fresh(False)
    st = RT.devices[0].state
    assert not st.exact_order and st.st[E.E_EXACT] == 0
    npusim.configure(exact_order=True)
    assert st.exact_order and st.st[E.E_EXACT] == 1
    npusim.configure(exact_order=False)
    assert not st.exact_order
