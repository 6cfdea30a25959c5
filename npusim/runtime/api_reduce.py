"""``aclrtReduceAsync``: an element-wise reduction of device memory, one task in stream order.

How the real runtime does it (hicann/runtime): ``src/acl/aclrt_impl/memory.cpp``
``aclrtReduceAsyncImpl`` (NULL ``dst`` or ``src``, a ``reserve`` that is not NULL, a data type
outside its ``kMapDataType`` -> 100000), ``src/runtime/api/api_c_standard_soc.cc``
``rtsLaunchReduceAsyncTask``, ``src/runtime/api/impl/api_error.cc``
``ApiErrorDecorator::ReduceAsync`` (``cnt == 0``, a kind outside ``[RT_MEMCPY_SDMA_AUTOMATIC_ADD,
RT_RECUDE_KIND_END)`` = [10, 14), an ADD of more than ``MAX_MEMCPY_SIZE_OF_D2D`` (4 GiB) -> 107000,
in that order), ``api_impl.cc`` ``ApiImpl::ReduceAsync`` (no context -> 107002, a NULL stream is
the context's default stream, a stream of another context -> 107003). The chapter:
``docs/zh/api_ref/12_execution_control.md`` §aclrtReduceAsync (``count`` in bytes; ``dst`` and
``src`` on the stream's device). On the device it is an SDMA copy with an inline reduce:
``dst[i] = dst[i] OP src[i]``.

The model (docs/fidelity.md row 150): one KERNEL SQE on the stream whose body (registered in the
kernel table under :data:`REDUCE_BODY`, on the DMA unit) reads ``dst`` and ``src`` when the task
runs — so it sees every earlier task of the stream, and a capturing stream captures it like any
kernel launch (every replay reduces again). Its duration is ``count`` at the profile's
device-to-device copy bandwidth. Addresses are not checked at submit (the runtime does not check
them): a range outside the stream's device memory faults when the task runs, as a kernel
exception. Integers wrap (two's complement); fp16 / bf16 round to nearest even; ``EQUAL`` (13),
whose element rule the sources do not say, is refused (207000).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import errors as ERR
from ..device import memview as V
from ..device import sqe as S
from ..device.half import bf2f, f2bf, f2h, h2f
from ..device.kernels import KERNEL_TRAP, TABLE, UNIT_DMA, arena, compiled_body
from . import args as A
from .runtime import RT
from .stream import refused, resolve_same_ctx

# aclrtReduceKind (acl_rt.h)
ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX = 10, 11
ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN, ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL = 12, 13
_KIND_END = 14                                   # RT_RECUDE_KIND_END
_MAX_ADD_BYTES = 4 * 1024 ** 3                   # MAX_MEMCPY_SIZE_OF_D2D (base_info.hpp)

# aclDataType (acl_base.h) -> (element code of the body, bits per element): memory.cpp kMapDataType
ACL_FLOAT, ACL_FLOAT16, ACL_INT8, ACL_INT32, ACL_UINT8 = 0, 1, 2, 3, 4
ACL_INT16, ACL_UINT16, ACL_UINT32, ACL_BF16, ACL_INT4 = 6, 7, 8, 27, 29
_T_F32, _T_F16, _T_BF16, _T_I8, _T_U8, _T_I16, _T_U16, _T_I32, _T_U32, _T_I4 = range(10)
TYPES = {ACL_FLOAT: (_T_F32, 32), ACL_FLOAT16: (_T_F16, 16), ACL_BF16: (_T_BF16, 16),
         ACL_INT8: (_T_I8, 8), ACL_UINT8: (_T_U8, 8), ACL_INT16: (_T_I16, 16),
         ACL_UINT16: (_T_U16, 16), ACL_INT32: (_T_I32, 32), ACL_UINT32: (_T_U32, 32),
         ACL_INT4: (_T_I4, 4)}

REDUCE_BODY = "__npusim_sdma_reduce"


@njit(cache=True, inline="always")
def _op(kind, a, b):
    if kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM:
        return a + b
    if kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX:
        return a if a >= b else b
    return a if a <= b else b


@njit(cache=True, inline="always")
def _signed(x, bits):
    half = 1 << (bits - 1)
    return x - (1 << bits) if x >= half else x


def sdma_reduce(memp, msize, ctxp, args, b, nb):
    """The reduce task: args (dst, src, n elements, kind, element code)."""
    mem, ctx = arena(memp, msize, ctxp)
    try:
        a = V.args(mem, ctx, args, 5)
        dst, src, n, kind, t = a[0], a[1], a[2], a[3], a[4]
        if t == _T_F32:
            d = V.f32(mem, ctx, dst, n)
            s = V.r_f32(mem, ctx, src, n)
            for i in range(n):
                d[i] = np.float32(_op(kind, d[i], s[i]))
        elif t == _T_F16 or t == _T_BF16:
            d = V.u16(mem, ctx, dst, n)
            s = V.r_u16(mem, ctx, src, n)
            for i in range(n):
                if t == _T_F16:
                    d[i] = f2h(np.float32(_op(kind, h2f(d[i]), h2f(s[i]))))
                else:
                    d[i] = f2bf(np.float32(_op(kind, bf2f(d[i]), bf2f(s[i]))))
        elif t == _T_I8 or t == _T_U8 or t == _T_I4:
            m = n if t != _T_I4 else (n + 1) // 2
            d = V.u8(mem, ctx, dst, m)
            s = V.r_u8(mem, ctx, src, m)
            for i in range(m):
                if t == _T_I4:
                    lo = _op(kind, _signed(np.int64(d[i]) & 15, 4), _signed(np.int64(s[i]) & 15, 4))
                    hi = _op(kind, _signed(np.int64(d[i]) >> 4, 4), _signed(np.int64(s[i]) >> 4, 4))
                    d[i] = np.uint8(((hi & 15) << 4) | (lo & 15))
                elif t == _T_I8:
                    d[i] = np.uint8(_op(kind, _signed(np.int64(d[i]), 8),
                                        _signed(np.int64(s[i]), 8)) & 0xFF)
                else:
                    d[i] = np.uint8(_op(kind, np.int64(d[i]), np.int64(s[i])) & 0xFF)
        elif t == _T_I16 or t == _T_U16:
            d = V.u16(mem, ctx, dst, n)
            s = V.r_u16(mem, ctx, src, n)
            for i in range(n):
                x, y = np.int64(d[i]), np.int64(s[i])
                if t == _T_I16:
                    x, y = _signed(x, 16), _signed(y, 16)
                d[i] = np.uint16(_op(kind, x, y) & 0xFFFF)
        else:
            d = V.u32(mem, ctx, dst, n)
            s = V.r_u32(mem, ctx, src, n)
            for i in range(n):
                x, y = np.int64(d[i]), np.int64(s[i])
                if t == _T_I32:
                    x, y = _signed(x, 32), _signed(y, 32)
                d[i] = np.uint32(_op(kind, x, y) & 0xFFFFFFFF)
        return 0
    except Exception:
        return KERNEL_TRAP


_KID = TABLE.register_lazy(REDUCE_BODY, lambda: compiled_body(sdma_reduce), 0, unit=UNIT_DMA,
                           params=(("dst", "ptr"), ("src", "ptr"), ("n", "u64"),
                                   ("kind", "u64"), ("type", "u64")))


def reduce_async(dst, src, count, kind, data_type, stream, reserve=None) -> int:
    """aclrtReduceAsync: ``dst = dst OP src`` over ``count`` bytes of ``data_type`` elements,
    when the task runs on ``stream`` (None: the default stream)."""
    if not dst or not src or reserve is not None or data_type not in TYPES:
        return ERR.ACL_ERROR_INVALID_PARAM
    if count == 0 or not ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM <= kind < _KIND_END or \
            (kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM and count > _MAX_ADD_BYTES):
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    if stream is None or stream == 0:
        s = None
    else:
        s, code = RT.handles.get("stream", stream)
        if code:
            return code
    s, code = resolve_same_ctx(s)
    if code:
        return code
    if kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL:
        RT.tls.explain("aclrtReduceAsync with ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL is not "
                       "simulated: the sources do not say its element rule")
        return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    if s.ctx.failure_code:
        return s.ctx.failure_code
    code_t, bits = TYPES[data_type]
    n = count * 8 // bits
    addr = A.place(s, np.array([dst, src, n, kind, code_t], np.int64).tobytes())
    t = s.device.profile.timing
    dur = t.memcpy_setup_ns + count // max(1, t.memcpy_d2d_bytes_per_ns)
    pos = s.submit(S.OP_KERNEL, s.device.timing.host_memcpy_async_ns, _KID, addr, 40, dur, 0, 1)
    return refused(pos) if pos < 0 else ERR.ACL_SUCCESS
