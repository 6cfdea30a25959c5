"""Chapter 13's exception-info callback, readers and last error, aclrtGetThreadLastTaskId, host
functions captured into a graph, and the ports of callback/0_simple_callback and
2_callback_exception (docs/fidelity.md rows 105-107)."""
from __future__ import annotations

import re
import threading

import numpy as np

import npusim
from npusim import acl
from npusim import errors as E

from helpers.acl import in_fresh_thread, launch, read
from helpers.capture import begin, end, new_buf, new_stream, run
from helpers.examples import load

OK = acl.ACL_SUCCESS
THREAD = acl.ACL_RT_THREAD_LEVEL


# ---- the exception-info callback and its readers ----
def test_exception_callback_sees_the_failed_kernel_task(dev0):
    seen = []
    assert acl.rt.set_exception_info_callback(seen.append) == OK
    s = new_stream()
    buf = new_buf()
    assert launch(s, "EasyOPf", 1, [buf]) == OK
    assert launch(s, "ErrorOPf") == OK
    assert acl.rt.synchronize_stream(s) == acl.ACL_ERROR_RT_VECTOR_CORE_EXCEPTION
    [info] = seen
    assert acl.rt.get_task_id_from_exception_info(info) == 1
    stream_id, ret = acl.rt.stream_get_id(s)
    assert acl.rt.get_stream_id_from_exception_info(info) == stream_id
    assert acl.rt.get_device_id_from_exception_info(info) == 0
    assert acl.rt.get_error_code_from_exception_info(info) == \
        acl.ACL_ERROR_RT_VECTOR_CORE_EXCEPTION
    assert acl.rt.get_thread_id_from_exception_info(info) == threading.get_ident() & 0xFFFFFFFF
    for reader in (acl.rt.get_task_id_from_exception_info, acl.rt.get_stream_id_from_exception_info,
                   acl.rt.get_thread_id_from_exception_info,
                   acl.rt.get_device_id_from_exception_info,
                   acl.rt.get_error_code_from_exception_info):
        assert reader(None) == 0xFFFFFFFF
        assert reader(object()) == 0xFFFFFFFF
    assert acl.rt.set_exception_info_callback(None) == OK      # unregistered
    assert launch(s, "ErrorOPf") == OK
    acl.rt.synchronize_stream(s)
    assert len(seen) == 1
    assert acl.rt.set_exception_info_callback(5) == E.ACL_ERROR_RT_PARAM_INVALID


def test_a_raising_exception_callback_does_not_break_the_synchronize(dev0, capsys):
    def boom(info):
        raise RuntimeError("x")
    assert acl.rt.set_exception_info_callback(boom) == OK
    assert launch(None, "ErrorOPf") == OK
    assert acl.rt.synchronize_device() == acl.ACL_ERROR_RT_VECTOR_CORE_EXCEPTION
    assert "exception info callback raised" in capsys.readouterr().err


# ---- the thread's last error ----
def test_last_error_peek_keeps_get_clears_acl_codes_do_not_count(dev0):
    assert acl.rt.peek_at_last_error(THREAD) == OK
    assert acl.rt.free(0x1234) == E.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.peek_at_last_error(THREAD) == E.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.peek_at_last_error(THREAD) == E.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.get_last_error(THREAD) == E.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.get_last_error(THREAD) == OK
    assert acl.rt.malloc(0)[1] == E.ACL_ERROR_INVALID_PARAM      # the acl layer's own code
    assert acl.rt.get_last_error(THREAD) == OK
    assert acl.rt.get_last_error(acl.ACL_RT_CONTEXT_LEVEL) == E.ACL_ERROR_INVALID_PARAM
    assert acl.rt.peek_at_last_error("thread") == E.ACL_ERROR_INVALID_PARAM
    assert acl.rt.free(0x1234) != OK
    assert in_fresh_thread(acl.rt.get_last_error, THREAD) == OK   # per thread
    assert acl.rt.get_last_error(THREAD) == E.ACL_ERROR_RT_PARAM_INVALID


def test_error_verbose(dev0):
    assert acl.rt.get_error_verbose(0) == (
        {"errorType": acl.ACL_RT_NO_ERROR, "tryRepair": 0, "hasDetail": 0}, OK)
    assert acl.rt.get_error_verbose(99) == (None, E.ACL_ERROR_RT_INVALID_DEVICEID)


def test_error_verbose_on_a_chip_without_the_feature_is_207000():
    npusim.reset()
    npusim.configure(profile="Ascend310P")
    try:
        acl.init()
        assert acl.rt.get_error_verbose(0) == (None, E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT)
    finally:
        npusim.reset()
        npusim.configure(profile="Ascend910B")


# ---- aclrtGetThreadLastTaskId ----
def test_thread_last_task_id_is_the_last_task_submitted(dev0):
    assert acl.rt.get_thread_last_task_id() == (0, OK)
    a, b = new_stream(), new_stream()
    buf = new_buf()
    for _ in range(3):
        assert launch(a, "EasyOPf", 1, [buf]) == OK
    assert acl.rt.get_thread_last_task_id() == (2, OK)
    assert launch(b, "EasyOPf", 1, [buf]) == OK
    assert acl.rt.get_thread_last_task_id() == (0, OK)            # b's first task
    assert acl.rt.memset_async(buf, 64, 0, 4, a) == OK
    assert acl.rt.get_thread_last_task_id() == (3, OK)
    assert acl.rt.synchronize_device() == OK
    assert acl.rt.get_thread_last_task_id() == (3, OK)


