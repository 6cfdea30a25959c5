"""Per-task APIs of captured models and ``aclmdlRIUpdate`` (``spec/aclgraph.md`` §7.1, §1.9, §6.2,
§1.14).

Tasks by stream (model streams only; sub-model streams 207000), task types (DEFAULT for the
prefetch NOPs), sequence ids, get-params, set-params (kernel, value write / wait) and disable,
which stage changes that ``aclmdlRIUpdate`` applies while releasing the model's SQ/CQ pairs; the
UPDATING / FAULT / READY state machine; classic (no SW-SQ) chips.
"""
from __future__ import annotations

import numpy as np
import pytest

import npusim
from npusim import acl
from npusim import errors as E
from npusim.device import sqe as S
from npusim.runtime import api_mdl
from npusim.runtime import model as M
from npusim.runtime.runtime import RT

from helpers.acl import args_with, write
from helpers.capture import (OK, begin, chip, end, join, join_back,  # noqa: F401 (fixtures)
                          make_sub_model, model, new_buf, new_stream, no_acl_graph, run,
                          stream_obj)
from helpers.taskgroup import (KL, device, grp_begin, grp_end, model_streams, tasks_of, types_of,
                            u32)

T = acl
UPDATE_FAILED = E.ACL_ERROR_RT_MODEL_UPDATE_FAILED
HAS_KERNEL_MODULE = hasattr(acl.rt, "binary_get_function")
needs_kernel_module = pytest.mark.skipif(
    not HAS_KERNEL_MODULE, reason="set-params of a kernel task needs function handles "
    "(npusim.acl.rt.binary_get_function, the Kernel module), not available in this tree")


def two_kernel_graph(s, x, y):
    """EasyOPf(x), EasyOPf(y) on ``s``: the model handle and its two task handles."""
    begin(s)
    KL(s, "EasyOPf", x)
    KL(s, "EasyOPf", y)
    mh = end(s)
    return mh, tasks_of(model_streams(mh)[0])


def write_value(s, addr: int, value: int, width: int = 4) -> None:
    """A VALUE_WRITE task (aclrtValueWrite): the facade has no such call yet, so the SQE is
    submitted on the stream as that call would."""
    assert stream_obj(s).submit(S.OP_MEM_WRITE_VALUE, 0, a0=addr, a1=value, a2=width) >= 0


def wait_value(s, addr: int, value: int, flag: int = S.WAIT_GEQ, width: int = 4) -> None:
    """A VALUE_WAIT task (aclrtValueWait), submitted the same way."""
    assert stream_obj(s).submit(S.OP_MEM_WAIT_VALUE, 0, a0=addr, a1=value, a2=width,
                                flag=flag) >= 0


# ---- aclmdlRIGetTasksByStream ----
def test_get_tasks_by_stream_checks(stream):
    x = new_buf()
    assert acl.mdl.ri_get_tasks_by_stream(None) == (None, E.ACL_ERROR_RT_PARAM_INVALID)
    assert acl.mdl.ri_get_tasks_by_stream(stream) == (None, E.ACL_ERROR_RT_PARAM_INVALID)
    gone = new_stream()
    assert acl.rt.destroy_stream(gone) == OK
    assert acl.mdl.ri_get_tasks_by_stream(gone) == (None, E.ACL_ERROR_RT_INVALID_HANDLE)
    mh, tasks = two_kernel_graph(stream, x, x)
    (cs,) = model_streams(mh)
    assert len(tasks) == 2 and len(set(tasks)) == 2
    assert tasks_of(cs) == tasks                           # the same handles every time
    # a stream still capturing is not a model stream
    begin(stream)
    assert acl.mdl.ri_get_tasks_by_stream(stream) == (None, E.ACL_ERROR_RT_PARAM_INVALID)
    end(stream)


def test_get_tasks_by_stream_chip(dev0, no_acl_graph):
    assert acl.mdl.ri_get_tasks_by_stream(None) == (None, E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT)
    assert acl.mdl.ri_task_get_type(None) == (None, E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT)


