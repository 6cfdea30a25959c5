"""DeviceState's host-side bookkeeping (``npusim/device/state.py``): sync slots, the SQE pool."""
from __future__ import annotations

import numpy as np
import pytest

from npusim.device import engine as E
from npusim.device import state as ST
from npusim.device import sqe as S
from npusim.device.state import DeviceState
from npusim.profiles import get_profile


@pytest.mark.parametrize("reserve", ["reserved", "none", "outgrown"])
def test_the_pool_grows_keeping_its_rows_and_runs(monkeypatch, reserve):
    """Rings past the pool's rows grow it (a longer view of the reserved pages; with no
    reservation, or past it, an array of its own that grows in place): the rows written before
    keep their SQEs, a view taken before still reads them when nothing moved, and the engine
    runs the SQ written before and the one after."""
    n0 = 1 << 14                                    # the pool's first rows
    monkeypatch.setattr(ST, "POOL_RESERVE", {"reserved": ST.POOL_RESERVE, "none": 0,
                                             "outgrown": n0 * S.SQE_DTYPE.itemsize}[reserve])
    d = DeviceState(get_profile("Ascend910B"), 1 << 20, 1 << 16)
    assert len(d.pool) == n0 and (d._pool_map is None) == (reserve == "none")
    w = d.mem.malloc(8)
    first = d.alloc_sq(8)
    d.push(first, S.OP_MEMSET, 0, a0=w, a1=3, a2=4)
    before = d.pool[:n0]
    d.flush()
    big = d.alloc_sq(n0)                            # past the rows the pool had
    assert len(d.pool) >= n0 + 8
    d.push(big, S.OP_MEMSET, 0, a0=w + 4, a1=5, a2=4)
    d.flush()
    row = d.row_of(first, 0)
    assert d.pool[row]["op"] == S.OP_MEMSET and d.pool[row]["a1"] == 3
    assert (d._pool_map is not None) == (reserve == "reserved")
    if reserve == "reserved":
        assert before[row]["a1"] == 3 and before.ctypes.data == d.pool.ctypes.data
    assert d.run() == E.R_IDLE
    assert list(d.mem.view(w, 8)) == [3] * 4 + [5] * 4
    assert not d.pool[d.pool_used:].view(np.uint8).any()    # rows not handed out: zeros


def test_a_small_device_holds_no_huge_page():
    """Huge pages start past the pool's first 4 MiB, so a device that wrote a few SQEs holds
    small pages only (with the whole mapping advised, each device held a 2 MiB page)."""
    assert ST._HUGE_FROM >= (1 << 14) * S.SQE_DTYPE.itemsize


def test_sync_slots_come_zeroed_across_a_growth_of_the_table():
    """``alloc_slot`` zeroes a slot's row through a flat view of ``sync`` that follows the
    table when it grows (``sync`` is replaced there): every slot handed out, fresh or reused,
    before or after a growth, reads as zeros, and the engine's array is the one written."""
    d = DeviceState(get_profile("Ascend910B"), 1 << 20, 1 << 16)
    n0 = len(d.sync)
    slots = [d.alloc_slot() for _ in range(n0)]
    d.sync[:] = 7                                   # every row dirty (as after running tasks)
    extra = d.alloc_slot()                          # grows (replaces) the table
    assert len(d.sync) == 2 * n0 and not d.sync[extra].any()
    assert (d.sync[slots] == 7).all()               # the old rows were kept
    d.free_slot(slots[3])
    assert not d.sync[slots[3]].any()
    d.sync[slots[3]] = 9
    again = d.alloc_slot()                          # reuses the freed slot
    assert again == slots[3] and not d.sync[again].any()
    d.sync[extra + 1] = 5                           # a row past the ones handed out
    assert d.alloc_slot() == extra + 1 and not d.sync[extra + 1].any()


def test_device_fits_is_allocation_of_and_its_end():
    """``Memory.device_fits`` (an async memset's one-frame check) answers what the allocation
    lookup does: None outside device memory, else whether ``[a, a+n)`` lies in one live
    allocation — at every offset around a few allocations, one of them freed."""
    import random
    d = DeviceState(get_profile("Ascend910B"), 1 << 20, 1 << 16)
    mem = d.mem
    blocks = [mem.malloc(n) for n in (64, 100, 4096, 512)]
    mem.free(blocks[1])
    host = mem.malloc(256, host=True)
    rnd = random.Random(5)
    addrs = [b + o for b in blocks + [host] for o in (-1, 0, 1, 63, 64, 99, 100, 511, 4095)]
    addrs += [mem.dev_base - 1, mem.dev_base + mem.dev_size, 0]
    for a in addrs:
        for n in (1, 2, 64, 100, 4096, rnd.randint(1, 5000)):
            want = None
            if mem.dev_base <= a < mem.dev_base + mem.dev_size:
                hit = mem.allocation_of(a)
                want = hit is not None and a + n <= hit[0] + hit[1]
            assert mem.device_fits(a, n) == want, (hex(a), n)
