"""``npusim run``: public pyACL idioms run unmodified and print what the hardware prints; the
script ends as under ``python`` (``sys.exit("message")``, an exception after the trace is
written); ``--explain`` prints the reason of every failed ``acl.*`` call (docs/pyacl.md)."""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

from npusim import cli

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "pyacl"

# what each program prints on a board: the data it moved, nothing simulator-specific
EXPECTED = {
    "memory_bytes_readback.py":
        "data on the device: [ 3  6  9 12 15 18 21 24 27 30 33 36 39 42 45 48]\n"
        "equal to the input: True\n",
    "dvpp_async_copy.py":
        "dvpp buffer aligned to 128 bytes: True\n"
        "frame back from the dvpp buffer:\n"
        "[[0.   0.25 0.5 ]\n"
        " [0.75 1.   1.25]\n"
        " [1.5  1.75 2.  ]]\n",
    "callbacks_without_context.py":
        "callback 0 ran with 2\n"
        "callback 1 ran with 3\n"
        "callback 2 ran with 4\n"
        "results after the synchronize: [4, 9, 16]\n",
}


def _run(*args, cwd) -> subprocess.CompletedProcess:
    """``npusim run`` in a fresh process, of this checkout's npusim whatever ``cwd`` is."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    return subprocess.run([sys.executable, "-m", "npusim", "run", *map(str, args)], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_public_pyacl_idiom_prints_what_the_hardware_prints(name, tmp_path):
    r = _run(EXAMPLES / name, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == EXPECTED[name]
    assert "is not simulated" not in r.stderr


def test_the_examples_use_the_real_idioms():
    memory = (EXAMPLES / "memory_bytes_readback.py").read_text()
    assert "acl.util.bytes_to_ptr(out_bytes)" in memory and ".tobytes()" in memory
    assert "np.frombuffer(out_bytes" in memory
    dvpp = (EXAMPLES / "dvpp_async_copy.py").read_text()
    assert "acl.media.dvpp_malloc(size)" in dvpp and "acl.media.dvpp_free(dev_ptr)" in dvpp
    assert "while True" in dvpp
    callbacks = (EXAMPLES / "callbacks_without_context.py").read_text()
    code = callbacks.split('"""', 2)[2]
    assert "set_context" not in code and "acl.util.start_thread" in code
    assert "ACL_CALLBACK_BLOCK, stream" in callbacks


