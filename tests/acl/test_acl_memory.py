"""Memory through the facade: malloc/free, host memory, memcpy and memset, sync and async,
and acl.util (docs/eager_api_checks.md §5)."""
from __future__ import annotations

import numpy as np
import pytest

from npusim import acl
from helpers.acl import LONG_NS, host_ns, in_fresh_thread, launch, read, stream_done, write

H2H, H2D, D2H, D2D = (acl.ACL_MEMCPY_HOST_TO_HOST, acl.ACL_MEMCPY_HOST_TO_DEVICE,
                      acl.ACL_MEMCPY_DEVICE_TO_HOST, acl.ACL_MEMCPY_DEVICE_TO_DEVICE)
BOGUS = 0xDEAD0000


def _pinned(n=64):
    p, ret = acl.rt.malloc_host(n)
    assert ret == acl.ACL_SUCCESS
    return p


def _pageable(values):
    arr = np.array(values, np.uint32)
    return arr, acl.util.numpy_to_ptr(arr)


# ---- aclrtMalloc / aclrtFree ----
@pytest.mark.parametrize("policy", [acl.ACL_MEM_MALLOC_HUGE_FIRST, acl.ACL_MEM_MALLOC_HUGE_ONLY,
                                    acl.ACL_MEM_MALLOC_NORMAL_ONLY,
                                    acl.ACL_MEM_MALLOC_HUGE1G_ONLY, 0x1234])
def test_malloc_succeeds_for_any_policy(dev0, policy):
    p, ret = acl.rt.malloc(1024, policy)
    assert ret == acl.ACL_SUCCESS and p


def test_malloc_returns_64_byte_aligned_addresses(dev0):
    ptrs = [acl.rt.malloc(n, 0)[0] for n in (1, 33, 100, 4096)]
    assert all(p % 64 == 0 for p in ptrs)
    assert len(set(ptrs)) == 4


def test_malloc_size_zero_returns_100000(dev0):
    assert acl.rt.malloc(0, 0) == (None, acl.ACL_ERROR_INVALID_PARAM)


def test_malloc_without_context_returns_107002():
    assert acl.rt.malloc(64, 0) == (None, acl.ACL_ERROR_RT_CONTEXT_NULL)


def test_malloc_too_large_returns_207001(dev0):
    _, ret = acl.rt.malloc(1 << 40, 0)
    assert ret == acl.ACL_ERROR_RT_MEMORY_ALLOCATION == 207001


def test_free_succeeds(buf):
    assert acl.rt.free(buf) == acl.ACL_SUCCESS


def test_free_null_returns_100000():
    assert acl.rt.free(0) == acl.ACL_ERROR_INVALID_PARAM


def test_double_free_returns_107000(buf):
    acl.rt.free(buf)
    assert acl.rt.free(buf) == acl.ACL_ERROR_RT_PARAM_INVALID


def test_free_interior_pointer_returns_107000(buf):
    assert acl.rt.free(buf + 32) == acl.ACL_ERROR_RT_PARAM_INVALID


def test_free_host_pointer_returns_107000(dev0):
    assert acl.rt.free(_pinned()) == acl.ACL_ERROR_RT_PARAM_INVALID


def test_free_needs_no_context(buf):
    assert in_fresh_thread(acl.rt.free, buf) == acl.ACL_SUCCESS


def test_freed_memory_can_be_allocated_again(dev0):
    p, _ = acl.rt.malloc(4096, 0)
    acl.rt.free(p)
    q, ret = acl.rt.malloc(4096, 0)
    assert ret == acl.ACL_SUCCESS and q


# ---- aclrtMallocHost / aclrtFreeHost ----
def test_malloc_host_succeeds_and_is_writable(dev0):
    p = _pinned(16)
    view = acl.util.ptr_to_numpy(p, (4,), np.uint32)
    view[:] = [1, 2, 3, 4]
    assert list(acl.util.ptr_to_numpy(p, 4, np.uint32)) == [1, 2, 3, 4]


def test_malloc_host_size_zero_returns_100000(dev0):
    assert acl.rt.malloc_host(0) == (None, acl.ACL_ERROR_INVALID_PARAM)


