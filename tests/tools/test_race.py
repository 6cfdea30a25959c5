"""The race detector (``npusim.analysis``): planted races are found with both tasks, the buffer
and the source lines; correct programs — including the ported runtime examples and the notebooks'
programs — have no report. Happens-before through stream order, events, notifies, cascades,
model launches, cond tasks and host synchronization; copies and memsets by their operands; the
access log against the reference interpreter; log growth."""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import npusim as ns
from npusim import acl
from npusim.analysis import races, races_in_eager, record
from npusim.device import engine as E
from npusim.testing import reference as R
from npusim.device.recording import AccessLog
from npusim.runtime.runtime import RT

ROOT = pathlib.Path(__file__).resolve().parents[2]
HERE = pathlib.Path(__file__).name


def line_of(marker: str) -> int:
    """Line number of the source line of this file containing ``marker`` (a comment tag)."""
    for i, text in enumerate(pathlib.Path(__file__).read_text().splitlines(), 1):
        if marker in text and "line_of(" not in text:
            return i
    raise AssertionError(marker)


def site(task) -> str:
    return f"{pathlib.Path(task.site.file).name}:{task.site.line}"


@pytest.fixture
def dev():
    return ns.Device("Ascend910B")


# ---------------------------------------------------------------- eager

def test_two_streams_writing_one_buffer_without_an_event(dev):
    s1, s2 = dev.stream(), dev.stream()
    x = dev.malloc(64)
    with record():
        s1.launch("EasyOPf", blocks=8, args=(x,))       # @race-a
        s2.launch("ShortOPf", blocks=8, args=(x,))      # @race-b
    rep = races_in_eager(dev)
    assert len(rep) == 1, rep
    r = rep[0]
    assert r.kind == "write/write"
    assert (r.first.kernel, r.second.kernel) == ("EasyOPf", "ShortOPf")
    assert r.first.stream.startswith("stream ") and r.first.sq != r.second.sq
    assert (r.first.pos, r.second.pos) == (0, 0)
    assert r.buffer[0] == x.ptr and (r.lo, r.hi) == (x.ptr, x.ptr + 32)
    assert site(r.first) == f"{HERE}:{line_of('@race-a')}"
    assert site(r.second) == f"{HERE}:{line_of('@race-b')}"
    text = str(rep)
    assert "1 race(s)" in text and "EasyOPf" in text and f"{HERE}:{line_of('@race-b')}" in text
    assert f"buffer 0x{x.ptr:x}" in text


def test_an_event_orders_the_two_writers(dev):
    s1, s2 = dev.stream(), dev.stream()
    x = dev.malloc(64)
    ev = dev.event()
    with record():
        s1.launch("EasyOPf", blocks=8, args=(x,))
        s1.record(ev)
        s2.wait(ev)
        s2.launch("ShortOPf", blocks=8, args=(x,))
    assert len(races_in_eager(dev)) == 0


@pytest.mark.parametrize("how", ["stream", "device", "event", "query"])
def test_host_synchronization_orders_later_submissions(dev, how):
    s1, s2 = dev.stream(), dev.stream()
    x = dev.malloc(64)
    ev = dev.event()
    with record():
        s1.launch("EasyOPf", blocks=8, args=(x,))
        s1.record(ev)
        if how == "stream":
            s1.synchronize()
        elif how == "device":
            dev.synchronize()
        elif how == "event":
            ev.synchronize()
        else:
            while not s1.query():
                dev.synchronize()
        s2.launch("ShortOPf", blocks=8, args=(x,))
    assert len(races_in_eager(dev)) == 0


def test_host_sync_of_another_stream_does_not_order(dev):
    """The host waited for s3 only: s1's write (already run, lazily) is still unordered."""
    s1, s2, s3 = dev.stream(), dev.stream(), dev.stream()
    x, y = dev.malloc(64), dev.malloc(64)
    with record():
        s1.launch("EasyOPf", blocks=1, args=(x,))
        s3.launch("EasyOPf", blocks=1, args=(y,), duration_ns=10_000_000)
        s3.synchronize()                  # s1's kernel has run by now, but nobody waited for it
        s2.launch("ShortOPf", blocks=1, args=(x,))
    rep = races_in_eager(dev)
    assert len(rep) == 1 and rep[0].second.kernel == "ShortOPf"


