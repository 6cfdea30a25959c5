"""aclrtGetResInCurrentThread (03_runtime_configuration; ApiErrorDecorator::GetResInCurrentThread
api_error.cc:6827-6836, ApiImpl::GetResInCurrentThread api_impl.cc:8047-8066): the current
context's device limit (stream limits are not simulated: fidelity rows 157, 504), the codes in
the runtime's order, and no output on failure. The runtime's
``1_basic_features/context/0_context_query`` sample calls it for both core types."""
from __future__ import annotations

from npusim import acl
from npusim.profiles import get_profile

from helpers.acl import in_fresh_thread

CUBE, VEC = acl.ACL_RT_DEV_RES_CUBE_CORE, acl.ACL_RT_DEV_RES_VECTOR_CORE
P = get_profile("Ascend910B")
OK = acl.ACL_SUCCESS


def test_the_hardware_counts_without_a_limit(dev0):
    assert acl.rt.get_res_in_current_thread(CUBE) == (P.aic_cores, OK)
    assert acl.rt.get_res_in_current_thread(VEC) == (P.aiv_cores, OK)


def test_the_device_limit_when_one_is_set(dev0):
    assert acl.rt.set_device_res_limit(0, VEC, 3) == OK
    assert acl.rt.get_res_in_current_thread(VEC) == (3, OK)
    assert acl.rt.get_res_in_current_thread(CUBE) == (P.aic_cores, OK)
    primary, ret = acl.rt.get_current_context()
    assert ret == OK
    ctx, ret = acl.rt.create_context(0)                 # the device's limit, whatever context
    assert ret == OK
    assert acl.rt.get_res_in_current_thread(VEC) == (3, OK)
    assert acl.rt.destroy_context(ctx) == OK
    assert acl.rt.set_current_context(primary) == OK
    assert acl.rt.reset_device_res_limit(0) == OK
    assert acl.rt.get_res_in_current_thread(VEC) == (P.aiv_cores, OK)


def test_codes_type_first_then_context(dev0):
    assert acl.rt.get_res_in_current_thread(2) == (None, acl.ACL_ERROR_RT_PARAM_INVALID)
    assert acl.rt.get_res_in_current_thread(-1) == (None, acl.ACL_ERROR_RT_PARAM_INVALID)
    assert in_fresh_thread(acl.rt.get_res_in_current_thread, CUBE) == \
        (None, acl.ACL_ERROR_RT_CONTEXT_NULL)
    assert in_fresh_thread(acl.rt.get_res_in_current_thread, 2) == \
        (None, acl.ACL_ERROR_RT_PARAM_INVALID)
