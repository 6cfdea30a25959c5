"""Every ACL / rt external error code, once, and the exception hierarchy of the Pythonic API.

Why one table: the facade (``npusim.acl``) returns these numbers, the Pythonic API raises them as
exceptions, traces and docs print their names. Defining each code exactly once -- name, value,
family, English meaning -- keeps those three views from drifting apart.

Sources (``hicann/runtime``; tables of names and values are facts):

* ``include/external/acl/acl_base_rt.h`` -- ACL-layer codes (``ACL_SUCCESS``, 1xxxxx ... 5xxxxx).
* ``include/external/acl/error_codes/rt_error_codes.h`` -- runtime codes passed through unchanged by
  the ACL layer (``ACL_GET_ERRCODE_RTS(x) == x``, ``src/acl/common/error_codes_inner.h``).
* ``include/external/acl/error_codes/ge_error_codes.h`` -- graph-engine codes, also returned by ACL.
* ``docs/zh/api_ref/25-01_aclError.md`` -- meanings. Numbering rule from that page: 1xxxxx = the
  caller's code or environment, 2xxxxx = resources / unsupported on this hardware, 3xxxxx = business
  function (queue full ...), 5xxxxx = internal or device failure; unrecognised errors are 500000.
* ``src/runtime/core/inc/common/internal_error_define.hpp`` and
  ``src/runtime/core/src/common/errcode_manage.cc`` -- the internal ``RT_ERROR_*`` codes in
  :data:`INTERNAL` and their external translation.

Where the doc page and the headers disagree the header wins (``ACL_ERROR_RT_DEVICE_OOM``, not the
doc's ``ACL_ERROR_RT_DEVIDE_OOM``; ``ACL_ERROR_GE_DEVICE_MEMORY_OPERATE_FAILED``, not the doc's
``..._ALLOCATION_FAILED``).

Each code also carries a *family* that picks the exception class :func:`error_for` raises; an
empty family falls back to the numbering rule (1 -> :class:`UsageError`, 2 -> :class:`ResourceError`,
3 -> :class:`ServiceError`, 5 -> :class:`InternalError`).
"""
from __future__ import annotations

from typing import NamedTuple


class Code(NamedTuple):
    """One external code: its C name, its value, the exception family, a one-line meaning."""
    name: str
    value: int
    family: str
    meaning: str