def test_sub_model_stream_and_tasks_are_207000(stream):
    x = new_buf()
    sub = make_sub_model()
    assert acl.mdl.ri_capture_to_model_ri_begin(stream, sub,
                                                acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) == OK
    KL(stream, "EasyOPf", x)
    h, ret = acl.mdl.ri_capture_end(stream)
    assert ret == OK
    sm = model(sub)
    cs = api_mdl.capture_stream_handle(sm.streams[0])
    assert acl.mdl.ri_get_tasks_by_stream(cs) == (None, E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT)
    # a task handle of a sub-model (as a root's walk of its streams would find it)
    from npusim.runtime.tasks import Task
    t = RT.handles.add("task", Task(sm.streams[0], 0))
    assert acl.mdl.ri_task_get_type(t) == (None, E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT)
    assert acl.mdl.ri_task_get_params(t) == (None, E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT)
    assert acl.mdl.ri_task_set_params(t, {"type": T.ACL_MODEL_RI_TASK_KERNEL}) == \
        E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert acl.mdl.ri_task_disable(t) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert acl.mdl.ri_update(sub) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT


# ---- aclmdlRITaskGetType / GetSeqId ----
def test_task_types(stream):
    side = new_stream()
    x = new_buf()
    begin(stream)
    grp_begin(stream)                                      # 8 NOPs
    KL(stream, "EasyOPf", x)
    grp_end(stream)
    join(stream, side)                                     # EVENT_RECORD on origin, WAIT on side
    KL(side, "EasyOPf", x)
    join_back(side, stream)
    write_value(stream, x, 5)
    wait_value(stream, x, 5)
    assert acl.rt.memset_async(x, 4, 0, 4, stream) == OK   # a task type with no ACL name
    mh = end(stream)                                       # + an EVENT_RESET per capture event
    side_cs, origin = model_streams(mh)          # newest first: the origin is last (§13.1)
    D, K = T.ACL_MODEL_RI_TASK_DEFAULT, T.ACL_MODEL_RI_TASK_KERNEL
    R, W, X = (T.ACL_MODEL_RI_TASK_EVENT_RECORD, T.ACL_MODEL_RI_TASK_EVENT_WAIT,
               T.ACL_MODEL_RI_TASK_EVENT_RESET)
    VW, VA = T.ACL_MODEL_RI_TASK_VALUE_WRITE, T.ACL_MODEL_RI_TASK_VALUE_WAIT
    assert types_of(origin) == [D] * 8 + [K, R, W, VW, VA, D, X, X]
    assert types_of(side_cs) == [W, K, R]
    assert (D, K, R, W, X, VW, VA) == (0, 1, 2, 3, 4, 5, 6)
    assert acl.mdl.ri_task_get_type(None) == (None, E.ACL_ERROR_RT_PARAM_INVALID)
    assert acl.mdl.ri_task_get_type(new_stream()) == (None, E.ACL_ERROR_RT_INVALID_HANDLE)


def test_task_seq_ids_follow_capture_order(stream):
    x = new_buf()
    begin(stream)
    for _ in range(5):
        KL(stream, "EasyOPf", x)
    mh = end(stream)
    ids = [acl.mdl.ri_task_get_seq_id(t) for t in tasks_of(model_streams(mh)[0])]
    assert ids == [(i, OK) for i in range(5)]
    assert acl.mdl.ri_task_get_seq_id(None) == (None, E.ACL_ERROR_RT_PARAM_INVALID)


def test_task_handles_die_with_the_model(stream):
    x = new_buf()
    mh, (t0, t1) = two_kernel_graph(stream, x, x)
    assert acl.mdl.ri_destroy(mh) == OK
    assert acl.mdl.ri_task_get_type(t0) == (None, E.ACL_ERROR_RT_INVALID_HANDLE)
    assert acl.mdl.ri_task_set_params(t0, {"type": 1}) == E.ACL_ERROR_RT_INVALID_HANDLE


