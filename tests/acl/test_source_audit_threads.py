"""What the runtime keeps per thread and per stream subscription, read against its source
(issue 36 item 4, classes 5 and 6; docs/fidelity.md rows 295-296), with real threads.

- ``InnerThreadLocalContainer`` (``src/runtime/core/inc/common/inner_thread_local.hpp``) keeps
  the last task id (``GET_THREAD_TASKID_AND_STREAMID`` at each submit, read by
  ``ApiImpl::GetThreadLastTaskId``), the last error (``GetGlobalErr``, read by
  ``aclrtGetLastError``) and the thread's capture mode (``GetThreadCaptureMode``); the current
  context is per thread (``Runtime::CurrentContext``).
- ``StreamSubscribeFlag`` (``stream.hpp:155-157``): aclrtLaunchHostFunc subscribes the stream
  to the runtime's own callback thread (``Runtime::SubscribeCallback``, ``runtime.cc:5970-5977``,
  SUBSCRIBE_RUNTIME), aclrtSubscribeReport to the user's (``runtime.cc:4391-4399``,
  SUBSCRIBE_USER); the decorators refuse the other kind with RT_ERROR_SUBSCRIBE_STREAM
  (``api_error.cc:4700-4745, 7516-7525``; ``errcode_manage.cc:510``: 107011).
"""
from __future__ import annotations

import threading

from npusim import acl
from npusim import errors as E

from helpers.acl import launch, on_threads
from helpers.capture import OK, new_buf, new_stream

SUB = E.ACL_ERROR_RT_STREAM_SUBSCRIBE            # 107011


# ---- class 6: thread-local state ----
def test_last_task_id_is_the_calling_thread_s(dev0):
    """Four threads, each launching a different number of tasks on its own stream, interleaved
    through the runtime lock: each reads back its own last task id, not the process's."""
    x = new_buf()
    barrier = threading.Barrier(4)
    got = {}

    def work(k):
        assert acl.rt.set_device(0) == OK
        s = new_stream()
        barrier.wait()
        for _ in range(3 + 2 * k):
            assert launch(s, "EasyOPf", 1, (x,)) == OK
        barrier.wait()                       # every thread has launched all its tasks
        got[k] = acl.rt.get_thread_last_task_id()
    on_threads(work, 4)
    assert got == {k: (2 + 2 * k, OK) for k in range(4)}


def test_the_first_thread_keeps_its_tasks_from_before_a_second_thread(dev0):
    """The tasks the main thread issued while it was alone stay its last task after another
    thread launches more; the other thread's answer is its own."""
    x = new_buf()
    s = new_stream()
    for _ in range(3):
        assert launch(s, "EasyOPf", 1, (x,)) == OK
    assert acl.rt.get_thread_last_task_id() == (2, OK)
    out = {}

    def other(k):
        assert acl.rt.set_device(0) == OK
        out["before"] = acl.rt.get_thread_last_task_id()
        t = new_stream()
        for _ in range(6):
            assert launch(t, "EasyOPf", 1, (x,)) == OK
        out["after"] = acl.rt.get_thread_last_task_id()
    on_threads(other, 1)
    assert out == {"before": (0, OK), "after": (5, OK)}
    assert acl.rt.get_thread_last_task_id() == (2, OK)
    assert launch(s, "EasyOPf", 1, (x,)) == OK
    assert acl.rt.get_thread_last_task_id() == (3, OK)


def test_last_error_is_per_thread(dev0):
    """``aclrtGetLastError`` reads the thread's own ``GetGlobalErr``: another thread's failure
    is not seen, and reading clears only the caller's."""
    assert acl.rt.synchronize_stream(0xDEAD) == E.ACL_ERROR_RT_INVALID_HANDLE
    out = {}

    def other(k):
        out["peek"] = acl.rt.peek_at_last_error(acl.ACL_RT_THREAD_LEVEL)
        acl.rt.set_device(0)
        assert acl.rt.destroy_stream(0xDEAD) == E.ACL_ERROR_RT_INVALID_HANDLE
        out["get"] = acl.rt.get_last_error(acl.ACL_RT_THREAD_LEVEL)
    on_threads(other, 1)
    assert out == {"peek": OK, "get": E.ACL_ERROR_RT_INVALID_HANDLE}
    assert acl.rt.get_last_error(acl.ACL_RT_THREAD_LEVEL) == E.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.rt.get_last_error(acl.ACL_RT_THREAD_LEVEL) == OK


