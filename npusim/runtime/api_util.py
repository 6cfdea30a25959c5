"""Chapter 24 (other APIs) and chapter 23 (log APIs): the ``acl``-level helpers a program can
observe — data-type sizes, the fp16 conversions, the version and capability queries — and the
application log.

Sources (hicann/runtime):

* ``src/acl/aclrt_impl/data_buffer.cpp:22-54`` (``aclDataTypeSizeImpl``: a switch over the
  ``aclDataType`` values of ``include/external/acl/acl_base_rt.h:140-168``; ``ACL_STRING`` and
  ``ACL_DT_UNDEFINED`` 0, any value the switch does not name 8 — its ``default``);
* ``src/acl/aclrt_impl/types/fp16_impl.cpp:82-175`` (``Fp16ToFloat`` / ``FloatToFp16``): finite
  values convert exactly, float -> fp16 rounds to nearest even; but neither keeps NaN / Inf:
  an fp16 with exponent 31 is read as a number (+Inf -> 65536.0, -Inf -> -65536.0, the quiet NaN
  0x7E00 -> 98304.0) and a float too large for fp16, an Inf or a NaN saturates to +-65504
  (0x7BFF / 0xFBFF, the sign kept);
* ``src/acl/aclrt_impl/acl.cpp:1357-1390`` (``aclGetDeviceCapabilityImpl``: NULL value 100000,
  a device id >= the device count 100000, an info type other than AI core / vector core / L2
  size 100000);
* ``src/dfx/log/liblog/slog/slog_api.cpp:633-688`` (``acllogCheckDebugLevel``: a negative module
  id is FALSE; ``acllogRecord`` / ``acllogVaList``: a module id outside [0, 0x7FF...] is dropped
  with a warning, a NULL format is dropped).

docs/fidelity.md rows 226-231.
"""
from __future__ import annotations

import logging
import math
import os

import numpy as np

from .. import errors as ERR
from .runtime import RT, profile

OK = ERR.ACL_SUCCESS

# aclDataType (acl_base_rt.h:140-168)
ACL_DT_UNDEFINED, ACL_STRING, ACL_COMPLEX64, ACL_COMPLEX128 = -1, 13, 16, 17
ACL_DOUBLE, ACL_BOOL, ACL_UINT1, ACL_COMPLEX32 = 11, 12, 30, 33
ACL_HIFLOAT8, ACL_FLOAT8_E5M2, ACL_FLOAT8_E4M3FN, ACL_FLOAT8_E8M0 = 34, 35, 36, 37
_SIZES = {ACL_STRING: 0, ACL_DT_UNDEFINED: 0, ACL_UINT1: 1, 29: 1,               # INT4
          ACL_BOOL: 1, 2: 1, 4: 1, ACL_HIFLOAT8: 1, ACL_FLOAT8_E5M2: 1, ACL_FLOAT8_E4M3FN: 1,
          ACL_FLOAT8_E8M0: 1,
          1: 2, 6: 2, 7: 2, 27: 2,                       # FLOAT16 INT16 UINT16 BF16
          0: 4, 3: 4, 8: 4, ACL_COMPLEX32: 4,            # FLOAT INT32 UINT32
          ACL_COMPLEX128: 16}
"""aclDataTypeSize's switch; every other value (INT64, UINT64, DOUBLE, COMPLEX64 and the values
it does not name, e.g. the fp6 / fp4 types) is its ``default``: 8."""

# aclDeviceInfo (acl_base_rt.h:218-223)
ACL_DEVICE_INFO_UNDEFINED, ACL_DEVICE_INFO_AI_CORE_NUM = -1, 0
ACL_DEVICE_INFO_VECTOR_CORE_NUM, ACL_DEVICE_INFO_L2_SIZE = 1, 2

# aclLogLevel (acl_base.h) and the log module ids acllogRecord takes (slog: [0, 0x7FFFFFFF])
ACL_DEBUG, ACL_INFO, ACL_WARNING, ACL_ERROR = 0, 1, 2, 3
_PY_LEVEL = {ACL_DEBUG: logging.DEBUG, ACL_INFO: logging.INFO, ACL_WARNING: logging.WARNING,
             ACL_ERROR: logging.ERROR}
