"""Real threads: the threading model of docs/architecture.md ("Threads").

Every facade call holds the runtime lock, so device state is only ever touched by one thread
at a time and the engine never runs on arrays another thread is resizing. A synchronize whose
wait only another thread can satisfy (a FLAG event recorded later by that thread) waits for it
instead of reporting a deadlock; a real deadlock is reported at once when no other user thread
is left. ``scripts/stress_threads.py`` runs ``run_mix`` for minutes; the suite runs it briefly.
"""
from __future__ import annotations

import threading
import time
import traceback

import numpy as np

import npusim as ns
from npusim import acl

OK = acl.ACL_SUCCESS
MODES = (0, 1, 2, 1)            # GLOBAL, THREAD_LOCAL, RELAXED, THREAD_LOCAL capture threads


def _ok(r):
    code = r[-1] if isinstance(r, tuple) else r
    if code != OK:
        raise AssertionError(f"code {code}")
    return r[0] if isinstance(r, tuple) and len(r) == 2 else r


def _read(p, n):
    out = np.zeros(n, np.uint8)
    _ok(acl.rt.memcpy(acl.util.numpy_to_ptr(out), n, p, n, acl.ACL_MEMCPY_DEVICE_TO_HOST))
    return out


def _eager(i, stop, tally):
    _ok(acl.rt.set_device(0))
    acl.mdl.ri_capture_thread_exchange_mode(2)      # RELAXED: others' captures allow syncs
    s, s2 = _ok(acl.rt.create_stream()), _ok(acl.rt.create_stream())
    ev = _ok(acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC))
    a, b = _ok(acl.rt.malloc(256, 0)), _ok(acl.rt.malloc(256, 0))
    k = 0
    while not stop.is_set():
        v = (i * 31 + k) % 251
        k += 1
        _ok(acl.rt.memset_async(a, 256, v, 256, s))
        _ok(acl.rt.record_event(ev, s))
        _ok(acl.rt.stream_wait_event(s2, ev))
        _ok(acl.rt.memcpy_async(b, 256, a, 256, acl.ACL_MEMCPY_DEVICE_TO_DEVICE, s2))
        _ok(acl.rt.synchronize_stream(s2))
        got = _read(b, 256)
        assert (got == v).all(), f"eager thread {i}: expected {v}, got {got[:4]}"
        tally[i] += 1
    for h in (ev,):
        _ok(acl.rt.destroy_event(h))
    for p in (a, b):
        _ok(acl.rt.free(p))
    for h in (s, s2):
        _ok(acl.rt.destroy_stream(h))
    _ok(acl.rt.reset_device(0))


def _capture(i, stop, tally):
    _ok(acl.rt.set_device(0))
    acl.mdl.ri_capture_thread_exchange_mode(2)
    s = _ok(acl.rt.create_stream())
    x = _ok(acl.rt.malloc(256, 0))
    k = 0
    while not stop.is_set():
        v = (i * 7 + k) % 200 + 1
        k += 1
        _ok(acl.mdl.ri_capture_begin(s, MODES[i % len(MODES)]))
        _ok(acl.rt.memset_async(x, 256, v, 256, s))
        m = _ok(acl.mdl.ri_capture_end(s))
        _ok(acl.rt.memset(x, 256, 0, 256))
        _ok(acl.mdl.ri_execute_async(m, s))
        _ok(acl.rt.synchronize_stream(s))
        got = _read(x, 256)
        assert (got == v).all(), f"capture thread {i}: expected {v}, got {got[:4]}"
        _ok(acl.mdl.ri_destroy(m))
        tally[4 + i] += 1
    _ok(acl.rt.free(x))
    _ok(acl.rt.destroy_stream(s))
    _ok(acl.rt.reset_device(0))


