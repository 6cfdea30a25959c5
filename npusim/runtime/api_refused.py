"""Runtime functions npusim refuses by design: present so a program gets a code and a reason
instead of an ``AttributeError``, and returning 207000 (``ACL_ERROR_RT_FEATURE_NOT_SUPPORT``) with
the reason as the thread's recent error message (``acl.get_recent_err_msg()``).

What is refused is what a one-process simulator cannot mean: events, notifies and memory shared
with other processes (IPC), cache maintenance of real hardware, host memory mapped into the
device's address space, and the areas of chapters 02-24 with no simulated counterpart (tdt
channels and queues, mbufs, groups, dumps, profiling, snapshots, UCE repair, installed
package versions ...: docs/fidelity.md row 236). ``docs/api_coverage.md`` lists every function of
chapters 02-24 with its status; :func:`install` puts one :func:`refusal` per row in the facade
module its name falls in (``acl``, ``acl.rt``, ``acl.tdt``, ``acl.prof`` ...).

The module also owns the naming rule (:func:`facade_name`, :func:`c_name`; docs/pyacl.md
"Naming").
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


ACRONYMS = (("P2P", "P2p"), ("PCI", "Pci"), ("CANN", "Cann"), ("Str2Id", "Str2id"))
"""Spellings the CamelCase split would cut badly, written as one word first: ``P2P`` -> ``p2p``
(not ``p2_p``), ``PCIBusId`` -> ``pci_bus_id``, ``CANNVersion`` -> ``cann_version``,
``Str2Id`` -> ``str2id`` (the digit joins the words it links, as in ``memcpy2d``)."""

SUBMODULES = ("rt", "mdl", "op", "prof", "tdt", "dump", "log", "sys", "platform")
"""The lower-case word after ``acl`` that names an ``npusim.acl`` submodule (design.md §3.1:
C prefix -> module): ``acltdtCreateQueue`` -> ``acl.tdt.create_queue``; a name whose next
letter is upper case (``aclDataTypeSize``) is ``acl``-level."""


def facade_name(c: str) -> str:
    """The ``npusim.acl`` name of a C function (design.md §3.1, docs/pyacl.md "Naming"):
    ``aclrtX`` -> ``acl.rt.x``, ``aclmdlRIX`` -> ``acl.mdl.ri_x``, ``acl<word>X`` ->
    ``acl.<word>.x`` for the words of :data:`SUBMODULES`, ``aclX`` -> ``acl.x``; CamelCase ->
    snake_case, acronyms one word (``RI`` -> ``ri``, :data:`ACRONYMS`)."""
    if c in FACADE_EXCEPTIONS:
        return FACADE_EXCEPTIONS[c]
    m = re.match(r"acl([a-z]*)(?=[A-Z])", c)
    if m is None or (m.group(1) and m.group(1) not in SUBMODULES):
        raise ValueError(f"{c} is not an ACL function name")
    tail = c[m.end():]
    for word, one in ACRONYMS:
        tail = tail.replace(word, one)
    tail = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", tail)
    tail = re.sub(r"(?<=[A-Z])(?=[A-Z][a-z])", "_", tail).lower()
    return "acl." + (m.group(1) + "." if m.group(1) else "") + tail


_IPC = "inter-process sharing (IPC): npusim simulates one process"
_CMO = "cache maintenance of real hardware: simulated device memory is always coherent"
_MAP = ("host memory mapped into the device address space: npusim keeps host and device memory "
        "apart (use aclrtMallocHost for pinned host memory)")

_HOSTFUNC = ("not supported on the chips npusim simulates (Atlas A2 / A3, Ascend 950: chapter 24); "
             "aclrtLaunchHostFunc runs host functions on the runtime's own thread")

_UCE = ("repairing HBM uncorrectable ECC errors (UCE): simulated device memory has no hardware "
        "faults")
_GROUP = ("AI Core groups: not supported on the chips npusim simulates (Atlas A2 / A3, Ascend "
          "950: chapter 16), whose runtime answers 207000 too")
_TDT = ("tensor data transfer channels and shared queues between host and device processes "
        "(the device's queue service): npusim simulates one process and no queue service")
_MBUF = ("shared buffers (mbufs) of the device's queue service: acltdt*Buf are not supported on "
         "the chips npusim simulates (chapter 17-03), and npusim simulates no queue service")
_DUMP = "data dumps to files (model, operator and exception dumps of a real device)"
_PROF = ("profiling data collection (msprof / msproftx): npusim's own timeline is npusim.trace "
         "(docs/timing.md)")
_SNAP = "process snapshots (locking, backing up and restoring a process's device state)"

_HWID = "PCI bus ids and atomic capabilities of a real machine's devices"
_COMPACT = ("not supported on the chips npusim simulates (Atlas A2 / A3, Ascend 950: chapter 24); "
            "it is the compact runtime's API (src/acl/aclrt_c)")
_CANNPKG = ("versions and attributes of installed CANN packages and SoC platform files: npusim "
            "has no CANN installation")

_OPINFO = ("the operator information of a graph's last captured task, kept for msprof's shape "
           "reports (capture_model.cc CacheLastTaskOpInfo / ReportShapeInfoForProfiling): "
           "profiling is not simulated")

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
    # ---- chapter 04 / 05 / 11-08 ----
    **{c: (1, _HWID) for c in ("aclrtDeviceGetPCIBusId", "aclrtDeviceGetByPCIBusId",
                               "aclrtDeviceGetHostAtomicCapabilities",
                               "aclrtDeviceGetP2PAtomicCapabilities")},
    # ---- chapters 23 / 24 ----
    "aclrtCreateStreamV2": (1, _COMPACT),
    "aclrtSetStreamConfigOpt": (0, _COMPACT),
    **{c: (n, _CANNPKG) for c, n in (("aclsysGetCANNVersion", 1),
                                     ("aclplatformGetDeviceInfo", 1),
                                     ("aclplatformGetInstructionInfo", 1))},
    **{c: (0, _OPINFO) for c in ("aclrtCacheLastTaskOpInfo", "aclrtCacheLastTaskExtendInfo")},
    # ---- chapters 11-06 / 11-07 (cache maintenance, IPC) ----
    **{c: (n, _CMO) for c, n in (("aclrtCmoAsyncWithBarrier", 0), ("aclrtCmoWaitBarrier", 0),
                                 ("aclrtCmoGetDescSize", 1), ("aclrtCmoSetDesc", 0),
                                 ("aclrtCmoAsyncWithDesc", 0))},
    "aclrtIpcMemImportPidInterServer": (0, _IPC),
    "aclrtIpcMemSetAttr": (0, _IPC),
    # ---- chapter 13: HBM UCE repair ----
    "aclrtGetMemUceInfo": (2, _UCE),
    "aclrtMemUceRepair": (0, _UCE),
    "aclrtRepairError": (0, _UCE),
    # ---- chapter 16: groups ----
    **{c: (n, _GROUP) for c, n in (("aclrtSetGroup", 0), ("aclrtGetGroupCount", 1),
                                   ("aclrtGetAllGroupInfo", 0), ("aclrtGetGroupInfoDetail", 2),
                                   ("aclrtCreateGroupInfo", -1), ("aclrtDestroyGroupInfo", 0))},
    # ---- chapter 17: tensor data transfer, shared queues and their buffers ----
    **{c: (n, _TDT) for c, n in (
        ("acltdtCreateChannel", -1), ("acltdtCreateChannelWithCapacity", -1),
        ("acltdtSendTensor", 0), ("acltdtReceiveTensor", 0), ("acltdtStopChannel", 0),
        ("acltdtDestroyChannel", 0), ("acltdtQueryChannelSize", 1),
        ("acltdtGetSliceInfoFromItem", 2), ("acltdtCleanChannel", 0),
        ("acltdtCreateQueue", 1), ("acltdtDestroyQueue", 0), ("acltdtEnqueueData", 0),
        ("acltdtDequeueData", 1), ("acltdtEnqueue", 0), ("acltdtDequeue", 1),
        ("acltdtBindQueueRoutes", 0), ("acltdtUnbindQueueRoutes", 0),
        ("acltdtQueryQueueRoutes", 0), ("acltdtGrantQueue", 0), ("acltdtAttachQueue", 1))},
    **{f"acl{p}{c}": (n, _MBUF) for p in ("tdt", "rt") for c, n in (
        ("AllocBuf", 1), ("FreeBuf", 0), ("GetBufData", 2), ("SetBufUserData", 0),
        ("GetBufUserData", 0), ("SetBufDataLen", 0), ("GetBufDataLen", 1), ("CopyBufRef", 1),
        ("AppendBufChain", 0), ("GetBufChainNum", 1), ("GetBufFromChain", 1))},
    # ---- chapter 18: dumps (aclmdlInitDump / SetDump / FinalizeDump: acl/pyacl.py) ----
    **{c: (n, _DUMP) for c, n in (
        ("acldumpRegCallback", 0), ("acldumpUnregCallback", -1), ("acldumpGetPath", -1),
        ("aclopStartDumpArgs", 0), ("aclopStopDumpArgs", 0),
        ("acldumpGetExceptionInfoPath", 1), ("acldumpSaveExceptionInfo", 0))},
    # ---- chapter 19: profiling (aclprofInit / Start / Stop / Finalize: acl/pyacl.py) ----
    **{c: (n, _PROF) for c, n in (
        ("aclprofSetConfig", 0), ("aclprofCreateStamp", -1), ("aclprofSetStampTraceMessage", 0),
        ("aclprofMark", 0), ("aclprofMarkEx", 0), ("aclprofPush", 0), ("aclprofPop", 0),
        ("aclprofRangeStart", 1), ("aclprofRangeStop", 0), ("aclprofRangePushEx", 0),
        ("aclprofRangePop", 0), ("aclprofDestroyStamp", -1), ("aclprofStr2Id", -1),
        ("aclprofModelSubscribe", 0), ("aclprofModelUnSubscribe", 0),
        ("aclprofGetOpDescSize", 1), ("aclprofGetOpNum", 1), ("aclprofGetOpTypeLen", 1),
        ("aclprofGetOpType", 1), ("aclprofGetOpNameLen", 1), ("aclprofGetOpName", 1),
        ("aclprofGetOpStart", -1), ("aclprofGetOpEnd", -1), ("aclprofGetOpDuration", -1),
        ("aclprofGetModelId", -1), ("aclprofGetOpFlag", -1), ("aclprofGetOpAttriValue", -1),
        ("aclprofGetStepTimestamp", 0))},
    # ---- chapter 21: snapshots ----
    **{c: (0, _SNAP) for c in ("aclrtSnapShotProcessLock", "aclrtSnapShotProcessBackup",
                               "aclrtSnapShotProcessRestore", "aclrtSnapShotProcessUnlock",
                               "aclrtSnapShotCallbackRegister",
                               "aclrtSnapShotCallbackUnregister")},
}
"""C name -> (outputs before the code, reason); outputs -1: the C function returns a value or
nothing (``void``), and the refusal returns ``None``."""


UPPER_CASE_C_NAMES = ("aclrtDeviceGetP2PAtomicCapabilities", "aclrtMemP2PMap",
                      "aclrtDeviceGetPCIBusId", "aclrtDeviceGetByPCIBusId",
                      "aclsysGetCANNVersion", "aclprofStr2Id",
                      "aclrtReserveMemAddressNoUCMemory")
"""C names whose upper-case words the snake_case name cannot give back (``p2p`` was ``P2P``;
``cann`` is ``CANN`` here but ``Cann`` in ``aclGetCannAttribute``): :func:`c_name` looks them up."""

_C_OF_FACADE = {**{v: k for k, v in FACADE_EXCEPTIONS.items()},
                **{facade_name(c): c for c in UPPER_CASE_C_NAMES}}


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
    return "acl" + (parts[1] if len(parts) == 3 else "") + camel


def refusal(name: str):
    """The facade function for a refused C function: it accepts any arguments, changes nothing,
    and returns 207000 (after ``outputs`` Nones) with the reason as the recent error message."""
    outputs, why = BY_DESIGN[name]
    text = (f"{name} returned 207000 ACL_ERROR_RT_FEATURE_NOT_SUPPORT: not simulated by "
            f"design — {why}")
    code = ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    result = None if outputs < 0 else code if outputs == 0 else (None,) * outputs + (code,)

    def refused(*args, **kwargs):
        set_recent_error(text)
        return result
    shape = "None (the C function returns a value or nothing)" if outputs < 0 else \
        "the error code" if outputs == 0 else f"({', '.join(['None'] * outputs)}, code)"
    refused.__doc__ = f"{name} — returns {shape}: refused with 207000 by design — {why}."
    refused.__annotations__ = {"return": None if outputs < 0 else int if outputs == 0 else tuple}
    refused.__name__ = refused.__qualname__ = facade_name(name).rsplit(".", 1)[1]
    refused.__refused_area__ = why       # what ``docs/pyacl.md`` names as the area
    refused.__outputs__ = outputs         # its result's shape (acl/_boundary.outputs_of)
    refused.__wrapped_api__ = True        # no trace or injection point: it does nothing
    refused.__boundary__ = ()             # and it reads no argument, so none is normalised
    return refused


def install(namespace: dict, module: str) -> None:
    """Put the refusal of every :data:`BY_DESIGN` function named ``acl.<module>.*`` (``module``
    ``""``: ``acl.*``) into a facade module's namespace."""
    prefix = f"acl.{module}." if module else "acl."
    for c in BY_DESIGN:
        name = facade_name(c)
        if name.startswith(prefix) and "." not in name[len(prefix):]:
            namespace[name[len(prefix):]] = refusal(c)
