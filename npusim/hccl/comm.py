"""Communicators: who the ranks are, where each one's HCCL buffer is, what each rank issued.

A communicator (``HcclComm``) is one :class:`Communicator` shared by its ranks; each rank's
handle names its :class:`Member` (the rank, its device and context, its HCCL side streams and
events, its CCL buffer). The three ways to make one (``../shared/spec/hccl.md`` §2):

* ``HcclGetRootInfo`` + ``HcclCommInitRootInfo(nRanks, rootInfo, rank)`` on every rank (one
  thread per rank, as hccl's ``examples/02_collectives`` do): each call joins the communicator
  the root info names and waits until all ``nRanks`` ranks have joined (HCCL's init is a
  collective; ``HCCL_CONNECT_TIMEOUT``). A rank that waits while no other thread can still join
  fails with HCCL_E_TIMEOUT at once, with the ranks that are missing named, instead of after
  the timeout.
* ``HcclCommInitClusterInfo(rankTable, rank)``: the same, keyed by the rank table file, whose
  server list also gives the topology (ranks per server).
* ``HcclCommInitAll(ndev, devices)``: one process makes every rank at once (one thread may then
  drive all ranks, with ``HcclGroupStart`` / ``HcclGroupEnd`` around a round of collectives).

Every rank of a communicator gets a CCL buffer of ``HCCL_BUFFSIZE`` (200 MB unless configured)
on its device when the communicator is complete, so that a rank's tasks can name its peers'
buffers before the peers issue theirs, as HCCL exchanges them at init. What a collective
becomes is ``lower.py``'s; each rank's collectives are logged (:class:`diagnose.OpRecord`) for
the cross-rank diagnosis (``diagnose.py``).
"""
from __future__ import annotations

import itertools
import json
import threading
import time

from ..device.memory import OutOfMemory
from ..device import engine as E
from ..device.launchjit import forget as _forget
from ..runtime.api_mdl import LAUNCH_HOOKS
from ..runtime.device import CENSUS_HOOKS, CLOSE_HOOKS
from ..runtime.peer import bridge as make_bridge
from ..runtime.peer import drop as drop_bridges
from ..runtime.runtime import RT
from . import types as T
from .diagnose import SYNC_CODE, OpRecord, diagnose, explain

_ids = itertools.count(1)
PENDING: dict = {}
"""Communicators still being joined: key (root info id or rank table path) -> Communicator."""
COMMS: dict = {}
"""Every live communicator by id (census, reset)."""
JOINED = threading.Condition(RT.lock)
"""Notified when a rank joins a communicator (the waiting ranks look again)."""


class Member:
    """One rank of a communicator: what its ``HcclComm`` handle names."""

    __slots__ = ("comm", "rank", "device", "ctx", "handle", "side", "events", "scratch",
                 "scratch_size", "old_scratch", "scopes", "captured", "notifies", "destroyed")

    def __init__(self, comm, rank: int, ctx):
        self.comm, self.rank, self.ctx, self.device = comm, rank, ctx, ctx.device
        self.handle = 0
        self.side: list = []            # HCCL's side streams on this rank (Stream objects)
        self.events: dict = {}          # local tag or ("end", j) -> Ex event handle (capture)
        self.notifies: dict = {}        # local tag -> sync slot of this rank's own notify
        self.scratch = 0                # the CCL buffer's device address (0 until complete)
        self.scratch_size = 0
        self.old_scratch: list = []     # CCL buffers replaced by bigger ones (graphs name them)
        self.scopes: dict = {}          # capture model -> its capture index on this rank
        self.captured: dict = {}        # capture model -> the log entries (kwargs) of the
                                        # collectives it holds, logged again at every replay
        self.destroyed = False


