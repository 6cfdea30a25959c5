"""The tensor-parallel decode step of issue 38's speed targets, through ``npusim.acl`` and
``npusim.hccl`` only (used by ``test_hccl_capture.py``, ``test_hccl_replay.py`` and
``scripts/ab_peer.py``).

One step on each of ``ranks`` devices: ``layers`` x (3 kernels, an AllReduce, 3 kernels, an
AllReduce) on the rank's stream — the attention and MLP halves of a layer, each closed by its
AllReduce. The kernels are the 1-block ``EasyOPf`` sample (2,000 ns, ``x[0] += 1`` on the
rank's buffer) launched with ``acl.rt.launch_kernel``; the AllReduces are
``npusim.hccl.all_reduce`` of ``count`` fp32 (sum) on a communicator of every rank
(``comm_init_all``), each rank's send buffer holding ``rank + 1``.
"""
from __future__ import annotations

import numpy as np

import npusim
from npusim import acl, hccl
from npusim.device import engine as E
from npusim.runtime.runtime import RT

RANKS, LAYERS, COUNT = 8, 48, 2048      # 2,048 fp32: an 8 KiB hidden state


def ok(*values):
    *vals, ret = values
    assert ret == 0, (ret, acl.get_recent_err_msg())
    return vals[0] if len(vals) == 1 else tuple(vals)


class Step:
    """The ranks' devices, streams, buffers and communicator; ``capture`` / ``replay``."""

    def __init__(self, ranks: int = RANKS, layers: int = LAYERS, count: int = COUNT,
                 comm: bool = True):
        npusim.reset()
        acl.init()
        self.ranks, self.layers, self.count = ranks, layers, count
        self.comms = ok(*hccl.comm_init_all(ranks, list(range(ranks)))) if comm else None
        self.easy, self.streams, self.args, self.bufs = [], [], [], []
        self.send, self.recv = [], []
        for r in range(ranks):
            ok(acl.rt.set_device(r))
            lib = ok(*acl.rt.binary_load_from_file(npusim.samples.binary_path()))
            self.easy.append(ok(*acl.rt.binary_get_function(lib, "EasyOPf")))
            self.streams.append(ok(*acl.rt.create_stream()))
            x = ok(*acl.rt.malloc(64, 0))
            ok(acl.rt.memset(x, 64, 0, 64))
            a = ok(*acl.rt.malloc(8, 0))
            slot = np.array([x], np.uint64)
            ok(acl.rt.memcpy(a, 8, acl.util.numpy_to_ptr(slot), 8,
                             acl.ACL_MEMCPY_HOST_TO_DEVICE))
            self.bufs.append(x)
            self.args.append(a)
            send = ok(*acl.rt.malloc(4 * count, 0))
            host = np.full(count, r + 1, np.float32)
            ok(acl.rt.memcpy(send, 4 * count, acl.util.numpy_to_ptr(host), 4 * count,
                             acl.ACL_MEMCPY_HOST_TO_DEVICE))
            self.send.append(send)
            self.recv.append(ok(*acl.rt.malloc(4 * count, 0)))
        self.launched = 0               # kernels per rank that ran so far (data check)

    # ---- capture ----
    def capture(self, r: int, collectives: bool = True, layers: int | None = None):
        """Rank ``r``'s step (``layers``, default all) captured (GLOBAL) on its stream; the
        model handle."""
        ok(acl.rt.set_device(r))
        s, easy, a = self.streams[r], self.easy[r], self.args[r]
        launch, ar = acl.rt.launch_kernel, hccl.all_reduce
        send, recv, n, comm = self.send[r], self.recv[r], self.count, \
            (self.comms[r] if collectives else None)
        fp32, total = hccl.HCCL_DATA_TYPE_FP32, hccl.HCCL_REDUCE_SUM
        ok(acl.mdl.ri_capture_begin(s, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL))
        bad = 0
        for _ in range(self.layers if layers is None else layers):
            for _ in range(2):
                bad |= launch(easy, 1, a, 8, s)
                bad |= launch(easy, 1, a, 8, s)
                bad |= launch(easy, 1, a, 8, s)
                if collectives:
                    bad |= ar(send, recv, n, fp32, total, comm, s)
        assert bad == 0, acl.get_recent_err_msg()
        return ok(*acl.mdl.ri_capture_end(s))

    def capture_all(self, collectives: bool = True, layers: int | None = None) -> list:
        return [self.capture(r, collectives, layers) for r in range(self.ranks)]

    @staticmethod
    def tasks(model) -> int:
        """Tasks captured into ``model`` (every capture stream's task count; npusim's own
        bookkeeping, ``runtime/model.py`` ``CaptureStream.task_count``)."""
        m, code = RT.handles.get("model", model)
        assert code == 0
        return sum(cs.task_count for cs in m.streams)

    def destroy(self, models) -> None:
        for r, m in enumerate(models):
            ok(acl.rt.set_device(r))
            ok(acl.mdl.ri_destroy(m))

    # ---- replay ----
    def replay(self, models, times: int = 1) -> None:
        """Each rank launches its graph ``times`` times, then the host synchronizes every
        rank's stream (one host thread drives all ranks)."""
        for r in range(len(models)):
            ok(acl.rt.set_device(r))
            for _ in range(times):
                ok(acl.mdl.ri_execute_async(models[r], self.streams[r]))
        for r in range(len(models)):
            ok(acl.rt.set_device(r))
            ok(acl.rt.synchronize_stream(self.streams[r]))

    def steps(self, n: int | None = None) -> int:
        """SQEs every device's engine has executed so far (``E_STEPS``)."""
        return sum(int(RT.devices[i].state.st[E.E_STEPS])
                   for i in range(self.ranks if n is None else n))

    # ---- checks ----
    def kernels_ran(self, r: int) -> int:
        ok(acl.rt.set_device(r))
        host = np.zeros(1, np.uint32)
        ok(acl.rt.memcpy(acl.util.numpy_to_ptr(host), 4, self.bufs[r], 4,
                         acl.ACL_MEMCPY_DEVICE_TO_HOST))
        return int(host[0])

    def check_sum(self) -> None:
        """Every rank's receive buffer holds the sum of the ranks' send buffers."""
        want = sum(range(1, self.ranks + 1))
        for r in range(self.ranks):
            ok(acl.rt.set_device(r))
            host = np.zeros(self.count, np.float32)
            ok(acl.rt.memcpy(acl.util.numpy_to_ptr(host), 4 * self.count, self.recv[r],
                             4 * self.count, acl.ACL_MEMCPY_DEVICE_TO_HOST))
            assert (host == want).all(), (r, host[:4])


