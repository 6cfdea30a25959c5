"""Shared fixtures. Every test starts from a fresh simulator (like a new process): the npusim
pytest plugin's ``npusim_autouse`` (pyproject.toml); ``acl`` / ``npusim`` are its fixtures."""
from __future__ import annotations

import os
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))   # ``import helpers.<name>``
# every device the tests make checks its scheduler's live list before each engine run
# (npusim/device/state.py CHECK_SCHED): an SQ the host made runnable without telling it fails
os.environ.setdefault("NPUSIM_CHECK_SCHED", "1")


@pytest.fixture(autouse=True)
def _memo_check():
    """With ``NPUSIM_MEMO_CHECK=1`` every launch-memo hit also takes the general path
    (acl/_launchmemo.py): a test whose hit the general path disagrees with fails here."""
    from npusim.acl import _launchmemo
    yield
    if _launchmemo.MISMATCHES:
        found = list(_launchmemo.MISMATCHES)
        _launchmemo.MISMATCHES.clear()
        pytest.fail(f"launch memo entries the general path disagrees with: {found[:3]}")


@pytest.fixture
def dev0(acl):
    """``aclInit`` + ``aclrtSetDevice(0)`` on the test's thread (the plugin's ``acl``)."""
    return 0


@pytest.fixture
def stream(acl):
    """A user stream of device 0's primary context."""
    s, ret = acl.rt.create_stream()
    assert ret == acl.ACL_SUCCESS
    return s


@pytest.fixture
def buf(acl):
    """64 bytes of device memory, zeroed (16 u32 words: one per EasyOPf block)."""
    p, ret = acl.rt.malloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == acl.ACL_SUCCESS
    assert acl.rt.memset(p, 64, 0, 64) == acl.ACL_SUCCESS
    return p


@pytest.fixture
def sink():
    """The kernel printf sink, quiet and empty for the test (its lines in ``sink.lines``)."""
    import npusim
    s = npusim.kernel.printf_sink()
    s.echo = False
    s.clear()
    yield s
    s.echo = True
    s.clear()
