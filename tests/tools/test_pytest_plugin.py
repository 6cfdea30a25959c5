"""The npusim pytest plugin (``npusim_pytest.py``, docs/testing.md) run by ``pytester`` against
small example suites: leak report with the creation line, a test dying mid-capture does not break
the next, strict mode fails a planted race and a planted leak, a profile marker takes effect,
simulated-time benchmarks are identical run to run and ``--npusim-compare`` gates them."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap

import pytest

from helpers.pytester_run import run

pytest_plugins = ["pytester"]


def test_plugin_import_is_cheap():
    """Loading the plugin (as pytest does through the entry point) imports no numba."""
    code = "import sys, npusim_pytest; print('numba' in sys.modules, 'npusim' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_leak_reported_with_creation_line(pytester):
    pytester.makepyfile(test_leaky="""
        def test_leaks_a_stream(acl):
            s, ret = acl.rt.create_stream()
            assert ret == 0

        def test_clean(acl):
            s, ret = acl.rt.create_stream()
            assert acl.rt.destroy_stream(s) == 0
    """)
    r = run(pytester)
    r.assert_outcomes(passed=2, warnings=1)
    r.stdout.fnmatch_lines(["*NpusimLeakWarning*streams +1*",
                            "*stream 0x* created by acl.rt.create_stream at test_leaky.py:2 in "
                            "test_leaks_a_stream()*"])


def test_strict_leak_is_an_error(pytester):
    pytester.makepyfile(test_leaky="""
        def test_leaks_memory(acl):
            p, ret = acl.rt.malloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)
            assert ret == 0
    """)
    r = run(pytester, "--npusim-strict")
    r.assert_outcomes(passed=1, errors=1)
    r.stdout.fnmatch_lines(["*device allocations +1*",
                            "*created by acl.rt.malloc at test_leaky.py:2*"])


def test_dying_mid_capture_does_not_break_the_next(pytester):
    pytester.makepyfile(test_capture="""
        def test_dies_in_capture(acl):
            s, _ = acl.rt.create_stream()
            assert acl.mdl.ri_capture_begin(s, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) == 0
            raise RuntimeError("boom mid-capture")

        def test_next_starts_clean(npusim, acl):
            assert npusim.census().devices[0]["capture streams"] == 0
            s, ret = acl.rt.create_stream()
            assert ret == 0
            assert acl.rt.malloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)[1] == 0
            assert acl.mdl.ri_capture_begin(s, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) == 0
            model, ret = acl.mdl.ri_capture_end(s)
            assert ret == 0
    """)
    r = run(pytester, "-o", "npusim_leaks=off")
    r.assert_outcomes(passed=1, failed=1)
    r.stdout.fnmatch_lines(["*boom mid-capture*"])


def test_open_capture_is_a_leak(pytester):
    pytester.makepyfile(test_capture="""
        def test_forgets_capture_end(acl):
            s, _ = acl.rt.create_stream()
            assert acl.mdl.ri_capture_begin(s, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) == 0
    """)
    r = run(pytester)
    r.assert_outcomes(passed=1, warnings=1)
    r.stdout.fnmatch_lines(["*open capture on stream 0x*(acl.mdl.ri_capture_begin) at "
                            "test_capture.py:3*"])


def test_strict_fails_a_capture_lint_record(pytester):
    pytester.makepyfile(test_lint="""
        import pytest

        def sync_a_capturing_stream(acl):
            s, _ = acl.rt.create_stream()
            assert acl.mdl.ri_capture_begin(s, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) == 0
            assert acl.rt.synchronize_stream(s) == 107027      # refused: the test goes on
            model, _ = acl.mdl.ri_capture_end(s)
            acl.mdl.ri_destroy(model)
            acl.rt.destroy_stream(s)

        @pytest.mark.npusim(strict=True)
        def test_strict(acl):
            sync_a_capturing_stream(acl)

        def test_not_strict(acl):
            sync_a_capturing_stream(acl)
    """)
    r = run(pytester)
    r.assert_outcomes(passed=2, errors=1)
    r.stdout.fnmatch_lines(["*npusim: capture lint:*107027*"])


RACE = """
    import numpy as np

    def test_planted_race(npu):
        a, b = npu.stream(), npu.stream()
        buf = npu.malloc(64)
        a.launch("EasyOPf", 1, (int(buf),))     # two streams, no event between them
        b.launch("EasyOPf", 1, (int(buf),))
        npu.synchronize()
        a.destroy(); b.destroy(); buf.free()