# ---- aclmdlRITaskGetParams ----
def test_get_params(stream):
    x = new_buf()
    begin(stream)
    grp_begin(stream)
    KL(stream, "EasyOPf", x, blocks=3)
    grp_end(stream)
    write_value(stream, x, 7, width=8)
    wait_value(stream, x, 7, flag=S.WAIT_EQ, width=8)
    mh = end(stream)
    tasks = tasks_of(model_streams(mh)[0])
    assert acl.mdl.ri_task_get_params(tasks[0]) == (None, E.ACL_ERROR_RT_PARAM_INVALID)  # NOP
    p, ret = acl.mdl.ri_task_get_params(tasks[8])
    assert ret == OK
    assert (p["type"], p["args_size"], p["num_blocks"]) == (T.ACL_MODEL_RI_TASK_KERNEL, 8, 3)
    assert u32(p["args"], 2).view(np.uint64)[0] == x       # the args area holds the pointer
    assert acl.mdl.ri_task_get_params(tasks[9]) == \
        ({"type": T.ACL_MODEL_RI_TASK_VALUE_WRITE, "dev_addr": x, "value": 7}, OK)
    assert acl.mdl.ri_task_get_params(tasks[10]) == \
        ({"type": T.ACL_MODEL_RI_TASK_VALUE_WAIT, "dev_addr": x, "value": 7,
          "flag": S.WAIT_EQ}, OK)
    assert acl.mdl.ri_task_get_params(None) == (None, E.ACL_ERROR_RT_PARAM_INVALID)


@needs_kernel_module
def test_get_params_names_the_function_handle(stream):
    lib, ret = acl.rt.binary_load_from_file(npusim.samples.binary_path())
    assert ret == OK
    easy, ret = acl.rt.binary_get_function(lib, "EasyOPf")
    assert ret == OK
    x = new_buf()
    args = args_with(x)
    begin(stream)
    assert acl.rt.launch_kernel(easy, 2, args, 8, stream) == OK
    mh = end(stream)
    (t,) = tasks_of(model_streams(mh)[0])
    assert acl.mdl.ri_task_get_params(t) == ({"type": T.ACL_MODEL_RI_TASK_KERNEL, "func": easy,
                                              "args": args, "args_size": 8, "num_blocks": 2,
                                              "is_host_args": 0}, OK)


# ---- aclmdlRITaskSetParams: kernel ----
@needs_kernel_module
def test_set_params_kernel_takes_effect_after_update(stream):
    lib, ret = acl.rt.binary_load_from_file(npusim.samples.binary_path())
    assert ret == OK
    short, ret = acl.rt.binary_get_function(lib, "ShortOPf")
    assert ret == OK
    x, y = new_buf(), new_buf()
    mh, (t0, t1) = two_kernel_graph(stream, x, x)
    run(mh, stream)
    assert u32(x)[0] == 2
    p = {"type": T.ACL_MODEL_RI_TASK_KERNEL, "func": short, "args": args_with(y),
         "args_size": 8, "num_blocks": 2}
    h0 = RT.host_ns
    assert acl.mdl.ri_task_set_params(t1, p) == OK
    assert RT.host_ns - h0 == RT.profile.timing.host_task_update_ns
    assert model(mh).status == M.UPDATING
    # the task's parameters are the new ones at once (UpdateKernelParams rewrites the TaskInfo,
    # kernel_utils.cc:217-257; docs/fidelity.md row 299 — they read the old SQE before), the
    # SQE is rebuilt at aclmdlRIUpdate, and the model cannot run until then
    assert acl.mdl.ri_task_get_params(t1)[0]["num_blocks"] == 2
    assert acl.mdl.ri_execute_async(mh, stream) == E.ACL_ERROR_RT_MODEL_EXECUTE
    assert acl.mdl.ri_update(mh) == OK
    assert model(mh).status == M.READY
    assert acl.mdl.ri_task_get_params(t1)[0]["num_blocks"] == 2
    assert acl.mdl.ri_task_get_params(t1)[0]["func"] == short
    write(y, np.array([3, 5], np.uint32))
    run(mh, stream)
    assert u32(x)[0] == 3                                  # only task 0 touches x now
    assert list(u32(y, 2)) == [6, 10]                      # ShortOPf on 2 blocks


