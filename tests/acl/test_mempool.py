"""Chapter 11-10 stream-ordered memory pools (npusim/runtime/api_mempool.py, docs/fidelity.md
#268-#273): blocks, same-stream reuse, attributes, trim, capture, codes."""
from __future__ import annotations

import numpy as np
import pytest

import npusim
from npusim import acl

MiB = 1 << 20
OK = 0
E_ACL, E_RT, E_INTERNAL = 100000, 107000, 507000
PROPS = {"allocType": 0, "handleType": 0, "location": {"type": 1, "id": 0}, "maxSize": 64 * MiB}
RES_CUR, RES_HIGH, USED_CUR, USED_HIGH, THRESHOLD = 5, 6, 7, 8, 4


@pytest.fixture
def pool(dev0):
    p, ret = acl.rt.mem_pool_create(PROPS)
    assert ret == OK
    return p


def _d2h(ptr, n):
    b = np.zeros(n, np.uint8)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(b), n, ptr, n, 2) == OK
    return b


def test_malloc_use_free_and_reuse_on_the_same_stream(pool, stream):
    free0 = acl.rt.get_mem_info(acl.ACL_HBM_MEM)[0]
    a, ret = acl.rt.mem_pool_malloc_async(100, pool, stream)
    assert ret == OK and a % (2 * MiB) == 0
    assert free0 - acl.rt.get_mem_info(acl.ACL_HBM_MEM)[0] >= 2 * MiB     # a 2 MiB block
    # (and the stream's first args ring, the runtime's own memory)
    assert acl.rt.memset_async(a, 100, 3, 100, stream) == OK
    assert acl.rt.synchronize_stream(stream) == OK
    assert (_d2h(a, 100) == 3).all()
    assert acl.rt.mem_pool_get_attr(pool, USED_CUR) == (2 * MiB, OK)
    assert acl.rt.mem_pool_free_async(a, stream) == OK
    assert acl.rt.mem_pool_get_attr(pool, USED_CUR) == (0, OK)
    assert acl.rt.mem_pool_get_attr(pool, RES_CUR) == (2 * MiB, OK)       # cached, not released
    b, ret = acl.rt.mem_pool_malloc_async(2 * MiB, pool, stream)
    assert (b, ret) == (a, OK)                                            # reused
    assert acl.rt.mem_pool_get_attr(pool, RES_CUR) == (2 * MiB, OK)


def test_another_stream_does_not_reuse_a_cached_block(pool, stream):
    other, _ = acl.rt.create_stream()
    a, _ = acl.rt.mem_pool_malloc_async(MiB, pool, stream)
    assert acl.rt.mem_pool_free_async(a, stream) == OK
    b, ret = acl.rt.mem_pool_malloc_async(MiB, pool, other)
    assert ret == OK and b != a
    assert acl.rt.mem_pool_get_attr(pool, RES_CUR) == (4 * MiB, OK)


def test_a_full_pool_and_trim(pool, stream):
    blocks = [acl.rt.mem_pool_malloc_async(16 * MiB, pool, stream)[0] for _ in range(4)]
    assert all(blocks)
    assert acl.rt.mem_pool_malloc_async(2 * MiB, pool, stream) == (None, E_INTERNAL)
    assert acl.get_recent_err_msg()
    other, _ = acl.rt.create_stream()
    for b in blocks:
        assert acl.rt.mem_pool_free_async(b, stream) == OK
    # cached blocks of another stream are not reused: the pool is full until trimmed
    assert acl.rt.mem_pool_malloc_async(2 * MiB, pool, other)[-1] == E_INTERNAL
    free = acl.rt.get_mem_info(acl.ACL_HBM_MEM)[0]
    assert acl.rt.mem_pool_trim_to(pool, 16 * MiB) == OK
    assert acl.rt.mem_pool_get_attr(pool, RES_CUR) == (16 * MiB, OK)
    assert acl.rt.get_mem_info(acl.ACL_HBM_MEM)[0] == free + 48 * MiB
    assert acl.rt.mem_pool_malloc_async(2 * MiB, pool, other)[-1] == OK
    assert acl.rt.mem_pool_get_attr(pool, RES_HIGH) == (64 * MiB, OK)
    assert acl.rt.mem_pool_get_attr(pool, USED_HIGH) == (64 * MiB, OK)
    assert acl.rt.mem_pool_set_attr(pool, USED_HIGH, 0) == OK
    assert acl.rt.mem_pool_get_attr(pool, USED_HIGH) == (0, OK)


