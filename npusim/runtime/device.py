"""A device as the host runtime sees it: contexts, streams, events, memory, and observation.

``Device`` owns the ``DeviceState`` (the engine's arrays) and is where "observing the device"
happens: synchronizing a stream, an event or the whole device, querying, or copying back to the
host runs the engine just far enough — up to the host's current time, or until the awaited work
is done — and then moves the host clock to when that work finished. Work is lazy but exact: it
always runs in simulated-time order, whenever it actually runs.
"""
from __future__ import annotations

import heapq
import itertools
import threading
from collections import deque

import numpy as np

from .. import errors as ERR
from ..device import engine as E
from ..device import sqe as S
from ..device.kernels import TABLE, UNIT_AIC, UNIT_AICPU
from ..device.launchjit import forget as _forget
from ..device.memory import DEV_STRIDE, may_reserve
from ..device.recording import OBS_ALL, OBS_SQ
from ..device.sqe import SQE_STRUCT
from ..device.state import DeviceState
from ..device.timing import T_AIC_CORES, T_AIV_CORES
from .recording import REC
from .runtime import RT

AFTER_RUN_HOOKS: list = []
"""Callbacks ``hook(device)`` run after every engine run of a device, under the runtime lock;
registered by ``runtime.api_function`` (the device printf drain, then the exception callbacks
of new kernel faults)."""
STALL_HOOKS: list = []
"""Callbacks ``hook(device) -> bool`` asked when a host wait finds the device stalled, before it
is called a deadlock: True when the hook let work proceed (``runtime.api_callback`` runs the
host functions the device is waiting on, as the runtime's callback thread would)."""
WAIT_EXPLAINERS: list = []
"""Callbacks ``hook(device, sq, pos) -> str`` asked by the deadlock diagnosis what a stream
parked on a memory value (the MEM_WAIT_VALUE at ``pos`` of SQ ``sq``) waits for: the cause and
its fix, or ``""`` when the wait is not theirs (``runtime.api_callback``: a blocking callback
whose report thread has exited or stopped serving)."""
SLOT_EXPLAINERS: list = []
"""Callbacks ``hook(device, slot) -> str | (str, code)`` asked by the deadlock diagnosis what a wait on a sync
slot that no queued task of this device records waits for, or ``""`` when the slot is not
theirs (``runtime.peer``: a notify recorded on another device, and who would record it)."""
_INF, _STOP_NONE, _STOP_SQ_POS = int(E.INF), E.STOP_NONE, E.STOP_SQ_POS
_R_IDLE, _R_DEADLOCK, _Q_HEAD, _Q_TIME = E.R_IDLE, E.R_DEADLOCK, E.Q_HEAD, E.Q_TIME
PAYLOAD_DEPTH = 1 << 16
"""Rows of a device's task-update payload ring (``UpdatePayload``)."""


def fault_code(f) -> int:
    """The code a synchronize reports for a device fault: a vector-core kernel exception is
    507035 (what the runtime's ErrorOP sample gets), a cube/mix kernel 507015 (eager_api_checks
    §4.7); a bad address in a copy or value task is reported as a vector-core exception too."""
    if f.kind == E.F_BAD_OP:
        return ERR.ACL_ERROR_RT_INTERNAL_ERROR
    if f.kind == E.F_RUNAWAY:              # the real graph would never end: a sync timeout
        return ERR.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    if 0 <= f.kernel < len(TABLE.entries) and TABLE.entries[f.kernel].unit == UNIT_AIC:
        return ERR.ACL_ERROR_RT_AICORE_EXCEPTION
    if 0 <= f.kernel < len(TABLE.entries) and TABLE.entries[f.kernel].unit == UNIT_AICPU:
        return ERR.ACL_ERROR_RT_AICPU_EXCEPTION
    return ERR.ACL_ERROR_RT_VECTOR_CORE_EXCEPTION

FAULT_NAMES = {E.F_RUNAWAY: "runaway WHILE", E.F_KERNEL_TRAP: "kernel trap",
               E.F_KERNEL_OOB: "out-of-bounds kernel access",
               E.F_BAD_ADDRESS: "unmapped address in a copy/value task", E.F_BAD_OP: "bad opcode",
               E.F_LABEL: "label switch to no label, back, or to a busy stream"}


def sync_cost(t, start: int) -> int:
    """Charge a synchronize that began at host time ``start`` and has waited (the host clock is
    now the later of ``start`` and the end of the work it waited for): when the work ended after
    ``start``, the host sees it ``cqe_report_ns`` later; the call's own ``host_sync_ns`` comes
    on top, waited or not. Returns the time waited (the ``...WithTimeout`` variants compare it).

    The real wait polls: ``Stream::StarsWaitForTask`` (``stream.cc:3991-4108``) and
    ``SynchronizeExecutedTask`` (``stream.cc:1946-1999``) read the SQ head / reclaim CQEs in a
    loop until the last task is seen done, so the call returns after the work's end, never
    before, and a longer kernel makes it return later by as much (``docs/timing.md``
    "Synchronize"; ``docs/fidelity.md`` row 330)."""
    waited = RT.host_ns - start
    if waited > 0:
        RT.tick(t.cqe_report_ns)
    RT.tick(t.host_sync_ns)
    return waited


