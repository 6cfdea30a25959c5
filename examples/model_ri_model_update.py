"""Port of the runtime sample ``example/2_advanced_features/model_ri/1_model_update`` (main.cpp) to
``npusim.acl``: capture a model whose second operator sits in a *task group*, then update that
operator's arguments between two executions with ``aclmdlRICaptureTaskUpdateBegin/End`` on a
separate update stream.

``aclnnAdd`` computes ``out = self + other * alpha``. The model computes
``outTmp = self + other * alpha`` then ``out = outTmp + other * alpha`` (self = 1..8, other = 2,
alpha = 1.1); before the second execution the grouped operator is replaced by
``out = outTmp + other * updateAlpha`` (updateAlpha = 2.2). The graph waits on an external event
(``aclrtCreateEventWithFlag(ACL_EVENT_EXTERNAL)``) just before the group and resets it, and every
iteration records that event on the update stream — so an update issued on the update stream is
applied before the replay reaches the group. Output (README "Sample Output")::

    [INFO]  Execute model, loop count: 1.
    [INFO]  The vector data is: 5.4000  6.4000  7.4000  8.4000  9.4000  10.4000  11.4000  12.4000
    [INFO]  Execute model, loop count: 2.
    [INFO]  Update alpha value of aclnnAdd
    [INFO]  The vector data is: 7.6000  8.6000  9.6000  10.6000  11.6000  12.6000  13.6000  14.6000

The C sample runs ``aclnnAdd`` from the CANN operator library; here ``aclnn_add`` launches the
``VectorAddKernel`` sample kernel (dst = A + alpha * B, the same formula). Each C call is named in
a comment next to its Python counterpart.

Run: ``python examples/model_ri_model_update.py``.
"""
from __future__ import annotations

import numpy as np

import npusim
from npusim import acl


# ---- utils.h / model_utils.cpp ----
def INFO_LOG(msg: str) -> None:
    print(f"[INFO]  {msg}")                                   # fprintf(stdout, "[INFO]  " fmt "\n")


def CHECK_ERROR(ret: int, call: str) -> None:
    if ret != acl.ACL_SUCCESS:
        print(f"[ERROR]  Operation failed: {call} returned error code {ret}")
        raise SystemExit(1)


def print_array(data) -> str:
    """ModelUtils::PrintArray: fixed, 4 decimals, two spaces after every value."""
    line = "The vector data is: " + "".join(f"{v:.4f}  " for v in data)
    INFO_LOG(line)
    return line


