"""``aclrtRandomNumAsync`` (the DSA random-number task) and ``aclrtTaskUpdateAsync`` (updating a
random-number task of a model from a stream), chapter 12.

How the real runtime does it (hicann/runtime):

* ``src/acl/aclrt_impl/kernel.cpp`` ``aclrtRandomNumAsyncImpl``: NULL ``taskInfo``, a data type
  outside ``kMapDataType`` (INT32, INT64, UINT32, UINT64, BF16, FLOAT16, FLOAT) -> 100000;
  ``src/runtime/api/api_c_kernel.cc`` ``rtsLaunchRandomNumTask``: a chip without
  ``RT_FEATURE_TASK_RAND_GENERATOR`` (only ``config/910_B_93``: A2 / A3) -> 207000, then the
  stream handle (107017); ``api_error.cc`` ``ApiErrorDecorator::LaunchRandomNumTask``: a
  ``reserve`` that is not NULL -> 107000; ``api_impl.cc`` ``ApiImpl::LaunchRandomNumTask``: no
  context 107002, NULL = the default stream, another context's stream 107003;
  ``src/runtime/core/src/task/task_info/random_num_task.cc`` ``CheckRandomNumTaskInfo``: the
  function type, the data type for that function (dropout / normal / truncated normal: bf16,
  fp16, fp32; uniform: all seven), a NULL counter address, a NULL result address, the seed and
  the count (``isAddr`` 0 or 1, ``size`` in [1, 8]), then the function's parameters (``size`` in
  [1, data size], or [1, 8] for an address) -> 107000 each, in that order. Then
  ``GetDsaSqeByRandomNumTask``: 16 bytes of parameters (``firstParam``, ``secondParam``: the
  ``size`` bytes of ``valueOrAddr`` each) are copied synchronously, at the launch, to
  ``randomParaAddr`` (NULL: memory the runtime allocates with the task), and a DSA SQE names the
  result, counter (``dsaCfgStateAddr``) and parameter addresses, the seed and the count, with a
  bitmap of which parameters are values and which are addresses the DSA reads when it runs.
* ``src/runtime/api/api_c_standard_soc.cc`` ``rtsLaunchUpdateTask`` -> ``ApiErrorDecorator`` /
  ``ApiImpl::LaunchSqeUpdateTask(..., needCpuTask = true)``: an AI CPU kernel on ``execStream``
  reads the new ``aclrtRandomNumTaskInfo`` (``size`` must be its 104 bytes) from device memory
  when it runs and builds the SQE in the task's runtime memory (``randomDevAddr + 16``); an
  SQE-update task then copies the SQE's bytes 16-55 (result, counter and parameter addresses,
  seed, count) over the model's task. The value/address bitmap (bytes 8-11) is not copied.

The model (docs/fidelity.md rows 166-171): one KERNEL SQE whose runtime-owned body
(:data:`RANDOM_BODY`) reads its whole configuration when the task runs — the count and seed
(values, or device words it reads then), the 128-bit Philox counter, the parameter block and the
parameters it points to — so a replay of a captured or built model sees the device memory as it
is at that replay. The generator is Philox4x32-10 (the sample's README: the only algorithm,
"Counter 为 128bit"), keyed by the 64-bit seed; output ``i`` is drawn from the counter's block
``c + i // 4`` (``i // 2`` for 64-bit integers); the counter is read, never advanced. Each launch
owns a 128-byte block of args memory: the 16-byte parameter block, the update's staging image
and the task's own configuration (the SQE's fields).
"""
from __future__ import annotations

import operator
import struct

import numpy as np
from numba import njit

from .. import errors as ERR
from ..device import memview as V
from ..device import sqe as S
from ..device.half import f2h, h2f
from ..device.kernels import KERNEL_TRAP, TABLE, UNIT_AICPU, arena, compiled_body
from ..device.memory import C_FAULT
from . import args as A
from .runtime import RT
from .stream import lookup, refused, resolve_same_ctx
from .tasks import DEFAULT_TYPE_KERNELS

# aclrtRandomNumFuncType (acl_rt.h:789-794)
ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK, ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS = 0, 1
ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS, ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS = 2, 3
# aclrtUpdateTaskAttrId (acl_rt.h:821-824)
ACL_RT_UPDATE_RANDOM_TASK, ACL_RT_UPDATE_AIC_AIV_TASK = 1, 2

# aclDataType (acl_base_rt.h) -> rtRandomNumDataType (rts_stars.h), kernel.cpp kMapDataType
ACL_FLOAT, ACL_FLOAT16, ACL_INT32, ACL_UINT32 = 0, 1, 3, 8
ACL_INT64, ACL_UINT64, ACL_BF16 = 9, 10, 27
RT_I32, RT_I64, RT_U32, RT_U64, RT_BF16, RT_FP16, RT_FP32 = range(7)
TYPES = {ACL_INT32: RT_I32, ACL_INT64: RT_I64, ACL_UINT32: RT_U32, ACL_UINT64: RT_U64,
         ACL_BF16: RT_BF16, ACL_FLOAT16: RT_FP16, ACL_FLOAT: RT_FP32}
