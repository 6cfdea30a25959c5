"""Why a collective can never finish: cross-rank mismatch detection over the communicators' op logs.

On the real stack every rank of a communicator must issue the same collectives, with the same
count, data type, reduce op and root, in the same order, and pair each ``HcclSend(dest=q)`` with
an ``HcclRecv(src=r)`` on rank q in order. A rank that does not leaves its peers in a notify wait
that only ends when ``HCCL_EXEC_TIMEOUT`` (1836 s by default) expires: HCCL then reports EI0002
("Communication_Error_Timeout": the notify register never received the notify record of a remote
rank; ``hicann/runtime`` ``src/dfx/error_manager/error_code.json:975-985``) and the stream's
synchronize fails. HCCL's fault-diagnosis guide names the cause to look for first: ranks of one
communicator that issued different operators, counts or data types (``hicann/hccl``
``docs/zh/user_guide/fault_diagnosis/task_exec_stage.md`` §"notify wait超时（EI0002）", whose
example is rank 0 in AllReduce and rank 1 in AllGather at the same op index).

npusim knows every rank's op log, so it names the first place the ranks disagree instead of
waiting: :func:`diagnose` returns a :class:`Mismatch` (or ``None``) with an EI0002-style message;
:func:`explain` says who waits for whom even when nothing disagrees. Pure Python over
:class:`OpRecord` lists (``comm.py`` keeps them); nothing here touches a device.

The codes a program sees (docs/fidelity.md rows 390-391; the rules and the message: rows 392-394):

* the synchronize: ``ACL_ERROR_RT_TASK_TIMEOUT`` 107020. HCCL's waits are notify waits with its
  exec timeout (``hcomm`` ``adapter_rts.cc`` ``hrtNotifyWaitWithTimeOut`` ->
  ``aclrtWaitAndResetNotify(notify, stream, timeOut)``); a notify-wait SQE that times out ends
  with the STARS "task timeout" CQE, which ``SetStarsResultCommon`` turns into
  ``TS_ERROR_TASK_TIMEOUT`` (``src/runtime/core/src/task/task_info/task_manager.cc:378-395``,
  registered for NOTIFY_WAIT in ``notify_task_v100.cc:193-217``); the failed wait sets it as the
  stream's error (``notify_task.cc:397-407`` ``ReportNotifyErrorForNotifyWaitTask``), and
  ``Stream::GetError`` maps it (``stream.cc:1790-1830``, ``error_code.cc:268``
  ``TS_ERROR_TASK_TIMEOUT -> RT_ERROR_TSFW_TASK_TIMEOUT``, ``errcode_manage.cc:479`` ->
  ``ACL_ERROR_RT_TASK_TIMEOUT``);
* ``HcclGetCommAsyncError``: ``HCCL_SUCCESS`` 0. It reports only an RDMA error CQE
  (``HCCL_E_REMOTE``) and, when ``HCCL_DFS_CONFIG`` sets ``inconsistent_check:on``, an
  inconsistent op found by the heartbeat (``HCCL_E_PARA``); the default mode is ``first``
  (``hcomm`` ``op_base.cc`` ``HcclGetCommAsyncError``, ``heartbeat.cc`` ``CheckErrorCqe`` /
  ``CheckOpInconsistentError``, ``env_config.h`` default ``InconsistentCheckMode::FIRST``).
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import errors as ERR

# ---- facts of hccl_types.h (hcomm include/hccl/hccl_types.h), named as HCCL's logs print them
HCCL_SUCCESS = 0
HCCL_E_PARA = 1
DTYPE_NAMES = {0: "int8", 1: "int16", 2: "int32", 3: "float16", 4: "float32", 5: "int64",
               6: "uint64", 7: "uint8", 8: "uint16", 9: "uint32", 10: "float64", 11: "bfloat16",
               12: "int128", 14: "hifloat8", 15: "fp8e4m3", 16: "fp8e5m2", 17: "fp8e8m0"}
OP_NAMES = {0: "sum", 1: "prod", 2: "max", 3: "min"}

EXEC_TIMEOUT_S = 1836
"""``HCCL_EXEC_TIMEOUT``'s default, seconds (``hccl``
``docs/zh/user_guide/hccl_env/HCCL_EXEC_TIMEOUT.md``)."""

SYNC_CODE = ERR.ACL_ERROR_RT_TASK_TIMEOUT
"""What the synchronize of a stream stuck in a collective returns once the notify wait times out."""
ASYNC_ERROR = HCCL_SUCCESS
"""``HcclGetCommAsyncError``'s answer after such a timeout (default ``HCCL_DFS_CONFIG``)."""

