"""Sweep point functions for the tests (a plain module: the cluster's workers get them by value,
see ``test_sweep_cluster.py``)."""
from __future__ import annotations

import os
import threading

import numpy as np

import npusim as ns

SIM = ["n", "cost", "profile", "elapsed_ms", "profile_in_force", "draw", "error_code", "error"]
"""The simulated columns of a :func:`timed` sweep (not the wall time nor the worker)."""


def timed(n: int, cost: int = 0) -> dict:
    """``n`` EasyOPf launches between two events: the simulated time, the profile in force, one
    draw of numpy's global generator. ``cost`` sets the kernel's cost first (it must not leak
    into the next point)."""
    if cost:
        ns.set_kernel_cost("EasyOPf", cost)
    dev = ns.Device()
    s, x = dev.stream(), dev.malloc(64)
    e0, e1 = dev.event(), dev.event()
    s.record(e0)
    for _ in range(n):
        s.launch("EasyOPf", 1, args=(x,))
    s.record(e1)
    s.synchronize()
    return {"elapsed_ms": e0.elapsed_ms(e1), "profile_in_force": dev.profile.name,
            "draw": float(np.random.random())}


def flaky(n: int):
    """Fails in three ways (an exception, an AclError, a returned code) for n = 2, 3, 4."""
    if n == 2:
        raise ValueError("boom")
    if n == 3:
        ns.errors.check(ns.acl.rt.set_device(10_000))
    if n == 4:
        return ns.errors.ACL_ERROR_RT_RESOURCE_ALLOC_FAIL
    return n * 10


def unpicklable(n: int):
    """Returns a lock (which no scheduler can send back) for n = 2."""
    return {"lock": threading.Lock()} if n == 2 else n


def _load_elsewhere(parent: int):
    if os.getpid() != parent:
        raise ImportError("no module named 'job' on this worker")
    return NotOnWorkers()


class NotOnWorkers:
    """A sweep function that cannot be unpickled on a worker (as a function of a module the
    workers do not have): every task fails as a whole."""

    def __call__(self, n: int) -> int:
        return n

    def __reduce__(self):
        return (_load_elsewhere, (os.getpid(),))


def hangs_at(n: int, hang: int = 2):
    """Sleeps far past any test's timeout at ``n == hang`` (a point that never ends), holding
    the runtime lock like a point stuck in a simulator call; else ``n * 10``."""
    if n == hang:
        import time
        from npusim.runtime.runtime import RT
        with RT.lock:
            time.sleep(3600)
    return n * 10