def test_malloc_host_without_context_returns_107002():
    assert acl.rt.malloc_host(64) == (None, acl.ACL_ERROR_RT_CONTEXT_NULL)


def test_free_host_succeeds(dev0):
    assert acl.rt.free_host(_pinned()) == acl.ACL_SUCCESS


def test_free_host_null_returns_100000():
    assert acl.rt.free_host(0) == acl.ACL_ERROR_INVALID_PARAM


def test_free_host_device_pointer_returns_107000(buf):
    assert acl.rt.free_host(buf) == acl.ACL_ERROR_RT_PARAM_INVALID


def test_free_host_twice_returns_107000(dev0):
    p = _pinned()
    acl.rt.free_host(p)
    assert acl.rt.free_host(p) == acl.ACL_ERROR_RT_PARAM_INVALID


def test_free_host_needs_no_context(dev0):
    assert in_fresh_thread(acl.rt.free_host, _pinned()) == acl.ACL_SUCCESS


# ---- aclrtMemcpy ----
def test_memcpy_h2d_then_d2h_round_trips(buf):
    write(buf, np.arange(16, dtype=np.uint32))
    assert list(read(buf, 16)) == list(range(16))


def test_memcpy_d2d_copies(buf, dev0):
    other, _ = acl.rt.malloc(64, 0)
    write(buf, np.arange(16, dtype=np.uint32))
    assert acl.rt.memcpy(other, 64, buf, 64, D2D) == acl.ACL_SUCCESS
    assert list(read(other, 16)) == list(range(16))


def test_memcpy_ignores_the_kind(buf):
    src, sp = _pageable([7, 8])
    assert acl.rt.memcpy(buf, 64, sp, 8, D2H) == acl.ACL_SUCCESS     # really H2D
    assert list(read(buf, 2)) == [7, 8]


def test_memcpy_host_to_host_succeeds(dev0):
    src, sp = _pageable([5, 6])
    dst, dp = _pageable([0, 0])
    assert acl.rt.memcpy(dp, 8, sp, 8, H2H) == acl.ACL_SUCCESS
    assert list(dst) == [5, 6]


def test_memcpy_count_zero_succeeds_before_any_check():
    assert acl.rt.memcpy(0, 0, 0, 0, 99) == acl.ACL_SUCCESS


@pytest.mark.parametrize("dst,src", [(0, 1), (1, 0)])
def test_memcpy_null_pointer_returns_100000(buf, dst, src):
    dst, src = dst and buf, src and buf
    assert acl.rt.memcpy(dst, 64, src, 4, H2D) == acl.ACL_ERROR_INVALID_PARAM


@pytest.mark.parametrize("kind", [6, 7, -1, 99])
def test_memcpy_bad_kind_returns_100000(buf, kind):
    _, sp = _pageable([1])
    assert acl.rt.memcpy(buf, 64, sp, 4, kind) == acl.ACL_ERROR_INVALID_PARAM


def test_memcpy_count_over_dest_max_returns_107000(buf):
    _, sp = _pageable([1, 2])
    assert acl.rt.memcpy(buf, 4, sp, 8, H2D) == acl.ACL_ERROR_RT_PARAM_INVALID


def test_memcpy_dest_max_zero_returns_107000(buf):
    _, sp = _pageable([1])
    assert acl.rt.memcpy(buf, 0, sp, 4, H2D) == acl.ACL_ERROR_RT_PARAM_INVALID


def test_memcpy_without_context_returns_107002(buf):
    _, sp = _pageable([1])
    assert in_fresh_thread(acl.rt.memcpy, buf, 64, sp, 4, H2D) == acl.ACL_ERROR_RT_CONTEXT_NULL


def test_memcpy_unmapped_pointer_returns_107000(buf):
    assert acl.rt.memcpy(buf, 64, BOGUS, 4, H2D) == acl.ACL_ERROR_RT_PARAM_INVALID


def test_memcpy_past_end_of_allocation_returns_107000(buf):
    _, sp = _pageable(np.zeros(64))
    assert acl.rt.memcpy(buf, 4096, sp, 256, H2D) == acl.ACL_ERROR_RT_PARAM_INVALID


