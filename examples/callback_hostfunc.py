"""Port of the runtime sample ``example/2_advanced_features/callback/1_callback_hostfunc``
(main.cpp) to ``npusim.acl``: a host function queued behind a kernel on a stream
(``aclrtLaunchHostFunc``) runs once the kernel is done, before the stream's synchronize returns.

README "Sample Output"::

    [INFO]  Hostfunc callback!!!
    [INFO]  After assigning the task through the created stream, the current result is: ...
    [INFO]  Resource cleanup completed.

``EasyOP(blockDim, stream, numDevice)`` of the sample's kernel library is the built-in EasyOPf
(one block adds 1 to ``*numDevice``), launched through the Kernel module. Two calls differ, each
noted where it is made: ``aclrtDestroyStreamForce`` and ``aclrtResetDeviceForce`` are not in
npusim yet; at that point the stream has nothing pending and the device was set once, so
``aclrtDestroyStream`` / ``aclrtResetDevice`` do the same. Run: ``python examples/callback_hostfunc.py``.
"""
from __future__ import annotations

import sys

import numpy as np

import npusim
from npusim import acl


def INFO_LOG(msg: str) -> None:
    print(f"[INFO]  {msg}")


def CHECK_ERROR(result, call: str):
    *outs, ret = result if isinstance(result, tuple) else (result,)
    if ret != acl.ACL_SUCCESS:
        print(f"[ERROR]  Operation failed: {call} returned error code {ret}")
        raise SystemExit(1)
    return outs[0] if len(outs) == 1 else None


def call_back_func(arg) -> None:
    INFO_LOG("Hostfunc callback!!!")


def easy_op(block_dim: int, stream: int, num_device: int) -> None:
    """kernel_ops.h EasyOP: the sample binary's EasyOPf with the counter's address as its one
    argument."""
    binary = CHECK_ERROR(acl.rt.binary_load_from_file(npusim.samples.binary_path(), None),
                         "aclrtBinaryLoadFromFile")
    func = CHECK_ERROR(acl.rt.binary_get_function(binary, "EasyOPf"), "aclrtBinaryGetFunction")
    args = np.array([num_device], np.uint64)
    CHECK_ERROR(acl.rt.launch_kernel_with_host_args(func, block_dim, stream, None, args.tobytes(),
                                                    args.nbytes), "aclrtLaunchKernelWithHostArgs")


def main() -> int:
    device_id, block_dim = 0, 1
    num = np.zeros(1, np.uint32)
    size = num.nbytes
    CHECK_ERROR(acl.init(), "aclInit")
    CHECK_ERROR(acl.rt.set_device(device_id), "aclrtSetDevice")
    context = CHECK_ERROR(acl.rt.create_context(device_id), "aclrtCreateContext")
    num_device = CHECK_ERROR(acl.rt.malloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc")
    CHECK_ERROR(acl.rt.memcpy(num_device, size, acl.util.numpy_to_ptr(num), size,
                              acl.ACL_MEMCPY_HOST_TO_DEVICE), "aclrtMemcpy")
    stream = CHECK_ERROR(acl.rt.create_stream(), "aclrtCreateStream")
    CHECK_ERROR(acl.rt.set_stream_failure_mode(stream, acl.ACL_STOP_ON_FAILURE),
                "aclrtSetStreamFailureMode")
    easy_op(block_dim, stream, num_device)
    CHECK_ERROR(acl.rt.launch_host_func(stream, call_back_func, None), "aclrtLaunchHostFunc")
    CHECK_ERROR(acl.rt.synchronize_stream(stream), "aclrtSynchronizeStream")
    CHECK_ERROR(acl.rt.memcpy(acl.util.numpy_to_ptr(num), size, num_device, size,
                              acl.ACL_MEMCPY_DEVICE_TO_HOST), "aclrtMemcpy")
    INFO_LOG(f"After assigning the task through the created stream, the current result is: "
             f"{int(num[0])}.")
    CHECK_ERROR(acl.rt.free(num_device), "aclrtFree")
    CHECK_ERROR(acl.rt.destroy_stream(stream), "aclrtDestroyStreamForce")     # (see above)
    CHECK_ERROR(acl.rt.destroy_context(context), "aclrtDestroyContext")
    CHECK_ERROR(acl.rt.reset_device(device_id), "aclrtResetDeviceForce")      # (see above)
    acl.finalize()
    INFO_LOG("Resource cleanup completed.")
    return int(num[0])


if __name__ == "__main__":
    main()
    sys.exit(0)
