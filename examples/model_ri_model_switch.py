"""Port of the runtime sample ``example/2_advanced_features/model_ri/2_model_switch`` (main.cpp)
to ``npusim.acl``: build a model from five persistent streams (``aclmdlRIBuildBegin``,
``aclmdlRIBindStream``), with a conditional stream switch and stream activations inside it
(``aclrtSwitchStream``, ``aclrtActiveStream``), and execute it twice with a different switch value.

The model (``spec/aclgraph.md`` §1.13; chapter 06 for the switch):

* stream1 (HEAD): out1 = self1 + other1 * 1.2, then numDevice <- targetValDev (a device copy),
  then ``SwitchStream(numDevice == 1 -> stream3)`` and ``SwitchStream(numDevice == 2 -> stream4)``;
  a taken switch stops stream1, so only one of them fires;
* stream2: out2 = self2 + other2 * 1.2, then activates endStream;
* stream3: out3 = self3 + other3 * 1.2, then activates endStream;
* stream4: activates stream2;
* endStream: the model's EndGraph (aclmdlRIEndTask).

Execution 1 (numDevice = 1) runs stream1 -> stream3 -> endStream; execution 2 (= 2) runs
stream1 -> stream4 -> stream2 -> endStream, and out3 keeps what execution 1 wrote. The sample's
output (README "Sample Output")::

    [INFO]  After executing, print data1.
    [INFO]  The vector data is: 3.4000  3.4000  3.4000  3.4000  3.4000  3.4000  3.4000  3.4000
    [INFO]  After executing, print data2.
    [INFO]  The vector data is: 0.0000  0.0000  0.0000  0.0000  0.0000  0.0000  0.0000  0.0000
    [INFO]  After executing, print data3.
    [INFO]  The vector data is: 5.4000  5.4000  5.4000  5.4000  5.4000  5.4000  5.4000  5.4000
    ...
    [INFO]  After second execution, print data2.
    [INFO]  The vector data is: 4.4000  4.4000  4.4000  4.4000  4.4000  4.4000  4.4000  4.4000

``aclnnAdd`` (the operator library) runs the ``VectorAddKernel`` sample kernel (dst = A + alpha
* B, the same formula) through the Pythonic ``Stream.launch`` on the same stream handle. The host
vectors are numpy arrays (pageable memory, like the C ``std::vector``s): an asynchronous copy from
pageable memory is made at once, as the runtime does, so the inputs are on the device before the
model runs. Each C call is named in a comment next to its Python counterpart.

Run: ``python examples/model_ri_model_switch.py``.
"""
from __future__ import annotations

import numpy as np

import npusim
from npusim import acl


def INFO_LOG(msg: str) -> None:
    print(f"[INFO]  {msg}")


def CHECK_ERROR(result, call: str):
    """utils.h CHECK_ERROR: the outputs of a facade call; any non-zero code ends the program."""
    *outs, ret = result if isinstance(result, tuple) else (result,)
    if ret != acl.ACL_SUCCESS:
        print(f"[ERROR]  Operation failed: {call} returned error code {ret}")
        raise SystemExit(1)
    return outs[0] if len(outs) == 1 else None


def print_array(data) -> None:
    """ModelUtils::PrintArray: fixed, 4 decimals, two spaces after every value."""
    INFO_LOG("The vector data is: " + "".join(f"{v:.4f}  " for v in data))


# The Device object is made without aclrtSetDevice, so the sample's device reference count and
# current context stay as in C.
_DEVICE = object.__new__(npusim.Device)


def aclnn_add(self_d: int, other_d: int, alpha: float, out_d: int, n: int, stream: int) -> int:
    """aclnnAdd(workspace, workspaceSize, addExecutor, stream): out = self + other * alpha."""
    try:
        npusim.Stream(_DEVICE, stream).launch("VectorAddKernel", 1,
                                              args=(self_d, other_d, out_d, np.float32(alpha), n))
    except npusim.AclError as e:
        return e.code
    return acl.ACL_SUCCESS


