"""Chapter 11-03's batch, descriptor, second-level-pointer, 2-D async and 32-bit async copies and
sets, and aclrtGetMemUsageInfo (11-01): success, every code of the runtime's check order, the
state a failure leaves, and the copies captured into a graph (docs/fidelity.md rows 100-104)."""
from __future__ import annotations

import numpy as np
import pytest

import npusim
from npusim import acl
from npusim import errors as E

from helpers.acl import in_fresh_thread, launch, read, write
from helpers.capture import begin, end, new_stream, run

OK = acl.ACL_SUCCESS
H2D, D2H, D2D = acl.ACL_MEMCPY_HOST_TO_DEVICE, acl.ACL_MEMCPY_DEVICE_TO_HOST, \
    acl.ACL_MEMCPY_DEVICE_TO_DEVICE
INNER = acl.ACL_MEMCPY_INNER_DEVICE_TO_DEVICE
HOST, DEV = acl.ACL_MEM_LOCATION_TYPE_HOST, acl.ACL_MEM_LOCATION_TYPE_DEVICE
SIZE_MAX = 2 ** 64 - 1
TO_HOST = {"dstLoc": {"id": 0, "type": HOST}, "srcLoc": {"id": 0, "type": DEV}}
TO_DEV = {"dstLoc": {"id": 0, "type": DEV}, "srcLoc": {"id": 0, "type": HOST}}


