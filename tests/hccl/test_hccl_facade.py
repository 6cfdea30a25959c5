"""``npusim.hccl`` facade: every function with hostile values returns a code and never raises
(nothing reaches ``api.ESCAPES``); the codes follow hccl's check order (``src/ops/*/*_op.cc``,
docs/fidelity.md rows 410-413); hypothesis over the collectives' arguments."""
from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.hccl_world import World
from npusim import acl, hccl
from npusim.hccl import api as A
from npusim.hccl import types as T

FP32, SUM = T.HCCL_DATA_TYPE_FP32, T.HCCL_REDUCE_SUM
HOSTILE = [None, 0, -1, 1.5, math.nan, math.inf, "x", "", 2 ** 70, -2 ** 70, True, [], {},
           [1, 2], b"\0" * 8, object(), np.int64(3), np.array([1, 2])]
CODES = set(T.RESULT_NAMES)


@pytest.fixture
def w(acl):
    A.ESCAPES.clear()
    return World(2)


@pytest.fixture
def bufs(w):
    return [w.malloc(r, 4096) for r in range(2)], [w.malloc(r, 4096) for r in range(2)]


def _valid_args(w, bufs, name):
    ins, outs = bufs
    c, s = w.comms[0], w.streams[0]
    x, y = int(ins[0]), int(outs[0])
    item = {"sendRecvType": T.HCCL_SEND, "buf": x, "count": 4, "dataType": FP32,
            "remoteRank": 1}
    return {
        "all_reduce": (x, y, 4, FP32, SUM, c, s),
        "broadcast": (x, 4, FP32, 0, c, s),
        "reduce_scatter": (x, y, 4, FP32, SUM, c, s),
        "all_gather": (x, y, 4, FP32, c, s),
        "reduce": (x, y, 4, FP32, SUM, 0, c, s),
        "scatter": (x, y, 4, FP32, 0, c, s),
        "alltoall": (x, 4, FP32, y, 4, FP32, c, s),
        "alltoallv": (x, [4, 4], [0, 4], FP32, y, [4, 4], [0, 4], FP32, c, s),
        "alltoallvc": (x, [4, 4, 4, 4], FP32, y, FP32, c, s),
        "send": (x, 4, FP32, 1, c, s),
        "recv": (y, 4, FP32, 1, c, s),
        "batch_send_recv": ([item], 1, c, s),
        "barrier": (c, s),
        "comm_destroy": (c,),
        "get_rank_size": (c,),
        "get_rank_id": (c,),
        "get_comm_async_error": (c,),
        "comm_init_root_info": (2, b"", 0),
        "comm_init_root_info_config": (2, b"", 0, {}),
        "comm_init_cluster_info": ("/nonexistent.json", 0),
        "comm_init_all": (2, [0, 1]),
    }[name]


def _shape_ok(r, outputs):
    if outputs:
        return isinstance(r, tuple) and len(r) == outputs + 1 and r[-1] in CODES
    return isinstance(r, int) and r in CODES


NO_SYNC = {"send", "recv", "comm_destroy", "comm_init_root_info", "comm_init_root_info_config",
           "comm_init_cluster_info", "comm_init_all", "barrier", "batch_send_recv", "all_reduce",
           "broadcast", "reduce_scatter", "all_gather", "reduce", "scatter", "alltoall",
           "alltoallv", "alltoallvc", "get_rank_size", "get_rank_id", "get_comm_async_error"}


@pytest.mark.parametrize("name", sorted(NO_SYNC))
def test_hostile_values_give_codes(w, bufs, name):
    """Each argument position in turn takes each hostile value: a code, no escape, and a
    non-zero code leaves a reason in acl.get_recent_err_msg()."""
    fn = getattr(hccl, name)
    outputs = fn.__wrapped_outputs__
    args = _valid_args(w, bufs, name)
    assert len(args) == len(inspect.signature(fn).parameters)
    for i in range(len(args)):
        for h in HOSTILE:
            a = list(args)
            a[i] = h
            if name == "comm_destroy" or (name.startswith("comm_init") and _int_like(h)):
                continue        # a valid-looking value here makes or frees a real comm
            r = fn(*a)
            assert _shape_ok(r, outputs), (name, i, h, r)
            code = r[-1] if outputs else r
            if code:
                assert acl.get_recent_err_msg(), (name, i, h)
    assert A.ESCAPES == [], A.ESCAPES


def _int_like(h):
    return False