# (name, value, family, meaning). Families: ok param handle context state capture timeout oom
# resource unsupported device kernel, or "" for the default of the code's leading digit.
_TABLE = (
    # ---- success (acl_base_rt.h, rt_error_codes.h); the first name of a value is its canonical one
    ("ACL_SUCCESS", 0, "ok", "success"),
    ("ACL_ERROR_NONE", 0, "ok", "success (deprecated alias of ACL_SUCCESS)"),
    ("ACL_RT_SUCCESS", 0, "ok", "success (runtime)"),
    # ---- ACL layer, 1xxxxx: caller code or environment (acl_base_rt.h)
    ("ACL_ERROR_INVALID_PARAM", 100000, "param", "parameter check failed"),
    ("ACL_ERROR_UNINITIALIZE", 100001, "state", "not initialized (aclInit or the feature's init not called)"),
    ("ACL_ERROR_REPEAT_INITIALIZE", 100002, "state", "repeated initialization or repeated load"),
    ("ACL_ERROR_INVALID_FILE", 100003, "", "invalid file"),
    ("ACL_ERROR_WRITE_FILE", 100004, "", "failed to write file"),
    ("ACL_ERROR_INVALID_FILE_SIZE", 100005, "", "invalid file size"),
    ("ACL_ERROR_PARSE_FILE", 100006, "", "failed to parse file"),
    ("ACL_ERROR_FILE_MISSING_ATTR", 100007, "", "file is missing parameters"),
    ("ACL_ERROR_FILE_ATTR_INVALID", 100008, "", "file parameter invalid"),
    ("ACL_ERROR_INVALID_DUMP_CONFIG", 100009, "param", "invalid dump configuration"),
    ("ACL_ERROR_INVALID_PROFILING_CONFIG", 100010, "param", "invalid profiling configuration"),
    ("ACL_ERROR_INVALID_MODEL_ID", 100011, "param", "invalid model id"),
    ("ACL_ERROR_DESERIALIZE_MODEL", 100012, "", "failed to deserialize model"),
    ("ACL_ERROR_PARSE_MODEL", 100013, "", "failed to parse model"),
    ("ACL_ERROR_READ_MODEL_FAILURE", 100014, "", "failed to read model"),
    ("ACL_ERROR_MODEL_SIZE_INVALID", 100015, "", "invalid model size"),
    ("ACL_ERROR_MODEL_MISSING_ATTR", 100016, "", "model is missing parameters"),
    ("ACL_ERROR_MODEL_INPUT_NOT_MATCH", 100017, "param", "model input does not match"),
    ("ACL_ERROR_MODEL_OUTPUT_NOT_MATCH", 100018, "param", "model output does not match"),
    ("ACL_ERROR_MODEL_NOT_DYNAMIC", 100019, "", "model is not dynamic"),
    ("ACL_ERROR_OP_TYPE_NOT_MATCH", 100020, "param", "single-operator type does not match"),
    ("ACL_ERROR_OP_INPUT_NOT_MATCH", 100021, "param", "single-operator input does not match"),
    ("ACL_ERROR_OP_OUTPUT_NOT_MATCH", 100022, "param", "single-operator output does not match"),
    ("ACL_ERROR_OP_ATTR_NOT_MATCH", 100023, "param", "single-operator attribute does not match"),
    ("ACL_ERROR_OP_NOT_FOUND", 100024, "", "single operator not found"),
    ("ACL_ERROR_OP_LOAD_FAILED", 100025, "", "failed to load single operator"),
    ("ACL_ERROR_UNSUPPORTED_DATA_TYPE", 100026, "param", "unsupported data type"),
    ("ACL_ERROR_FORMAT_NOT_MATCH", 100027, "param", "format does not match"),
    ("ACL_ERROR_BIN_SELECTOR_NOT_REGISTERED", 100028, "", "operator binary selector not registered"),
    ("ACL_ERROR_KERNEL_NOT_FOUND", 100029, "", "operator kernel not registered"),
    ("ACL_ERROR_BIN_SELECTOR_ALREADY_REGISTERED", 100030, "", "operator binary selector registered twice"),
    ("ACL_ERROR_KERNEL_ALREADY_REGISTERED", 100031, "", "operator kernel registered twice"),
    ("ACL_ERROR_INVALID_QUEUE_ID", 100032, "param", "invalid queue id"),
    ("ACL_ERROR_REPEAT_SUBSCRIBE", 100033, "state", "repeated subscription"),
    ("ACL_ERROR_STREAM_NOT_SUBSCRIBE", 100034, "state", "stream not subscribed (deprecated)"),
    ("ACL_ERROR_THREAD_NOT_SUBSCRIBE", 100035, "state", "thread not subscribed (deprecated)"),
    ("ACL_ERROR_WAIT_CALLBACK_TIMEOUT", 100036, "timeout", "timed out waiting for a callback (deprecated)"),
    ("ACL_ERROR_REPEAT_FINALIZE", 100037, "state", "repeated finalization"),
    ("ACL_ERROR_NOT_STATIC_AIPP", 100038, "", "static AIPP configuration does not exist (deprecated)"),
    ("ACL_ERROR_COMPILING_STUB_MODE", 100039, "", "linked against the compile stub libraries, not the runtime"),
    ("ACL_ERROR_GROUP_NOT_SET", 100040, "state", "group not set (deprecated)"),
    ("ACL_ERROR_GROUP_NOT_CREATE", 100041, "state", "group not created (deprecated)"),
    ("ACL_ERROR_PROF_ALREADY_RUN", 100042, "state", "a profiling task is already running"),
    ("ACL_ERROR_PROF_NOT_RUN", 100043, "state", "profiling not initialized"),
    ("ACL_ERROR_DUMP_ALREADY_RUN", 100044, "state", "a dump task is already running"),
    ("ACL_ERROR_DUMP_NOT_RUN", 100045, "state", "dump not initialized"),
    ("ACL_ERROR_PROF_REPEAT_SUBSCRIBE", 148046, "state", "model subscribed twice for profiling"),
    ("ACL_ERROR_PROF_API_CONFLICT", 148047, "state", "conflicting profiling API calls"),
    ("ACL_ERROR_INVALID_MAX_OPQUEUE_NUM_CONFIG", 148048, "param", "invalid operator-cache ageing configuration"),
    ("ACL_ERROR_INVALID_OPP_PATH", 148049, "", "ASCEND_OPP_PATH unset or wrong"),
    ("ACL_ERROR_OP_UNSUPPORTED_DYNAMIC", 148050, "", "operator does not support dynamic shape"),
    ("ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED", 148051, "state", "related resources not released yet"),
    ("ACL_ERROR_UNSUPPORTED_JPEG", 148052, "", "unsupported JPEG encoding for JPEGD"),
    ("ACL_ERROR_INVALID_BUNDLE_MODEL_ID", 148053, "param", "invalid bundle model id"),
    # ---- ACL layer, 2xxxxx: resources / hardware mismatch
    ("ACL_ERROR_BAD_ALLOC", 200000, "oom", "memory allocation failed"),
    ("ACL_ERROR_API_NOT_SUPPORT", 200001, "unsupported", "API not supported"),
    ("ACL_ERROR_INVALID_DEVICE", 200002, "param", "invalid device (deprecated)"),
    ("ACL_ERROR_MEMORY_ADDRESS_UNALIGNED", 200003, "param", "memory address not aligned"),
    ("ACL_ERROR_RESOURCE_NOT_MATCH", 200004, "context", "resources do not match (stream, context ...)"),
    ("ACL_ERROR_INVALID_RESOURCE_HANDLE", 200005, "handle", "invalid resource handle"),
    ("ACL_ERROR_FEATURE_UNSUPPORTED", 200006, "unsupported", "feature not supported"),
    ("ACL_ERROR_PROF_MODULES_UNSUPPORTED", 200007, "unsupported", "unsupported profiling configuration"),
    # ---- ACL layer, 3xxxxx / 5xxxxx
    ("ACL_ERROR_STORAGE_OVER_LIMIT", 300000, "", "storage limit exceeded"),
    ("ACL_ERROR_INTERNAL_ERROR", 500000, "", "unknown internal error"),
    ("ACL_ERROR_FAILURE", 500001, "", "internal error"),
    ("ACL_ERROR_GE_FAILURE", 500002, "", "graph engine (GE) error"),
    ("ACL_ERROR_RT_FAILURE", 500003, "", "runtime error"),
    ("ACL_ERROR_DRV_FAILURE", 500004, "", "driver error"),
    ("ACL_ERROR_PROFILING_FAILURE", 500005, "", "profiling error"),
    # ---- runtime, 107xxx (rt_error_codes.h)
    ("ACL_ERROR_RT_PARAM_INVALID", 107000, "param", "parameter invalid"),
    ("ACL_ERROR_RT_INVALID_DEVICEID", 107001, "param", "invalid device id"),
    ("ACL_ERROR_RT_CONTEXT_NULL", 107002, "context", "no current context"),
    ("ACL_ERROR_RT_STREAM_CONTEXT", 107003, "context", "stream not in the current context"),
    ("ACL_ERROR_RT_MODEL_CONTEXT", 107004, "context", "model not in the current context"),
    ("ACL_ERROR_RT_STREAM_MODEL", 107005, "context", "stream is bound to a model / not in this model"),
    ("ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID", 107006, "state", "event timestamp invalid"),
    ("ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL", 107007, "state", "event timestamp reversed"),
    ("ACL_ERROR_RT_ADDR_UNALIGNED", 107008, "param", "memory address unaligned"),
    ("ACL_ERROR_RT_FILE_OPEN", 107009, "", "failed to open file"),
    ("ACL_ERROR_RT_FILE_WRITE", 107010, "", "failed to write file"),
    ("ACL_ERROR_RT_STREAM_SUBSCRIBE", 107011, "state", "stream not subscribed or subscribed twice"),
    ("ACL_ERROR_RT_THREAD_SUBSCRIBE", 107012, "state", "thread not subscribed or subscribed twice"),
    ("ACL_ERROR_RT_GROUP_NOT_SET", 107013, "state", "group not set"),
    ("ACL_ERROR_RT_GROUP_NOT_CREATE", 107014, "state", "group not created"),
    ("ACL_ERROR_RT_STREAM_NO_CB_REG", 107015, "state", "callback stream not registered to a thread"),
    ("ACL_ERROR_RT_INVALID_MEMORY_TYPE", 107016, "param", "invalid memory type"),
    ("ACL_ERROR_RT_INVALID_HANDLE", 107017, "handle", "invalid handle (wrong type or destroyed)"),
    ("ACL_ERROR_RT_INVALID_MALLOC_TYPE", 107018, "param", "invalid malloc type"),
    ("ACL_ERROR_RT_WAIT_TIMEOUT", 107019, "timeout", "wait timed out"),
    ("ACL_ERROR_RT_TASK_TIMEOUT", 107020, "timeout", "task timed out"),
    ("ACL_ERROR_RT_SYSPARAMOPT_NOT_SET", 107021, "state", "context system parameter not set"),
    ("ACL_ERROR_RT_DEVICE_TASK_ABORT", 107022, "state", "device task abort in progress conflicts with this call"),
    ("ACL_ERROR_RT_STREAM_ABORT", 107023, "state", "stream is being aborted"),
    ("ACL_ERROR_RT_CAPTURE_DEPENDENCY", 107024, "capture", "capture event wait has no matching record in the capture"),
    ("ACL_ERROR_RT_STREAM_UNJOINED", 107025, "capture", "a side stream was not joined back to the origin stream"),
    ("ACL_ERROR_RT_MODEL_CAPTURED", 107026, "capture", "model is capturing (or sub-model already captured)"),
    ("ACL_ERROR_RT_STREAM_CAPTURED", 107027, "capture", "stream is capturing"),
    ("ACL_ERROR_RT_EVENT_CAPTURED", 107028, "capture", "event is bound to a capturing model"),
    ("ACL_ERROR_RT_STREAM_NOT_CAPTURED", 107029, "capture", "stream is not capturing"),
    ("ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT", 107030, "capture", "operation not allowed in the current capture mode"),
    ("ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT", 107031, "capture", "disallowed implicit dependency on the default stream"),
    ("ACL_ERROR_STREAM_CAPTURE_CONFLICT", 107032, "capture", "event and stream belong to different captures"),
    ("ACL_ERROR_STREAM_TASK_GROUP_STATUS", 107033, "capture", "task group status error"),
    ("ACL_ERROR_STREAM_TASK_GROUP_INTR", 107034, "capture", "task group recording interrupted"),
    ("ACL_ERROR_RT_TASK_ABORT_STOP", 107035, "state", "device task abort stopped before post-processing"),
    ("ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED", 107036, "capture", "the capture was not begun on this stream"),
    ("ACL_ERROR_RT_MODEL_RUNNING", 107037, "capture", "model is still running"),
    ("ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD", 107038, "capture", "capture ended on a different thread than it began"),
    ("ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY", 107039, "param", "output array too small"),
    ("ACL_ERROR_RT_MODEL_UPDATE_FAILED", 107040, "capture", "model update failed (not captured, running or not updating)"),
    ("ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC", 107041, "capture", "async call turned synchronous is blocked by capture mode"),
    ("ACL_ERROR_RT_SYMBOL_NOT_FOUND", 107042, "param", "symbol not found"),
    ("ACL_ERROR_RT_INVALID_SYMBOL", 107043, "param", "invalid device symbol"),
    ("ACL_ERROR_RT_INVALID_DEVICE_FUNCTION", 107044, "param", "invalid device function"),
    ("ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING", 107045, "capture", "a sub ACL graph is still capturing"),
    # ---- runtime, 207xxx
    ("ACL_ERROR_RT_FEATURE_NOT_SUPPORT", 207000, "unsupported", "feature not supported"),
    ("ACL_ERROR_RT_MEMORY_ALLOCATION", 207001, "oom", "memory allocation failed (out of memory)"),
    ("ACL_ERROR_RT_MEMORY_FREE", 207002, "", "memory free failed"),
    ("ACL_ERROR_RT_AICORE_OVER_FLOW", 207003, "kernel", "AI Core arithmetic overflow"),
    ("ACL_ERROR_RT_NO_DEVICE", 207004, "", "device not available"),
    ("ACL_ERROR_RT_RESOURCE_ALLOC_FAIL", 207005, "resource", "resource allocation failed"),
    ("ACL_ERROR_RT_NO_PERMISSION", 207006, "", "no permission"),
    ("ACL_ERROR_RT_NO_EVENT_RESOURCE", 207007, "resource", "no event resource"),
    ("ACL_ERROR_RT_NO_STREAM_RESOURCE", 207008, "resource", "no stream resource"),
    ("ACL_ERROR_RT_NO_NOTIFY_RESOURCE", 207009, "resource", "no notify resource"),
    ("ACL_ERROR_RT_NO_MODEL_RESOURCE", 207010, "resource", "no model resource"),
    ("ACL_ERROR_RT_NO_CDQ_RESOURCE", 207011, "resource", "no CDQ resource"),
    ("ACL_ERROR_RT_OVER_LIMIT", 207012, "resource", "over limit"),
    ("ACL_ERROR_RT_QUEUE_EMPTY", 207013, "", "queue is empty"),
    ("ACL_ERROR_RT_QUEUE_FULL", 207014, "", "queue is full"),
    ("ACL_ERROR_RT_REPEATED_INIT", 207015, "", "repeated initialization"),
    ("ACL_ERROR_RT_AIVEC_OVER_FLOW", 207016, "kernel", "AI Vector core arithmetic overflow"),
    ("ACL_ERROR_RT_OVER_FLOW", 207017, "kernel", "arithmetic overflow"),
    ("ACL_ERROR_RT_DEVICE_OOM", 207018, "oom", "device out of memory"),
    ("ACL_ERROR_RT_FEATURE_NOT_SUPPORT_UPDATE_OP", 207019, "unsupported", "this operator cannot be updated by the driver"),
    ("ACL_ERROR_RT_TIMEOUT", 207020, "timeout", "driver timeout"),
    ("ACL_ERROR_RT_LINK_TYPE_NOT_SUPPORTED", 207021, "unsupported", "link type not supported"),
    # ---- runtime, 507xxx: internal and device failures
    ("ACL_ERROR_RT_INTERNAL_ERROR", 507000, "", "runtime internal error"),
    ("ACL_ERROR_RT_TS_ERROR", 507001, "device", "task scheduler internal error"),
    ("ACL_ERROR_RT_STREAM_TASK_FULL", 507002, "", "stream task queue full"),
    ("ACL_ERROR_RT_STREAM_TASK_EMPTY", 507003, "", "stream task queue empty"),
    ("ACL_ERROR_RT_STREAM_NOT_COMPLETE", 507004, "", "stream tasks not complete"),
    ("ACL_ERROR_RT_END_OF_SEQUENCE", 507005, "", "end of sequence (AI CPU task finished)"),
    ("ACL_ERROR_RT_EVENT_NOT_COMPLETE", 507006, "", "event not complete"),
    ("ACL_ERROR_RT_CONTEXT_RELEASE_ERROR", 507007, "", "context release failed"),
    ("ACL_ERROR_RT_SOC_VERSION", 507008, "", "failed to get SoC version"),
    ("ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT", 507009, "unsupported", "task type not supported"),
    ("ACL_ERROR_RT_LOST_HEARTBEAT", 507010, "device", "task scheduler lost heartbeat"),
    ("ACL_ERROR_RT_MODEL_EXECUTE", 507011, "device", "model execution failed"),
    ("ACL_ERROR_RT_REPORT_TIMEOUT", 507012, "timeout", "timed out waiting for a task scheduler report"),
    ("ACL_ERROR_RT_SYS_DMA", 507013, "device", "system DMA hardware error"),
    ("ACL_ERROR_RT_AICORE_TIMEOUT", 507014, "kernel", "AI Core execution timeout"),
    ("ACL_ERROR_RT_AICORE_EXCEPTION", 507015, "kernel", "AI Core execution exception"),
    ("ACL_ERROR_RT_AICORE_TRAP_EXCEPTION", 507016, "kernel", "AI Core trap exception"),
    ("ACL_ERROR_RT_AICPU_TIMEOUT", 507017, "kernel", "AI CPU execution timeout"),
    ("ACL_ERROR_RT_AICPU_EXCEPTION", 507018, "kernel", "AI CPU execution exception"),
    ("ACL_ERROR_RT_AICPU_DATADUMP_RSP_ERR", 507019, "device", "AI CPU did not answer after a data dump"),
    ("ACL_ERROR_RT_AICPU_MODEL_RSP_ERR", 507020, "device", "AI CPU did not answer after a model operation"),
    ("ACL_ERROR_RT_PROFILING_ERROR", 507021, "", "profiling error"),
    ("ACL_ERROR_RT_IPC_ERROR", 507022, "", "inter-process communication error"),
    ("ACL_ERROR_RT_MODEL_ABORT_NORMAL", 507023, "device", "model aborted normally"),
    ("ACL_ERROR_RT_KERNEL_UNREGISTERING", 507024, "", "kernel is being unregistered"),
    ("ACL_ERROR_RT_RINGBUFFER_NOT_INIT", 507025, "", "ring buffer not initialized"),
    ("ACL_ERROR_RT_RINGBUFFER_NO_DATA", 507026, "", "ring buffer has no data"),
    ("ACL_ERROR_RT_KERNEL_LOOKUP", 507027, "", "kernel not registered in the runtime"),
    ("ACL_ERROR_RT_KERNEL_DUPLICATE", 507028, "", "kernel registered twice in the runtime"),
    ("ACL_ERROR_RT_DEBUG_REGISTER_FAIL", 507029, "", "debug register failed"),
    ("ACL_ERROR_RT_DEBUG_UNREGISTER_FAIL", 507030, "", "debug unregister failed"),
    ("ACL_ERROR_RT_LABEL_CONTEXT", 507031, "", "label not in the current context"),
    ("ACL_ERROR_RT_PROGRAM_USE_OUT", 507032, "", "too many registered programs"),
    ("ACL_ERROR_RT_DEV_SETUP_ERROR", 507033, "device", "device setup failed"),
    ("ACL_ERROR_RT_VECTOR_CORE_TIMEOUT", 507034, "kernel", "vector core execution timeout"),
    ("ACL_ERROR_RT_VECTOR_CORE_EXCEPTION", 507035, "kernel", "vector core execution exception"),
    ("ACL_ERROR_RT_VECTOR_CORE_TRAP_EXCEPTION", 507036, "kernel", "vector core trap exception"),
    ("ACL_ERROR_RT_CDQ_BATCH_ABNORMAL", 507037, "", "CDQ batch allocation abnormal"),
    ("ACL_ERROR_RT_DIE_MODE_CHANGE_ERROR", 507038, "", "die mode cannot be changed"),
    ("ACL_ERROR_RT_DIE_SET_ERROR", 507039, "", "single-die mode cannot select a die"),
    ("ACL_ERROR_RT_INVALID_DIEID", 507040, "", "invalid die id"),
    ("ACL_ERROR_RT_DIE_MODE_NOT_SET", 507041, "", "die mode not set"),
    ("ACL_ERROR_RT_AICORE_TRAP_READ_OVERFLOW", 507042, "kernel", "AI Core trap: read out of bounds"),
    ("ACL_ERROR_RT_AICORE_TRAP_WRITE_OVERFLOW", 507043, "kernel", "AI Core trap: write out of bounds"),
    ("ACL_ERROR_RT_VECTOR_CORE_TRAP_READ_OVERFLOW", 507044, "kernel", "vector core trap: read out of bounds"),
    ("ACL_ERROR_RT_VECTOR_CORE_TRAP_WRITE_OVERFLOW", 507045, "kernel", "vector core trap: write out of bounds"),
    ("ACL_ERROR_RT_STREAM_SYNC_TIMEOUT", 507046, "timeout", "stream synchronize timed out"),
    ("ACL_ERROR_RT_EVENT_SYNC_TIMEOUT", 507047, "timeout", "event synchronize timed out"),
    ("ACL_ERROR_RT_FFTS_PLUS_TIMEOUT", 507048, "kernel", "FFTS+ task timeout"),
    ("ACL_ERROR_RT_FFTS_PLUS_EXCEPTION", 507049, "kernel", "FFTS+ task exception"),
    ("ACL_ERROR_RT_FFTS_PLUS_TRAP_EXCEPTION", 507050, "kernel", "FFTS+ task trap exception"),
    ("ACL_ERROR_RT_SEND_MSG", 507051, "", "HDC message send failed"),
    ("ACL_ERROR_RT_COPY_DATA", 507052, "", "data copy failed while enqueueing"),
    ("ACL_ERROR_RT_DEVICE_MEM_ERROR", 507053, "device", "device memory uncorrectable error (UCE)"),
    ("ACL_ERROR_RT_HBM_MULTI_BIT_ECC_ERROR", 507054, "device", "HBM multi-bit ECC error"),
    ("ACL_ERROR_RT_SUSPECT_DEVICE_MEM_ERROR", 507055, "device", "suspected device memory error (peer device)"),
    ("ACL_ERROR_RT_LINK_ERROR", 507056, "device", "link between devices down"),
    ("ACL_ERROR_RT_SUSPECT_REMOTE_ERROR", 507057, "device", "suspected remote memory fault or out-of-bounds access"),
    ("ACL_ERROR_RT_DRV_INTERNAL_ERROR", 507899, "", "driver internal error"),
    ("ACL_ERROR_RT_AICPU_INTERNAL_ERROR", 507900, "", "AI CPU internal error"),
    ("ACL_ERROR_RT_SOCKET_CLOSE", 507901, "", "HDC session disconnected"),
    ("ACL_ERROR_RT_AICPU_INFO_LOAD_RSP_ERR", 507902, "", "AI CPU info load response error"),
    ("ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED", 507903, "capture", "capture was invalidated"),
    ("ACL_ERROR_RT_COMM_OP_RETRY_FAIL", 507904, "device", "HCCL operation retry failed"),
    ("ACL_ERROR_SNAPSHOT_LOCK_TIMEOUT", 507905, "timeout", "snapshot process lock timed out"),
    ("ACL_ERROR_SNAPSHOT_LOCK_FAILED", 507906, "", "snapshot process lock failed"),
    ("ACL_ERROR_SNAPSHOT_UNLOCK_FAILED", 507907, "", "snapshot process unlock failed"),
    ("ACL_ERROR_SNAPSHOT_BACKUP_FAILED", 507908, "", "snapshot backup failed"),
    ("ACL_ERROR_SNAPSHOT_RESTORE_FAILED", 507909, "", "snapshot restore failed"),
    ("ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED", 507910, "", "host memory range already registered"),
    ("ACL_ERROR_HOST_MEMORY_NOT_REGISTERED", 507911, "", "host memory not registered"),
    ("ACL_ERROR_SNAPSHOT_CALLBACK_FAILED", 507912, "", "snapshot callback failed"),
    ("ACL_ERROR_SNAPSHOT_REGISTER_CALLBACK_FAILED", 507913, "", "snapshot callback registration failed"),
    ("ACL_ERROR_RT_L3_PORT_ERROR", 507914, "device", "L3 port error"),
    ("ACL_ERROR_RT_CCU_TIMEOUT", 507915, "device", "CCU timeout"),
    ("ACL_ERROR_RT_CCU_EXCEPTION", 507916, "device", "CCU exception"),
    # ---- graph engine (ge_error_codes.h), returned by aclmdl* model APIs
    ("ACL_ERROR_GE_PARAM_INVALID", 145000, "param", "GE: parameter invalid"),
    ("ACL_ERROR_GE_EXEC_NOT_INIT", 145001, "state", "GE: not initialized"),
    ("ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID", 145002, "param", "GE: invalid model path"),
    ("ACL_ERROR_GE_EXEC_MODEL_ID_INVALID", 145003, "param", "GE: invalid model id"),
    ("ACL_ERROR_GE_EXEC_MODEL_DATA_SIZE_INVALID", 145006, "", "GE: invalid model size"),
    ("ACL_ERROR_GE_EXEC_MODEL_ADDR_INVALID", 145007, "param", "GE: invalid model memory address"),
    ("ACL_ERROR_GE_EXEC_MODEL_QUEUE_ID_INVALID", 145008, "param", "GE: invalid queue id"),
    ("ACL_ERROR_GE_EXEC_LOAD_MODEL_REPEATED", 145009, "state", "GE: repeated initialization or load"),
    ("ACL_ERROR_GE_DYNAMIC_INPUT_ADDR_INVALID", 145011, "param", "GE: invalid dynamic-shape input address"),
    ("ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID", 145012, "param", "GE: invalid dynamic-shape input length"),
    ("ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID", 145013, "param", "GE: invalid dynamic batch size"),
    ("ACL_ERROR_GE_AIPP_BATCH_EMPTY", 145014, "param", "GE: invalid AIPP batch size"),
    ("ACL_ERROR_GE_AIPP_NOT_EXIST", 145015, "", "GE: AIPP configuration does not exist"),
    ("ACL_ERROR_GE_AIPP_MODE_INVALID", 145016, "", "GE: invalid AIPP mode"),
    ("ACL_ERROR_GE_OP_TASK_TYPE_INVALID", 145017, "", "GE: invalid task type"),
    ("ACL_ERROR_GE_OP_KERNEL_TYPE_INVALID", 145018, "", "GE: invalid operator kernel type"),
    ("ACL_ERROR_GE_PLGMGR_PATH_INVALID", 145019, "", "GE: invalid plugin .so path"),
    ("ACL_ERROR_GE_FORMAT_INVALID", 145020, "param", "GE: invalid format"),
    ("ACL_ERROR_GE_SHAPE_INVALID", 145021, "param", "GE: invalid shape"),
    ("ACL_ERROR_GE_DATATYPE_INVALID", 145022, "param", "GE: invalid data type"),
    ("ACL_ERROR_GE_MEMORY_ALLOCATION", 245000, "oom", "GE: memory allocation failed"),
    ("ACL_ERROR_GE_MEMORY_OPERATE_FAILED", 245001, "", "GE: memory init or copy failed"),
    ("ACL_ERROR_GE_DEVICE_MEMORY_OPERATE_FAILED", 245002, "oom", "GE: device memory allocation failed"),
    ("ACL_ERROR_GE_SUBHEALTHY", 345102, "", "GE: sub-healthy after redeployment"),
    ("ACL_ERROR_GE_USER_RAISE_EXCEPTION", 345103, "", "GE: user function raised an exception"),
    ("ACL_ERROR_GE_DATA_NOT_ALIGNED", 345104, "", "GE: data not aligned"),
    ("ACL_ERROR_GE_INTERNAL_ERROR", 545000, "", "GE: unknown internal error"),
    ("ACL_ERROR_GE_LOAD_MODEL", 545001, "", "GE: failed to load model"),
    ("ACL_ERROR_GE_EXEC_LOAD_MODEL_PARTITION_FAILED", 545002, "", "GE: failed to load model partition"),
    ("ACL_ERROR_GE_EXEC_LOAD_WEIGHT_PARTITION_FAILED", 545003, "", "GE: failed to load model weights"),
    ("ACL_ERROR_GE_EXEC_LOAD_TASK_PARTITION_FAILED", 545004, "", "GE: failed to load model tasks"),
    ("ACL_ERROR_GE_EXEC_LOAD_KERNEL_PARTITION_FAILED", 545005, "", "GE: failed to load model kernels"),
    ("ACL_ERROR_GE_EXEC_RELEASE_MODEL_DATA", 545006, "", "GE: failed to release model memory"),
    ("ACL_ERROR_GE_COMMAND_HANDLE", 545007, "", "GE: command failed"),
    ("ACL_ERROR_GE_GET_TENSOR_INFO", 545008, "", "GE: failed to get tensor info"),
    ("ACL_ERROR_GE_UNLOAD_MODEL", 545009, "", "GE: failed to unload model"),
    ("ACL_ERROR_GE_MODEL_EXECUTE_TIMEOUT", 545601, "timeout", "GE: model execution timed out"),
    ("ACL_ERROR_GE_REDEPLOYING", 545602, "", "GE: redeployment in progress"),
)

