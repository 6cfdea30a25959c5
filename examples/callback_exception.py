"""Port of the runtime sample ``example/2_advanced_features/callback/2_callback_exception``
(main.cpp, exception_callback_sample.cpp) to ``npusim.acl``: a report thread serves the stream's
callbacks (``aclrtSubscribeReport`` / ``aclrtProcessReport``), an exception-info callback
(``aclrtSetExceptionInfoCallback``) reads the failed task's ids from its ``aclrtExceptionInfo``,
and after the failing synchronize the program reads the runtime's error state
(``aclrtGetErrorVerbose``, ``aclrtPeekAtLastError`` / ``aclrtGetLastError``,
``aclGetRecentErrMsg``).

README "Sample Output" (abbreviated there; the full output is in ``tests/acl/test_callback_examples.py``)::

    [INFO]  Begin an easy task and an error task. The error task will trigger the exception callback.
    [INFO]  The last task id is: ...
    [INFO]  Exception occurred, callback function.
    [INFO]  The error task id is ...
    ...
    [ERROR]  aclrtSynchronizeStream(stream_) returned error code ...
    [INFO]  Thread exit
    [INFO]  Run the callback_exception sample successfully.

``EasyOP`` / ``ErrorOP`` of the sample's kernel library are the sample binary's EasyOPf (one
block adds 1 to ``*numDevice``) and ErrorOPf (a trap: 507035). The stream stops on failure; its
blocking callback after ErrorOP is still reported ("After error still callback"): the stream
reaches it with the failed tasks skipped, and the report thread runs it. Two calls differ, as in ``callback_hostfunc.py``:
``aclrtDestroyStreamForce`` / ``aclrtResetDeviceForce`` are ``aclrtDestroyStream`` /
``aclrtResetDevice`` here (nothing is pending, the device was set once). Thread ids are Python's
``threading.get_ident()`` (``pthread_self``). Run: ``python examples/callback_exception.py``.
"""
from __future__ import annotations

import threading

import numpy as np

import npusim
from npusim import acl


def INFO_LOG(msg: str) -> None:
    print(f"[INFO]  {msg}")


def WARN_LOG(msg: str) -> None:
    print(f"[WARN]  {msg}")


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


def _launch(stream: int, name: str, args: list) -> None:
    """kernel_ops.h EasyOP / ErrorOP: the sample binary's kernel with its pointer arguments."""
    binary = CHECK_ERROR(acl.rt.binary_load_from_file(npusim.samples.binary_path(), None),
                         "aclrtBinaryLoadFromFile")
    func = CHECK_ERROR(acl.rt.binary_get_function(binary, name), "aclrtBinaryGetFunction")
    data = np.array(args or [0], np.uint64)
    CHECK_ERROR(acl.rt.launch_kernel_with_host_args(func, 1, stream, None, data.tobytes(),
                                                    data.nbytes), "aclrtLaunchKernelWithHostArgs")


