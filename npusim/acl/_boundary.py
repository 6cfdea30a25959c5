"""The facade's argument boundary: every ``acl.*`` argument is normalised by its parameter's
kind before the runtime sees it, so a hostile Python value becomes an ACL code, never an
exception and never half-done state.

Why here: the runtime functions (``runtime/api_*.py``) reproduce the C check orders for values a
C caller can pass — ints of the parameter's C type, NULL, pointers. Python callers can also pass
what C cannot: ``numpy.int32`` counts, ``None`` or NaN for a size, a float enum, a multi-element
array as a handle, a string with a NUL, ints outside the C type. One layer, generated once per
function from its signature and the kind table (``_params.py``), turns each such value into either the
canonical Python value the C API would see, or a refusal — before the function runs.

The kinds, their table (``PARAMS``, ``OVERRIDES``) and the result shapes (``OUTPUTS``) are
``_params.py``'s, re-exported here; this module generates the wrappers from them.

Reasons (``acl.get_recent_err_msg()``, the ``AclError`` message; docs/fidelity.md row 342): a
refusal names the parameter, the value and the rule ("size: expected an integer in
0..18446744073709551615 (size_t), got 1.5"); a substituted value is noted ("dst: expected a
pointer ..., got 'x': passed as NULL") before the runtime function's own reason if the call
fails; a 100000 / 107000 the runtime function did not explain gets the NULL or 0 argument by
name (``_null_or_zero``, through ``analysis.lint.ARG_REASONS``). All of it on the failure paths
only.

Last resort: an exception that still escapes a runtime function (or this module's own
normalisation) is caught here, recorded in :data:`ESCAPES` (function, arguments, exception) and
returned as ``ACL_ERROR_RT_INTERNAL_ERROR`` (507000) with ``None`` outputs. It is a bug:
``tests/acl/test_facade_fuzz.py`` fails on any escape not on its list of known runtime bugs.

Cost: the generated wrapper tests ``type(x) is int`` (and the range, one shift: ``_in_range``) of
every integer argument in one expression; only a value that fails it takes the general path.
"""
from __future__ import annotations

import collections
import inspect
import types

import numpy as np

from .. import errors as _ERR
from ..device import launchjit as _LJ
from ..analysis import lint as _lint
from ..faults import ARMED as _ARMED
from ..runtime.api_refused import c_name
from ..runtime.runtime import RT as _RT
from . import _hostptr as _util
from ._params import (  # noqa: F401  (the kinds and the table, read as _boundary.X)
    ANY, ATTRS, BLOCKS, BLOCKS_MAX, BUFFER, ENUM, E_ACL, E_INTERNAL, E_PARAM, HANDLE, I32, Kind,
    NAME, NO_OBJECT, NULLABLE, OUTPUTS, OVERRIDES, PARAMS, PATH, PLACEHOLDERS, POINTER, SEQ, SIZE,
    STRUCT, Spec, U32, U64, U64K, UNDECLARED, outputs_of, refusal, show, spec_of, _Refused,
    _as_int, _in_range)

_LINTED = frozenset(_lint.HINTS)      # codes the capture linter explains (acl/_hosttrace.py)

# (function, arguments, exception) of the latest escapes; bounded, for long runs
ESCAPES: collections.deque[tuple[str, tuple, BaseException]] = collections.deque(maxlen=1000)


# ---- wrapper generation ----
def _fail(outputs: int, code: int):
    if outputs < 0:                      # a function whose C form returns the object itself
        return None
    return code if outputs == 0 else (None,) * outputs + (code,)


def _escaped(name: str, outputs: int, args: tuple, exc: BaseException):
    ESCAPES.append((name, args, exc))
    _RT.tls.explain(f"an exception escaped the simulator (a bug, please report it): "
                    f"{type(exc).__name__}: {exc}")
    _lint.failed(name, E_INTERNAL, args)
    return _fail(outputs, E_INTERNAL)


# (buffer parameter, size parameter): the size may not exceed the bytes given
_SIZED = (("data", "length"), ("data", "data_len"), ("param", "param_size"),
          ("data", "param_size"), ("host_args", "args_size"))


