"""npusim.hccl.diagnose: the first op where the ranks of a communicator disagree, on synthetic op
logs of 2, 4 and 8 ranks (docs/fidelity.md rows 390-394)."""
from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npusim.errors import ACL_ERROR_RT_TASK_TIMEOUT
from npusim.hccl.diagnose import REASONS, Mismatch, OpRecord, diagnose, explain

FP32, FP16, INT32 = 4, 3, 2
SUM, MAX = 0, 2
RANKS = [2, 4, 8]
REDUCING = {"all_reduce", "reduce", "reduce_scatter"}
ROOTED = {"reduce", "broadcast"}


def rec(i, kind, count=1024, dtype=FP32, op=None, root=None, peer=-1, site=None, graph="",
        extra=()):
    if op is None:
        op = SUM if kind in REDUCING else -1
    if root is None:
        root = 0 if kind in ROOTED else -1
    return OpRecord(i, kind, count, dtype, op, root, peer, site or f"model.py:{100 + i} in step",
                    "s0", graph, extra)


def collectives(n, kinds=("all_reduce",) * 6):
    return [[rec(i, k) for i, k in enumerate(kinds)] for _ in range(n)]


def replace(log, i, **changes):
    log[i] = dataclasses.replace(log[i], **changes)


def check(m: Mismatch, comm, reason, index, ranks):
    assert m is not None
    assert m.reason == reason and m.reason in REASONS
    assert m.comm == comm and m.index == index
    assert set(ranks) <= set(m.ranks)
    assert m.code == ACL_ERROR_RT_TASK_TIMEOUT == 107020 and m.async_error == 0
    top = m.message.splitlines()[0]
    assert top.startswith("EI0002") and f"'{comm}'" in top and f"op #{index}" in top
    for r in ranks:
        assert f"rank {r}" in m.message
    assert "fix: " in m.message
    assert m.headline == top
    return m


# ---- every reason, on 2, 4 and 8 ranks
@pytest.mark.parametrize("n", RANKS)
def test_kind(n):
    logs = collectives(n)
    bad = n - 1
    replace(logs[bad], 3, kind="all_gather", op=-1, site="model.py:77 in other_branch")
    m = check(diagnose("tp", n, logs, [3] * n), "tp", "kind", 3, [0, bad])
    assert f"rank {bad} issued all_gather where rank 0 issued all_reduce" in m.headline
    assert "model.py:103 in step" in m.message and "model.py:77 in other_branch" in m.message
    assert "same collectives in the same order" in m.message


@pytest.mark.parametrize("n", RANKS)
@pytest.mark.parametrize("kind", ["all_reduce", "broadcast", "all_gather", "reduce_scatter",
                                  "alltoall", "reduce"])
def test_count(n, kind):
    logs = collectives(n, (kind,) * 4)
    replace(logs[1], 2, count=512, site="model.py:9 in shard")
    m = check(diagnose("ep", n, logs, [2] * n), "ep", "count", 2, [0, 1])
    assert "count 512" in m.message and "count 1024" in m.message
    assert "model.py:9 in shard" in m.message and "model.py:102 in step" in m.message


