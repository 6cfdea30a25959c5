"""Two communicators whose collectives rank 0 issues in another order than rank 1: each
communicator's ranks agree, yet they wait for each other across them — the synchronize says
so (docs/fidelity.md row 396)."""
from __future__ import annotations

import pytest


def test_two_communicators_in_another_order_is_explained(npusim):
    ns = npusim
    devs = [ns.Device(id=i) for i in range(2)]
    a, b = ns.communicator(devs), ns.communicator(devs)
    xs = [d.malloc(64) for d in devs]
    ss = [d.stream() for d in devs]
    b[0].all_reduce(xs[0], stream=ss[0])
    a[0].all_reduce(xs[0], stream=ss[0])
    a[1].all_reduce(xs[1], stream=ss[1])
    b[1].all_reduce(xs[1], stream=ss[1])
    with pytest.raises(ns.AclError) as e:
        ss[0].synchronize()
    assert e.value.code == 107020
    msg = str(e.value)
    assert "across communicators" in msg
    assert "device 0 (rank 0 here) also waits" in msg and "device 1 (rank 1 here)" in msg
    assert "same order on every rank" in msg


def test_same_order_on_every_rank_completes(npusim):
    ns = npusim
    import numpy as np
    devs = [ns.Device(id=i) for i in range(2)]
    a, b = ns.communicator(devs), ns.communicator(devs)
    xs = [d.malloc(64) for d in devs]
    for r, x in enumerate(xs):
        x.write(np.full(16, r + 1, np.float32))
    ss = [d.stream() for d in devs]
    for r in range(2):
        a[r].all_reduce(xs[r], stream=ss[r])
        b[r].all_reduce(xs[r], stream=ss[r])
    for s in ss:
        s.synchronize()
    assert (xs[0].read(np.float32) == 6).all() and (xs[1].read(np.float32) == 6).all()
