"""Streams: an eager SQ ring on the device, task ids, and submission with back-pressure.

Submitting a task writes one SQE at the ring's tail with the host time at which its doorbell
rang. A full ring makes the host wait (the engine runs until a slot frees up), as the real
runtime blocks a thread whose stream has ``maxTaskNumPerStream`` tasks in flight.
"""
from __future__ import annotations

from ..device import engine as E
from . import capture
from .recording import REC
from .runtime import RT


def refused(pos: int) -> int:
    """The ACL code of a submission: 0, or the code a refused task carries (``submit`` returns
    a negative code instead of a position)."""
    return -pos if pos < 0 else 0


class Stream:
    def __init__(self, ctx, is_default: bool = False, flags: int = 0, priority: int = 0):
        self.ctx = ctx
        self.device = ctx.device
        self.is_default = is_default
        self.flags = flags
        self.priority = priority
        self.destroyed = False
        self.handle = 0
        prof = self.device.profile
        self.depth = prof.max_task_num_per_stream
        self.sq = self.device.state.alloc_sq(prof.rtsq_depth, E.K_EAGER,
                                             prof.timing.sqe_dispatch_eager_ns)
        self.id = self.device.next_stream_id()
        self.task_seq = 0
        self.capture = None            # CaptureLink while the stream captures (capture.py)
        self.tg_status = 0             # task-group status: NONE / SAMPLE / UPDATE
        self.tg_update = None          # the TaskGroup this stream is updating
        self.stop_on_failure = ctx.stop_on_failure
        if self.stop_on_failure:
            self.device.state.sqs[self.sq, E.Q_STOP_ON_FAIL] = 1
        self.device.streams[self.sq] = self
        ctx.streams.append(self)

    def describe(self) -> str:
        kind = "default stream" if self.is_default else "stream"
        return f"{kind} {self.id} (device {self.device.id})"

    # ---- submission ----
    @property
    def tail(self) -> int:
        return self.device.state.tail(self.sq)

    def submit(self, op: int, host_cost_ns: int, a0=0, a1=0, a2=0, a3=0, flag=0,
               blocks=0) -> int:
        """Append one task; returns its position in the stream (in its capture stream while the
        stream captures: the task is recorded into the model, not run), or a negative ACL code
        when the runtime refuses the task (task-group and task-update rules)."""
        if self.tg_update is not None:
            from . import taskgroup
            return taskgroup.update_task(self, op, a0, a1, a2, a3, flag, blocks)
        if self.capture is not None:
            return capture.append(self, op, a0, a1, a2, a3, flag, blocks)
        dev = self.device
        RT.host_ns += host_cost_ns
        st = dev.state
        if st.pending(self.sq) >= self.depth:
            # the device has run everything due by now (exact, and it usually frees most of
            # the ring); only a device that is really behind makes the host wait for a slot
            dev.advance_to_host()
            busy = st.sqs[self.sq, E.Q_TIME] > RT.host_ns    # a task still running holds its slot
            if st.pending(self.sq) + busy >= self.depth:
                dev.wait_sq(self.sq, self.tail - self.depth + 1)
        t = RT.host_ns + dev.timing.doorbell_ns
        task_id = self.task_seq & 0xFFFF
        self.task_seq += 1
        if REC.on:                      # analysis: host epoch and source site in a4/a5
            a4, a5 = REC.tag(dev)
            return st.push(self.sq, op, t, a0, a1, a2, a3, a4, a5, flag, blocks, task_id)
        return st.push(self.sq, op, t, a0, a1, a2, a3, 0, 0, flag, blocks, task_id)

    def set_stop_on_failure(self) -> None:
        self.stop_on_failure = True
        self.device.state.sqs[self.sq, E.Q_STOP_ON_FAIL] = 1

    def release(self) -> None:
        """Free the SQ (after the stream's work is done)."""
        self.destroyed = True
        self.device.streams.pop(self.sq, None)
        if self in self.ctx.streams:
            self.ctx.streams.remove(self)
        self.device.state.free_sq(self.sq)
        mem = self.device.state.mem
        ring = getattr(self, "args_ring", None)
        for addr in ([ring[0]] if ring else []) + getattr(self, "extra_args", []):
            mem.free(addr)
        RT.handles.remove(self.handle)
