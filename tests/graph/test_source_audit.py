"""Classes of divergence between the facade and the runtime's source (issue 36 item 4), each
test naming the source lines it follows (hicann/runtime; docs/fidelity.md rows 89, 290-299):

1. NULL: a reserved / callback pointer passed 0 is NULL (row 290).
2. Model kinds: the error-checking layer's "ACL Graph only" checks answer a built model
   (aclmdlRIBuildBegin) and a stream bound to one with its own codes (rows 291-292).
3. Build mode on the STARS chips: aclmdlRIEndTask (row 89, 293).
4. Task parameters: the per-type update functions of aclmdlRITaskSetParams (row 294).
"""
from __future__ import annotations

import numpy as np
import pytest

import npusim
from npusim import acl
from npusim import errors as E
from npusim.runtime import model as M

from helpers.acl import args_with, launch, read, write
from helpers.capture import OK, begin, chip, end, model, new_buf, new_stream, run  # noqa: F401
from helpers.taskgroup import KL, model_streams, tasks_of, u32

PERSISTENT = acl.ACL_STREAM_PERSISTENT
HEAD = acl.ACL_MODEL_STREAM_FLAG_HEAD
P, FNS = E.ACL_ERROR_RT_PARAM_INVALID, E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
I = E.ACL_ERROR_RT_INTERNAL_ERROR
KERNEL, VW, VA = (acl.ACL_MODEL_RI_TASK_KERNEL, acl.ACL_MODEL_RI_TASK_VALUE_WRITE,
                  acl.ACL_MODEL_RI_TASK_VALUE_WAIT)


def built_model(x: int):
    """A built model: one HEAD persistent stream running EasyOPf on ``x``; (model, stream)."""
    m, ret = acl.mdl.ri_build_begin(0)
    assert ret == OK
    s = new_stream(PERSISTENT)
    assert acl.mdl.ri_bind_stream(m, s, HEAD) == OK
    assert launch(s, "EasyOPf", 1, (x,)) == OK
    assert acl.mdl.ri_end_task(m, s) == OK
    return m, s


# ---- 1. NULL pointers ----
@pytest.mark.parametrize("null", [0, None, False, np.int64(0), np.array(0)])
def test_build_end_takes_a_null_reserve_of_any_spelling(dev0, null):
    """``aclmdlRIBuildEndImpl`` (model_ri.cpp:242-243) refuses only ``reserve != nullptr``; the
    facade took ``0`` for a pointer and answered 100000 (row 290)."""
    m, _ = built_model(new_buf())
    assert acl.mdl.ri_build_end(m, null) == OK
    assert model(m).status == M.READY


def test_build_end_with_a_reserve_is_100000(dev0):
    m, _ = built_model(new_buf())
    assert acl.mdl.ri_build_end(m, 1) == E.ACL_ERROR_INVALID_PARAM
    assert acl.mdl.ri_build_end(m, object()) == E.ACL_ERROR_INVALID_PARAM


def test_reduce_async_takes_reserve_zero(stream):
    """``aclrtReduceAsync``: reserve must be NULL (``ApiErrorDecorator::ReduceAsync``); 0 is."""
    x, y = new_buf(), new_buf()
    assert acl.rt.reduce_async(x, y, 16, acl.ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM,
                               acl.ACL_FLOAT, stream, 0) == OK
    assert acl.rt.reduce_async(x, y, 16, acl.ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM,
                               acl.ACL_FLOAT, stream, 8) == E.ACL_ERROR_INVALID_PARAM


def test_set_memcpy_desc_takes_config_zero(dev0):
    """``aclrtSetMemcpyDescImpl`` (memory.cpp): config is reserved, NULL; 0 is NULL."""
    size, ret = acl.rt.get_memcpy_desc_size(acl.ACL_MEMCPY_INNER_DEVICE_TO_DEVICE)
    assert ret == OK
    desc, x, y = new_buf(size), new_buf(), new_buf()
    kind = acl.ACL_MEMCPY_INNER_DEVICE_TO_DEVICE
    assert acl.rt.set_memcpy_desc(desc, kind, x, y, 8, 0) == OK
    assert acl.rt.set_memcpy_desc(desc, kind, x, y, 8, 64) == E.ACL_ERROR_INVALID_PARAM


