"""Port of the runtime sample ``example/2_advanced_features/kernel/0_launch_kernel`` (main.cpp)
to ``npusim.acl``: ``add_custom`` on 8 x 2048 fp16 values through an args handle and
``aclrtLaunchKernelWithConfig``.

* ``simple`` mode: the binary ``ascendc_kernels_simple.o`` (here the shipped main sample binary),
  arguments x, y, z appended with ``aclrtKernelArgsAppend``.
* ``placeholder`` mode: the binary whose ``add_custom`` also takes ``int32* totalLength`` and
  ``int32* tileNum`` (here ``samples.binary_path("placeholder")``); both are placeholders whose
  data (16384 and 8) is written into ``aclrtKernelArgsGetPlaceHolderBuffer`` buffers on the host
  and reaches the device with the launch.

The output z is compared with numpy's x + y in fp16 (rtol 1e-3, at most 0.1% mismatches, as the
sample's verify_result.py does).

Run: ``python examples/kernel_launch_add_custom.py [simple|placeholder]``.
"""
from __future__ import annotations

import sys

import numpy as np

import npusim
from npusim import acl

TOTAL_LENGTH = 8 * 2048
TILE_NUM = 8
BLOCK_DIM = 8


def check(ret) -> None:
    if ret != acl.ACL_SUCCESS:
        raise SystemExit(f"[ERROR]  ACL call returned {ret}")


def out(*values):
    *vals, ret = values
    check(ret)
    return vals[0] if len(vals) == 1 else tuple(vals)


def INFO_LOG(msg: str) -> None:
    print(f"[INFO]  {msg}")


def main(mode: str = "simple", seed: int = 0):
    """Returns (x, y, z) as fp16 numpy arrays."""
    if mode not in ("simple", "placeholder"):
        raise SystemExit(f"Invalid run mode: {mode}. Mode must be simple or placeholder.")
    rng = np.random.default_rng(seed)                     # scripts/gen_data.py: uniform inputs
    x = rng.uniform(1, 100, TOTAL_LENGTH).astype(np.float16)
    y = rng.uniform(1, 100, TOTAL_LENGTH).astype(np.float16)
    z = np.zeros(TOTAL_LENGTH, np.float16)
    nbytes = TOTAL_LENGTH * 2

    check(acl.init())
    check(acl.rt.set_device(0))
    stream = out(*acl.rt.create_stream())
    x_dev, y_dev, z_dev = (out(*acl.rt.malloc(nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST))
                           for _ in range(3))
    check(acl.rt.memcpy(x_dev, nbytes, acl.util.numpy_to_ptr(x), nbytes,
                        acl.ACL_MEMCPY_HOST_TO_DEVICE))
    check(acl.rt.memcpy(y_dev, nbytes, acl.util.numpy_to_ptr(y), nbytes,
                        acl.ACL_MEMCPY_HOST_TO_DEVICE))

    path = npusim.samples.binary_path("placeholder" if mode == "placeholder" else "simple")
    binary = out(*acl.rt.binary_load_from_file(path))
    func = out(*acl.rt.binary_get_function(binary, "add_custom"))
    args = out(*acl.rt.kernel_args_init(func))
    for ptr in (x_dev, y_dev, z_dev):                     # AppendCommonKernelArgs
        out(*acl.rt.kernel_args_append(args, int(ptr).to_bytes(8, "little")))
    if mode == "placeholder":                             # ConfigurePlaceholderArgs
        ph4 = out(*acl.rt.kernel_args_append_place_holder(args))
        ph5 = out(*acl.rt.kernel_args_append_place_holder(args))
        length_host = out(*acl.rt.kernel_args_get_place_holder_buffer(args, ph4, 4))
        num_host = out(*acl.rt.kernel_args_get_place_holder_buffer(args, ph5, 4))
        acl.util.ptr_to_numpy(length_host, 1, np.int32)[0] = TOTAL_LENGTH
        acl.util.ptr_to_numpy(num_host, 1, np.int32)[0] = TILE_NUM
    check(acl.rt.kernel_args_finalize(args))

    check(acl.rt.launch_kernel_with_config(func, BLOCK_DIM, stream, None, args, None))
    check(acl.rt.synchronize_stream(stream))
    check(acl.rt.memcpy(acl.util.numpy_to_ptr(z), nbytes, z_dev, nbytes,
                        acl.ACL_MEMCPY_DEVICE_TO_HOST))
    INFO_LOG(f"Kernel launch sample runs in {mode} mode.")

    check(acl.rt.binary_unload(binary))
    for p in (z_dev, y_dev, x_dev):
        check(acl.rt.free(p))
    check(acl.rt.destroy_stream(stream))
    check(acl.rt.reset_device(0))
    acl.finalize()
    golden = (x.astype(np.float32) + y.astype(np.float32)).astype(np.float16)
    mismatch = ~np.isclose(z, golden, rtol=1e-3, atol=1e-3)
    if mismatch.mean() <= 0.001:                          # scripts/verify_result.py
        INFO_LOG("Run the launch_kernel sample successfully.")
    else:
        INFO_LOG(f"test failed: {int(mismatch.sum())} mismatches")
    return x, y, z


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "simple")
