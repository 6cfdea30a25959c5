"""Port of the task-update program of the runtime's developer guide
(``docs/zh/dev_guide/04-03_task_update.md``, "任务更新", method 2: the update running concurrently
with the model's other tasks) to ``npusim.acl``.

stream1 captures: the H2D copies of ``self`` (0) and ``other`` (1) from pinned host memory,
``outtmp = self + other * alpha``, a wait on an external event (``aclrtCreateEventWithFlag(
ACL_EVENT_EXTERNAL)``) and its reset, then a task group holding ``out = outtmp + other * alpha``,
then the D2H copy of ``out`` into pinned host memory (alpha = 1.1). Each of the two iterations
executes the model, updates the group on ``updateStream`` and records the event there, so the
model's grouped task runs after the update. Iteration 1 replaces the grouped operator with
``out = outtmp + other * updatealpha`` (updatealpha = 5.5). Output (the C format
``"%f ... %f\\n"`` plus ACL_LOG's own newline)::

    [INFO]  execute model, loop: 0
    [INFO]  2.200000 2.200000 2.200000 2.200000 2.200000 2.200000 2.200000 2.200000

    [INFO]  execute model, loop: 1
    [INFO]  update alpha value of aclnnAdd
    [INFO]  6.600000 6.600000 6.600000 6.600000 6.600000 6.600000 6.600000 6.600000

The C program checks no return code. One of them is not 0: in iteration 0 it begins and ends an
update with no launch in between, and ``aclmdlRICaptureTaskUpdateEnd`` returns 507000 (fewer tasks
updated than the group holds, §7) — harmless, since the group is released either way and the
unchanged task runs. ``main`` returns the outputs and every call's code so this is visible.

The C program calls ``aclnnAdd`` (the CANN operator library); here ``aclnn_add`` launches the
``VectorAddKernel`` sample kernel (same formula). Each C call is named next to its counterpart.

Run: ``python examples/task_update_dev_guide.py``.
"""
from __future__ import annotations

import numpy as np

import npusim
from npusim import acl

CODES: list[tuple[str, int]] = []       # (C call, return code) in call order


def call(name: str, result):
    """Record a call's return code (the C program ignores them) and return its outputs."""
    if isinstance(result, tuple):
        *outs, code = result
        CODES.append((name, code))
        return outs[0] if len(outs) == 1 else tuple(outs)
    CODES.append((name, result))
    return result


def ACL_LOG(msg: str) -> None:
    print(f"[INFO]  {msg}")               # fprintf(stdout, "[INFO]  " fmt "\n", ##args)


# One helper launches every kernel: the Pythonic Stream.launch on the program's stream handle.
# The Device object is made without aclrtSetDevice, so the program's device reference count stays
# as in C. Swapping in the Kernel-module facade (aclrtLaunchKernel) only changes this function.
_DEVICE = object.__new__(npusim.Device)


def launch_kernel(kernel_name: str, num_blocks: int, stream: int, *args) -> int:
    try:
        npusim.Stream(_DEVICE, stream).launch(kernel_name, num_blocks, args=args)
    except npusim.AclError as e:
        return e.code
    return acl.ACL_SUCCESS


def aclnn_add(executor, stream: int) -> int:
    """aclnnAdd(workspaceAddr, workspaceSize, executor, stream): out = self + other * alpha;
    ``executor`` is what aclnnAddGetWorkspaceSize prepared: (self, other, alpha, out, n)."""
    self_d, other_d, alpha, out_d, n = executor
    return launch_kernel("VectorAddKernel", 1, stream, self_d, other_d, out_d,
                         np.float32(alpha), n)


def host_fill(ptr: int, values) -> None:
    """self_h[i] = ... on pinned host memory (the simulator's host arena)."""
    a = np.asarray(values, np.float32)
    call("memcpy(host)", acl.rt.memcpy(ptr, a.nbytes, acl.util.numpy_to_ptr(a), a.nbytes,
                                       acl.ACL_MEMCPY_HOST_TO_HOST))


def host_read(ptr: int, n: int) -> np.ndarray:
    a = np.zeros(n, np.float32)
    call("memcpy(host)", acl.rt.memcpy(acl.util.numpy_to_ptr(a), a.nbytes, ptr, a.nbytes,
                                       acl.ACL_MEMCPY_HOST_TO_HOST))
    return a


