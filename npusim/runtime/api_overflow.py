"""Floating-point saturation mode and overflow status (chapter 04 of the API reference:
``aclrtSetDeviceSatMode``, ``aclrtGetDeviceSatMode``, ``aclrtGetOverflowStatus``,
``aclrtResetOverflowStatus``); the stream's overflow switch is ``api_stream``'s.

The mode is one value of the process (``Runtime::satMode_``): ``aclrtSetDeviceSatMode`` stores it
with or without a device set, streams created afterwards take it, and ``aclrtGetDeviceSatMode``
reads it back (``ApiImpl::SetDeviceSatMode`` / ``GetDeviceSatMode``, api_impl.cc:6923-6944).
Which modes a chip accepts, and its default, are the profile's (``Profile.sat_modes``,
``sat_default``; ``rtSetDeviceSatMode``, api_c.cc:3141-3170).

npusim's kernels do not raise the floating-point exceptions the hardware counts, so the status
is always zero. Reading it is still a stream task: the 64 bytes land at the output address in
stream order, after the tasks queued before it, as ``ApiImpl::GetDeviceSatStatus``'s copy does
(api_impl.cc:7099-7126); on STARS chips two scheduler tasks come first (the status buffer's
address copied in, ``NPU_GET_FLOAT_STATUS``), here NOPs, so the stream holds as many tasks as
on the hardware. Resetting is one task (``NPU_CLEAR_FLOAT_STATUS`` on STARS, a memset of the
context's buffer on 310P). docs/fidelity.md row 508.
"""
from __future__ import annotations

from .. import errors as ERR
from ..device import sqe as S
from .capture import stream_capturing
from .hostmem import DEVICE, locate
from .runtime import RT, null_param, profile
from .stream import lookup, refused, resolve_same_ctx

ACL_RT_OVERFLOW_MODE_SATURATION, ACL_RT_OVERFLOW_MODE_INFNAN, ACL_RT_OVERFLOW_MODE_UNDEF = 0, 1, 2
"""aclrtFloatOverflowMode (acl_rt.h)."""
OVERFLOW_STATUS_SIZE = 64
"""The only output size ``aclrtGetOverflowStatus`` accepts (``OVERFLOW_OUTPUT_SIZE``,
task_base.hpp)."""

_NAMES = {0: "SATURATION", 1: "INFNAN"}


def set_device_sat_mode(mode) -> int:
    """aclrtSetDeviceSatMode: the process's saturation mode for streams created from now on.
    Checks (``rtSetDeviceSatMode``, then ``ApiErrorDecorator::SetDeviceSatMode``): SATURATION or
    INFNAN the chip cannot set 207000; SATURATION on a chip that has only it (310P) returns at
    once; anything outside [0, 2), UNDEF included, 107000. No device or context is needed."""
    p = profile()
    if mode in (ACL_RT_OVERFLOW_MODE_SATURATION, ACL_RT_OVERFLOW_MODE_INFNAN):
        if mode not in p.sat_modes:
            RT.tls.explain(f"{p.soc_version} cannot set the {_NAMES[mode]} mode "
                           f"(it sets {' / '.join(_NAMES[m] for m in p.sat_modes)})")
            return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
        if p.sat_modes == (ACL_RT_OVERFLOW_MODE_SATURATION,):
            return ERR.ACL_SUCCESS
    else:
        RT.tls.explain(f"mode: {mode} is not SATURATION (0) or INFNAN (1)")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    RT.sat_mode = int(mode)
    return ERR.ACL_SUCCESS


def get_device_sat_mode():
    """aclrtGetDeviceSatMode -> (mode, code): the process's mode (the chip's default until one
    is set: INFNAN on A2 / A3 / 950, SATURATION on 310P). No device or context is needed."""
    mode = RT.sat_mode
    return (profile().sat_default if mode is None else mode), ERR.ACL_SUCCESS


def _status_stream(s, what: str):
    """The stream (``s``: the looked-up handle, None for NULL) an overflow-status task goes to: a
    capturing stream 107027, then ``resolve_same_ctx`` (no current context 107002, NULL the
    context's default stream, a model's own stream 207000, another context's stream 107003)."""
    if s is not None and stream_capturing(s):
        RT.tls.explain(f"{what}: the stream is capturing")
        return None, ERR.ACL_ERROR_RT_STREAM_CAPTURED
    return resolve_same_ctx(s)


def get_overflow_status(output_addr, output_size, stream) -> int:
    """aclrtGetOverflowStatus: queue the tasks that write the 64-byte overflow status (zero:
    see the module docstring) to ``output_addr``. Checks in order: NULL address 100000 (acl
    layer); the stream handle; a size other than 64 107000; a capturing stream 107027
    (``ApiErrorDecorator::GetDeviceSatStatus``, api_error.cc); then the context checks of
    :func:`_status_stream`; an address that is not 64 bytes of the stream's device memory
    107000 (the copy's own check)."""
    if not output_addr:
        return null_param("output_addr")
    s, code = lookup(stream)
    if code:
        return code
    if output_size != OVERFLOW_STATUS_SIZE:
        RT.tls.explain(f"output_size: {output_size} bytes; only {OVERFLOW_STATUS_SIZE} are "
                       "supported")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    s, code = _status_stream(s, "aclrtGetOverflowStatus")
    if code:
        return code
    w = locate(output_addr)
    if w.kind != DEVICE or w.device is not s.device or not w.fits(int(output_addr),
                                                                   OVERFLOW_STATUS_SIZE):
        RT.tls.explain(f"output_addr: {int(output_addr):#x} is not {OVERFLOW_STATUS_SIZE} bytes "
                       "of the stream's device memory")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    if s.ctx.failure_code:
        return s.ctx.failure_code
    t = s.device.timing
    if profile().stars:             # the buffer's address copied in, NPU_GET_FLOAT_STATUS
        for _ in range(2):
            code = refused(s.submit(S.OP_NOP, t.host_api_ns))
            if code:
                return code
    return refused(s.submit(S.OP_MEMSET, t.host_memcpy_async_ns, int(output_addr), 0,
                            OVERFLOW_STATUS_SIZE))


def reset_overflow_status(stream) -> int:
    """aclrtResetOverflowStatus: queue the task that clears the status. STARS chips
    (``NpuClearFloatStatus``, api_error.cc / api_impl.cc): NULL with no current context 107000
    (the runtime's current stream is NULL), a capturing stream 107027, then the context checks;
    310P (``CleanDeviceSatStatus``): a capturing stream 107027, then the context checks."""
    s, code = lookup(stream)
    if code:
        return code
    if profile().stars and s is None and RT.current_context is None:
        RT.tls.explain("stream is NULL and there is no current context (no default stream)")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    s, code = _status_stream(s, "aclrtResetOverflowStatus")
    if code:
        return code
    if s.ctx.failure_code:
        return s.ctx.failure_code
    return refused(s.submit(S.OP_NOP, s.device.timing.host_api_ns))