class Communicator:
    """The ranks of one communicator and what they share."""

    __slots__ = ("id", "name", "n_ranks", "members", "rank_server", "buffsize", "destroyed",
                 "logs", "ends", "trimmed", "bridges", "models", "key", "config")

    def __init__(self, n_ranks: int, key, rank_server=None, config=None):
        self.id = next(_ids)
        self.key = key
        self.config = dict(config or {})
        self.name = self.config.get("hcclCommName") or f"comm{self.id}"
        self.n_ranks = n_ranks
        self.members: list = [None] * n_ranks
        self.rank_server = list(rank_server) if rank_server else [0] * n_ranks
        mb = self.config.get("hcclBufferSize")
        if not mb or mb == T.HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET:
            mb = T.HCCL_BUFFSIZE_DEFAULT_MB
        self.buffsize = int(mb) * 1024 * 1024
        self.destroyed = False
        self.logs: list = [[] for _ in range(n_ranks)]     # per rank: OpRecord, in issue order
        self.ends: list = [[] for _ in range(n_ranks)]     # per rank: (stream, end position)
        self.trimmed = 0                # ops dropped from the front of every rank's log
        self.bridges: dict = {}         # (scope, src rank, dst rank, tag) -> peer.Bridge
        self.models: set = set()        # graphs that captured a collective of this comm

    # ---- membership ----
    def complete(self) -> bool:
        return all(m is not None for m in self.members)

    def missing(self) -> list:
        return [r for r, m in enumerate(self.members) if m is None]

    def allocate(self, need: int = 0) -> None:
        """Give every rank a CCL buffer of at least ``max(buffsize, need)`` bytes."""
        size = max(self.buffsize, need)
        for m in self.members:
            if m.scratch_size >= size:
                continue
            if m.scratch:
                m.old_scratch.append(m.scratch)
            m.scratch = m.device.state.mem.malloc(size)
            m.scratch_size = size

    # ---- notifies between ranks ----
    def bridge(self, scope: int, src: int, dst: int, tag: int):
        key = (scope, src, dst, tag)
        b = self.bridges.get(key)
        if b is None:
            label = f"{self.name}[{'eager' if scope == 0 else f'graph {scope}'}] " \
                    f"rank {src}->{dst} tag {tag}"
            b = self.bridges[key] = make_bridge(self.members[src].device,
                                                self.members[dst].device, self, label)
        return b

    def explain_bridge(self, b) -> tuple[str, int]:
        """Why the wait on bridge ``b`` never ends: (the cross-rank diagnosis, EI0002 style;
        the code the synchronize gets, 107020: HCCL's notify waits time out,
        docs/fidelity.md row 390)."""
        return self.diagnosis(b), SYNC_CODE

    def done(self) -> list:
        """Per rank, how many of its logged collectives have completed (eager ones whose last
        task ran; a captured one counts as done once its capture ended)."""
        out = []
        for r in range(self.n_ranks):
            k = 0
            for s, pos in self.ends[r]:
                if s is None or s.destroyed or \
                        s.device.state.sqs[s.sq, E.Q_HEAD] >= pos:
                    k += 1
                else:
                    break
            out.append(k)
        return out

    def diagnosis(self, b=None) -> str:
        m = diagnose(self.name, self.n_ranks, self.logs, self.done(), destroyed=self.destroyed)
        if m is not None:
            return m.message
        text = explain(self.name, self.n_ranks, self.logs, self.done())
        if b is not None and not b.open:
            text = f"communicator {self.name} was destroyed while a task still waits on it\n" \
                   + text
        return self._across() + text

    def _across(self) -> str:
        """When the ranks agree inside this communicator but still wait: the ops the same
        devices have pending in other communicators. Ranks that issue the collectives of two
        communicators in different orders wait for each other across them (a rank in comm B's
        op while its peers are in comm A's) — the headline then says so."""
        mine = {m.device: r for r, m in enumerate(self.members) if m is not None}
        done = self.done()
        here = {r: self.logs[r][done[r]] for r in range(self.n_ranks)
                if done[r] < len(self.logs[r])}
        other = []
        for c in COMMS.values():
            if c is self:
                continue
            cd = c.done()
            for q, m in enumerate(c.members):
                if m is not None and m.device in mine and cd[q] < len(c.logs[q]):
                    rec = c.logs[q][cd[q]]
                    other.append(f"device {m.device.id} (rank {mine[m.device]} here) also "
                                 f"waits in comm '{c.name}' op #{rec.index} {rec.kind}, "
                                 f"at {rec.site}")
        if not other or not here:
            return ""
        return (f"EI0002 notify wait timeout across communicators: the ranks of comm "
                f"'{self.name}' agree, but their devices wait in other communicators too — "
                f"a rank that issues two communicators' collectives in another order than "
                f"its peers waits for them while they wait for it\n  "
                + "\n  ".join(other) + "\n  fix: issue the collectives of all "
                f"communicators in the same order on every rank\n")

    def mismatch(self):
        return diagnose(self.name, self.n_ranks, self.logs, self.done(),
                        destroyed=self.destroyed)

    # ---- logging ----
    def log(self, rank: int, kind: str, count: int, dtype: int, op: int = -1, root: int = -1,
            peer: int = -1, stream=None, graph: str = "", site: str = "", extra=()) -> bool:
        """Log a collective rank ``rank`` issued (eager), or one a graph of it replays; True
        when another rank's op of the same index already shows it can never pair with this one
        (:func:`clash`)."""
        name = stream.device.stream_name(stream.sq) if stream is not None else ""
        log = self.logs[rank]
        rec = OpRecord(self.trimmed + len(log), kind, int(count), int(dtype), int(op), int(root),
                       int(peer), site, name, graph, tuple(extra))
        log.append(rec)
        if len(log) > LOG_KEEP:
            self._trim()
        k = len(log) - 1
        return any(clash(rec, rank, other[k], q) for q, other in enumerate(self.logs)
                   if q != rank and len(other) > k)

    def _trim(self) -> None:
        """Drop the ops every rank has completed (keeping the last ``LOG_KEEP // 2``), so a
        long-lived communicator's logs stay bounded; indices stay absolute (``trimmed``)."""
        k = min(self.done() + [len(x) for x in self.logs]) - LOG_KEEP // 2
        if k > 0:
            for r in range(self.n_ranks):
                del self.logs[r][:k]
                del self.ends[r][:k]
            self.trimmed += k

    def capture(self, m: Member, model, entry: dict) -> bool:
        """A collective captured into ``model`` on rank ``m.rank``: it runs (and is logged) at
        each replay of the graph (``replayed``), not now. True when the same collective of
        another rank's graph of the same capture index can never pair with it."""
        if model not in m.captured:
            m.captured[model] = []
            GRAPHS.setdefault(model, []).append(m)
        mine = m.captured[model]
        mine.append(entry)
        k, scope = len(mine) - 1, m.scopes.get(model)
        for q in self.members:
            if q is None or q is m:
                continue
            for qmodel, qscope in q.scopes.items():
                theirs = q.captured.get(qmodel, ())
                if qscope == scope and len(theirs) > k and \
                        clash(_rec(entry), m.rank, _rec(theirs[k]), q.rank):
                    return True
        return False

    # ---- teardown ----
    def destroy_member(self, m: Member) -> None:
        m.destroyed = True
        self.destroyed = True
        if all(x is None or x.destroyed for x in self.members):
            self.release()

    def release(self) -> None:
        """Free what the communicator owns: bridges (their slots retire once its graphs are
        gone), CCL buffers, side streams, events."""
        drop_bridges(list(self.bridges.values()), models=list(self.models))
        self.bridges.clear()
        for m in self.members:
            if m is None:
                continue
            free_member(m)
        COMMS.pop(self.id, None)
        if PENDING.get(self.key) is self:
            del PENDING[self.key]


