"""Eager launches against a graph replay: the closed form of the timing model, and the run that
checks it.

The program is the design doc's figure: one stream issuing N equal kernels of duration K. In eager
mode the host pays a launch per kernel and the device pays the eager per-SQE dispatch; a graph
replay costs the host one ``aclmdlRIExecuteAsync`` and the device the cheaper graph dispatch plus
MODEL_EXECUTE, EndGraph and the launching stream's wait on it (``docs/timing.md``)::

    eager_end = H0 + doorbell + max(L + N*(De + K), N*L + De + K)
    graph_end = H1 + E + doorbell + De + ME + N*(Dg + K) + Dg + EG + wakeup + De + NW

with L the host cost of a launch, E of an execute, De/Dg the eager/graph dispatch costs, ME, EG, NW
the MODEL_EXECUTE, EndGraph and notify-wait SQE costs, and H0/H1 the host clock at the first call.
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import api as ns
from ..runtime.runtime import RT


@dataclass
class Timeline:
    """One mode's result: host busy interval and device busy interval (ns, simulated)."""
    host_start: int
    host_end: int
    device_start: int
    device_end: int
    kernels: list            # (start, end) of every kernel on the device


@dataclass
class Comparison:
    n: int
    kernel_ns: int
    eager: Timeline
    graph: Timeline

    @property
    def saved_cpu_ns(self) -> int:
        """Host time the graph does not spend issuing launches."""
        return (self.eager.host_end - self.eager.host_start) - \
            (self.graph.host_end - self.graph.host_start)

    @property
    def saved_npu_ns(self) -> int:
        """Device time from first submit to last kernel end saved by the replay."""
        return (self.eager.device_end - self.eager.host_start) - \
            (self.graph.device_end - self.graph.host_start)

    @property
    def speedup(self) -> float:
        return (self.eager.device_end - self.eager.host_start) / \
            max(1, self.graph.device_end - self.graph.host_start)


def predict_eager_end(t, n: int, k: int, h0: int = 0) -> int:
    """Device end of N eager launches of a K-ns kernel issued from host time h0."""
    per = t.sqe_dispatch_eager_ns + k
    return h0 + t.doorbell_ns + max(t.host_kernel_launch_ns + n * per,
                                    n * t.host_kernel_launch_ns + per)


def predict_graph_end(t, n: int, k: int, h1: int = 0, first: bool = False,
                      streams: int = 1) -> int:
    """Completion of the launching stream's wait on EndGraph for a replay issued at h1."""
    e = t.host_model_execute_ns + (t.host_model_first_execute_per_stream_ns * streams
                                   if first else 0)
    return (h1 + e + t.doorbell_ns + t.sqe_dispatch_eager_ns + t.model_execute_ns
            + n * (t.sqe_dispatch_graph_ns + k) + t.sqe_dispatch_graph_ns + t.end_graph_ns
            + t.sync_wakeup_ns + t.sqe_dispatch_eager_ns + t.notify_wait_ns)


def compare(n: int = 32, kernel_ns: int = 2_000, profile: str | None = None,
            kernel: str = "EasyOPf") -> Comparison:
    """Run the same straight-line program eagerly and as a (warm) graph replay on a fresh
    simulator and return both timelines."""
    ns.reset()
    ns.configure(profile=profile, trace=True)
    dev = ns.Device(profile)
    s = dev.stream()
    x = dev.malloc(64).fill(0)

    def kernels(rows, since):
        k = rows[(rows["op"] == 1) & (rows["start"] >= since)]
        return [(int(a), int(b)) for a, b in zip(k["start"], k["end"])]

    # eager
    s.synchronize()
    h0 = RT.host_ns
    for _ in range(n):
        s.launch(kernel, 1, (x,), duration_ns=kernel_ns)
    h0_end = RT.host_ns
    s.synchronize()
    rows = dev.trace().rows
    ek = kernels(rows, h0)
    eager = Timeline(h0, h0_end, ek[0][0], ek[-1][1], ek)
    # graph: capture, one warm-up replay (builds the SQ/CQ), then the measured replay
    with ns.graph(stream=s) as g:
        for _ in range(n):
            s.launch(kernel, 1, (x,), duration_ns=kernel_ns)
    g.replay()
    s.synchronize()
    h1 = RT.host_ns
    g.replay()
    h1_end = RT.host_ns
    s.synchronize()
    rows = dev.trace().rows
    gk = kernels(rows, h1)
    end = int(rows[rows["sq"] == rows["sq"][rows["op"] == 13][-1]]["end"].max())
    graph = Timeline(h1, h1_end, gk[0][0], end, gk)
    return Comparison(n, kernel_ns, eager, graph)
