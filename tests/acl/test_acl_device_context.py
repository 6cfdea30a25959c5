"""aclInit/aclFinalize, devices and contexts through the facade (docs/eager_api_checks.md §1-3)."""
from __future__ import annotations

import pytest

from npusim import acl
from helpers.acl import LONG_NS, host_ns, in_fresh_thread, launch, read, stream_done


# ---- aclInit / aclFinalize (§1) ----
def test_init_succeeds():
    assert acl.init() == acl.ACL_SUCCESS


def test_repeat_init_returns_100002():
    acl.init()
    assert acl.init() == acl.ACL_ERROR_REPEAT_INITIALIZE == 100002


def test_finalize_after_init_succeeds():
    acl.init()
    assert acl.finalize() == acl.ACL_SUCCESS


def test_finalize_twice_returns_100037():
    acl.init()
    acl.finalize()
    assert acl.finalize() == acl.ACL_ERROR_REPEAT_FINALIZE == 100037


def test_finalize_without_init_returns_0():
    assert acl.finalize() == acl.ACL_SUCCESS


def test_init_init_finalize_clears_every_reference():
    acl.init()
    acl.init()
    assert acl.finalize() == acl.ACL_SUCCESS
    assert acl.finalize() == acl.ACL_ERROR_REPEAT_FINALIZE


def test_init_after_finalize_succeeds():
    acl.init()
    acl.finalize()
    assert acl.init() == acl.ACL_SUCCESS


def test_finalize_keeps_devices_and_streams(dev0, stream):
    assert acl.finalize() == acl.ACL_SUCCESS
    assert acl.rt.synchronize_stream(stream) == acl.ACL_SUCCESS


def test_apis_do_not_require_init():
    assert acl.rt.set_device(0) == acl.ACL_SUCCESS
    _, ret = acl.rt.create_stream()
    assert ret == acl.ACL_SUCCESS


# ---- devices (§2) ----
def test_get_device_count():
    count, ret = acl.rt.get_device_count()
    assert ret == acl.ACL_SUCCESS and count == 8


def test_set_device_succeeds(dev0):
    dev, ret = acl.rt.get_device()
    assert (dev, ret) == (0, acl.ACL_SUCCESS)


@pytest.mark.parametrize("dev_id", [-1, 8, 1000])
def test_set_device_invalid_id_returns_107001(dev_id):
    assert acl.rt.set_device(dev_id) == acl.ACL_ERROR_RT_INVALID_DEVICEID == 107001


@pytest.mark.parametrize("dev_id", [-1, 8])
def test_reset_device_invalid_id_returns_107001(dev_id):
    assert acl.rt.reset_device(dev_id) == acl.ACL_ERROR_RT_INVALID_DEVICEID


def test_reset_device_never_set_returns_507007():
    assert acl.rt.reset_device(0) == acl.ACL_ERROR_RT_CONTEXT_RELEASE_ERROR == 507007


def test_reset_device_past_zero_returns_507007(dev0):
    assert acl.rt.reset_device(0) == acl.ACL_SUCCESS
    assert acl.rt.reset_device(0) == acl.ACL_ERROR_RT_CONTEXT_RELEASE_ERROR


def test_reset_device_counts_references(dev0):
    assert acl.rt.set_device(0) == acl.ACL_SUCCESS
    assert acl.rt.reset_device(0) == acl.ACL_SUCCESS
    _, ret = acl.rt.create_stream()                  # one reference left: primary ctx alive
    assert ret == acl.ACL_SUCCESS
    assert acl.rt.reset_device(0) == acl.ACL_SUCCESS
    assert acl.rt.reset_device(0) == acl.ACL_ERROR_RT_CONTEXT_RELEASE_ERROR


def test_reference_count_is_per_process_not_per_thread(dev0):
    assert in_fresh_thread(acl.rt.set_device, 0) == acl.ACL_SUCCESS
    assert acl.rt.reset_device(0) == acl.ACL_SUCCESS
    assert acl.rt.reset_device(0) == acl.ACL_SUCCESS
    assert acl.rt.reset_device(0) == acl.ACL_ERROR_RT_CONTEXT_RELEASE_ERROR


def test_full_reset_leaves_thread_without_context(dev0):
    acl.rt.reset_device(0)
    _, ret = acl.rt.create_stream()
    assert ret == acl.ACL_ERROR_RT_CONTEXT_NULL


def test_full_reset_invalidates_primary_streams(dev0, stream):
    acl.rt.reset_device(0)
    acl.rt.set_device(0)
    assert acl.rt.synchronize_stream(stream) == acl.ACL_ERROR_RT_INVALID_HANDLE


