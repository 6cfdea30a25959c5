"""Per-task APIs of captured models and ``aclmdlRIUpdate`` (``spec/aclgraph.md`` §7.1, §1.9).

A task handle names one SQE of a capture stream (stream, position). The task APIs read the task
as the runtime's TaskInfo holds it (``Task.info``: a set-params shows at once, a disabled task
keeps its type and fields); set-params and disable *stage* the SQE change (the model goes
UPDATING) and ``aclmdlRIUpdate`` applies every staged change to the SQEs at once, releasing the
model's SQ/CQ resources so the next launch rebuilds them (``CaptureModel::Update``). A failing
set-params or disable leaves the model FAULT, which only destroy leaves. The source audit of
these functions (per-type update functions, built models' tasks, the runtime's inner tasks) is
docs/fidelity.md rows 292, 294, 298, 299.
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import errors as ERR
from ..device import sqe as S
from ..device.kernels import TABLE, UNIT_AICPU
from . import model as M
from .argcheck import check_task_params
from .cost import MODELS as COST_MODELS, launch_ns
from .functions import function_handle_of, resolve_function
from .hostmem import PAGEABLE, PINNED, host_bytes, locate
from .runtime import RT, profile

ACL_MODEL_RI_TASK_DEFAULT, ACL_MODEL_RI_TASK_KERNEL = 0, 1
ACL_MODEL_RI_TASK_EVENT_RECORD, ACL_MODEL_RI_TASK_EVENT_WAIT = 2, 3
ACL_MODEL_RI_TASK_EVENT_RESET, ACL_MODEL_RI_TASK_VALUE_WRITE = 4, 5
ACL_MODEL_RI_TASK_VALUE_WAIT = 6
_TYPE_OF_OP = {S.OP_KERNEL: ACL_MODEL_RI_TASK_KERNEL,
               S.OP_EVENT_RECORD: ACL_MODEL_RI_TASK_EVENT_RECORD,
               S.OP_EVENT_WAIT: ACL_MODEL_RI_TASK_EVENT_WAIT,
               S.OP_EVENT_RESET: ACL_MODEL_RI_TASK_EVENT_RESET,
               S.OP_MEM_WRITE_VALUE: ACL_MODEL_RI_TASK_VALUE_WRITE,
               S.OP_MEM_WAIT_VALUE: ACL_MODEL_RI_TASK_VALUE_WAIT}
LAUNCH_CFG: list = []
"""``[check(cfg, kernel) -> (TaskCfg or None, code)]``: the launch-config check and conversion of
``api_launch`` (CheckKernelLaunchCfg / ConvertLaunchCfgToTaskCfg), which registers it, for the
``cfg`` of a kernel task's new parameters."""
DEFAULT_TYPE_KERNELS: set = set()
"""Kernel ids of runtime-owned bodies that stand for another task type (the DSA random-number
task, ``api_random``): ``ConvertTaskType`` (``kernel_utils.cc``) gives them RT_TASK_DEFAULT."""


def _type_of(row, op: int) -> int:
    if op == S.OP_KERNEL and int(row["a0"]) in DEFAULT_TYPE_KERNELS:
        return ACL_MODEL_RI_TASK_DEFAULT
    return _TYPE_OF_OP.get(op, ACL_MODEL_RI_TASK_DEFAULT)


def _task_type(t, row) -> int:
    """``ConvertTaskType`` (``kernel_utils.cc:68-113``) of task ``t`` whose SQE is ``row``: a
    task the runtime wrote for a captured host function (its inner event's wait and reset,
    ``TaskOwner::RT_TASK_INNER``) is DEFAULT (docs/fidelity.md row 298)."""
    if (t.cs, t.pos) in t.model.inner_tasks:
        return ACL_MODEL_RI_TASK_DEFAULT
    return _type_of(row, t.model.event_task(row)[0])


