"""The pytest plugin's cost on a suite that does not use it (issue "A pytest plugin": with the
plugin active and no npusim fixture requested, the run time is within noise of
``-p no:npusim``). A generated suite of trivial tests runs in a new pytest process with and
without the plugin, alternately; prints the medians and their ratio. Asserts nothing on time.
"""
from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

N_TESTS, ROUNDS = 2000, 5


def _run(folder: Path, *args: str) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                    "-p", "no:nbmake", *args, str(folder)], cwd=folder, check=True,
                   capture_output=True, text=True, timeout=600)
    return time.perf_counter() - t0


def test_plugin_overhead_without_fixtures(bench_report):
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        (folder / "test_many.py").write_text(
            "import pytest\n\n@pytest.mark.parametrize('i', range(%d))\n"
            "def test_trivial(i):\n    assert i >= 0\n" % N_TESTS)
        (folder / "pytest.ini").write_text("[pytest]\n")       # not the project's ini
        on, off = [], []
        for _ in range(ROUNDS):
            on.append(_run(folder))
            off.append(_run(folder, "-p", "no:npusim"))
    a, b = statistics.median(on), statistics.median(off)
    bench_report(f"[plugin overhead] {N_TESTS} trivial tests, median of {ROUNDS} alternating "
                 f"runs: plugin on {a:.2f} s, -p no:npusim {b:.2f} s, ratio {a / b:.3f}")