def run_mix(seconds: float, threads: int = 8) -> dict:
    """``threads`` threads (half capturing in the four modes above, half eager with events
    across two streams) for ``seconds``; every read-back checked. Returns iterations per
    thread and the errors (tracebacks) seen; the census afterwards equals the one before."""
    ns.reset()
    _ok(acl.init())
    base = ns.census()
    stop, errors, tally = threading.Event(), [], [0] * 8

    def guard(fn, i):
        try:
            fn(i, stop, tally)
        except BaseException:                 # noqa: BLE001 — reported to the caller
            errors.append(traceback.format_exc())
            stop.set()
    ths = [threading.Thread(target=guard, args=(_capture if n % 2 else _eager, n // 2))
           for n in range(threads)]
    for t in ths:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in ths:
        t.join(60)
    hung = [t.name for t in ths if t.is_alive()]
    return {"iterations": tally, "errors": errors, "hung": hung,
            "leaked": ns.census().diff(base)}


def test_eight_threads_mixing_capture_modes_and_eager_work():
    r = run_mix(2.0)
    assert not r["errors"], r["errors"][0]
    assert not r["hung"]
    assert r["leaked"] == {}
    assert all(n > 0 for n in r["iterations"])


def test_a_wait_only_another_thread_can_satisfy_is_waited_for(dev0):
    e = _ok(acl.rt.create_event_with_flag(acl.ACL_EVENT_SYNC))
    res = {}

    def waiter():
        _ok(acl.rt.set_device(0))
        s = _ok(acl.rt.create_stream())
        _ok(acl.rt.stream_wait_event(s, e))
        res["sync"] = acl.rt.synchronize_stream(s)

    def recorder():
        _ok(acl.rt.set_device(0))
        s = _ok(acl.rt.create_stream())
        time.sleep(0.2)                       # the waiter is already blocked in its sync
        res["record"] = acl.rt.record_event(e, s)
    ts = [threading.Thread(target=waiter), threading.Thread(target=recorder)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(10)
    assert res == {"sync": OK, "record": OK}


def test_a_real_deadlock_is_reported_without_waiting_when_no_other_thread_can_help(stream,
                                                                                 monkeypatch):
    from npusim.runtime.runtime import RT
    waited = []
    monkeypatch.setattr(type(RT), "await_progress", lambda self: waited.append(1) or False)
    e = _ok(acl.rt.create_event_with_flag(acl.ACL_EVENT_SYNC))
    _ok(acl.rt.stream_wait_event(stream, e))
    assert acl.rt.synchronize_stream(stream) == acl.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    assert waited == []


def test_after_run_hooks_keep_each_threads_batch_when_their_waits_interleave():
    """Two real threads each run ``Device._after_run`` (its hooks replaced by two recording
    ones). Thread A's first hook waits, letting B in (as ``RT.await_progress`` does); B's first
    hook waits too and A resumes first — the waits do not unwind in stack order. Each hook must
    still see its own thread's faults only, and neither thread is left marked as running hooks
    (its later runs must reach the hooks, not a queue)."""
    from npusim.runtime import device as D

    class State:
        def __init__(self):
            self.faults = []

        def take_faults(self):
            faults, self.faults = self.faults, []
            return faults

    class Dev:                                  # what _after_run touches of a Device
        def __init__(self):
            self.state, self._retiring, self.new_faults, self._hook_queues = State(), [], [], {}

        def _on_fault(self, f, last=True):
            pass

    dev, lock, log = Dev(), threading.Lock(), []
    a_waits, b_waits, a_done = threading.Event(), threading.Event(), threading.Event()

    def first(d):
        me = threading.current_thread().name
        log.append((me, "first", list(d.new_faults)))
        if d.new_faults == ["a"]:
            lock.release(); a_waits.set(); b_waits.wait(); lock.acquire()
        elif d.new_faults == ["b"]:
            b_waits.set(); lock.release(); a_done.wait(); lock.acquire()

    def second(d):
        log.append((threading.current_thread().name, "second", list(d.new_faults)))

    def run(faults):
        with lock:
            dev.state.faults = list(faults)
            D.Device._after_run(dev)

    def thread_a():
        run(["a"])
        a_done.set()
        run([])                                 # a later run of A reaches the hooks

    def thread_b():
        a_waits.wait()
        run(["b"])

    saved = list(D.AFTER_RUN_HOOKS)
    D.AFTER_RUN_HOOKS[:] = [first, second]
    try:
        ta = threading.Thread(target=thread_a, name="A")
        tb = threading.Thread(target=thread_b, name="B")
        ta.start(); tb.start(); ta.join(10); tb.join(10)
    finally:
        D.AFTER_RUN_HOOKS[:] = saved
    assert not ta.is_alive() and not tb.is_alive()
    assert sorted(log) == sorted([("A", "first", ["a"]), ("B", "first", ["b"]),
                                  ("A", "second", ["a"]), ("B", "second", ["b"]),
                                  ("A", "first", []), ("A", "second", [])])
    assert dev._hook_queues == {}
