"""The task-update examples (ports of the runtime's model_ri/1_model_update sample and of the dev
guide's task-update program, ``docs/zh/dev_guide/04-03_task_update.md``) run and print what the
originals print."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from npusim import errors as E

from helpers.examples import EXAMPLES, ROOT, load  # noqa: F401


def f32(v) -> np.float32:
    return np.float32(v)


def test_model_update_sample(capsys):
    results = load("model_ri_model_update").main()
    self_ = np.arange(1, 9, dtype=np.float32)
    tmp = self_ + f32(2) * f32(1.1)
    want = [tmp + f32(2) * f32(1.1), tmp + f32(2) * f32(2.2)]
    assert len(results) == 2
    for got, w in zip(results, want):
        assert np.array_equal(np.array(got, np.float32), w)
    # README "Sample Output" (PrintArray leaves two spaces after every value)
    assert capsys.readouterr().out.splitlines() == [
        "[INFO]  Execute model, loop count: 1.",
        "[INFO]  The vector data is: 5.4000  6.4000  7.4000  8.4000  9.4000  10.4000  11.4000  "
        "12.4000  ",
        "[INFO]  Execute model, loop count: 2.",
        "[INFO]  Update alpha value of aclnnAdd",
        "[INFO]  The vector data is: 7.6000  8.6000  9.6000  10.6000  11.6000  12.6000  13.6000  "
        "14.6000  ",
    ]


def test_dev_guide_task_update_program(capsys):
    mod = load("task_update_dev_guide")
    results = mod.main()
    tmp = f32(0) + f32(1) * f32(1.1)
    assert results == [[float(tmp + f32(1) * f32(1.1))] * 8, [float(tmp + f32(1) * f32(5.5))] * 8]
    assert capsys.readouterr().out.splitlines() == [
        "[INFO]  execute model, loop: 0",
        "[INFO]  " + " ".join(["2.200000"] * 8), "",
        "[INFO]  execute model, loop: 1",
        "[INFO]  update alpha value of aclnnAdd",
        "[INFO]  " + " ".join(["6.600000"] * 8), "",
    ]
    # the one call that fails: loop 0 ends an update with no launch (fewer tasks than the group)
    assert [(n, c) for n, c in mod.CODES if c] == \
        [("aclmdlRICaptureTaskUpdateEnd", E.ACL_ERROR_RT_INTERNAL_ERROR)]


@pytest.mark.parametrize("name,infos", [("model_ri_model_update", 5),
                                        ("task_update_dev_guide", 6)])
def test_examples_run_as_scripts(tmp_path, name, infos):
    r = subprocess.run([sys.executable, str(EXAMPLES / f"{name}.py")], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("[INFO]") == infos
