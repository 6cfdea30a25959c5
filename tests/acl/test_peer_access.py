"""Several devices on one timeline (issue 38 item 2): peer access codes (docs/fidelity.md rows
370-372, ``memory.cpp`` 881-945, ``api_error.cc`` 3347-3420), copies between devices, and
notifies between devices delivered at the time they were recorded."""
from __future__ import annotations

import numpy as np
import pytest

from npusim.device import sqe as S
from npusim.runtime import peer
from npusim.runtime.runtime import RT


def _buf(acl, dev, data=None, n=1024):
    acl.rt.set_device(dev)
    p, ret = acl.rt.malloc(n, 0)
    assert ret == 0
    if data is not None:
        assert acl.rt.memcpy(p, n, acl.util.numpy_to_ptr(data), data.nbytes, 1) == 0
    return p


def _read(acl, p, n=256):
    out = np.zeros(n, np.float32)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(out), out.nbytes, p, out.nbytes, 2) == 0
    return out


def test_peer_access_codes(acl):
    acl.rt.set_device(0)
    assert acl.rt.device_can_access_peer(0, 1) == (1, 0)
    assert acl.rt.device_can_access_peer(0, 0)[1] == acl.ACL_ERROR_INVALID_PARAM
    assert acl.rt.device_can_access_peer(0, 64)[1] == acl.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.device_can_access_peer(0, 60)[1] == acl.ACL_ERROR_RT_INVALID_DEVICEID
    assert acl.rt.device_enable_peer_access(1, 1) == acl.ACL_ERROR_FEATURE_UNSUPPORTED
    assert acl.rt.device_enable_peer_access(0, 0) == acl.ACL_ERROR_INVALID_PARAM
    assert acl.rt.device_peer_access_status(0, 1) == (0, 0)
    assert acl.rt.device_enable_peer_access(1, 0) == 0
    assert acl.rt.device_peer_access_status(0, 1) == (1, 0)
    assert acl.rt.device_peer_access_status(1, 0) == (0, 0)     # one direction
    assert acl.rt.device_disable_peer_access(1) == 0
    assert acl.rt.device_peer_access_status(0, 1) == (0, 0)
    for bad in (None, "1", 1.5, -1, 2 ** 70):
        assert isinstance(acl.rt.device_enable_peer_access(bad, 0), int)
        assert acl.rt.device_can_access_peer(bad, 1)[1] != 0


def test_no_context(acl):
    acl.rt.reset_device(0)
    assert acl.rt.device_enable_peer_access(1, 0) == acl.ACL_ERROR_RT_CONTEXT_NULL


def test_async_copy_between_devices(acl):
    a = np.arange(256, dtype=np.float32)
    x = _buf(acl, 0, a)
    y = _buf(acl, 1)
    acl.rt.set_device(0)
    s, _ = acl.rt.create_stream()
    assert acl.rt.memcpy_async(y, 1024, x, 1024, acl.ACL_MEMCPY_DEVICE_TO_DEVICE, s) == \
        acl.ACL_ERROR_RT_PARAM_INVALID
    assert "aclrtDeviceEnablePeerAccess(1, 0)" in acl.get_recent_err_msg()
    assert acl.rt.device_enable_peer_access(1, 0) == 0
    assert acl.rt.memcpy_async(y, 1024, x, 1024, acl.ACL_MEMCPY_DEVICE_TO_DEVICE, s) == 0
    assert acl.rt.synchronize_stream(s) == 0
    assert (_read(acl, y) == a).all()
    # and the other way, device 1's memory into device 0's, on device 0's stream
    z = _buf(acl, 0)
    acl.rt.set_device(0)
    assert acl.rt.memcpy_async(z, 1024, y, 1024, acl.ACL_MEMCPY_DEVICE_TO_DEVICE, s) == 0
    assert acl.rt.synchronize_stream(s) == 0
    assert (_read(acl, z) == a).all()


def test_captured_peer_copy_replays(acl):
    a = np.arange(256, dtype=np.float32)
    x = _buf(acl, 1, a)
    y = _buf(acl, 0)
    acl.rt.set_device(0)
    acl.rt.device_enable_peer_access(1, 0)
    s, _ = acl.rt.create_stream()
    assert acl.mdl.ri_capture_begin(s, acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED) == 0
    assert acl.rt.memcpy_async(y, 1024, x, 1024, acl.ACL_MEMCPY_DEVICE_TO_DEVICE, s) == 0
    m, ret = acl.mdl.ri_capture_end(s)
    assert ret == 0
    for k in range(3):
        b = (a + k).astype(np.float32)
        acl.rt.set_device(1)
        acl.rt.memcpy(x, 1024, acl.util.numpy_to_ptr(b), 1024, 1)
        acl.rt.set_device(0)
        assert acl.mdl.ri_execute_async(m, s) == 0
        assert acl.rt.synchronize_stream(s) == 0
        assert (_read(acl, y) == b).all()


