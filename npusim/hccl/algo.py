"""HCCL's collective algorithms as schedules of steps per rank and stream (layer 0: numpy only).

What HCCL does (``hccl`` ``docs/zh/user_guide/coll_algo_intro/``; spec/hccl.md §4-§5): inside a
server Mesh (every NPU reads from every other at once over HCCS), between servers Ring or
Recursive Halving-Doubling (RHD, power-of-2 counts) by size and server count, and hierarchical
AllReduce (intra-server ReduceScatter -> inter-server AllReduce -> intra-server AllGather,
``algo_intro.md`` "分级通信原理"); AlltoAll(V) pairwise between servers. One collective is, per
rank: the user input copied into the CCL buffer ("scratch"), notify pre-sync with the peers,
per step an SDMA copy or a copy that reduces inline, a post-sync, and a copy out to the user
buffer (``perf_analysis/typical_op_behavior.md``). Mesh spreads its peers over threads: the
AICPU templates ask ``(rankSize - 1)`` threads, the user's stream being the first and
``rankSize - 2`` slave streams the others (``src/ops/all_gather/template/aicpu/
ins_temp_all_gather_mesh_1D.cc`` ``GetRes``/``GetThreadNum``; ``src/ops/all_reduce/template/
aicpu/ins_temp_all_gather_mesh_1D_intra.cc:58``), each thread reading from its peer's CCL buffer
(``SendRecvBatchRead``). npusim does the same: thread j of a mesh phase is stream j (0 = the
user's stream), ``Schedule.streams`` = p - 2. docs/fidelity.md rows 382-389 list the choices.

The schedule (the interface ``lower.py`` reads, /work/helpers/HCCL_PLAN.md): :class:`Step` and
:class:`Schedule`. Every move is a *pull*: the step belongs to rank ``r``, writes only ``r``'s
buffers (``dst[0] == r``) and reads ``r``'s own buffers or a peer's "scratch" (a peer's CCL
buffer is the only memory a rank can reach; peers' user buffers are never touched).

The notify protocol, and why it is safe when devices run ahead:

* ``post(peer=q, tag=t)`` on rank r matches ``wait(peer=r, tag=t)`` on rank q; the lead maps
  (poster, waiter, tag) to one notify reused by every collective of the communicator. A notify
  is binary, so a (poster, waiter, tag) must never be posted again before the waiter consumed it.
* Every pair of ranks {r, q} that communicates in a collective (a *channel*) starts with a PRE
  exchange (both post tag :data:`TAG_PRE`, then wait for the other's) and ends with an END
  exchange (tag :data:`TAG_END`), each on the one stream that carries that channel in that rank;
  a rank posts END only after every read of the peer's scratch and every other wait of that
  channel (stream order), and finishes the collective (its stream 0 joins every side stream)
  only after waiting every END. Tags between PRE and END are unique per phase
  (:data:`TAG_FIRST` on), so inside a collective no (poster, waiter, tag) is posted twice.
* Across collectives: r's post of any tag but END in the next collective comes after r waited
  q's END of this one, which q posted after consuming every earlier post of r on the channel;
  r's END of the next collective comes after r waited q's PRE of the next collective, which q
  posts only after finishing this one, END included. So no post is ever doubled, whatever the
  next collective is and however far a rank runs ahead; and a rank writes its scratch for the
  next collective only after every peer said (END) it finished reading it.
* ``local_post(tag)``/``local_wait(tag)`` fork stream 0 to the side streams and join them back.
  A local tag names one (poster stream, waiter stream) pair in every collective
  (:func:`fork_tag` / :func:`join_tag`): were a tag a fork in one collective and a join in the
  next, a side stream with nothing to do in the first could run ahead and take a post meant for
  stream 0. Stream 0 posts fork(j) again only after waiting join(j), which stream j posts after
  consuming fork(j), and conversely, so no local tag is doubled either.

Cost (spec/hccl.md §5): :func:`step_ns` is alpha + n*beta(link) for a link copy, + n*gamma for a
reduce; local copies cost n at the local copy bandwidth and no alpha; notifies cost 0 here (the
engine charges its own). :func:`critical_path_ns` runs every stream in order with the waits,
with one reduce unit per rank (the reductions into one rank are serial, which is what HCCL's
closed forms count: ((p-1)/p)·n·gamma for a mesh whose p-1 peers reduce at once).
:func:`closed_form` is the table of the docs (Mesh.md, Ring.md, RHD.md), optionally plus the
local copies HCCL's formulas leave out.

:func:`execute` is the numpy oracle: it applies every step in an order the posts and waits allow
(any such order: tests shuffle it) and raises :class:`DeadlockError` / :class:`ProtocolError`.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np

from . import types as T

__all__ = ["Step", "Schedule", "choose", "schedule", "execute", "walk", "reduce_np",
           "DeadlockError", "ProtocolError", "KINDS", "TAG_PRE", "TAG_END", "TAG_FIRST",
           "TAG_LOCAL", "fork_tag", "join_tag"]

TAG_PRE = 1
"""The first exchange of every channel of a collective."""
TAG_END = 2
"""The last exchange of every channel of a collective."""
TAG_FIRST = 3
"""Phase tags of a collective are numbered from here, in build order."""
TAG_LOCAL = 0x10000
"""Local tags: stream 0 -> side stream j is ``TAG_LOCAL + 2j`` (:func:`fork_tag`), side stream
j -> stream 0 ``TAG_LOCAL + 2j + 1`` (:func:`join_tag`), in every collective."""


def fork_tag(j: int) -> int:
    return TAG_LOCAL + 2 * j


def join_tag(j: int) -> int:
    return TAG_LOCAL + 2 * j + 1

KINDS = ("all_reduce", "reduce_scatter", "all_gather", "broadcast", "reduce", "scatter",
         "alltoall", "alltoallv", "send", "recv", "barrier")


@dataclass(frozen=True)
class Step:
    kind: str        # "copy" | "reduce" | "post" | "wait" | "local_post" | "local_wait"
    stream: int      # 0 = the user's stream, 1..k = this rank's HCCL side stream k
    peer: int = -1   # post: the rank notified; wait: the rank whose post it waits for
    tag: int = 0     # post/wait: rank r's post(peer=q, tag=t) matches q's wait(peer=r, tag=t);
    #                  local_post/local_wait: one stream's local_post(t) matches another's wait
    src: tuple = ()  # copy/reduce: (rank, buf, byte offset); buf in {"in", "out", "scratch"}
    dst: tuple = ()  # copy/reduce: (rank, buf, byte offset); always the step's own rank
    nbytes: int = 0
    link: str = ""   # "hccs" (same server) | "rdma" (across servers) | "local" (same rank)
    # reduce: dst = dst OP src element-wise (op and dtype are the collective's)


@dataclass
class Schedule:
    kind: str                     # "all_reduce", ...; "send_recv" for a send/recv pair
    n_ranks: int
    algorithm: str                # "mesh" | "ring" | "rhd" | "hierarchical" | "pairwise" | "p2p"
    streams: int                  # side streams each rank needs (k)
    per_rank: list                # list[list[Step]]: per rank, its steps in issue order
    scratch_bytes: int            # scratch each rank needs
    in_bytes: list = field(default_factory=list)    # per rank: bytes of "in" the steps read
    out_bytes: list = field(default_factory=list)   # per rank: bytes of "out" the steps write


class DeadlockError(RuntimeError):
    """No stream of any rank can run its next step (every head is a wait nobody will post)."""


class ProtocolError(RuntimeError):
    """A (poster, waiter, tag) notify was posted again before its waiter consumed it."""


# ------------------------------------------------------------------ algorithm choice
def _servers(rank_server) -> dict:
    out: dict = {}
    for r, s in enumerate(rank_server):
        out.setdefault(s, []).append(r)
    return out


def _pow2(x: int) -> bool:
    return x > 0 and x & (x - 1) == 0


def choose(kind: str, n_ranks: int, rank_server, nbytes: int = 0) -> str:
    """The algorithm HCCL would run for ``kind`` on ``n_ranks`` ranks placed on servers
    ``rank_server[r]`` (docs/fidelity.md row 382): one server -> "mesh" (910B's full mesh of
    HCCS links; HCCL's own choice inside a server, not configurable); several servers ->
    AllReduce "hierarchical" when every server holds the same number (> 1) of ranks, else
    "rhd" for a power-of-2 rank count and "ring" otherwise (RHD.md: RHD for power-of-2 server
    counts; Ring for the rest -- the size rule "RHD for small non-power-of-2 data" needs the
    non-power-of-2 RHD, which npusim does not build); ReduceScatter / AllGather the same without
    the hierarchical form; Broadcast / Reduce "ring"; Scatter "mesh" (direct reads from the
    root); AlltoAll(V) "pairwise" (Pairwise.md); send/recv "p2p"; barrier "mesh". ``nbytes`` is
    kept for size rules; none applies in what npusim builds."""
    p = int(n_ranks)
    if kind in ("send", "recv", "send_recv"):
        return "p2p"
    servers = _servers(list(rank_server)[:p])
    if p <= 1 or len(servers) == 1 or kind in ("scatter", "barrier"):
        return "mesh"
    if kind in ("alltoall", "alltoallv"):
        return "pairwise"
    if kind in ("broadcast", "reduce"):
        return "ring"
    sizes = {len(v) for v in servers.values()}
    if kind == "all_reduce" and len(sizes) == 1 and sizes.pop() > 1:
        return "hierarchical"
    return "rhd" if _pow2(p) else "ring"


# ------------------------------------------------------------------ the builder
class _B:
    """Accumulates the steps of every rank; tags are allocated in build order, the same for
    every rank (every phase is built for all ranks before the next)."""

    def __init__(self, kind, p, rank_server, algorithm):
        self.kind, self.p, self.algorithm = kind, p, algorithm
        self.server = list(rank_server)[:p]
        self.steps = [[] for _ in range(p)]
        self.chan: list[dict] = [dict() for _ in range(p)]      # r -> {q: stream}
        self.next_tag = TAG_FIRST
        self.scratch = 0
        self.in_b = [0] * p
        self.out_b = [0] * p

    def tag(self, n: int = 1) -> int:
        t = self.next_tag
        self.next_tag += n
        return t

    def link(self, a: int, b: int) -> str:
        if a == b:
            return "local"
        return "hccs" if self.server[a] == self.server[b] else "rdma"

    def _use(self, loc, n):
        r, buf, off = loc
        if buf == "scratch":
            self.scratch = max(self.scratch, off + n)
        elif buf == "in":
            self.in_b[r] = max(self.in_b[r], off + n)
        else:
            self.out_b[r] = max(self.out_b[r], off + n)

    def move(self, kind, r, s, src, dst, n):
        assert dst[0] == r
        if n <= 0 or (src == dst and kind == "copy"):
            return
        self._use(src, n)
        self._use(dst, n)
        self.steps[r].append(Step(kind, s, src=tuple(src), dst=tuple(dst), nbytes=int(n),
                                  link=self.link(src[0], dst[0])))

    def copy(self, r, s, src, dst, n):
        self.move("copy", r, s, src, dst, n)

    def reduce(self, r, s, src, dst, n):
        self.move("reduce", r, s, src, dst, n)

    def post(self, r, s, q, tag):
        self.steps[r].append(Step("post", s, peer=q, tag=tag))

    def wait(self, r, s, q, tag):
        self.steps[r].append(Step("wait", s, peer=q, tag=tag))

    def exchange(self, r, s, peers, tag):
        """Post ``tag`` to every peer, then wait for every peer's."""
        peers = [q for q in dict.fromkeys(peers) if q != r]
        for q in peers:
            self.post(r, s, q, tag)
        for q in peers:
            self.wait(r, s, q, tag)

    def pre(self, r, s, peers):
        """Open the channels to ``peers`` not open yet (PRE exchange) on stream ``s``."""
        new = [q for q in dict.fromkeys(peers) if q != r and q not in self.chan[r]]
        for q in new:
            self.chan[r][q] = s
        self.exchange(r, s, new, TAG_PRE)

    def end(self, r, s):
        """Close every channel of rank r that stream ``s`` carries (END exchange)."""
        self.exchange(r, s, [q for q, cs in self.chan[r].items() if cs == s], TAG_END)

    def fork(self, r, k):
        """Stream 0 lets side streams 1..k start (local tag :func:`fork_tag` (j))."""
        for j in range(1, k + 1):
            self.steps[r].append(Step("local_post", 0, tag=fork_tag(j)))
        for j in range(1, k + 1):
            self.steps[r].append(Step("local_wait", j, tag=fork_tag(j)))

    def join(self, r, k):
        """Stream 0 waits for side streams 1..k (local tag :func:`join_tag` (j))."""
        for j in range(1, k + 1):
            self.steps[r].append(Step("local_post", j, tag=join_tag(j)))
        for j in range(1, k + 1):
            self.steps[r].append(Step("local_wait", 0, tag=join_tag(j)))

    def done(self, streams) -> Schedule:
        used = max([st.stream for per in self.steps for st in per] + [0])
        return Schedule(self.kind, self.p, self.algorithm, max(streams, used),
                        self.steps, self.scratch, self.in_b, self.out_b)


def _split(count: int, parts: int) -> list[int]:
    """``count`` elements in ``parts`` chunks as even as possible (the first ones one larger)."""
    base, extra = divmod(count, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def _offsets(sizes):
    out, acc = [], 0
    for x in sizes:
        out.append(acc)
        acc += x
    return out


class _Chunks:
    """Byte ranges of ``count`` elements split in ``parts`` chunks, from byte ``base``."""

    def __init__(self, count, parts, esize, base=0):
        self.n = [c * esize for c in _split(count, parts)]
        self.o = [base + x for x in _offsets(self.n)]

    def __getitem__(self, i):
        return self.o[i], self.n[i]


# ------------------------------------------------------------------ phases
def _mesh_threads(b: _B, group: list[int], r: int):
    """The peers of rank r in a mesh over ``group``, thread j (stream j) serving peer j."""
    i = group.index(r)
    m = len(group)
    return [group[(i + 1 + j) % m] for j in range(m - 1)]


def _mesh_phase(b: _B, group, fn, k, local=None, pre=True):
    """One mesh phase for every rank of ``group``: fork the side streams, on each thread j run
    ``fn(r, j, q)`` (after the PRE of its channel), join. ``local(r)`` runs on stream 0 after the
    fork, before its own thread's work."""
    for r in group:
        b.fork(r, k)
        if local:
            local(r)
        for j, q in enumerate(_mesh_threads(b, group, r)):
            if pre:
                b.pre(r, j, [q])
            fn(r, j, q)
        b.join(r, k)


def _mesh_reduce_scatter(b, group, chunks_of, k, buf="scratch"):
    """Every rank r of ``group`` reduces its chunk (``chunks_of(r)``) of every peer's scratch
    into its own scratch chunk, one thread per peer."""
    def fn(r, j, q):
        off, n = chunks_of(r)
        b.reduce(r, j, (q, "scratch", off), (r, buf, off), n)
    _mesh_phase(b, group, fn, k)


def _mesh_all_gather(b, group, chunks_of, k, dst="out", ready_tag=None):
    """Every rank r reads every peer q's chunk ``chunks_of(q)`` of q's scratch into its own
    ``dst``; with ``ready_tag`` each thread first exchanges it with its peer (the peer's chunk
    is final)."""
    def fn(r, j, q):
        if ready_tag is not None:
            b.exchange(r, j, [q], ready_tag)
        off, n = chunks_of(q)
        b.copy(r, j, (q, "scratch", off), (r, dst, off), n)
    _mesh_phase(b, group, fn, k)


def _ring(b, group, chunks, rs: bool, ag: bool, base_buf="scratch"):
    """Ring ReduceScatter and/or AllGather over ``group`` on stream 0, in place in the scratch
    chunks ``chunks[i]`` = (byte offset, bytes). Rank at ring position i ends the ReduceScatter
    owning chunk i; step s of the ReduceScatter reduces chunk (i - s - 2) from the previous
    rank, step s of the AllGather copies chunk (i - s - 1). Each step: post DATA to next, wait
    DATA from prev, move, post ACK to prev, wait ACK from next (prev's chunk is final before r
    reads it; r writes a chunk only after next finished reading the previous one)."""
    m = len(group)
    if m < 2:
        return
    steps = ([("reduce", s) for s in range(m - 1)] if rs else []) + \
            ([("copy", s) for s in range(m - 1)] if ag else [])
    for r in group:
        i = group.index(r)
        b.pre(r, 0, [group[(i - 1) % m], group[(i + 1) % m]])
    for kind, s in steps:
        td, ta = b.tag(), b.tag()
        for r in group:
            i = group.index(r)
            prev, nxt = group[(i - 1) % m], group[(i + 1) % m]
            c = (i - s - 2) % m if kind == "reduce" else (i - s - 1) % m
            off, n = chunks[c]
            b.post(r, 0, nxt, td)
            b.wait(r, 0, prev, td)
            b.move(kind, r, 0, (prev, base_buf, off), (r, base_buf, off), n)
            b.post(r, 0, prev, ta)
            b.wait(r, 0, nxt, ta)


def _rhd(b, group, chunks, rs: bool, ag: bool):
    """Recursive halving (ReduceScatter) and/or doubling (AllGather) over a power-of-2 ``group``
    on stream 0, in place in scratch chunks ``chunks[i]``; rank at position i ends the halving
    owning chunk i. Halving step with distance d: partner i ^ d, keep the half of the current
    chunk range that holds i, reduce the partner's copy of it; doubling in reverse."""
    m = len(group)
    if m < 2:
        return
    assert _pow2(m), "RHD needs a power-of-2 rank count"
    dists = []
    d = m // 2
    while d >= 1:
        dists.append(d)
        d //= 2

    def span(i, upto):          # chunk range rank i holds after halving steps dists[:upto]
        lo, hi = 0, m
        for d in dists[:upto]:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if (i & d) == 0 else (mid, hi)
        return lo, hi

    def rng_bytes(lo, hi):
        return chunks[lo][0], sum(chunks[c][1] for c in range(lo, hi))

    if rs:
        for k, d in enumerate(dists):
            t = b.tag()
            for r in group:
                i = group.index(r)
                q = group[i ^ d]
                if q not in b.chan[r]:          # the partner's data is ready: its PRE
                    b.pre(r, 0, [q])
                else:
                    b.exchange(r, 0, [q], t)
                off, n = rng_bytes(*span(i, k + 1))
                b.reduce(r, 0, (q, "scratch", off), (r, "scratch", off), n)
    if ag:
        for k in range(len(dists) - 1, -1, -1):
            t = b.tag()
            for r in group:
                i = group.index(r)
                q = group[i ^ dists[k]]
                if q not in b.chan[r]:
                    b.pre(r, 0, [q])
                else:
                    b.exchange(r, 0, [q], t)
                off, n = rng_bytes(*span(i ^ dists[k], k + 1))
                b.copy(r, 0, (q, "scratch", off), (r, "scratch", off), n)


def _close(b, group, k):
    """END exchanges of every channel (each on its stream), inside a fork/join."""
    for r in group:
        b.fork(r, k)
        for s in range(k + 1):
            b.end(r, s)
        b.join(r, k)


# ------------------------------------------------------------------ schedules
def schedule(kind: str, n_ranks: int, rank_server, count: int, dtype: int, op: int = 0,
             root: int = 0, send_counts=None, sdispls=None, recv_counts=None, rdispls=None,
             *, algorithm: str | None = None, peer: int = -1) -> Schedule:
    """The schedule of one collective on every rank.

    Buffers per rank: "in" (the user's send buffer), "out" (the user's receive buffer),
    "scratch" (the CCL buffer, ``Schedule.scratch_bytes``). Per kind (``count`` in elements of
    ``dtype``):

    * all_reduce: in, out ``count``. reduce_scatter: in ``p*count``, out ``count``.
      all_gather: in ``count``, out ``p*count``. reduce: in ``count``, out ``count`` (root's).
      scatter: root's in ``p*count``, out ``count``. alltoall: in/out ``p*count`` (block q of in
      goes to rank q, block r of q's out comes from r).
    * broadcast: the root reads "in", every rank writes "out": lower it with in and out the
      same user buffer (HcclBroadcast has one), which every step allows.
    * alltoallv: ``send_counts[r][q]``, ``sdispls[r][q]``, ``recv_counts[r][q]``,
      ``rdispls[r][q]`` in elements, per rank (``recv_counts[q][r] == send_counts[r][q]``).
    * send / recv: one pair: ``root`` sends ``count`` elements of its "in" to ``peer``'s "out";
      the Schedule (kind "send_recv") holds both sides, ``per_rank[root]`` is HcclSend's,
      ``per_rank[peer]`` HcclRecv's; the other ranks have no steps.
    * barrier: notifies only (PRE and END with every rank).

    ``algorithm``: None -> :func:`choose`."""
    p = int(n_ranks)
    rank_server = list(rank_server)[:p]
    esize = T.DATA_TYPE_SIZE[dtype]
    count = int(count)
    if kind in ("send", "recv", "send_recv"):
        return _send_recv(p, rank_server, count * esize, int(root), int(peer))
    algo = algorithm or choose(kind, p, rank_server, count * esize)
    b = _B(kind, p, rank_server, algo)
    ranks = list(range(p))
    if p == 1 or kind == "barrier":
        return _trivial(b, kind, count, esize, send_counts, sdispls, recv_counts, rdispls, root)
    fn = {"all_reduce": _all_reduce, "reduce_scatter": _reduce_scatter,
          "all_gather": _all_gather, "broadcast": _broadcast, "reduce": _reduce,
          "scatter": _scatter, "alltoall": _alltoall, "alltoallv": _alltoall}.get(kind)
    if fn is None:
        raise ValueError(f"unknown collective {kind!r}")
    if kind == "alltoall":
        send_counts = [[count] * p for _ in ranks]
        recv_counts = [[count] * p for _ in ranks]
        sdispls = rdispls = [[q * count for q in ranks] for _ in ranks]
    if kind in ("alltoall", "alltoallv"):
        return fn(b, esize, send_counts, sdispls, recv_counts, rdispls)
    return fn(b, count, esize, int(root))


def _trivial(b, kind, count, esize, send_counts, sdispls, recv_counts, rdispls, root):
    """One rank: the data moves from in to out locally. Barrier on p ranks: PRE and END with
    every rank, notifies only."""
    if kind == "barrier":
        for r in range(b.p):
            b.pre(r, 0, range(b.p))
        for r in range(b.p):
            b.end(r, 0)
        return b.done(0)
    n = count * esize
    if kind == "alltoallv":
        n0, o_in, o_out = send_counts[0][0] * esize, sdispls[0][0] * esize, rdispls[0][0] * esize
        b.copy(0, 0, (0, "in", o_in), (0, "out", o_out), n0)
    elif kind not in ("send", "recv"):
        b.copy(0, 0, (0, "in", 0), (0, "out", 0), n)
    return b.done(0)


def _k(b, group_size):
    """Side streams of a mesh over ``group_size`` ranks: one thread per peer, the first on the
    user's stream."""
    return max(0, group_size - 2)


def _all_reduce(b, count, esize, root):
    p, ranks, algo = b.p, list(range(b.p)), b.algorithm
    n = count * esize
    for r in ranks:
        b.copy(r, 0, (r, "in", 0), (r, "scratch", 0), n)
    if algo == "mesh":
        ch = _Chunks(count, p, esize)
        k = _k(b, p)
        _mesh_reduce_scatter(b, ranks, lambda r: ch[r], k)
        for r in ranks:
            b.copy(r, 0, (r, "scratch", ch[r][0]), (r, "out", ch[r][0]), ch[r][1])
        _mesh_all_gather(b, ranks, lambda q: ch[q], k, ready_tag=b.tag())
        _close(b, ranks, k)
        return b.done(k)
    if algo in ("ring", "rhd"):
        ch = _Chunks(count, p, esize)
        chunks = [ch[i] for i in range(p)]
        (_ring if algo == "ring" else _rhd)(b, ranks, chunks, True, True)
        for r in ranks:
            b.copy(r, 0, (r, "scratch", 0), (r, "out", 0), n)
            b.end(r, 0)
        return b.done(0)
    if algo == "hierarchical":
        return _hier_all_reduce(b, count, esize)
    raise ValueError(f"all_reduce has no algorithm {algo!r}")


def _hier_all_reduce(b, count, esize):
    """Intra-server mesh ReduceScatter (chunk by local index) -> inter-server AllReduce of that
    chunk among the ranks of the same local index (RHD for a power-of-2 server count, else ring),
    on stream 0 -> intra-server mesh AllGather."""
    servers = list(_servers(b.server).values())
    m = len(servers[0])
    if any(len(g) != m for g in servers):
        raise ValueError("hierarchical all_reduce needs the same rank count on every server")
    k = _k(b, m)
    ch = _Chunks(count, m, esize)
    local = {r: g.index(r) for g in servers for r in g}
    for g in servers:
        _mesh_reduce_scatter(b, g, lambda r: ch[local[r]], k)
    columns = [[g[i] for g in servers] for i in range(m)]
    inter = _rhd if _pow2(len(servers)) else _ring
    for col in columns:
        off, nb = ch[local[col[0]]]
        sub = _Chunks(nb // esize, len(servers), esize, base=off)
        inter(b, col, [sub[j] for j in range(len(servers))], True, True)
    for g in servers:
        for r in g:
            off, nb = ch[local[r]]
            b.copy(r, 0, (r, "scratch", off), (r, "out", off), nb)
    tag = b.tag()
    for g in servers:
        _mesh_all_gather(b, g, lambda q: ch[local[q]], k, ready_tag=tag)
    _close(b, list(range(b.p)), k)
    return b.done(k)


def _reduce_scatter(b, count, esize, root):
    p, ranks, algo = b.p, list(range(b.p)), b.algorithm
    n = count * esize * p
    ch = _Chunks(count * p, p, esize)
    for r in ranks:
        b.copy(r, 0, (r, "in", 0), (r, "scratch", 0), n)
    k = _k(b, p) if algo == "mesh" else 0
    if algo == "mesh":
        _mesh_reduce_scatter(b, ranks, lambda r: ch[r], k)
    elif algo in ("ring", "rhd"):
        (_ring if algo == "ring" else _rhd)(b, ranks, [ch[i] for i in range(p)], True, False)
    else:
        raise ValueError(f"reduce_scatter has no algorithm {algo!r}")
    for r in ranks:
        b.copy(r, 0, (r, "scratch", ch[r][0]), (r, "out", 0), ch[r][1])
    _close(b, ranks, k)
    return b.done(k)


def _all_gather(b, count, esize, root):
    p, ranks, algo = b.p, list(range(b.p)), b.algorithm
    c = count * esize
    ch = _Chunks(count * p, p, esize)
    if algo == "mesh":
        k = _k(b, p)
        for r in ranks:
            b.copy(r, 0, (r, "in", 0), (r, "scratch", ch[r][0]), c)
            b.copy(r, 0, (r, "in", 0), (r, "out", ch[r][0]), c)
        _mesh_all_gather(b, ranks, lambda q: ch[q], k)
        _close(b, ranks, k)
        return b.done(k)
    if algo in ("ring", "rhd"):
        for r in ranks:
            b.copy(r, 0, (r, "in", 0), (r, "scratch", ch[r][0]), c)
        (_ring if algo == "ring" else _rhd)(b, ranks, [ch[i] for i in range(p)], False, True)
        for r in ranks:
            b.copy(r, 0, (r, "scratch", 0), (r, "out", 0), c * p)
            b.end(r, 0)
        return b.done(0)
    raise ValueError(f"all_gather has no algorithm {algo!r}")


def _broadcast(b, count, esize, root):
    p, ranks, algo = b.p, list(range(b.p)), b.algorithm
    n = count * esize
    b.copy(root, 0, (root, "in", 0), (root, "scratch", 0), n)
    if algo == "mesh":
        # Mesh.md: Scatter (each rank reads its chunk from the root) + AllGather.
        k = _k(b, p)
        ch = _Chunks(count, p, esize)

        def scatter(r, j, q):
            if q == root:
                b.copy(r, j, (root, "scratch", ch[r][0]), (r, "scratch", ch[r][0]), ch[r][1])
        _mesh_phase(b, ranks, scatter, k)
        tag = b.tag()

        def gather(r, j, q):
            b.exchange(r, j, [q], tag)
            if r != root:
                b.copy(r, j, (q, "scratch", ch[q][0]), (r, "scratch", ch[q][0]), ch[q][1])
        _mesh_phase(b, ranks, gather, k, pre=False)
        _close(b, ranks, k)
        for r in ranks:
            b.copy(r, 0, (r, "scratch", 0), (r, "out", 0), n)
        return b.done(k)
    if algo == "ring":
        # npusim's simplification (fidelity row 386): a chain root -> root+1 -> ..., whole data.
        order = [(root + i) % p for i in range(p)]
        for r in ranks:
            i = order.index(r)
            b.pre(r, 0, ([order[i - 1]] if i else []) + ([order[i + 1]] if i + 1 < p else []))
        td = b.tag()
        for i, r in enumerate(order):
            if i:
                b.wait(r, 0, order[i - 1], td)
                b.copy(r, 0, (order[i - 1], "scratch", 0), (r, "scratch", 0), n)
            if i + 1 < p:
                b.post(r, 0, order[i + 1], td)
        for r in ranks:
            b.copy(r, 0, (r, "scratch", 0), (r, "out", 0), n)
            b.end(r, 0)
        return b.done(0)
    raise ValueError(f"broadcast has no algorithm {algo!r}")


def _reduce(b, count, esize, root):
    """Mesh.md: ReduceScatter + Gather to the root; ring: ring ReduceScatter, then the root reads
    every chunk from its owner (fidelity row 386)."""
    p, ranks, algo = b.p, list(range(b.p)), b.algorithm
    n = count * esize
    ch = _Chunks(count, p, esize)
    for r in ranks:
        b.copy(r, 0, (r, "in", 0), (r, "scratch", 0), n)
    k = _k(b, p) if algo == "mesh" else 0
    if algo == "mesh":
        _mesh_reduce_scatter(b, ranks, lambda r: ch[r], k)
        b.copy(root, 0, (root, "scratch", ch[root][0]), (root, "out", ch[root][0]), ch[root][1])
        tag = b.tag()

        def gather(r, j, q):
            if root in (r, q):
                b.exchange(r, j, [q], tag)
            if r == root:
                b.copy(r, j, (q, "scratch", ch[q][0]), (r, "out", ch[q][0]), ch[q][1])
        _mesh_phase(b, ranks, gather, k, pre=False)
    elif algo == "ring":
        _ring(b, ranks, [ch[i] for i in range(p)], True, False)
        b.copy(root, 0, (root, "scratch", ch[root][0]), (root, "out", ch[root][0]), ch[root][1])
        tag = b.tag()
        for r in ranks:
            if r == root:
                others = [q for q in ranks if q != root]
                b.pre(r, 0, others)
                b.exchange(r, 0, others, tag)
                for q in others:
                    b.copy(r, 0, (q, "scratch", ch[q][0]), (r, "out", ch[q][0]), ch[q][1])
            else:
                b.pre(r, 0, [root])
                b.exchange(r, 0, [root], tag)
    else:
        raise ValueError(f"reduce has no algorithm {algo!r}")
    _close(b, ranks, k)
    return b.done(k)


def _scatter(b, count, esize, root):
    p, ranks = b.p, list(range(b.p))
    c = count * esize
    k = _k(b, p)
    b.copy(root, 0, (root, "in", 0), (root, "scratch", 0), c * p)
    b.copy(root, 0, (root, "in", root * c), (root, "out", 0), c)

    def fn(r, j, q):
        if q == root:
            b.copy(r, j, (root, "scratch", r * c), (r, "out", 0), c)
    # only the channels to and from the root: the others open none
    for r in ranks:
        b.fork(r, k)
        for j, q in enumerate(_mesh_threads(b, ranks, r)):
            if root in (r, q):
                b.pre(r, j, [q])
                fn(r, j, q)
        b.join(r, k)
    _close(b, ranks, k)
    return b.done(k)


def _alltoall(b, esize, send_counts, sdispls, recv_counts, rdispls):
    p, ranks, algo = b.p, list(range(b.p)), b.algorithm
    for r in ranks:
        for q in ranks:
            if send_counts[r][q] != recv_counts[q][r]:
                raise ValueError(f"send_counts[{r}][{q}] != recv_counts[{q}][{r}]")
    tot = [max([(sdispls[r][q] + send_counts[r][q]) * esize for q in ranks] + [0])
           for r in ranks]
    for r in ranks:
        b.copy(r, 0, (r, "in", 0), (r, "scratch", 0), tot[r])
        b.copy(r, 0, (r, "in", sdispls[r][r] * esize), (r, "out", rdispls[r][r] * esize),
               send_counts[r][r] * esize)

    def fetch(r, s, q):
        b.copy(r, s, (q, "scratch", sdispls[q][r] * esize), (r, "out", rdispls[r][q] * esize),
               recv_counts[r][q] * esize)
    if algo == "mesh":
        k = _k(b, p)
        _mesh_phase(b, ranks, fetch, k)
        _close(b, ranks, k)
        return b.done(k)
    if algo == "pairwise":
        # Pairwise.md: step k receives from r - k (and sends to r + k); one stream.
        for step in range(1, p):
            for r in ranks:
                b.pre(r, 0, [(r + step) % p, (r - step) % p])
                fetch(r, 0, (r - step) % p)
        for r in ranks:
            b.end(r, 0)
        return b.done(0)
    raise ValueError(f"{b.kind} has no algorithm {algo!r}")


def _send_recv(p, rank_server, n, src, dst):
    """HcclSend on ``src`` / HcclRecv on ``dst``: the sender copies its "in" into its scratch,
    both exchange PRE, the receiver reads into its "out", both exchange END."""
    if not (0 <= src < p and 0 <= dst < p) or src == dst:
        raise ValueError(f"send/recv needs two different ranks, got {src} -> {dst}")
    b = _B("send_recv", p, rank_server, "p2p")
    b.copy(src, 0, (src, "in", 0), (src, "scratch", 0), n)
    b.pre(src, 0, [dst])
    b.pre(dst, 0, [src])
    b.copy(dst, 0, (src, "scratch", 0), (dst, "out", 0), n)
    b.end(src, 0)
    b.end(dst, 0)
    return b.done(0)


# ------------------------------------------------------------------ walking the schedule
def walk(per_rank, on_step=None, pick=None):
    """Run ``per_rank`` (lists of steps per rank, one or several collectives back to back) in
    an order the posts and waits allow: each stream in its order, a wait only after its post.
    ``pick(candidates)`` chooses the next (rank, stream) among the runnable ones (default: the
    first in FIFO order); ``on_step(rank, step)`` is called per step. Raises
    :class:`ProtocolError` when a notify is posted twice before its wait consumed it, and
    :class:`DeadlockError` when steps remain but none can run. Returns the steps run."""
    queues: dict = {}
    for r, steps in enumerate(per_rank):
        for st in steps:
            queues.setdefault((r, st.stream), deque()).append(st)
    posted: set = set()
    blocked: dict = {}
    ready = deque(sorted(queues))
    ran = 0

    def key(r, st):
        if st.kind in ("post", "wait"):
            return ("n", r, st.peer, st.tag) if st.kind == "post" else ("n", st.peer, r, st.tag)
        return ("l", r, st.tag)

    while ready:
        if pick is None:
            rs = ready.popleft()
        else:
            idx = pick(ready)
            rs = ready[idx]
            del ready[idx]
        q = queues[rs]
        st = q[0]
        r = rs[0]
        if st.kind in ("wait", "local_wait"):
            kk = key(r, st)
            if kk not in posted:
                blocked[kk] = rs
                continue
            posted.discard(kk)
        elif st.kind in ("post", "local_post"):
            kk = key(r, st)
            if kk in posted:
                raise ProtocolError(f"rank {r} stream {st.stream}: {st.kind} tag {st.tag} to "
                                    f"{st.peer} posted again before it was consumed")
            posted.add(kk)
            w = blocked.pop(kk, None)
            if w is not None:
                ready.append(w)
        if on_step is not None:
            on_step(r, st)
        ran += 1
        q.popleft()
        if q:
            ready.append(rs)
    left = {rs: q[0] for rs, q in queues.items() if q}
    if left:
        heads = "; ".join(f"rank {r} stream {s}: {st.kind} peer {st.peer} tag {st.tag}"
                          for (r, s), st in sorted(left.items()))
        raise DeadlockError(f"no step can run: {heads}")
    return ran


def execute(sched: Schedule, bufs, dtype: int, op: int = 0, pick=None) -> None:
    """Apply ``sched`` to ``bufs`` (per rank a dict "in"/"out"/"scratch" -> writable uint8 numpy
    array; "in" and "out" may be the same array) in numpy, in an order its notifies allow."""
    def on_step(r, st):
        if st.kind not in ("copy", "reduce"):
            return
        (sr, sb, so), (dr, db, do) = st.src, st.dst
        for rank, name, off in ((sr, sb, so), (dr, db, do)):
            if off < 0 or off + st.nbytes > len(bufs[rank][name]):
                raise IndexError(f"rank {r}: {st.kind} of {st.nbytes} bytes at {name}+{off} of "
                                 f"rank {rank} ({len(bufs[rank][name])} bytes)")
        src = bufs[sr][sb][so:so + st.nbytes]
        dst = bufs[dr][db][do:do + st.nbytes]
        if st.kind == "copy":
            dst[:] = src.copy()
        else:
            reduce_np(dst, src.copy(), dtype, op)
    walk(sched.per_rank, on_step, pick)


# ------------------------------------------------------------------ numpy reductions
_NP = {T.HCCL_DATA_TYPE_INT8: np.int8, T.HCCL_DATA_TYPE_INT16: np.int16,
       T.HCCL_DATA_TYPE_INT32: np.int32, T.HCCL_DATA_TYPE_FP16: np.float16,
       T.HCCL_DATA_TYPE_FP32: np.float32, T.HCCL_DATA_TYPE_INT64: np.int64,
       T.HCCL_DATA_TYPE_UINT64: np.uint64, T.HCCL_DATA_TYPE_UINT8: np.uint8,
       T.HCCL_DATA_TYPE_UINT16: np.uint16, T.HCCL_DATA_TYPE_UINT32: np.uint32,
       T.HCCL_DATA_TYPE_FP64: np.float64}


def _bf16_to_f32(u16):
    return (u16.astype(np.uint32) << 16).view(np.float32)


def _f32_to_bf16(f):
    """Round to nearest even; a NaN stays a quiet NaN."""
    bits = np.ascontiguousarray(f, np.float32).view(np.uint32).astype(np.uint64)
    nan = (bits & 0x7F800000) == 0x7F800000
    nan &= (bits & 0x7FFFFF) != 0
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(nan, ((bits >> 16) | 0x40).astype(np.uint16), rounded)


def _apply(op, a, b):
    with np.errstate(all="ignore"):
        if op == T.HCCL_REDUCE_SUM:
            return a + b
        if op == T.HCCL_REDUCE_PROD:
            return a * b
        if op == T.HCCL_REDUCE_MAX:
            return np.maximum(a, b)
        if op == T.HCCL_REDUCE_MIN:
            return np.minimum(a, b)
    raise ValueError(f"no reduce op {op}")


def reduce_np(dst, src, dtype: int, op: int) -> None:
    """``dst = dst OP src`` on raw bytes (uint8 arrays) of ``dtype`` elements, as npusim's
    device reduce does it (docs/fidelity.md row 388): integers wrap; fp16 and bf16 are widened
    to fp32, combined, and rounded to nearest even per step; fp32 / fp64 in their own type;
    MAX / MIN propagate a NaN."""
    if dtype not in T.REDUCIBLE_TYPES:
        raise ValueError(f"HcclDataType {dtype} has no reduction")
    if dtype == T.HCCL_DATA_TYPE_BFP16:
        d = dst.view(np.uint16)
        res = _apply(op, _bf16_to_f32(d), _bf16_to_f32(src.view(np.uint16)))
        d[:] = _f32_to_bf16(res)
        return
    t = _NP[dtype]
    d = dst.view(t)
    if dtype == T.HCCL_DATA_TYPE_FP16:
        res = _apply(op, d.astype(np.float32), src.view(t).astype(np.float32))
        with np.errstate(over="ignore"):
            d[:] = res.astype(np.float16)
    else:
        d[:] = _apply(op, d, src.view(t)).astype(t)
