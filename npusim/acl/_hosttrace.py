"""Host-side API timeline: every facade call, with its simulated host start and end time.

When tracing is on (``npusim.configure(trace=True)``) each ``acl.rt.*`` / ``acl.mdl.*`` call is
recorded as (name, host ns at entry, host ns at exit), so a trace shows the host row on the same
clock as the device streams. When tracing is off the wrapper costs one attribute test, plus one
set lookup of the returned code: a code of the capture linter's table
(``npusim.analysis.lint.HINTS``) records the call's source line and fix hint (``last_errors()``).
"""
from __future__ import annotations

import functools
import inspect
import types

from ..analysis import lint as _lint
from ..device.launchjit import forget as _forget
from ..faults import ARMED as _ARMED
from ..runtime.runtime import RT
from . import _boundary

_LINTED = frozenset(_lint.HINTS)


def _failing_hooks(attr: str):
    """The hook list a runtime function calls as ``hook(*args)`` when it is about to fail
    *after* changing nothing yet, for the facade functions whose linter snapshot (``lint.PRE``)
    can be taken there instead of before every call; None for the others."""
    if attr == "ri_capture_end":
        from ..runtime import api_mdl
        return api_mdl.END_FAILING_HOOKS
    return None


def _wrap(name: str, fn, api: str = "", pre=None, value_result: bool = False):
    """``(traced, fast_failed)``: the trace wrapper of ``fn``, and for a function whose linter
    snapshot its own hooks hand over (``_failing_hooks``) the linter call the argument boundary's
    one-frame path makes on a failure, ``fast_failed(api, code, args)`` with the snapshot box
    it reads (None for every other function: its boundary calls ``lint.failed``, or, with a
    snapshot before every call, never takes the one-frame path)."""
    hooks = _failing_hooks(name.rsplit(".", 1)[-1]) if pre is not None else None
    fast = None
    if hooks is not None:
        # the linter needs the state before this call, on a failure only: the function hands
        # it over (``hook``) just before a failure that changes state; any other failure
        # changed nothing (an early check), so the snapshot taken after the call is the one
        # before it. An armed injection may fail the call with its own cleanup (faults.py):
        # then the snapshot is taken first, as for every call before
        inner = fn
        box = [None]

        def taken(*args, **kwargs):
            box[0] = (pre(*args, **kwargs),)
        hooks[:] = [taken]              # this wrapper's box: the one a wrapped call reads

        def fast_failed(api_name, code, args):
            # the boundary's one-frame path (nothing armed: no snapshot before the call) cleared
            # the box before calling the runtime function; a hook that ran since filled it
            snap = box[0]
            box[0] = None
            _lint.failed(api_name, code, args, snap[0] if snap is not None else pre(*args))
        fast = (fast_failed, box)

        @functools.wraps(inner)
        def fn(*args, **kwargs):        # noqa: F811
            box[0] = (pre(*args, **kwargs),) if api in _ARMED else None
            r = inner(*args, **kwargs)
            code = r[-1] if r.__class__ is tuple else r
            if code:
                snap = box[0]
                box[0] = None
                _lint.failed(api, code, args, snap[0] if snap is not None else
                             pre(*args, **kwargs))
                return _Linted(r)
            return r
    elif pre is not None:               # the linter needs the state before this call
        inner = fn

        @functools.wraps(inner)
        def fn(*args, **kwargs):        # noqa: F811
            snap = pre(*args, **kwargs)
            r = inner(*args, **kwargs)
            code = r[-1] if r.__class__ is tuple else r
            if code:
                _lint.failed(api, code, args, snap)
                return _Linted(r)
            return r

    @functools.wraps(fn)
    def traced(*args, **kwargs):
        with RT.lock:
            _forget()                   # a locked region begins (acl/_launchmemo.py)
            if not RT.trace_on:
                r = fn(*args, **kwargs)
            else:
                t0 = RT.host_ns
                try:
                    r = fn(*args, **kwargs)
                finally:
                    RT.host_trace.append((name, t0, RT.host_ns))
            if RT.stalled:
                RT.progress.notify_all()
        if value_result:                # the C function returns a value, not a code
            return r
        if r.__class__ is tuple:        # a failure: the recent error message, the linter
            if r[-1]:
                _lint.failed(api, r[-1], args)
        elif r:
            if r.__class__ is _Linted:
                return r.value
            _lint.failed(api, r, args)
        return r
    traced.__wrapped_api__ = True
    return traced, fast


class _Linted:
    """A result the pre-snapshot path already recorded (so it is not recorded twice)."""
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def instrument(module: types.ModuleType, prefix: str) -> None:
    """Wrap every public function of a facade module (once): the trace wrapper, and outside it
    the argument boundary (``_boundary.py``), so a refused call is not traced or linted."""
    short = module.__name__.rsplit(".", 1)[-1]          # "rt" / "mdl"
    for attr, fn in list(vars(module).items()):
        if attr.startswith("_") or not isinstance(fn, types.FunctionType):
            continue
        if getattr(fn, "__wrapped_api__", False):
            continue
        api = f"acl.{short}.{attr}"
        raw = inspect.unwrap(fn)
        outputs = _boundary.outputs_of(attr, raw)
        traced, fast = _wrap(f"{prefix}.{attr}", fn, api, _lint.PRE.get(attr), outputs < 0)
        outer = _boundary.wrap(api, attr, traced, outputs,
                               raw=None if attr in _lint.PRE and fast is None else raw,
                               fast_failed=fast)
        outer.__wrapped_api__ = True
        setattr(module, attr, outer)
