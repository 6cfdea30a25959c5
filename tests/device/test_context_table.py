"""The context array's allocation table is kept in place by malloc/free (``Memory._publish``).

A malloc or free moves the rows after the changed one by one row inside a buffer with room to
grow, instead of rebuilding the array from every live block. After any sequence of mallocs and
frees, in both regions and across the buffer's growth, ``ctx`` must be exactly what a rebuild
gives: its length in ``C_LEN``, the count, the sorted (lo, hi) rows, the trailer's page-table
address; and the header words a kernel or the runtime wrote (printf position, recording) kept.
"""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from npusim.device.memory import (C_ALLOC, C_LEN, C_NALLOC, C_PRINTF_POS, CT_PT_HOST, CT_PTAB,
                                  CTX_HEADER, CTX_TRAILER, DEV_ALIGN, Memory)


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