@pytest.mark.parametrize("n", RANKS)
def test_dtype(n):
    logs = collectives(n)
    replace(logs[n // 2], 0, dtype=FP16)
    m = check(diagnose("tp", n, logs, [0] * n), "tp", "dtype", 0, [0, n // 2])
    assert "float16" in m.message and "float32" in m.message


@pytest.mark.parametrize("n", RANKS)
def test_reduce_op(n):
    logs = collectives(n)
    replace(logs[0], 4, op=MAX)
    m = check(diagnose("tp", n, logs, [4] * n), "tp", "op", 4, [0, 1])
    assert "max" in m.message and "sum" in m.message


@pytest.mark.parametrize("n", RANKS)
def test_root(n):
    logs = collectives(n, ("broadcast",) * 3)
    replace(logs[n - 1], 1, root=n - 1)
    m = check(diagnose("dp", n, logs, [1] * n), "dp", "root", 1, [0, n - 1])
    assert f"root {n - 1}" in m.message and "root 0" in m.message


@pytest.mark.parametrize("n", RANKS)
def test_alltoallv_pairwise_counts(n):
    def counts(r):
        send = tuple(10 * r + q for q in range(n))      # rank r sends 10r+q to q
        recv = tuple(10 * q + r for q in range(n))      # so q receives 10q+r from... r
        return (("send_counts", send), ("recv_counts", recv))
    logs = [[rec(0, "alltoallv", count=0, extra=counts(r))] for r in range(n)]
    assert diagnose("ep", n, logs, [0] * n) is None
    send, recv = dict(logs[1][0].extra)["send_counts"], dict(logs[1][0].extra)["recv_counts"]
    bad = tuple(c + (1 if q == n - 1 else 0) for q, c in enumerate(send))
    logs[1][0] = dataclasses.replace(logs[1][0],
                                     extra=(("send_counts", bad), ("recv_counts", recv)))
    m = check(diagnose("ep", n, logs, [0] * n), "ep", "count", 0, [1, n - 1])
    want = bad[n - 1], dict(logs[n - 1][0].extra)["recv_counts"][1]
    assert m.headline.endswith(f"rank 1's alltoallv sends {want[0]} to rank {n - 1}, "
                               f"whose recv count from rank 1 is {want[1]}")
    assert "recv count" in m.message


@pytest.mark.parametrize("n", RANKS)
def test_count_matrix_and_vector_counts(n):
    matrix = tuple(range(n * n))
    logs = [[rec(0, "alltoallvc", count=0, extra={"count_matrix": matrix})] for _ in range(n)]
    assert diagnose("ep", n, logs, [0] * n) is None
    logs[n - 1][0] = rec(0, "alltoallvc", count=0, extra={"count_matrix": matrix[::-1]})
    m = check(diagnose("ep", n, logs, [0] * n), "ep", "count", 0, [0, n - 1])
    assert "count matrix differs" in m.headline
    recv = tuple(range(1, n + 1))
    logs = [[rec(0, "all_gather_v", count=r + 1, extra=(("recv_counts", recv),))]
            for r in range(n)]
    assert diagnose("ag", n, logs, [0] * n) is None
    logs[1][0] = dataclasses.replace(logs[1][0], count=7)
    check(diagnose("ag", n, logs, [0] * n), "ag", "count", 0, [0, 1])


@pytest.mark.parametrize("n", RANKS)
def test_graph_replays_of_different_captures(n):
    logs = [[rec(i, "all_reduce", graph="decode#0") for i in range(3)] for _ in range(n)]
    for i in range(3):
        replace(logs[n - 1], i, graph="decode#1")
    m = check(diagnose("tp", n, logs, [0] * n), "tp", "graph", 0, [0, n - 1])
    assert "graph 'decode#1'" in m.message and "graph 'decode#0'" in m.message
    assert "same capture" in m.message


@pytest.mark.parametrize("n", RANKS)
def test_eager_on_one_rank_captured_on_the_others(n):
    logs = [[rec(0, "all_reduce", graph="g")] for _ in range(n)]
    replace(logs[1], 0, graph="")
    m = check(diagnose("tp", n, logs, [0] * n), "tp", "graph", 0, [0, 1])
    assert "the eager path" in m.message


@pytest.mark.parametrize("n", RANKS)
def test_missing(n):
    logs = collectives(n)
    gone = n - 2
    del logs[gone][4:]
    m = check(diagnose("tp", n, logs, [4] * n), "tp", "missing", 4, [gone, 0])
    assert f"rank {gone} never issued all_reduce #4" in m.headline
    assert f"rank {gone}: issued 4 ops" in m.message
    waiting = [r for r in range(n) if r != gone]
    assert "wait for a notify record from rank" in m.message or n == 2
    assert all(f"rank {r}: op #4" in m.message for r in waiting)


def exchange(n, i, count=8, dtype=INT32):
    """Op i of each rank: ranks r and r^1 swap data, the even rank sending first."""
    return [rec(i, "send" if r % 2 == 0 else "recv", count, dtype, peer=r ^ 1) for r in range(n)]


def exchange_back(n, i, count=8, dtype=INT32):
    return [rec(i, "recv" if r % 2 == 0 else "send", count, dtype, peer=r ^ 1) for r in range(n)]


@pytest.mark.parametrize("n", RANKS)
def test_matching_point_to_point_and_collectives_are_no_mismatch(n):
    steps = [exchange(n, 0), exchange_back(n, 1), [rec(2, "all_reduce")] * n, exchange(n, 3)]
    logs = [[step[r] for step in steps] for r in range(n)]
    assert diagnose("pp", n, logs, [0] * n) is None
    assert diagnose("pp", n, logs, [4] * n) is None
    text = explain("pp", n, logs, [4] * n)
    assert "every op completed" in text


@pytest.mark.parametrize("n", RANKS)
def test_order(n):
    # rank 0 sends to rank 1 then all_reduces; rank 1 all_reduces first, then receives
    steps = [[rec(0, "all_reduce")] * n, exchange(n, 1), [rec(2, "all_reduce")] * n]
    logs = [[step[r] for step in steps] for r in range(n)]
    logs[1][1], logs[1][2] = dataclasses.replace(logs[1][2], index=1), \
        dataclasses.replace(logs[1][1], index=2)
    m = check(diagnose("pp", n, logs, [1] * n), "pp", "order", 1, [0, 1])
    assert "issued send to rank 1 at op #1" in m.headline
    assert "its recv only at op #2" in m.headline


@pytest.mark.parametrize("n", RANKS)
def test_order_two_sends_facing_each_other(n):
    logs = [[step[r] for step in (exchange(n, 0), exchange_back(n, 1))] for r in range(n)]
    logs[1] = [rec(0, "send", 8, INT32, peer=0), rec(1, "recv", 8, INT32, peer=0)]
    m = check(diagnose("pp", n, logs, [0] * n), "pp", "order", 0, [0, 1])
    assert m.ranks == (0, 1)


@pytest.mark.parametrize("n", RANKS)
def test_unmatched_send(n):
    logs = [[rec(0, "all_reduce")] for _ in range(n)]
    logs[n - 1].append(rec(1, "send", 8, INT32, peer=0, site="pipe.py:5 in forward"))
    m = check(diagnose("pp", n, logs, [1] * n), "pp", "unmatched_send", 1, [n - 1, 0])
    assert f"rank {n - 1}'s send to rank 0 (op #1) has no matching recv on rank 0" in m.headline
    assert "pipe.py:5 in forward" in m.message


@pytest.mark.parametrize("n", RANKS)
def test_unmatched_recv(n):
    logs = [[rec(0, "all_reduce")] for _ in range(n)]
    logs[1].insert(0, rec(0, "recv", 8, INT32, peer=0, site="pipe.py:8 in backward"))
    logs[1][1] = dataclasses.replace(logs[1][1], index=1)
    m = check(diagnose("pp", n, logs, [0] * n), "pp", "unmatched_send", 0, [1, 0])
    assert "rank 1's recv from rank 0 (op #0) has no matching send on rank 0" in m.headline
    assert "pipe.py:8 in backward" in m.message


@pytest.mark.parametrize("n", RANKS)
def test_peer_wrong(n):
    logs = [[rec(0, "send", 8, INT32, peer=1)], [rec(0, "recv", 8, INT32, peer=n - 1)]]
    logs += [[] for _ in range(n - 2)]
    m = check(diagnose("pp", n, logs, [0] * n), "pp", "peer", 0, [0, 1])
    assert f"rank 1 recvs from rank {n - 1}" in m.headline


@pytest.mark.parametrize("n", RANKS)
@pytest.mark.parametrize("peer", [-1, "self", "big"])
def test_peer_not_a_rank(n, peer):
    q = {-1: -1, "self": 0, "big": n}[peer]
    logs = [[rec(0, "send", 8, INT32, peer=q)]] + [[] for _ in range(n - 1)]
    m = check(diagnose("pp", n, logs, [0] * n), "pp", "peer", 0, [0])
    assert f"names rank {q}" in m.headline


@pytest.mark.parametrize("n", RANKS)
def test_p2p_count_and_dtype(n):
    steps = [exchange(n, 0)]
    logs = [[step[r] for step in steps] for r in range(n)]
    replace(logs[1], 0, count=4)
    m = check(diagnose("pp", n, logs, [0] * n), "pp", "count", 0, [0, 1])
    assert "count 8 on rank 0, count 4 on rank 1" in m.headline
    logs = [[step[r] for step in steps] for r in range(n)]
    replace(logs[n - 1], 0, dtype=FP16)
    m = check(diagnose("pp", n, logs, [0] * n), "pp", "dtype", 0, [n - 2, n - 1])


@pytest.mark.parametrize("n", RANKS)
def test_destroyed(n):
    logs = collectives(n, ("all_reduce",) * 3)
    assert diagnose("tp", n, logs, [3] * n, destroyed=True) is None      # all ran before
    m = check(diagnose("tp", n, logs, [2] * n, destroyed=True), "tp", "destroyed", 2,
              list(range(n)))
    assert "destroyed" in m.headline and "HcclCommDestroy" in m.message


def test_the_first_disagreement_wins():
    logs = collectives(4)
    replace(logs[2], 5, kind="broadcast", op=-1, root=0)
    replace(logs[3], 1, count=7)
    m = diagnose("tp", 4, logs, [0] * 4)
    assert (m.reason, m.index) == ("count", 1) and 3 in m.ranks


def test_the_odd_rank_out_is_named_against_the_majority():
    logs = collectives(8)
    replace(logs[0], 2, kind="all_gather", op=-1)
    m = diagnose("tp", 8, logs, [2] * 8)
    assert m.headline.endswith("rank 0 issued all_gather where rank 1 issued all_reduce")
    assert "ranks 2, 3, 4, 5, 6, 7: op #2 all_reduce like rank 1, waiting" in m.message


def test_message_lines_are_short_and_the_top_line_self_sufficient():
    logs = collectives(4)
    replace(logs[1], 3, kind="all_gather", op=-1)
    m = diagnose("tp", 4, logs, [3] * 4)
    top = m.message.splitlines()[0]
    assert top == ("EI0002 notify wait timeout, comm 'tp' op #3: "
                   "rank 1 issued all_gather where rank 0 issued all_reduce")
    assert "107020 ACL_ERROR_RT_TASK_TIMEOUT" in m.message
    assert "HcclGetCommAsyncError: 0 (HCCL_SUCCESS)" in m.message
    assert all(len(line) <= 100 for line in m.message.splitlines())


def test_explain_who_waits_for_whom():
    n = 4
    logs = [[rec(i, "all_reduce") for i in range(4)] for _ in range(n)]
    for r in (0, 1, 3):
        logs[r].append(rec(4, "all_reduce"))
    logs[2].append(rec(4, "send", 8, INT32, peer=3))
    text = explain("tp", n, logs, [4] * n)
    assert "comm 'tp' (4 ranks)" in text
    assert "rank 0: 4 of 5 ops done, waits in all_reduce #4" in text
    assert "3 of 4 ranks reached it; rank 2 is at op #4 send to rank 3, whose recv is missing" \
        in text
    assert "first mismatch:" in text and "unmatched" not in text.splitlines()[0]


def test_explain_without_a_mismatch_still_says_who_waits():
    logs = [[rec(i, "all_reduce", site=f"m.py:{i}") for i in range(2)] for _ in range(2)]
    text = explain("tp", 2, logs, [1, 2])
    assert "rank 0: 1 of 2 ops done, waits in all_reduce #1 at m.py:1" in text
    assert "    (1 of 2 ranks reached it; rank 1 has no op left to run)" in text
    assert "rank 1: all 2 ops done" in text
    assert "no mismatch" in text


def test_bad_input_raises():
    with pytest.raises(ValueError):
        diagnose("tp", 2, [[]], [0, 0])
    with pytest.raises(ValueError):
        explain("tp", 2, [[], []], [0])


def test_records_are_frozen_and_carry_extra():
    r = rec(0, "alltoallv", extra=(("send_counts", (1, 2)),))
    assert r.get("send_counts") == (1, 2) and r.get("recv_counts") is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.count = 3


# ---- no false positives; one mutation found where it was made
KINDS = ["all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "alltoall"]
step = st.one_of(
    st.tuples(st.just("coll"), st.sampled_from(KINDS), st.integers(1, 4096),
              st.sampled_from([FP32, FP16, INT32]), st.sampled_from([SUM, MAX]),
              st.integers(0, 1)),
    st.tuples(st.just("p2p"), st.booleans(), st.integers(1, 64), st.sampled_from([FP32, INT32])),
)


def build(n, steps):
    logs = [[] for _ in range(n)]
    for i, s in enumerate(steps):
        if s[0] == "coll":
            _, kind, count, dtype, op, root = s
            for r in range(n):
                logs[r].append(rec(i, kind, count, dtype, op if kind in REDUCING else -1,
                                   root if kind in ROOTED else -1, site=f"m.py:{i}"))
        else:
            _, forth, count, dtype = s
            ops = (exchange if forth else exchange_back)(n, i, count, dtype)
            for r in range(n):
                logs[r].append(ops[r])
    return logs


@settings(max_examples=80, deadline=None)
@given(n=st.sampled_from(RANKS), steps=st.lists(step, max_size=12), data=st.data())
def test_identical_sequences_never_mismatch(n, steps, data):
    logs = build(n, steps)
    done = [data.draw(st.integers(0, len(steps)))] * n
    assert diagnose("c", n, logs, done) is None
    assert "no mismatch" in explain("c", n, logs, done) or all(d == len(steps) for d in done)


@settings(max_examples=150, deadline=None)
@given(n=st.sampled_from(RANKS), steps=st.lists(step, min_size=1, max_size=12), data=st.data())
def test_one_mutation_is_found_at_its_index(n, steps, data):
    logs = build(n, steps)
    i = data.draw(st.integers(0, len(steps) - 1), label="index")
    r = data.draw(st.integers(0, n - 1), label="rank")
    old = logs[r][i]
    choices = ["truncate", "count", "dtype"]
    if old.kind not in ("send", "recv"):
        choices.append("kind")
        if old.kind in REDUCING:
            choices.append("op")
        if old.kind in ROOTED:
            choices.append("root")
    what = data.draw(st.sampled_from(choices), label="mutation")
    if what == "truncate":
        del logs[r][i:]
    elif what == "count":
        replace(logs[r], i, count=old.count + 1)
    elif what == "dtype":
        replace(logs[r], i, dtype=FP16 if old.dtype != FP16 else FP32)
    elif what == "kind":
        new = next(k for k in KINDS if k != old.kind)
        replace(logs[r], i, kind=new, op=SUM if new in REDUCING else -1,
                root=0 if new in ROOTED else -1)
    elif what == "op":
        replace(logs[r], i, op=MAX if old.op != MAX else SUM)
    else:
        replace(logs[r], i, root=old.root + 1)
    m = diagnose("c", n, logs, [0] * n)
    assert m is not None and m.index == i and r in m.ranks
    expected = {"truncate": {"missing", "unmatched_send"}}.get(what, {what})
    assert m.reason in expected
    assert f"comm 'c' op #{i}" in m.headline


def _same_op(a: OpRecord, b: OpRecord) -> bool:
    return dataclasses.replace(a, index=0, site="") == dataclasses.replace(b, index=0, site="")


@settings(max_examples=150, deadline=None)
@given(n=st.sampled_from(RANKS), steps=st.lists(step, min_size=2, max_size=10), data=st.data())
def test_two_ops_swapped_on_one_rank_are_found_at_the_first(n, steps, data):
    logs = build(n, steps)
    r = data.draw(st.integers(0, n - 1), label="rank")
    swappable = [i for i in range(len(steps) - 1) if not _same_op(logs[r][i], logs[r][i + 1])]
    if not swappable:
        return
    i = data.draw(st.sampled_from(swappable), label="index")
    a, b = logs[r][i], logs[r][i + 1]
    logs[r][i], logs[r][i + 1] = (dataclasses.replace(b, index=i),
                                  dataclasses.replace(a, index=i + 1))
    m = diagnose("c", n, logs, [0] * n)
    assert m is not None and m.index == i and r in m.ranks
