"""Port of the cross-stream capture program of the runtime's developer guide
(``docs/zh/dev_guide/04-02_cross_stream_capture.md``, "跨流捕获") to ``npusim.acl``.

stream1 is the origin stream (it begins and ends the capture); stream2 joins the capture by
waiting on event1 recorded on stream1, runs the operator, and returns to stream1 through event2.
The model copies ``self`` (pinned host) to the device, computes ``out = self + other * alpha``
(other = 1, alpha = 1.1) on stream2, and copies ``out`` back over ``self``. ``other`` is copied
once, synchronously, under the RELAXED exchange mode, and is not part of the model. Each of the
8 executions therefore adds 1.1 to every element and prints (the C format ``"%f ... %f\\n"``
plus ACL_LOG's own newline)::

    [INFO]  1.100000 1.100000 1.100000 1.100000 1.100000 1.100000 1.100000 1.100000

    [INFO]  2.200000 2.200000 ...

The C program calls ``aclnnAdd`` (the CANN operator library); here ``aclnn_add`` runs the
``VectorAddKernel`` sample kernel, which computes the same formula. Each C call is named in a
comment next to its Python counterpart.

Run: ``python examples/cross_stream_capture.py``.
"""
from __future__ import annotations

import numpy as np

import npusim
from npusim import acl


def ACL_LOG(msg: str) -> None:
    print(f"[INFO]  {msg}")               # fprintf(stdout, "[INFO]  " fmt "\n", ##args)


# The C program's operator launches a kernel onto the stream. npusim.acl has no Kernel-module
# calls yet (aclrtBinaryLoadFromFile / aclrtBinaryGetFunction / aclrtLaunchKernel), so a launch
# goes through the Pythonic API's Stream.launch on the same stream handle. The Device object is
# made without aclrtSetDevice, so the program's device reference count stays as in C.
_DEVICE = object.__new__(npusim.Device)


def launch_kernel(kernel_name: str, num_blocks: int, stream: int, *args) -> int:
    """aclrtLaunchKernel(funcHandle of ``kernel_name``, numBlocks, args, argsSize, stream)."""
    try:
        npusim.Stream(_DEVICE, stream).launch(kernel_name, num_blocks, args=args)
    except npusim.AclError as e:
        return e.code
    return acl.ACL_SUCCESS


def aclnn_add(self_d: int, other_d: int, alpha: float, out_d: int, n: int, stream: int) -> int:
    """aclnnAdd(workspaceAddr, workspaceSize, executor, stream): out = self + other * alpha."""
    return launch_kernel("VectorAddKernel", 1, stream, self_d, other_d, out_d,
                         np.float32(alpha), n)


def create_acl_tensor(shape) -> int:
    """CreateAclTensor: the device memory behind the tensor (aclrtMalloc)."""
    dev_addr, _ = acl.rt.malloc(int(np.prod(shape)) * 4, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    return dev_addr


def main() -> list[list[float]]:
    """Run the program; returns the 8 printed vectors."""
    dev_id = 0
    shape = (4, 2)
    alpha_value = 1.1
    size = int(np.prod(shape))                             # GetShapeSize(shape)
    nbytes = size * 4                                      # size * sizeof(float)

    acl.init()                                             # aclInit(NULL)
    acl.rt.set_device(dev_id)                              # aclrtSetDevice(devID)

    self_d = create_acl_tensor(shape)                      # CreateAclTensor(shape, &self_d, ...)
    other_d = create_acl_tensor(shape)
    out_d = create_acl_tensor(shape)
    # aclnnAddGetWorkspaceSize: the kernel needs no workspace

    # pinned host memory from aclrtMallocHost; float* views of it
    self_hp, _ = acl.rt.malloc_host(nbytes)                # aclrtMallocHost((void **)&self_h, ...)
    other_hp, _ = acl.rt.malloc_host(nbytes)
    self_h = acl.util.ptr_to_numpy(self_hp, size, np.float32)
    other_h = acl.util.ptr_to_numpy(other_hp, size, np.float32)
    for i in range(8):
        self_h[i] = 0.0
        other_h[i] = 1.0

    stream1, _ = acl.rt.create_stream()                    # aclrtCreateStream(&stream1)
    stream2, _ = acl.rt.create_stream()                    # aclrtCreateStream(&stream2)
    # capture needs events made by aclrtCreateEventExWithFlag with ACL_EVENT_SYNC
    event1, _ = acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC)
    event2, _ = acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC)

    # ======== capture begins ========
    acl.mdl.ri_capture_begin(stream1, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
    # async copy of the operator's self input, host -> device (captured)
    acl.rt.memcpy_async(self_d, nbytes, self_hp, nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE, stream1)
    # switch to RELAXED so aclrtMemcpy may be called (aclmdlRICaptureThreadExchangeMode(&mode))
    mode, _ = acl.mdl.ri_capture_thread_exchange_mode(acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
    # synchronous copy of the other input: runs once, now
    acl.rt.memcpy(other_d, nbytes, other_hp, nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE)
    # back to GLOBAL
    mode, _ = acl.mdl.ri_capture_thread_exchange_mode(mode)
    # event1 brings stream2 into the capture
    acl.rt.record_event(event1, stream1)                   # aclrtRecordEvent(event1, stream1)
    acl.rt.stream_wait_event(stream2, event1)              # aclrtStreamWaitEvent(stream2, event1)
    aclnn_add(self_d, other_d, alpha_value, out_d, size, stream2)       # aclnnAdd(..., stream2)
    # once stream2's work is done, event2 returns stream2 to the origin stream1
    acl.rt.record_event(event2, stream2)
    acl.rt.stream_wait_event(stream1, event2)
    # async copy of the operator's output, device -> host (captured)
    acl.rt.memcpy_async(self_hp, nbytes, out_d, nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST, stream1)
    # ======== capture ends ========
    model_ri, _ = acl.mdl.ri_capture_end(stream1)          # aclmdlRICaptureEnd(stream1, &modelRI)

    # execute the model several times
    results = []
    for _ in range(8):
        acl.mdl.ri_execute_async(model_ri, stream1)        # aclmdlRIExecuteAsync(modelRI, stream1)
        acl.rt.synchronize_stream(stream1)                 # aclrtSynchronizeStream(stream1)
        # print the operator's output of each execution
        ACL_LOG(" ".join(f"{float(v):f}" for v in self_h[:8]) + "\n")
        results.append([float(v) for v in self_h[:8]])

    # release the resources
    acl.mdl.ri_destroy(model_ri)                           # aclmdlRIDestroy(modelRI)
    acl.rt.destroy_stream(stream1)
    acl.rt.destroy_stream(stream2)
    acl.rt.destroy_event(event1)
    acl.rt.destroy_event(event2)
    acl.rt.free(self_d)                                    # aclrtFree(self_d)
    acl.rt.free(other_d)
    acl.rt.free(out_d)
    acl.rt.free_host(self_hp)       # (the C program leaks its pinned buffers; freed here)
    acl.rt.free_host(other_hp)
    acl.rt.reset_device(dev_id)                            # aclrtResetDevice(devID)
    acl.finalize()                                         # aclFinalize()
    return results


if __name__ == "__main__":
    main()
