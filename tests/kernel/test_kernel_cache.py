"""``@npusim.kernel`` bodies are cached on disk across processes (``kernel/decorator.py``): a
second process loads the compiled wrapper from numba's cache instead of compiling it, the
loaded code runs the body, and an edited body or ``NPUSIM_KERNEL_CACHE=0`` does not reuse it."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

KERNEL = '''
import npusim
from npusim.device import memview as V

STEP = {step}

@npusim.kernel
def bump(mem, ctx, block_idx, block_num, x: "ptr", n: "u32"):
    v = V.u32(mem, ctx, x, n)
    for i in range(n):
        v[i] += STEP
'''

CHILD = """
import numpy as np
import npusim
import bumpmod
dev = npusim.Device()
s = dev.stream()
buf = dev.malloc(64).write(np.zeros(16, np.uint32))
npusim.load_binary(bumpmod.bump)["bump"].launch(s, 1, args=(buf, 4))
s.synchronize()
print(bumpmod.bump.cfunc.cache_hits, buf.read(np.uint32, 4).tolist())
"""


def _run(tmp_path, cache, step: int) -> tuple[int, list]:
    (tmp_path / "bumpmod.py").write_text(KERNEL.format(step=step))
    env = dict(os.environ, NPUSIM_KERNEL_CACHE=str(cache),
               PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]))
    out = subprocess.run([sys.executable, "-c", CHILD], cwd=tmp_path, env=env, check=True,
                         capture_output=True, text=True, timeout=600).stdout.split(maxsplit=1)
    return int(out[0]), eval(out[1])                   # noqa: S307 -- our child's own print


def test_a_second_process_loads_the_body_from_the_cache(tmp_path):
    cache = tmp_path / "cache"
    assert _run(tmp_path, cache, 1) == (0, [1, 1, 1, 1])          # compiled, then stored
    assert len(list(cache.glob("k_*.py"))) == 1
    assert _run(tmp_path, cache, 1) == (1, [1, 1, 1, 1])          # loaded, and it runs
    assert _run(tmp_path, cache, 3) == (0, [3, 3, 3, 3])          # another body: compiled
    assert len(list(cache.glob("k_*.py"))) == 2


def test_the_cache_can_be_turned_off(tmp_path):
    assert _run(tmp_path, 0, 2) == (0, [2, 2, 2, 2])
    assert not (tmp_path / "0").exists()
