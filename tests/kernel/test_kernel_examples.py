"""The Kernel-module examples (ports of the runtime's kernel samples) run and give the samples'
results."""
from __future__ import annotations

import importlib.util
import pathlib

import numpy as np

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def load(name: str):
    spec = importlib.util.spec_from_file_location(f"_example_{name}", EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_simple_stream_easy_op_gives_1_2_then_3002(capsys):
    assert load("kernel_simple_stream").main() == [1, 2, 3002]
    out = capsys.readouterr().out
    assert "After loop, the current result is: 3002." in out
    assert "After synchronize, stream status is: 0." in out


def test_quickstart_vector_add_gives_1_5_to_12(capsys):
    dst = load("kernel_vector_add").main()
    assert list(dst) == [1.5, 3.0, 4.5, 6.0, 7.5, 9.0, 10.5, 12.0]
    out = capsys.readouterr().out
    assert "  result[7] = 12.0 (expected: 12.0)" in out
    assert "Sample run successfully" in out


def _check_add_custom(x, y, z):
    golden = (x.astype(np.float32) + y.astype(np.float32)).astype(np.float16)
    assert z.shape == (8 * 2048,)
    assert np.array_equal(z, golden)


def test_add_custom_through_args_handle_and_launch_config(capsys):
    _check_add_custom(*load("kernel_launch_add_custom").main("simple"))
    assert "Run the launch_kernel sample successfully." in capsys.readouterr().out


def test_add_custom_placeholder_variant(capsys):
    _check_add_custom(*load("kernel_launch_add_custom").main("placeholder"))
    out = capsys.readouterr().out
    assert "Kernel launch sample runs in placeholder mode." in out
    assert "successfully" in out


def test_error_op_returns_507035_at_synchronize(capsys):
    codes, results, exceptions = load("kernel_failure_mode").main()
    assert codes == [507035, 507035]
    assert results == [2, 1]                       # CONTINUE runs the last EasyOP, STOP skips it
    assert [e.retcode for e in exceptions] == [507035, 507035]
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "[INFO]  Assigning task without failure mode.",
        "[ERROR]  Operation failed: aclrtSynchronizeStream(stream) returned error code 507035",
        "[INFO]  Without failure mode, the result is 2.",
        "[INFO]  Assigning task with failure mode.",
        "[ERROR]  Operation failed: aclrtSynchronizeStream(stream) returned error code 507035",
        "[INFO]  After set failure mode, the current result is: 1.",
    ]