def main() -> list[list[float]]:
    """Run the program; returns out_h after every iteration (codes in ``CODES``)."""
    CODES.clear()
    dev_id = 0
    shape = (4, 2)
    alpha_value = 1.1
    updatealpha_value = 5.5
    size = int(np.prod(shape))                             # GetShapeSize(shape)
    nbytes = size * 4

    call("aclInit", acl.init())
    call("aclrtSetDevice", acl.rt.set_device(dev_id))
    # CreateAclTensor: aclrtMalloc + aclCreateTensor (a host descriptor)
    self_d = call("aclrtMalloc", acl.rt.malloc(nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST))
    other_d = call("aclrtMalloc", acl.rt.malloc(nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST))
    out_d = call("aclrtMalloc", acl.rt.malloc(nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST))
    outtmp_d = call("aclrtMalloc", acl.rt.malloc(nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST))
    # aclnnAddGetWorkspaceSize x3: outtmp = self + alpha * other; before the update
    # out = outtmp + alpha * other, after it out = outtmp + updatealpha * other (no workspace)
    executor = (self_d, other_d, alpha_value, outtmp_d, size)
    executor1 = (outtmp_d, other_d, alpha_value, out_d, size)
    executor2 = (outtmp_d, other_d, updatealpha_value, out_d, size)

    # aclrtMallocHost: pinned host memory
    self_h = call("aclrtMallocHost", acl.rt.malloc_host(nbytes))
    other_h = call("aclrtMallocHost", acl.rt.malloc_host(nbytes))
    out_h = call("aclrtMallocHost", acl.rt.malloc_host(nbytes))
    host_fill(self_h, [0] * 8)
    host_fill(other_h, [1] * 8)
    host_fill(out_h, [0] * 8)

    stream1 = call("aclrtCreateStream", acl.rt.create_stream())
    # an external event
    event = call("aclrtCreateEventWithFlag", acl.rt.create_event_with_flag(acl.ACL_EVENT_EXTERNAL))

    # ======== capture begins ========
    call("aclmdlRICaptureBegin",
         acl.mdl.ri_capture_begin(stream1, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL))
    # async copies of the operator's inputs, host -> device
    call("aclrtMemcpyAsync", acl.rt.memcpy_async(self_d, nbytes, self_h, nbytes,
                                                 acl.ACL_MEMCPY_HOST_TO_DEVICE, stream1))
    call("aclrtMemcpyAsync", acl.rt.memcpy_async(other_d, nbytes, other_h, nbytes,
                                                 acl.ACL_MEMCPY_HOST_TO_DEVICE, stream1))
    call("aclnnAdd", aclnn_add(executor, stream1))
    # on stream1: an Event Wait task, waiting for the update to finish
    call("aclrtStreamWaitEvent", acl.rt.stream_wait_event(stream1, event))
    call("aclrtResetEvent", acl.rt.reset_event(event, stream1))
    # mark the task to update
    call("aclmdlRICaptureTaskGrpBegin", acl.mdl.ri_capture_task_grp_begin(stream1))
    call("aclnnAdd", aclnn_add(executor1, stream1))
    handle = call("aclmdlRICaptureTaskGrpEnd", acl.mdl.ri_capture_task_grp_end(stream1))
    # async copy of the result, device -> host
    call("aclrtMemcpyAsync", acl.rt.memcpy_async(out_h, nbytes, out_d, nbytes,
                                                 acl.ACL_MEMCPY_DEVICE_TO_HOST, stream1))
    # ======== capture ends ========
    model_ri = call("aclmdlRICaptureEnd", acl.mdl.ri_capture_end(stream1))

    update_stream = call("aclrtCreateStream", acl.rt.create_stream())
    results = []
    for i in range(2):
        ACL_LOG(f"execute model, loop: {i}")
        call("aclmdlRIExecuteAsync", acl.mdl.ri_execute_async(model_ri, stream1))
        # begin the update: aclnnAdd's alpha becomes updatealpha
        call("aclmdlRICaptureTaskUpdateBegin",
             acl.mdl.ri_capture_task_update_begin(update_stream, handle))
        if i == 1:
            call("aclnnAdd", aclnn_add(executor2, update_stream))
            ACL_LOG("update alpha value of aclnnAdd")
        call("aclmdlRICaptureTaskUpdateEnd", acl.mdl.ri_capture_task_update_end(update_stream))
        # after the update, an Event Record on updateStream lets stream1 pass its Event Wait
        call("aclrtRecordEvent", acl.rt.record_event(event, update_stream))
        call("aclrtSynchronizeStream", acl.rt.synchronize_stream(update_stream))
        call("aclrtSynchronizeStream", acl.rt.synchronize_stream(stream1))
        out = host_read(out_h, size)
        ACL_LOG(" ".join(f"{float(v):f}" for v in out) + "\n")
        results.append([float(v) for v in out])

    # release the resources
    call("aclmdlRIDestroy", acl.mdl.ri_destroy(model_ri))
    for p in (self_d, other_d, out_d, outtmp_d):
        call("aclrtFree", acl.rt.free(p))
    call("aclrtDestroyStream", acl.rt.destroy_stream(stream1))
    call("aclrtDestroyStream", acl.rt.destroy_stream(update_stream))
    call("aclrtDestroyEvent", acl.rt.destroy_event(event))
    for p in (self_h, other_h, out_h):                    # (the C program leaks these)
        call("aclrtFreeHost", acl.rt.free_host(p))
    call("aclrtResetDevice", acl.rt.reset_device(dev_id))
    call("aclFinalize", acl.finalize())
    return results


if __name__ == "__main__":
    main()
    bad = [(name, code) for name, code in CODES if code]
    if bad:
        print(f"[INFO]  (return codes the C program ignores: {bad})")
