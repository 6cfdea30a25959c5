"""The compiled launch path (issue 40 part 1): one jitted call writes a launch's SQE.

The facade (``runtime/api_launch.py``, ``runtime/stream.py``) checks a launch's arguments as the
runtime does (``spec/kernel.md`` §5, ``spec/aclgraph.md`` §4: codes and order unchanged) and tests
the special cases (task-group update, injection, recording, cost models, threads ...) with a few
Python tests; the common case then hands a few integers to ONE call here, which finds the SQ's
ring bookkeeping (``rings``), the capture model's sequence counters (``mseq``) and the host clock
(``CTL``) in arrays, packs the 64-byte SQE row (``sqe.SQE_DTYPE``, as ``struct`` ``<BBHI7q``) into
the pool (an eager ring slot or the capture stream's next row) and advances the counters.

Calls: :func:`capture_kernel` (a kernel into a capture stream, ``CaptureStream.append_kernel``),
:func:`eager_kernel` (a kernel on a user stream's eager ring, ``Stream.submit_kernel``) and
:func:`eager_task` (any other task there: memset, copy, record, wait, ``Stream.submit``). Each
returns the task's position, or ``SLOW`` (-1) when a case it does not handle applies (the SQ is
not staged since the last engine run, the ring may be full, the capture stream must grow or
cascade): nothing has changed then and the caller takes the Python path.

Each argument list starts with ``d``, the address of the device's *directory* (``DeviceState.jdir``,
``J_*``): the addresses and row counts of the pool, ``rings``, ``mseq`` and ``CTL``, and the two
timing constants an eager launch needs. The arrays are read through those addresses, so the call
takes integers only (a numba call costs ~60 ns per array argument, ~10 per integer) and goes
straight to the compiled entry point (no dispatcher type resolution); a grown array is re-pointed
in the directory (``DeviceState.repoint``). They are compiled on first use (numba's disk cache,
``jitcache``). :func:`set_compiled` ``(False)`` selects the reference path: the same bodies run as
plain Python over the numpy arrays (``tests/device/test_compiled_launch.py`` compares both;
``bench/test_compiled_launch.py`` prints the same-run ratio).
"""
from __future__ import annotations

import os
import types as pytypes
import weakref

import numpy as np
from numba import carray, cfunc, njit, types
from numba.extending import intrinsic

from .sqe import OP_KERNEL

# ---- rings: one row per SQ (the SQ's index), int64 -------------------------------------------
R_BASE = 0       # pool row of position 0 (staged: read from the SQ table when staged)
R_DEPTH = 1      # ring rows
R_TAIL = 2       # the staged tail: position after the last row written (published by flush)
R_STAGED = 3     # 1 while the SQ has staged rows (DeviceState._staged holds it)
R_ROOM = 4       # user stream: submits that surely fit before its ring can be full
R_SEQ = 5        # user stream: task_seq (its next task id, before the 16-bit wrap)
R_COUNT = 6      # capture stream: task_count (tasks written)
R_CAP = 7        # capture stream: ring rows held now (capacity)
R_SQE_NUM = 8    # capture stream: SQEs toward the cascade trigger (sqe_num)
R_LAST_OP = 9    # capture stream: opcode of its last task
R_MODEL = 10     # capture stream: its model's mseq row
R_COLS = 12

# ---- mseq: one row per model (CaptureModel.mrow), int64 ---------------------------------------
M_NEXT = 0       # next_seq: the model's global capture order (aclmdlRITaskGetSeqId)
M_LAST = 1       # SQ of the capture stream that wrote its last task (seq_last), -1 none
M_TASK_NS = 2    # capture_task_ns: the host cost of one captured task
M_CASCADE = 3    # cascade_at: a capture stream cascades once it holds this many SQEs
M_COLS = 4

# ---- CTL: the process's host-side words (one array for every device) --------------------------
C_HOST = 0       # RT.host_ns: the host clock
C_GEN = 1        # the launch memo's generation: bumped by forget() (the memo entry points test it)
C_COMPILED = 2   # 1 while the compiled path is selected (set_compiled; the C hit reads it)
C_COLS = 8

# ---- the directory (DeviceState.jdir), int64 --------------------------------------------------
J_POOL, J_POOL_ROWS, J_RINGS, J_RINGS_ROWS, J_MSEQ, J_MSEQ_ROWS, J_CTL = range(7)
J_LAUNCH_NS = 7      # timing.host_kernel_launch_ns
J_DOORBELL_NS = 8    # timing.doorbell_ns
J_COLS = 16

SQ_RESERVE = 1 << 16        # rings rows reserved per device (zero pages until used)
MODEL_RESERVE = 1 << 14     # mseq rows reserved per device
NEW_RUN = 1 << 62           # capture_kernel: a new seq run began (its first seq id in bits 32-61)
SLOW = -1

