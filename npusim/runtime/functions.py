"""Function handles seen from the rest of the runtime: kernel-table id <-> handle, and the
handles of the kernel table's kernels by name.

A task carries only the kernel-table id of its body (SQE ``a0``), so code that starts from a task
— per-task get/set-params (``runtime/tasks.py``), exception callbacks (:mod:`.api_function`) —
maps it back to the function handle most recently exported for that body
(:data:`npusim.kernel.loader.LAST_HANDLE_OF_KID`) and validates handles it is given.

:func:`table_function` is how the Pythonic API launches a kernel by name through the facade
(``Device.launch`` -> ``acl.rt.launch_kernel_with_host_args``): the kernel table (the built-in
sample bodies, ``@npusim.kernel`` bodies, ``npusim.register_cpu_kernel`` and other
``TABLE.register`` entries) stands in for a loaded binary. Its program is an old-flow one (valid
on every device, like ``aclrtBinaryLoad``'s) with no device image, so a launch of it makes the
same checks and takes the same host time as today's launch of a loaded binary's kernel, and uses
no device memory for code. It is the simulator's own library: its handles are not exported to
:data:`~npusim.kernel.loader.LAST_HANDLE_OF_KID`, so per-task params and exception callbacks keep
answering with the handles the user's binaries exported.
"""
from __future__ import annotations

from .. import errors as ERR
from ..device.kernels import TABLE, UNIT_AIC, UNIT_AICPU
from ..kernel.elf import AttrType
from ..kernel.loader import LAST_HANDLE_OF_KID
from ..kernel.program import REG_CPU, REG_NON_CPU, Kernel, Program
from .argcheck import table_params
from .runtime import RT


def resolve_function(func):
    """(kernel-table id, code) of a function handle for a task's new parameters: a stale or
    foreign handle -> 107017, NULL -> 107000."""
    k, code = RT.handles.get("function", func)
    if code:
        return None, code
    if k is None:
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    return k.kid, ERR.ACL_SUCCESS


def function_handle_of(kid: int):
    """The live function handle most recently exported for kernel-table id ``kid``, or None."""
    h = LAST_HANDLE_OF_KID.get(kid)
    if h is None:
        return None
    ent = RT.handles.entry(h)
    return h if ent is not None and ent[0] == "function" else None


# ---- the kernel table as a library (Pythonic launches by name)
_TABLE_PROGRAM = Program(REG_NON_CPU, AttrType.VECTOR)
_TABLE_PROGRAM.new_flow = False            # valid on every device; nothing to load
_TABLE_KERNELS: dict[tuple[str, int], Kernel] = {}
"""(kernel name, explicit duration ns) -> its Kernel in the table program."""
_ATTR_OF_UNIT = {UNIT_AIC: AttrType.CUBE, UNIT_AICPU: AttrType.AICPU}


def table_function(name: str, duration_ns: int = 0):
    """The function handle of the kernel-table kernel ``name`` (None when there is none), valid
    on every device. ``duration_ns`` > 0 gives a handle whose launches run for exactly that long
    (SQE ``a3``, replacing the kernel's cost): one handle per (name, duration)."""
    kid = TABLE.find(name) if isinstance(name, str) else None
    if kid is None:
        return None
    key = (name, int(duration_ns))
    k = _TABLE_KERNELS.get(key)
    if k is None:
        unit = TABLE.entries[kid].unit
        k = _TABLE_KERNELS[key] = Kernel(
            _TABLE_PROGRAM, TABLE.name(kid), attr_type=_ATTR_OF_UNIT.get(unit, AttrType.VECTOR),
            reg_type=REG_CPU if unit == UNIT_AICPU else REG_NON_CPU, duration_ns=key[1])
    if k.kid != kid:                     # re-resolved: a name may be registered again
        k.kid = kid
        # the body's declared parameters, as the sample binary's PARAM_INFO carries them
        k.param_count, k.param_total_size, k.params = table_params(kid)
        k.has_param_summary = bool(TABLE.entries[kid].params)
    ent = RT.handles.entry(k.handle) if k.handle else None
    if ent is None or ent[1] is not k:   # first use, or the registry was reset
        RT.handles.add("function", k)
    return k.handle


_TIMED: dict = {}
"""(function handle, duration ns) -> the timed twin Kernel of a loaded binary's kernel."""


def with_duration(func, duration_ns: int):
    """A function handle running the kernel of handle ``func`` for exactly ``duration_ns`` per
    launch (SQE ``a3``), for the Pythonic launch's ``duration_ns=``: the handle itself for 0, a
    table kernel's own timed handle, else a twin of the binary's kernel (same program, body,
    attributes and parameters; one per duration). None for a stale handle."""
    k, code = RT.handles.get("function", func)
    if code or k is None:
        return None
    if not duration_ns or k.duration_ns == duration_ns:
        return func
    if k.program is _TABLE_PROGRAM:
        return table_function(k.name, duration_ns)
    key = (func, int(duration_ns))
    t = _TIMED.get(key)
    ent = RT.handles.entry(t.handle) if t is not None and t.handle else None
    if t is None or ent is None or ent[1] is not t:
        fields = {f: getattr(k, f) for f in Kernel.__slots__
                  if f not in ("handle", "program", "name", "__weakref__")}
        fields["duration_ns"] = int(duration_ns)
        t = _TIMED[key] = Kernel(k.program, k.name, **fields)
        RT.handles.add("function", t)
    return t.handle