# ---- host functions captured into a graph ----
def test_a_captured_host_function_runs_at_every_replay_between_its_tasks(dev0):
    s, x = new_stream(), new_stream()
    buf = new_buf()
    seen = []
    mh = begin(s)
    assert launch(s, "EasyOPf", 1, [buf]) == OK
    assert acl.rt.launch_host_func(s, lambda tag: seen.append((tag, int(read(buf, 1)[0]))),
                                   "h") == OK
    assert launch(s, "EasyOPf", 1, [buf]) == OK
    end(s)
    assert seen == []
    run(mh, x)                                                 # the first run builds the graph
    base = npusim.census()
    for i in range(1, 4):
        run(mh, x)
        assert seen[-1] == ("h", 2 * i + 1)                    # after the first kernel only
    assert len(seen) == 4 and read(buf, 1).tolist() == [8]
    assert npusim.census().diff(base) == {}                    # the releaser is gone again
    assert acl.mdl.ri_destroy(mh) == OK


def test_a_captured_blocking_callback_runs_on_the_report_thread_at_every_replay(dev0):
    ctx, _ = acl.rt.get_current_context()
    s, x = new_stream(), new_stream()
    buf = new_buf()
    seen, stop = [], threading.Event()

    def serve():
        acl.rt.set_current_context(ctx)
        while not stop.is_set():
            acl.rt.process_report(50)
    t = threading.Thread(target=serve)
    t.start()
    try:
        assert acl.rt.subscribe_report(t.ident, s) == OK
        mh = begin(s)
        assert launch(s, "EasyOPf", 1, [buf]) == OK
        assert acl.rt.launch_callback(
            lambda d: seen.append((d, threading.get_ident(), int(read(buf, 1)[0]))), "c",
            acl.ACL_CALLBACK_BLOCK, s) == OK
        assert acl.rt.launch_callback(print, None, acl.ACL_CALLBACK_NO_BLOCK, s) == \
            E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT                 # nothing reports a passed NOP
        assert launch(s, "EasyOPf", 1, [buf]) == OK
        end(s)
        for i in range(2):
            run(mh, x)
            assert seen[-1] == ("c", t.ident, 2 * i + 1)
    finally:
        stop.set()
        t.join()
    assert acl.rt.unsubscribe_report(t.ident, s) == OK
    assert acl.rt.launch_callback(print, None, acl.ACL_CALLBACK_BLOCK, s) == \
        E.ACL_ERROR_RT_STREAM_NO_CB_REG


# ---- the sample ports ----
def test_sample_2_callback_exception(capsys):
    mod = load("callback_exception")
    assert mod.main() == 0
    lines = capsys.readouterr().out.splitlines()
    callback = "[INFO]  After error still callback, the userdata is: 520."
    assert lines.count(callback) <= 1           # the report thread's timing decides (as in C)
    main = [re.sub(r"\d{7,}|0x[0-9a-f]+", "N", ln) for ln in lines if ln != callback]
    assert main == [
        "[INFO]  Begin an easy task and an error task. The error task will trigger the "
        "exception callback.",
        "[INFO]  The last task id is: 1.",
        "[INFO]  Exception occurred, callback function.",
        "[INFO]  The error task id is 1.",
        "[INFO]  The error stream id is 2.",
        "[INFO]  The error thread id is N.",
        "[INFO]  The error device id is 0.",
        "[INFO]  The error code id is 507035.",
        "[INFO]  Exception args query ret=0, devArgsPtr=N, devArgsLen=8",
        "[INFO]  Exception func handle query ret=0, funcHandle=N",
        "[ERROR]  aclrtSynchronizeStream(stream_) returned error code 507035",
        "[INFO]  Post synchronize diagnostics verbose error info: errorType=0, tryRepair=0, "
        "hasDetail=0",
        "[ERROR]  Post synchronize diagnostics runtime diagnostics: peekErr=507035, "
        "lastErr=507035, recentErrMsg=acl.rt.synchronize_stream returned 507035 "
        "ACL_ERROR_RT_VECTOR_CORE_EXCEPTION: vector core execution exception — a vector kernel "
        "faulted (a trap or an out-of-bounds access): the message names the kernel and the task; "
        "check its arguments (npusim checks them against the declared parameters)",
        "[INFO]  After assigning the task, the current num is: 1.",
        "[INFO]  Thread exit",
        "[INFO]  Run the callback_exception sample successfully."]


def test_sample_0_simple_callback_stops_at_the_refused_subscription(capsys):
    mod = load("callback_simple")
    assert mod.main() == -1
    lines = capsys.readouterr().out.splitlines()
    head = [re.sub(r"\d{7,}", "N", ln) for ln in lines[:4]]
    assert head == [
        "[INFO]  The main thread id is N",
        "[INFO]  The created report thread id is N",
        "[INFO]  The created hostfunc thread id is N",
        "[ERROR]  Operation failed: aclrtSubscribeHostFunc(hostFuncTidInt, stream_) returned "
        "error code 207000"]
    assert sorted(lines[4:]) == ["[INFO]  Hostfunc processing thread exit",
                                 "[INFO]  Report callback thread exit"]


def test_sample_0_without_the_host_function_thread_meets_107011(capsys):
    mod = load("callback_simple")
    assert mod.main(host_func_thread=False) == -1
    out = capsys.readouterr().out
    assert "[ERROR]  Operation failed: aclrtLaunchHostFunc(stream_, HostFunc, userData) " \
           "returned error code 107011" in out
