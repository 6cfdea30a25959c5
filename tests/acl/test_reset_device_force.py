"""aclrtResetDeviceForce (issue 39 item 4; docs/fidelity.md rows 475-477): the default context goes
whatever its reference count, with the teardown of aclrtResetDevice; the codes and the mixes
with aclrtResetDevice of doc 04 (``04_device_management.md`` aclrtResetDeviceForce), and the
teardown of the runtime's samples."""
from __future__ import annotations

import math

import numpy as np
import pytest

from npusim import acl
from helpers.acl import LONG_NS, host_ns, in_fresh_thread, launch

OK = acl.ACL_SUCCESS
RELEASED = acl.ACL_ERROR_RT_CONTEXT_RELEASE_ERROR          # 507007


@pytest.mark.parametrize("dev_id", [-1, 8, 1000, 2 ** 70, None, 1.5, math.nan, "0"])
def test_hostile_ids_answer_as_reset_device(dev_id):
    want = acl.rt.reset_device(dev_id)
    assert want != OK
    assert acl.rt.reset_device_force(dev_id) == want


def test_invalid_id_is_107001_and_explained():
    assert acl.rt.reset_device_force(8) == acl.ACL_ERROR_RT_INVALID_DEVICEID == 107001
    assert "deviceId 8" in acl.get_recent_err_msg()


def test_never_set_is_507007_and_explained():
    assert acl.rt.reset_device_force(0) == RELEASED == 507007
    assert "not set" in acl.get_recent_err_msg()


def test_one_call_releases_any_number_of_sets(dev0):
    for _ in range(3):
        assert acl.rt.set_device(0) == OK
    s, ret = acl.rt.create_stream()
    assert ret == OK
    assert acl.rt.reset_device_force(0) == OK
    _, ret = acl.rt.create_stream()                 # the thread has no context any more
    assert ret == acl.ACL_ERROR_RT_CONTEXT_NULL
    assert acl.rt.reset_device_force(0) == RELEASED   # released already
    assert acl.rt.reset_device(0) == RELEASED
    assert acl.rt.set_device(0) == OK               # ... and the device opens again
    assert acl.rt.synchronize_stream(s) == acl.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.rt.reset_device_force(0) == OK


# doc 04's mixes of the two resets (the right ones succeed, the wrong ones fail)
def test_paired_resets(dev0):
    assert acl.rt.reset_device_force(0) == OK
    assert acl.rt.set_device(0) == OK
    assert acl.rt.reset_device_force(0) == OK


def test_reset_then_force_with_one_set_left(dev0):
    assert acl.rt.set_device(0) == OK
    assert acl.rt.reset_device(0) == OK
    assert acl.rt.reset_device_force(0) == OK


def test_force_after_the_count_reached_zero_fails(dev0):
    assert acl.rt.reset_device(0) == OK
    assert acl.rt.reset_device_force(0) == RELEASED


def test_reset_after_force_fails(dev0):
    assert acl.rt.set_device(0) == OK
    assert acl.rt.reset_device_force(0) == OK
    assert acl.rt.reset_device(0) == RELEASED


def test_a_second_thread_s_force_fails_after_the_first(dev0):
    assert in_fresh_thread(acl.rt.set_device, 0) == OK
    assert in_fresh_thread(acl.rt.reset_device_force, 0) == OK
    assert acl.rt.reset_device_force(0) == RELEASED


def test_waits_for_pending_work(dev0, stream, buf):
    acl.rt.set_device(0)
    assert launch(stream, "LongOPf", 1, (buf,)) == OK
    assert acl.rt.reset_device_force(0) == OK
    assert host_ns() >= LONG_NS


def test_ends_a_capture_in_progress(dev0, stream):
    acl.rt.set_device(0)
    assert acl.mdl.ri_capture_begin(stream, acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED) == OK
    assert acl.rt.reset_device_force(0) == OK
    assert acl.rt.set_device(0) == OK
    _, ret = acl.mdl.ri_capture_end(stream)
    assert ret != OK                                   # the stream went with the context


def test_pinned_results_of_the_teardown_are_there(dev0, stream):
    """Work queued before the reset ran to its end (the reset waited), as with ResetDevice."""
    n = 1 << 12
    dp, _ = acl.rt.malloc(n, 0)
    hp, _ = acl.rt.malloc_host(n)
    assert acl.rt.memset_async(dp, n, 0x5A, n, stream) == OK
    assert acl.rt.memcpy_async(hp, n, dp, n, acl.ACL_MEMCPY_DEVICE_TO_HOST, stream) == OK
    assert acl.rt.reset_device_force(0) == OK
    assert (acl.util.ptr_to_numpy(hp, (n,), np.uint8) == 0x5A).all()


# the teardown of the runtime's samples (example/1_basic_features/*: memory/1_h2d_sync_memory_copy
# main.cpp:53-57, stream/0_simple_stream main.cpp:74-77)
def test_sample_teardown_default_context():
    assert acl.init() == OK
    assert acl.rt.set_device(0) == OK
    s, ret = acl.rt.create_stream()
    hp, _ = acl.rt.malloc_host(64)
    dp, _ = acl.rt.malloc(64, 0)
    assert acl.rt.destroy_stream_force(s) == OK
    assert acl.rt.free_host(hp) == OK
    assert acl.rt.free(dp) == OK
    assert acl.rt.reset_device_force(0) == OK
    assert acl.finalize() == OK


def test_sample_teardown_explicit_context():
    assert acl.init() == OK
    assert acl.rt.set_device(0) == OK
    ctx, ret = acl.rt.create_context(0)
    assert ret == OK
    s, ret = acl.rt.create_stream()
    ev, ret = acl.rt.create_event()
    assert acl.rt.record_event(ev, s) == OK
    assert acl.rt.destroy_event(ev) == OK
    assert acl.rt.destroy_stream_force(s) == OK
    assert acl.rt.destroy_context(ctx) == OK
    assert acl.rt.reset_device_force(0) == OK
    assert acl.finalize() == OK
