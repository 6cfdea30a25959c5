"""aclInit/aclFinalize, devices and contexts: check orders and effects of
docs/eager_api_checks.md §1–3 (each function returns the ACL code, outputs first)."""
from __future__ import annotations

from .. import errors as ERR
from ..profiles import get_profile  # noqa: F401  (npusim.api reads it from here)
from .capture import context_capturing
from .context import Context
from .device import CLOSE_HOOKS, Device, DeadlockError, sync_cost
from .runtime import RT, profile
from .stream import NO_SYNC_FLAGS


def device(dev_id: int) -> Device:
    d = RT.devices.get(dev_id)
    if d is None:
        d = RT.devices[dev_id] = Device(dev_id, profile())
    return d


def valid_device_id(dev_id) -> bool:
    return isinstance(dev_id, int) and 0 <= dev_id < profile().device_count


def current_context():
    return RT.current_context


# ---- device state callbacks (aclInit / aclFinalize: runtime/api_lifecycle.py) ----
DEVICE_STATE_HOOKS: list = []
"""Called ``(device id, aclrtDeviceState)`` as devices are set and reset (runtime/api_devstate.py
registers the aclrtRegDeviceStateCallback notifier)."""


def _device_state(dev_id: int, state: int) -> None:
    for hook in DEVICE_STATE_HOOKS:
        hook(dev_id, state)


# ---- devices ----
def get_device_count():
    return profile().device_count, ERR.ACL_SUCCESS


def set_device(dev_id) -> int:
    if not valid_device_id(dev_id):
        return ERR.ACL_ERROR_RT_INVALID_DEVICEID
    RT.tick(profile().timing.host_api_ns)
    d = device(dev_id)
    if d.primary is None or d.primary.destroyed:
        _device_state(dev_id, 0)          # ACL_RT_DEVICE_STATE_SET_PRE (runtime.cc:3173)
        d.primary = Context(d, primary=True)
        RT.handles.add("context", d.primary)
    d.set_count += 1
    RT.note_user()
    RT.tls.context = None
    RT.tls.primary = d.primary
    _device_state(dev_id, 1)              # SET_POST (api_impl.cc:3458)
    return ERR.ACL_SUCCESS


def reset_device(dev_id) -> int:
    if not valid_device_id(dev_id):
        return ERR.ACL_ERROR_RT_INVALID_DEVICEID
    d = RT.devices.get(dev_id)
    if d is None or d.set_count == 0:
        return ERR.ACL_ERROR_RT_CONTEXT_RELEASE_ERROR
    d.set_count -= 1
    if d.set_count == 0:
        _device_state(dev_id, 2)   # RESET_PRE (runtime.cc:2761)
        _teardown(d.primary)
        d.primary = None
        d.reset_res_limit()        # a device opened again starts from the hardware's counts
        d.state.reset_cores()      # ... and with every core free
        for hook in CLOSE_HOOKS:   # the memory chapters' resources (api_vmm, api_mempool)
            hook(d)
        _device_state(dev_id, 3)   # RESET_POST (runtime.cc:2768)
    return ERR.ACL_SUCCESS


def reset_device_force(dev_id) -> int:
    """aclrtResetDeviceForce: release the device's default context whatever its reference count
    (one call after any number of aclrtSetDevice), otherwise as aclrtResetDevice — the same
    teardown: unfinished tasks of the context's streams are waited for, captures in progress end
    with the context, its streams, events and graphs are freed (``ApiImpl::ResetDeviceForce`` ->
    ``DeviceReset(devId, true)``, api_impl.cc:7716, 3753; ``Runtime::PrimaryContextRelease``,
    runtime.cc:2908: only the retain count is handled differently,
    ``DecideForcePrimaryReleaseAction``, runtime.cc:253-271, which drains every retain before
    the teardown). Order: the device id 107001 (``ApiErrorDecorator::DeviceResetForce``,
    api_error.cc:6715); no default context to release — never set, or released already by
    aclrtResetDevice down to 0 or by another aclrtResetDeviceForce — 507007
    (``RT_ERROR_CONTEXT_DEL``: "total ref count is 0"). docs/fidelity.md row 475."""
    if not valid_device_id(dev_id):
        RT.tls.explain(f"deviceId {dev_id} is not a device of this chip "
                       f"([0, {profile().device_count}))")
        return ERR.ACL_ERROR_RT_INVALID_DEVICEID
    d = RT.devices.get(dev_id)
    if d is None or d.set_count == 0:
        RT.tls.explain(f"device {dev_id} has no default context to release: it was not set "
                       "(aclrtSetDevice), or it was reset already")
        return ERR.ACL_ERROR_RT_CONTEXT_RELEASE_ERROR
    d.set_count = 1                       # every retain drained: the last one resets
    return reset_device(dev_id)