def test_readers_on_many_streams_do_not_race(dev):
    streams = [dev.stream() for _ in range(4)]
    a = dev.malloc(64)
    outs = [dev.malloc(64) for _ in streams]
    with record():
        for s, o in zip(streams, outs):
            s.launch("VectorAddKernel", blocks=1, args=(a, a, o, 1.0, 16))
    assert len(races_in_eager(dev)) == 0


def test_copy_and_memset_operands_are_recorded(dev):
    s1, s2, s3 = dev.stream(), dev.stream(), dev.stream()
    x, y, z = dev.malloc(64), dev.malloc(64), dev.malloc(64)
    with record():
        s1.copy(x, y, 64, acl.ACL_MEMCPY_DEVICE_TO_DEVICE)           # reads y, writes x
        s2.launch("VectorAddKernel", blocks=1, args=(x, x, z, 1.0, 16))   # reads x: race
        y.fill(0, stream=s3)                                          # writes y: race
    rep = races_in_eager(dev)
    kinds = sorted((r.first.op, r.second.op, r.kind) for r in rep)
    assert kinds == [("MEMCPY", "KERNEL", "write/read"), ("MEMCPY", "MEMSET", "read/write")]


def test_notify_orders(dev):
    s1, s2 = dev.stream(), dev.stream()
    x = dev.malloc(64)
    n, ret = acl.rt.create_notify(0)
    with record():
        s1.launch("EasyOPf", blocks=8, args=(x,))
        acl.rt.record_notify(n, s1.handle)
        acl.rt.wait_and_reset_notify(n, s2.handle)
        s2.launch("ShortOPf", blocks=8, args=(x,))
    assert len(races_in_eager(dev)) == 0


def test_freed_and_reallocated_address_is_another_buffer(dev):
    s1, s2 = dev.stream(), dev.stream()
    x = dev.malloc(64)
    with record():
        s1.launch("EasyOPf", blocks=8, args=(x,))
        s1.synchronize()
        x.free()
        y = dev.malloc(64)
        s2.launch("ShortOPf", blocks=8, args=(y,))
        s2.synchronize()
    assert y.ptr == x.ptr and len(races_in_eager(dev)) == 0


# ---------------------------------------------------------------- graphs

def _fork(g_stream, side, fork):
    g_stream.record(fork)
    side.wait(fork)


def test_graph_write_write_race_between_origin_and_joined_stream(dev):
    s1, s2 = dev.stream(), dev.stream()
    x = dev.malloc(64)
    fork, join = dev.event(), dev.event()
    with record():
        with ns.graph(stream=s1) as g:
            _fork(s1, s2, fork)
            s1.launch("EasyOPf", blocks=8, args=(x,))       # @g-origin
            s2.launch("ShortOPf", blocks=8, args=(x,))      # @g-joined
            s2.record(join)
            s1.wait(join)
    rep = races(g)
    assert len(rep) == 1, rep
    r = rep[0]
    assert {r.first.kernel, r.second.kernel} == {"EasyOPf", "ShortOPf"}
    assert "origin" in (r.first.stream + r.second.stream)
    assert "joined" in (r.first.stream + r.second.stream)
    assert {site(r.first), site(r.second)} == {f"{HERE}:{line_of('@g-origin')}",
                                               f"{HERE}:{line_of('@g-joined')}"}
    assert r.buffer == (x.ptr, r.buffer[1]) and r.buffer[1] >= 64


def test_graph_read_write_race_through_a_joined_stream_missing_its_wait(dev):
    """The origin writes y after the fork; the joined stream reads y. The joined stream would
    need a wait on an event recorded after the write: without it, a write/read race."""
    s1, s2 = dev.stream(), dev.stream()
    x, y, z = dev.malloc(64), dev.malloc(64), dev.malloc(64)
    fork, join = dev.event(), dev.event()
    with record():
        with ns.graph(stream=s1) as g:
            _fork(s1, s2, fork)
            s1.launch("EasyOPf", blocks=16, args=(y,))                     # @rw-write
            s2.launch("VectorAddKernel", blocks=1, args=(y, x, z, 1.0, 16))   # @rw-read
            s2.record(join)
            s1.wait(join)
    rep = races(g)
    assert len(rep) == 1, rep
    r = rep[0]
    assert r.kind == "write/read" and r.first.kernel == "EasyOPf"
    assert r.second.kernel == "VectorAddKernel" and r.second.pos == 1
    assert r.buffer[0] == y.ptr and (r.lo, r.hi) == (y.ptr, y.ptr + 64)
    assert site(r.first) == f"{HERE}:{line_of('@rw-write')}"
    assert site(r.second) == f"{HERE}:{line_of('@rw-read')}"
    # with the wait it is ordered
    mid = dev.event()
    with ns.graph(stream=s1) as g2:
        _fork(s1, s2, fork)
        s1.launch("EasyOPf", blocks=16, args=(y,))
        s1.record(mid)
        s2.wait(mid)
        s2.launch("VectorAddKernel", blocks=1, args=(y, x, z, 1.0, 16))
        s2.record(join)
        s1.wait(join)
    assert len(races(g2)) == 0


