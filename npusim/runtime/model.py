"""Capture models (``aclmdlRI``) and their capture streams.

A *capture stream* is the hidden runtime stream a user stream's tasks are written into while it
captures (``spec/aclgraph.md`` glossary). Each one owns an SQ ring in the device's SQE pool, so
capture really writes SQEs and replay runs them from the model's rings: cascades and head
activation are data, not flags. Per task nothing but the 64-byte SQE is stored.

Model status follows ``RtCaptureModelStatus`` (§6.2): NONE → CAPTURE_ACTIVE → (CAPTURE_INVALIDATED)
→ READY, then UPDATING / FAULT around task updates.
"""
from __future__ import annotations

import bisect
import itertools
import sys
from collections import deque

from .. import errors as ERR
from ..device import engine as E
from ..progress import Progress
from ..device import launchjit as LJ
from ..device import sqe as S
from ..device.sqe import OP_KERNEL as _OP_KERNEL
from ..device.kernels import TABLE as _TABLE
from ..device.state import _PACK_INTO
from .recording import REC
from .device import DeadlockError
from .runtime import RT
from .stream import SqStream, ring_word


_M_CASCADE = LJ.M_CASCADE
_M_COLS = LJ.M_COLS
_M_LAST = LJ.M_LAST
_M_NEXT = LJ.M_NEXT
_M_TASK_NS = LJ.M_TASK_NS
_R_BASE = LJ.R_BASE
_R_CAP = LJ.R_CAP
_R_STAGED = LJ.R_STAGED
_R_TAIL = LJ.R_TAIL
_R_COLS = LJ.R_COLS
_R_COUNT = LJ.R_COUNT
_R_LAST_OP = LJ.R_LAST_OP
_R_MODEL = LJ.R_MODEL
_R_SQE_NUM = LJ.R_SQE_NUM


def model_word(col: int, doc: str) -> property:
    """A capture-model field kept as word ``col`` of its row in ``DeviceState.mseq``
    (``launchjit.M_*``), where the compiled launch path advances it (as ``stream.ring_word``)."""
    def get(obj) -> int:
        return obj.device.state._mv[obj.mrow * _M_COLS + col]

    def put(obj, value: int) -> None:
        obj.device.state._mv[obj.mrow * _M_COLS + col] = value
    return property(get, put, doc=doc)


NONE, CAPTURE_ACTIVE, CAPTURE_INVALIDATED, UPDATING, FAULT, READY = range(6)
CAPTURING = (CAPTURE_ACTIVE, CAPTURE_INVALIDATED)   # CaptureModel.is_capturing
STREAM_ACTIVE, STREAM_INVALIDATED = 1, 2    # aclmdlRICaptureStatus of a user stream (NONE = 0)
STATUS_NAMES = ("NONE", "CAPTURE_ACTIVE", "CAPTURE_INVALIDATED", "UPDATING", "FAULT", "READY")

_model_ids = itertools.count(1)
_sw_event_ids = itertools.count(0)     # software capture events' pool ids (dumps' event_id)
SW_EVENT_BYTES = 8                     # a software capture event's slot (its task writes 1 byte)
ARGS_CHUNK = 1 << 20            # largest args chunk; chunks start at 4 KiB and double
RUNS_TRIM_AT = 64               # CaptureModel.note_run: runs kept before completed ones go
INITIAL_RING = 64               # SQEs a root model's capture stream holds before it first grows
INITIAL_RING_SUB = 8            # ... and a sub-model's: a cond branch holds a few tasks, and a
                                # SWITCH may have 1,000 of them (64-SQE rings: 4 MiB of pool
                                # rows, a cold page each evaluation; 8: 512 KiB)


def _RUN_POS(run: int) -> int:
    """A run's first position (``CaptureStream.seq_runs``)."""
    return run & 0xFFFFFFFF


