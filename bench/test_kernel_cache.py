"""``@npusim.kernel`` across processes — ``pytest -p no:nbmake -o addopts="" -s
bench/test_kernel_cache.py``. Three kernels defined in a module file, loaded in a new process
with an empty kernel cache (``NPUSIM_KERNEL_CACHE``) and then again with the cache the first
left: milliseconds per kernel definition, and numba's cache hits. The first kernel of a process
also pays numba's one-time target set-up (what any first numba load pays, the engine's too), so
it is printed apart. Prints the figures; asserts only the cache hits, nothing on time.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

KERNELS = '''
import npusim
from npusim.device import memview as V

@npusim.kernel
def scale(mem, ctx, block_idx, block_num, x: "ptr", n: "u32", alpha: "f32"):
    v = V.f32(mem, ctx, x, n)
    for i in range(n):
        v[i] *= alpha

@npusim.kernel
def add1(mem, ctx, block_idx, block_num, x: "ptr", n: "u32"):
    v = V.u32(mem, ctx, x, n)
    for i in range(n):
        v[i] += 1

@npusim.kernel
def axpy(mem, ctx, block_idx, block_num, x: "ptr", y: "ptr", n: "u32", a: "f32"):
    vx, vy = V.r_f32(mem, ctx, x, n), V.f32(mem, ctx, y, n)
    for i in range(block_idx, n, block_num):
        vy[i] += a * vx[i]
'''

CHILD = """
import time, npusim, importlib
out = []
for name in ("k_scale", "k_add1", "k_axpy"):
    t = time.perf_counter(); m = importlib.import_module(name)
    out.append((time.perf_counter() - t) * 1e3)
k = [m for m in (importlib.import_module(n) for n in ("k_scale", "k_add1", "k_axpy"))]
hits = [getattr(mod, mod.__name__[2:]).cfunc.cache_hits for mod in k]
print(" ".join(f"{x:.1f}" for x in out), *hits)
"""


def _child(src_dir: str, cache: str) -> tuple[list[float], list[int]]:
    env = dict(os.environ, NPUSIM_KERNEL_CACHE=cache,
               PYTHONPATH=os.pathsep.join([src_dir, str(ROOT)]))
    out = subprocess.run([sys.executable, "-c", CHILD], cwd=src_dir, env=env, check=True,
                         capture_output=True, text=True, timeout=900).stdout.split()
    return [float(x) for x in out[:3]], [int(x) for x in out[3:]]


def test_kernel_load_first_and_second_process(bench_report):
    with tempfile.TemporaryDirectory() as d:
        blocks = KERNELS.split("@npusim.kernel")
        for body, name in zip(blocks[1:], ("scale", "add1", "axpy")):   # one module each
            Path(d, f"k_{name}.py").write_text(blocks[0] + "@npusim.kernel" + body)
        cache = os.path.join(d, "cache")
        first, h1 = _child(d, cache)
        second, h2 = _child(d, cache)
    assert h1 == [0, 0, 0] and h2 == [1, 1, 1]
    bench_report("[kernel cache] ms per @npusim.kernel (scale / add1 / axpy; the first also "
                 "pays numba's one-time set-up):")
    bench_report(f"[kernel cache]   first process (empty cache): "
                 + " / ".join(f"{x:7.1f}" for x in first))
    bench_report(f"[kernel cache]   second process (cache hit):  "
                 + " / ".join(f"{x:7.1f}" for x in second))
    bench_report(f"[kernel cache]   kernels after the first: {sum(first[1:]) / 2:.1f} ms -> "
                 f"{sum(second[1:]) / 2:.1f} ms each (x{sum(first[1:]) / sum(second[1:]):.0f})")
