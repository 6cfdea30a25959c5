"""Device memory of the chip's size (docs/fidelity.md #260): aclrtGetMemInfo reports the
profile's HBM, allocations move its free figure, and memory that is never written costs none."""
from __future__ import annotations

import os

import numpy as np
import pytest

import npusim
from npusim import acl
from npusim.device.memory import may_reserve
from npusim.runtime.runtime import RT

GiB = 1 << 30
needs_reservation = pytest.mark.skipif(not may_reserve(),
                                       reason="address space cannot be reserved here")


def _rss() -> int:
    """Resident bytes of this process (anonymous and shared), from /proc."""
    with open(f"/proc/{os.getpid()}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@needs_reservation
@pytest.mark.parametrize("profile,total", [("Ascend910B", 64 * GiB), ("Ascend910_93", 64 * GiB),
                                           ("Ascend950", 128 * GiB),
                                           ("Ascend310P", 24_000_000_000)])
def test_get_mem_info_reports_the_chips_hbm(profile, total):
    npusim.configure(profile=profile)
    assert acl.rt.set_device(0) == 0
    free, tot, ret = acl.rt.get_mem_info(acl.ACL_HBM_MEM)
    assert ret == 0 and tot == total
    assert total - 64 * 2**20 < free <= total        # the runtime's own buffers are small


@needs_reservation
def test_free_moves_with_allocations(dev0):
    free0, total, _ = acl.rt.get_mem_info(acl.ACL_HBM_MEM)
    p, ret = acl.rt.malloc(3 * GiB, 0)
    assert ret == 0
    free1 = acl.rt.get_mem_info(acl.ACL_HBM_MEM)[0]
    assert free0 - free1 >= 3 * GiB and free0 - free1 < 3 * GiB + 4096
    assert acl.rt.free(p) == 0
    assert acl.rt.get_mem_info(acl.ACL_HBM_MEM)[0] == free0


@needs_reservation
def test_a_60_gib_allocation_never_touched_costs_no_memory(dev0):
    before = _rss()
    p, ret = acl.rt.malloc(60 * GiB, 0)
    assert ret == 0
    after = _rss()
    assert after - before < 256 * 2**20                 # generous: no 60 GiB (nor 1 GiB) of it
    # it is real memory: both ends can be written and read back
    a = np.arange(16, dtype=np.uint8)
    assert acl.rt.memcpy(p, 16, acl.util.numpy_to_ptr(a), 16, 1) == 0
    assert acl.rt.memcpy(p + 60 * GiB - 16, 16, acl.util.numpy_to_ptr(a), 16, 1) == 0
    b = np.zeros(16, np.uint8)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(b), 16, p + 60 * GiB - 16, 16, 2) == 0
    assert (b == a).all()
    assert _rss() - before < 256 * 2**20
    mem = RT.devices[0].state.mem
    assert mem.allocation_of(p + 30 * GiB) == (p, mem.allocation_of(p)[1])
    assert acl.rt.free(p) == 0
    assert mem.allocation_of(p + 30 * GiB) is None and mem.allocation_of(p) is None
    assert int(mem.ptab[(30 * GiB) >> 9]) == 0           # the capped entries are gone


@needs_reservation
def test_the_hbm_is_the_limit_not_the_addresses(dev0):
    free, total, _ = acl.rt.get_mem_info(acl.ACL_HBM_MEM)
    p, ret = acl.rt.malloc(free - (1 << 20), 0)          # nearly all of it
    assert ret == 0
    assert acl.rt.malloc(2 << 20, 0) == (None, acl.ACL_ERROR_RT_MEMORY_ALLOCATION)
    assert acl.rt.free(p) == 0
    q, ret = acl.rt.malloc(2 << 20, 0)
    assert ret == 0 and acl.rt.free(q) == 0


def test_configured_size_wins(acl):
    npusim.reset()
    npusim.configure(hbm_bytes=256 << 20)
    assert acl.rt.set_device(0) == 0
    free, total, ret = acl.rt.get_mem_info(acl.ACL_HBM_MEM)
    assert ret == 0 and total == 256 << 20
    assert acl.rt.malloc(300 << 20, 0)[1] == acl.ACL_ERROR_RT_MEMORY_ALLOCATION


@needs_reservation
def test_many_devices_and_resets_keep_memory_flat(acl):
    """100 devices made and dropped: address space is reserved, not committed, and a closed
    device gives its pages back."""
    before = _rss()
    for i in range(100):
        npusim.reset()
        assert acl.rt.set_device(i % 8) == 0
        p, ret = acl.rt.malloc(1 << 20, 0)
        assert ret == 0 and acl.rt.memset(p, 1 << 20, 1, 1 << 20) == 0
    npusim.reset()
    assert _rss() - before < 512 * 2**20
    assert not RT.devices


def test_without_a_reservation_the_former_sizes_apply(acl, monkeypatch):
    """Strict overcommit or an RLIMIT_AS: np.zeros arrays, the HBM capped at 4 GiB, and the
    virtual-memory APIs refused (they need the reservation)."""
    import npusim.device.memory as M
    import npusim.runtime.device as D
    npusim.reset()
    monkeypatch.setattr(M, "may_reserve", lambda: False)
    monkeypatch.setattr(D, "may_reserve", lambda: False)
    assert acl.rt.set_device(0) == 0
    mem = RT.devices[0].state.mem
    assert mem.arena_map is None and mem.ptab_map is None
    assert acl.rt.get_mem_info(acl.ACL_HBM_MEM)[1] == 4 * GiB
    p, ret = acl.rt.malloc(1 << 20, 0)
    assert ret == 0 and acl.rt.free(p) == 0
    prop = {"handleType": 0, "allocationType": 0, "memAttr": 4,
            "location": {"type": 1, "id": 0}, "reserve": 0}
    assert acl.rt.malloc_physical(2 << 20, prop, 0) == (None, acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT)
    npusim.reset()