LOGGER = logging.getLogger("npusim.acllog")
"""Where the application log goes: Python's ``logging`` (the real runtime writes plog files)."""


def _u16(value):
    """An aclFloat16 (uint16_t) argument: an int in range, or a numpy float16 (its bits)."""
    if isinstance(value, np.float16):
        return int(value.view(np.uint16))
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        return None
    v = int(value)
    return v if 0 <= v <= 0xFFFF else None


def data_type_size(data_type):
    """aclDataTypeSize -> the size in bytes of one element of ``data_type`` (a size_t, no code):
    the runtime's switch (``data_buffer.cpp:22``): 0 for ACL_STRING / ACL_DT_UNDEFINED, 1 for the
    sub-byte and 8-bit types, 2, 4, 16 for COMPLEX128, 8 for any other value."""
    return _SIZES.get(data_type, 8)


def float16_to_float(value):
    """aclFloat16ToFloat -> the float (a C float, as a Python float) of the fp16 bits ``value``
    (an int 0..0xFFFF or a numpy.float16). Exact for every finite half; exponent 31 is read as a
    number, as the runtime does (+Inf -> 65536.0, 0x7E00 -> 98304.0: ``fp16_impl.cpp:81``).
    A value that is not a uint16: None."""
    h = _u16(value)
    if h is None:
        RT.tls.explain(f"value {value!r} is not an aclFloat16 (uint16_t bits)")
        return None
    sign, exp, man = h >> 15, (h >> 10) & 0x1F, h & 0x3FF
    if exp == 0 and man == 0:
        return -0.0 if sign else 0.0
    if exp == 0:                                          # subnormal: man * 2**-24
        mag = man * 2.0 ** -24
    else:                                                 # exponent 31 too (no Inf / NaN)
        mag = (1024 + man) * 2.0 ** (exp - 25)
    return -mag if sign else mag


def float_to_float16(value):
    """aclFloatToFloat16 -> the fp16 bits (an int, C's aclFloat16 = uint16_t) of the float
    ``value`` (first rounded to a C float, as the call passes it): round to nearest even; a
    value beyond the fp16 range, an Inf or a NaN saturates to 0x7BFF / 0xFBFF (+-65504, the sign
    kept: ``fp16_impl.cpp:112``). A value that is not a real number: None."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer,
                                                                     np.floating)):
        RT.tls.explain(f"value {value!r} is not a float")
        return None
    try:
        with np.errstate(over="ignore"):
            f32 = np.float32(value)
    except OverflowError:                                 # an int beyond any double
        f32 = np.float32(math.inf if value > 0 else -math.inf)
    bits = int(np.array(f32, dtype=np.float32).view(np.uint32))
    sign = bits >> 31
    e = (bits >> 23) & 0xFF
    m = bits & 0x7FFFFF
    if e > 0x8F:                                          # overflow, Inf, NaN: saturate
        e16, m16 = 30, 0x3FF
    elif e <= 0x70:                                       # fp16 subnormal or zero
        e16 = 0
        if e >= 0x67:
            t = (m | 0x800000) << (e - 0x67)
            m16 = (t >> 23) + _round_up(t, 23)
        else:
            m16 = 1 if (e == 0x66 and m > 0) else 0
        if m16 == 0x400:                                  # rounded up to the smallest normal
            e16, m16 = 1, 0
    else:
        e16 = e - 0x70
        m16 = (m >> 13) + _round_up(m, 13)
        if m16 == 0x400:                                  # the mantissa carried into the exponent
            e16, m16 = e16 + 1, 0
        if e16 >= 31:                                     # rounded past 65504: saturate
            e16, m16 = 30, 0x3FF
    return (sign << 15) | (e16 << 10) | (m16 & 0x3FF)


def _round_up(man: int, cut: int) -> int:
    """1 when dropping the low ``cut`` bits of ``man`` rounds up (to nearest, ties to even)."""
    half = 1 << (cut - 1)
    low = man & ((1 << cut) - 1)
    return int(low > half or (low == half and (man >> cut) & 1))


# ---- version and capability queries ----
def get_device_capability(device_id, device_info):
    """aclGetDeviceCapability -> (value, code): ``ai_core_cnt``, ``vector_core_cnt`` or
    ``l2_size`` of the SoC's platform file (``aclGetDeviceCapabilityImpl``, acl.cpp:1355-1390:
    ``GetPlatformInfoWithKey``; ``Profile.ai_core_cnt`` ...: 24 / 48 / 192 MiB on A2 / A3). A
    device id beyond the device count 100000, an info type other than the three 100000."""
    p = profile()
    count = p.device_count
    if device_id > count - 1:
        RT.tls.explain(f"deviceId {device_id} greater than deviceNum {count}")
        return None, ERR.ACL_ERROR_INVALID_PARAM
    if device_info == ACL_DEVICE_INFO_AI_CORE_NUM:
        return p.ai_core_cnt, OK
    if device_info == ACL_DEVICE_INFO_VECTOR_CORE_NUM:
        return p.vector_core_cnt, OK
    if device_info == ACL_DEVICE_INFO_L2_SIZE:
        return p.l2_size, OK
    RT.tls.explain(f"deviceInfo {device_info} is not AI_CORE_NUM(0), VECTOR_CORE_NUM(1) or "
                   "L2_SIZE(2)")
    return None, ERR.ACL_ERROR_INVALID_PARAM


# ---- the application log (chapter 23, aclAppLog of chapter 24) ----
def _global_level() -> int:
    """ASCEND_GLOBAL_LOG_LEVEL (0 debug .. 3 error, 4 null), the runtime's default 3."""
    try:
        return int(os.environ.get("ASCEND_GLOBAL_LOG_LEVEL", "3"))
    except ValueError:
        return 3


