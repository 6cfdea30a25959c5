"""Stream control of chapter 06: aclrtStreamAbort, aclrtDestroyStreamForce, aclrtStreamStop,
aclrtPersistentTaskClean, aclrtRegStreamStateCallback, and aclrtCheckArchCompatibility (chapter
15): success paths, every code of the runtime's check order, and the state after."""
from __future__ import annotations

from npusim import acl
from npusim import errors as E

from helpers.acl import LONG_NS, host_ns, in_fresh_thread, launch, read, stream_done
from helpers.capture import GLOBAL, OK, chip, new_stream  # noqa: F401

PERSISTENT = acl.ACL_STREAM_PERSISTENT


def built(x):
    """A built model on one HEAD persistent stream (EasyOPf on ``x``)."""
    m, ret = acl.mdl.ri_build_begin(0)
    assert ret == OK
    p = new_stream(PERSISTENT)
    assert acl.mdl.ri_bind_stream(m, p, acl.ACL_MODEL_STREAM_FLAG_HEAD) == OK
    assert launch(p, "EasyOPf", 1, (x,)) == OK
    assert acl.mdl.ri_end_task(m, p) == OK
    assert acl.mdl.ri_build_end(m, None) == OK
    return m, p


# ---- aclrtStreamAbort ----
def test_abort_discards_the_queued_tasks_and_the_stream_is_usable_after(stream, buf):
    assert launch(stream, "LongOPf", 1, (buf,)) == OK
    for _ in range(3):
        assert launch(stream, "EasyOPf", 1, (buf,)) == OK
    assert acl.rt.stream_abort(stream) == OK
    assert stream_done(stream)
    assert acl.rt.synchronize_stream(stream) == OK
    # LongOPf had started (the engine applies a task's writes when it starts): only the three
    # queued EasyOPf are gone
    assert read(buf, 1)[0] == 1
    assert host_ns() < LONG_NS
    assert launch(stream, "EasyOPf", 1, (buf,)) == OK
    assert acl.rt.synchronize_stream(stream) == OK
    assert read(buf, 1)[0] == 2


def test_abort_keeps_what_already_ran(stream, buf):
    assert launch(stream, "EasyOPf", 1, (buf,)) == OK
    assert acl.rt.synchronize_stream(stream) == OK
    assert launch(stream, "LongOPf", 1, (buf,)) == OK
    assert launch(stream, "EasyOPf", 1, (buf,)) == OK
    assert acl.rt.stream_abort(stream) == OK
    assert acl.rt.synchronize_stream(stream) == OK
    assert read(buf, 1)[0] == 2                           # EasyOPf, LongOPf; not the last one


def test_abort_of_a_waiting_stream_releases_it(stream, buf):
    other = new_stream()
    assert launch(other, "LongOPf", 1, (buf,)) == OK
    ev, ret = acl.rt.create_event()
    assert ret == OK
    assert acl.rt.record_event(ev, other) == OK           # recorded when LongOPf ends
    assert acl.rt.stream_wait_event(stream, ev) == OK     # parks until then
    assert launch(stream, "EasyOPf", 1, (buf,)) == OK
    assert acl.rt.stream_abort(stream) == OK
    assert acl.rt.synchronize_stream(stream) == OK and host_ns() < LONG_NS
    assert acl.rt.synchronize_stream(other) == OK
    assert read(buf, 1)[0] == 1                           # only LongOPf's increment


def test_abort_codes(dev0, buf):
    assert acl.rt.stream_abort(0xDEAD) == E.ACL_ERROR_RT_INVALID_HANDLE
    assert in_fresh_thread(acl.rt.stream_abort, 0) == E.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.stream_abort(0) == OK                   # NULL: the default stream
    m, p = built(buf)
    assert acl.rt.stream_abort(p) == E.ACL_ERROR_RT_INTERNAL_ERROR      # bound to a model
    ex = new_stream()
    assert acl.mdl.ri_execute_async(m, ex) == OK and acl.rt.synchronize_stream(ex) == OK
    assert read(buf, 1)[0] == 1                           # the model is untouched


def test_abort_and_stop_and_clean_are_207000_on_310p(chip):
    chip("Ascend310P")
    s = new_stream()
    assert acl.rt.stream_abort(s) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert acl.rt.stream_stop(s) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert acl.rt.persistent_task_clean(s) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT


