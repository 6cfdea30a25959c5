"""Every collective x data type x reduce op x rank count (2, 3, 4, 8): results exact against
numpy (HCCL's reduction rules: ``npusim.hccl.algo.reduce_np``), eager and captured+replayed;
the algorithms of a 2 servers x 4 rank table (ring / rhd / hierarchical); both program shapes
(one thread per rank with a root info; one thread with comm_init_all + group_start/end);
send/recv pairs, batch_send_recv rings, barrier."""
from __future__ import annotations

import numpy as np
import pytest

from helpers.hccl_world import ALL_TYPES, NP, REDUCIBLE, World, data, rank_table, reduced
from npusim import acl, hccl
from npusim.hccl import algo
from npusim.hccl import types as T

OPS = [T.HCCL_REDUCE_SUM, T.HCCL_REDUCE_PROD, T.HCCL_REDUCE_MAX, T.HCCL_REDUCE_MIN]
COUNT = 37          # not a multiple of any rank count: the uneven chunks of every algorithm


def _valid(dtype, op):
    return T.reduce_op_supported(dtype, op)


def issue(w, kind, r, ins, outs, count, dtype, op, root):
    c, s = w.comms[r], w.streams[r]
    acl.rt.set_device(r)
    if kind == "all_reduce":
        return hccl.all_reduce(int(ins[r]), int(outs[r]), count, dtype, op, c, s)
    if kind == "reduce_scatter":
        return hccl.reduce_scatter(int(ins[r]), int(outs[r]), count, dtype, op, c, s)
    if kind == "all_gather":
        return hccl.all_gather(int(ins[r]), int(outs[r]), count, dtype, c, s)
    if kind == "broadcast":
        return hccl.broadcast(int(ins[r]), count, dtype, root, c, s)
    if kind == "reduce":
        return hccl.reduce(int(ins[r]), int(outs[r]), count, dtype, op, root, c, s)
    if kind == "scatter":
        return hccl.scatter(int(ins[r]), int(outs[r]), count, dtype, root, c, s)
    if kind == "alltoall":
        return hccl.alltoall(int(ins[r]), count, dtype, int(outs[r]), count, dtype, c, s)
    raise AssertionError(kind)


def shapes(kind, p, count):
    """(elements of each input, of each output)."""
    return {"all_reduce": (count, count), "reduce_scatter": (count * p, count),
            "all_gather": (count, count * p), "broadcast": (count, count),
            "reduce": (count, count), "scatter": (count * p, count),
            "alltoall": (count * p, count * p)}[kind]


def expected(kind, p, xs, count, dtype, op, root):
    if kind == "all_reduce":
        return [reduced(xs, dtype, op)] * p
    if kind == "reduce_scatter":
        full = reduced(xs, dtype, op)
        return [full[r * count:(r + 1) * count] for r in range(p)]
    if kind == "all_gather":
        return [np.concatenate(xs)] * p
    if kind == "broadcast":
        return [xs[root]] * p
    if kind == "reduce":
        return [reduced(xs, dtype, op) if r == root else None for r in range(p)]
    if kind == "scatter":
        return [xs[root][r * count:(r + 1) * count] for r in range(p)]
    if kind == "alltoall":
        return [np.concatenate([xs[q][r * count:(r + 1) * count] for q in range(p)])
                for r in range(p)]


def run(w, kind, dtype, op=T.HCCL_REDUCE_SUM, count=COUNT, root=0, seed=0):
    """Issue ``kind`` on every rank (eager), synchronize, compare exactly."""
    p = w.p
    nin, nout = shapes(kind, p, count)
    es = T.DATA_TYPE_SIZE[dtype]
    xs = data(p, nin, dtype, op, seed)
    ins = w.buffers(nin * es, [x.view(np.uint8) for x in xs])
    outs = ins if kind == "broadcast" else w.buffers(nout * es)
    assert hccl.group_start() == 0
    for r in range(p):
        assert issue(w, kind, r, ins, outs, count, dtype, op, root) == 0, \
            acl.get_recent_err_msg()
    assert hccl.group_end() == 0
    assert w.sync() == [0] * p, acl.get_recent_err_msg()
    check(w, kind, xs, outs, count, dtype, op, root)


def check(w, kind, xs, outs, count, dtype, op, root):
    for r, e in enumerate(expected(kind, w.p, xs, count, dtype, op, root)):
        if e is None:
            continue
        got = outs[r].read(np.uint8, e.nbytes)
        assert got.tobytes() == np.ascontiguousarray(e).tobytes(), (
            kind, w.p, T.dtype_name(dtype), op, r, got.view(e.dtype)[:8], e[:8])


KINDS = ["all_reduce", "reduce_scatter", "all_gather", "broadcast", "reduce", "scatter",
         "alltoall"]
