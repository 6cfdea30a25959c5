"""Function info and exception info of ``acl.rt`` (spec/kernel.md §4, §6): name, attributes,
code addresses and sizes, parameter info of a function handle; ``aclrtExceptionInfo`` and the
exception callbacks a binary set (``aclrtBinarySetExceptionCallback``, :mod:`.api_binary`),
called on the host after the engine ran a kernel of that binary that faulted.

This module registers :func:`_on_device_run` in ``runtime.device.AFTER_RUN_HOOKS``: after every
engine run it drains the device printf buffer and calls the exception callbacks of new kernel
faults. Check orders and argument forms: :mod:`.api_kernel`.
"""
from __future__ import annotations

import sys
import threading

from ..kernel import loader as L
from ..kernel import printf as P
from ..kernel.elf import AttrType, MixType
from ..kernel.program import REG_CPU, REG_NON_CPU, runtime_features
from .api_device import profile
from .api_kernel import (ACL_ERROR_INVALID_EXCEPTION_INFO, ACL_FUNC_ATTR_KERNEL_RATIO,
                         ACL_FUNC_ATTR_KERNEL_TYPE, ACL_RT_EXCEPTION_AICORE,
                         ACL_RT_EXCEPTION_AICPU, E_ACL, E_CTX, E_PARAM, E_UNSUPPORTED, OK, _ctx,
                         _get)
from .device import AFTER_RUN_HOOKS, fault_code
from .functions import function_handle_of
from .runtime import RT


def _func(func):
    if not func:
        return None, E_ACL
    return _get("function", func)


def get_function_name(func, max_len):
    """aclrtGetFunctionName -> name: acl (name buffer: always given here) -> 107017 ->
    kernel NULL 107000 -> maxLen < len(name) + 1 -> 107000."""
    k, code = _get("function", func)
    if code:
        return None, code
    if k is None:
        return None, E_PARAM
    if int(max_len) & 0xFFFFFFFF < len(k.name.encode("utf-8", "surrogateescape")) + 1:
        return None, E_PARAM
    return k.name, OK


def _ratio(mix: int, ration: int) -> tuple[int, int]:
    """ComputeRatio (kernel_utils.cc): (aic, aiv)."""
    if mix == MixType.MIX_AIC:
        return 1, 0
    if mix == MixType.MIX_AIV:
        return 0, 1
    if mix == MixType.MIX_AIC_AIV_MAIN_AIC:
        return (1, 1) if ration == 1 else (1, 2) if ration == 2 else (0, 0)
    if mix == MixType.MIX_AIC_AIV_MAIN_AIV:
        return (1, 1) if ration == 1 else (2, 1) if ration == 2 else (0, 0)
    return 0, 0


def get_function_attribute(func, attr):
    """aclrtGetFunctionAttribute -> int64: acl (func NULL -> 100000) -> 107017 -> attr outside
    [1, 3] 107000 -> KERNEL_RATIO: chip without ACL graph 207000, CPU kernel 107000. The ratio is
    u16[0] = aiv, u16[1] = aic (the value's upper 32 bits are 0 here)."""
    k, code = _func(func)
    if code:
        return None, code
    try:
        attr = int(attr) & 0xFFFFFFFF
    except (TypeError, ValueError):
        RT.tls.explain(f"attr: expected an aclrtFuncAttribute, got {attr!r}")
        return None, E_PARAM
    if not 1 <= attr <= 3:
        RT.tls.explain(f"attr: {attr} is not an aclrtFuncAttribute (1..3)")
        return None, E_PARAM
    if attr == ACL_FUNC_ATTR_KERNEL_TYPE:
        return int(k.attr_type), OK
    if attr == ACL_FUNC_ATTR_KERNEL_RATIO:
        if not runtime_features(profile()).acl_graph:
            return None, E_UNSUPPORTED
        if k.reg_type != REG_NON_CPU:
            return None, E_PARAM
        aic, aiv = _ratio(k.mix_type, k.task_ration)
        return aiv | (aic << 16), OK
    return int(k.sched_mode), OK


def _vector(k) -> bool:
    return k.attr_type == AttrType.VECTOR or k.mix_type == MixType.MIX_AIV


def get_function_addr(func):
    """aclrtGetFunctionAddr -> (aic, aiv): CPU kernel 107000; lazy programs load here; a single
    address of a vector kernel is the aiv one."""
    k, code = _func(func)
    if code:
        return None, None, code
    if k.reg_type != REG_NON_CPU:
        return None, None, E_PARAM
    ctx = _ctx()
    if ctx is None:
        return None, None, E_CTX
    code, f1, f2 = L.function_addresses(k, ctx.device)
    if code:
        return None, None, code
    if f1 and not f2 and _vector(k):
        return 0, f1, OK
    return f1, f2, OK


def get_function_size(func):
    """aclrtGetFunctionSize -> (aic, aiv): no acl checks; 107017 -> kernel NULL 107000 ->
    chip without ACL graph 207000 -> CPU kernel 107000."""
    k, code = _get("function", func)
    if code:
        return None, None, code
    if k is None:
        return None, None, E_PARAM
    if not runtime_features(profile()).acl_graph:
        return None, None, E_UNSUPPORTED
    if k.reg_type != REG_NON_CPU:
        return None, None, E_PARAM
    if k.length1 and not k.length2 and _vector(k):
        return 0, k.length1, OK
    return k.length1, k.length2, OK


