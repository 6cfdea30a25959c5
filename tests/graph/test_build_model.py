"""Build-mode models (``spec/aclgraph.md`` §1.13, chapter 15): aclmdlRIBuildBegin, BindStream,
EndTask, BuildEnd, UnbindStream, Execute / ExecuteAsync on built models, stream activation and the
conditional switch inside them (chapter 06), their codes in the runtime's check order, the state
after a refusal, and how they meet capture."""
from __future__ import annotations

import numpy as np
import pytest

from npusim import acl
from npusim import errors as E

from helpers.acl import in_fresh_thread, launch, read, write
from helpers.capture import GLOBAL, OK, chip, new_stream  # noqa: F401

PERSISTENT = acl.ACL_STREAM_PERSISTENT
HEAD, DEFAULT = acl.ACL_MODEL_STREAM_FLAG_HEAD, acl.ACL_MODEL_STREAM_FLAG_DEFAULT


def build_begin() -> int:
    m, ret = acl.mdl.ri_build_begin(0)
    assert ret == OK and m
    return m


def malloc(n: int = 64) -> int:
    p, ret = acl.rt.malloc(n, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == OK
    assert acl.rt.memset(p, n, 0, n) == OK
    return p


def one_stream_model(x: int, blocks: int = 1):
    """A built model: one HEAD persistent stream, EasyOPf on ``x``, EndGraph, BuildEnd."""
    m, s = build_begin(), new_stream(PERSISTENT)
    assert acl.mdl.ri_bind_stream(m, s, HEAD) == OK
    assert launch(s, "EasyOPf", blocks, (x,)) == OK
    assert acl.mdl.ri_end_task(m, s) == OK
    assert acl.mdl.ri_build_end(m, None) == OK
    return m, s


# ---- success paths ----
def test_a_built_model_runs_its_tasks_at_every_execution_only(dev0):
    x = malloc()
    m, s = one_stream_model(x)
    assert read(x, 1)[0] == 0                    # bound tasks do not run when issued
    ex = new_stream()
    for i in range(1, 4):
        assert acl.mdl.ri_execute_async(m, ex) == OK
        assert acl.rt.synchronize_stream(ex) == OK
        assert read(x, 1)[0] == i


def test_execute_runs_a_built_model_synchronously_on_the_default_stream(dev0):
    x = malloc()
    m, _ = one_stream_model(x)
    assert acl.mdl.ri_execute(m, -1) == OK
    assert read(x, 1)[0] == 1
    assert acl.mdl.ri_execute(m, 1000) == OK
    assert read(x, 1)[0] == 2


def test_execute_with_a_timeout_shorter_than_the_model_returns_507046(dev0):
    x = malloc()
    m, s = build_begin(), new_stream(PERSISTENT)
    assert acl.mdl.ri_bind_stream(m, s, HEAD) == OK
    assert launch(s, "LongOPf", 1, (x,)) == OK            # 50 ms of simulated time
    assert acl.mdl.ri_end_task(m, s) == OK
    assert acl.mdl.ri_build_end(m, None) == OK
    assert acl.mdl.ri_execute(m, 1) == E.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT == 507046
    assert acl.mdl.ri_execute(m, -1) == OK                # the device finished meanwhile
    assert read(x, 1)[0] == 2


def test_get_streams_of_a_built_model_lists_its_bound_streams_newest_first(dev0):
    m = build_begin()
    a, b = new_stream(PERSISTENT), new_stream(PERSISTENT)
    assert acl.mdl.ri_bind_stream(m, a, HEAD) == OK
    assert acl.mdl.ri_bind_stream(m, b, DEFAULT) == OK
    assert acl.mdl.ri_get_streams(m) == ([b, a], OK)


def test_unbind_gives_the_stream_back_and_the_model_forgets_it(dev0):
    x, y = malloc(), malloc()
    m, s = build_begin(), new_stream(PERSISTENT)
    other = new_stream(PERSISTENT)
    assert acl.mdl.ri_bind_stream(m, s, HEAD) == OK
    assert acl.mdl.ri_bind_stream(m, other, HEAD) == OK
    assert launch(s, "EasyOPf", 1, (x,)) == OK
    assert launch(other, "EasyOPf", 1, (y,)) == OK
    assert acl.mdl.ri_end_task(m, other) == OK
    assert acl.mdl.ri_build_end(m, None) == OK
    assert acl.mdl.ri_execute(m, -1) == OK
    assert acl.mdl.ri_unbind_stream(m, s) == OK
    assert acl.mdl.ri_get_streams(m) == ([other], OK)
    assert acl.mdl.ri_execute(m, -1) == OK                # s's task is no longer a head's
    assert (read(x, 1)[0], read(y, 1)[0]) == (1, 2)
    assert launch(s, "EasyOPf", 1, (x,)) == OK            # an ordinary stream again: runs now
    assert acl.rt.synchronize_device() == OK
    assert read(x, 1)[0] == 2
    assert acl.mdl.ri_unbind_stream(m, s) == E.ACL_ERROR_RT_STREAM_MODEL == 107005
    assert acl.rt.destroy_stream(s) == OK


def test_destroying_a_model_unbinds_its_streams(dev0):
    x = malloc()
    m, s = one_stream_model(x)
    assert acl.rt.destroy_stream(s) == E.ACL_ERROR_RT_STREAM_MODEL      # bound: 107005
    assert acl.mdl.ri_destroy(m) == OK
    assert launch(s, "EasyOPf", 1, (x,)) == OK
    assert acl.rt.synchronize_device() == OK and read(x, 1)[0] == 1
    assert acl.rt.destroy_stream(s) == OK


# ---- stream activation and the switch ----
def switch_model(left: int, right: int, cond: int, dtype=acl.ACL_RT_SWITCH_INT32):
    """HEAD s1: a switch to s2, then EasyOPf on x[0]; s2: EasyOPf on x[1], then activates e;
    s1 also activates e after its kernel. e: EndGraph."""
    x = malloc()
    lv, rv = malloc(8), malloc(8)
    write(lv, np.array([left], np.int64))
    write(rv, np.array([right], np.int64))
    m = build_begin()
    s1, s2, e = (new_stream(PERSISTENT) for _ in range(3))
    assert acl.mdl.ri_bind_stream(m, s1, HEAD) == OK
    assert acl.mdl.ri_bind_stream(m, s2, DEFAULT) == OK
    assert acl.mdl.ri_bind_stream(m, e, DEFAULT) == OK
    assert acl.rt.switch_stream(lv, cond, rv, dtype, s2, None, s1) == OK
    assert launch(s1, "EasyOPf", 1, (x,)) == OK
    assert acl.rt.active_stream(e, s1) == OK
    assert launch(s2, "EasyOPf", 2, (x,)) == OK
    assert acl.rt.active_stream(e, s2) == OK
    assert acl.mdl.ri_end_task(m, e) == OK
    assert acl.mdl.ri_build_end(m, None) == OK
    return m, x


@pytest.mark.parametrize("left, right, cond, taken", [
    (1, 1, acl.ACL_RT_EQUAL, True), (1, 2, acl.ACL_RT_EQUAL, False),
    (1, 2, acl.ACL_RT_NOT_EQUAL, True), (3, 2, acl.ACL_RT_GREATER, True),
    (2, 2, acl.ACL_RT_GREATER_OR_EQUAL, True), (-1, 0, acl.ACL_RT_LESS, True),
    (1, 0, acl.ACL_RT_LESS_OR_EQUAL, False),
])
def test_a_taken_switch_runs_only_the_true_stream(dev0, left, right, cond, taken):
    m, x = switch_model(left, right, cond)
    assert acl.mdl.ri_execute(m, -1) == OK
    # taken: s1 stops after the switch, s2 runs (x[0] += 1 by block 0, x[1] by block 1)
    assert list(read(x, 2)) == ([1, 1] if taken else [1, 0])


def test_the_switch_compares_int32_or_int64_as_asked(dev0):
    m, x = switch_model(1 << 32, 0, acl.ACL_RT_EQUAL, acl.ACL_RT_SWITCH_INT32)   # low words 0
    assert acl.mdl.ri_execute(m, -1) == OK
    assert list(read(x, 2)) == [1, 1]
    m, x = switch_model(1 << 32, 0, acl.ACL_RT_EQUAL, acl.ACL_RT_SWITCH_INT64)
    assert acl.mdl.ri_execute(m, -1) == OK
    assert list(read(x, 2)) == [1, 0]


def switch_if_seven():
    """A build-mode model not yet ended: HEAD s1 switches to s2 when the int32 at ``lv`` is 7,
    then has its EndGraph (reached only if not switched); s2 runs EasyOPf on x[0]. Returns
    (model, s2, x, lv)."""
    x = malloc()
    lv, rv = malloc(4), malloc(4)
    write(rv, np.array([7], np.int32))
    m = build_begin()
    s1, s2 = new_stream(PERSISTENT), new_stream(PERSISTENT)
    assert acl.mdl.ri_bind_stream(m, s1, HEAD) == OK
    assert acl.mdl.ri_bind_stream(m, s2, DEFAULT) == OK
    assert acl.rt.switch_stream(lv, acl.ACL_RT_EQUAL, rv, acl.ACL_RT_SWITCH_INT32, s2, None,
                                s1) == OK
    assert acl.mdl.ri_end_task(m, s1) == OK                # EndGraph only if not switched
    assert launch(s2, "EasyOPf", 1, (x,)) == OK
    return m, s2, x, lv


def test_the_switch_reads_the_value_at_execution(dev0):
    m, _, x, lv = switch_if_seven()
    assert acl.mdl.ri_build_end(m, None) == OK
    assert acl.mdl.ri_execute(m, -1) == OK and read(x, 1)[0] == 0
    write(lv, np.array([7], np.int32))
    ex = new_stream()
    assert acl.mdl.ri_execute_async(m, ex) == OK
    # s1 stopped before its EndGraph: the launch never completes
    assert acl.rt.synchronize_stream(ex) == E.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    assert read(x, 1)[0] == 1


def test_a_second_end_task_on_the_switched_stream_ends_the_taken_branch(dev0):
    """STARS chips: ``Context::ModelAddEndGraph`` records the model's EndGraph notify without
    counting it (``context.cc:2108-2139``; ``IncEndGraphNum`` is on the HWTS path only,
    ``context.cc:2154``), so a second aclmdlRIEndTask, on the stream a switch starts, is
    accepted (docs/fidelity.md row 89; it was 507000) and ends the model when the switch is
    taken."""
    m, s2, x, lv = switch_if_seven()
    assert acl.mdl.ri_end_task(m, s2) == OK
    assert acl.mdl.ri_build_end(m, None) == OK
    write(lv, np.array([7], np.int32))
    ex = new_stream()
    assert acl.mdl.ri_execute_async(m, ex) == OK
    assert acl.rt.synchronize_stream(ex) == OK
    assert read(x, 1)[0] == 1


def test_active_stream_codes(dev0):
    m = build_begin()
    a, b, plain = new_stream(PERSISTENT), new_stream(PERSISTENT), new_stream()
    assert acl.rt.active_stream(0, a) == E.ACL_ERROR_INVALID_PARAM
    assert acl.rt.active_stream(a, 0) == E.ACL_ERROR_INVALID_PARAM
    assert acl.rt.active_stream(a, 0xDEAD) == E.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.rt.active_stream(a, b) == E.ACL_ERROR_RT_STREAM_MODEL          # b not bound
    assert acl.mdl.ri_bind_stream(m, b, HEAD) == OK
    assert acl.rt.active_stream(a, b) == E.ACL_ERROR_RT_STREAM_MODEL          # a not bound
    assert acl.rt.active_stream(plain, b) == E.ACL_ERROR_RT_STREAM_MODEL
    assert in_fresh_thread(acl.rt.active_stream, a, b) == E.ACL_ERROR_RT_CONTEXT_NULL
    assert acl.mdl.ri_bind_stream(m, a, DEFAULT) == OK
    assert acl.rt.active_stream(a, b) == OK


def test_switch_stream_codes_in_check_order(dev0):
    m = build_begin()
    t, s = new_stream(PERSISTENT), new_stream(PERSISTENT)
    lv = rv = malloc(8)
    eq, i32 = acl.ACL_RT_EQUAL, acl.ACL_RT_SWITCH_INT32
    P = E.ACL_ERROR_INVALID_PARAM
    assert acl.rt.switch_stream(0, eq, rv, i32, t, None, s) == P
    assert acl.rt.switch_stream(lv, eq, 0, i32, t, None, s) == P
    assert acl.rt.switch_stream(lv, eq, rv, i32, 0, None, s) == P
    assert acl.rt.switch_stream(lv, eq, rv, i32, t, None, 0) == P
    assert acl.rt.switch_stream(lv, eq, rv, i32, t, t, s) == P               # falseStream
    assert acl.rt.switch_stream(lv, eq, rv, i32, 0xDEAD, None, s) == E.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.rt.switch_stream(lv, 6, rv, i32, t, None, s) == E.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.switch_stream(lv, eq, rv, 2, t, None, s) == E.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.switch_stream(lv, eq, rv, i32, t, None, s) == E.ACL_ERROR_RT_STREAM_MODEL
    assert acl.mdl.ri_bind_stream(m, t, DEFAULT) == OK
    assert acl.rt.switch_stream(lv, eq, rv, i32, t, None, s) == E.ACL_ERROR_RT_STREAM_MODEL
    assert acl.mdl.ri_bind_stream(m, s, HEAD) == OK
    # the model checks come before the context check (ApiImpl::StreamSwitchEx)
    assert in_fresh_thread(acl.rt.switch_stream, lv, eq, rv, i32, t, None, s) == \
        E.ACL_ERROR_RT_CONTEXT_NULL
    assert acl.rt.switch_stream(lv, eq, rv, i32, t, None, s) == OK


def test_a_switch_on_an_unmapped_value_is_a_device_fault_at_execution(dev0):
    m = build_begin()
    t, s = new_stream(PERSISTENT), new_stream(PERSISTENT)
    assert acl.mdl.ri_bind_stream(m, s, HEAD) == OK
    assert acl.mdl.ri_bind_stream(m, t, DEFAULT) == OK
    assert acl.rt.switch_stream(0x1000, acl.ACL_RT_EQUAL, 0x2000, acl.ACL_RT_SWITCH_INT32, t,
                                None, s) == OK        # the host does not read the addresses
    assert acl.mdl.ri_end_task(m, s) == OK
    assert acl.mdl.ri_build_end(m, None) == OK
    assert acl.mdl.ri_execute(m, -1) not in (OK, E.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT)


# ---- codes and the state after a refusal ----
def test_build_begin_codes(dev0):
    assert acl.mdl.ri_build_begin(1) == (None, E.ACL_ERROR_RT_PARAM_INVALID)
    assert in_fresh_thread(acl.mdl.ri_build_begin, 0) == (None, E.ACL_ERROR_RT_CONTEXT_NULL)


def test_bind_stream_codes_in_check_order(dev0):
    m, p = build_begin(), new_stream(PERSISTENT)
    assert acl.mdl.ri_bind_stream(0, p, HEAD) == E.ACL_ERROR_INVALID_PARAM
    assert acl.mdl.ri_bind_stream(m, p, 1) == E.ACL_ERROR_RT_PARAM_INVALID          # flag first
    assert acl.mdl.ri_bind_stream(0xDEAD, p, 7) == E.ACL_ERROR_RT_PARAM_INVALID
    assert acl.mdl.ri_bind_stream(0xDEAD, p, HEAD) == E.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.mdl.ri_bind_stream(m, 0xDEAD, HEAD) == E.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.mdl.ri_bind_stream(m, new_stream(), HEAD) == E.ACL_ERROR_RT_PARAM_INVALID
    assert acl.mdl.ri_bind_stream(m, 0, HEAD) == E.ACL_ERROR_RT_PARAM_INVALID        # NULL
    for flag, code in ((PERSISTENT | acl.ACL_STREAM_FAST_LAUNCH, 207000),):
        assert acl.mdl.ri_bind_stream(m, new_stream(flag), HEAD) == code
    assert acl.mdl.ri_bind_stream(m, p, HEAD) == OK
    assert acl.mdl.ri_bind_stream(m, p, DEFAULT) == E.ACL_ERROR_RT_STREAM_MODEL      # bound
    assert acl.mdl.ri_bind_stream(build_begin(), p, HEAD) == E.ACL_ERROR_RT_STREAM_MODEL
    assert acl.mdl.ri_get_streams(m) == ([p], OK)                 # the refusals bound nothing


def test_bind_refuses_a_stop_on_failure_stream_with_207000(dev0):
    m, p = build_begin(), new_stream(PERSISTENT)
    assert acl.rt.set_stream_failure_mode(p, acl.ACL_STOP_ON_FAILURE) == OK
    assert acl.mdl.ri_bind_stream(m, p, HEAD) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT


def test_bind_checks_the_model_context_last(dev0):
    m, p = build_begin(), new_stream(PERSISTENT)
    ctx, ret = acl.rt.create_context(0)
    assert ret == OK
    assert acl.mdl.ri_bind_stream(m, p, HEAD) == E.ACL_ERROR_RT_MODEL_CONTEXT == 107004


def test_end_task_and_build_end_codes(dev0):
    m, p = build_begin(), new_stream(PERSISTENT)
    assert acl.mdl.ri_end_task(0, p) == E.ACL_ERROR_INVALID_PARAM
    assert acl.mdl.ri_end_task(0xDEAD, p) == E.ACL_ERROR_RT_INVALID_HANDLE
    # not bound to m: RT_ERROR_STREAM_INVALID on STARS (context.cc:2108-2112; was 107005)
    assert acl.mdl.ri_end_task(m, p) == E.ACL_ERROR_RT_INTERNAL_ERROR
    assert acl.mdl.ri_build_end(0, None) == E.ACL_ERROR_INVALID_PARAM
    assert acl.mdl.ri_build_end(m, 1) == E.ACL_ERROR_INVALID_PARAM        # reserve
    assert acl.mdl.ri_build_end(m, None) == E.ACL_ERROR_RT_STREAM_MODEL   # no stream
    assert acl.mdl.ri_bind_stream(m, p, HEAD) == OK
    assert acl.mdl.ri_build_end(m, None) == E.ACL_ERROR_RT_MODEL_EXECUTE == 507011  # no EndTask
    assert acl.mdl.ri_execute(m, -1) == E.ACL_ERROR_RT_MODEL_EXECUTE     # not built
    assert acl.mdl.ri_execute_async(m, new_stream()) == E.ACL_ERROR_RT_MODEL_EXECUTE
    assert acl.mdl.ri_end_task(m, p) == OK
    assert acl.mdl.ri_end_task(m, p) == OK          # a second EndGraph record (STARS, row 89)
    assert acl.mdl.ri_build_end(m, None) == OK
    assert acl.mdl.ri_build_end(m, None) == OK


def test_execute_codes(dev0):
    x = malloc()
    m, p = one_stream_model(x)
    assert acl.mdl.ri_execute(0, -1) == E.ACL_ERROR_INVALID_PARAM
    assert acl.mdl.ri_execute(0xDEAD, -1) == E.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.mdl.ri_execute(m, 0) == E.ACL_ERROR_RT_PARAM_INVALID
    assert acl.mdl.ri_execute(m, -2) == E.ACL_ERROR_RT_PARAM_INVALID
    assert in_fresh_thread(acl.mdl.ri_execute, m, -1) == E.ACL_ERROR_RT_CONTEXT_NULL
    assert acl.mdl.ri_execute_async(m, p) == E.ACL_ERROR_RT_PARAM_INVALID   # a model stream
    assert read(x, 1)[0] == 0                                               # nothing ran


def test_update_and_capture_into_a_built_model_are_refused(dev0):
    m, _ = one_stream_model(malloc())
    assert acl.mdl.ri_update(m) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT       # not a capture one
    s = new_stream()
    assert acl.mdl.ri_capture_to_model_ri_begin(s, m, GLOBAL) == E.ACL_ERROR_RT_PARAM_INVALID


# ---- capture interplay ----
def captured_model():
    s = new_stream()
    x = malloc()
    assert acl.mdl.ri_capture_begin(s, GLOBAL) == OK
    assert launch(s, "EasyOPf", 1, (x,)) == OK
    m, ret = acl.mdl.ri_capture_end(s)
    assert ret == OK
    return m, x


def test_the_build_apis_refuse_a_capture_model_with_107000(dev0):
    cm, x = captured_model()
    p = new_stream(PERSISTENT)
    P = E.ACL_ERROR_RT_PARAM_INVALID
    assert acl.mdl.ri_bind_stream(cm, p, HEAD) == P
    assert acl.mdl.ri_end_task(cm, p) == P
    assert acl.mdl.ri_build_end(cm, None) == P
    assert acl.mdl.ri_unbind_stream(cm, p) == P
    assert acl.mdl.ri_execute(cm, -1) == P
    # the capture model is untouched and still runs
    ex = new_stream()
    assert acl.mdl.ri_execute_async(cm, ex) == OK and acl.rt.synchronize_stream(ex) == OK
    assert read(x, 1)[0] == 1


def test_the_build_apis_refuse_a_capturing_stream_with_107027(dev0):
    m, p = build_begin(), new_stream(PERSISTENT)
    assert acl.mdl.ri_capture_begin(p, GLOBAL) == OK        # a persistent stream captures (v100)
    C = E.ACL_ERROR_RT_STREAM_CAPTURED
    assert acl.mdl.ri_bind_stream(m, p, HEAD) == C
    assert acl.mdl.ri_end_task(m, p) == C
    assert acl.mdl.ri_unbind_stream(m, p) == C
    assert acl.rt.destroy_stream_force(p) == C
    assert acl.mdl.ri_get_streams(m) == ([], OK)
    _, ret = acl.mdl.ri_capture_end(p)
    assert ret == E.ACL_ERROR_RT_STREAM_UNJOINED or ret == OK
    assert acl.mdl.ri_bind_stream(m, p, HEAD) == OK          # after the capture: fine


def test_a_bound_stream_cannot_capture_or_run_a_graph(dev0):
    cm, _ = captured_model()
    m, p = build_begin(), new_stream(PERSISTENT)
    assert acl.mdl.ri_bind_stream(m, p, HEAD) == OK
    assert acl.mdl.ri_capture_begin(p, GLOBAL) == E.ACL_ERROR_RT_STREAM_MODEL == 107005
    assert acl.mdl.ri_capture_get_info(p) == (0, None, OK)
    assert acl.mdl.ri_execute_async(cm, p) == E.ACL_ERROR_RT_PARAM_INVALID


def test_a_built_model_launches_inside_a_capture(dev0):
    """aclmdlRIExecuteAsync of a built model on a capturing stream is 107027, like a graph."""
    x = malloc()
    m, _ = one_stream_model(x)
    s = new_stream()
    assert acl.mdl.ri_capture_begin(s, GLOBAL) == OK
    assert acl.mdl.ri_execute_async(m, s) == E.ACL_ERROR_RT_STREAM_CAPTURED
    cm, ret = acl.mdl.ri_capture_end(s)
    assert ret == E.ACL_ERROR_RT_STREAM_UNJOINED or ret == OK


def test_v200_refuses_a_non_persistent_stream_and_a_persistent_one_cannot_capture(chip):
    chip("Ascend950")
    m, p = build_begin(), new_stream(PERSISTENT)
    assert acl.mdl.ri_bind_stream(m, new_stream(), HEAD) == E.ACL_ERROR_RT_PARAM_INVALID
    assert acl.mdl.ri_capture_begin(p, GLOBAL) == E.ACL_ERROR_RT_INTERNAL_ERROR
    assert acl.mdl.ri_bind_stream(m, p, HEAD) == OK


# ---- the Pythonic API ----
def test_pythonic_built_model_with_a_switch():
    import npusim
    dev = npusim.Device()
    x = dev.malloc(64).fill(0)
    flag, one = dev.malloc(8).write(np.array([1], np.int64)), dev.malloc(8)
    one.write(np.array([1], np.int64))
    m = dev.build_model()
    s1, s2 = m.bind(dev.stream(persistent=True), head=True), m.bind(dev.stream(persistent=True))
    s1.switch(flag, "==", one, s2, dtype="int64")
    s1.launch("EasyOPf", 1, args=(x,))                   # skipped when the switch is taken
    s2.launch("EasyOPf", 2, args=(x,))
    m.end_task(s2)
    m.build_end()
    assert m.streams == [s2.handle, s1.handle]
    m.execute()
    assert list(x.read(np.uint32, 2)) == [1, 1]
    flag.write(np.array([0], np.int64))
    m.launch(dev.stream())                               # s1 runs on, s2 never: no EndGraph
    with pytest.raises(npusim.AclError) as e:
        dev.synchronize()
    assert e.value.code in (E.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, 507046)
    assert list(x.read(np.uint32, 2)) == [2, 1]
    with pytest.raises(npusim.AclError) as e:
        s1.abort()                                       # bound: 507000
    assert e.value.code == E.ACL_ERROR_RT_INTERNAL_ERROR


def test_a_pageable_copy_on_a_bound_stream_is_made_at_once_and_not_recorded(dev0):
    x = malloc()
    m, s = build_begin(), new_stream(PERSISTENT)
    assert acl.mdl.ri_bind_stream(m, s, HEAD) == OK
    host = np.array([5, 6], np.uint32)
    assert acl.rt.memcpy_async(x, 8, acl.util.numpy_to_ptr(host), 8,
                               acl.ACL_MEMCPY_HOST_TO_DEVICE, s) == OK
    assert list(read(x, 2)) == [5, 6]                      # already there
    assert acl.mdl.ri_end_task(m, s) == OK
    assert acl.mdl.ri_build_end(m, None) == OK
    write(x, np.array([0, 0], np.uint32))
    assert acl.mdl.ri_execute(m, -1) == OK
    assert list(read(x, 2)) == [0, 0]                      # the model has no copy task


def test_unbind_waits_for_the_model_s_launch_in_flight(dev0):
    from helpers.acl import LONG_NS, host_ns
    x = malloc()
    m, s = build_begin(), new_stream(PERSISTENT)
    assert acl.mdl.ri_bind_stream(m, s, HEAD) == OK
    assert launch(s, "LongOPf", 1, (x,)) == OK
    assert acl.mdl.ri_end_task(m, s) == OK
    assert acl.mdl.ri_build_end(m, None) == OK
    assert acl.mdl.ri_execute_async(m, new_stream()) == OK
    t = host_ns()
    assert acl.mdl.ri_unbind_stream(m, s) == OK
    assert host_ns() - t >= LONG_NS * 9 // 10


def test_a_bound_stream_holds_the_capture_depth_then_507002(chip):
    chip("Ascend310P")                                     # classic: depth = rtsq_depth (2048)
    from npusim.runtime.runtime import profile
    depth = profile().rtsq_depth
    x = malloc()
    m, s = build_begin(), new_stream(PERSISTENT)
    assert acl.mdl.ri_bind_stream(m, s, HEAD) == OK
    for _ in range(depth):
        assert acl.rt.memset_async(x, 4, 1, 4, s) == OK
    assert acl.rt.memset_async(x, 4, 1, 4, s) == E.ACL_ERROR_RT_STREAM_TASK_FULL == 507002
    assert acl.mdl.ri_end_task(m, s) == E.ACL_ERROR_RT_STREAM_TASK_FULL


def test_launch_kernel_on_a_full_bound_stream_is_507002(chip):
    """aclrtLaunchKernel's one-frame eager path hands a bound stream to Stream.submit, whose
    refusal (the model stream holds its depth) is the launch's code."""
    chip("Ascend310P")
    import npusim
    from npusim.runtime.runtime import profile
    depth = profile().rtsq_depth
    x, a = malloc(), malloc()
    write(a, np.array([x], np.uint64))
    lib, ret = acl.rt.binary_load_from_file(npusim.samples.binary_path())
    assert ret == OK
    f, ret = acl.rt.binary_get_function(lib, "EasyOPf")
    assert ret == OK
    m, s = build_begin(), new_stream(PERSISTENT)
    assert acl.mdl.ri_bind_stream(m, s, HEAD) == OK
    for _ in range(depth):
        assert acl.rt.launch_kernel(f, 1, a, 8, s) == OK
    assert acl.rt.launch_kernel(f, 1, a, 8, s) == E.ACL_ERROR_RT_STREAM_TASK_FULL
    assert acl.mdl.ri_end_task(m, s) == E.ACL_ERROR_RT_STREAM_TASK_FULL


def test_events_on_a_bound_stream_are_207000_and_launch_args_outlive_the_ring(dev0):
    m, s = build_begin(), new_stream(PERSISTENT)
    assert acl.mdl.ri_bind_stream(m, s, HEAD) == OK
    ev, ret = acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC)
    assert ret == OK
    assert acl.rt.record_event(ev, s) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert acl.rt.stream_wait_event(s, ev) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    x = malloc()
    assert launch(s, "EasyOPf", 1, (x,)) == OK
    assert acl.mdl.ri_end_task(m, s) == OK
    assert acl.mdl.ri_build_end(m, None) == OK
    from npusim.runtime.runtime import RT
    mdl, _ = RT.handles.get("model", m)
    assert mdl.args_chunks                         # the kernel's args are the model's
    y = malloc()
    for _ in range(3):
        assert launch(new_stream(), "EasyOPf", 1, (y,)) == OK
    assert acl.mdl.ri_execute(m, -1) == OK and read(x, 1)[0] == 1


