"""Capture modes with real Python threads (spec/aclgraph.md §1.5, §3.2, §3.3): the per-stream /
per-context / per-thread bookkeeping, aclmdlRICaptureThreadExchangeMode, the "unsafe call" table
(107030 / 107041), and the thread check of aclmdlRICaptureEnd (107038)."""
from __future__ import annotations

import numpy as np
import pytest

from npusim import acl
from npusim.runtime import model as M

from helpers.capture import (ACTIVE, GLOBAL, NONE, OK, RELAXED, THREAD_LOCAL, Worker, begin,
                          current_ctx, end, lk, model, new_buf, new_stream, on_thread, run,
                          status_of, u32)

E = acl
BLOCKED = E.ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT


def exchange(mode: int) -> int:
    old, ret = acl.mdl.ri_capture_thread_exchange_mode(mode)
    assert ret == OK
    return old


def unsafe_calls(buf: int, x: int = GLOBAL) -> tuple[int, int, int]:
    """aclrtMemset, aclrtMemcpy (H2D) and aclrtMemcpy (D2D) on the calling thread with exchange
    mode ``x``; the exchange mode is restored afterwards."""
    old = exchange(x)
    host = np.arange(4, dtype=np.uint32)
    try:
        r1 = acl.rt.memset(buf, 64, 0, 16)
        r2 = acl.rt.memcpy(buf, 64, acl.util.numpy_to_ptr(host), 16, acl.ACL_MEMCPY_HOST_TO_DEVICE)
        r3 = acl.rt.memcpy(buf + 32, 32, buf, 16, acl.ACL_MEMCPY_DEVICE_TO_DEVICE)
    finally:
        exchange(old)
    return r1, r2, r3


def expect(blocked: bool):
    return (BLOCKED,) * 3 if blocked else (OK,) * 3


@pytest.fixture
def worker(dev0):
    """A second long-lived thread on the primary context."""
    w = Worker(current_ctx())
    yield w
    w.close()


# ---------------------------------------------------------------- §1.5 exchange mode
def test_exchange_mode_checks(dev0):
    assert acl.mdl.ri_capture_thread_exchange_mode(None)[1] == E.ACL_ERROR_INVALID_PARAM
    assert acl.mdl.ri_capture_thread_exchange_mode(3)[1] == E.ACL_ERROR_RT_PARAM_INVALID
    assert acl.mdl.ri_capture_thread_exchange_mode(-1)[1] == E.ACL_ERROR_RT_PARAM_INVALID
    assert on_thread(acl.mdl.ri_capture_thread_exchange_mode, RELAXED) == \
        (None, E.ACL_ERROR_RT_CONTEXT_NULL)


def test_exchange_mode_swaps_per_thread_starting_global(dev0):
    ctx = current_ctx()
    assert exchange(RELAXED) == GLOBAL                # initial value: GLOBAL
    assert exchange(THREAD_LOCAL) == RELAXED
    # another thread has its own exchange mode, initially GLOBAL
    assert on_thread(exchange, RELAXED, ctx=ctx) == GLOBAL
    assert exchange(GLOBAL) == THREAD_LOCAL
    # works with or without an active capture
    s = new_stream()
    begin(s)
    assert exchange(RELAXED) == GLOBAL
    assert exchange(GLOBAL) == RELAXED
    end(s)


# ---------------------------------------------------------------- §3.3 the table
# (capture mode, the calling thread is the capturing thread, caller's exchange mode) -> blocked
TABLE = [
    (GLOBAL, True, GLOBAL, True), (GLOBAL, True, THREAD_LOCAL, True),
    (GLOBAL, True, RELAXED, False),
    (GLOBAL, False, GLOBAL, True), (GLOBAL, False, THREAD_LOCAL, False),
    (GLOBAL, False, RELAXED, False),
    (THREAD_LOCAL, True, GLOBAL, True), (THREAD_LOCAL, True, THREAD_LOCAL, True),
    (THREAD_LOCAL, True, RELAXED, False),
    (THREAD_LOCAL, False, GLOBAL, False), (THREAD_LOCAL, False, THREAD_LOCAL, False),
    (THREAD_LOCAL, False, RELAXED, False),
    (RELAXED, True, GLOBAL, False), (RELAXED, True, THREAD_LOCAL, False),
    (RELAXED, True, RELAXED, False),
    (RELAXED, False, GLOBAL, False), (RELAXED, False, THREAD_LOCAL, False),
    (RELAXED, False, RELAXED, False),
]