@dataclass(eq=False)
class Task:
    cs: object          # CaptureStream
    pos: int
    handle: int = 0

    @property
    def model(self):
        return self.cs.model

    def row(self):
        st = self.cs.model.device.state
        st.flush()
        return st.pool[st.row_of(self.cs.sq, self.pos)]

    def info(self):
        """The task as the runtime's ``TaskInfo`` holds it, which the task APIs read: set-params
        rewrites it at once (``UpdateKernelParams`` / ``Update*ValueTaskParams`` change the
        TaskInfo, aclmdlRIUpdate only rebuilds the SQEs), so a staged row is read before the
        SQE; a disabled task keeps its own type and fields (docs/fidelity.md row 299)."""
        m, key = self.cs.model, (self.cs, self.pos)
        staged = m.staged_updates.get(key)
        if staged is not None and int(staged["op"]) != S.OP_NOP:
            return staged
        before = m.disabled_rows.get(key)
        return before if before is not None else self.row()


def _task(h):
    if not h:
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    t, code = RT.handles.get("task", h)
    if code:
        return None, code
    if t.model.destroyed:
        return None, ERR.ACL_ERROR_RT_INVALID_HANDLE
    return t, ERR.ACL_SUCCESS


def ri_get_tasks_by_stream(stream):
    """(list of task handles, code): the stream must be a model stream (a capture stream, or a
    stream bound to a built model: its tasks in the model)."""
    code = _feature()                       # rtStreamGetTasks checks the chip first
    if code:
        return None, code
    if not stream:
        # no ACL-layer NULL check for aclmdlRIGetTasksByStream: the decorator's 107000 (§0.4)
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    cs, code = RT.handles.get("stream", stream)
    if code:
        return None, code
    if cs.bound is not None:           # a stream bound to a built model is a model stream
        cs = cs.bound
    if not cs.is_model:
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    if cs.model.sub:
        return None, ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    cache = cs.task_handles
    out = []
    for pos in range(cs.task_count):
        h = cache.get(pos)
        if h is None:
            h = cache[pos] = RT.handles.add("task", Task(cs, pos))
        out.append(h)
    return out, ERR.ACL_SUCCESS


def _feature() -> int:
    return ERR.ACL_SUCCESS if profile().acl_graph else ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT


def ri_task_get_type(task):
    code = _feature()                       # rtTaskGetType checks the chip first
    if code:
        return None, code
    t, code = _task(task)
    if code:
        return None, code
    if t.model.sub:
        return None, ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    return _task_type(t, t.info()), ERR.ACL_SUCCESS


def ri_task_get_seq_id(task):
    """The task's sequence id in its model: the global capture order across all the model's
    streams, from one counter per model (``CaptureModel::GenerateSeqId``, ``stream.cc``,
    §13.3). Tasks the runtime adds itself (cascade hops, EndCapture's event resets) take ids
    in the same order."""
    t, code = _task(task)
    if code:
        return None, code
    if t.model.normal:
        # ApiImpl::TaskGetSeqId (api_impl.cc:9926-9928): a task of a built model (not an ACL
        # Graph) -> RT_ERROR_FEATURE_NOT_SUPPORT (docs/fidelity.md row 292)
        RT.tls.explain("aclmdlRITaskGetSeqId: Non ACL Graph mode is not supported (a task of a "
                       "model built with aclmdlRIBuildBegin)")
        return None, ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    seq = t.model.seq_id(t.cs, t.pos)
    return (seq, ERR.ACL_SUCCESS) if seq >= 0 else (None, ERR.ACL_ERROR_RT_INTERNAL_ERROR)


