"""What one collective becomes on one rank: the tasks of its schedule on the user's stream and
HCCL's side streams (``../shared/spec/hccl.md`` §4, ``hccl`` ``docs/zh/user_guide/perf_analysis/
typical_op_behavior.md``).

For rank ``r`` and a schedule from ``algo.py``:

1. **fork** — the user's stream records an event that each side stream the schedule uses
   waits for (HCCL's main stream posting to its slave streams). On a capturing stream this is
   what joins the side streams to the capture, as HCCL's ``CaptureSlaveStreams`` adds them with
   ``rtStreamAddToModel`` (``src/ops/op_common/op_common.cc``);
2. **the steps**, each on its stream in order: ``copy`` / ``reduce`` — a peer task
   (``runtime/peer.py`` ``move``: SDMA between any two devices' memory, an inline reduce for
   ``reduce``) lasting ``cost.step_ns`` (the α–β model); ``post`` / ``wait`` — a notify record /
   wait on the communicator's bridge from this rank to the peer (``Communicator.bridge``);
   ``local_post`` / ``local_wait`` — an event between two streams of this rank;
3. **join** — each side stream records an event the user's stream waits for, so the
   collective ends on the user's stream (and a capture's side streams are joined back: no
   107025).

Bridges are per *scope*: eager collectives share scope 0; collectives captured into the k-th
graph of a rank share scope k. So ranks that replay graphs from the same capture session pair
up, and ranks that replay graphs from different captures, or that take an eager path while
their peers replay a graph, wait on notifies no peer records — the hang the hardware shows
(hccl ``docs/zh/user_guide/constraints.md``), reported by the deadlock diagnosis.
"""
from __future__ import annotations

from contextlib import contextmanager

from ..device import engine as E
from ..device import sqe as S
from ..runtime import api_event as AE
from ..runtime.api_mdl import CAPTURE_END_HOOKS
from ..runtime.event import ACL_EVENT_SYNC
from ..runtime import peer
from ..runtime.runtime import RT
from ..runtime.stream import Stream
from . import algo, cost
from . import move as R
from . import types as T
from .comm import FREE_MEMBER_HOOKS, GRAPHS


@contextmanager
def _in_ctx(ctx):
    """Make ``ctx`` the thread's current context for the calls inside (HCCL's own streams and
    events are made on the rank's device, whichever thread drives the rank)."""
    tls = RT.tls
    old = tls.current
    tls.current = ctx
    try:
        yield
    finally:
        tls.current = old


def _uncharged(fn, *args) -> int:
    """``fn(*args)`` (an event record or wait of HCCL's own, made only while capturing: no
    ring to wait for) at no host cost: it is part of its collective's one host cost
    (``host_hccl_launch_ns``), not a call of the program's."""
    h = RT.host_ns
    try:
        return fn(*args)
    finally:
        RT.host_ns = h


def _side_streams(m, k: int) -> list:
    while len(m.side) < k:
        s = Stream(RT.tls.current or m.ctx)
        RT.handles.add("stream", s)
        m.side.append(s)
    return m.side[:k]


def _event(m, tag) -> int:
    """The event of local tag ``tag`` on rank ``m``: an Ex event with ACL_EVENT_SYNC (the kind a
    capture records and a stream's wait joins into it), whose wait waits for its latest
    record, so one event serves the tag in every collective."""
    h = m.events.get(tag)
    if h is None:
        h, code = AE.create_event_ex_with_flag(ACL_EVENT_SYNC)
        m.events[tag] = h
    return h


def _free(m) -> None:
    """``comm.FREE_MEMBER_HOOKS``: a member's side streams, events and notify slots go with it
    (a slot once no graph that captured it can run)."""
    if RT.devices.get(m.device.id) is m.device:
        models = list(m.captured)
        for slot in m.notifies.values():
            m.device.retire_slot(slot, models=models)
    m.notifies.clear()
    for h in m.events.values():
        with _in_ctx(m.ctx):
            AE.destroy_event(h)
    m.events.clear()
    for s in m.side:
        if not s.destroyed and RT.devices.get(s.device.id) is s.device:
            try:
                s.device.wait_sq(s.sq, s.tail)
            except Exception:  # noqa: BLE001 -- a stream stuck on a peer: dropped as it is
                pass
            RT.handles.remove(s.handle)
            s.release()
    m.side.clear()


