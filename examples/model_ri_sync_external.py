"""Port of the runtime sample ``example/2_advanced_features/model_ri/4_model_sync_external``
(main.cpp) to ``npusim.acl``: external events order a graph against a stream and against another
graph (``aclrtRecordEventWithFlag(..., ACL_EVENT_RECORD_EXTERNAL)``,
``aclrtStreamWaitEventWithFlag(..., ACL_EVENT_WAIT_EXTERNAL)``; ``spec/aclgraph.md`` §9.4).

- Scenario 1: a stream records the event, the graph waits on it externally, then copies.
- Scenario 2: the graph copies and records externally; a stream waits, then copies back.
- Scenario 3: graph 1 copies and records externally, graph 2 waits externally and copies on.

Each checks that 1..8 arrive and prints the sample's log lines. Each C call is named in a comment
next to its Python counterpart. Run: ``python examples/model_ri_sync_external.py``.
"""
from __future__ import annotations

import sys

import numpy as np

from npusim import acl

N = 8
SIZE = N * 4


def INFO_LOG(msg: str) -> None:
    print(f"[INFO]  {msg}")


def ERROR_LOG(msg: str) -> None:
    print(f"[ERROR]  {msg}")


def CHECK_ERROR(result, call: str):
    """utils.h CHECK_ERROR: the outputs of a facade call; any non-zero code ends the program."""
    *outs, ret = result if isinstance(result, tuple) else (result,)
    if ret != acl.ACL_SUCCESS:
        ERROR_LOG(f"Operation failed: {call} returned error code {ret}")
        raise SystemExit(1)
    return outs[0] if len(outs) == 1 else None


def check_result(actual: np.ndarray, expected: np.ndarray) -> bool:
    for i, (a, e) in enumerate(zip(actual, expected)):
        if a != e:
            ERROR_LOG(f"Check result failed at index {i}: actual={a}, expected={e}")
            return False
    INFO_LOG("Check result success.")
    return True


def h2d(dst: int, host: np.ndarray) -> None:
    CHECK_ERROR(acl.rt.memcpy(dst, SIZE, acl.util.numpy_to_ptr(host), SIZE,
                              acl.ACL_MEMCPY_HOST_TO_DEVICE), "aclrtMemcpy")


def d2h(host: np.ndarray, src: int) -> None:
    CHECK_ERROR(acl.rt.memcpy(acl.util.numpy_to_ptr(host), SIZE, src, SIZE,
                              acl.ACL_MEMCPY_DEVICE_TO_HOST), "aclrtMemcpy")


def d2d_async(dst: int, src: int, stream: int) -> None:
    CHECK_ERROR(acl.rt.memcpy_async(dst, SIZE, src, SIZE, acl.ACL_MEMCPY_DEVICE_TO_DEVICE, stream),
                "aclrtMemcpyAsync")


def malloc() -> int:
    return CHECK_ERROR(acl.rt.malloc(SIZE, acl.ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc")


def release(models, event, ptrs, streams) -> None:
    """The scenario's teardown, in the C order: models, event, memory, streams."""
    for m in models:
        CHECK_ERROR(acl.mdl.ri_destroy(m), "aclmdlRIDestroy")
    CHECK_ERROR(acl.rt.destroy_event(event), "aclrtDestroyEvent")
    for p in ptrs:
        CHECK_ERROR(acl.rt.free(p), "aclrtFree")
    for s in streams:
        CHECK_ERROR(acl.rt.destroy_stream(s), "aclrtDestroyStream")


def scenario1() -> np.ndarray:
    INFO_LOG("=== Scenario 1: Stream Record + Graph Wait External ===")
    host_src = np.arange(1, N + 1, dtype=np.int32)
    host_dst = np.zeros(N, np.int32)
    graph_stream = CHECK_ERROR(acl.rt.create_stream(), "aclrtCreateStream")
    external_stream = CHECK_ERROR(acl.rt.create_stream(), "aclrtCreateStream")
    event = CHECK_ERROR(acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC),
                        "aclrtCreateEventExWithFlag")
    src, dst = malloc(), malloc()
    CHECK_ERROR(acl.mdl.ri_capture_begin(graph_stream, acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED),
                "aclmdlRICaptureBegin")
    CHECK_ERROR(acl.rt.stream_wait_event_with_flag(graph_stream, event, 0,
                                                   acl.ACL_EVENT_WAIT_EXTERNAL),
                "aclrtStreamWaitEventWithFlag")
    d2d_async(dst, src, graph_stream)
    model = CHECK_ERROR(acl.mdl.ri_capture_end(graph_stream), "aclmdlRICaptureEnd")
    h2d(src, host_src)
    CHECK_ERROR(acl.rt.record_event(event, external_stream), "aclrtRecordEvent")
    CHECK_ERROR(acl.mdl.ri_execute_async(model, graph_stream), "aclmdlRIExecuteAsync")
    CHECK_ERROR(acl.rt.synchronize_stream(graph_stream), "aclrtSynchronizeStream")
    d2h(host_dst, dst)
    if not check_result(host_dst, host_src):
        raise SystemExit(1)
    release([model], event, (src, dst), (graph_stream, external_stream))
    return host_dst


def scenario2() -> np.ndarray:
    INFO_LOG("=== Scenario 2: Graph Record External + Stream Wait ===")
    host_src = np.arange(1, N + 1, dtype=np.int32)
    host_dst = np.zeros(N, np.int32)
    graph_stream = CHECK_ERROR(acl.rt.create_stream(), "aclrtCreateStream")
    external_stream = CHECK_ERROR(acl.rt.create_stream(), "aclrtCreateStream")
    event = CHECK_ERROR(acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC),
                        "aclrtCreateEventExWithFlag")
    src, dst = malloc(), malloc()
    h2d(src, host_src)
    CHECK_ERROR(acl.mdl.ri_capture_begin(graph_stream, acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED),
                "aclmdlRICaptureBegin")
    d2d_async(dst, src, graph_stream)
    CHECK_ERROR(acl.rt.record_event_with_flag(event, graph_stream, acl.ACL_EVENT_RECORD_EXTERNAL),
                "aclrtRecordEventWithFlag")
    model = CHECK_ERROR(acl.mdl.ri_capture_end(graph_stream), "aclmdlRICaptureEnd")
    CHECK_ERROR(acl.mdl.ri_execute_async(model, graph_stream), "aclmdlRIExecuteAsync")
    CHECK_ERROR(acl.rt.stream_wait_event(external_stream, event), "aclrtStreamWaitEvent")
    # aclrtMemcpyAsync(hostDst.data(), ..., DEVICE_TO_HOST, externalStream): pageable host memory
    CHECK_ERROR(acl.rt.memcpy_async(acl.util.numpy_to_ptr(host_dst), SIZE, dst, SIZE,
                                    acl.ACL_MEMCPY_DEVICE_TO_HOST, external_stream),
                "aclrtMemcpyAsync")
    CHECK_ERROR(acl.rt.synchronize_stream(external_stream), "aclrtSynchronizeStream")
    if not check_result(host_dst, host_src):
        raise SystemExit(1)
    release([model], event, (src, dst), (graph_stream, external_stream))
    return host_dst