def test_correct_fork_join_graph_has_no_race(dev):
    s1, s2 = dev.stream(), dev.stream()
    x, y = dev.malloc(64), dev.malloc(64)
    fork, join = dev.event(), dev.event()
    with ns.graph(stream=s1) as g:
        s1.launch("EasyOPf", blocks=8, args=(x,))
        _fork(s1, s2, fork)
        s2.launch("ShortOPf", blocks=8, args=(x,))     # after the fork: ordered
        s1.launch("EasyOPf", blocks=8, args=(y,))      # another buffer
        s2.record(join)
        s1.wait(join)
        s1.launch("ShortOPf", blocks=8, args=(x,))     # after the join: ordered
    rep = races(g, replays=2)
    assert len(rep) == 0 and rep.tasks > 10 and rep.lanes == 3


def test_cascade_streams_are_one_stream_and_races_across_cascades_are_found():
    dev = ns.Device("Ascend310P")                      # capture depth 2048: cascades
    s1, s2 = dev.stream(), dev.stream()
    x, y = dev.malloc(64), dev.malloc(64)
    fork, join = dev.event(), dev.event()
    with ns.graph(stream=s1) as g:
        _fork(s1, s2, fork)
        for i in range(5000):
            s1.launch("EasyOPf", blocks=1, args=(x if i != 4000 else y,))
        s2.launch("ShortOPf", blocks=1, args=(y,))
        s2.record(join)
        s1.wait(join)
    assert len(g.streams) > 3
    rep = races(g)
    assert rep.lanes == 3, rep                        # origin chain, joined, execution stream
    assert len(rep) == 1, rep
    r = rep[0]
    assert {r.first.kernel, r.second.kernel} == {"EasyOPf", "ShortOPf"}
    easy = r.first if r.first.kernel == "EasyOPf" else r.second
    assert easy.sq not in {cs for cs in g._model.heads}   # on a cascade stream of the origin
    assert r.buffer[0] == y.ptr


def test_eager_kernel_and_graph_replay_on_another_stream_race(dev):
    s, s2, exe = dev.stream(), dev.stream(), dev.stream()
    x = dev.malloc(64)
    with ns.graph(stream=s) as g:
        s.launch("ShortOPf", blocks=8, args=(x,))
    with record():
        s2.launch("EasyOPf", blocks=8, args=(x,))
        g.replay(exe)                                   # unordered with s2's kernel
        ev = dev.event()
        exe.record(ev)
        s2.wait(ev)
        s2.launch("EasyOPf", blocks=8, args=(x,))       # after the replay: ordered
    rep = races_in_eager(dev)
    assert len(rep) == 1
    names = {rep[0].first.stream, rep[0].second.stream}
    assert any("capture stream" in n for n in names)
    assert rep[0].second.pos == 0 or rep[0].first.pos == 0


def test_cond_branch_is_ordered_with_its_parent_and_races_with_a_free_stream(dev):
    s, body, side = dev.stream(), dev.stream(), dev.stream()
    x, y = dev.malloc(64), dev.malloc(64)
    fork, join = dev.event(), dev.event()
    with ns.graph(stream=s) as g:
        s.launch("EasyOPf", blocks=1, args=(x,))
        _fork(s, side, fork)
        c = g.condition(default=1)
        with g.cond_if(c, body):
            body.launch("ShortOPf", blocks=1, args=(x,))       # ordered after s's kernel
            body.launch("ShortOPf", blocks=1, args=(y,))       # races with side
        s.launch("EasyOPf", blocks=1, args=(x,))               # ordered after the branch
        side.launch("EasyOPf", blocks=1, args=(y,))
        side.record(join)
        s.wait(join)
    rep = races(g)
    assert len(rep) == 1, rep
    r = rep[0]
    assert r.buffer[0] == y.ptr
    assert {r.first.kernel, r.second.kernel} == {"ShortOPf", "EasyOPf"}


