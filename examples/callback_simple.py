"""Port of the runtime sample ``example/2_advanced_features/callback/0_simple_callback``
(main.cpp, callback_sample.cpp) to ``npusim.acl``: one stream served by a report thread
(``aclrtSubscribeReport`` / ``aclrtProcessReport``) and by a host-function thread
(``aclrtSubscribeHostFunc`` / ``aclrtProcessHostFunc``), a blocking callback before a LongOP
kernel, a host function and five callbacks after it.

The sample's README marks ``aclrtSubscribeHostFunc`` / ``aclrtProcessHostFunc`` /
``aclrtUnSubscribeHostFunc`` "No" on Ascend 950, Atlas A3 and Atlas A2 (chapter 24 of the API
reference: only IPV350 has them), the chips npusim simulates, and npusim refuses them by design
with 207000 (``docs/fidelity.md`` row 76). So, as on those chips, ``aclrtSubscribeHostFunc``
fails and the sample's ``CHECK_ERROR`` returns -1 from ``Callback()`` before any callback is
launched; the output is::

    [INFO]  The main thread id is <id>
    [INFO]  The created report thread id is <id>
    [INFO]  The created hostfunc thread id is <id>
    [ERROR]  Operation failed: aclrtSubscribeHostFunc(hostFuncTidInt, stream_) returned error code 207000
    [INFO]  Report callback thread exit
    [INFO]  Hostfunc processing thread exit

(the two exit lines in either order). One difference: leaving ``Callback()`` with its two
``std::thread`` objects still joinable makes the C++ program call ``std::terminate``; the port
stops and joins them. Without the host-function subscription the sample would not get further
either: ``aclrtLaunchHostFunc`` on a stream a user thread subscribed with
``aclrtSubscribeReport`` is 107011 (``ApiErrorDecorator::LaunchHostFunc``), which
``tests/acl/test_callback_examples.py`` checks with ``main(host_func_thread=False)``.
``aclrtDestroyStreamForce`` / ``aclrtResetDeviceForce`` are ``aclrtDestroyStream`` /
``aclrtResetDevice`` here (nothing is pending, the device was set once). Run: ``python examples/callback_simple.py``.
"""
from __future__ import annotations

import threading

import numpy as np

import npusim
from npusim import acl


def INFO_LOG(msg: str) -> None:
    print(f"[INFO]  {msg}")


def ERROR_LOG(msg: str) -> None:
    print(f"[ERROR]  {msg}")


class CheckError(Exception):
    """utils.h CHECK_ERROR: log the failed call and return -1 from the calling function."""


def CHECK_ERROR(result, call: str):
    *outs, ret = result if isinstance(result, tuple) else (result,)
    if ret != acl.ACL_SUCCESS:
        ERROR_LOG(f"Operation failed: {call} returned error code {ret}")
        raise CheckError(call)
    return outs[0] if len(outs) == 1 else None


def long_op(stream: int, num_device: int) -> None:
    """kernel_ops.h LongOP: the sample binary's LongOPf (a long kernel) on ``*numDevice``."""
    binary = CHECK_ERROR(acl.rt.binary_load_from_file(npusim.samples.binary_path(), None),
                         "aclrtBinaryLoadFromFile")
    func = CHECK_ERROR(acl.rt.binary_get_function(binary, "LongOPf"), "aclrtBinaryGetFunction")
    args = np.array([num_device], np.uint64)
    CHECK_ERROR(acl.rt.launch_kernel_with_host_args(func, 1, stream, None, args.tobytes(),
                                                    args.nbytes), "aclrtLaunchKernelWithHostArgs")


