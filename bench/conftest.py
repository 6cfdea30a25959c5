"""Shared fixtures of the benchmarks: a summary section printed after pytest-benchmark's tables.

Benchmarks that compare against a baseline measured in the same run (design.md §6) add their
human-readable result lines with ``bench_report``; the lines are printed as they come (visible
with ``-s``) and again, together, at the end of the session.
"""
from __future__ import annotations

import pytest

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


def pytest_terminal_summary(terminalreporter):
    if _LINES:
        terminalreporter.section("npusim benchmark summary")
        for line in _LINES:
            terminalreporter.write_line(line)
