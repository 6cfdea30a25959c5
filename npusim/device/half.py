"""IEEE fp16 <-> fp32 and bfloat16 <-> fp32 conversion in numba (numba has no float16 arrays on
the CPU).

Kernels that work on ``half`` or ``bfloat16`` data view it as ``uint16`` and convert with these;
rounding is round-to-nearest-even, like numpy's ``astype(np.float16)``.
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def h2f(h):
    h = np.uint32(h)
    sign = (h >> 15) & 1
    exp = (h >> 10) & 0x1F
    man = h & 0x3FF
    if exp == 0:
        v = np.float32(man) * np.float32(2.0 ** -24)
    elif exp == 31:
        v = np.float32(np.inf) if man == 0 else np.float32(np.nan)
    else:
        bits = np.uint32(((exp + 112) << 23) | (man << 13))
        v = np.array([bits], np.uint32).view(np.float32)[0]
    return -v if sign else v


@njit(cache=True, inline="always")
def f2h(f):
    bits = np.array([np.float32(f)], np.float32).view(np.uint32)[0]
    sign = (bits >> 16) & 0x8000
    exp = np.int64((bits >> 23) & 0xFF)
    man = bits & 0x7FFFFF
    if exp == 255:                                   # inf / nan
        return np.uint16(sign | 0x7C00 | (0x200 if man else 0))
    e = exp - 127 + 15
    if e >= 31:                                      # overflow -> inf
        return np.uint16(sign | 0x7C00)
    if e <= 0:                                       # subnormal or zero
        if e < -10:
            return np.uint16(sign)
        man = man | 0x800000
        shift = np.uint32(14 - e)
        half = np.uint32(1) << (shift - np.uint32(1))
        r = man >> shift
        rem = man & ((np.uint32(1) << shift) - np.uint32(1))
        if rem > half or (rem == half and (r & 1)):
            r += 1
        return np.uint16(sign | r)
    r = np.uint32((e << 10) | (man >> 13))
    rem = man & 0x1FFF
    if rem > 0x1000 or (rem == 0x1000 and (r & 1)):
        r += 1                                       # may carry into the exponent: still right
    return np.uint16(sign | r)


@njit(cache=True, inline="always")
def bf2f(b):
    """bfloat16 (its bits as a uint16) -> fp32: the upper half of the fp32's bits."""
    return np.array([np.uint32(b) << np.uint32(16)], np.uint32).view(np.float32)[0]


@njit(cache=True, inline="always")
def f2bf(f):
    """fp32 -> bfloat16 bits, rounded to nearest even; a NaN stays a (quiet) NaN."""
    bits = np.array([np.float32(f)], np.float32).view(np.uint32)[0]
    if (bits & np.uint32(0x7F800000)) == np.uint32(0x7F800000) and (bits & np.uint32(0x7FFFFF)):
        return np.uint16((bits >> np.uint32(16)) | np.uint32(0x40))
    rnd = np.uint64(0x7FFF) + np.uint64((bits >> np.uint32(16)) & np.uint32(1))
    return np.uint16((np.uint64(bits) + rnd) >> np.uint64(16))