class DeadlockError(Exception):
    """Raised inside the runtime when the engine can make no progress; carries the diagnosis."""

    def __init__(self, diagnosis: str, code: int = 0):
        super().__init__(diagnosis)
        self.diagnosis = diagnosis
        self.code = code        # the code the real stack gives this hang (0: the caller's own,
                                # a synchronize's 507046): an HCCL notify wait's 107020


class UpdatePayload:
    """Where task update stages rebuilt SQEs until the update stream's ``SQE_UPDATE`` copies
    them over the captured task (``taskgroup.update_task``): a ring of pool rows of its own SQ
    (nothing is ever pushed on it). A row is reused only after the SQE_UPDATE reading it ran."""

    __slots__ = ("device", "sq", "base", "next", "users")

    def __init__(self, device: "Device", depth: int):
        self.device = device
        self.sq = device.state.alloc_sq(depth, E.K_MODEL)
        self.base = device.state.row_of(self.sq, 0)
        self.next = 0
        self.users: dict = {}          # ring slot -> (update SQ, position after its SQE_UPDATE)

    def stage(self, row: tuple) -> tuple[int, int]:
        """Write ``row`` into the next free payload row: (pool row, ring slot). The caller
        records in ``users[slot]`` the SQE_UPDATE that reads it."""
        depth = self.device.state.sqs[self.sq, E.Q_DEPTH]
        slot = self.next % depth
        user = self.users.pop(slot, None)
        if user is not None:                                   # still unread: wait for it
            self.device.wait_sq(*user)
        self.next += 1
        r = self.base + slot
        SQE_STRUCT.pack_into(self.device.state.pool, 64 * r, *row)
        return r, slot


NO_RESERVE_HBM = 4 << 30
"""HBM of a device where address space cannot be reserved (``memory.may_reserve``): the arena is
then ``np.zeros``, which strict overcommit charges in full, so it stays at the former 4 GiB."""

CLOSE_HOOKS: list = []
"""Called with a Device when it closes (``RT.reset``) and at its last ``aclrtResetDevice``:
modules that own per-device resources (``api_vmm``, ``api_mempool``) free them here."""

CENSUS_HOOKS: list = []
"""``hook(device) -> {resource: count}``: what those modules add to ``npusim.census``."""


def device_sizes(profile, hbm_option=None) -> tuple[int, int]:
    """(HBM bytes, device address-space bytes) of a new device: the profile's HBM (the chip's,
    ``platform_config/*.ini`` ``memory_size``) or ``npusim.configure(hbm_bytes=)``, and twice
    that in addresses (at most ``DEV_STRIDE``) so that reserved address ranges
    (``aclrtReserveMemAddress``) leave ``aclrtMalloc`` the whole HBM [fidelity.md #260]. Without a
    reservation: at most NO_RESERVE_HBM, and addresses equal to the HBM."""
    if not may_reserve():
        hbm = int(hbm_option) if hbm_option is not None else min(profile.hbm_bytes, NO_RESERVE_HBM)
        return hbm, hbm
    hbm = int(hbm_option) if hbm_option is not None else profile.hbm_bytes
    return hbm, max(hbm, min(2 * hbm, DEV_STRIDE))


def pinned_host_bytes(profile) -> int:
    """Bytes of pinned host memory of a new device: ``npusim.configure(host_bytes=)``, else the
    profile's, at most 1 GiB."""
    return int(RT.device_options.get("host_bytes", min(profile.host_pinned_bytes, 1 << 30)))


