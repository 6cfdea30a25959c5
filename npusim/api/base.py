"""The Pythonic API's setup and its one error rule: ``configure``, ``reset``, ``freeze_permanent``
(docs/architecture.md §17, "The collector"), and ``_ok`` / ``_out``
(a non-zero code of the facade becomes ``AclError``, with the device's last fault or deadlock
diagnosis as detail) that every object of ``npusim.api`` calls.
"""
from __future__ import annotations

import gc

from ..analysis import clear_errors, set_recording, stop
from ..analysis.lint import HINTS, explain
from ..errors import AclTimeoutError, DeviceError, check, class_for
from ..faults import clear_injections
from ..runtime.api_device import profile
from ..runtime.argcheck import MODES as _CHECK_MODES
from ..runtime.runtime import RT


def configure(profile: str | None = None, trace: bool | None = None, **options) -> None:
    """Choose the chip profile and simulator options before ``acl.init`` / ``Device(...)``.

    ``timing={...}`` overrides timing constants; ``hbm_bytes=``/``host_bytes=`` size the arenas;
    ``record_accesses=True`` records source lines and memory accesses for ``npusim.analysis``;
    ``check_args="warn"`` (default: an ``ArgumentWarning``, the code unchanged, as the runtime
    launches it), ``"error"`` (refused with 107000) or ``"off"``: launches and task updates
    whose arguments do not match the kernel's declared parameters (``runtime/argcheck.py``).
    ``contention=True``: kernels of different streams share each device's AI Core, vector and
    AI CPU cores (``docs/timing.md`` "Contention"; default False: they overlap freely); it
    applies to open devices from the host's current time on, and to devices opened later.
    ``exact_order=True``: the engine runs every SQ in exact time order, one turn per SQE once
    streams interleave, instead of letting a stream run its private tasks ahead up to its next
    synchronization (docs/architecture.md §5 "Run-ahead"); simulated times are the same either
    way, only what a racy program reads may differ (docs/fidelity.md). Open devices and later
    ones.
    """
    if options.get("check_args", "warn") not in _CHECK_MODES:
        raise ValueError(f"check_args={options['check_args']!r}: one of {_CHECK_MODES}")
    if "record_accesses" in options:
        set_recording(options.pop("record_accesses"))
    if "contention" in options:
        options["contention"] = bool(options["contention"])
        for d in list(RT.devices.values()):
            d.set_contention(options["contention"])
    if "exact_order" in options:
        options["exact_order"] = bool(options["exact_order"])
        for d in list(RT.devices.values()):
            d.state.set_exact_order(options["exact_order"])
    RT.configure(profile=profile, trace=trace, **options)


def reset() -> None:
    """Forget all simulator state (devices, handles, memory) and configuration (profile,
    tracing, options) and every armed fault injection, like starting a new process."""
    clear_injections()
    stop()                                      # recording off, logs and lint errors forgotten
    clear_errors()
    RT.reset(config=True)


def freeze_permanent() -> int:
    """Move every object alive now into the collector's permanent generation (``gc.freeze``):
    call it once after warm-up (the devices opened, the kernels and graphs that live for the
    whole program built), so that a full collection no longer walks numba's dispatchers and
    type caches, the engine's tables and the runtime's handles — about 8 ms instead of 40-180
    ms per full collection for a program holding 1,000 graphs (docs/architecture.md §17).
    Opt-in, never implicit: a frozen object that becomes garbage is only freed by
    ``gc.unfreeze()`` and a collection. Returns the permanent generation's size."""
    gc.collect()                # what is garbage now is freed, not frozen
    gc.freeze()
    return gc.get_freeze_count()


def _detail(code: int) -> str:
    """The device's explanation for a device fault or a timeout (deadlock); other codes are
    about the call itself, which an older, unrelated explanation must not decorate."""
    if not issubclass(class_for(code), (DeviceError, AclTimeoutError)):
        return ""
    for d in RT.devices.values():
        if d.last_error_detail:
            msg, d.last_error_detail = d.last_error_detail, ""
            return msg
    return ""


def _cause(code: int) -> str:
    """The runtime's own reason for the facade call that just failed with ``code`` (what
    ``acl.get_recent_err_msg()`` adds after the code's meaning), for codes the linter does not
    explain."""
    msg = RT.tls.recent_error
    if not msg or code in HINTS or f" returned {code} " not in msg or " — " not in msg:
        return ""
    return msg.split(" — ", 1)[1]


def _ok(code: int) -> None:
    if code:
        dev = _detail(code)
        check(code, "; ".join(d for d in (dev, explain(code), "" if dev else _cause(code)) if d))


def _out(result):
    *outs, code = result
    _ok(code)
    return outs[0] if len(outs) == 1 else tuple(outs)