def test_memcpy_does_not_wait_for_the_stream(stream, buf):
    launch(stream, "LongOPf", 1, (buf,))
    other, _ = acl.rt.malloc(64, 0)
    acl.rt.memcpy(other, 64, buf, 64, D2D)
    assert host_ns() < LONG_NS


# ---- aclrtMemcpyAsync ----
def test_memcpy_async_pinned_h2d_runs_on_the_stream(stream, buf):
    p = _pinned(8)
    acl.util.ptr_to_numpy(p, 2, np.uint32)[:] = [3, 4]
    assert acl.rt.memcpy_async(buf, 64, p, 8, H2D, stream) == acl.ACL_SUCCESS
    acl.rt.synchronize_stream(stream)
    assert list(read(buf, 2)) == [3, 4]


def test_memcpy_async_pinned_does_not_block(stream, buf):
    launch(stream, "LongOPf", 1, (buf,))
    assert acl.rt.memcpy_async(_pinned(), 64, buf, 64, D2H, stream) == acl.ACL_SUCCESS
    assert host_ns() < LONG_NS
    assert not stream_done(stream)


def test_memcpy_async_is_ordered_after_earlier_tasks(stream, buf):
    p = _pinned()
    launch(stream, "EasyOPf", 1, (buf,))
    acl.rt.memcpy_async(p, 64, buf, 64, D2H, stream)
    acl.rt.synchronize_stream(stream)
    assert acl.util.ptr_to_numpy(p, 1, np.uint32)[0] == 1


def test_memcpy_async_wrong_kind_between_known_locations_is_corrected(stream, buf):
    p = _pinned()
    launch(stream, "EasyOPf", 1, (buf,))
    assert acl.rt.memcpy_async(p, 64, buf, 64, H2D, stream) == acl.ACL_SUCCESS   # really D2H
    acl.rt.synchronize_stream(stream)
    assert acl.util.ptr_to_numpy(p, 1, np.uint32)[0] == 1


def test_memcpy_async_pageable_is_synchronous(stream, buf):
    launch(stream, "LongOPf", 1, (buf,))
    out = np.zeros(1, np.uint32)
    assert acl.rt.memcpy_async(acl.util.numpy_to_ptr(out), 4, buf, 4, D2H, stream) == 0
    assert host_ns() >= LONG_NS                     # waited for the stream
    assert out[0] == 1                              # and copied before returning


def test_memcpy_async_pageable_returns_earlier_stream_error(stream, buf):
    launch(stream, "ErrorOPf")
    out = np.zeros(1, np.uint32)
    assert acl.rt.memcpy_async(acl.util.numpy_to_ptr(out), 4, buf, 4, D2H, stream) == \
        acl.ACL_ERROR_RT_VECTOR_CORE_EXCEPTION


def test_memcpy_async_pageable_disallowed_kind_returns_107000(stream, buf):
    _, sp = _pageable([1])
    assert acl.rt.memcpy_async(buf, 64, sp, 4, D2H, stream) == acl.ACL_ERROR_RT_PARAM_INVALID


@pytest.mark.parametrize("kind", [H2H, H2D, acl.ACL_MEMCPY_DEFAULT])
def test_memcpy_async_host_to_host_returns_207000(stream, kind):
    assert acl.rt.memcpy_async(_pinned(), 64, _pinned(), 64, kind, stream) == \
        acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT


def test_memcpy_async_pageable_host_to_host_returns_207000(stream):
    src, sp = _pageable([1])           # the arrays must live while their pointers are used
    dst, dp = _pageable([0])
    assert acl.rt.memcpy_async(dp, 4, sp, 4, H2H, stream) == acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT


def test_memcpy_async_count_zero_succeeds_even_with_bad_stream(dev0):
    assert acl.rt.memcpy_async(0, 0, 0, 0, H2D, 0x1234) == acl.ACL_SUCCESS


def test_memcpy_async_null_pointer_returns_100000(stream, buf):
    assert acl.rt.memcpy_async(buf, 64, 0, 4, H2D, stream) == acl.ACL_ERROR_INVALID_PARAM