def main() -> list[list[list[float]]]:
    """Run the sample; returns [data1, data2, data3] after each execution."""
    device_id = 0
    n = 8                                                  # shape {4, 2}
    size = n * 4
    self_host = [np.full(n, v, np.float32) for v in (1, 2, 3)]
    other_host = [np.full(n, 2, np.float32) for _ in range(3)]
    out_host = [np.zeros(n, np.float32) for _ in range(3)]
    alpha = 1.2
    CHECK_ERROR(acl.init(), "aclInit")
    CHECK_ERROR(acl.rt.set_device(device_id), "aclrtSetDevice")
    context = CHECK_ERROR(acl.rt.create_context(device_id), "aclrtCreateContext")

    def malloc(nbytes: int) -> int:
        return CHECK_ERROR(acl.rt.malloc(nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc")

    def h2d(dst: int, value: np.ndarray) -> None:
        CHECK_ERROR(acl.rt.memcpy(dst, value.nbytes, acl.util.numpy_to_ptr(value), value.nbytes,
                                  acl.ACL_MEMCPY_HOST_TO_DEVICE), "aclrtMemcpy")

    # CreateAclTensor: the device memory behind each tensor
    self_dev = [malloc(size) for _ in range(3)]
    other_dev = [malloc(size) for _ in range(3)]
    out_dev = [malloc(size) for _ in range(3)]
    # the switch compares device values: numDevice with 1 and with 2 (ACL_RT_EQUAL, INT32)
    right1, right2 = malloc(4), malloc(4)
    h2d(right1, np.array([1], np.int32))
    h2d(right2, np.array([2], np.int32))
    num_device = malloc(4)
    h2d(num_device, np.array([0], np.uint32))
    target_val = malloc(4)                                 # targetValDev_1 = 1
    h2d(target_val, np.array([1], np.uint32))

    def persistent() -> int:                               # aclrtCreateStreamWithConfig
        return CHECK_ERROR(acl.rt.create_stream_with_config(0, acl.ACL_STREAM_PERSISTENT),
                           "aclrtCreateStreamWithConfig")
    stream1, stream2, stream3, stream4, end_stream = (persistent() for _ in range(5))
    copy_stream = CHECK_ERROR(acl.rt.create_stream(), "aclrtCreateStream")

    model_ri = CHECK_ERROR(acl.mdl.ri_build_begin(0), "aclmdlRIBuildBegin")
    CHECK_ERROR(acl.mdl.ri_bind_stream(model_ri, stream1, acl.ACL_MODEL_STREAM_FLAG_HEAD),
                "aclmdlRIBindStream")
    for s in (stream2, stream3, stream4, end_stream):
        CHECK_ERROR(acl.mdl.ri_bind_stream(model_ri, s, acl.ACL_MODEL_STREAM_FLAG_DEFAULT),
                    "aclmdlRIBindStream")
    streams = (stream1, stream2, stream3)
    for i in range(3):                                     # selfDevice1..3 on stream1..3
        CHECK_ERROR(acl.rt.memcpy_async(self_dev[i], size, acl.util.numpy_to_ptr(self_host[i]),
                                        size, acl.ACL_MEMCPY_HOST_TO_DEVICE, streams[i]),
                    "aclrtMemcpyAsync")
    for i in range(3):                                     # otherDevice1..3
        CHECK_ERROR(acl.rt.memcpy_async(other_dev[i], size, acl.util.numpy_to_ptr(other_host[i]),
                                        size, acl.ACL_MEMCPY_HOST_TO_DEVICE, streams[i]),
                    "aclrtMemcpyAsync")
    CHECK_ERROR(aclnn_add(self_dev[0], other_dev[0], alpha, out_dev[0], n, stream1), "aclnnAdd")
    CHECK_ERROR(acl.rt.memcpy_async(num_device, 4, target_val, 4, acl.ACL_MEMCPY_DEVICE_TO_DEVICE,
                                    stream1), "aclrtMemcpyAsync")
    # stream2: an operator, then activate endStream
    CHECK_ERROR(aclnn_add(self_dev[1], other_dev[1], alpha, out_dev[1], n, stream2), "aclnnAdd")
    CHECK_ERROR(acl.rt.active_stream(end_stream, stream2), "aclrtActiveStream")
    # stream3: an operator, then activate endStream
    CHECK_ERROR(aclnn_add(self_dev[2], other_dev[2], alpha, out_dev[2], n, stream3), "aclnnAdd")
    CHECK_ERROR(acl.rt.active_stream(end_stream, stream3), "aclrtActiveStream")
    # stream1: numDevice == 1 -> stream3, numDevice == 2 -> stream4
    CHECK_ERROR(acl.rt.switch_stream(num_device, acl.ACL_RT_EQUAL, right1, acl.ACL_RT_SWITCH_INT32,
                                     stream3, None, stream1), "aclrtSwitchStream")
    CHECK_ERROR(acl.rt.switch_stream(num_device, acl.ACL_RT_EQUAL, right2, acl.ACL_RT_SWITCH_INT32,
                                     stream4, None, stream1), "aclrtSwitchStream")
    # stream4 activates stream2 (both bound to the model)
    CHECK_ERROR(acl.rt.active_stream(stream2, stream4), "aclrtActiveStream")
    # one EndGraph per model: on endStream
    CHECK_ERROR(acl.mdl.ri_end_task(model_ri, end_stream), "aclmdlRIEndTask")
    CHECK_ERROR(acl.mdl.ri_build_end(model_ri, None), "aclmdlRIBuildEnd")
    execute_stream = CHECK_ERROR(acl.rt.create_stream(), "aclrtCreateStream")

    results = []
    for label, value in (("After executing", None), ("After second execution", 2)):
        if value is not None:             # targetValDev_1 <- 2 on copyStream, host results zeroed
            v2 = np.array([value], np.uint32)
            CHECK_ERROR(acl.rt.memcpy_async(target_val, 4, acl.util.numpy_to_ptr(v2), 4,
                                            acl.ACL_MEMCPY_HOST_TO_DEVICE, copy_stream),
                        "aclrtMemcpyAsync")
            CHECK_ERROR(acl.rt.synchronize_stream(copy_stream), "aclrtSynchronizeStream")
            for h in out_host:
                h[:] = 0
        CHECK_ERROR(acl.mdl.ri_execute_async(model_ri, execute_stream), "aclmdlRIExecuteAsync")
        CHECK_ERROR(acl.rt.synchronize_stream(execute_stream), "aclrtSynchronizeStream")
        for i in range(3):                                 # results back on copyStream
            CHECK_ERROR(acl.rt.memcpy_async(acl.util.numpy_to_ptr(out_host[i]), size, out_dev[i],
                                            size, acl.ACL_MEMCPY_DEVICE_TO_HOST, copy_stream),
                        "aclrtMemcpyAsync")
        CHECK_ERROR(acl.rt.synchronize_stream(copy_stream), "aclrtSynchronizeStream")
        for i in range(3):
            INFO_LOG(f"{label}, print data{i + 1}.")
            print_array(out_host[i])
        results.append([[float(v) for v in h] for h in out_host])

    for s in (stream1, stream2, stream3, stream4, end_stream):
        CHECK_ERROR(acl.mdl.ri_unbind_stream(model_ri, s), "aclmdlRIUnbindStream")
    CHECK_ERROR(acl.mdl.ri_destroy(model_ri), "aclmdlRIDestroy")
    for s in (copy_stream, execute_stream, stream1, stream2, stream3, stream4, end_stream):
        CHECK_ERROR(acl.rt.destroy_stream(s), "aclrtDestroyStream")
    for p in (num_device, target_val, right1, right2, *self_dev, *other_dev, *out_dev):
        CHECK_ERROR(acl.rt.free(p), "aclrtFree")
    CHECK_ERROR(acl.rt.destroy_context(context), "aclrtDestroyContext")
    # aclrtResetDeviceForce: one aclrtSetDevice was made, so aclrtResetDevice drains it
    CHECK_ERROR(acl.rt.reset_device(device_id), "aclrtResetDeviceForce")
    CHECK_ERROR(acl.finalize(), "aclFinalize")
    return results


if __name__ == "__main__":
    main()
