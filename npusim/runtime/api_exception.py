"""Chapter 13 (exception handling) as the callback samples use it, and the thread's last task id
(chapter 12): ``aclrtSetExceptionInfoCallback``, ``aclrtGet{TaskId,StreamId,ThreadId,DeviceId,
ErrorCode}FromExceptionInfo``, ``aclrtPeekAtLastError`` / ``aclrtGetLastError``,
``aclrtGetErrorVerbose`` and ``aclrtGetThreadLastTaskId``.

Sources (hicann/runtime): ``src/acl/aclrt_impl/callback.cpp`` (the callback is registered with
``rtRegTaskFailCallbackByModule`` under the acl module's name: one per process, a later call
replaces it; the ``Get*FromExceptionInfo`` readers return 0xFFFFFFFF for NULL info),
``context.cpp`` (``aclrtPeekAtLastError`` / ``aclrtGetLastError``: the acl layer accepts only
ACL_RT_THREAD_LEVEL; ``ApiImpl::GetLastErr`` / ``PeekLastErr`` read the thread's global error,
``InnerThreadLocalContainer::GetGlobalErr``, which the rt layer sets with every error it returns),
``event.cpp`` / ``api_c_device.cc`` / ``ApiImpl::GetErrorVerbose``
(RT_FEATURE_DFX_ERR_GET_AND_REPAIR,
device id checks, the device's fault type), ``kernel.cpp`` / ``ApiImpl::GetThreadLastTaskId``
(``InnerThreadLocalContainer::GetLastTaskId``). docs/fidelity.md rows 106-107.

The exception callback is called, like the binaries' exception callbacks
(:mod:`.api_function`), after the engine run that reported a kernel fault
(``device.AFTER_RUN_HOOKS``): on the thread that observed the device, before its synchronize
returns the fault's code.
"""
from __future__ import annotations

import sys

import numpy as np

from .. import errors as ERR
from .api_function import ExceptionInfo, exception_info, new_kernel_faults
from .api_kernel import ACL_ERROR_INVALID_EXCEPTION_INFO
from .device import AFTER_RUN_HOOKS
from .functions import function_handle_of
from .runtime import RT

OK = ERR.ACL_SUCCESS
ACL_RT_THREAD_LEVEL, ACL_RT_CONTEXT_LEVEL = 0, 1         # aclrtLastErrLevel (acl_rt.h)
ACL_RT_NO_ERROR, ACL_RT_ERROR_MEMORY, ACL_RT_ERROR_OTHERS = 0, 1, 0xFFFF   # aclrtErrorType


def set_exception_info_callback(callback) -> int:
    """aclrtSetExceptionInfoCallback (deprecated in favour of aclrtExceptionInfoCallback-
    Register): ``callback(info)`` is called for every kernel task that fails on a device, with
    an aclrtExceptionInfo (read it with the ``get_*_from_exception_info`` functions). The acl
    layer checks nothing: NULL unregisters, a second call replaces the first (one registration
    per module name). A Python object that cannot be called: 107000."""
    if callback is not None and not callable(callback):
        RT.tls.explain(f"callback: a {type(callback).__name__} cannot be called")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    RT.task_fail_callback = callback
    return OK


def _field(info, name: str) -> int:
    if not isinstance(info, ExceptionInfo):
        return ACL_ERROR_INVALID_EXCEPTION_INFO
    return int(getattr(info, name)) & 0xFFFFFFFF


def get_task_id_from_exception_info(info):
    """aclrtGetTaskIdFromExceptionInfo -> the failed task's id (0xFFFFFFFF for NULL info)."""
    return _field(info, "task_id")


def get_stream_id_from_exception_info(info):
    """aclrtGetStreamIdFromExceptionInfo -> the failed task's stream id (0xFFFFFFFF: NULL)."""
    return _field(info, "stream_id")


def get_thread_id_from_exception_info(info):
    """aclrtGetThreadIdFromExceptionInfo -> the thread id (uint32) of the failure report: the
    thread that observed the fault (npusim does not keep the submitting thread per task)."""
    return _field(info, "thread_id")


def get_device_id_from_exception_info(info):
    """aclrtGetDeviceIdFromExceptionInfo -> the device id (0xFFFFFFFF: NULL info)."""
    return _field(info, "device_id")