class CallBackSample:
    device_id = 0
    context = None
    stream = None

    def __init__(self):
        self.is_report_loop = True
        self.is_host_func_loop = True

    def init(self) -> int:
        try:
            CHECK_ERROR(acl.init(), "aclInit(nullptr)")
            CHECK_ERROR(acl.rt.set_device(self.device_id), "aclrtSetDevice(deviceId_)")
            CallBackSample.context = CHECK_ERROR(acl.rt.create_context(self.device_id),
                                                 "aclrtCreateContext(&context_, deviceId_)")
            CallBackSample.stream = CHECK_ERROR(acl.rt.create_stream(),
                                                "aclrtCreateStream(&stream_)")
            CHECK_ERROR(acl.rt.set_stream_failure_mode(self.stream, acl.ACL_STOP_ON_FAILURE),
                        "aclrtSetStreamFailureMode(stream_, ACL_STOP_ON_FAILURE)")
        except CheckError:
            return -1
        return 0

    def thread_func(self) -> None:
        wait_time = 100
        ret = acl.rt.set_current_context(self.context)
        if ret != acl.ACL_SUCCESS:
            ERROR_LOG(f"aclrtSetCurrentContext failed in report thread: {ret}")
            return
        while self.is_report_loop:
            acl.rt.process_report(wait_time)
        INFO_LOG("Report callback thread exit")

    def host_func_thread_func(self) -> None:
        wait_time = 100
        ret = acl.rt.set_current_context(self.context)
        if ret != acl.ACL_SUCCESS:
            ERROR_LOG(f"aclrtSetCurrentContext failed in hostfunc thread: {ret}")
            return
        while self.is_host_func_loop:
            if acl.rt.process_host_func(wait_time) == acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT:
                threading.Event().wait(wait_time / 1000)   # refused at once: poll at its pace
        INFO_LOG("Hostfunc processing thread exit")

    @staticmethod
    def call_back_before_launch_func(arg) -> None:
        INFO_LOG(f"Report callback thread id is {threading.get_ident()}")
        INFO_LOG(f"This callback before task, result: user data is: {arg[0]}.")

    @staticmethod
    def call_back_func(arg) -> None:
        INFO_LOG(f"Report callback thread id is {threading.get_ident()}")
        INFO_LOG(f"This callback after task and loop five times, result: user data is: "
                 f"{arg[0]}.")

    @staticmethod
    def host_func(arg) -> None:
        INFO_LOG(f"Hostfunc callback thread id is {threading.get_ident()}")
        INFO_LOG(f"Hostfunc executed in subscribed thread, user data is: {arg[0]}.")

    def callback(self, host_func_thread: bool = True) -> int:
        num = np.zeros(1, np.uint32)
        size = num.nbytes
        count = 5
        try:
            num_device = CHECK_ERROR(acl.rt.malloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST),
                                     "aclrtMalloc((void**)&numDevice, size, ...)")
            CHECK_ERROR(acl.rt.memcpy(num_device, size, acl.util.numpy_to_ptr(num), size,
                                      acl.ACL_MEMCPY_HOST_TO_DEVICE),
                        "aclrtMemcpy(numDevice, size, &num, size, ACL_MEMCPY_HOST_TO_DEVICE)")
            report_thread = threading.Thread(target=self.thread_func)
            host_func_thread_ = threading.Thread(target=self.host_func_thread_func)
            report_thread.start()
            host_func_thread_.start()
            try:
                INFO_LOG(f"The main thread id is {threading.get_ident()}")
                INFO_LOG(f"The created report thread id is {report_thread.ident}")
                INFO_LOG(f"The created hostfunc thread id is {host_func_thread_.ident}")
                user_data = [520]
                CHECK_ERROR(acl.rt.subscribe_report(report_thread.ident, self.stream),
                            "aclrtSubscribeReport(reportTidInt, stream_)")
                if host_func_thread:
                    CHECK_ERROR(acl.rt.subscribe_host_func(host_func_thread_.ident, self.stream),
                                "aclrtSubscribeHostFunc(hostFuncTidInt, stream_)")
                self.run_callbacks(user_data, num_device, count)
                CHECK_ERROR(acl.rt.synchronize_stream(self.stream),
                            "aclrtSynchronizeStream(stream_)")
                CHECK_ERROR(acl.rt.memcpy(acl.util.numpy_to_ptr(num), size, num_device, size,
                                          acl.ACL_MEMCPY_DEVICE_TO_HOST),
                            "aclrtMemcpy(&num, size, numDevice, size, ACL_MEMCPY_DEVICE_TO_HOST)")
                INFO_LOG(f"After assigning the task, the current int is: {int(num[0])}.")
            finally:
                self.is_report_loop = False
                self.is_host_func_loop = False
                report_thread.join()
                host_func_thread_.join()
            CHECK_ERROR(acl.rt.unsubscribe_report(report_thread.ident, self.stream),
                        "aclrtUnSubscribeReport(reportTidInt, stream_)")
            if host_func_thread:
                CHECK_ERROR(acl.rt.unsubscribe_host_func(host_func_thread_.ident, self.stream),
                            "aclrtUnSubscribeHostFunc(hostFuncTidInt, stream_)")
            CHECK_ERROR(acl.rt.free(num_device), "aclrtFree(numDevice)")
        except CheckError:
            return -1
        return 0

    def run_callbacks(self, user_data, num_device: int, count: int) -> None:
        CHECK_ERROR(acl.rt.launch_callback(self.call_back_before_launch_func, user_data,
                                           acl.ACL_CALLBACK_BLOCK, self.stream),
                    "aclrtLaunchCallback(CallBackBeforeLaunchFunc, userData, ACL_CALLBACK_BLOCK, "
                    "stream_)")
        long_op(self.stream, num_device)
        CHECK_ERROR(acl.rt.launch_host_func(self.stream, self.host_func, user_data),
                    "aclrtLaunchHostFunc(stream_, HostFunc, userData)")
        INFO_LOG("After begin a task, launch one hostfunc and five callbacks.")
        for _ in range(count):
            CHECK_ERROR(acl.rt.launch_callback(self.call_back_func, user_data,
                                               acl.ACL_CALLBACK_BLOCK, self.stream),
                        "aclrtLaunchCallback(CallBackFunc, userData, ACL_CALLBACK_BLOCK, stream_)")

    def destroy(self) -> int:
        try:
            CHECK_ERROR(acl.rt.destroy_stream(self.stream), "aclrtDestroyStreamForce(stream_)")
            CHECK_ERROR(acl.rt.destroy_context(self.context), "aclrtDestroyContext(context_)")
            CHECK_ERROR(acl.rt.reset_device(self.device_id), "aclrtResetDeviceForce(deviceId_)")
            CHECK_ERROR(acl.finalize(), "aclFinalize()")
        except CheckError:
            return -1
        return 0


def main(host_func_thread: bool = True) -> int:
    sample = CallBackSample()
    try:
        sample.init()
        return sample.callback(host_func_thread)
    finally:
        sample.destroy()                 # the C++ destructor


if __name__ == "__main__":
    main()