def test_while_body_runs_ordered_iterations(dev):
    s, body = dev.stream(), dev.stream()
    x = dev.malloc(64)
    counter = dev.malloc(8)
    counter.write(np.array([4], np.int64))
    with ns.graph(stream=s) as g:
        c = g.condition(default=1)
        with g.cond_while(c, body):
            body.launch("EasyOPf", blocks=1, args=(x,))
            body.launch("CountDown", blocks=1, args=(counter, c))
        s.launch("ShortOPf", blocks=1, args=(x,))
    rep = races(g)
    assert len(rep) == 0 and rep.tasks > 12


# ---------------------------------------------------------------- the programs people run

EXAMPLES = ["cross_stream_capture", "kernel_vector_add", "kernel_launch_add_custom",
            "kernel_simple_stream", "kernel_failure_mode", "model_ri_simple_model",
            "model_ri_cond_model", "model_ri_model_update", "task_update_dev_guide"]


@pytest.mark.parametrize("name", EXAMPLES)
def test_examples_have_no_race(name, tmp_path, monkeypatch, capsys):
    from helpers.examples import load
    monkeypatch.chdir(tmp_path)
    ns.configure(record_accesses=True)
    mod = load(name)
    if name == "kernel_simple_stream":
        mod.main(200)
    else:
        mod.main()
    for dev_id in list(RT.devices):
        rep = races_in_eager(dev_id)
        assert len(rep) == 0, str(rep)
        assert rep.tasks > 0 and rep.dropped == 0


def _notebook_code(name: str) -> str:
    nb = json.loads((ROOT / "notebooks" / name).read_text())
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")


@pytest.mark.parametrize("name", ["01_quickstart.ipynb", "02_cross_stream_and_cascade.ipynb",
                                  "03_if_while_switch.ipynb"])
def test_notebook_programs_have_no_race(name, monkeypatch, capsys):
    real_reset = ns.reset

    def reset():                    # the notebooks start with ns.reset(): keep recording
        real_reset()
        ns.configure(record_accesses=True)
    monkeypatch.setattr(ns, "reset", reset)
    code = _notebook_code(name).replace("200_000", "20_000")
    exec(compile(code, name, "exec"), {"__name__": "__notebook__"})
    rep = races_in_eager(0)
    assert len(rep) == 0, str(rep)
    assert rep.tasks > 10


def test_notebook_04_comparison_program_has_no_race(monkeypatch):
    from npusim.trace.savings import compare
    real_reset = ns.reset

    def reset():
        real_reset()
        ns.configure(record_accesses=True)
    import npusim.api
    monkeypatch.setattr(npusim.api, "reset", reset)        # compare() resets the simulator
    compare(16, 4_000)
    rep = races_in_eager(0)
    assert len(rep) == 0 and rep.tasks >= 32


# ---------------------------------------------------------------- the log itself

def _program(dev):
    s1, s2 = dev.stream(), dev.stream()
    x, y = dev.malloc(64), dev.malloc(64)
    ev = dev.event(kind="flag")
    s2.wait(ev)                                        # parks, then is woken: one row
    s2.launch("ShortOPf", blocks=4, args=(x,))
    s1.launch("EasyOPf", blocks=8, args=(x,))
    s1.copy(y, x, 32, acl.ACL_MEMCPY_DEVICE_TO_DEVICE)
    y.fill(7, stream=s1)
    s1.record(ev)
    dev.synchronize()


def _log_rows(monkeypatch=None):
    ns.reset()
    if monkeypatch is not None:
        monkeypatch.setattr(E, "run", R.run)
    dev = ns.Device("Ascend910B")
    with record():
        _program(dev)
    from npusim.analysis import _kept
    log = _kept[dev._dev]
    return log.tasks().copy(), log.accesses().copy()


def test_access_log_matches_the_reference_interpreter(monkeypatch):
    t_engine, a_engine = _log_rows()
    t_ref, a_ref = _log_rows(monkeypatch)
    assert t_engine.shape[0] == 6 and a_engine.shape[0] >= 4
    assert np.array_equal(t_engine, t_ref)
    assert np.array_equal(a_engine, a_ref)
    ops = t_engine[:, 2].tolist()
    assert ops.count(E.S.OP_EVENT_WAIT) == 1          # the parked wait left one row


