"""The capture examples (ports of the runtime's model_ri/0_simple_model sample and of the
dev guide's cross-stream capture program) run and print what the originals print."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from helpers.examples import EXAMPLES, ROOT, load  # noqa: F401


def test_simple_model(tmp_path, capsys):
    mod = load("model_ri_simple_model")
    path = tmp_path / "modelRI.json"
    results = mod.main(str(path))
    want = (np.arange(1, 9, dtype=np.float32) + np.float32(1.1) * np.float32(2)) * np.float32(2)
    assert len(results) == 4
    for r in results:
        assert np.allclose(r, want, rtol=0, atol=1e-5)
    out = capsys.readouterr().out.splitlines()
    # README "Sample Output"
    readme = ("The vector data is: 6.4000  8.4000  10.4000  12.4000  14.4000  16.4000  18.4000  "
              "20.4000")
    assert out == [ln for i in range(1, 5) for ln in
                   (f"[INFO]  execute model, loop count: {i}.", f"[INFO]  {readme}  ")]
    # aclmdlRIDebugJsonPrint wrote the model: H2D copy, add, mul on the origin stream
    recs = json.loads(path.read_text())
    assert [r["args"]["Task Type"] for r in recs] == ["MEMCPY_ASYNC", "KERNEL_AIVEC",
                                                      "KERNEL_AIVEC"]
    assert [r["name"] for r in recs][1:] == ["VectorAddKernel", "MulKernel"]


def test_cross_stream_capture(capsys):
    mod = load("cross_stream_capture")
    results = mod.main()
    x = np.float32(0)
    lines = []
    for r in results:
        x = np.float32(x + np.float32(1.1) * np.float32(1))
        assert r == [float(x)] * 8
        lines += ["[INFO]  " + " ".join(f"{float(x):f}" for _ in range(8)), ""]
    assert len(results) == 8
    assert capsys.readouterr().out.splitlines() == lines
    assert lines[0] == "[INFO]  " + " ".join(["1.100000"] * 8)
    assert lines[-2] == "[INFO]  " + " ".join(["8.800000"] * 8)


@pytest.mark.parametrize("name", ["model_ri_simple_model", "cross_stream_capture"])
def test_examples_run_as_scripts(tmp_path, name):
    r = subprocess.run([sys.executable, str(EXAMPLES / f"{name}.py")], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("[INFO]") == 8
