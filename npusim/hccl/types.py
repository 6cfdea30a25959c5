"""HCCL's enums and constants with their C names (layer 0: imports nothing of npusim).

Sources (read, not copied): ``hcomm`` ``include/hccl/hccl_types.h`` (HcclResult, HcclReduceOp,
HcclDataType, HcclSendRecvType, HcclCMDType, root-info and config constants),
``include/hccl/hccl_comm.h`` ``HcclCommConfigInit`` (the config defaults), the error texts of
``HcclGetErrorString`` in hcomm ``src/framework/op_base/src/op_base.cc`` (its ``errorMap``), and
``hccl`` ``docs/zh/user_guide/hccl_env/`` (HCCL_BUFFSIZE 200 MB, HCCL_EXEC_TIMEOUT 1836 s).
spec/hccl.md §2 lists the codes; docs/fidelity.md rows 380-381 record the choices.
"""
from __future__ import annotations

# ---- HcclResult (hccl_types.h)
HCCL_SUCCESS = 0
HCCL_E_PARA = 1
HCCL_E_PTR = 2
HCCL_E_MEMORY = 3
HCCL_E_INTERNAL = 4
HCCL_E_NOT_SUPPORT = 5
HCCL_E_NOT_FOUND = 6
HCCL_E_UNAVAIL = 7
HCCL_E_SYSCALL = 8
HCCL_E_TIMEOUT = 9
HCCL_E_OPEN_FILE_FAILURE = 10
HCCL_E_TCP_CONNECT = 11
HCCL_E_ROCE_CONNECT = 12
HCCL_E_TCP_TRANSFER = 13
HCCL_E_ROCE_TRANSFER = 14
HCCL_E_RUNTIME = 15
HCCL_E_DRV = 16
HCCL_E_PROFILING = 17
HCCL_E_CCE = 18
HCCL_E_NETWORK = 19
HCCL_E_AGAIN = 20
HCCL_E_REMOTE = 21
HCCL_E_SUSPENDING = 22
HCCL_E_OPRETRY_FAIL = 23
HCCL_E_OOM = 24
HCCL_E_IN_STATUS = 1041
HCCL_E_RESERVED = 1042          # the enumerator after HCCL_E_IN_STATUS

RESULT_NAMES: dict[int, str] = {v: k for k, v in globals().items()
                                if k.startswith("HCCL_E_") or k == "HCCL_SUCCESS"}
"""HcclResult value -> C name."""

# HcclGetErrorString's table (hcomm op_base.cc errorMap): only codes 0-21 have a text there.
_ERROR_TEXT = {
    HCCL_SUCCESS: "no error", HCCL_E_PARA: "parameter error", HCCL_E_PTR: "empty pointer",
    HCCL_E_MEMORY: "memory error", HCCL_E_INTERNAL: "internal error",
    HCCL_E_NOT_SUPPORT: "not support feature", HCCL_E_NOT_FOUND: "not found specific resource",
    HCCL_E_UNAVAIL: "resource unavailable", HCCL_E_SYSCALL: "call system interface error",
    HCCL_E_TIMEOUT: "timeout", HCCL_E_OPEN_FILE_FAILURE: "open file fail",
    HCCL_E_TCP_CONNECT: "tcp connect fail", HCCL_E_ROCE_CONNECT: "roce connect fail",
    HCCL_E_TCP_TRANSFER: "tcp transfer fail", HCCL_E_ROCE_TRANSFER: "roce transfer fail",
    HCCL_E_RUNTIME: "call runtime api fail", HCCL_E_DRV: "call driver api fail",
    HCCL_E_PROFILING: "call profiling api fail", HCCL_E_CCE: "call cce api fail",
    HCCL_E_NETWORK: "call network api fail", HCCL_E_AGAIN: "try again",
    HCCL_E_REMOTE: "error cqe",
}
UNKNOWN_ERROR_TEXT = "unknow error"     # sic: the source's spelling


