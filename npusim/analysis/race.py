"""Race detector: tasks on different streams touching the same bytes with no happens-before.

Input is a device's access log (``npusim.device.recording``): one task row per executed SQE, in
execution order, and the byte ranges each task read and wrote (kernels through their checked
views, copies and memsets by their operands, cond tasks by their cond word). Execution order is a
linear extension of happens-before, so one pass with **vector clocks** computes it exactly:

* components are *lanes*: an eager SQ, or a capture stream together with the cascade streams it
  chains (a cascade hop is the last SQE of its stream, so the chain is one sequence);
* a task's clock joins its SQ's previous task (stream order), the task that activated the SQ
  (STREAM_ACTIVE cascade hop, MODEL_EXECUTE → the model's head streams, COND_FIRST → the chosen
  sub-model's heads), the last record of the sync slot a wait consumed (event and notify records,
  EndGraph → the execution stream's or the cond task's wait), the last MEM_WRITE_VALUE of the
  address a value wait read, and for eager tasks the host's clock when it submitted the task (the
  host joins what each synchronize/query it made saw complete);
* memory is cut into the intervals between access boundaries; per interval and lane the pass
  keeps the last reader and the last writer. An access checks the other lanes' last writer (and,
  if it writes, their last reader): one not ordered before it is a race. An *atomic reduce*
  (``ACC_REDUCE``: an HCCL inline-reduce step, which the SDMA engine applies atomically, so
  several peers reduce into one buffer at once) conflicts with plain reads and writes, never
  with another reduce. A freed range starts fresh (a new allocation at the same address is
  another buffer).

**Task updates.** A captured task's parameters (the SQE: kernel, args address and size, blocks)
are an access target too: an ``SQE_UPDATE`` (a task update on an update stream, or the rebinding of
an external event at a launch) *writes* the captured SQE it targets, and the captured task *reads*
it each time a replay runs it. They are 64-byte pseudo-addresses from :data:`TASK_ARGS_BASE` up
(one per pool row), added to the log's accesses here, so an update that no event, stream order or
host synchronization orders against a replay is reported like any other race, with the task group
(handle, task index) it belongs to and the line that launched the replay.

**Several devices** (:func:`analyze_devices`, ``npusim.analysis.races_across``). The devices'
logs become one: SQ and slot ids are offset per device; the k-th record of a notify between
devices (a ``runtime.peer.Bridge``: its outbox on the source) and the k-th wait on its inbox
share a slot of their own, so the wait joins exactly that record's clock; each row's host epoch
is mapped to the host's one order of observations (``AccessLog.seqs``). A task row has no time,
so the rows are merged in an order built from the edges themselves — each device in its order, a
bridge wait after its record, a submission after what the host had observed — a linear
extension of happens-before, and the same pass runs over it. Peer copies and HCCL moves log
both devices' addresses (``device/peer.py``), an HCCL inline reduce as an atomic access.

For each access and each other lane the latest conflicting access is reported; pairs are merged
per (task, task). Everything per row runs in one numba pass: 100,000 tasks in well under a
second after compilation.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from ..device import engine as E
from ..device import sqe as S
from ..device.memview import ACC_R, ACC_W, TASK_COLS
from ..device.kernels import TABLE
from ..device.peer import ACC_REDUCE
from ..device.recording import OBS_ALL, OBS_PEER, OBS_SLOT, OBS_SQ
from ..runtime.recording import REC
from ..runtime.runtime import RT

_REC_OPS = (S.OP_EVENT_RECORD, S.OP_NOTIFY_RECORD, S.OP_END_GRAPH)
KIND_NAMES = ("write/write", "write/read", "read/write")    # (earlier access, later access)
TASK_ARGS_BASE = 1 << 60
"""Pseudo-address of pool row 0's captured parameters (row ``r``: ``TASK_ARGS_BASE + 64 r``):
above every arena address (device, pinned host, pageable), so it never names memory."""


# ------------------------------------------------------------------ the pass (numba)

@njit(cache=True)
def _lanes(T, nsq, tails, kinds):
    """Lane of every SQ seen: its own, or its activator's for a cascade stream (the hop is the
    activator's last SQE)."""
    lane = np.full(nsq, -1, np.int64)
    nl = 0
    for r in range(T.shape[0]):
        q = T[r, 0]
        if lane[q] < 0:
            lane[q] = nl
            nl += 1
        if T[r, 2] == S.OP_STREAM_ACTIVE:
            b = T[r, 3]
            if 0 <= b < nsq and lane[b] < 0 and kinds[q] == E.K_MODEL \
                    and T[r, 1] == tails[q] - 1:
                lane[b] = lane[q]
    return lane, nl


@njit(cache=True)
def _join(dst, src):
    for i in range(dst.shape[0]):
        if src[i] > dst[i]:
            dst[i] = src[i]


@njit(cache=True)
def _activate(pend, pflag, q, cur):
    _join(pend[q], cur)
    pflag[q] = 1