def ri_task_get_params(task):
    """(dict of the task's parameters, code); keys follow aclmdlRITaskParams."""
    t, code = _task(task)
    if code:
        return None, code
    if t.model.sub:
        return None, ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    row = t.info()
    op, ce = t.model.event_task(row)       # a software capture event's tasks are event tasks
    ty = _task_type(t, row)
    if ty == ACL_MODEL_RI_TASK_DEFAULT:
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    p = {"type": ty}
    if ty == ACL_MODEL_RI_TASK_KERNEL:
        p.update(func=function_handle_of(int(row["a0"])), args=int(row["a1"]),
                 args_size=int(row["a2"]), num_blocks=int(row["blocks"]), is_host_args=0)
    elif ty in (ACL_MODEL_RI_TASK_VALUE_WRITE, ACL_MODEL_RI_TASK_VALUE_WAIT):
        p.update(dev_addr=int(row["a0"]), value=int(row["a1"]))
        if ty == ACL_MODEL_RI_TASK_VALUE_WAIT:
            p["flag"] = int(row["flag"])
    else:
        # the user event the capture bound to the task's internal event (None once destroyed),
        # its creation flag, and the record / wait / reset flag (DEFAULT: captured tasks)
        # (an external record / wait names the user event itself, with flag EXTERNAL, §9.4)
        m, here = t.model, (t.cs, t.pos)
        ext = {ACL_MODEL_RI_TASK_EVENT_RECORD: m.ext_records,
               ACL_MODEL_RI_TASK_EVENT_WAIT: m.ext_waits}.get(ty, {})
        ev = next((e for e, where in ext.items() if where == here), None)
        external = ev is not None
        if ev is None:
            ev = ce.user_event if ce is not None else None
        live = ev is not None and not ev.destroyed
        key = {ACL_MODEL_RI_TASK_EVENT_RECORD: "record_flag",
               ACL_MODEL_RI_TASK_EVENT_WAIT: "wait_flag"}.get(ty, "reset_flag")
        p.update({"event": ev.handle if live else None,
                  "event_flag": int(ev.flag) if ev is not None else 0, key: int(external)})
    return p, ERR.ACL_SUCCESS


def _check_for_update(t) -> int:
    """CheckCaptureModelForUpdate (capture_model_utils.cc:241-271): the chip's SW-SQ, then a
    model that is not an ACL Graph (a built model: 207000, lines 248-250), a sub-graph (207000),
    a model running or not READY / UPDATING (107040)."""
    m = t.model
    if not m.device.profile.software_sq:
        return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    if m.normal:
        RT.tls.explain("Checking whether the capture model is updatable: Non ACL Graph mode is "
                       "not supported (a task of a model built with aclmdlRIBuildBegin)")
        return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    if m.sub:
        return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    if m.running() or m.status not in (M.READY, M.UPDATING):
        m.device.advance_to_host()
        if m.running() or m.status not in (M.READY, M.UPDATING):
            return ERR.ACL_ERROR_RT_MODEL_UPDATE_FAILED
    return ERR.ACL_SUCCESS


def _fault(m, code: int, why: str) -> int:
    """A refused set-params leaves the model FAULT (``TaskSetParams``'s ERROR_PROC_RETURN)."""
    m.status = M.FAULT
    RT.tls.explain(why)
    return code


