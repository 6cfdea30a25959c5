"""Chapter 11-04 virtual memory management (npusim/runtime/api_vmm.py, docs/fidelity.md #261-#266):
the caching-allocator sequence, data through unmap and remap, aliasing, codes of hostile arguments."""
from __future__ import annotations

import numpy as np
import pytest

import npusim
from npusim import acl
from npusim.acl import pyacl
from npusim.device.memory import can_remap

pytestmark = pytest.mark.skipif(not can_remap(), reason="no memfd / reservation on this host")

MiB = 1 << 20
OK = 0
PROP = {"handleType": 0, "allocationType": 0, "memAttr": 4,      # ACL_HBM_MEM_HUGE
        "location": {"type": 1, "id": 0}, "reserve": 0}
RW = {"flags": 3, "location": {"type": 1, "id": 0}}


def _h2d(ptr, a):
    assert acl.rt.memcpy(ptr, a.nbytes, acl.util.numpy_to_ptr(a), a.nbytes, 1) == OK


def _d2h(ptr, n):
    b = np.zeros(n, np.uint8)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(b), n, ptr, n, 2) == OK
    return b


def test_caching_allocator_sequence(dev0):
    """vllm-ascend's sleep mode: reserve -> malloc physical -> map -> set access -> use ->
    unmap -> free physical -> release; get_mem_info and the census move and come back."""
    base = npusim.census()
    free0 = acl.rt.get_mem_info(acl.ACL_HBM_MEM)[0]
    gran, ret = acl.rt.mem_get_allocation_granularity(PROP, 0)
    assert ret == OK and gran == 2 * MiB
    va, ret = acl.rt.reserve_mem_address(4 * gran, 0, 0, 0)
    assert ret == OK and va % gran == 0
    assert acl.rt.get_mem_info(acl.ACL_HBM_MEM)[0] == free0      # addresses are not memory
    h, ret = acl.rt.malloc_physical(2 * gran, PROP, 0)
    assert ret == OK and h
    assert acl.rt.get_mem_info(acl.ACL_HBM_MEM)[0] == free0 - 2 * gran
    assert acl.rt.map_mem(va, 2 * gran, 0, h, 0) == OK
    assert acl.rt.mem_set_access(va, 2 * gran, [RW], 1) == OK
    # a kernel-free use: memset on a stream, then read back
    s, _ = acl.rt.create_stream()
    assert acl.rt.memset_async(va + gran, 64, 7, 64, s) == OK
    assert acl.rt.synchronize_stream(s) == OK
    assert (_d2h(va + gran, 64) == 7).all()
    assert acl.rt.mem_get_access(va + 5) == ({"type": 1, "id": 0}, 3, OK)
    assert acl.rt.mem_retain_allocation_handle(va + gran)[:1] == (h,)
    assert acl.rt.mem_get_address_range(va + 100) == (va, 4 * gran, OK)
    prop, ret = acl.rt.mem_get_allocation_properties_from_handle(h)
    assert ret == OK and prop["memAttr"] == 4 and prop["location"] == {"type": 1, "id": 0}
    assert npusim.census().diff(base) == {"device 0 reserved ranges": 1,
                                          "device 0 vmm mappings": 1,
                                          "device 0 physical handles": 1,
                                          "handles physmem": 1, "device 0 streams": 1,
                                          "device 0 sqs": 1, "handles stream": 1}
    assert acl.rt.unmap_mem(va) == OK
    assert acl.rt.free_physical(h) == OK
    assert acl.rt.release_mem_address(va) == OK
    assert acl.rt.destroy_stream(s) == OK
    assert acl.rt.get_mem_info(acl.ACL_HBM_MEM)[0] == free0
    assert npusim.census().diff(base) == {}


def test_data_survives_unmap_and_a_map_elsewhere(dev0):
    va, _ = acl.rt.reserve_mem_address(8 * MiB, 0, 0, 0)
    h, _ = acl.rt.malloc_physical(2 * MiB, PROP, 0)
    a = np.arange(256, dtype=np.uint8)
    assert acl.rt.map_mem(va, 2 * MiB, 0, h, 0) == OK
    _h2d(va + 4096, a)
    assert acl.rt.unmap_mem(va) == OK
    # the addresses are no memory any more
    b = np.zeros(16, np.uint8)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(b), 16, va, 16, 2) == acl.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.map_mem(va + 4 * MiB, 2 * MiB, 0, h, 0) == OK
    assert (_d2h(va + 4 * MiB + 4096, 256) == a).all()
    assert acl.rt.unmap_mem(va + 4 * MiB) == OK
    assert acl.rt.free_physical(h) == OK and acl.rt.release_mem_address(va) == OK


