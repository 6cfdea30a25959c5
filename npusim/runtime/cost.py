"""Per-launch kernel cost models: a kernel's duration as a function of its launch.

The kernel table (``device/kernels.py``) gives every kernel one body time per wave of blocks,
so a kernel costs the same whatever it is given. A *cost model* makes the duration depend on the
launch: a callable of the block count and the argument values, or a roofline (flops and bytes
read from the arguments, with the device profile's throughput and HBM bandwidth). It is
evaluated **on the host, at launch**, and the result goes into the kernel SQE's explicit-duration
operand ``a3`` (``device/sqe.py``), which the engine already honours — so the engine does not
change, a captured SQE keeps the duration of the launch it recorded, and a task update (a launch
on an updating stream, ``taskgroup.update_task``; ``aclmdlRITaskSetParams``, ``tasks.py``)
recomputes it from the new arguments. The closed forms are in ``docs/timing.md`` ("Cost
models"); fidelity decisions in ``docs/fidelity.md`` (rows 125-134).

The real runtime has no such thing: a kernel's time on the device is whatever its code takes.
A cost model is the simulator's stand-in for that code's speed, chosen by the benchmark author.

``MODELS`` is keyed by kernel-table id (the body a launch runs), process-wide like the table.
It is empty unless a model is set, and the launch core (``api_launch.submit_kernel``) then pays
one truth test per launch.
"""
from __future__ import annotations

import math
import struct

from .. import errors as ERR
from ..device.kernels import TABLE, UNIT_AIC
from ..device.launchjit import forget
from .runtime import RT

PARAM_KINDS = ("ptr", "i64", "u64", "i32", "u32", "f32", "f64")
"""How an 8-byte argument slot is read for a cost model (the ``@npusim.kernel`` parameter types,
``kernel/decorator.py`` PARAM_TYPES): pointers and integers as ints, ``f32`` from the slot's low
four bytes, ``f64`` from all eight."""

_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")


def _read(kind: str, v: int):
    """One slot (read as a signed 64-bit value) as its declared kind."""
    if kind == "u64":
        return v & 0xFFFF_FFFF_FFFF_FFFF
    if kind == "u32":
        return v & 0xFFFF_FFFF
    if kind == "i32":
        u = v & 0xFFFF_FFFF
        return u - (1 << 32) if u >= 1 << 31 else u
    if kind == "f32":
        return _F32.unpack((v & 0xFFFF_FFFF).to_bytes(4, "little"))[0]
    if kind == "f64":
        return _F64.unpack((v & 0xFFFF_FFFF_FFFF_FFFF).to_bytes(8, "little"))[0]
    return v


class Roofline:
    """A roofline cost: ``flops`` and ``bytes`` of the whole launch, each a number or a callable
    of ``(blocks, *args)``. Duration (``docs/timing.md``)::

        ceil(max(flops / (rate * min(blocks, cores)), bytes / hbm_bytes_per_ns))
            + blocks * kernel_per_block_ns

    with ``rate``/``cores`` the AI Core (``aic_flops_per_ns``, ``aic_cores``) or the vector
    unit's (``aiv_flops_per_ns``, ``aiv_cores``) by the kernel's unit; ``cores`` is the device's
    aclrtSetDeviceResLimit count of that unit at launch (the profile's when none is set)."""

    __slots__ = ("flops", "bytes")

    def __init__(self, flops=0, bytes=0):
        self.flops = flops
        self.bytes = bytes

    def __repr__(self):
        return f"Roofline(flops={self.flops!r}, bytes={self.bytes!r})"

    def ns(self, kid: int, blocks: int, args, timing, res_limit) -> float:
        """``res_limit``: (cube cores, vector cores) the launch may use."""
        f = self.flops(blocks, *args) if callable(self.flops) else self.flops
        b = self.bytes(blocks, *args) if callable(self.bytes) else self.bytes
        aic = TABLE.entries[kid].unit == UNIT_AIC
        rate = timing.aic_flops_per_ns if aic else timing.aiv_flops_per_ns
        cores = max(1, min(blocks, res_limit[0] if aic else res_limit[1]))
        body = max(float(f or 0) / (max(rate, 1) * cores),
                   float(b or 0) / max(timing.hbm_bytes_per_ns, 1))
        return math.ceil(body) + blocks * timing.kernel_per_block_ns


