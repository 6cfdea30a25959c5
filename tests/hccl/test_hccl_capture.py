"""Collectives under ACL graph capture (issue 38 item 5, spec/hccl.md capture rules): captured
on every rank and replayed N times exact each time; kernels, task groups and task updates around
them; the rules: a synchronous copy in GLOBAL capture (107030), an unjoined user side stream
(107025), graphs of different capture sessions / eager vs graph / different ops across ranks
(107020 with a message naming the ranks and the communicator), a communicator destroyed under a
graph (the replay's hang is diagnosed)."""
from __future__ import annotations

import numpy as np
import pytest

from helpers.hccl_world import World
from helpers.taskgroup import KL, grp_begin, grp_end, update
from npusim import acl, hccl
from npusim.hccl import types as T

I32, F32, SUM = T.HCCL_DATA_TYPE_INT32, T.HCCL_DATA_TYPE_FP32, T.HCCL_REDUCE_SUM
GLOBAL = acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL
RELAXED = acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED
TIMEOUT = 107020


def begin(w, r, mode=GLOBAL):
    acl.rt.set_device(r)
    assert acl.mdl.ri_capture_begin(w.streams[r], mode) == 0


def end(w, r):
    acl.rt.set_device(r)
    m, code = acl.mdl.ri_capture_end(w.streams[r])
    assert code == 0, acl.get_recent_err_msg()
    return m


def replay(w, models, ranks=None):
    for r in (range(w.p) if ranks is None else ranks):
        acl.rt.set_device(r)
        assert acl.mdl.ri_execute_async(models[r], w.streams[r]) == 0


def all_reduce(w, r, x, y, n, dtype=F32):
    acl.rt.set_device(r)
    return hccl.all_reduce(int(x[r]), int(y[r]), n, dtype, SUM, w.comms[r], w.streams[r])


def all_gather(w, r, x, y, n, dtype=F32):
    acl.rt.set_device(r)
    return hccl.all_gather(int(x[r]), int(y[r]), n, dtype, w.comms[r], w.streams[r])