def test_memcpy_async_bad_kind_returns_100000(stream, buf):
    assert acl.rt.memcpy_async(buf, 64, _pinned(), 4, 7, stream) == acl.ACL_ERROR_INVALID_PARAM


def test_memcpy_async_bad_kind_is_checked_before_the_stream(buf):
    assert acl.rt.memcpy_async(buf, 64, buf, 4, 7, 0x1234) == acl.ACL_ERROR_INVALID_PARAM


def test_memcpy_async_stale_stream_returns_107017(stream, buf):
    acl.rt.destroy_stream(stream)
    assert acl.rt.memcpy_async(buf, 64, _pinned(), 4, H2D, stream) == \
        acl.ACL_ERROR_RT_INVALID_HANDLE


def test_memcpy_async_stream_is_checked_before_count(stream, buf):
    acl.rt.destroy_stream(stream)
    assert acl.rt.memcpy_async(buf, 4, _pinned(), 8, H2D, stream) == \
        acl.ACL_ERROR_RT_INVALID_HANDLE


def test_memcpy_async_count_over_dest_max_returns_107000(stream, buf):
    assert acl.rt.memcpy_async(buf, 4, _pinned(), 8, H2D, stream) == \
        acl.ACL_ERROR_RT_PARAM_INVALID


def test_memcpy_async_without_context_returns_107002(stream, buf):
    p = _pinned()
    assert in_fresh_thread(acl.rt.memcpy_async, buf, 64, p, 4, H2D, stream) == \
        acl.ACL_ERROR_RT_CONTEXT_NULL


def test_memcpy_async_other_context_stream_returns_107003(dev0, buf):
    p = _pinned()
    acl.rt.create_context(0)
    s, _ = acl.rt.create_stream()
    acl.rt.set_device(0)
    assert acl.rt.memcpy_async(buf, 64, p, 4, H2D, s) == acl.ACL_ERROR_RT_STREAM_CONTEXT


def test_memcpy_async_null_stream_uses_default_stream(dev0, buf):
    p = _pinned()
    acl.util.ptr_to_numpy(p, 1, np.uint32)[0] = 9
    assert acl.rt.memcpy_async(buf, 64, p, 4, H2D, None) == acl.ACL_SUCCESS
    acl.rt.synchronize_stream(None)
    assert read(buf, 1)[0] == 9


# ---- aclrtMemset / aclrtMemsetAsync ----
def test_memset_sets_bytes(buf):
    assert acl.rt.memset(buf, 64, 0x1AB, 8) == acl.ACL_SUCCESS      # only the low byte counts
    assert list(read(buf, 3, np.uint8)) == [0xAB, 0xAB, 0xAB]
    assert read(buf + 8, 1, np.uint8)[0] == 0


def test_memset_count_zero_succeeds_before_any_check():
    assert acl.rt.memset(0, 0, 0, 0) == acl.ACL_SUCCESS


def test_memset_null_returns_100000(dev0):
    assert acl.rt.memset(0, 64, 0, 4) == acl.ACL_ERROR_INVALID_PARAM


def test_memset_without_context_returns_107002(buf):
    assert in_fresh_thread(acl.rt.memset, buf, 64, 0, 4) == acl.ACL_ERROR_RT_CONTEXT_NULL


def test_memset_count_over_max_returns_107000(buf):
    assert acl.rt.memset(buf, 4, 0, 8) == acl.ACL_ERROR_RT_PARAM_INVALID


def test_memset_async_runs_on_the_stream(stream, buf):
    assert acl.rt.memset_async(buf, 64, 7, 4, stream) == acl.ACL_SUCCESS
    acl.rt.synchronize_stream(stream)
    assert list(read(buf, 5, np.uint8)) == [7, 7, 7, 7, 0]


def test_memset_async_is_ordered_after_earlier_tasks(stream, buf):
    launch(stream, "EasyOPf", 1, (buf,))
    acl.rt.memset_async(buf, 64, 0, 4, stream)
    acl.rt.synchronize_stream(stream)
    assert read(buf, 1)[0] == 0


def test_memset_async_host_memory_is_set_at_once(stream, buf):
    p = _pinned()
    launch(stream, "LongOPf", 1, (buf,))
    assert acl.rt.memset_async(p, 64, 5, 4, stream) == acl.ACL_SUCCESS
    assert not stream_done(stream)
    assert list(acl.util.ptr_to_numpy(p, 4, np.uint8)) == [5, 5, 5, 5]


