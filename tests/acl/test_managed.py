"""Chapter 11-05 managed memory (npusim/runtime/api_managed.py, docs/fidelity.md #279-#283)."""
from __future__ import annotations

import numpy as np
import pytest

import npusim
from npusim import acl

MiB = 1 << 20
OK = 0
E_ACL, E_RT = 100000, 107000
DEV0 = {"type": 1, "id": 0}
HOST = {"type": 2, "id": 0}


def test_host_and_device_reach_the_same_bytes(dev0, stream):
    p, ret = acl.rt.mem_alloc_managed(100, 1)
    assert ret == OK
    view = acl.util.ptr_to_numpy(p, (2 * MiB,), np.uint8)            # rounded up to 2 MiB
    view[:16] = 5
    assert acl.rt.memset_async(p + 8, 8, 9, 8, stream) == OK
    assert acl.rt.synchronize_stream(stream) == OK
    assert list(view[:16]) == [5] * 8 + [9] * 8
    with pytest.raises(ValueError):
        acl.util.ptr_to_numpy(p, (2 * MiB + 1,), np.uint8)
    q, _ = acl.rt.malloc(64, 0)                                      # plain device memory: not
    with pytest.raises(ValueError):
        acl.util.ptr_to_numpy(q, (64,), np.uint8)
    assert acl.rt.free(p) == OK
    with pytest.raises(ValueError):
        acl.util.ptr_to_numpy(p, (16,), np.uint8)


def test_advice_and_attributes(dev0):
    p, _ = acl.rt.mem_alloc_managed(4 * MiB, 1)
    assert acl.rt.mem_managed_get_attr(1, p, 4 * MiB) == (0, OK)
    assert acl.rt.mem_managed_advise(p, 2 * MiB, 0, DEV0) == OK        # SET_READ_MOSTLY
    assert acl.rt.mem_managed_advise(p, 4 * MiB, 2, DEV0) == OK        # SET_PREFERRED_LOCATION
    assert acl.rt.mem_managed_advise(p, 4 * MiB, 4, HOST) == OK        # SET_ACCESSED_BY host
    vals, ret = acl.rt.mem_managed_get_attrs([1, 2, 3, 4, 5], 5, p, 4 * MiB)
    assert ret == OK and vals == [1, 0, [-1], 1, 0]
    assert acl.rt.mem_managed_advise(p, 4 * MiB, 3, DEV0) == OK        # UNSET_PREFERRED
    assert acl.rt.mem_managed_get_attr(2, p, 4 * MiB) == (-2, OK)


def test_prefetch_is_a_stream_task(dev0, stream):
    p, _ = acl.rt.mem_alloc_managed(4 * MiB, 1)
    assert acl.rt.mem_managed_prefetch_async(p, 2 * MiB, DEV0, 0, stream) == OK
    assert acl.rt.synchronize_stream(stream) == OK
    assert acl.rt.mem_managed_get_attrs([6, 7, 8], 3, p, 4 * MiB) == ([0, 1, 0], OK)
    q, _ = acl.rt.mem_alloc_managed(2 * MiB, 1)
    assert acl.rt.mem_managed_prefetch_batch_async([p, q], [2 * MiB, 2 * MiB], 2, [DEV0, HOST],
                                                   [0, 1], 2, 0, stream) == OK
    assert acl.rt.synchronize_stream(stream) == OK
    assert acl.rt.mem_managed_get_attr(6, q, 2 * MiB) == (-1, OK)
    # captured like any host function
    assert acl.mdl.ri_capture_begin(stream, 0) == OK
    assert acl.rt.mem_managed_prefetch_async(p, 2 * MiB, HOST, 0, stream) == OK
    model, ret = acl.mdl.ri_capture_end(stream)
    assert ret == OK
    assert acl.mdl.ri_execute_async(model, stream) == OK and acl.rt.synchronize_stream(stream) == OK
    assert acl.mdl.ri_destroy(model) == OK


