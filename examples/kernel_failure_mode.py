"""Port of the first part of the runtime sample
``example/1_basic_features/stream/1_stream_with_failure_mode`` (main.cpp) to ``npusim.acl``.

Three tasks, EasyOP, ErrorOP (a ``trap``), EasyOP, go to one stream; the synchronize reports the
kernel exception, 507035 ``ACL_ERROR_RT_VECTOR_CORE_EXCEPTION``. In the default CONTINUE mode the
third task still runs (result 2); after ``aclrtSetStreamFailureMode(stream, ACL_STOP_ON_FAILURE)``
the tasks after the fault are skipped (result 1). Output (README "示例输出")::

    [INFO]  Assigning task without failure mode.
    [ERROR]  Operation failed: aclrtSynchronizeStream(stream) returned error code 507035
    [INFO]  Without failure mode, the result is 2.
    [INFO]  Assigning task with failure mode.
    [ERROR]  Operation failed: aclrtSynchronizeStream(stream) returned error code 507035
    [INFO]  After set failure mode, the current result is: 1.

An exception callback registered on the binary (``aclrtBinarySetExceptionCallback``) also sees
each fault. Run: ``python examples/kernel_failure_mode.py``.
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


def run_tasks(funcs, stream, args) -> int:
    """Easy, Error, Easy; returns the synchronize code."""
    easy, error = funcs
    for f in (easy, error, easy):
        check(acl.rt.launch_kernel(f, 1, args, 8, stream))
    ret = acl.rt.synchronize_stream(stream)
    if ret != acl.ACL_SUCCESS:
        print(f"[ERROR]  Operation failed: aclrtSynchronizeStream(stream) returned error code "
              f"{ret}")
    return ret


def main():
    """Returns ([sync codes], [results], [exception infos])."""
    codes, results, exceptions = [], [], []
    check(acl.init())
    check(acl.rt.set_device(0))
    binary = out(*acl.rt.binary_load_from_file(npusim.samples.binary_path()))
    check(acl.rt.binary_set_exception_callback(
        binary, lambda info, user: exceptions.append(info), None))
    funcs = (out(*acl.rt.binary_get_function(binary, "EasyOPf")),
             out(*acl.rt.binary_get_function(binary, "ErrorOPf")))
    for mode in (acl.ACL_CONTINUE_ON_FAILURE, acl.ACL_STOP_ON_FAILURE):
        if mode == acl.ACL_STOP_ON_FAILURE:                # a fresh context: STOP is per context
            ctx = out(*acl.rt.create_context(0))
            funcs = (out(*acl.rt.binary_get_function(binary, "EasyOPf")),
                     out(*acl.rt.binary_get_function(binary, "ErrorOPf")))
        stream = out(*acl.rt.create_stream())
        num = out(*acl.rt.malloc(4, acl.ACL_MEM_MALLOC_HUGE_FIRST))
        check(acl.rt.memset(num, 4, 0, 4))
        args = out(*acl.rt.malloc(8, acl.ACL_MEM_MALLOC_HUGE_FIRST))
        slot = np.array([num], np.uint64)
        check(acl.rt.memcpy(args, 8, acl.util.numpy_to_ptr(slot), 8,
                            acl.ACL_MEMCPY_HOST_TO_DEVICE))
        if mode == acl.ACL_STOP_ON_FAILURE:
            print("[INFO]  Assigning task with failure mode.")
            check(acl.rt.set_stream_failure_mode(stream, acl.ACL_STOP_ON_FAILURE))
        else:
            print("[INFO]  Assigning task without failure mode.")
        codes.append(run_tasks(funcs, stream, args))
        host = np.zeros(1, np.uint32)
        acl.rt.memcpy(acl.util.numpy_to_ptr(host), 4, num, 4, acl.ACL_MEMCPY_DEVICE_TO_HOST)
        results.append(int(host[0]))
        if mode == acl.ACL_STOP_ON_FAILURE:
            print(f"[INFO]  After set failure mode, the current result is: {results[-1]}.")
            acl.rt.destroy_stream(stream)
            acl.rt.destroy_context(ctx)
        else:
            print(f"[INFO]  Without failure mode, the result is {results[-1]}.")
            check(acl.rt.destroy_stream(stream))
    check(acl.rt.binary_unload(binary))
    check(acl.rt.reset_device(0))
    acl.finalize()
    return codes, results, exceptions


if __name__ == "__main__":
    main()