def where_time_goes(fn) -> dict:
    """Run ``fn()`` once with the engine calls (``device.engine.run``), the bridge pumps
    (``runtime.peer.pump``) and the stall hook's rounds (``runtime.peer._progress``) timed:
    seconds in each, the rest being host Python (facade, ``DeviceState.run``'s set-up, after-run
    hooks, the stall hook's own loop), and the number of calls."""
    import time
    from npusim.device import engine as eng
    from npusim.runtime import peer
    got = {"engine": 0.0, "pump": 0.0, "progress": 0.0, "runs": 0, "pumps": 0,
           "stalls": 0}
    run0, pump0, prog0 = eng.run, peer.pump, peer._progress
    clock = time.perf_counter

    def run(*a):
        t = clock()
        try:
            return run0(*a)
        finally:
            got["engine"] += clock() - t
            got["runs"] += 1

    def pump(*a):
        t = clock()
        try:
            return pump0(*a)
        finally:
            got["pump"] += clock() - t
            got["pumps"] += 1

    def progress(*a):
        t = clock()
        try:
            return prog0(*a)
        finally:
            got["progress"] += clock() - t
            got["stalls"] += 1
    hooks = peer.STALL_HOOKS
    i = hooks.index(prog0)
    eng.run, peer.pump, hooks[i] = run, pump, progress
    try:
        t = clock()
        fn()
        got["total"] = clock() - t
    finally:
        eng.run, peer.pump, hooks[i] = run0, pump0, prog0
    got["host"] = got["total"] - got["engine"] - got["pump"]
    return got