"""


def test_strict_fails_a_planted_race(pytester):
    pytester.makepyfile(test_race=RACE)
    run(pytester).assert_outcomes(passed=1)
    r = run(pytester, "--npusim-strict")
    r.assert_outcomes(passed=1, errors=1)
    r.stdout.fnmatch_lines(["*npusim: races on device 0*"])


def test_profile_marker_takes_effect(pytester):
    pytester.makepyfile(test_profile="""
        import pytest
        from npusim.runtime.runtime import RT

        @pytest.mark.npusim(profile="Ascend910B")
        def test_marked(npusim):
            assert RT.profile.name == "Ascend910B"

        def test_option(npusim):
            assert RT.profile.name == "Ascend310P"
    """)
    run(pytester, "--npusim-profile", "Ascend310P").assert_outcomes(passed=2)


BENCH = textwrap.dedent("""
    import npusim

    def make_graph(npu, s):
        # a decode step's graph: its attention task group waits on an ExternalEvent
        q = npu.malloc(64)
        ev = npu.external_event()
        with npusim.graph(stream=s) as g:
            ev.wait(s)
            ev.reset(s)
            npusim.graph_task_group_begin(s)
            s.launch("EasyOPf", 1, (q,))
            handle = npusim.graph_task_group_end(s)
        return g, handle, ev, q

    def decode_step(npu, s, u, g, handle, ev, q, kernels):
        npusim.graph_task_update_begin(u, handle)     # update the group, then replay
        u.launch("EasyOPf", 1, (q,))
        npusim.graph_task_update_end(u)
        ev.record(u)
        g.replay(s)
        for i in range(kernels):                      # the eager tail of the step
            s.launch("EasyOPf", 1, (q,))

    def test_decode(npu, npusim_benchmark):
        s, u = npu.stream(), npu.stream()
        g, handle, ev, q = make_graph(npu, s)
        r = npusim_benchmark(decode_step, npu, s, u, g, handle, ev, q, KERNELS)
        assert r.device_ns > 0 and r.sqes > KERNELS and r.api_calls > KERNELS
        print("DEVICE_NS", r.device_ns)
        s.synchronize()
        g.destroy(); s.destroy(); u.destroy(); q.free(); ev.destroy()
""")


def test_benchmark_is_deterministic_and_gated(pytester):
    pytester.makepyfile(test_bench="KERNELS = 3\n" + BENCH)
    figures = set()
    for _ in range(3):
        r = run(pytester, "-s")
        r.assert_outcomes(passed=1)
        figures |= {m.group(1) for m in map(re.compile(r"DEVICE_NS (\d+)").search, r.outlines)
                    if m}
    assert len(figures) == 1, figures           # the same simulated time every run
    r = run(pytester, "--npusim-save", "base")
    r.stdout.fnmatch_lines(["*npusim simulated-time benchmarks*",
                            f"*test_bench.py::test_decode*{figures.pop()}*"])
    saved = json.loads((pytester.path / ".npusim-benchmarks" / "base.json").read_text())
    assert saved["benchmarks"][0]["sqes"] > 3          # update, record, replay, 3 kernels
    run(pytester, "--npusim-compare", "base", "--npusim-fail-over", "5%").assert_outcomes(passed=1)
    pytester.makepyfile(test_bench="KERNELS = 4\n" + BENCH)        # one more kernel per step
    r = run(pytester, "--npusim-compare", "base", "--npusim-fail-over", "5%")
    r.assert_outcomes(passed=1, errors=1)
    r.stdout.fnmatch_lines(["*simulated time regressed over 5%*",
                            "*test_bench.py::test_decode: device_ns * -> *",
                            "*before_ns*change*"])


def test_benchmark_extra_info_in_pytest_benchmark_json(pytester):
    pytest.importorskip("pytest_benchmark")
    pytester.makepyfile(test_bench="""
        def test_both(npu, npusim_benchmark, benchmark):
            s = npu.stream()
            buf = npu.malloc(64)
            step = lambda: s.launch("EasyOPf", 1, (int(buf),))
            npusim_benchmark(step)
            benchmark(step)
            s.destroy(); buf.free()
    """)
    run(pytester, "--benchmark-json", "out.json").assert_outcomes(passed=1)
    info = json.loads((pytester.path / "out.json").read_text())["benchmarks"][0]["extra_info"]
    assert info["npusim"]["sqes"] == 1 and info["npusim"]["device_ns"] > 0


def test_xdist_workers_merge_results(pytester):
    pytest.importorskip("xdist")
    pytester.makepyfile(test_bench="KERNELS = 3\n" + BENCH + """