def scenario3() -> np.ndarray:
    INFO_LOG("=== Scenario 3: Graph1 Record External + Graph2 Wait External ===")
    host_src = np.arange(1, N + 1, dtype=np.int32)
    host_dst = np.zeros(N, np.int32)
    stream1 = CHECK_ERROR(acl.rt.create_stream(), "aclrtCreateStream")
    stream2 = CHECK_ERROR(acl.rt.create_stream(), "aclrtCreateStream")
    event = CHECK_ERROR(acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC),
                        "aclrtCreateEventExWithFlag")
    src, mid, dst = malloc(), malloc(), malloc()
    h2d(src, host_src)
    CHECK_ERROR(acl.mdl.ri_capture_begin(stream1, acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED),
                "aclmdlRICaptureBegin")
    d2d_async(mid, src, stream1)
    CHECK_ERROR(acl.rt.record_event_with_flag(event, stream1, acl.ACL_EVENT_RECORD_EXTERNAL),
                "aclrtRecordEventWithFlag")
    model1 = CHECK_ERROR(acl.mdl.ri_capture_end(stream1), "aclmdlRICaptureEnd")
    CHECK_ERROR(acl.mdl.ri_capture_begin(stream2, acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED),
                "aclmdlRICaptureBegin")
    CHECK_ERROR(acl.rt.stream_wait_event_with_flag(stream2, event, 0, acl.ACL_EVENT_WAIT_EXTERNAL),
                "aclrtStreamWaitEventWithFlag")
    d2d_async(dst, mid, stream2)
    model2 = CHECK_ERROR(acl.mdl.ri_capture_end(stream2), "aclmdlRICaptureEnd")
    CHECK_ERROR(acl.mdl.ri_execute_async(model1, stream1), "aclmdlRIExecuteAsync")
    CHECK_ERROR(acl.mdl.ri_execute_async(model2, stream2), "aclmdlRIExecuteAsync")
    CHECK_ERROR(acl.rt.synchronize_stream(stream2), "aclrtSynchronizeStream")
    d2h(host_dst, dst)
    if not check_result(host_dst, host_src):
        raise SystemExit(1)
    release([model1, model2], event, (src, mid, dst), (stream1, stream2))
    return host_dst


def main() -> list[np.ndarray]:
    CHECK_ERROR(acl.init(), "aclInit")
    CHECK_ERROR(acl.rt.set_device(0), "aclrtSetDevice")
    context = CHECK_ERROR(acl.rt.create_context(0), "aclrtCreateContext")
    out = [scenario1(), scenario2(), scenario3()]
    CHECK_ERROR(acl.rt.destroy_context(context), "aclrtDestroyContext")
    CHECK_ERROR(acl.rt.reset_device(0), "aclrtResetDeviceForce")
    CHECK_ERROR(acl.finalize(), "aclFinalize")
    return out


if __name__ == "__main__":
    main()
    sys.exit(0)