def get_error_string(code) -> str:
    """HcclGetErrorString: the source's text for codes 0-21; "unknow error" (the source's own
    out-of-range text, spelled as it spells it) for every other value. The real table has no
    entry for 22-24 and 1041 and its ``std::map::at`` would throw there (docs/fidelity.md
    row 380): npusim answers "unknow error" instead of aborting the process."""
    return _ERROR_TEXT.get(code, UNKNOWN_ERROR_TEXT) if isinstance(code, int) else \
        UNKNOWN_ERROR_TEXT


# ---- HcclReduceOp
HCCL_REDUCE_SUM = 0
HCCL_REDUCE_PROD = 1
HCCL_REDUCE_MAX = 2
HCCL_REDUCE_MIN = 3
HCCL_REDUCE_RESERVED = 255
REDUCE_OPS = (HCCL_REDUCE_SUM, HCCL_REDUCE_PROD, HCCL_REDUCE_MAX, HCCL_REDUCE_MIN)
REDUCE_OP_NAMES = {HCCL_REDUCE_SUM: "sum", HCCL_REDUCE_PROD: "prod", HCCL_REDUCE_MAX: "max",
                   HCCL_REDUCE_MIN: "min"}

# ---- HcclDataType
HCCL_DATA_TYPE_INT8 = 0
HCCL_DATA_TYPE_INT16 = 1
HCCL_DATA_TYPE_INT32 = 2
HCCL_DATA_TYPE_FP16 = 3
HCCL_DATA_TYPE_FP32 = 4
HCCL_DATA_TYPE_INT64 = 5
HCCL_DATA_TYPE_UINT64 = 6
HCCL_DATA_TYPE_UINT8 = 7
HCCL_DATA_TYPE_UINT16 = 8
HCCL_DATA_TYPE_UINT32 = 9
HCCL_DATA_TYPE_FP64 = 10
HCCL_DATA_TYPE_BFP16 = 11
HCCL_DATA_TYPE_INT128 = 12
HCCL_DATA_TYPE_HIF8 = 14
HCCL_DATA_TYPE_FP8E4M3 = 15
HCCL_DATA_TYPE_FP8E5M2 = 16
HCCL_DATA_TYPE_FP8E8M0 = 17
HCCL_DATA_TYPE_RESERVED = 255

DATA_TYPE_SIZE: dict[int, int] = {
    HCCL_DATA_TYPE_INT8: 1, HCCL_DATA_TYPE_INT16: 2, HCCL_DATA_TYPE_INT32: 4,
    HCCL_DATA_TYPE_FP16: 2, HCCL_DATA_TYPE_FP32: 4, HCCL_DATA_TYPE_INT64: 8,
    HCCL_DATA_TYPE_UINT64: 8, HCCL_DATA_TYPE_UINT8: 1, HCCL_DATA_TYPE_UINT16: 2,
    HCCL_DATA_TYPE_UINT32: 4, HCCL_DATA_TYPE_FP64: 8, HCCL_DATA_TYPE_BFP16: 2,
    HCCL_DATA_TYPE_INT128: 16, HCCL_DATA_TYPE_HIF8: 1, HCCL_DATA_TYPE_FP8E4M3: 1,
    HCCL_DATA_TYPE_FP8E5M2: 1, HCCL_DATA_TYPE_FP8E8M0: 1,
}
"""Bytes per element of every HcclDataType (the enumerator comments of hccl_types.h)."""

DATA_TYPE_NAMES: dict[int, str] = {v: k for k, v in globals().items()
                                   if k.startswith("HCCL_DATA_TYPE_")
                                   and k != "HCCL_DATA_TYPE_RESERVED"}

