"""Streams: an SQ on the device, task ids, and submission with back-pressure.

Two kinds of stream own an SQ, and both are ``SqStream``s:

* a **user stream** (``Stream``, this module): an eager SQ ring of ``rtsq_depth`` rows. Submitting
  a task writes one SQE at the ring's tail with the host time at which its doorbell rang. A full
  ring makes the host wait (the engine runs until a slot frees up), as the real runtime blocks a
  thread whose stream has ``maxTaskNumPerStream`` tasks in flight.
* a **capture stream** (``model.CaptureStream``): the hidden stream of a model that a capturing
  user stream's tasks are written into (``spec/aclgraph.md`` glossary). ``is_model`` tells them
  apart; the eager APIs refuse a model stream handle (207000) with ``resolve``.

While a user stream captures or updates a task group, ``submit`` hands the task to the object
that owns that state — the stream's ``CaptureLink`` (``capture.py``) or the ``TaskGroup`` it
updates (``taskgroup.py``) — through their ``submit`` methods, so this module imports neither.
A persistent stream bound to a built model (``aclmdlRIBindStream``, ``api_build.py``) hands its
tasks to the model stream it is bound to (``bound``, a ``model.CaptureStream``): they are kept in
the model and run at every execution, not now (chapter 06, ACL_STREAM_PERSISTENT).

``RT.stream_state_callbacks`` are the stream-state callbacks of ``aclrtRegStreamStateCallback``
(``StreamStateCallbackManager``, ``stream_state_callback_manager.cc``): every user and default
stream calls them once it is made and has its handle (CREATE_POST: ``api_stream.
create_stream_with_config``, ``Context`` for its default stream) and before it is torn down
(DESTROY_PRE, ``Stream.release``).
"""
from __future__ import annotations

import sys

from .. import errors as ERR
from ..device import engine as E
from ..device import launchjit as LJ
from ..device.kernels import TABLE as _TABLE
from ..device.sqe import OP_KERNEL as _OP_KERNEL
from .recording import REC
from .runtime import RT

_R_COLS = LJ.R_COLS
_R_ROOM = LJ.R_ROOM
_R_SEQ = LJ.R_SEQ


def ring_word(col: int, doc: str) -> property:
    """A stream field kept as word ``col`` of its SQ's row in ``DeviceState.rings``
    (``launchjit.R_*``), where the compiled launch path reads and advances it: a property over
    the device's word view (read and written as a Python int)."""
    def get(obj) -> int:
        return obj.device.state._rv[obj.sq * _R_COLS + col]

    def put(obj, value: int) -> None:
        obj.device.state._rv[obj.sq * _R_COLS + col] = value
    return property(get, put, doc=doc)


# aclrtCreateStreamWithConfig flags (acl_rt.h)
ACL_STREAM_FAST_LAUNCH, ACL_STREAM_FAST_SYNC, ACL_STREAM_PERSISTENT = 0x1, 0x2, 0x4
ACL_STREAM_HUGE, ACL_STREAM_CPU_SCHEDULE, ACL_STREAM_DEVICE_USE_ONLY = 0x8, 0x10, 0x20
STREAM_FLAGS = 0x3F
NO_SYNC_FLAGS = ACL_STREAM_PERSISTENT | ACL_STREAM_CPU_SCHEDULE | ACL_STREAM_DEVICE_USE_ONLY
"""Streams a synchronize skips (AICPU, persistent and device-only streams)."""
ACL_CONTINUE_ON_FAILURE, ACL_STOP_ON_FAILURE = 0, 1
ACL_RT_STREAM_STATE_CREATE_POST, ACL_RT_STREAM_STATE_DESTROY_PRE = 1, 2   # aclrtStreamState


def notify_state(stream, state: int) -> None:
    """Call every registered stream-state callback (a copy of the table: a callback may
    register or remove one). The stream gets a handle if it had none (a default stream)."""
    callbacks = RT.stream_state_callbacks
    if not callbacks:
        return
    if not stream.handle:
        RT.handles.add("stream", stream)
    for name, (fn, args) in list(callbacks.items()):
        try:
            fn(stream.handle, state, args)
        except Exception as e:                 # a user callback must not break the runtime
            print(f"npusim: stream state callback {name!r} raised {e!r}", file=sys.stderr)


EAGER_IN_CAPTURE_HOOKS: list = []
"""Callbacks ``hook(stream)`` told of a task submitted eagerly on a stream of a context with a
GLOBAL-mode capture in progress (the capture linter's un-joined-stream warning,
``analysis/lint.py``, registers one). Costs one test per eager submit."""