CODES: tuple[Code, ...] = tuple(Code(*row) for row in _TABLE)
BY_NAME: dict[str, Code] = {c.name: c for c in CODES}
BY_VALUE: dict[int, Code] = {}
for _c in CODES:  # first name wins: BY_VALUE[0] is ACL_SUCCESS
    BY_VALUE.setdefault(_c.value, _c)
assert len(BY_NAME) == len(CODES), "duplicate error-code name"

globals().update({c.name: c.value for c in CODES})


# ---- internal rt codes named by the specs (for docs and traces; the simulator returns external codes)
class Internal(NamedTuple):
    """An internal ``RT_ERROR_*`` code: its value (shown in hex by the runtime's logs) and the
    external code ``errcode_manage.cc`` translates it to."""
    value: int
    external: int


INTERNAL: dict[str, Internal] = {n: Internal(v, e) for n, v, e in (
    ("RT_ERROR_NONE", 0x0, 0),
    ("RT_ERROR_DEVICE_NULL", 0x07010001, 507033),
    ("RT_ERROR_DEVICE_ID", 0x07010003, 107001),
    ("RT_ERROR_DRV_NO_EVENT_RESOURCES", 0x07020019, 207007),
    ("RT_ERROR_DRV_NO_STREAM_RESOURCES", 0x0702001A, 207008),
    ("RT_ERROR_DRV_NO_NOTIFY_RESOURCES", 0x0702001B, 207009),
    ("RT_ERROR_DRV_NO_MODEL_RESOURCES", 0x0702001C, 207010),
    ("RT_ERROR_DRV_NOT_SUPPORT", 0x0702001D, 207000),
    ("RT_ERROR_DRV_NO_RESOURCES", 0x07020023, 207005),
    ("RT_ERROR_DRV_NOT_SUPPORT_UPDATE_OP", 0x07020026, 207019),
    ("RT_ERROR_STREAM_NULL", 0x07030001, 507000),
    ("RT_ERROR_STREAM_CONTEXT", 0x07030003, 107003),
    ("RT_ERROR_STREAM_INVALID", 0x07030004, 507000),
    ("RT_ERROR_STREAM_MODEL", 0x07030005, 107005),
    ("RT_ERROR_STREAM_FULL", 0x07030007, 507002),
    ("RT_ERROR_STREAM_NOT_COMPLETE", 0x07030009, 507004),
    ("RT_ERROR_STREAM_SYNC_TIMEOUT", 0x07030010, 507046),
    # internal signal "stream left capture", never returned; unmapped, so it would become 507000
    ("RT_ERROR_STREAM_CAPTURE_EXIT", 0x07030018, 507000),
    ("RT_ERROR_STREAM_CAPTURED", 0x07030019, 107027),
    ("RT_ERROR_STREAM_CAPTURE_INVALIDATED", 0x0703001A, 507903),
    ("RT_ERROR_STREAM_NOT_CAPTURED", 0x0703001B, 107029),
    ("RT_ERROR_STREAM_CAPTURE_MODE_NOT_SUPPORT", 0x0703001C, 107030),
    ("RT_ERROR_STREAM_CAPTURE_IMPLICIT", 0x0703001D, 107031),
    ("RT_ERROR_STREAM_UNJOINED", 0x0703001F, 107025),
    ("RT_ERROR_STREAM_CAPTURE_CONFLICT", 0x07030020, 107032),
    ("RT_ERROR_STREAM_TASKGRP_STATUS", 0x07030021, 107033),
    ("RT_ERROR_STREAM_TASKGRP_INTR", 0x07030023, 107034),
    ("RT_ERROR_STREAM_TASKGRP_UPDATE", 0x07030024, 507000),
    ("RT_ERROR_STREAM_CAPTURE_UNMATCHED", 0x07030025, 107036),
    ("RT_ERROR_STREAM_CAPTURE_WRONG_THREAD", 0x07030026, 107038),
    ("RT_ERROR_STREAM_CAPTURE_MODE_BLOCK_ASYNC", 0x07030027, 107041),
    ("RT_ERROR_STREAM_SUB_ACLGRAPH_IS_CAPTURING", 0x07030028, 107045),
    ("RT_ERROR_MODEL_NULL", 0x07040001, 507000),
    ("RT_ERROR_MODEL_CONTEXT", 0x07040003, 107004),
    ("RT_ERROR_MODEL_EXE_FAILED", 0x07040009, 507011),
    ("RT_ERROR_MODEL_ABORT_NORMAL", 0x0704000E, 507023),
    ("RT_ERROR_MODEL_NOT_END", 0x0704000F, 507011),
    ("RT_ERROR_MODEL_CAPTURED", 0x07040010, 107026),
    ("RT_ERROR_MODEL_CAPTURE_STATUS", 0x07040011, 507000),
    ("RT_ERROR_MODEL_RUNNING", 0x07040012, 107037),
    ("RT_ERROR_MODEL_UPDATE_FAILED", 0x07040014, 107040),
    ("RT_ERROR_EVENT_NULL", 0x07050001, 507000),
    ("RT_ERROR_EVENT_NOT_COMPLETE", 0x07050006, 507006),
    ("RT_ERROR_EVENT_SYNC_TIMEOUT", 0x07050007, 507047),
    ("RT_ERROR_EVENT_CAPTURED", 0x07050008, 107028),
    ("RT_ERROR_CAPTURE_DEPENDENCY", 0x07050009, 107024),
    ("RT_ERROR_STREAM_CAPTURE_ISOLATION", 0x0705000A, 107024),
    ("RT_ERROR_CONTEXT_NULL", 0x07070001, 107002),
    ("RT_ERROR_KERNEL_NULL", 0x07080001, 507000),
    ("RT_ERROR_KERNEL_LOOKUP", 0x07080003, 507027),
    ("RT_ERROR_KERNEL_TYPE", 0x07080005, 507000),
    ("RT_ERROR_KERNEL_DUPLICATE", 0x07080007, 507028),
    ("RT_ERROR_KERNEL_INVALID", 0x07080009, 107017),
    ("RT_ERROR_SYMBOL_NOT_FOUND", 0x0708000A, 107042),
    ("RT_ERROR_INVALID_DEVICE_FUNCTION", 0x0708000C, 107044),
    ("RT_ERROR_PROGRAM_NULL", 0x07090001, 507000),
    ("RT_ERROR_PROGRAM_DATA", 0x07090003, 507000),
    ("RT_ERROR_PROGRAM_SIZE", 0x07090004, 507000),
    ("RT_ERROR_PROGRAM_USEOUT", 0x07090007, 507032),
    ("RT_ERROR_INSTANCE_NULL", 0x070B0001, 507000),
    ("RT_ERROR_TASK_NOT_SUPPORT", 0x07100003, 507009),
    ("RT_ERROR_INVALID_VALUE", 0x07110001, 107000),
    ("RT_ERROR_SEC_HANDLE", 0x07110003, 507000),
    ("RT_ERROR_CALLOC", 0x07110007, 507000),
    ("RT_ERROR_FEATURE_NOT_SUPPORT", 0x0711000D, 207000),
    ("RT_ERROR_MEMORY_ALLOCATION", 0x0711000E, 207001),
    ("RT_ERROR_DEVICE_OOM", 0x07110012, 207018),
    ("RT_ERROR_INSUFFICIENT_INPUT_ARRAY", 0x07110015, 107039),
    ("RT_ERROR_INVALID_HANDLE", 0x07110016, 107017),
    ("RT_ERROR_TSFW_AICORE_TIMEOUT", 0x07150025, 507014),
    ("RT_ERROR_TSFW_AICORE_EXCEPTION", 0x07150026, 507015),
    ("RT_ERROR_TSFW_AICORE_TRAP_EXCEPTION", 0x07150027, 507016),
    ("RT_ERROR_TSFW_VECTOR_CORE_EXCEPTION", 0x0715005E, 507035),
    ("RT_ERROR_TSFW_VECTOR_CORE_TRAP_EXCEPTION", 0x0715005F, 507036),
)}
RT_ERRORCODE_BASE = 0x07010000  # smallest internal code (internal_error_define.hpp)
_INTERNAL_BY_VALUE = {i.value: i.external for i in INTERNAL.values()}