REASONS = ("order", "kind", "count", "dtype", "op", "root", "peer", "missing",
           "unmatched_send", "graph", "destroyed")

P2P = frozenset({"send", "recv"})
REDUCING = frozenset({"all_reduce", "reduce", "reduce_scatter", "reduce_scatter_v"})
ROOTED = frozenset({"reduce", "broadcast", "scatter", "gather"})
NO_COUNT = frozenset({"barrier"})
PAIRWISE_COUNTS = frozenset({"alltoallv", "alltoallvc"})
"""Kinds whose counts are checked per pair from ``extra``: rank r's ``send_counts[q]`` must equal
rank q's ``recv_counts[r]`` (a count matrix ``count_matrix`` must be equal on every rank)."""
VECTOR_COUNTS = {"all_gather_v": "recv_counts", "reduce_scatter_v": "send_counts"}
"""Kinds with one count vector in ``extra`` that every rank must pass alike, and whose entry r must
be rank r's own ``count``."""


@dataclass(frozen=True, slots=True)
class OpRecord:
    """One collective or point-to-point op one rank issued on one communicator (``comm.py``)."""
    index: int        # 0, 1, 2 ... per rank per communicator
    kind: str         # "all_reduce", "send", "recv", "broadcast", ...
    count: int
    dtype: int        # HcclDataType
    op: int           # HcclReduceOp or -1
    root: int         # root rank or -1
    peer: int         # send/recv: the other rank, else -1
    site: str         # "file.py:123 in fn" of the user's call
    stream: str       # the stream's name
    graph: str        # "" eager, else the capture it was captured into, named alike on every
    #                   rank (the capture session, e.g. "capture 3 of comm tp", not a per-device
    #                   model handle): ranks whose ops carry different names never pair
    extra: tuple = ()  # ((key, value), ...) or a dict: "send_counts" / "recv_counts" /
    #                    "count_matrix" (alltoallv[c], all_gather_v, reduce_scatter_v)

    def get(self, key: str, default=None):
        """The value of ``key`` in :attr:`extra` (pairs, or a dict), else ``default``."""
        pairs = self.extra.items() if isinstance(self.extra, dict) else self.extra
        for k, v in pairs:
            if k == key:
                return v
        return default


@dataclass(frozen=True, slots=True)
class Mismatch:
    """The first place the ranks of a communicator disagree, and what the program would see."""
    comm: str
    index: int             # the op index where it shows (the lowest of the ranks involved)
    ranks: tuple           # the ranks involved, ascending
    reason: str            # one of REASONS
    message: str           # EI0002-style, several lines; the first says it all
    code: int = SYNC_CODE  # what the synchronize that can never finish returns
    async_error: int = ASYNC_ERROR  # HcclGetCommAsyncError's value after the timeout
    indices: tuple = ()    # per rank of ``ranks``: its op index there (its op count if it has none)

    @property
    def headline(self) -> str:
        return self.message.split("\n", 1)[0]


# ---- describing ops
def dtype_name(dtype: int) -> str:
    return DTYPE_NAMES.get(dtype, f"dtype {dtype}")


def op_name(op: int) -> str:
    return OP_NAMES.get(op, f"op {op}")


def describe(rec: OpRecord) -> str:
    """``all_reduce count=1024 float32 sum`` / ``send to rank 3 count=8 int32``."""
    if rec.kind in P2P:
        head = f"{rec.kind} {'to' if rec.kind == 'send' else 'from'} rank {rec.peer}"
    else:
        head = rec.kind
    parts = [head]
    if rec.kind not in NO_COUNT and rec.kind not in PAIRWISE_COUNTS:
        parts.append(f"count={rec.count}")
    for key in ("send_counts", "recv_counts", "count_matrix"):
        if rec.get(key) is not None:
            parts.append(f"{key}={list(rec.get(key))}")
    if rec.kind not in NO_COUNT:
        parts.append(dtype_name(rec.dtype))
    if rec.kind in REDUCING:
        parts.append(op_name(rec.op))
    if rec.kind in ROOTED:
        parts.append(f"root={rec.root}")
    return " ".join(parts)