def get_device():
    ctx = RT.current_context
    if ctx is None:
        return None, ERR.ACL_ERROR_RT_CONTEXT_NULL
    return ctx.device.id, ERR.ACL_SUCCESS


def synchronize_device() -> int:
    ctx = RT.current_context
    if ctx is None:
        return ERR.ACL_ERROR_RT_CONTEXT_NULL
    if context_capturing(ctx):
        return ERR.ACL_ERROR_RT_STREAM_CAPTURED
    t = profile().timing
    start = RT.host_ns
    if ctx.failure_code:
        sync_cost(t, start)
        return ctx.failure_code
    try:                      # the current context's streams only (context.cc:1219-1242)
        _wait_streams(ctx)
    except DeadlockError as e:
        RT.tls.explain(e.diagnosis)
        return e.code or ERR.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    finally:
        sync_cost(t, start)
    code = ERR.ACL_SUCCESS
    if ctx.device.sq_fault_code:        # an unreported fault: the first in stream order
        for s in list(ctx.streams):
            c = s.device.take_sq_error(s.sq)
            code = code or c
    return ctx.failure_code or code



def synchronize_device_with_timeout(timeout_ms: int) -> int:
    """aclrtSynchronizeDeviceWithTimeout returns as aclrtSynchronizeDevice, or 507046
    ACL_ERROR_RT_STREAM_SYNC_TIMEOUT when the wait took longer than ``timeout_ms`` of simulated
    time; -1 waits for ever. Below -1 is refused by the ACL layer and 0 by the runtime, both
    107000 (src/acl/aclrt_impl/device.cpp:168-183, src/runtime/api/impl/api_error.cc:3477-3483)."""
    if timeout_ms < -1 or timeout_ms == 0:
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    start = RT.host_ns
    code = synchronize_device()
    if code == ERR.ACL_SUCCESS and timeout_ms > 0 and RT.host_ns - start > timeout_ms * 1_000_000:
        return ERR.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    return code


STREAM_LEAST_PRIORITY, STREAM_GREATEST_PRIORITY = 7, 0
"""The stream priority range the runtime reports (src/runtime/core/inc/spec/base_info.hpp:168-169:
0 is the highest priority)."""


def device_get_stream_priority_range():
    """aclrtDeviceGetStreamPriorityRange returns (least priority, greatest priority, code) =
    (7, 0, 0), the runtime's constants, with or without a device
    (src/runtime/api/impl/api_impl.cc:3828-3839)."""
    return STREAM_LEAST_PRIORITY, STREAM_GREATEST_PRIORITY, ERR.ACL_SUCCESS


# ---- device resource limits (docs/zh/api_ref/03_runtime_configuration.md; rtsSetDeviceResLimit
# src/runtime/api/api_c_device.cc:167-207, ApiErrorDecorator::Set/Reset/GetDeviceResLimit
# src/runtime/api/impl/api_error.cc:6749-6794, ApiImpl::Set/Reset/GetDeviceResLimit
# src/runtime/api/impl/api_impl.cc:7827-7870, RawDevice::InsertResLimit raw_device_res.cc:73-105) ----
ACL_RT_DEV_RES_CUBE_CORE, ACL_RT_DEV_RES_VECTOR_CORE = 0, 1
"""aclrtDevResLimitType (include/external/acl/acl_rt.h:715-718): the AI Core (cube) and vector
core counts, the order of ``Device.res_limit``."""
RES_TYPES = 2
"""RT_DEV_RES_TYPE_MAX: the runtime refuses ``type >= 2`` ("[0, 2)")."""


def _res_device(dev_id):
    """The check order the three functions share after their type checks: the user id in range
    (ChgUserDevIdToDeviceId / CheckDeviceIdIsValid: 107001), then an opened device
    (Runtime::GetDevice NULL -> RT_ERROR_DEVICE_NULL: 507033). Opened = set, or holding a
    context of its own."""
    if not valid_device_id(dev_id):
        return None, ERR.ACL_ERROR_RT_INVALID_DEVICEID
    d = RT.devices.get(dev_id)
    if d is None or (d.set_count == 0 and not d.contexts):
        return None, ERR.ACL_ERROR_RT_DEV_SETUP_ERROR
    return d, ERR.ACL_SUCCESS