def to_external(internal: int) -> int:
    """Translate an internal rt code the way ``ErrorcodeManage::GetRtExtErrCode`` does: table hit ->
    its external code; an unknown code >= ``RT_ERRORCODE_BASE`` -> 507000; anything smaller is
    already external and passes through."""
    if internal in _INTERNAL_BY_VALUE:
        return _INTERNAL_BY_VALUE[internal]
    return BY_NAME["ACL_ERROR_RT_INTERNAL_ERROR"].value if internal >= RT_ERRORCODE_BASE else internal


# ---- exceptions of the Pythonic API
class AclError(Exception):
    """A failed ACL call. ``.code`` is the number the C API would return, ``.name`` its C name.

    Catch a family (``CaptureError``, ``ResourceError`` ...) or the base class; compare ``.code``
    against the module constants for one exact case.
    """

    def __init__(self, code: int, detail: str = ""):
        super().__init__(code, detail)  # keeps the exception picklable
        c = BY_VALUE.get(code)
        self.code = int(code)
        self.name = c.name if c else "ACL_ERROR_UNKNOWN"
        self.meaning = c.meaning if c else "unknown error code"
        self.detail = detail

    def __str__(self) -> str:
        s = f"{self.name} ({self.code}): {self.meaning}"
        return f"{s} — {self.detail}" if self.detail else s

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code}, {self.detail!r})"