def test_full_reset_waits_for_pending_work(dev0, stream, buf):
    assert launch(stream, "LongOPf", 1, (buf,)) == 0
    acl.rt.reset_device(0)
    assert host_ns() >= LONG_NS


def test_set_device_again_after_full_reset_works(dev0):
    acl.rt.reset_device(0)
    assert acl.rt.set_device(0) == acl.ACL_SUCCESS
    _, ret = acl.rt.create_stream()
    assert ret == acl.ACL_SUCCESS


def test_get_device_without_context_returns_107002():
    dev, ret = acl.rt.get_device()
    assert dev is None and ret == acl.ACL_ERROR_RT_CONTEXT_NULL == 107002


def test_get_device_on_other_thread_returns_107002(dev0):
    _, ret = in_fresh_thread(acl.rt.get_device)
    assert ret == acl.ACL_ERROR_RT_CONTEXT_NULL


def test_second_thread_setting_same_device_shares_primary_context(dev0):
    ctx, _ = acl.rt.get_current_context()

    def other():
        acl.rt.set_device(0)
        return acl.rt.get_current_context()
    assert in_fresh_thread(other) == (ctx, acl.ACL_SUCCESS)


def test_synchronize_device_succeeds(dev0, stream, buf):
    launch(stream, "EasyOPf", 1, (buf,))
    assert acl.rt.synchronize_device() == acl.ACL_SUCCESS
    assert read(buf, 1)[0] == 1


def test_synchronize_device_without_context_returns_107002():
    assert acl.rt.synchronize_device() == acl.ACL_ERROR_RT_CONTEXT_NULL


def test_synchronize_device_reports_kernel_fault_once(dev0, stream):
    launch(stream, "ErrorOPf")
    assert acl.rt.synchronize_device() == acl.ACL_ERROR_RT_VECTOR_CORE_EXCEPTION
    assert acl.rt.synchronize_device() == acl.ACL_SUCCESS


def test_synchronize_device_leaves_other_contexts_alone(dev0, buf):
    launch(None, "LongOPf", 1, (buf,))                # on the primary context's default stream
    acl.rt.create_context(0)
    assert acl.rt.synchronize_device() == acl.ACL_SUCCESS
    acl.rt.set_device(0)
    assert not stream_done(None)


# ---- contexts (§3) ----
def test_create_context_becomes_current(dev0):
    ctx, ret = acl.rt.create_context(0)
    assert ret == acl.ACL_SUCCESS and ctx
    assert acl.rt.get_current_context() == (ctx, acl.ACL_SUCCESS)


def test_create_context_on_other_device_switches_device():
    ctx, ret = acl.rt.create_context(1)
    assert ret == acl.ACL_SUCCESS
    assert acl.rt.get_device() == (1, acl.ACL_SUCCESS)


@pytest.mark.parametrize("dev_id", [-1, 8])
def test_create_context_invalid_device_returns_107001(dev_id):
    ctx, ret = acl.rt.create_context(dev_id)
    assert ctx is None and ret == acl.ACL_ERROR_RT_INVALID_DEVICEID


def test_create_context_does_not_take_a_device_reference():
    acl.rt.create_context(0)
    assert acl.rt.reset_device(0) == acl.ACL_ERROR_RT_CONTEXT_RELEASE_ERROR


def test_destroy_context_succeeds(dev0):
    ctx, _ = acl.rt.create_context(0)
    assert acl.rt.destroy_context(ctx) == acl.ACL_SUCCESS


def test_destroy_context_null_returns_100000():
    assert acl.rt.destroy_context(0) == acl.ACL_ERROR_INVALID_PARAM == 100000


def test_destroy_context_twice_returns_107002(dev0):
    ctx, _ = acl.rt.create_context(0)
    acl.rt.destroy_context(ctx)
    assert acl.rt.destroy_context(ctx) == acl.ACL_ERROR_RT_CONTEXT_NULL


def test_destroy_primary_context_returns_107002(dev0):
    primary, _ = acl.rt.get_current_context()
    assert acl.rt.destroy_context(primary) == acl.ACL_ERROR_RT_CONTEXT_NULL


def test_destroy_current_context_leaves_thread_without_context(dev0):
    ctx, _ = acl.rt.create_context(0)
    acl.rt.destroy_context(ctx)
    assert acl.rt.get_current_context() == (None, acl.ACL_ERROR_RT_CONTEXT_NULL)


def test_destroy_context_invalidates_its_streams(dev0):
    ctx, _ = acl.rt.create_context(0)
    s, _ = acl.rt.create_stream()
    acl.rt.destroy_context(ctx)
    acl.rt.set_device(0)
    assert acl.rt.synchronize_stream(s) == acl.ACL_ERROR_RT_INVALID_HANDLE


