"""The saturation mode and the overflow status (04_device_management; ``rtSetDeviceSatMode``
api_c.cc:3141-3170, ``ApiErrorDecorator::SetDeviceSatMode`` / ``GetDeviceSatStatus`` /
``CleanDeviceSatStatus`` / ``NpuClearFloatStatus``, ``ApiImpl::SetDeviceSatMode`` /
``GetDeviceSatStatus`` api_impl.cc:6923-7150; fidelity row 508), and the stream overflow switch
they go with. The runtime's ``4_reliability/overflow_detection/0_overflow_detection`` sample
makes these calls in this order."""
from __future__ import annotations

import numpy as np
import pytest

import npusim
from npusim import acl

from helpers.acl import in_fresh_thread

OK = acl.ACL_SUCCESS
SAT, INFNAN, UNDEF = (acl.ACL_RT_OVERFLOW_MODE_SATURATION, acl.ACL_RT_OVERFLOW_MODE_INFNAN,
                      acl.ACL_RT_OVERFLOW_MODE_UNDEF)


def _read(p, n=64) -> np.ndarray:
    h = np.zeros(n, np.uint8)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(h), n, p, n, acl.ACL_MEMCPY_DEVICE_TO_HOST) == OK
    return h


def test_the_sample_sequence_on_a2(dev0, stream, buf):
    """INFNAN by default, SATURATION once set; the switch on; the status zero before and after a
    reset (npusim's kernels raise no float exceptions); the original mode restored."""
    assert (SAT, INFNAN, UNDEF) == (0, 1, 2)
    assert acl.rt.get_device_sat_mode() == (INFNAN, OK)
    assert acl.rt.set_device_sat_mode(SAT) == OK
    assert acl.rt.get_device_sat_mode() == (SAT, OK)
    assert acl.rt.set_stream_overflow_switch(stream, 1) == OK
    assert acl.rt.get_stream_overflow_switch(stream) == (1, OK)
    assert acl.rt.memset(buf, 64, 0xAB, 64) == OK
    assert acl.rt.get_overflow_status(buf, 64, stream) == OK
    assert acl.rt.synchronize_stream(stream) == OK
    assert not _read(buf).any()
    assert acl.rt.reset_overflow_status(stream) == OK
    assert acl.rt.synchronize_stream(stream) == OK
    assert acl.rt.set_device_sat_mode(INFNAN) == OK
    assert acl.rt.get_device_sat_mode() == (INFNAN, OK)


def test_the_status_is_a_stream_task_in_stream_order(dev0, stream, buf):
    """The bytes land when the stream reaches the task: after what was queued before it,
    before what is queued after it."""
    assert acl.rt.memset(buf, 64, 0x11, 64) == OK
    assert acl.rt.memset_async(buf, 64, 0x22, 64, stream) == OK
    assert acl.rt.get_overflow_status(buf, 64, stream) == OK
    assert acl.rt.memset_async(buf, 8, 0x33, 8, stream) == OK
    assert acl.rt.synchronize_stream(stream) == OK
    h = _read(buf)
    assert (h[:8] == 0x33).all() and not h[8:].any()


def test_mode_checks_per_chip():
    """A2 / A3 set both modes; 950 only INFNAN (SATURATION 207000, the sample then stops after
    probing); 310P only SATURATION, its default (setting it returns at once, INFNAN 207000);
    UNDEF and anything outside [0, 2) 107000 everywhere. No device needed."""
    for name, default, settable in (("Ascend910B", INFNAN, (SAT, INFNAN)),
                                    ("Ascend910_93", INFNAN, (SAT, INFNAN)),
                                    ("Ascend950", INFNAN, (INFNAN,)),
                                    ("Ascend310P", SAT, (SAT,))):
        npusim.reset()
        npusim.configure(profile=name)
        assert acl.rt.get_device_sat_mode() == (default, OK), name
        for mode in (SAT, INFNAN):
            want = OK if mode in settable else acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
            assert acl.rt.set_device_sat_mode(mode) == want, (name, mode)
            if want:
                assert "cannot set" in acl.get_recent_err_msg()
        for bad in (UNDEF, -1, 3, 1 << 31):
            assert acl.rt.set_device_sat_mode(bad) == acl.ACL_ERROR_RT_PARAM_INVALID, (name, bad)
        assert acl.rt.get_device_sat_mode() == (settable[-1], OK)