def set_device_res_limit(dev_id, res_type, value) -> int:
    """aclrtSetDeviceResLimit: a negative id 107001 (api_c_device.cc), a type outside [0, 2)
    107000, an id beyond the devices 107001, a device not opened 507033, a value above the
    hardware's count of that unit 107000 (no lower bound: 0 is accepted); the last call wins.
    Kernels the device starts afterwards run their blocks in waves over ``value`` cores."""
    if dev_id < 0:
        return ERR.ACL_ERROR_RT_INVALID_DEVICEID
    if not 0 <= res_type < RES_TYPES:
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    d, code = _res_device(dev_id)
    if d is None:
        return code
    if value > d.res_init()[res_type]:
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    RT.tick(profile().timing.host_api_ns)
    d.set_res_limit(res_type, value)
    return ERR.ACL_SUCCESS


def reset_device_res_limit(dev_id) -> int:
    """aclrtResetDeviceResLimit: both limits back to the hardware's counts; codes as
    :func:`set_device_res_limit`'s id and device checks (no type)."""
    if dev_id < 0:
        return ERR.ACL_ERROR_RT_INVALID_DEVICEID
    d, code = _res_device(dev_id)
    if d is None:
        return code
    RT.tick(profile().timing.host_api_ns)
    d.reset_res_limit()
    return ERR.ACL_SUCCESS


def get_device_res_limit(dev_id, res_type):
    """aclrtGetDeviceResLimit -> (value, code): the process's limit of ``res_type``, the
    hardware's count when none is set; codes as :func:`set_device_res_limit` without the value
    check."""
    if dev_id < 0:
        return None, ERR.ACL_ERROR_RT_INVALID_DEVICEID
    if not 0 <= res_type < RES_TYPES:
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    d, code = _res_device(dev_id)
    if d is None:
        return None, code
    return d.res_limit[res_type], ERR.ACL_SUCCESS


ACL_RT_DEVICE_STATUS_NORMAL, ACL_RT_DEVICE_STATUS_ABNORMAL = 0, 1
"""aclrtDeviceStatus (acl_base.h): what aclrtQueryDeviceStatus reports."""


def query_device_status(dev_id):
    """aclrtQueryDeviceStatus -> (status, code): ``ACL_RT_DEVICE_STATUS_NORMAL`` for any device
    of the profile, set or not (``Runtime::GetWatchDogDevStatus``, runtime.cc:5314-5330: the
    watchdog's status, NORMAL unless the TS heartbeat was lost or the device's error ring
    reported an error, neither of which npusim simulates; fidelity row 505). Codes: an id
    outside the devices 107001 (``ApiErrorDecorator::DeviceStatusQuery``, api_error.cc:
    6521-6536: ``ChgUserDevIdToDeviceId`` / ``CheckDeviceIdIsValid``); no aclInit needed."""
    if not valid_device_id(dev_id):
        return None, ERR.ACL_ERROR_RT_INVALID_DEVICEID
    return ACL_RT_DEVICE_STATUS_NORMAL, ERR.ACL_SUCCESS


def get_res_in_current_thread(res_type):
    """aclrtGetResInCurrentThread -> (value, code): the core count of ``res_type`` kernels the
    calling thread launches may use: the device's limit (aclrtSetDeviceResLimit, else the
    hardware's count) of the current context's device. Codes: a type outside [0, 2) 107000
    (``ApiErrorDecorator::GetResInCurrentThread``, api_error.cc:6827-6836); no current context
    107002 (``ApiImpl::GetResInCurrentThread``, api_impl.cc:8047-8066). A thread's stream
    limits (aclrtUseStreamResInCurrentThread) are not simulated (fidelity rows 157, 504), so
    the device's limit is the answer."""
    if not 0 <= res_type < RES_TYPES:
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    ctx = RT.current_context
    if ctx is None:
        return None, ERR.ACL_ERROR_RT_CONTEXT_NULL
    return int(ctx.device.res_limit[int(res_type)]), ERR.ACL_SUCCESS



