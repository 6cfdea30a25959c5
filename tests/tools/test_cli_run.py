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
