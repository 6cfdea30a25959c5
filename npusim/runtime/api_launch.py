"""Kernel launch onto a stream: the device-side half every launch API shares.

The binary/function handle APIs (``aclrtLaunchKernel`` and friends) resolve their function to a
kernel-table id and an args area in device memory, then call ``launch``.
"""
from __future__ import annotations

from .. import errors as ERR
from ..device import sqe as S
from .stream import refused

KERNEL_HOOK = None
"""Set by ``npusim.faults`` while a kernel injection is armed: ``hook(stream, kernel id, name)``
returns the kernel id to launch instead (a trap body); None otherwise (one test per launch)."""


def launch(stream, kernel_id: int, num_blocks: int, args_addr: int, args_size: int,
           duration_ns: int = 0) -> int:
    """Queue one kernel task on a resolved stream (all API checks done by the caller)."""
    if stream.ctx.failure_code:
        return stream.ctx.failure_code
    if KERNEL_HOOK is not None:
        kernel_id = KERNEL_HOOK(stream, int(kernel_id))
    return refused(stream.submit(S.OP_KERNEL, stream.device.timing.host_kernel_launch_ns,
                                 a0=int(kernel_id), a1=int(args_addr), a2=int(args_size),
                                 a3=int(duration_ns), blocks=int(num_blocks) & 0xFFFF))