CTL = np.zeros(C_COLS, np.int64)
"""The host-side words of the process (``C_*``); ``RT.host_ns`` reads and writes ``CTL[C_HOST]``."""
CTL[C_COMPILED] = 1
CTLW = memoryview(CTL).cast("B").cast("q")
"""The same words as Python ints (``CTLW[C_HOST]``: ~30 ns where ``CTL[C_HOST]`` takes ~100)."""

# ---- the launch memo (acl/_launchmemo.py) -------------------------------------------------------
MEMO: dict = {}
"""(function handle, stream handle) -> the memo entry of a launch the general path
(``runtime/api_launch.launch_kernel``) found eligible for one compiled call: ``(size, jd, gq, kd,
cstream, model, the capture stream's seq_runs, func, stream)`` (None for the three of an eager
stream) with ``gq`` = generation and SQ, ``kd`` = body and duration (:func:`memo_words`). Filled under the runtime lock by the facade's launch front;
emptied by :func:`forget` at the start of every other locked region."""
GQ_SHIFT, Q_MASK = 16, 0xFFFF           # gq: the generation above the SQ (< SQ_RESERVE)
KD_SHIFT, KID_MASK = 24, 0xFFFFFF       # kd: the duration above the kernel-table id
_KD_DUR_MAX = (1 << (63 - KD_SHIFT)) - 1


def memo_words(q: int, kid: int, dur: int):
    """``(gq, kd)`` of a memo entry made now, or None when a value does not fit its field."""
    if q > Q_MASK or kid > KID_MASK or not 0 <= dur <= _KD_DUR_MAX:
        return None
    return CTLW[C_GEN] << GQ_SHIFT | q, dur << KD_SHIFT | kid


OFFER = [None, None]
"""``[offer, eligible]``: the general path's offer of a memo entry, ``((func, stream), entry)``,
made after its compiled call succeeded and taken by the front; with :data:`MEMO_CHECK` also the
entry it found eligible before that call (the check's reference)."""
LAST = [None]
"""The entry of the front's last hit, tried before ``MEMO`` (a loop launching one function on
one stream skips the lookup); emptied with the memo."""
MEMO_CHECK = os.environ.get("NPUSIM_MEMO_CHECK", "") not in ("", "0")
"""``NPUSIM_MEMO_CHECK=1``: every memo hit takes the general path and is compared with it."""


def forget() -> None:
    """Empty the launch memo and bump its generation (``CTL[C_GEN]``): called (when the memo is
    not empty) at the start of every region that holds the runtime lock and by every change
    outside one that a memo entry depends on, so no entry outlives the state it was made from;
    an entry read before the bump fails the generation test inside its compiled call. An empty
    memo needs neither: an entry being read means the memo was not empty when the region began."""
    if MEMO:
        MEMO.clear()
        LAST[0] = None
        CTLW[C_GEN] += 1


@intrinsic
def _ptr(typingctx, addr):
    """An int64 pointer from an address (an integer)."""
    if not isinstance(addr, types.Integer):
        return None
    sig = types.CPointer(types.int64)(addr)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(signature.return_type))
    return sig, codegen


# ---- the bodies (jitted; the reference path runs their .py_func over numpy arrays) -----------
@njit(cache=True)
def _capture_kernel(pool, rings, mseq, ctl, q, kid, a1, a2, a3, blocks):
    """``CaptureStream.append_kernel`` with ``RT.host_ns += capture_task_ns`` first: the SQE at
    the capture stream's next position (a capture stream never wraps: row base + pos)."""
    if rings[q, R_STAGED] == 0:
        return SLOW
    pos = rings[q, R_COUNT]
    m = rings[q, R_MODEL]
    if pos >= rings[q, R_CAP] or rings[q, R_SQE_NUM] >= mseq[m, M_CASCADE]:
        return SLOW                    # the ring grows, or a cascade is due (capture.append)
    new_run = mseq[m, M_LAST] != q
    if new_run and mseq[m, M_NEXT] > 0x3FFFFFFF:
        return SLOW                    # its seq id does not fit the return value
    ctl[C_HOST] += mseq[m, M_TASK_NS]
    row = rings[q, R_BASE] + pos
    pool[row, 0] = OP_KERNEL | ((blocks & 0xFFFF) << 16) | ((pos & 0xFFFF) << 32)
    pool[row, 1] = kid
    pool[row, 2] = a1
    pool[row, 3] = a2
    pool[row, 4] = a3
    pool[row, 5] = 0
    pool[row, 6] = 0
    pool[row, 7] = 0
    rings[q, R_TAIL] = pos + 1
    rings[q, R_COUNT] = pos + 1
    rings[q, R_SQE_NUM] += 1
    rings[q, R_LAST_OP] = OP_KERNEL
    seq = mseq[m, M_NEXT]
    mseq[m, M_NEXT] = seq + 1
    if new_run:                        # a new run of the model's capture order
        mseq[m, M_LAST] = q
        return NEW_RUN | ((seq & 0x3FFFFFFF) << 32) | pos
    return pos


