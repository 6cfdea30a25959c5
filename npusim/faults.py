"""Fault injection: make a chosen API call fail with a chosen code, or a chosen kernel launch fault
on the device — to test a framework's fallbacks (207005, 207008, 507903, 207019, kernel
exceptions ...) without the resource pressure or the bug that would cause them.

Two kinds of injection, both made by :func:`inject`:

* **API**: ``inject(207005, api="aclmdlRIExecuteAsync")`` — the next (or ``call=N``-th, or
  ``every``) matching call of that facade function returns ``code`` (or its output tuple with
  ``None`` outputs and the code last) **without running the real function**, so the simulator's
  state is what it was before the call: the call simply failed. One call has a failure path of its
  own in the runtime and gets it: a failed ``aclmdlRICaptureEnd`` ends the capture (the stream
  leaves capture, a root model is destroyed — ``spec/aclgraph.md`` §1.3), so an injected 507903
  there leaves no capture behind. Filters: ``model=`` (the call's model argument, or the model
  its stream captures into) and ``stream=`` (the call's stream argument).
* **Kernel**: ``inject(kernel="EasyOPf")`` — the next matching launch of that kernel (by name; a
  stream's launches with ``stream=``, launches captured into a model with ``model=``) runs the
  ``ErrorOPf`` trap body instead, so the task faults on the device and the next synchronize
  reports the real code: 507035 for a vector kernel, 507015 for a cube (AIC) kernel, 507018 for
  an AI CPU kernel (``runtime/device.py`` ``fault_code``). A launch captured into a graph puts
  the trap into the graph: every replay of it faults.

Both are wired once at import and cost one dictionary test (API) or one ``None`` test (kernel)
per call while nothing is injected. Facade functions are wrapped like the host-trace wrapper of
``acl/_hosttrace.py`` (inside it, so an injected call still shows on the host trace); every kernel
launch asks the hook point ``runtime.api_launch.KERNEL_HOOK``, which this module sets
(``set_kernel_hook``) while a kernel injection is armed.
"""
from __future__ import annotations

import ast
import difflib
import functools
import inspect
import re
import textwrap
import threading
import types

from . import errors as ERR
from .device.launchjit import forget as _forget
from .runtime import api_launch
from .runtime.api_refused import c_name
from .runtime.runtime import RT

_LOCK = threading.RLock()
ARMED: dict[str, list["Injection"]] = {}        # facade name -> API injections armed on it (the facade wrapper asks)
_KERNELS: list["Injection"] = []                 # kernel injections armed
_FACADE: dict[str, tuple[types.ModuleType, str, str]] = {}   # facade name -> (module, attr, C)
_INDEX: dict[str, str] = {}                      # normalised spelling -> facade name
_ARITY: dict[str, int] = {}
_SIGS: dict[str, inspect.Signature] = {}

KERNEL_CODES = {ERR.ACL_ERROR_RT_VECTOR_CORE_EXCEPTION: "AIV",
                ERR.ACL_ERROR_RT_AICORE_EXCEPTION: "AIC",
                ERR.ACL_ERROR_RT_AICPU_EXCEPTION: "AICPU"}

# parameter names that carry a stream / a model in the facade signatures
_STREAM_PARAMS = ("stream", "sh")
_MODEL_PARAMS = ("model_ri",)


# ---- names ----
def _norm(s: str) -> str:
    return re.sub(r"[^a-z0-9]", "", s.lower())


def _c_name(prefix: str, attr: str) -> str:
    """``acl.rt.create_stream`` -> aclrtCreateStream (``runtime.api_refused.c_name``)."""
    return c_name(f"{prefix}.{attr}")


def resolve_api(api: str) -> str:
    """The facade name (``acl.mdl.ri_execute_async``) of a C name (``aclmdlRIExecuteAsync``),
    a facade name, or an unambiguous bare function name; ``ValueError`` otherwise."""
    full = _INDEX.get(_norm(str(api)))
    if full is None or full == "?":
        names = [c for _, _, c in _FACADE.values()] + list(_FACADE)
        close = difflib.get_close_matches(str(api), names, n=4, cutoff=0.6)
        hint = f"; close: {', '.join(close)}" if close else ""
        what = "ambiguous" if full == "?" else "unknown"
        raise ValueError(f"{what} API {api!r} (a C name like 'aclmdlRIExecuteAsync' or a facade "
                         f"name like 'acl.mdl.ri_execute_async'){hint}")
    return full


