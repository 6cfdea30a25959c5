"""Chapter 13 (exception handling) as the callback samples use it, and the thread's last task id
(chapter 12): ``aclrtSetExceptionInfoCallback``, ``aclrtExceptionInfoCallback{Register,
Unregister}``, ``aclrtGet{TaskId,StreamId,ThreadId,DeviceId,
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
from .stream import last_eager_task

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


def _registered() -> dict:
    """aclrtExceptionInfoCallbackRegister's callbacks, by themselves (the runtime's registration
    name is the callback's address, ``callback.cpp:26``: the same function twice is one
    registration, unregistering it erases it, ``task_fail_callback_data_manager.cc:55``).
    Process-wide like the runtime's ``TaskFailCallBackManager`` (``RT.callbacks``): they outlive
    aclFinalize."""
    return RT.callbacks.setdefault("aclrtExceptionInfoCallbackRegister", {})


def exception_info_callback_register(callback) -> int:
    """aclrtExceptionInfoCallbackRegister (chapter 13, the replacement of the deprecated
    aclrtSetExceptionInfoCallback): ``callback(info)`` is called for every kernel task that fails
    on a device, after the one aclrtSetExceptionInfoCallback set and after the callbacks
    registered before it. NULL: 107000 (``callback.cpp:57``); a Python object that cannot be
    called: 107000; the same callback again: one registration."""
    if callback is None or not callable(callback):
        RT.tls.explain("callback is NULL" if callback is None else
                       f"callback {callback!r} cannot be called")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    try:
        _registered()[callback] = None
    except TypeError:                    # unhashable: no name the runtime could give it
        RT.tls.explain(f"callback {callback!r} cannot be registered (unhashable)")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    return OK


def exception_info_callback_unregister(callback) -> int:
    """aclrtExceptionInfoCallbackUnregister: erases ``callback``'s registration; one never
    registered: success, as the runtime's map erase (``callback.cpp:70``). NULL: 107000."""
    if callback is None:
        RT.tls.explain("callback is NULL")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    try:
        _registered().pop(callback, None)
    except TypeError:                    # an unhashable object was never registered
        pass
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
    """aclrtGetThreadLastTaskId -> (task id, code): the id of the task the calling thread
    submitted last on a user stream (eager; the default stream included), as
    ``InnerThreadLocalContainer::GetLastTaskId`` keeps it per thread (``ApiImpl::
    GetThreadLastTaskId``). While one thread uses the runtime it is read from what the streams
    keep (each stream's last SQE: its task id and doorbell time), so no launch pays for it; once
    a second thread does, each submit notes it in the thread's state (``stream.note_task``;
    the first thread's tasks from before are the process's last task then). 0 before any task
    (docs/fidelity.md rows 107, 296). A task this thread wrote into a built model (a stream
    bound with aclmdlRIBindStream: its position in the model stream) counts at the host time
    it was issued (fidelity row 168)."""
    tls = RT.tls
    if RT.threads <= 1:
        best_t, best_id = last_eager_task()
    else:
        best = tls.last_task
        if best is None and tls.first:      # nothing since a second thread came: the earlier
            best = RT.pre_thread_last or last_eager_task()   # tasks were this thread's
        best_t, best_id = best if best is not None else (-1, 0)
    bound = tls.last_bound_task               # a task kept in a built model (aclmdlRIBindStream)
    if bound is not None and bound[0] >= best_t:
        best_id = bound[1]
    return best_id, OK


# ---- the callback, after every engine run ----
def _on_device_run(device) -> None:
    faults = new_kernel_faults(device)
    cbs = ([RT.task_fail_callback] if RT.task_fail_callback is not None else []) + \
        list(_registered())
    if not cbs:
        return
    for f in faults:
        func = function_handle_of(f.kernel)
        k = RT.handles.get("function", func)[0] if func is not None else None
        info = exception_info(device, f, func, k)
        for cb in cbs:
            try:
                cb(info)
            except Exception as e:      # noqa: BLE001 -- a user callback must not break a sync
                print(f"npusim: exception info callback raised {e!r}", file=sys.stderr)


if _on_device_run not in AFTER_RUN_HOOKS:
    AFTER_RUN_HOOKS.append(_on_device_run)