def test_memset_async_count_zero_succeeds_even_with_bad_stream():
    assert acl.rt.memset_async(0, 0, 0, 0, 0x1234) == acl.ACL_SUCCESS


def test_memset_async_null_returns_100000(stream):
    assert acl.rt.memset_async(0, 64, 0, 4, stream) == acl.ACL_ERROR_INVALID_PARAM


def test_memset_async_stale_stream_returns_107017(stream, buf):
    acl.rt.destroy_stream(stream)
    assert acl.rt.memset_async(buf, 64, 0, 4, stream) == acl.ACL_ERROR_RT_INVALID_HANDLE


def test_memset_async_count_over_max_returns_107000(stream, buf):
    assert acl.rt.memset_async(buf, 4, 0, 8, stream) == acl.ACL_ERROR_RT_PARAM_INVALID


def test_memset_async_without_context_returns_107002(stream, buf):
    assert in_fresh_thread(acl.rt.memset_async, buf, 64, 0, 4, stream) == \
        acl.ACL_ERROR_RT_CONTEXT_NULL


def test_memset_async_other_context_stream_returns_107003(dev0, buf):
    acl.rt.create_context(0)
    s, _ = acl.rt.create_stream()
    acl.rt.set_device(0)
    assert acl.rt.memset_async(buf, 64, 0, 4, s) == acl.ACL_ERROR_RT_STREAM_CONTEXT


# ---- acl.util ----
def test_numpy_to_ptr_same_array_same_address():
    a = np.zeros(4, np.uint32)
    assert acl.util.numpy_to_ptr(a) == acl.util.numpy_to_ptr(a)


def test_numpy_to_ptr_non_contiguous_raises_value_error():
    with pytest.raises(ValueError):
        acl.util.numpy_to_ptr(np.zeros((4, 4))[:, 0])


def test_ptr_to_numpy_of_registered_array_aliases_it():
    a = np.zeros(4, np.uint32)
    acl.util.ptr_to_numpy(acl.util.numpy_to_ptr(a), 4, np.uint32)[2] = 7
    assert a[2] == 7


def test_ptr_to_numpy_of_device_memory_raises_value_error(buf):
    with pytest.raises(ValueError):
        acl.util.ptr_to_numpy(buf, 4, np.uint32)


def test_ptr_to_numpy_larger_than_allocation_raises_value_error(dev0):
    with pytest.raises(ValueError):
        acl.util.ptr_to_numpy(_pinned(64), 1024, np.uint32)


@pytest.mark.parametrize("size", [-1, 1.5, None])
def test_malloc_bad_size_returns_100000(dev0, size):
    assert acl.rt.malloc(size, 0) == (None, acl.ACL_ERROR_INVALID_PARAM)


def test_memcpy_same_source_and_destination_succeeds(buf):
    assert acl.rt.memcpy(buf, 64, buf, 64, D2D) == acl.ACL_SUCCESS


def test_memcpy_async_same_source_and_destination_succeeds(stream, buf):
    assert acl.rt.memcpy_async(buf, 64, buf, 64, D2D, stream) == acl.ACL_SUCCESS


def test_two_devices_hand_out_distinct_pointers_and_both_work(dev0):
    """One unified address space: device 1's memory is not device 0's (a pointer names one
    device), so an async memset on a device-1 stream finds its buffer."""
    p0, _ = acl.rt.malloc(256, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    assert acl.rt.set_device(1) == acl.ACL_SUCCESS
    p1, _ = acl.rt.malloc(256, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    s1, _ = acl.rt.create_stream()
    assert p0 != p1
    assert acl.rt.memset_async(p1, 256, 7, 256, s1) == acl.ACL_SUCCESS
    assert acl.rt.synchronize_stream(s1) == acl.ACL_SUCCESS
    out = np.zeros(256, np.uint8)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(out), 256, p1, 256,
                         acl.ACL_MEMCPY_DEVICE_TO_HOST) == acl.ACL_SUCCESS
    assert (out == 7).all()