REDUCING = {"all_reduce", "reduce_scatter", "reduce"}


@pytest.mark.parametrize("p", [2, 3, 4, 8])
@pytest.mark.parametrize("kind", KINDS)
def test_every_type_and_op_eager(acl, kind, p):
    w = World(p)
    if kind in REDUCING:
        for dtype in REDUCIBLE:
            for op in OPS:
                if _valid(dtype, op):
                    run(w, kind, dtype, op, root=p - 1)
    else:
        for dtype in ALL_TYPES:
            run(w, kind, dtype, root=p - 1)


@pytest.mark.parametrize("p", [2, 3, 8])
@pytest.mark.parametrize("kind", KINDS)
def test_captured_and_replayed(acl, kind, p):
    """Captured on every rank, replayed three times with new inputs: exact every time."""
    w = World(p)
    dtype, op, count, root = T.HCCL_DATA_TYPE_FP32, T.HCCL_REDUCE_SUM, COUNT, 1
    nin, nout = shapes(kind, p, count)
    ins = w.buffers(nin * 4)
    outs = ins if kind == "broadcast" else w.buffers(nout * 4)
    models = []
    for r in range(p):
        acl.rt.set_device(r)
        assert acl.mdl.ri_capture_begin(w.streams[r], acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) == 0
        assert issue(w, kind, r, ins, outs, count, dtype, op, root) == 0
        m, code = acl.mdl.ri_capture_end(w.streams[r])
        assert code == 0, acl.get_recent_err_msg()
        models.append(m)
    for it in range(3):
        xs = data(p, nin, dtype, op, seed=it + 1)
        for r in range(p):
            ins[r].write(xs[r])
        for r in range(p):
            acl.rt.set_device(r)
            assert acl.mdl.ri_execute_async(models[r], w.streams[r]) == 0
        assert w.sync() == [0] * p, acl.get_recent_err_msg()
        check(w, kind, xs, outs, count, dtype, op, root)


def test_thread_per_rank_root_info(acl):
    """The examples' shape: one thread per rank, comm_init_root_info."""
    w = World(4, how="root")
    for c in w.comms:
        assert hccl.get_rank_size(c) == (4, 0)
    assert [hccl.get_rank_id(c) for c in w.comms] == [(r, 0) for r in range(4)]
    run(w, "all_reduce", T.HCCL_DATA_TYPE_FP32)
    run(w, "all_gather", T.HCCL_DATA_TYPE_INT8)


@pytest.fixture
def table(tmp_path):
    return rank_table(tmp_path / "rank_table.json", 2, 4)


def test_two_servers_choose_the_inter_server_algorithms():
    rs = [0, 0, 0, 0, 1, 1, 1, 1]
    assert algo.choose("all_reduce", 8, rs) == "hierarchical"
    assert algo.choose("reduce_scatter", 8, rs) == "rhd"
    assert algo.choose("all_gather", 8, rs) == "rhd"
    assert algo.choose("broadcast", 8, rs) == "ring"
    assert algo.choose("all_reduce", 6, [0, 0, 0, 1, 1, 1]) == "hierarchical"
    assert algo.choose("all_gather", 6, [0, 0, 0, 1, 1, 1]) == "ring"
    assert algo.choose("all_reduce", 8, [0] * 8) == "mesh"


def test_rank_table_two_servers(acl, table):
    """8 ranks on 2 servers x 4 (rank table, one thread per rank at init): the hierarchical
    AllReduce, rhd ReduceScatter / AllGather and ring Broadcast / Reduce are exact."""
    w = World(8, how="table", table=table)
    for dtype in (T.HCCL_DATA_TYPE_FP32, T.HCCL_DATA_TYPE_BFP16, T.HCCL_DATA_TYPE_INT8):
        for op in (T.HCCL_REDUCE_SUM, T.HCCL_REDUCE_MAX):
            for kind in ("all_reduce", "reduce_scatter", "reduce"):
                run(w, kind, dtype, op, root=5)
        for kind in ("all_gather", "broadcast", "scatter", "alltoall"):
            run(w, kind, dtype, root=6)


def test_rank_table_ring(acl, tmp_path):
    """6 ranks on 2 servers x 3: not a power of 2, so ReduceScatter / AllGather run the ring."""
    t = rank_table(tmp_path / "rt6.json", 2, 3)
    w = World(6, how="table", table=t)
    for kind in ("all_reduce", "reduce_scatter", "all_gather", "broadcast"):
        run(w, kind, T.HCCL_DATA_TYPE_FP16, T.HCCL_REDUCE_SUM, root=4)