# ---- how the script ends ----
def test_sys_exit_with_a_message_prints_it_and_exits_1(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text("import sys\nprint('before')\nsys.exit('no device found')\n")
    r = _run(script, cwd=tmp_path)
    plain = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert (r.returncode, r.stdout, r.stderr) == (plain.returncode, plain.stdout, plain.stderr) \
        == (1, "before\n", "no device found\n")


def test_sys_exit_in_process_returns_the_codes_python_gives(tmp_path, capsys):
    script = tmp_path / "prog.py"
    for body, code in (("sys.exit()", 0), ("sys.exit(None)", 0), ("sys.exit(4)", 4),
                       ("sys.exit('bye')", 1), ("sys.exit(['x'])", 1)):
        script.write_text(f"import sys\n{body}\n")
        assert cli.main(["run", str(script)]) == code, body
    assert capsys.readouterr().err.splitlines() == ["bye", "['x']"]


def test_an_exception_writes_the_trace_then_exits_1_with_the_script_s_traceback(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text("import acl\n"
                      "acl.init()\n"
                      "acl.rt.set_device(0)\n"
                      "stream, ret = acl.rt.create_stream()\n"
                      "acl.rt.synchronize_stream(stream)\n"
                      "def fail():\n"
                      "    raise ValueError('bad frame')\n"
                      "fail()\n")
    out = tmp_path / "t.json"
    r = _run(script, "--trace", out, cwd=tmp_path)
    assert r.returncode == 1
    assert r.stderr.rstrip().endswith("ValueError: bad frame")
    assert f'File "{script}", line 8, in <module>' in r.stderr
    assert f'File "{script}", line 7, in fail' in r.stderr
    assert "runpy" not in r.stderr.split("prog.py", 1)[1]       # the script's frames follow
    names = {e["name"] for e in json.load(open(out))["traceEvents"]}
    assert any("create_stream" in n for n in names)


def test_an_exception_propagates_from_the_in_process_entry(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text("raise KeyError('k')\n")
    with pytest.raises(KeyError):
        cli.main(["run", str(script)])
    assert "acl" not in sys.modules


# ---- --explain ----
FAILING = """import acl
acl.init()
stream, ret = acl.rt.create_stream()
print("create_stream", ret)
acl.rt.set_device(0)
print("memcpy", acl.rt.memcpy(0, 4, 0, 4, 1))
print("own read", acl.get_recent_err_msg() is not None)
print("ok call", acl.rt.synchronize_device())
"""


def test_explain_prints_each_failed_call_s_reason_and_line_and_leaves_it_to_the_program(
        tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(FAILING)
    r = _run(script, "--explain", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "create_stream 107002\nmemcpy 100000\nown read True\nok call 0\n"
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("npusim: acl.")]
    assert len(lines) == 2
    assert lines[0].startswith("npusim: acl.rt.create_stream returned 107002 "
                               "ACL_ERROR_RT_CONTEXT_NULL") and lines[0].endswith("(prog.py:3)")
    assert "no current context" in lines[0]
    assert lines[1].startswith("npusim: acl.rt.memcpy returned 100000") and \
        lines[1].endswith("(prog.py:6)")


def test_without_explain_nothing_is_printed_and_the_option_may_follow_the_script(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(FAILING)
    quiet = _run(script, cwd=tmp_path)
    assert quiet.returncode == 0 and "returned" not in quiet.stderr
    after = _run(script, "--explain", "--", "script-arg", cwd=tmp_path)
    assert "acl.rt.memcpy returned 100000" in after.stderr


def test_explain_names_refused_functions_every_time(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text("import acl\n"
                      "for _ in range(2):\n"
                      "    acl.media.vdec_create_channel(1)\n"
                      "print(acl.get_recent_err_msg())\n")
    r = _run(script, "--explain", cwd=tmp_path)
    assert r.stdout.startswith("acl.media.vdec_create_channel returned 207000")
    assert r.stderr.count("npusim: acl.media.vdec_create_channel returned 207000 "
                          "ACL_ERROR_RT_FEATURE_NOT_SUPPORT: not simulated — media / DVPP "
                          "(prog.py:3)") == 2


def test_explain_in_process_stops_watching_after_the_script(tmp_path, capsys):
    from npusim.runtime.runtime import ERROR_WATCHERS
    script = tmp_path / "prog.py"
    script.write_text(FAILING)
    assert cli.main(["run", str(script), "--explain"]) == 0
    assert "npusim: acl.rt.memcpy returned 100000" in capsys.readouterr().err
    assert ERROR_WATCHERS == []


def test_explain_names_a_repeated_init_which_sets_no_recent_error(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text("import acl\nacl.init()\nprint(acl.init(), acl.get_recent_err_msg())\n")
    r = _run(script, "--explain", cwd=tmp_path)
    assert r.stdout == "100002 None\n"
    assert "npusim: acl.init returned 100002 ACL_ERROR_REPEAT_INITIALIZE" in r.stderr
    assert r.stderr.rstrip().endswith("(prog.py:3)")


def test_explain_names_the_line_of_the_program_s_own_module_that_failed(tmp_path):
    (tmp_path / "helper_for_explain.py").write_text(
        "import acl\n\ndef make_stream():\n    return acl.rt.create_stream()\n")
    script = tmp_path / "prog.py"
    script.write_text("import helper_for_explain\nhelper_for_explain.make_stream()\n")
    r = _run(script, "--explain", cwd=tmp_path)
    assert "acl.rt.create_stream returned 107002" in r.stderr
    assert "(helper_for_explain.py:4)" in r.stderr