def refused(pos: int) -> int:
    """The ACL code of a submission: 0, or the code a refused task carries (``submit`` returns
    a negative code instead of a position)."""
    return -pos if pos < 0 else 0


class SqStream:
    """What every stream that owns an SQ has: user streams and capture streams alike."""

    __slots__ = ("ctx", "device", "sq", "id", "handle", "flags", "capture", "is_default",
                 "destroyed", "stop_on_failure", "bound", "label", "jd")
    is_model = False
    """True for a model's capture stream (``model.CaptureStream``)."""

    def __init__(self, ctx, device, flags: int = 0):
        self.ctx = ctx
        self.device = device
        self.flags = flags
        self.handle = 0
        self.capture = None            # CaptureLink while a user stream captures (capture.py)
        self.is_default = False
        self.destroyed = False
        self.stop_on_failure = False
        self.sq = -1
        self.id = -1
        self.bound = None              # the model stream a bound persistent stream writes into
        self.label = ""                # the user's name for it (``Device.stream(name=...)``)
        self.jd = device.state.jaddr   # the device's launchjit directory (the compiled calls)

    def set_label(self, name: str) -> None:
        """Name the stream: traces, plots and messages show the name."""
        self.label = str(name)

    def display_name(self) -> str:
        """The row name of traces and plots: the user's name, else ``describe()``."""
        return self.label or self.describe()