def test_comm_destroy_hostile(w):
    for h in HOSTILE:
        r = hccl.comm_destroy(h)
        assert r in (T.HCCL_E_PTR, T.HCCL_E_PARA), (h, r)
    assert A.ESCAPES == []


def test_init_hostile(acl):
    assert hccl.comm_init_root_info(2, None, 0) == (None, T.HCCL_E_PTR)
    assert hccl.comm_init_root_info(0, b"x", 0)[1] == T.HCCL_E_PARA
    info, code = hccl.get_root_info()
    assert code == 0 and len(info) == T.HCCL_ROOT_INFO_BYTES
    for n, r in ((2, 2), (2, -1), (-2, 0), (1.0, 0), (2, math.nan), (2 ** 70, 0)):
        assert hccl.comm_init_root_info(n, info, r) == (None, T.HCCL_E_PARA), (n, r)
    assert hccl.comm_init_root_info(2, b"junk", 0) == (None, T.HCCL_E_PARA)
    assert hccl.comm_init_all(2, None) == (None, T.HCCL_E_PTR)
    for n, d in ((0, [0]), (2, [0, 0]), (2, [0]), (2, [0, 99]), (2, "01"), (2.0, [0, 1])):
        assert hccl.comm_init_all(n, d) == (None, T.HCCL_E_PARA), (n, d)
    assert hccl.group_end() == T.HCCL_E_PARA
    assert A.ESCAPES == []


# ---- check order (hccl src/ops/*/*_op.cc) ----
def test_zero_count_succeeds_before_any_check(acl):
    """all_reduce_op.cc:37 and the others: count 0 returns success before the NULL checks."""
    assert hccl.all_reduce(None, None, 0, 999, 999, None, None) == 0
    assert hccl.broadcast(None, 0, 999, -5, None, None) == 0
    assert hccl.reduce_scatter(None, None, 0, 999, 999, None, None) == 0
    assert hccl.all_gather(None, None, 0, 999, None, None) == 0
    assert hccl.reduce(None, None, 0, 999, 999, -1, None, None) == 0
    assert hccl.scatter(None, None, 0, 999, -1, None, None) == 0
    assert hccl.send(None, 0, 999, -1, None, None) == 0
    assert hccl.recv(None, 0, 999, -1, None, None) == 0
    assert hccl.alltoall(None, 0, 999, None, 0, 999, None, None) == 0
    assert hccl.batch_send_recv(None, 0, None, None) == 0


def test_null_pointers_are_e_ptr_before_parameters(w, bufs):
    c, s = w.comms[0], w.streams[0]
    x = int(bufs[0][0])
    assert hccl.all_reduce(x, x, -1, 999, 999, c, None) == T.HCCL_E_PTR
    assert hccl.all_reduce(x, x, -1, 999, 999, None, s) == T.HCCL_E_PTR
    assert hccl.all_reduce(0, x, -1, 999, 999, c, s) == T.HCCL_E_PTR
    assert hccl.all_reduce(x, 0, -1, 999, 999, c, s) == T.HCCL_E_PTR
    assert hccl.barrier(c, 0) == T.HCCL_E_PTR
    assert hccl.barrier(0, s) == T.HCCL_E_PTR
    assert hccl.batch_send_recv(None, 1, c, s) == T.HCCL_E_PTR
    assert hccl.batch_send_recv([{}], 1, c, None) == T.HCCL_E_PTR


def test_count_then_type_then_op(w, bufs):
    """AllReduceInitAndCheck: CheckCount (PARA), CheckDataType (NOT_SUPPORT), CheckReduceOp."""
    c, s = w.comms[0], w.streams[0]
    x = int(bufs[0][0])
    assert hccl.all_reduce(x, x, T.SYS_MAX_COUNT + 1, 999, 999, c, s) == T.HCCL_E_PARA
    assert hccl.all_reduce(x, x, 4, 999, 999, c, s) == T.HCCL_E_NOT_SUPPORT
    assert hccl.all_reduce(x, x, 4, T.HCCL_DATA_TYPE_UINT8, SUM, c, s) == T.HCCL_E_NOT_SUPPORT
    assert hccl.all_reduce(x, x, 4, FP32, 999, c, s) == T.HCCL_E_PARA
    assert hccl.all_reduce(x, x, 4, T.HCCL_DATA_TYPE_INT16, T.HCCL_REDUCE_PROD, c, s) == \
        T.HCCL_E_NOT_SUPPORT
    # all_gather / broadcast move uint8 (no reduction)
    assert hccl.all_gather(x, x + 2048, 4, T.HCCL_DATA_TYPE_UINT8, c, s) == 0