# ---- device attributes and utilization (chapter 04) ----
(ACL_DEV_ATTR_AICPU_CORE_NUM, ACL_DEV_ATTR_AICORE_CORE_NUM, ACL_DEV_ATTR_CUBE_CORE_NUM,
 ACL_DEV_ATTR_VECTOR_CORE_NUM, ACL_DEV_ATTR_WARP_SIZE, ACL_DEV_ATTR_MAX_THREAD_PER_VECTOR_CORE,
 ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE, ACL_DEV_ATTR_MAX_GRID_DIM_X, ACL_DEV_ATTR_MAX_GRID_DIM_Y,
 ACL_DEV_ATTR_MAX_GRID_DIM_Z, ACL_DEV_ATTR_MAX_BLOCK_PER_GRID, ACL_DEV_ATTR_MAX_THREADS_PER_BLOCK,
 ACL_DEV_ATTR_MAX_BLOCK_DIM_X, ACL_DEV_ATTR_MAX_BLOCK_DIM_Y, ACL_DEV_ATTR_MAX_BLOCK_DIM_Z,
 ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE, ACL_DEV_ATTR_L2_CACHE_SIZE, ACL_DEV_ATTR_SMP_ID,
 ACL_DEV_ATTR_PHY_CHIP_ID, ACL_DEV_ATTR_SUPER_POD_DEVICE_ID, ACL_DEV_ATTR_SUPER_POD_SERVER_ID,
 ACL_DEV_ATTR_SUPER_POD_ID, ACL_DEV_ATTR_CUST_OP_PRIVILEGE, ACL_DEV_ATTR_MAINBOARD_ID,
 ACL_DEV_ATTR_HD_CONNECT_TYPE, ACL_DEV_ATTR_DEVICE_FORM_FACTOR, ACL_DEV_ATTR_IS_VIRTUAL,
 ACL_DEV_ATTR_NPU_ARCH) = (1, 101, 102, 201, 202, 203, 204, 205, 206, 207, 208, 209, 210, 211,
                           212, 301, 302, 401, 402, 403, 404, 405, 406, 407, 408, 409, 501, 601)
"""aclrtDevAttr (acl_rt.h)."""
ACL_DEV_ATTR_LOCAL_MEM_PER_VECTOR_CORE = ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE   # the old name

_SIMT = {ACL_DEV_ATTR_WARP_SIZE: 32, ACL_DEV_ATTR_MAX_THREAD_PER_VECTOR_CORE: 32 * 64,
         ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE: (256 - 32 - 8) * 1024,
         ACL_DEV_ATTR_MAX_GRID_DIM_X: 65535, ACL_DEV_ATTR_MAX_GRID_DIM_Y: 65535,
         ACL_DEV_ATTR_MAX_GRID_DIM_Z: 65535, ACL_DEV_ATTR_MAX_BLOCK_PER_GRID: 65535,
         ACL_DEV_ATTR_MAX_THREADS_PER_BLOCK: 2048, ACL_DEV_ATTR_MAX_BLOCK_DIM_X: 2048,
         ACL_DEV_ATTR_MAX_BLOCK_DIM_Y: 2048, ACL_DEV_ATTR_MAX_BLOCK_DIM_Z: 2048}
"""The SIMT limits of the 950 (warp of 32 threads, 64 warps a vector core, 256 KiB of UB less a
32 KiB data cache and 8 KiB for the compiler: base_david.hpp; grid, block and thread limits:
device_properties.h); 0 on the chips without SIMT (``ApiImpl::GetDeviceSimtInfo``)."""
_SYSTEM_IDS = range(ACL_DEV_ATTR_SMP_ID, ACL_DEV_ATTR_DEVICE_FORM_FACTOR + 1)


_FROM_PROFILE = {ACL_DEV_ATTR_AICPU_CORE_NUM: "ai_cpu_cnt",
                 ACL_DEV_ATTR_AICORE_CORE_NUM: "ai_core_cnt",
                 ACL_DEV_ATTR_VECTOR_CORE_NUM: "vector_core_cnt",
                 ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE: "hbm_bytes",
                 ACL_DEV_ATTR_L2_CACHE_SIZE: "l2_size", ACL_DEV_ATTR_NPU_ARCH: "npu_arch"}
"""The attributes that are a field of the chip's profile."""