class UsageError(AclError):
    """1xxxxx: the caller's code or environment is wrong (fixable by the program)."""


class ParamError(UsageError):
    """An argument is invalid (100000, 107000, bad device id, unaligned address, bad symbol ...)."""


class HandleError(UsageError):
    """A handle of the wrong type or already destroyed (107017)."""


class ContextError(UsageError):
    """No current context, or an object belongs to another context / is bound to a model."""


class StateError(UsageError):
    """The call is not valid in the current state (not initialized, not subscribed, aborting ...)."""


class CaptureError(UsageError):
    """Stream capture / ACL Graph rules: 107024-107041, 107045 and an invalidated capture (507903)."""


class ResourceError(AclError):
    """2xxxxx: a resource ran out (streams, events, notifies, models, SQ/CQ ...)."""


class OutOfMemory(ResourceError):
    """Host or device memory exhausted (200000, 207001, 207018 ...)."""


class FeatureNotSupported(AclError):
    """The chip, driver or mode does not support the operation (207000, 200001, 207019, 507009 ...)."""


class ServiceError(AclError):
    """3xxxxx: a business-function failure (storage over limit, GE sub-healthy ...)."""


class InternalError(AclError):
    """5xxxxx: runtime-internal failure the program cannot fix (507000 ...)."""