def ri_task_set_params(task, params: dict) -> int:
    """aclmdlRITaskSetParams (``ApiImpl::TaskSetParams``, ``api_impl.cc:9630-9672``): after
    ``CheckCaptureModelForUpdate`` the model is UPDATING and ``params["type"]`` picks the update
    function; any refusal leaves the model FAULT.

    - KERNEL (``UpdateKernelParams``, ``kernel_utils.cc:217-275``): the task must be an AI Core /
      vector kernel task; ``task_grp`` must be NULL; ``func`` a live function handle (107017),
      not NULL, ``args`` not NULL, ``args_size`` not 0 (107000). The task is rebuilt from the
      new fields (a missing ``num_blocks`` keeps the task's: a 0-block kernel is not simulated);
      ``cfg`` is checked and converted as a launch's (107000), None giving the defaults to
      aclmdlRIKernelTaskGetAttribute; with ``is_host_args`` the ``args_size`` bytes at the host
      address ``args`` are copied into the model's args memory (not host memory: 107000).
    - VALUE_WRITE / VALUE_WAIT (``UpdateWriteValueTaskParams`` / ``UpdateWaitValueTaskParams``,
      ``memory_task.cc:710-775``): any task whose type is not DEFAULT (a kernel, an event
      task, a value task) becomes a 64-bit value write / wait at ``dev_addr``; ``task_grp``,
      ``op_info_ptr``, ``op_info_size`` must be 0 (``CheckUpdatingTaskParams``). The wait's flag
      is not checked there.
    - EVENT_RECORD / WAIT / RESET and any other type: 107000."""
    if not task or params is None:
        RT.tls.explain("task is NULL" if not task else "params is NULL (None)")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    t, code = _task(task)
    if code:
        return code
    code = _check_for_update(t)
    if code:
        return code
    m = t.model
    m.status = M.UPDATING
    RT.tick(m.device.timing.host_task_update_ns)       # one SQE rebuilt on the host (timing)
    ty = params.get("type")
    row = t.info().copy()
    cur = _task_type(t, row)                            # ConvertTaskType of the task as it is
    if ty == ACL_MODEL_RI_TASK_KERNEL:
        if cur != ACL_MODEL_RI_TASK_KERNEL:
            return _fault(m, ERR.ACL_ERROR_RT_PARAM_INVALID,
                          "aclmdlRITaskSetParams: the task must be a compute task on the Cube "
                          "Core or Vector Core for KERNEL parameters (UpdateKernelParams)")
        if params.get("task_grp"):
            return _fault(m, ERR.ACL_ERROR_RT_PARAM_INVALID, "params->taskGrp must be NULL")
        func = params.get("func")
        kid, code = resolve_function(func)
        if code:
            return _fault(m, code, "params->kernelTaskParams.funcHandle is not a valid "
                                   "function handle" if func else
                          "params->kernelTaskParams.funcHandle is NULL")
        if not params.get("args"):
            return _fault(m, ERR.ACL_ERROR_RT_PARAM_INVALID,
                          "params->kernelTaskParams.args is NULL")
        if not params.get("args_size"):
            return _fault(m, ERR.ACL_ERROR_RT_PARAM_INVALID,
                          "params->kernelTaskParams.argsSize must be greater than 0")
        k = RT.handles.get("function", func)[0]
        tc, cfg = None, params.get("cfg")
        if cfg is not None and LAUNCH_CFG:
            tc, code = LAUNCH_CFG[0](cfg, k)        # ConvertLaunchCfgToTaskCfg
            if code:
                return _fault(m, code, "params->kernelTaskParams.cfg is not a valid launch "
                                       "configuration")
        args, size = int(params["args"]), int(params["args_size"])
        if params.get("is_host_args"):
            # isNoNeedH2DCopy = 0: the runtime copies the host args into the task's device args
            # (LoadKernelArgs); memory that is not host memory of argsSize bytes: 107000
            w = locate(args)
            if w.kind not in (PINNED, PAGEABLE) or not w.fits(args, size):
                return _fault(m, ERR.ACL_ERROR_RT_PARAM_INVALID,
                              "params->kernelTaskParams.args with isHostArgs must be host memory "
                              "of argsSize bytes")
            data = host_bytes(w, args, size).copy()
            args = m.args_alloc(size)
            m.device.state.mem.view(args, size)[:] = data
        TABLE.ensure(kid)                               # a lazy body: built before use
        row["a0"], row["a1"], row["a2"] = kid, args, size
        if k.has_param_summary and check_task_params(k, kid, m.device.state.mem, int(row["a1"]),
                                                     int(row["a2"])):
            m.status = M.FAULT                          # check_args="error" (argcheck.py)
            return ERR.ACL_ERROR_RT_PARAM_INVALID
        row["blocks"] = int(params.get("num_blocks", row["blocks"])) & 0xFFFF
        if COST_MODELS:                    # a per-launch cost model: from the new arguments
            ns = launch_ns(kid, int(row["blocks"]), m.device, int(row["a1"]), int(row["a2"]))
            if ns < 0:
                m.status = M.FAULT
                return -ns
            if ns:
                row["a3"] = ns
        # the task's launch configuration is the new one (NULL cfg: the defaults)
        if tc is None:
            m.task_cfgs.pop((t.cs, t.pos), None)
        else:
            m.task_cfgs[(t.cs, t.pos)] = tc
    elif ty in (ACL_MODEL_RI_TASK_VALUE_WRITE, ACL_MODEL_RI_TASK_VALUE_WAIT):
        if cur == ACL_MODEL_RI_TASK_DEFAULT:
            return _fault(m, ERR.ACL_ERROR_RT_PARAM_INVALID,
                          "aclmdlRITaskSetParams: a task of type DEFAULT cannot be updated or "
                          "converted (CheckUpdatingTaskParams)")
        for key, cname in (("task_grp", "taskGrp"), ("op_info_ptr", "opInfoPtr"),
                           ("op_info_size", "opInfoSize")):
            if params.get(key):
                return _fault(m, ERR.ACL_ERROR_RT_PARAM_INVALID,
                              f"params->{cname} must be 0 for a value write / wait task")
        op = S.OP_MEM_WRITE_VALUE if ty == ACL_MODEL_RI_TASK_VALUE_WRITE else S.OP_MEM_WAIT_VALUE
        # the task is rebuilt (MemWriteValueTaskInit / MemWaitValueTaskInit): only its type,
        # address, value, width (64-bit: awSize = RT_STARS_WRITE_VALUE_SIZE_TYPE_64BIT) and the
        # wait's flag; its position in the stream (task id) stays
        task_id = int(row["task_id"])
        row = S.empty(1)[0]
        row["op"], row["task_id"] = op, task_id
        row["a0"], row["a1"] = int(params.get("dev_addr", 0)), int(params.get("value", 0))
        row["a2"] = 8
        if op == S.OP_MEM_WAIT_VALUE:
            row["flag"] = int(params.get("flag", 0)) & 0xFF
    else:
        return _fault(m, ERR.ACL_ERROR_RT_PARAM_INVALID,
                      f"params->type {ty} is not TASK_KERNEL(1), TASK_VALUE_WRITE(5) or "
                      f"TASK_VALUE_WAIT(6)")
    m.staged_updates[(t.cs, t.pos)] = row
    return ERR.ACL_SUCCESS