SIZE_OF = {RT_I32: 4, RT_I64: 8, RT_U32: 4, RT_U64: 8, RT_BF16: 2, RT_FP16: 2, RT_FP32: 4}
_FLOATS = {RT_BF16, RT_FP16, RT_FP32}
FUNC_TYPES = {ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK: _FLOATS,
              ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS: set(SIZE_OF),
              ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS: _FLOATS,
              ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS: _FLOATS}
"""FUNCTYPE_DATATYPE_MAP (random_num_task.cc): the data types each function generates."""

# the paramAddrValBitmap bits (random_num_task.cc RANDOM_*_INDEX): set = the value itself
B_RATIO, B_MIN, B_MAX, B_MEAN, B_STDDEV, B_SEED, B_NUM = range(7)

TASK_INFO_BYTES = 104
"""sizeof(aclrtRandomNumTaskInfo) (acl_rt.h:805-814): the size an update's ``size`` must be."""
_PARA = struct.Struct("<B8sB6x")                    # aclrtRandomParaInfo (16 bytes)
_TASK = struct.Struct("<ii16s16sQQQ16s16s8x")       # aclrtRandomNumTaskInfo (104 bytes)
assert _TASK.size == TASK_INFO_BYTES and _PARA.size == 16
_UNION = {"dropoutBitmaskInfo": ("dropoutRation",), "uniformDisInfo": ("min", "max"),
          "normalDisInfo": ("mean", "stddev")}
_FIELDS = ("dataType", "randomNumFuncParaInfo", "randomParaAddr", "randomResultAddr",
           "randomCounterAddr", "randomSeed", "randomNum", "rsv")

RANDOM_BODY = "__npusim_dsa_random"
UPDATE_BODY = "__npusim_dsa_update"
# the per-launch block of args memory: [param 16 | staging image 56 | configuration 56]
_STAGE_AT, _CFG_AT, _CFG_WORDS, _BLOCK = 16, 72, 7, 128
"""Configuration words (the SQE's fields): 0 flags (function type | rt data type << 8 |
value bitmap << 16), 1 parameter block address, 2 result address, 3 counter address, 4 seed
(value or address), 5 count (value or address), 6 the launch's block (for updates)."""


# ---- the struct, as Python gives it ----
class _Bad(Exception):
    """A task info that is no aclrtRandomNumTaskInfo a C program could pass."""


def _int(v, lo, hi):
    if isinstance(v, (float, complex, str, bytes, bytearray)):
        raise _Bad
    try:
        i = operator.index(v)
    except Exception:                 # noqa: BLE001 -- any object: __index__ may raise anything
        raise _Bad from None
    if not lo <= i <= hi:
        raise _Bad
    return i


def _value_bytes(v, rt_type) -> bytes:
    """``valueOrAddr``: bytes (at most 8), an integer (its 8 little-endian bytes, two's
    complement), or a float encoded as the task's data type (fp32 / fp16 / bf16)."""
    if isinstance(v, (bytes, bytearray, memoryview)):
        b = bytes(v)
        if len(b) > 8:
            raise _Bad
        return b.ljust(8, b"\0")
    if isinstance(v, (float, np.floating)):
        if rt_type == RT_FP32:
            return np.float32(v).tobytes().ljust(8, b"\0")
        if rt_type == RT_FP16:
            return np.float16(v).tobytes().ljust(8, b"\0")
        if rt_type == RT_BF16:
            bits = int(np.float32(v).view(np.uint32))
            bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 if (bits & 0x7F800000) != \
                0x7F800000 else (bits >> 16) | (0x40 if bits & 0x7FFFFF else 0)
            return int(bits & 0xFFFF).to_bytes(8, "little")
        raise _Bad
    return (_int(v, -2 ** 63, 2 ** 64 - 1) & (2 ** 64 - 1)).to_bytes(8, "little")


def _para(d, rt_type) -> bytes:
    if d is None:
        return bytes(16)
    if isinstance(d, (bytes, bytearray)) and len(d) == 16:
        return bytes(d)
    if not isinstance(d, dict) or not set(d) <= {"isAddr", "valueOrAddr", "size", "rsv"}:
        raise _Bad
    is_addr = _int(d.get("isAddr", 0), 0, 255)
    value = _value_bytes(d.get("valueOrAddr", 0), rt_type if not is_addr else -1)
    return _PARA.pack(is_addr, value, _int(d.get("size", 0), 0, 255))


