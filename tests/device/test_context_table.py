"""The context array's allocation table is kept in place by malloc/free (``Memory._publish``).

A malloc or free moves the rows after the changed one by one row inside a buffer with room to
grow, instead of rebuilding the array from every live block. After any sequence of mallocs and
frees, in both regions and across the buffer's growth, ``ctx`` must be exactly what a rebuild
gives: its length in ``C_LEN``, the count, the sorted (lo, hi) rows, the trailer's page-table
address; and the header words a kernel or the runtime wrote (printf position, recording) kept.
A refused malloc or free changes nothing; threads allocating between other threads' kernels and
1,000 malloc/free cycles leave it exact, with no growth.
"""
from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import npusim
from npusim.device.memory import (C_ALLOC, C_LEN, C_NALLOC, C_PRINTF_POS, CT_PT_HOST, CT_PTAB,
                                  CTX_HEADER, CTX_TRAILER, DEV_ALIGN, Memory, OutOfMemory)
from npusim.runtime.runtime import RT

import helpers.acl as H


def _expected(m: Memory) -> np.ndarray:
    n = len(m._lo)
    rows = np.empty(2 * n, np.int64)
    rows[0::2], rows[1::2] = m._lo, m._hi
    return rows


def _check(m: Memory, marker: int) -> None:
    ctx, n = m.ctx, len(m._lo)
    assert len(ctx) == CTX_HEADER + 2 * n + CTX_TRAILER
    assert ctx[C_LEN] == len(ctx) and ctx[C_NALLOC] == n
    assert np.array_equal(ctx[C_ALLOC:C_ALLOC + 2 * n], _expected(m))
    assert ctx[len(ctx) - CT_PTAB] == m.ptab.ctypes.data
    assert ctx[len(ctx) - CT_PT_HOST] == m.pt_host
    assert ctx[C_PRINTF_POS] == marker                  # header words survive every change
    assert np.shares_memory(ctx, m._ctx_buf)


# each step: (malloc?, host?, size or index of the live block to free)
_steps = st.lists(st.tuples(st.booleans(), st.booleans(), st.integers(0, 3 * DEV_ALIGN)),
                  min_size=1, max_size=300)


@settings(max_examples=60, deadline=None)
@given(_steps)
def test_table_matches_a_rebuild_after_any_sequence(steps):
    m = Memory(1 << 24, 1 << 20)
    m.ctx[C_PRINTF_POS] = 77
    live: list[tuple[int, bool]] = []
    _check(m, 77)
    for do_malloc, host, k in steps:
        if do_malloc or not live:
            live.append((m.malloc(k, host=host), host))
        else:
            addr, h = live.pop(k % len(live))
            m.free(addr, host=h)
        _check(m, 77)


def test_growth_and_shrink_through_many_blocks():
    """Past the buffer's first capacity and back: the table stays exact at each step."""
    m = Memory(1 << 26, 1 << 20)
    m.ctx[C_PRINTF_POS] = 5
    blocks = [m.malloc(64) for _ in range(700)]
    _check(m, 5)
    for a in blocks[::2]:                       # holes everywhere: deletes mid-table
        m.free(a)
        _check(m, 5)
    refill = [m.malloc(64) for _ in range(350)]  # first fit: inserts mid-table
    _check(m, 5)
    for a in blocks[1::2] + refill:
        m.free(a)
    _check(m, 5)
    assert m.ctx[C_NALLOC] == 0


# ---- hostile values: a refused malloc or free leaves the table as it was ----
def _snapshot(m: Memory):
    return m.ctx.copy(), m._ctx_buf, list(m._lo)


def _same(m: Memory, snap) -> None:
    ctx, buf, lo = snap
    assert np.array_equal(m.ctx, ctx) and m._ctx_buf is buf and m._lo == lo


def test_a_refused_malloc_or_free_changes_nothing():
    m = Memory(1 << 20, 1 << 16)
    keep = [m.malloc(100), m.malloc(100, host=True), m.malloc(3000)]
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


def test_refused_facade_calls_leave_the_devices_table_intact(acl):
    """Through ``npusim.acl``: a too-large malloc, a double free and a foreign pointer answer
    with the runtime's codes, and the engine's table is what it was."""
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
    _check(m, int(m.ctx[C_PRINTF_POS]))


# ---- real threads: mallocs and frees between other threads' kernels ----
def test_threads_allocating_while_others_launch_kernels(acl):
    """Four threads each allocate and free blocks while launching EasyOPf (x += 1) on its own
    stream into one block of its own: every kernel finds its block through the table the others
    keep moving, every count is right, and the table ends exact."""
    assert acl.rt.set_device(0) == acl.ACL_SUCCESS
    easy = H.easy_opf()
    rounds, counts = 60, {}

    def worker(i):
        assert acl.rt.set_device(0) == acl.ACL_SUCCESS
        s, _ = acl.rt.create_stream()
        x, args = H.counter()
        churn = []
        for k in range(rounds):
            churn.append(acl.rt.malloc(64 + 64 * (k % 5), 0)[0])
            assert acl.rt.launch_kernel(easy, 1, args, 8, s) == acl.ACL_SUCCESS
            if k % 3 == 2:                       # frees out of order: mid-table deletes
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
    _check(m, int(m.ctx[C_PRINTF_POS]))


# ---- 1,000 cycles: nothing grows ----
def test_a_thousand_malloc_free_cycles_stay_flat():
    """With 300 blocks live, 1,000 cycles of malloc + free in the middle: the buffer is the same
    object of the same size after the first cycle, the table is exact at every hundredth cycle,
    and the Python heap does not grow."""
    m = Memory(1 << 24, 1 << 16)
    live = [m.malloc(128) for _ in range(300)]
    m.free(live.pop(150))
    m.free(m.malloc(128))
    buf, size = m._ctx_buf, len(m._ctx_buf)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for k in range(1000):
            a = m.malloc(128)
            m.free(a)
            if k % 100 == 0:
                _check(m, 0)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert m._ctx_buf is buf and len(buf) == size
    assert grown < 64 * 1024, grown
    _check(m, 0)