def _short(rec: OpRecord) -> str:
    if rec.kind in P2P:
        return f"{rec.kind} {'to' if rec.kind == 'send' else 'from'} rank {rec.peer}"
    return rec.kind


def where(rec: OpRecord) -> str:
    """``at train.py:40 in step, stream s0, graph 'decode'``."""
    text = f"at {rec.site or '?'}, stream {rec.stream or '?'}"
    return text + (f", graph '{rec.graph}'" if rec.graph else ", eager")


def _names(ranks) -> str:
    ranks = sorted(ranks)
    return f"rank {ranks[0]}" if len(ranks) == 1 else "ranks " + ", ".join(map(str, ranks))


# ---- comparing ops
def _pairs(a: OpRecord, ra: int, b: OpRecord, rb: int) -> bool:
    """a on rank ra and b on rank rb are the two ends of one point-to-point transfer."""
    return ({a.kind, b.kind} == P2P and a.peer == rb and b.peer == ra)


def _p2p_diff(a: OpRecord, b: OpRecord) -> str | None:
    if a.graph != b.graph:
        return "graph"
    if a.count != b.count:
        return "count"
    if a.dtype != b.dtype:
        return "dtype"
    return None


def _split(values: dict) -> tuple[int, list[int]]:
    """(reference rank, ranks that differ from it): the reference value is the most common one,
    ties going to the value of the lowest rank."""
    tally: dict = {}
    for r in sorted(values):
        tally.setdefault(values[r], []).append(r)
    best = max(tally.values(), key=lambda rs: (len(rs), -rs[0]))
    ref_value = values[best[0]]
    return best[0], [r for r in sorted(values) if values[r] != ref_value]


def _coll_diff(heads: dict) -> tuple[str, int, list[int]] | None:
    """The first field the collectives at ``heads`` (rank -> OpRecord) disagree on, as
    (field, reference rank, ranks that differ), or None when they all match."""
    simple = [("graph", lambda o: o.graph), ("kind", lambda o: o.kind)]
    for field, key in simple:
        ref, bad = _split({r: key(o) for r, o in heads.items()})
        if bad:
            return field, ref, bad
    kind = next(iter(heads.values())).kind
    if kind in PAIRWISE_COUNTS:
        found = _pairwise_diff(heads)
        if found:
            return found
    elif kind in VECTOR_COUNTS:
        key = VECTOR_COUNTS[kind]
        ref, bad = _split({r: tuple(o.get(key, ())) for r, o in heads.items()})
        if bad:
            return "count", ref, bad
        vec = tuple(heads[ref].get(key, ()))
        bad = [r for r, o in sorted(heads.items()) if r < len(vec) and vec[r] != o.count]
        if bad:
            good = [r for r in sorted(heads) if r not in bad]
            if good:
                return "count", good[0], bad
            return "count", bad[0], bad[1:] or bad
    elif kind not in NO_COUNT:
        ref, bad = _split({r: o.count for r, o in heads.items()})
        if bad:
            return "count", ref, bad
    checks = []
    if kind not in NO_COUNT:
        checks.append(("dtype", lambda o: o.dtype))
    if kind in REDUCING:
        checks.append(("op", lambda o: o.op))
    if kind in ROOTED:
        checks.append(("root", lambda o: o.root))
    for field, key in checks:
        ref, bad = _split({r: key(o) for r, o in heads.items()})
        if bad:
            return field, ref, bad
    return None


def _pairwise_diff(heads: dict) -> tuple[str, int, list[int]] | None:
    matrices = {r: o.get("count_matrix") for r, o in heads.items()}
    if all(m is not None for m in matrices.values()):
        ref, bad = _split({r: tuple(m) for r, m in matrices.items()})
        return ("count", ref, bad) if bad else None
    for r in sorted(heads):
        sends = heads[r].get("send_counts")
        if sends is None:
            continue
        for q in sorted(heads):
            recvs = heads[q].get("recv_counts")
            if recvs is None or q >= len(sends) or r >= len(recvs):
                continue
            if sends[q] != recvs[r]:
                return "count", r, [q] if q != r else [r]
    return None