def test_a_zero_callback_is_null(dev0):
    """Callback pointers: 0 is NULL — it unregisters the exception callback (callback.cpp:
    aclrtSetExceptionInfoCallbackImpl passes it to rtRegTaskFailCallbackByModule), and a NULL
    function is refused where the decorators check it (api_error.cc:4711-4716, 7516-7520,
    ModelDestroyRegisterCallback)."""
    assert acl.rt.set_exception_info_callback(lambda info: None) == OK
    assert acl.rt.set_exception_info_callback(0) == OK
    from npusim.runtime.runtime import RT
    assert RT.task_fail_callback is None
    s = new_stream()
    assert acl.rt.launch_host_func(s, 0, None) == P
    assert acl.rt.launch_callback(0, None, acl.ACL_CALLBACK_BLOCK, s) == P
    m, ret = acl.mdl.ri_build_begin(0)
    assert acl.mdl.ri_destroy_register_callback(m, 0, None) == P
    assert acl.rt.reg_stream_state_callback("audit", 0, None) == OK      # 0: removes the name


# ---- 2. model kinds ----
def test_stream_add_to_model_of_a_built_model_is_107000(dev0):
    """``ApiErrorDecorator::StreamAddToModel`` (api_error_aclgraph.cc:145-147): a model that is
    not an ACL Graph -> RT_ERROR_INVALID_VALUE, before the stream's flags (507000) and before
    ``ApiImpl::StreamAddToModel``'s "already bound" (107005). npusim answered 507000 / 107005."""
    m, s = built_model(new_buf())
    assert acl.rt.stream_add_to_model(new_stream(), m) == P
    assert acl.rt.stream_add_to_model(s, m) == P                       # bound to it
    assert acl.rt.stream_add_to_model(new_stream(acl.ACL_STREAM_DEVICE_USE_ONLY), m) == P


def test_cond_handle_of_a_built_model_is_207000(dev0):
    """``ApiErrorDecorator::ModelCondHandleCreate`` (api_error_aclgraph.cc:197-202): the flag
    (107000), then a model that is not an ACL Graph -> RT_ERROR_FEATURE_NOT_SUPPORT (was
    107000)."""
    m, _ = built_model(new_buf())
    assert acl.mdl.ri_cond_handle_create(m, 0, 2) == (None, P)
    assert acl.mdl.ri_cond_handle_create(m, 0, 0) == (None, FNS)


def test_task_update_on_a_bound_stream_is_107005(dev0):
    """``ApiErrorDecorator::StreamBeginTaskUpdate / StreamEndTaskUpdate``
    (api_error_aclgraph.cc:93, 108): ``stm->IsModelStream()`` — ``model_ != nullptr``
    (stream.hpp:332), true for a stream bound to a built model — is RT_ERROR_STREAM_MODEL
    (the end answered 107033, "not updating")."""
    m, s = built_model(new_buf())
    assert acl.mdl.ri_capture_task_update_end(s) == E.ACL_ERROR_RT_STREAM_MODEL
    assert acl.mdl.ri_capture_task_update_begin(s, 0x1000) == E.ACL_ERROR_RT_STREAM_MODEL


def test_capture_end_on_a_bound_stream_is_107005(dev0):
    """``ApiImpl::StreamEndCapture`` (api_impl_aclgraph.cc:57-59): ``stm->Model_() != nullptr``
    -> RT_ERROR_STREAM_MODEL before the context's "not capturing" (it answered 107029), as
    ``StreamBeginCapture`` (:32-34) does for the begin."""
    m, s = built_model(new_buf())
    assert acl.mdl.ri_capture_end(s) == (None, E.ACL_ERROR_RT_STREAM_MODEL)
    assert acl.mdl.ri_capture_begin(s, 0) == E.ACL_ERROR_RT_STREAM_MODEL