@njit(cache=True)
def _pass(T, AT, AIL, AIH, AK, vidx, lane, W, nslots, nvals, act_ptr, act_sq,
          obs_row, obs_kind, obs_tgt, tgt_order, free_row, free_lo, free_hi, K, out_cap):
    n = T.shape[0]
    nsq = lane.shape[0]
    vcq = np.zeros((nsq, W), np.int32)
    pend = np.zeros((nsq, W), np.int32)
    pflag = np.zeros(nsq, np.int8)
    slotvc = np.zeros((nslots, W), np.int32)
    valvc = np.zeros((max(nvals, 1), W), np.int32)
    clock = np.zeros(W, np.int32)
    epoch = np.zeros(n, np.int32)
    rlane = np.zeros(n, np.int32)
    nobs = obs_row.shape[0]
    obsvc = np.zeros((nobs, W), np.int32)
    hostvc = np.zeros((nobs + 1, W), np.int32)
    hdone = 0
    lastW = np.full((max(K, 1), W), -1, np.int32)
    lastR = np.full((max(K, 1), W), -1, np.int32)
    lastA = np.full((max(K, 1), W), -1, np.int32)      # atomic reduces (ACC_REDUCE)
    out = np.zeros((out_cap, 4), np.int64)      # earlier row, later row, interval, kind
    nout = 0
    lost = 0
    cur = np.zeros(W, np.int32)
    ai = 0                      # next access row
    ti = 0                      # next observation target (tgt_order sorted by target row)
    oa = 0                      # next observation (by obs_row) for OBS_ALL
    fi = 0                      # next free
    nacc = AT.shape[0]
    ntgt = tgt_order.shape[0]
    nfree = free_row.shape[0]
    for r in range(n):
        while oa < nobs and obs_row[oa] <= r:
            if obs_kind[oa] == OBS_ALL and obs_row[oa] >= 0:
                for q in range(nsq):
                    _join(obsvc[oa], vcq[q])
            oa += 1
        while fi < nfree and free_row[fi] <= r:
            for k in range(free_lo[fi], free_hi[fi]):
                for c in range(W):
                    lastW[k, c] = -1
                    lastR[k, c] = -1
                    lastA[k, c] = -1
            fi += 1
        q = T[r, 0]
        op = T[r, 2]
        a0 = T[r, 3]
        ln = lane[q]
        cur[:] = vcq[q]
        if pflag[q] != 0:
            _join(cur, pend[q])
            pend[q, :] = 0
            pflag[q] = 0
        h = T[r, 6]
        if 0 < h <= nobs:
            while hdone < h:
                hostvc[hdone + 1, :] = hostvc[hdone]
                _join(hostvc[hdone + 1], obsvc[hdone])
                hdone += 1
            _join(cur, hostvc[h])
        if op == S.OP_EVENT_WAIT or op == S.OP_NOTIFY_WAIT or op == S.OP_COND_NOTIFY_WAIT:
            if 0 <= a0 < nslots:
                _join(cur, slotvc[a0])
        elif op == S.OP_MEM_WAIT_VALUE and vidx[r] >= 0:
            _join(cur, valvc[vidx[r]])
        clock[ln] += 1
        if cur[ln] >= clock[ln]:
            clock[ln] = cur[ln] + 1
        cur[ln] = clock[ln]
        epoch[r] = cur[ln]
        rlane[r] = ln
        vcq[q, :] = cur
        if op == S.OP_EVENT_RECORD or op == S.OP_NOTIFY_RECORD or op == S.OP_END_GRAPH:
            if 0 <= a0 < nslots:
                slotvc[a0, :] = cur
        elif op == S.OP_MEM_WRITE_VALUE and vidx[r] >= 0:
            valvc[vidx[r], :] = cur
        elif op == S.OP_STREAM_ACTIVE:
            if 0 <= a0 < nsq:
                _activate(pend, pflag, a0, cur)
        else:                       # MODEL_EXECUTE, COND_FIRST: the heads they activated
            for j in range(act_ptr[r], act_ptr[r + 1]):
                if act_sq[j] < nsq:
                    _activate(pend, pflag, act_sq[j], cur)
        while ti < ntgt and obs_tgt[tgt_order[ti]] <= r:
            j = tgt_order[ti]
            if obs_tgt[j] == r:
                _join(obsvc[j], cur)
            ti += 1
        # the task's accesses
        while ai < nacc and AT[ai] < r:
            ai += 1
        while ai < nacc and AT[ai] == r:
            kind = AK[ai]
            wr = (kind & ACC_W) != 0
            rd = (kind & ACC_R) != 0
            red = (kind & ACC_REDUCE) != 0
            for k in range(AIL[ai], AIH[ai]):
                for c in range(W):
                    if c == ln:
                        continue
                    x = lastW[k, c]
                    if x >= 0 and cur[c] < epoch[x]:
                        if nout < out_cap:
                            out[nout, 0], out[nout, 1], out[nout, 2] = x, r, k
                            out[nout, 3] = 0 if (wr or red) else 1
                            nout += 1
                        else:
                            lost += 1
                    if wr or red:
                        x = lastR[k, c]
                        if x >= 0 and cur[c] < epoch[x]:
                            if nout < out_cap:
                                out[nout, 0], out[nout, 1], out[nout, 2] = x, r, k
                                out[nout, 3] = 2
                                nout += 1
                            else:
                                lost += 1
                    if not red:             # atomic reduces do not race with each other
                        x = lastA[k, c]
                        if x >= 0 and cur[c] < epoch[x]:
                            if nout < out_cap:
                                out[nout, 0], out[nout, 1], out[nout, 2] = x, r, k
                                out[nout, 3] = 0 if wr else 1
                                nout += 1
                            else:
                                lost += 1
                if wr:
                    lastW[k, ln] = r
                if rd:
                    lastR[k, ln] = r
                if red:
                    lastA[k, ln] = r
            ai += 1
    return out[:nout], lost