def test_broadcast_root_before_count_and_type(w, bufs):
    """broadcast_op.cc:117-120: HcomCheckUserRank(root) before CheckCount / CheckDataType."""
    c, s = w.comms[0], w.streams[0]
    x = int(bufs[0][0])
    assert hccl.broadcast(x, 4, 999, 7, c, s) == T.HCCL_E_PARA
    assert hccl.broadcast(x, 4, 999, 0, c, s) == T.HCCL_E_NOT_SUPPORT


def test_scatter_root_null_send_first(w, bufs):
    """scatter_op.cc:71-84: comm/recvBuf NULL, the root's NULL sendBuf, root, count, type."""
    c, s = w.comms[0], w.streams[0]
    y = int(bufs[1][0])
    assert hccl.scatter(0, y, -1, 999, 0, c, s) == T.HCCL_E_PTR
    assert hccl.scatter(0, y, -1, 999, 1, c, s) == T.HCCL_E_PARA     # count (root 1 is fine)
    assert hccl.scatter(0, y, 4, 999, 5, c, s) == T.HCCL_E_PARA      # root
    assert hccl.scatter(0, y, 4, 999, 1, c, s) == T.HCCL_E_NOT_SUPPORT


def test_send_to_self_is_not_support(w, bufs):
    """send_op.cc GetAndCheckSendPara: destRank == self -> HCCL_E_NOT_SUPPORT after count and
    type, before the range check; recv the same."""
    c, s = w.comms[0], w.streams[0]
    x = int(bufs[0][0])
    assert hccl.send(x, 4, FP32, 0, c, s) == T.HCCL_E_NOT_SUPPORT
    assert hccl.recv(x, 4, FP32, 0, c, s) == T.HCCL_E_NOT_SUPPORT
    assert hccl.send(x, 4, 999, 0, c, s) == T.HCCL_E_NOT_SUPPORT
    assert hccl.send(x, -4, FP32, 0, c, s) == T.HCCL_E_PARA
    assert hccl.send(x, 4, FP32, 2, c, s) == T.HCCL_E_PARA


def test_batch_items_counts_before_ranks(w, bufs):
    c, s = w.comms[0], w.streams[0]
    x = int(bufs[0][0])
    bad_rank = {"sendRecvType": T.HCCL_SEND, "buf": x, "count": 4, "dataType": FP32,
                "remoteRank": 9}
    bad_type = dict(bad_rank, remoteRank=1, dataType=999)
    assert hccl.batch_send_recv([bad_rank, bad_type], 2, c, s) == T.HCCL_E_NOT_SUPPORT
    assert hccl.batch_send_recv([bad_rank], 1, c, s) == T.HCCL_E_PARA


def test_destroyed_comm_foreign_stream_bad_buffers(w, bufs):
    ins, outs = bufs
    c0, c1 = w.comms
    s0, s1 = w.streams
    x = int(ins[0])
    assert hccl.all_reduce(x, x, 4, FP32, SUM, c0, s1) == T.HCCL_E_PARA   # device 1's stream
    assert "device" in acl.get_recent_err_msg()
    assert hccl.all_reduce(int(ins[1]), x, 4, FP32, SUM, c0, s0) == T.HCCL_E_PARA
    assert hccl.all_reduce(x, x, 4096, FP32, SUM, c0, s0) == T.HCCL_E_PARA  # too small
    assert hccl.all_reduce(x + 10 ** 9, x, 4, FP32, SUM, c0, s0) == T.HCCL_E_PARA
    ins[0].free() if hasattr(ins[0], "free") else acl.rt.free(x)
    assert hccl.all_reduce(x, int(outs[0]), 4, FP32, SUM, c0, s0) == T.HCCL_E_PARA   # freed
    assert hccl.comm_destroy(c0) == 0
    assert hccl.comm_destroy(c0) == T.HCCL_E_PARA
    y = int(outs[0])
    assert hccl.all_reduce(y, y, 4, FP32, SUM, c0, s0) == T.HCCL_E_PARA
    assert hccl.get_rank_size(c0) == (None, T.HCCL_E_PARA)
    assert hccl.get_rank_id(c1) == (1, 0)
    assert hccl.comm_destroy(c1) == 0
    assert A.ESCAPES == []


