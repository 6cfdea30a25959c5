"""Runtime functions npusim refuses by design: present so a program gets a code and a reason
instead of an ``AttributeError``, and returning 207000 (``ACL_ERROR_RT_FEATURE_NOT_SUPPORT``) with
the reason as the thread's recent error message (``acl.get_recent_err_msg()``).

What is refused is what a one-process simulator cannot mean: events, notifies and memory shared
with other processes (IPC), cache maintenance of real hardware, and host memory mapped into the
device's address space. ``docs/api_coverage.md`` lists every function of the chapters capture
programs use, these among them; ``npusim.acl.rt`` / ``npusim.acl.mdl`` make one function per row
(:func:`refusal`).
"""
from __future__ import annotations

import re

from .. import errors as ERR
from .runtime import RT, set_recent_error

FACADE_EXCEPTIONS = {"aclrtBinaryUnLoad": "acl.rt.binary_unload",
                     "aclrtUnSubscribeReport": "acl.rt.unsubscribe_report",
                     "aclrtUnSubscribeHostFunc": "acl.rt.unsubscribe_host_func",
                     "aclmdlRICaptureToModelRIBegin": "acl.mdl.ri_capture_to_model_ri_begin",
                     "rtStreamAddToModel": "acl.rt.stream_add_to_model",
                     "aclrtGetSocName": "acl.get_soc_name", "aclrtGetVersion": "acl.get_version",
                     "aclrtLaunchSIMTKernelWithArgsArray":
                         "acl.rt.launch_simt_kernel_with_args_array",
                     "aclrtLaunchSIMTKernelWithHostArgs":
                         "acl.rt.launch_simt_kernel_with_host_args"}
"""C names whose facade name is not the mechanical one, or the other way round (pyACL's
spellings, an upper-case "RI" inside a name, the one rt-level function the facade has)."""


def facade_name(c: str) -> str:
    """The ``npusim.acl`` name of a C function (design.md §3.1): ``aclrtX`` -> ``acl.rt.x``,
    ``aclmdlRIX`` -> ``acl.mdl.ri_x``, ``aclX`` -> ``acl.x``; CamelCase -> snake_case."""
    if c in FACADE_EXCEPTIONS:
        return FACADE_EXCEPTIONS[c]
    for prefix, module in (("aclmdlRI", "mdl.ri_"), ("aclrt", "rt."), ("acl", "")):
        if c.startswith(prefix):
            tail = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", c[len(prefix):])
            return "acl." + module + re.sub(r"(?<=[A-Z])(?=[A-Z][a-z])", "_", tail).lower()
    raise ValueError(f"{c} is not an ACL function name")


_IPC = "inter-process sharing (IPC): npusim simulates one process"
_CMO = "cache maintenance of real hardware: simulated device memory is always coherent"
_MAP = ("host memory mapped into the device address space: npusim keeps host and device memory "
        "apart (use aclrtMallocHost for pinned host memory)")

_HOSTFUNC = ("not supported on the chips npusim simulates (Atlas A2 / A3, Ascend 950: chapter 24); "
             "aclrtLaunchHostFunc runs host functions on the runtime's own thread")

BY_DESIGN: dict[str, tuple[int, str]] = {
    # C name: (outputs before the code, why npusim does not simulate it)
    "aclrtIpcGetEventHandle": (1, _IPC),
    "aclrtIpcOpenEventHandle": (1, _IPC),
    "aclrtNotifyGetExportKey": (1, _IPC),
    "aclrtNotifySetImportPid": (0, _IPC),
    "aclrtNotifySetImportPidInterServer": (0, _IPC),
    "aclrtNotifyImportByKey": (1, _IPC),
    "aclrtMemFlush": (0, _CMO),
    "aclrtMemInvalidate": (0, _CMO),
    "aclrtHostRegister": (1, _MAP),
    "aclrtHostRegisterV2": (0, _MAP),
    "aclrtHostGetDevicePointer": (1, _MAP),
    "aclrtHostMemMapCapabilities": (1, _MAP),
    "aclrtHostUnregister": (0, _MAP),
    "aclrtGetHardwareSyncAddr": (1, "the hardware synchronisation register of a real AI Core"),
    # chapter 24: "Atlas A2 / A3, Ascend 950: 不支持" (the compact runtime's API)
    "aclrtSubscribeHostFunc": (0, _HOSTFUNC),
    "aclrtProcessHostFunc": (0, _HOSTFUNC),
    "aclrtUnSubscribeHostFunc": (0, _HOSTFUNC),
}
"""C name -> (outputs, reason)."""


_C_OF_FACADE = {v: k for k, v in FACADE_EXCEPTIONS.items()}


def c_name(facade: str) -> str:
    """The C name of an ``npusim.acl`` function name (the inverse of :func:`facade_name`):
    ``acl.rt.create_stream`` -> ``aclrtCreateStream``."""
    if facade in _C_OF_FACADE:
        return _C_OF_FACADE[facade]
    parts = facade.split(".")
    camel = "".join(w[:1].upper() + w[1:] for w in parts[-1].split("_"))
    if parts[1:2] == ["mdl"]:
        return "aclmdlRI" + camel[2:] if camel.startswith("Ri") else "aclmdl" + camel
    if parts[1:2] == ["media"]:                      # acl.media.dvpp_malloc -> acldvppMalloc
        return "acl" + camel[:1].lower() + camel[1:]
    return ("aclrt" if parts[1:2] == ["rt"] else "acl") + camel


def refusal(name: str):
    """The facade function for a refused C function: it accepts any arguments, changes nothing,
    and returns 207000 (after ``outputs`` Nones) with the reason as the recent error message."""
    outputs, why = BY_DESIGN[name]
    text = (f"{name} returned 207000 ACL_ERROR_RT_FEATURE_NOT_SUPPORT: not simulated by "
            f"design — {why}")
    code = ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    result = code if outputs == 0 else (None,) * outputs + (code,)

    def refused(*args, **kwargs):
        set_recent_error(text)
        return result
    shape = "the error code" if outputs == 0 else f"({', '.join(['None'] * outputs)}, code)"
    refused.__doc__ = f"{name} — returns {shape}: refused with 207000 by design — {why}."
    refused.__annotations__ = {"return": int if outputs == 0 else tuple}   # the result's shape
    refused.__name__ = refused.__qualname__ = facade_name(name).rsplit(".", 1)[1]
    refused.__refused_area__ = why       # what ``docs/pyacl.md`` names as the area
    refused.__wrapped_api__ = True        # no trace or injection point: it does nothing
    refused.__boundary__ = ()             # and it reads no argument, so none is normalised
    return refused
