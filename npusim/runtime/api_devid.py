"""Chapter 04 device id mappings (logical, physical and user device ids) and chapter 05's
``aclrtCtxGetFloatOverflowAddr``.

npusim simulates a machine whose devices are all visible in their physical order (no
``ASCEND_RT_VISIBLE_DEVICES``), so the three ids of a device are equal; what a program can
observe is the checks. Sources (hicann/runtime): ``src/acl/aclrt_impl/device.cpp:538-575``
(NULL output 100000 — the facade returns the id, so never), ``src/runtime/api/api_c_device.cc:
285-302`` (a negative physical / logical id 107000), ``api_error.cc:3312-3345``
(``ChgUserDevIdToDeviceId``: an id beyond the devices 107001) and ``api_error.cc:6896-6930``
(``GetLogicDevIdByUserDevId`` / ``GetUserDevIdByLogicDevId``: negative 107001, then the device
id check 107001). docs/fidelity.md row 225.
"""
from __future__ import annotations

from .. import errors as ERR
from .api_args import _overflow_addr as overflow_addr   # the word kernels' overflow slot holds
from .runtime import RT, profile

OK = ERR.ACL_SUCCESS


def _same(dev_id, negative: int, what: str):
    if dev_id < 0:
        RT.tls.explain(f"{what} {dev_id} is negative")
        return None, negative
    if dev_id >= profile().device_count:
        RT.tls.explain(f"{what} {dev_id} is not a device (the profile has "
                       f"{profile().device_count})")
        return None, ERR.ACL_ERROR_RT_INVALID_DEVICEID
    return dev_id, OK


def get_logic_dev_id_by_phy_dev_id(phy_dev_id):
    """aclrtGetLogicDevIdByPhyDevId -> (logical id, code): negative 107000, beyond the devices
    107001; the simulated machine shows every device in physical order (the same id)."""
    return _same(phy_dev_id, ERR.ACL_ERROR_RT_PARAM_INVALID, "phyDevId")


def get_phy_dev_id_by_logic_dev_id(logic_dev_id):
    """aclrtGetPhyDevIdByLogicDevId -> (physical id, code): negative 107000, beyond 107001."""
    return _same(logic_dev_id, ERR.ACL_ERROR_RT_PARAM_INVALID, "logicDevId")


def get_user_dev_id_by_phy_dev_id(phy_dev_id):
    """aclrtGetUserDevIdByPhyDevId -> (user id, code): as aclrtGetLogicDevIdByPhyDevId (the acl
    layer calls the same rts function, ``device.cpp:560``)."""
    return _same(phy_dev_id, ERR.ACL_ERROR_RT_PARAM_INVALID, "phyDevId")


def get_phy_dev_id_by_user_dev_id(user_dev_id):
    """aclrtGetPhyDevIdByUserDevId -> (physical id, code): as aclrtGetPhyDevIdByLogicDevId."""
    return _same(user_dev_id, ERR.ACL_ERROR_RT_PARAM_INVALID, "userDevId")


def get_user_dev_id_by_logic_dev_id(logic_dev_id):
    """aclrtGetUserDevIdByLogicDevId -> (user id, code): negative or beyond the devices 107001
    (``api_error.cc:6914``)."""
    return _same(logic_dev_id, ERR.ACL_ERROR_RT_INVALID_DEVICEID, "logicDevId")


def get_logic_dev_id_by_user_dev_id(user_dev_id):
    """aclrtGetLogicDevIdByUserDevId -> (logical id, code): negative or beyond 107001."""
    return _same(user_dev_id, ERR.ACL_ERROR_RT_INVALID_DEVICEID, "userDevId")


def ctx_get_float_overflow_addr():
    """aclrtCtxGetFloatOverflowAddr (chapter 05) -> (device address, code): the current
    context's floating-point overflow-status memory — the address the runtime puts in the
    overflow slot of AI Core kernels' arguments (``api_args``, ProcessOverFlowArgs), allocated
    with the context's first use of it. No context 107002 (``api_impl.cc:7091``)."""
    ctx = RT.current_context
    if ctx is None:
        return None, ERR.ACL_ERROR_RT_CONTEXT_NULL
    return overflow_addr(ctx), OK