# ---- the progress every rank can make
def _progress(n: int, logs: list) -> list[int]:
    """How far each rank gets when every op completes as soon as its partners are there: a
    collective when every rank's next op is a matching collective, a send / recv when the peer's
    next op is its matching other end. Completing one op never disables another, so the result
    is the same in whatever order ops complete."""
    heads = [0] * n
    changed = True
    while changed:
        changed = False
        for r in range(n):
            while heads[r] < len(logs[r]):
                op = logs[r][heads[r]]
                if op.kind in P2P:
                    q = op.peer
                    if not (0 <= q < n) or q == r or heads[q] >= len(logs[q]):
                        break
                    other = logs[q][heads[q]]
                    if not _pairs(op, r, other, q) or _p2p_diff(op, other):
                        break
                    heads[r] += 1
                    heads[q] += 1
                else:
                    if any(heads[s] >= len(logs[s]) or logs[s][heads[s]].kind in P2P
                           for s in range(n)):
                        break
                    if _coll_diff({s: logs[s][heads[s]] for s in range(n)}) is not None:
                        break
                    for s in range(n):
                        heads[s] += 1
                changed = True
    return heads


def _partner_later(logs: list, q: int, start: int, op: OpRecord, r: int) -> int | None:
    """Position in rank q's log (from ``start``) of the other end of rank r's ``op``, if any."""
    for pos in range(start, len(logs[q])):
        if _pairs(op, r, logs[q][pos], q):
            return pos
    return None


# ---- the report
class _Report:
    """The pieces of one Mismatch before its message is written."""
    __slots__ = ("reason", "ranks", "indices", "headline", "lines", "fix", "remote", "waiters",
                 "absent")

    def __init__(self, reason, involved: dict, headline: str, lines: list, fix: str, remote,
                 waiters=None, absent=()):
        self.reason = reason
        self.absent = frozenset(absent)  # ranks with no op left: their index is their op count
        self.ranks = tuple(sorted(involved))
        self.indices = tuple(involved[r] for r in self.ranks)
        self.headline = headline
        self.lines = lines
        self.fix = fix
        self.remote = sorted(remote)  # the ranks whose notify record never comes
        self.waiters = sorted(waiters if waiters is not None
                              else [r for r in self.ranks if r not in remote])

    @property
    def index(self) -> int:
        return min(self.indices)

    def rank_key(self, order: dict) -> tuple:
        """Earliest first: the op index, then the earliest op actually issued, then the reason."""
        issued = [i for r, i in zip(self.ranks, self.indices) if r not in self.absent]
        return (self.index, min(issued, default=self.index), order[self.reason], self.ranks)


_FIX_ORDER = "make every rank issue the same collectives in the same order"
_FIX_ARGS = {
    "count": "pass the same count on every rank",
    "dtype": "pass the same data type on every rank",
    "op": "pass the same reduce op on every rank",
    "root": "pass the same root rank on every rank",
    "graph": ("replay on every rank the graph made by the same capture "
              "(graphs of different captures never pair, even with identical ops)"),
}


def _rank_line(r: int, rec: OpRecord) -> str:
    return f"  rank {r}: op #{rec.index} {describe(rec)}, {where(rec)}"


def _field_value(field: str, rec: OpRecord) -> str:
    if field == "kind":
        return rec.kind
    if field == "count":
        for key in ("send_counts", "recv_counts", "count_matrix"):
            if rec.get(key) is not None:
                return describe(rec)
        return f"count {rec.count}"
    if field == "dtype":
        return dtype_name(rec.dtype)
    if field == "op":
        return op_name(rec.op)
    if field == "root":
        return f"root {rec.root}"
    if field == "graph":
        return f"graph '{rec.graph}'" if rec.graph else "the eager path"
    return ""


def _collective_report(field, ref, bad, heads: dict, waiting_all: list) -> _Report:
    refop = heads[ref]
    groups: dict = {}
    for r in bad:
        groups.setdefault(_field_value(field, heads[r]), []).append(r)
    if field == "kind":
        said = ", ".join(f"{_names(rs)} issued {v}" for v, rs in groups.items())
        headline = f"{said} where rank {ref} issued {refop.kind}"
        fix = _FIX_ORDER
    elif field == "graph":
        said = ", ".join(f"{_names(rs)} runs {v}" for v, rs in groups.items())
        headline = f"{said} where rank {ref} runs {_field_value('graph', refop)}"
        fix = _FIX_ARGS["graph"]
    else:
        said = ", ".join(f"{_names(rs)} passed {v}" for v, rs in groups.items())
        headline = (f"{said} to {refop.kind} where rank {ref} passed "
                    f"{_field_value(field, refop)}")
        fix = _FIX_ARGS[field]
        if refop.kind in PAIRWISE_COUNTS and field == "count":
            headline = _pairwise_headline(ref, bad[0], refop, heads[bad[0]])
            fix = "rank r's send count to rank q must equal rank q's recv count from rank r"
    involved = {r: heads[r].index for r in [ref, *bad]}
    lines = [_rank_line(r, heads[r]) for r in sorted(involved)]
    rest = [r for r in waiting_all if r not in involved]
    if rest:
        lines.append(f"  {_names(rest)}: op #{heads[rest[0]].index} {refop.kind} "
                     f"like rank {ref}, waiting")
    return _Report(field, involved, headline, lines, fix, remote=bad,
                   waiters=[r for r in waiting_all if r not in bad])


