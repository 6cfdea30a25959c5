"""Port of the runtime sample ``example/2_advanced_features/model_ri/3_cond_model`` (main.cpp) to
``npusim.acl``: aclGraph conditional tasks — an IF with two branches, a WHILE whose body runs
once, a SWITCH with three cases — each captured into sub-models (aclmdlRIAddCondTask +
aclmdlRICaptureToModelRIBegin) and driven by the cond word of an ``aclmdlRICondHandle``.

Two variants:

* ``shipped`` (the default) runs the sample **as shipped**: every handle is created with
  ``ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT`` and default 0, so each aclmdlRIExecuteAsync
  rewrites the word to 0 (a synchronous host write at launch, ``spec/aclgraph.md`` §6.3 step 4)
  after the sample's own aclrtMemcpy of 1 / 0 / i. The real runtime therefore prints (README
  "Sample Output")::

      [INFO]  IF true branch result:
      [INFO]  The vector data is: 1.2500  2.5000  3.7500  5.0000  6.2500  7.5000  8.7500  10.0000
      [INFO]  IF false branch result:
      [INFO]  The vector data is: 1.2500  2.5000  3.7500  5.0000  6.2500  7.5000  8.7500  10.0000
      [INFO]  WHILE single iteration result:
      [INFO]  The vector data is: 1.2500  2.5000  3.7500  5.0000  6.2500  7.5000  8.7500  10.0000
      [INFO]  SWITCH case 0 result:
      [INFO]  The vector data is: 1.5000  3.0000  4.5000  6.0000  7.5000  9.0000  10.5000  12.0000

  Both IF runs take the false branch (alpha 0.5). The WHILE body (alpha 1.0, which would give
  1.5 ... 12) never runs: the printed vector is what the freshly allocated output buffer already
  held — the IF test's buffer, freed and handed out again at the same address. SWITCH takes
  case 0 (alpha 1.0) for all three runs.

* ``kernel``: the same programs with flag 0 (the runtime never writes the word) and the word set
  **by a kernel** — ``CondSetU64(condDevPtr, value)`` launched on the execution stream right
  before each aclmdlRIExecuteAsync (stream-ordered, so the graph sees it) instead of the host
  copy. Each branch's own result appears: IF true 2.0 ... 16.0 (alpha 2), IF false 1.25 ... 10
  (alpha 0.5), WHILE 1.5 ... 12 (one iteration, alpha 1), SWITCH cases 1.5 ... 12 / 2.0 ... 16 /
  1.25 ... 10 (alpha 1, 2, 0.5).

The C sample computes with ``aclnnAdd`` (out = self + alpha * other) from the CANN operator
library; here ``aclnn_add`` runs the ``VectorAddKernel`` sample kernel (the same formula). Each
C call is named in a comment next to its Python counterpart.

Run: ``python examples/model_ri_cond_model.py [shipped|kernel]``.
"""
from __future__ import annotations

import sys

import numpy as np

import npusim
from npusim import acl

K_DEVICE_ID = 0
K_ELEMENT_COUNT = 8
K_SHAPE = (4, 2)
K_SRC_A_HOST = np.array([1, 2, 3, 4, 5, 6, 7, 8], np.float32)
K_SRC_B_HOST = np.array([0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0], np.float32)
K_SIZE = K_ELEMENT_COUNT * 4                                # kElementCount * sizeof(float)
THREAD_LOCAL = acl.ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL
ASSIGN_DEFAULT = acl.ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT


# ---- utils.h / model_utils.cpp ----
def INFO_LOG(msg: str) -> None:
    print(f"[INFO]  {msg}")                                   # fprintf(stdout, "[INFO]  " fmt "\n")


def CHECK_ERROR(ret: int, call: str) -> None:
    if ret != acl.ACL_SUCCESS:
        print(f"[ERROR]  Operation failed: {call} returned error code {ret}")
        raise SystemExit(1)


def print_array(data) -> None:
    """ModelUtils::PrintArray: fixed, 4 decimals, two spaces after every value."""
    INFO_LOG("The vector data is: " + "".join(f"{v:.4f}  " for v in data))


