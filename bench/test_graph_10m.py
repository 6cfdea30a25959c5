"""A 10,000,000-task graph on Ascend910B: capture + first replay wall time and peak RSS —
``pytest -p no:nbmake -o addopts="" bench/test_graph_10m.py -s`` (slow: tens of seconds).

One capture of N ``aclrtLaunchKernel`` of ``EasyOPf`` on one stream (the capture cascades into
~306 capture streams of the chip's 32,768-SQE depth), ``aclmdlRIEndCapture``, then the first
``aclmdlRIExecuteAsync`` (BuildSqCq) and a synchronize. Run in a fresh interpreter so its peak
RSS (``ru_maxrss``) is the program's own. Targets, reported, not asserted (``TARGETS``): at
10 M (the scale issue) capture + first replay <= 20 s, peak RSS <= 1 GB; at 30 M (issue 40)
<= 20 s, <= 2.5 GB; at 100 M (issue 40) the capture <= 60 s, <= 6.4 GB. A 100 M-task graph
needs about 3,055 capture streams, more than the chip's 1,024 SQ/CQ pairs, so its first
``aclmdlRIExecuteAsync`` returns 207005 as on the hardware (the table says so) and the capture
is what is timed. MB are MiB (``ru_maxrss`` / 1024), GB GiB. ``NPUSIM_BENCH_TASKS`` sets N
(default 10 M); the table prints cost per task against N for N = 100 k and N.

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
refused = acl.mdl.ri_execute_async(m, s)       # 207005 past the chip's SQ/CQ pairs
assert refused in (0, 207005), refused
assert acl.rt.synchronize_stream(s) == 0
t2, c2 = time.perf_counter(), time.process_time()
streams, _ = acl.mdl.ri_get_streams(m)
print(json.dumps({"n": n, "capture_s": t1 - t0, "replay_s": t2 - t1, "streams": len(streams),
                  "refused": refused,
                  "capture_cpu_s": c1 - c0, "replay_cpu_s": c2 - c1,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "rss_before_mb": rss0 / 1024}))
'''


# (N, what is timed, seconds, peak RSS MB): the scale issue's 10 M; issue 40's 30 M (about what
# the A2's 1,024 SQ/CQ pairs can execute) and 100 M (capture only: its execution is refused)
TARGETS = ((10_000_000, "capture + first replay", 20, 1024),
           (30_000_000, "capture + first replay", 20, 2560),
           (100_000_000, "capture (+ the refused execute)", 60, 6554))


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
        replay = (f"first replay {r['replay_s']:6.2f} s" if not r["refused"] else
                  f"execute refused: {r['refused']}")
        bench_report(f"  {r['n']:>12,} tasks  capture {r['capture_s']:7.2f} s  {replay}  "
                     f"{total / r['n'] * 1e6:6.2f} us/task  "
                     f"{r['streams']:4} capture streams  peak RSS {r['rss_mb']:7.0f} MB  (CPU: "
                 f"capture {r['capture_cpu_s']:.2f} s, replay {r['replay_cpu_s']:.2f} s)")
    if big_refused := rows[-1]["refused"]:
        bench_report(f"  the {rows[-1]['n']:,}-task graph needs {rows[-1]['streams']:,} capture "
                     f"streams, more than the chip's 1,024 SQ/CQ pairs: its first execution "
                     f"returns {big_refused} (ACL_ERROR_RT_RESOURCE_ALLOC_FAIL), as on the "
                     f"hardware; the capture is what is timed")
    big = rows[-1]
    total = big["capture_s"] + big["replay_s"]
    bench_report(f"  largest / smallest (us/task): x"
                 f"{total / big['n'] / ((rows[0]['capture_s'] + rows[0]['replay_s']) / rows[0]['n']):.2f}")
    for n_at, what, secs, mb in TARGETS:
        if big["n"] == n_at:
            bench_report(f"  targets at {n_at:,}: {what} <= {secs} s ({total:.1f} s), peak RSS "
                         f"<= {mb:,} MB ({big['rss_mb']:,.0f} MB)")
    benchmark.extra_info.update(big)
    benchmark.pedantic(lambda: None, rounds=1)