def _device_attr(p, attr):
    """(value, code) of attribute ``attr`` of a device of profile ``p``."""
    if attr in _FROM_PROFILE:
        return getattr(p, _FROM_PROFILE[attr]), ERR.ACL_SUCCESS
    if attr == ACL_DEV_ATTR_CUBE_CORE_NUM:
        if p.cube_core_cnt:
            return p.cube_core_cnt, ERR.ACL_SUCCESS
        RT.tls.explain(f"{p.soc_version}'s platform file has no cube_core_cnt")
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    if attr in _SIMT:
        return (_SIMT[attr] if p.is_v200 else 0), ERR.ACL_SUCCESS
    if attr == ACL_DEV_ATTR_IS_VIRTUAL:
        return 0, ERR.ACL_SUCCESS
    if attr in _SYSTEM_IDS:
        RT.tls.explain(f"attr {attr}: the driver's system ids (chip, board, super pod) are not "
                       "simulated")
        return None, ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    RT.tls.explain(f"attr: {attr} is not an aclrtDevAttr")
    return None, ERR.ACL_ERROR_RT_PARAM_INVALID


def get_device_info(device_id, attr):
    """aclrtGetDeviceInfo -> (value, code): attribute ``attr`` of device ``device_id``, set or
    not (``rtsDeviceGetInfo``: ``ApiErrorDecorator::GetDeviceInfoByAttr``, then
    ``ApiImpl::GetDeviceInfoByAttr`` / ``GetDeviceInfoByAttrMisc``). Codes in order: an id
    outside the devices 107000; an attribute that is not an aclrtDevAttr 107000. Values: the
    core counts, L2 size and NpuArch of the SoC's platform file as the runtime reports them
    (``Profile.ai_core_cnt`` ...: on A2 / A3 the driver's 25 AI Cores and 50 vector cores less
    the ones it keeps back, 24 / 48); CUBE_CORE_NUM where the platform file has the key (not
    310P: 107000); the SIMT limits on 950, 0 elsewhere; the HBM (``Profile.hbm_bytes``, what
    aclrtGetMemInfo reports as its total); not virtual (0). The driver's system ids
    (401-409: SMP, chip, super pod, board ...) are not simulated: 207000 (docs/fidelity.md row
    509)."""
    if not valid_device_id(device_id):
        RT.tls.explain(f"device_id: {device_id} is not a device (0..{profile().device_count - 1})")
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    return _device_attr(profile(), attr)


def get_device_utilization_rate(device_id):
    """aclrtGetDeviceUtilizationRate -> (info, code): ``{"cubeUtilization", "vectorUtilization",
    "aicpuUtilization", "memoryUtilization"}`` in percent. The runtime reads each from the
    driver and puts -1 where a read fails, with success (``aclrtGetDeviceUtilizationRateImpl``,
    device.cpp): an id outside the devices gives -1 in every field; the memory's is always -1
    (reserved). [chosen] npusim's devices report 0: the driver's figure is a sampled load
    npusim does not model (docs/fidelity.md row 509). The only error is the acl layer's 100000
    for a NULL info or a non-NULL ``utilizationExtend`` (C)."""
    busy = 0 if valid_device_id(device_id) else -1
    return {"cubeUtilization": busy, "vectorUtilization": busy, "aicpuUtilization": busy,
            "memoryUtilization": -1}, ERR.ACL_SUCCESS


ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV, ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV = 1, 21
"""aclrtDevFeatureType (acl_rt.h)."""
ACL_DEV_FEATURE_NOT_SUPPORT, ACL_DEV_FEATURE_SUPPORT = 0, 1
_FEATURE_MAX = 20002            # RT_DEV_FEATURE_MAX (rt_external_device.h)
_FEATURE_INTERNAL = (10001, 20001)   # the AI CPU schedule type, the task id width: runtime-internal