def test_log_grows_instead_of_dropping(dev):
    s1, s2 = dev.stream(), dev.stream()
    xs = [dev.malloc(64) for _ in range(8)]
    with record():
        st = dev._dev.state
        st.access_log.close()
        st.access_log = AccessLog(st, tasks=8, accesses=4)
        for i in range(400):
            (s1 if (i // 8) % 2 else s2).launch("EasyOPf", blocks=1, args=(xs[i % 8],))
    rep = races_in_eager(dev)
    assert rep.dropped == 0 and rep.tasks >= 400
    assert len({r.buffer for r in rep}) == 8           # every buffer: both streams, unordered


def test_recording_off_records_nothing(dev):
    s = dev.stream()
    x = dev.malloc(64)
    s.launch("EasyOPf", blocks=1, args=(x,))
    s.synchronize()
    assert dev._dev.state.access_log is None
    assert dev._dev.state.mem.ctx[14] == 0
    with pytest.raises(ValueError):
        races_in_eager(dev)


# ---------------------------------------------------------------- task updates vs replays

def _update_graph(dev, s, x):
    with record():
        with ns.graph(s) as g:
            ns.graph_task_group_begin(s)
            s.launch("EasyOPf", 1, args=(x,))             # @tg-captured
            h = ns.graph_task_group_end(s)
    return g, h


def _update(u, h, y):
    ns.graph_task_update_begin(u, h)
    u.launch("EasyOPf", 1, args=(y,))                    # @tg-update
    ns.graph_task_update_end(u)


def _check_update_race(rep, h, replay_marker):
    assert len(rep) == 1, rep
    r = rep[0]
    assert r.group == h and f"task group 0x{h:x}" in r.target and r.buffer is None
    upd, task = (r.first, r.second) if r.first.op == "SQE_UPDATE" else (r.second, r.first)
    assert upd.what == "task update" and upd.access == "write" and task.access == "read"
    assert site(upd) == f"{HERE}:{line_of('@tg-update')}"
    assert task.kernel == "EasyOPf" and site(task) == f"{HERE}:{line_of('@tg-captured')}"
    assert f"{HERE}:{line_of(replay_marker)}" in task.note
    text = str(rep)
    assert f"task group 0x{h:x}" in text and f"{HERE}:{line_of('@tg-update')}" in text


def test_an_update_after_a_replay_without_an_event_races_with_it(dev):
    s, u = dev.stream(), dev.stream()
    x, y = dev.malloc(64), dev.malloc(64)
    g, h = _update_graph(dev, s, x)
    with record():
        g.replay(s)                                      # @tg-replay-a
        _update(u, h, y)
    _check_update_race(races_in_eager(dev), h, "@tg-replay-a")


def test_an_update_before_a_replay_without_an_event_races_with_it(dev):
    s, u = dev.stream(), dev.stream()
    x, y = dev.malloc(64), dev.malloc(64)
    g, h = _update_graph(dev, s, x)
    with record():
        _update(u, h, y)
        g.replay(s)                                      # @tg-replay-b
    _check_update_race(races_in_eager(dev), h, "@tg-replay-b")


@pytest.mark.parametrize("how", ["event", "external", "same stream", "synchronize"])
def test_an_ordered_update_does_not_race(dev, how):
    s, u = dev.stream(), dev.stream()
    x, y = dev.malloc(64), dev.malloc(64)
    ext = dev.external_event()
    with record():
        with ns.graph(s) as g:
            if how == "external":
                ext.wait(s)
                ext.reset(s)
            ns.graph_task_group_begin(s)
            s.launch("EasyOPf", 1, args=(x,))
            h = ns.graph_task_group_end(s)
    done, ev = dev.event(), dev.event()
    with record():
        for _ in range(2):
            us = s if how == "same stream" else u
            us.wait(done)
            _update(us, h, y)
            if how == "event":
                u.record(ev)
                s.wait(ev)
            elif how == "external":
                ext.record(u)
            elif how == "synchronize":
                u.synchronize()
            g.replay(s)
            s.record(done)
    assert len(races_in_eager(dev)) == 0