def create_acl_tensor(shape) -> int:
    """ModelUtils::CreateAclTensor: aclrtMalloc of the tensor's bytes (the aclTensor descriptor
    only matters to the operator library)."""
    dev_addr, ret = acl.rt.malloc(int(np.prod(shape)) * 4, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    CHECK_ERROR(ret, "aclrtMalloc")
    return dev_addr


# ---- kernel launches ----
# The C sample's operators launch kernels onto the stream. Launches go through the Pythonic
# Stream.launch on the same stream handle (one place to swap for aclrtLaunchKernel). The Device
# object is made without aclrtSetDevice, so reference counts and the current context stay as in C.
_DEVICE = object.__new__(npusim.Device)


def launch_kernel(kernel_name: str, num_blocks: int, stream: int, *args) -> int:
    """aclrtLaunchKernel(funcHandle of ``kernel_name``, numBlocks, args, argsSize, stream)."""
    try:
        npusim.Stream(_DEVICE, stream).launch(kernel_name, num_blocks, args=args)
    except npusim.AclError as e:
        return e.code
    return acl.ACL_SUCCESS


def aclnn_add(self_d: int, other_d: int, alpha: float, out_d: int, stream: int) -> int:
    """aclnnAdd(workspace, workspaceSize, executor, stream): out = self + alpha * other."""
    return launch_kernel("VectorAddKernel", 1, stream, self_d, other_d, out_d,
                         np.float32(alpha), K_ELEMENT_COUNT)


class Variant:
    """How the cond word is driven: as shipped (ASSIGN_DEFAULT + host copy) or by a kernel."""

    def __init__(self, kernel_cond: bool):
        self.kernel_cond = kernel_cond
        self.flag = 0 if kernel_cond else ASSIGN_DEFAULT

    def set_cond(self, cond_dev_ptr: int, value: int, exec_stream: int) -> None:
        if self.kernel_cond:
            # CondSetU64<<<1, nullptr, execStream>>>(condDevPtr, value): ordered before the launch
            CHECK_ERROR(launch_kernel("CondSetU64", 1, exec_stream, cond_dev_ptr, value),
                        "aclrtLaunchKernel(CondSetU64)")
        else:
            v = np.array([value], np.uint64)               # static const uint64_t kCond...
            CHECK_ERROR(acl.rt.memcpy(cond_dev_ptr, 8, acl.util.numpy_to_ptr(v), 8,
                                      acl.ACL_MEMCPY_HOST_TO_DEVICE), "aclrtMemcpy")


def _tensors():
    src_a = create_acl_tensor(K_SHAPE)                      # CreateAclTensor(kShape, &srcADev...)
    src_b = create_acl_tensor(K_SHAPE)
    dst = create_acl_tensor(K_SHAPE)
    CHECK_ERROR(acl.rt.memcpy(src_a, K_SIZE, acl.util.numpy_to_ptr(K_SRC_A_HOST), K_SIZE,
                              acl.ACL_MEMCPY_HOST_TO_DEVICE), "aclrtMemcpy")
    CHECK_ERROR(acl.rt.memcpy(src_b, K_SIZE, acl.util.numpy_to_ptr(K_SRC_B_HOST), K_SIZE,
                              acl.ACL_MEMCPY_HOST_TO_DEVICE), "aclrtMemcpy")
    return src_a, src_b, dst


def _capture_parent(stream: int, flag: int):
    """aclmdlRICaptureBegin + GetInfo + CondHandleCreate(parent, 0, flag) + GetCondPtr."""
    CHECK_ERROR(acl.mdl.ri_capture_begin(stream, THREAD_LOCAL), "aclmdlRICaptureBegin")
    status, parent_model_ri, ret = acl.mdl.ri_capture_get_info(stream)
    CHECK_ERROR(ret, "aclmdlRICaptureGetInfo")
    cond_handle, ret = acl.mdl.ri_cond_handle_create(parent_model_ri, 0, flag)
    CHECK_ERROR(ret, "aclmdlRICondHandleCreate")
    cond_dev_ptr, ret = acl.mdl.ri_cond_handle_get_cond_ptr(cond_handle)
    CHECK_ERROR(ret, "aclmdlRICondHandleGetCondPtr")
    return parent_model_ri, cond_handle, cond_dev_ptr


def _run_and_read(parent_model_ri: int, exec_stream: int, dst: int) -> list[float]:
    out_host = np.zeros(K_ELEMENT_COUNT, np.float32)
    CHECK_ERROR(acl.mdl.ri_execute_async(parent_model_ri, exec_stream), "aclmdlRIExecuteAsync")
    CHECK_ERROR(acl.rt.synchronize_stream(exec_stream), "aclrtSynchronizeStream")
    CHECK_ERROR(acl.rt.memcpy(acl.util.numpy_to_ptr(out_host), K_SIZE, dst, K_SIZE,
                              acl.ACL_MEMCPY_DEVICE_TO_HOST), "aclrtMemcpy")
    return [float(v) for v in out_host]


def _release(model_ri: int, streams, buffers) -> None:
    CHECK_ERROR(acl.mdl.ri_destroy(model_ri), "aclmdlRIDestroy")
    for s in streams:
        CHECK_ERROR(acl.rt.destroy_stream(s), "aclrtDestroyStream")
    for p in buffers:                                       # aclDestroyTensor/Scalar: nothing
        CHECK_ERROR(acl.rt.free(p), "aclrtFree")


def cond_if(v: Variant) -> list[list[float]]:
    """TestCondIf: IF with two branches, alpha 2.0 (true) and 0.5 (false)."""
    INFO_LOG("========== IF condition ==========")
    stream, ret = acl.rt.create_stream()                    # aclrtCreateStream(&stream)
    CHECK_ERROR(ret, "aclrtCreateStream")
    sub_stream, ret = acl.rt.create_stream()
    CHECK_ERROR(ret, "aclrtCreateStream")
    src_a, src_b, dst = _tensors()
    alpha_true, alpha_false = 2.0, 0.5                      # aclCreateScalar(&alphaTrue ...)
    # aclnnAddGetWorkspaceSize x 2: the kernel needs no workspace

    parent_model_ri, cond_handle, cond_dev_ptr = _capture_parent(stream, v.flag)
    sub_models, ret = acl.mdl.ri_add_cond_task(cond_handle, acl.ACL_MODEL_RI_COND_TYPE_IF, 2,
                                               stream, 0)   # params {handle, IF, 2, subModels}
    CHECK_ERROR(ret, "aclmdlRIAddCondTask")
    for sub, alpha in zip(sub_models, (alpha_true, alpha_false)):
        CHECK_ERROR(acl.mdl.ri_capture_to_model_ri_begin(sub_stream, sub, THREAD_LOCAL),
                    "aclmdlRICaptureToModelRIBegin")
        CHECK_ERROR(aclnn_add(src_a, src_b, alpha, dst, sub_stream), "aclnnAdd")
        CHECK_ERROR(acl.mdl.ri_capture_end(sub_stream)[1], "aclmdlRICaptureEnd")
    parent_model_ri, ret = acl.mdl.ri_capture_end(stream)
    CHECK_ERROR(ret, "aclmdlRICaptureEnd")

    exec_stream, ret = acl.rt.create_stream()
    CHECK_ERROR(ret, "aclrtCreateStream")
    results = []
    for value, label in ((1, "IF true branch result:"), (0, "IF false branch result:")):
        v.set_cond(cond_dev_ptr, value, exec_stream)        # kCondTrue / kCondFalse
        out = _run_and_read(parent_model_ri, exec_stream, dst)
        INFO_LOG(label)
        print_array(out)
        results.append(out)

    _release(parent_model_ri, (sub_stream, stream, exec_stream), (src_a, src_b, dst))
    INFO_LOG("IF condition PASSED")
    return results


def cond_while(v: Variant) -> list[list[float]]:
    """TestCondWhile: the body adds (alpha 1.0) and copies 0 into the cond word: one iteration
    when the word is non-zero at the first evaluation."""
    INFO_LOG("========== WHILE condition ==========")
    stream, ret = acl.rt.create_stream()
    CHECK_ERROR(ret, "aclrtCreateStream")
    sub_stream, ret = acl.rt.create_stream()
    CHECK_ERROR(ret, "aclrtCreateStream")
    src_a, src_b, dst = _tensors()
    alpha = 1.0
    k_cond_zero = np.zeros(1, np.uint64)
    cond_zero_dev, ret = acl.rt.malloc(8, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    CHECK_ERROR(ret, "aclrtMalloc")
    CHECK_ERROR(acl.rt.memcpy(cond_zero_dev, 8, acl.util.numpy_to_ptr(k_cond_zero), 8,
                              acl.ACL_MEMCPY_HOST_TO_DEVICE), "aclrtMemcpy")

    parent_model_ri, cond_handle, cond_dev_ptr = _capture_parent(stream, v.flag)
    (loop_body_model,), ret = acl.mdl.ri_add_cond_task(
        cond_handle, acl.ACL_MODEL_RI_COND_TYPE_WHILE, 1, stream, 0)
    CHECK_ERROR(ret, "aclmdlRIAddCondTask")
    CHECK_ERROR(acl.mdl.ri_capture_to_model_ri_begin(sub_stream, loop_body_model, THREAD_LOCAL),
                "aclmdlRICaptureToModelRIBegin")
    CHECK_ERROR(aclnn_add(src_a, src_b, alpha, dst, sub_stream), "aclnnAdd")
    CHECK_ERROR(acl.rt.memcpy_async(cond_dev_ptr, 8, cond_zero_dev, 8,
                                    acl.ACL_MEMCPY_DEVICE_TO_DEVICE, sub_stream),
                "aclrtMemcpyAsync")
    CHECK_ERROR(acl.mdl.ri_capture_end(sub_stream)[1], "aclmdlRICaptureEnd")
    parent_model_ri, ret = acl.mdl.ri_capture_end(stream)
    CHECK_ERROR(ret, "aclmdlRICaptureEnd")

    exec_stream, ret = acl.rt.create_stream()
    CHECK_ERROR(ret, "aclrtCreateStream")
    v.set_cond(cond_dev_ptr, 1, exec_stream)                # kCondOne
    out = _run_and_read(parent_model_ri, exec_stream, dst)
    INFO_LOG("WHILE single iteration result:")
    print_array(out)

    _release(parent_model_ri, (sub_stream, stream, exec_stream),
             (src_a, src_b, dst, cond_zero_dev))
    INFO_LOG("WHILE condition PASSED")
    return [out]


def cond_switch(v: Variant) -> list[list[float]]:
    """TestCondSwitch: three cases, alpha 1.0 / 2.0 / 0.5, run with the word 0, 1, 2."""
    INFO_LOG("========== SWITCH condition ==========")
    stream, ret = acl.rt.create_stream()
    CHECK_ERROR(ret, "aclrtCreateStream")
    sub_stream, ret = acl.rt.create_stream()
    CHECK_ERROR(ret, "aclrtCreateStream")
    src_a, src_b, dst = _tensors()
    alpha_case = (1.0, 2.0, 0.5)

    parent_model_ri, cond_handle, cond_dev_ptr = _capture_parent(stream, v.flag)
    case_models, ret = acl.mdl.ri_add_cond_task(cond_handle, acl.ACL_MODEL_RI_COND_TYPE_SWITCH,
                                                3, stream, 0)
    CHECK_ERROR(ret, "aclmdlRIAddCondTask")
    for i in range(3):
        CHECK_ERROR(acl.mdl.ri_capture_to_model_ri_begin(sub_stream, case_models[i], THREAD_LOCAL),
                    "aclmdlRICaptureToModelRIBegin")
        CHECK_ERROR(aclnn_add(src_a, src_b, alpha_case[i], dst, sub_stream), "aclnnAdd")
        CHECK_ERROR(acl.mdl.ri_capture_end(sub_stream)[1], "aclmdlRICaptureEnd")
    parent_model_ri, ret = acl.mdl.ri_capture_end(stream)
    CHECK_ERROR(ret, "aclmdlRICaptureEnd")

    exec_stream, ret = acl.rt.create_stream()
    CHECK_ERROR(ret, "aclrtCreateStream")
    results = []
    for i in range(3):                                       # kCondValues = {0, 1, 2}
        v.set_cond(cond_dev_ptr, i, exec_stream)
        out = _run_and_read(parent_model_ri, exec_stream, dst)
        INFO_LOG(f"SWITCH case {i} result:")
        print_array(out)
        results.append(out)

    _release(parent_model_ri, (sub_stream, stream, exec_stream), (src_a, src_b, dst))
    INFO_LOG("SWITCH condition PASSED")
    return results


def main(variant: str = "shipped") -> dict[str, list[list[float]]]:
    """Run the sample; returns each test's printed vectors."""
    if variant not in ("shipped", "kernel"):
        raise ValueError(f"variant must be 'shipped' or 'kernel', not {variant!r}")
    v = Variant(kernel_cond=variant == "kernel")
    CHECK_ERROR(acl.init(), "aclInit(nullptr)")
    CHECK_ERROR(acl.rt.set_device(K_DEVICE_ID), "aclrtSetDevice(kDeviceId)")
    context, ret = acl.rt.create_context(K_DEVICE_ID)       # aclrtCreateContext(&context, ...)
    CHECK_ERROR(ret, "aclrtCreateContext")

    results = {"if": cond_if(v), "while": cond_while(v), "switch": cond_switch(v)}

    INFO_LOG("========== All tests PASSED ==========")
    CHECK_ERROR(acl.rt.destroy_context(context), "aclrtDestroyContext")
    # aclrtResetDeviceForce: one aclrtSetDevice was made, so aclrtResetDevice drains it
    CHECK_ERROR(acl.rt.reset_device(K_DEVICE_ID), "aclrtResetDeviceForce")
    CHECK_ERROR(acl.finalize(), "aclFinalize")
    return results


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "shipped")