def test_tasks_of_a_built_model(dev0):
    """Per-task APIs on a task of a built model: ``ApiImpl::TaskGetSeqId`` (api_impl.cc:
    9926-9928) and ``CheckCaptureModelForUpdate`` (capture_model_utils.cc:248-250, for
    aclmdlRITaskSetParams / aclmdlRITaskDisable) refuse a non-ACL-Graph model with
    RT_ERROR_FEATURE_NOT_SUPPORT (npusim gave a sequence id and 107040); get-type and
    get-params have no model-type check (``ApiImpl::TaskGetType``, ``TaskGetParams``)."""
    x = new_buf()
    m, s = built_model(x)
    assert acl.mdl.ri_build_end(m, None) == OK
    tasks, ret = acl.mdl.ri_get_tasks_by_stream(s)
    assert ret == OK
    k = tasks[0]
    assert acl.mdl.ri_task_get_type(k) == (KERNEL, OK)
    p, ret = acl.mdl.ri_task_get_params(k)
    assert ret == OK and p["type"] == KERNEL and p["num_blocks"] == 1
    assert acl.mdl.ri_task_get_seq_id(k) == (None, FNS)
    assert acl.mdl.ri_task_disable(k) == FNS
    assert acl.mdl.ri_task_set_params(k, {"type": VW, "dev_addr": x, "value": 1}) == FNS
    assert model(m).status == M.READY                  # refused before the model is touched
    assert acl.mdl.ri_execute(m, -1) == OK and read(x, 1)[0] == 1


# ---- 3. build mode on the STARS chips ----
def test_end_task_on_a_stream_not_bound_to_the_model_is_507000(dev0):
    """``Context::ModelAddEndGraph`` STARS path (context.cc:2108-2112; the 950's
    ``MdlAddEndGraph``, model_c.cc:684-690): RT_ERROR_STREAM_INVALID, 507000 (row 89 had
    107005 [inferred]) — for a stream bound to another model too."""
    m, _ = built_model(new_buf())
    other, _ = built_model(new_buf())
    assert acl.mdl.ri_end_task(m, new_stream(PERSISTENT)) == I
    assert acl.mdl.ri_end_task(m, model_streams_of(other)) == I


def model_streams_of(m) -> int:
    streams, ret = acl.mdl.ri_get_streams(m)
    assert ret == OK
    return streams[0]


def test_a_second_end_task_records_the_end_graph_again(dev0):
    """STARS: the notify path never calls ``IncEndGraphNum`` (only the HWTS task path does,
    context.cc:2154), so ``endGraphNum >= 1`` (context.cc:2102-2106) never refuses: each
    EndTask records the model's EndGraph notify on its stream (was 507000)."""
    x = new_buf()
    m, s = built_model(x)
    assert acl.mdl.ri_end_task(m, s) == OK
    tasks, _ = acl.mdl.ri_get_tasks_by_stream(s)
    assert len(tasks) == 3                          # the kernel and two EndGraph records
    assert acl.mdl.ri_build_end(m, None) == OK
    assert acl.mdl.ri_execute(m, -1) == OK and read(x, 1)[0] == 1


def test_end_task_on_310p_submits_nothing_after_the_first(chip):
    """310P (``RT_FEATURE_MODEL_EXECUTOR_WITH_QUEUE``, config/dc): the runtime submits no
    EndGraph and answers 0 (context.cc:2092-2101); npusim keeps one EndGraph, for the first
    EndTask on a bound stream, and answers 0 without a task otherwise (row 293)."""
    chip("Ascend310P")
    x = new_buf()
    m, s = built_model(x)
    assert acl.mdl.ri_end_task(m, s) == OK
    assert acl.mdl.ri_end_task(m, new_stream(PERSISTENT)) == OK
    assert len(acl.mdl.ri_get_tasks_by_stream(s)[0]) == 2
    assert acl.mdl.ri_build_end(m, None) == OK
    assert acl.mdl.ri_execute(m, -1) == OK and read(x, 1)[0] == 1


# ---- 4. task parameters ----
def write_value(s, addr: int, value: int) -> None:
    assert acl.rt.value_write(addr, value, 0, s) == OK