def test_the_mode_is_the_processes(dev0):
    """Set on one thread with no device, read on another: one value of the process, kept over
    aclFinalize / aclInit (``Runtime::satMode_``)."""
    assert in_fresh_thread(acl.rt.set_device_sat_mode, SAT) == OK
    assert acl.rt.get_device_sat_mode() == (SAT, OK)
    assert acl.rt.reset_device(0) == OK and acl.finalize() == OK
    assert acl.init() == OK
    assert in_fresh_thread(acl.rt.get_device_sat_mode) == (SAT, OK)


def test_get_status_checks_in_order(dev0, stream, buf):
    """NULL address 100000; a bad handle 107017; a size other than 64 107000; a capturing
    stream 107027; no context 107002; memory that is not the device's 107000. None queues a
    task or writes."""
    assert acl.rt.memset(buf, 64, 0x5A, 64) == OK
    assert acl.rt.get_overflow_status(0, 63, 12345) == acl.ACL_ERROR_INVALID_PARAM
    assert acl.rt.get_overflow_status(buf, 63, 12345) == acl.ACL_ERROR_RT_INVALID_HANDLE
    for size in (0, 63, 65, 128):
        assert acl.rt.get_overflow_status(buf, size, stream) == acl.ACL_ERROR_RT_PARAM_INVALID
    assert acl.mdl.ri_capture_begin(stream, acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED) == OK
    assert acl.rt.get_overflow_status(buf, 64, stream) == acl.ACL_ERROR_RT_STREAM_CAPTURED
    assert acl.rt.reset_overflow_status(stream) == acl.ACL_ERROR_RT_STREAM_CAPTURED
    assert acl.rt.set_stream_overflow_switch(stream, 1) == acl.ACL_ERROR_RT_STREAM_CAPTURED
    m, ret = acl.mdl.ri_capture_end(stream)
    assert ret == OK and acl.mdl.ri_destroy(m) == OK
    assert in_fresh_thread(acl.rt.get_overflow_status, buf, 64, 0) == \
        acl.ACL_ERROR_RT_CONTEXT_NULL
    host = np.zeros(64, np.uint8)
    assert acl.rt.get_overflow_status(acl.util.numpy_to_ptr(host), 64, stream) == \
        acl.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.synchronize_stream(stream) == OK
    assert (_read(buf) == 0x5A).all()


def test_null_stream_is_the_default_stream(dev0, buf):
    assert acl.rt.memset(buf, 64, 0x7F, 64) == OK
    assert acl.rt.get_overflow_status(buf, 64, 0) == OK
    assert acl.rt.reset_overflow_status(0) == OK
    assert acl.rt.synchronize_device() == OK
    assert not _read(buf).any()


def test_reset_with_no_context():
    """STARS chips: NULL with no current context is 107000 (the runtime's current stream is
    NULL); 310P's context-level path: 107002."""
    assert acl.rt.reset_overflow_status(0) == acl.ACL_ERROR_RT_PARAM_INVALID
    npusim.reset()
    npusim.configure(profile="Ascend310P")
    assert acl.rt.reset_overflow_status(0) == acl.ACL_ERROR_RT_CONTEXT_NULL


def test_310p_has_no_stream_switch():
    """310P: setting the switch returns 0 without looking at the stream (a bad handle
    included); reading it answers 1. Its status is the context's buffer: one task."""
    npusim.configure(profile="Ascend310P")
    assert acl.rt.set_device(0) == OK
    s, _ = acl.rt.create_stream()
    assert acl.rt.set_stream_overflow_switch(s, 0) == OK
    assert acl.rt.set_stream_overflow_switch(12345, 1) == OK
    assert acl.rt.get_stream_overflow_switch(s) == (1, OK)
    assert acl.rt.set_stream_overflow_switch(s, 2) == acl.ACL_ERROR_INVALID_PARAM
    p, _ = acl.rt.malloc(64, 0)
    assert acl.rt.memset(p, 64, 1, 64) == OK
    assert acl.rt.get_overflow_status(p, 64, s) == OK
    assert acl.rt.synchronize_stream(s) == OK
    assert not _read(p).any()


@pytest.mark.parametrize("mode", [None, "1", 1.0, [1], 2 ** 40])
def test_hostile_modes_are_refused(mode):
    assert acl.rt.set_device_sat_mode(mode) in (acl.ACL_ERROR_RT_PARAM_INVALID,
                                                acl.ACL_ERROR_INVALID_PARAM)
    assert acl.rt.get_device_sat_mode() == (INFNAN, OK)