def test_trim_codes(pool, stream):
    a, _ = acl.rt.mem_pool_malloc_async(4 * MiB, pool, stream)
    assert acl.rt.mem_pool_trim_to(0, 0) == E_ACL
    assert acl.rt.mem_pool_trim_to(pool, 65 * MiB) == E_INTERNAL        # above the size
    assert acl.rt.mem_pool_trim_to(pool, 8 * MiB) == OK                 # holds less already
    assert acl.rt.mem_pool_trim_to(pool, 0) == E_INTERNAL               # below what is used
    assert acl.rt.mem_pool_free_async(a, stream) == OK
    assert acl.rt.mem_pool_trim_to(pool, 0) == OK
    assert acl.rt.mem_pool_get_attr(pool, RES_CUR) == (0, OK)


def test_attributes(pool):
    for attr in (1, 2, 3):
        assert acl.rt.mem_pool_set_attr(pool, attr, 7) == OK
        assert acl.rt.mem_pool_get_attr(pool, attr) == (1, OK)
    assert acl.rt.mem_pool_set_attr(pool, THRESHOLD, 8 * MiB) == OK
    assert acl.rt.mem_pool_get_attr(pool, THRESHOLD) == (8 * MiB, OK)
    assert acl.rt.mem_pool_set_attr(pool, THRESHOLD, 65 * MiB) == E_INTERNAL
    assert acl.rt.mem_pool_set_attr(pool, RES_CUR, 0) == E_RT           # read-only
    assert acl.rt.mem_pool_set_attr(pool, USED_CUR, 0) == E_RT
    assert acl.rt.mem_pool_set_attr(pool, RES_HIGH, 1) == E_INTERNAL     # only a reset
    assert acl.rt.mem_pool_set_attr(pool, 9, 0) == E_INTERNAL
    assert acl.rt.mem_pool_set_attr(pool, 1, None) == E_RT
    assert acl.rt.mem_pool_set_attr(0, 1, 0) == E_ACL
    assert acl.rt.mem_pool_get_attr(pool, 0) == (None, E_INTERNAL)
    assert acl.rt.mem_pool_get_attr(0, 1) == (None, E_ACL)
    assert acl.rt.mem_pool_get_attr(12345, 1) == (None, E_RT)


@pytest.mark.parametrize("change,code", [
    ({"allocType": 1}, E_ACL), ({"location": {"type": 0, "id": 0}}, E_ACL),
    ({"location": None}, E_ACL), ({"reserved": b"\1"}, E_ACL), ({"maxSize": -1}, E_ACL),
    ({"maxSize": 1.5}, E_ACL), ({"location": {"type": 1, "id": 99}}, 107001),
    ({"maxSize": 1 << 40}, E_RT),
])
def test_create_codes(dev0, change, code):
    assert acl.rt.mem_pool_create({**PROPS, **change}) == (None, code)


def test_create_and_destroy(dev0):
    base = npusim.census()
    assert acl.rt.mem_pool_create(None) == (None, E_ACL)
    p, ret = acl.rt.mem_pool_create({**PROPS, "maxSize": 0})            # the whole HBM
    assert ret == OK
    s, _ = acl.rt.create_stream()
    a, _ = acl.rt.mem_pool_malloc_async(MiB, p, s)
    assert acl.rt.mem_pool_destroy(p) == OK          # with a block out: a user pool goes anyway
    assert acl.rt.mem_pool_destroy(p) == E_INTERNAL
    assert acl.rt.mem_pool_destroy(0) == E_ACL
    assert acl.rt.destroy_stream(s) == OK
    assert npusim.census().diff(base) == {}


def test_other_chips_refuse(acl):
    npusim.reset()
    npusim.configure(profile="Ascend910_93")
    assert acl.rt.set_device(0) == OK
    assert acl.rt.mem_pool_create(PROPS) == (None, acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT)