@njit(cache=True)
def _eager_task(pool, rings, ctl, q, cost, op, flag, blocks, a0, a1, a2, a3, doorbell):
    """``Stream.submit`` when the ring has room: the host cost, the doorbell time, the task id,
    the SQE at the ring's tail."""
    if rings[q, R_STAGED] == 0 or rings[q, R_ROOM] <= 0:
        return SLOW
    host = ctl[C_HOST] + cost
    ctl[C_HOST] = host
    rings[q, R_ROOM] -= 1
    seq = rings[q, R_SEQ]
    rings[q, R_SEQ] = seq + 1
    pos = rings[q, R_TAIL]
    row = rings[q, R_BASE] + pos % rings[q, R_DEPTH]
    pool[row, 0] = op | (flag << 8) | ((blocks & 0xFFFF) << 16) | ((seq & 0xFFFF) << 32)
    pool[row, 1] = a0
    pool[row, 2] = a1
    pool[row, 3] = a2
    pool[row, 4] = a3
    pool[row, 5] = 0
    pool[row, 6] = 0
    pool[row, 7] = host + doorbell
    rings[q, R_TAIL] = pos + 1
    return pos


# ---- the compiled entry points (integers only) -------------------------------------------------
def _capture_kernel_c(d, q, kid, a1, a2, a3, blocks):
    j = carray(_ptr(d), (J_COLS,))
    return _capture_kernel(carray(_ptr(j[J_POOL]), (j[J_POOL_ROWS], 8)),
                           carray(_ptr(j[J_RINGS]), (j[J_RINGS_ROWS], R_COLS)),
                           carray(_ptr(j[J_MSEQ]), (j[J_MSEQ_ROWS], M_COLS)),
                           carray(_ptr(j[J_CTL]), (C_COLS,)), q, kid, a1, a2, a3, blocks)


def _eager_kernel_c(d, q, kid, a1, a2, a3, blocks):
    j = carray(_ptr(d), (J_COLS,))
    return _eager_task(carray(_ptr(j[J_POOL]), (j[J_POOL_ROWS], 8)),
                       carray(_ptr(j[J_RINGS]), (j[J_RINGS_ROWS], R_COLS)),
                       carray(_ptr(j[J_CTL]), (C_COLS,)), q, j[J_LAUNCH_NS], OP_KERNEL, 0,
                       blocks, kid, a1, a2, a3, j[J_DOORBELL_NS])


def _eager_task_c(d, q, cost, op, flag, blocks, a0, a1, a2, a3):
    j = carray(_ptr(d), (J_COLS,))
    return _eager_task(carray(_ptr(j[J_POOL]), (j[J_POOL_ROWS], 8)),
                       carray(_ptr(j[J_RINGS]), (j[J_RINGS_ROWS], R_COLS)),
                       carray(_ptr(j[J_CTL]), (C_COLS,)), q, cost, op, flag, blocks, a0, a1,
                       a2, a3, j[J_DOORBELL_NS])


def _memo_capture_c(d, gq, kd, a1, a2, blocks):
    j = carray(_ptr(d), (J_COLS,))
    ctl = carray(_ptr(j[J_CTL]), (C_COLS,))
    if ctl[C_GEN] != gq >> GQ_SHIFT:   # the memo entry is stale: the general path
        return SLOW
    return _capture_kernel(carray(_ptr(j[J_POOL]), (j[J_POOL_ROWS], 8)),
                           carray(_ptr(j[J_RINGS]), (j[J_RINGS_ROWS], R_COLS)),
                           carray(_ptr(j[J_MSEQ]), (j[J_MSEQ_ROWS], M_COLS)),
                           ctl, gq & Q_MASK, kd & KID_MASK, a1, a2, kd >> KD_SHIFT, blocks)


def _memo_eager_c(d, gq, kd, a1, a2, blocks):
    j = carray(_ptr(d), (J_COLS,))
    ctl = carray(_ptr(j[J_CTL]), (C_COLS,))
    if ctl[C_GEN] != gq >> GQ_SHIFT:
        return SLOW
    return _eager_task(carray(_ptr(j[J_POOL]), (j[J_POOL_ROWS], 8)),
                       carray(_ptr(j[J_RINGS]), (j[J_RINGS_ROWS], R_COLS)),
                       ctl, gq & Q_MASK, j[J_LAUNCH_NS], OP_KERNEL, 0, blocks, kd & KID_MASK,
                       a1, a2, kd >> KD_SHIFT, j[J_DOORBELL_NS])