REDUCIBLE_TYPES = frozenset({
    HCCL_DATA_TYPE_INT8, HCCL_DATA_TYPE_INT16, HCCL_DATA_TYPE_INT32, HCCL_DATA_TYPE_FP16,
    HCCL_DATA_TYPE_FP32, HCCL_DATA_TYPE_INT64, HCCL_DATA_TYPE_UINT64, HCCL_DATA_TYPE_UINT8,
    HCCL_DATA_TYPE_UINT16, HCCL_DATA_TYPE_UINT32, HCCL_DATA_TYPE_FP64, HCCL_DATA_TYPE_BFP16})
"""Types ``npusim.hccl.move`` reduces (the 8-bit float formats and INT128 only move)."""


def data_type_size(dtype) -> int:
    """Bytes per element of ``dtype``; 0 for a value that is not an HcclDataType."""
    return DATA_TYPE_SIZE.get(dtype, 0) if isinstance(dtype, int) else 0


# ---- HcclSendRecvType
HCCL_SEND = 0
HCCL_RECV = 1

# ---- HcclCMDType (the collectives the op log names)
HCCL_CMD_INVALID = 0
HCCL_CMD_BROADCAST = 1
HCCL_CMD_ALLREDUCE = 2
HCCL_CMD_REDUCE = 3
HCCL_CMD_SEND = 4
HCCL_CMD_RECEIVE = 5
HCCL_CMD_ALLGATHER = 6
HCCL_CMD_REDUCE_SCATTER = 7
HCCL_CMD_ALLTOALLV = 8
HCCL_CMD_ALLTOALLVC = 9
HCCL_CMD_ALLTOALL = 10
HCCL_CMD_GATHER = 11
HCCL_CMD_SCATTER = 12
HCCL_CMD_BATCH_SEND_RECV = 13
HCCL_CMD_BARRIER = 103

# ---- sizes and configuration (hccl_types.h, hccl_comm.h, hccl_env/)
HCCL_ROOT_INFO_BYTES = 4108
COMM_NAME_MAX_LENGTH = 128
BUFFER_NAME_MAX_LENGTH = 128
UDI_MAX_LENGTH = 128
HCCL_COMM_ALGO_MAX_LENGTH = 1600
HCCL_COMM_CONFIG_INFO_BYTES = 24
HCCL_COMM_CONFIG_MAGIC_WORD = 0xF0F0F0F0
HCCL_COMM_CONFIG_VERSION = 10
HCCL_COMM_DEFAULT_BUFFSIZE = 200                  # MB
HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET = 0xFFFFFFFF
HCCL_COMM_DEFAULT_DETERMINISTIC = 0
HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET = 0xFFFFFFFF
HCCL_COMM_DEFAULT_OP_EXPANSION_MODE = 0
HCCL_COMM_TRAFFIC_CLASS_CONFIG_NOT_SET = 0xFFFFFFFF
HCCL_COMM_SERVICE_LEVEL_CONFIG_NOT_SET = 0xFFFFFFFF
HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET = -1         # int32 0xffffffff
HCCL_DEFAULT_SYMMETRIC_MEMORY_STRIDE = 16

HCCL_BUFFSIZE_DEFAULT_MB = 200
"""``HCCL_BUFFSIZE`` default (hccl_env/HCCL_BUFFSIZE.md): the CCL buffer of each communicator,
in MB (two of them per communicator, spec/hccl.md §3)."""
HCCL_EXEC_TIMEOUT_DEFAULT_S = 1836
"""``HCCL_EXEC_TIMEOUT`` default in seconds (hccl_env/HCCL_EXEC_TIMEOUT.md)."""
HCCL_BUFFSIZE_BYTES = HCCL_BUFFSIZE_DEFAULT_MB * 1024 * 1024