def test_one_handle_at_two_addresses_aliases(dev0):
    va, _ = acl.rt.reserve_mem_address(4 * MiB, 0, 0, 0)
    h, _ = acl.rt.malloc_physical(2 * MiB, PROP, 0)
    assert acl.rt.map_mem(va, 2 * MiB, 0, h, 0) == OK
    assert acl.rt.map_mem(va + 2 * MiB, 2 * MiB, 0, h, 0) == OK
    a = np.full(32, 9, np.uint8)
    _h2d(va + 100, a)
    assert (_d2h(va + 2 * MiB + 100, 32) == 9).all()
    s, _ = acl.rt.create_stream()                          # the engine sees it too
    assert acl.rt.memset_async(va + 2 * MiB + 200, 8, 5, 8, s) == OK
    assert acl.rt.synchronize_stream(s) == OK
    assert (_d2h(va + 200, 8) == 5).all()
    assert acl.rt.free_physical(h) == acl.ACL_ERROR_RT_PARAM_INVALID          # still mapped
    assert acl.rt.release_mem_address(va) == acl.ACL_ERROR_RT_PARAM_INVALID   # still mapped
    for p in (va, va + 2 * MiB):
        assert acl.rt.unmap_mem(p) == OK
    assert acl.rt.free_physical(h) == OK and acl.rt.release_mem_address(va) == OK


def test_map_no_access_faults_until_set_access(dev0):
    va, _ = acl.rt.reserve_mem_address(2 * MiB, 0, 0, 0)
    h, _ = acl.rt.malloc_physical(2 * MiB, PROP, 0)
    assert acl.rt.mem_map_no_access(va, 2 * MiB, 0, h, 0) == OK
    assert acl.rt.mem_get_access(va)[1] == 0
    b = np.zeros(16, np.uint8)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(b), 16, va, 16, 2) == acl.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.mem_set_access(va, 2 * MiB, RW, 1) == OK
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(b), 16, va, 16, 2) == OK
    assert acl.rt.mem_set_access(va, 2 * MiB, {"flags": 0, "location": {"type": 1, "id": 0}},
                                 1) == OK
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(b), 16, va, 16, 2) == acl.ACL_ERROR_RT_PARAM_INVALID


def test_physical_memory_is_the_hbm(dev0):
    free, total, _ = acl.rt.get_mem_info(acl.ACL_HBM_MEM)
    h, ret = acl.rt.malloc_physical(free + 2 * MiB, PROP, 0)
    assert (h, ret) == (None, acl.ACL_ERROR_RT_MEMORY_ALLOCATION)
    h, ret = acl.rt.malloc_physical(3 * MiB, PROP, 0)         # rounded to the granularity
    assert ret == OK and acl.rt.get_mem_info(acl.ACL_HBM_MEM)[0] == free - 4 * MiB
    assert acl.rt.free_physical(h) == OK
    assert acl.rt.free_physical(h) == acl.ACL_ERROR_RT_PARAM_INVALID           # twice


def test_reset_device_frees_everything(dev0):
    base = npusim.census()
    va, _ = acl.rt.reserve_mem_address(2 * MiB, 0, 0, 0)
    h, _ = acl.rt.malloc_physical(2 * MiB, PROP, 0)
    assert acl.rt.map_mem(va, 2 * MiB, 0, h, 0) == OK
    assert acl.rt.reset_device(0) == OK          # the fixture's aclrtSetDevice was the only one
    assert acl.rt.set_device(0) == OK
    d = npusim.census().diff(base)
    assert not {k: v for k, v in d.items() if "physmem" in k or "vmm" in k or "reserved" in k
                or "physical" in k}
    assert acl.rt.unmap_mem(va) == acl.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.free_physical(h) == acl.ACL_ERROR_RT_PARAM_INVALID


E_ACL, E_RT = acl.ACL_ERROR_INVALID_PARAM, acl.ACL_ERROR_RT_PARAM_INVALID


@pytest.mark.parametrize("args,code", [
    ((0, 0, 0, 0), E_ACL),                    # size 0
    ((2 * MiB, 0, 0, 2), E_ACL),              # flags not 0 / 1
    ((2 * MiB, 4096, 0, 0), E_RT),            # alignment is reserved
    ((2 * MiB, 0, 1 << 44, 0), acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT),   # expectPtr
    ((None, 0, 0, 0), E_ACL), ((1.5, 0, 0, 0), E_ACL), ((-1, 0, 0, 0), E_ACL),
    ((1 << 50, 0, 0, 0), acl.ACL_ERROR_RT_MEMORY_ALLOCATION),
])
def test_reserve_codes(dev0, args, code):
    assert acl.rt.reserve_mem_address(*args)[-1] == code


def test_reserve_needs_a_context():
    assert acl.rt.reserve_mem_address(2 * MiB, 0, 0, 0) == (None, acl.ACL_ERROR_RT_CONTEXT_NULL)


