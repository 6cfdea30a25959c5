"""``npusim run``: a script runs under the simulator with tracing on and the trace is written."""
import json
import sys

from npusim import cli

SCRIPT = """
import numpy as np
import npusim as ns
dev = ns.Device()
s = dev.stream()
x = dev.malloc(64).fill(0)
s.launch("EasyOPf", 1, (x,))
s.synchronize()
assert x.read(np.uint32, 1)[0] == 1
print("profile", dev.profile.name)
"""


def test_run_writes_a_chrome_trace_with_host_and_device_rows(tmp_path, capsys):
    script = tmp_path / "prog.py"
    script.write_text(SCRIPT)
    out = tmp_path / "t.json"
    assert cli.main(["run", str(script), "--trace", str(out), "--profile", "950"]) == 0
    assert "profile Ascend950" in capsys.readouterr().out
    events = json.load(open(out))["traceEvents"]
    assert any(e["name"] == "EasyOPf" for e in events)
    assert any(e["pid"] == "host" for e in events)


def test_run_passes_its_exit_code_and_arguments(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text("import sys\nsys.exit(int(sys.argv[1]))\n")
    assert cli.main(["run", str(script), "3"]) == 3
    assert sys.argv[0] != str(script)


# ---- pyACL programs: `import acl` is npusim's facade under `npusim run` (docs/pyacl.md) ----
import pathlib  # noqa: E402
import subprocess  # noqa: E402

import pytest  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
PYACL_EXAMPLES = sorted((ROOT / "examples" / "pyacl").glob("*.py"))


def _npusim_run(path, cwd) -> subprocess.CompletedProcess:
    import os     # this checkout's npusim, whatever ``cwd`` is (not an installed one)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    return subprocess.run([sys.executable, "-m", "npusim", "run", str(path)], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=300)


def test_there_are_six_pyacl_examples():
    assert [p.name for p in PYACL_EXAMPLES] == [
        "callbacks_report_thread.py", "callbacks_without_context.py", "dvpp_async_copy.py",
        "events_two_streams.py", "memory_bytes_readback.py", "memory_round_trip.py"]


@pytest.mark.parametrize("path", PYACL_EXAMPLES, ids=lambda p: p.stem)
def test_a_pyacl_example_runs_unmodified_with_the_same_output_twice(path, tmp_path):
    assert path.read_text().lstrip().split('"""', 2)[2].lstrip().startswith("import acl")
    first, second = _npusim_run(path, tmp_path), _npusim_run(path, tmp_path)
    assert first.returncode == 0, first.stderr
    assert second.returncode == 0, second.stderr
    assert first.stdout and first.stdout == second.stdout


def test_import_acl_resolves_to_the_facade_only_for_the_script(tmp_path, capsys):
    script = tmp_path / "prog.py"
    script.write_text("import acl, acl.rt\nimport npusim\n"
                      "assert acl is npusim.acl and acl.rt is npusim.acl.rt\n"
                      "print(acl.init(), acl.rt.get_run_mode())\n")
    assert cli.main(["run", str(script)]) == 0
    assert "0 (1, 0)" in capsys.readouterr().out
    assert "acl" not in sys.modules


def test_the_script_imports_modules_next_to_it(tmp_path, capsys):
    (tmp_path / "helper_mod_for_run.py").write_text("VALUE = 42\n")
    script = tmp_path / "prog.py"
    script.write_text("from helper_mod_for_run import VALUE\nprint('value', VALUE)\n")
    assert cli.main(["run", str(script)]) == 0
    assert "value 42" in capsys.readouterr().out
    assert str(tmp_path) not in sys.path
    sys.modules.pop("helper_mod_for_run", None)
