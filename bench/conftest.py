"""Shared fixtures of the benchmarks: a summary section printed after pytest-benchmark's tables.

Benchmarks that compare against a baseline measured in the same run (design.md §6) add their
human-readable result lines with ``bench_report``; the lines are printed as they come (visible
with ``-s``) and again, together, at the end of the session.
"""
from __future__ import annotations

import numpy as np
import pytest

import npusim
from npusim import acl

_LINES: list[str] = []


@pytest.fixture(scope="session")
def bench_report():
    def add(line: str = "") -> None:
        _LINES.append(line)
        print(line)
    return add


@pytest.fixture(scope="session")
def bench_results() -> dict:
    """Numbers one benchmark leaves for a later one (e.g. the engine rate for the ratio)."""
    return {}


def _ok(*values):
    *vals, ret = values
    assert ret == 0, ret
    return vals[0] if len(vals) == 1 else tuple(vals)


@pytest.fixture(scope="module")
def easy_launch():
    """(EasyOPf function handle, device args block holding a 64-byte buffer's address, a
    stream) on a fresh simulator, device 0 set: what the launch benches launch."""
    npusim.reset()
    acl.init()
    acl.rt.set_device(0)
    lib = _ok(*acl.rt.binary_load_from_file(npusim.samples.binary_path()))
    easy = _ok(*acl.rt.binary_get_function(lib, "EasyOPf"))
    x = _ok(*acl.rt.malloc(64, 0))
    args = _ok(*acl.rt.malloc(8, 0))
    slot = np.array([x], np.uint64)
    acl.rt.memcpy(args, 8, acl.util.numpy_to_ptr(slot), 8, acl.ACL_MEMCPY_HOST_TO_DEVICE)
    stream = _ok(*acl.rt.create_stream())
    yield easy, args, stream
    npusim.reset()


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    """The benches own their simulator: module-scoped fixtures (``easy_launch``, the peer
    program) build it once for several benchmarks, so the plugin's per-test fresh simulator
    (``npusim_autouse = true`` in pyproject.toml, meant for tests/) is taken off bench items."""
    for item in items:
        names = getattr(item, "fixturenames", None)     # pytest Function items only
        if names is not None and "_npusim_fresh" in names and "/bench/" in str(item.fspath):
            names.remove("_npusim_fresh")


def pytest_terminal_summary(terminalreporter):
    if _LINES:
        terminalreporter.section("npusim benchmark summary")
        for line in _LINES:
            terminalreporter.write_line(line)
