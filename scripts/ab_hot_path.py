"""A/B of the host hot path (or the engine's) between two checkouts, one process per measurement.

    python scripts/ab_hot_path.py OLD_TREE NEW_TREE [--pairs 5] [--engine]

Each process puts its tree first on ``sys.path`` (and checks that ``npusim`` came from it), then
measures, on one stream of the default profile: 20,000 eager ``acl.rt.launch_kernel`` calls of
``EasyOPf`` and the synchronize that runs them (µs per launch), 20,000 launches captured into a
graph (µs per launch), and 20 replays of that graph with their synchronize (ms per replay).
Pairs alternate old / new so the machine's drift hits both alike; the medians and the new/old
ratios are printed. Used for the closing notes of changes that touch the launch path; a same-run
benchmark cannot compare two commits.

``--engine`` measures the device engine instead (``bench/engine_programs.py``): the single
stream of ``bench/test_engine_throughput.py`` (1 M SQEs, M SQE/s, median of 7 runs) and the
chained streams of ``bench/test_engine_scaling.py`` at 2, 8, 64 and 256 streams (ns per SQE).
The engine's single-stream loop moves with any change to the code compiled around it, so a
change to ``run`` or to what it inlines gets this A/B before it lands.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

CHILD = r"""
import gc, sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np
import npusim
from npusim import acl
from npusim.runtime.functions import table_function
assert npusim.__file__.startswith(sys.argv[1]), npusim.__file__
acl.init(); acl.rt.set_device(0)
s, _ = acl.rt.create_stream()
f = table_function("EasyOPf")
f = f[0] if isinstance(f, tuple) else f
buf, _ = acl.rt.malloc(1 << 20, 0)
host = np.array([buf], dtype=np.uint64)
args = acl.util.numpy_to_ptr(host)
N = 20000
for _ in range(200):
    acl.rt.launch_kernel(f, 1, args, 8, s)
acl.rt.synchronize_stream(s); gc.collect()
t0 = time.perf_counter()
for _ in range(N):
    acl.rt.launch_kernel(f, 1, args, 8, s)
acl.rt.synchronize_stream(s)
eager = (time.perf_counter() - t0) / N * 1e6
acl.mdl.ri_capture_begin(s, 0); gc.collect()
t0 = time.perf_counter()
for _ in range(N):
    acl.rt.launch_kernel(f, 1, args, 8, s)
cap = (time.perf_counter() - t0) / N * 1e6
m, _ = acl.mdl.ri_capture_end(s)
t0 = time.perf_counter()
for _ in range(20):
    acl.mdl.ri_execute_async(m, s)
acl.rt.synchronize_stream(s)
print(eager, cap, (time.perf_counter() - t0) / 20 * 1e3)
"""
LABELS = ("eager launch + sync (us/launch)", "captured launch (us/launch)",
          "replay of 20,000 tasks (ms)")
ENGINE_CHILD = r"""
import sys, time
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[1] + "/bench")
import numpy as np
import npusim
assert npusim.__file__.startswith(sys.argv[1]), npusim.__file__
import engine_programs as P
import test_engine_scaling as T
from npusim.device import engine as E
d, q = P.single_stream(1_000_000)
snap = P.Snapshot(d)
times = []
for _ in range(8):
    args, _ = snap.restore()
    t0 = time.perf_counter()
    assert E.run(*args) == E.R_IDLE
    times.append(time.perf_counter() - t0)
print(1.0 / float(np.median(times[1:])),
      *(float(np.median([T._chain_ns_per_sqe(s, 3) for _ in range(3)])) for s in (2, 8, 64, 256)))
"""
ENGINE_LABELS = ("single stream (M SQE/s)", *(f"chained, {s} streams (ns/SQE)"
                                               for s in (2, 8, 64, 256)))


def measure(tree: str, child: str = CHILD, n: int = len(LABELS)) -> list[float]:
    out = subprocess.run([sys.executable, "-c", child, tree], capture_output=True, text=True,
                         check=True, cwd="/")
    return [float(x) for x in out.stdout.split()[-n:]]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--engine", action="store_true", help="the engine's single and chained streams")
    a = ap.parse_args(argv)
    child, labels = (ENGINE_CHILD, ENGINE_LABELS) if a.engine else (CHILD, LABELS)
    def one(tree):
        return measure(tree, child, len(labels))
    one(a.old), one(a.new)                          # compile / load both numba caches
    runs = {a.old: [], a.new: []}
    for k in range(a.pairs):                        # the order alternates: drift hits both alike
        for tree in ((a.old, a.new) if k % 2 == 0 else (a.new, a.old)):
            runs[tree].append(one(tree))
    for i, label in enumerate(labels):
        old = statistics.median(r[i] for r in runs[a.old])
        new = statistics.median(r[i] for r in runs[a.new])
        print(f"{label:34s} old {old:9.3f}  new {new:9.3f}  new/old {new / old:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