def test_get_tasks_by_stream_lists_a_bound_stream_s_tasks_in_the_model(dev0):
    x = malloc()
    m, s = build_begin(), new_stream(PERSISTENT)
    t = new_stream(PERSISTENT)
    assert acl.mdl.ri_get_tasks_by_stream(s) == (None, E.ACL_ERROR_RT_PARAM_INVALID)  # unbound
    assert acl.mdl.ri_bind_stream(m, s, HEAD) == OK
    assert acl.mdl.ri_bind_stream(m, t, DEFAULT) == OK
    assert launch(s, "EasyOPf", 1, (x,)) == OK
    assert acl.rt.active_stream(t, s) == OK
    assert acl.mdl.ri_end_task(m, s) == OK
    tasks, ret = acl.mdl.ri_get_tasks_by_stream(s)
    assert ret == OK and len(tasks) == 3
    types = [acl.mdl.ri_task_get_type(h) for h in tasks]
    assert types[0] == (acl.ACL_MODEL_RI_TASK_KERNEL, OK)
    assert [c for _, c in types] == [OK] * 3


def test_a_bound_stream_cannot_join_a_capture_by_stream_add_to_model(dev0):
    s, x = new_stream(), malloc()
    assert acl.mdl.ri_capture_begin(s, GLOBAL) == OK
    _, cm, ret = acl.mdl.ri_capture_get_info(s)
    assert ret == OK
    m, p = build_begin(), new_stream(PERSISTENT)
    assert acl.mdl.ri_bind_stream(m, p, HEAD) == OK
    assert acl.rt.stream_add_to_model(p, cm) == E.ACL_ERROR_RT_STREAM_MODEL
    assert acl.mdl.ri_capture_get_info(s)[0] == acl.ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE
    assert launch(s, "EasyOPf", 1, (x,)) == OK
    _, ret = acl.mdl.ri_capture_end(s)
    assert ret == OK                                  # the capture was not invalidated