# copies and memsets: (size parameter, target pointer, source pointer or None), checked against
# the registered arrays pageable memory cannot hold faithfully (util.GUARDED)
_HOST_RANGES = {"memcpy": ("count", "dst", "src"), "memcpy_async": ("count", "dst", "src"),
                "memset": ("count", "ptr", None), "memset_async": ("count", "ptr", None)}


def _guard_refuses(attr: str, names: list, vals: list) -> str:
    """A copy into a read-only array, or past the bytes of an empty or read-only array: the
    reason, or "" when the copy fits."""
    size, dst, src = _HOST_RANGES[attr]
    n = vals[names.index(size)]
    if not n:
        return ""
    for p in (dst, src):
        if p is None:
            continue
        g = _util.guarded(vals[names.index(p)])
        if g is None:
            continue
        where = f"{p} 0x{vals[names.index(p)]:x} is in a host buffer of {g[1]} bytes registered " \
            "with acl.util: "
        if p == dst and not g[2]:
            return where + ("it is read-only (a read-only numpy array, or an empty or one-byte "
                            f"bytes object, which CPython shares); the {n}-byte write is refused")
        if vals[names.index(p)] + n > g[0] + g[1]:
            return where + f"{size}: {n} bytes from there reach past its end"
    return ""


def _substituted(kind: Kind, v) -> str:
    """What the boundary passes for a value of the wrong type that the function's own check
    refuses (a handle no object has, NULL, numBlocks 0): the note for a failure's reason, or
    "" for a value passed as it is."""
    if kind is HANDLE:
        if v is not None and _as_int(v) is None:
            return "expected a handle (int), got {}: passed as a handle no object has"
    elif kind is POINTER:
        i = _as_int(v)
        if v is not None and (i is None or not 0 <= i <= U64):
            return "expected a pointer (an int in 0..2**64-1), got {}: passed as NULL"
    elif kind is BLOCKS:
        i = _as_int(v)
        if i is None or not 0 <= i <= BLOCKS_MAX:
            return (f"expected numBlocks in 0..{BLOCKS_MAX} (the task's uint16_t field), got "
                    "{}: passed as 0")
    return ""


def _slow(name, outputs, names, specs, call, args):
    """Normalise every argument; the runtime's result, or the refusal. A refusal's reason names
    the parameter, the value and the rule (``RT.tls.explain``); a substituted value's note
    (``_substituted``) goes before the runtime's own reason if the call then fails."""
    notes = []
    try:
        vals = []
        for s, v, n in zip(specs, args, names):
            try:
                vals.append(s.kind.norm(v, s))
            except _Refused as r:
                r.explained = refusal(n, r, v)
                raise
            note = _substituted(s.kind, v)
            if note:
                notes.append(f"{n}: " + note.format(show(v)))
        attr = name.rsplit(".", 1)[-1]
        if attr in _HOST_RANGES and _util.GUARDED:
            why = _guard_refuses(attr, names, vals)
            if why:
                r = _Refused(E_PARAM)
                r.explained = why
                raise r
        for buf, size in _SIZED:
            if buf in names and size in names:
                b, n = vals[names.index(buf)], vals[names.index(size)]
                if n is not None and isinstance(b, (bytes, bytearray, memoryview, np.ndarray)):
                    have = b.nbytes if isinstance(b, (memoryview, np.ndarray)) else len(b)
                    if n > have:
                        r = _Refused(E_PARAM)
                        r.explained = (f"{size}: {n} is more than the {have} bytes {buf} "
                                       f"holds ({show(b)})")
                        raise r
    except _Refused as r:
        _RT.tls.explain(r.explained)
        _lint.failed(name, r.code, tuple(args))
        return _fail(outputs, r.code)
    except Exception as e:  # noqa: BLE001 -- a bug of this module: recorded like the runtime's
        return _escaped(f"{name} (argument boundary)", outputs, tuple(args), e)
    tls = _RT.tls
    tls.arg_note = "; ".join(notes)
    try:
        return call(*vals)
    except Exception as e:  # noqa: BLE001 -- the last resort: recorded, reported as 507000
        return _escaped(name, outputs, tuple(args), e)
    finally:
        tls.arg_note = ""


_SIGS: dict = {}
"""facade name -> (parameter names, specs) of every wrapped function, for :func:`_null_or_zero`."""
_NULL_OK = frozenset(("stream", "sh", "exec_stream", "h"))   # NULL: the default stream / context
_NULLABLE = (HANDLE, POINTER, BUFFER, PATH, NAME)
_COUNTS = (SIZE,)                 # size_t: sizes and counts (a uint32_t 0 is often valid)


