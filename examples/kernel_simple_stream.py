"""Port of the runtime sample ``example/1_basic_features/stream/0_simple_stream`` (main.cpp) to
``npusim.acl`` with the shipped kernel binary.

``EasyOPf`` adds 1 to a u32 on the device: once on the default stream (result 1), once on a
created stream in STOP_ON_FAILURE mode (result 2), then 3000 more times on that stream without
synchronizing in between (result 3002). The C sample launches with ``EasyOP<<<...>>>`` (a stub the
Ascend C toolchain generates); here the kernel comes from ``aclrtBinaryLoadFromFile`` +
``aclrtBinaryGetFunction`` and each launch is ``aclrtLaunchKernel`` with the argument (the device
pointer) in device memory. Output (as the README)::

    [INFO]  Use default stream assigning task.
    [INFO]  After assigning the task through the default stream, the current result is: 1.
    [INFO]  Use created stream assigning task.
    [INFO]  After assigning the task through the created stream, the current result is: 2.
    [INFO]  Begin 3000 task.
    [INFO]  After synchronize, stream status is: 0.
    [INFO]  After loop, the current result is: 3002.

Run: ``python examples/kernel_simple_stream.py``.
"""
from __future__ import annotations

import numpy as np

import npusim
from npusim import acl


def check(ret) -> None:
    if ret != acl.ACL_SUCCESS:
        raise SystemExit(f"[ERROR]  ACL call returned {ret}")


def out(*values):
    *vals, ret = values
    check(ret)
    return vals[0] if len(vals) == 1 else tuple(vals)


def INFO_LOG(msg: str) -> None:
    print(f"[INFO]  {msg}")


def read_u32(ptr: int) -> int:
    host = np.zeros(1, np.uint32)
    check(acl.rt.memcpy(acl.util.numpy_to_ptr(host), 4, ptr, 4, acl.ACL_MEMCPY_DEVICE_TO_HOST))
    return int(host[0])


def main(count: int = 3000) -> list[int]:
    results = []
    check(acl.init())
    check(acl.rt.set_device(0))
    context = out(*acl.rt.create_context(0))                  # aclrtCreateContext
    binary = out(*acl.rt.binary_load_from_file(npusim.samples.binary_path()))
    easy_op = out(*acl.rt.binary_get_function(binary, "EasyOPf"))
    INFO_LOG("Use default stream assigning task.")
    num = np.zeros(1, np.uint32)
    num_device = out(*acl.rt.malloc(4, acl.ACL_MEM_MALLOC_HUGE_FIRST))
    check(acl.rt.memcpy(num_device, 4, acl.util.numpy_to_ptr(num), 4,
                        acl.ACL_MEMCPY_HOST_TO_DEVICE))
    # the kernel's one argument (u32* x) as an 8-byte slot in device memory
    slot = np.array([num_device], np.uint64)
    args = out(*acl.rt.malloc(8, acl.ACL_MEM_MALLOC_HUGE_FIRST))
    check(acl.rt.memcpy(args, 8, acl.util.numpy_to_ptr(slot), 8, acl.ACL_MEMCPY_HOST_TO_DEVICE))
    check(acl.rt.launch_kernel(easy_op, 1, args, 8, None))      # EasyOP(blockDim, nullptr, ...)
    check(acl.rt.synchronize_stream(None))
    results.append(read_u32(num_device))
    INFO_LOG(f"After assigning the task through the default stream, the current result is: "
             f"{results[-1]}.")

    INFO_LOG("Use created stream assigning task.")
    stream = out(*acl.rt.create_stream())
    check(acl.rt.set_stream_failure_mode(stream, acl.ACL_STOP_ON_FAILURE))
    check(acl.rt.launch_kernel(easy_op, 1, args, 8, stream))
    check(acl.rt.synchronize_stream(stream))
    results.append(read_u32(num_device))
    INFO_LOG(f"After assigning the task through the created stream, the current result is: "
             f"{results[-1]}.")

    INFO_LOG(f"Begin {count} task.")
    for _ in range(count):
        check(acl.rt.launch_kernel(easy_op, 1, args, 8, stream))
    check(acl.rt.synchronize_stream(stream))
    status = out(*acl.rt.stream_query(stream))
    INFO_LOG(f"After synchronize, stream status is: {status}.")
    results.append(read_u32(num_device))
    INFO_LOG(f"After loop, the current result is: {results[-1]}.")

    check(acl.rt.free(args))
    check(acl.rt.free(num_device))
    check(acl.rt.binary_unload(binary))
    check(acl.rt.destroy_stream(stream))
    check(acl.rt.destroy_context(context))
    check(acl.rt.reset_device(0))
    acl.finalize()
    INFO_LOG("Resource cleanup completed.")
    return results


if __name__ == "__main__":
    main()