def test_value_write_params_convert_a_kernel_task(stream):
    """``UpdateWriteValueTaskParams`` (memory_task.cc:728-749) accepts any task whose type is
    not DEFAULT (``CheckUpdatingTaskParams``, memory_task.cc:710-726) and rebuilds it as a
    64-bit value write ("update or convert to ValueWriteTask"): a kernel task becomes one
    (npusim refused it with 107000 and FAULT)."""
    x, z = new_buf(), new_buf()
    begin(stream)
    KL(stream, "EasyOPf", x)
    mh = end(stream)
    (t,) = tasks_of(model_streams(mh)[0])
    assert acl.mdl.ri_task_set_params(t, {"type": VW, "dev_addr": z, "value": 2 ** 40 + 3}) == OK
    assert model(mh).status == M.UPDATING
    assert acl.mdl.ri_update(mh) == OK
    assert acl.mdl.ri_task_get_type(t) == (VW, OK)
    assert acl.mdl.ri_task_get_params(t) == ({"type": VW, "dev_addr": z, "value": 2 ** 40 + 3},
                                             OK)
    run(mh, stream)
    assert u32(x)[0] == 0                                  # the kernel is gone
    assert list(u32(z, 2)) == [3, 2 ** 8]                  # all 8 bytes written


def test_value_wait_params_convert_a_value_write_task(stream):
    """``UpdateWaitValueTaskParams`` (memory_task.cc:751-775): a value write becomes a wait;
    its flag is taken as given."""
    x, y = new_buf(), new_buf()
    begin(stream)
    write_value(stream, x, 5)
    KL(stream, "EasyOPf", y)
    mh = end(stream)
    tw, _ = tasks_of(model_streams(mh)[0])
    assert acl.mdl.ri_task_set_params(tw, {"type": VA, "dev_addr": x, "value": 0,
                                           "flag": acl.ACL_STREAM_WAIT_VALUE_EQ}) == OK
    assert acl.mdl.ri_update(mh) == OK
    p, ret = acl.mdl.ri_task_get_params(tw)
    assert ret == OK and p["type"] == VA and p["flag"] == acl.ACL_STREAM_WAIT_VALUE_EQ
    run(mh, stream)                                       # *x == 0: the wait passes
    assert (u32(x)[0], u32(y)[0]) == (0, 1)


@pytest.mark.parametrize("extra", [{"task_grp": 0x1000}, {"op_info_ptr": 0x1000},
                                   {"op_info_size": 8}])
def test_value_params_refuse_task_group_and_op_info(stream, extra):
    """``CheckUpdatingTaskParams`` (memory_task.cc:718-720): taskGrp, opInfoPtr, opInfoSize
    must be 0 -> 107000, the model FAULT."""
    x = new_buf()
    begin(stream)
    write_value(stream, x, 5)
    mh = end(stream)
    (tw,) = tasks_of(model_streams(mh)[0])
    assert acl.mdl.ri_task_set_params(tw, {"type": VW, "dev_addr": x, "value": 1,
                                           **extra}) == P
    assert model(mh).status == M.FAULT


def test_kernel_params_on_a_value_task_are_107000(stream):
    """``UpdateKernelParams`` (kernel_utils.cc:219-227): the task must be an AI Core / vector
    kernel task -> else RT_ERROR_INVALID_VALUE, the model FAULT."""
    x = new_buf()
    kp = acl.mdl.ri_task_get_params(tasks_of(model_streams(kernel_model(stream))[0])[0])[0]
    begin(stream)
    write_value(stream, x, 5)
    mh = end(stream)
    (tw,) = tasks_of(model_streams(mh)[0])
    assert acl.mdl.ri_task_set_params(tw, {**kp, "args": x, "args_size": 8}) == P
    assert model(mh).status == M.FAULT


def kernel_model(stream) -> int:
    x = new_buf()
    begin(stream)
    KL(stream, "EasyOPf", x)
    return end(stream)


def easy_opf_params(y: int) -> dict:
    """Kernel task parameters: EasyOPf of the sample binary on ``y``, one block."""
    lib, ret = acl.rt.binary_load_from_file(npusim.samples.binary_path())
    assert ret == OK
    f, ret = acl.rt.binary_get_function(lib, "EasyOPf")
    assert ret == OK
    return {"type": KERNEL, "func": f, "args": args_with(y), "args_size": 8, "num_blocks": 1}


@pytest.mark.parametrize("drop", ["func", "args", "args_size"])
def test_kernel_params_need_func_args_and_size(stream, drop):
    """``UpdateKernelParams`` (kernel_utils.cc:228-246): taskGrp NULL, then funcHandle, args not
    NULL, argsSize > 0 -> 107000; a field the dict leaves out is the C struct's 0 (npusim kept
    the task's own args / size)."""
    mh = kernel_model(stream)
    (t,) = tasks_of(model_streams(mh)[0])
    p = {k: v for k, v in easy_opf_params(new_buf()).items() if k != drop}
    assert acl.mdl.ri_task_set_params(t, p) == P
    assert model(mh).status == M.FAULT


