"""The time CPython's cyclic collector takes inside a measured window (``gc.callbacks``).

A capture keeps what it makes: every graph adds its models, streams, events and their lists to
the objects that survive, and once those have grown by a quarter since the last full collection
CPython runs one over all of them, numba's ~100,000 included (50-90 ms on this machine). Whether
that collection lands inside a bench's window depends on the process's allocation history, not on
the code measured: the 490-graph piecewise capture read 4.0 us per launch in one checkout and 8.6
in a fresh clone of the same commit (pytest imports an installed plugin's package through its
assertion rewriter, which allocates differently), and one collection was the whole difference.
So benches that build many graphs report their figure with and without the collector's time."""
from __future__ import annotations

import gc
import time


class GcClock:
    """``with GcClock() as c:`` — ``c.seconds[g]`` / ``c.count[g]``: time and number of the
    collections of generation ``g`` run inside the block."""

    def __init__(self):
        self.seconds = [0.0, 0.0, 0.0]
        self.count = [0, 0, 0]
        self._t0 = 0.0

    def _callback(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._t0 = time.perf_counter()
        else:
            g = info["generation"]
            self.seconds[g] += time.perf_counter() - self._t0
            self.count[g] += 1

    def __enter__(self) -> "GcClock":
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc) -> None:
        gc.callbacks.remove(self._callback)

    @property
    def total(self) -> float:
        return sum(self.seconds)

    def describe(self) -> str:
        return (f"the collector {self.total * 1e3:.1f} ms: {self.count[2]} full collection(s) "
                f"{self.seconds[2] * 1e3:.1f} ms, {self.count[0] + self.count[1]} young "
                f"{(self.seconds[0] + self.seconds[1]) * 1e3:.1f} ms")