@needs_kernel_module
def test_set_params_kernel_with_bad_function_faults(stream):
    x = new_buf()
    mh, (t0, t1) = two_kernel_graph(stream, x, x)
    p = {"type": T.ACL_MODEL_RI_TASK_KERNEL, "func": new_stream(), "args": args_with(x),
         "args_size": 8, "num_blocks": 1}
    assert acl.mdl.ri_task_set_params(t0, p) == E.ACL_ERROR_RT_INVALID_HANDLE
    assert model(mh).status == M.FAULT


# ---- set params: value write / wait ----
def test_set_params_value_write_and_wait(stream):
    x, y, z = new_buf(), new_buf(), new_buf()
    begin(stream)
    write_value(stream, x, 5)
    wait_value(stream, x, 5)
    KL(stream, "EasyOPf", y)
    mh = end(stream)
    tw, ta, tk = tasks_of(model_streams(mh)[0])
    run(mh, stream)
    assert (u32(x)[0], u32(y)[0]) == (5, 1)
    assert acl.mdl.ri_task_set_params(tw, {"type": T.ACL_MODEL_RI_TASK_VALUE_WRITE,
                                           "dev_addr": z, "value": 9}) == OK
    assert acl.mdl.ri_task_set_params(ta, {"type": T.ACL_MODEL_RI_TASK_VALUE_WAIT,
                                           "dev_addr": z, "value": 9,
                                           "flag": S.WAIT_EQ}) == OK
    assert acl.mdl.ri_task_get_params(tw)[0]["dev_addr"] == z    # the TaskInfo (row 299)
    assert acl.mdl.ri_update(mh) == OK
    assert acl.mdl.ri_task_get_params(tw) == \
        ({"type": T.ACL_MODEL_RI_TASK_VALUE_WRITE, "dev_addr": z, "value": 9}, OK)
    assert acl.mdl.ri_task_get_params(ta)[0]["flag"] == S.WAIT_EQ
    assert acl.rt.memset(x, 4, 0, 4) == OK
    run(mh, stream)
    assert (u32(x)[0], u32(z)[0], u32(y)[0]) == (0, 9, 2)


@pytest.mark.parametrize("ty", [T.ACL_MODEL_RI_TASK_EVENT_RECORD, T.ACL_MODEL_RI_TASK_EVENT_WAIT,
                                T.ACL_MODEL_RI_TASK_EVENT_RESET, T.ACL_MODEL_RI_TASK_DEFAULT, 99])
def test_set_params_unsupported_type_is_107000_and_faults(stream, ty):
    """EVENT_* and unknown types are refused (``ApiImpl::TaskSetParams``, api_impl.cc:9645-9666).
    A VALUE_WRITE on a kernel task converts it (``UpdateWriteValueTaskParams``): see
    tests/graph/test_source_audit.py."""
    x = new_buf()
    mh, (t0, t1) = two_kernel_graph(stream, x, x)
    assert acl.mdl.ri_task_set_params(t0, {"type": ty, "dev_addr": x, "value": 1}) == \
        E.ACL_ERROR_RT_PARAM_INVALID
    assert model(mh).status == M.FAULT


# ---- aclmdlRITaskDisable ----
def test_disable_task_does_not_run_after_update(stream):
    x, y = new_buf(), new_buf()
    mh, (t0, t1) = two_kernel_graph(stream, x, y)
    h0 = RT.host_ns
    assert acl.mdl.ri_task_disable(t1) == OK
    assert RT.host_ns - h0 == RT.profile.timing.host_task_update_ns
    assert model(mh).status == M.UPDATING
    assert acl.mdl.ri_update(mh) == OK
    run(mh, stream, times=3)
    assert (u32(x)[0], u32(y)[0]) == (3, 0)


def test_disable_before_update_still_runs(stream):
    """Disable only stages; aclmdlRIUpdate is what removes the task (§7.1)."""
    x, y = new_buf(), new_buf()
    mh, (t0, t1) = two_kernel_graph(stream, x, y)
    run(mh, stream)
    assert acl.mdl.ri_task_disable(t1) == OK
    # (the SW-SQ EndGraph NOTIFY_RECORD appended at the first launch is a DEFAULT task)
    assert types_of(model_streams(mh)[0]) == [T.ACL_MODEL_RI_TASK_KERNEL] * 2 + \
        [T.ACL_MODEL_RI_TASK_DEFAULT]
    assert acl.mdl.ri_update(mh) == OK
    run(mh, stream)
    assert (u32(x)[0], u32(y)[0]) == (2, 1)


