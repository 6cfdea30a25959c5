"""What HCCL adds to a captured graph on each rank (:func:`hccl_load`), for the planner's
``--tp N`` plans. Part of :mod:`npusim.plan`.

A collective on a capturing stream is lowered (``hccl/lower.py``) into the steps of its schedule
(``hccl/algo.py`` ``schedule``), each one task on the stream the step names: stream 0 is the
capturing stream, streams 1..k are the rank's HCCL side streams (``Schedule.streams``; a mesh on
p ranks has p - 2, ``algo._k``). The first fork of a side stream (an Ex event record on stream 0
and its wait on the side, ``local_post`` / ``local_wait``) joins it to the capture, as HCCL's
``CaptureSlaveStreams`` adds its slave streams with ``rtStreamAddToModel`` — so each side stream
is one more capture stream of the graph, one more SQ/CQ pair at its first execution, and a
stream the rank's context holds (counted with the user streams). Per collective:

* SQEs: one per step on its stream (copies and inline reduces are one SDMA task each, notify
  record / wait one each, event record / wait one each: hardware events on every profile);
* capture events: one per ``local_post`` (a record in capture makes a new capture event,
  ``runtime/capture.py`` ``record``), each reset at EndCapture on the origin;
* notifies: npusim's bridges (``Communicator.bridge``) are keyed by (scope, src, dst, tag), the
  scope being the capture a collective was captured into: each graph of a rank holds its own
  slots, one per distinct (peer, tag) it posts to and one per distinct (peer, tag) it waits
  on. Real HCCL allocates notifies per link when the communicator connects and reuses them in
  every graph; npusim does not count bridges against ``max_notifies``;
* Ex events: one per local tag (``fork_tag`` / ``join_tag`` of each side stream) per rank and
  communicator, made once and reused (they count against the device's events);
* CCL buffer: HCCL takes 2 x ``HCCL_BUFFSIZE`` per communicator per rank (hccl_env/
  HCCL_BUFFSIZE.md: one for sending, one for receiving); npusim allocates one buffer of
  ``max(HCCL_BUFFSIZE, the largest schedule's scratch)`` per rank (``Communicator.allocate``).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..hccl import algo
from ..hccl import types as T

KINDS = ("all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "reduce")
"""Collectives a plan can place (``--collective``)."""

DTYPE = T.HCCL_DATA_TYPE_FP32
ESIZE = 4


def count_of(kind: str, tp: int, nbytes: int) -> int:
    """Elements per collective call for a send buffer of ``nbytes`` per rank (fp32): the whole
    buffer for AllReduce / AllGather / Broadcast / Reduce, a rank's share for ReduceScatter
    (the receive count) and AlltoAll (one block)."""
    n = max(1, int(nbytes) // ESIZE)
    return max(1, n // tp) if kind in ("reduce_scatter", "alltoall") else n


def buffers_of(kind: str, tp: int, nbytes: int) -> tuple[int, int]:
    """(send, receive) buffer bytes one rank needs for the plan's collective."""
    c = count_of(kind, tp, nbytes) * ESIZE
    if kind == "all_gather":
        return c, tp * c
    if kind in ("reduce_scatter", "alltoall"):
        return tp * c, (c if kind == "reduce_scatter" else tp * c)
    return c, c


@dataclass
class HcclLoad:
    """What HCCL adds on one rank: per collective, and per graph of ``per_graph`` collectives."""
    rank: int
    tp: int
    kind: str
    algorithm: str
    nbytes: int
    per_graph: int
    side_streams: int
    """HCCL side streams of this rank (joined into every graph that has a collective)."""
    main_sqes: int
    """SQEs of one graph's collectives on the capturing stream."""
    side_sqes: list
    """SQEs of one graph's collectives on each side stream."""
    capture_events: int
    """Capture events of one graph's collectives (each reset at EndCapture)."""
    notifies: int
    """npusim's bridge slots one graph's collectives hold on this rank (posts + waits)."""
    events: int
    """Ex events HCCL makes on this rank for the communicator (once)."""
    ccl_bytes: int
    """HCCL's CCL buffers on this rank: 2 x HCCL_BUFFSIZE."""
    npusim_ccl_bytes: int
    """What npusim allocates: one buffer of max(HCCL_BUFFSIZE, the schedule's scratch)."""

    def __str__(self) -> str:
        mb = 1024 * 1024
        return (f"HCCL per rank: {self.side_streams} side stream"
                f"{'s' if self.side_streams != 1 else ''} ({self.algorithm}), "
                f"+{self.main_sqes} SQEs on the capturing stream and "
                f"{'/'.join(map(str, self.side_sqes)) or '0'} on the side streams per graph, "
                f"{self.capture_events} capture events and {self.notifies} notifies per graph, "
                f"{self.events} events, CCL buffers {self.ccl_bytes // mb} MB "
                f"(2 x HCCL_BUFFSIZE; npusim allocates {self.npusim_ccl_bytes // mb} MB)")


def hccl_load(tp: int, kind: str = "all_reduce", nbytes: int = 4096, per_graph: int = 1,
              rank: int = 0, ranks_per_server: int = 8,
              buffsize: int = T.HCCL_BUFFSIZE_BYTES) -> HcclLoad:
    """What ``per_graph`` collectives ``kind`` of ``nbytes`` per rank, on ``tp`` ranks
    (``ranks_per_server`` to a server), add to one graph of rank ``rank`` (see the module)."""
    if kind not in KINDS:
        raise ValueError(f"unknown collective {kind!r} (one of {', '.join(KINDS)})")
    tp = int(tp)
    servers = [r // max(1, int(ranks_per_server)) for r in range(tp)]
    s = algo.schedule(kind, tp, servers, count_of(kind, tp, nbytes), DTYPE, T.HCCL_REDUCE_SUM, 0)
    steps = s.per_rank[rank]
    k = max([st.stream for st in steps] + [0])
    per_stream = [0] * (k + 1)
    for st in steps:
        per_stream[st.stream] += 1
    posts = {(st.peer, st.tag) for st in steps if st.kind == "post"}
    waits = {(st.peer, st.tag) for st in steps if st.kind == "wait"}
    tags = {st.tag for st in steps if st.kind == "local_post"}
    n = int(per_graph)
    return HcclLoad(
        rank=rank, tp=tp, kind=kind, algorithm=s.algorithm, nbytes=int(nbytes), per_graph=n,
        side_streams=k if n else 0, main_sqes=n * per_stream[0],
        side_sqes=[n * c for c in per_stream[1:]] if n else [],
        capture_events=n * sum(1 for st in steps if st.kind == "local_post"),
        notifies=(len(posts) + len(waits)) if n else 0, events=len(tags) if n else 0,
        ccl_bytes=2 * buffsize, npusim_ccl_bytes=max(buffsize, s.scratch_bytes))
