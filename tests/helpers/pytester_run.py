"""Running an inner pytest session with ``pytester`` for the plugin's suites
(``tests/tools/test_pytest_plugin*.py``): THIS checkout's plugin and package, and a session of
its own even under xdist."""
from __future__ import annotations

import os
import pathlib

import pytest

ROOT = str(pathlib.Path(__file__).resolve().parents[2])     # the checkout: npusim_pytest.py
ARGS = ("-p", "no:nbmake", "-p", "no:cacheprovider", "-W", "ignore::DeprecationWarning")


def run(pytester, *args):
    """``pytester.runpytest_subprocess`` with ``args`` after the common ones."""
    # the inner run is a pytest session of its own, even when this suite runs under xdist
    # (pytest-benchmark turns itself off in a process that looks like an xdist worker)
    with pytest.MonkeyPatch.context() as mp:
        for var in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
            mp.delenv(var, raising=False)
        # this checkout's plugin and package, not an installed copy's: the inner run's cwd is
        # pytester's directory, so without it ``npusim_pytest`` is found through the install
        mp.setenv("PYTHONPATH", os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
        return pytester.runpytest_subprocess(*ARGS, *args)
