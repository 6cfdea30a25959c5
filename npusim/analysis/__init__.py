"""``npusim.analysis``: race detection, the capture linter and deadlock explanations.

::

    import npusim as ns

    with ns.analysis.record():                 # tag tasks with source lines, log accesses
        ... eager work, captures ...
    print(ns.analysis.races_in_eager(dev))     # races of the eager work recorded above
    print(ns.analysis.races(graph))            # replays the graph once, recording it
    print(ns.analysis.races_across([d0, d1]))  # races between devices (peer copies, HCCL)
    ns.analysis.last_errors()                  # capture errors: source line and fix hint

``record()`` (or ``npusim.configure(record_accesses=True)`` for the whole program) makes every
submitted and captured task carry the Python line that issued it and gives each device an access
log (``npusim.device.recording``); the race detector (``race.py``) builds happens-before from the
log with vector clocks. The capture linter (``lint.py``) is always on: a facade call refused with
a capture error code records its source line and a one-line fix, and the Pythonic API's
``AclError`` messages carry both. Deadlock diagnoses (``Device.explain_stall``) follow the
wait-for chain and name the lines that issued each task when they were recorded.
"""
from __future__ import annotations

from contextlib import contextmanager

from ..device.launchjit import forget
from ..errors import check
from ..runtime import peer as _peer
from ..runtime.api_mdl import model_of
from ..runtime.device import CLOSE_HOOKS, DeadlockError
from ..runtime.recording import REC, Site, site
from ..runtime.runtime import RT
from .lint import HINTS, LintError, clear as clear_errors, hint, last_errors

_LAZY = ("Race", "RaceReport", "TaskRef", "analyze")     # race.py (numba) loads on first use


