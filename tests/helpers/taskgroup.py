"""Helpers for the task-group / task-update / per-task tests (``spec/aclgraph.md`` §7, §7.1, §1.9).

Every kernel launch goes through :func:`kl` (one place to swap the launch path: today the
Pythonic ``Stream.launch`` by kernel name via ``helpers.acl.launch``; the Kernel-module facade
``acl.rt.launch_kernel`` works the same on capturing and updating streams).

Fixtures ``dev0`` / ``stream`` / ``buf`` come from ``tests/conftest.py``, the capture helpers from
``tests/helpers/capture.py``.
"""
from __future__ import annotations

import numpy as np

from npusim import acl
from npusim.device.kernels import TABLE, UNIT_AIC, UNIT_AICPU
from npusim.runtime import api_device
from npusim.runtime.runtime import RT

from helpers.acl import launch
from helpers.capture import OK, model, new_buf, new_stream, stream_obj  # noqa: F401

AIC_KERNEL = "TgTestAicOp"          # EasyOPf's body registered as a cube (AIC) kernel
AICPU_KERNEL = "TgTestAicpuOp"      # ... and as an AI CPU kernel


def kl(s, kernel: str, *args, blocks: int = 1, duration_ns: int = 0) -> int:
    """Launch a built-in kernel on stream handle ``s`` with pointer/int args; the ACL code."""
    return launch(s, kernel, blocks, args, duration_ns)


def KL(s, kernel: str, *args, blocks: int = 1) -> None:
    """kl, asserting success."""
    code = kl(s, kernel, *args, blocks=blocks)
    assert code == OK, code


def register_test_kernels() -> None:
    """Kernels of the units the built-ins lack (all built-ins are AI vector kernels)."""
    if AIC_KERNEL not in TABLE.by_name:
        TABLE.register(AIC_KERNEL, TABLE.body(TABLE.id("EasyOPf")), 2_000, unit=UNIT_AIC)
    if AICPU_KERNEL not in TABLE.by_name:
        TABLE.register(AICPU_KERNEL, TABLE.body(TABLE.id("EasyOPf")), 2_000, unit=UNIT_AICPU)


def grp_begin(s) -> None:
    assert acl.mdl.ri_capture_task_grp_begin(s) == OK


def grp_end(s) -> int:
    h, ret = acl.mdl.ri_capture_task_grp_end(s)
    assert ret == OK and h, ret
    return h


def upd_begin(s, g) -> None:
    assert acl.mdl.ri_capture_task_update_begin(s, g) == OK


def upd_end(s) -> None:
    assert acl.mdl.ri_capture_task_update_end(s) == OK


def update(s, g, launches) -> None:
    """Update group ``g`` on stream ``s``: ``launches`` is a list of (kernel, *args)."""
    upd_begin(s, g)
    for kernel, *args in launches:
        KL(s, kernel, *args)
    upd_end(s)


def external_event() -> int:
    """aclrtCreateEventWithFlag(ACL_EVENT_EXTERNAL): the event the dev guide orders updates with
    (a wait captured in the graph blocks until the update stream records it)."""
    e, ret = acl.rt.create_event_with_flag(acl.ACL_EVENT_EXTERNAL)
    assert ret == OK
    return e


def model_streams(mh) -> list[int]:
    h, ret = acl.mdl.ri_get_streams(mh)
    assert ret == OK
    return h


def tasks_of(stream_h) -> list[int]:
    t, ret = acl.mdl.ri_get_tasks_by_stream(stream_h)
    assert ret == OK
    return t


def types_of(stream_h) -> list[int]:
    out = []
    for t in tasks_of(stream_h):
        ty, ret = acl.mdl.ri_task_get_type(t)
        assert ret == OK
        out.append(ty)
    return out


def device():
    """The simulator's device 0 object (SQ/CQ pool counters, trace)."""
    return api_device.device(0)


def host_ns() -> int:
    return RT.host_ns


def u32(ptr: int, n: int = 1) -> np.ndarray:
    from helpers.acl import read
    return read(ptr, n, np.uint32)
