"""The SQE: one 64-byte row of a structured numpy array, and the opcode table.

A real STARS SQE is 64 bytes; ours is too, so "bytes of engine memory per queued SQE" is an honest
64. The host layer writes rows (or whole slices) of ``SQE_DTYPE``; the jitted engine reads them.
Every opcode is defined once here, with the task-type name the runtime's dumps print for it.

Operand meaning per opcode (``a0`` .. ``a5`` are int64):

=================  =============================================================================
NOP                 -
KERNEL              a0 kernel id (row of the kernel table), a1 args device address, a2 args size,
                    a3 explicit duration in ns (0: the kernel's cost model), blocks = numBlocks
MEMCPY              a0 dst address, a1 src address, a2 byte count, flag = memcpy kind (bits 0-1)
                    and at most one address mode (MEMCPY_PTR / MEMCPY_DESC / MEMCPY_2D below)
MEMSET              a0 dst address, a1 byte value (flag MEMSET_D32: the 32-bit word), a2 bytes
EVENT_RECORD        a0 sync slot, a1 value written (a record's sequence number; 1 for hardware)
EVENT_WAIT          a0 sync slot, a1 value waited for (slot >= a1); flag WAIT_RESET clears after
                    (flag CNT: a counting-notify wait, its mode in bits 1-3)
EVENT_RESET         a0 sync slot
NOTIFY_RECORD       a0 sync slot (the slot is set to 1)
NOTIFY_WAIT         a0 sync slot; waits for the slot >= 1 and consumes it (resets to 0)
MEM_WRITE_VALUE     a0 address, a1 value, a2 width in bytes (1, 2, 4, 8)
MEM_WAIT_VALUE      a0 address, a1 value, a2 width, flag = comparison (WAIT_GEQ, WAIT_EQ, ...)
STREAM_ACTIVE       a0 SQ id to activate (cascade hop, model stream activation)
END_GRAPH           a0 sync slot of the model's EndGraph notify (recorded like NOTIFY_RECORD)
MODEL_EXECUTE       a0 model id: activates the model's head SQs (device side of a graph launch)
COND_FIRST          a0 cond id (function-call SQE that reads the cond word and starts a branch)
COND_NOTIFY_WAIT    a0 cond id (waits for the chosen branch's EndGraph notify)
COND_JUMP_BACK      a0 cond id (WHILE: back to COND_FIRST)
SQE_UPDATE          a0 source row in the pool, a1 destination row, a2 the SQ whose ring holds it
                    (task update, async on a stream)
STREAM_SWITCH       a0 left value address, a1 right value address, a2 SQ to activate when the
                    comparison holds, flag = condition (SWITCH_EQ ...) | SWITCH_INT64 (8-byte
                    signed values; else 4-byte signed); taken, the switching SQ stops
                    (aclrtSwitchStream, ``TS_TASK_TYPE_STREAM_SWITCH``)
=================  =============================================================================

``a4``/``a5`` are never read by the engine; while ``npusim.analysis`` records, the host puts the
host epoch (eager SQEs) and the issuing source site there, and they reach the access log.
"""
from __future__ import annotations

import struct

import numpy as np

SQE_DTYPE = np.dtype([
    ("op", np.uint8),        # opcode (OP_* below)
    ("flag", np.uint8),      # opcode-specific flag (memcpy kind, wait comparison, ...)
    ("blocks", np.uint16),   # numBlocks of a kernel (the runtime stores it as u16)
    ("task_id", np.uint32),  # the task id the runtime would report (per stream, wraps at 2**16)
    ("a0", np.int64), ("a1", np.int64), ("a2", np.int64),
    ("a3", np.int64), ("a4", np.int64), ("a5", np.int64),
    ("t_submit", np.int64),  # host time (ns) at which the doorbell for this SQE rang; 0 in models
])
assert SQE_DTYPE.itemsize == 64
# the same layout as a struct, for packing rows on the host without touching numpy per row
SQE_STRUCT = struct.Struct("<BBHI7q")
assert SQE_STRUCT.size == SQE_DTYPE.itemsize