def test_capture_mode_exchange_is_per_thread(dev0):
    """``aclmdlRICaptureThreadExchangeMode`` swaps the calling thread's mode only
    (``Context::ThreadExchangeCaptureMode`` on ``InnerThreadLocalContainer``)."""
    relaxed = acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED
    assert acl.mdl.ri_capture_thread_exchange_mode(relaxed) == \
        (acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL, OK)
    out = {}

    def other(k):
        acl.rt.set_device(0)
        out["mode"] = acl.mdl.ri_capture_thread_exchange_mode(relaxed)
    on_threads(other, 1)
    assert out["mode"] == (acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL, OK)    # its own, unchanged
    assert acl.mdl.ri_capture_thread_exchange_mode(relaxed) == (relaxed, OK)


def test_current_context_is_per_thread(dev0):
    ctx, ret = acl.rt.create_context(0)
    assert ret == OK
    out = {}

    def other(k):
        out["none"] = acl.rt.get_context()
        c2, _ = acl.rt.create_context(0)
        out["own"] = (acl.rt.get_context(), c2)
    on_threads(other, 1)
    assert out["none"][1] == E.ACL_ERROR_RT_CONTEXT_NULL
    assert out["own"][0] == (out["own"][1], OK)
    assert acl.rt.get_context() == (ctx, OK)


# ---- class 5: subscriptions ----
def test_a_host_function_stream_refuses_report_subscriptions_and_callbacks(dev0):
    """After aclrtLaunchHostFunc the stream is SUBSCRIBE_RUNTIME: aclrtSubscribeReport,
    aclrtLaunchCallback and aclrtUnSubscribeReport answer 107011 — the callback launch was
    accepted on the runtime's own subscription before (0), the unsubscribe of another thread id
    answered 107012 (the thread check) — whatever the thread id; its host functions still run."""
    s = new_stream()
    ran = []
    assert acl.rt.launch_host_func(s, ran.append, 1) == OK
    me = threading.get_ident()
    assert acl.rt.subscribe_report(me, s) == SUB
    assert acl.rt.launch_callback(ran.append, 2, acl.ACL_CALLBACK_BLOCK, s) == SUB
    assert acl.rt.launch_callback(ran.append, 2, acl.ACL_CALLBACK_NO_BLOCK, s) == SUB
    assert acl.rt.unsubscribe_report(me, s) == SUB
    assert acl.rt.unsubscribe_report(0, s) == SUB
    assert acl.rt.launch_host_func(s, ran.append, 3) == OK
    assert acl.rt.synchronize_stream(s) == OK
    assert ran == [1, 3]


def test_the_subscription_checks_come_after_the_handle_and_before_the_context(dev0):
    """Order: ``RT_VALIDATE_AND_UNWRAP_OBJECT`` (api_c.cc:2175, 2187, 2209) 107017, then the
    decorator's 107011, then ``ApiImpl``'s context (107002)."""
    s = new_stream()
    assert acl.rt.launch_host_func(s, print, None) == OK
    assert acl.rt.subscribe_report(1, 0xDEAD) == E.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.rt.launch_callback(print, None, 0, 0xDEAD) == E.ACL_ERROR_RT_INVALID_HANDLE
    out = {}

    def fresh(k):                                   # no context on this thread
        out["sub"] = acl.rt.subscribe_report(1, s)
        out["cb"] = acl.rt.launch_callback(print, None, 0, s)
        out["unsub"] = acl.rt.unsubscribe_report(1, s)
    on_threads(fresh, 1)
    assert out == {"sub": SUB, "cb": SUB, "unsub": SUB}
    acl.rt.synchronize_stream(s)


def test_a_user_subscribed_stream_refuses_host_functions(dev0):
    """SUBSCRIBE_USER: aclrtLaunchHostFunc -> 107011 (api_error.cc:7520-7524); after the
    unsubscribe (SUBSCRIBE_NONE, runtime.cc:4387) it is accepted."""
    s = new_stream()
    me = threading.get_ident()
    assert acl.rt.subscribe_report(me, s) == OK
    assert acl.rt.launch_host_func(s, print, None) == SUB
    assert acl.rt.unsubscribe_report(me, s) == OK
    ran = []
    assert acl.rt.launch_host_func(s, ran.append, 7) == OK
    assert acl.rt.synchronize_stream(s) == OK
    assert ran == [7]