def test_peer_task_of_a_reset_device_faults(acl):
    """A graph that copies from a device that was reset since faults (a kernel exception), it
    never reads memory that is gone."""
    x = _buf(acl, 1, np.ones(256, np.float32))
    y = _buf(acl, 0)
    acl.rt.set_device(0)
    acl.rt.device_enable_peer_access(1, 0)
    s, _ = acl.rt.create_stream()
    acl.mdl.ri_capture_begin(s, acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
    acl.rt.memcpy_async(y, 1024, x, 1024, acl.ACL_MEMCPY_DEVICE_TO_DEVICE, s)
    m, _ = acl.mdl.ri_capture_end(s)
    assert acl.rt.reset_device(1) == 0
    acl.rt.set_device(0)
    assert acl.mdl.ri_execute_async(m, s) == 0
    assert acl.rt.synchronize_stream(s) != 0


def _streams(acl):
    out = []
    for d in (0, 1):
        acl.rt.set_device(d)
        h, _ = acl.rt.create_stream()
        out.append(RT.handles.stream(h))
    return out


def test_notify_between_devices_keeps_the_record_time(acl, npusim):
    """A wait on device 1 for a record on device 0 ends where one timeline would end it: no
    earlier than the record, wherever the host ran each device."""
    s0, s1 = _streams(acl)
    d0, d1 = RT.devices[0], RT.devices[1]
    b = peer.bridge(d0, d1, None, "t")
    s1.submit(S.OP_NOTIFY_WAIT, 0, a0=b.dst_slot)           # queued first, parks
    acl.rt.set_device(1)
    RT.devices[1].advance_to_host()
    s0.submit(S.OP_NOTIFY_RECORD, 0, a0=b.src_slot)
    acl.rt.set_device(1)
    assert acl.rt.synchronize_stream(s1.handle) == 0
    rec_end = int(d0.state.sync[b.src_slot, 1])
    assert d1.state.sqs[s1.sq, 4] >= rec_end                # Q_TIME
    assert b.delivered == 1
    # recorded before the wait is queued: the wait is satisfied at once, no earlier than it
    s0.submit(S.OP_NOTIFY_RECORD, 0, a0=b.src_slot)
    acl.rt.set_device(0)
    assert acl.rt.synchronize_stream(s0.handle) == 0
    s1.submit(S.OP_NOTIFY_WAIT, 0, a0=b.dst_slot)
    acl.rt.set_device(1)
    assert acl.rt.synchronize_stream(s1.handle) == 0
    assert b.delivered == 2


def test_wait_no_device_records_is_a_deadlock_naming_the_device(acl):
    s0, s1 = _streams(acl)
    b = peer.bridge(RT.devices[0], RT.devices[1], None, "lonely")
    s1.submit(S.OP_NOTIFY_WAIT, 0, a0=b.dst_slot)
    acl.rt.set_device(1)
    assert acl.rt.synchronize_stream(s1.handle) == acl.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    msg = acl.get_recent_err_msg()
    assert "notify lonely from device 0 to device 1" in msg
    assert "device 0 has not recorded it" in msg


@pytest.mark.parametrize("n_dev", [2, 4, 8])
def test_ring_of_devices(acl, n_dev):
    """A token passed around a ring of devices: each waits for its left neighbour, then
    records to its right one; the last wait ends after every record before it."""
    streams = []
    for d in range(n_dev):
        acl.rt.set_device(d)
        h, _ = acl.rt.create_stream()
        streams.append(RT.handles.stream(h))
    devs = [RT.devices[d] for d in range(n_dev)]
    bs = [peer.bridge(devs[d], devs[(d + 1) % n_dev], None, f"r{d}") for d in range(n_dev)]
    for d in range(n_dev - 1, -1, -1):          # issued in reverse: every device runs ahead
        if d > 0:
            streams[d].submit(S.OP_NOTIFY_WAIT, 0, a0=bs[d - 1].dst_slot)
        streams[d].submit(S.OP_NOTIFY_RECORD, 0, a0=bs[d].src_slot)
    streams[0].submit(S.OP_NOTIFY_WAIT, 0, a0=bs[-1].dst_slot)
    acl.rt.set_device(0)
    assert acl.rt.synchronize_stream(streams[0].handle) == 0
    times = [int(devs[d].state.sync[bs[d].src_slot, 1]) for d in range(n_dev)]
    assert times == sorted(times) and len(set(times)) == n_dev
