"""The build-mode example (port of the runtime's model_ri/2_model_switch sample) runs and prints
what the original prints: the switch takes stream3 on the first execution and stream4 -> stream2
on the second."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

from helpers.examples import EXAMPLES, ROOT, load


def _line(v: float) -> str:
    return "[INFO]  The vector data is: " + "".join(f"{v:.4f}  " for _ in range(8))


def test_model_switch(capsys):
    mod = load("model_ri_model_switch")
    results = mod.main()
    a = np.float32(1.2) * np.float32(2)
    out1, out2, out3 = (float(np.float32(s) + a) for s in (1, 2, 3))
    assert results == [[[out1] * 8, [0.0] * 8, [out3] * 8],     # numDevice 1: stream3
                       [[out1] * 8, [out2] * 8, [out3] * 8]]    # 2: stream4 -> stream2
    lines = capsys.readouterr().out.splitlines()
    # README "Sample Output" (its "..." stands for the second execution's data1 and data3)
    assert lines == ["[INFO]  After executing, print data1.", _line(3.4),
                     "[INFO]  After executing, print data2.", _line(0.0),
                     "[INFO]  After executing, print data3.", _line(5.4),
                     "[INFO]  After second execution, print data1.", _line(3.4),
                     "[INFO]  After second execution, print data2.", _line(4.4),
                     "[INFO]  After second execution, print data3.", _line(5.4)]


def test_model_switch_runs_as_a_script(tmp_path):
    r = subprocess.run([sys.executable, str(EXAMPLES / "model_ri_model_switch.py")], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("[INFO]") == 12