@pytest.mark.parametrize("p", [2, 3, 8])
def test_send_recv_pairs(acl, p):
    """Rank r sends to r+1 (even ranks first, so blocking pairs never wait for each other)."""
    w = World(p)
    n = 50
    xs = data(p, n, T.HCCL_DATA_TYPE_INT32)
    ins = w.buffers(n * 4, [x.view(np.uint8) for x in xs])
    outs = w.buffers(n * 4)
    for r in range(0, p - 1, 2):
        acl.rt.set_device(r)
        assert hccl.send(int(ins[r]), n, T.HCCL_DATA_TYPE_INT32, r + 1, w.comms[r],
                         w.streams[r]) == 0
        acl.rt.set_device(r + 1)
        assert hccl.recv(int(outs[r + 1]), n, T.HCCL_DATA_TYPE_INT32, r, w.comms[r + 1],
                         w.streams[r + 1]) == 0
    assert w.sync() == [0] * p, acl.get_recent_err_msg()
    for r in range(0, p - 1, 2):
        assert (outs[r + 1].read(np.int32) == xs[r]).all()


@pytest.mark.parametrize("p", [2, 3, 8])
def test_batch_send_recv_ring(acl, p):
    """Every rank sends to r+1 and receives from r-1 in one batch: the ring completes."""
    w = World(p)
    n = 33
    xs = data(p, n, T.HCCL_DATA_TYPE_FP16)
    ins = w.buffers(n * 2, [x.view(np.uint8) for x in xs])
    outs = w.buffers(n * 2)
    for r in range(p):
        acl.rt.set_device(r)
        items = [{"sendRecvType": T.HCCL_SEND, "buf": int(ins[r]), "count": n,
                  "dataType": T.HCCL_DATA_TYPE_FP16, "remoteRank": (r + 1) % p},
                 {"sendRecvType": T.HCCL_RECV, "buf": int(outs[r]), "count": n,
                  "dataType": T.HCCL_DATA_TYPE_FP16, "remoteRank": (r - 1) % p}]
        assert hccl.batch_send_recv(items, 2, w.comms[r], w.streams[r]) == 0, \
            acl.get_recent_err_msg()
    assert w.sync() == [0] * p, acl.get_recent_err_msg()
    for r in range(p):
        assert outs[r].read(np.uint8).tobytes() == xs[(r - 1) % p].tobytes()


@pytest.mark.parametrize("p", [2, 3, 8])
def test_barrier(acl, p):
    w = World(p)
    for r in range(p):
        acl.rt.set_device(r)
        assert hccl.barrier(w.comms[r], w.streams[r]) == 0
    assert w.sync() == [0] * p, acl.get_recent_err_msg()
    run(w, "all_reduce", T.HCCL_DATA_TYPE_INT32)        # still usable after