def __getattr__(name):
    if name in _LAZY:
        from . import race          # deferred: compiling its numba pass costs seconds
        return getattr(race, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

_kept: dict = {}     # runtime device -> AccessLog of the last record() block (detached)
_bridges: dict = {}  # id(bridge) -> runtime.peer.Bridge seen while recording (cross-device edges)


def _see_bridge(b) -> None:
    """``runtime.peer.BRIDGE_HOOKS``: while accesses are recorded, remember each new bridge (a
    destroyed communicator's bridges leave ``runtime.peer.BRIDGES`` and their slots
    ``slot_owner``, but the records and waits the log holds still need pairing)."""
    if REC.accesses:
        _bridges[id(b)] = b


def _see_live_bridges() -> None:
    """Recording starts: remember the bridges that exist already."""
    for b in _peer.BRIDGES:
        _bridges[id(b)] = b


def _forget_bridges(dev) -> None:
    """``CLOSE_HOOKS``: a closing device's bridges order nothing any more (its log is gone)."""
    for k, b in list(_bridges.items()):
        if b.src is dev or b.dst is dev:
            del _bridges[k]


_peer.BRIDGE_HOOKS.append(_see_bridge)
CLOSE_HOOKS.append(_forget_bridges)


def bridges_seen() -> list:
    """The cross-device notifies (``runtime.peer.Bridge``) live now or seen while recording."""
    for b in _peer.BRIDGES:
        _bridges.setdefault(id(b), b)
    return list(_bridges.values())


def _devices():
    return list(RT.devices.values())


def _runtime_device(device):
    """A runtime device from a Pythonic ``Device``, a device id, or None (the current one)."""
    if device is None:
        ctx = RT.current_context
        if ctx is None:
            raise ValueError("no current device: pass the device")
        return ctx.device
    if isinstance(device, int):
        return RT.devices[device]
    return getattr(device, "_dev", device)


def _drain(dev) -> None:
    """Run everything queued on a device (a device synchronize; a deadlock is left alone)."""
    try:
        dev.wait_all()
    except DeadlockError:
        pass


def set_recording(on: bool) -> None:
    """``npusim.configure(record_accesses=...)``: record on every device, now and later."""
    REC.on = REC.accesses = bool(on)
    forget()                          # a memoized launch is not recorded
    if on:
        _see_live_bridges()
    for d in _devices():
        if on:
            REC.attach(d)
        elif d.state.access_log is not None:
            _kept[d] = d.state.access_log          # still there for races_in_eager
            REC.detach(d)


@contextmanager
def record(accesses: bool = True):
    """Record the work issued inside the block: every task's source line, and (``accesses``)
    each device's memory accesses and synchronization. Queued work is drained (a device
    synchronize) on entry and exit, so the log holds exactly the block's tasks; the log stays
    available to ``races_in_eager`` after the block."""
    prev = (REC.on, REC.accesses)
    if accesses:
        _bridges.clear()
    for d in _devices():
        _drain(d)
        if accesses:
            REC.detach(d)
            _kept.pop(d, None)
            REC.attach(d)
    REC.on, REC.accesses = True, accesses or prev[1]
    forget()                          # a memoized launch is not recorded
    if REC.accesses:
        _see_live_bridges()
    try:
        yield
    finally:
        REC.on, REC.accesses = prev
        for d in _devices():
            log = d.state.access_log
            if log is None:
                continue
            _drain(d)
            if not prev[1]:
                _kept[d] = log
                REC.detach(d)


def stop() -> None:
    """Stop recording everywhere and forget the logs."""
    set_recording(False)
    REC.on = False
    _kept.clear()
    _bridges.clear()


def races_in_eager(device=None, devices=None) -> "RaceReport":
    """Races among the tasks recorded on ``device`` (a ``Device``, an id, or the current one):
    queued work is run first (a device synchronize). With ``devices`` (a list, or ``"all"``):
    :func:`races_across` those devices."""
    if devices is not None:
        return races_across(None if devices == "all" else devices)
    dev = _runtime_device(device)
    log = dev.state.access_log
    if log is not None:
        _drain(dev)
    else:
        log = _kept.get(dev)
        if log is None:
            raise ValueError("nothing recorded on this device: run the work inside "
                             "npusim.analysis.record() or with configure(record_accesses=True)")
    from .race import analyze      # deferred: numba
    return analyze(dev, log)


def _log_of(dev):
    log = dev.state.access_log
    if log is not None:
        return log
    return _kept.get(dev)


def races_across(devices=None) -> "RaceReport":
    """Races among the tasks recorded on several devices, analysed as one program: the logs
    are merged (notifies between devices, ``runtime.peer`` bridges, order a wait after the
    record it consumed; a host synchronization of one device orders what the host submits to
    any device after it), and peer copies and HCCL moves count as accesses of both devices'
    memory. ``devices``: ``Device`` objects or ids (default: every device with a log). Queued
    work is run first (a device synchronize)."""
    if devices is None:
        devs = [d for d in _devices() if _log_of(d) is not None]
    else:
        devs = [_runtime_device(d) for d in devices]
    parts = []
    for d in devs:
        log = _log_of(d)
        if log is None:
            raise ValueError(f"nothing recorded on device {d.id}: run the work inside "
                             "npusim.analysis.record() or with configure(record_accesses=True)")
        if d.state.access_log is not None:
            _drain(d)
        parts.append((d, log))
    if not parts:
        raise ValueError("nothing recorded: run the work inside npusim.analysis.record() or "
                         "with configure(record_accesses=True)")
    from .race import analyze_devices      # deferred: numba
    return analyze_devices(parts, bridges_seen())


def races(graph, stream=None, replays: int = 1) -> "RaceReport":
    """Races in a captured graph (a ``Graph`` or an ``aclmdlRI`` handle): it is replayed
    ``replays`` times on ``stream`` (default: the graph's capture stream, else a new stream)
    with accesses recorded, and only the replay's tasks are analysed. The replay is real: it
    changes device memory as any replay would. Source lines are known for tasks captured while
    recording (``record()`` around the capture)."""
    from .. import acl             # deferred: acl imports this package's linter (a cycle)
    from .race import analyze      # deferred: numba
    h = graph.handle if hasattr(graph, "handle") else int(graph)
    m, code = model_of(h)
    check(code)
    dev = m.device
    s = stream if stream is not None else getattr(graph, "stream", None)
    sh = getattr(s, "handle", s)
    made = None
    if sh is None:
        made, code = acl.rt.create_stream()
        check(code)
        sh = made
    temp = dev.state.access_log is None
    _drain(dev)
    if temp:
        REC.attach(dev)
    log = dev.state.access_log
    try:
        t0 = log.n_tasks
        for _ in range(replays):
            check(acl.mdl.ri_execute_async(h, sh))
        acl.rt.synchronize_stream(sh)       # a device fault is the program's business
        return analyze(dev, log, t0)
    finally:
        if temp:
            REC.detach(dev)
        if made is not None:
            acl.rt.destroy_stream(made)


__all__ = ["record", "races", "races_in_eager", "races_across", "bridges_seen",
           "set_recording", "stop", "last_errors",
           "clear_errors", "hint", "HINTS", "LintError", "Race", "RaceReport", "TaskRef",
           "Site", "site", "analyze"]
