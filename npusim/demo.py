"""The demo: a small two-stream program on a simulated NPU, checked against numpy.

``python -m npusim demo [--profile NAME] [--trace out.json]`` runs it, and so does
``npusim.demo.run()``. It is the first thing a new user runs, so it is written as an example of
the Pythonic API:

    stream 1:  H2D x, H2D y  ->  VectorAddKernel z = x + alpha*y  ->  record ev  ->  D2H z
    stream 2:  wait ev  ->  AddKernel w = z + x (8 blocks)  ->  D2H w

The host buffers are pinned (``dev.malloc_host``), so every copy is a real async task on its
stream. After both streams synchronize, the results are compared with numpy and the simulated
timeline (from the device trace) is printed.
"""
from __future__ import annotations

import sys
import time

import numpy as np

import npusim as ns

N = 4096                  # float32 elements per vector
ALPHA = 0.5
BAR = 36                  # width of the timeline bars


def _utf8() -> bool:
    return (getattr(sys.stdout, "encoding", "") or "").lower().replace("-", "") == "utf8"


def run(profile: str | None = None, trace_path: str | None = None, out=print) -> int:
    """Run the demo on a fresh simulator; returns 0 when the results match numpy, else 1."""
    us = "µs" if _utf8() else "us"
    wall0 = time.perf_counter()
    ns.reset()                                   # a fresh simulator: deterministic timings
    ns.configure(trace=True)                     # record every executed task
    dev = ns.Device(profile)                     # None: the profile in force (default Ascend910B)
    p = dev.profile
    out(f"npusim demo on {p.name} ({p.soc_version}: {p.aic_cores} cube + {p.aiv_cores} vector "
        f"cores)  [source: npusim/demo.py]")

    # ---- data on the host (pinned buffers, so the copies are async tasks) ----
    rng = np.random.default_rng(0)
    x = rng.standard_normal(N).astype(np.float32)
    y = rng.standard_normal(N).astype(np.float32)
    nbytes = x.nbytes
    hx = dev.malloc_host(nbytes).write(x)
    hy = dev.malloc_host(nbytes).write(y)
    hz, hw = dev.malloc_host(nbytes), dev.malloc_host(nbytes)

    # ---- device buffers, two streams, one event ----
    dx, dy, dz, dw = (dev.malloc(nbytes) for _ in range(4))
    s1, s2 = dev.stream(), dev.stream()
    ev = dev.event()
    names = {int(b): n for b, n in ((dx, "x"), (dy, "y"), (dz, "z"), (dw, "w"),
                                    (hz, "host z"), (hw, "host w"))}

    try:
        s1.copy(dx, hx, nbytes)                                  # H2D
        s1.copy(dy, hy, nbytes)
        s1.launch("VectorAddKernel", 1, args=(dx, dy, dz, ALPHA, N))   # z = x + alpha*y
        s1.record(ev)
        s2.wait(ev)                                              # stream 2 waits for z
        s2.launch("AddKernel", 8, args=(dz, dx, dw, N))          # w = z + x, 8 blocks
        s1.copy(hz, dz, nbytes)                                  # D2H, overlaps AddKernel
        s2.copy(hw, dw, nbytes)
        s1.synchronize()
        s2.synchronize()
        z, w = hz.read(np.float32), hw.read(np.float32)
    except ns.AclError as e:
        out(f"FAIL: {e}")
        return 1

    # ---- check against numpy ----
    want_z = x + np.float32(ALPHA) * y
    want_w = want_z + x
    ok = True
    out("")
    for label, got, want in ((f"z = x + {ALPHA}*y", z, want_z), ("w = z + x", w, want_w)):
        err = float(np.max(np.abs(got - want)))
        good = bool(np.allclose(got, want, rtol=1e-6, atol=1e-6))
        ok &= good
        out(f"  {label:<16} max |error| {err:.2e}   {'ok' if good else 'WRONG'}")
    out("PASS" if ok else "FAIL")

    # ---- the simulated timeline ----
    trace = dev.trace()
    out("")
    out(_timeline(trace, names, us))
    out("")
    out("per stream (simulated " + us + "; busy includes time parked on a wait):")
    out("  " + trace.summary().replace("\n", "\n  "))
    out("")
    end = int(trace.rows["end"].max()) if len(trace) else 0
    out(f"simulated device time  {end / 1e3:9.1f} {us}  (last task end)")
    out(f"simulated host clock   {dev.now_ns / 1e3:9.1f} {us}  (API costs + synchronize waits)")
    out(f"wall time              {(time.perf_counter() - wall0) * 1e3:9.1f} ms  "
        f"(host layer + engine; a first run also compiles with numba)")
    if trace_path:
        trace.to_chrome(trace_path)
        out(f"trace written to {trace_path} (open it in ui.perfetto.dev or chrome://tracing)")
    return 0 if ok else 1


def _label(row, name: str, names: dict) -> str:
    """A readable name for one trace row: kernel names as they are, copies with their target."""
    if name == "MEMCPY":
        dst = names.get(int(row["a0"]), "?")
        return f"copy -> {dst}" + (" (D2H)" if dst.startswith("host") else " (H2D)")
    return {"EVENT_RECORD": "record ev", "EVENT_WAIT": "wait ev"}.get(name, name)


def _timeline(trace, names: dict, us: str) -> str:
    """One line per executed task: stream, task, start, end, and a bar on a common time axis."""
    if len(trace) == 0:
        return "(no tasks traced)"
    rows = trace.rows
    t0, t1 = int(rows["start"].min()), int(rows["end"].max())
    span = max(t1 - t0, 1)
    full, empty = ("█", "·") if us == "µs" else ("#", ".")
    lines = [f"timeline (simulated {us}):",
             f"  {'stream':<10}{'task':<22}{'start':>8}{'end':>8}  "
             f"|{t0 / 1e3:<{BAR // 2}.1f}{t1 / 1e3:>{BAR - BAR // 2}.1f}|"]
    order = np.lexsort((rows["start"], rows["sq"]))
    for i in order:
        r = rows[i]
        a, b = int(r["start"]), int(r["end"])
        lo = (a - t0) * BAR // span
        hi = max(lo + 1, -(-(b - t0) * BAR // span))
        stream = trace.stream_names.get(int(r["sq"]), f"sq{int(r['sq'])}").split(" (")[0]
        lines.append(f"  {stream:<10}{_label(r, trace.name_of(r), names):<22}"
                     f"{a / 1e3:>8.1f}{b / 1e3:>8.1f}  "
                     f"|{empty * lo}{full * (hi - lo)}{empty * (BAR - hi)}|")
    return "\n".join(lines)
