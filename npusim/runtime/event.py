"""Events and notifies, with the semantics of each creation API (docs/eager_api_checks.md §6–7).

Three event behaviours, keyed by how the event was made:

* ``EX``     ``aclrtCreateEventExWithFlag``: a CUDA-like event. A record captures the work issued so
  far on its stream; a wait waits for the latest record at issue time; a wait before any record is a
  no-op; reset is refused (207000).
* ``LEGACY`` ``aclrtCreateEvent`` (rt flag 0xE): like EX, but a wait before any record is 107000.
* ``FLAG``   ``aclrtCreateEventWithFlag``: a sticky hardware flag with one id. A wait blocks the
  stream until the flag is set by a record; waits do not clear it; ``aclrtResetEvent`` does.

On the device every event is one sync slot. EX and LEGACY records write an increasing sequence
number and waits wait for ``slot >= seq`` of the record they bind to; FLAG records write 1 and waits
wait for ``slot >= 1``. Synchronize and query look at the latest record task only (its stream
position), so a reset never changes them.

A notify is a binary flag: a record sets it, a wait blocks until it is set and clears it.
"""
from __future__ import annotations

from ..device import engine as E
from .runtime import RT

EX, LEGACY, FLAG = "ex", "legacy", "flag"

ACL_EVENT_SYNC = 0x1
ACL_EVENT_CAPTURE_STREAM_PROGRESS = 0x2
RT_EVENT_DDSYNC = 0x4
ACL_EVENT_TIME_LINE = 0x8
ACL_EVENT_DEVICE_USE_ONLY = 0x10
ACL_EVENT_EXTERNAL = 0x20
ACL_EVENT_IPC = 0x40
LEGACY_RT_FLAG = RT_EVENT_DDSYNC | ACL_EVENT_TIME_LINE | ACL_EVENT_CAPTURE_STREAM_PROGRESS
_WAITABLE = ACL_EVENT_SYNC | RT_EVENT_DDSYNC | ACL_EVENT_EXTERNAL | ACL_EVENT_IPC


def note_slot_task(owner, stream, pos: int) -> None:
    """``owner`` (an Event or Notify) is named by a task at ``pos`` of ``stream``: an eager
    task fences the slot until it ran; a captured one ties it to the graph."""
    if stream.capture is not None:
        owner.models.add(stream.capture.model)
    else:
        owner.fences[stream] = pos


class Event:
    __slots__ = ("ctx", "device", "kind", "flag", "handle", "slot", "seq", "last", "destroyed",
                 "capture_model", "capture_event", "fences", "models", "record_flag",
                 "wait_flag")

    def __init__(self, ctx, kind: str, flag: int):
        self.ctx = ctx
        self.device = ctx.device
        self.kind = kind
        self.flag = flag
        self.handle = 0
        self.slot = self.device.new_slot(self)
        self.device.live_events += 1
        self.seq = 0                  # records issued (EX/LEGACY sequence numbers)
        self.last = None              # (stream, position) of the latest record task
        self.destroyed = False
        self.capture_model = None     # the model a capture bound this event to (capture.py)
        self.capture_event = None     # its CaptureEvent in that model
        self.fences: dict = {}        # stream -> position of its latest task naming the slot
        self.models: set = set()      # graphs that captured a task naming the slot
        # the record / wait flag (DEFAULT 0, EXTERNAL 1) fixed by the first record / wait: a
        # later call with the other flag is refused (ApiErrorDecorator::EventRecord, §9.4)
        self.record_flag = None
        self.wait_flag = None

    def note_task(self, stream, pos: int) -> None:
        """A task submitted on ``stream`` at ``pos`` names this slot: it stays allocated until
        that task ran (eager) or the graph it was captured into is destroyed."""
        note_slot_task(self, stream, pos)

    @property
    def has_wait_task(self) -> bool:
        """Events with only CAPTURE_STREAM_PROGRESS / TIME_LINE flags are markers: no wait."""
        return bool(self.flag & _WAITABLE)

    @property
    def new_mode(self) -> bool:
        return self.kind == EX

    @property
    def has_timeline(self) -> bool:
        return bool(self.flag & ACL_EVENT_TIME_LINE)

    def describe(self) -> str:
        api = {EX: "aclrtCreateEventExWithFlag", LEGACY: "aclrtCreateEvent",
               FLAG: "aclrtCreateEventWithFlag"}[self.kind]
        return f"event 0x{self.handle:x} ({api}, flag 0x{self.flag:x})"

    def record_value(self) -> int:
        """Value the next record writes (and remember it)."""
        if self.kind == FLAG:
            return 1
        self.seq += 1
        return self.seq

    def wait_value(self) -> int:
        """Value a wait issued now waits for: the latest record's (1 for FLAG events)."""
        return 1 if self.kind == FLAG else self.seq

    def record_done(self) -> bool:
        """Has the latest record task completed by the host's current time (the device has run
        up to it)? The engine may have run it already while its end lies in the host's future."""
        if self.last is None:
            return True
        stream, pos = self.last
        if stream.destroyed:
            return True
        return bool(self.device.state.sqs[stream.sq, E.Q_HEAD] > pos
                    and self.device.state.sync[self.slot, E.Y_TIME] <= RT.host_ns)

    def timestamp(self) -> int:
        """Simulated time (ns) the latest record completed; 0 without TIME_LINE."""
        return int(self.device.state.sync[self.slot, E.Y_TIME]) if self.has_timeline else 0

    def release(self) -> None:
        """Invalidate the handle; the slot is freed once no queued task or live graph names it
        (the runtime frees an event's resources only when its pending tasks finish)."""
        if self.destroyed:
            return
        self.destroyed = True
        self.device.live_events -= 1
        self.device.retire_slot(self.slot, self.fences.items(), self.models)
        self.fences, self.models = {}, set()


class SlotHolder:
    """A handle owning one sync slot of its device that tasks name (a notify, a counting
    notify): the slot is freed once no queued task or live graph names it. Subclasses declare
    their own fields in ``__slots__`` and add what their kind counts in ``release``."""
    __slots__ = ("ctx", "device", "handle", "slot", "destroyed", "fences", "models")

    def __init__(self, ctx):
        self.ctx = ctx
        self.device = ctx.device
        self.handle = 0
        self.slot = self.device.new_slot(self)
        self.destroyed = False
        self.fences: dict = {}        # stream -> position of its latest task naming the slot
        self.models: set = set()      # graphs that captured a task naming the slot

    def note_task(self, stream, pos: int) -> None:
        note_slot_task(self, stream, pos)

    def release(self) -> bool:
        """Invalidate the handle; the slot is freed once its queued tasks ran. True when this
        call released it (False: released already)."""
        if self.destroyed:
            return False
        self.destroyed = True
        self.device.retire_slot(self.slot, self.fences.items(), self.models)
        self.fences, self.models = {}, set()
        return True


class Notify(SlotHolder):
    __slots__ = ("flag",)

    def __init__(self, ctx, flag: int):
        super().__init__(ctx)
        self.flag = flag
        self.device.live_notifies += 1

    def release(self) -> bool:
        if not super().release():
            return False
        self.device.live_notifies -= 1
        return True

    def describe(self) -> str:
        return f"notify 0x{self.handle:x}"