# ------------------------------------------------------------------ reports

@dataclass
class TaskRef:
    """One side of a race: the task (stream, position, what it is) and the line that issued it."""
    stream: str
    sq: int
    pos: int
    op: str
    kernel: str | None
    site: object | None          # npusim.runtime.recording.Site, None when not recorded
    access: str = ""             # "read", "write", "read+write"
    note: str = ""               # where a replayed task's graph was launched, ...
    device: int | None = None    # the device that ran it (the cross-device analysis)

    @property
    def what(self) -> str:
        if self.op == "SQE_UPDATE":
            return "task update"
        return f"kernel {self.kernel}" if self.kernel else self.op

    def __str__(self) -> str:
        src = str(self.site) if self.site is not None else "source not recorded"
        note = f"; {self.note}" if self.note else ""
        return f"{self.stream}, task {self.pos}: {self.what} ({self.access}) — {src}{note}"


@dataclass
class Race:
    """Two tasks on different streams, overlapping bytes, at least one write, no ordering."""
    first: TaskRef               # the one that ran first in this execution (across devices:
                                 # first in the merged order, ``analyze_devices``)
    second: TaskRef
    kind: str                    # "write/write", "write/read" or "read/write"
    buffer: tuple[int, int] | None   # (start address, size) of the allocation
    lo: int                      # overlapping byte range [lo, hi) (addresses)
    hi: int
    count: int = 1               # conflicting accesses merged into this report
    target: str = ""             # a captured task's parameters: which task (and task group)
    group: int | None = None     # the task-group handle of that task, when it is in one

    def __str__(self) -> str:
        if self.target:
            where = self.target
        elif self.buffer:
            b, sz = self.buffer
            where = (f"buffer 0x{b:x} ({sz} bytes), bytes [{self.lo - b}, {self.hi - b})")
        else:
            where = f"bytes [0x{self.lo:x}, 0x{self.hi:x})"
        return (f"{self.kind} race on {where}\n"
                f"    {self.first}\n    {self.second}\n"
                f"    no happens-before path orders them (stream order, events, notifies, "
                f"model/cond launches, host synchronization)")


@dataclass
class RaceReport:
    races: list[Race] = field(default_factory=list)
    tasks: int = 0
    accesses: int = 0
    lanes: int = 0
    dropped: int = 0             # log rows lost (the log overflowed)
    truncated: int = 0           # conflicts beyond the output capacity
    seconds: float = 0.0
    unpaired: int = 0            # across devices: notify records / waits with no partner

    def __len__(self) -> int:
        return len(self.races)

    def __iter__(self):
        return iter(self.races)

    def __bool__(self) -> bool:
        return bool(self.races)

    def __getitem__(self, i):
        return self.races[i]

    def __str__(self) -> str:
        head = (f"{len(self.races)} race(s) in {self.tasks} tasks on {self.lanes} streams "
                f"({self.accesses} recorded accesses)")
        notes = []
        if self.dropped:
            notes.append(f"{self.dropped} log rows were dropped: the result is incomplete")
        if self.truncated:
            notes.append(f"{self.truncated} further conflicts not listed")
        if self.unpaired:
            notes.append(f"{self.unpaired} notify records / waits between devices have no "
                         "partner in the logs (records that coalesced, or a wait that never "
                         "ran): the k-th wait was paired with the k-th record")
        lines = [head] + [f"  note: {n}" for n in notes]
        lines += [f"[{i}] {r}" for i, r in enumerate(self.races)]
        return "\n".join(lines)

    __repr__ = __str__


# ------------------------------------------------------------------ driver