def _int(v):
    return int(v) if isinstance(v, (int, np.integer)) and not isinstance(v, bool) else None


def log_check_debug_level(module_id, log_level):
    """acllogCheckDebugLevel -> 1 when a record of ``log_level`` for ``module_id`` would be
    written, else 0 (an int32, no code): a negative module id 0; a level below
    ASCEND_GLOBAL_LOG_LEVEL (default 3, error) or beyond error 0 (``slog_api.cpp:633``)."""
    module_id, log_level = _int(module_id), _int(log_level)
    if module_id is None or log_level is None or module_id < 0:
        return 0
    return int(_global_level() <= log_level <= ACL_ERROR)


def log_record(module_id, level, fmt, *args):
    """acllogRecord (void; returns None): writes ``fmt % args`` to the ``npusim.acllog`` logger
    when the level is enabled; a module id outside [0, 2**31) or a NULL format is dropped, as
    in ``slog_api.cpp:651-666``."""
    return log_va_list(module_id, level, fmt, args)


def log_va_list(module_id, level, fmt, args=()):
    """acllogVaList (void; returns None): :func:`log_record` with the arguments as one
    sequence (C's va_list)."""
    if _int(module_id) is None or module_id < 0 or not isinstance(fmt, str):
        return None
    if not isinstance(args, (list, tuple)):
        args = () if args is None else (args,)
    if log_check_debug_level(module_id, level):
        LOGGER.log(_PY_LEVEL.get(level, logging.ERROR), "%s", _format(fmt, args))
    return None


def app_log(log_level, func, file, line, fmt, *args):
    """aclAppLog (void; returns None): the application's own log record, written with its
    function, file and line to the ``npusim.acllog`` logger when ``log_level`` is enabled."""
    if not isinstance(fmt, str) or not log_check_debug_level(0, log_level):
        return None
    LOGGER.log(_PY_LEVEL.get(log_level, logging.ERROR), "[%s:%s] %s: %s", file, line, func,
               _format(fmt, args))
    return None


def _format(fmt: str, args) -> str:
    try:
        return fmt % tuple(args) if args else fmt
    except (TypeError, ValueError):
        return f"{fmt} {tuple(args)!r}"          # the runtime reports a bad format string