def pack_task_info(info) -> bytes:
    """The 104 bytes of ``aclrtRandomNumTaskInfo`` (acl_rt.h) for ``info``: a dict with the C
    field names (missing fields are 0, as in ``aclrtRandomNumTaskInfo taskInfo = {}``; the union
    ``paramInfo`` by one member name), or the struct's bytes as they are. ``valueOrAddr``: an int,
    up to 8 bytes, or a float (encoded as ``dataType``). What an update's ``srcAddr`` must hold.
    Raises ValueError for anything a C program could not pass."""
    try:
        return _pack(info)
    except _Bad:
        raise ValueError("not an aclrtRandomNumTaskInfo") from None


def _pack(info) -> bytes:
    if isinstance(info, (bytes, bytearray, memoryview, np.ndarray)):
        if isinstance(info, np.ndarray) and (info.dtype != np.uint8 or info.ndim != 1):
            raise _Bad
        b = bytes(info)
        if len(b) != TASK_INFO_BYTES:
            raise _Bad
        return b
    if not isinstance(info, dict) or not set(info) <= set(_FIELDS):
        raise _Bad
    data_type = _int(info.get("dataType", 0), -2 ** 31, 2 ** 31 - 1)
    rt_type = TYPES.get(data_type, -1)
    fp = info.get("randomNumFuncParaInfo") or {}
    if not isinstance(fp, dict) or not set(fp) <= {"funcType", "paramInfo"}:
        raise _Bad
    func = _int(fp.get("funcType", 0), -2 ** 31, 2 ** 31 - 1)
    union = fp.get("paramInfo") or {}
    if not isinstance(union, dict) or len(union) > 1 or not set(union) <= set(_UNION):
        raise _Bad
    first = second = bytes(16)
    for member, value in union.items():
        names = _UNION[member]
        if not isinstance(value, dict) or not set(value) <= set(names):
            raise _Bad
        first = _para(value.get(names[0]), rt_type)
        if len(names) > 1:
            second = _para(value.get(names[1]), rt_type)
    ptrs = [_int(info.get(k, 0) or 0, 0, 2 ** 64 - 1)
            for k in ("randomParaAddr", "randomResultAddr", "randomCounterAddr")]
    return _TASK.pack(data_type, func, first, second, *ptrs,
                      _para(info.get("randomSeed"), RT_U64), _para(info.get("randomNum"), RT_U64))


def _unpara(b: bytes) -> tuple[int, int, int]:
    """(isAddr, the ``size`` first bytes of valueOrAddr zero-extended (memcpy_s into a zeroed
    uint64_t), size) of an aclrtRandomParaInfo."""
    is_addr, raw, size = _PARA.unpack(b)
    return is_addr, int.from_bytes(raw[:min(size, 8)], "little"), size


def _check_para(p, data_size: int) -> bool:
    """CheckRandomParam: isAddr 0 or 1, size in [1, data size] (8 for an address)."""
    is_addr, _, size = p
    limit = 8 if is_addr == 1 else data_size
    return is_addr in (0, 1) and 1 <= size <= limit


# ---- the generator (Philox4x32-10, Salmon et al. 2011; Random123's constants) ----
_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_W0, _W1 = np.uint64(0x9E3779B9), np.uint64(0xBB67AE85)
_MASK = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)


@njit(cache=True)
def philox_block(c, key0, key1, out):
    """The four 32-bit words of Philox4x32-10 for counter ``c`` (4 uint64 holding u32 words,
    little-endian word order) and key (key0, key1), into ``out``."""
    c0, c1, c2, c3 = c[0], c[1], c[2], c[3]
    k0, k1 = key0, key1
    for r in range(10):
        if r:
            k0 = (k0 + _W0) & _MASK
            k1 = (k1 + _W1) & _MASK
        p0 = _M0 * c0
        p1 = _M1 * c2
        c0, c1, c2, c3 = (((p1 >> _S32) ^ c1 ^ k0) & _MASK, p1 & _MASK,
                          ((p0 >> _S32) ^ c3 ^ k1) & _MASK, p0 & _MASK)
    out[0], out[1], out[2], out[3] = c0, c1, c2, c3


@njit(cache=True)
def _add(base, b, c):
    """``c`` = the 128-bit counter ``base`` + ``b`` (carry across the four words)."""
    carry = np.uint64(b)
    for j in range(4):
        s = base[j] + (carry & _MASK)
        c[j] = s & _MASK
        carry = (carry >> _S32) + (s >> _S32)


@njit(cache=True, inline="always")
def _u01(w):
    """A word as a float32 uniform in [0, 1): its 24 high bits times 2**-24."""
    return np.float32(np.float64(w >> np.uint64(8)) * (2.0 ** -24))


