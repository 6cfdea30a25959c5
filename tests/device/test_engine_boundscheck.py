"""The engine tests again, with numba's bounds checks on.

numba does not bounds-check array indexing by default, so an engine bug that indexes past a table
reads or writes garbage instead of failing. This runs ``test_engine_reference.py`` (the targeted
engine behaviours, and fewer random programs against the oracle) in a subprocess with
``NUMBA_BOUNDSCHECK=1``, so every index the engine and the kernels it calls compute on those
programs is checked (an out-of-range one raises ``IndexError``). The subprocess compiles into its
own ``NUMBA_CACHE_DIR``: code compiled with bounds checks never reaches the normal on-disk cache.
"""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
EXAMPLES = 60           # random programs (the normal run has 300); the cold compile dominates


def test_engine_tests_pass_with_numba_bounds_checks(tmp_path):
    env = dict(os.environ, NUMBA_BOUNDSCHECK="1", NUMBA_CACHE_DIR=str(tmp_path / "numba"),
               NPUSIM_ENGINE_EXAMPLES=str(EXAMPLES))
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:nbmake",
         "-o", "addopts=", "-rs", str(HERE / "test_engine_reference.py")],
        cwd=HERE.parents[1], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    assert " passed" in r.stdout and "skipped" not in r.stdout, r.stdout[-2000:]