@pytest.mark.parametrize("mode", [GLOBAL, RELAXED])
def test_captured_replayed_many_times(acl, mode):
    """AllReduce then AllGather in one graph per rank, replayed five times with new inputs."""
    p, n = 4, 100
    w = World(p)
    x, y, z = w.buffers(4 * n), w.buffers(4 * n), w.buffers(4 * n)
    models = []
    for r in range(p):
        begin(w, r, mode)
        assert all_reduce(w, r, x, y, n) == 0
        assert all_gather(w, r, y, z, n // p) == 0
        models.append(end(w, r))
    for it in range(5):
        vals = [np.arange(n, dtype=np.float32) * (r + 1) + it for r in range(p)]
        for r in range(p):
            x[r].write(vals[r])
        replay(w, models)
        assert w.sync() == [0] * p, acl.get_recent_err_msg()
        total = sum(vals)
        for r in range(p):
            assert (y[r].read(np.float32) == total).all(), (it, r)
            assert (z[r].read(np.float32) == np.tile(total[:n // p], p)).all(), (it, r)


def test_kernels_task_groups_and_updates_around_a_collective(acl):
    """DeviceWrite in a task group -> AllReduce -> EasyOPf, captured on each rank; a task
    update of the group (new value) between replays changes what is reduced."""
    p = 4
    w = World(p)
    x, y = w.buffers(64), w.buffers(64)
    models, groups = [], []
    for r in range(p):
        begin(w, r)
        grp_begin(w.streams[r])
        KL(w.streams[r], "DeviceWrite", int(x[r]), r + 1)
        groups.append(grp_end(w.streams[r]))
        assert all_reduce(w, r, x, y, 1, I32) == 0
        KL(w.streams[r], "EasyOPf", int(y[r]))
        models.append(end(w, r))
    replay(w, models)
    assert w.sync() == [0] * p, acl.get_recent_err_msg()
    assert [int(y[r].read(np.int32)[0]) for r in range(p)] == [sum(range(1, p + 1)) + 1] * p
    ups = []
    for r in range(p):
        acl.rt.set_device(r)
        u, code = acl.rt.create_stream()
        assert code == 0
        update(u, groups[r], [("DeviceWrite", int(x[r]), 10 * (r + 1))])
        assert acl.rt.synchronize_stream(u) == 0
        ups.append(u)
    for _ in range(2):
        replay(w, models)
        assert w.sync() == [0] * p, acl.get_recent_err_msg()
        assert [int(y[r].read(np.int32)[0]) for r in range(p)] == [100 + 1] * p


def test_sync_memcpy_in_global_capture_is_107030(acl):
    w = World(2)
    x = w.buffers(64)
    begin(w, 0)
    host = np.zeros(16, np.uint32)
    y = w.buffers(64)
    assert all_reduce(w, 0, x, y, 4) == 0
    code = acl.rt.memcpy(int(x[0]), 64, acl.util.numpy_to_ptr(host), 64,
                         acl.ACL_MEMCPY_HOST_TO_DEVICE)
    assert code == 107030
    assert acl.get_recent_err_msg()
    acl.rt.set_device(0)
    acl.mdl.ri_capture_end(w.streams[0])


def test_unjoined_user_side_stream_is_107025(acl):
    """A side stream forked with an event, a collective's neighbour kernel on it, not joined."""
    w = World(2)
    x, y = w.buffers(64), w.buffers(64)
    acl.rt.set_device(0)
    side, _ = acl.rt.create_stream()
    ev, _ = acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC)
    begin(w, 0)
    assert acl.rt.record_event(ev, w.streams[0]) == 0
    assert acl.rt.stream_wait_event(side, ev) == 0
    KL(side, "EasyOPf", int(x[0]))
    assert all_reduce(w, 0, x, y, 4) == 0
    m, code = acl.mdl.ri_capture_end(w.streams[0])
    assert code == 107025, code
    assert m is None


def _mismatch_message(msg, ranks, comm_name):
    assert msg, "no message"
    for r in ranks:
        assert f"rank {r}" in msg, (r, msg)
    assert comm_name in msg, msg


def _comm_name(w):
    from npusim.hccl.api import _member
    from npusim.runtime.runtime import RT
    with RT.lock:
        m, _ = _member(w.comms[0])
    return m.comm.name


def _sync_all(w):
    codes, msgs = [], []
    for r in range(w.p):
        acl.rt.set_device(r)
        codes.append(acl.rt.synchronize_stream(w.streams[r]))
        msgs.append(acl.get_recent_err_msg())
    return codes, msgs


def test_graphs_of_different_capture_sessions(acl):
    """Ranks 0 and 1 captured AllReduce twice (sessions A and B); rank 0 replays A, rank 1 B:
    the synchronize gives 107020 and names both ranks, the communicator, the graphs."""
    w = World(2)
    x, y = w.buffers(64), w.buffers(64)
    sessions = []
    for _ in range(2):
        ms = []
        for r in range(2):
            begin(w, r)
            assert all_reduce(w, r, x, y, 4) == 0
            ms.append(end(w, r))
        sessions.append(ms)
    replay(w, sessions[0])
    assert w.sync() == [0, 0]
    replay(w, [sessions[0][0], sessions[1][1]])
    codes, msgs = _sync_all(w)
    assert codes == [TIMEOUT, TIMEOUT], codes
    _mismatch_message(msgs[0], (0, 1), _comm_name(w))
    assert "graph" in msgs[0] or "capture" in msgs[0], msgs[0]


def test_eager_on_one_rank_graph_on_the_other(acl):
    w = World(2)
    x, y = w.buffers(64), w.buffers(64)
    begin(w, 1)
    assert all_reduce(w, 1, x, y, 4) == 0
    m1 = end(w, 1)
    assert all_reduce(w, 0, x, y, 4) == 0           # rank 0 eager
    acl.rt.set_device(1)
    assert acl.mdl.ri_execute_async(m1, w.streams[1]) == 0
    codes, msgs = _sync_all(w)
    # the op logs agree (both AllReduce 4 fp32): the mismatch is graph vs eager
    assert codes == [TIMEOUT, TIMEOUT], (codes, msgs)
    _mismatch_message(msgs[0], (0, 1), _comm_name(w))
    assert "eager" in msgs[0] and "graph" in msgs[0], msgs[0]


@pytest.mark.parametrize("p", [2, 8])
def test_all_gather_against_all_reduce(acl, p):
    """The issue's "Done when": a rank issuing AllGather where the others AllReduce -> the
    synchronize returns 107020 with a message naming both ranks and the communicator."""
    w = World(p)
    x, y = w.buffers(4 * 8 * p), w.buffers(4 * 8 * p)
    odd = p - 1
    for r in range(p):
        code = all_gather(w, r, x, y, 8) if r == odd else all_reduce(w, r, x, y, 8)
        assert code == 0
    codes, msgs = _sync_all(w)
    assert TIMEOUT in codes and set(codes) <= {0, TIMEOUT}, codes
    msg = next(m for m, c in zip(msgs, codes) if c == TIMEOUT)
    _mismatch_message(msg, (0, odd), _comm_name(w))
    assert "all_gather" in msg.lower().replace("allgather", "all_gather"), msg
    assert "test_hccl_capture.py" in msg, msg         # the source lines that issued them


@pytest.mark.parametrize("p", [2, 8])
def test_all_gather_against_all_reduce_captured(acl, p):
    w = World(p)
    x, y = w.buffers(4 * 8 * p), w.buffers(4 * 8 * p)
    models = []
    for r in range(p):
        begin(w, r)
        assert (all_gather(w, r, x, y, 8) if r == 1 else all_reduce(w, r, x, y, 8)) == 0
        models.append(end(w, r))
    replay(w, models)
    codes, msgs = _sync_all(w)
    assert TIMEOUT in codes, codes
    msg = next(m for m, c in zip(msgs, codes) if c == TIMEOUT)
    _mismatch_message(msg, (0, 1), _comm_name(w))


def test_comm_destroyed_under_a_graph(acl):
    """The graph holds the communicator's collectives; the comm is destroyed on every rank;
    the replay can never finish: diagnosed at the synchronize, not a hang of the test."""
    w = World(2)
    x, y = w.buffers(64), w.buffers(64)
    models = []
    for r in range(2):
        begin(w, r)
        assert all_reduce(w, r, x, y, 4) == 0
        models.append(end(w, r))
    replay(w, models)
    assert w.sync() == [0, 0]
    name = _comm_name(w)
    w.destroy()
    for r in range(2):
        acl.rt.set_device(r)
        code = acl.mdl.ri_execute_async(models[r], w.streams[r])
        assert code in (0, TIMEOUT) or code > 0, code
    codes, msgs = _sync_all(w)
    assert codes[0] != 0 or codes[1] != 0, codes
    text = " ".join(m or "" for m in msgs)
    assert "destroy" in text, msgs
    assert name in text, msgs


def test_send_without_recv_is_diagnosed(acl):
    w = World(2)
    x = w.buffers(64)
    acl.rt.set_device(0)
    assert hccl.send(int(x[0]), 4, F32, 1, w.comms[0], w.streams[0]) == 0
    codes, msgs = _sync_all(w)
    assert codes[0] == TIMEOUT, codes
    assert "send" in msgs[0] and "rank 1" in msgs[0], msgs[0]


def test_destroyed_on_one_rank_while_the_other_issues(acl):
    """Rank 1 destroys its comm; rank 0 then issues an AllReduce: rank 1's call fails with a
    code, and rank 0's synchronize is diagnosed instead of hanging."""
    w = World(2)
    x, y = w.buffers(64), w.buffers(64)
    assert hccl.comm_destroy(w.comms[1]) == 0
    assert all_reduce(w, 1, x, y, 4) == T.HCCL_E_PARA
    assert all_reduce(w, 0, x, y, 4) == 0
    codes, msgs = _sync_all(w)
    assert codes[0] == TIMEOUT, codes
    assert "rank 1" in msgs[0], msgs[0]


@pytest.mark.parametrize("p", [2, 3, 8])
def test_batch_ring_captured_and_replayed(acl, p):
    w = World(p)
    n = 16
    x, y = w.buffers(4 * n), w.buffers(4 * n)
    models = []
    for r in range(p):
        begin(w, r)
        items = [{"sendRecvType": T.HCCL_SEND, "buf": int(x[r]), "count": n, "dataType": F32,
                  "remoteRank": (r + 1) % p},
                 {"sendRecvType": T.HCCL_RECV, "buf": int(y[r]), "count": n, "dataType": F32,
                  "remoteRank": (r - 1) % p}]
        assert hccl.batch_send_recv(items, 2, w.comms[r], w.streams[r]) == 0
        models.append(end(w, r))
    for it in range(3):
        for r in range(p):
            x[r].write(np.full(n, 10 * it + r, np.float32))
        replay(w, models)
        assert w.sync() == [0] * p, acl.get_recent_err_msg()
        for r in range(p):
            assert (y[r].read(np.float32) == 10 * it + (r - 1) % p).all(), (it, r)


def test_hostile_values_while_capturing(acl):
    """A failed collective on a capturing stream leaves the capture usable: the good
    collective after it replays exactly."""
    from npusim.hccl import api as A
    A.ESCAPES.clear()
    w = World(2)
    x, y = w.buffers(64), w.buffers(64)
    models = []
    for r in range(2):
        begin(w, r)
        for bad in (None, 1.5, "x", -1, 2 ** 70):
            assert hccl.all_reduce(int(x[r]), int(y[r]), bad, F32, SUM, w.comms[r],
                                   w.streams[r]) != 0
            assert hccl.broadcast(int(x[r]), 4, F32, bad, w.comms[r], w.streams[r]) != 0
        assert all_reduce(w, r, x, y, 4) == 0
        models.append(end(w, r))
    for r in range(2):
        x[r].write(np.full(16, r + 1, np.float32))
    replay(w, models)
    assert w.sync() == [0, 0], acl.get_recent_err_msg()
    assert (y[0].read(np.float32)[:4] == 3).all()
    assert A.ESCAPES == []


MISMATCHES = {
    "count": lambda r, x, y, c, s: hccl.all_reduce(x, y, 4 + 4 * r, F32, SUM, c, s),
    "dtype": lambda r, x, y, c, s: hccl.all_reduce(x, y, 4, F32 if r else
                                                   T.HCCL_DATA_TYPE_FP16, SUM, c, s),
    "reduce op": lambda r, x, y, c, s: hccl.all_reduce(x, y, 4, F32, r, c, s),
    "root": lambda r, x, y, c, s: hccl.broadcast(x, 4, F32, r, c, s),
    "send to each other": lambda r, x, y, c, s: hccl.send(x, 4, F32, 1 - r, c, s),
}


@pytest.mark.parametrize("what", sorted(MISMATCHES))
def test_mismatch_that_does_not_hang_is_reported(acl, what):
    w = World(2)
    x, y = w.buffers(4096), w.buffers(4096)
    for r in range(2):
        acl.rt.set_device(r)
        assert MISMATCHES[what](r, int(x[r]), int(y[r]), w.comms[r], w.streams[r]) == 0
    codes, msgs = _sync_all(w)
    assert codes == [107020, 107020], (what, codes)      # they hang, and the hang is explained
    for m in msgs:
        assert "EI0002" in m and "rank 0" in m and "rank 1" in m, m