class CaptureStream(SqStream):
    """One hidden stream of a model: an SQ ring plus what EndCapture validation needs. It is an
    ``SqStream`` (``is_model``), so a user API handed its handle sees a stream it refuses.
    Callers hold the runtime lock (every facade call does: architecture.md §16)."""

    __slots__ = ("model", "original", "head", "added", "user_stream", "parent", "last_level",
                 "depth", "state", "last_event", "task_group", "_ring_base", "task_handles",
                 "seq_runs")
    is_model = True

    def __init__(self, model: "CaptureModel", original: bool, head: bool, user_stream=None,
                 added: bool = False, parent: "CaptureStream | None" = None):
        dev = model.device
        super().__init__(model.ctx, dev)
        self.model = model
        self.original = original
        self.head = head
        self.added = added
        self.user_stream = user_stream
        self.parent = parent
        self.last_level = True
        self.depth = model.capture_depth            # logical depth (cascade trigger)
        first = INITIAL_RING_SUB if model.sub else INITIAL_RING
        capacity = min(first, self.depth)
        self.state = dev.state
        self.sq = dev.state.alloc_sq(capacity, E.K_MODEL, dev.timing.sqe_dispatch_graph_ns)
        self.capacity = capacity                    # ring rows held now; grows on demand
        dev.state._rv[self.sq * _R_COLS + _R_MODEL] = model.mrow
        self.id = dev.next_stream_id()
        self.sqe_num = 0            # captureSqeNum: SQEs counted for the cascade trigger
        self.task_count = 0         # tasks written (task ids)
        self.last_op = -1           # opcode of the last task (join-back rule)
        # (these three and ``capacity`` are words of the SQ's ``rings`` row: properties above)
        self.last_event = None      # capture event of the last task when it is a record
        self.task_group = None      # open task group (task groups)
        self._ring_base = -1        # pool row of position 0, once capture has ended
        self.task_handles: dict = {}  # position -> task handle (aclmdlRIGetTasksByStream)
        # this stream's runs of its model's capture order (aclmdlRITaskGetSeqId, §13.3):
        # ``first seq id << 32 | first position`` of each run of consecutive tasks, in order
        self.seq_runs: list = []
        model.streams.append(self)
        dev.streams_by_sq_model[self.sq] = self

    def describe(self) -> str:
        what = "origin" if self.original else ("added" if self.added else "joined")
        return f"capture stream {self.id} ({what}, model {self.model.id})"

    def display_name(self) -> str:
        """Trace rows: the user stream's name with the model (``comm (model 3)``), else
        ``describe()``."""
        u = self.user_stream
        label = self.label or (u.label if u is not None else "")
        return f"{label} (model {self.model.id})" if label else self.describe()

    @property
    def tail(self) -> int:
        return self.task_count

    # ---- the SQ's words in ``DeviceState.rings`` (launchjit.R_*: the compiled path's too) ----
    task_count = ring_word(_R_COUNT, "Tasks written (task ids).")
    capacity = ring_word(_R_CAP, "Ring rows held now (grows on demand up to ``depth``).")
    sqe_num = ring_word(_R_SQE_NUM, "captureSqeNum: SQEs counted for the cascade trigger.")
    last_op = ring_word(_R_LAST_OP, "Opcode of the last task (join-back rule), -1 before any.")

    def ring_base(self) -> int:
        """Pool row of position 0 of the ring (a capture stream never wraps, and once its
        capture has ended its ring no longer moves)."""
        if self._ring_base < 0:
            self._ring_base = self.state.row_of(self.sq, 0)
        return self._ring_base

    def append_task(self, op: int, a0=0, a1=0, a2=0, a3=0, flag=0, blocks=0) -> int:
        """A task of the persistent user stream bound to this model stream (``Stream.submit``):
        its position, or -507002 (RT_ERROR_STREAM_FULL) once the ring holds ``depth`` SQEs (a
        model stream never wraps)."""
        if self.task_count >= self.depth:
            return -ERR.ACL_ERROR_RT_STREAM_TASK_FULL
        RT.tls.last_bound_task = (RT.host_ns + self.device.timing.doorbell_ns,
                                  self.task_count & 0xFFFF)
        return self.append(op, 1, a0, a1, a2, a3, flag, blocks)

    def append(self, op: int, sqe_count: int = 1, a0=0, a1=0, a2=0, a3=0, flag=0,
               blocks=0) -> int:
        """Write one task's SQE at the tail; returns its position (= its index in the stream:
        a capture stream is written once, from position 0, and never wraps)."""
        st = self.state
        q = self.sq
        i = q * _R_COLS
        pos = st._rv[i + _R_COUNT]                          # task_count
        if pos >= st._rv[i + _R_CAP]:                       # capacity
            self._grow(pos)
        a5 = REC.site_id(2) if REC.on else 0       # analysis: the source site in a5
        if op == _OP_KERNEL:                # push builds a lazy kernel body before its SQE
            st.push(q, op, 0, a0, a1, a2, a3, 0, a5, flag, blocks, pos & 0xFFFF)
        else:                               # DeviceState.push inline: the row at base + pos
            rv = st._rv                     # (a capture stream never wraps: tail == pos)
            if not rv[i + _R_STAGED]:
                st.stage(q)
            _PACK_INTO(st.pool, (rv[i + _R_BASE] + pos) << 6, op, flag, blocks, pos & 0xFFFF,
                       a0, a1, a2, a3, 0, a5, 0)
            rv[i + _R_TAIL] = pos + 1
        return self._appended(pos, op, sqe_count)

    def append_nops(self, n: int) -> int:
        """``n`` NOP tasks at the tail (a task group's prefetch NOPs): the rows and bookkeeping
        of ``n`` ``append(OP_NOP)`` calls in one. The caller made sure none of them would
        cascade (``capture.append_nops``). Returns the first one's position."""
        pos = self.task_count
        while pos + n > self.capacity:
            self._grow(pos + n - 1)
        a5 = REC.site_id(2) if REC.on else 0       # analysis: the source site in a5
        st = self.state
        push, q = st.push, self.sq
        for p in range(pos, pos + n):
            push(q, S.OP_NOP, 0, 0, 0, 0, 0, 0, a5, 0, 0, p & 0xFFFF)
        m = self.model
        if m.seq_last is not self:           # _appended for n tasks
            self.seq_runs.append(m.next_seq << 32 | pos)
            m.seq_last = self
        m.next_seq += n
        self.task_count = pos + n
        self.sqe_num += n
        self.last_op = S.OP_NOP
        self.last_event = None
        return pos


    def append_kernel(self, kid: int, a1: int, a2: int, a3: int, blocks: int) -> int:
        """``append(OP_KERNEL, 1, kid, a1, a2, a3, 0, blocks)`` with ``model.capture_task_ns``
        on the host clock first: the captured launch's hot path (the same row, the same
        bookkeeping). Nothing recorded, the body built, the ring staged and holding the
        position: one compiled call (``launchjit.capture_kernel``); else the Python path.
        ``kid`` is a kernel's: a table id, or -1 before a kernel is bound, whose entry test
        reads the last entry and at most calls ``TABLE.ensure(-1)``, a no-op (as
        ``Stream.submit_kernel``)."""
        if not REC.on and _TABLE.entries[kid].func is not None:
            r = LJ.capture_kernel(self.jd, self.sq, kid, a1, a2, a3, blocks)
            if r >= 0:
                pos = r & 0xFFFFFFFF
                if r >> 62:                         # a new run of the model's capture order
                    self.seq_runs.append(r ^ LJ.NEW_RUN)
                if self.last_event is not None:
                    self.last_event = None
                return pos
        RT.host_ns += self.model.capture_task_ns
        return self.append(_OP_KERNEL, 1, kid, a1, a2, a3, 0, blocks)

    def _grow(self, pos: int) -> None:
        """Room for the task at ``pos``: the ring grows fourfold up to its depth (a capture
        stream starts small, ``CaptureStream`` rings are sized by the tasks captured)."""
        if pos >= self.depth:
            raise RuntimeError(f"{self.describe()} overflowed its {self.depth}-SQE ring")
        self.capacity = min(self.capacity * 4, self.depth)
        self.state.grow_sq(self.sq, self.capacity)
        self._ring_base = -1        # the ring moved (a bound stream's appends after its capture)

    def _appended(self, pos: int, op: int, sqe_count: int) -> int:
        """The bookkeeping of a task just written at ``pos`` (both append paths): the count,
        the model's global capture order (``aclmdlRITaskGetSeqId``), SQEs toward the cascade
        limit, and the last task (a capture record sets ``last_event`` after appending, §4.3).
        (The words of ``rings`` and ``mseq`` are read here without their properties.)"""
        st = self.state
        q = self.sq
        rv = st._rv
        i = q * _R_COLS
        rv[i + _R_COUNT] = pos + 1
        m = self.model
        mv = st._mv
        j = m.mrow * _M_COLS
        seq = mv[j + _M_NEXT]
        if mv[j + _M_LAST] != q:             # a new run of the model's capture order
            self.seq_runs.append(seq << 32 | pos)
            mv[j + _M_LAST] = q
        mv[j + _M_NEXT] = seq + 1
        rv[i + _R_SQE_NUM] += sqe_count
        rv[i + _R_LAST_OP] = op
        self.last_event = None
        return pos


