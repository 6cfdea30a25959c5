"""Port of the runtime quickstart ``example/0_quickstart/4_custom_kernel_launch`` (main.cpp,
vector_add_kernel.cpp) to ``npusim.acl``.

``VectorAddKernel(srcA, srcB, dst, alpha, elementCount)`` computes ``dst[i] = A[i] + alpha*B[i]``
with A = 1..8, B = 0.5..4, alpha = 1: the result is 1.5, 3, 4.5, ... 12. The C sample calls
``VectorAddKernel<<<1, nullptr, stream>>>``; here the kernel is looked up in the shipped binary
and launched with ``aclrtLaunchKernelWithHostArgs``, the arguments packed as the kernel reads
them: three pointers, then ``float alpha`` and ``uint32_t elementCount`` in the low bytes of
their 8-byte slots.

Run: ``python examples/kernel_vector_add.py``.
"""
from __future__ import annotations

import struct

import numpy as np

import npusim
from npusim import acl

ELEMENTS = 8
TOLERANCE = 1e-5


def check(ret) -> None:
    if ret != acl.ACL_SUCCESS:
        raise SystemExit(f"Error, ret = {ret}")


def out(*values):
    *vals, ret = values
    check(ret)
    return vals[0] if len(vals) == 1 else tuple(vals)


def main() -> np.ndarray:
    alpha = 1.0
    size = ELEMENTS * 4
    src_a = np.arange(1, 9, dtype=np.float32)
    src_b = np.arange(1, 9, dtype=np.float32) * np.float32(0.5)
    dst = np.zeros(ELEMENTS, np.float32)

    check(acl.init())
    print("ACL init successfully")
    check(acl.rt.set_device(0))
    print("Set device 0 successfully")
    stream = out(*acl.rt.create_stream())
    print("Create stream successfully")
    a_dev = out(*acl.rt.malloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST))
    b_dev = out(*acl.rt.malloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST))
    d_dev = out(*acl.rt.malloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST))
    print("Allocate device buffers successfully")
    check(acl.rt.memcpy(a_dev, size, acl.util.numpy_to_ptr(src_a), size,
                        acl.ACL_MEMCPY_HOST_TO_DEVICE))
    check(acl.rt.memcpy(b_dev, size, acl.util.numpy_to_ptr(src_b), size,
                        acl.ACL_MEMCPY_HOST_TO_DEVICE))
    print("Copy input vectors to device successfully")

    binary = out(*acl.rt.binary_load_from_file(npusim.samples.binary_path()))
    func = out(*acl.rt.binary_get_function(binary, "VectorAddKernel"))
    args = bytearray(struct.pack("<QQQfIII", a_dev, b_dev, d_dev, alpha, 0, ELEMENTS, 0))
    check(acl.rt.launch_kernel_with_host_args(func, 1, stream, None, args, len(args)))
    print("Custom AscendC kernel launch successfully")
    check(acl.rt.synchronize_stream(stream))
    print("Synchronize stream successfully")
    check(acl.rt.memcpy(acl.util.numpy_to_ptr(dst), size, d_dev, size,
                        acl.ACL_MEMCPY_DEVICE_TO_HOST))
    print("\nVector addition result:")
    matched = True
    for i in range(ELEMENTS):
        expected = src_a[i] + alpha * src_b[i]
        print(f"  result[{i}] = {dst[i]:.1f} (expected: {expected:.1f})")
        matched &= abs(dst[i] - expected) <= TOLERANCE
    for p in (a_dev, b_dev, d_dev):
        check(acl.rt.free(p))
    check(acl.rt.binary_unload(binary))
    check(acl.rt.destroy_stream(stream))
    check(acl.rt.reset_device(0))
    check(acl.finalize())
    print("\nSample run successfully with <<<>>> kernel call!" if matched
          else "\nSample run failed: vector addition result mismatched!")
    return dst


if __name__ == "__main__":
    main()