def test_disable_default_task_is_107000_and_faults(stream):
    x = new_buf()
    begin(stream)
    grp_begin(stream)
    KL(stream, "EasyOPf", x)
    grp_end(stream)
    mh = end(stream)
    nop = tasks_of(model_streams(mh)[0])[0]
    assert acl.mdl.ri_task_disable(nop) == E.ACL_ERROR_RT_PARAM_INVALID
    assert model(mh).status == M.FAULT
    assert acl.mdl.ri_task_disable(None) == E.ACL_ERROR_RT_PARAM_INVALID


# ---- state machine (§6.2) ----
def test_states_ready_updating_ready(stream):
    x, y = new_buf(), new_buf()
    mh, (t0, t1) = two_kernel_graph(stream, x, y)
    m = model(mh)
    assert m.status == M.READY
    assert acl.mdl.ri_update(mh) == OK                     # READY: a no-op
    assert m.status == M.READY
    assert acl.mdl.ri_task_disable(t0) == OK
    assert acl.mdl.ri_task_disable(t1) == OK               # UPDATING -> UPDATING
    assert m.status == M.UPDATING
    assert acl.mdl.ri_execute_async(mh, stream) == E.ACL_ERROR_RT_MODEL_EXECUTE
    assert acl.mdl.ri_update(mh) == OK
    assert m.status == M.READY
    run(mh, stream)
    assert (u32(x)[0], u32(y)[0]) == (0, 0)


def test_fault_is_terminal_until_destroy(stream):
    x = new_buf()
    mh, (t0, t1) = two_kernel_graph(stream, x, x)
    assert acl.mdl.ri_task_set_params(t0, {"type": T.ACL_MODEL_RI_TASK_EVENT_RECORD}) == \
        E.ACL_ERROR_RT_PARAM_INVALID
    m = model(mh)
    assert m.status == M.FAULT
    assert acl.mdl.ri_execute_async(mh, stream) == E.ACL_ERROR_RT_MODEL_EXECUTE
    assert acl.mdl.ri_update(mh) == UPDATE_FAILED
    assert acl.mdl.ri_task_disable(t1) == UPDATE_FAILED    # !CanUpdate
    assert acl.mdl.ri_task_set_params(t1, {"type": 1}) == UPDATE_FAILED
    assert m.status == M.FAULT
    assert acl.mdl.ri_destroy(mh) == OK


def test_set_params_on_running_model_is_107040(stream):
    x, busy = new_buf(), new_buf()
    begin(stream)
    KL(stream, "LongOPf", busy)
    KL(stream, "EasyOPf", x)
    mh = end(stream)
    t0, t1 = tasks_of(model_streams(mh)[0])
    assert acl.mdl.ri_execute_async(mh, stream) == OK
    assert acl.mdl.ri_task_disable(t1) == UPDATE_FAILED
    assert acl.mdl.ri_task_set_params(t1, {"type": 99}) == UPDATE_FAILED
    assert model(mh).status == M.READY                     # refused before UPDATING
    assert acl.rt.synchronize_stream(stream) == OK
    assert acl.mdl.ri_task_disable(t1) == OK               # finished: allowed
    assert acl.mdl.ri_update(mh) == OK


