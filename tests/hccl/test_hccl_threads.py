"""Real threads, one per rank: 8 ranks run several collectives in a loop, each thread on its own
device; and a leak loop (comm init / collective / destroy x N): the census is flat across
cycles (no timed asserts)."""
from __future__ import annotations

import resource
import threading

import numpy as np

import npusim
from helpers.hccl_world import World
from npusim import acl, hccl
from npusim.hccl import comm as C
from npusim.hccl import types as T

F32, I32, SUM, MAX = (T.HCCL_DATA_TYPE_FP32, T.HCCL_DATA_TYPE_INT32, T.HCCL_REDUCE_SUM,
                      T.HCCL_REDUCE_MAX)


def _ranks(p, body):
    """Run ``body(rank, comm)`` on one thread per rank (root info init); raise what failed."""
    acl.rt.set_device(0)
    info, code = hccl.get_root_info()
    assert code == 0
    errs = []

    def run(r):
        try:
            assert acl.rt.set_device(r) == 0
            c, code = hccl.comm_init_root_info(p, info, r)
            assert code == 0, acl.get_recent_err_msg()
            body(r, c)
            assert hccl.comm_destroy(c) == 0
        except BaseException as e:      # noqa: BLE001 -- reported on the main thread
            errs.append((r, e))
    ts = [threading.Thread(target=run, args=(r,)) for r in range(p)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    assert not any(t.is_alive() for t in ts), "a rank thread hangs"
    assert not errs, errs


def test_eight_threads_collectives_in_a_loop(acl):
    p, n, loops = 8, 64, 4
    results = {}

    def body(r, c):
        s, code = acl.rt.create_stream()
        assert code == 0
        x, _ = acl.rt.malloc(4 * n * p, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        y, _ = acl.rt.malloc(4 * n * p, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        host = np.zeros(n * p, np.float32)
        out = []
        for it in range(loops):
            host[:n] = np.arange(n) + r * 10 + it
            assert acl.rt.memcpy(x, 4 * n * p, acl.util.numpy_to_ptr(host), 4 * n * p,
                                 acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
            assert hccl.all_reduce(x, y, n, F32, SUM, c, s) == 0
            assert hccl.all_gather(y, x, n, F32, c, s) == 0          # x = p copies of the sum
            assert hccl.reduce_scatter(x, y, n, F32, MAX, c, s) == 0  # y = the sum again
            assert hccl.broadcast(y, n, F32, it % p, c, s) == 0
            assert hccl.barrier(c, s) == 0
            assert acl.rt.synchronize_stream(s) == 0, acl.get_recent_err_msg()
            got = np.zeros(n, np.float32)
            assert acl.rt.memcpy(acl.util.numpy_to_ptr(got), 4 * n, y, 4 * n,
                                 acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0
            out.append(got)
        results[r] = out
        acl.rt.free(x)
        acl.rt.free(y)
        acl.rt.destroy_stream(s)

    _ranks(p, body)
    for it in range(loops):
        exp = sum(np.arange(n, dtype=np.float32) + q * 10 + it for q in range(p))
        for r in range(p):
            assert (results[r][it] == exp).all(), (it, r)


def _flat(c):
    """A census as a flat dict (devices' counts and handle kinds)."""
    out = {f"h:{k}": v for k, v in c.handles.items()}
    for d, counts in c.devices.items():
        out.update({f"{d}:{k}": v for k, v in counts.items()})
    return out


def test_leak_loop(acl):
    """comm_init_all / AllReduce / destroy, 12 cycles: the census after each cycle equals the
    census after the first; the peak RSS grows by less than a CCL buffer per cycle."""
    p, n = 4, 256
    censuses, rss = [], []
    w = World(p)
    w.destroy()
    x = [w.malloc(r, 4 * n) for r in range(p)]
    for cycle in range(12):
        comms, code = hccl.comm_init_all(p, list(range(p)))
        assert code == 0
        for r in range(p):
            acl.rt.set_device(r)
            assert hccl.all_reduce(int(x[r]), int(x[r]), n, F32, SUM, comms[r],
                                   w.streams[r]) == 0
        assert w.sync() == [0] * p
        for c in comms:
            assert hccl.comm_destroy(c) == 0
        censuses.append(dict(_flat(npusim.census()), comms=len(C.COMMS), pending=len(C.PENDING)))
        rss.append(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    assert all(c == censuses[0] for c in censuses), [
        {k: v for k, v in c.items() if censuses[0].get(k) != v} for c in censuses]
    assert "h:hccl_comm" not in censuses[-1]
    assert rss[-1] - rss[1] < 64 * 1024, rss        # KiB: far below 10 x 200 MB buffers


def test_late_threads_still_join(acl, tmp_path):
    """Rank threads that reach aclrtSetDevice late (after rank 0 already waits in
    HcclCommInitClusterInfo) still join: rank 0 must not give up while they can come
    (comm.JOIN_GRACE_S; it returned HCCL_E_TIMEOUT about one run in two)."""
    import time
    from helpers.hccl_world import rank_table
    t = rank_table(tmp_path / "rt.json", 2, 2)
    out = [None] * 4

    def run(r):
        time.sleep(0.1 * r)
        acl.rt.set_device(r)
        out[r] = hccl.comm_init_cluster_info(t, r)
    ts = [threading.Thread(target=run, args=(r,)) for r in range(4)]
    for th in ts:
        th.start()
    for th in ts:
        th.join(60)
    assert [c for _, c in out] == [0] * 4, out
    for h, _ in out:
        assert hccl.comm_destroy(h) == 0


def test_leak_loop_with_graphs(acl):
    """comm init / capture / replay / destroy, graph and comm destroyed in either order, 6
    cycles: nothing grows. (A comm destroyed before its graph leaves the graph's bridge slots
    "retiring" until a later reclaim: bounded, so cycles of the same order compare equal.)"""
    p = 2
    w = World(p)
    w.destroy()
    x = [w.malloc(r, 64) for r in range(p)]
    censuses = []
    for cycle in range(6):
        comms, code = hccl.comm_init_all(p, list(range(p)))
        assert code == 0
        models = []
        for r in range(p):
            acl.rt.set_device(r)
            assert acl.mdl.ri_capture_begin(w.streams[r], acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) == 0
            assert hccl.all_reduce(int(x[r]), int(x[r]), 4, F32, SUM, comms[r], w.streams[r]) == 0
            m, code = acl.mdl.ri_capture_end(w.streams[r])
            assert code == 0
            models.append(m)
        for r in range(p):
            acl.rt.set_device(r)
            assert acl.mdl.ri_execute_async(models[r], w.streams[r]) == 0
        assert w.sync() == [0] * p
        destroy_comms_first = cycle % 2 == 1
        if destroy_comms_first:
            for c in comms:
                assert hccl.comm_destroy(c) == 0
        for r in range(p):
            acl.rt.set_device(r)
            assert acl.mdl.ri_destroy(models[r]) == 0
        if not destroy_comms_first:
            for c in comms:
                assert hccl.comm_destroy(c) == 0
        censuses.append(dict(_flat(npusim.census()), comms=len(C.COMMS), graphs=len(C.GRAPHS)))
    assert censuses[0] == censuses[2] == censuses[4], censuses
    assert censuses[1] == censuses[3] == censuses[5], censuses
    assert censuses[-1]["comms"] == 0 and censuses[-1]["graphs"] == 0