def get_device_capability(dev_id, dev_feature_type):
    """aclrtGetDeviceCapability -> (ACL_DEV_FEATURE_SUPPORT / NOT_SUPPORT, code)
    (``rtsDeviceGetCapability``, api_c_device.cc:512-556). Checks in order: a type outside
    [0, 20002) 107000; a type that is none of the runtime's 107000; an id outside the devices
    107001; for TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV no current context 107002
    (``ApiImpl::GetModelTaskUpdateIsSupport``). Values: task update of AI Core / vector tasks
    by the TS CPU (tiling-key sink): every simulated chip has the feature
    (``RT_FEATURE_KERNEL_TILING_KEY_SINK`` in each ``dev_info_reg.cc``) and [chosen] its TS
    firmware has it too: 1; MEMQ events across devices: [chosen] 1 (the driver API version of a
    current driver). The runtime-internal types 10001 / 20001 are not simulated: 207000
    (docs/fidelity.md row 511)."""
    t = dev_feature_type
    if not 0 <= t < _FEATURE_MAX:
        RT.tls.explain(f"devFeatureType: {t} is outside [0, {_FEATURE_MAX})")
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    if t not in (ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV,
                 ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV, *_FEATURE_INTERNAL):
        RT.tls.explain(f"devFeatureType: {t} is not TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV (1) or "
                       "SYSTEM_MEMQ_EVENT_CROSS_DEV (21)")
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    if not valid_device_id(dev_id):
        return None, ERR.ACL_ERROR_RT_INVALID_DEVICEID
    if t in _FEATURE_INTERNAL:
        RT.tls.explain(f"devFeatureType {t} is one of the runtime's internal queries")
        return None, ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    if t == ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV and RT.current_context is None:
        return None, ERR.ACL_ERROR_RT_CONTEXT_NULL
    return ACL_DEV_FEATURE_SUPPORT, ERR.ACL_SUCCESS

# ---- contexts ----
def create_context(dev_id):
    if not valid_device_id(dev_id):
        return None, ERR.ACL_ERROR_RT_INVALID_DEVICEID
    d = device(dev_id)
    ctx = Context(d, primary=False)
    h = RT.handles.add("context", ctx)
    RT.note_user()
    RT.tls.context = ctx
    RT.tls.primary = None
    return h, ERR.ACL_SUCCESS


def destroy_context(h) -> int:
    if not h:
        return ERR.ACL_ERROR_INVALID_PARAM
    ctx, code = RT.handles.get("context", h)
    if ctx is None or ctx.primary or ctx.destroyed:
        return ERR.ACL_ERROR_RT_CONTEXT_NULL
    _teardown(ctx)
    RT.handles.remove(h)
    if RT.tls.context is ctx:
        RT.tls.context = None
    return ERR.ACL_SUCCESS


def set_current_context(h) -> int:
    if not h:
        return ERR.ACL_ERROR_INVALID_PARAM
    ctx, code = RT.handles.get("context", h)
    if ctx is None or ctx.destroyed:
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    RT.note_user()
    RT.tls.context = ctx
    RT.tls.primary = None
    return ERR.ACL_SUCCESS


def get_current_context():
    ctx = RT.current_context
    if ctx is None:
        return None, ERR.ACL_ERROR_RT_CONTEXT_NULL
    return ctx.handle, ERR.ACL_SUCCESS


def _wait_streams(ctx, skip_stuck: bool = False) -> None:
    """Block until every syncable stream of ``ctx`` (not of other contexts) has finished its
    work, in the order they were made, and the host clock is past each one's last task;
    DeadlockError if one never can (``skip_stuck``: go on with the others). Only the streams
    whose SQs are unseen (``DeviceState.unseen``: pushed to since the last such wait saw them
    done) can have work left or a clock past the host's, so the cost follows the streams used
    since, not every stream. While an access log records, every stream is waited on (each wait is an
    observation the race analysis orders by)."""
    dev = ctx.device
    st = dev.state
    if st.access_log is not None:       # recording: every stream's wait is an observation
        _wait_each(dev, list(ctx.streams), set(), skip_stuck)
        return
    by_sq = dev.streams
    done: set = set()
    while True:                         # again for streams another thread gave work meanwhile
        busy = []
        for q in st.unseen():
            s = by_sq.get(q)
            if s is None:
                st.seen(q)              # a model SQ, or a freed one: no stream to wait on
            elif s.ctx is ctx and s not in done:
                busy.append(s)
        if not busy:
            return
        busy.sort(key=_made)
        _wait_each(dev, busy, done, skip_stuck)


def _wait_each(dev, busy: list, done: set, skip_stuck: bool) -> None:
    """Wait on each stream of ``busy`` in turn (``Device.wait_sq`` to its tail), adding it to
    ``done``; one that finished with nothing pushed meanwhile (by a callback or another thread
    during a stall) is seen (``DeviceState.seen``). A stream released meanwhile (a hook's
    releaser) is skipped: its SQ may already be another stream's."""
    st = dev.state
    for s in busy:
        done.add(s)
        if s.destroyed:
            continue
        if s.flags & NO_SYNC_FLAGS:
            st.seen(s.sq)
            continue
        pos = s.tail
        try:
            dev.wait_sq(s.sq, pos)
        except DeadlockError:
            if not skip_stuck:
                raise
        else:
            if not s.destroyed and st.tail(s.sq) == pos:
                st.seen(s.sq)