# ---- wrapping the facade (once, at import of npusim.acl) ----
def instrument(module: types.ModuleType, prefix: str) -> None:
    """Give every public function of a facade module an injection point (once)."""
    for attr, fn in list(vars(module).items()):
        if attr.startswith("_") or not isinstance(fn, types.FunctionType):
            continue
        if getattr(fn, "__fault_point__", None):
            continue
        full = f"{prefix}.{attr}"
        c = _c_name(prefix, attr)
        _FACADE[full] = (module, attr, c)
        keys = {_norm(full), _norm(c), _norm(f"{prefix.split('.')[-1]}.{attr}"), _norm(attr)}
        for k in keys:
            _INDEX[k] = full if _INDEX.get(k, full) == full else "?"
        setattr(module, attr, _wrap(full, fn))


def _wrap(full: str, fn):
    @functools.wraps(fn)
    def api(*args, **kwargs):
        if full not in ARMED:
            return fn(*args, **kwargs)
        return _intercept(full, fn, args, kwargs)
    api.__fault_point__ = full
    return api


def _arity(full: str, fn) -> int:
    """How many values the facade function returns (outputs + the code), read from its source:
    the widest tuple any ``return`` gives, following returns of calls to other functions."""
    n = _ARITY.get(full)
    if n is None:
        n = _ARITY[full] = max(_returns(fn, set()), 1)
    return n


def _returns(fn, seen: set) -> int:
    fn = inspect.unwrap(fn)
    if not isinstance(fn, types.FunctionType) or fn in seen:
        return 0
    seen.add(fn)
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return 0
    best = 0

    def value(v) -> int:
        if isinstance(v, ast.Tuple):
            return len(v.elts)
        if isinstance(v, ast.IfExp):
            return max(value(v.body), value(v.orelse))
        if isinstance(v, ast.Call):
            target = _lookup(v.func, fn.__globals__)
            return _returns(target, seen) if target is not None else 0
        return 0

    def walk(node):
        nonlocal best
        for ch in ast.iter_child_nodes(node):
            if isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            if isinstance(ch, ast.Return) and ch.value is not None:
                best = max(best, value(ch.value))
            walk(ch)
    walk(tree.body[0])
    return best


def _lookup(node, env):
    if isinstance(node, ast.Name):
        return env.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _lookup(node.value, env)
        return getattr(base, node.attr, None) if isinstance(base, types.ModuleType) else None
    return None


def _bound(full: str, fn, args, kwargs) -> dict:
    sig = _SIGS.get(full)
    if sig is None:
        sig = _SIGS[full] = inspect.signature(fn)
    try:
        return dict(sig.bind_partial(*args, **kwargs).arguments)
    except TypeError:
        return {}


def _stream_of(full: str, bound: dict):
    for p in _STREAM_PARAMS:
        if p in bound:
            return bound[p]
    if "h" in bound and "stream" in full:
        return bound["h"]
    return None


def _model_of(bound: dict):
    for p in _MODEL_PARAMS:
        if p in bound:
            return bound[p]
    return None


def _intercept(full: str, fn, args, kwargs):
    bound = _bound(full, fn, args, kwargs)
    stream_h = _stream_of(full, bound)
    model_h = _model_of(bound)
    fired = None
    with _LOCK:
        for inj in list(ARMED.get(full, ())):
            if inj._matches(stream_h, model_h, _capturing_model(stream_h)) and inj._take() \
                    and fired is None:
                fired = inj
    if fired is None:
        return fn(*args, **kwargs)
    return _fail(full, fn, fired, stream_h)


def _capturing_model(stream_h) -> tuple:
    """Handles of the model a stream handle captures into and of its parents (a sub-model's
    root): empty when it does not capture."""
    s, code = RT.handles.get("stream", stream_h)
    if s is None or code:
        return ()
    return _chain(s.capture)


def _chain(link) -> tuple:
    out, m = [], (link.model if link is not None else None)
    while m is not None:
        out.append(m.handle)
        m = m.parent
    return tuple(out)


def _fail(full: str, fn, inj: "Injection", stream_h):
    """The injected failure: the code (in the function's output shape), the runtime's own
    failure path where it has one, and a detail for the Pythonic API's error message."""
    code = inj.code
    if RT.profile is not None:
        RT.tick(RT.profile.timing.host_api_ns)
    if full == "acl.mdl.ri_capture_end":
        _end_capture_failed(stream_h)
    ctx = RT.current_context
    if ctx is not None and issubclass(ERR.class_for(code), (ERR.DeviceError, ERR.AclTimeoutError)):
        ctx.device.last_error_detail = f"injected by {inj!r}"   # the Pythonic API's detail
    n = _arity(full, fn)
    return code if n == 1 else (None,) * (n - 1) + (code,)