@pytest.mark.parametrize("change,code", [
    ({"handleType": 2}, E_ACL), ({"allocationType": 1}, E_ACL),
    ({"location": {"type": 2, "id": 0}}, E_ACL), ({"location": {"type": 3, "id": 0}}, E_ACL),
    ({"memAttr": 2}, E_ACL),                  # a DDR kind on the device
    ({"memAttr": 1}, E_ACL),                  # ACL_HBM_MEM: not in the handler table
    ({"memAttr": 99}, E_ACL), ({"memAttr": "x"}, E_ACL), ({"location": None}, E_ACL),
    ({"location": {"type": 1, "id": 99}}, acl.ACL_ERROR_RT_INVALID_DEVICEID),
    ({"location": {"type": 0, "id": 0}}, acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT),   # host
])
def test_malloc_physical_prop_codes(dev0, change, code):
    prop = {**PROP, **change}
    h, ret = acl.rt.malloc_physical(2 * MiB, prop, 0)
    assert (h, ret) == (None, code)
    assert acl.get_recent_err_msg()


def test_malloc_physical_other_codes(dev0):
    assert acl.rt.malloc_physical(0, PROP, 0)[-1] == E_ACL
    assert acl.rt.malloc_physical(2 * MiB, None, 0)[-1] == E_ACL
    assert acl.rt.malloc_physical(2 * MiB, PROP, 1)[-1] == E_ACL
    assert acl.rt.malloc_physical(2 * MiB, [1, 2], 0)[-1] == E_ACL


def test_map_codes(dev0):
    va, _ = acl.rt.reserve_mem_address(4 * MiB, 0, 0, 0)
    h, _ = acl.rt.malloc_physical(2 * MiB, PROP, 0)
    assert acl.rt.map_mem(0, 2 * MiB, 0, h, 0) == E_ACL
    assert acl.rt.map_mem(va, 2 * MiB, 0, 0, 0) == E_ACL
    assert acl.rt.map_mem(va, 0, 0, h, 0) == E_ACL
    assert acl.rt.map_mem(va, 2 * MiB, 0, h, 1) == E_ACL
    assert acl.rt.map_mem(va, 2 * MiB, 0, 12345, 0) == E_RT             # not a handle
    assert acl.rt.map_mem(va, 2 * MiB, 4096, h, 0) == E_RT              # offset
    assert acl.rt.map_mem(va, 4 * MiB, 0, h, 0) == E_RT                 # not the handle's size
    assert acl.rt.map_mem(va + 4096, 2 * MiB, 0, h, 0) == E_RT          # unaligned
    assert acl.rt.map_mem(va + 4 * MiB, 2 * MiB, 0, h, 0) == E_RT       # past the range
    p, _ = acl.rt.malloc(64, 0)
    assert acl.rt.map_mem(p, 2 * MiB, 0, h, 0) == E_RT                  # not reserved
    assert acl.rt.map_mem(va, 2 * MiB, 0, h, 0) == OK
    assert acl.rt.map_mem(va, 2 * MiB, 0, h, 0) == E_RT                 # overlaps
    assert acl.rt.unmap_mem(0) == E_ACL
    assert acl.rt.unmap_mem(va + 4096) == E_RT
    assert acl.rt.release_mem_address(0) == E_ACL
    assert acl.rt.release_mem_address(va + 2 * MiB) == E_RT
    assert acl.rt.free_physical(0) == E_ACL


def test_set_and_get_access_codes(dev0):
    va, _ = acl.rt.reserve_mem_address(4 * MiB, 0, 0, 0)
    h, _ = acl.rt.malloc_physical(2 * MiB, PROP, 0)
    assert acl.rt.map_mem(va, 2 * MiB, 0, h, 0) == OK
    assert acl.rt.mem_set_access(0, 2 * MiB, RW, 1) == E_RT
    assert acl.rt.mem_set_access(va, 2 * MiB, None, 1) == E_RT
    assert acl.rt.mem_set_access(va, 2 * MiB, RW, 0) == E_RT
    assert acl.rt.mem_set_access(va, 2 * MiB, "x", 1) == E_RT
    assert acl.rt.mem_set_access(va, 2 * MiB, {"flags": 2, "location": {"type": 1, "id": 0}},
                                 1) == E_RT
    assert acl.rt.mem_set_access(va, 4 * MiB, RW, 1) == E_RT             # past the mapping
    assert acl.rt.mem_set_access(va, 2 * MiB, {"flags": 3, "location": {"type": 1, "id": 1}},
                                 1) == E_RT                              # peer access
    assert acl.rt.mem_get_access(0)[-1] == E_ACL
    assert acl.rt.mem_get_access(va + 2 * MiB)[-1] == E_RT
    assert acl.rt.mem_retain_allocation_handle(0)[-1] == E_ACL
    assert acl.rt.mem_retain_allocation_handle(va + 2 * MiB)[-1] == E_RT
    assert acl.rt.mem_get_allocation_properties_from_handle(0)[-1] == E_ACL
    assert acl.rt.mem_get_allocation_properties_from_handle(777)[-1] == E_RT
    assert acl.rt.mem_get_address_range(0)[-1] == E_ACL
    assert acl.rt.mem_get_address_range(1 << 60)[-1] == E_RT