# ---- aclrtDestroyStreamForce ----
def test_destroy_force_does_not_wait(stream, buf):
    assert launch(stream, "LongOPf", 1, (buf,)) == OK
    assert launch(stream, "EasyOPf", 1, (buf,)) == OK
    assert acl.rt.destroy_stream_force(stream) == OK
    assert host_ns() < LONG_NS                            # aclrtDestroyStream would wait 50 ms
    assert acl.rt.synchronize_device() == OK
    assert read(buf, 1)[0] == 1                           # LongOPf had started; EasyOPf dropped
    assert acl.rt.destroy_stream_force(stream) == E.ACL_ERROR_RT_INVALID_HANDLE


def test_destroy_force_codes(dev0, buf):
    assert acl.rt.destroy_stream_force(0) == E.ACL_ERROR_INVALID_PARAM
    assert acl.rt.destroy_stream_force(0xDEAD) == E.ACL_ERROR_RT_INVALID_HANDLE
    d, ret = acl.rt.ctx_get_current_default_stream()
    assert ret == OK
    assert acl.rt.destroy_stream_force(d) == E.ACL_ERROR_RT_PARAM_INVALID
    s = new_stream()
    assert in_fresh_thread(acl.rt.destroy_stream_force, s) == E.ACL_ERROR_RT_CONTEXT_NULL
    m, p = built(buf)
    assert acl.rt.destroy_stream_force(p) == E.ACL_ERROR_RT_STREAM_MODEL
    assert acl.mdl.ri_unbind_stream(m, p) == OK
    assert acl.rt.destroy_stream_force(p) == OK
    assert acl.rt.destroy_stream_force(s) == OK


def test_destroy_force_of_a_capturing_stream_is_107027_and_the_capture_goes_on(dev0, buf):
    s = new_stream()
    assert acl.mdl.ri_capture_begin(s, GLOBAL) == OK
    assert acl.rt.destroy_stream_force(s) == E.ACL_ERROR_RT_STREAM_CAPTURED
    assert acl.mdl.ri_capture_get_info(s)[0] == acl.ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE
    assert launch(s, "EasyOPf", 1, (buf,)) == OK
    _, ret = acl.mdl.ri_capture_end(s)
    assert ret == OK


# ---- aclrtStreamStop ----
def test_stop_ends_the_running_task_now_and_keeps_the_queued_ones(stream, buf):
    assert launch(stream, "LongOPf", 1, (buf,)) == OK
    assert launch(stream, "EasyOPf", 1, (buf,)) == OK
    assert acl.rt.synchronize_device() == OK or True
    s = new_stream()
    assert launch(s, "LongOPf", 1, (buf,)) == OK
    assert acl.rt.stream_query(s)[0] == acl.ACL_STREAM_STATUS_NOT_READY   # LongOPf runs
    t = host_ns()
    assert acl.rt.stream_stop(s) == OK
    assert launch(s, "EasyOPf", 1, (buf,)) == OK
    assert acl.rt.synchronize_stream(s) == OK
    assert host_ns() - t < LONG_NS // 2


def test_stop_codes(dev0, buf):
    assert acl.rt.stream_stop(0xDEAD) == E.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.rt.stream_stop(0) == E.ACL_ERROR_RT_PARAM_INVALID          # no default stream
    s = new_stream()
    assert in_fresh_thread(acl.rt.stream_stop, s) == E.ACL_ERROR_RT_CONTEXT_NULL
    _, p = built(buf)
    assert acl.rt.stream_stop(p) == E.ACL_ERROR_RT_INTERNAL_ERROR         # a model stream
    assert acl.rt.stream_stop(s) == OK


# ---- aclrtPersistentTaskClean ----
def test_clean_drops_a_bound_stream_s_tasks_for_new_ones(dev0, buf):
    m, p = built(buf)
    ex = new_stream()
    assert acl.mdl.ri_execute_async(m, ex) == OK and acl.rt.synchronize_stream(ex) == OK
    assert read(buf, 1)[0] == 1
    assert acl.rt.persistent_task_clean(p) == OK
    assert launch(p, "EasyOPf", 2, (buf,)) == OK                # re-issued, kept in the model
    assert read(buf, 2)[1] == 0
    # the EndGraph went with the tasks; on STARS a new EndTask records the model's EndGraph
    # notify again (endGraphNum_ is not counted there, context.cc:2108-2139; it was 507000)
    assert acl.mdl.ri_end_task(m, p) == OK
    assert acl.mdl.ri_execute_async(m, ex) == OK and acl.rt.synchronize_stream(ex) == OK
    assert list(read(buf, 2)) == [2, 1]