def _end_capture_failed(stream_h) -> None:
    """EndCapture's failure cleanup (``api_mdl.ri_capture_end``): the capture ends, a root model
    is destroyed; the stream can begin a new capture."""
    from .runtime import api_mdl
    from .runtime import capture as C
    s, code = RT.handles.get("stream", stream_h)
    if s is None or code:
        return
    link = s.capture
    if link is None or link.kind != "origin":
        return
    with RT.lock:
        _forget()                       # a locked region begins: the launch memo is void
        m = link.model
        C.mode_exit(s)
        C.exit_capture(m)
        if not m.sub:
            api_mdl._destroy(m)


# ---- kernel launches ----
def _kernel_hook(stream, kid: int, name: str) -> int:
    """``api_launch.KERNEL_HOOK``: the kernel id to launch instead of ``kid`` (itself unless an
    armed kernel injection matches this launch, by the body's table name or the kernel's)."""
    from .device.kernels import TABLE
    names = {TABLE.name(kid) if 0 <= kid < len(TABLE.entries) else None, name}
    models = _chain(stream.capture)
    fired = None
    with _LOCK:
        for inj in list(_KERNELS):
            if inj.kernel in names and inj._matches(stream.handle, None, models) \
                    and inj._take() and fired is None:
                fired = inj
    if fired is None:
        return kid
    unit = KERNEL_CODES.get(fired.code) if fired.code else _unit_name(kid)
    return _trap_id(unit, name)


def _unit_name(kid: int) -> str:
    from .device.kernels import TABLE, UNIT_AIC, UNIT_AICPU
    unit = TABLE.entries[kid].unit if 0 <= kid < len(TABLE.entries) else None
    return {UNIT_AIC: "AIC", UNIT_AICPU: "AICPU"}.get(unit, "AIV")


def _trap_id(unit: str, kernel: str = "") -> int:
    """The ErrorOPf body (always traps) on the given unit, so ``fault_code`` gives that unit's
    kernel-exception code. One table entry per (kernel, unit), labelled with the kernel's name,
    so the fault message of a task it replaced — eager, or replayed from a graph captured while
    the injection was armed — names the kernel that was launched (``EasyOPf (injected ErrorOPf
    trap)``), not only the stand-in body."""
    from .device.kernels import TABLE, UNIT_AIC, UNIT_AICPU, UNIT_AIV
    name = f"__npusim_inject__:{kernel}:{unit}"
    kid = TABLE.by_name.get(name)
    if kid is None:
        base = TABLE.entries[TABLE.id("ErrorOPf")]
        units = {"AIC": UNIT_AIC, "AICPU": UNIT_AICPU}
        kid = TABLE.register_lazy(name, base.build or (lambda: base.func), base.cost_ns,
                                  units.get(unit, UNIT_AIV),
                                  label=f"{kernel or 'kernel'} (injected ErrorOPf trap)")
    return kid


def _set_kernel_hook() -> None:
    api_launch.set_kernel_hook(_kernel_hook if _KERNELS else None)


# ---- the public API ----
def _handle(x):
    if x is None:
        return None
    h = getattr(x, "handle", x)
    if h is None:
        raise ValueError(f"{x!r} has no handle yet")
    return int(h)


