"""Real-host-memory mode (issue 39, ``npusim.runtime.hostmem.use_real_memory``): a C program
writes through the pointer aclrtMallocHost returns, passes its own malloc'd memory to copies, and
reads what a copy left there. The mode is per process, so each test runs a script in a fresh
interpreter (ctypes plays the C program)."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or
                                not hasattr(os, "memfd_create"), reason="linux memfd")

PRELUDE = """
import ctypes, mmap, numpy as np
import npusim.acl as acl
from npusim.runtime import hostmem
from npusim.device.memory import REAL_HOST_BASE as HOST_BASE
from npusim.device.memory import (HOST_STRIDE, DEV_BASE, DEV_STRIDE, PAGEABLE_BASE, USER_TOP,
                                  AddressTaken)
from npusim.device import memory
from npusim.runtime.runtime import RT
libc = ctypes.CDLL(None, use_errno=True)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = (ctypes.c_size_t,)
libc.free.argtypes = (ctypes.c_void_p,)
def cbytes(p, n):
    return bytes((ctypes.c_uint8 * n).from_address(p))
def cwrite(p, data):
    ctypes.memmove(p, data, len(data))
"""


def run(body: str) -> str:
    code = PRELUDE + textwrap.dedent(body)
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_round_trip_through_c_pointers():
    out = run("""
        hostmem.use_real_memory()
        assert hostmem.real_memory()
        assert acl.init() == 0 and acl.rt.set_device(0) == 0
        n = 1 << 12
        hp, ret = acl.rt.malloc_host(n)
        assert ret == 0 and HOST_BASE <= hp < HOST_BASE + HOST_STRIDE
        pattern = bytes(range(256)) * (n // 256)
        cwrite(hp, pattern)                          # C writes through the pinned pointer
        dp, ret = acl.rt.malloc(n, 0)
        assert ret == 0
        assert acl.rt.memcpy(dp, n, hp, n, 1) == 0               # H2D from what C wrote
        assert acl.rt.memset(dp + 100, 10, 0xAB, 10) == 0        # the device changes some
        user = libc.malloc(n)                                    # C's own (pageable) memory
        assert hostmem.locate(user).kind == hostmem.PAGEABLE
        assert acl.rt.memcpy(user, n, dp, n, 2) == 0             # D2H into it
        want = pattern[:100] + b"\\xab" * 10 + pattern[110:]
        assert cbytes(user, n) == want
        # async, through the engine: pinned memory C wrote -> device -> pinned memory C reads
        s, ret = acl.rt.create_stream()
        hp2, _ = acl.rt.malloc_host(n)
        cwrite(hp, b"\\x5a" * n)
        assert acl.rt.memcpy_async(dp, n, hp, n, 1, s) == 0
        assert acl.rt.memcpy_async(hp2, n, dp, n, 2, s) == 0
        assert acl.rt.synchronize_stream(s) == 0
        assert cbytes(hp2, n) == b"\\x5a" * n
        # pageable C memory as an async copy's source: the copy is synchronous, as with arrays
        cwrite(user, b"\\x11" * n)
        assert acl.rt.memcpy_async(dp, n, user, n, 1, s) == 0
        assert acl.rt.memcpy(hp2, n, dp, n, 2) == 0
        assert cbytes(hp2, n) == b"\\x11" * n
        # a numpy array's pointer is its real address, and C's view of it is the same bytes
        arr = np.zeros(n, np.uint8)
        assert acl.util.numpy_to_ptr(arr) == arr.ctypes.data
        assert acl.rt.memcpy(arr.ctypes.data, n, dp, n, 2) == 0 and (arr == 0x11).all()
        # a host memset of a large pinned block (pages punched out of the memfd) reads zeros
        big = 4 << 20
        hb, _ = acl.rt.malloc_host(big)
        cwrite(hb, b"\\x01" * big)
        assert acl.rt.memset(hb, big, 0, big) == 0
        assert cbytes(hb, big) == bytes(big)
        # ptr_to_numpy of pinned memory sees what C wrote
        cwrite(hp, b"\\x07" * 8)
        assert (acl.util.ptr_to_numpy(hp, (8,), np.uint8) == 7).all()
        libc.free(user)
        for p in (hp, hp2, hb):
            assert acl.rt.free_host(p) == 0
        assert acl.rt.free(dp) == 0 and acl.rt.destroy_stream(s) == 0
        assert acl.rt.reset_device(0) == 0
        # the device opens again: its pinned memory is real again, at the same addresses
        assert acl.rt.set_device(0) == 0
        hp3, _ = acl.rt.malloc_host(n)
        cwrite(hp3, b"\\x33" * n)
        assert cbytes(hp3, n) == b"\\x33" * n
        assert acl.rt.free_host(hp3) == 0 and acl.rt.reset_device(0) == 0
        assert acl.finalize() == 0
        # a fresh simulator (the devices close, their memory goes): still real, same ranges
        import npusim
        npusim.reset()
        assert hostmem.real_memory() and acl.rt.set_device(0) == 0
        hp4, _ = acl.rt.malloc_host(n)
        dp4, _ = acl.rt.malloc(n, 0)
        cwrite(hp4, b"\x44" * n)
        user = libc.malloc(n)
        assert acl.rt.memcpy(dp4, n, hp4, n, 1) == 0 and acl.rt.memcpy(user, n, dp4, n, 2) == 0
        assert cbytes(user, n) == b"\x44" * n
        libc.free(user)
        print("ok")
    """)
    assert out.strip() == "ok"


def test_simulated_ranges_are_held_and_never_real_memory():
    out = run("""
        hostmem.use_real_memory()
        assert acl.init() == 0 and acl.rt.set_device(1) == 0
        maps = open("/proc/self/maps").read()
        def held(a):
            for row in maps.splitlines():
                lo, hi = (int(x, 16) for x in row.split()[0].split("-"))
                if lo <= a < hi:
                    return row.split()[1]
            return None
        # device 1's device range and every device's pinned-host range are mapped (held)
        assert held(DEV_BASE + DEV_STRIDE) == "---p"
        assert held(HOST_BASE + 7 * HOST_STRIDE) == "---p"
        assert held(HOST_BASE + HOST_STRIDE).startswith("rw-s")      # the alias of device 1's
        # a real mapping asked for there lands elsewhere
        m = mmap.mmap(-1, 1 << 20)
        a = ctypes.addressof(ctypes.c_char.from_buffer(m))
        assert not any(HOST_BASE + d * HOST_STRIDE <= a < HOST_BASE + d * HOST_STRIDE + (1 << 30)
                       for d in range(8))
        del a
        # an address inside a simulated range that is not allocated is unknown, not real memory
        for a in (HOST_BASE + 5 * HOST_STRIDE + 64, DEV_BASE + DEV_STRIDE + 4096, 8, USER_TOP + 8):
            assert hostmem.locate(a).kind == hostmem.UNKNOWN, hex(a)
        dp, _ = acl.rt.malloc(64, 0)
        assert acl.rt.memcpy(dp, 64, HOST_BASE + 5 * HOST_STRIDE + 64, 64, 1) != 0
        # a real pointer's reach stops at the next simulated range
        w = hostmem.locate(HOST_BASE - 4096)
        assert w.kind == hostmem.PAGEABLE and w.start + w.size == HOST_BASE
        assert HOST_BASE + 8 * HOST_STRIDE <= USER_TOP
        # a claim that grows one already held maps only the part not held yet
        memory.claim(HOST_BASE + 2 * HOST_STRIDE, 2 << 30, "device 2's larger pinned memory")
        maps = open("/proc/self/maps").read()
        assert held(HOST_BASE + 2 * HOST_STRIDE + (3 << 29)) == "---p"
        assert memory.claimed(HOST_BASE + 2 * HOST_STRIDE + (3 << 29))
        try:
            memory.claim(USER_TOP - 4096, 8192, "past the top")
        except AddressTaken as e:
            assert "user address space" in str(e)
        else:
            raise AssertionError("not refused")
        print("ok")
    """)
    assert out.strip() == "ok"


def test_refusals():
    out = run("""
        # a range the process uses already is refused, naming the mapping
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                              ctypes.c_int, ctypes.c_long)
        at = HOST_BASE + 3 * HOST_STRIDE + (1 << 20)
        r = libc.mmap(at, 4096, 3, 0x22 | 0x100000, -1, 0)
        assert r == at, hex(r or 0)
        try:
            hostmem.use_real_memory()
        except AddressTaken as e:
            msg = str(e)
        else:
            raise AssertionError("not refused")
        assert "device 3's pinned host memory" in msg and f"{at:x}" in msg, msg
        assert not hostmem.real_memory()
        # ... and the process stays in the ordinary mode: fake addresses, unknown C pointers
        assert acl.init() == 0 and acl.rt.set_device(0) == 0
        p = libc.malloc(64)
        assert hostmem.locate(p).kind == hostmem.UNKNOWN
        # once a device is open, the mode is refused
        try:
            hostmem.use_real_memory()
        except RuntimeError as e:
            assert "before any device" in str(e)
        else:
            raise AssertionError("not refused")
        assert not hostmem.real_memory()
        print("ok")
    """)
    assert out.strip() == "ok"


def test_off_mode_unchanged():
    out = run("""
        assert not hostmem.real_memory()
        assert acl.init() == 0 and acl.rt.set_device(0) == 0
        mem = RT.devices[0].state.mem
        assert mem._host_fd is None
        arr = np.zeros(64, np.uint8)
        ptr = acl.util.numpy_to_ptr(arr)
        assert ptr >= PAGEABLE_BASE and ptr != arr.ctypes.data
        hp, _ = acl.rt.malloc_host(64)
        assert memory.HOST_BASE <= hp < memory.HOST_BASE + HOST_STRIDE
        p = libc.malloc(64)
        assert hostmem.locate(p).kind == hostmem.UNKNOWN
        dp, _ = acl.rt.malloc(64, 0)
        assert acl.rt.memcpy(dp, 64, p, 64, 1) == 107000
        assert acl.rt.memcpy(dp, 64, ptr, 64, 1) == 0
        maps = open("/proc/self/maps").read()
        assert "npusim-host" not in maps
        print("ok")
    """)
    assert out.strip() == "ok"
