"""The port of the runtime's ``model_ri/3_cond_model`` sample prints what the real runtime prints
as shipped (ASSIGN_DEFAULT with default 0 overrides the sample's own writes of the cond word),
and each branch's own result when the word is set by a kernel with flag 0."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from helpers.examples import EXAMPLES, ROOT, load

A = np.array([1, 2, 3, 4, 5, 6, 7, 8], np.float32)
B = np.array([0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0], np.float32)


def add(alpha: float) -> list[float]:
    return [float(v) for v in A + np.float32(alpha) * B]


def vec(values) -> str:
    return "[INFO]  The vector data is: " + "".join(f"{v:.4f}  " for v in values)


def expected_lines(r_if, r_while, r_switch) -> list[str]:
    out = ["[INFO]  ========== IF condition ==========",
           "[INFO]  IF true branch result:", vec(r_if[0]),
           "[INFO]  IF false branch result:", vec(r_if[1]),
           "[INFO]  IF condition PASSED",
           "[INFO]  ========== WHILE condition ==========",
           "[INFO]  WHILE single iteration result:", vec(r_while),
           "[INFO]  WHILE condition PASSED",
           "[INFO]  ========== SWITCH condition =========="]
    for i, r in enumerate(r_switch):
        out += [f"[INFO]  SWITCH case {i} result:", vec(r)]
    return out + ["[INFO]  SWITCH condition PASSED",
                  "[INFO]  ========== All tests PASSED =========="]


def test_as_shipped_matches_the_readme(capsys):
    """README "Sample Output": 1.25 ... 10 for both IF runs (the false branch, alpha 0.5), and
    for WHILE (its body, alpha 1.0, never runs: the output buffer still holds the IF test's
    result at the re-used address), then SWITCH case 0 (alpha 1.0: 1.5 ... 12) for every run."""
    res = load("model_ri_cond_model").main("shipped")
    false_branch, case0 = add(0.5), add(1.0)
    assert res == {"if": [false_branch, false_branch], "while": [false_branch],
                   "switch": [case0, case0, case0]}
    lines = capsys.readouterr().out.splitlines()
    assert lines == expected_lines([false_branch] * 2, false_branch, [case0] * 3)
    # the README's exact lines
    readme = {"[INFO]  The vector data is: 1.2500  2.5000  3.7500  5.0000  6.2500  7.5000  "
              "8.7500  10.0000",
              "[INFO]  The vector data is: 1.5000  3.0000  4.5000  6.0000  7.5000  9.0000  "
              "10.5000  12.0000"}
    assert {ln.rstrip() for ln in lines if "vector" in ln} == readme


def test_condition_set_by_a_kernel_shows_every_branch(capsys):
    res = load("model_ri_cond_model").main("kernel")
    assert res == {"if": [add(2.0), add(0.5)], "while": [add(1.0)],
                   "switch": [add(1.0), add(2.0), add(0.5)]}
    assert capsys.readouterr().out.splitlines() == expected_lines(
        [add(2.0), add(0.5)], add(1.0), [add(1.0), add(2.0), add(0.5)])


def test_unknown_variant_is_refused():
    with pytest.raises(ValueError):
        load("model_ri_cond_model").main("other")


@pytest.mark.parametrize("variant", ["shipped", "kernel"])
def test_runs_as_a_script(tmp_path, variant):
    r = subprocess.run([sys.executable, str(EXAMPLES / "model_ri_cond_model.py"), variant],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("PASSED") == 4
    assert r.stdout.count("The vector data is") == 6