class DeviceError(InternalError):
    """The device failed while executing (model execute failure, DMA, memory ECC, lost heartbeat)."""


class KernelError(DeviceError):
    """A kernel faulted on the device: AI Core / vector core exception, trap, timeout, overflow.
    The simulator reports out-of-bounds kernel memory access as 507035, like the real runtime."""


class AclTimeoutError(AclError, TimeoutError):
    """A wait or synchronize timed out (107019, 107020, 507046, 507047 ...); also a ``TimeoutError``."""


_FAMILY = {
    "param": ParamError, "handle": HandleError, "context": ContextError, "state": StateError,
    "capture": CaptureError, "timeout": AclTimeoutError, "oom": OutOfMemory,
    "resource": ResourceError, "unsupported": FeatureNotSupported, "device": DeviceError,
    "kernel": KernelError,
}
_BY_LEADING_DIGIT = {1: UsageError, 2: ResourceError, 3: ServiceError, 5: InternalError}


def class_for(code: int) -> type[AclError]:
    """The exception class for ``code``: its family, else its leading digit's default."""
    c = BY_VALUE.get(code)
    if c is not None and c.family in _FAMILY:
        return _FAMILY[c.family]
    return _BY_LEADING_DIGIT.get(code // 100000, AclError)


def error_for(code: int, detail: str = "") -> AclError:
    """Build (not raise) the exception for a non-zero code; ``detail`` says what was being done."""
    if code == 0:
        raise ValueError("error_for(0): 0 is ACL_SUCCESS, not an error")
    return class_for(code)(code, detail)


def check(code: int, detail: str = "") -> None:
    """Raise the matching :class:`AclError` if ``code`` is not 0 (the Pythonic API's one-liner)."""
    if code != 0:
        raise error_for(code, detail)


# ---- warnings (the checks that leave the return code as the runtime gives it)
class NpusimWarning(UserWarning):
    """A program npusim runs as the runtime would, but that is probably wrong."""


class CaptureWarning(NpusimWarning):
    """Capture lint: e.g. eager work on a stream a GLOBAL capture never joined
    (``npusim.analysis.lint``)."""


class ArgumentWarning(NpusimWarning):
    """A launch or task update whose arguments do not match the kernel's declared parameters
    (``npusim.runtime.argcheck``; ``configure(check_args="error")`` refuses it instead)."""


def name_of(code: int) -> str:
    """C name of ``code`` (canonical name for 0: ``ACL_SUCCESS``), or ``ACL_ERROR_UNKNOWN``."""
    c = BY_VALUE.get(code)
    return c.name if c else "ACL_ERROR_UNKNOWN"


__all__ = [c.name for c in CODES] + [
    "Code", "CODES", "BY_NAME", "BY_VALUE", "Internal", "INTERNAL", "RT_ERRORCODE_BASE",
    "to_external", "AclError", "UsageError", "ParamError", "HandleError", "ContextError",
    "StateError", "CaptureError", "ResourceError", "OutOfMemory", "FeatureNotSupported",
    "ServiceError", "InternalError", "DeviceError", "KernelError", "AclTimeoutError",
    "class_for", "error_for", "check", "name_of", "NpusimWarning", "CaptureWarning",
    "ArgumentWarning",
]