def test_clean_codes_in_check_order(dev0, buf):
    assert acl.rt.persistent_task_clean(0xDEAD) == E.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.rt.persistent_task_clean(0) == E.ACL_ERROR_RT_PARAM_INVALID
    I = E.ACL_ERROR_RT_INTERNAL_ERROR
    assert acl.rt.persistent_task_clean(new_stream()) == I              # not persistent
    p = new_stream(PERSISTENT)
    assert acl.rt.persistent_task_clean(p) == I                         # not bound
    m, ret = acl.mdl.ri_build_begin(0)
    assert acl.mdl.ri_bind_stream(m, p, acl.ACL_MODEL_STREAM_FLAG_HEAD) == OK
    assert acl.rt.persistent_task_clean(p) == I                         # not built
    assert launch(p, "LongOPf", 1, (buf,)) == OK
    assert acl.mdl.ri_end_task(m, p) == OK
    assert acl.mdl.ri_build_end(m, None) == OK
    assert in_fresh_thread(acl.rt.persistent_task_clean, p) == E.ACL_ERROR_RT_CONTEXT_NULL
    ex = new_stream()
    assert acl.mdl.ri_execute_async(m, ex) == OK
    assert acl.rt.persistent_task_clean(p) == I                         # running: SQ enabled
    assert acl.rt.synchronize_stream(ex) == OK
    assert read(buf, 1)[0] == 1                                         # the refusal kept it
    assert acl.rt.persistent_task_clean(p) == OK


# ---- aclrtRegStreamStateCallback ----
def test_stream_state_callbacks_see_creation_and_destruction(dev0):
    seen = []
    assert acl.rt.reg_stream_state_callback("a", lambda s, st, a: seen.append((s, st, a)),
                                            "data") == OK
    s = new_stream()
    assert seen == [(s, acl.ACL_RT_STREAM_STATE_CREATE_POST, "data")]
    assert acl.rt.destroy_stream(s) == OK
    assert seen[-1] == (s, acl.ACL_RT_STREAM_STATE_DESTROY_PRE, "data")
    ctx, _ = acl.rt.create_context(0)                       # its default stream too
    assert len(seen) == 3 and seen[-1][1] == acl.ACL_RT_STREAM_STATE_CREATE_POST
    assert acl.rt.reg_stream_state_callback("a", None) == OK            # removed
    new_stream()
    assert len(seen) == 3


def test_stream_state_callback_codes(dev0):
    f = lambda s, st, a: None  # noqa: E731
    assert acl.rt.reg_stream_state_callback(None, f) == E.ACL_ERROR_INVALID_PARAM
    assert acl.rt.reg_stream_state_callback("x", f) == OK
    assert acl.rt.reg_stream_state_callback("x", f) == E.ACL_ERROR_RT_PARAM_INVALID   # again
    assert acl.rt.reg_stream_state_callback("never", None) == OK        # unknown name: fine


def test_a_raising_stream_state_callback_does_not_break_stream_creation(dev0, capsys):
    def bad(s, st, a):
        raise RuntimeError("boom")
    assert acl.rt.reg_stream_state_callback("bad", bad) == OK
    s, ret = acl.rt.create_stream()
    assert ret == OK and s
    assert "boom" in capsys.readouterr().err


# ---- aclrtCheckArchCompatibility ----
def test_check_arch_compatibility(dev0):
    assert acl.rt.check_arch_compatibility("Ascend910B3") == (1, OK)    # NpuArch 2201 (910B1)
    assert acl.rt.check_arch_compatibility("Ascend910_9391") == (1, OK)
    assert acl.rt.check_arch_compatibility("Ascend310P3") == (0, OK)
    assert acl.rt.check_arch_compatibility("Ascend910B") == (0, OK)     # the 910 family: 1001
    assert acl.rt.check_arch_compatibility("NoSuchSoc") == (None, E.ACL_ERROR_RT_PARAM_INVALID)
    assert acl.rt.check_arch_compatibility("") == (None, E.ACL_ERROR_RT_PARAM_INVALID)


def test_check_arch_compatibility_on_950(chip):
    chip("Ascend950")
    assert acl.rt.check_arch_compatibility("Ascend950DT_9571") == (1, OK)
    assert acl.rt.check_arch_compatibility("Ascend910B1") == (0, OK)
