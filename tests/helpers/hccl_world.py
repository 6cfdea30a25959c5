"""A world of ranks for the hccl tests: communicators made the three ways (one thread with
``comm_init_all``; one thread per rank with a root info; one thread per rank with a rank table of
several servers), one stream and buffers per rank, and the numpy oracle of each collective."""
from __future__ import annotations

import json
import threading

import numpy as np

import npusim as ns
from npusim import acl, hccl
from npusim.hccl import algo
from npusim.hccl import types as T

NP = {T.HCCL_DATA_TYPE_INT8: np.int8, T.HCCL_DATA_TYPE_INT16: np.int16,
      T.HCCL_DATA_TYPE_INT32: np.int32, T.HCCL_DATA_TYPE_INT64: np.int64,
      T.HCCL_DATA_TYPE_UINT8: np.uint8, T.HCCL_DATA_TYPE_UINT16: np.uint16,
      T.HCCL_DATA_TYPE_UINT32: np.uint32, T.HCCL_DATA_TYPE_UINT64: np.uint64,
      T.HCCL_DATA_TYPE_FP16: np.float16, T.HCCL_DATA_TYPE_FP32: np.float32,
      T.HCCL_DATA_TYPE_FP64: np.float64, T.HCCL_DATA_TYPE_BFP16: np.uint16}
"""HcclDataType -> the numpy type of its bytes (bf16 as its raw uint16)."""
REDUCIBLE = sorted(d for d in T.REDUCIBLE_TYPES if T.dtype_supported(d, True))
ALL_TYPES = sorted(NP)


def rank_table(path, servers: int, per_server: int) -> str:
    """An HCCL rank table file: ``servers`` servers of ``per_server`` devices, rank-major."""
    t = {"version": "1.0", "server_count": str(servers), "status": "completed",
         "server_list": [{"server_id": f"10.0.0.{s}", "device": [
             {"device_id": str(s * per_server + i), "device_ip": f"192.168.{s}.{i}",
              "rank_id": str(s * per_server + i)} for i in range(per_server)]}
             for s in range(servers)]}
    with open(path, "w") as f:
        json.dump(t, f)
    return str(path)


def _threads(p, fn):
    out, errs = [None] * p, []

    def run(r):
        try:
            assert acl.rt.set_device(r) == 0
            out[r] = fn(r)
        except BaseException as e:      # noqa: BLE001 -- reported below
            errs.append(e)
    ts = [threading.Thread(target=run, args=(r,)) for r in range(p)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert not errs, errs
    return out


class World:
    """``p`` ranks on devices 0..p-1: ``.comms`` (handles), ``.streams`` (handles),
    ``.devs`` (``npusim.Device``)."""

    def __init__(self, p: int, how: str = "all", table: str | None = None):
        self.p = p
        if how == "all":
            self.comms, code = hccl.comm_init_all(p, list(range(p)))
            assert code == 0, acl.get_recent_err_msg()
        elif how == "root":
            info, code = hccl.get_root_info() if acl.rt.set_device(0) == 0 else (None, -1)
            assert code == 0
            res = _threads(p, lambda r: hccl.comm_init_root_info(p, info, r))
            assert all(c == 0 for _, c in res), res
            self.comms = [h for h, _ in res]
        else:
            res = _threads(p, lambda r: hccl.comm_init_cluster_info(table, r) + (acl.get_recent_err_msg(),))
            assert all(c == 0 for _, c, _ in res), res
            self.comms = [h for h, _, _ in res]
        self.devs = [ns.Device(id=r) for r in range(p)]
        self.streams = []
        for r in range(p):
            acl.rt.set_device(r)
            s, code = acl.rt.create_stream()
            assert code == 0
            self.streams.append(s)

    def malloc(self, r, nbytes):
        return self.devs[r].malloc(max(nbytes, 1))

    def buffers(self, nbytes, data=None):
        bufs = [self.malloc(r, nbytes) for r in range(self.p)]
        for r, b in enumerate(bufs):
            b.write(np.zeros(nbytes, np.uint8) if data is None else data[r])
        return bufs

    def sync(self):
        codes = []
        for r in range(self.p):
            acl.rt.set_device(r)
            codes.append(acl.rt.synchronize_stream(self.streams[r]))
        return codes

    def destroy(self):
        for c in self.comms:
            assert hccl.comm_destroy(c) == 0


def data(p, count, dtype, op=T.HCCL_REDUCE_SUM, seed=0):
    """Per-rank inputs whose reduction is exact whatever the order: small integers (PROD:
    1 and 2 only, so 8 ranks stay within every type)."""
    rng = np.random.default_rng(seed + 31 * dtype + p)
    hi = 3 if op == T.HCCL_REDUCE_PROD else 6
    out = []
    for _ in range(p):
        v = rng.integers(1 if op == T.HCCL_REDUCE_PROD else 0, hi, count)
        if dtype in (T.HCCL_DATA_TYPE_INT8, T.HCCL_DATA_TYPE_INT16, T.HCCL_DATA_TYPE_INT32,
                     T.HCCL_DATA_TYPE_INT64) and op != T.HCCL_REDUCE_PROD:
            v = v - 2
        if dtype == T.HCCL_DATA_TYPE_BFP16:
            a = algo._f32_to_bf16(v.astype(np.float32))
        else:
            a = v.astype(NP[dtype])
        out.append(np.ascontiguousarray(a))
    return out


def reduced(xs, dtype, op):
    """The oracle: ``algo.reduce_np`` over the ranks' inputs in rank order."""
    acc = np.array(xs[0], copy=True).view(np.uint8)
    for x in xs[1:]:
        algo.reduce_np(acc, np.ascontiguousarray(x).view(np.uint8), dtype, op)
    return acc.view(xs[0].dtype)
