"""aclrtTaskUpdateAsync (chapter 12) on random-number tasks of built and captured models: the
update reads its aclrtRandomNumTaskInfo from device memory when the exec stream reaches it
(an AI CPU task, then an SQE update), a launch not ordered after it sees the old task, the
fields it changes and the ones it keeps, aclrtGetThreadLastTaskId naming the task, every code of
the check order and the state after a failure (docs/fidelity.md rows 166-171)."""
from __future__ import annotations

import numpy as np
import pytest

from npusim import acl
from npusim import errors as E
from npusim.runtime import api_random as R

from helpers.acl import launch, read, write
from helpers.capture import begin, chip, end, new_stream, run  # noqa: F401 (fixture)

OK = acl.ACL_SUCCESS
UNIFORM = acl.ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS
PERSISTENT, HEAD = acl.ACL_STREAM_PERSISTENT, acl.ACL_MODEL_STREAM_FLAG_HEAD
P, RT_P = E.ACL_ERROR_INVALID_PARAM, E.ACL_ERROR_RT_PARAM_INVALID
N = 8


def ref(counter: int, seed: int, lo: int = 0, hi: int = 1000) -> list[int]:
    """uint32 uniform values of the generator (tests/acl/test_random_num.py checks it against
    an independent reference; here it tells which task configuration ran)."""
    w = np.zeros(4, np.uint64)
    out = []
    for b in range((N + 3) // 4):
        c = counter + b
        R.philox_block(np.array([(c >> (32 * j)) & 0xFFFFFFFF for j in range(4)], np.uint64),
                       np.uint64(seed & 0xFFFFFFFF), np.uint64(seed >> 32), w)
        out += [lo + int(x) % (hi - lo) for x in w]
    return out[:N]


def dmalloc(n: int = 64) -> int:
    p, ret = acl.rt.malloc(n, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == OK
    assert acl.rt.memset(p, n, 0, n) == OK
    return p


def counter_at(v: int) -> int:
    p = dmalloc(16)
    write(p, np.frombuffer(v.to_bytes(16, "little"), np.uint8))
    return p


def info(out, ctr, seed, lo=0, hi=1000, para_addr=0, seed_is_addr=0) -> dict:
    return {"dataType": acl.ACL_UINT32,
            "randomNumFuncParaInfo": {"funcType": UNIFORM, "paramInfo": {"uniformDisInfo": {
                "min": {"valueOrAddr": lo, "size": 4}, "max": {"valueOrAddr": hi, "size": 4}}}},
            "randomParaAddr": para_addr, "randomResultAddr": out, "randomCounterAddr": ctr,
            "randomSeed": {"isAddr": seed_is_addr, "valueOrAddr": seed, "size": 8},
            "randomNum": {"valueOrAddr": N, "size": 8}}


def on_device(task_info: dict) -> int:
    """The 104 bytes of the task info in device memory (what srcAddr names)."""
    raw = np.frombuffer(R.pack_task_info(task_info), np.uint8)
    p = dmalloc(128)
    write(p, raw)
    return p


def update(src: int, size: int = R.TASK_INFO_BYTES) -> dict:
    return {"id": acl.ACL_RT_UPDATE_RANDOM_TASK,
            "val": {"randomTaskAttr": {"srcAddr": src, "size": size}}}


def built(out, ctr, seed):
    """A built model: one HEAD persistent stream with a kernel then the random task; (model,
    its stream, the random task's id from aclrtGetThreadLastTaskId)."""
    m, ret = acl.mdl.ri_build_begin(0)
    assert ret == OK
    s = new_stream(PERSISTENT)
    assert acl.mdl.ri_bind_stream(m, s, HEAD) == OK
    assert launch(s, "EasyOPf", 1, (dmalloc(),)) == OK
    assert acl.rt.random_num_async(info(out, ctr, seed), s, None) == OK
    tid, ret = acl.rt.get_thread_last_task_id()
    assert ret == OK
    assert acl.mdl.ri_end_task(m, s) == OK
    assert acl.mdl.ri_build_end(m, None) == OK
    return m, s, tid


def test_the_last_task_id_names_the_task_in_the_built_model(dev0):
    _, _, tid = built(dmalloc(), counter_at(0), 1)
    assert tid == 1                                # its position after the kernel
    ex = new_stream()
    assert launch(ex, "EasyOPf", 1, (dmalloc(),)) == OK
    assert acl.rt.get_thread_last_task_id() == (0, OK)   # a later eager task is the last one


def test_an_update_takes_the_new_result_counter_and_seed_from_device_memory(dev0):
    a, b = dmalloc(), dmalloc()
    m, s, tid = built(a, counter_at(0), 1)
    ex = new_stream()
    run(m, ex)
    assert read(a, N).tolist() == ref(0, 1)
    src = on_device(info(b, counter_at(40), 2))
    assert acl.rt.task_update_async(s, tid, update(src), ex) == OK
    write(a, np.zeros(N, np.uint32))
    run(m, ex)
    assert read(b, N).tolist() == ref(40, 2)
    assert read(a, N).tolist() == [0] * N          # the old result is no longer written
    run(m, ex)                                     # the update stays
    assert read(b, N).tolist() == ref(40, 2)


def test_the_update_reads_its_source_when_the_exec_stream_reaches_it(dev0):
    a = dmalloc()
    m, s, tid = built(a, counter_at(0), 1)
    ex, other = new_stream(), new_stream()
    src = on_device(info(a, counter_at(8), 3))
    assert launch(ex, "EasyOPf", 1, (dmalloc(),), duration_ns=1_000_000) == OK   # holds ex
    assert acl.rt.task_update_async(s, tid, update(src), ex) == OK
    run(m, other)                                  # not ordered after the update: old task
    assert read(a, N).tolist() == ref(0, 1)
    write(src, np.frombuffer(R.pack_task_info(info(a, counter_at(12), 4)), np.uint8))
    assert acl.rt.synchronize_stream(ex) == OK     # the update runs now, reading seed 4
    run(m, ex)
    assert read(a, N).tolist() == ref(12, 4)


def test_the_update_keeps_the_task_s_value_kinds_and_parameter_block(dev0):
    a = dmalloc()
    m, s, tid = built(a, counter_at(0), 1)
    ex = new_stream()
    # the seed's isAddr of the update is not used: the task's seed is a value, so 12345 is it
    src = on_device(info(a, counter_at(0), 12345, lo=500, hi=600, seed_is_addr=1))
    assert acl.rt.task_update_async(s, tid, update(src), ex) == OK
    run(m, ex)
    assert read(a, N).tolist() == ref(0, 12345)    # min / max stay the task's (0, 1000)
    # a parameter block of the user's: its 16 bytes are the new firstParam / secondParam
    pb = dmalloc(16)
    write(pb, np.array([500, 0, 600, 0], np.uint32))
    src = on_device(info(a, counter_at(0), 7, para_addr=pb))
    assert acl.rt.task_update_async(s, tid, update(src), ex) == OK
    run(m, ex)
    assert read(a, N).tolist() == ref(0, 7, 500, 600)


def test_a_captured_random_task_is_updated_through_the_model_s_stream(dev0):
    s, ex = new_stream(), new_stream()
    a, b, ctr = dmalloc(), dmalloc(), counter_at(0)
    begin(s)
    assert acl.rt.random_num_async(info(a, ctr, 1), s, None) == OK
    m = end(s)
    streams, ret = acl.mdl.ri_get_streams(m)
    assert ret == OK
    src = on_device(info(b, counter_at(4), 9))
    assert acl.rt.task_update_async(streams[0], 0, update(src), ex) == OK
    run(m, ex)
    assert read(b, N).tolist() == ref(4, 9)
    assert read(a, N).tolist() == [0] * N


def test_every_code_in_the_check_order_and_the_task_is_unchanged(dev0):
    a = dmalloc()
    m, s, tid = built(a, counter_at(0), 1)
    ex, plain = new_stream(), new_stream()
    src = on_device(info(dmalloc(), counter_at(4), 9))
    up = update(src)
    bad_handle = 0x7FFF_FFF1
    # acl layer: NULL or malformed info (100000)
    assert acl.rt.task_update_async(bad_handle, tid, None, bad_handle) == P
    assert acl.rt.task_update_async(s, tid, {"id": 1, "val": {"other": {}}}, ex) == P
    assert acl.rt.task_update_async(s, tid, [1, 2], ex) == P
    # the id (107000), then for RANDOM: NULL task stream, its handle, the exec stream's
    assert acl.rt.task_update_async(bad_handle, tid, {"id": 3}, bad_handle) == RT_P
    assert acl.rt.task_update_async(None, tid, up, bad_handle) == RT_P
    assert acl.rt.task_update_async(bad_handle, tid, up, bad_handle) == \
        E.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.rt.task_update_async(s, tid, up, bad_handle) == E.ACL_ERROR_RT_INVALID_HANDLE
    # srcAddr NULL, size not 104
    assert acl.rt.task_update_async(s, tid, update(0), ex) == RT_P
    assert acl.rt.task_update_async(s, tid, update(src, 96), ex) == RT_P
    # the exec stream: bound to a model (107000), capturing (107027), another context (107003)
    assert acl.rt.task_update_async(s, tid, up, s) == RT_P
    cap = new_stream()
    begin(cap)
    assert acl.rt.task_update_async(s, tid, up, cap) == E.ACL_ERROR_RT_STREAM_CAPTURED
    end(cap)
    # the task stream in no model; no such task; not a random-number task (107000)
    assert acl.rt.task_update_async(plain, tid, up, ex) == RT_P
    assert acl.rt.task_update_async(s, 2, up, ex) == RT_P       # 2 is the EndGraph's position
    assert acl.rt.task_update_async(s, 7, up, ex) == RT_P
    assert acl.rt.task_update_async(s, 0, up, ex) == RT_P       # the kernel task
    mine, ret = acl.rt.get_current_context()
    assert ret == OK
    ctx, ret = acl.rt.create_context(0)
    assert ret == OK
    assert acl.rt.task_update_async(s, tid, up, ex) == E.ACL_ERROR_RT_STREAM_CONTEXT
    assert acl.rt.destroy_context(ctx) == OK
    assert acl.rt.set_current_context(mine) == OK
    # nothing was queued: the task still writes its own result
    st, ret = acl.rt.stream_query(ex)
    assert ret == OK and st == acl.ACL_STREAM_STATUS_COMPLETE
    run(m, ex)
    assert read(a, N).tolist() == ref(0, 1)


def test_an_exec_stream_in_task_update_mode_refuses_the_update_with_507009(dev0):
    a = dmalloc()
    m, s, tid = built(a, counter_at(0), 1)
    cs, ex, x = new_stream(), new_stream(), dmalloc()
    begin(cs)
    assert acl.mdl.ri_capture_task_grp_begin(cs) == OK
    assert launch(cs, "EasyOPf", 1, (x,)) == OK
    grp, ret = acl.mdl.ri_capture_task_grp_end(cs)
    assert ret == OK
    end(cs)
    assert acl.mdl.ri_capture_task_update_begin(ex, grp) == OK
    assert acl.rt.task_update_async(s, tid, update(on_device(info(a, counter_at(0), 2))), ex) == \
        E.ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT


def test_a_bad_source_address_is_a_fault_of_the_exec_stream(dev0):
    a = dmalloc()
    m, s, tid = built(a, counter_at(0), 1)
    ex = new_stream()
    assert acl.rt.task_update_async(s, tid, update(8), ex) == OK     # read when it runs
    assert acl.rt.synchronize_stream(ex) != OK


def test_aic_aiv_updates_check_their_arguments_then_are_refused(dev0):
    _, s, tid = built(dmalloc(), counter_at(0), 1)
    ex = new_stream()
    aic = {"id": acl.ACL_RT_UPDATE_AIC_AIV_TASK,
           "val": {"aicAivTaskAttr": {"binHandle": 0, "funcEntryAddr": dmalloc(),
                                      "blockDimAddr": dmalloc()}}}
    assert acl.rt.task_update_async(s, tid, aic, 0x7FFF_FFF1) == E.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.rt.task_update_async(s, tid, aic, ex) == RT_P
    aic["val"]["aicAivTaskAttr"]["binHandle"] = 0x1000
    assert acl.rt.task_update_async(s, tid, aic, ex) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert "not simulated" in acl.get_recent_err_msg()


@pytest.mark.parametrize("name", ["Ascend950", "Ascend310P"])
def test_chips_without_the_dsa_update_refuse_with_207000(chip, name):
    chip(name)
    s = new_stream()
    assert acl.rt.task_update_async(s, 0, update(dmalloc()), 0x7FFF_FFF1) == \
        E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT


def test_pythonic_random_task_in_a_built_model_and_its_update():
    import npusim as ns
    dev = ns.Device("Ascend910B")
    out, ctr = dev.malloc(64), dev.malloc(16)
    ctr.write(np.zeros(4, np.uint32))
    m = dev.build_model()
    s = m.bind(dev.stream(persistent=True), head=True)
    tid = s.random(out, N, ctr, "uniform", "uint32", seed=1, low=0, high=1000)
    m.end_task(s)
    m.build_end().execute()
    assert out.read(np.uint32, N).tolist() == ref(0, 1)
    src = dev.malloc(128).write(np.frombuffer(
        ns.random_task_info(out, N, ctr, "uniform", "uint32", seed=5), np.uint8))
    ex = dev.stream()
    m.update_random(s, tid, src, ex)
    m.launch(ex)
    ex.synchronize()
    assert out.read(np.uint32, N).tolist() == ref(0, 5)
    with pytest.raises(TypeError):
        ns.random_task_info(out, N, ctr, "normal", mean=0.0, ratio=0.5)
    with pytest.raises(ns.AclError):
        dev.stream().random(out, N, 0, "normal")               # NULL counter: 107000
