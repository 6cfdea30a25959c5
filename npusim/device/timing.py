"""The device cost vector: the timing constants the engine needs, as one int64 array.

The profile (``npusim.profiles.Timing``) names and documents every constant; this module only fixes
where each one sits in the array the jitted engine reads. The first ``N_OPCODES`` entries are the
fixed device cost of each opcode (``Timing.fixed_cost_by_op``); the named entries after them are
the size- and shape-dependent parts. Durations are integer nanoseconds, bandwidths bytes per ns.
"""
from __future__ import annotations

import numpy as np

from .sqe import N_OPCODES, OP_VALUE

T_KERNEL_DEFAULT = 32     # kernel_default_ns: body time of one wave when a kernel has no cost
T_KERNEL_PER_BLOCK = 33   # kernel_per_block_ns
T_BW_H2H = 34             # memcpy bandwidths by the memcpy kind in the SQE flag (0..3)
T_BW_H2D = 35
T_BW_D2H = 36
T_BW_D2D = 37
T_MEMSET_BW = 38          # memset_bytes_per_ns
T_WAKEUP = 39             # sync_wakeup_ns: record -> parked waiter running again
T_AIC_CORES = 40
T_AIV_CORES = 41
T_AICPU_CORES = 42
N_TIMING = 48
assert N_OPCODES <= T_KERNEL_DEFAULT


def cost_vector(profile) -> np.ndarray:
    """The engine's timing array for a chip profile (with any user overrides applied)."""
    t = profile.timing
    v = np.zeros(N_TIMING, np.int64)
    for name, ns in t.fixed_cost_by_op().items():
        v[OP_VALUE[name]] = int(ns)
    v[T_KERNEL_DEFAULT] = t.kernel_default_ns
    v[T_KERNEL_PER_BLOCK] = t.kernel_per_block_ns
    v[T_BW_H2H] = max(1, t.memcpy_d2d_bytes_per_ns)
    v[T_BW_H2D] = max(1, t.memcpy_h2d_bytes_per_ns)
    v[T_BW_D2H] = max(1, t.memcpy_d2h_bytes_per_ns)
    v[T_BW_D2D] = max(1, t.memcpy_d2d_bytes_per_ns)
    v[T_MEMSET_BW] = max(1, t.memset_bytes_per_ns)
    v[T_WAKEUP] = t.sync_wakeup_ns
    v[T_AIC_CORES] = max(1, profile.aic_cores)
    v[T_AIV_CORES] = max(1, profile.aiv_cores)
    v[T_AICPU_CORES] = max(1, profile.aicpu_cores)
    return v