class Injection:
    """One armed fault. ``calls`` counts the matching calls (launches) seen since it was made,
    ``fired`` the ones it failed. A context manager: leaving the ``with`` block removes it."""

    def __init__(self, code, api, kernel, model, stream, call, every, times):
        self.code = code
        self.api = api
        self.kernel = kernel
        self.model = model
        self.stream = stream
        self.first = call
        self.every = every
        self.times = times
        self.calls = 0
        self.fired = 0
        self.active = True

    def __repr__(self) -> str:
        what = f"api={_FACADE[self.api][2]!r}" if self.api else f"kernel={self.kernel!r}"
        extra = "".join(f", {k}=0x{v:x}" for k, v in (("model", self.model),
                                                      ("stream", self.stream)) if v)
        when = "every=True" if self.every and self.first == 1 else \
            f"call={self.first}" + (", every=True" if self.every else
                                    (f", times={self.times}" if self.times != 1 else ""))
        code = "" if self.code is None else f"{self.code}, "
        return f"npusim.inject({code}{what}{extra}, {when})"

    # matching and counting (called under _LOCK)
    def _matches(self, stream_h, model_h, capture_models: tuple) -> bool:
        if self.stream is not None and stream_h != self.stream:
            return False
        if self.model is not None and self.model != model_h and self.model not in capture_models:
            return False
        return True

    def _take(self) -> bool:
        """Count one matching call; True when this one fails."""
        self.calls += 1
        n = self.calls
        if n < self.first:
            return False
        if self.every or n < self.first + self.times:
            self.fired += 1
            if not self.every and n + 1 >= self.first + self.times:
                self._disarm()
            return True
        self._disarm()
        return False

    @property
    def done(self) -> bool:
        """Removed, or every failure it was asked for has happened."""
        return not self.active

    def _disarm(self) -> None:
        self.active = False
        if self.api:
            lst = ARMED.get(self.api)
            if lst is not None and self in lst:
                lst.remove(self)
                if not lst:
                    del ARMED[self.api]
        elif self in _KERNELS:
            _KERNELS.remove(self)
            _set_kernel_hook()

    def remove(self) -> None:
        """Disarm it (no effect on failures that already happened)."""
        with _LOCK:
            self._disarm()

    def __enter__(self) -> "Injection":
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def inject(code: int | None = None, api: str | None = None, *, call: int | None = None,
           every: bool = False, kernel: str | None = None, model=None, stream=None,
           times: int = 1) -> Injection:
    """Arm a fault; returns the :class:`Injection` (``.remove()``, or use it in ``with``).

    ``api``: a C name (``"aclmdlRIExecuteAsync"``, ``"aclrtCreateStream"``) or a facade name
    (``"acl.mdl.ri_execute_async"``): the matching call returns ``code`` without running.
    ``kernel``: a kernel name: the matching launch runs a trap instead and faults on the device
    with the kernel-exception code of its unit (or of ``code``: 507035 / 507015 / 507018).
    ``call=N``: the N-th matching call from now fails (1-based; default: the next one), then the
    ``times - 1`` after it; ``every=True``: every matching call from the N-th on, until removed.
    ``model`` / ``stream``: only calls (launches) on that model / stream (handles or objects
    with ``.handle``); a model also matches a stream that captures into it.
    """
    if (api is None) == (kernel is None):
        raise ValueError("inject needs exactly one of api= and kernel=")
    if call is None:
        call = 1
    if not isinstance(call, int) or call < 1:
        raise ValueError("call must be a positive int (1 = the next matching call)")
    if not isinstance(times, int) or times < 1:
        raise ValueError("times must be a positive int")
    if api is not None:
        if code is None or not isinstance(code, int) or code == 0:
            raise ValueError("an API injection needs a non-zero ACL code")
        full = resolve_api(api)
        module, attr, cname = _FACADE[full]
        params = inspect.signature(getattr(module, attr)).parameters
        has_stream = any(p in params for p in _STREAM_PARAMS) or \
            ("h" in params and "stream" in full)
        if stream is not None and not has_stream:
            raise ValueError(f"{cname} has no stream argument to match stream= against")
        if model is not None and not has_stream and not any(p in params for p in _MODEL_PARAMS):
            raise ValueError(f"{cname} has neither a model nor a stream argument to match "
                             f"model= against")
        inj = Injection(int(code), full, None, _handle(model), _handle(stream), call,
                        bool(every), times)
        with _LOCK:
            ARMED.setdefault(full, []).append(inj)
            _forget()                   # a memoized launch skips the injection point
        return inj
    if code is not None and code not in KERNEL_CODES:
        raise ValueError(f"a kernel injection faults with a kernel-exception code "
                         f"({', '.join(f'{c} {u}' for c, u in KERNEL_CODES.items())}), not {code}")
    inj = Injection(code, None, str(kernel), _handle(model), _handle(stream), call, bool(every),
                    times)
    with _LOCK:
        _KERNELS.append(inj)
        _set_kernel_hook()
    return inj


def clear_injections() -> None:
    """Disarm every injection (``npusim.reset()`` does this too)."""
    with _LOCK:
        for inj in [i for lst in ARMED.values() for i in lst] + list(_KERNELS):
            inj._disarm()
        ARMED.clear()
        _KERNELS.clear()
        _set_kernel_hook()


def injections() -> list[Injection]:
    """The injections still armed."""
    with _LOCK:
        return [i for lst in ARMED.values() for i in lst] + list(_KERNELS)


def api_names() -> list[str]:
    """Every injectable API as (facade name, C name) pairs, for docs and error messages."""
    return sorted((full, c) for full, (_, _, c) in _FACADE.items())


__all__ = ["inject", "clear_injections", "injections", "Injection", "resolve_api", "api_names",
           "KERNEL_CODES"]
