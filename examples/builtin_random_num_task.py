"""Port of the runtime sample ``example/2_advanced_features/built_in_task/1_random_num_task``
(main.cpp) to ``npusim.acl``: five random-number tasks (``aclrtRandomNumAsync``) on one stream,
each synchronized and its first five results printed — a float normal distribution, a bf16
truncated normal, an fp16 uniform, an int32 uniform and a dropout bitmask — from seed 0 and a
16-byte counter of zeros.

The values are npusim's generator's (Philox4x32-10 with the distribution rules of
``docs/fidelity.md`` row 167): the sample's README prints "..." for them, since they depend on the
device's generator. Each C call is named in a comment next to its Python counterpart.

Run: ``python examples/builtin_random_num_task.py`` (an Atlas A2 / A3 profile: the task does not
exist on Ascend 950 or 310P).
"""
from __future__ import annotations

import sys

import numpy as np

from npusim import acl

FLOAT16_ONE, FLOAT16_TWO = 0x3C00, 0x4000
BF16_ONE, BF16_TWO = 0x3F80, 0x4000


def CHECK_ERROR(ret: int, call: str) -> None:
    if ret != acl.ACL_SUCCESS:
        print(f"[ERROR]  {call} returned error code {ret}")
        raise SystemExit(1)


def para(value, size: int) -> dict:
    """An aclrtRandomParaInfo holding a value (isAddr = 0)."""
    return {"isAddr": 0, "valueOrAddr": value, "size": size}


def task_info(data_type, func, member, params, seed, num, counter, out) -> dict:
    """aclrtRandomNumTaskInfo taskInfo = {}; ... (the sample's *Async helpers)."""
    return {"dataType": data_type,
            "randomNumFuncParaInfo": {"funcType": func, "paramInfo": {member: params}},
            "randomParaAddr": 0, "randomCounterAddr": counter, "randomResultAddr": out,
            "randomSeed": para(seed, 8), "randomNum": para(num, 8)}


def c_hex(v: int) -> str:
    """printf("%#x"): no prefix for zero."""
    return f"{v:#x}" if v else "0"


def main() -> dict:
    results = {}
    CHECK_ERROR(acl.init(), "aclInit")                                   # aclInit(NULL)
    CHECK_ERROR(acl.rt.set_device(0), "aclrtSetDevice")
    stream, ret = acl.rt.create_stream()                                 # aclrtCreateStream
    CHECK_ERROR(ret, "aclrtCreateStream")
    seed, num = 0, 128
    size = num * 8                                  # enough for 128 results of any type
    dev_output, ret = acl.rt.malloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    CHECK_ERROR(ret, "aclrtMalloc")
    host_output = np.zeros(size, np.uint8)
    counter, ret = acl.rt.malloc(16, acl.ACL_MEM_MALLOC_HUGE_FIRST)      # kCounterSize = 16
    CHECK_ERROR(ret, "aclrtMalloc")
    CHECK_ERROR(acl.rt.memset(counter, 16, 0, 16), "aclrtMemset")

    def run(info, dtype, fmt, key):
        CHECK_ERROR(acl.rt.random_num_async(info, stream, None), "aclrtRandomNumAsync")
        CHECK_ERROR(acl.rt.synchronize_stream(stream), "aclrtSynchronizeStream")
        CHECK_ERROR(acl.rt.memcpy(acl.util.numpy_to_ptr(host_output), size, dev_output, size,
                                  acl.ACL_MEMCPY_DEVICE_TO_HOST), "aclrtMemcpy")
        data = host_output.view(dtype)[:5]
        results[key] = data.copy()
        for i, v in enumerate(data):
            print(f"Random result[{i}] = {fmt(v)}")

    print("Gen normal distribution random num, data type: float ")
    run(task_info(acl.ACL_FLOAT, acl.ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS, "normalDisInfo",
                  {"mean": para(3.0, 4), "stddev": para(2.0, 4)}, seed, num, counter,
                  dev_output), np.float32, lambda v: f"{v:f}", "normal_float")

    print("\nGen truncated normal distribution random num, data type: BF16 ")
    run(task_info(acl.ACL_BF16, acl.ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS,
                  "normalDisInfo", {"mean": para(BF16_ONE, 2), "stddev": para(BF16_TWO, 2)},
                  seed, num, counter, dev_output), np.uint16, c_hex, "truncated_bf16")

    print("\nGen uniform distribution random num, data type: FP16 ")
    run(task_info(acl.ACL_FLOAT16, acl.ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS,
                  "uniformDisInfo", {"min": para(FLOAT16_ONE, 2), "max": para(FLOAT16_TWO, 2)},
                  seed, num, counter, dev_output), np.uint16, c_hex, "uniform_fp16")

    print("\nGen uniform distribution random num, data type: INT32 ")
    run(task_info(acl.ACL_INT32, acl.ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, "uniformDisInfo",
                  {"min": para(1, 4), "max": para(100, 4)}, seed, num, counter, dev_output),
        np.int32, str, "uniform_int32")

    print("\nGen dropout bitmask, output data type: UINT8 ")
    run(task_info(acl.ACL_FLOAT, acl.ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK,
                  "dropoutBitmaskInfo", {"dropoutRation": para(0.4, 4)}, seed, num, counter,
                  dev_output), np.uint8, str, "dropout")

    acl.rt.free(dev_output)                                              # aclrtFree
    acl.rt.free(counter)
    acl.rt.destroy_stream(stream)                                        # aclrtDestroyStream
    acl.rt.reset_device(0)     # aclrtResetDeviceForce (not in npusim.acl: pyacl.py REFUSED)
    acl.finalize()                                                       # aclFinalize
    print("Sample Run Successfully.")
    return results


if __name__ == "__main__":
    main()
    sys.exit(0)