class CostModel:
    """What a kernel's launches cost: ``cost`` (a callable of ``(blocks, *args)`` returning ns,
    or a :class:`Roofline`) and how its argument slots are read (``params``: kinds of
    :data:`PARAM_KINDS`, one per slot; None: every slot of the launch as an ``i64``)."""

    __slots__ = ("cost", "params", "_slots")

    def __init__(self, cost, params=None):
        if not (callable(cost) or isinstance(cost, Roofline)):
            raise TypeError(f"a kernel cost is a callable of (blocks, *args) or a Roofline, "
                            f"not {cost!r}")
        if params is not None:
            params = tuple(params)
            bad = [p for p in params if p not in PARAM_KINDS]
            if bad:
                raise TypeError(f"cost-model parameter kinds {bad}: use {list(PARAM_KINDS)}")
        self.cost = cost
        self.params = params
        self._slots = struct.Struct(f"<{len(params)}q") if params is not None else None

    def args(self, mem, addr: int, size: int) -> tuple:
        """The argument values of a launch, read from its args area in device memory."""
        off = mem.to_off(addr) if addr else -1
        if off < 0 or size <= 0:
            return ()
        if self._slots is not None and size >= self._slots.size:
            raw = self._slots.unpack_from(mem.arena, off)
            return tuple(v if k in ("ptr", "i64") else _read(k, v)
                         for k, v in zip(self.params, raw))
        n = size // 8 if self.params is None else min(len(self.params), size // 8)
        # at most the slots of the largest args block the runtime builds (64 KiB,
        # args_handle_allocator.hpp:21) and of the arena: argsSize may say 4 GiB (row 340)
        n = min(n, _MAX_SLOTS, (len(mem.arena) - off) // 8)
        raw = struct.unpack_from(f"<{n}q", mem.arena, off)
        kinds = self.params or ("i64",) * n
        return tuple(_read(k, v) for k, v in zip(kinds, raw))

    def duration(self, kid: int, blocks: int, device, addr: int, size: int) -> int:
        """The launch's duration in ns (at least 1: ``a3`` 0 means "no explicit duration")."""
        args = self.args(device.state.mem, addr, size)
        c = self.cost
        if isinstance(c, Roofline):
            ns = c.ns(kid, blocks, args, device.timing, device.res_limit)
        else:
            ns = c(blocks, *args)
        return max(1, math.ceil(ns))


MODELS: dict[int, CostModel] = {}
"""Kernel-table id -> its cost model. Mutated in place, never rebound: the launch core holds
the dict itself."""


DECLARED: dict[int, tuple] = {}
"""Kernel-table id -> (parameter kinds, cost model or None) its definition declared
(``@npusim.kernel``): the default ``params`` of a later model, and what ``restore_model``
goes back to."""


def declare(kid: int, params, cost=None) -> None:
    """What a kernel's definition says: its parameter kinds and its own cost model (if any)."""
    params = tuple(params)
    model = CostModel(cost, params) if cost is not None else None
    DECLARED[kid] = (params, model)
    set_model(kid, None)
    if model is not None:
        MODELS[kid] = model
        forget()                      # a memoized launch of kernel kid skips its cost model


def declared_params(kid: int):
    """The parameter kinds kernel ``kid``'s definition declared, or None."""
    d = DECLARED.get(kid)
    return d[0] if d is not None else None


def set_model(kid: int, cost, params=None) -> None:
    """Give kernel ``kid`` a per-launch cost model (None removes it)."""
    if cost is None:
        MODELS.pop(kid, None)
    else:
        MODELS[kid] = CostModel(cost, params)
        forget()


def restore_model(kid: int) -> None:
    """Back to the cost model kernel ``kid``'s definition declared (none for most kernels)."""
    d = DECLARED.get(kid)
    if d is not None and d[1] is not None:
        MODELS[kid] = d[1]
        forget()
    else:
        MODELS.pop(kid, None)


_MAX_SLOTS = 64 * 1024 // 8
"""The most 8-byte argument slots a cost model reads (a 64 KiB args block)."""


def launch_ns(kid: int, blocks: int, device, addr: int, size: int) -> int:
    """The explicit duration of a launch of ``kid`` on ``device`` (0: the kernel has no cost
    model), or a negative ACL code when its cost model raised (the reason goes to the recent
    error message)."""
    m = MODELS.get(kid)
    if m is None:
        return 0
    try:
        return m.duration(kid, blocks, device, addr, size)
    except Exception as exc:                 # a user's callable: report it, do not crash
        RT.tls.explain(f"the cost model of kernel {TABLE.label(kid)!r} raised "
                       f"{type(exc).__name__}: {exc}")
        return -ERR.ACL_ERROR_RT_PARAM_INVALID
