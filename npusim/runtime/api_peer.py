"""Peer access between devices: ``aclrtDeviceCanAccessPeer``, ``aclrtDeviceEnablePeerAccess``,
``aclrtDeviceDisablePeerAccess``, ``aclrtDevicePeerAccessStatus`` (chapter 11 of the API
reference).

The check order follows the source (docs/fidelity.md row 371):
``src/acl/aclrt_impl/memory.cpp`` 881-945 (the acl layer: a reserved ``flags`` other than 0 ->
ACL_ERROR_FEATURE_UNSUPPORTED; the current device for Enable / Disable; ``deviceId ==
peerDeviceId`` -> 100000; the peer's physical id by index, which fails for a device id the
process does not have -> 107001), ``src/runtime/api/impl/api_error.cc`` 3347-3420 (device ids
at or over ``RT_MAX_DEV_NUM`` -> 107000, a NULL output -> 107000) and ``api_impl.cc`` 3526-3560
(``DeviceCanAccessPeer`` needs a current context: 107002). Every pair of devices of the
simulated server can access each other (the devices of one server share HCCS); enabling sets the
pair's status that ``aclrtDevicePeerAccessStatus`` reads, and an ``aclrtMemcpyAsync`` between the
stream's device and a peer needs it (``runtime/api_memory.py``).
"""
from __future__ import annotations

from .. import errors as ERR
from .api_device import valid_device_id
from .peer import ENABLED
from .runtime import RT

RT_MAX_DEV_NUM = 64


def _peer_id_ok(peer) -> int:
    """0, or the code of a peer id the runtime refuses (beyond the table, or not a device of
    this process: rtGetDevicePhyIdByIndex)."""
    if not isinstance(peer, int) or peer < 0 or peer >= RT_MAX_DEV_NUM:
        RT.tls.explain(f"peerDeviceId: {peer!r} is outside [0, {RT_MAX_DEV_NUM})")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    if not valid_device_id(peer):
        RT.tls.explain(f"peerDeviceId: device {peer} does not exist (aclrtGetDeviceCount)")
        return ERR.ACL_ERROR_RT_INVALID_DEVICEID
    return ERR.ACL_SUCCESS


def device_can_access_peer(device_id, peer_device_id):
    """aclrtDeviceCanAccessPeer: (1 when ``device_id`` can reach ``peer_device_id``'s memory,
    code)."""
    if device_id == peer_device_id:
        RT.tls.explain(f"deviceId {device_id} cannot be equal to peerDeviceId {peer_device_id}")
        return None, ERR.ACL_ERROR_INVALID_PARAM
    code = _peer_id_ok(peer_device_id)
    if code:
        return None, code
    if not valid_device_id(device_id):
        RT.tls.explain(f"deviceId: device {device_id!r} does not exist")
        return None, ERR.ACL_ERROR_RT_INVALID_DEVICEID
    if RT.current_context is None:
        return None, ERR.ACL_ERROR_RT_CONTEXT_NULL
    return 1, ERR.ACL_SUCCESS


def _current_and_peer(peer_device_id):
    """(current device id, 0) or (None, code) for Enable / Disable."""
    ctx = RT.current_context
    if ctx is None:
        return None, ERR.ACL_ERROR_RT_CONTEXT_NULL
    me = ctx.device.id
    if me == peer_device_id:
        RT.tls.explain(f"deviceId {me} cannot be equal to peerDeviceId {peer_device_id}")
        return None, ERR.ACL_ERROR_INVALID_PARAM
    code = _peer_id_ok(peer_device_id)
    return (None, code) if code else (me, ERR.ACL_SUCCESS)


def device_enable_peer_access(peer_device_id, flags) -> int:
    """aclrtDeviceEnablePeerAccess: the current device may access ``peer_device_id``'s memory
    (``flags`` is reserved: 0)."""
    if flags != 0:
        RT.tls.explain(f"flags: {flags!r} is reserved and must be 0")
        return ERR.ACL_ERROR_FEATURE_UNSUPPORTED
    me, code = _current_and_peer(peer_device_id)
    if code:
        return code
    ENABLED.setdefault(me, set()).add(peer_device_id)
    RT.tick(RT.current_context.device.timing.host_api_ns)
    return ERR.ACL_SUCCESS


def device_disable_peer_access(peer_device_id) -> int:
    """aclrtDeviceDisablePeerAccess."""
    me, code = _current_and_peer(peer_device_id)
    if code:
        return code
    ENABLED.get(me, set()).discard(peer_device_id)
    return ERR.ACL_SUCCESS


def device_peer_access_status(device_id, peer_device_id):
    """aclrtDevicePeerAccessStatus: (1 when ``device_id`` has enabled access to
    ``peer_device_id``, code)."""
    for name, d in (("deviceId", device_id), ("peerDeviceId", peer_device_id)):
        if not isinstance(d, int) or not 0 <= d < RT_MAX_DEV_NUM:
            RT.tls.explain(f"{name}: {d!r} is outside [0, {RT_MAX_DEV_NUM})")
            return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    return int(peer_device_id in ENABLED.get(device_id, ())), ERR.ACL_SUCCESS


def may_access(dev_id: int, peer_id: int) -> bool:
    """Has device ``dev_id`` enabled access to ``peer_id`` (a copy between them may run)?"""
    return dev_id == peer_id or peer_id in ENABLED.get(dev_id, ())