# name, value, task-type name printed by dumps
OPCODES = (
    ("NOP", 0, "NOP"),
    ("KERNEL", 1, "KERNEL_AICORE"),
    ("MEMCPY", 2, "MEMCPY_ASYNC"),
    ("MEMSET", 3, "MEMSET_ASYNC"),
    ("EVENT_RECORD", 4, "EVENT_RECORD"),
    ("EVENT_WAIT", 5, "EVENT_WAIT"),
    ("EVENT_RESET", 6, "EVENT_RESET"),
    ("NOTIFY_RECORD", 7, "NOTIFY_RECORD"),
    ("NOTIFY_WAIT", 8, "NOTIFY_WAIT"),
    ("MEM_WRITE_VALUE", 9, "MEM_WRITE_VALUE"),
    ("MEM_WAIT_VALUE", 10, "MEM_WAIT_VALUE"),
    ("STREAM_ACTIVE", 11, "STREAM_ACTIVE"),
    ("END_GRAPH", 12, "NOTIFY_RECORD"),
    ("MODEL_EXECUTE", 13, "MODEL_EXECUTE"),
    ("COND_FIRST", 14, "CONDITION_OP"),
    ("COND_NOTIFY_WAIT", 15, "NOTIFY_WAIT"),
    ("COND_JUMP_BACK", 16, "CONDITION_OP"),
    ("SQE_UPDATE", 17, "SQE_UPDATE"),
    ("STREAM_SWITCH", 18, "STREAM_SWITCH"),
    ("LABEL_SWITCH", 19, "STREAM_LABEL_SWITCH_BY_INDEX"),
)
N_OPCODES = len(OPCODES)
OP_NAME = {v: n for n, v, _ in OPCODES}
OP_VALUE = {n: v for n, v, _ in OPCODES}
OP_TASK_TYPE = {v: t for _, v, t in OPCODES}
assert sorted(OP_NAME) == list(range(N_OPCODES))

OP_NOP, OP_KERNEL, OP_MEMCPY, OP_MEMSET = 0, 1, 2, 3
OP_EVENT_RECORD, OP_EVENT_WAIT, OP_EVENT_RESET = 4, 5, 6
OP_NOTIFY_RECORD, OP_NOTIFY_WAIT = 7, 8
OP_MEM_WRITE_VALUE, OP_MEM_WAIT_VALUE = 9, 10
OP_STREAM_ACTIVE, OP_END_GRAPH, OP_MODEL_EXECUTE = 11, 12, 13
OP_COND_FIRST, OP_COND_NOTIFY_WAIT, OP_COND_JUMP_BACK = 14, 15, 16
OP_SQE_UPDATE = 17
OP_STREAM_SWITCH = 18
OP_LABEL_SWITCH = 19
for _n, _v, _ in OPCODES:
    assert globals()["OP_" + _n] == _v, _n

# EVENT_WAIT flag bits
WAIT_RESET = 1            # clear the slot once the wait is satisfied (hardware event, notify)
# counting notifies (chapter 09, aclrtCntNotify*): EVENT_RECORD / EVENT_WAIT with CNT set. A
# record's low 3 bits are aclrtCntNotifyRecordMode (the slot becomes a1, old + a1, old | a1,
# old & a1, as uint32); a wait's bits 1-3 are aclrtCntNotifyWaitMode (slot < a1, ==, >, >=,
# (slot & a1) == a1) and bit 0 WAIT_RESET its isClear
CNT = 0x80
CNT_RECORD_SET, CNT_RECORD_ADD, CNT_RECORD_OR, CNT_RECORD_AND = 0, 1, 2, 4
CNT_WAIT_LESS, CNT_WAIT_EQ, CNT_WAIT_BIGGER, CNT_WAIT_GEQ, CNT_WAIT_MASK = 0, 1, 2, 3, 4

# MEM_WAIT_VALUE comparisons, the STARS value-wait flags (chapter 11-09 aclrtValueWait: GEQ
# ``(int64)(*a - v) >= 0``, EQ, AND ``(*a & v) != 0``, NOR ``~(*a | v) != 0``); capture event
# waits use GEQ
WAIT_GEQ, WAIT_EQ, WAIT_AND, WAIT_NOR = 0, 1, 2, 3

# STREAM_SWITCH flag: the condition in the low nibble, aclrtCondition's values (acl_rt.h:720-727:
# left OP right), and the value width (aclrtCompareDataType: INT32 = 0, INT64 = 1) in bit 4
SWITCH_EQ, SWITCH_NE, SWITCH_GT, SWITCH_GE, SWITCH_LT, SWITCH_LE = 0, 1, 2, 3, 4, 5
SWITCH_COND = 0x0F
SWITCH_INT64 = 0x10
# MEMCPY address modes (flag bits above the kind), read by the engine when the task runs:
MEMCPY_PTR = 0x10         # a0 / a1 hold the addresses of 8-byte dst / src pointers (second-level
#                           pointers, aclrtMemcpyAsyncWithOffset);
#                           a3 = dst offset | src offset << 32
MEMCPY_DESC = 0x20        # a0 is a memcpy descriptor in device memory (aclrtSetMemcpyDesc): u32
#                           length at +12, u64 src at +16, u64 dst at +24 (rtMemcpyAddrInfo)
MEMCPY_2D = 0x40          # a2 = width | height << 32, a3 = src pitch | dst pitch << 32
MEMCPY_MODES = MEMCPY_PTR | MEMCPY_DESC | MEMCPY_2D
MEMCPY_DESC_LEN_AT, MEMCPY_DESC_SRC_AT, MEMCPY_DESC_DST_AT = 12, 16, 24
# MEMSET flag: fill 32-bit words of the value in a1 (aclrtMemsetD32Async; a2 is a multiple of 4)
MEMSET_D32 = 1


def empty(n: int) -> np.ndarray:
    """A zeroed block of ``n`` SQEs (NOPs)."""
    return np.zeros(n, SQE_DTYPE)
