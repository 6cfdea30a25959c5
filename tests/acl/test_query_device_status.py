"""aclrtQueryDeviceStatus (04_device_management; ApiErrorDecorator::DeviceStatusQuery
api_error.cc:6521-6536, Runtime::GetWatchDogDevStatus runtime.cc:5314-5330): NORMAL for every
device of the profile, set or not, without aclInit; an id outside the devices 107001 and no
output (fidelity row 505). The runtime's ``1_basic_features/device/1_device_multi_thread`` sample
calls it before launching its kernel."""
from __future__ import annotations

from npusim import acl
from npusim.runtime.runtime import RT

from helpers.acl import in_fresh_thread

OK = acl.ACL_SUCCESS


def test_every_device_is_normal(dev0):
    n, ret = acl.rt.get_device_count()
    assert ret == OK
    for d in range(n):
        assert acl.rt.query_device_status(d) == (acl.ACL_RT_DEVICE_STATUS_NORMAL, OK)
    assert acl.ACL_RT_DEVICE_STATUS_NORMAL == 0 and acl.ACL_RT_DEVICE_STATUS_ABNORMAL == 1


def test_no_context_needed(dev0):
    assert in_fresh_thread(acl.rt.query_device_status, 0) == (0, OK)


def test_an_id_outside_the_devices_is_107001(dev0):
    n = RT.profile_in_force().device_count
    for bad in (-1, n, 1 << 20):
        assert acl.rt.query_device_status(bad) == (None, acl.ACL_ERROR_RT_INVALID_DEVICEID)