@pytest.mark.parametrize("p", [2, 3, 4, 8])
def test_alltoallv_and_vc(acl, p):
    """AlltoAllV with uneven counts and gaps in the displacements; AlltoAllVC with the same
    matrix packed: each rank's blocks land at the right places."""
    w = World(p)
    rng = np.random.default_rng(p)
    mat = rng.integers(0, 6, (p, p))                  # mat[r][q]: elements rank r sends q
    es = 4
    for vc in (False, True):
        xs, ins, outs, exp = [], [], [], []
        for r in range(p):
            sd = [int(sum(mat[r][:q])) + (0 if vc else 2 * q) for q in range(p)]
            rd = [int(sum(mat[:, r][:q])) + (0 if vc else q) for q in range(p)]
            size = (max(s + c for s, c in zip(sd, mat[r])) + 1) * es
            x = (np.arange(size // es, dtype=np.int32) + 1000 * r)
            xs.append((x, sd, rd))
        for r in range(p):
            x, sd, rd = xs[r]
            rsize = max(d + int(mat[q][r]) for q, d in enumerate(rd)) + 1
            ins.append(w.malloc(r, x.nbytes))
            ins[r].write(x)
            outs.append(w.malloc(r, rsize * es))
            outs[r].write(np.full(rsize, -1, np.int32))
            e = np.full(rsize, -1, np.int32)
            for q in range(p):
                xq, sdq, _ = xs[q]
                c = int(mat[q][r])
                e[rd[q]:rd[q] + c] = xq[sdq[r]:sdq[r] + c]
            exp.append(e)
        for r in range(p):
            x, sd, rd = xs[r]
            acl.rt.set_device(r)
            if vc:
                code = hccl.alltoallvc(int(ins[r]), mat.tolist(), T.HCCL_DATA_TYPE_INT32,
                                       int(outs[r]), T.HCCL_DATA_TYPE_INT32, w.comms[r],
                                       w.streams[r])
            else:
                code = hccl.alltoallv(int(ins[r]), [int(c) for c in mat[r]], sd,
                                      T.HCCL_DATA_TYPE_INT32, int(outs[r]),
                                      [int(c) for c in mat[:, r]], rd, T.HCCL_DATA_TYPE_INT32,
                                      w.comms[r], w.streams[r])
            assert code == 0, acl.get_recent_err_msg()
        assert w.sync() == [0] * p, acl.get_recent_err_msg()
        for r in range(p):
            assert (outs[r].read(np.int32) == exp[r]).all(), (vc, r, outs[r].read(np.int32),
                                                              exp[r])


def test_pythonic_comm(npusim):
    """``npusim.communicator``: Comm methods and HcclError."""
    import npusim as ns
    devs = [ns.Device(id=i) for i in range(3)]
    comms = ns.communicator(devs)
    xs = [d.malloc(40).write(np.arange(10, dtype=np.float32) * (i + 1))
          for i, d in enumerate(devs)]
    ys = [d.malloc(40) for d in devs]
    ss = [d.stream() for d in devs]
    for c, x, y, s in zip(comms, xs, ys, ss):
        c.all_reduce(x, out=y, op="max", stream=s)
    for s in ss:
        s.synchronize()
    for y in ys:
        assert (y.read(np.float32) == np.arange(10) * 3).all()
    for c in comms:
        c.destroy()


def test_pythonic_unknown_op_is_hccl_error(npusim):
    import npusim as ns
    devs = [ns.Device(id=i) for i in range(2)]
    comms = ns.communicator(devs)
    x = devs[0].malloc(16)
    with pytest.raises(ns.HcclError):
        comms[0].all_reduce(x, out=x, op="nope", stream=devs[0].stream())


@pytest.mark.parametrize("p,servers", [(3, 1), (8, 1), (8, 2)])
def test_in_place(acl, tmp_path, p, servers):
    """send == recv (AllReduce, Reduce), AllGather's send inside recv at r*n, ReduceScatter's
    recv inside send at r*n, as PyTorch's collectives pass them."""
    w = World(p) if servers == 1 else World(p, how="table", table=rank_table(
        tmp_path / "rt.json", servers, p // servers))
    n, F = 10, T.HCCL_DATA_TYPE_FP32
    xs = [w.malloc(r, 4 * n * p) for r in range(p)]
    base = [np.arange(n * p, dtype=np.float32) + r for r in range(p)]

    def each(fn):
        for r in range(p):
            acl.rt.set_device(r)
            assert fn(r, int(xs[r]), w.comms[r], w.streams[r]) == 0
        assert w.sync() == [0] * p

    for r in range(p):
        xs[r].write(base[r])
    each(lambda r, x, c, s: hccl.all_reduce(x, x, n * p, F, T.HCCL_REDUCE_SUM, c, s))
    for r in range(p):
        assert (xs[r].read(np.float32) == sum(base)).all()
    for r in range(p):
        xs[r].write(np.full(n * p, r, np.float32))
    each(lambda r, x, c, s: hccl.all_gather(x + 4 * n * r, x, n, F, c, s))
    for r in range(p):
        assert (xs[r].read(np.float32) == np.repeat(np.arange(p, dtype=np.float32), n)).all()
    for r in range(p):
        xs[r].write(base[r])
    each(lambda r, x, c, s: hccl.reduce_scatter(x, x + 4 * n * r, n, F, T.HCCL_REDUCE_SUM, c, s))
    for r in range(p):
        assert (xs[r].read(np.float32)[r * n:(r + 1) * n] == sum(base)[r * n:(r + 1) * n]).all()


@pytest.mark.parametrize("sizes", [[3, 5], [1, 2], [2, 3, 2], [1, 1, 1, 1, 1]],
                         ids=["3+5", "1+2", "2+3+2", "5x1"])
def test_uneven_servers(acl, tmp_path, sizes):
    """Rank tables whose servers hold different rank counts (rhd for 8 ranks, else ring): every
    collective exact."""
    import json
    t, r = {"server_list": []}, 0
    for s, k in enumerate(sizes):
        t["server_list"].append({"server_id": str(s), "device": [
            {"device_id": str(r + i), "rank_id": str(r + i)} for i in range(k)]})
        r += k
    path = tmp_path / "rt.json"
    path.write_text(json.dumps(t))
    p = sum(sizes)
    w = World(p, how="table", table=str(path))
    rs = [s for s, k in enumerate(sizes) for _ in range(k)]
    assert algo.choose("all_reduce", p, rs) == ("rhd" if p == 8 else "ring")
    for kind in KINDS:
        run(w, kind, T.HCCL_DATA_TYPE_FP16, T.HCCL_REDUCE_SUM, root=p - 1)
        run(w, kind, T.HCCL_DATA_TYPE_INT8, T.HCCL_REDUCE_MIN, count=3, root=0)
