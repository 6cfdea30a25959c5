"""npusim.hccl.algo and npusim.hccl.types: schedules give the collective's result in any order
their notifies allow, never double-post a notify when ranks run ahead across collectives, and
cost what HCCL's alpha-beta closed forms say (spec/hccl.md §5; docs/fidelity.md rows 380-389)."""
from __future__ import annotations

import functools
import random

import numpy as np
import pytest

from npusim.hccl import algo as A
from npusim.hccl import cost as C
from npusim.hccl import types as T
from npusim.profiles import Timing

INT = T.HCCL_DATA_TYPE_INT32
SUM, PROD, MAX, MIN = range(4)
FLOATS = {T.HCCL_DATA_TYPE_FP16: np.float16, T.HCCL_DATA_TYPE_FP32: np.float32,
          T.HCCL_DATA_TYPE_FP64: np.float64}


# ---------------------------------------------------------------- types
def test_result_codes_and_texts_are_hccl_types_h():
    assert (T.HCCL_SUCCESS, T.HCCL_E_PARA, T.HCCL_E_TIMEOUT, T.HCCL_E_RUNTIME) == (0, 1, 9, 15)
    assert (T.HCCL_E_AGAIN, T.HCCL_E_REMOTE, T.HCCL_E_OOM, T.HCCL_E_IN_STATUS) == (20, 21, 24, 1041)
    assert T.get_error_string(0) == "no error"
    assert T.get_error_string(T.HCCL_E_PARA) == "parameter error"
    assert T.get_error_string(T.HCCL_E_REMOTE) == "error cqe"
    for code in (-1, 22, 24, 1041, 1042, 99999, None, "x"):
        assert T.get_error_string(code) == "unknow error"
    assert T.RESULT_NAMES[9] == "HCCL_E_TIMEOUT"


def test_data_types_sizes_and_constants():
    assert (T.HCCL_DATA_TYPE_FP16, T.HCCL_DATA_TYPE_FP32, T.HCCL_DATA_TYPE_BFP16) == (3, 4, 11)
    assert T.data_type_size(T.HCCL_DATA_TYPE_INT128) == 16
    assert T.data_type_size(T.HCCL_DATA_TYPE_FP8E4M3) == 1
    assert T.data_type_size(13) == 0 and T.data_type_size(None) == 0
    assert len(T.DATA_TYPE_SIZE) == 17
    assert T.HCCL_ROOT_INFO_BYTES == 4108
    assert T.HCCL_BUFFSIZE_DEFAULT_MB == 200 and T.HCCL_EXEC_TIMEOUT_DEFAULT_S == 1836
    cfg = T.comm_config_defaults()
    assert cfg["hcclBufferSize"] == T.HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET
    assert cfg["hcclOpExpansionMode"] == 0 and cfg["hcclCommName"] == ""


