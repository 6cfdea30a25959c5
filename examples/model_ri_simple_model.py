"""Port of the runtime sample ``example/2_advanced_features/model_ri/0_simple_model`` (main.cpp) to
``npusim.acl``: capture a host-to-device copy and two operators on a stream into a model
(``aclmdlRI``), then execute the model four times.

The model computes ``out = (self + other * alpha) * other`` with self = 1..8, other = 2,
alpha = 1.1, and every execution prints (README "Sample Output")::

    [INFO]  execute model, loop count: 1.
    [INFO]  The vector data is: 6.4000  8.4000  10.4000  12.4000  14.4000  16.4000  18.4000  20.4000
    ...

The C sample runs the operators with ``aclnnAdd`` / ``aclnnMul`` (the CANN operator library). The
simulator has no operator library: ``aclnn_add`` runs the ``VectorAddKernel`` sample kernel
(dst = A + alpha * B, the same formula), and ``aclnn_mul`` a small element-wise multiply kernel
defined below. Each C call is named in a comment next to its Python counterpart.

Run: ``python examples/model_ri_simple_model.py``.
"""
from __future__ import annotations

import sys

import numpy as np
from numba import cfunc

import npusim
from npusim import acl
from npusim.device import memview as V
from npusim.device.kernels import KERNEL_SIG, KERNEL_TRAP, TABLE, UNIT_AIV, arena


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
    """ModelUtils::CreateAclTensor: the device memory behind the tensor (aclrtMalloc); the
    aclTensor descriptor itself only matters to the operator library."""
    size = int(np.prod(shape)) * 4
    dev_addr, ret = acl.rt.malloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)   # aclrtMalloc
    CHECK_ERROR(ret, "aclrtMalloc")
    return dev_addr


# ---- kernel launches ----
# The C sample's operators launch kernels onto the stream. npusim.acl has no Kernel-module calls
# yet (aclrtBinaryLoadFromFile / aclrtBinaryGetFunction / aclrtLaunchKernel), so a launch goes
# through the Pythonic API's Stream.launch on the same stream handle. The Device object is made
# without aclrtSetDevice, so the sample's device reference count and current context stay as in C.
_DEVICE = object.__new__(npusim.Device)


def launch_kernel(kernel_name: str, num_blocks: int, stream: int, *args) -> int:
    """aclrtLaunchKernel(funcHandle of ``kernel_name``, numBlocks, args, argsSize, stream)."""
    try:
        npusim.Stream(_DEVICE, stream).launch(kernel_name, num_blocks, args=args)
    except npusim.AclError as e:
        return e.code
    return acl.ACL_SUCCESS


@cfunc(KERNEL_SIG)   # no disk cache: this file runs both as a script and as a module
def _mul_kernel(memp, msize, ctxp, args, b, nb):
    """MulKernel(float* a, float* b, float* dst, u32 n): dst[i] = a[i] * b[i] (block 0 does all)."""
    mem, ctx = arena(memp, msize, ctxp)
    try:
        if b == 0:
            s = V.args(mem, ctx, args, 4)
            n = np.int64(V.slot_u32(s, 3))
            x, y, d = V.f32(mem, ctx, s[0], n), V.f32(mem, ctx, s[1], n), V.f32(mem, ctx, s[2], n)
            for i in range(min(len(x), len(y), len(d))):
                d[i] = x[i] * y[i]
        return 0
    except Exception:
        return KERNEL_TRAP


if "MulKernel" not in TABLE.by_name:
    TABLE.register("MulKernel", _mul_kernel, 4_000, unit=UNIT_AIV)


def aclnn_add(self_d: int, other_d: int, alpha: float, out_d: int, n: int, stream: int) -> int:
    """aclnnAdd(workspace, workspaceSize, addExecutor, stream): out = self + other * alpha."""
    return launch_kernel("VectorAddKernel", 1, stream, self_d, other_d, out_d,
                         np.float32(alpha), n)


def aclnn_mul(self_d: int, other_d: int, out_d: int, n: int, stream: int) -> int:
    """aclnnMul(workspace, workspaceSize, mulExecutor, stream): out = self * other."""
    return launch_kernel("MulKernel", 1, stream, self_d, other_d, out_d, n)


