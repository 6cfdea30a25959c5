"""npusim.hccl.move: the move / inline-reduce body is bit-exact against the numpy reference
(``npusim.hccl.algo.reduce_np``; docs/fidelity.md row 388) for every HCCL data type and op, and
runs as a kernel task through the engine. (Named test_hccl_reduce.py: tests/acl/test_reduce.py
exists and the test directories are not packages.)"""
from __future__ import annotations

import numpy as np
import pytest

import npusim as ns
from npusim.hccl import algo as A
from npusim.hccl import move as R
from npusim.hccl import types as T

OPS = (T.HCCL_REDUCE_SUM, T.HCCL_REDUCE_PROD, T.HCCL_REDUCE_MAX, T.HCCL_REDUCE_MIN)


def operands(dtype, n, seed):
    """Random operands: every bit pattern for integers; for floats normal values with some
    specials (0, -0, inf, big values that overflow), no NaN (its payload is not specified)."""
    rng = np.random.default_rng(seed)
    es = T.DATA_TYPE_SIZE[dtype]
    if dtype in (T.HCCL_DATA_TYPE_FP16, T.HCCL_DATA_TYPE_FP32, T.HCCL_DATA_TYPE_FP64,
                 T.HCCL_DATA_TYPE_BFP16):
        out = []
        for _ in range(2):
            f = rng.standard_normal(n) * rng.choice([1e-3, 1.0, 300.0, 6e4], n)
            f[:4] = [0.0, -0.0, np.inf, -6e4]
            if dtype == T.HCCL_DATA_TYPE_BFP16:
                b = (f.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
            else:
                with np.errstate(over="ignore"):
                    b = f.astype(A._NP[dtype])
            out.append(b.view(np.uint8).copy())
        return out
    return [rng.integers(0, 256, n * es, dtype=np.uint8) for _ in range(2)]


@pytest.mark.parametrize("dtype", sorted(T.REDUCIBLE_TYPES))
@pytest.mark.parametrize("op", OPS)
def test_move_is_bit_exact_against_numpy(dtype, op):
    n = 257
    d, s = operands(dtype, n, dtype * 10 + op)
    ref = d.copy()
    A.reduce_np(ref, s.copy(), dtype, op)
    for nb in (1, 3):
        got = d.copy()
        for b in range(nb):
            assert R.move(got.ctypes.data, s.ctypes.data, got.size, op, dtype, b, nb) == 0
        assert got.tobytes() == ref.tobytes(), (dtype, op, nb)


def test_fp16_and_bf16_round_each_step_from_fp32():
    # fp16: 2048 + 1 is a tie in fp16 (spacing 2): round to even -> 2048
    d = np.array([2048.0, 1.0], np.float16)
    s = np.array([1.0, 2.0 ** -11], np.float16)
    assert R.move(d.ctypes.data, s.ctypes.data, 4, T.HCCL_REDUCE_SUM, T.HCCL_DATA_TYPE_FP16,
                  0, 1) == 0
    assert d.tolist() == [2048.0, 1.0]
    # bf16: 256 + 1 -> 257 is a tie (spacing 2) -> 256; 1 + 2^-8 -> tie -> 1
    bf = lambda x: np.array(x, np.float32).view(np.uint32) >> 16      # noqa: E731
    d = bf([256.0, 1.0]).astype(np.uint16)
    s = bf([1.0, 2.0 ** -8]).astype(np.uint16)
    R.move(d.ctypes.data, s.ctypes.data, 4, T.HCCL_REDUCE_SUM, T.HCCL_DATA_TYPE_BFP16, 0, 1)
    assert ((d.astype(np.uint32) << 16).view(np.float32)).tolist() == [256.0, 1.0]


def test_max_min_propagate_nan_like_numpy():
    d = np.array([np.nan, 1.0, 2.0], np.float32)
    s = np.array([1.0, np.nan, 3.0], np.float32)
    R.move(d.ctypes.data, s.ctypes.data, 12, T.HCCL_REDUCE_MAX, T.HCCL_DATA_TYPE_FP32, 0, 1)
    assert np.isnan(d[0]) and np.isnan(d[1]) and d[2] == 3.0


def test_copy_is_a_memmove_and_bad_types_trap():
    a = np.arange(16, dtype=np.uint8)
    assert R.move(a.ctypes.data + 2, a.ctypes.data, 10, R.OP_COPY, 0, 0, 1) == 0
    assert a[:12].tolist() == [0, 1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    a = np.arange(16, dtype=np.uint8)
    R.move(a.ctypes.data, a.ctypes.data + 2, 10, R.OP_COPY, 0, 0, 1)
    assert a[:10].tolist() == list(range(2, 12))
    b = np.zeros(16, np.uint8)
    for dtype in (T.HCCL_DATA_TYPE_INT128, T.HCCL_DATA_TYPE_FP8E4M3, 13, 255, -3):
        assert R.move(b.ctypes.data, a.ctypes.data, 16, T.HCCL_REDUCE_SUM, dtype, 0, 1) == 1
    assert R.move(b.ctypes.data, a.ctypes.data, 16, 4, T.HCCL_DATA_TYPE_INT8, 0, 1) == 1
    assert R.move(b.ctypes.data, a.ctypes.data, 0, 4, 99, 0, 1) == 0      # nothing to move


def test_the_kernel_runs_on_a_stream():
    """The body names each end by device and arena offset (runtime/peer.py ``move``'s
    layout), found in device/peer.py's arena table when the task runs."""
    from npusim.device import peer as DP
    from npusim.runtime import peer
    from npusim.runtime.runtime import RT
    dev = ns.Device("Ascend910B")
    s = dev.stream()
    xa, xb, xc = dev.malloc(400), dev.malloc(400), dev.malloc(400)
    xa.write(np.arange(100, dtype=np.int32))
    xb.write(np.full(100, 5, np.int32))
    rdev = RT.devices[0]
    peer.register(rdev)
    off = rdev.state.mem.to_off
    table = DP.ARENAS.ctypes.data
    assert ns.device.kernels.TABLE.by_name[R.MOVE_BODY] == R.MOVE_KID
    s.launch(R.MOVE_BODY, 3, args=(0, off(int(xa)), 0, off(int(xb)), 400, T.HCCL_REDUCE_SUM,
                                   T.HCCL_DATA_TYPE_INT32, table))
    s.synchronize()
    assert xa.read(np.int32).tolist() == list(range(5, 105))
    s.launch(R.MOVE_BODY, 1, args=(0, off(int(xc)), 0, off(int(xa)), 400, R.OP_COPY, 0, table))
    s.synchronize()
    assert (xc.read(np.int32) == xa.read(np.int32)).all()
    s.launch(R.MOVE_BODY, 1, args=(0, off(int(xc)), 0, off(int(xa)), 400, 0,
                                   T.HCCL_DATA_TYPE_INT128, table))
    with pytest.raises(ns.AclError) as e:
        s.synchronize()
    assert e.value.code == 507035
    s2 = dev.stream()
    s2.launch(R.MOVE_BODY, 1, args=(5, 0, 0, off(int(xa)), 400, R.OP_COPY, 0, table))
    with pytest.raises(ns.AclError) as e:          # device 5 is not registered: a trap
        s2.synchronize()
    assert e.value.code == 507035
