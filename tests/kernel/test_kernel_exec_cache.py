"""A ``@npusim.kernel`` whose body lives in a namespace that is not an importable module (code
``exec``'d from a file, as the guide's test runs docs/guide.md) is compiled in memory, not
cached: numba rebuilds a cached function's environment by importing its module by name, so a
second process loading the cached wrapper failed with ``ModuleNotFoundError: '<dynamic>'``."""
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]

SOURCE = '''\
import numpy as np
import npusim as ns
from npusim.device import memview as V

@ns.kernel
def add_two(mem, ctx, b, nb, x: "ptr"):
    v = V.u32(mem, ctx, x, 1)
    v[0] += 2

dev = ns.Device()
s, x = dev.stream(), dev.malloc(64).fill(0)
s.launch(add_two, 1, (x,))
s.synchronize()
assert x.read(np.uint32, 1)[0] == 2
print("ok", add_two.cfunc.cache_hits if hasattr(add_two.cfunc, "cache_hits") else "")
'''

RUNNER = '''\
import sys
path = sys.argv[1]
code = open(path).read()
exec(compile(code, path, "exec"), {"__name__": "not_an_importable_module"})
'''


def test_exec_d_kernels_run_in_a_second_process_too(tmp_path):
    body = tmp_path / "kernel_src.py"            # a real file: inspect.getsource finds the body
    body.write_text(SOURCE)
    runner = tmp_path / "runner.py"
    runner.write_text(RUNNER)
    env = dict(os.environ, NPUSIM_KERNEL_CACHE=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    for _ in range(2):                           # the second run would load a cached wrapper
        r = subprocess.run([sys.executable, str(runner), str(body)], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-3000:]
        assert r.stdout.startswith("ok")