def create_acl_tensor(shape) -> int:
    """ModelUtils::CreateAclTensor: the device memory behind the tensor (aclrtMalloc)."""
    dev_addr, ret = acl.rt.malloc(int(np.prod(shape)) * 4, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    CHECK_ERROR(ret, "aclrtMalloc")
    return dev_addr


# ---- kernel launches ----
# One helper launches every kernel: the Pythonic Stream.launch on the C program's stream handle
# (the operator's kernel by name, its arguments packed into 8-byte slots). The Device object is
# made without aclrtSetDevice, so the sample's device reference count and current context stay as
# in C. Swapping in the Kernel-module facade (aclrtBinaryGetFunction + aclrtLaunchKernel) only
# changes this function.
_DEVICE = object.__new__(npusim.Device)


def launch_kernel(kernel_name: str, num_blocks: int, stream: int, *args) -> int:
    """aclrtLaunchKernel(funcHandle of ``kernel_name``, numBlocks, args, argsSize, stream)."""
    try:
        npusim.Stream(_DEVICE, stream).launch(kernel_name, num_blocks, args=args)
    except npusim.AclError as e:
        return e.code
    return acl.ACL_SUCCESS


class AddExecutor:
    """aclnnAddGetWorkspaceSize(self, other, alpha, out, &workspaceSize, &executor): what the
    operator will launch (no workspace is needed)."""

    def __init__(self, self_d: int, other_d: int, alpha: float, out_d: int, n: int):
        self.args = (self_d, other_d, out_d, np.float32(alpha), n)


def aclnn_add(executor: AddExecutor, stream: int) -> int:
    """aclnnAdd(workspace, workspaceSize, executor, stream): out = self + other * alpha."""
    return launch_kernel("VectorAddKernel", 1, stream, *executor.args)


# ---- main.cpp ----
def main() -> list[list[float]]:
    """Run the sample; returns the output vector of every execution."""
    device_id = 0
    self_host_data = np.array([1, 2, 3, 4, 5, 6, 7, 8], np.float32)
    other_host_data = np.array([2, 2, 2, 2, 2, 2, 2, 2], np.float32)
    out_host_data = np.zeros(8, np.float32)
    shape = (4, 2)
    alpha_value = 1.1
    update_alpha_value = 2.2
    loop_count = 2
    n = int(np.prod(shape))
    size = n * 4                                           # GetShapeSize(shape) * sizeof(float)

    CHECK_ERROR(acl.init(), "aclInit(NULL)")
    CHECK_ERROR(acl.rt.set_device(device_id), "aclrtSetDevice(deviceId)")
    context, ret = acl.rt.create_context(device_id)        # aclrtCreateContext(&context, ...)
    CHECK_ERROR(ret, "aclrtCreateContext")

    self_device = create_acl_tensor(shape)                 # CreateAclTensor(shape, &selfDevice...)
    other_device = create_acl_tensor(shape)
    out_device = create_acl_tensor(shape)
    out_tmp_device = create_acl_tensor(shape)
    # outTmp = self + other * alpha
    first_add = AddExecutor(self_device, other_device, alpha_value, out_tmp_device, n)
    # out = outTmp + other * alpha
    second_add = AddExecutor(out_tmp_device, other_device, alpha_value, out_device, n)
    # out = outTmp + other * updateAlpha
    update_add = AddExecutor(out_tmp_device, other_device, update_alpha_value, out_device, n)

    stream, ret = acl.rt.create_stream()                   # aclrtCreateStream(&stream)
    CHECK_ERROR(ret, "aclrtCreateStream")
    # synchronise through the event so the update is done: this flag exists for task updates
    # in captured models
    event, ret = acl.rt.create_event_with_flag(acl.ACL_EVENT_EXTERNAL)
    CHECK_ERROR(ret, "aclrtCreateEventWithFlag")

    CHECK_ERROR(acl.mdl.ri_capture_begin(stream, acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED),
                "aclmdlRICaptureBegin")
    # RELAXED: the synchronous copies are allowed, run at once and are not captured
    CHECK_ERROR(acl.rt.memcpy(self_device, size, acl.util.numpy_to_ptr(self_host_data), size,
                              acl.ACL_MEMCPY_HOST_TO_DEVICE), "aclrtMemcpy")
    CHECK_ERROR(acl.rt.memcpy(other_device, size, acl.util.numpy_to_ptr(other_host_data), size,
                              acl.ACL_MEMCPY_HOST_TO_DEVICE), "aclrtMemcpy")
    CHECK_ERROR(aclnn_add(first_add, stream), "aclnnAdd")
    # the tasks after this point can be updated: block the stream on the event here, and record
    # the event when an update ends, so the tasks that run are the updated ones
    CHECK_ERROR(acl.rt.stream_wait_event(stream, event), "aclrtStreamWaitEvent")
    CHECK_ERROR(acl.rt.reset_event(event, stream), "aclrtResetEvent")
    # the tasks here form an updatable group; `handle` updates them later
    CHECK_ERROR(acl.mdl.ri_capture_task_grp_begin(stream), "aclmdlRICaptureTaskGrpBegin")
    CHECK_ERROR(aclnn_add(second_add, stream), "aclnnAdd")
    handle, ret = acl.mdl.ri_capture_task_grp_end(stream)  # aclmdlRICaptureTaskGrpEnd(stream, &h)
    CHECK_ERROR(ret, "aclmdlRICaptureTaskGrpEnd")
    model_ri, ret = acl.mdl.ri_capture_end(stream)         # aclmdlRICaptureEnd(stream, &modelRI)
    CHECK_ERROR(ret, "aclmdlRICaptureEnd")

    update_stream, ret = acl.rt.create_stream()            # aclrtCreateStream(&updateStream)
    CHECK_ERROR(ret, "aclrtCreateStream")
    results = []
    for i in range(loop_count):
        INFO_LOG(f"Execute model, loop count: {i + 1}.")
        CHECK_ERROR(acl.mdl.ri_execute_async(model_ri, stream), "aclmdlRIExecuteAsync")
        if i == 1:
            # update the group through its handle: the new tasks must match the old ones in
            # type and number
            CHECK_ERROR(acl.mdl.ri_capture_task_update_begin(update_stream, handle),
                        "aclmdlRICaptureTaskUpdateBegin")
            CHECK_ERROR(aclnn_add(update_add, update_stream), "aclnnAdd")   # another operator
            INFO_LOG("Update alpha value of aclnnAdd")
            CHECK_ERROR(acl.mdl.ri_capture_task_update_end(update_stream),
                        "aclmdlRICaptureTaskUpdateEnd")
        # the event orders the update before the model's grouped task
        CHECK_ERROR(acl.rt.record_event(event, update_stream), "aclrtRecordEvent")
        CHECK_ERROR(acl.rt.synchronize_stream(update_stream), "aclrtSynchronizeStream")
        CHECK_ERROR(acl.rt.synchronize_stream(stream), "aclrtSynchronizeStream")
        CHECK_ERROR(acl.rt.memcpy(acl.util.numpy_to_ptr(out_host_data), size, out_device, size,
                                  acl.ACL_MEMCPY_DEVICE_TO_HOST), "aclrtMemcpy")
        print_array(out_host_data)
        results.append([float(v) for v in out_host_data])

    # release the resources
    CHECK_ERROR(acl.mdl.ri_destroy(model_ri), "aclmdlRIDestroy")
    # aclrtDestroyStreamForce: the facade's aclrtDestroyStream (the streams are idle here)
    CHECK_ERROR(acl.rt.destroy_stream(stream), "aclrtDestroyStreamForce")
    CHECK_ERROR(acl.rt.destroy_stream(update_stream), "aclrtDestroyStreamForce")
    # aclDestroyTensor / aclDestroyScalar: host descriptors only
    for p in (self_device, other_device, out_device, out_tmp_device):
        CHECK_ERROR(acl.rt.free(p), "aclrtFree")
    CHECK_ERROR(acl.rt.destroy_context(context), "aclrtDestroyContext")
    # aclrtResetDeviceForce: one aclrtSetDevice was made, so aclrtResetDevice drains it
    CHECK_ERROR(acl.rt.reset_device(device_id), "aclrtResetDeviceForce")
    CHECK_ERROR(acl.finalize(), "aclFinalize")
    return results


if __name__ == "__main__":
    main()