class CaptureEvent:
    """An internal event a capture records and waits on (§9.2), reset at the end of each replay.

    Hardware (``hardware``): a sync slot in the model (``slot``), set by an EVENT_RECORD task,
    waited by EVENT_WAIT tasks, cleared by EVENT_RESET. Software (``Event::RecordSoftwareEvent``,
    ``event_capture.cc``): a byte of device memory (``addr``) that a MEM_WRITE_VALUE of 1 records,
    a MEM_WAIT_VALUE (GEQ 1, no reset) waits on and a MEM_WRITE_VALUE of 0 resets; the tasks
    keep the type names EVENT_RECORD / EVENT_WAIT / EVENT_RESET (:meth:`CaptureModel.event_task`).
    ``id`` is the event id dumps print: the slot, or the software event's pool id."""

    __slots__ = ("model", "user_event", "hardware", "slot", "addr", "id", "recorded", "waited_by")

    def __init__(self, model: "CaptureModel", user_event, hardware: bool = True):
        self.model = model
        self.user_event = user_event
        self.hardware = hardware
        if hardware:                    # model.new_slot(), inline
            self.slot = self.id = slot = model.device.state.alloc_slot()
            model.slots.append(slot)
            self.addr = 0
        else:                           # AllocExpandingPoolEvent: a zeroed byte, model-owned
            self.slot = -1
            self.addr = model.args_alloc(SW_EVENT_BYTES)
            model.device.state.mem.view(self.addr, SW_EVENT_BYTES)[:] = 0
            self.id = next(_sw_event_ids)
            model.sw_events[self.addr] = self
        self.recorded = False
        self.waited_by: set = set()      # capture streams whose tasks wait on it
        model.capture_events.append(self)

    def fields(self, kind: int) -> dict:
        """The SQE (opcode and operands) of this event's record / wait / reset task
        (``kind``: OP_EVENT_RECORD / OP_EVENT_WAIT / OP_EVENT_RESET)."""
        if self.hardware:
            return dict(op=kind, a0=self.slot, a1=0 if kind == S.OP_EVENT_RESET else 1)
        if kind == S.OP_EVENT_WAIT:      # MEM_WAIT_SQE_NUM (4) SQEs on the chip: one here
            return dict(op=S.OP_MEM_WAIT_VALUE, a0=self.addr, a1=1, a2=1, flag=S.WAIT_GEQ)
        return dict(op=S.OP_MEM_WRITE_VALUE, a0=self.addr,
                    a1=1 if kind == S.OP_EVENT_RECORD else 0, a2=1)