def function_get_binary(func):
    k, code = _func(func)
    if code:
        return None, code
    return k.program.handle, OK


def function_get_param_count(func):
    """aclrtFunctionGetParamCount: CPU 207000, no PARAM_SUMMARY 107000."""
    k, code = _func(func)
    if code:
        return None, code
    if k.reg_type == REG_CPU:
        return None, E_UNSUPPORTED
    if not k.has_param_summary:
        return None, E_PARAM
    return k.param_count, OK


def function_get_param_info(func, index):
    """aclrtFunctionGetParamInfo -> (offset, size): CPU 207000, no summary or index >= count
    107000."""
    k, code = _func(func)
    if code:
        return None, None, code
    if k.reg_type == REG_CPU:
        return None, None, E_UNSUPPORTED
    if not k.has_param_summary or not 0 <= int(index) < k.param_count:
        RT.tls.explain(f"func: kernel {k.name} declares no parameters (no PARAM_SUMMARY)"
                       if not k.has_param_summary else
                       f"index: {int(index)} is not below the kernel's {k.param_count} "
                       f"parameters")
        return None, None, E_PARAM
    p = k.params[int(index)]
    return p.offset, p.size, OK



# ==== exceptions ====
class ExceptionInfo:
    """aclrtExceptionInfo as the simulator fills it for a faulted kernel task."""

    def __init__(self, **kw):
        self.task_id = kw.get("task_id", 0)
        self.stream_id = kw.get("stream_id", 0)
        self.thread_id = kw.get("thread_id", 0)
        self.device_id = kw.get("device_id", 0)
        self.retcode = kw.get("retcode", 0)
        self.type = kw.get("type", ACL_RT_EXCEPTION_AICORE)
        self.args_addr = kw.get("args_addr", 0)
        self.args_size = kw.get("args_size", 0)
        self.func = kw.get("func", 0)

    def __repr__(self):
        return (f"ExceptionInfo(device {self.device_id}, stream {self.stream_id}, task "
                f"{self.task_id}, retcode {self.retcode}, func 0x{self.func:x})")


def get_args_from_exception_info(info):
    """aclrtGetArgsFromExceptionInfo -> (device args address, size); info NULL or not an AI
    Core / AICPU exception -> ACL_ERROR_INVALID_EXCEPTION_INFO (0xFFFFFFFF)."""
    if info is None:
        return None, None, ACL_ERROR_INVALID_EXCEPTION_INFO
    if getattr(info, "type", None) not in (ACL_RT_EXCEPTION_AICORE, ACL_RT_EXCEPTION_AICPU):
        return None, None, ACL_ERROR_INVALID_EXCEPTION_INFO
    return info.args_addr, info.args_size & 0xFFFFFFFF, OK


def get_func_handle_from_exception_info(info):
    """aclrtGetFuncHandleFromExceptionInfo: the handle is re-validated (unloaded -> 107017)."""
    if info is None:
        return None, ACL_ERROR_INVALID_EXCEPTION_INFO
    k, code = _get("function", getattr(info, "func", 0))
    if code:
        return None, code
    if k is None:
        RT.tls.explain("info: the exception info names no function")
        return None, E_PARAM
    return info.func, OK


# ---- after every engine run: the printf drain, then the exception callbacks
def new_kernel_faults(device) -> list:
    """The kernel faults of ``device``'s last engine run (``Device.new_faults``: the device takes
    them from the engine's log after every run and hands them to its ``AFTER_RUN_HOOKS``)."""
    faults = device.new_faults
    if not faults:                  # a run with no fault (every run's case): no scan
        return []
    return [f for f in faults if f.kernel >= 0]


def exception_info(device, f, func, k) -> ExceptionInfo:
    """The ``aclrtExceptionInfo`` of kernel fault ``f`` (its task's SQE row gives the task id and
    the args; ``k`` the function of handle ``func``, None if it has none)."""
    st = device.state
    row = st.pool[st.row_of(f.sq, f.pos)]
    s = device.streams.get(f.sq) or device.streams_by_sq_model.get(f.sq)
    return ExceptionInfo(
        task_id=int(row["task_id"]), stream_id=s.id if s is not None else f.sq,
        thread_id=threading.get_ident(), device_id=device.id, retcode=fault_code(f),
        type=ACL_RT_EXCEPTION_AICPU if k is not None and k.reg_type == REG_CPU
        else ACL_RT_EXCEPTION_AICORE,
        args_addr=int(row["a1"]), args_size=int(row["a2"]), func=func or 0)


def _on_device_run(device) -> None:
    P.drain(device)
    for f in new_kernel_faults(device):
        func = function_handle_of(f.kernel)         # the task carries the body id only
        if func is None:
            continue
        k = RT.handles.get("function", func)[0]
        cb = k.program.exception_callback
        if cb is None:
            continue
        try:
            cb(exception_info(device, f, func, k), k.program.exception_user_data)
        except Exception as e:                     # a user callback must not break a sync
            print(f"npusim: exception callback raised {e!r}", file=sys.stderr)


if _on_device_run not in AFTER_RUN_HOOKS:
    AFTER_RUN_HOOKS.append(_on_device_run)
