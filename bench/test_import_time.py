"""Start-up cost (pytest-benchmark): ``import npusim`` and a first synchronize, in a new process.

*Warm*: numba's on-disk cache (``cache=True`` on the engine and the kernels) is populated, as on
a developer's machine after the first run. *Cold*: an empty temporary ``NUMBA_CACHE_DIR``, so
every jitted function and kernel cfunc is compiled, as on a fresh clone. The child process
measures both phases itself; the benchmark time is the whole child (interpreter start included).
Nothing here asserts on time: the figures are printed.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import json, time
t0 = time.perf_counter()
import npusim as ns
t1 = time.perf_counter()
dev = ns.Device("Ascend910B")
s = dev.stream()
x = dev.malloc(64)
s.launch("EasyOPf", blocks=1, args=(x,))
s.synchronize()
t2 = time.perf_counter()
assert int(x.read("uint32", 1)[0]) == 1
print(json.dumps({"import_s": t1 - t0, "first_sync_s": t2 - t1}))
"""


def _child(cache_dir: str | None = None) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])))
    env.pop("NUMBA_CACHE_DIR", None)
    if cache_dir:
        env["NUMBA_CACHE_DIR"] = cache_dir
    out = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True, timeout=600).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_import_and_first_sync_warm_cache(benchmark, bench_report):
    _child()                                  # populate the cache if sources changed
    runs: list[dict] = []
    benchmark.pedantic(lambda: runs.append(_child()), rounds=3, iterations=1)
    imp = statistics.median(r["import_s"] for r in runs)
    sync = statistics.median(r["first_sync_s"] for r in runs)
    benchmark.extra_info.update(import_s=round(imp, 3), first_sync_s=round(sync, 3))
    bench_report("[start-up] fresh process, warm numba cache (median of 3):")
    bench_report(f"  import npusim {imp:6.2f} s, first synchronize {sync:6.3f} s, whole process "
                 f"{benchmark.stats.stats.median:6.2f} s")


def test_import_and_first_sync_cold_cache(benchmark, bench_report):
    runs: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="npusim-numba-") as cache:
        benchmark.pedantic(lambda: runs.append(_child(cache)), rounds=1, iterations=1)
    r = runs[0]
    benchmark.extra_info.update(import_s=round(r["import_s"], 2),
                                first_sync_s=round(r["first_sync_s"], 2))
    bench_report("[start-up] fresh process, empty numba cache (everything compiles):")
    bench_report(f"  import npusim {r['import_s']:6.2f} s, first synchronize "
                 f"{r['first_sync_s']:6.2f} s, whole process {benchmark.stats.stats.median:6.2f} s")