# ---- the reference path: the same bodies as Python over the arrays -----------------------------
STATES: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
"""Directory address -> its DeviceState (the reference path finds the arrays through it; a
device dropped by a reset leaves it)."""


def _arrays(d):
    st = STATES[d]
    return st.pool.view(np.int64).reshape(-1, 8), st.rings, st.mseq


def _capture_kernel_py(d, q, kid, a1, a2, a3, blocks):
    pool, rings, mseq = _arrays(d)
    return int(_capture_kernel.py_func(pool, rings, mseq, CTL, q, kid, a1, a2, a3, blocks))


def _eager_kernel_py(d, q, kid, a1, a2, a3, blocks):
    pool, rings, _ = _arrays(d)
    j = STATES[d].jdir
    return int(_eager_task.py_func(pool, rings, CTL, q, int(j[J_LAUNCH_NS]), OP_KERNEL, 0, blocks,
                                   kid, a1, a2, a3, int(j[J_DOORBELL_NS])))


def _eager_task_py(d, q, cost, op, flag, blocks, a0, a1, a2, a3):
    pool, rings, _ = _arrays(d)
    return int(_eager_task.py_func(pool, rings, CTL, q, cost, op, flag, blocks, a0, a1, a2, a3,
                                   int(STATES[d].jdir[J_DOORBELL_NS])))


def _memo_capture_py(d, gq, kd, a1, a2, blocks):
    if int(CTL[C_GEN]) != gq >> GQ_SHIFT:
        return SLOW
    return _capture_kernel_py(d, gq & Q_MASK, kd & KID_MASK, a1, a2, kd >> KD_SHIFT, blocks)


def _memo_eager_py(d, gq, kd, a1, a2, blocks):
    if int(CTL[C_GEN]) != gq >> GQ_SHIFT:
        return SLOW
    return _eager_kernel_py(d, gq & Q_MASK, kd & KID_MASK, a1, a2, kd >> KD_SHIFT, blocks)


# ---- selection and lazy compilation ------------------------------------------------------------
_I = types.int64
_SIGS = {"capture_kernel": (_capture_kernel_c, _capture_kernel_py, (_I,) * 7),
         "eager_kernel": (_eager_kernel_c, _eager_kernel_py, (_I,) * 7),
         "eager_task": (_eager_task_c, _eager_task_py, (_I,) * 10),
         "memo_capture": (_memo_capture_c, _memo_capture_py, (_I,) * 6),
         "memo_eager": (_memo_eager_c, _memo_eager_py, (_I,) * 6)}
_COMPILED: dict = {}            # name -> the compiled entry point, once made
_USE_COMPILED = True


def _entry(name: str):
    """The compiled entry point of ``name`` (compiled now if not yet): the builtin that unboxes
    its integers and runs the machine code, without the dispatcher's type resolution."""
    fn = _COMPILED.get(name)
    if fn is None:
        py, _, sig = _SIGS[name]
        disp = njit(types.int64(*sig), cache=True)(py)
        fn = _COMPILED[name] = disp.overloads[disp.signatures[0]].entry_point
    return fn


def _first_use(name: str):
    def first(*args):
        _bind(name)
        return globals()[name](*args)
    first.__name__ = name
    return first


def _bind(name: str) -> None:
    globals()[name] = _entry(name) if _USE_COMPILED else _SIGS[name][1]


def set_compiled(on: bool) -> None:
    """Select the compiled entry points (True, the default) or the reference Python path."""
    global _USE_COMPILED
    _USE_COMPILED = bool(on)
    CTLW[C_COMPILED] = int(_USE_COMPILED)
    for name in _SIGS:
        if on and name not in _COMPILED:
            globals()[name] = _first_use(name)       # compiled on first use
        else:
            _bind(name)


def compiled() -> bool:
    """Is the compiled path selected?"""
    return _USE_COMPILED


capture_kernel = _first_use("capture_kernel")
eager_kernel = _first_use("eager_kernel")
eager_task = _first_use("eager_task")
memo_capture = _first_use("memo_capture")
memo_eager = _first_use("memo_eager")


def memo_addresses() -> tuple[int, int]:
    """The C addresses of ``memo_capture`` and ``memo_eager`` (numba ``cfunc``s of the same
    bodies, ``int64(int64 x 6)``), for the launch memo's C hit (acl/_launchc.py)."""
    sig = types.int64(*(_I,) * 6)
    out = []
    for f in (_memo_capture_c, _memo_eager_c):
        # a copy under its own name: numba's disk cache keys an index by the function's name
        # and line, and a cfunc and the entry point sharing one would read each other's code
        g = pytypes.FunctionType(f.__code__, f.__globals__, f.__name__ + "_cfunc")
        g.__qualname__ = g.__name__
        out.append(cfunc(sig, cache=True)(g).address)
    return out[0], out[1]