@pytest.mark.parametrize("mode,same_thread,x,blocked", TABLE)
def test_unsafe_call_table(worker, mode, same_thread, x, blocked):
    s = new_stream()
    buf = new_buf()
    worker(begin, s, mode)                            # the capture belongs to the worker thread
    if same_thread:
        got = worker(unsafe_calls, buf, x)
    else:
        got = unsafe_calls(buf, x)                    # the test's thread has no capture
    assert got == expect(blocked)
    # a blocked call is only an error: the capture stays ACTIVE and ends normally
    assert status_of(s) == ACTIVE
    worker(end, s)
    assert worker(unsafe_calls, buf) == expect(False)
    assert unsafe_calls(buf) == expect(False)


def test_no_capture_nothing_blocked(dev0):
    buf = new_buf()
    for x in (GLOBAL, THREAD_LOCAL, RELAXED):
        assert unsafe_calls(buf, x) == expect(False)


def test_global_thread_local_relaxed_in_one_thread(dev0):
    """rt_utest_capture_mode.cc: with GLOBAL + THREAD_LOCAL + RELAXED captures in one thread,
    memset is blocked until both GLOBAL and THREAD_LOCAL captures have ended."""
    buf = new_buf()
    sg, st, sr = new_stream(), new_stream(), new_stream()
    begin(sg, GLOBAL)
    begin(st, THREAD_LOCAL)
    begin(sr, RELAXED)
    assert acl.rt.memset(buf, 64, 0, 64) == BLOCKED
    end(sg)
    assert acl.rt.memset(buf, 64, 0, 64) == BLOCKED     # THREAD_LOCAL still active
    end(st)
    assert acl.rt.memset(buf, 64, 0, 64) == OK          # only RELAXED left
    end(sr)
    assert acl.rt.memset(buf, 64, 0, 64) == OK


def test_thread_local_then_global_end_order(dev0):
    buf = new_buf()
    sg, st = new_stream(), new_stream()
    begin(sg, GLOBAL)
    begin(st, THREAD_LOCAL)
    end(st)
    assert acl.rt.memset(buf, 64, 0, 64) == BLOCKED     # GLOBAL blocks everyone
    end(sg)
    assert acl.rt.memset(buf, 64, 0, 64) == OK


def test_two_threads_thread_local_captures(dev0):
    ctx = current_ctx()
    w1, w2 = Worker(ctx), Worker(ctx)
    try:
        buf = new_buf()
        s1, s2 = new_stream(), new_stream()
        w1(begin, s1, THREAD_LOCAL)
        w2(begin, s2, THREAD_LOCAL)
        assert w1(unsafe_calls, buf) == expect(True)
        assert w2(unsafe_calls, buf) == expect(True)
        assert unsafe_calls(buf) == expect(False)           # no capture of its own
        w1(end, s1)
        assert w1(unsafe_calls, buf) == expect(False)
        assert w2(unsafe_calls, buf) == expect(True)
        w2(end, s2)
        assert w2(unsafe_calls, buf) == expect(False)
    finally:
        w1.close()
        w2.close()


def test_global_capture_in_one_thread_blocks_every_thread(dev0):
    ctx = current_ctx()
    buf = new_buf()
    s = new_stream()
    begin(s, GLOBAL)
    assert on_thread(unsafe_calls, buf, ctx=ctx) == expect(True)
    # a thread with exchange THREAD_LOCAL and no capture of its own may call
    assert on_thread(unsafe_calls, buf, THREAD_LOCAL, ctx=ctx) == expect(False)
    end(s)
    assert on_thread(unsafe_calls, buf, ctx=ctx) == expect(False)


def test_pageable_async_copy_on_non_capturing_stream_107041(dev0):
    s, other = new_stream(), new_stream()
    x = new_buf()
    host = np.full(16, 7, np.uint32)
    hp = acl.util.numpy_to_ptr(host)
    begin(s, GLOBAL)
    ret = acl.rt.memcpy_async(x, 64, hp, 64, acl.ACL_MEMCPY_HOST_TO_DEVICE, other)
    assert ret == E.ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC
    old = exchange(RELAXED)                              # the same call is now allowed
    assert acl.rt.memcpy_async(x, 64, hp, 64, acl.ACL_MEMCPY_HOST_TO_DEVICE, other) == OK
    exchange(old)
    assert status_of(s) == ACTIVE
    end(s)
    assert list(u32(x, 16)) == [7] * 16


