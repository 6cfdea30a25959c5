"""aclrtGetDeviceInfo and aclrtGetDeviceUtilizationRate (04_device_management;
``ApiErrorDecorator::GetDeviceInfoByAttr``, ``ApiImpl::GetDeviceInfoByAttr`` /
``GetDeviceInfoByAttrMisc`` / ``GetDeviceSimtInfo`` api_impl.cc:3911-10031,
``aclrtGetDeviceUtilizationRateImpl`` device.cpp; the SoCs' ``platform_config`` ini files;
fidelity row 509). The runtime's ``1_basic_features/device/1_device_multi_thread`` sample asks
both before it launches its kernel."""
from __future__ import annotations

import pytest

import npusim
from npusim import acl

from helpers.acl import in_fresh_thread

OK = acl.ACL_SUCCESS
A = acl

# profile -> (AICPU, AICORE, CUBE, VECTOR, L2, NpuArch, HBM), from the ini files
INI = {"Ascend910B": (6, 24, 24, 48, 201_326_592, 2201, 64 << 30),
       "Ascend910_93": (6, 24, 24, 48, 201_326_592, 2201, 64 << 30),
       "Ascend950": (6, 36, 36, 72, 134_217_728, 3510, 128 << 30),
       "Ascend310P": (7, 8, None, 7, 16_777_216, 2002, 24_000_000_000)}
ATTRS = (A.ACL_DEV_ATTR_AICPU_CORE_NUM, A.ACL_DEV_ATTR_AICORE_CORE_NUM,
         A.ACL_DEV_ATTR_CUBE_CORE_NUM, A.ACL_DEV_ATTR_VECTOR_CORE_NUM,
         A.ACL_DEV_ATTR_L2_CACHE_SIZE, A.ACL_DEV_ATTR_NPU_ARCH,
         A.ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE)
SIMT = {A.ACL_DEV_ATTR_WARP_SIZE: 32, A.ACL_DEV_ATTR_MAX_THREAD_PER_VECTOR_CORE: 2048,
        A.ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE: 221_184, A.ACL_DEV_ATTR_MAX_GRID_DIM_X: 65535,
        A.ACL_DEV_ATTR_MAX_GRID_DIM_Y: 65535, A.ACL_DEV_ATTR_MAX_GRID_DIM_Z: 65535,
        A.ACL_DEV_ATTR_MAX_BLOCK_PER_GRID: 65535, A.ACL_DEV_ATTR_MAX_THREADS_PER_BLOCK: 2048,
        A.ACL_DEV_ATTR_MAX_BLOCK_DIM_X: 2048, A.ACL_DEV_ATTR_MAX_BLOCK_DIM_Y: 2048,
        A.ACL_DEV_ATTR_MAX_BLOCK_DIM_Z: 2048}


@pytest.mark.parametrize("profile", sorted(INI))
def test_the_platform_files_numbers(profile):
    """No device set, no aclInit: the counts the runtime reports (A2 / A3: the driver's 25 / 50
    less the cores kept back), CUBE_CORE_NUM where the ini has it (310P: 107000), the SIMT
    limits on 950 only, not virtual."""
    npusim.configure(profile=profile)
    for attr, want in zip(ATTRS, INI[profile]):
        got = acl.rt.get_device_info(0, attr)
        assert got == ((want, OK) if want is not None else
                       (None, acl.ACL_ERROR_RT_PARAM_INVALID)), (profile, attr)
    for attr, want in SIMT.items():
        assert acl.rt.get_device_info(0, attr) == (want if profile == "Ascend950" else 0, OK)
    assert acl.rt.get_device_info(0, A.ACL_DEV_ATTR_IS_VIRTUAL) == (0, OK)
    assert A.ACL_DEV_ATTR_LOCAL_MEM_PER_VECTOR_CORE == A.ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE == 204


def test_codes(dev0):
    """An id outside the devices 107000 (not 107001), before the attribute; an attribute that
    is not an aclrtDevAttr 107000; the driver's system ids 207000 with the reason."""
    n = npusim.runtime.runtime.profile().device_count
    for bad in (n, 1 << 20):
        assert acl.rt.get_device_info(bad, 999) == (None, acl.ACL_ERROR_RT_PARAM_INVALID)
    assert acl.rt.get_device_info(-1, 1)[1] == acl.ACL_ERROR_RT_PARAM_INVALID
    for attr in (0, 2, 100, 213, 300, 303, 410, 500, 600, 602):
        assert acl.rt.get_device_info(0, attr) == (None, acl.ACL_ERROR_RT_PARAM_INVALID), attr
    for attr in range(A.ACL_DEV_ATTR_SMP_ID, A.ACL_DEV_ATTR_DEVICE_FORM_FACTOR + 1):
        assert acl.rt.get_device_info(0, attr) == (None, acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT)
        assert "system ids" in acl.get_recent_err_msg()
    assert in_fresh_thread(acl.rt.get_device_info, n - 1, A.ACL_DEV_ATTR_VECTOR_CORE_NUM) == \
        (48, OK)


def test_utilization():
    """Success with the device's percentages (0: npusim models no sampled load) and the
    reserved memory figure -1; an id outside the devices -1 in every field, still success."""
    want = {"cubeUtilization": 0, "vectorUtilization": 0, "aicpuUtilization": 0,
            "memoryUtilization": -1}
    assert acl.rt.get_device_utilization_rate(0) == (want, OK)
    assert acl.rt.set_device(0) == OK
    assert acl.rt.get_device_utilization_rate(7) == (want, OK)
    for bad in (-1, 8, 1 << 20):
        assert acl.rt.get_device_utilization_rate(bad) == (dict.fromkeys(want, -1), OK)


def test_rt_device_capability():
    """aclrtGetDeviceCapability: a type outside [0, 20002) or none of the runtime's 107000, then
    the id 107001, then (task update) the context 107002; both features supported; the
    runtime-internal types 207000."""
    S = acl.ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV
    F = acl.ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV
    assert (S, F, acl.ACL_DEV_FEATURE_SUPPORT) == (1, 21, 1)
    for bad in (-1, 0, 2, 20, 22, 10000, 20002):
        assert acl.rt.get_device_capability(99, bad) == (None, acl.ACL_ERROR_RT_PARAM_INVALID)
    assert acl.rt.get_device_capability(99, S) == (None, acl.ACL_ERROR_RT_INVALID_DEVICEID)
    assert acl.rt.get_device_capability(0, S) == (None, acl.ACL_ERROR_RT_CONTEXT_NULL)
    assert acl.rt.get_device_capability(0, F) == (1, OK)
    assert acl.rt.get_device_capability(0, 10001) == (None, acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT)
    assert acl.rt.set_device(0) == OK
    assert acl.rt.get_device_capability(3, S) == (1, OK)