@njit(cache=True, inline="always")
def _bf16(f):
    """float32 -> bf16 bits, round to nearest even (NaN stays NaN)."""
    bits = np.uint64(np.array([np.float32(f)], np.float32).view(np.uint32)[0])
    if (bits & np.uint64(0x7F800000)) == np.uint64(0x7F800000) and (bits & np.uint64(0x7FFFFF)):
        return np.uint16((bits >> np.uint64(16)) | np.uint64(0x40))
    return np.uint16((bits + np.uint64(0x7FFF) + ((bits >> np.uint64(16)) & np.uint64(1)))
                     >> np.uint64(16))


@njit(cache=True, inline="always")
def _put_float(o32, o16, t, i, v):
    """Element ``i`` of a float output: ``v`` into the fp32 view, or its fp16 / bf16 bits into
    the 16-bit view (the uniform and the normal distributions store alike)."""
    if t == RT_FP32:
        o32[i] = v
    elif t == RT_FP16:
        o16[i] = f2h(v)
    else:
        o16[i] = _bf16(v)


@njit(cache=True, inline="always")
def _as_f32(raw, t):
    """A parameter's float value from its raw little-endian bits (fp32 / fp16 / bf16)."""
    if t == RT_FP32:
        return np.array([np.uint32(raw & _MASK)], np.uint32).view(np.float32)[0]
    if t == RT_FP16:
        return h2f(np.uint16(raw & np.uint64(0xFFFF)))
    return np.array([np.uint32((raw & np.uint64(0xFFFF)) << np.uint64(16))],
                    np.uint32).view(np.float32)[0]


def dsa_random(memp, msize, ctxp, args, b, nb):
    """The random-number task: args = the configuration words (``_CFG_WORDS``)."""
    mem, ctx = arena(memp, msize, ctxp)
    try:
        a = V.args(mem, ctx, args, _CFG_WORDS)
        flags = np.uint64(a[0])
        func = np.int64(flags & np.uint64(0xFF))
        t = np.int64((flags >> np.uint64(8)) & np.uint64(0xFF))
        bitmap = np.int64((flags >> np.uint64(16)) & np.uint64(0xFF))
        dsize = 4 if (t == RT_I32 or t == RT_U32 or t == RT_FP32) else \
            (8 if t == RT_I64 or t == RT_U64 else 2)
        seed = np.uint64(a[4])
        if not (bitmap >> B_SEED) & 1:
            seed = V.r_u64(mem, ctx, np.int64(a[4]), 1)[0]
        num = np.uint64(a[5])
        if not (bitmap >> B_NUM) & 1:
            num = V.r_u64(mem, ctx, np.int64(a[5]), 1)[0]
        pb = V.r_u64(mem, ctx, np.int64(a[1]), 2)
        first, second = pb[0], pb[1]
        if func == ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK:
            i0, i1 = B_RATIO, B_RATIO
        elif func == ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS:
            i0, i1 = B_MIN, B_MAX
        else:
            i0, i1 = B_MEAN, B_STDDEV
        if not (bitmap >> i0) & 1:
            first = _read_le(mem, ctx, first, dsize)
        if func != ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK and not (bitmap >> i1) & 1:
            second = _read_le(mem, ctx, second, dsize)
        cw = V.r_u32(mem, ctx, np.int64(a[3]), 4)
        base = np.zeros(4, np.uint64)
        for j in range(4):
            base[j] = np.uint64(cw[j])
        n = np.int64(num)
        if n < 0 or ctx[C_FAULT] != 0:
            return KERNEL_TRAP
        key0, key1 = seed & _MASK, seed >> _S32
        if func == ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK:
            _dropout(mem, ctx, a[2], n, _as_f32(first, t), base, key0, key1)
        elif func == ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS:
            _uniform(mem, ctx, a[2], n, t, first, second, base, key0, key1)
        else:
            _normal(mem, ctx, a[2], n, t, np.float64(_as_f32(first, t)),
                    np.float64(_as_f32(second, t)),
                    func == ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS, base, key0, key1)
        return 0
    except Exception:
        return KERNEL_TRAP


@njit(cache=True)
def _read_le(mem, ctx, addr, size):
    b = V.r_u8(mem, ctx, np.int64(addr), size)
    v = np.uint64(0)
    for j in range(min(size, b.size)):
        v |= np.uint64(b[j]) << np.uint64(8 * j)
    return v


