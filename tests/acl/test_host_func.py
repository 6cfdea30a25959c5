"""aclrtLaunchHostFunc: the host function runs when the stream reaches it — after the tasks
before it, before the tasks after it — and its checks; the port of the
``callback/1_callback_hostfunc`` sample."""
from __future__ import annotations

import threading

from npusim import acl
from npusim import errors as E

from helpers.acl import in_fresh_thread, launch, read
from helpers.capture import begin, end, new_buf, new_stream
from helpers.examples import load

OK = acl.ACL_SUCCESS


def test_the_host_function_runs_between_the_tasks_around_it(dev0):
    s = new_stream()
    buf = new_buf()
    seen = []
    assert launch(s, "LongOPf", 1, [buf]) == OK
    assert acl.rt.launch_host_func(s, lambda data: seen.append((data, int(read(buf, 1)[0]))),
                                   "tag") == OK
    assert launch(s, "EasyOPf", 1, [buf]) == OK
    assert seen == []                                      # not before the stream reaches it
    assert acl.rt.synchronize_stream(s) == OK
    assert seen == [("tag", 1)]                            # after LongOPf, before EasyOPf
    assert read(buf, 1).tolist() == [2]


def test_host_functions_run_in_order_on_the_default_stream(dev0):
    order = []
    for i in range(3):
        assert acl.rt.launch_host_func(None, order.append, i) == OK
    assert acl.rt.synchronize_device() == OK
    assert order == [0, 1, 2]


def test_codes(dev0):
    s = new_stream()
    assert acl.rt.launch_host_func(s, None, None) == E.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.launch_host_func(s, 5, None) == E.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.subscribe_report(threading.get_ident(), s) == OK
    assert acl.rt.launch_host_func(s, print, None) == E.ACL_ERROR_RT_STREAM_SUBSCRIBE
    assert acl.rt.unsubscribe_report(threading.get_ident(), s) == OK
    c = new_stream()
    begin(c)
    assert acl.rt.launch_host_func(c, print, None) == OK          # captured (fidelity row 105)
    end(c)
    assert in_fresh_thread(acl.rt.launch_host_func, None, print, None) == \
        E.ACL_ERROR_RT_CONTEXT_NULL


def test_sample_1_callback_hostfunc(capsys):
    mod = load("callback_hostfunc")
    assert mod.main() == 1
    assert capsys.readouterr().out.splitlines() == [
        "[INFO]  Hostfunc callback!!!",
        "[INFO]  After assigning the task through the created stream, the current result is: 1.",
        "[INFO]  Resource cleanup completed."]