# ---- main.cpp ----
def main(json_path: str = "./modelRI.json") -> list[list[float]]:
    """Run the sample; returns the output vector of every execution."""
    device_id = 0
    self_host_data = np.array([1, 2, 3, 4, 5, 6, 7, 8], np.float32)
    other_host_data = np.array([2, 2, 2, 2, 2, 2, 2, 2], np.float32)
    out_host_data = np.zeros(8, np.float32)
    shape = (4, 2)
    alpha_value = 1.1
    loop_count = 4
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
    # aclnnAddGetWorkspaceSize / aclnnMulGetWorkspaceSize: the kernels need no workspace

    stream, ret = acl.rt.create_stream()                   # aclrtCreateStream(&stream)
    CHECK_ERROR(ret, "aclrtCreateStream")
    self_host, ret = acl.rt.malloc_host(size)              # aclrtMallocHost(&selfHost, size)
    CHECK_ERROR(ret, "aclrtMallocHost")
    CHECK_ERROR(acl.rt.memcpy(self_host, size, acl.util.numpy_to_ptr(self_host_data), size,
                              acl.ACL_MEMCPY_HOST_TO_HOST), "aclrtMemcpy")

    # the model starts here, in GLOBAL mode: unsafe (synchronous) calls are refused
    CHECK_ERROR(acl.mdl.ri_capture_begin(stream, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL),
                "aclmdlRICaptureBegin")
    # an asynchronous copy is safe in GLOBAL mode and is captured
    CHECK_ERROR(acl.rt.memcpy_async(self_device, size, self_host, size,
                                    acl.ACL_MEMCPY_HOST_TO_DEVICE, stream), "aclrtMemcpyAsync")
    # aclmdlRICaptureThreadExchangeMode(&mode) with mode = RELAXED: the C call swaps in place
    mode, ret = acl.mdl.ri_capture_thread_exchange_mode(acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
    CHECK_ERROR(ret, "aclmdlRICaptureThreadExchangeMode")
    # a synchronous copy is unsafe: allowed under RELAXED, runs at once and is not captured
    CHECK_ERROR(acl.rt.memcpy(other_device, size, acl.util.numpy_to_ptr(other_host_data), size,
                              acl.ACL_MEMCPY_HOST_TO_DEVICE), "aclrtMemcpy")
    # calling it again restores the previous mode
    mode, ret = acl.mdl.ri_capture_thread_exchange_mode(mode)
    CHECK_ERROR(ret, "aclmdlRICaptureThreadExchangeMode")
    # the operators are captured
    CHECK_ERROR(aclnn_add(self_device, other_device, alpha_value, out_tmp_device, n, stream),
                "aclnnAdd")
    CHECK_ERROR(aclnn_mul(out_tmp_device, other_device, out_device, n, stream), "aclnnMul")
    model_ri, ret = acl.mdl.ri_capture_end(stream)         # aclmdlRICaptureEnd(stream, &modelRI)
    CHECK_ERROR(ret, "aclmdlRICaptureEnd")
    CHECK_ERROR(acl.mdl.ri_debug_json_print(model_ri, json_path, 0), "aclmdlRIDebugJsonPrint")

    results = []
    for i in range(loop_count):
        INFO_LOG(f"execute model, loop count: {i + 1}.")
        CHECK_ERROR(acl.mdl.ri_execute_async(model_ri, stream), "aclmdlRIExecuteAsync")
        CHECK_ERROR(acl.rt.synchronize_stream(stream), "aclrtSynchronizeStream")
        CHECK_ERROR(acl.rt.memcpy(acl.util.numpy_to_ptr(out_host_data), size, out_device, size,
                                  acl.ACL_MEMCPY_DEVICE_TO_HOST), "aclrtMemcpy")
        print_array(out_host_data)
        results.append([float(v) for v in out_host_data])

    # release the resources
    CHECK_ERROR(acl.mdl.ri_destroy(model_ri), "aclmdlRIDestroy")
    # aclrtDestroyStreamForce: the facade's aclrtDestroyStream (the stream is idle here)
    CHECK_ERROR(acl.rt.destroy_stream(stream), "aclrtDestroyStreamForce")
    for p in (self_device, other_device, out_device, out_tmp_device):
        CHECK_ERROR(acl.rt.free(p), "aclrtFree")
    CHECK_ERROR(acl.rt.free_host(self_host), "aclrtFreeHost")
    CHECK_ERROR(acl.rt.destroy_context(context), "aclrtDestroyContext")
    # aclrtResetDeviceForce: one aclrtSetDevice was made, so aclrtResetDevice drains it
    CHECK_ERROR(acl.rt.reset_device(device_id), "aclrtResetDeviceForce")
    CHECK_ERROR(acl.finalize(), "aclFinalize")
    return results


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "./modelRI.json")