def test_update_releases_sq_cq_and_the_next_launch_rebuilds(stream):
    side = new_stream()
    x = new_buf()
    begin(stream)
    join(stream, side)
    KL(side, "EasyOPf", x)
    join_back(side, stream)
    KL(stream, "EasyOPf", x)
    mh = end(stream)
    m = model(mh)
    dev = device()
    base = dev.sqcq_used
    run(mh, stream)
    assert m.built and dev.sqcq_used == base + 2           # one SQ/CQ pair per model stream
    origin = model_streams(mh)[0]
    (t,) = [t for t, ty in zip(tasks_of(origin), types_of(origin))
            if ty == T.ACL_MODEL_RI_TASK_KERNEL]
    assert acl.mdl.ri_task_disable(t) == OK
    assert dev.sqcq_used == base + 2                       # staging keeps them
    h0 = RT.host_ns
    assert acl.mdl.ri_update(mh) == OK
    assert RT.host_ns - h0 == RT.profile.timing.host_model_update_ns
    assert not m.built and dev.sqcq_used == base           # released to the device pool
    h0 = RT.host_ns
    run(mh, stream)
    assert m.built and dev.sqcq_used == base + 2           # rebuilt at the next launch
    assert u32(x)[0] == 2 + 1                              # the origin's kernel is disabled
    assert acl.mdl.ri_update(mh) == OK                     # READY: no release
    assert m.built


def test_update_checks(stream):
    assert acl.mdl.ri_update(None) == E.ACL_ERROR_RT_PARAM_INVALID
    assert acl.mdl.ri_update(stream) == E.ACL_ERROR_RT_INVALID_HANDLE


# ---- classic profile (no SW-SQ): 207000 ----
def test_classic_profile_is_207000(chip):
    chip("Ascend310P")
    s = new_stream()
    x = new_buf()
    mh, tasks = two_kernel_graph(s, x, x)
    t0 = tasks[0]
    # classic models get their EndGraph (a NOTIFY_RECORD, DEFAULT) at EndCapture
    assert types_of(model_streams(mh)[0]) == [T.ACL_MODEL_RI_TASK_KERNEL] * 2 + \
        [T.ACL_MODEL_RI_TASK_DEFAULT]
    assert acl.mdl.ri_task_set_params(t0, {"type": 99}) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert acl.mdl.ri_task_disable(t0) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert acl.mdl.ri_update(mh) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert model(mh).status == M.READY
    run(mh, s)
    assert u32(x)[0] == 2


# ---- aclmdlRIKernelTaskGetAttribute (kernel_utils.cc GetKernelAttribute) ----
def _kernel_and_nop_tasks():
    import npusim as ns
    from npusim import acl
    dev = ns.Device()
    s = dev.stream()
    x = dev.malloc(64).fill(0)
    with ns.graph(stream=s) as g:
        ns.graph_task_group_begin(s)                  # captures prefetch NOPs first
        s.launch("EasyOPf", 1, (x,))
        ns.graph_task_group_end(s)
    streams = acl.mdl.ri_get_streams(g.handle)[0]
    tasks = acl.mdl.ri_get_tasks_by_stream(streams[0])[0]
    return tasks[-1], tasks[0]


def test_kernel_task_attributes_read_back_the_unconfigured_values():
    from npusim import acl
    from npusim.runtime.tasks import DEFAULT_OP_TIMEOUT_US
    kernel, _ = _kernel_and_nop_tasks()
    assert acl.mdl.ri_kernel_task_get_attribute(kernel, 1) == (0, 0)          # SCHEM_MODE
    assert acl.mdl.ri_kernel_task_get_attribute(kernel, 2) == (0, 0)          # DYN_UBUF_SIZE
    assert acl.mdl.ri_kernel_task_get_attribute(kernel, 6) == (0, 0)          # DATA_DUMP
    assert acl.mdl.ri_kernel_task_get_attribute(kernel, 7) == (1090, 0)       # TIMEOUT (s)
    assert acl.mdl.ri_kernel_task_get_attribute(kernel, 8) == (DEFAULT_OP_TIMEOUT_US, 0)


def test_kernel_task_attributes_that_cannot_be_read_are_107000():
    from npusim import acl
    kernel, _ = _kernel_and_nop_tasks()
    for attr in (3, 4, 5, 99):
        assert acl.mdl.ri_kernel_task_get_attribute(kernel, attr)[1] == 107000


def test_kernel_task_attribute_of_a_non_kernel_task_is_107000():
    from npusim import acl
    _, nop = _kernel_and_nop_tasks()
    assert acl.mdl.ri_kernel_task_get_attribute(nop, 1) == (None, 107000)