def dev(n=256, fill=None):
    p, ret = acl.rt.malloc(n, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == OK
    write(p, np.arange(n, dtype=np.uint8) if fill is None else np.full(n, fill, np.uint8))
    return p


def u8(p, n):
    return read(p, n, np.uint8).tolist()


def host(n=16):
    a = np.zeros(n, np.uint8)
    return a, acl.util.numpy_to_ptr(a)


# ---- aclrtMemcpyBatch / V2 ----
def test_batch_copies_both_directions_with_per_range_attributes(dev0):
    src = dev()
    h1, p1 = host()
    pin, ret = acl.rt.malloc_host(16)
    back = dev(16, 0)
    fail, code = acl.rt.memcpy_batch([p1, pin], [16, 16], [src + 8, src + 40], [4, 4], 2,
                                     [TO_HOST], [0], 1)
    assert (fail, code) == (SIZE_MAX, OK)
    assert h1[:4].tolist() == [8, 9, 10, 11]
    assert acl.rt.memcpy_batch_v2([back], [16], [pin], [4], 1, [TO_DEV], [0], 1) == OK
    assert u8(back, 4) == [40, 41, 42, 43]
    # attrs[k] covers attrsIndexes[k] ..: the second copy goes the other way
    h2, p2 = host()
    assert acl.rt.memcpy_batch([p2, back], [16, 16], [src, pin], [2, 2], 2, [TO_HOST, TO_DEV],
                               [0, 1], 2) == (SIZE_MAX, OK)
    assert h2[:2].tolist() == [0, 1]


def test_batch_codes_in_order(dev0):
    src = dev()
    h, p = host()
    args = lambda **kw: {**dict(dsts=[p], dest_maxs=[16], srcs=[src], sizes=[4], num_batches=1,
                                attrs=[TO_HOST], attrs_indexes=[0], num_attrs=1), **kw}
    call = lambda **kw: acl.rt.memcpy_batch(**args(**kw))
    assert call(sizes=None) == (SIZE_MAX, E.ACL_ERROR_INVALID_PARAM)
    assert call(num_batches=0) == (SIZE_MAX, E.ACL_ERROR_INVALID_PARAM)
    assert call(sizes=[0], dsts=None) == (SIZE_MAX, OK)           # all sizes 0: nothing checked
    assert call(dsts=None)[1] == E.ACL_ERROR_INVALID_PARAM
    assert call(dest_maxs=[3])[1] == E.ACL_ERROR_INVALID_PARAM     # destMax < size
    bad_rsv = dict(TO_HOST, rsv=[0] * 15 + [1])
    assert call(attrs=[bad_rsv])[1] == E.ACL_ERROR_INVALID_PARAM
    assert call(num_attrs=0)[1] == E.ACL_ERROR_RT_PARAM_INVALID
    assert call(attrs_indexes=[1])[1] == E.ACL_ERROR_RT_PARAM_INVALID
    assert call(dsts=[p, p], dest_maxs=[16, 16], srcs=[src, src], sizes=[1, 1], num_batches=2,
                attrs=[TO_HOST, TO_HOST], attrs_indexes=[0, 0], num_attrs=2)[1] == \
        E.ACL_ERROR_RT_PARAM_INVALID                               # not increasing
    n = 4097
    assert call(dsts=[p] * n, dest_maxs=[16] * n, srcs=[src] * n, sizes=[1] * n,
                num_batches=n)[1] == E.ACL_ERROR_RT_PARAM_INVALID   # DEVMM_MEMCPY_BATCH_MAX_COUNT
    # per copy: wrong location type / device id / direction -> failIndex names the copy
    assert call(dsts=[p, p], dest_maxs=[16, 16], srcs=[src, src], sizes=[1, 1], num_batches=2,
                attrs=[TO_HOST, TO_DEV], attrs_indexes=[0, 1], num_attrs=2) == \
        (1, E.ACL_ERROR_RT_PARAM_INVALID)
    wrong_id = {"dstLoc": {"id": 0, "type": HOST}, "srcLoc": {"id": 3, "type": DEV}}
    assert call(attrs=[wrong_id]) == (0, E.ACL_ERROR_RT_PARAM_INVALID)
    d2d = {"dstLoc": {"id": 0, "type": DEV}, "srcLoc": {"id": 0, "type": DEV}}
    assert call(dsts=[dev(16)], attrs=[d2d]) == (0, E.ACL_ERROR_RT_PARAM_INVALID)
    numa = {"dstLoc": {"id": 0, "type": acl.ACL_MEM_LOCATION_TYPE_HOST_NUMA},
            "srcLoc": {"id": 0, "type": DEV}}
    assert call(attrs=[numa]) == (SIZE_MAX, OK)                    # HOST_NUMA counts as HOST
    assert call(sizes=[17], dest_maxs=[17]) == (SIZE_MAX, E.ACL_ERROR_RT_PARAM_INVALID)  # past


def test_a_failed_batch_copies_nothing(dev0):
    src = dev()
    h, p = host()
    assert acl.rt.memcpy_batch([p, p], [16, 16], [src, src], [4, 4], 2, [TO_HOST, TO_DEV],
                               [0, 1], 2) == (1, E.ACL_ERROR_RT_PARAM_INVALID)
    assert not h.any()


def test_batch_on_a_chip_without_batch_copies_is_207000():
    npusim.reset()
    npusim.configure(profile="Ascend310P")
    try:
        acl.init()
        acl.rt.set_device(0)
        src = dev()
        h, p = host()
        assert acl.rt.memcpy_batch([p], [16], [src], [4], 1, [TO_HOST], [0], 1)[1] == \
            E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
        assert acl.rt.memcpy_async_with_offset(src, 8, 0, src, 4, 0, INNER, None) == \
            E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
        assert acl.rt.get_memcpy_desc_size(INNER)[1] == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    finally:
        npusim.reset()
        npusim.configure(profile="Ascend910B")


# ---- aclrtMemcpyBatchAsync / V2 ----
def test_batch_async_is_one_copy_task_per_range(stream):
    src = dev()
    pin, _ = acl.rt.malloc_host(16)
    back = dev(16, 0)
    assert acl.rt.memcpy_batch_async([pin, back], [16, 16], [src + 4, pin], [4, 4], 2,
                                     [TO_HOST, TO_DEV], [0, 1], 2, stream) == (SIZE_MAX, OK)
    assert acl.rt.synchronize_stream(stream) == OK
    assert u8(back, 4) == [4, 5, 6, 7]
    assert acl.rt.memcpy_batch_async_v2([back], [16], [pin], [2], 1, [TO_DEV], [0], 1,
                                        stream) == OK


def test_batch_async_codes_and_partial_submission(stream):
    src = dev()
    pin, _ = acl.rt.malloc_host(16)
    assert acl.rt.memcpy_batch_async([pin], [16], [src], [4], 1, [TO_HOST], [0], 1,
                                     0x7777)[1] == E.ACL_ERROR_RT_INVALID_HANDLE
    n = 4097                                    # no count limit for the async copy
    assert acl.rt.memcpy_batch_async([pin] * n, [16] * n, [src] * n, [1] * n, n, [TO_HOST],
                                     [0], 1, stream) == (SIZE_MAX, OK)
    # copy 1 has size 0 (refused per copy by LoopMemcpyAsync); copy 0 was already submitted
    h = dev(16, 0)
    assert acl.rt.memcpy_batch_async([h, h], [16, 16], [pin, pin], [4, 0], 2, [TO_DEV], [0], 1,
                                     stream) == (1, E.ACL_ERROR_RT_PARAM_INVALID)
    assert acl.rt.synchronize_stream(stream) == OK
    assert in_fresh_thread(acl.rt.memcpy_batch_async, [pin], [16], [src], [4], 1, [TO_HOST],
                           [0], 1, None)[1] == E.ACL_ERROR_RT_CONTEXT_NULL


def test_batch_async_with_a_numpy_array_is_refused_in_capture(dev0):
    src = dev()
    h, p = host()
    s = new_stream()
    begin(s)
    assert acl.rt.memcpy_batch_async([p], [16], [src], [4], 1, [TO_HOST], [0], 1, s) == \
        (SIZE_MAX, E.ACL_ERROR_RT_PARAM_INVALID)
    end(s)


# ---- the memcpy descriptor ----
def test_descriptor_copy_follows_the_descriptor_at_each_replay(dev0):
    src, dst, desc = dev(), dev(64, 0), dev(64, 0)
    size, ret = acl.rt.get_memcpy_desc_size(INNER)
    assert (size, ret) == (32, OK)
    assert acl.rt.set_memcpy_desc(desc, INNER, src + 3, dst, 4, None) == OK
    s, x = new_stream(), new_stream()
    assert acl.rt.memcpy_async_with_desc(desc, INNER, s) == OK        # eager
    assert acl.rt.synchronize_stream(s) == OK
    assert u8(dst, 5) == [3, 4, 5, 6, 0]
    mh = begin(s)
    assert acl.rt.memcpy_async_with_desc(desc, INNER, s) == OK
    end(s)
    assert acl.rt.set_memcpy_desc(desc, INNER, src + 100, dst + 8, 2, None) == OK
    run(mh, x)
    assert u8(dst + 8, 3) == [100, 101, 0]


def test_descriptor_codes(stream):
    src, dst, desc = dev(), dev(64, 0), dev(64, 0)
    assert acl.rt.get_memcpy_desc_size(8) == (None, E.ACL_ERROR_INVALID_PARAM)
    assert acl.rt.get_memcpy_desc_size(D2D) == (None, E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT)
    sd = acl.rt.set_memcpy_desc
    for bad in ((0, INNER, src, dst, 4, None), (desc, 8, src, dst, 4, None),
                (desc, INNER, 0, dst, 4, None), (desc, INNER, src, 0, 4, None),
                (desc, INNER, src, dst, 0, None), (desc, INNER, src, dst, 4, 1)):
        assert sd(*bad) == E.ACL_ERROR_INVALID_PARAM
    assert sd(desc, D2D, src, dst, 4, None) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert sd(desc, INNER, src, dst, 4 * 1024 ** 3 + 1, None) == E.ACL_ERROR_RT_PARAM_INVALID
    assert sd(desc + 32, INNER, src, dst, 4, None) == E.ACL_ERROR_RT_PARAM_INVALID  # not 64-aligned
    pin, _ = acl.rt.malloc_host(64)
    assert sd(desc, INNER, pin, dst, 4, None) == E.ACL_ERROR_RT_PARAM_INVALID       # host src
    assert in_fresh_thread(sd, desc, INNER, src, dst, 4, None) == E.ACL_ERROR_RT_CONTEXT_NULL
    assert read(desc, 8, np.uint32).tolist() == [0] * 8          # nothing written on failure
    md = acl.rt.memcpy_async_with_desc
    assert md(desc, INNER, None) == E.ACL_ERROR_INVALID_PARAM    # the acl layer wants a stream
    assert md(desc, INNER, 0x7777) == E.ACL_ERROR_RT_INVALID_HANDLE
    assert md(desc, D2D, stream) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert md(pin, INNER, stream) == E.ACL_ERROR_RT_PARAM_INVALID


# ---- second-level pointers ----
def test_offset_copy_reads_the_pointer_cells_when_it_runs(dev0):
    a, b, out = dev(64), dev(64, 9), dev(64, 0)
    cells = dev(64, 0)
    write(cells, np.array([out, a], np.uint64))
    s, x = new_stream(), new_stream()
    mh = begin(s)
    assert acl.rt.memcpy_async_with_offset(cells, 64, 2, cells + 8, 3, 10, INNER, s) == OK
    end(s)
    run(mh, x)
    assert u8(out, 6) == [0, 0, 10, 11, 12, 0]
    write(cells + 8, np.array([b], np.uint64))        # repoint the source: the replay follows
    run(mh, x)
    assert u8(out, 6) == [0, 0, 9, 9, 9, 0]


def test_offset_codes(stream):
    cells = dev(64, 0)
    f = acl.rt.memcpy_async_with_offset
    assert f(cells, 64, 0, cells, 0, 0, D2D, stream) == OK                  # count 0
    assert f(cells, 64, 0, cells, 4, 0, D2D, stream) == E.ACL_ERROR_RT_PARAM_INVALID   # kind
    assert f(cells, 64, 0, cells, 4, 0, INNER, 0x7777) == E.ACL_ERROR_RT_INVALID_HANDLE
    assert f(0, 64, 0, cells, 4, 0, INNER, stream) == E.ACL_ERROR_RT_PARAM_INVALID
    assert f(cells, 3, 0, cells, 4, 0, INNER, stream) == E.ACL_ERROR_RT_PARAM_INVALID  # > max
    assert f(cells, 64, 64, cells, 4, 0, INNER, stream) == E.ACL_ERROR_RT_PARAM_INVALID
    assert f(cells, 64, 62, cells, 4, 0, INNER, stream) == E.ACL_ERROR_RT_PARAM_INVALID
    assert f(cells, 64, 0, cells, 4, 2 ** 48, INNER, stream) == E.ACL_ERROR_RT_PARAM_INVALID
    pin, _ = acl.rt.malloc_host(64)
    assert f(pin, 64, 0, cells, 4, 0, INNER, stream) == E.ACL_ERROR_RT_PARAM_INVALID
    assert f(cells, 64, 0, cells, 4, 2 ** 31, INNER, stream) == E.ACL_ERROR_RT_PARAM_INVALID
    assert "2**31" in acl.get_recent_err_msg()
    assert in_fresh_thread(f, cells, 64, 0, cells, 4, 0, INNER, None) == \
        E.ACL_ERROR_RT_CONTEXT_NULL


def test_memcpy_async_with_condition_is_memcpy_async(stream):
    src, dst = dev(), dev(16, 0)
    assert acl.rt.memcpy_async_with_condition(dst, 16, src + 1, 2, D2D, stream) == OK
    assert acl.rt.synchronize_stream(stream) == OK
    assert u8(dst, 3) == [1, 2, 0]
    assert acl.rt.memcpy_async_with_condition(0, 16, src, 2, D2D, stream) == \
        E.ACL_ERROR_INVALID_PARAM
    assert acl.rt.memcpy_async_with_condition(dst, 16, src, 0, D2D, stream) == OK


# ---- aclrtMemcpy2dAsync ----
def test_2d_async_eager_pageable_and_captured(dev0):
    src, dst = dev(), dev(64, 0)
    s, x = new_stream(), new_stream()
    assert acl.rt.memcpy2d_async(dst, 8, src, 16, 3, 2, D2D, s) == OK
    assert acl.rt.synchronize_stream(s) == OK
    assert u8(dst, 11) == [0, 1, 2, 0, 0, 0, 0, 0, 16, 17, 18]
    h = np.zeros(8, np.uint8)
    assert acl.rt.memcpy2d_async(acl.util.numpy_to_ptr(h), 4, src + 32, 16, 2, 2, D2H, s) == OK
    assert h.tolist() == [32, 33, 0, 0, 48, 49, 0, 0]          # pageable: synchronous
    write(dst, np.zeros(64, np.uint8))
    mh = begin(s)
    assert acl.rt.memcpy2d_async(dst, 4, src, 8, 2, 3, D2D, s) == OK
    assert acl.rt.memcpy2d_async(acl.util.numpy_to_ptr(h), 4, src, 16, 2, 2, D2H, s) == \
        E.ACL_ERROR_RT_PARAM_INVALID                            # pageable memory in a capture
    end(s)
    assert u8(dst, 2) == [0, 0]                                 # captured, not run
    run(mh, x)
    assert u8(dst, 12) == [0, 1, 0, 0, 8, 9, 0, 0, 16, 17, 0, 0]


def test_2d_async_codes(stream):
    src, dst = dev(), dev(64, 0)
    f = acl.rt.memcpy2d_async
    assert f(dst, 8, src, 8, 0, 2, D2D, stream) == OK
    assert f(0, 8, src, 8, 4, 2, D2D, stream) == E.ACL_ERROR_INVALID_PARAM
    assert f(dst, 2, src, 8, 4, 2, D2D, stream) == E.ACL_ERROR_INVALID_PARAM     # width > pitch
    assert f(dst, 8, src, 8, 4, 2, acl.ACL_MEMCPY_HOST_TO_HOST, stream) == \
        E.ACL_ERROR_INVALID_PARAM
    assert f(dst, 8, src, 8, 4, 2, D2D, 0x7777) == E.ACL_ERROR_RT_INVALID_HANDLE
    assert f(dst, 8, src, 8, 4, 5_242_881, D2D, stream) == E.ACL_ERROR_RT_PARAM_INVALID
    pin, _ = acl.rt.malloc_host(64)
    assert f(pin, 8, pin + 32, 8, 4, 2, D2D, stream) == E.ACL_ERROR_RT_PARAM_INVALID   # H2H
    assert f(dst, 8, src, 8, 4, 40, D2D, stream) == E.ACL_ERROR_RT_PARAM_INVALID  # past the end
    assert in_fresh_thread(f, dst, 8, src, 8, 4, 2, D2D, None) == E.ACL_ERROR_RT_CONTEXT_NULL
    assert acl.rt.synchronize_stream(stream) == OK
    assert u8(dst, 8) == [0] * 8                                # no failed call copied


# ---- aclrtMemsetD32Async ----
def test_memset_d32_async_device_pinned_and_captured(dev0):
    p = dev(64, 0)
    s, x = new_stream(), new_stream()
    assert launch(s, "LongOPf", 1, [dev(8, 0)]) == OK
    assert acl.rt.memset_d32_async(p, 64, 0xDEADBEEF, 3, s) == OK
    assert read(p, 1, np.uint32)[0] == 0                         # queued behind LongOPf
    assert acl.rt.synchronize_stream(s) == OK
    assert read(p, 4, np.uint32).tolist() == [0xDEADBEEF] * 3 + [0]
    pin, _ = acl.rt.malloc_host(64)
    assert acl.rt.memset_d32_async(pin, 64, 7, 2, s) == OK       # host memory: at once
    assert acl.util.ptr_to_numpy(pin, (2,), np.uint32).tolist() == [7, 7]
    mh = begin(s)
    assert acl.rt.memset_d32_async(p + 16, 48, 5, 2, s) == OK
    end(s)
    assert read(p + 16, 1, np.uint32)[0] == 0
    run(mh, x)
    assert read(p + 16, 2, np.uint32).tolist() == [5, 5]


def test_memset_d32_async_codes(stream):
    p = dev(64, 0)
    f = acl.rt.memset_d32_async
    assert f(p, 64, 1, 0, stream) == OK
    assert f(0, 64, 1, 1, stream) == E.ACL_ERROR_INVALID_PARAM
    assert f(p + 2, 64, 1, 1, stream) == E.ACL_ERROR_INVALID_PARAM          # not aligned
    assert f(p, 7, 1, 2, stream) == E.ACL_ERROR_INVALID_PARAM               # N * 4 > memSize
    h = np.zeros(4, np.uint32)
    assert f(acl.util.numpy_to_ptr(h), 16, 1, 1, stream) == E.ACL_ERROR_INVALID_PARAM  # not acl
    assert f(p, 64, 1, 1, 0x7777) == E.ACL_ERROR_RT_INVALID_HANDLE
    assert f(p, 1024, 1, 100, stream) == E.ACL_ERROR_RT_PARAM_INVALID       # past the block
    assert in_fresh_thread(f, p, 64, 1, 1, None) == E.ACL_ERROR_RT_CONTEXT_NULL
    assert acl.rt.synchronize_stream(stream) == OK
    assert read(p, 16, np.uint32).tolist() == [0] * 16


# ---- aclrtGetMemUsageInfo ----
def test_mem_usage_info_components_and_peaks(dev0):
    rows, ret = acl.rt.get_mem_usage_info(0, 8)
    assert ret == OK and {r["name"] for r in rows} == {"app", "runtime"}
    app0 = next(r for r in rows if r["name"] == "app")["curMemSize"]
    p, _ = acl.rt.malloc(1 << 20, 0)
    assert acl.rt.free(p) == OK
    rows, _ = acl.rt.get_mem_usage_info(0, 8)
    app = next(r for r in rows if r["name"] == "app")
    assert app["curMemSize"] == app0 and app["memPeakSize"] >= app0 + (1 << 20)
    assert rows == sorted(rows, key=lambda r: -r["curMemSize"])
    assert len(acl.rt.get_mem_usage_info(0, 1)[0]) == 1
    assert acl.rt.get_mem_usage_info(0, 0) == (None, E.ACL_ERROR_RT_PARAM_INVALID)
    assert acl.rt.get_mem_usage_info(99, 1) == (None, E.ACL_ERROR_RT_PARAM_INVALID)
    assert acl.rt.get_mem_usage_info(1, 1) == (None, E.ACL_ERROR_RT_CONTEXT_NULL)