class Stream(SqStream):
    """A user stream: an eager SQ, its task ids, its task-group state and its args areas."""

    __slots__ = ("priority", "depth", "tg_status", "tg_update", "failure_mode",
                 "args_ring", "extra_args", "behind", "overflow_switch", "custom_tag",
                 "cache_op_info")

    def __init__(self, ctx, is_default: bool = False, flags: int = 0, priority: int = 0):
        super().__init__(ctx, ctx.device, flags)
        self.is_default = is_default
        self.priority = priority
        prof = self.device.profile
        self.depth = prof.max_task_num_per_stream
        self.sq = self.device.state.alloc_sq(prof.rtsq_depth, E.K_EAGER,
                                             prof.timing.sqe_dispatch_eager_ns)
        self.id = self.device.next_stream_id()
        self.task_seq = 0
        self.overflow_switch = 0          # aclrtSetStreamOverflowSwitch / FLOAT_OVERFLOW_CHECK
        self.custom_tag = 0               # ACL_STREAM_ATTR_USER_CUSTOM_TAG
        self.cache_op_info = 0            # ACL_STREAM_ATTR_CACHE_OP_INFO
        self.tg_status = 0             # task-group status: NONE / SAMPLE / UPDATE (taskgroup.py)
        self.tg_update = None          # the TaskGroup this stream is updating
        self.failure_mode = ACL_CONTINUE_ON_FAILURE   # its own mode (aclrtSetStreamFailureMode)
        self.args_ring = None          # [address, launches] of the per-stream args ring (args.py)
        self.extra_args: list = []     # allocations of launches with more than a slot of args
        self.behind = False            # the last full ring made the host wait (device behind)
        self.room = 0                  # submits that surely fit before the ring can be full
        self.stop_on_failure = ctx.stop_on_failure
        if self.stop_on_failure:
            self.device.state.sqs[self.sq, E.Q_STOP_ON_FAIL] = 1
        self.device.streams[self.sq] = self
        ctx.streams[self] = None

    def describe(self) -> str:
        kind = "default stream" if self.is_default else "stream"
        name = f" {self.label!r}" if self.label else ""
        return f"{kind} {self.id}{name} (device {self.device.id})"

    # ---- the SQ's words in ``DeviceState.rings`` (launchjit.R_*: the compiled path's too) ----
    task_seq = ring_word(_R_SEQ, "Tasks submitted on this stream (the next task id before its "
                                 "16-bit wrap).")
    room = ring_word(_R_ROOM, "Submits that surely fit before the ring can be full (the last "
                              "check's free slots).")

    # ---- submission ----
    @property
    def tail(self) -> int:
        return self.device.state.tail(self.sq)

    def submit(self, op: int, host_cost_ns: int, a0=0, a1=0, a2=0, a3=0, flag=0,
               blocks=0, then: int = 0) -> int:
        """Append one task; returns its position in the stream (in its capture stream while the
        stream captures: the task is recorded into the model, not run), or a negative ACL code
        when the runtime refuses the task (task-group and task-update rules).

        ``then``: how many zero-cost submits on this stream the caller makes right after this
        one, with nothing between (``aclmdlRIExecuteAsync``'s EndGraph wait after its
        MODEL_EXECUTE). When this task finds the ring full, the host waits once for their slots
        too, instead of once per task: the host clock ends where the separate waits leave it
        (the later tasks add no cost, so only the last wait counts), and this task's doorbell
        time, later by that one wait, changes nothing, because a full ring runs ``depth - 2 -
        then`` SQEs of at least ``sqe_dispatch_eager_ns`` each before it reaches the task
        (checked: that margin covers ``doorbell_ns``, else the waits stay separate).

        Every path but the compiled one voids the launch memo (``launchjit.forget``) before it
        changes anything: record and wait leave that to this method (api_event.py)."""
        if LJ.MEMO and (self.tg_update is not None or self.capture is not None
                        or self.bound is not None):
            LJ.forget()
        if self.tg_update is not None:
            return self.tg_update.submit_update(self, op, a0, a1, a2, a3, flag, blocks)
        if self.capture is not None:
            return self.capture.submit(self, op, a0, a1, a2, a3, flag, blocks)
        if self.bound is not None:              # kept in the built model (aclmdlRIBindStream)
            RT.host_ns += host_cost_ns
            return self.bound.append_task(op, a0, a1, a2, a3, flag, blocks)
        if self.ctx.capture_refs[0]:                       # a GLOBAL capture is in progress
            for hook in EAGER_IN_CAPTURE_HOOKS:
                hook(self)
        elif not REC.on and RT.threads <= 1 and (op != _OP_KERNEL or (
                0 <= a0 < len(_TABLE.entries) and _TABLE.entries[a0].func is not None)):
            # the compiled path (launchjit.eager_task; a kernel's body built): with room in the
            # staged ring, the host cost, the task id and the row in one call; else (-1)
            # nothing changed
            pos = LJ.eager_task(self.jd, self.sq, host_cost_ns, op, flag, blocks, a0, a1, a2, a3)
            if pos >= 0:
                return pos
        LJ.forget()                             # the Python path: a full ring runs the engine
        dev = self.device
        RT.host_ns += host_cost_ns
        st = dev.state
        rv, ri = st._rv, self.sq * _R_COLS      # this SQ's rings words (room, task_seq)
        if rv[ri + _R_ROOM] > 0:
            # the last check saw ``room`` free slots and an eager SQ's head only grows: the
            # ring cannot be full before they are used
            rv[ri + _R_ROOM] -= 1
        elif st.pending(self.sq) >= self.depth:
            if then and (st.access_log is not None or (self.depth - 2 - then)
                         * dev.timing.sqe_dispatch_eager_ns < dev.timing.doorbell_ns):
                then = 0
            while True:
                seq, waited = self.task_seq, True
                if self.behind and st.access_log is None:
                    # the device was behind at the last full ring: wait for the slot in one
                    # engine run, which ends where running up to the host's time and then
                    # waiting would. A slot already free by the host's time leaves the clock as
                    # it was: then run up to the host's time as that path does (what counts as
                    # pending depends on it)
                    before = RT.host_ns
                    dev.wait_sq(self.sq, self.tail - self.depth + 1 + then)
                    self.behind = RT.host_ns > before
                    if not self.behind:
                        dev.advance_to_host()
                else:
                    # the device has run everything due by now (exact, and it usually frees
                    # most of the ring); only a device that is really behind makes the host wait
                    dev.advance_to_host()
                    waited = self._slots_held(st) >= self.depth
                    if waited:
                        dev.wait_sq(self.sq, self.tail - self.depth + 1 + then)
                        self.behind = True
                if self.task_seq == seq:    # a wait freed this task's slot and ``then`` more
                    self.room = then if waited else 0
                    break
                # the runs above call the after-run hooks: a callback of theirs (or another
                # thread let in by a wait) pushed here, after its own count of the room. No
                # count is sure, and this task fits only if the ring still has a slot
                self.room = 0
                if self._slots_held(st) < self.depth:
                    break
        else:
            self.room = self.depth - st.pending(self.sq) - 1
        t = RT.host_ns + dev.timing.doorbell_ns
        rv, ri = st._rv, self.sq * _R_COLS      # (a wait may have grown ``rings``)
        seq = rv[ri + _R_SEQ]
        task_id = seq & 0xFFFF
        if RT.threads > 1:                  # aclrtGetThreadLastTaskId is per thread
            note_task(self, t, task_id)
        rv[ri + _R_SEQ] = seq + 1
        if REC.on:                      # analysis: host epoch and source site in a4/a5
            a4, a5 = REC.tag(dev)
            return st.push(self.sq, op, t, a0, a1, a2, a3, a4, a5, flag, blocks, task_id)
        return st.push(self.sq, op, t, a0, a1, a2, a3, 0, 0, flag, blocks, task_id)

    def _slots_held(self, st) -> int:
        """The ring slots this stream's tasks hold now: those not yet run, and the running one
        while it runs past the host's time (its slot is freed when it ends)."""
        return st.pending(self.sq) + (st.sqs[self.sq, E.Q_TIME] > RT.host_ns)

    def submit_kernel(self, a0: int, a1: int, a2: int, a3: int, blocks: int) -> int:
        """``submit(OP_KERNEL, host_kernel_launch_ns, a0, a1, a2, a3, 0, blocks)``: an eager
        launch for a caller that saw the stream neither capturing nor updating a task group and
        has already tried the compiled call (``api_launch.launch_kernel``: its
        ``launchjit.eager_kernel`` returned ``SLOW`` or did not apply), so this goes straight to
        ``submit``, whose own compiled attempt (``launchjit.eager_task``) is the one retry. ``a0``
        is a kernel's ``kid``: a kernel-table id, or -1 before a kernel is bound."""
        return self.submit(_OP_KERNEL, self.device.timing.host_kernel_launch_ns, a0, a1, a2, a3,
                           0, blocks)

    def set_stop_on_failure(self) -> None:
        self.stop_on_failure = True
        self.device.state.sqs[self.sq, E.Q_STOP_ON_FAIL] = 1

    def release(self) -> None:
        """Free the SQ and the args areas (after the stream's work is done)."""
        notify_state(self, ACL_RT_STREAM_STATE_DESTROY_PRE)
        self.destroyed = True
        self.device.streams.pop(self.sq, None)
        self.device.stream_gone(self)
        self.ctx.streams.pop(self, None)
        self.ctx.capturing.discard(self)
        self.device.sq_freed(self.sq, self.display_name())
        self.device.state.free_sq(self.sq)
        mem = self.device.state.mem
        for addr in ([self.args_ring[0]] if self.args_ring else []) + self.extra_args:
            mem.free(addr)
        self.args_ring, self.extra_args = None, []
        RT.handles.remove(self.handle)