def ri_task_disable(task) -> int:
    t, code = _task(task)
    if code:
        return code
    code = _check_for_update(t)
    if code:
        return code
    m = t.model
    m.status = M.UPDATING
    RT.tick(m.device.timing.host_task_update_ns)
    info = t.info()
    if _task_type(t, info) == ACL_MODEL_RI_TASK_DEFAULT:   # ModelTaskDisable (api_impl.cc:9776)
        m.status = M.FAULT
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    m.disabled_rows[(t.cs, t.pos)] = info.copy()        # its type and fields stay readable
    row = t.row().copy()
    row["op"] = S.OP_NOP
    m.staged_updates[(t.cs, t.pos)] = row
    return ERR.ACL_SUCCESS


def apply_updates(m) -> int:
    """CaptureModel::Update: write every staged change and release SQ/CQ + notifies."""
    st = m.device.state
    RT.tick(m.device.timing.host_model_update_ns)      # §1.9: release + rebuild (timing)
    st.flush()
    for (cs, pos), row in m.staged_updates.items():
        st.pool[st.row_of(cs.sq, pos)] = row
        if int(row["op"]) != S.OP_NOP:             # set again after a disable: enabled
            m.disabled_rows.pop((cs, pos), None)
    m.staged_updates.clear()
    m.release_resources()
    return ERR.ACL_SUCCESS