def _is_null(v) -> bool:
    return v is None or (type(v) is int and v == 0)


def _null_or_zero(api: str, code: int, args: tuple) -> str:
    """A failure's reason when its runtime function gave none (``lint.ARG_REASONS``), from the
    arguments alone, in the order the checks run (NULLs first, in parameter order): the first
    required handle / pointer / buffer / string that is NULL (then a NULL stream), else a
    size, count, numBlocks, timeout or max_len that is 0, else an enum that is negative. "" when no argument is any of these."""
    sig = _SIGS.get(api)
    if sig is None:
        return ""
    names, specs = sig
    items = list(zip(names, specs, args))
    for n, s, v in items:
        if s.kind in _NULLABLE and not s.optional and n not in _NULL_OK and _is_null(v):
            return f"{n} is NULL ({show(v)}): a required argument"
    for n, s, v in items:
        if s.kind in _NULLABLE and not s.optional and _is_null(v):
            return f"{n} is NULL ({show(v)}): this function takes no default stream"
    for n, s, v in items:
        if type(v) is int and v == 0 and (s.kind in _COUNTS and n not in ("flag", "flags")
                                          or s.kind is BLOCKS or "timeout" in n
                                          or n == "max_len"):
            return f"{n} is 0: it must be at least 1"
    for n, s, v in items:
        if s.kind is ENUM and type(v) is int and v < 0:
            return f"{n} is {v}: not a value of its enum"
    return ""


_lint.ARG_REASONS[:] = [_null_or_zero]


def _doc(name: str, outputs: int, fn) -> str:
    """The facade function's docstring: its C name and result shape, then the runtime
    function's own text."""
    shape = {-1: "the object itself (the C function returns it), None on failure",
             0: "the error code (0: success)", 1: "(value, code)"}.get(
        outputs, f"({', '.join(['value'] * outputs)}, code)")
    head = (f"{c_name(name)} — returns {shape}; never raises. A failure's reason: "
            f"acl.get_recent_err_msg().")
    raw = inspect.unwrap(fn)
    own = inspect.getdoc(raw) or ""
    return head + ("\n\n" + own if own else "") + "\n\n" + _codes_line(raw)


def _codes_line(fn) -> str:
    """``Codes:`` the codes the runtime function names itself (its code object's ``ERR.*``
    attributes and ``E_*`` aliases: read without its source, so importing the facade stays
    cheap), then the ones every call may give."""
    codes = set()
    plain = isinstance(fn, types.FunctionType)
    glb = fn.__globals__ if plain else {}
    for n in (fn.__code__.co_names if plain else ()):
        c = _ERR.BY_NAME.get(n)
        if c is None and n.startswith("E_") and isinstance(glb.get(n), int):
            c = _ERR.BY_VALUE.get(glb[n])
        if c is not None and c.value:
            codes.add(c.value)
    named = ", ".join(f"{v} {_ERR.BY_VALUE[v].name}" for v in sorted(codes))
    return ("Codes: 0 success" + (f"; {named}" if named else "")
            + "; the shared checks' codes (argument kinds 100000 / 107000, handles 107017, "
              "context 107002, capture state, docs/eager_api_checks.md); 507000 if npusim "
              "itself fails (recorded).")


def _fail_check(outputs: int, tup: str) -> str:
    """The generated lines that tell the linter of a failed call (``r`` is the result): a
    code-only function's result is its code, so success costs one test; with outputs the code is
    the tuple's last item (a non-tuple result is taken as the code either way)."""
    if outputs < 0:                      # the object itself: no code
        return ""
    if outputs == 0:
        return (f"            if r:\n"
                f"                _on_fail(_name, r[-1] if r.__class__ is tuple else r, {tup})\n")
    return (f"            c = r[-1] if r.__class__ is tuple else r\n"
            f"            if c:\n"
            f"                _on_fail(_name, c, {tup})\n")