LOG_KEEP = 1024
"""Ops kept per rank in a communicator's log before the completed ones are dropped."""


def _rec(entry: dict):
    """A captured collective's log entry as an OpRecord (for :func:`clash`)."""
    return OpRecord(0, entry["kind"], int(entry.get("count", 0)), int(entry.get("dtype", 0)),
                    int(entry.get("op", -1) if entry.get("op") is not None else -1),
                    int(entry.get("root", -1)), int(entry.get("peer", -1)), "", "", "", ())


def clash(a, ra: int, b, rb: int) -> bool:
    """Can op ``a`` of rank ``ra`` never pair with op ``b`` of rank ``rb`` at the same index
    (docs/fidelity.md row 395)? Two collectives that differ in kind, count, data type, reduce op
    or root; a send to each other, or a receive from each other. Whatever HCCL's tasks would
    then do, the program is wrong: npusim makes the op hang so the synchronize reports it,
    instead of returning wrong data. Point-to-point pairings across indices are left to the
    diagnosis of the hang they make."""
    p2p = ("send", "recv")
    if a.kind in p2p or b.kind in p2p:
        return a.kind == b.kind and a.kind in p2p and a.peer == rb and b.peer == ra
    if a.kind in ("alltoallv", "alltoallvc"):        # each rank's count is its own
        return (a.kind, a.dtype) != (b.kind, b.dtype)
    return (a.kind, a.count, a.dtype, a.op, a.root) != (b.kind, b.count, b.dtype, b.op, b.root)


GRAPHS: dict = {}
"""Capture model -> the members whose collectives it holds (``replayed`` logs them)."""


def replayed(model, stream, pos: int) -> None:
    """``api_mdl.LAUNCH_HOOKS``: a graph launched on ``stream`` (its EndGraph wait at ``pos``):
    each rank it holds collectives of logs them again, done once that wait has run."""
    for m in GRAPHS.get(model, ()):
        c = m.comm
        for entry in m.captured[model]:
            c.log(m.rank, stream=stream, **entry)
            c.ends[m.rank].append((stream, pos))


LAUNCH_HOOKS.append(replayed)


FREE_MEMBER_HOOKS: list = []
"""Callbacks ``hook(member)`` that free a member's streams and events (``lower.py``)."""


