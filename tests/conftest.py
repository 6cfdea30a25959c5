"""Shared fixtures: every test starts from a fresh simulator (like a new process)."""
from __future__ import annotations

import pathlib
import sys

import pytest

import npusim
from npusim import acl

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))   # ``import helpers.<name>``


@pytest.fixture(autouse=True)
def fresh_simulator():
    """Forget all devices, handles, memory and thread bindings before each test."""
    npusim.reset()
    yield


@pytest.fixture
def dev0():
    """``aclInit`` + ``aclrtSetDevice(0)`` on the test's thread."""
    assert acl.init() == acl.ACL_SUCCESS
    assert acl.rt.set_device(0) == acl.ACL_SUCCESS
    return 0


@pytest.fixture
def stream(dev0):
    """A user stream of device 0's primary context."""
    s, ret = acl.rt.create_stream()
    assert ret == acl.ACL_SUCCESS
    return s


@pytest.fixture
def buf(dev0):
    """64 bytes of device memory, zeroed (16 u32 words: one per EasyOPf block)."""
    p, ret = acl.rt.malloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == acl.ACL_SUCCESS
    assert acl.rt.memset(p, 64, 0, 64) == acl.ACL_SUCCESS
    return p