class Device:
    """The host side of one device. Every field is declared here."""

    __slots__ = ("id", "profile", "timing", "state", "set_count", "contexts", "primary", "streams",
                 "slot_owner", "_stream_ids", "last_error_detail", "new_faults", "_hook_queues",
                 "sq_fault_code", "models", "model_slots", "streams_by_sq_model", "sqcq_used",
                 "conds", "_max_while", "_update_payload",
                 "live_events", "live_notifies", "_retiring", "_free_model_ids",
                 "_free_cond_ids", "built_models", "_launches", "_launches_sweep",
                 "_recycle_heaps", "_head_at", "_head_cap", "_msq_used",
                 "freed_sq_names", "res_limit", "stall_code", "__weakref__")

    def __init__(self, dev_id: int, profile):
        self.id = dev_id
        self.profile = profile
        self.timing = profile.timing           # the profile's cost constants (fixed per device)
        opts = RT.device_options
        hbm, va = device_sizes(profile, opts.get("hbm_bytes"))
        self.state = DeviceState(profile, va, pinned_host_bytes(profile), hbm_size=hbm)
        self.state.mem.place(dev_id)           # its own address ranges
        if "runaway_wall_s" in opts:
            self.state.runaway_wall_s = opts["runaway_wall_s"]
        if opts.get("contention"):
            self.state.set_contention(True)
        if opts.get("exact_order"):
            self.state.set_exact_order(True)
        self.state.set_tracing(RT.trace_on)
        self.set_count = 0                 # aclrtSetDevice reference count
        self.contexts: dict = {}      # its contexts, in creation order (a dict: O(1) removal)
        self.primary = None                # the default context (created by set_device)
        self.streams: dict[int, object] = {}   # sq -> Stream
        self.slot_owner: dict[int, object] = {}
        self._stream_ids = itertools.count(0)
        self.last_error_detail = ""
        self.stall_code = 0                    # the code of the last deadlock explained (0: none)
        self.new_faults: list = []             # the faults the hooks are given (AFTER_RUN_HOOKS)
        self._hook_queues: dict = {}           # thread running AFTER_RUN_HOOKS -> faults of its
                                               # runs made meanwhile (None: no such run yet)
        self.sq_fault_code: dict[int, int] = {}
        self.models: dict = {}                 # live capture models, in creation order (keys)
        self.model_slots: list = []            # model slot k (engine id 2k) -> model or None
        self.built_models: dict = {}           # built root models (keys)
        # the recycling index (§6.3 phase 2, api_mdl._recycle): launches in flight per exe
        # stream (stream -> deque of (EndGraph wait position, model)), and two heaps of
        # (creation id, model): built models idle, built models with a launch in flight (a
        # model is on each at most once, ``queued``, so no two entries tie); entries go stale
        # and are skipped (see_launches_done, oldest_idle_built)
        self._launches: dict = {}
        self._launches_sweep = 16              # streams in _launches at which a new one sweeps
        self._recycle_heaps: tuple = ([], [])
        self._head_at: list = []               # model slot -> first msq row of its head block
        self._head_cap: list = []              # model slot -> rows of that block
        self._msq_used = 0                     # msq rows laid out (blocks and relocations)
        self.streams_by_sq_model: dict = {}    # sq -> CaptureStream
        self.freed_sq_names: dict = {}         # sq -> name of its last stream, once freed
        self.sqcq_used = 0                     # SQ/CQ pairs taken from the device pool
        self.conds: list = []                  # cond handles, index = engine cond id (None: free)
        self.live_events = 0                   # events not destroyed (the FLAG-event limit)
        self.live_notifies = 0
        self._retiring: list = []              # (slot, fences, models): freed once unreferenced
        self._free_model_ids: list = []        # engine model ids of destroyed models
        self._free_cond_ids: list = []
        self._max_while = 100_000_000          # runaway-WHILE bound (per handle override)
        self._update_payload = None            # UpdatePayload, made at the first task update
        self.res_limit = list(self.res_init())  # aclrtSetDeviceResLimit: [cube cores, vector cores]
        if REC.accesses:
            REC.attach(self)                   # npusim.analysis: record accesses

    def free_events(self) -> int:
        """Events the driver reports free on this device (``GetAvailEventNum``, what
        aclrtGetEventAvailNum returns): the profile's events less those not destroyed."""
        return max(self.profile.max_events - self.live_events, 0)

    # ---- sync slots: one owner each, freed once no queued task names them ----
    def new_slot(self, owner=None) -> int:
        """A sync slot for an event, notify, capture event or EndGraph; ``owner`` names it in
        diagnoses."""
        slot = self.state.alloc_slot()
        if owner is not None:
            self.slot_owner[slot] = owner
        return slot

    def retire_slot(self, slot: int, fences=(), models=()) -> None:
        """Free ``slot`` once every fence ``(stream, position)`` has run (or its stream is gone)
        and every model in ``models`` (graphs that captured a task naming it) is destroyed —
        the runtime frees an event only when its pending tasks finish. Until then it stays
        allocated, so a queued task never reads a slot that a new event owns."""
        entry = (slot, list(fences), list(models))
        if not self._unreferenced(entry):
            self._retiring.append(entry)
            return
        self._free_slot(slot)

    def _unreferenced(self, entry) -> bool:
        _, fences, models = entry
        sqs = self.state.sqs
        return all(s.destroyed or sqs[s.sq, E.Q_HEAD] > pos for s, pos in fences) and \
            all(m.destroyed for m in models)

    def _free_slot(self, slot: int) -> None:
        self.slot_owner.pop(slot, None)
        self.state.free_slot(slot)

    def retiring_slots(self) -> int:
        """Destroyed events/notifies whose slot still waits for a queued task (census)."""
        return len(self._retiring)

    def _reap(self) -> None:
        """Free retired slots whose last referencing task has run (after every engine run)."""
        keep = []
        for entry in self._retiring:
            if self._unreferenced(entry):
                self._free_slot(entry[0])
            else:
                keep.append(entry)
        self._retiring = keep

    # ---- engine ids of models and cond handles (reused after destroy) ----
    def add_cond(self, ch) -> int:
        """Register a cond handle; its engine cond id."""
        if self._free_cond_ids:
            i = self._free_cond_ids.pop()
            self.conds[i] = ch
        else:
            i = len(self.conds)
            self.conds.append(ch)
        if i < len(self.state.conds):
            self.state.conds[i, :] = 0             # no loop state of the id's former owner
        return i

    def remove_cond(self, ch) -> None:
        if 0 <= ch.engine_id < len(self.conds) and self.conds[ch.engine_id] is ch:
            self.conds[ch.engine_id] = None
            self._free_cond_ids.append(ch.engine_id)

    def remove_model(self, m) -> None:
        """A destroyed model leaves the device: its engine id is free for the next model."""
        self.models.pop(m, None)
        k = m.engine_id // 2
        if m.engine_id >= 0 and k < len(self.model_slots) and self.model_slots[k] is m:
            self.model_slots[k] = None
            self._free_model_ids.append(k)

    def set_built(self, m, built: bool) -> None:
        """A root model took (True) or gave back (False) its SQ/CQ pairs: ``built_models``, and
        the recycling index (a model built is idle or busy)."""
        if not built:
            self.built_models.pop(m, None)
            if not self.built_models:               # every entry is stale: hold no model
                for h in self._recycle_heaps:
                    for e in h:
                        e[1].queued[:] = False, False
                    h.clear()
            return
        self.built_models[m] = None
        self._queue(m, 1 if m.in_flight else 0)

    # ---- the recycling index: which built models are idle, oldest first, in O(1) amortised
    def note_launch(self, m, s, pos: int) -> None:
        """Launch of model ``m`` on ``s`` with its EndGraph wait at ``pos`` (``note_run``)."""
        dq = self._launches.get(s)
        if dq is None:
            if len(self._launches) >= self._launches_sweep:     # streams done or destroyed
                self.see_launches_done()
                self._launches_sweep = max(16, 2 * len(self._launches))
            dq = self._launches[s] = deque()
        else:                           # what it finished: no model is held past its launches
            self._done_on(s, dq)
        dq.append((pos, m))
        m.in_flight += 1
        if m.in_flight == 1:
            self._queue(m, 1)

    def stream_gone(self, s) -> None:
        """Stream ``s`` was destroyed: its launches count as finished (``running``), and the
        index holds neither it nor their models."""
        dq = self._launches.pop(s, None)
        if dq:
            self._done_on(s, dq)

    def see_launches_done(self) -> None:
        """Take the launches the device has finished since last asked (its SQ heads, or the
        stream destroyed): a built model with none left in flight is idle. O(exe streams with
        launches in flight + launches finished)."""
        for s, dq in list(self._launches.items()):
            self._done_on(s, dq)
            if not dq:
                del self._launches[s]

    def _done_on(self, s, dq) -> None:
        head = None if s.destroyed else int(self.state.sqs[s.sq, E.Q_HEAD])
        while dq and (head is None or dq[0][0] < head):
            m = dq.popleft()[1]
            m.in_flight -= 1
            if not m.in_flight:
                self._queue(m, 0)

    def oldest_idle_built(self):
        """The oldest built model with no launch in flight, taken off the index, or None (as
        of the last ``see_launches_done``)."""
        h = self._recycle_heaps[0]
        while h:
            m = heapq.heappop(h)[1]
            m.queued[0] = False
            if m.built and not m.in_flight:
                return m
        return None

    def oldest_busy_built(self):
        """The oldest built model with a launch in flight, left on the index, or None."""
        h = self._recycle_heaps[1]
        while h:
            m = h[0][1]
            if m.built and m.in_flight:
                return m
            heapq.heappop(h)
            m.queued[1] = False
        return None

    def _queue(self, m, which: int) -> None:
        """Model ``m`` onto the idle (0) or busy (1) heap unless it is there; a heap that grew
        past twice the built models drops its stale entries (destroyed, released or moved)."""
        if m.queued[which] or not m.built:
            return
        h = self._recycle_heaps[which]
        m.queued[which] = True
        heapq.heappush(h, (m.id, m))
        if len(h) > 2 * len(self.built_models) + 2:
            keep = []
            for e in h:
                o = e[1]
                if o.built and bool(o.in_flight) == bool(which):
                    keep.append(e)
                else:
                    o.queued[which] = False
            heapq.heapify(keep)
            h[:] = keep

    def has_update_payload(self) -> bool:
        return self._update_payload is not None

    def update_payload(self) -> UpdatePayload:
        """The task-update payload ring (made on first use)."""
        if self._update_payload is None:
            self._update_payload = UpdatePayload(self, PAYLOAD_DEPTH)
        return self._update_payload

    @property
    def max_while_iterations(self) -> int:
        """Iterations after which a WHILE is stopped and reported (handles without their own
        ``max_iterations``); setting it applies to models already built."""
        return self._max_while

    @max_while_iterations.setter
    def max_while_iterations(self, n: int) -> None:
        self._max_while = int(n)
        t = self.state.conds
        for i, ch in enumerate(self.conds[:len(t)]):
            if ch is not None and not ch.max_iterations:
                t[i, E.CD_MAX] = self._max_while

    # ---- models on the engine ----
    def publish_models(self, built=None) -> None:
        """Give each model a stable engine id and publish its head SQs, the list MODEL_EXECUTE
        activates, and the cond table (a destroyed model's id is reused by the next model: it
        was not running, so no queued MODEL_EXECUTE names it).

        ``built``: the models of one graph just built (``api_mdl._build``): only their head
        blocks are written, and the cond table only when they hold cond handles, so a build
        costs the same with one graph resident or thousands. ``None``: every live model and
        the whole cond table (after a cond handle's bound changed)."""
        models = self.models if built is None else built
        for m in models:
            if m.engine_id < 0:
                if self._free_model_ids:
                    k = self._free_model_ids.pop()
                    self.model_slots[k] = m
                else:
                    k = len(self.model_slots)
                    self.model_slots.append(m)
                m.engine_id = 2 * k
            self._write_heads(m.engine_id // 2, m.heads)
        if built is None or any(m.cond_handles for m in built):
            self._publish_conds()
        if self.state.access_log is not None:
            self.state.access_log.on_tables(self.state)    # what activations mean from now on

    def _write_heads(self, k: int, heads: list) -> None:
        """Model slot ``k``'s heads into the engine's CSR table. Model ``2k`` activates
        ``msq[mptr[2k]:mptr[2k+1]]``; odd ids are never executed, so each slot's block can lie
        anywhere in ``msq`` with room to spare: writing one model is O(its heads), a block
        that outgrew its room moves to the free tail, and only a full table is laid out again
        (doubled: amortised O(1) per build)."""
        st, n = self.state, len(heads)
        if k < len(self._head_cap) and n > self._head_cap[k] \
                and self._msq_used + n <= len(st.msq):
            self._head_at[k], self._head_cap[k] = self._msq_used, n     # move to the tail
            self._msq_used += n
        elif k >= len(self._head_cap) or n > self._head_cap[k]:
            self._layout_heads(k, n)
        at = self._head_at[k]
        st.msq[at:at + n] = heads
        st.mptr[2 * k], st.mptr[2 * k + 1] = at, at + n

    def _layout_heads(self, k: int, n: int) -> None:
        """Lay the head table out again (``DeviceState.set_model_heads``): twice the slots in
        use, each live slot's block twice its heads (at least 4 rows), and as many free rows
        again at the tail; slot ``k`` gets room for ``n`` heads."""
        slots = max(16, 2 * len(self.model_slots), k + 1)
        lists, at, cap = [], [], []
        used = 0
        for j in range(slots):
            m = self.model_slots[j] if j < len(self.model_slots) else None
            h = m.heads if m is not None and m.engine_id == 2 * j else []
            room = max(4, 2 * len(h), 2 * n if j == k else 0)
            lists += [h, [0] * (room - len(h))]
            at.append(used)
            cap.append(room)
            used += room
        lists[-1] = lists[-1] + [0] * used                 # the free tail
        self.state.set_model_heads(lists)
        self._head_at, self._head_cap, self._msq_used = at, cap, used

    def _publish_conds(self) -> None:
        rows, cmodels = [], []
        for ch in self.conds:
            if ch is None:
                rows.append((0, 0, 0, len(cmodels), 0))
                continue
            subs = [m.engine_id for m in ch.sub_models if not m.destroyed]
            bound = ch.max_iterations or self.max_while_iterations
            rows.append((ch.addr, max(ch.type, 0), len(subs), len(cmodels), bound))
            cmodels.extend(subs)
        self.state.set_conds(rows, cmodels)

    # ---- resource limits (aclrtSetDeviceResLimit; RawDevice::resLimitArray_) ----
    def res_init(self) -> tuple[int, int]:
        """The hardware's core counts by aclrtDevResLimitType: (cube = AIC, vector = AIV)."""
        return self.profile.aic_cores, self.profile.aiv_cores

    def set_res_limit(self, res_type: int, value: int) -> None:
        """Limit the cores of one unit that kernels started from now on spread their blocks over
        (the engine's cost vector; work the device has done by the host's time keeps the old
        count). 0 is stored as the runtime stores it; the engine then runs one core."""
        self.advance_to_host()
        self.res_limit[res_type] = value
        self.state.tc[(T_AIC_CORES, T_AIV_CORES)[res_type]] = max(1, value)

    # ---- core contention (docs/timing.md "Contention") ----
    def set_contention(self, on: bool) -> None:
        """Kernels of different streams share this device's cores from the host's current time
        on (True), or overlap freely (False); work done by then keeps the old rule."""
        self.advance_to_host()
        self.state.set_contention(bool(on))

    def reset_res_limit(self) -> None:
        for t, v in enumerate(self.res_init()):
            self.set_res_limit(t, v)

    # ---- ids ----
    def next_stream_id(self) -> int:
        return next(self._stream_ids)

    # ---- observation ----
    def _run(self, horizon=_INF, kind=_STOP_NONE, a=0, b=0) -> int:
        """One engine run (``DeviceState.run``), then what every run is followed by: the
        faults it logged, retired slots it freed, ``AFTER_RUN_HOOKS``. A host wait pays this
        once per engine run, so it does no work for what did not change."""
        with RT.lock:
            _forget()                       # a locked region begins: the launch memo is void
            r = self.state.run(horizon, kind, a, b)
            self._after_run()
            return r

    def _after_run(self) -> None:
        """What every engine run is followed by (and a wait that needed none: it sees what
        the host changed since, e.g. a slot retired or a releaser's context destroyed).

        The run's faults are taken from the engine's log and handed to ``AFTER_RUN_HOOKS`` as
        ``new_faults``, set again before each hook. The hooks never re-enter on a thread: a run
        the hooks' own thread makes while they run (a binary's exception callback that
        synchronizes another stream, a host function) only queues its faults, and the hooks run
        again for them once the current batch has been through every hook, so each hook sees
        every fault once, in the order the device reported them. Another thread's run (one let
        in while a hook waits for progress) runs the hooks for its own faults itself."""
        st = self.state
        faults = st.take_faults() if st.faults else []
        if faults:
            last = faults[-1]
            for f in faults:
                self._on_fault(f, f is last)
        if self._retiring:
            self._reap()
        me = threading.get_ident()
        queues = self._hook_queues
        if me in queues:
            q = queues[me]
            if q is None:
                queues[me] = q = []
            q.extend(faults)
            return
        queues[me] = None
        try:
            while True:
                for hook in AFTER_RUN_HOOKS:
                    self.new_faults = faults
                    hook(self)
                faults = queues[me]
                if faults is None:
                    break
                queues[me] = None
        finally:
            del queues[me]

    def _on_fault(self, f, last: bool = True) -> None:
        """A fault the engine logged: remember its code for the stream's next synchronize; a
        STOP_ON_FAILURE stream makes the code sticky for its whole context. ``last``: the last
        fault of its run, whose description is the one ``last_error_detail`` keeps (a runaway
        WHILE is described whatever its place: describing it takes its watchdog entry)."""
        code = fault_code(f)
        rsq = self.reporting_sq(f.sq)
        self.sq_fault_code.setdefault(rsq, code)
        s = self.streams.get(rsq)
        if s is not None and s.stop_on_failure and not s.ctx.failure_code:
            s.ctx.failure_code = code
        if last or f.kind == E.F_RUNAWAY:
            self.last_error_detail = self.describe_fault(f)

    def reporting_sq(self, sq: int) -> int:
        """The eager SQ whose synchronize reports a fault on ``sq``: itself, or for a model SQ
        the stream that launched the model's latest run (sub-models report through the root)."""
        cs = self.streams_by_sq_model.get(sq)
        if cs is None:
            return sq
        m = cs.model
        while m.parent is not None:
            m = m.parent
        return m.last_run_stream.sq if m.last_run_stream is not None else sq

    def advance_to_host(self) -> None:
        """Run everything the device would have done by the host's current time."""
        self._run(horizon=RT.host_ns)

    def wait_sq(self, sq: int, pos: int) -> None:
        """Block the host until SQ ``sq`` has executed up to ``pos``; DeadlockError if it never
        can. The host clock moves to that SQ's completion time. An SQ already at ``pos`` takes
        no engine run: its stop condition holds before the first pick, so the run would change
        nothing (a synchronize of a finished stream, each idle stream of a device synchronize)."""
        with RT.lock:                           # no run in progress while the head is read
            done = self.state.sqs[sq, _Q_HEAD] >= pos
            if done:
                self._after_run()
        while not done:
            r = self._run(_INF, _STOP_SQ_POS, sq, pos)
            if r != _R_DEADLOCK and not (r == _R_IDLE and self.state.sqs[sq, _Q_HEAD] < pos):
                break
            self._stalled()
        sqs = self.state.sqs                    # (a stall hook may have grown the SQ table)
        t = int(sqs[sq, _Q_TIME])
        if t > RT.host_ns:                      # RT.host_at_least, inline
            RT.host_ns = t
        if self.state.access_log is not None:
            self.state.access_log.observe(OBS_SQ, sq, pos)    # orders later submissions

    def wait_all(self) -> None:
        while self._run() == E.R_DEADLOCK:
            self._stalled()
        RT.host_at_least(self.state.now)
        if self.state.access_log is not None:
            self.state.access_log.observe(OBS_ALL)

    def _stalled(self) -> None:
        """Nothing queued can satisfy the wait. While another user thread may still submit the
        record it needs, wait for that (``Runtime.await_progress``); otherwise — or when
        ``stall_wait_s`` passes with no new call — it is a deadlock."""
        with RT.lock:
            _forget()                       # a locked region begins: the launch memo is void
            for hook in STALL_HOOKS:
                if hook(self):
                    return
            if RT.others_may_submit() and RT.await_progress():
                return
        raise DeadlockError(self.explain_stall(), self.stall_code)

    def take_sq_error(self, sq: int) -> int:
        """The code of the first device fault on an SQ since the last report, then cleared
        (``Stream::GetError`` clears it: a second synchronize returns 0)."""
        code = self.sq_fault_code.pop(sq, ERR.ACL_SUCCESS)
        s = self.streams.get(sq)
        if code and not (s is not None and s.stop_on_failure):
            self.state.sqs[sq, E.Q_ERR] = 0
        return code

    # ---- explanations ----
    def sq_freed(self, sq: int, name: str) -> None:
        """A stream gave its SQ back: remember its name for the trace rows it left."""
        self.freed_sq_names[sq] = name

    def stream_name(self, sq: int) -> str:
        s = self.streams.get(sq) or self.streams_by_sq_model.get(sq)
        return s.describe() if s is not None else f"sq{sq}"

    def slot_name(self, slot: int) -> str:
        o = self.slot_owner.get(slot)
        return o.describe() if o is not None else f"sync slot {slot}"

    def describe_fault(self, f) -> str:
        what = FAULT_NAMES.get(f.kind, "device fault")
        if 0 <= f.kernel < len(TABLE.entries):
            what += f" in kernel {TABLE.label(f.kernel)}"
        if f.kind in (E.F_KERNEL_OOB, E.F_BAD_ADDRESS):
            what += f" at 0x{f.info:x} ({f.info2} bytes)"
            label = self.state.mem.label_of(f.info)
            if label:
                what += f" in buffer {label!r}"
        if f.kind == E.F_RUNAWAY and 0 <= f.info < len(self.conds):
            ch = self.conds[f.info]
            stopped = self.state.runaway_stopped.pop(f.info, None)
            if stopped is not None:
                what += (f": {ch.describe()} still {f.info2} after {stopped[0]} iterations and "
                         f"{self.state.runaway_wall_s:g} s of wall time with the word unchanged "
                         f"(nothing in the body changes it; configure(runaway_wall_s=None) turns "
                         f"this watchdog off)")
            else:
                what += (f": {ch.describe()} still {f.info2} after "
                         f"{int(self.state.conds[f.info, E.CD_MAX])} iterations (the iteration "
                         f"bound; set Device.max_while_iterations or the handle's max_iterations)")
            first = f.pos - 2                  # COND_FIRST of the WHILE (the fault is its JumpBack)
            loop = self.describe_loop(ch)
            return (f"{what} on {self.stream_name(f.sq)}, task position {f.pos}\n"
                    f"  loop: WHILE task at {self.stream_name(f.sq)} task {first}"
                    f"{self._site(f.sq, first)}; {loop}")
        return f"{what} on {self.stream_name(f.sq)}, task position {f.pos}"

    def _pending_records(self, slot: int) -> list[tuple[int, int]]:
        """(sq, pos) of every queued SQE that would set ``slot``."""
        st = self.state
        st.flush()
        found = []
        for q in range(int(st.st[E.E_NSQ])):
            if st.sqs[q, E.Q_STATE] == E.S_FREE:
                continue
            for pos in range(int(st.sqs[q, E.Q_HEAD]), int(st.sqs[q, E.Q_TAIL])):
                e = st.pool[st.row_of(q, pos)]
                if e["op"] in (S.OP_EVENT_RECORD, S.OP_NOTIFY_RECORD, S.OP_END_GRAPH) \
                        and e["a0"] == slot:
                    found.append((q, pos))
                    break
        return found

    def _site(self, q: int, pos: int) -> str:
        """The " [file:line]" suffix of the SQE at (q, pos) when its issuing line was recorded."""
        st = self.state
        if not 0 <= pos < int(st.sqs[q, E.Q_TAIL]):
            return ""
        site = REC.site_of(int(st.pool[st.row_of(q, pos)]["a5"]))
        return f" [{site}]" if site is not None else ""

    def _stuck(self, q: int) -> str:
        """Why SQ ``q`` does not reach its next task: parked on what, or not running."""
        st = self.state
        state = int(st.sqs[q, E.Q_STATE])
        head = int(st.sqs[q, E.Q_HEAD])
        if state == E.S_PARKED:
            slot = int(st.sqs[q, E.Q_WAIT])
            what = "a memory value" if slot < 0 else self.slot_name(slot)
            return f"blocked at task {head}{self._site(q, head)} on {what}"
        if state == E.S_IDLE:
            return ("not running: a model stream that nothing activated (its model was not "
                    "launched, or the cascade hop / cond task that starts it has not run)")
        return f"at task {head}"

    def _memory_wait(self, q: int, pos: int) -> str:
        """What the MEM_WAIT_VALUE at ``pos`` of SQ ``q`` waits for, when a module that owns such
        waits can say (``WAIT_EXPLAINERS``); else ``""``."""
        return next(filter(None, (hook(self, q, pos) for hook in WAIT_EXPLAINERS)), "")

    def wait_chain(self, q: int) -> tuple[list[int], str]:
        """The wait-for chain from parked SQ ``q``: who records what it waits on, what that
        stream is blocked on, and so on, to a cycle or a wait nobody can satisfy. Returns the
        SQs visited and the chain as text."""
        st = self.state
        seen: list[int] = []
        text = f"{self.stream_name(q)} is {self._stuck(q)}"
        cur = q
        while True:
            seen.append(cur)
            if int(st.sqs[cur, E.Q_STATE]) != E.S_PARKED:
                break
            slot = int(st.sqs[cur, E.Q_WAIT])
            if slot < 0:
                text += " (a blocking callback no report thread will run: see above)" \
                    if self._memory_wait(cur, int(st.sqs[cur, E.Q_HEAD])) else \
                    " (a MEM_WAIT_VALUE: no queued task writes the value it waits for)"
                break
            recs = self._pending_records(slot)
            if not recs:
                text += f" ← nothing queued on any stream records {self.slot_name(slot)}"
                break
            rq, rp = next(((a, b) for a, b in recs if a not in seen), recs[0])
            text += (f"\n      ← recorded by {self.stream_name(rq)} at task {rp}"
                     f"{self._site(rq, rp)}")
            if rq in seen:
                cyc = seen[seen.index(rq):] + [rq]
                text += (": a cycle (" + " → ".join(self.stream_name(x).split(" (")[0]
                                                   for x in cyc) + ")")
                break
            text += f", which is {self._stuck(rq)}"
            cur = rq
        return seen, text

    def explain_stall(self, extra_slot: int | None = None) -> str:
        """Who waits on what, and who (if anyone) would record it: the deadlock diagnosis, then
        the wait-for chains (to a cycle, or to a wait nothing can satisfy), with the source
        lines that issued each task when they were recorded (``npusim.analysis.record``)."""
        st = self.state
        lines = []
        parked = []
        code = 0
        heads: list = []
        for q in range(int(st.st[E.E_NSQ])):
            if st.sqs[q, E.Q_STATE] != E.S_PARKED:
                continue
            parked.append(q)
            slot = int(st.sqs[q, E.Q_WAIT])
            head = int(st.sqs[q, E.Q_HEAD])
            site = self._site(q, head)
            if slot < 0:
                lines.append(f"{self.stream_name(q)} waits (task position {head}{site}) on "
                             f"{self._memory_wait(q, head) or 'a memory value'}")
                continue
            recs = self._pending_records(slot)
            if recs:
                by = "; ".join(f"{self.stream_name(rq)} would record it at task position {rp}"
                               f"{self._site(rq, rp)}, but that stream is stuck at position "
                               f"{int(st.sqs[rq, E.Q_HEAD])}"
                               for rq, rp in recs)
            else:
                by, c = self._slot_reason(slot)
                if c:                           # a hang the owner explains (HCCL): its whole
                    if by not in heads:         # explanation first, its headline here
                        heads.append(by)
                    by = by.split("\n", 1)[0]
                code = code or c
            lines.append(f"{self.stream_name(q)} waits (task position {head}{site}) on "
                         f"{self.slot_name(slot)}: {by}")
        if extra_slot is not None and not lines:
            lines.append(f"{self.slot_name(extra_slot)} is never recorded by any queued task")
        covered: set = set()
        for q in parked:
            if q in covered:
                continue
            seen, chain = self.wait_chain(q)
            covered.update(seen)
            lines.append("wait-for chain:\n      " + chain)
        msg = "deadlock: no stream can make progress\n  " + "\n  ".join(lines or ["(no waiter)"])
        if heads:
            msg = "\n".join(heads) + "\n" + msg
        self.last_error_detail = msg
        self.stall_code = code
        return msg

    def _slot_reason(self, slot: int) -> tuple[str, int]:
        """(what a wait on ``slot`` that no queued task of this device records waits for, the
        code the real stack gives that hang or 0), from ``SLOT_EXPLAINERS``."""
        for h in SLOT_EXPLAINERS:
            w = h(self, slot)
            if w:
                return w if isinstance(w, tuple) else (w, 0)
        return "nothing queued on any stream records it", 0

    def describe_loop(self, ch) -> str:
        """A runaway WHILE's loop: the cond task, its body, and which body tasks write the cond
        word (none: the loop can never end)."""
        st = self.state
        st.flush()
        word = ch.addr
        parts = []
        for m in ch.sub_models[:1]:
            writers = []
            ntask = 0
            for cs in m.streams:
                for pos in range(cs.task_count):
                    e = st.pool[st.row_of(cs.sq, pos)]
                    ntask += 1
                    op = int(e["op"])
                    hit = False
                    if op == S.OP_KERNEL:
                        n = int(e["a2"]) // 8
                        if n and st.mem.check_range(int(e["a1"]), 8 * n):
                            slots = st.mem.view(int(e["a1"]), 8 * n).view(np.int64)
                            hit = bool((slots == word).any())
                        what = f"kernel {TABLE.label(int(e['a0']))}"
                    elif op in (S.OP_MEMCPY, S.OP_MEMSET, S.OP_MEM_WRITE_VALUE):
                        a, nb = int(e["a0"]), int(e["a2"])
                        hit = a <= word < a + max(nb, 1) or word <= a < word + 8
                        what = S.OP_NAME[op]
                    if hit:
                        writers.append(f"{what} at {cs.describe()} task {pos}"
                                       f"{self._site(cs.sq, pos)}")
            body = f"body {m.describe()}: {len(m.streams)} stream(s), {ntask} task(s)"
            if writers:
                body += "; the cond word is written by " + ", ".join(writers) + \
                        " — they never set it to 0"
            else:
                body += "; no task of the body writes the cond word: the loop can never end"
            parts.append(body)
        return "; ".join(parts)

    # ---- teardown ----
    def close(self) -> None:
        for hook in CLOSE_HOOKS:               # what other modules own on the device (VMM ...)
            hook(self)
        self.state.mem.release()               # its pages go back to the OS now
        for s in list(self.streams.values()):
            RT.handles.remove(s.handle)
        self.streams.clear()
        for c in self.contexts:
            c.destroyed = True