def free_member(m: Member) -> None:
    for hook in FREE_MEMBER_HOOKS:      # (they read m.captured: the graphs that name slots)
        hook(m)
    for model in m.captured:
        left = [x for x in GRAPHS.get(model, ()) if x is not m]
        if left:
            GRAPHS[model] = left
        else:
            GRAPHS.pop(model, None)
    m.captured.clear()
    if RT.devices.get(m.device.id) is m.device:
        mem = m.device.state.mem
        for a in [m.scratch, *m.old_scratch]:
            if a:
                try:
                    mem.free(a)
                except Exception:  # noqa: BLE001 -- the device may have freed it at reset
                    pass
    m.scratch, m.old_scratch = 0, []


def join(key, n_ranks: int, rank: int, ctx, rank_server=None, config=None):
    """Rank ``rank`` joins the communicator ``key`` names (made by the first rank to come);
    returns its Member. The caller waits for the others (:func:`wait_complete`)."""
    c = PENDING.get(key)
    if c is None or c.n_ranks != n_ranks:
        c = PENDING[key] = Communicator(n_ranks, key, rank_server, config)
        COMMS[c.id] = c
    if c.members[rank] is not None:
        return None
    m = c.members[rank] = Member(c, rank, ctx)
    if c.complete():
        del PENDING[key]
        try:
            c.allocate()
        except OutOfMemory:     # hcclBufferSize larger than a device: init fails (HCCL_E_MEMORY)
            c.release()         # was an exception out of the facade, the comm left half made
            c.destroyed = True
    JOINED.notify_all()
    return m


JOIN_GRACE_S = 2.0
"""How long a joining rank also counts live threads that have not used the runtime yet as
ranks still to come: without it, a rank whose sibling threads had not reached aclrtSetDevice
yet gave up at once with HCCL_E_TIMEOUT (a race: 4 threads each doing set_device +
HcclCommInitClusterInfo failed about one run in two)."""


def _newcomers() -> bool:
    """A live thread other than this one that is not (yet) a runtime user."""
    me = threading.current_thread()
    return any(t is not me and t.is_alive() and t.ident not in RT.users
               for t in threading.enumerate())


def wait_complete(m: Member, timeout_s: float) -> bool:
    """Wait (releasing the runtime lock) until every rank of ``m``'s communicator joined; False
    when no other thread can still join it (or ``timeout_s`` passed)."""
    c = m.comm
    start = time.monotonic()
    deadline = start + timeout_s
    while not c.complete():
        if not RT.others_may_submit() and not (
                time.monotonic() - start < JOIN_GRACE_S and _newcomers()):
            return False
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        JOINED.wait(min(left, 0.05))
        _forget()                       # the runtime lock is held again: the launch memo is void
    return True


def read_rank_table(path: str):
    """(n_ranks, rank -> server index, device ids by rank) from a rank table file (HCCL's JSON
    format: ``server_list[].device[].{device_id, rank_id}``), or None when it cannot be read."""
    try:
        with open(path) as f:
            t = json.load(f)
        ranks = {}
        for si, server in enumerate(t["server_list"]):
            for d in server["device"]:
                ranks[int(d["rank_id"])] = (si, int(d["device_id"]))
        n = len(ranks)
        if sorted(ranks) != list(range(n)):
            return None
        return n, [ranks[r][0] for r in range(n)], [ranks[r][1] for r in range(n)]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _device_closed(dev) -> None:
    """``runtime.device.CLOSE_HOOKS``: a closing device takes with it the communicators of
    which it still holds a live rank (their bridges leave with the device:
    ``runtime/peer.py``); a rank already destroyed (``HcclCommDestroy``) leaves its peers'
    communicator as it was, so they finish what they issued."""
    for c in list(COMMS.values()):
        if any(m is not None and m.device is dev and not m.destroyed for m in c.members):
            c.destroyed = True
            c.bridges.clear()
            for m in c.members:
                for model in list(m.captured) if m is not None else ():
                    GRAPHS.pop(model, None)
            COMMS.pop(c.id, None)
            if PENDING.get(c.key) is c:
                del PENDING[c.key]


CLOSE_HOOKS.append(_device_closed)


def _census(dev) -> dict:
    """``runtime.device.CENSUS_HOOKS``: the communicator ranks (live HcclComm handles) on
    ``dev``, and their CCL buffers."""
    members = [m for m in RT.handles.live("hccl_comm") if m.device is dev]
    return {"hccl communicators": len(members),
            "hccl buffers": sum(1 + len(m.old_scratch) for m in members if m.scratch)}


CENSUS_HOOKS.append(_census)
