"""Chapter 04 / 13 device callbacks: ``aclrtRegDeviceStateCallback`` (called as devices are set
and reset) and ``aclrtSetDeviceTaskAbortCallback`` (registered; never called, since npusim
refuses aclrtDeviceTaskAbort).

Sources (hicann/runtime): ``src/acl/aclrt_impl/callback.cpp:224-246`` (regName NULL 100000),
``src/runtime/core/src/device/device_state_callback_manager.cc:23-120`` (a NULL callback erases
the name's registration; a name registered already 107000; each callback gets the user device
id, the state and its args), ``runtime.cc:3173`` (ACL_RT_DEVICE_STATE_SET_PRE when a device is
opened), ``api_impl.cc:3458`` (SET_POST after every aclrtSetDevice), ``runtime.cc:2757-2770``
(RESET_PRE before the primary context is torn down, RESET_POST after). docs/fidelity.md
rows 223-224.
"""
from __future__ import annotations

import sys

from .. import errors as ERR
from .api_device import DEVICE_STATE_HOOKS
from .runtime import RT

OK = ERR.ACL_SUCCESS

# aclrtDeviceState (acl_rt.h:849)
(ACL_RT_DEVICE_STATE_SET_PRE, ACL_RT_DEVICE_STATE_SET_POST, ACL_RT_DEVICE_STATE_RESET_PRE,
 ACL_RT_DEVICE_STATE_RESET_POST) = range(4)

def _table(api: str) -> dict:
    """regName -> (callback, args) of ``api``: the runtime's DeviceStateCallbackManager /
    the task-abort callbacks, process-wide (``RT.callbacks``)."""
    return RT.callbacks.setdefault(api, {})


def _register(table: dict, reg_name, callback, args) -> int:
    if reg_name is None:
        RT.tls.explain("regName is NULL")
        return ERR.ACL_ERROR_INVALID_PARAM
    if callback is None:
        table.pop(reg_name, None)
        return OK
    if not callable(callback):
        RT.tls.explain(f"callback {callback!r} cannot be called")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    if reg_name in table:
        RT.tls.explain(f"the callback name {reg_name!r} is registered already")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    table[reg_name] = (callback, args)
    return OK


def reg_device_state_callback(reg_name, callback, args) -> int:
    """aclrtRegDeviceStateCallback: ``callback(device_id, state, args)`` on every
    ACL_RT_DEVICE_STATE_SET_PRE (a device opened), SET_POST (after each aclrtSetDevice),
    RESET_PRE / RESET_POST (around the last aclrtResetDevice). NULL callback: unregisters."""
    return _register(_table("aclrtRegDeviceStateCallback"), reg_name, callback, args)


def set_device_task_abort_callback(reg_name, callback, args) -> int:
    """aclrtSetDeviceTaskAbortCallback: registers ``callback`` under ``reg_name`` (NULL
    callback: unregisters). It is never called: aclrtDeviceTaskAbort is refused (207000)."""
    return _register(_table("aclrtSetDeviceTaskAbortCallback"), reg_name, callback, args)


def _notify(dev_id: int, state: int) -> None:
    for name, (cb, args) in list(_table("aclrtRegDeviceStateCallback").items()):
        try:
            cb(dev_id, state, args)
        except Exception as e:          # noqa: BLE001 -- a user callback must not break a set
            print(f"npusim: device state callback {name!r} raised {e!r}", file=sys.stderr)


if _notify not in DEVICE_STATE_HOOKS:
    DEVICE_STATE_HOOKS.append(_notify)
