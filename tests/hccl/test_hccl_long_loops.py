"""1,000-cycle loops over what stays alive across a program's steps (issue 38): one
communicator running collectives step after step keeps its op log, its notifies and every
resource flat (docs/fidelity.md row 395: the log keeps a bounded window); communicators made
and destroyed 1,000 times leave nothing behind. Counts only, no timed asserts."""
from __future__ import annotations

import numpy as np

from npusim.hccl import comm as C


def _resources(ns):
    """What a leak would grow: the census without the counters that follow work in flight."""
    c = ns.census()
    return {d: dict(v) for d, v in c.devices.items()}, dict(c.handles)


def test_a_long_lived_communicator_stays_flat(npusim):
    ns = npusim
    devs = [ns.Device(id=i) for i in range(2)]
    comms = ns.communicator(devs)
    xs = [d.malloc(64) for d in devs]
    ss = [d.stream() for d in devs]
    comm = C.COMMS[max(C.COMMS)]
    seen = None
    for cycle in range(1_200):
        for r in range(2):
            xs[r].write(np.full(16, cycle + r, np.float32))
        for r in range(2):
            comms[r].all_reduce(xs[r], stream=ss[r])
        for s in ss:
            s.synchronize()
        assert (xs[0].read(np.float32) == 2 * cycle + 1).all()
        assert max(len(x) for x in comm.logs) <= C.LOG_KEEP
        if cycle == 20:
            seen = _resources(ns)
    assert _resources(ns) == seen
    assert comm.trimmed > 0 and comm.logs[0][-1].index == 1_199


def test_communicators_made_and_destroyed_a_thousand_times_leave_nothing(npusim):
    ns = npusim
    from npusim import hccl
    devs = [ns.Device(id=i) for i in range(2)]
    xs = [d.malloc(64) for d in devs]
    ss = [d.stream() for d in devs]
    seen = None
    for cycle in range(1_000):
        handles, code = hccl.comm_init_all(2, [0, 1])
        assert code == 0
        for r in range(2):
            assert hccl.all_reduce(int(xs[r]), int(xs[r]), 16, hccl.HCCL_DATA_TYPE_FP32,
                                   hccl.HCCL_REDUCE_SUM, handles[r], ss[r].handle) == 0
        for s in ss:
            s.synchronize()
        for h in handles:
            assert hccl.comm_destroy(h) == 0
        if cycle == 10:
            seen = _resources(ns)
    assert _resources(ns) == seen
    assert not C.COMMS and not C.PENDING