# ---- the thread's last task (aclrtGetThreadLastTaskId) ----
def last_eager_task() -> tuple[int, int]:
    """(doorbell ns, task id) of the task submitted last on a user stream (the default stream
    included; runtime-owned SQs such as report releasers have no handle), read from each
    stream's last SQE; (-1, 0) before any."""
    best_t, best_id = -1, 0
    for dev in RT.devices.values():
        st = dev.state
        st.flush()                          # staged SQEs into their rings (as before a run)
        for s in dev.streams.values():
            if s.destroyed or (not s.handle and not s.is_default) or s.task_seq == 0:
                continue
            row = st.pool[st.row_of(s.sq, s.tail - 1)]
            t = int(row["t_submit"])
            if t > best_t:
                best_t, best_id = t, int(row["task_id"])
    return best_t, best_id


def note_task(s, t: int, task_id: int) -> None:
    """Note an eager task as the submitting thread's last (``GET_THREAD_TASKID_AND_STREAMID``
    keeps it in ``InnerThreadLocalContainer``). Called only while two or more threads use the
    runtime; the first such task first keeps the process's last task until then, which the
    first thread submitted (docs/fidelity.md row 296)."""
    if not s.handle and not s.is_default:
        return                              # a runtime-owned SQ: no user task
    if RT.pre_thread_last is None:
        RT.pre_thread_last = last_eager_task()
    RT.tls.last_task = (t, task_id)


# ---- stream handles as the APIs take them ----
def lookup(h):
    """(stream or None for NULL, code): only handle validation (107017)."""
    return RT.handles.get("stream", h)


def resolve(s):
    """A NULL stream is the current context's default stream; a model's own stream is refused
    (207000): (stream, code)."""
    ctx = RT.current_context
    if ctx is None:
        return None, ERR.ACL_ERROR_RT_CONTEXT_NULL
    if s is None:
        return ctx.default_stream, ERR.ACL_SUCCESS
    if s.is_model:
        return None, ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT   # a model (capture) stream
    return s, ERR.ACL_SUCCESS


def resolve_same_ctx(s):
    """As ``resolve``, plus 107003 for a stream of another context."""
    s, code = resolve(s)
    if code:
        return None, code
    if s.ctx is not RT.current_context:
        return None, ERR.ACL_ERROR_RT_STREAM_CONTEXT
    return s, ERR.ACL_SUCCESS
