"""Helpers for the eager-API tests: kernel launch by name with a facade-style code, device memory
reads, and running a call on a fresh thread (a thread with no context) or work on several real
threads at once."""
from __future__ import annotations

import threading

import numpy as np

import npusim
from npusim import acl
from npusim.kernel.builtin import LONG_OP_NS
from npusim.runtime import handles as _handles
from npusim.runtime.runtime import RT

LONG_NS = LONG_OP_NS            # LongOPf's duration


def never_issued(kind: str) -> int:
    """A handle in ``kind``'s range that no object ever gets: the registry hands out multiples of
    its stride from a counter that never restarts in a process, so a made-up "large" handle such
    as ``0x5A80_0000_FF00`` becomes a live one once the process has made 1,020 objects of the kind
    (a long xdist worker does): a half-stride offset never does."""
    return _handles._KIND_BASE[kind] + 0xFF00 + _handles._STRIDE // 2


def launch(stream, kernel: str, blocks: int = 1, args=(), duration_ns: int = 0) -> int:
    """Launch a built-in kernel on a stream handle (None: the default stream); the ACL code.

    Goes through the Pythonic by-name ``Device.launch`` (which calls
    ``acl.rt.launch_kernel_with_host_args`` with the kernel table's function handle) without
    creating a ``Device``, which would call ``aclrtSetDevice`` and change reference counts."""
    try:
        npusim.Device.launch(None, kernel, npusim.Stream(None, stream), blocks, args, duration_ns)
    except npusim.AclError as e:
        return e.code
    return acl.ACL_SUCCESS


def read(ptr: int, n: int, dtype=np.uint32) -> np.ndarray:
    """``n`` items at device address ``ptr`` via a synchronous D2H ``aclrtMemcpy``."""
    out = np.zeros(n, dtype)
    ret = acl.rt.memcpy(acl.util.numpy_to_ptr(out), out.nbytes, ptr, out.nbytes,
                        acl.ACL_MEMCPY_DEVICE_TO_HOST)
    assert ret == acl.ACL_SUCCESS
    return out


def write(ptr: int, data: np.ndarray) -> None:
    data = np.ascontiguousarray(data)
    ret = acl.rt.memcpy(ptr, data.nbytes, acl.util.numpy_to_ptr(data), data.nbytes,
                        acl.ACL_MEMCPY_HOST_TO_DEVICE)
    assert ret == acl.ACL_SUCCESS


def args_with(*ptrs) -> int:
    """A device args area holding the given pointers (8-byte slots), for launches and
    set-params."""
    a = np.array(ptrs, np.uint64)
    p, ret = acl.rt.malloc(a.nbytes, 0)
    assert ret == acl.ACL_SUCCESS
    write(p, a)
    return p


def easy_opf() -> int:
    """EasyOPf's function handle from the sample binary (each block adds 1 to its u32 of the
    buffer its args point at)."""
    lib, ret = acl.rt.binary_load_from_file(npusim.samples.binary_path(), None)
    assert ret == acl.ACL_SUCCESS
    f, ret = acl.rt.binary_get_function(lib, "EasyOPf")
    assert ret == acl.ACL_SUCCESS
    return f


def counter() -> tuple[int, int]:
    """A zeroed 64-byte device buffer and an 8-byte args block pointing at it: (buffer, args),
    what an EasyOPf launch counts into."""
    x, ret = acl.rt.malloc(64, 0)
    assert ret == acl.ACL_SUCCESS
    assert acl.rt.memset(x, 64, 0, 64) == acl.ACL_SUCCESS
    args, ret = acl.rt.malloc(8, 0)
    assert ret == acl.ACL_SUCCESS
    write(args, np.array([x], np.uint64))
    return x, args


def worker_stream() -> tuple[int, int, int]:
    """A worker thread's start: device 0 set on this thread, a new stream and a counter on it:
    (stream, buffer, args)."""
    assert acl.rt.set_device(0) == acl.ACL_SUCCESS
    s, ret = acl.rt.create_stream()
    assert ret == acl.ACL_SUCCESS
    return (s, *counter())


def in_fresh_thread(fn, *args):
    """Run ``fn(*args)`` on a new thread (no context, no device set) and return its result."""
    out = {}

    def body():
        try:
            out["r"] = fn(*args)
        except BaseException as e:       # re-raised on the test's thread
            out["e"] = e
    t = threading.Thread(target=body)
    t.start()
    t.join(10)
    assert not t.is_alive(), "call hung on the fresh thread"
    if "e" in out:
        raise out["e"]
    return out["r"]


def host_ns() -> int:
    """The host's simulated clock (ns)."""
    return RT.host_ns


def stream_done(s) -> bool:
    status, ret = acl.rt.stream_query(s)
    assert ret == acl.ACL_SUCCESS
    return status == acl.ACL_STREAM_STATUS_COMPLETE


def on_threads(work, n: int = 4, timeout: float = 60) -> None:
    """``work(k)`` on ``n`` real threads at once, k = 0 .. n-1; whatever one raises (a failed
    assert included) is raised again on the test's thread, as is a thread still running after
    ``timeout`` seconds."""
    errors = []

    def run(k):
        try:
            work(k)
        except BaseException as e:      # reported on the test's thread
            errors.append(e)

    ts = [threading.Thread(target=run, args=(k,)) for k in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout)
    assert not any(t.is_alive() for t in ts), "a worker thread hung"
    assert not errors, errors