def test_exchange_relaxed_sync_copy_runs_at_once_and_is_not_captured(dev0):
    """The 0_simple_model pattern: a synchronous copy inside a GLOBAL capture under RELAXED."""
    s = new_stream()
    x = new_buf()
    host = np.full(16, 3, np.uint32)
    mh = begin(s, GLOBAL)
    old = exchange(RELAXED)
    assert acl.rt.memcpy(x, 64, acl.util.numpy_to_ptr(host), 64,
                         acl.ACL_MEMCPY_HOST_TO_DEVICE) == OK
    assert u32(x)[0] == 3                                # ran immediately (a D2H copy: RELAXED)
    assert exchange(old) == RELAXED
    assert model(mh).n_tasks() == 0                      # and was not captured
    lk(s, "EasyOPf", x)
    end(s)
    run(mh, s)
    assert u32(x)[0] == 4


# ---------------------------------------------------------------- §1.3 thread check (107038)
@pytest.mark.parametrize("mode", [GLOBAL, THREAD_LOCAL])
def test_end_from_wrong_thread_107038(worker, mode):
    s = new_stream()
    x = new_buf()
    mh = worker(begin, s, mode)
    lk(s, "EasyOPf", x)                       # any thread may submit onto the capturing stream
    assert acl.mdl.ri_capture_end(s) == (None, E.ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD)
    # the capture ended: stream NONE, model READY, neither returned nor destroyed
    assert status_of(s) == NONE
    m = model(mh)
    assert m.status == M.READY and m.n_tasks() == 1
    # the context's mode ref count was dropped: nothing is blocked any more
    assert worker(unsafe_calls, x) == expect(False)
    assert unsafe_calls(x) == expect(False)
    assert acl.mdl.ri_capture_end(s) == (None, E.ACL_ERROR_RT_STREAM_NOT_CAPTURED)
    assert acl.mdl.ri_destroy(mh) == OK                  # the leaked model can be destroyed


def test_relaxed_capture_may_end_on_another_thread(worker):
    s = new_stream()
    x = new_buf()
    mh = worker(begin, s, RELAXED)
    lk(s, "EasyOPf", x)
    assert acl.mdl.ri_capture_end(s) == (mh, OK)
    run(mh, s)
    assert u32(x)[0] == 1


def test_capture_begun_on_one_thread_ended_on_it_after_main_thread_submits(worker):
    s = new_stream()
    x = new_buf()
    mh = worker(begin, s, GLOBAL)
    for _ in range(3):
        lk(s, "ShortOPf", x)
        lk(s, "EasyOPf", x)
    assert worker(end, s) == mh
    run(mh, s, times=2)
    assert u32(x)[0] == 7 * 8 + 7                          # (((0*2+1)*2+1)*2+1) = 7, twice


def test_concurrent_captures_on_threads_replay_independently(dev0):
    """Several threads capture at the same time (§4.6), each into its own model."""
    import threading
    ctx = current_ctx()
    n = 6
    bufs = [new_buf() for _ in range(n)]
    streams = [new_stream() for _ in range(n)]
    go = threading.Barrier(n)
    out = [None] * n

    def body(i):
        acl.rt.set_current_context(ctx)
        go.wait()
        begin(streams[i], THREAD_LOCAL)
        for _ in range(40 * (i + 1)):
            lk(streams[i], "EasyOPf", bufs[i])
        out[i] = end(streams[i])
    ts = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(30)
    assert all(out) and len(set(out)) == n
    for i in range(n):
        run(out[i], streams[i])
        assert u32(bufs[i])[0] == 40 * (i + 1)


def test_wrong_thread_end_leaves_the_begin_threads_count(worker):
    """§3.2: CaptureModeExit decrements the *calling* thread's counters, so after a 107038 end
    from another thread the begin thread still counts its GLOBAL capture. That shows once another
    capture makes the context mode non-MAX: with exchange THREAD_LOCAL the begin thread is
    blocked (its thread mode is GLOBAL), a fresh thread is not."""
    s, s2 = new_stream(), new_stream()
    buf = new_buf()
    worker(begin, s, GLOBAL)
    assert acl.mdl.ri_capture_end(s)[1] == E.ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD
    assert worker(unsafe_calls, buf, THREAD_LOCAL) == expect(False)    # context mode is MAX
    mh = begin(s2, RELAXED)                                              # context mode RELAXED
    assert worker(unsafe_calls, buf, THREAD_LOCAL) == expect(True)
    assert on_thread(unsafe_calls, buf, THREAD_LOCAL, ctx=current_ctx()) == expect(False)
    assert end(s2) == mh
