"""aclrtReduceAsync (chapter 12): every kind and data type, the task's stream order, every code
of the acl and runtime check order, the state a failure leaves, a fault of a range outside
device memory, and the reduce captured into a graph (docs/fidelity.md row 150)."""
from __future__ import annotations

import numpy as np
import pytest

from npusim import acl
from npusim import errors as E
from npusim.runtime import api_reduce as R

from helpers.acl import in_fresh_thread, launch, read, write
from helpers.capture import begin, end, new_stream, run

OK = acl.ACL_SUCCESS
SUM, MAX, MIN, EQUAL = 10, 11, 12, 13
D2D = acl.ACL_MEMCPY_DEVICE_TO_DEVICE


def dev(data: np.ndarray) -> int:
    p, ret = acl.rt.malloc(max(64, data.nbytes), acl.ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == OK
    write(p, data.view(np.uint8))
    return p


def _bf16(x):
    return (np.asarray(x, np.float32).view(np.uint32) >> 16).astype(np.uint16)


CASES = [
    (R.ACL_FLOAT, np.float32, [1.5, -2.0, 3.25, 0.0], [0.5, 4.0, -1.0, -0.0]),
    (R.ACL_FLOAT16, np.float16, [1.5, -2.0, 3.25, 1000.0], [0.5, 4.0, -1.0, 24.0]),
    (R.ACL_INT8, np.int8, [100, -5, 7, -128], [27, -9, -8, 1]),
    (R.ACL_UINT8, np.uint8, [250, 5, 7, 0], [10, 9, 8, 1]),
    (R.ACL_INT16, np.int16, [30000, -5, 7, -1], [2767, -9, -8, 1]),
    (R.ACL_UINT16, np.uint16, [65535, 5, 7, 0], [1, 9, 8, 1]),
    (R.ACL_INT32, np.int32, [2 ** 31 - 1, -5, 7, -1], [1, -9, -8, 1]),
    (R.ACL_UINT32, np.uint32, [2 ** 32 - 1, 5, 7, 0], [1, 9, 8, 1]),
]


@pytest.mark.parametrize("kind", [SUM, MAX, MIN])
@pytest.mark.parametrize("dtype_code,dt,a,b", CASES)
def test_each_kind_and_type_reduces_element_wise_with_wrapping(dev0, stream, kind, dtype_code,
                                                              dt, a, b):
    x, y = np.array(a, dt), np.array(b, dt)
    dst, src = dev(x), dev(y)
    assert acl.rt.reduce_async(dst, src, x.nbytes, kind, dtype_code, stream, None) == OK
    assert acl.rt.synchronize_stream(stream) == OK
    if kind == SUM:
        want = (x + y) if dt in (np.float32, np.float16) else \
            (x.astype(np.int64) + y.astype(np.int64)).astype(dt)
    else:
        want = np.maximum(x, y) if kind == MAX else np.minimum(x, y)
    assert read(dst, len(a), dt).tolist() == want.tolist()
    assert read(src, len(b), dt).tolist() == y.tolist()           # src is only read


def test_bf16_rounds_to_nearest_even_and_int4_reduces_each_nibble(dev0, stream):
    x = np.array([1.0, 3.0, -2.5, 100.0], np.float32)
    y = np.array([2.0 ** -8, 0.5, 0.25, 1.0], np.float32)
    dst, src = dev(_bf16(x)), dev(_bf16(y))
    assert acl.rt.reduce_async(dst, src, 8, SUM, R.ACL_BF16, stream, None) == OK
    assert acl.rt.synchronize_stream(stream) == OK
    got = (read(dst, 4, np.uint16).astype(np.uint32) << 16).view(np.float32).tolist()
    assert got == [1.0, 3.5, -2.25, 101.0]          # 1 + 2^-8 is a tie: rounds to even 1.0
    # int4: two signed nibbles a byte, low nibble first; 7 + 1 wraps to -8
    d4, s4 = dev(np.array([0x17, 0xF2], np.uint8)), dev(np.array([0x11, 0x1F], np.uint8))
    assert acl.rt.reduce_async(d4, s4, 2, SUM, R.ACL_INT4, stream, None) == OK
    assert acl.rt.synchronize_stream(stream) == OK
    assert read(d4, 2, np.uint8).tolist() == [0x28, 0x01]
    assert acl.rt.reduce_async(d4, s4, 2, MIN, R.ACL_INT4, stream, None) == OK
    assert acl.rt.synchronize_stream(stream) == OK
    assert read(d4, 2, np.uint8).tolist() == [0x18, 0x0F]   # min(-8, 1), min(2, 1); min(1, -1), min(0, 1)


def test_the_reduce_sees_the_earlier_tasks_of_its_stream(dev0, stream):
    dst, src = dev(np.zeros(4, np.uint32)), dev(np.ones(4, np.uint32))
    other = dev(np.full(4, 5, np.uint32))
    assert launch(stream, "EasyOPf", 4, (src,), duration_ns=100_000) == OK   # src += 1 later
    assert acl.rt.reduce_async(dst, src, 16, SUM, R.ACL_UINT32, stream, None) == OK
    assert acl.rt.memcpy_async(other, 16, dst, 16, D2D, stream) == OK
    assert read(dst, 4).tolist() == [0] * 4                   # nothing ran at submit
    assert acl.rt.synchronize_stream(stream) == OK
    assert read(dst, 4).tolist() == [2] * 4
    assert read(other, 4).tolist() == [2] * 4


def test_a_null_stream_is_the_default_stream(dev0):
    dst, src = dev(np.full(2, 3, np.int32)), dev(np.full(2, -7, np.int32))
    assert acl.rt.reduce_async(dst, src, 8, MIN, R.ACL_INT32, None, None) == OK
    assert acl.rt.synchronize_device() == OK
    assert read(dst, 2, np.int32).tolist() == [-7, -7]


def test_every_code_in_the_check_order_and_nothing_is_submitted(dev0, stream):
    dst, src = dev(np.arange(4, dtype=np.uint32)), dev(np.ones(4, np.uint32))
    P, RT_P = E.ACL_ERROR_INVALID_PARAM, E.ACL_ERROR_RT_PARAM_INVALID
    # acl layer: dst, src, reserve, data type (100000) before the runtime's count / kind
    assert acl.rt.reduce_async(0, src, 0, 99, R.ACL_UINT32, stream, None) == P
    assert acl.rt.reduce_async(dst, 0, 16, SUM, R.ACL_UINT32, stream, None) == P
    assert acl.rt.reduce_async(dst, src, 16, SUM, R.ACL_UINT32, stream, 1) == P
    assert acl.rt.reduce_async(dst, src, 0, 99, 5, stream, None) == P          # ACL_INT64
    assert acl.rt.reduce_async(dst, src, 0, SUM, 11, stream, None) == P        # ACL_DOUBLE
    # runtime: count 0, kind outside [10, 14), an ADD over 4 GiB (107000)
    assert acl.rt.reduce_async(dst, src, 0, SUM, R.ACL_UINT32, stream, None) == RT_P
    assert acl.rt.reduce_async(dst, src, 16, 9, R.ACL_UINT32, stream, None) == RT_P
    assert acl.rt.reduce_async(dst, src, 16, 14, R.ACL_UINT32, stream, None) == RT_P
    assert acl.rt.reduce_async(dst, src, 4 * 1024 ** 3 + 4, SUM, R.ACL_UINT32, stream,
                               None) == RT_P
    # the stream: a stale handle (107017), another context's stream (107003)
    s2 = new_stream()
    assert acl.rt.destroy_stream(s2) == OK
    assert acl.rt.reduce_async(dst, src, 16, SUM, R.ACL_UINT32, s2, None) == \
        E.ACL_ERROR_RT_INVALID_HANDLE
    ctx, ret = acl.rt.create_context(0)
    assert ret == OK
    assert acl.rt.reduce_async(dst, src, 16, SUM, R.ACL_UINT32, stream, None) == \
        E.ACL_ERROR_RT_STREAM_CONTEXT
    assert acl.rt.destroy_context(ctx) == OK
    assert acl.rt.set_device(0) == OK
    # EQUAL is accepted by the runtime's range and refused here
    assert acl.rt.reduce_async(dst, src, 16, EQUAL, R.ACL_UINT32, stream, None) == \
        E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    # nothing of the failures reached the stream: dst as written, the stream still works
    assert acl.rt.synchronize_stream(stream) == OK
    assert read(dst, 4).tolist() == [0, 1, 2, 3]
    assert acl.rt.reduce_async(dst, src, 16, SUM, R.ACL_UINT32, stream, None) == OK
    assert acl.rt.synchronize_stream(stream) == OK
    assert read(dst, 4).tolist() == [1, 2, 3, 4]


def test_no_context_is_107002(dev0):
    def body():
        return acl.rt.reduce_async(8, 8, 4, SUM, R.ACL_UINT32, None, None)
    assert in_fresh_thread(body) == E.ACL_ERROR_RT_CONTEXT_NULL


def test_a_range_outside_device_memory_faults_when_the_task_runs(dev0, stream):
    src = dev(np.ones(4, np.uint32))
    host = np.zeros(4, np.uint32)
    hp = acl.util.numpy_to_ptr(host)
    assert acl.rt.reduce_async(hp, src, 16, SUM, R.ACL_UINT32, stream, None) == OK
    code = acl.rt.synchronize_stream(stream)
    assert code != OK
    assert host.tolist() == [0] * 4


def test_a_captured_reduce_runs_at_every_replay(dev0):
    s = new_stream()
    dst, src = dev(np.zeros(2, np.float32)), dev(np.full(2, 1.25, np.float32))
    begin(s)
    assert acl.rt.reduce_async(dst, src, 8, SUM, R.ACL_FLOAT, s, None) == OK
    mh = end(s)
    assert read(dst, 2, np.float32).tolist() == [0.0, 0.0]      # captured, not run
    run(mh, s, times=3)
    assert read(dst, 2, np.float32).tolist() == [3.75, 3.75]