class ExceptionCallBackSample:
    device_id = 0
    context = None
    stream = None

    def __init__(self):
        self.is_loop = True

    def init(self) -> int:
        try:
            CHECK_ERROR(acl.init(), "aclInit(nullptr)")
            CHECK_ERROR(acl.rt.set_device(self.device_id), "aclrtSetDevice(deviceId_)")
            ExceptionCallBackSample.context = CHECK_ERROR(
                acl.rt.create_context(self.device_id), "aclrtCreateContext(&context_, deviceId_)")
            ExceptionCallBackSample.stream = CHECK_ERROR(acl.rt.create_stream(),
                                                         "aclrtCreateStream(&stream_)")
            CHECK_ERROR(acl.rt.set_stream_failure_mode(self.stream, acl.ACL_STOP_ON_FAILURE),
                        "aclrtSetStreamFailureMode(stream_, ACL_STOP_ON_FAILURE)")
        except CheckError:
            return -1
        return 0

    def thread_func(self) -> None:
        wait_time = 100
        acl.rt.set_current_context(self.context)
        while self.is_loop:
            acl.rt.process_report(wait_time)
        INFO_LOG("Thread exit")

    @staticmethod
    def call_back_func(arg) -> None:
        INFO_LOG(f"After error still callback, the userdata is: {arg[0]}.")

    @staticmethod
    def exception_call_back_func(exception_info) -> None:
        INFO_LOG("Exception occurred, callback function.")
        INFO_LOG(f"The error task id is {acl.rt.get_task_id_from_exception_info(exception_info)}.")
        INFO_LOG(f"The error stream id is "
                 f"{acl.rt.get_stream_id_from_exception_info(exception_info)}.")
        INFO_LOG(f"The error thread id is "
                 f"{acl.rt.get_thread_id_from_exception_info(exception_info)}.")
        INFO_LOG(f"The error device id is "
                 f"{acl.rt.get_device_id_from_exception_info(exception_info)}.")
        INFO_LOG(f"The error code id is "
                 f"{acl.rt.get_error_code_from_exception_info(exception_info)}.")
        dev_args_ptr, dev_args_len, args_ret = acl.rt.get_args_from_exception_info(exception_info)
        INFO_LOG(f"Exception args query ret={args_ret}, devArgsPtr={dev_args_ptr:#x}, "
                 f"devArgsLen={dev_args_len}")
        func_handle, func_ret = acl.rt.get_func_handle_from_exception_info(exception_info)
        INFO_LOG(f"Exception func handle query ret={func_ret}, funcHandle={func_handle:#x}")

    def log_runtime_error_state(self, stage: str) -> None:
        error_info, verbose_ret = acl.rt.get_error_verbose(self.device_id)
        if verbose_ret == acl.ACL_SUCCESS:
            INFO_LOG(f"{stage} verbose error info: errorType={error_info['errorType']}, "
                     f"tryRepair={error_info['tryRepair']}, hasDetail={error_info['hasDetail']}")
        else:
            WARN_LOG(f"{stage} aclrtGetErrorVerbose failed with error code {verbose_ret}")
        peek_error = acl.rt.peek_at_last_error(acl.ACL_RT_THREAD_LEVEL)
        last_error = acl.rt.get_last_error(acl.ACL_RT_THREAD_LEVEL)
        recent = acl.get_recent_err_msg()
        ERROR_LOG(f"{stage} runtime diagnostics: peekErr={peek_error}, lastErr={last_error}, "
                  f"recentErrMsg={recent if recent is not None else '<null>'}")

    def callback(self) -> int:
        num = np.zeros(1, np.uint32)
        size = num.nbytes
        try:
            num_device = CHECK_ERROR(acl.rt.malloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST),
                                     "aclrtMalloc((void**)&numDevice, size, ...)")
            CHECK_ERROR(acl.rt.memcpy(num_device, size, acl.util.numpy_to_ptr(num), size,
                                      acl.ACL_MEMCPY_HOST_TO_DEVICE),
                        "aclrtMemcpy(numDevice, size, &num, size, ACL_MEMCPY_HOST_TO_DEVICE)")
            td = threading.Thread(target=self.thread_func)
            td.start()
            try:
                user_data = [520]
                CHECK_ERROR(acl.rt.subscribe_report(td.ident, self.stream),
                            "aclrtSubscribeReport(tidInt, stream_)")
                CHECK_ERROR(acl.rt.set_exception_info_callback(self.exception_call_back_func),
                            "aclrtSetExceptionInfoCallback(ExceptionCallBackFunc)")
                INFO_LOG("Begin an easy task and an error task. The error task will trigger the "
                         "exception callback.")
                _launch(self.stream, "EasyOPf", [num_device])
                _launch(self.stream, "ErrorOPf", [])
                task_id = CHECK_ERROR(acl.rt.get_thread_last_task_id(),
                                      "aclrtGetThreadLastTaskId(&taskId)")
                INFO_LOG(f"The last task id is: {task_id}.")
                CHECK_ERROR(acl.rt.launch_callback(self.call_back_func, user_data,
                                                   acl.ACL_CALLBACK_BLOCK, self.stream),
                            "aclrtLaunchCallback(CallBackFunc, userData, ACL_CALLBACK_BLOCK, "
                            "stream_)")
                sync_ret = acl.rt.synchronize_stream(self.stream)
                if sync_ret != acl.ACL_SUCCESS:
                    ERROR_LOG(f"aclrtSynchronizeStream(stream_) returned error code {sync_ret}")
                    self.log_runtime_error_state("Post synchronize diagnostics")
                memcpy_ret = acl.rt.memcpy(acl.util.numpy_to_ptr(num), size, num_device, size,
                                           acl.ACL_MEMCPY_DEVICE_TO_HOST)
                if memcpy_ret == acl.ACL_SUCCESS:
                    INFO_LOG(f"After assigning the task, the current num is: {int(num[0])}.")
                else:
                    ERROR_LOG(f"aclrtMemcpy after error returned error code {memcpy_ret}")
            finally:
                self.is_loop = False
                td.join()
            CHECK_ERROR(acl.rt.unsubscribe_report(td.ident, self.stream),
                        "aclrtUnSubscribeReport(tidInt, stream_)")
            CHECK_ERROR(acl.rt.free(num_device), "aclrtFree(numDevice)")
        except CheckError:
            return -1
        return 0

    def destroy(self) -> int:
        try:
            CHECK_ERROR(acl.rt.destroy_stream(self.stream), "aclrtDestroyStreamForce(stream_)")
            CHECK_ERROR(acl.rt.destroy_context(self.context), "aclrtDestroyContext(context_)")
            CHECK_ERROR(acl.rt.reset_device(self.device_id), "aclrtResetDeviceForce(deviceId_)")
            CHECK_ERROR(acl.finalize(), "aclFinalize()")
        except CheckError:
            return -1
        return 0


def main() -> int:
    sample = ExceptionCallBackSample()
    try:
        if sample.init() != 0:
            return -1
        if sample.callback() != 0:
            return -1
    finally:
        sample.destroy()                 # the C++ destructor
    INFO_LOG("Run the callback_exception sample successfully.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
