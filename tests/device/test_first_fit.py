"""The first-fit allocator's run index (``memory._Region``) gives the plain first fit's answers.

``_Region`` keeps its holes in runs with a bound on each run's largest hole, so a malloc reads
the bounds, not every hole below the one that fits. It must hand out exactly the addresses the
plain first fit (a sorted hole list scanned from the lowest address) gives, and leave exactly its
holes, after any sequence of mallocs and frees of any sizes — across run splits, merges and
runs emptied — and refuse with OutOfMemory exactly when it does, changing nothing.
"""
from __future__ import annotations

import bisect

import pytest
from hypothesis import given, settings, strategies as st

from npusim.device import memory as MEM
from npusim.device.memory import OutOfMemory, _Region


class _PlainFirstFit:
    """The reference: one sorted list of holes, scanned from the start (the allocator before
    the run index)."""

    def __init__(self, off, size, align):
        self.align = align
        self.holes = [(off, off + size)]
        self.live = {}

    def alloc(self, nbytes):
        need = -(-max(nbytes, 1) // self.align) * self.align
        for i, (lo, hi) in enumerate(self.holes):
            if hi - lo >= need:
                if hi - lo == need:
                    del self.holes[i]
                else:
                    self.holes[i] = (lo + need, hi)
                self.live[lo] = nbytes
                return lo
        raise OutOfMemory(nbytes)

    def free(self, off):
        nbytes = self.live.pop(off)
        need = -(-max(nbytes, 1) // self.align) * self.align
        lo, hi = off, off + need
        i = bisect.bisect_left(self.holes, (lo, hi))
        if i > 0 and self.holes[i - 1][1] == lo:
            lo = self.holes[i - 1][0]
            del self.holes[i - 1]
            i -= 1
        if i < len(self.holes) and self.holes[i][0] == hi:
            hi = self.holes[i][1]
            del self.holes[i]
        self.holes.insert(i, (lo, hi))
        return nbytes


def _check_runs(r: _Region) -> None:
    """The index's own invariants: runs in address order, non-empty, bounds and firsts right."""
    assert all(r._runs), "an empty run"
    assert r._firsts == [run[0][0] for run in r._runs]
    for run, bound in zip(r._runs, r._big):
        assert bound >= max(b - a for a, b in run)
        assert len(run) <= 2 * MEM._RUN
    flat = r.holes
    assert flat == sorted(flat) and all(a < b for a, b in flat)
    assert all(flat[k][1] < flat[k + 1][0] for k in range(len(flat) - 1)), "unmerged holes"


# steps: (malloc?, size in granules (0..20, skewed small), pick of the live block to free)
_steps = st.lists(st.tuples(st.booleans(), st.integers(0, 20), st.integers(0, 1 << 20)),
                  min_size=200, max_size=600)


@pytest.mark.parametrize("run", [2, 8])
@settings(max_examples=40, deadline=None)
@given(_steps)
def test_same_addresses_and_holes_as_the_plain_first_fit(run, steps):
    old = MEM._RUN
    MEM._RUN = run                      # tiny runs: splits and merges on every few steps
    try:
        r, ref = _Region(0, 512 * 400, 512), _PlainFirstFit(0, 512 * 400, 512)
        live: list[int] = []
        for do_malloc, g, pick in steps:
            if do_malloc or not live:
                n = g * 512 - (pick % 3) * 100     # sizes off the granules too
                try:
                    want = ref.alloc(n)
                except OutOfMemory:
                    before = (r.holes, dict(r.live))
                    with pytest.raises(OutOfMemory):
                        r.alloc(n)
                    assert (r.holes, r.live) == before
                    continue
                assert r.alloc(n) == want
                live.append(want)
            else:
                off = live.pop(pick % len(live))
                assert r.free(off) == ref.free(off)
            assert r.holes == ref.holes
            _check_runs(r)
    finally:
        MEM._RUN = old


def test_many_small_holes_below_do_not_change_the_answer():
    """10,000 holes of one granule below the tail: a two-granule block goes to the tail, a
    one-granule block to the lowest hole, as the plain first fit puts them."""
    r, ref = _Region(0, 512 * 30_000, 512), _PlainFirstFit(0, 512 * 30_000, 512)
    blocks = [r.alloc(512) for _ in range(20_000)]
    assert blocks == [ref.alloc(512) for _ in range(20_000)]
    for b in blocks[::2]:
        r.free(b)
        ref.free(b)
    assert r.alloc(1024) == ref.alloc(1024) == 512 * 20_000
    assert r.alloc(512) == ref.alloc(512) == 0
    assert r.holes == ref.holes
    _check_runs(r)


def test_runs_stay_few_when_frees_empty_them_in_order(monkeypatch):
    """Frees that merge holes run after run leave small runs, which join a neighbour: the runs
    stay about holes / _RUN, so a first fit still reads few bounds (not one per hole)."""
    monkeypatch.setattr(MEM, "_RUN", 8)
    n = 4 * 2 * 8 * 40 + 4
    r = _Region(0, n, 1)
    for _ in range(n):
        r.alloc(1)
    for k in range(0, n - 4, 4):
        r.free(k)
    for k in range(0, n - 4, 4):
        r.free(k + 2)
    j = 0
    while j < len(r._runs) - 1:
        while len(r._runs[j]) > 1:
            r.free(r._runs[j][0][1])           # the block after the run's first hole
        j += 1
    _check_runs(r)
    assert len(r._runs) <= 2 * len(r.holes) // 8 + 1


def test_a_split_leaves_exact_bounds(monkeypatch):
    """A free that splits a run gives both halves exact bounds (the freed hole's size is not
    added to the half it did not go to)."""
    monkeypatch.setattr(MEM, "_RUN", 1)
    r = _Region(0, 64, 1)
    for n in (4, 2, 5, 7):
        r.alloc(n)
    r.free(0)
    r.free(6)
    assert r._big == [max(b - a for a, b in run) for run in r._runs]