def get_error_code_from_exception_info(info):
    """aclrtGetErrorCodeFromExceptionInfo -> the fault's code (507035 for a vector-core kernel
    exception, the code the synchronize returns)."""
    return _field(info, "retcode")


# ---- the thread's last error ----
def _thread_level(level) -> bool:
    """ACL_REQUIRES_PARAM_EQUAL_REPORT(level, ACL_RT_THREAD_LEVEL), for any Python value."""
    return isinstance(level, (int, np.integer)) and int(level) == ACL_RT_THREAD_LEVEL


def peek_at_last_error(level):
    """aclrtPeekAtLastError -> the thread's last runtime error code (0: none), kept. The acl
    layer: a level other than ACL_RT_THREAD_LEVEL -> 100000. What counts: every non-zero code
    a facade call of this thread returned from the runtime (the 07 block: 107xxx, 207xxx,
    507xxx; the acl layer's own 100000-range codes do not set it, as in the runtime)."""
    if not _thread_level(level):
        return ERR.ACL_ERROR_INVALID_PARAM
    return RT.tls.last_error


def get_last_error(level):
    """aclrtGetLastError -> the thread's last runtime error code, then cleared (0 next time)."""
    if not _thread_level(level):
        return ERR.ACL_ERROR_INVALID_PARAM
    code, RT.tls.last_error = RT.tls.last_error, OK
    return code


def get_error_verbose(dev_id):
    """aclrtGetErrorVerbose -> ({"errorType", "tryRepair", "hasDetail"}, code): a chip without
    RT_FEATURE_DFX_ERR_GET_AND_REPAIR (310P) 207000; a device id outside the devices 107001;
    a device never set: no fault (``GetPriCtxByDeviceId`` is NULL). The simulated devices have
    no HBM UCE or link faults (a kernel exception is a task fault, not a device fault), so the
    type is always ACL_RT_NO_ERROR with no detail."""
    prof = RT.profile_in_force()
    if not prof.software_sq:          # the STARS chips (910B / 910_93 / 950) have the feature
        return None, ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    if not 0 <= dev_id < prof.device_count:
        return None, ERR.ACL_ERROR_RT_INVALID_DEVICEID
    return {"errorType": ACL_RT_NO_ERROR, "tryRepair": 0, "hasDetail": 0}, OK


# ---- the thread's last task ----
def get_thread_last_task_id():
    """aclrtGetThreadLastTaskId -> (task id, code): the id of the task submitted last on a user
    stream (eager; the default stream included) — read from what the streams keep (each
    stream's last SQE: its task id and doorbell time), so no launch pays for it. npusim keeps
    no submitting thread per task: with several threads submitting it is the process's last
    task, the thread's own when one thread submits (fidelity row 107). 0 before any task.
    A task this thread wrote into a built model (a stream bound with aclmdlRIBindStream: its
    position in the model stream) counts at the host time it was issued (fidelity row 168)."""
    best_t, best_id = -1, 0
    for dev in RT.devices.values():
        st = dev.state
        st.flush()                          # staged SQEs into their rings (as before a run)
        for s in dev.streams.values():
            if s.destroyed or (not s.handle and not s.is_default) or s.task_seq == 0:
                continue                    # runtime-owned SQs (report releasers) have no handle
            row = st.pool[st.row_of(s.sq, s.tail - 1)]
            t = int(row["t_submit"])
            if t > best_t:
                best_t, best_id = t, int(row["task_id"])
    bound = RT.tls.last_bound_task            # a task kept in a built model (aclmdlRIBindStream)
    if bound is not None and bound[0] >= best_t:
        best_id = bound[1]
    return best_id, OK


# ---- the callback, after every engine run ----
def _on_device_run(device) -> None:
    faults = new_kernel_faults(device)
    cb = RT.task_fail_callback
    if cb is None:
        return
    for f in faults:
        func = function_handle_of(f.kernel)
        k = RT.handles.get("function", func)[0] if func is not None else None
        try:
            cb(exception_info(device, f, func, k))
        except Exception as e:          # noqa: BLE001 -- a user callback must not break a sync
            print(f"npusim: exception info callback raised {e!r}", file=sys.stderr)


if _on_device_run not in AFTER_RUN_HOOKS:
    AFTER_RUN_HOOKS.append(_on_device_run)