def test_wrong_handle_kinds(w, bufs):
    """A stream handle as the comm, a comm handle as the stream, an event as either."""
    c, s = w.comms[0], w.streams[0]
    x = int(bufs[0][0])
    acl.rt.set_device(0)
    ev, _ = acl.rt.create_event()
    assert hccl.all_reduce(x, x, 4, FP32, SUM, s, c) == T.HCCL_E_PARA
    assert hccl.all_reduce(x, x, 4, FP32, SUM, ev, s) == T.HCCL_E_PARA
    assert hccl.all_reduce(x, x, 4, FP32, SUM, c, ev) == T.HCCL_E_PARA
    assert hccl.get_rank_size(s) == (None, T.HCCL_E_PARA)
    assert A.ESCAPES == []


def test_error_strings():
    for code in list(T.RESULT_NAMES) + [-1, 9999]:
        assert isinstance(hccl.get_error_string(code), str)
    assert isinstance(hccl.get_error_string("x"), str)
    assert isinstance(hccl.get_error_string(None), str)


VALS = st.one_of(st.none(), st.integers(-2 ** 65, 2 ** 65), st.floats(allow_nan=True),
                 st.text(max_size=3), st.sampled_from([0, 1, 2, 4, 16, FP32, SUM]))


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_hypothesis_over_collectives(w, bufs, data):
    """Random arguments (mixing valid handles, addresses and hostile values) in every
    collective: a code in HcclResult, never an escape; a success on rank 0 alone is never
    synchronized (it would wait for rank 1)."""
    name = data.draw(st.sampled_from(["all_reduce", "broadcast", "reduce_scatter", "all_gather",
                                      "reduce", "scatter", "alltoall", "send", "recv",
                                      "alltoallv", "alltoallvc", "batch_send_recv", "barrier",
                                      "get_rank_size", "get_rank_id"]))
    args = list(_valid_args(w, bufs, name))
    for i in range(len(args)):
        if data.draw(st.booleans()):
            args[i] = data.draw(VALS)
    fn = getattr(hccl, name)
    r = fn(*args)
    assert _shape_ok(r, fn.__wrapped_outputs__), (name, args, r)
    assert A.ESCAPES == [], A.ESCAPES


def test_buffer_larger_than_the_device_is_e_memory(acl):
    """hcclBufferSize of 1 TB: every rank's init fails with HCCL_E_MEMORY (it was an
    OutOfMemory escaping as HCCL_E_INTERNAL, the communicator left half made); nothing leaks."""
    import threading
    import npusim
    from npusim.hccl import comm as C
    acl.rt.set_device(0)
    info, _ = hccl.get_root_info()
    cfg, _ = hccl.comm_config_init()
    cfg["hcclBufferSize"] = 1 << 20                 # MB
    out = [None, None]

    def run(r):
        acl.rt.set_device(r)
        out[r] = hccl.comm_init_root_info_config(2, info, r, cfg)
    ts = [threading.Thread(target=run, args=(r,)) for r in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert out == [(None, T.HCCL_E_MEMORY)] * 2, out
    assert C.COMMS == {} and "hccl_comm" not in npusim.census().handles
    assert A.ESCAPES == []


ITEM_VALS = st.one_of(st.none(), st.integers(-5, 2 ** 66), st.floats(allow_nan=True),
                      st.text(max_size=2), st.sampled_from([0, 1, T.HCCL_SEND, T.HCCL_RECV]))


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_hypothesis_batch_items(w, bufs, data):
    """HcclSendRecvItem fields with hostile values (and missing keys): a code, never an
    escape. Each success is one side of a batch: never synchronized."""
    x = int(bufs[0][0])
    good = {"sendRecvType": T.HCCL_SEND, "buf": x, "count": 4, "dataType": FP32,
            "remoteRank": 1}
    items = []
    for _ in range(data.draw(st.integers(0, 3))):
        it = dict(good)
        for k in list(it):
            if data.draw(st.booleans()):
                if data.draw(st.booleans()):
                    del it[k]
                else:
                    it[k] = data.draw(ITEM_VALS)
        items.append(it)
    n = data.draw(st.one_of(st.just(len(items)), ITEM_VALS))
    r = hccl.batch_send_recv(items, n, w.comms[0], w.streams[0])
    assert r in CODES, r
    assert A.ESCAPES == [], A.ESCAPES
