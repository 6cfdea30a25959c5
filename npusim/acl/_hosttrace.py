"""Host-side API timeline: every facade call, with its simulated host start and end time.

When tracing is on (``npusim.configure(trace=True)``) each ``acl.rt.*`` / ``acl.mdl.*`` call is
recorded as (name, host ns at entry, host ns at exit), so a trace shows the host row on the same
clock as the device streams. When tracing is off the wrapper costs one attribute test.
"""
from __future__ import annotations

import functools
import types

from ..runtime.runtime import RT


def _wrap(name: str, fn):
    @functools.wraps(fn)
    def traced(*args, **kwargs):
        if not RT.trace_on:
            return fn(*args, **kwargs)
        t0 = RT.host_ns
        try:
            return fn(*args, **kwargs)
        finally:
            RT.host_trace.append((name, t0, RT.host_ns))
    traced.__wrapped_api__ = True
    return traced


def instrument(module: types.ModuleType, prefix: str) -> None:
    """Wrap every public function of a facade module (once)."""
    for attr, fn in list(vars(module).items()):
        if attr.startswith("_") or not isinstance(fn, types.FunctionType):
            continue
        if getattr(fn, "__wrapped_api__", False):
            continue
        setattr(module, attr, _wrap(f"{prefix}.{attr}", fn))