# ---------------------------------------------------------------- helpers
def servers_of(p: int, n_servers: int) -> list[int]:
    return [r * n_servers // p for r in range(p)]


def values(rng, dtype, op, shape, p):
    """Values whose reduction is exact in every order (see the module docstring)."""
    if dtype == T.HCCL_DATA_TYPE_BFP16:
        f = values(rng, T.HCCL_DATA_TYPE_FP32, op, shape, p)
        return (f.view(np.uint32) >> 16).astype(np.uint16)
    if dtype in FLOATS:
        if op == PROD:
            pool = [-1.0, 1.0, 2.0] if p <= 8 else [-1.0, 1.0]
            return rng.choice(pool, size=shape).astype(FLOATS[dtype])
        return rng.integers(-4, 5, size=shape).astype(FLOATS[dtype])
    t = A._NP[dtype]
    info = np.iinfo(t)
    return rng.integers(info.min, info.max, size=shape, dtype=t, endpoint=True)


def to_float(x, dtype):
    if dtype == T.HCCL_DATA_TYPE_BFP16:
        return (x.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return x.astype(np.float64)


def reference(arrays, dtype, op):
    """The element-wise reduction of ``arrays``: floats exactly in float64, integers wrapping
    in their own type."""
    if dtype in FLOATS or dtype == T.HCCL_DATA_TYPE_BFP16:
        fs = [to_float(a, dtype) for a in arrays]
        f = {SUM: np.add, PROD: np.multiply, MAX: np.maximum, MIN: np.minimum}[op]
        out = functools.reduce(f, fs)
        if dtype == T.HCCL_DATA_TYPE_BFP16:
            return (out.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
        return out.astype(FLOATS[dtype])
    f = {SUM: np.add, PROD: np.multiply, MAX: np.maximum, MIN: np.minimum}[op]
    with np.errstate(all="ignore"):
        return functools.reduce(lambda a, b: f(a, b).astype(a.dtype), arrays)


def np_type(dtype):
    return np.uint16 if dtype == T.HCCL_DATA_TYPE_BFP16 else A._NP[dtype]


def run(kind, p, n_servers, count, dtype=INT, op=SUM, algorithm=None, root=0, seed=0, pick=None,
        counts=None, peer=-1):
    """Build, fill and execute one collective; returns (inputs per rank, outputs per rank)."""
    rng = np.random.default_rng(seed)
    kw = {}
    if kind == "alltoallv":
        sc = counts
        rc = [[sc[q][r] for q in range(p)] for r in range(p)]
        sd = [list(np.cumsum([0] + sc[r][:-1])) for r in range(p)]
        rd = [list(np.cumsum([0] + rc[r][:-1])) for r in range(p)]
        kw = dict(send_counts=sc, sdispls=sd, recv_counts=rc, rdispls=rd)
    s = A.schedule(kind, p, servers_of(p, n_servers), count, dtype, op, root=root,
                   algorithm=algorithm, peer=peer, **kw)
    t = np_type(dtype)
    es = T.DATA_TYPE_SIZE[dtype]
    in_elems = {"all_reduce": count, "reduce_scatter": p * count, "all_gather": count,
                "broadcast": count, "reduce": count, "scatter": p * count,
                "alltoall": p * count, "send": count, "barrier": 0}
    if kind == "alltoallv":
        ins = [values(rng, dtype, op, sum(counts[r]), p) for r in range(p)]
    else:
        ins = [values(rng, dtype, op, in_elems[kind], p) for r in range(p)]
    out_elems = {"all_reduce": count, "reduce_scatter": count, "all_gather": p * count,
                 "broadcast": count, "reduce": count, "scatter": count, "alltoall": p * count,
                 "send": count, "barrier": 0}
    bufs = []
    for r in range(p):
        no = sum(counts[q][r] for q in range(p)) if kind == "alltoallv" else out_elems[kind]
        out = np.full(no * es + 8, 0xEE, np.uint8)
        b = {"in": ins[r].view(np.uint8).copy(), "out": out,
             "scratch": np.zeros(s.scratch_bytes, np.uint8)}
        if kind == "broadcast":                     # one user buffer: in is out
            b["out"][:count * es] = b["in"]
            b["in"] = b["out"]
        bufs.append(b)
        assert s.in_bytes[r] <= len(b["in"]) and s.out_bytes[r] <= len(b["out"])
    A.execute(s, bufs, dtype, op, pick=pick)
    for r in range(p):
        tail = bufs[r]["out"][-8:]
        assert (tail == 0xEE).all(), f"rank {r} wrote past its output"
    outs = [bufs[r]["out"][:len(bufs[r]["out"]) - 8].view(t) for r in range(p)]
    return s, ins, outs


def expect(kind, ins, p, count, dtype, op, root=0, counts=None, peer=-1):
    """What every rank's output must hold (None: not written / not checked)."""
    if kind == "all_reduce":
        red = reference(ins, dtype, op)
        return [red] * p
    if kind == "reduce_scatter":
        red = reference(ins, dtype, op)
        return [red[r * count:(r + 1) * count] for r in range(p)]
    if kind == "all_gather":
        return [np.concatenate(ins)] * p
    if kind == "broadcast":
        return [ins[root]] * p
    if kind == "reduce":
        return [reference(ins, dtype, op) if r == root else None for r in range(p)]
    if kind == "scatter":
        return [ins[root][r * count:(r + 1) * count] for r in range(p)]
    if kind == "alltoall":
        return [np.concatenate([ins[q][r * count:(r + 1) * count] for q in range(p)])
                for r in range(p)]
    if kind == "alltoallv":
        out = []
        for r in range(p):
            parts = []
            for q in range(p):
                off = sum(counts[q][:r])
                parts.append(ins[q][off:off + counts[q][r]])
            out.append(np.concatenate(parts))
        return out
    if kind == "send":
        return [ins[root] if r == peer else None for r in range(p)]
    return [None] * p


ALGOS = {
    "all_reduce": ["mesh", "ring", "rhd", "hierarchical"],
    "reduce_scatter": ["mesh", "ring", "rhd"],
    "all_gather": ["mesh", "ring", "rhd"],
    "broadcast": ["mesh", "ring"],
    "reduce": ["mesh", "ring"],
    "scatter": ["mesh"],
    "alltoall": ["mesh", "pairwise"],
    "alltoallv": ["mesh", "pairwise"],
    "send": ["p2p"],
    "barrier": ["mesh"],
}


def applicable(kind, algo, p, n_servers):
    if algo == "rhd" and p & (p - 1):
        return False
    if algo == "hierarchical":
        return n_servers > 1 and p % n_servers == 0 and p // n_servers > 1
    return True


CASES = [(kind, algo, p, ns_) for kind, algos in ALGOS.items() for algo in algos
         for p in (2, 3, 4, 8, 16) for ns_ in (1, 2) if applicable(kind, algo, p, ns_)]


def check(kind, algo, p, n_servers, count, dtype=INT, op=SUM, seed=0, pick=None, root=None):
    root = (p - 1 if root is None else root) if kind not in ("send",) else 0
    peer = p - 1 if kind == "send" else -1
    counts = None
    if kind == "alltoallv":
        rng = random.Random(seed)
        counts = [[rng.randrange(0, count + 2) for _ in range(p)] for _ in range(p)]
    s, ins, outs = run(kind, p, n_servers, count, dtype, op, algorithm=algo, root=root,
                       seed=seed, pick=pick, counts=counts, peer=peer)
    exp = expect(kind, ins, p, count, dtype, op, root=root, counts=counts, peer=peer)
    for r in range(p):
        if exp[r] is not None:
            got = outs[r][:len(exp[r])]
            assert got.tobytes() == np.asarray(exp[r]).tobytes(), \
                f"{kind}/{algo} p={p} servers={n_servers} count={count} rank {r}"
    return s


@pytest.mark.parametrize("kind,algo,p,n_servers", CASES)
def test_every_collective_gives_its_result(kind, algo, p, n_servers):
    for count in (0, 1, 37):
        s = check(kind, algo, p, n_servers, count)
        for r, steps in enumerate(s.per_rank):
            for st in steps:
                assert 0 <= st.stream <= s.streams
                if st.kind in ("copy", "reduce"):
                    assert st.dst[0] == r                       # a pull: own buffers only
                    assert st.src[0] == r or st.src[1] == "scratch"
                    want = "local" if st.src[0] == r else (
                        "hccs" if servers_of(p, n_servers)[st.src[0]] ==
                        servers_of(p, n_servers)[r] else "rdma")
                    assert st.link == want


@pytest.mark.parametrize("kind,algo,p", [
    (kind, algo, p) for kind in ("all_reduce", "reduce_scatter", "reduce")
    for algo in ALGOS[kind] for p in (3, 4) if applicable(kind, algo, p, 2)])
def test_every_dtype_and_op(kind, algo, p):
    for dtype in sorted(T.REDUCIBLE_TYPES):
        for op in (SUM, PROD, MAX, MIN):
            check(kind, algo, p, 2 if algo == "hierarchical" else 1, 12, dtype, op,
                  seed=dtype * 4 + op)


def test_moves_copy_any_dtype():
    for dtype in sorted(T.DATA_TYPE_SIZE):
        if dtype in T.REDUCIBLE_TYPES:
            continue
        s = A.schedule("all_gather", 4, [0] * 4, 5, dtype)
        es = T.DATA_TYPE_SIZE[dtype]
        bufs = [{"in": np.full(5 * es, r, np.uint8), "out": np.zeros(20 * es, np.uint8),
                 "scratch": np.zeros(s.scratch_bytes, np.uint8)} for r in range(4)]
        A.execute(s, bufs, dtype)
        assert bufs[2]["out"].tobytes() == bytes(np.repeat(np.arange(4, dtype=np.uint8), 5 * es))
        with pytest.raises(ValueError):
            A.execute(A.schedule("all_reduce", 2, [0, 0], 1, dtype), [
                {"in": np.zeros(es, np.uint8), "out": np.zeros(es, np.uint8),
                 "scratch": np.zeros(es, np.uint8)} for _ in range(2)], dtype)


@pytest.mark.parametrize("seed", range(6))
def test_any_order_the_notifies_allow_gives_the_same_result(seed):
    """Random interleavings of the ranks' streams: a missing sync (a read before the write it
    needs, a write over data a peer still reads) would change the integers somewhere."""
    rng = random.Random(seed)

    def pick(ready):
        return rng.randrange(len(ready))
    for kind, algo, p, ns_ in CASES:
        if p <= 8:
            check(kind, algo, p, ns_, 5, seed=seed, pick=pick)


def test_mesh_uses_p_minus_2_side_streams():
    # ins_temp_all_gather_mesh_1D.cc GetRes: threads = rankSize - 1, the first one the
    # user's stream, slaveThreadNum = threads - 1
    for p in (2, 3, 8, 16):
        assert A.schedule("all_reduce", p, [0] * p, 64, INT, algorithm="mesh").streams == p - 2
    assert A.schedule("all_reduce", 8, [0] * 8, 64, INT, algorithm="ring").streams == 0
    assert A.schedule("all_reduce", 16, servers_of(16, 2), 64, INT).streams == 6


# ---------------------------------------------------------------- the notify protocol
def run_ahead_picks():
    """Adversarial schedulers: one rank runs as far as it can before any other moves (lowest
    first, highest first), or random."""
    def lowest(ready):
        return min(range(len(ready)), key=lambda i: ready[i])

    def highest(ready):
        return max(range(len(ready)), key=lambda i: ready[i])
    rng = random.Random(7)
    return [lowest, highest, lambda ready: rng.randrange(len(ready))]


@pytest.mark.parametrize("p,n_servers", [(2, 1), (3, 1), (4, 1), (4, 2), (8, 2), (16, 2)])
def test_back_to_back_collectives_never_double_post(p, n_servers):
    rs = servers_of(p, n_servers)
    seq = []
    for kind, algos in ALGOS.items():
        for algo in algos:
            if not applicable(kind, algo, p, n_servers):
                continue
            if kind == "alltoallv":
                c = [[1] * p for _ in range(p)]
                d = [list(range(p)) for _ in range(p)]
                seq.append(A.schedule(kind, p, rs, 0, INT, send_counts=c, sdispls=d,
                                      recv_counts=c, rdispls=d, algorithm=algo))
            elif kind == "send":
                seq.append(A.schedule("send", p, rs, 3, INT, root=0, peer=p - 1))
                seq.append(A.schedule("send", p, rs, 3, INT, root=p - 1, peer=0))
            else:
                seq.append(A.schedule(kind, p, rs, 8, INT, algorithm=algo, root=p // 2))
    seq = seq + seq[::-1] + seq          # every pair of kinds back to back, both ways
    per_rank = [[st for s in seq for st in s.per_rank[r]] for r in range(p)]
    for pick in run_ahead_picks():
        A.walk(per_rank, pick=pick)


def test_tags_are_unique_per_channel_inside_a_collective():
    for kind, algo, p, ns_ in CASES:
        if kind in ("alltoallv",):
            continue
        kw = dict(peer=p - 1) if kind == "send" else dict(algorithm=algo)
        s = A.schedule(kind, p, servers_of(p, ns_), 4, INT, **kw)
        for r, steps in enumerate(s.per_rank):
            posts = [(st.peer, st.tag) for st in steps if st.kind == "post"]
            assert len(posts) == len(set(posts)), (kind, algo, p, r)
            chans = {st.peer for st in steps if st.kind == "post"}
            for q in chans:                    # every channel opens with PRE, closes with END
                tags = [st.tag for st in steps if st.kind == "post" and st.peer == q]
                assert tags[0] == A.TAG_PRE and tags[-1] == A.TAG_END, (kind, algo, r, q)


def test_walk_reports_a_double_post_and_a_deadlock():
    post, wait = (lambda q, t: A.Step("post", 0, peer=q, tag=t)), \
        (lambda q, t: A.Step("wait", 0, peer=q, tag=t))
    with pytest.raises(A.ProtocolError):
        A.walk([[post(1, 5), post(1, 5)], [wait(0, 5), wait(0, 5)]], pick=lambda ready: min(
            range(len(ready)), key=lambda i: ready[i]))
    A.walk([[post(1, 5), post(1, 5)], [wait(0, 5), wait(0, 5)]])     # FIFO happens to be safe
    with pytest.raises(A.DeadlockError, match="rank 0 stream 0: wait peer 1 tag 5"):
        A.walk([[wait(1, 5), post(1, 6)], [wait(0, 6), post(0, 5)]])
    with pytest.raises(A.DeadlockError):
        C.critical_path_ns(A.Schedule("x", 2, "mesh", 0, [[wait(1, 5)], [wait(0, 5)]], 0),
                           Timing())


# ---------------------------------------------------------------- choice and cost
def test_choose_follows_hccl():
    assert A.choose("all_reduce", 8, [0] * 8, 1 << 20) == "mesh"
    assert A.choose("all_reduce", 16, servers_of(16, 2), 1 << 20) == "hierarchical"
    assert A.choose("all_reduce", 4, [0, 1, 2, 3], 1 << 20) == "rhd"
    assert A.choose("all_reduce", 3, [0, 1, 2], 1 << 20) == "ring"
    assert A.choose("all_reduce", 3, [0, 0, 1], 1 << 20) == "ring"
    assert A.choose("reduce_scatter", 8, servers_of(8, 2), 64) == "rhd"
    assert A.choose("all_gather", 6, servers_of(6, 2), 64) == "ring"
    assert A.choose("alltoallv", 8, servers_of(8, 2), 64) == "pairwise"
    assert A.choose("alltoall", 8, [0] * 8, 64) == "mesh"
    assert A.choose("send", 8, [0] * 8, 64) == "p2p"
    assert A.choose("broadcast", 8, servers_of(8, 2), 64) == "ring"
    for kind in A.KINDS:
        s = A.schedule(kind, 1, [0], 4, INT) if kind not in ("send", "recv", "alltoallv") \
            else None
        if s is not None:
            assert s.n_ranks == 1


def test_step_ns_is_alpha_beta_gamma():
    t = Timing()
    hc = A.Step("copy", 0, src=(1, "scratch", 0), dst=(0, "out", 0), nbytes=18_300, link="hccs")
    assert C.step_ns(hc, t) == t.hccl_alpha_ns + 1000
    rd = A.Step("reduce", 0, src=(1, "scratch", 0), dst=(0, "out", 0), nbytes=20_000, link="rdma")
    assert C.step_ns(rd, t) == t.hccl_alpha_ns + 1000 + 100
    lc = A.Step("copy", 0, src=(0, "in", 0), dst=(0, "scratch", 0), nbytes=600_000, link="local")
    assert C.step_ns(lc, t) == 1000
    assert C.step_ns(A.Step("post", 0, peer=1, tag=3), t) == 0
    assert (t.hccl_hccs_bytes_per_us, t.hccl_rdma_bytes_per_us) == (18_300, 20_000)


@pytest.mark.parametrize("kind,algo", [("all_reduce", "mesh"), ("all_reduce", "ring"),
                                       ("all_reduce", "rhd"), ("all_gather", "mesh"),
                                       ("reduce_scatter", "mesh"), ("all_gather", "ring"),
                                       ("all_gather", "rhd"), ("reduce_scatter", "ring"),
                                       ("reduce_scatter", "rhd"), ("broadcast", "mesh"),
                                       ("reduce", "mesh"), ("scatter", "mesh")])
@pytest.mark.parametrize("p,n_servers", [(2, 1), (4, 1), (8, 1), (4, 2), (8, 2)])
def test_critical_path_is_the_closed_form(kind, algo, p, n_servers):
    if algo == "mesh" and n_servers > 1:
        return
    t = Timing()
    for count in (p * 64, p * 65_536):
        s = A.schedule(kind, p, servers_of(p, n_servers), count, INT, algorithm=algo,
                       root=p - 1)
        n = count * 4 * (1 if kind in ("all_reduce", "broadcast", "reduce") else p)  # docs' n
        cf = C.closed_form(kind, algo, n, p, t, servers=n_servers, local_copies=True)
        cp = C.critical_path_ns(s, t)
        assert abs(cp - cf) <= t.hccl_alpha_ns, (kind, algo, p, n_servers, count, cp, cf)


def test_closed_forms_of_the_docs():
    t = Timing()
    a = t.hccl_alpha_ns
    assert C.closed_form("all_reduce", "ring", 0, 8, t) == 14 * a
    assert C.closed_form("all_reduce", "rhd", 0, 8, t) == 6 * a
    assert C.closed_form("all_reduce", "mesh", 0, 8, t) == 2 * a
    assert C.closed_form("all_gather", "mesh", 8 * 18_300, 8, t) == a + 1000
    hier = C.closed_form("all_reduce", "hierarchical", 1 << 20, 16, t, servers=2)
    assert hier > C.closed_form("all_reduce", "mesh", 1 << 20, 8, t)
    with pytest.raises(ValueError):
        C.closed_form("alltoall", "pairwise", 1, 2, t)


def test_hierarchical_all_reduce_with_a_ring_between_three_servers():
    for p in (6, 12):
        rs = servers_of(p, 3)
        assert A.choose("all_reduce", p, rs, 1 << 20) == "hierarchical"
        s, ins, outs = run("all_reduce", p, 3, 29)
        red = reference(ins, INT, SUM)
        assert all(o[:29].tobytes() == red.tobytes() for o in outs)
        assert C.critical_path_ns(s, Timing()) > 0


@pytest.mark.parametrize("kind,algo,p,n_servers", CASES)
def test_every_schedule_has_a_critical_path(kind, algo, p, n_servers):
    kw = dict(peer=p - 1) if kind == "send" else dict(algorithm=algo)
    if kind == "alltoallv":
        c = [[2] * p for _ in range(p)]
        d = [[2 * q for q in range(p)] for _ in range(p)]
        kw.update(send_counts=c, sdispls=d, recv_counts=c, rdispls=d)
    s = A.schedule(kind, p, servers_of(p, n_servers), 64, INT, **kw)
    t = C.critical_path_ns(s, Timing())
    assert (t > 0) == (kind != "barrier")
    assert t >= max(C.step_ns(st, Timing()) for steps in s.per_rank for st in steps)