def test_kernel_params_with_a_task_group_are_107000(stream):
    mh = kernel_model(stream)
    (t,) = tasks_of(model_streams(mh)[0])
    assert acl.mdl.ri_task_set_params(t, {**easy_opf_params(new_buf()), "task_grp": 0x1000}) == P
    assert model(mh).status == M.FAULT


def test_kernel_params_rebuild_the_task(stream):
    """All the fields given: accepted, and the model runs the new task after the update."""
    mh = kernel_model(stream)
    (t,) = tasks_of(model_streams(mh)[0])
    y = new_buf()
    write(y, np.array([4], np.uint32))
    assert acl.mdl.ri_task_set_params(t, easy_opf_params(y)) == OK
    assert acl.mdl.ri_update(mh) == OK
    run(mh, stream)
    assert u32(y)[0] == 5


def test_a_captured_host_function_s_tasks_are_default(stream):
    """A host function in a graph is the runtime's callback task, then a wait and a reset of an
    inner event (``ApiImpl::StarsLaunchEventProc``, api_impl.cc:9106-9119, ``EVENT_INNER``), and
    tasks of an inner event are ``RT_TASK_INNER`` (event_task.cc:249-252, 376-379):
    ``ConvertTaskType`` gives DEFAULT (kernel_utils.cc:75-84). npusim's wait / write value pair
    answered VALUE_WAIT / VALUE_WRITE, and set-params could rewrite them (row 298)."""
    x = new_buf()
    ran = []
    begin(stream)
    assert acl.rt.launch_host_func(stream, ran.append, 1) == OK
    write_value(stream, x, 4)
    mh = end(stream)
    tw, tr, tv = tasks_of(model_streams(mh)[0])
    for t in (tw, tr):
        assert acl.mdl.ri_task_get_type(t) == (acl.ACL_MODEL_RI_TASK_DEFAULT, OK)
        assert acl.mdl.ri_task_get_params(t) == (None, P)
    assert acl.mdl.ri_task_get_type(tv) == (VW, OK)                  # the user's own task
    assert acl.mdl.ri_task_set_params(tw, {"type": VW, "dev_addr": x, "value": 1}) == P
    assert model(mh).status == M.FAULT


def test_disable_of_a_host_function_task_is_107000(stream):
    """``ApiImpl::ModelTaskDisable`` (api_impl.cc:9764-9781): a DEFAULT task -> 107000, FAULT."""
    begin(stream)
    assert acl.rt.launch_host_func(stream, print, None) == OK
    mh = end(stream)
    tw, _ = tasks_of(model_streams(mh)[0])
    assert acl.mdl.ri_task_disable(tw) == P
    assert model(mh).status == M.FAULT


def test_a_disabled_task_keeps_its_type_and_can_be_set_again(stream):
    """``ApiImpl::ModelTaskDisable`` (api_impl.cc:9764-9790) only marks the TaskInfo disabled:
    its type and parameters stay (GetType / GetParams read the TaskInfo), so a later
    set-params of its own type is accepted and, after aclmdlRIUpdate, the task runs again.
    npusim's NOP read back as DEFAULT and refused the set-params (row 299)."""
    x, z = new_buf(), new_buf()
    begin(stream)
    write_value(stream, x, 5)
    mh = end(stream)
    (t,) = tasks_of(model_streams(mh)[0])
    assert acl.mdl.ri_task_disable(t) == OK
    assert acl.mdl.ri_update(mh) == OK
    run(mh, stream)
    assert u32(x)[0] == 0                                   # disabled: nothing written
    assert acl.mdl.ri_task_get_type(t) == (VW, OK)
    assert acl.mdl.ri_task_get_params(t) == ({"type": VW, "dev_addr": x, "value": 5}, OK)
    assert acl.mdl.ri_task_set_params(t, {"type": VW, "dev_addr": z, "value": 6}) == OK
    assert acl.mdl.ri_update(mh) == OK
    run(mh, stream)
    assert (u32(x)[0], u32(z)[0]) == (0, 6)