def _pairwise_headline(r: int, q: int, rop: OpRecord, qop: OpRecord) -> str:
    sends, recvs = rop.get("send_counts"), qop.get("recv_counts")
    if sends is not None and recvs is not None and q < len(sends) and r < len(recvs):
        return (f"rank {r}'s {rop.kind} sends {sends[q]} to rank {q}, whose recv count "
                f"from rank {r} is {recvs[r]}")
    return f"rank {q}'s {qop.kind} count matrix differs from rank {r}'s"


def _p2p_report(r: int, op: OpRecord, n: int, logs: list, heads: list) -> _Report:
    q = op.peer
    other_end = "recv" if op.kind == "send" else "send"
    if not (0 <= q < n) or q == r:
        headline = (f"rank {r}'s {op.kind} (op #{op.index}) names rank {q}, "
                    f"not another rank of the {n}-rank communicator")
        return _Report("peer", {r: op.index}, headline, [_rank_line(r, op)],
                       "pass a destRank / srcRank in 0..n-1 other than the caller's own", remote=[])
    if heads[q] < len(logs[q]):
        qop = logs[q][heads[q]]
        if _pairs(op, r, qop, q):
            field = _p2p_diff(op, qop)
            headline = (f"rank {r}'s {op.kind} and rank {q}'s {qop.kind} disagree: "
                        f"{_field_value(field, op)} on rank {r}, "
                        f"{_field_value(field, qop)} on rank {q}")
            fix = (_FIX_ARGS[field] if field == "graph" else
                   f"pass the same {'count' if field == 'count' else 'data type'} "
                   f"to HcclSend and its HcclRecv")
            return _Report(field, {r: op.index, q: qop.index}, headline,
                           [_rank_line(r, op), _rank_line(q, qop)], fix, remote=[q])
        later = _partner_later(logs, q, heads[q], op, r)
        if later is not None:
            lop = logs[q][later]
            headline = (f"rank {r} issued {op.kind} {'to' if op.kind == 'send' else 'from'} "
                        f"rank {q} at op #{op.index}, but rank {q} first issued "
                        f"{describe(qop)} (op #{qop.index}) and its {lop.kind} only at "
                        f"op #{lop.index}")
            lines = [_rank_line(r, op), _rank_line(q, qop),
                     f"  rank {q}: its {lop.kind}: op #{lop.index} {describe(lop)}, {where(lop)}"]
            return _Report("order", {r: op.index, q: qop.index}, headline, lines,
                           f"{_FIX_ORDER}; each send must meet its recv", remote=[q])
        if qop.kind == other_end and qop.peer != r:
            headline = (f"rank {r} {op.kind}s {'to' if op.kind == 'send' else 'from'} rank {q} "
                        f"(op #{op.index}) but rank {q} {qop.kind}s "
                        f"{'to' if qop.kind == 'send' else 'from'} rank {qop.peer} "
                        f"(op #{qop.index})")
            return _Report("peer", {r: op.index, q: qop.index}, headline,
                           [_rank_line(r, op), _rank_line(q, qop)],
                           "check the destRank / srcRank arguments: each HcclSend(dest=q) on "
                           "rank r pairs with an HcclRecv(src=r) on rank q", remote=[q])
        qline = _rank_line(q, qop)
        qidx = qop.index
        absent = []
    else:
        qline = f"  rank {q}: issued {len(logs[q])} ops, none is the matching {other_end}"
        qidx = len(logs[q])
        absent = [q]
    headline = (f"rank {r}'s {op.kind} {'to' if op.kind == 'send' else 'from'} rank {q} "
                f"(op #{op.index}) has no matching {other_end} on rank {q}")
    return _Report("unmatched_send", {r: op.index, q: qidx}, headline, [_rank_line(r, op), qline],
                   "pair every HcclSend(dest=q) on rank r with an HcclRecv(src=r) on rank q, "
                   "in the same order", remote=[q], absent=absent)