def test_codes(dev0, stream):
    p, _ = acl.rt.mem_alloc_managed(2 * MiB, 1)
    assert acl.rt.mem_alloc_managed(64, 0) == (None, E_ACL)
    assert acl.rt.mem_alloc_managed(0, 1) == (None, E_RT)
    assert acl.rt.mem_alloc_managed(1 << 50, 1)[-1] == acl.ACL_ERROR_RT_MEMORY_ALLOCATION
    assert acl.rt.mem_managed_advise(0, 2 * MiB, 0, DEV0) == E_ACL
    assert acl.rt.mem_managed_advise(p, 0, 0, DEV0) == E_ACL
    assert acl.rt.mem_managed_advise(p, 2 * MiB, 6, DEV0) == E_RT
    assert acl.rt.mem_managed_advise(p, 2 * MiB, 0, {"type": 1, "id": 99}) == E_RT
    assert acl.rt.mem_managed_advise(p, 2 * MiB, 0, None) == E_RT
    assert acl.rt.mem_managed_advise(p, 4096, 0, DEV0) == E_RT           # not 2 MiB aligned
    assert acl.rt.mem_managed_advise(p, 4 * MiB, 0, DEV0) == E_RT         # past the allocation
    q, _ = acl.rt.malloc(64, 0)
    assert acl.rt.mem_managed_advise(q, 2 * MiB, 0, DEV0) == E_RT         # not managed
    assert acl.rt.mem_managed_get_attr(0, p, 2 * MiB) == (None, E_RT)
    assert acl.rt.mem_managed_get_attr(9, p, 2 * MiB) == (None, E_RT)
    assert acl.rt.mem_managed_get_attr(1, 0, 2 * MiB) == (None, E_ACL)
    assert acl.rt.mem_managed_get_attrs(None, 1, p, 2 * MiB) == (None, E_ACL)
    assert acl.rt.mem_managed_get_attrs([1, 0], 2, p, 2 * MiB) == (None, E_RT)
    assert acl.rt.mem_managed_prefetch_async(p, 2 * MiB, DEV0, 1, stream) == E_ACL
    assert acl.rt.mem_managed_prefetch_async(p, 0, DEV0, 0, stream) == E_ACL
    assert acl.rt.mem_managed_prefetch_async(p, 2 * MiB, {"type": 0, "id": 0}, 0, stream) == E_RT
    batch = acl.rt.mem_managed_prefetch_batch_async
    assert batch([p], [2 * MiB], 1, [DEV0], [0], 2, 0, stream) == E_ACL     # numLocs > count
    assert batch([p, p], [1, 1], 2, [DEV0, DEV0], [1, 1], 2, 0, stream) == E_RT   # idx[0] != 0
    assert batch([p, p], [1, 1], 2, [DEV0, DEV0], [0, 0], 2, 0, stream) == E_RT   # not rising
    assert batch([p, 0], [1, 1], 2, [DEV0], [0], 1, 0, stream) == E_RT            # NULL ptr
    assert batch(None, [1], 1, [DEV0], [0], 1, 0, stream) == E_ACL
    assert acl.rt.mem_p2p_map(p, 2 * MiB, 1, 0) == acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert acl.rt.mem_p2p_map(p, 2 * MiB, 999, 0) == acl.ACL_ERROR_RT_INVALID_DEVICEID
    assert acl.rt.mem_p2p_map(0, 2 * MiB, 1, 0) == E_ACL
    assert acl.rt.mem_p2p_map(p, 2 * MiB, 1, 1) == E_ACL


def test_950_refuses(acl):
    npusim.reset()
    npusim.configure(profile="Ascend950")
    assert acl.rt.set_device(0) == OK
    assert acl.rt.mem_alloc_managed(64, 1) == (None, acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT)


def test_census_counts_managed_allocations(dev0):
    base = npusim.census()
    p, _ = acl.rt.mem_alloc_managed(64, 1)
    assert npusim.census().diff(base)["device 0 managed allocations"] == 1
    assert acl.rt.free(p) == OK
    assert npusim.census().diff(base) == {}


def test_pointer_attributes(dev0):
    p, _ = acl.rt.mem_alloc_managed(64, 1)
    d, _ = acl.rt.malloc(64, 0)
    h, _ = acl.rt.malloc_host(64)
    a = acl.util.numpy_to_ptr(np.zeros(8, np.uint8))
    assert acl.rt.pointer_get_attributes(d) == ({"location": {"type": 1, "id": 0},
                                                 "pageSize": 2 * MiB}, OK)
    assert acl.rt.pointer_get_attributes(p)[0]["location"] == {"type": 3, "id": 0}
    assert acl.rt.pointer_get_attributes(h)[0]["location"] == {"type": 0, "id": 0}
    assert acl.rt.pointer_get_attributes(a)[0]["location"] == {"type": 2, "id": 0}
    assert acl.rt.pointer_get_attributes(0) == (None, E_ACL)
