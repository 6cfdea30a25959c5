"""Helpers and fixtures for the ACL Graph (capture) tests: events, capture begin/end with asserted
codes, model objects behind handles, kernel launches on stream handles, calls on other threads,
and a chip-profile fixture that restores the default profile afterwards.

Fixtures ``dev0`` / ``stream`` / ``buf`` come from ``tests/conftest.py``.
"""
from __future__ import annotations

import threading

import numpy as np
import pytest

import npusim
from npusim import acl
from npusim.runtime import model as M
from npusim.runtime.runtime import RT

from helpers.acl import launch, read  # noqa: F401  (re-exported for the capture tests)

OK = acl.ACL_SUCCESS
GLOBAL = acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL
THREAD_LOCAL = acl.ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL
RELAXED = acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED
NONE, ACTIVE, INVALIDATED = (acl.ACL_MODEL_RI_CAPTURE_STATUS_NONE,
                             acl.ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE,
                             acl.ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED)


# ---- objects ----
def new_stream(flag: int = 0) -> int:
    s, ret = acl.rt.create_stream_with_config(0, flag) if flag else acl.rt.create_stream()
    assert ret == OK
    return s


def new_event(flag: int = acl.ACL_EVENT_SYNC) -> int:
    """An event that works in capture: aclrtCreateEventExWithFlag(ACL_EVENT_SYNC) [doc 04-02]."""
    e, ret = acl.rt.create_event_ex_with_flag(flag)
    assert ret == OK
    return e


def new_buf(nbytes: int = 64) -> int:
    p, ret = acl.rt.malloc(nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == OK
    assert acl.rt.memset(p, nbytes, 0, nbytes) == OK
    return p


def model(h):
    """The CaptureModel behind a model handle."""
    m, code = RT.handles.get("model", h)
    assert code == OK and m is not None
    return m


def stream_obj(h):
    s, code = RT.handles.get("stream", h)
    assert code == OK
    return s


def current_ctx() -> int:
    h, ret = acl.rt.get_current_context()
    assert ret == OK
    return h


# ---- capture ----
def begin(s: int, mode: int = GLOBAL) -> int:
    """Begin capture on ``s``; returns the model handle (via aclmdlRICaptureGetInfo)."""
    assert acl.mdl.ri_capture_begin(s, mode) == OK
    status, mh, ret = acl.mdl.ri_capture_get_info(s)
    assert (status, ret) == (ACTIVE, OK)
    return mh


def end(s: int) -> int:
    mh, ret = acl.mdl.ri_capture_end(s)
    assert ret == OK, ret
    return mh


def status_of(s: int) -> int:
    status, _, ret = acl.mdl.ri_capture_get_info(s)
    assert ret == OK
    return status


def record(e: int, s: int) -> None:
    assert acl.rt.record_event(e, s) == OK


def wait(s: int, e: int) -> None:
    assert acl.rt.stream_wait_event(s, e) == OK


def join(origin: int, side: int) -> None:
    """Fork: ``side`` waits on an event recorded on ``origin`` (enters the capture)."""
    e = new_event()
    record(e, origin)
    wait(side, e)


def join_back(side: int, origin: int) -> None:
    """Join: ``origin`` waits on an event recorded on ``side`` (its last task)."""
    join(side, origin)


def run(mh: int, s: int, times: int = 1) -> None:
    for _ in range(times):
        assert acl.mdl.ri_execute_async(mh, s) == OK
    assert acl.rt.synchronize_stream(s) == OK


def lk(s: int, kernel: str, ptr: int, blocks: int = 1, duration_ns: int = 0) -> None:
    """Launch a one-pointer kernel (EasyOPf x+=1, ShortOPf x*=2, LongOPf) and assert 0."""
    assert launch(s, kernel, blocks, (ptr,), duration_ns) == OK


def u32(ptr: int, n: int = 1) -> np.ndarray:
    return read(ptr, n, np.uint32)


# ---- threads ----
def on_thread(fn, *args, ctx: int | None = None):
    """Run ``fn(*args)`` on a new thread; with ``ctx`` that thread first makes it current.
    Returns fn's result (exceptions re-raised here)."""
    out = {}

    def body():
        try:
            if ctx is not None:
                assert acl.rt.set_current_context(ctx) == OK
            out["r"] = fn(*args)
        except BaseException as e:        # noqa: BLE001 - re-raised on the test's thread
            out["e"] = e
    t = threading.Thread(target=body)
    t.start()
    t.join(30)
    assert not t.is_alive(), "call hung on the other thread"
    if "e" in out:
        raise out["e"]
    return out["r"]


class Worker:
    """A long-lived thread that runs calls sent to it one at a time (so a capture can be begun on
    it, and other calls made on it later, with its thread-local capture state kept)."""

    def __init__(self, ctx: int):
        import queue
        self._q: "queue.Queue" = queue.Queue()
        self._r: "queue.Queue" = queue.Queue()
        self._t = threading.Thread(target=self._loop, args=(ctx,), daemon=True)
        self._t.start()

    def _loop(self, ctx):
        acl.rt.set_current_context(ctx)
        while True:
            item = self._q.get()
            if item is None:
                return
            fn, args = item
            try:
                self._r.put(("r", fn(*args)))
            except BaseException as e:    # noqa: BLE001
                self._r.put(("e", e))

    def __call__(self, fn, *args):
        self._q.put((fn, args))
        kind, v = self._r.get(timeout=30)
        if kind == "e":
            raise v
        return v

    def close(self):
        self._q.put(None)
        self._t.join(10)


# ---- fixtures ----
@pytest.fixture
def chip():
    """``chip("Ascend310P")``: re-init the simulator on another profile, set device 0; the
    configured profile is restored after the test (``npusim.reset`` does not restore it)."""
    saved = RT.profile_name

    def use(name: str) -> int:
        npusim.reset()
        npusim.configure(profile=name)
        assert acl.init() == OK
        assert acl.rt.set_device(0) == OK
        return 0
    yield use
    npusim.reset()
    RT.profile_name = saved


@pytest.fixture
def no_acl_graph(dev0, monkeypatch):
    """A chip without RT_FEATURE_MODEL_ACL_GRAPH (the capture family returns 207000)."""
    import dataclasses
    monkeypatch.setattr(RT, "profile", dataclasses.replace(RT.profile, acl_graph=False))


def default_stream_handle() -> int:
    """A handle for the current context's default stream, as aclrtCtxGetCurrentDefaultStream
    would give a C program (the facade only names it as NULL)."""
    ctx = RT.current_context
    s = ctx.default_stream
    return s.handle or RT.handles.add("stream", s)


def make_sub_model() -> int:
    """A sub-model as aclmdlRIAddCondTask creates it (NONE, flagged sub-model, not in the
    context's list) — for the ToModelRIBegin / sub-model checks without the cond layer."""
    m = M.CaptureModel(RT.current_context, sub=True)
    return RT.handles.add("model", m)
