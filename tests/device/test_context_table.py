"""malloc and free keep one table, the page table, and leave the context array alone.

The context array is a fixed header and trailer: no malloc or free reallocates or rewrites it, so
the header words a kernel or the runtime wrote (printf position, recording) stay. After any
sequence of mallocs and frees, in both regions, the page table holds exactly the live blocks'
entries (a rebuild from the block list gives the same table) and the end -> start index holds
exactly the blocks with a byte. A refused malloc or free changes nothing; threads allocating
between other threads' kernels and 1,000 malloc/free cycles leave it exact, with no growth.
(``test_page_table.py`` checks the answers read from it.)
"""
from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from npusim.device.memory import (C_LEN, C_PRINTF_POS, CT_PT_HOST, CT_PTAB, CTX_HEADER,
                                  CTX_TRAILER, DEV_ALIGN, Memory, OutOfMemory)
from npusim.runtime.runtime import RT

import helpers.acl as H


def _rebuilt(m: Memory) -> np.ndarray:
    """The page table a fresh Memory gets from the same live blocks."""
    fresh = Memory(m.dev_size, m.host_size)
    for off, n in m.blocks():
        fresh._map(off, n, off >= m.dev_size)
    return fresh.ptab


def _check(m: Memory, marker: int, ctx=None) -> None:
    c = m.ctx
    if ctx is not None:
        assert c is ctx                                  # never reallocated
    assert len(c) == CTX_HEADER + CTX_TRAILER and c[C_LEN] == len(c)
    assert c[len(c) - CT_PTAB] == m.ptab.ctypes.data
    assert c[len(c) - CT_PT_HOST] == m.pt_host
    assert c[C_PRINTF_POS] == marker                    # header words survive every change
    assert np.array_equal(m.ptab, _rebuilt(m))
    assert m._starts == {off + n: off for off, n in m.blocks() if n}


# each step: (malloc?, host?, size or index of the live block to free)
_steps = st.lists(st.tuples(st.booleans(), st.booleans(), st.integers(0, 3 * DEV_ALIGN)),
                  min_size=1, max_size=120)


@settings(max_examples=40, deadline=None)
@given(_steps)
def test_tables_match_a_rebuild_after_any_sequence(steps):
    m = Memory(1 << 22, 1 << 18)
    m.ctx[C_PRINTF_POS] = 77
    ctx = m.ctx
    live: list[tuple[int, bool]] = []
    _check(m, 77, ctx)
    for do_malloc, host, k in steps:
        if do_malloc or not live:
            live.append((m.malloc(k, host=host), host))
        else:
            addr, h = live.pop(k % len(live))
            m.free(addr, host=h)
        _check(m, 77, ctx)
    for addr, h in live:
        m.free(addr, host=h)
    assert not m.ptab.any() and not m._starts


# ---- hostile values: a refused malloc or free leaves the tables as they were ----
def _snapshot(m: Memory):
    return m.ctx, m.ctx.copy(), m.ptab.copy(), dict(m._starts), m.blocks()


def _same(m: Memory, snap) -> None:
    ctx, words, ptab, starts, blocks = snap
    assert m.ctx is ctx and np.array_equal(m.ctx, words)
    assert np.array_equal(m.ptab, ptab) and m._starts == starts and m.blocks() == blocks


def test_a_refused_malloc_or_free_changes_nothing():
    m = Memory(1 << 20, 1 << 16)
    keep = [m.malloc(100), m.malloc(100, host=True), m.malloc(3000), m.malloc(0)]
    snap = _snapshot(m)
    for nbytes, host in ((1 << 21, False), (1 << 17, True), (1 << 62, False)):
        with pytest.raises(OutOfMemory):
            m.malloc(nbytes, host=host)
        _same(m, snap)
    for addr, host in ((keep[0] + 1, False), (keep[1], False), (keep[0], True), (0, False),
                       (-1, False), (1 << 63, False), (m.dev_base + (1 << 20), False)):
        with pytest.raises(KeyError):
            m.free(addr, host=host)
        _same(m, snap)
    _check(m, 0)


def test_refused_facade_calls_leave_the_devices_tables_intact(acl):
    """Through ``npusim.acl``: a too-large malloc, a double free and a foreign pointer answer
    with the runtime's codes, and the device's tables are what they were."""
    assert acl.rt.set_device(0) == acl.ACL_SUCCESS
    keep, ret = acl.rt.malloc(256, 0)
    assert ret == acl.ACL_SUCCESS
    gone, _ = acl.rt.malloc(256, 0)
    assert acl.rt.free(gone) == acl.ACL_SUCCESS
    m = RT.devices[0].state.mem
    snap = _snapshot(m)
    assert acl.rt.malloc(1 << 50, 0)[1] != acl.ACL_SUCCESS
    assert acl.rt.free(gone) != acl.ACL_SUCCESS
    assert acl.rt.free(keep + 8) != acl.ACL_SUCCESS
    assert acl.rt.free(0x1234) != acl.ACL_SUCCESS
    _same(m, snap)
    assert m.allocation_of(keep)[0] == keep and m.allocation_of(gone) is None


# ---- real threads: mallocs and frees between other threads' kernels ----
def test_threads_allocating_while_others_launch_kernels(acl):
    """Four threads each allocate and free blocks while launching EasyOPf (x += 1) on its own
    stream into one block of its own: every kernel finds its block through the page table the
    others keep changing, every count is right, and the tables end exact."""
    assert acl.rt.set_device(0) == acl.ACL_SUCCESS
    easy = H.easy_opf()
    rounds, counts = 60, {}

    def worker(i):
        s, x, args = H.worker_stream()
        churn = []
        for k in range(rounds):
            churn.append(acl.rt.malloc(64 + 64 * (k % 5), 0)[0])
            assert acl.rt.launch_kernel(easy, 1, args, 8, s) == acl.ACL_SUCCESS
            if k % 3 == 2:                       # frees out of order
                assert acl.rt.free(churn.pop(len(churn) // 2)) == acl.ACL_SUCCESS
            if k % 7 == 0:
                assert acl.rt.synchronize_stream(s) == acl.ACL_SUCCESS
        assert acl.rt.synchronize_stream(s) == acl.ACL_SUCCESS
        counts[i] = int(H.read(x, 1)[0])
        for p in churn + [x, args]:
            assert acl.rt.free(p) == acl.ACL_SUCCESS
        assert acl.rt.destroy_stream(s) == acl.ACL_SUCCESS

    H.on_threads(worker, 4, timeout=120)
    assert counts == {i: rounds for i in range(4)}
    m = RT.devices[0].state.mem
    assert m._starts == {off + n: off for off, n in m.blocks() if n}


# ---- 1,000 cycles: nothing grows ----
def test_a_thousand_malloc_free_cycles_stay_flat():
    """With 300 blocks live, 1,000 cycles of malloc + free in the middle: the context array is
    the same object throughout, the tables are exact at every hundredth cycle, and the Python
    heap does not grow."""
    m = Memory(1 << 24, 1 << 16)
    live = [m.malloc(128) for _ in range(300)]
    m.free(live.pop(150))
    m.free(m.malloc(128))
    ctx = m.ctx
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for k in range(1000):
            a = m.malloc(128)
            m.free(a)
            if k % 100 == 0:
                assert m.ctx is ctx and len(m._starts) == 299
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 64 * 1024, grown
    _check(m, 0, ctx)