@njit(cache=True)
def _dropout(mem, ctx, dst, n, ratio, base, key0, key1):
    out = V.u8(mem, ctx, np.int64(dst), (n + 7) // 8)
    if ctx[C_FAULT] != 0:
        return
    c = np.zeros(4, np.uint64)
    w = np.zeros(4, np.uint64)
    for k in range(out.size):
        out[k] = 0
    for i in range(n):
        if i % 4 == 0:
            _add(base, i // 4, c)
            philox_block(c, key0, key1, w)
        if _u01(w[i % 4]) >= ratio:
            out[i // 8] |= np.uint8(1 << (i % 8))


@njit(cache=True)
def _uniform(mem, ctx, dst, n, t, lo_raw, hi_raw, base, key0, key1):
    c = np.zeros(4, np.uint64)
    w = np.zeros(4, np.uint64)
    if t == RT_FP32 or t == RT_FP16 or t == RT_BF16:
        lo, hi = _as_f32(lo_raw, t), _as_f32(hi_raw, t)
        span = np.float32(hi - lo)
        o32 = V.f32(mem, ctx, np.int64(dst), n if t == RT_FP32 else 0)
        o16 = V.u16(mem, ctx, np.int64(dst), n if t != RT_FP32 else 0)
        if ctx[C_FAULT] != 0:
            return
        for i in range(n):
            if i % 4 == 0:
                _add(base, i // 4, c)
                philox_block(c, key0, key1, w)
            _put_float(o32, o16, t, i, np.float32(lo + np.float32(_u01(w[i % 4]) * span)))
        return
    if t == RT_I32 or t == RT_U32:
        m = np.uint64(0xFFFFFFFF)
        o = V.u32(mem, ctx, np.int64(dst), n)
        if ctx[C_FAULT] != 0:
            return
        lo, hi = lo_raw & m, hi_raw & m
        if t == RT_I32:
            ok = np.int32(np.uint32(hi)) > np.int32(np.uint32(lo))
        else:
            ok = hi > lo
        span = (hi - lo) & m
        for i in range(n):
            if i % 4 == 0:
                _add(base, i // 4, c)
                philox_block(c, key0, key1, w)
            o[i] = np.uint32((lo + (w[i % 4] % span if ok else np.uint64(0))) & m)
        return
    o64 = V.u64(mem, ctx, np.int64(dst), n)
    if ctx[C_FAULT] != 0:
        return
    if t == RT_I64:
        ok = np.int64(hi_raw) > np.int64(lo_raw)
    else:
        ok = hi_raw > lo_raw
    span = hi_raw - lo_raw
    for i in range(n):
        if i % 2 == 0:
            _add(base, i // 2, c)
            philox_block(c, key0, key1, w)
        x = w[2 * (i % 2)] | (w[2 * (i % 2) + 1] << _S32)
        o64[i] = lo_raw + (x % span if ok else np.uint64(0))


@njit(cache=True)
def _normal(mem, ctx, dst, n, t, mean, std, truncated, base, key0, key1):
    c = np.zeros(4, np.uint64)
    w = np.zeros(4, np.uint64)
    o32 = V.f32(mem, ctx, np.int64(dst), n if t == RT_FP32 else 0)
    o16 = V.u16(mem, ctx, np.int64(dst), n if t != RT_FP32 else 0)
    if ctx[C_FAULT] != 0:
        return
    got = 0
    blk = 0
    while got < n:
        _add(base, blk, c)
        philox_block(c, key0, key1, w)
        blk += 1
        for h in range(2):
            u1 = (np.float64(w[2 * h]) + 1.0) * (2.0 ** -32)
            u2 = np.float64(w[2 * h + 1]) * (2.0 ** -32)
            r = np.sqrt(-2.0 * np.log(u1))
            for z in (r * np.cos(2.0 * np.pi * u2), r * np.sin(2.0 * np.pi * u2)):
                if got >= n or (truncated and abs(z) > 2.0):
                    continue
                _put_float(o32, o16, t, got, np.float32(mean + std * z))
                got += 1


def dsa_update(memp, msize, ctxp, args, b, nb):
    """The update's AI CPU task: args (source task info, staging image, flags, the launch's
    block). Reads the 104-byte aclrtRandomNumTaskInfo when it runs and writes the task's new
    configuration into the staging image (the SQE the runtime builds at randomDevAddr + 16)."""
    mem, ctx = arena(memp, msize, ctxp)
    try:
        a = V.args(mem, ctx, args, 4)
        src = V.r_u8(mem, ctx, np.int64(a[0]), TASK_INFO_BYTES)
        img = V.i64(mem, ctx, np.int64(a[1]), _CFG_WORDS)
        if ctx[C_FAULT] != 0:
            return KERNEL_TRAP
        q = src[40:64].copy().view(np.int64)
        img[0] = a[2]
        img[1] = q[0] if q[0] != 0 else a[3]
        img[2], img[3] = q[1], q[2]
        for k, at in ((4, 64), (5, 80)):
            size = min(np.int64(src[at + 9]), 8)
            v = np.uint64(0)
            for j in range(size):
                v |= np.uint64(src[at + 1 + j]) << np.uint64(8 * j)
            img[k] = np.int64(v)
        img[6] = a[3]
        return 0
    except Exception:
        return KERNEL_TRAP


_KID = TABLE.register_lazy(RANDOM_BODY, lambda: compiled_body(dsa_random), 0, unit=UNIT_AICPU,
                           params=tuple((f"w{i}", "u64") for i in range(_CFG_WORDS)))
DEFAULT_TYPE_KERNELS.add(_KID)         # aclmdlRITaskGetType: RT_TASK_DEFAULT (STARS_COMMON)
_UKID = TABLE.register_lazy(UPDATE_BODY, lambda: compiled_body(dsa_update), 0, unit=UNIT_AICPU,
                            params=(("src", "ptr"), ("image", "ptr"), ("flags", "u64"),
                                    ("block", "ptr")))


# ---- chip features (dev_info_reg.cc) ----
def _has_generator(prof) -> bool:
    """RT_FEATURE_TASK_RAND_GENERATOR and RT_FEATURE_TASK_DSA_UPDATE: config/910_B_93 only."""
    return prof.chip_type == "CHIP_910_B_93"


# ---- aclrtRandomNumAsync ----
def random_num_async(task_info, stream, reserve=None) -> int:
    """aclrtRandomNumAsync: a random-number task on ``stream`` (None: the default stream) that
    fills ``randomResultAddr`` when it runs. ``task_info``: ``aclrtRandomNumTaskInfo`` as a dict
    of its C fields or its 104 bytes (:func:`pack_task_info`). Check order: NULL or not a task
    info, a data type outside the seven, 100000 (acl); a chip without the generator (only A2 /
    A3 have it) 207000; the stream handle 107017; a ``reserve`` 107000; context 107002, another
    context's stream 107003; the function type, its data types, a NULL counter, a NULL result,
    the seed, the count, the function's parameters 107000; a ``randomParaAddr`` that is not 16
    bytes of the device's memory 107000. On a capturing stream the task is captured (each replay
    generates again, reading seed, count, counter and parameters then); on a stream bound to a
    built model it is kept in the model (``aclrtGetThreadLastTaskId`` gives its id for
    ``aclrtTaskUpdateAsync``)."""
    if task_info is None or (type(task_info) is int and task_info == 0):
        RT.tls.explain("task_info is NULL")
        return ERR.ACL_ERROR_INVALID_PARAM
    try:
        raw = _pack(task_info)
    except Exception:                 # noqa: BLE001 -- _Bad, or a hostile object's own error
        RT.tls.explain("task_info (taskInfo) is not an aclrtRandomNumTaskInfo: a dict of its C "
                       "fields (dataType, randomNumFuncParaInfo, randomParaAddr, randomResultAddr, "
                       "randomCounterAddr, randomSeed, randomNum) or its 104 bytes")
        return ERR.ACL_ERROR_INVALID_PARAM
    data_type, func, first, second, para_addr, result, counter, seed, num = _TASK.unpack(raw)
    if data_type not in TYPES:
        RT.tls.explain(f"task_info: taskInfo->dataType {data_type} is not supported (INT32, INT64, "
                       f"UINT32, "
                       f"UINT64, BF16, FLOAT16, FLOAT)")
        return ERR.ACL_ERROR_INVALID_PARAM
    if not _has_generator(RT.profile_in_force()):
        RT.tls.explain("aclrtRandomNumAsync: this chip has no random-number generator task "
                       "(Atlas A2 / A3 only)")
        return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    s, code = lookup(stream)
    if code:
        return code
    if reserve is not None and not (type(reserve) is int and reserve == 0):    # NULL: None or 0
        RT.tls.explain("reserve must be NULL")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    s, code = resolve_same_ctx(s)
    if code:
        return code
    t = TYPES[data_type]
    if func not in FUNC_TYPES or t not in FUNC_TYPES[func]:
        RT.tls.explain(f"task_info: random number function type {func} with data type {data_type}: "
                       f"dropout bitmask / normal / truncated normal take BF16, FLOAT16 or "
                       f"FLOAT, uniform any of the seven")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    if not counter or not result:
        RT.tls.explain("task_info: randomCounterAddr is NULL" if not counter else
                       "task_info: randomResultAddr is NULL")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    seed, num = _unpara(seed), _unpara(num)
    params = [_unpara(first)] + ([_unpara(second)]
                                 if func != ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK else [])
    if not _check_para(seed, 8) or not _check_para(num, 8) or \
            not all(_check_para(p, SIZE_OF[t]) for p in params):
        RT.tls.explain("task_info: an aclrtRandomParaInfo of the task is invalid: isAddr must be 0 "
                       "or 1 and "
                       "size in [1, the data type's size] (8 for an address, the seed and the "
                       "count)")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    mem = s.device.state.mem
    if para_addr and not (mem.is_device(para_addr) and mem.check_range(para_addr, 16)):
        RT.tls.explain("task_info: randomParaAddr must be 16 bytes of device memory (the runtime "
                       "copies "
                       "the parameters there at the launch)")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    if s.ctx.failure_code:
        return s.ctx.failure_code
    bits = [B_RATIO] if func == ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK else \
        ([B_MIN, B_MAX] if func == ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS else [B_MEAN, B_STDDEV])
    bitmap = sum(1 << b for b, p in zip(bits, params) if p[0] == 0)
    bitmap |= (1 << B_SEED if seed[0] == 0 else 0) | (1 << B_NUM if num[0] == 0 else 0)
    flags = func | t << 8 | bitmap << 16
    pblock = struct.pack("<QQ", params[0][1], params[1][1] if len(params) > 1 else 0)
    block = bytearray(_BLOCK)
    block[0:16] = pblock
    words = [flags, 0, result, counter, seed[1], num[1], 0]
    block[_STAGE_AT:_STAGE_AT + 56] = struct.pack("<7Q", *words)
    addr = A.place(s, bytes(block))
    words[1] = para_addr or addr
    words[6] = addr
    cfg = struct.pack("<7Q", *words)
    mem.view(addr + _STAGE_AT, 56)[:] = np.frombuffer(cfg, np.uint8)
    mem.view(addr + _CFG_AT, 56)[:] = np.frombuffer(cfg, np.uint8)
    tm = s.device.profile.timing
    dur = 0
    if num[0] == 0:                    # the count is known: the DSA's time for the output
        n = num[1]
        out = (n + 7) // 8 if func == ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK else \
            n * SIZE_OF[t]
        dur = tm.memcpy_setup_ns + out // max(1, tm.memcpy_d2d_bytes_per_ns)
    pos = s.submit(S.OP_KERNEL, s.device.timing.host_memcpy_async_ns, _KID, addr + _CFG_AT,
                   56, min(dur, 2 ** 62), 0, 1)
    if pos < 0:
        return refused(pos)
    if para_addr:                      # the launch's synchronous copy of the parameters
        s.device.advance_to_host()
        mem.view(para_addr, 16)[:] = np.frombuffer(pblock, np.uint8)
    return ERR.ACL_SUCCESS


# ---- aclrtTaskUpdateAsync ----
def _update_info(info):
    """(id, a dict of the union member's fields) of an aclrtTaskUpdateInfo dict; _Bad else."""
    if not isinstance(info, dict) or not set(info) <= {"id", "val"}:
        raise _Bad
    uid = _int(info.get("id", 0), -2 ** 31, 2 ** 31 - 1)
    val = info.get("val") or {}
    if not isinstance(val, dict) or len(val) > 1 or \
            not set(val) <= {"randomTaskAttr", "aicAivTaskAttr"}:
        raise _Bad
    fields = {}
    for member, d in val.items():
        allowed = {"srcAddr", "size", "rsv"} if member == "randomTaskAttr" else \
            {"binHandle", "funcEntryAddr", "blockDimAddr", "rsv"}
        if not isinstance(d, dict) or not set(d) <= allowed:
            raise _Bad
        fields = {k: (_int(v or 0, 0, 2 ** 64 - 1) if k != "rsv" else 0) for k, v in d.items()}
    return uid, fields


def _target(s):
    """The model stream whose task an update names: a stream bound to a built model, or a
    model's own stream (aclmdlRIGetStreams); None for any other (107000)."""
    if s.is_model:
        return s
    return s.bound


def task_update_async(task_stream, task_id, info, exec_stream) -> int:
    """aclrtTaskUpdateAsync: update task ``task_id`` of ``task_stream`` (a stream bound to a
    model, aclmdlRIBindStream, or a model's own stream) in ``exec_stream``'s order. ``info``:
    ``aclrtTaskUpdateInfo`` as a dict, ``{"id": ACL_RT_UPDATE_RANDOM_TASK, "val":
    {"randomTaskAttr": {"srcAddr": p, "size": 104}}}``: when ``exec_stream`` reaches the update
    it reads the aclrtRandomNumTaskInfo at ``srcAddr`` and the task takes its parameter, result
    and counter addresses, seed and count (the value / address kind of the seed and count stays
    the task's). Check order: NULL or malformed info 100000 (acl); an id other than 1 / 2
    107000; RANDOM: NULL task stream 107000, its handle 107017, a chip without the DSA update
    (A2 / A3 only) 207000, the exec stream's handle 107017, NULL ``srcAddr`` or ``size`` not 104
    107000, context 107002, an exec stream bound to a model 107000, capturing 107027, of another
    context 107003, a task stream in no model 107000, no task ``task_id`` or not a
    random-number task 107000. AIC_AIV: the handles 107017, NULL binHandle / funcEntryAddr /
    blockDimAddr 107000, then 207000 (not simulated: docs/fidelity.md)."""
    if info is None or (type(info) is int and info == 0):
        RT.tls.explain("info is NULL")
        return ERR.ACL_ERROR_INVALID_PARAM
    try:
        uid, f = _update_info(info)
    except Exception:                 # noqa: BLE001 -- _Bad, or a hostile object's own error
        RT.tls.explain("info is not an aclrtTaskUpdateInfo: {'id': ..., 'val': "
                       "{'randomTaskAttr': {'srcAddr': ..., 'size': ...}}}")
        return ERR.ACL_ERROR_INVALID_PARAM
    if uid == ACL_RT_UPDATE_AIC_AIV_TASK:
        return _update_aic_aiv(task_stream, exec_stream, f)
    if uid != ACL_RT_UPDATE_RANDOM_TASK:
        RT.tls.explain(f"info: aclrtTaskUpdateInfo.id {uid} is not ACL_RT_UPDATE_RANDOM_TASK "
                       f"(1) or "
                       f"ACL_RT_UPDATE_AIC_AIV_TASK (2)")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    if not task_stream:
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    ts, code = lookup(task_stream)
    if code:
        return code
    if not _has_generator(RT.profile_in_force()):
        RT.tls.explain("updating a random-number task needs the DSA update (Atlas A2 / A3 only)")
        return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    es, code = lookup(exec_stream)
    if code:
        return code
    src, size = f.get("srcAddr", 0), f.get("size", 0)
    if not src or size != TASK_INFO_BYTES:
        RT.tls.explain(f"info: randomTaskAttr: srcAddr must name the {TASK_INFO_BYTES} bytes of an "
                       f"aclrtRandomNumTaskInfo in device memory (size {TASK_INFO_BYTES})")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    ctx = RT.current_context
    if ctx is None:
        return ERR.ACL_ERROR_RT_CONTEXT_NULL
    es = ctx.default_stream if es is None else es
    if es.is_model or es.bound is not None:
        RT.tls.explain("exec_stream (execStream) must be a single-operator stream, not one bound "
                       "to a model")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    if es.capture is not None:
        RT.tls.explain("aclrtTaskUpdateAsync on a capturing stream is not supported")
        return ERR.ACL_ERROR_RT_STREAM_CAPTURED
    if es.ctx is not ctx:
        return ERR.ACL_ERROR_RT_STREAM_CONTEXT
    cs = _target(ts)
    if cs is None or cs.model.destroyed:
        RT.tls.explain(f"task_stream: {ts.describe()} is not in a model: bind it with "
                       f"aclmdlRIBindStream")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    st = es.device.state
    st.flush(cs.sq)
    if not 0 <= task_id < min(cs.task_count, 1 << 16):
        RT.tls.explain(f"no task {task_id} on {ts.describe()}")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    row = st.pool[st.row_of(cs.sq, task_id)]
    op, kid, cfg = int(row["op"]), int(row["a0"]), int(row["a1"])
    del row                             # a view of the pool, which growing a ring may move
    if op != S.OP_KERNEL or kid != _KID:
        RT.tls.explain(f"task {task_id} of {ts.describe()} is not a random-number task: only "
                       f"the random number generation task supports this update")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    if es.ctx.failure_code:
        return es.ctx.failure_code
    if cs.user_stream is not None and cs.user_stream.bound is cs and cs.capacity < cs.depth:
        # a bound stream may still get tasks, and its ring grows (moves) when it fills up: it
        # must not move under the queued SQE update, so it takes its whole depth now
        st.grow_sq(cs.sq, cs.depth)
        cs.capacity = cs.depth
        cs._ring_base = -1
    block = int(np.frombuffer(bytes(st.mem.view(cfg + 48, 8)), np.int64)[0])
    flags = int(np.frombuffer(bytes(st.mem.view(cfg, 8)), np.int64)[0])
    stage = block + _STAGE_AT
    args = A.place(es, struct.pack("<4q", src if src < 2 ** 63 else src - 2 ** 64, stage,
                                   flags, block))
    pos = es.submit(S.OP_KERNEL, es.device.timing.host_task_update_ns, _UKID, args, 32, 0, 0, 1)
    if pos < 0:
        return refused(pos)
    from .taskgroup import rewrite_task
    pos = rewrite_task(es, cs, task_id, _KID, stage)
    return refused(pos) if pos < 0 else ERR.ACL_SUCCESS


def _update_aic_aiv(task_stream, exec_stream, f) -> int:
    """RT_UPDATE_AIC_AIV_TASK (``rtModelTaskUpdate``, ``ApiErrorDecorator::ModelTaskUpdate``):
    the handles (107017), NULL handle / addresses (107000), then refused: the TS reads the
    function entry and numBlocks from device memory when the update task runs and patches the
    kernel's SQE, which npusim's SQE update (rows built on the host) cannot express."""
    for h in (task_stream, exec_stream):
        _, code = lookup(h)
        if code:
            return code
    if not task_stream or not exec_stream or not f.get("funcEntryAddr") or \
            not f.get("blockDimAddr") or not f.get("binHandle"):
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    RT.tls.explain("aclrtTaskUpdateAsync with ACL_RT_UPDATE_AIC_AIV_TASK is not simulated: the "
                   "device reads the function entry and numBlocks when the update runs")
    return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