def _made(s) -> int:
    """A stream's place in creation order (its id, from the device's counter)."""
    return s.id


def _teardown(ctx) -> None:
    """Destroy a context: wait for its streams' work, then free them (doc 04: the runtime waits
    for unfinished tasks before releasing)."""
    if ctx is None or ctx.destroyed:
        return
    _wait_streams(ctx, skip_stuck=True)
    dev = ctx.device
    for m in [m for m in dev.models if m.ctx is ctx and not m.sub]:
        if m.is_capturing:                 # its streams leave capture with the context
            for s in list(m.participants):
                s.capture = None
        m.destroy()                        # the context's graphs go with it
    # events and notifies of the context (a notify between devices, runtime/peer.py's Bridge,
    # belongs to no context: its owner drops it, the device's close hook forgets it)
    for o in [o for o in dev.slot_owner.values()
              if getattr(o, "ctx", None) is ctx and not o.destroyed]:
        o.release()                        # its events and notifies
        RT.handles.remove(o.handle)
    for s in list(ctx.streams):
        s.device.take_sq_error(s.sq)      # an unreported fault must not pass to the SQ's next owner
        s.release()
    ctx.destroyed = True
    dev.contexts.pop(ctx, None)
    RT.handles.remove(ctx.handle)


# ---- op execute timeouts (chapter 12; Runtime::InitOpExecTimeout, ApiImpl::SetOpExecuteTimeOut,
# GetOpExecuteTimeOut, GetOpTimeOutInterval, SetOpExecuteTimeOutV2) ----
OP_TIMEOUT_INTERVAL_US = 4_294_967
"""The hardware's timeout step: the STARS kernel credit scale, 2**32 ns (``stars_base.hpp``
RT_STARS_TASK_KERNEL_CREDIT_SCALE 4294.9 ms; the interval the runtime uses when the driver cannot
refine it). Settable timeouts are N steps, N in [1, 254]: 254 steps are the 1091 s default."""
OP_TIMEOUT_MAX_STEPS = 254


def _aligned_us(us: int) -> int:
    """A requested timeout rounded up to whole steps, at most 254 of them (0: the maximum)."""
    steps = OP_TIMEOUT_MAX_STEPS if us <= 0 else -(-us // OP_TIMEOUT_INTERVAL_US)
    return min(max(steps, 1), OP_TIMEOUT_MAX_STEPS) * OP_TIMEOUT_INTERVAL_US


def get_op_time_out_interval():
    """aclrtGetOpTimeOutInterval: (the timeout step in µs, code); no context 107002."""
    if RT.current_context is None:
        return None, ERR.ACL_ERROR_RT_CONTEXT_NULL
    return OP_TIMEOUT_INTERVAL_US, ERR.ACL_SUCCESS


def set_op_execute_time_out(timeout: int) -> int:
    """aclrtSetOpExecuteTimeOut: the op timeout in seconds (0: the maximum), rounded up to whole
    steps. Kept and reported; simulated kernels do not time out."""
    RT.op_execute_timeout_us = _aligned_us(int(timeout) * 1_000_000)
    return ERR.ACL_SUCCESS


def set_op_execute_time_out_with_ms(timeout: int) -> int:
    """aclrtSetOpExecuteTimeOutWithMs: as aclrtSetOpExecuteTimeOut, in milliseconds."""
    RT.op_execute_timeout_us = _aligned_us(int(timeout) * 1000)
    return ERR.ACL_SUCCESS


def set_op_execute_time_out_v2(timeout: int):
    """aclrtSetOpExecuteTimeOutV2: in µs; (the timeout in force after rounding, code); no
    context 107002."""
    if RT.current_context is None:
        return None, ERR.ACL_ERROR_RT_CONTEXT_NULL
    RT.op_execute_timeout_us = _aligned_us(int(timeout))
    return RT.op_execute_timeout_us, ERR.ACL_SUCCESS


def get_op_execute_timeout():
    """aclrtGetOpExecuteTimeout: (the op timeout in ms, code): the one set, else the default
    (1,090,922 ms: 254 steps, rounded up to ms)."""
    us = RT.op_execute_timeout_us
    return (-(-us // 1000) if us else 1_090_922), ERR.ACL_SUCCESS