def test_granularity(dev0):
    assert acl.rt.mem_get_allocation_granularity({**PROP, "memAttr": 10}, 1) == (1 << 30, OK)
    assert acl.rt.mem_get_allocation_granularity(None, 0)[-1] == E_ACL
    assert acl.rt.mem_get_allocation_granularity({**PROP, "memAttr": 3}, 0)[-1] == E_ACL
    assert acl.rt.mem_get_allocation_granularity(PROP, 7)[-1] == E_RT


def test_ipc_is_refused_with_a_reason(dev0):
    h, _ = acl.rt.malloc_physical(2 * MiB, PROP, 0)
    for call in (lambda: acl.rt.mem_export_to_shareable_handle(h, 0, 0),
                 lambda: acl.rt.mem_export_to_shareable_handle_v2(h, 0, 1),
                 lambda: acl.rt.mem_import_from_shareable_handle(1, 0),
                 lambda: acl.rt.mem_import_from_shareable_handle_v2(1, 1, 0)):
        assert call() == (None, acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT)
    areas = {name: area for _, name, _, _, area in pyacl.REFUSED}      # pyACL's refusal table
    for name in ("export_to_shareable_handle", "import_from_shareable_handle",
                 "set_pid_to_shareable_handle"):
        for v in ("", "_v2"):
            assert "IPC" in areas[f"mem_{name}{v}"]
    assert acl.rt.mem_set_pid_to_shareable_handle(1, [1], 1) == 207000
    assert acl.rt.mem_set_pid_to_shareable_handle_v2(1, 1, [1], 1) == 207000


def test_a_memory_pool_range_is_not_a_reserved_range(dev0):
    va, _ = acl.rt.reserve_mem_address(2 * MiB, 0, 0, 0)
    pool, ret = acl.rt.mem_pool_create({"allocType": 0, "handleType": 0,
                                        "location": {"type": 1, "id": 0}, "maxSize": 8 * MiB})
    assert ret == OK
    s, _ = acl.rt.create_stream()
    blk, _ = acl.rt.mem_pool_malloc_async(2 * MiB, pool, s)
    h, _ = acl.rt.malloc_physical(2 * MiB, PROP, 0)
    assert acl.rt.map_mem(blk, 2 * MiB, 0, h, 0) == E_RT
    assert acl.rt.release_mem_address(blk) == E_RT
    assert acl.rt.mem_get_address_range(va + 1) == (va, 2 * MiB, OK)


def test_map_selected_link_aliases_the_source_mappings(dev0):
    src, _ = acl.rt.reserve_mem_address(4 * MiB, 0, 0, 0)
    dst, _ = acl.rt.reserve_mem_address(4 * MiB, 0, 0, 0)
    h1, _ = acl.rt.malloc_physical(2 * MiB, PROP, 0)
    h2, _ = acl.rt.malloc_physical(2 * MiB, PROP, 0)
    assert acl.rt.map_mem(src, 2 * MiB, 0, h1, 0) == OK
    assert acl.rt.map_mem(src + 2 * MiB, 2 * MiB, 0, h2, 0) == OK
    _h2d(src + 2 * MiB + 8, np.full(8, 3, np.uint8))
    assert acl.rt.mem_map_selected_link(dst, 4 * MiB, src, 1) == OK
    assert (_d2h(dst + 2 * MiB + 8, 8) == 3).all()
    assert acl.rt.mem_retain_allocation_handle(dst + 2 * MiB)[0] == h2
    assert acl.rt.mem_map_selected_link(dst, 4 * MiB, src, 0) == E_RT      # mapped already
    for p in (dst, dst + 2 * MiB, src, src + 2 * MiB):
        assert acl.rt.unmap_mem(p) == OK
    assert acl.rt.mem_map_selected_link(dst, 4 * MiB, src, 0) == E_RT      # source unmapped
    assert acl.rt.mem_map_selected_link(0, 4 * MiB, src, 0) == E_ACL
    assert acl.rt.mem_map_selected_link(dst, 0, src, 0) == E_ACL
    assert acl.rt.mem_map_selected_link(dst, 4 * MiB, src, 2) == E_ACL
    assert acl.rt.mem_map_selected_link(dst, 2 * MiB, src, 0) == E_RT      # not the range's size
