"""Plots: the design doc's eager-vs-graph figure from a real run, and stream timelines.

matplotlib is imported lazily (it is an optional dependency: ``pip install npusim[plot]``).
"""
from __future__ import annotations

import numpy as np

from ..device.kernels import UNIT_DMA
from ..device.sqe import OP_KERNEL
from ..profiles import get_profile
from ..runtime.runtime import RT
from .savings import Comparison, compare


def _plt():
    import matplotlib          # deferred: optional (the [plot] extra), and slow to import
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    return plt


def eager_vs_graph(result: Comparison | None = None, path=None, n: int = 16,
                   kernel_ns: int = 4_000, profile: str | None = None):
    """Draw CPU and NPU rows for the same program run eagerly and as a graph replay, with the
    saved CPU time and saved NPU time marked. Returns the matplotlib figure (saved to ``path``
    when given). Each saving is drawn in a lane of its own — the CPU one between the eager and
    the graph rows, the NPU one under the graph rows — so no label covers a bar."""
    c = result or compare(n, kernel_ns, profile)
    t = (RT.profile or get_profile(profile)).timing
    plt = _plt()
    fig, ax = plt.subplots(figsize=(11, 4.2))
    # y of each row; y = 2 is the lane of the saved-CPU arrow, y = -0.75 the saved-NPU one
    rows = [("CPU  eager", 4), ("NPU  eager", 3), ("CPU  graph", 1), ("NPU  graph", 0)]
    lane = dict(facecolor="white", alpha=0.85, pad=1.5, edgecolor="none")
    us = 1e-3
    e0, g0 = c.eager.host_start, c.graph.host_start
    # host rows: one block per launch / one execute call
    L = t.host_kernel_launch_ns
    ax.broken_barh([((i * L) * us, L * us * 0.92) for i in range(c.n)], (4 - 0.35, 0.7),
                   color="#d9822b", label="host API call")
    ax.broken_barh([(0, (c.graph.host_end - g0) * us)], (1 - 0.35, 0.7), color="#d9822b")
    ax.broken_barh([((a - e0) * us, (b - a) * us) for a, b in c.eager.kernels], (3 - 0.35, 0.7),
                   color="#2b6cd9", edgecolor="white", linewidth=0.6, label="kernel")
    ax.broken_barh([((a - g0) * us, (b - a) * us) for a, b in c.graph.kernels], (0 - 0.35, 0.7),
                   color="#2b6cd9", edgecolor="white", linewidth=0.6)
    end_e = (c.eager.device_end - e0) * us
    end_g = (c.graph.device_end - g0) * us
    ax.axvline(end_g, color="grey", lw=0.8, ls=":")
    ax.axvline(end_e, color="grey", lw=0.8, ls=":")
    host_e = (c.eager.host_end - e0) * us
    host_g = (c.graph.host_end - g0) * us
    for x in (host_g, host_e):               # the two CPU ends, ticked at the arrow
        ax.plot([x, x], [1.65, 2.05], color="#c0392b", lw=0.8)
    ax.annotate("", xy=(host_g, 1.85), xytext=(host_e, 1.85),
                arrowprops=dict(arrowstyle="<->", color="#c0392b"))
    ax.text((host_g + host_e) / 2, 2.0, f"saved CPU time {c.saved_cpu_ns * us:.1f} µs",
            ha="center", va="bottom", color="#c0392b", fontsize=9, bbox=lane)
    ax.annotate("", xy=(end_g, -0.6), xytext=(end_e, -0.6),
                arrowprops=dict(arrowstyle="<->", color="#27ae60"))
    ax.text((end_g + end_e) / 2, -0.75, f"saved NPU time {c.saved_npu_ns * us:.1f} µs",
            ha="center", va="top", color="#27ae60", fontsize=9, bbox=lane)
    ax.set_yticks([r for _, r in rows], [name for name, _ in rows])
    ax.set_ylim(-1.3, 4.6)
    ax.set_xlabel("simulated time since the first API call (µs)")
    ax.set_title(f"{c.n} kernel{'s' if c.n != 1 else ''} of {c.kernel_ns / 1000:g} µs: eager "
                 f"launches vs one graph replay ({c.speedup:.2f}x)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.005, 1.0), fontsize=8)   # outside: no bar
                                                                            # under it
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig


def timeline(trace, path=None, max_rows: int = 24):
    """A Gantt chart of a device trace (``dev.trace()``): one row per stream, named as the
    trace names it (the user's stream names, ``Device.stream(name=...)``); kernels blue, peer
    copies and other runtime DMA kernel tasks green, other tasks grey, the parked part of waits
    hatched; ``npusim.trace.range`` spans shaded.
    A trace of every device (``npusim.trace.world()``) draws one group of rows per device
    (:func:`devices_timeline`)."""
    if hasattr(trace, "traces"):                  # a WorldTrace
        return devices_timeline(trace, path, max_rows=max(max_rows, 48))
    plt = _plt()
    rows = trace.rows
    sqs = list(np.unique(rows["sq"]))[:max_rows]
    fig, ax = plt.subplots(figsize=(11, 0.45 * len(sqs) + 1.2))
    for i, sq in enumerate(sqs):
        m = rows["sq"] == sq
        _bars(ax, i, rows[m], trace.waiting[m])
    _ranges(ax, trace.markers)
    ax.set_yticks(range(len(sqs)), [trace.stream_name(q) for q in sqs])
    ax.set_xlabel("simulated time (µs)")
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig


def devices_timeline(world, path=None, max_rows: int = 48):
    """A Gantt chart of every device (``npusim.trace.world()``) on the one time axis: a group of
    rows per device, top to bottom by device id, one row per stream of it (``device: stream``);
    the groups are separated by a line. Bars as in :func:`timeline` (peer copies green; a wait
    on another device's notify is hatched while it is parked)."""
    plt = _plt()
    lanes = []                                      # (device, sq, rows, waiting)
    for d, tr in world.traces.items():
        for sq in np.unique(tr.rows["sq"]):
            m = tr.rows["sq"] == sq
            lanes.append((d, tr.stream_name(sq), tr.rows[m], tr.waiting[m]))
    lanes = lanes[:max_rows]
    fig, ax = plt.subplots(figsize=(11, 0.4 * max(len(lanes), 1) + 1.4))
    for i, (_, _, r, w) in enumerate(lanes):
        _bars(ax, i, r, w)
    _ranges(ax, world.markers)
    for i in range(1, len(lanes)):                  # a line between two devices' groups
        if lanes[i][0] != lanes[i - 1][0]:
            ax.axhline(i - 0.5, color="black", lw=0.8)
    ax.set_yticks(range(len(lanes)), [f"device {d}: {name}" for d, name, _, _ in lanes])
    ax.set_ylim(len(lanes) - 0.5, -0.5)             # device 0 on top
    ax.set_xlabel("simulated time (µs)")
    ax.set_title(f"{len(world.traces)} device{'s' if len(world.traces) != 1 else ''} on one "
                 "timeline")
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig


def _bars(ax, y, r, w) -> None:
    """One stream's rows at height ``y``: a wait's row begins with its parked part (hatched),
    the bar is the rest; kernels blue, the runtime's DMA kernel tasks (peer copies, inline
    reduces) green, other tasks grey."""
    kernel = r["op"] == OP_KERNEL
    colour = np.where(kernel & (r["unit"] == UNIT_DMA), "#27ae60",
                      np.where(kernel, "#2b6cd9", "#999999"))
    ax.broken_barh(list(zip((r["start"] + w) / 1e3, (r["end"] - r["start"] - w) / 1e3)),
                   (y - 0.35, 0.7), color=colour)
    parked = w > 0
    if parked.any():
        ax.broken_barh(list(zip(r["start"][parked] / 1e3, w[parked] / 1e3)),
                       (y - 0.2, 0.4), facecolor="none", edgecolor="#bbbbbb", hatch="///",
                       linewidth=0)


def _ranges(ax, markers) -> None:
    """``npusim.trace.range`` spans, shaded."""
    for k, (name, t0, t1) in enumerate(m for m in markers if m[2] >= 0):
        ax.axvspan(t0 / 1e3, t1 / 1e3, color="#f0c040" if k % 2 else "#f5dd90", alpha=0.25,
                   lw=0)