def test_set_current_context_switches(dev0):
    primary, _ = acl.rt.get_current_context()
    acl.rt.create_context(0)
    assert acl.rt.set_current_context(primary) == acl.ACL_SUCCESS
    assert acl.rt.get_current_context() == (primary, acl.ACL_SUCCESS)


def test_set_current_context_null_returns_100000():
    assert acl.rt.set_current_context(0) == acl.ACL_ERROR_INVALID_PARAM


def test_set_current_context_destroyed_returns_107000(dev0):
    ctx, _ = acl.rt.create_context(0)
    acl.rt.destroy_context(ctx)
    assert acl.rt.set_current_context(ctx) == acl.ACL_ERROR_RT_PARAM_INVALID == 107000


def test_set_current_context_works_from_another_thread(dev0):
    ctx, _ = acl.rt.create_context(0)

    def other():
        return acl.rt.set_current_context(ctx), acl.rt.get_current_context()
    assert in_fresh_thread(other) == (acl.ACL_SUCCESS, (ctx, acl.ACL_SUCCESS))


def test_set_device_replaces_explicit_context(dev0):
    primary, _ = acl.rt.get_current_context()
    acl.rt.create_context(0)
    acl.rt.set_device(0)
    assert acl.rt.get_current_context() == (primary, acl.ACL_SUCCESS)


def test_get_current_context_without_any_returns_107002():
    assert acl.rt.get_current_context() == (None, acl.ACL_ERROR_RT_CONTEXT_NULL)


def test_each_context_has_its_own_default_stream(dev0, buf):
    launch(None, "LongOPf", 1, (buf,))
    acl.rt.create_context(0)
    assert stream_done(None)                # the new context's default stream is idle


def test_destroy_context_waits_only_for_its_own_streams(dev0, buf):
    launch(None, "LongOPf", 1, (buf,))                # primary context's default stream
    ctx, _ = acl.rt.create_context(0)
    acl.rt.destroy_context(ctx)
    assert host_ns() < LONG_NS


def test_destroy_context_waits_for_its_pending_work(dev0, buf):
    ctx, _ = acl.rt.create_context(0)
    launch(None, "LongOPf", 1, (buf,))
    acl.rt.destroy_context(ctx)
    assert host_ns() >= LONG_NS
    acl.rt.set_device(0)
    assert read(buf, 1)[0] == 1


def test_full_device_reset_clears_a_stop_mode_failure(dev0):
    acl.rt.set_stream_failure_mode(None, acl.ACL_STOP_ON_FAILURE)
    launch(None, "ErrorOPf")
    assert acl.rt.synchronize_stream(None) == acl.ACL_ERROR_RT_VECTOR_CORE_EXCEPTION
    acl.rt.reset_device(0)
    acl.rt.set_device(0)
    assert acl.rt.synchronize_stream(None) == acl.ACL_SUCCESS


def test_thread_current_context_follows_every_context_change(dev0):
    """``RT.tls.current`` (curCtx if set, else curRef: the one read of the launch / record /
    copy hot paths) is derived by the ``context`` / ``primary`` setters, so every change of
    either shows in it, and the hot paths resolve the same context as ``RT.current_context``:
    set_device, create / set / destroy context, reset_device, and a fresh thread."""
    from npusim.runtime.runtime import RT, _ThreadState

    t = _ThreadState()
    assert t.current is None
    t.primary = "p"
    assert t.current == "p"
    t.context = "c"
    assert t.current == "c"
    t.primary = "q"                          # curCtx set: it stays the current one
    assert t.current == "c" and t.primary == "q"
    t.context = None
    assert t.current == "q"

    def agree():
        cur = RT.current_context
        assert RT.tls.current is cur or RT.tls.current.destroyed
        return cur
    prim = agree()
    assert prim is not None and prim.primary
    ctx = acl.rt.create_context(0)[0]
    c = agree()
    assert c is not prim and not c.primary
    s = acl.rt.create_stream()[0]
    assert acl.rt.synchronize_stream(s) == acl.ACL_SUCCESS
    assert acl.rt.set_current_context(ctx) == acl.ACL_SUCCESS
    assert agree() is c
    assert acl.rt.destroy_stream(s) == acl.ACL_SUCCESS
    assert acl.rt.destroy_context(ctx) == acl.ACL_SUCCESS
    assert agree() is None                   # create_context dropped curRef: no context
    assert acl.rt.memset_async(8, 8, 0, 8, None) == acl.ACL_ERROR_RT_CONTEXT_NULL
    assert acl.rt.set_device(0) == acl.ACL_SUCCESS
    assert agree() is prim
    assert in_fresh_thread(lambda: (RT.tls.current, RT.current_context)) == (None, None)