def _targets(T, obs):
    """Target row of each OBS_SQ / OBS_SLOT observation: the latest row before the observation
    that ran the awaited SQ position or the awaited record (-1: none in the log)."""
    n = T.shape[0]
    tgt = np.full(len(obs), -1, np.int64)
    if not len(obs) or not n:
        return tgt
    rows = np.arange(n, dtype=np.int64)
    key = (T[:, 0] << 32) | (T[:, 1] & 0xFFFFFFFF)
    order = np.argsort(key, kind="stable")
    skey = key[order]
    isrec = np.isin(T[:, 2], _REC_OPS)
    rrows = rows[isrec]
    rslot = T[isrec, 3]
    ro = np.argsort(rslot, kind="stable")
    rslot_s, rrows_s = rslot[ro], rrows[ro]
    for j, (orow, kind, a, b) in enumerate(obs):
        if orow < 0:
            continue
        if kind == OBS_SQ:
            k = (a << 32) | ((b - 1) & 0xFFFFFFFF)
            lo, hi = np.searchsorted(skey, k), np.searchsorted(skey, k, side="right")
            cand = order[lo:hi]
        elif kind == OBS_SLOT:
            lo, hi = np.searchsorted(rslot_s, a), np.searchsorted(rslot_s, a, side="right")
            cand = rrows_s[lo:hi]
        else:
            continue
        i = np.searchsorted(cand, orow) - 1
        if i >= 0:
            tgt[j] = cand[i]
    return tgt


def _with_task_args(st, T, t0: int, A: np.ndarray) -> np.ndarray:
    """The log's accesses (rows ``A``, task rows absolute) plus the captured-parameter accesses
    of the task rows ``T`` (from ``t0``): each SQE_UPDATE writes its target row's pseudo-address,
    each task of a model SQ whose pool row some SQE_UPDATE of ``T`` targets reads its own. Sorted
    by task row, as the pass reads them."""
    upd = T[:, 2] == S.OP_SQE_UPDATE
    if not upd.any():
        return A
    rows = np.nonzero(upd)[0]
    targets = np.unique(T[rows, 4])
    q = T[:, 0]
    ok = (q >= 0) & (q < len(st.sqs))
    qq = np.where(ok, q, 0)
    model = ok & (st.sqs[qq, E.Q_KIND] == E.K_MODEL) & ~upd
    prow = st.sqs[qq, E.Q_BASE] + T[:, 1]          # a capture stream never wraps
    reads = np.nonzero(model & np.isin(prow, targets))[0]
    add = np.zeros((len(rows) + len(reads), A.shape[1] if A.size else 4), np.int64)
    k = len(rows)
    add[:k, 0] = rows + t0
    add[:k, 1] = TASK_ARGS_BASE + 64 * T[rows, 4]
    add[:k, 3] = ACC_W
    add[k:, 0] = reads + t0
    add[k:, 1] = TASK_ARGS_BASE + 64 * prow[reads]
    add[k:, 3] = ACC_R
    add[:, 2] = 64
    out = np.concatenate([A.reshape(-1, add.shape[1]), add])
    return out[np.argsort(out[:, 0], kind="stable")]


def _captured_owners(dev) -> dict:
    """Pool row -> (what, task-group handle or None, model) for the captured tasks of ``dev``'s
    live models that an SQE_UPDATE can target: task-group tasks and external-event tasks."""
    out: dict = {}
    for g in RT.handles.live("taskgrp"):
        m = g.model
        if m is None or m.destroyed or m.device is not dev:
            continue
        n = len(g.entries)
        for i, (cs, pos) in enumerate(g.entries):
            out[cs.ring_base() + pos] = (f"task {i} of the {n} of task group 0x{g.handle:x}",
                                         g.handle, m)
    for m in RT.handles.live("model"):
        if m.destroyed or m.device is not dev:
            continue
        for kind, table in (("record", m.ext_records), ("wait", m.ext_waits)):
            for _, (cs, pos) in table.items():
                out.setdefault(cs.ring_base() + pos,
                               (f"the external-event {kind} task of {m.describe()}", None, m))
    return out


def _describe_task_args(owners: dict, prow: int):
    """(target text, group handle, model) of the captured task at pool row ``prow``."""
    what, group, m = owners.get(prow, (f"the captured task at SQE pool row {prow}", None, None))
    where = f" ({m.describe()})" if m is not None and "model" not in what else ""
    return f"the parameters of {what}{where} (kernel, args, blocks)", group, m


def _replay_note(T: np.ndarray, r: int, model) -> str:
    """For a replayed task: the line that launched the replay it ran in (the latest
    MODEL_EXECUTE of its model before it, when recorded)."""
    if model is None or int(T[r, 2]) == S.OP_SQE_UPDATE:
        return ""
    ex = np.nonzero((T[:r, 2] == S.OP_MODEL_EXECUTE) & (T[:r, 3] == model.engine_id))[0]
    if not len(ex):
        return ""
    site = REC.site_of(int(T[ex[-1], 7]))
    return f"a replay launched at {site}" if site is not None else "a replay"


