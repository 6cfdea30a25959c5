"""DeviceState's host-side bookkeeping (``npusim/device/state.py``): sync slots."""
from __future__ import annotations

from npusim.device.state import DeviceState
from npusim.profiles import get_profile


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