def wrap(name: str, attr: str, fn, outputs: int, raw=None, fast_failed=None):
    """A wrapper of ``fn`` (a facade function named ``name``) with ``fn``'s signature that
    normalises its arguments by kind: one generated ``def`` per function.

    With ``raw`` (the runtime function under ``fn``'s trace and injection wrappers) the common
    case — canonical arguments, tracing off, nothing injected into this function — is one
    frame: the runtime lock, ``raw``, the stall wake-up and the capture linter inline; anything
    else goes through ``fn``. ``fast_failed``: ``(linter call, snapshot box)`` of a function
    whose linter snapshot its own failing hooks take (``ri_capture_end``,
    ``acl/_hosttrace.py``): the one-frame path empties the box before ``raw`` and reports a
    failure through that call, which reads it."""
    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    names = [p.name for p in params]
    specs = [spec_of(attr, n) for n in names]
    specs = [Spec(s.kind, s.code, True) if p.default is None else s
             for s, p in zip(specs, params)]
    _SIGS[name] = (names, specs)
    ns = {"_fn": fn, "_slow": _slow, "_escaped": _escaped, "_names": names, "_specs": specs,
          "_name": name, "_outputs": outputs, "_guarded": _util.GUARDED, "_raw": raw,
          "_RT": _RT, "_acquire": _RT.lock.acquire, "_release": _RT.lock.release, "_ARMED": _ARMED, "_LINTED": _LINTED,
          "_MEMO": _LJ.MEMO, "_forget": _LJ.forget,
          "_on_fail": _lint.failed if fast_failed is None else fast_failed[0],
          "_box": fast_failed[1] if fast_failed is not None else None}
    head = []
    for i, p in enumerate(params):
        if p.default is inspect.Parameter.empty:
            head.append(p.name)
        else:
            ns[f"_d{i}"] = p.default
            head.append(f"{p.name}=_d{i}")
    arglist = ", ".join(names)
    terms, slow_only = [], False
    for s, n in zip(specs, names):
        if s.kind.fast is None:
            slow_only = True
        elif s.kind.fast != "True":
            t = s.kind.fast.format(p=n)
            terms.append(f"({n} is None or {t})" if s.optional and s.kind is not HANDLE else t)
    for buf, size in _SIZED:
        if buf in names and size in names and specs[names.index(buf)].kind is BUFFER:
            terms.append(f"({size} is None or {size} <= len({buf}))")
    if attr in _HOST_RANGES:
        terms.append("not _guarded")
    tup = f"({arglist},)" if names else "()"
    if slow_only:
        body = f"    return _slow(_name, _outputs, _names, _specs, _fn, {tup})\n"
    elif raw is not None:
        body = (f"    if {' and '.join(terms) or 'True'}:\n"
                f"        if not _RT.trace_on and _name not in _ARMED:\n"
                f"            _acquire()\n"
                + ("" if getattr(raw, "voids_memo_itself", False) else
                   f"            if _MEMO:\n"
                   f"                _forget()\n") +
                f"            try:\n"
                + (f"                _box[0] = None\n" if fast_failed is not None else "") +
                f"                r = _raw({arglist})\n"
                f"                if _RT.stalled:\n"
                f"                    _RT.progress.notify_all()\n"
                f"            except Exception as e:\n"
                f"                return _escaped(_name, _outputs, {tup}, e)\n"
                f"            finally:\n"
                f"                _release()\n"
                + _fail_check(outputs, tup) +
                f"            return r\n"
                f"        try:\n"
                f"            return _fn({arglist})\n"
                f"        except Exception as e:\n"
                f"            return _escaped(_name, _outputs, {tup}, e)\n"
                f"    return _slow(_name, _outputs, _names, _specs, _fn, {tup})\n")
    else:
        body = (f"    if {' and '.join(terms) or 'True'}:\n"
                f"        try:\n"
                f"            return _fn({arglist})\n"
                f"        except Exception as e:\n"
                f"            return _escaped(_name, _outputs, {tup}, e)\n"
                f"    return _slow(_name, _outputs, _names, _specs, _fn, {tup})\n")
    src = f"def {attr}({', '.join(head)}):\n{body}"
    # compiled as this file's code: source sites (runtime/recording.py) skip npusim frames
    exec(compile(src, __file__, "exec"), ns)   # noqa: S102 -- generated once per function
    out = ns[attr]
    out.__doc__, out.__module__, out.__qualname__ = _doc(name, outputs, fn), fn.__module__, attr
    out.__wrapped__ = fn
    out.__boundary__ = tuple(zip(names, (s.kind.name for s in specs)))
    return out