def test_set_params_are_read_back_before_the_update(stream):
    """``Update*TaskParams`` rewrite the TaskInfo at once (memory_task.cc:728-775) and
    ``TaskGetParams`` reads the TaskInfo: the new values before aclmdlRIUpdate."""
    x, z = new_buf(), new_buf()
    begin(stream)
    write_value(stream, x, 5)
    mh = end(stream)
    (t,) = tasks_of(model_streams(mh)[0])
    assert acl.mdl.ri_task_set_params(t, {"type": VA, "dev_addr": z, "value": 1}) == OK
    assert acl.mdl.ri_task_get_type(t) == (VA, OK)
    assert acl.mdl.ri_task_get_params(t)[0]["dev_addr"] == z


def test_kernel_params_with_host_args_copy_them(stream):
    """``UpdateKernelParams`` (kernel_utils.cc:238-241): ``isHostArgs`` 1 makes the runtime copy
    the args from host memory (``isNoNeedH2DCopy = 0``); npusim read them as a device address."""
    mh = kernel_model(stream)
    (t,) = tasks_of(model_streams(mh)[0])
    y = new_buf()
    write(y, np.array([9], np.uint32))
    host = np.array([y], np.uint64)
    p = {**easy_opf_params(new_buf()), "args": acl.util.numpy_to_ptr(host), "is_host_args": 1}
    assert acl.mdl.ri_task_set_params(t, p) == OK
    host[0] = 0                                      # copied at the call
    assert acl.mdl.ri_update(mh) == OK
    run(mh, stream)
    assert u32(y)[0] == 10


def test_kernel_params_host_args_that_are_not_host_memory_are_107000(stream):
    mh = kernel_model(stream)
    (t,) = tasks_of(model_streams(mh)[0])
    p = {**easy_opf_params(new_buf()), "is_host_args": 1}        # args: device memory
    assert acl.mdl.ri_task_set_params(t, p) == P
    assert model(mh).status == M.FAULT


def test_kernel_params_cfg_replaces_the_task_s_configuration(stream):
    """``ConvertLaunchCfgToTaskCfg(taskCfg, kernelTaskParams->cfg)`` (kernel_utils.cc:248-250):
    the task's launch configuration is the new one, the defaults for a NULL cfg — the timeout
    attribute reads it back; an invalid cfg is 107000 and FAULT."""
    mh = kernel_model(stream)
    (t,) = tasks_of(model_streams(mh)[0])
    timeout_us = acl.ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US
    default, ret = acl.mdl.ri_kernel_task_get_attribute(t, timeout_us)
    assert ret == OK
    p = easy_opf_params(new_buf())
    assert acl.mdl.ri_task_set_params(t, {**p, "cfg": {timeout_us: 77}}) == OK
    assert acl.mdl.ri_kernel_task_get_attribute(t, timeout_us) == (77, OK)
    assert acl.mdl.ri_task_set_params(t, p) == OK
    assert acl.mdl.ri_kernel_task_get_attribute(t, timeout_us) == (default, OK)
    assert acl.mdl.ri_task_set_params(t, {**p, "cfg": {9999: 1}}) == P
    assert model(mh).status == M.FAULT


def test_a_built_model_s_kernel_task_keeps_its_launch_configuration(dev0):
    """``ApiImpl::KernelTaskGetAttribute`` reads the task's TaskCfg (kernel_utils.cc
    ``GetKernelAttribute``) whatever the model's kind: a kernel launched with a configuration
    on a bound stream answers it (it answered the defaults: only captured launches kept it)."""
    x = new_buf()
    lib, ret = acl.rt.binary_load_from_file(npusim.samples.binary_path())
    f, ret = acl.rt.binary_get_function(lib, "EasyOPf")
    m, ret = acl.mdl.ri_build_begin(0)
    s = new_stream(PERSISTENT)
    assert acl.mdl.ri_bind_stream(m, s, HEAD) == OK
    timeout_us = acl.ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US
    assert acl.rt.launch_kernel_v2(f, 1, args_with(x), 8, {timeout_us: 55}, s) == OK
    (t,) = tasks_of(s)
    assert acl.mdl.ri_kernel_task_get_attribute(t, timeout_us) == (55, OK)
