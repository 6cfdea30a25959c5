"""Argument checks: a launch's (or a task update's) arguments against the kernel's declared
parameters.

The runtime copies ``argsSize`` bytes and launches; it never compares them with the kernel's
``PARAM_SUMMARY`` / ``PARAM_INFO`` (``spec/kernel.md`` §5: only ``aclrtLaunchKernelWithArgsArray``
builds its buffer from them), so a missing argument, an extra one or an integer in a float slot
runs with garbage. npusim checks, where the parameters are declared — a kernel with a
PARAM_SUMMARY (the sample binaries, a ``@npusim.kernel``, any ELF that carries one; the kernel
table's kernels launched by name carry their body's) — and the types where they are known (a
``@npusim.kernel`` signature, the built-in bodies, ``device.kernels.KernelEntry.params``):

* the byte size: fewer bytes than the declared parameters take (a missing argument, ``argsSize``
  24 for 40), or more (an extra argument) unless the tail is data a pointer parameter points
  into (the placeholder layout of ``aclrtLaunchKernelWithHostArgs``);
* the type: an ``f32`` / ``f64`` parameter holding the bits of an integer (a denormal, or high
  bits set), the classic ``101`` for ``101.0``.

``check`` is called from one line of ``api_launch.submit_kernel`` (every launch variant, captured
launches and launches on a stream updating a task group included) for kernels with declared
parameters only (``Kernel.has_param_summary``). The default (``configure(check_args="warn")``)
is faithful: an :class:`npusim.errors.ArgumentWarning` at the user's line, the code unchanged.
``check_args="error"`` refuses the launch with 107000 (ACL_ERROR_RT_PARAM_INVALID, the runtime's
parameter error) and the reason (``acl.get_recent_err_msg()``); ``"off"`` skips the checks.
docs/fidelity.md row 117.
"""
from __future__ import annotations

import struct
import warnings
import weakref

from .. import errors as ERR
from ..device.kernels import PARAM_TYPES, TABLE
from .recording import REC
from .runtime import RT

MODES = ("warn", "error", "off")


class Decl:
    """A kernel's declared parameters: (name, type or None, offset, size) each, and the total."""
    __slots__ = ("params", "total", "floats", "kid", "types")

    def __init__(self, params: tuple, total: int, kid: int):
        self.params = params
        self.total = total
        self.types = tuple(p[1] for p in params)
        self.floats = tuple(p for p in params if p[1] in ("f32", "f64"))
        self.kid = kid


_DECLS: dict = {}
"""id(Kernel) -> (weak reference to it, its Decl): a plain dict (a WeakKeyDictionary lookup
makes a weak reference per launch); an entry leaves with its kernel."""


def declared(kernel, kid: int) -> Decl | None:
    """The declared parameters of ``kernel`` running body ``kid`` (None: nothing declared)."""
    e = _DECLS.get(id(kernel))
    if e is not None and e[0]() is kernel and e[1].kid == kid:
        return e[1]
    if not kernel.has_param_summary:
        return None
    body = TABLE.entries[kid].params if 0 <= kid < len(TABLE.entries) else ()
    ps = kernel.params
    typed = len(body) == len(ps)
    params = tuple((body[i][0] if typed else f"arg{i}", body[i][1] if typed else None,
                    int(p.offset), int(p.size)) for i, p in enumerate(ps))
    d = Decl(params, int(kernel.param_total_size), kid)
    key = id(kernel)
    _DECLS[key] = (weakref.ref(kernel, lambda _, key=key: _DECLS.pop(key, None)), d)
    return d


def table_params(kid: int) -> tuple[int, int, tuple]:
    """(count, total size, PARAM_INFO-like records) a kernel-table kernel declares through its
    body (8-byte slots, as ``@npusim.kernel`` and the sample binaries lay them out)."""
    body = TABLE.entries[kid].params
    return len(body), 8 * len(body), tuple(_Slot(8 * i, PARAM_TYPES[t])
                                           for i, (_, t) in enumerate(body))


class _Slot:
    __slots__ = ("offset", "size")

    def __init__(self, offset: int, size: int):
        self.offset, self.size = offset, size


def _signature(kernel, d: Decl) -> str:
    return f"{kernel.name}(" + ", ".join(
        f"{n}: {t}" if t else f"{n} ({sz} B)" for n, t, _, sz in d.params) + ")"


def _points_into(data: bytes, d: Decl, lo: int, hi: int) -> bool:
    """Does a pointer parameter hold an address in [lo, hi) (data placed after the params)?"""
    for _, t, off, _ in d.params:
        if t in ("ptr", None) and off + 8 <= len(data):
            v = int.from_bytes(data[off:off + 8], "little")
            if lo <= v < hi:
                return True
    return False


def _system_slots(kernel, d: Decl, data: bytes, size: int, mem) -> bool:
    """Is the tail after the declared parameters (``size - d.total`` bytes) the kernel's system
    parameters (an args handle's overflow-status / inter-core sync slots: at most
    ``system_para_num`` 8-byte slots, each the address of device memory)? The size is tested
    before any byte is read: ``data`` holds at most the slots (``_check`` reads no more)."""
    extra = size - d.total
    if mem is None or extra % 8 or extra > 8 * kernel.system_para_num or len(data) < size:
        return False
    return all(mem.allocation_of(int.from_bytes(data[i:i + 8], "little")) is not None
               for i in range(d.total, size, 8))