FREE_MEMBER_HOOKS.append(_free)


def _task_ns(s, t) -> int:
    """What the engine charges one notify task on ``s`` (its SQ's dispatch, the wait's cost)."""
    return int(s.device.state.sqs[s.sq, E.Q_DISPATCH]) + t.notify_wait_ns


def _joins(tag: int, streams: list, stream) -> bool:
    """Does local tag ``tag`` fork a side stream that is not yet in ``stream``'s capture (its
    wait must be an event wait: that is what joins the stream to the capture)?"""
    link = stream.capture
    j, fork = divmod(tag - algo.TAG_LOCAL, 2)
    if link is None or fork or not 0 < j < len(streams):
        return False
    side = streams[j].capture
    return side is None or side.model is not link.model


class LocalNotify:
    """The owner of a slot HCCL syncs two streams of one rank with (named in diagnoses)."""

    __slots__ = ("label",)

    def __init__(self, label: str):
        self.label = label

    def describe(self) -> str:
        return self.label


def _local_slot(m, tag: int) -> int:
    """The notify slot of local tag ``tag`` on rank ``m`` (one per tag, every collective)."""
    slot = m.notifies.get(tag)
    if slot is None:
        slot = m.notifies[tag] = m.device.new_slot(LocalNotify(
            f"HCCL notify {tag - algo.TAG_LOCAL} between the streams of {m.comm.name} "
            f"rank {m.rank}"))
    return slot


def _join_capture(origin, model) -> None:
    """``api_mdl.CAPTURE_END_HOOKS``: before the capture's join-back check, each HCCL side
    stream of a rank in this capture ends with an event record its origin waits for (their
    in-collective joins are notifies, which the check does not count), as HCCL joins the
    slave streams it added (``CaptureSlaveStreams``)."""
    for m in GRAPHS.get(model, ()):
        if m.device is not origin.device:
            continue
        with _in_ctx(origin.ctx):
            for j, side in enumerate(m.side, 1):
                link = side.capture
                if link is None or link.model is not model:
                    continue
                ev = _event(m, ("end", j))
                _uncharged(AE.record_event, ev, side.handle)
                _uncharged(AE.stream_wait_event, origin.handle, ev)


CAPTURE_END_HOOKS.append(_join_capture)


def scope_of(m, stream) -> int:
    """0 for an eager collective; k for one captured into the k-th graph of this rank."""
    link = stream.capture
    if link is None:
        return 0
    model = link.model
    k = m.scopes.get(model)
    if k is None:
        k = m.scopes[model] = len(m.scopes) + 1
    m.comm.models.add(model)
    return k


def _addr(m, ref, send: int, recv: int, bufs=()) -> int:
    rank, buf, off = ref
    if buf == "scratch":
        return m.comm.members[rank].scratch + off
    if isinstance(buf, tuple):                  # ("buf", i): a batch item's user buffer
        return bufs[buf[1]] + off
    if rank != m.rank:
        raise ValueError(f"a step names rank {rank}'s {buf} buffer: only CCL buffers are "
                         f"reachable from a peer")
    return (send if buf == "in" else recv) + off


def issue(m, sched, stream, send: int, recv: int, dtype: int, op: int, bufs=()) -> int:
    """``_issue`` with the stream's context current, whichever thread drives the rank."""
    with _in_ctx(stream.ctx):
        return _issue(m, sched, stream, send, recv, dtype, op, bufs)


