"""A 10,000,000-task graph on Ascend910B: capture + first replay wall time and peak RSS —
``pytest -p no:nbmake -o addopts="" bench/test_graph_10m.py -s`` (slow: tens of seconds).

One capture of N ``aclrtLaunchKernel`` of ``EasyOPf`` on one stream (the capture cascades into
~306 capture streams of the chip's 32,768-SQE depth), ``aclmdlRIEndCapture``, then the first
``aclmdlRIExecuteAsync`` (BuildSqCq) and a synchronize. Run in a fresh interpreter so its peak
RSS (``ru_maxrss``) is the program's own. Targets (the scale issue), reported, not asserted:
capture + first replay <= 20 s, peak RSS <= 1 GB. ``NPUSIM_BENCH_TASKS`` sets N (default 10 M);
the table prints cost per task against N for N = 100 k and N.

Session 13: the pool grows by a longer view of reserved pages (``state.POOL_RESERVE``) instead of
``ndarray.resize`` (1.4-2.2 s of remapping and copying on the way to 10 M rows here). Two
interleaved pairs of this child at 10 M, c3d3a81 against the change: capture 18.11 / 22.00 ->
16.52 / 20.74 s, peak RSS 814 -> 761 MB (rows not yet written are no memory). Two more pairs
after the review fixes (huge pages only past the first 4 MiB): 17.11 / 21.25 -> 17.33 / 20.97 s,
so the time saved at 10 M (about 1.4 s in the first pairs) is within this machine's noise; the
RSS saving holds (816 -> 760 MB).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

CHILD = r'''
import json, resource, sys, time
import numpy as np
import npusim as ns
from npusim import acl
n = int(sys.argv[1])
ns.reset(); ns.configure(profile="Ascend910B")
acl.init(); acl.rt.set_device(0)
s, _ = acl.rt.create_stream()
x, _ = acl.rt.malloc(64, 0); a, _ = acl.rt.malloc(8, 0)
slot = np.array([x], np.uint64)                # kept alive: numpy_to_ptr holds it weakly
assert acl.rt.memcpy(a, 8, acl.util.numpy_to_ptr(slot), 8, 1) == 0
b, _ = acl.rt.binary_load_from_file(ns.samples.binary_path(), None)
f, _ = acl.rt.binary_get_function(b, "EasyOPf")
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0, c0 = time.perf_counter(), time.process_time()
assert acl.mdl.ri_capture_begin(s, 2) == 0
launch = acl.rt.launch_kernel
bad = 0
for _ in range(n):
    bad |= launch(f, 1, a, 8, s)
assert bad == 0
m, code = acl.mdl.ri_capture_end(s)
assert code == 0, code
t1, c1 = time.perf_counter(), time.process_time()
assert acl.mdl.ri_execute_async(m, s) == 0
assert acl.rt.synchronize_stream(s) == 0
t2, c2 = time.perf_counter(), time.process_time()
streams, _ = acl.mdl.ri_get_streams(m)
print(json.dumps({"n": n, "capture_s": t1 - t0, "replay_s": t2 - t1, "streams": len(streams),
                  "capture_cpu_s": c1 - c0, "replay_cpu_s": c2 - c1,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "rss_before_mb": rss0 / 1024}))
'''


def _run(n: int) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(n)], capture_output=True, text=True,
                         check=True, env={**os.environ, "NPUSIM_PROGRESS": "0"})
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_graph_10m(benchmark, bench_report):
    n = int(os.environ.get("NPUSIM_BENCH_TASKS", "10000000"))
    rows = [_run(100_000), _run(n)]
    bench_report(f"capture + first replay of an N-task single-stream graph (Ascend910B), "
                 f"each in a fresh interpreter:")
    for r in rows:
        total = r["capture_s"] + r["replay_s"]
        bench_report(f"  {r['n']:>12,} tasks  capture {r['capture_s']:7.2f} s  first replay "
                     f"{r['replay_s']:6.2f} s  {total / r['n'] * 1e6:6.2f} us/task  "
                     f"{r['streams']:4} capture streams  peak RSS {r['rss_mb']:7.0f} MB  (CPU: "
                 f"capture {r['capture_cpu_s']:.2f} s, replay {r['replay_cpu_s']:.2f} s)")
    big = rows[-1]
    bench_report(f"  largest / smallest (us/task): x"
                 f"{(big['capture_s'] + big['replay_s']) / big['n'] / ((rows[0]['capture_s'] + rows[0]['replay_s']) / rows[0]['n']):.2f}; "
                 f"targets at 10 M: capture + first replay <= 20 s "
                 f"({big['capture_s'] + big['replay_s']:.1f} s), peak RSS <= 1024 MB "
                 f"({big['rss_mb']:.0f} MB)")
    benchmark.extra_info.update(big)
    benchmark.pedantic(lambda: None, rounds=1)