# ---- plog's record callbacks (acllogRegisterCallback / acllogUnregisterCallback) ----
OUTPUT_TYPE_DEBUG, OUTPUT_TYPE_RUN, OUTPUT_TYPE_BOTH, OUTPUT_TYPE_MAX = 0, 1, 2, 3
ACLLOG_SUCCESS, ACLLOG_FAILURE = 0, -1
MAX_LOG_CALLBACKS = 16


def _log_callbacks() -> dict:
    """{"next": the next handle, "entries": [(handle, callback, user data, output type)]}: plog's
    ``g_callbacks`` (process-wide, ``RT.callbacks``)."""
    return RT.callbacks.setdefault("acllogRegisterCallback", {"next": 1, "entries": []})


def log_register_callback(callback_func, user_data, output_log_type):
    """acllogRegisterCallback -> (handle, result): a NULL or uncallable callback, an output type
    outside DEBUG / RUN / BOTH, or 16 registered already: (None, -1); else a handle counting
    from 1 (``plog_callback.cpp:69``). plog calls them with the *device's* log records
    (``PlogDispatchDeviceLogCallback``); the simulated devices write no log, so they are never
    called (docs/fidelity.md row 239)."""
    t = _int(output_log_type)
    table = _log_callbacks()
    if callback_func is None or not callable(callback_func) or t is None or \
            not 0 <= t < OUTPUT_TYPE_MAX or len(table["entries"]) >= MAX_LOG_CALLBACKS:
        RT.tls.explain("callbackFunc is NULL, the output type is not 0..2, or 16 callbacks are "
                       "registered")
        return None, ACLLOG_FAILURE
    handle = table["next"]
    table["next"] = handle + 1 if handle + 1 < 2 ** 64 else 1
    table["entries"].append((handle, callback_func, user_data, t))
    return handle, ACLLOG_SUCCESS


def log_unregister_callback(callback):
    """acllogUnregisterCallback -> 0, or -1 for a handle not registered."""
    entries = _log_callbacks()["entries"]
    for i, e in enumerate(entries):
        if e[0] == callback:
            del entries[i]
            return ACLLOG_SUCCESS
    RT.tls.explain(f"callback handle {callback!r} is not registered")
    return ACLLOG_FAILURE


# ---- aclrtProfTrace (chapter 24) ----
PROF_TRACE_USER_DATA_SIZE = 24
"""sizeof(rtProfTraceUserData): uint64 id, uint64 modelId, uint16 tagId, padded
(``src/runtime/api/api.hpp:99``)."""


def prof_trace(userdata, length, stream) -> int:
    """aclrtProfTrace: a PROFILER_TRACE_EX task in stream order — it always takes its place in
    the stream (and in a graph when the stream captures); what it would tell msprof is not
    simulated, so it runs as a NOP. ``userdata``: the rtProfTraceUserData bytes (bytes-like)
    or a host pointer. Checks (``dfx.cpp:24``, ``api_c.cc:4080-4106``, ``api_impl.cc:5180``):
    NULL userdata 100000; ``length`` outside (0, 24] 107000 (a bytes-like shorter than
    ``length`` too: C would read past it); the stream handle 107017; no context 107002; another
    context's stream 107003 (NULL: the default stream)."""
    from ..device import sqe as S            # deferred: the helpers above need no device
    from . import stream as ST
    if userdata is None or (isinstance(userdata, int) and not isinstance(userdata, bool)
                            and userdata == 0):
        RT.tls.explain("userdata is NULL")
        return ERR.ACL_ERROR_INVALID_PARAM
    n = _int(length)
    given = len(userdata) if isinstance(userdata, (bytes, bytearray, memoryview)) else \
        userdata.nbytes if isinstance(userdata, np.ndarray) else None
    if n is None or not 0 < n <= PROF_TRACE_USER_DATA_SIZE or (given is not None and given < n):
        RT.tls.explain(f"length {length!r} is not in (0, {PROF_TRACE_USER_DATA_SIZE}] or exceeds "
                       "the userdata given")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    s, code = ST.lookup(stream)
    if code:
        return code
    s, code = ST.resolve_same_ctx(s)
    if code:
        return code
    return ST.refused(s.submit(S.OP_NOP, s.device.timing.host_api_ns))
