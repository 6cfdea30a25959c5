"""The kernels' page-table lookup (``memview.check``) gives the bisect's answers.

``check`` answers a range inside its block from one page-table entry and sends everything else to
``_search``, the bisect over the allocation table it replaced; after random malloc/free sequences
both must agree for any (address, size) — block edges, padding, holes, the region boundaries,
negative sizes — and record the same first fault.
"""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st
from numba import njit

from npusim.device.memory import (C_FAULT, C_FAULT_ADDR, C_FAULT_SIZE, DEV_ALIGN, HOST_ALIGN,
                                  Memory)
from npusim.device.memview import _search, check


@njit(cache=True)
def _both(ctx, addrs, sizes, out):
    for k in range(len(addrs)):
        ctx[C_FAULT] = 0
        a = check(ctx, addrs[k], sizes[k])
        f = ctx[C_FAULT], ctx[C_FAULT_ADDR], ctx[C_FAULT_SIZE]
        ctx[C_FAULT] = 0
        b = _search(ctx, addrs[k], sizes[k])
        out[k, 0], out[k, 1], out[k, 2], out[k, 3] = a, b, f[0], ctx[C_FAULT]
        out[k, 4] = f[1] == ctx[C_FAULT_ADDR] and f[2] == ctx[C_FAULT_SIZE]


DEV, HOST = 64 * DEV_ALIGN + 100, 48 * HOST_ALIGN + 7      # sizes off the granules on purpose


def _probes(m, rng, n):
    """Addresses near every block's start, end and padded end, the region ends, and random."""
    pts = [m.dev_base, m.dev_base + DEV, m.host_base, m.host_base + HOST, m.dev_base - 1, 0]
    for lo, hi in zip(m._lo, m._hi):
        a = m.to_addr(lo)
        for x in (a, a + (hi - lo), a + (hi - lo) + DEV_ALIGN, a + DEV_ALIGN, a + HOST_ALIGN):
            pts.extend((x - 1, x, x + 1))
    base = np.array(pts, np.int64)
    addrs = np.concatenate([base, rng.integers(m.dev_base - 8, m.dev_base + DEV + 8, n),
                            rng.integers(m.host_base - 8, m.host_base + HOST + 8, n)])
    addrs = np.repeat(addrs, 6)
    sizes = np.tile(np.array([0, 1, 8, DEV_ALIGN, -1, 3 * DEV_ALIGN + 1], np.int64),
                    len(addrs) // 6)
    lo_hi = [(m.to_addr(lo), hi - lo) for lo, hi in zip(m._lo, m._hi)]
    for a, s in lo_hi:                       # exactly the whole block, and one byte more
        addrs = np.append(addrs, [a, a, a + 1])
        sizes = np.append(sizes, [s, s + 1, s - 1])
    return addrs.astype(np.int64), sizes.astype(np.int64)


ops = st.lists(st.tuples(st.booleans(), st.booleans(), st.integers(0, 3 * DEV_ALIGN + 5),
                         st.integers(0, 1 << 30)), min_size=1, max_size=40)


@settings(max_examples=60, deadline=None)
@given(ops, st.integers(0, 2**32 - 1))
def test_page_table_agrees_with_bisect(seq, seed):
    m = Memory(DEV, HOST)
    rng = np.random.default_rng(seed)
    live = []
    for do_free, host, nbytes, pick in seq:
        if do_free and live:
            a, h = live.pop(pick % len(live))
            m.free(a, h)
        else:
            try:
                live.append((m.malloc(nbytes, host), host))
            except Exception:
                pass
        addrs, sizes = _probes(m, rng, 20)
        out = np.zeros((len(addrs), 5), np.int64)
        _both(m.ctx, addrs, sizes, out)
        bad = np.nonzero((out[:, 0] != out[:, 1]) | (out[:, 2] != out[:, 3]) | (out[:, 4] == 0))[0]
        assert not len(bad), [(int(addrs[k]), int(sizes[k]), out[k].tolist()) for k in bad[:5]]


def test_big_block_entries_are_capped_and_exact():
    """A block past the int32 entries' cap: the capped granules still answer exactly (the
    table is ``np.zeros``, so the 3 GiB block commits only its table pages, not the arena)."""
    m = Memory(3 << 30, 1 << 20)
    a = m.malloc((3 << 30) - 8)
    end = a + (3 << 30) - 8
    addrs = np.array([a, a, a + 4096, end - 8, end - 8, end, a, a], np.int64)
    sizes = np.array([8, (3 << 30) - 8, 1 << 31, 8, 9, 0, (3 << 30) - 7, -1], np.int64)
    out = np.zeros((len(addrs), 5), np.int64)
    _both(m.ctx, addrs, sizes, out)
    assert (out[:, 0] == out[:, 1]).all() and (out[:, 2] == out[:, 3]).all()
    assert out[:, 0].tolist()[:6] == [0, 0, 4096, (3 << 30) - 16, -1, (3 << 30) - 8]
    m.free(a)
    assert not m.ptab.any()
