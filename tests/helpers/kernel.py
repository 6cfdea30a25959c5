"""Helpers for the Kernel-module tests: sample binaries, argument slots, device reads."""
from __future__ import annotations

import struct

import numpy as np

import npusim
from npusim import acl
from npusim.kernel.decorator import kernel_spec
from npusim.kernel.elfwrite import GlobalSpec, KernelSpec, mix_pair, write_elf
from npusim.runtime.runtime import RT

SAMPLES = npusim.samples.binary_path()
OK = acl.ACL_SUCCESS
E_ACL = acl.ACL_ERROR_INVALID_PARAM
E_PARAM = acl.ACL_ERROR_RT_PARAM_INVALID
E_HANDLE = acl.ACL_ERROR_RT_INVALID_HANDLE
E_CTX = acl.ACL_ERROR_RT_CONTEXT_NULL
E_UNSUPPORTED = acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
VECTOR_EXCEPTION = acl.ACL_ERROR_RT_VECTOR_CORE_EXCEPTION


def out(*values):
    """Unpack a facade result, asserting success."""
    *vals, ret = values
    assert ret == OK, ret
    return vals[0] if len(vals) == 1 else tuple(vals)


def load_samples(options=None) -> int:
    return out(*acl.rt.binary_load_from_file(SAMPLES, options))


def func(binary: int, name: str) -> int:
    return out(*acl.rt.binary_get_function(binary, name))


def dev_alloc(nbytes: int, fill: int | None = 0) -> int:
    p = out(*acl.rt.malloc(nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST))
    if fill is not None:
        assert acl.rt.memset(p, nbytes, fill, nbytes) == OK
    return p


def write(ptr: int, data) -> None:
    a = np.ascontiguousarray(np.frombuffer(data, np.uint8) if isinstance(data, (bytes, bytearray))
                             else data)
    assert acl.rt.memcpy(ptr, a.nbytes, acl.util.numpy_to_ptr(a), a.nbytes,
                         acl.ACL_MEMCPY_HOST_TO_DEVICE) == OK


def counter_args() -> tuple[int, int]:
    """(a zeroed 64-byte counter, one u32 per EasyOPf block; the 8-byte args block pointing
    at it)."""
    x = dev_alloc(64)
    a = dev_alloc(8, None)
    write(a, np.array([x], np.uint64))
    return x, a


def easy_counter() -> tuple[int, int, int]:
    """(EasyOPf of the sample binary, a counter and its args block: :func:`counter_args`)."""
    return (func(load_samples(), "EasyOPf"),) + counter_args()


def read(ptr: int, n: int, dtype=np.uint32) -> np.ndarray:
    host = np.zeros(n, dtype)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(host), host.nbytes, ptr, host.nbytes,
                         acl.ACL_MEMCPY_DEVICE_TO_HOST) == OK
    return host


def slots(*values) -> bytes:
    return struct.pack(f"<{len(values)}Q", *values)


def dev_args(*values) -> int:
    """Device memory holding ``values`` as 8-byte slots (for aclrtLaunchKernel / V2)."""
    p = dev_alloc(8 * max(len(values), 1), None)
    write(p, slots(*values) if values else bytes(8))
    return p


def raw_device(addr: int, n: int) -> bytes:
    """Bytes of simulated device memory (device 0), allocated or not."""
    return RT.devices[0].state.mem.view(addr, n).tobytes()


def elf(*kernels, **kw) -> bytes:
    return write_elf(list(kernels), **kw)


__all__ = ["SAMPLES", "OK", "E_ACL", "E_PARAM", "E_HANDLE", "E_CTX", "E_UNSUPPORTED",
           "VECTOR_EXCEPTION", "out", "load_samples", "func", "dev_alloc", "write", "read",
           "slots", "dev_args", "raw_device", "elf", "kernel_spec", "KernelSpec", "GlobalSpec",
           "mix_pair"]
