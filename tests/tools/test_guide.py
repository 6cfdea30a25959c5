"""docs/guide.md runs: its ``python`` blocks are executed in order, as one program, in a fresh
simulator (a block whose first line is ``# file: NAME.py`` is a test file: it is written out and
run by pytest in a process of its own). A block that raises, an ``assert`` that fails or a
warning npusim gives (an argument mismatch, a capture lint, a task group used without ``with``)
fails the test at the guide's own line."""
from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
import warnings

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guide.md"
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def blocks() -> list[tuple[int, str]]:
    """(first line number, code) of every ``python`` block of the guide, in order."""
    text = GUIDE.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in _BLOCK.finditer(text)]


def _is_file(code: str) -> str | None:
    first = code.split("\n", 1)[0]
    return first[len("# file: "):].strip() if first.startswith("# file: ") else None


def test_the_guide_has_the_examples_the_readme_promises():
    codes = "\n".join(code for _, code in blocks())
    for needle in ("@ns.kernel", "V.r_f32", "unit=", "ns.roofline", "s.launch(scale",
                   's.launch("scale"', "with ns.graph(", "with ns.task_group(", "tg.update(",
                   "graph_task_group_begin", "external_event()", "dev.now_ns", "elapsed_ms",
                   "to_chrome", "timeline(", "npusim_benchmark"):
        assert needle in codes, needle


def test_the_guide_runs_in_order(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    import npusim
    from npusim.errors import NpusimWarning
    monkeypatch.chdir(tmp_path)                  # the files the guide writes land here
    npusim.reset()
    ns: dict = {"__name__": "guide"}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", NpusimWarning)
            for line, code in blocks():
                if _is_file(code):
                    continue
                exec(compile("\n" * (line - 1) + code, str(GUIDE), "exec"), ns)
    finally:
        npusim.reset()
    assert (tmp_path / "step.json").stat().st_size > 0
    assert (tmp_path / "step.png").stat().st_size > 0


def test_the_guides_test_files_pass(tmp_path):
    files = [(line, _is_file(code), code) for line, code in blocks() if _is_file(code)]
    assert files, "the guide shows a pytest file"
    for _, name, code in files:
        (tmp_path / name).write_text(code, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "-p", "no:nbmake", "-p", "no:randomly", *[n for _, n, _ in files]],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert f"{len(files)} passed" in r.stdout or "passed" in r.stdout
