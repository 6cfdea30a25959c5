"""The page table alone answers every bounds question, in kernels and on the host.

``memview.check`` answers a range inside its block from one page-table entry and sends everything
else to ``_search``, its exact slow path; the host's ``Memory.allocation_of``, ``device_fits``
and ``device_pair_fits`` read the same entries. After random malloc/free sequences all of them
must give what a plain list of the live blocks gives — the last block starting at or before the
address, and the range inside it — for any (address, size): block edges, padding, holes, empty
blocks, the region boundaries, negative sizes; the kernel side records the same first fault.
"""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st
from numba import njit

from npusim.device.memory import (C_FAULT, C_FAULT_ADDR, C_FAULT_SIZE, DEV_ALIGN, FAULT_NONE,
                                  FAULT_OUT_OF_BOUNDS, FAULT_UNMAPPED, HOST_ALIGN, Memory)
from npusim.device.memview import _search, check


class _Blocks:
    """The reference: the live blocks as a sorted list of (arena offset, size)."""

    def __init__(self, m: Memory):
        self.m, self.rows = m, m.blocks()

    def last_at_or_before(self, off: int):
        best = None
        for lo, n in self.rows:
            if lo <= off:
                best = (lo, lo + n)
        return best

    def kernel(self, addr: int, n: int) -> tuple[int, int]:
        """(offset or -1, fault kind) of a kernel's checked view."""
        off = self.m.to_off(addr)
        if off < 0 or n < 0:
            return -1, FAULT_UNMAPPED
        b = self.last_at_or_before(off)
        if b is None or off + n > b[1]:
            return -1, FAULT_OUT_OF_BOUNDS
        return off, FAULT_NONE

    def allocation_of(self, addr: int):
        off = self.m.to_off(addr)
        b = self.last_at_or_before(off) if off >= 0 else None
        if b is None or off >= b[1]:
            return None
        return self.m.to_addr(b[0]), b[1] - b[0]

    def device_fits(self, addr: int, n: int):
        if not self.m.is_device(addr):
            return None
        b = self.last_at_or_before(self.m.to_off(addr))
        off = self.m.to_off(addr)
        return b is not None and off < b[1] and off + n <= b[1]


@njit(cache=True)
def _both(ctx, addrs, sizes, out):
    for k in range(len(addrs)):
        ctx[C_FAULT] = 0
        a = check(ctx, addrs[k], sizes[k])
        f = ctx[C_FAULT], ctx[C_FAULT_ADDR], ctx[C_FAULT_SIZE]
        ctx[C_FAULT] = 0
        b = _search(ctx, addrs[k], sizes[k])     # the slow path alone: the same answers
        out[k, 0], out[k, 1], out[k, 2], out[k, 3] = a, b, f[0], ctx[C_FAULT]
        out[k, 4] = f[1] == ctx[C_FAULT_ADDR] and f[2] == ctx[C_FAULT_SIZE]


DEV, HOST = 64 * DEV_ALIGN + 100, 48 * HOST_ALIGN + 7      # sizes off the granules on purpose


def _probes(m, rng, n):
    """Addresses near every block's start, end and padded end, the region ends, and random."""
    pts = [m.dev_base, m.dev_base + DEV, m.host_base, m.host_base + HOST, m.dev_base - 1, 0]
    for lo, n in m.blocks():
        a = m.to_addr(lo)
        for x in (a, a + n, a + n + DEV_ALIGN, a + DEV_ALIGN, a + HOST_ALIGN):
            pts.extend((x - 1, x, x + 1))
    base = np.array(pts, np.int64)
    addrs = np.concatenate([base, rng.integers(m.dev_base - 8, m.dev_base + DEV + 8, n),
                            rng.integers(m.host_base - 8, m.host_base + HOST + 8, n)])
    addrs = np.repeat(addrs, 6)
    sizes = np.tile(np.array([0, 1, 8, DEV_ALIGN, -1, 3 * DEV_ALIGN + 1], np.int64),
                    len(addrs) // 6)
    for lo, s in m.blocks():
        a = m.to_addr(lo)                       # exactly the whole block, and one byte more
        addrs = np.append(addrs, [a, a, a + 1])
        sizes = np.append(sizes, [s, s + 1, s - 1])
    return addrs.astype(np.int64), sizes.astype(np.int64)


ops = st.lists(st.tuples(st.booleans(), st.booleans(), st.integers(0, 3 * DEV_ALIGN + 5),
                         st.integers(0, 1 << 30)), min_size=1, max_size=40)


@settings(max_examples=60, deadline=None)
@given(ops, st.integers(0, 2**32 - 1))
def test_page_table_agrees_with_the_block_list(seq, seed):
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
        ref = _Blocks(m)
        for k in range(len(addrs)):
            a, n = int(addrs[k]), int(sizes[k])
            want = ref.kernel(a, n)
            assert (int(out[k, 0]), int(out[k, 2])) == want, (a, n, out[k].tolist(), want)
            assert m.allocation_of(a) == ref.allocation_of(a), (a, ref.rows)
            assert m.device_fits(a, n) == ref.device_fits(a, n), (a, n, ref.rows)
            b = int(addrs[(k * 7) % len(addrs)])
            assert m.device_pair_fits(a, b, n) == bool(ref.device_fits(a, n)
                                                        and ref.device_fits(b, n))


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
    # the host's lookups walk the capped entries to the same exact end
    n = (3 << 30) - 8
    for x in (a, a + 4096, a + (1 << 31), end - 8, end - 1):
        assert m.allocation_of(x) == (a, n)
        assert m.device_fits(x, end - x) and not m.device_fits(x, end - x + 1)
    assert m.allocation_of(end) is None and not m.device_fits(end, 0)
    assert m.device_pair_fits(a, end - 8, 8) and not m.device_pair_fits(a, end - 8, 9)
    m.free(a)
    assert not m.ptab.any()


def test_empty_ranges_at_granule_aligned_ends():
    """A block whose end is a granule boundary, with no block in the next granule: an empty
    range at its end lies in it (the last block starting at or before the address), one byte
    does not; the same at the device region's end, seen from the first pinned-host byte."""
    m = Memory(8 * DEV_ALIGN, 8 * HOST_ALIGN)
    a = m.malloc(DEV_ALIGN)                     # [0, 1) granules
    gap = m.malloc(DEV_ALIGN)                   # [1, 2)
    b = m.malloc(2 * DEV_ALIGN)                 # [2, 4)
    gap2 = m.malloc(DEV_ALIGN)                  # [4, 5)
    tail = m.malloc(3 * DEV_ALIGN)              # [5, 8): the device region's end
    hgap = m.malloc(HOST_ALIGN, host=True)
    h = m.malloc(HOST_ALIGN, host=True)
    for x, host in ((gap, False), (gap2, False), (hgap, True)):
        m.free(x, host=host)
    assert tail + 3 * DEV_ALIGN == m.dev_base + m.dev_size
    ends = [a + DEV_ALIGN, b + 2 * DEV_ALIGN, h + HOST_ALIGN, m.host_base]
    addrs = np.array([e for e in ends for _ in range(2)], np.int64)
    sizes = np.array([0, 1] * len(ends), np.int64)
    out = np.zeros((len(addrs), 5), np.int64)
    _both(m.ctx, addrs, sizes, out)
    ref = _Blocks(m)
    want = [ref.kernel(int(x), int(n)) for x, n in zip(addrs, sizes)]
    assert [(int(o[0]), int(o[2])) for o in out] == want
    assert (out[:, 0] == out[:, 1]).all()
    assert [w[0] >= 0 for w in want] == [True, False] * len(ends)