def test_decode_again(npu, npusim_benchmark):
    test_decode(npu, npusim_benchmark)
""")
    r = run(pytester, "-n", "2", "--npusim-save", "x")
    r.assert_outcomes(passed=2)
    saved = json.loads((pytester.path / ".npusim-benchmarks" / "x.json").read_text())
    ns = {b["device_ns"] for b in saved["benchmarks"]}
    assert len(saved["benchmarks"]) == 2 and len(ns) == 1


def test_disabled_with_no_npusim(pytester):
    pytester.makepyfile(test_x="""
        def test_no_fixture(request):
            assert "npusim" not in request.fixturenames
    """)
    run(pytester, "-p", "no:npusim").assert_outcomes(passed=1)
    r = run(pytester, "-p", "no:npusim", "--npusim-strict")
    assert r.ret != 0


def test_decode_step_benchmark_same_device_time_every_run(npusim, npu, npusim_benchmark):
    """The simulated time of a decode step — the attention task group updated on an update
    stream, an ExternalEvent ordering the update before the replay, the graph replayed, an eager
    kernel on its output — is the same on every measured run; only the wall time moves."""
    s, u = npu.stream(), npu.stream()
    q, k = npu.malloc(64), npu.malloc(64)
    ev, done = npu.external_event(), npu.event()
    with npusim.graph(stream=s) as g:
        ev.wait(s)
        ev.reset(s)
        npusim.graph_task_group_begin(s)
        s.launch("EasyOPf", 1, (q,))
        handle = npusim.graph_task_group_end(s)
        for _ in range(3):
            s.launch("EasyOPf", 1, (q,))

    def decode_step():
        u.wait(done)                                  # the previous replay has finished
        npusim.graph_task_update_begin(u, handle)
        u.launch("EasyOPf", 1, (k,))
        npusim.graph_task_update_end(u)
        ev.record(u)                                  # the replay waits for the update
        g.replay(s)
        s.record(done)
        s.launch("ShortOPf", 1, (q,))

    runs = [npusim_benchmark(decode_step, _label=f"run{i}") for i in range(10)]
    assert len({r.device_ns for r in runs}) == 1 and runs[0].device_ns > 0
    assert {(r.api_calls, r.sqes) for r in runs} == {(runs[0].api_calls, runs[0].sqes)}
    assert sum(runs[0].per_stream_ns.values()) >= runs[0].device_ns


def test_doctest_modules_run_with_the_plugin(pytester):
    """``pytest --doctest-modules`` collects a module whose examples use npusim, plugin active."""
    pytester.makepyfile(example_mod='''
        def add_one(npu_values):
            """
            >>> import npusim
            >>> dev = npusim.Device()
            >>> s, x = dev.stream(), dev.malloc(64).fill(0)
            >>> s.launch("EasyOPf", 1, (x,)); s.synchronize()
            >>> int(x.read()[0])
            1
            """
    ''')
    run(pytester, "--doctest-modules", "example_mod.py").assert_outcomes(passed=1)