def _issue(m, sched, stream, send: int, recv: int, dtype: int, op: int, bufs=()) -> int:
    """Queue rank ``m.rank``'s part of ``sched`` on ``stream`` (``send`` / ``recv``: the user
    buffers "in" and "out" name); the stream position of its last task, or a negative ACL code
    (a task the runtime refused). The schedule forks and joins its side streams itself
    (``local_post`` / ``local_wait``, ``algo.fork_tag`` / ``join_tag``)."""
    comm = m.comm
    if sched.scratch_bytes > m.scratch_size:
        comm.allocate(sched.scratch_bytes)
    scope = scope_of(m, stream)
    steps = sched.per_rank[m.rank]
    streams = [stream] + _side_streams(m, max((st.stream for st in steps), default=0))
    t = stream.device.profile.timing
    RT.host_ns += t.host_hccl_launch_ns          # one host cost per collective: its tasks are
    host = 0                                     # put on the streams together (row 373)
    since = [0] * len(streams)                  # tasks per stream since its last data step
    evented: set = set()                        # local tags synced with events (a fork that
                                                # joins a side stream to the capture)
    for st in steps:
        s = streams[st.stream]
        k = st.kind
        since[st.stream] += 1
        if k == "copy" or k == "reduce":
            dst = _addr(m, st.dst, send, recv, bufs)
            src = _addr(m, st.src, send, recv, bufs)
            dur = cost.step_ns(st, t)
            if st.link != "local":
                # alpha is the step's whole fixed latency: what the engine charges the step's
                # notify and dispatch tasks on this stream is part of it (row 373)
                dur -= min(t.hccl_alpha_ns, since[st.stream] * _task_ns(s, t))
            since[st.stream] = 0
            if k == "copy":
                pos = peer.move(s, dst, src, st.nbytes, dur, host, R.MOVE_KID,
                                (R.OP_COPY, dtype))
            else:
                pos = peer.move(s, dst, src, st.nbytes, dur, host, R.MOVE_KID, (op, dtype))
        elif k == "post":
            pos = s.submit(S.OP_NOTIFY_RECORD, host, a0=comm.bridge(scope, m.rank, st.peer,
                                                                    st.tag).src_slot)
        elif k == "wait":
            pos = s.submit(S.OP_NOTIFY_WAIT, host, a0=comm.bridge(scope, st.peer, m.rank,
                                                                  st.tag).dst_slot)
        elif k == "local_post":
            # between two streams of this rank: a notify of the rank's own (HCCL syncs its
            # streams with notifies), or an event where a side stream must join the capture
            if _joins(st.tag, streams, stream):
                evented.add(st.tag)
                pos = -_uncharged(AE.record_event, _event(m, st.tag), s.handle)
            else:
                evented.discard(st.tag)         # (a fork tag's next post: a notify)
                pos = s.submit(S.OP_NOTIFY_RECORD, host, a0=_local_slot(m, st.tag))
        elif k == "local_wait":
            if st.tag in evented:
                pos = -_uncharged(AE.stream_wait_event, s.handle, _event(m, st.tag))
            else:
                pos = s.submit(S.OP_NOTIFY_WAIT, host, a0=_local_slot(m, st.tag))
        else:
            raise ValueError(f"unknown step kind {k!r}")
        if pos < 0:
            return pos
    if stream.capture is not None:
        return 0                        # done at each replay (comm.replayed)
    comm.ends[m.rank].append((stream, stream.tail))
    return stream.tail


def hang(m, stream, scope: int) -> int:
    """Rank ``m.rank``'s op that can never pair with its peers' (``comm.clash``): instead of its
    steps, a wait on a notify no device records, so it never ends, its peers wait for it in
    turn, and the synchronize explains it (the communicator's diagnosis, 107020)."""
    with _in_ctx(stream.ctx):
        RT.host_ns += stream.device.profile.timing.host_hccl_launch_ns
        b = m.comm.bridge(scope, m.rank, m.rank, -1)
        pos = stream.submit(S.OP_NOTIFY_WAIT, 0, a0=b.dst_slot)
        if pos < 0 or stream.capture is not None:
            return min(pos, 0)
        m.comm.ends[m.rank].append((stream, stream.tail))
        return stream.tail