def _missing_report(heads_ops: dict, finished: list, logs: list) -> _Report:
    first = min(heads_ops)
    op = heads_ops[first]
    involved = {r: o.index for r, o in heads_ops.items()}
    involved.update({q: len(logs[q]) for q in finished})
    counts = ", ".join(f"rank {q} issued {len(logs[q])}" for q in finished)
    headline = (f"{_names(finished)} never issued {op.kind} #{op.index} "
                f"({counts} ops) while {_names(heads_ops)} wait in it")
    lines = [_rank_line(r, o) for r, o in sorted(heads_ops.items())]
    for q in finished:
        last = logs[q][-1] if logs[q] else None
        tail = f", the last #{last.index} {describe(last)}, {where(last)}" if last else ""
        lines.append(f"  rank {q}: issued {len(logs[q])} ops{tail}")
    fix = (f"{_FIX_ORDER}: look for a branch one rank took alone (an eager path while the "
           f"others captured, a skipped step)")
    return _Report("missing", involved, headline, lines, fix, remote=finished, absent=finished)


def _stuck_report(n: int, logs: list, heads: list) -> _Report | None:
    waiting = [r for r in range(n) if heads[r] < len(logs[r])]
    if not waiting:
        return None
    finished = [r for r in range(n) if heads[r] >= len(logs[r])]
    head = {r: logs[r][heads[r]] for r in waiting}
    found: list[_Report] = []
    for r in waiting:
        if head[r].kind in P2P:
            found.append(_p2p_report(r, head[r], n, logs, heads))
    coll = {r: o for r, o in head.items() if o.kind not in P2P}
    if coll:
        diff = _coll_diff(coll) if len(coll) > 1 else None
        if diff is not None:
            field, ref, bad = diff
            found.append(_collective_report(field, ref, bad, coll, sorted(coll)))
        elif finished:
            found.append(_missing_report(coll, finished, logs))
    if not found:
        # every waiting rank sits in one agreeing collective while others sit in point-to-point
        # ops whose reports above would have been found; nothing else can block.
        return None
    order = {reason: i for i, reason in enumerate(REASONS)}
    return min(found, key=lambda rep: rep.rank_key(order))


def _destroyed_report(n: int, logs: list, done: list) -> _Report | None:
    pending = {r: logs[r][done[r]] for r in range(n) if done[r] < len(logs[r])}
    if not pending:
        return None
    first = min(pending, key=lambda r: (pending[r].index, r))
    op = pending[first]
    headline = (f"the communicator was destroyed while {_names(pending)} still had ops to run "
                f"(first: rank {first}'s {op.kind} #{op.index})")
    lines = [_rank_line(r, o) for r, o in sorted(pending.items())]
    fix = ("synchronize the streams (and let graph replays finish) before HcclCommDestroy; "
           "destroy the communicator after the graphs that use it")
    return _Report("destroyed", {r: o.index for r, o in pending.items()}, headline, lines, fix,
                   remote=[])


def _message(comm: str, n: int, rep: _Report, code: int, async_error: int) -> str:
    top = f"EI0002 notify wait timeout, comm '{comm}' op #{rep.index}: {rep.headline}"
    lines = [top, *[ln for ln in rep.lines if ln]]
    if rep.remote and rep.waiters:
        verb = "waits" if len(rep.waiters) == 1 else "wait"
        lines.append(f"  {_names(rep.waiters)} {verb} for a notify record from "
                     f"{_names(rep.remote)} that never comes (group '{comm}', rankSize {n})")
    lines.append(f"  synchronize: {code} {ERR.name_of(code)} once HCCL_EXEC_TIMEOUT "
                 f"({EXEC_TIMEOUT_S} s by default) expires")
    lines.append(f"  HcclGetCommAsyncError: {async_error}"
                 + (" (HCCL_SUCCESS)" if async_error == HCCL_SUCCESS else ""))
    lines.append(f"  fix: {rep.fix}")
    return "\n".join(lines)