def problems(kernel, d: Decl, size: int, data: bytes | None, addr: int = 0,
             mem=None) -> list[str]:
    """What is wrong with ``size`` bytes of arguments (``data``, when readable) for ``d``."""
    out = []
    n = len(d.params)
    if size < d.total:
        missing = [p[0] for p in d.params if p[2] + p[3] > size]
        out.append(f"{size} bytes of arguments for {n} declared parameters ({d.total} bytes): "
                   f"missing {', '.join(missing)} — {_signature(kernel, d)}")
    elif size > d.total and d.total and not (
            data is not None and (_points_into(data, d, addr + d.total, addr + size)
                                  or _system_slots(kernel, d, data, size, mem))):
        extra = f" ({(size - d.total) // 8} argument(s) too many)" if size % 8 == 0 else ""
        out.append(f"{size} bytes of arguments for {n} declared parameters ({d.total} "
                   f"bytes){extra} — {_signature(kernel, d)}")
    if data is not None:
        for name, t, off, _ in d.floats:
            if off + 8 > len(data):
                continue
            lo, hi = struct.unpack_from("<II", data, off)
            if t == "f32" and lo and ((lo & 0x7F800000) == 0 or hi != 0):
                v = int.from_bytes(data[off:off + 8], "little", signed=True)
                out.append(f"parameter {name} is {t} but holds the integer {v} (bits "
                           f"0x{v & 0xFFFFFFFFFFFFFFFF:x}), not a float: pass {float(v)!r}")
            elif t == "f64":
                v = int.from_bytes(data[off:off + 8], "little", signed=True)
                if v and (v >> 52) & 0x7FF in (0, 0x7FF):
                    out.append(f"parameter {name} is {t} but holds the integer {v}, not a float: "
                               f"pass {float(v)!r}")
    return out


def check(kernel, s, kid: int, addr: int, size: int) -> int:
    """``submit_kernel``'s argument check of a kernel with declared parameters: 0, or 107000 in
    ``check_args="error"`` mode (a warning otherwise)."""
    d = declared(kernel, kid)
    if d is None or ((size == d.total or not d.total) and not d.floats):
        return 0                        # nothing declared, or nothing that can be wrong
    g = s.tg_update
    what = (f"task update {g.update_index} of task group 0x{g.handle:x} "
            f"({len(g.entries)} task(s))" if g is not None else "launch")
    return _check(kernel, d, s.device.state.mem, addr, size, what)


def check_task_params(kernel, kid: int, mem, addr: int, size: int) -> int:
    """The same check for ``aclmdlRITaskSetParams`` of a kernel task (new function, args and
    args size): 0, or 107000 in ``"error"`` mode."""
    d = declared(kernel, kid)
    if d is None or ((size == d.total or not d.total) and not d.floats):
        return 0                        # nothing declared, or nothing that can be wrong
    return _check(kernel, d, mem, addr, size, "aclmdlRITaskSetParams")


def readable(kernel, d: Decl) -> int:
    """The most bytes of a launch's arguments the checks read: the declared parameters and the
    system slots that may follow them. ``argsSize`` is the caller's number (up to 2**32 - 1
    after the acl layer's ``uint32_t`` cast, kernel.cpp:123): reading all of it would copy up to
    4 GiB per launch, so the checks read this much and judge the rest by its size."""
    return d.total + 8 * max(int(kernel.system_para_num), 0)


def _check(kernel, d: Decl, mem, addr: int, size: int, what: str) -> int:
    mode = RT.device_options.get("check_args", "warn")
    if mode == "off":
        return 0
    try:
        data = bytes(mem.view(addr, min(size, readable(kernel, d)))) if size else b""
    except Exception:                   # noqa: BLE001 — args outside device memory: sizes only
        data = None
    found = problems(kernel, d, size, data, addr, mem)
    if not found:
        return 0
    return report(f"{what} of kernel {kernel.name}: " + "; ".join(found), mode)


def report(msg: str, mode: str) -> int:
    """Warn (the code stays 0) or, in ``"error"`` mode, explain and refuse with 107000."""
    if mode == "error":
        RT.tls.explain(msg + " (npusim.configure(check_args='error'); the runtime itself would "
                       "launch it)")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    where = REC.site(2)
    text = msg + " — the runtime launches it as given (npusim.configure(check_args='error') " \
                 "refuses it)"
    if where is not None:
        warnings.warn_explicit(text, ERR.ArgumentWarning, where.file, where.line)
    else:
        warnings.warn(text, ERR.ArgumentWarning, stacklevel=3)
    return 0


def param_types(func) -> tuple:
    """The declared parameter types of function handle ``func`` (None where unknown; () when
    nothing is declared): how the Pythonic launch packs its arguments."""
    ent = RT.handles.entry(func)
    if ent is None or ent[0] != "function":
        return ()
    k = ent[1]
    d = declared(k, k.kid)
    return d.types if d is not None else ()