class CaptureModel:
    """A model (``aclmdlRI``): its capture streams and events, status, execution bookkeeping,
    args, task groups and cond handles. Every field is declared here."""

    __slots__ = ("ctx", "device", "id", "handle", "sub", "parent", "status", "sw_sq",
                 "capture_depth", "streams", "capture_events",
                 "user_events", "participants", "added", "exe_notifies", "endgraph_slot",
                 "has_endgraph", "built", "sqcq", "runs", "in_flight", "queued", "engine_id",
                 "name", "args_chunks",
                 "_args_pos", "_args_size", "destroyed", "task_groups", "taskgrp_streams",
                 "taskgrp_err", "cond_handles", "capture_progress", "begun_at", "invalidated_by",
                 "staged_updates", "last_debug_lines", "slots", "last_run_stream",
                 "mrow", "task_cfgs", "ext_records", "ext_waits",
                 "destroy_callbacks", "sw_events", "_default_conds", "_runs_trim_at",
                 "inner_tasks", "disabled_rows")

    normal = False
    """True for a model built with aclmdlRIBuildBegin (``BuildModel``, RT_MODEL_NORMAL); a
    capture model (RT_MODEL_CAPTURE_MODEL) otherwise."""

    def __init__(self, ctx, sub: bool = False, parent=None):
        dev = ctx.device
        self.ctx = ctx
        self.device = dev
        self.id = next(_model_ids)
        self.handle = 0
        self.sub = sub
        self.parent = parent
        self.status = NONE
        self.sw_sq = dev.profile.software_sq
        self.capture_depth = (dev.profile.capture_sq_depth_swsq if self.sw_sq
                              else dev.profile.rtsq_depth)
        self.mrow = dev.state.alloc_mrow()     # its mseq row (properties below)
        # a capture stream cascades once it holds this many SQEs (§5)
        self.cascade_at = (self.capture_depth - dev.profile.capture_reserve
                           - dev.profile.expand_stream_rsv_task_num)
        self.capture_task_ns = dev.timing.host_capture_task_ns
        self.streams: list[CaptureStream] = []
        self.capture_events: list[CaptureEvent] = []
        self.sw_events: dict = {}              # address -> software CaptureEvent (§9.2)
        self.user_events: set = set()          # user events bound to this capture
        self.participants: set = set()         # user streams in the capture (origin/joined/added)
        self.added: dict = {}                  # user stream -> its capture streams
        self.exe_notifies: dict = {}           # added stream -> (before, after) launch notifies
        self.slots: list[int] = []             # sync slots the model owns (freed with it)
        self.endgraph_slot = self.new_slot()
        self.has_endgraph = False
        self.built = False                     # SQ/CQ taken from the device pool
        self.sqcq = 0
        self.runs: deque = deque()             # (exe stream, position of its EndGraph wait) of
        self.last_run_stream = None            # launches not yet seen complete; the latest one's
        self._runs_trim_at = RUNS_TRIM_AT      # note_run drops completed runs at this length
        self.in_flight = 0                     # its launches the device's launch index has not
                                               # seen complete (Device.see_launches_done)
        self.queued = [False, False]           # on the device's idle / busy recycling heaps
        self.engine_id = -1
        self.name = ""
        self.args_chunks: list[int] = []
        self._args_pos = self._args_size = 0
        self.destroyed = False
        self.task_groups: list = []            # closed groups, owned by the model
        self.taskgrp_streams: set = set()      # capture streams with an open group
        self.taskgrp_err = 0                   # sticky task-group error code
        self.cond_handles: list = []
        self._default_conds = None             # default_conds(), None until asked or changed
        self.capture_progress = Progress(f"capturing model {self.id}", "task")
        self.begun_at = REC.site(1)            # the capture call's source line (linter)
        self.invalidated_by = None             # the call that invalidated the capture (linter)
        self.staged_updates: dict = {}         # (capture stream, pos) -> row (aclmdlRIUpdate)
        self.last_debug_lines: list = []       # what the last aclmdlRIDebugPrint printed
        # capture order across the model's streams (aclmdlRITaskGetSeqId, §13.3): one counter,
        # kept as runs of consecutive tasks in each capture stream (``CaptureStream.seq_runs``)
        # (``next_seq`` and ``seq_last`` are words of the model's ``mseq`` row, ``mrow``: the
        # compiled launch path advances them)
        self.task_cfgs: dict = {}              # (capture stream, pos) -> TaskCfg of a kernel
        # (capture stream, pos) of the tasks the runtime writes for a captured host function or
        # blocking callback: the runtime's inner event's wait and reset (TaskOwner RT_TASK_INNER,
        # event_task.cc:249-252, 376-379), whose type the task APIs give as DEFAULT
        self.inner_tasks: set = set()
        # (capture stream, pos) -> the task's own SQE before aclmdlRITaskDisable: a disabled
        # task keeps its type and parameters (only its update flag changes, api_impl.cc:
        # 9764-9790) while npusim's SQE is a NOP (tasks.Task.info)
        self.disabled_rows: dict = {}
                                               # launched with a config (§13.4)
        # external record / wait tasks (§9.4): user event -> (capture stream, pos), rebound to
        # the event at every launch (api_mdl.refresh_external)
        self.ext_records: dict = {}
        self.ext_waits: dict = {}
        self.destroy_callbacks: list = []      # (func, user data) (aclmdlRIDestroyRegister...)
        dev.models[self] = None
        # engine ids are given at the next publish (the model's first build)

    # ---- the model's words in ``DeviceState.mseq`` (launchjit.M_*) ----
    cascade_at = model_word(_M_CASCADE,
                            "A capture stream cascades once it holds this many SQEs (§5).")
    capture_task_ns = model_word(_M_TASK_NS, "The host cost of one captured task.")
    next_seq = model_word(_M_NEXT,
                          "The capture-order sequence id of the next task (aclmdlRITaskGetSeqId).")

    @property
    def seq_last(self):
        """The capture stream that wrote the model's last task (None before any)."""
        q = self.device.state._mv[self.mrow * _M_COLS + _M_LAST]
        return None if q < 0 else self.device.streams_by_sq_model.get(q)

    @seq_last.setter
    def seq_last(self, cs) -> None:
        self.device.state._mv[self.mrow * _M_COLS + _M_LAST] = -1 if cs is None else cs.sq

    def new_slot(self) -> int:
        """A sync slot owned by this model (capture events, EndGraph, internal notifies)."""
        slot = self.device.state.alloc_slot()     # Device.new_slot with no owner, inline
        self.slots.append(slot)
        return slot

    def event_task(self, row) -> tuple[int, "CaptureEvent | None"]:
        """The opcode a task of this model reports and its capture event: a software capture
        event's MEM_WRITE_VALUE / MEM_WAIT_VALUE reports EVENT_RECORD / EVENT_RESET / EVENT_WAIT
        (``typeName``, ``event_capture.cc``); a hardware one's EVENT_* row its own opcode."""
        op = int(row["op"])
        if op in (S.OP_MEM_WRITE_VALUE, S.OP_MEM_WAIT_VALUE):
            ce = self.sw_events.get(int(row["a0"]))
            if ce is None:
                return op, None
            if op == S.OP_MEM_WAIT_VALUE:
                return S.OP_EVENT_WAIT, ce
            return (S.OP_EVENT_RECORD if int(row["a1"]) else S.OP_EVENT_RESET), ce
        if op in (S.OP_EVENT_RECORD, S.OP_EVENT_WAIT, S.OP_EVENT_RESET):
            return op, next((c for c in self.capture_events if c.slot == int(row["a0"])), None)
        return op, None

    # ---- status ----
    @property
    def is_capturing(self) -> bool:
        return self.status in CAPTURING

    def terminate_capture(self) -> None:
        """TerminateCapture: ACTIVE -> INVALIDATED (sticky), only from ACTIVE."""
        if self.status == CAPTURE_ACTIVE:
            self.status = CAPTURE_INVALIDATED
            self.invalidated_by = REC.site(1)       # the call that did it (capture linter)

    def describe(self) -> str:
        return f"model {self.id}{' (sub-model)' if self.sub else ''}"

    # ---- structure ----
    @property
    def heads(self) -> list[int]:
        return [cs.sq for cs in self.streams if cs.head]

    def seq_id(self, cs: CaptureStream, pos: int) -> int:
        """The capture-order sequence id of the task at ``pos`` of ``cs`` (§13.3)."""
        runs = cs.seq_runs
        i = bisect.bisect_right(runs, pos, key=_RUN_POS) - 1      # the run holding pos
        return -1 if i < 0 else (runs[i] >> 32) + pos - (runs[i] & 0xFFFFFFFF)

    def origin_stream(self) -> CaptureStream:
        """The last-level original capture stream (where EndGraph and event resets go)."""
        return next(cs for cs in reversed(self.streams) if cs.original and cs.last_level)

    def all_models(self) -> list["CaptureModel"]:
        """This model and every descendant sub-model (through cond handles)."""
        out = [self]
        for ch in self.cond_handles:
            for m in ch.sub_models:
                out.extend(m.all_models())
        return out

    def default_conds(self) -> list:
        """The ASSIGN_DEFAULT cond handles with a cond task in this model or a sub-model below it
        (§13.11: condHandleTaskMap_), which every launch writes. Made once and kept until a cond
        task is added to or dropped from this model's tree (:meth:`conds_changed`): a launch pays
        nothing per sub-model, however many branches the graph has."""
        if self._default_conds is None:
            self._default_conds = [ch for m in self.all_models() for ch in m.cond_handles
                                   if ch.assigned_at_launch()]
        return self._default_conds

    def conds_changed(self) -> None:
        """A cond handle of this model gained or lost its sub-models: this model's and every
        ancestor's :meth:`default_conds` are made again when next asked."""
        m = self
        while m is not None:
            m._default_conds = None
            m = m.parent

    def n_tasks(self) -> int:
        return sum(cs.task_count for cs in self.streams)

    # ---- args that outlive the launch call (captured launches re-read them at every replay) ----
    def args_alloc(self, nbytes: int) -> int:
        nbytes = -(-max(nbytes, 8) // 8) * 8
        if not self.args_chunks or self._args_pos + nbytes > self._args_size:
            self._args_size = max(min(4096 << len(self.args_chunks), ARGS_CHUNK), nbytes)
            self.args_chunks.append(self.device.state.mem.malloc(self._args_size))
            self._args_pos = 0
        addr = self.args_chunks[-1] + self._args_pos
        self._args_pos += nbytes
        return addr

    # ---- execution bookkeeping ----
    def note_run(self, s, pos: int) -> None:
        """A launch on ``s`` whose EndGraph wait is at ``pos``: the newest run in flight. The
        completed runs at the front are dropped each time the list doubles (at least
        ``RUNS_TRIM_AT``), so a launch pays O(1) amortised however many are queued."""
        runs = self.runs
        if len(runs) >= self._runs_trim_at:
            self.running()
            self._runs_trim_at = max(RUNS_TRIM_AT, 2 * len(runs))
        runs.append((s, pos))
        self.last_run_stream = s
        self.device.note_launch(self, s, pos)

    def running(self) -> bool:
        """Has some launch not yet passed its EndGraph wait (refCount_ != 0)?"""
        sqs, runs = self.device.state.sqs, self.runs
        while runs:                     # launch order: drop the completed ones at the front
            s, p = runs[0]
            if not s.destroyed and sqs[s.sq, E.Q_HEAD] <= p:
                return True
            runs.popleft()
        return False

    def wait_oldest_run(self) -> str | None:
        """Wait for the oldest launch in flight (after :meth:`running` said there is one): None
        once it completed, else the deadlock diagnosis of why it never can."""
        s, p = self.runs[0]
        try:
            self.device.wait_sq(s.sq, p + 1)
        except DeadlockError as e:
            return e.diagnosis
        return None

    def release_resources(self) -> None:
        """Give the SQ/CQ pairs back to the device pool (destroy, update, recycling)."""
        if self.built:
            self.device.sqcq_used -= self.sqcq
            self.sqcq = 0
            self.built = False
            self.device.set_built(self, False)

    def destroy(self) -> None:
        """aclmdlRIDestroy's effect (the caller checked it may): the handle dies, then ``free``."""
        RT.handles.remove(self.handle)
        self.free()

    def free(self) -> None:
        """~CaptureModel: streams, sync slots, args, handles it gave out, task groups, cond
        handles and sub-models. The model is not running: nothing queued names its SQs or
        slots, except the notifies of added streams (fenced at their streams' tails)."""
        if self.destroyed:
            return
        dev = self.device
        for s in self.participants:            # streams still capturing into it: invalidated
            if s.capture is not None and s.capture.model is self:
                s.capture.status = STREAM_INVALIDATED
        self.release_resources()
        for ch in self.cond_handles:
            for m in ch.sub_models:
                m.free()
            ch.release()
        self.cond_handles = []
        for cs in self.streams + self.detached_streams():
            if cs.user_stream is not None and cs.user_stream.bound is cs:
                cs.user_stream.bound = None         # a bound persistent stream is free again
            dev.streams_by_sq_model.pop(cs.sq, None)
            dev.sq_freed(cs.sq, cs.display_name())
            dev.state.free_sq(cs.sq)
            for h in cs.task_handles.values():
                RT.handles.remove(h)
            cs.task_handles = {}
            if cs.handle:
                RT.handles.remove(cs.handle)
            cs.destroyed = True
        for g in self.task_groups:
            RT.handles.remove(g.handle)
        self.task_groups = []
        for a in self.args_chunks:
            dev.state.mem.free(a)
        self.args_chunks = []
        fences = [(s, s.tail - 1) for s in self.exe_notifies if not s.destroyed]
        for slot in self.slots:
            dev.retire_slot(slot, fences)
        self.slots = []
        self.streams.clear()
        self.detached_streams().clear()
        self.destroyed = True
        dev.state.free_mrow(self.mrow)
        if self.sub:
            RT.handles.remove(self.handle)
        dev.remove_model(self)        # no publish: nothing queued names its id (not running)
        callbacks, self.destroy_callbacks = self.destroy_callbacks, []
        for fn, user_data in callbacks:            # Model::ModelDestroyCallback, last step
            try:
                fn(user_data)
            except Exception as e:                 # a user callback must not break a destroy
                print(f"npusim: model destroy callback raised {e!r}", file=sys.stderr)


    def detached_streams(self) -> list:
        """Model streams no longer in ``streams`` but still owning an SQ (unbound streams of a
        built model); none for a capture model."""
        return []


class BuildModel(CaptureModel):
    """A model built with aclmdlRIBuildBegin (RT_MODEL_NORMAL, ``spec/aclgraph.md`` §1.13): no
    capture; each persistent user stream bound to it (aclmdlRIBindStream) writes its tasks into
    a model stream of its own (``bindings``); aclmdlRIEndTask adds the EndGraph, aclmdlRIBuildEnd
    makes it READY (load complete); execution is the capture models' (``api_mdl``)."""

    __slots__ = ("bindings", "unbound")
    normal = True

    def __init__(self, ctx):
        super().__init__(ctx)
        self.bindings: dict = {}       # bound user stream -> its model stream
        self.unbound: list = []        # model streams of unbound user streams (SQs kept: a
                                       # STREAM_ACTIVE/SWITCH recorded elsewhere may name them)

    def describe(self) -> str:
        return f"model {self.id} (built)"

    def detached_streams(self) -> list:
        return self.unbound


def sqe_count(op: int, flag: int = 0) -> int:
    """SQEs a task occupies for the cascade trigger (§3.1: kernel 1, cond IF/SWITCH 2, WHILE 3)."""
    if op == S.OP_COND_FIRST:
        return 3 if flag == 1 else 2
    return 1
