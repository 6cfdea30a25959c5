"""Traces: markers the user puts on the host timeline, and clearing what was recorded.

``npusim.trace.mark("name")`` is an instant and ``with npusim.trace.range("step 3"):`` a span on
the host clock (simulated ns, the same origin as the device's clocks). While tracing is on
(``npusim.configure(trace=True)``) they are recorded and every ``Device.trace()`` shows them:
in Perfetto / Chrome trace JSON on the host's "markers" row, in ``summary()``, and as time
windows (``trace.window("step 3")``). ``clear()`` forgets every recorded row, host call and
marker, so the next ``Device.trace()`` starts from there (``docs/timing.md`` "Traces").
``world()`` is one trace of every device (one process row each, the host rows once).
The export itself is :mod:`.chrome`; plots are :mod:`.plot`.
"""
from __future__ import annotations

from contextlib import contextmanager

from ..device.launchjit import forget as _forget
from ..runtime.runtime import RT
from .chrome import Trace, WorldTrace


def mark(name: str) -> None:
    """An instant marker at the host's current simulated time (recorded while tracing)."""
    if RT.trace_on:
        RT.markers.append((str(name), RT.host_ns, -1))


@contextmanager
def range(name: str):
    """``with npusim.trace.range("step 3"): ...``: a span marker from entry to exit (host
    simulated time; recorded while tracing). Ranges nest."""
    t0 = RT.host_ns
    try:
        yield
    finally:
        if RT.trace_on:
            RT.markers.append((str(name), t0, RT.host_ns))


def world(devices=None, flows: bool = True) -> WorldTrace:
    """One trace of every device of the process (or of ``devices``: ids or ``Device`` objects): a
    process row per device, a track per stream, the host's rows once (``WorldTrace``);
    ``flows``: arrows from each notify's record to the wait on another device it satisfied."""
    return WorldTrace.from_devices(devices, flows)


def clear() -> None:
    """Forget the recorded trace: every device's rows, the host calls and the markers.
    Recording goes on (tracing stays as configured)."""
    with RT.lock:
        _forget()                       # a locked region begins: the launch memo is void
        for d in RT.devices.values():
            d.state.clear_trace()
        RT.host_trace.clear()
        RT.markers.clear()


__all__ = ["mark", "range", "clear", "world", "Trace", "WorldTrace"]