def _check(n_ranks: int, logs, done) -> None:
    if len(logs) != n_ranks:
        raise ValueError(f"{len(logs)} op logs for {n_ranks} ranks")
    if done is not None and len(done) != n_ranks:
        raise ValueError(f"{len(done)} done counts for {n_ranks} ranks")


def diagnose(comm_name: str, n_ranks: int, logs: list, done: list,
             destroyed: bool = False) -> Mismatch | None:
    """The first place the ranks of communicator ``comm_name`` disagree, or None.

    ``logs[r]``: rank r's ops on this communicator in issue order; ``done[r]``: how many of them
    completed. ``destroyed``: the communicator was destroyed, so any op not completed never will.
    Without a mismatch every rank's ops can complete (the communicator is not what blocks).
    """
    _check(n_ranks, logs, done)
    rep = _destroyed_report(n_ranks, logs, done) if destroyed else None
    if rep is None:
        rep = _stuck_report(n_ranks, logs, _progress(n_ranks, logs))
    if rep is None:
        return None
    return Mismatch(comm=comm_name, index=rep.index, ranks=rep.ranks, reason=rep.reason,
                    message=_message(comm_name, n_ranks, rep, SYNC_CODE, ASYNC_ERROR),
                    code=SYNC_CODE, async_error=ASYNC_ERROR, indices=rep.indices)


def explain(comm_name: str, n_ranks: int, logs: list, done: list) -> str:
    """Who waits for whom on communicator ``comm_name``, one line per rank, from how far each
    rank's ops completed (``done``); then the mismatch, if :func:`diagnose` finds one."""
    _check(n_ranks, logs, done)
    pending = {r: logs[r][done[r]] for r in range(n_ranks) if done[r] < len(logs[r])}
    lines = [f"comm '{comm_name}' ({n_ranks} ranks): "
             + (f"{_names(pending)} still have ops to run" if pending else "every op completed")]
    for r in range(n_ranks):
        if r not in pending:
            lines.append(f"  rank {r}: all {len(logs[r])} ops done")
            continue
        op = pending[r]
        lines.append(f"  rank {r}: {done[r]} of {len(logs[r])} ops done, "
                     f"waits in {_short(op)} #{op.index} {where(op)}")
        state = (_p2p_state(r, op, n_ranks, logs, done, pending) if op.kind in P2P else
                 _collective_state(op, n_ranks, logs, done, pending))
        lines.append(f"    ({state})")
    found = diagnose(comm_name, n_ranks, logs, done)
    if found is not None:
        lines.append(f"  first mismatch: {found.headline}")
    elif pending:
        lines.append("  no mismatch between the ranks' op logs: every pending op can complete")
    return "\n".join(lines)


def _collective_state(op: OpRecord, n: int, logs: list, done: list, pending: dict) -> str:
    reached = [s for s, o in pending.items()
               if o.kind not in P2P and _coll_diff({0: op, 1: o}) is None]
    text = f"{len(reached)} of {n} ranks reached it"
    notes = []
    for s in range(n):
        if s in reached:
            continue
        if s not in pending:
            notes.append(f"rank {s} has no op left to run")
            continue
        o = pending[s]
        note = f"rank {s} is at op #{o.index} {_short(o)}"
        if o.kind in P2P:
            q = o.peer
            other_end = "recv" if o.kind == "send" else "send"
            if not (0 <= q < n) or q == s:
                note += ", an invalid peer"
            elif q not in pending or _partner_later(logs, q, done[q], o, s) is None:
                note += f", whose {other_end} is missing"
        notes.append(note)
    return text + ("; " + "; ".join(notes) if notes else "")


def _p2p_state(r: int, op: OpRecord, n: int, logs: list, done: list, pending: dict) -> str:
    q = op.peer
    other_end = "recv" if op.kind == "send" else "send"
    if not (0 <= q < n) or q == r:
        return f"rank {q} is not a peer of this communicator"
    if q not in pending:
        return f"rank {q} has no op left to run: its {other_end} is missing"
    qop = pending[q]
    if _pairs(op, r, qop, q):
        return f"rank {q} is at its {qop.kind}, op #{qop.index}"
    later = _partner_later(logs, q, done[q], op, r)
    if later is None:
        return f"rank {q} is at op #{qop.index} {_short(qop)}; its {other_end} is missing"
    return (f"rank {q} is at op #{qop.index} {_short(qop)}; its {other_end} is op "
            f"#{logs[q][later].index}")