def comm_config_defaults() -> dict:
    """A fresh ``HcclCommConfig`` as ``HcclCommConfigInit`` leaves it (hcomm hccl_comm.h), keyed
    by the C field names; "not set" sentinels mean the environment variable or built-in default
    (``HCCL_BUFFSIZE`` 200 MB, ``HCCL_EXEC_TIMEOUT`` 1836 s) applies."""
    return {
        "hcclBufferSize": HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET,
        "hcclDeterministic": HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET,
        "hcclCommName": "", "hcclUdi": "",
        "hcclOpExpansionMode": HCCL_COMM_DEFAULT_OP_EXPANSION_MODE,
        "hcclRdmaTrafficClass": HCCL_COMM_TRAFFIC_CLASS_CONFIG_NOT_SET,
        "hcclRdmaServiceLevel": HCCL_COMM_SERVICE_LEVEL_CONFIG_NOT_SET,
        "hcclWorldRankID": 0, "hcclJobID": 0, "aclGraphZeroCopyEnable": 0,
        "hcclExecTimeOut": HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET,
        "hcclAlgo": "", "hcclRetryEnable": "", "hcclRetryParams": "", "hcclBufferName": "",
        "hcclSymWinMaxMemSizePerRank": HCCL_DEFAULT_SYMMETRIC_MEMORY_STRIDE,
    }


# ---- the facade's checks (hccl src/ops/op_common/op_common.cc, src/common/hccl_common.h)
SYS_MAX_COUNT = 0x7FFFFFFFF
"""The largest count a collective takes (``hccl_common.h`` ``SYS_MAX_COUNT``; ``CheckCount``:
more is HCCL_E_PARA)."""
VALID_DATA_TYPES = frozenset(DATA_TYPE_SIZE)
"""``VALID_HCCL_DATA_TYPES`` (``hccl_common.h``): every enumerator but the gap 13 and RESERVED."""
REDUCE_UNSUPPORTED = frozenset({HCCL_DATA_TYPE_UINT8, HCCL_DATA_TYPE_UINT16, HCCL_DATA_TYPE_UINT32,
                                HCCL_DATA_TYPE_INT128, HCCL_DATA_TYPE_HIF8, HCCL_DATA_TYPE_FP8E4M3,
                                HCCL_DATA_TYPE_FP8E5M2, HCCL_DATA_TYPE_FP8E8M0})
"""Types ``CheckDataType(dataType, needReduce=true)`` refuses (HCCL_E_NOT_SUPPORT)."""
PROD_TYPES = frozenset({HCCL_DATA_TYPE_INT8, HCCL_DATA_TYPE_INT32, HCCL_DATA_TYPE_INT64,
                        HCCL_DATA_TYPE_UINT64, HCCL_DATA_TYPE_FP16, HCCL_DATA_TYPE_FP32,
                        HCCL_DATA_TYPE_FP64})
"""The types ``CheckReduceOp`` lets HCCL_REDUCE_PROD reduce (else HCCL_E_NOT_SUPPORT)."""
HCCL_CONNECT_TIMEOUT_S = 120
"""``HCCL_CONNECT_TIMEOUT`` default (hccl_env/HCCL_CONNECT_TIMEOUT.md): how long a rank's
communicator init waits for the others."""
ROOT_INFO_MAGIC = b"npusim-hccl-root"
"""The first bytes of a root info npusim makes (the rest: its id, then zeros)."""


def dtype_supported(dtype, reduce: bool) -> bool:
    """``CheckDataType``: a valid HcclDataType, and for a reduction not one of
    :data:`REDUCE_UNSUPPORTED`; INT128 never (it only moves in no collective)."""
    if dtype not in VALID_DATA_TYPES:
        return False
    return dtype not in REDUCE_UNSUPPORTED if reduce else dtype != HCCL_DATA_TYPE_INT128


def reduce_op_supported(dtype, op) -> bool:
    """``CheckReduceOp``: PROD only over :data:`PROD_TYPES`."""
    return op != HCCL_REDUCE_PROD or dtype in PROD_TYPES


def dtype_name(dtype) -> str:
    return DATA_TYPE_NAMES.get(dtype, f"HcclDataType {dtype!r}")


def reduce_op_name(op) -> str:
    return REDUCE_OP_NAMES.get(op, f"HcclReduceOp {op!r}")