def _merge_pairs(out, T, bounds) -> dict:
    """The pass's race rows merged per (task, task) — a task's static identity is (sq, pos):
    key -> [row, row, lowest address, highest address, kind, count]."""
    merged: dict = {}
    for x, y, k, kind in out.tolist():
        key = (int(T[x, 0]), int(T[x, 1]), int(T[y, 0]), int(T[y, 1]))
        lo, hi = int(bounds[k]), int(bounds[k + 1])
        e = merged.get(key)
        if e is None:
            merged[key] = [x, y, lo, hi, kind, 1]
        else:
            e[2], e[3] = min(e[2], lo), max(e[3], hi)
            e[5] += 1
    return merged


def analyze(dev, log, t0: int = 0, t1: int | None = None, out_cap: int = 1 << 20) -> RaceReport:
    """Races among the task rows ``[t0, t1)`` of ``log`` (an ``AccessLog`` of runtime device
    ``dev``)."""
    t_start = time.perf_counter()
    st = dev.state
    st.flush()
    T = np.ascontiguousarray(log.tasks(t0, t1))
    n = T.shape[0]
    A = log.accesses()
    sel = (A[:, 0] >= t0) & (A[:, 0] < t0 + n)
    A = _with_task_args(st, T, t0, A[sel])
    AT = A[:, 0] - t0
    # intervals between access boundaries
    ends = A[:, 1] + A[:, 2]
    bounds = np.unique(np.concatenate([A[:, 1], ends]))
    AIL = np.searchsorted(bounds, A[:, 1]).astype(np.int64)
    AIH = np.searchsorted(bounds, ends).astype(np.int64)
    K = max(len(bounds) - 1, 0)
    nsq = int(max(int(st.st[E.E_NSQ]), int(T[:, 0].max()) + 1 if n else 0))
    tails = np.zeros(nsq, np.int64)
    kinds = np.zeros(nsq, np.int64)
    m = min(nsq, len(st.sqs))
    tails[:m], kinds[:m] = st.sqs[:m, E.Q_TAIL], st.sqs[:m, E.Q_KIND]
    lane, W = _lanes(T, nsq, tails, kinds)
    W = max(int(W), 1)
    # value-wait addresses
    isval = (T[:, 2] == S.OP_MEM_WRITE_VALUE) | (T[:, 2] == S.OP_MEM_WAIT_VALUE)
    vidx = np.full(n, -1, np.int64)
    nvals = 0
    if isval.any():
        uv, inv = np.unique(T[isval, 3], return_inverse=True)
        vidx[isval] = inv
        nvals = len(uv)
    # host observations (relative rows)
    obs = [(r - t0 if r >= t0 else -1, k, a, b) for r, k, a, b in log.observations]
    obs_row = np.array([o[0] if o[0] >= 0 else -1 for o in obs], np.int64)
    obs_kind = np.array([o[1] for o in obs], np.int64)
    obs_tgt = _targets(T, obs)
    tgt_order = np.argsort(np.where(obs_tgt >= 0, obs_tgt, np.iinfo(np.int64).max),
                           kind="stable")
    tgt_order = tgt_order[obs_tgt[tgt_order] >= 0].astype(np.int64)
    # frees, as interval ranges
    fr = [(r - t0, a, s) for r, a, s in log.frees if t0 <= r < t0 + n + 1]
    free_row = np.array([f[0] for f in fr], np.int64)
    free_lo = np.searchsorted(bounds, np.array([f[1] for f in fr], np.int64)).astype(np.int64)
    free_hi = np.searchsorted(bounds, np.array([f[1] + max(f[2], 1) for f in fr],
                                               np.int64)).astype(np.int64)
    free_hi = np.minimum(free_hi, K)             # intervals are [bounds[k], bounds[k+1])
    act_ptr, act_sq = log.activations(T, t0)
    nslots = len(st.sync)
    out, lost = _pass(T, AT.astype(np.int64), AIL, AIH, A[:, 3].copy(), vidx,
                         lane.astype(np.int64), W, nslots, nvals, act_ptr, act_sq, obs_row, obs_kind, obs_tgt, tgt_order, free_row, free_lo,
                         free_hi, K, out_cap)
    merged = _merge_pairs(out, T, bounds)
    def ref(r: int, access: str, note: str = "") -> TaskRef:
        q, pos, op, a0 = (int(v) for v in T[r, :4])
        kern = TABLE.name(a0) if op == S.OP_KERNEL and 0 <= a0 < len(TABLE.entries) else None
        return TaskRef(dev.stream_name(q), q, pos, S.OP_NAME.get(op, str(op)), kern,
                       REC.site_of(int(T[r, 7])), access, note)

    races = []
    owners = None
    for x, y, lo, hi, kind, cnt in merged.values():
        a, b = KIND_NAMES[kind].split("/")
        if lo >= TASK_ARGS_BASE:
            if owners is None:
                owners = _captured_owners(dev)
            target, group, model = _describe_task_args(owners, (lo - TASK_ARGS_BASE) // 64)
            notes = [_replay_note(T, r, model) for r in (x, y)]
            races.append(Race(ref(x, a, notes[0]), ref(y, b, notes[1]), KIND_NAMES[kind], None,
                              lo, hi, cnt, target, group))
            continue
        races.append(Race(ref(x, a), ref(y, b), KIND_NAMES[kind], log.allocation(lo, t0 + y),
                          lo, hi, cnt))
    races.sort(key=lambda r: (r.lo, r.first.sq, r.first.pos, r.second.sq, r.second.pos))
    return RaceReport(races, n, len(A), W, log.dropped, int(lost),
                      time.perf_counter() - t_start)


# ------------------------------------------------------------------ several devices

_WAIT_OPS = (S.OP_EVENT_WAIT, S.OP_NOTIFY_WAIT, S.OP_COND_NOTIFY_WAIT)
_SLOT_OPS = _REC_OPS + _WAIT_OPS
_DEV_SHIFT = 40
"""A device's captured-parameter pseudo-addresses: ``TASK_ARGS_BASE + (id << 40) + 64 row``."""


class _Part:
    """One device's rows, prepared for the merge (local rows, SQ and slot ids)."""
    __slots__ = ("dev", "log", "T", "A", "nsq", "tails", "kinds", "nslots", "obs", "seqs",
                 "tgt", "act_ptr", "act_sq", "frees", "sq0", "slot0", "gpos")

    def __init__(self, dev, log):
        st = dev.state
        st.flush()
        self.dev, self.log = dev, log
        self.T = T = np.array(log.tasks(), np.int64)
        n = T.shape[0]
        A = _with_task_args(st, T, 0, log.accesses()).astype(np.int64)
        pseudo = A[:, 1] >= TASK_ARGS_BASE
        A[pseudo, 1] += int(dev.id) << _DEV_SHIFT
        self.A = A
        self.nsq = nsq = int(max(int(st.st[E.E_NSQ]), int(T[:, 0].max()) + 1 if n else 0))
        self.tails = np.zeros(nsq, np.int64)
        self.kinds = np.zeros(nsq, np.int64)
        m = min(nsq, len(st.sqs))
        self.tails[:m], self.kinds[:m] = st.sqs[:m, E.Q_TAIL], st.sqs[:m, E.Q_KIND]
        self.nslots = len(st.sync)
        self.obs = list(log.observations)
        self.seqs = list(log.seqs)
        self.tgt = _targets(T, self.obs)
        self.act_ptr, self.act_sq = log.activations(T, 0)
        self.frees = list(log.frees)
        self.sq0 = self.slot0 = 0
        self.gpos = np.zeros(n, np.int64)


def _host_entries(parts):
    """The host's observations of every device in host order, an OBS_ALL expanded into one
    entry per SQ of its device (the last row of that SQ before it): (seq, part, local target
    row) arrays, target -1 when none is in the log."""
    seq, part, tgt = [], [], []
    for i, p in enumerate(parts):
        T = p.T
        qrows = {}
        for j, (row, kind, _a, _b) in enumerate(p.obs):
            if kind == OBS_PEER:
                continue
            s = p.seqs[j] if j < len(p.seqs) else 0
            if kind == OBS_ALL and row >= 0:
                if not qrows:
                    qs = T[:, 0]
                    for q in np.unique(qs).tolist():
                        qrows[q] = np.nonzero(qs == q)[0]
                for rows in qrows.values():
                    k = np.searchsorted(rows, row) - 1
                    if k >= 0:
                        seq.append(s), part.append(i), tgt.append(int(rows[k]))
                continue
            seq.append(s), part.append(i), tgt.append(int(p.tgt[j]))
    seq, part, tgt = (np.array(x, np.int64) for x in (seq, part, tgt))
    o = np.argsort(seq, kind="stable")
    return seq[o], part[o], tgt[o]


def _pair_bridges(parts, bridges, slot_base):
    """Give each (k-th record of a bridge's outbox, k-th wait on its inbox) pair a slot of its
    own (from ``slot_base``): the wait then joins the clock of exactly the record it consumed.
    Returns (new slot id per (part, row) as dicts, wait row -> (part, record row), next slot,
    how many records / waits had no partner)."""
    index = {id(p.dev): i for i, p in enumerate(parts)}
    remap: list[dict] = [dict() for _ in parts]
    needs: list[dict] = [dict() for _ in parts]
    nxt = slot_base
    unpaired = 0
    for b in bridges:
        si, di = index.get(id(b.src)), index.get(id(b.dst))
        if si is None or di is None:
            continue
        Ts, Td = parts[si].T, parts[di].T
        recs = np.nonzero(np.isin(Ts[:, 2], _REC_OPS) & (Ts[:, 3] == b.src_slot))[0]
        waits = np.nonzero(np.isin(Td[:, 2], _WAIT_OPS) & (Td[:, 3] == b.dst_slot))[0]
        unpaired += abs(len(recs) - len(waits))
        for k in range(max(len(recs), len(waits))):
            if k < len(recs):
                remap[si][int(recs[k])] = nxt
            if k < len(waits):
                remap[di][int(waits[k])] = nxt
                if k < len(recs):
                    needs[di][int(waits[k])] = (si, int(recs[k]))
            nxt += 1
    return remap, needs, nxt, unpaired


def _merge(parts, needs, H, req):
    """A linear extension of happens-before over the devices' rows: each device's rows in
    order; a bridge wait after the record it consumed; a row the host submitted after host
    entry ``H`` after every target of the entries before it (``req[H]``: per part, rows that
    must be merged). Returns the (part, row) order; a cycle (a log that does not match the
    pairing) is broken by taking the next row of the first device that has one."""
    P = len(parts)
    ptr = [0] * P
    n = [p.T.shape[0] for p in parts]
    H = [h.tolist() for h in H]             # plain lists: this loop runs once per row
    req = req.tolist()
    order = []
    left = sum(n)
    while left:
        moved = False
        for i in range(P):
            Hi = H[i]
            nd = needs[i]
            while ptr[i] < n[i]:
                r = ptr[i]
                h = Hi[r]
                if h > 0:
                    need = req[h]
                    if any(ptr[j] < need[j] for j in range(P)):
                        break
                w = nd.get(r)
                if w is not None and ptr[w[0]] <= w[1]:
                    break
                order.append((i, r))
                ptr[i] += 1
                left -= 1
                moved = True
        if not moved and left:
            i = next(j for j in range(P) if ptr[j] < n[j])
            order.append((i, ptr[i]))
            ptr[i] += 1
            left -= 1
    return order


def analyze_devices(pairs, bridges=(), out_cap: int = 1 << 20) -> RaceReport:
    """Races among the rows of several devices' logs (``pairs``: (runtime device, AccessLog)),
    as one program: SQ and slot ids made distinct per device, each ``bridges`` notify's k-th
    record paired with the k-th wait on its inbox, host observations in host order, the rows
    merged in a linear extension of happens-before, then the one-device pass (:func:`_pass`)."""
    t_start = time.perf_counter()
    parts = [_Part(d, log) for d, log in pairs]
    sq0 = slot0 = 0
    for p in parts:
        p.sq0, p.slot0 = sq0, slot0
        sq0 += p.nsq
        slot0 += p.nslots
    nsq = sq0
    remap, needs, nslots, unpaired = _pair_bridges(parts, bridges, slot0)
    # host order: entry seqs -> the host index of each row's submission
    gseq, gpart, gtgt = _host_entries(parts)
    H = []
    for p in parts:
        hs = p.T[:, 6] if p.T.shape[0] else np.zeros(0, np.int64)
        seqs = np.array(p.seqs + [0], np.int64)
        ok = (hs > 0) & (hs <= len(p.seqs))
        s = np.where(ok, seqs[np.clip(hs - 1, 0, max(len(p.seqs) - 1, 0))], -1)
        H.append(np.where(ok, np.searchsorted(gseq, s, side="right"), 0).astype(np.int64))
    P = len(parts)
    req = np.zeros((len(gseq) + 1, P), np.int64)
    for j in range(len(gseq)):
        req[j + 1] = req[j]
        if gtgt[j] >= 0:
            req[j + 1, gpart[j]] = max(req[j + 1, gpart[j]], gtgt[j] + 1)
    order = _merge(parts, needs, H, req)
    n = len(order)
    opart = np.array([o[0] for o in order], np.int64)
    orow = np.array([o[1] for o in order], np.int64)
    for i, p in enumerate(parts):
        p.gpos[orow[opart == i]] = np.nonzero(opart == i)[0]
    # the merged rows
    T = np.zeros((n, TASK_COLS), np.int64)
    acts_ptr = np.zeros(n + 1, np.int64)
    acts = []
    A_all, fr = [], []
    for i, p in enumerate(parts):
        if not p.T.shape[0]:
            continue
        t = p.T.copy()
        t[:, 0] += p.sq0
        sl = np.isin(t[:, 2], _SLOT_OPS)
        ok = (t[:, 3] >= 0) & (t[:, 3] < p.nslots)
        t[sl & ok, 3] += p.slot0
        t[sl & ~ok, 3] = -1                 # no slot: orders nothing (as on one device)
        for r, s in remap[i].items():
            t[r, 3] = s
        t[t[:, 2] == S.OP_STREAM_ACTIVE, 3] += p.sq0
        t[:, 6] = H[i]
        T[p.gpos] = t
        cnt = np.diff(p.act_ptr)
        acts_ptr[p.gpos + 1] = cnt
        for r in np.nonzero(cnt)[0].tolist():
            acts.append((int(p.gpos[r]), (p.act_sq[p.act_ptr[r]:p.act_ptr[r + 1]] + p.sq0)))
        a = p.A.copy()
        if len(a):
            a[:, 0] = p.gpos[a[:, 0]]
            A_all.append(a)
        last = int(p.gpos[-1]) + 1
        for r, ad, sz in p.frees:
            fr.append((int(p.gpos[r]) if r < len(p.gpos) else last, ad, sz))
    acts.sort(key=lambda x: x[0])
    act_sq = np.concatenate([x[1] for x in acts]).astype(np.int64) if acts else \
        np.zeros(0, np.int64)
    act_ptr = np.cumsum(acts_ptr)
    A = np.concatenate(A_all) if A_all else np.zeros((0, 4), np.int64)
    A = A[np.argsort(A[:, 0], kind="stable")]
    ends = A[:, 1] + A[:, 2]
    bounds = np.unique(np.concatenate([A[:, 1], ends]))
    AIL = np.searchsorted(bounds, A[:, 1]).astype(np.int64)
    AIH = np.searchsorted(bounds, ends).astype(np.int64)
    K = max(len(bounds) - 1, 0)
    tails = np.concatenate([p.tails for p in parts]) if parts else np.zeros(0, np.int64)
    kinds = np.concatenate([p.kinds for p in parts]) if parts else np.zeros(0, np.int64)
    lane, W = _lanes(T, nsq, tails, kinds)
    W = max(int(W), 1)
    isval = (T[:, 2] == S.OP_MEM_WRITE_VALUE) | (T[:, 2] == S.OP_MEM_WAIT_VALUE)
    vidx = np.full(n, -1, np.int64)
    nvals = 0
    if isval.any():
        uv, inv = np.unique(T[isval, 3], return_inverse=True)
        vidx[isval] = inv
        nvals = len(uv)
    # host entries: targets as merged rows; no OBS_ALL left (expanded)
    obs_tgt = np.array([int(parts[gpart[j]].gpos[gtgt[j]]) if gtgt[j] >= 0 else -1
                        for j in range(len(gseq))], np.int64)
    obs_row = np.full(len(gseq), -1, np.int64)
    obs_kind = np.full(len(gseq), OBS_SQ, np.int64)
    tgt_order = np.argsort(np.where(obs_tgt >= 0, obs_tgt, np.iinfo(np.int64).max),
                           kind="stable")
    tgt_order = tgt_order[obs_tgt[tgt_order] >= 0].astype(np.int64)
    fr.sort(key=lambda f: f[0])
    free_row = np.array([f[0] for f in fr], np.int64)
    free_lo = np.searchsorted(bounds, np.array([f[1] for f in fr], np.int64)).astype(np.int64)
    free_hi = np.minimum(np.searchsorted(bounds, np.array([f[1] + max(f[2], 1) for f in fr],
                                                          np.int64)), K).astype(np.int64)
    out, lost = _pass(T, A[:, 0].copy(), AIL, AIH, A[:, 3].copy(), vidx,
                      lane.astype(np.int64), W, nslots, nvals, act_ptr, act_sq, obs_row,
                      obs_kind, obs_tgt, tgt_order, free_row, free_lo, free_hi, K, out_cap)
    rep = _report_devices(parts, T, opart, orow, out, lost, bounds, A, W, t_start)
    rep.unpaired = unpaired
    return rep


def _report_devices(parts, T, opart, orow, out, lost, bounds, A, W, t_start) -> RaceReport:
    merged = _merge_pairs(out, T, bounds)

    def ref(r: int, access: str) -> TaskRef:
        p = parts[int(opart[r])]
        q, pos, op, a0 = (int(v) for v in p.T[int(orow[r]), :4])
        kern = TABLE.name(a0) if op == S.OP_KERNEL and 0 <= a0 < len(TABLE.entries) else None
        return TaskRef(p.dev.stream_name(q), q, pos,
                       S.OP_NAME.get(op, str(op)), kern, REC.site_of(int(p.T[int(orow[r]), 7])),
                       access, device=int(p.dev.id))

    def buffer(lo: int, y: int):
        for p in parts:
            mem = p.dev.state.mem
            if mem.is_device(lo) or mem.is_pinned_host(lo):
                return p.log.allocation(lo, int(np.searchsorted(p.gpos, y, side="right")))
        return None

    races = []
    for x, y, lo, hi, kind, cnt in merged.values():
        a, b = KIND_NAMES[kind].split("/")
        if lo >= TASK_ARGS_BASE:
            p = parts[int(opart[y])]
            prow = (lo - TASK_ARGS_BASE - (int(p.dev.id) << _DEV_SHIFT)) // 64
            target, group, _m = _describe_task_args(_captured_owners(p.dev), prow)
            races.append(Race(ref(x, a), ref(y, b), KIND_NAMES[kind], None, lo, hi, cnt,
                              f"{target} on device {p.dev.id}", group))
            continue
        races.append(Race(ref(x, a), ref(y, b), KIND_NAMES[kind], buffer(lo, y), lo, hi, cnt))
    races.sort(key=lambda r: (r.lo, r.first.device, r.first.sq, r.first.pos,
                              r.second.device, r.second.sq, r.second.pos))
    return RaceReport(races, len(T), len(A), W, sum(p.log.dropped for p in parts), int(lost),
                      time.perf_counter() - t_start)