# aclrtLaunchKernelAttrId values (acl_rt.h) that aclmdlRIKernelTaskGetAttribute answers
_ATTR_SCHEM_MODE, _ATTR_DYN_UBUF_SIZE, _ATTR_ENGINE_TYPE, _ATTR_BLOCKDIM_OFFSET = 1, 2, 3, 4
_ATTR_BLOCK_TASK_PREFETCH, _ATTR_DATA_DUMP, _ATTR_TIMEOUT, _ATTR_TIMEOUT_US = 5, 6, 7, 8
# the AI Core default op timeout: default kernel credit 254 -> "STARS reference time
# 1090921693.184 us" (config/910_B_93/dev_info_reg.cc:133-135), rounded up to ms as
# GetOpExecuteMsTimeout does
DEFAULT_OP_TIMEOUT_US = 1_090_922 * 1000


def op_timeout_us() -> int:
    """The op execute timeout in force: aclrtSetOpExecuteTimeOut*'s, else the default."""
    return RT.op_execute_timeout_us or DEFAULT_OP_TIMEOUT_US


def ri_kernel_task_get_attribute(task, attr_id):
    """aclmdlRIKernelTaskGetAttribute (kernel_utils.cc GetKernelAttribute): (value, code).

    The ACL layer checks ``task`` for NULL (100000, §13.2). Only AI Core / vector kernel tasks
    (107000 otherwise); ENGINE_TYPE, BLOCKDIM_OFFSET and BLOCK_TASK_PREFETCH cannot be read back
    (107000). The answers come from the task's own launch configuration (§13.4): SCHEM_MODE the
    configured mode, else the kernel's own; DYN_UBUF_SIZE, DATA_DUMP as configured (0 without a
    config); TIMEOUT (s) / TIMEOUT_US (µs): 0 for "never" (a configured 0), the configured
    value, else the default op timeout (ConvertTimeoutByAttrId)."""
    if not task:
        return None, ERR.ACL_ERROR_INVALID_PARAM
    t, code = _task(task)
    if code:
        return None, code
    row = t.info()
    if int(row["op"]) != S.OP_KERNEL:
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    kid = int(row["a0"])
    if not 0 <= kid < len(TABLE.entries) or TABLE.entries[kid].unit == UNIT_AICPU:
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    cfg = t.model.task_cfgs.get((t.cs, t.pos))
    if attr_id == _ATTR_SCHEM_MODE:
        if cfg is not None and cfg.sched_mode is not None:
            return int(cfg.sched_mode), ERR.ACL_SUCCESS
        h = function_handle_of(kid)
        k = RT.handles.get("function", h)[0] if h else None
        return (int(k.sched_mode) if k is not None else 0), ERR.ACL_SUCCESS
    if attr_id == _ATTR_DYN_UBUF_SIZE:
        return (int(cfg.dyn_ubuf) if cfg is not None else 0), ERR.ACL_SUCCESS
    if attr_id == _ATTR_DATA_DUMP:
        return (1 if cfg is not None and cfg.dump else 0), ERR.ACL_SUCCESS
    if attr_id in (_ATTR_TIMEOUT, _ATTR_TIMEOUT_US):
        us = op_timeout_us() if cfg is None or cfg.timeout_us is None else cfg.timeout_us
        if attr_id == _ATTR_TIMEOUT:
            return (us // 1_000_000) & 0xFFFF, ERR.ACL_SUCCESS
        return us, ERR.ACL_SUCCESS
    RT.tls.explain(f"attr_id: {attr_id} cannot be read back (ENGINE_TYPE, BLOCKDIM_OFFSET, "
                   f"BLOCK_TASK_PREFETCH) or is not an aclrtLaunchKernelAttrId")
    return None, ERR.ACL_ERROR_RT_PARAM_INVALID