def test_malloc_and_free_codes(pool, stream):
    assert acl.rt.mem_pool_malloc_async(MiB, 0, stream) == (None, E_ACL)
    assert acl.rt.mem_pool_malloc_async(MiB, pool, 0) == (None, E_ACL)
    assert acl.rt.mem_pool_malloc_async(0, pool, stream) == (None, OK)
    assert acl.rt.mem_pool_malloc_async(MiB, pool, 12345) == (None, acl.ACL_ERROR_RT_INVALID_HANDLE)
    assert acl.rt.mem_pool_malloc_async(MiB, 12345, stream) == (None, E_INTERNAL)
    a, _ = acl.rt.mem_pool_malloc_async(MiB, pool, stream)
    assert acl.rt.mem_pool_free_async(0, stream) == E_ACL
    assert acl.rt.mem_pool_free_async(a, 0) == E_INTERNAL
    assert acl.rt.mem_pool_free_async(a + 4096, stream) == E_INTERNAL     # not a block
    assert acl.rt.mem_pool_free_async(a, stream) == OK
    assert acl.rt.mem_pool_free_async(a, stream) == E_INTERNAL            # twice


def test_free_async_of_malloc_memory_frees_it_in_stream_order(dev0, stream):
    p, _ = acl.rt.malloc(64, 0)
    assert acl.rt.mem_pool_free_async(p, stream) == OK
    assert acl.rt.synchronize_stream(stream) == OK
    assert acl.rt.free(p) == E_RT                                         # already freed


def test_capture_takes_the_block_once_and_replays_reuse_it(pool, stream):
    assert acl.mdl.ri_capture_begin(stream, 0) == OK
    a, ret = acl.rt.mem_pool_malloc_async(MiB, pool, stream)
    assert ret == OK
    assert acl.rt.memset_async(a, 64, 9, 64, stream) == OK
    assert acl.rt.mem_pool_free_async(a, stream) == OK
    model, ret = acl.mdl.ri_capture_end(stream)
    assert ret == OK
    tasks = [t for st in acl.mdl.ri_get_streams(model)[0]
             for t in acl.mdl.ri_get_tasks_by_stream(st)[0]]
    assert len(tasks) >= 3                                   # malloc, memset, free tasks
    assert acl.rt.mem_pool_get_attr(pool, RES_CUR) == (2 * MiB, OK)
    for _ in range(2):
        assert acl.mdl.ri_execute_async(model, stream) == OK
        assert acl.rt.synchronize_stream(stream) == OK
    assert acl.rt.mem_pool_get_attr(pool, RES_CUR) == (2 * MiB, OK)
    assert (_d2h(a, 64) == 9).all()
    assert acl.mdl.ri_destroy(model) == OK


def test_reset_device_destroys_pools(acl):
    assert acl.rt.set_device(0) == OK
    p, _ = acl.rt.mem_pool_create(PROPS)
    assert npusim.census().devices[0]["memory pools"] == 1
    assert acl.rt.reset_device(0) == OK and acl.rt.reset_device(0) == OK
    assert npusim.census().devices[0]["memory pools"] == 0
    assert acl.rt.mem_pool_destroy(p) == E_INTERNAL


def test_opportunistic_reuse_takes_a_block_whose_free_has_run(pool, stream):
    other, _ = acl.rt.create_stream()
    a, _ = acl.rt.mem_pool_malloc_async(MiB, pool, stream)
    assert acl.rt.mem_pool_free_async(a, stream) == OK
    assert acl.rt.synchronize_stream(stream) == OK            # the FREE task has run
    assert acl.rt.mem_pool_set_attr(pool, 2, 1) == OK         # ALLOW_OPPORTUNISTIC
    b, ret = acl.rt.mem_pool_malloc_async(MiB, pool, other)
    assert (b, ret) == (a, OK)
    assert acl.rt.mem_pool_get_attr(pool, RES_CUR) == (2 * MiB, OK)


def test_opportunistic_reuse_skips_a_captured_free(pool, stream):
    other, _ = acl.rt.create_stream()
    a, _ = acl.rt.mem_pool_malloc_async(MiB, pool, stream)
    assert acl.mdl.ri_capture_begin(stream, 0) == OK
    assert acl.rt.mem_pool_free_async(a, stream) == OK        # captured: never ran eagerly
    model, _ = acl.mdl.ri_capture_end(stream)
    assert acl.rt.mem_pool_set_attr(pool, 2, 1) == OK
    b, ret = acl.rt.mem_pool_malloc_async(MiB, pool, other)
    assert ret == OK and b != a
    assert acl.mdl.ri_destroy(model) == OK
