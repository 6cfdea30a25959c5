"""``npusim.hccl``: HCCL's C API in the facade's style (``../shared/design.md`` §3.1).

Names are the snake_case of the C names without ``Hccl`` (``HcclAllReduce`` ->
``all_reduce``, ``HcclCommInitRootInfo`` -> ``comm_init_root_info``); outputs come first and the
``HcclResult`` last (a call with no outputs returns just the code); a function never raises:
a hostile argument is a code before anything changes, and an exception inside npusim is
HCCL_E_INTERNAL (recorded, as the acl facade records its 507000s). The reason of a failure is
``acl.get_recent_err_msg()``'s, as for an acl call.

The checks follow ``hccl`` ``src/ops/*/*_op.cc`` (e.g. ``all_reduce_op.cc``: a zero count
succeeds before anything is checked; then NULL stream, comm, send, recv -> HCCL_E_PTR;
``CheckCount`` -> HCCL_E_PARA; ``CheckDataType`` / ``CheckReduceOp`` in ``op_common.cc`` ->
HCCL_E_NOT_SUPPORT), docs/fidelity.md rows 373-379.
"""
from __future__ import annotations

import functools
import sys
from dataclasses import replace

from ..device.launchjit import forget as _forget
from ..runtime.peer import owner_of
from ..runtime.recording import site
from ..runtime.runtime import RT
from . import algo
from . import comm as C
from . import lower
from . import types as T

ESCAPES: list = []
"""(function, exception) of every exception that escaped into a facade call (a bug)."""
GROUP = [0]
"""HcclGroupStart nesting depth of the process."""


def _api(outputs: int):
    """Wrap a facade function: runtime lock, stalled waiters woken after, never raises."""
    def deco(fn):
        @functools.wraps(fn)
        def call(*args, **kw):
            RT.tls.error_detail = ""
            try:
                with RT.lock:
                    _forget()           # a locked region begins: the launch memo is void
                    r = fn(*args, **kw)
                    if RT.stalled:
                        RT.progress.notify_all()
                code = r[-1] if isinstance(r, tuple) else r
                if code:
                    _recent(fn.__name__, code)
                return r
            except Exception as e:  # noqa: BLE001 -- the facade never raises
                ESCAPES.append((fn.__name__, e))
                print(f"npusim.hccl.{fn.__name__}: internal error {e!r}", file=sys.stderr)
                RT.tls.error_detail = f"internal error {e!r}"
                _recent(fn.__name__, T.HCCL_E_INTERNAL)
                return (None,) * outputs + (T.HCCL_E_INTERNAL,) if outputs else \
                    T.HCCL_E_INTERNAL
        call.__wrapped_outputs__ = outputs
        return call
    return deco


def _recent(name: str, code: int) -> None:
    """A failed call's text for ``acl.get_recent_err_msg()`` (the facade's promise above: the
    reason was set by ``RT.tls.explain`` but never reached the recent error message)."""
    detail = RT.tls.take_detail()
    text = f"npusim.hccl.{name} returned {code} {T.RESULT_NAMES.get(code, '')}: " \
           f"{T.get_error_string(code)}"
    RT.tls.recent_error = f"{text} — {detail}" if detail else text


def _fail(code: int, why: str) -> int:
    RT.tls.explain(why)
    return code


def _int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


MAX_RANKS = 1 << 16
"""npusim's bound on nRanks (uint32 in C): a larger count can never complete in one process,
and ``[None] * nRanks`` of 2**70 raised OverflowError inside the facade."""


def _ranks_ok(n_ranks, rank) -> bool:
    return _int(n_ranks) and 0 < n_ranks <= MAX_RANKS and _int(rank) and 0 <= rank < n_ranks


def _null(x) -> bool:
    """NULL: ``None`` or the integer 0 (a hostile object's ``==`` is never called)."""
    return x is None or (_int(x) and x == 0)


def _zero(x) -> bool:
    """A count that is the integer 0 (HCCL returns success for it before any check)."""
    return _int(x) and x == 0


# ---- communicators ----
@_api(1)
def get_root_info():
    """HcclGetRootInfo: (root info, code). The root info is HCCL's opaque blob (bytes of
    ``HCCL_ROOT_INFO_BYTES``); pass it to every rank's ``comm_init_root_info``."""
    if RT.current_context is None:
        return None, _fail(T.HCCL_E_RUNTIME, "no current device: aclrtSetDevice first")
    ident = next(C._ids)
    blob = T.ROOT_INFO_MAGIC + ident.to_bytes(8, "little")
    return blob + bytes(T.HCCL_ROOT_INFO_BYTES - len(blob)), T.HCCL_SUCCESS


def _root_key(root_info):
    if not isinstance(root_info, (bytes, bytearray)) or len(root_info) != \
            T.HCCL_ROOT_INFO_BYTES or not bytes(root_info).startswith(T.ROOT_INFO_MAGIC):
        return None
    return ("root", bytes(root_info[:len(T.ROOT_INFO_MAGIC) + 8]))


def _join(key, n_ranks, rank, rank_server=None, config=None, what="HcclCommInitRootInfo"):
    ctx = RT.current_context
    if ctx is None:
        return None, _fail(T.HCCL_E_RUNTIME, "no current device: aclrtSetDevice first")
    m = C.join(key, n_ranks, rank, ctx, rank_server, config)
    if m is None:
        return None, _fail(T.HCCL_E_PARA, f"rank {rank} has already joined this communicator")
    m.handle = RT.handles.add("hccl_comm", m)
    RT.progress.notify_all()
    if not C.wait_complete(m, T.HCCL_CONNECT_TIMEOUT_S):
        missing = m.comm.missing()
        C.PENDING.pop(key, None)
        RT.handles.remove(m.handle)
        m.comm.members[rank] = None
        return None, _fail(T.HCCL_E_TIMEOUT,
                           f"{what}: ranks {missing} of {n_ranks} never joined and no other "
                           f"thread can still join them: call it on every rank (one thread "
                           f"per rank), or use comm_init_all from one thread")
    if m.comm.destroyed and not m.scratch:
        RT.handles.remove(m.handle)
        return None, _fail(T.HCCL_E_MEMORY, f"{what}: the CCL buffer of {m.comm.buffsize} bytes "
                                            f"does not fit on every rank's device: lower "
                                            f"hcclBufferSize")
    return m.handle, T.HCCL_SUCCESS


@_api(1)
def comm_init_root_info(n_ranks, root_info, rank):
    """HcclCommInitRootInfo: (comm, code); waits until all ``n_ranks`` ranks joined."""
    if root_info is None:
        return None, _fail(T.HCCL_E_PTR, "rootInfo is NULL")
    if not _ranks_ok(n_ranks, rank):
        return None, _fail(T.HCCL_E_PARA, f"rank {rank!r} / nRanks {n_ranks!r}: need 0 <= "
                                          f"rank < nRanks")
    key = _root_key(root_info)
    if key is None:
        return None, _fail(T.HCCL_E_PARA, "rootInfo is not a root info from get_root_info")
    return _join(key, n_ranks, rank)


@_api(1)
def comm_config_init():
    """HcclCommConfigInit: (a config with HCCL's defaults, a dict keyed by the C field
    names, code)."""
    return T.comm_config_defaults(), T.HCCL_SUCCESS


@_api(1)
def comm_init_root_info_config(n_ranks, root_info, rank, config):
    """HcclCommInitRootInfoConfig: as ``comm_init_root_info`` with a config
    (``comm_config_init``'s dict: ``hcclBufferSize`` in MB, ``hcclCommName`` ...)."""
    if root_info is None or config is None:
        return None, _fail(T.HCCL_E_PTR, "rootInfo or config is NULL")
    if not isinstance(config, dict):
        return None, _fail(T.HCCL_E_PARA, "config is not a dict from comm_config_init")
    if not _ranks_ok(n_ranks, rank):
        return None, _fail(T.HCCL_E_PARA, f"rank {rank!r} / nRanks {n_ranks!r}")
    bs = config.get("hcclBufferSize", T.HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET)
    if not _int(bs) or bs <= 0 or bs > T.HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET:
        return None, _fail(T.HCCL_E_PARA, f"hcclBufferSize {bs!r} is not a positive MB count")
    key = _root_key(root_info)
    if key is None:
        return None, _fail(T.HCCL_E_PARA, "rootInfo is not a root info from get_root_info")
    return _join(key, n_ranks, rank, config=config, what="HcclCommInitRootInfoConfig")


@_api(1)
def comm_init_cluster_info(cluster_info, rank):
    """HcclCommInitClusterInfo: (comm, code) from a rank table file (HCCL's JSON); its
    server list gives the topology."""
    if cluster_info is None:
        return None, _fail(T.HCCL_E_PTR, "clusterInfo is NULL")
    table = C.read_rank_table(str(cluster_info)) if isinstance(cluster_info, str) else None
    if table is None:
        return None, _fail(T.HCCL_E_PARA, f"{cluster_info!r} is not a readable rank table "
                                          f"(server_list[].device[].rank_id)")
    n, servers, devices = table
    if not _int(rank) or not 0 <= rank < n:
        return None, _fail(T.HCCL_E_PARA, f"rank {rank!r} is not in the rank table's 0..{n - 1}")
    ctx = RT.current_context
    if ctx is not None and ctx.device.id != devices[rank]:
        return None, _fail(T.HCCL_E_PARA, f"rank {rank} is device {devices[rank]} in the rank "
                                          f"table, but the current device is {ctx.device.id}")
    return _join(("table", cluster_info), n, rank, servers, what="HcclCommInitClusterInfo")


@_api(1)
def comm_init_all(ndev, devices):
    """HcclCommInitAll: (one comm per device, in the order of ``devices``, code): every rank
    made by one call, e.g. for one thread driving all ranks."""
    if devices is None:
        return None, _fail(T.HCCL_E_PTR, "devices is NULL")
    if not _int(ndev) or ndev <= 0 or not isinstance(devices, (list, tuple)) or \
            len(devices) < ndev or not all(_int(d) for d in devices[:ndev]):
        return None, _fail(T.HCCL_E_PARA, f"ndev {ndev!r} and devices {devices!r}")
    devs = list(devices[:ndev])
    from ..runtime import api_device as AD
    if len(set(devs)) != ndev or not all(AD.valid_device_id(d) for d in devs):
        return None, _fail(T.HCCL_E_PARA, f"devices {devs}: each a distinct device id of "
                                          f"this server")
    key = ("all", next(C._ids))
    handles = []
    for r, d in enumerate(devs):
        dev = AD.device(d)
        if dev.primary is None:
            code = AD.set_device(d)             # HcclCommInitAll sets each device
            if code:
                return None, _fail(T.HCCL_E_RUNTIME, f"device {d}: aclrtSetDevice gave {code}")
        m = C.join(key, ndev, r, dev.primary)
        m.handle = RT.handles.add("hccl_comm", m)
        handles.append(m.handle)
    return handles, T.HCCL_SUCCESS


def _member(comm):
    """(Member, 0) or (None, code) for a comm handle."""
    if _null(comm):
        return None, _fail(T.HCCL_E_PTR, "comm is NULL")
    if not _int(comm):
        return None, _fail(T.HCCL_E_PARA, f"comm {comm!r} is not a communicator handle")
    m, code = RT.handles.get("hccl_comm", comm)
    if code or m is None:
        return None, _fail(T.HCCL_E_PARA, f"comm 0x{comm:x} is not a live communicator "
                                          f"(destroyed, or never made)")
    return m, T.HCCL_SUCCESS


@_api(0)
def comm_destroy(comm) -> int:
    """HcclCommDestroy: this rank leaves; the communicator's resources go with its last rank
    (a graph that captured its collectives hangs at its next replay, as on the hardware)."""
    m, code = _member(comm)
    if code:
        return code
    RT.handles.remove(m.handle)
    m.comm.destroy_member(m)
    return T.HCCL_SUCCESS


@_api(1)
def get_rank_size(comm):
    m, code = _member(comm)
    return (m.comm.n_ranks if m else None), code


@_api(1)
def get_rank_id(comm):
    m, code = _member(comm)
    return (m.rank if m else None), code


@_api(1)
def get_comm_async_error(comm):
    """HcclGetCommAsyncError: (the communicator's asynchronous error, code). A hang of
    mismatched collectives leaves it HCCL_SUCCESS, as HCCL's default ``HCCL_DFS_CONFIG`` does
    (docs/fidelity.md row 391)."""
    m, code = _member(comm)
    if code:
        return None, code
    mm = m.comm.mismatch()
    return (mm.async_error if mm is not None else T.HCCL_SUCCESS), T.HCCL_SUCCESS


get_error_string = T.get_error_string
"""HcclGetErrorString: the text of an HcclResult (``types.get_error_string``)."""


@_api(0)
def group_start() -> int:
    GROUP[0] += 1
    return T.HCCL_SUCCESS


@_api(0)
def group_end() -> int:
    if GROUP[0] <= 0:
        return _fail(T.HCCL_E_PARA, "HcclGroupEnd without HcclGroupStart")
    GROUP[0] -= 1
    return T.HCCL_SUCCESS


# ---- collectives ----
def _stream_of(m, stream):
    """(Stream, 0) or (None, code): the rank's stream (on its device)."""
    s = RT.handles.stream(stream) if _int(stream) else None
    if s is None:
        return None, _fail(T.HCCL_E_PARA, f"stream {stream!r} is not a live stream")
    if s.device is not m.device:
        return None, _fail(T.HCCL_E_PARA, f"the stream is on device {s.device.id}, but rank "
                                          f"{m.rank} of {m.comm.name} is device {m.device.id}")
    return s, T.HCCL_SUCCESS


def _check_dtype(dtype, reduce: bool, op=None) -> int:
    if not _int(dtype) or not T.dtype_supported(dtype, reduce):
        return _fail(T.HCCL_E_NOT_SUPPORT, f"dataType {dtype!r} is not supported"
                     + (" by a reduction" if reduce else ""))
    if reduce:                      # op None is no HcclReduceOp (it reached _issue as None)
        if not _int(op) or op not in T.REDUCE_OPS:
            return _fail(T.HCCL_E_PARA, f"op {op!r} is not an HcclReduceOp")
        if not T.reduce_op_supported(dtype, op):
            return _fail(T.HCCL_E_NOT_SUPPORT, f"op {T.reduce_op_name(op)} does not support "
                                               f"dataType {T.dtype_name(dtype)}")
    return T.HCCL_SUCCESS


def _check_buffers(m, bufs) -> int:
    """Each (name, address, bytes) lies in one live allocation of the rank's device."""
    for name, addr, n in bufs:
        if n <= 0:
            continue
        dev, _ = owner_of(int(addr), int(n))
        if dev is not m.device:
            where = "another device's memory" if dev is not None else \
                "not inside one live device allocation"
            return _fail(T.HCCL_E_PARA, f"{name}: {n} bytes at 0x{int(addr):x} are {where} "
                                        f"(rank {m.rank} is device {m.device.id})")
    return T.HCCL_SUCCESS


def _issue(m, s, kind, send, recv, dtype, op, log, **kw) -> int:
    """Schedule ``kind`` for the communicator, log it, and queue this rank's part on ``s``."""
    c = m.comm
    sched = kw.pop("sched", None) or _schedule(kind, c.n_ranks, tuple(c.rank_server), dtype,
                                               op if op is not None else 0,
                                               tuple((k, _frozen(v)) for k, v in kw.items()))
    scope = lower.scope_of(m, s)
    log = {"kind": kind, **log}
    if scope == 0:
        bad = c.log(m.rank, stream=s, site=_site(), **log)
    else:                           # logged at each replay of the graph
        bad = c.capture(m, s.capture.model, dict(graph=f"capture {scope} of {c.name}",
                                                 site=_site(), **log))
    if bad:                         # it can never pair with a peer's: it hangs (row 395)
        pos = lower.hang(m, s, scope)
    else:
        pos = lower.issue(m, sched, s, int(send or 0), int(recv or 0), dtype,
                          op if op is not None else -1)
    if pos < 0:
        return _fail(T.HCCL_E_RUNTIME, f"the runtime refused a task ({-pos}): "
                                       f"{RT.tls.error_detail}")
    return T.HCCL_SUCCESS


@functools.lru_cache(maxsize=256)
def _schedule(kind, p, rank_server, dtype, op, kw):
    """``algo.schedule``, kept: every rank of a step asks for the same schedule, and a decode
    loop asks for the same few again and again (a Schedule is never changed once made)."""
    return algo.schedule(kind, p, list(rank_server), dtype=dtype, op=op,
                         **{k: _thawed(v) for k, v in kw})


def _frozen(v):
    """Lists (of lists) as tuples: a key of the schedule cache."""
    return tuple(_frozen(x) for x in v) if isinstance(v, (list, tuple)) else v


def _thawed(v):
    return [_thawed(x) for x in v] if isinstance(v, tuple) else v


def _site() -> str:
    """The user's line that called into npusim (``runtime.recording.site``), as text."""
    where = site()
    return str(where) if where is not None else ""


def _prologue(comm, stream, ptrs):
    """The shared checks, in the source's order: NULL stream, comm, then each pointer
    (HCCL_E_PTR); the comm handle and the stream (HCCL_E_PARA). (m, s, 0) or (.., code)."""
    if _null(stream):
        return None, None, _fail(T.HCCL_E_PTR, "stream is NULL")
    if _null(comm):
        return None, None, _fail(T.HCCL_E_PTR, "comm is NULL")
    for name, p in ptrs:
        if _null(p):
            return None, None, _fail(T.HCCL_E_PTR, f"{name} is NULL")
        if not _int(p):
            return None, None, _fail(T.HCCL_E_PARA, f"{name} {p!r} is not an address")
    m, code = _member(comm)
    if code:
        return None, None, code
    s, code = _stream_of(m, stream)
    return m, s, code


def _addresses(ptrs) -> int:
    """Buffers that may be NULL (zero counts) but must otherwise be addresses."""
    for name, p in ptrs:
        if not _null(p) and not _int(p):
            return _fail(T.HCCL_E_PARA, f"{name} {p!r} is not an address")
    return T.HCCL_SUCCESS


def _count_ok(count, name="count") -> int:
    if not _int(count) or count < 0 or count > T.SYS_MAX_COUNT:
        return _fail(T.HCCL_E_PARA, f"{name} {count!r} is outside [0, {T.SYS_MAX_COUNT}]")
    return T.HCCL_SUCCESS


def _root_ok(m, root, name="root") -> int:
    if not _int(root) or not 0 <= root < m.comm.n_ranks:
        return _fail(T.HCCL_E_PARA, f"{name} {root!r} is not a rank of {m.comm.name} "
                                    f"(0..{m.comm.n_ranks - 1})")
    return T.HCCL_SUCCESS


@_api(0)
def all_reduce(send_buf, recv_buf, count, data_type, op, comm, stream) -> int:
    """HcclAllReduce: every rank's ``recv_buf`` = the reduction of all ranks' ``send_buf``."""
    if _zero(count):
        return T.HCCL_SUCCESS
    m, s, code = _prologue(comm, stream, (("sendBuf", send_buf), ("recvBuf", recv_buf)))
    code = code or _count_ok(count) or _check_dtype(data_type, True, op)
    if code:
        return code
    n = count * T.DATA_TYPE_SIZE[data_type]
    code = _check_buffers(m, (("sendBuf", send_buf, n), ("recvBuf", recv_buf, n)))
    return code or _issue(m, s, "all_reduce", send_buf, recv_buf, data_type, op,
                          dict(count=count, dtype=data_type, op=op), count=count)


@_api(0)
def broadcast(buf, count, data_type, root, comm, stream) -> int:
    """HcclBroadcast: ``buf`` of rank ``root`` to every rank's ``buf``."""
    if _zero(count):
        return T.HCCL_SUCCESS
    m, s, code = _prologue(comm, stream, (("buf", buf),))
    # broadcast_op.cc:117-120: the root's rank check comes before count and data type
    code = code or _root_ok(m, root) or _count_ok(count) or _check_dtype(data_type, False)
    if code:
        return code
    n = count * T.DATA_TYPE_SIZE[data_type]
    code = _check_buffers(m, (("buf", buf, n),))
    return code or _issue(m, s, "broadcast", buf, buf, data_type, None,
                          dict(count=count, dtype=data_type, root=root), count=count, root=root)


@_api(0)
def reduce_scatter(send_buf, recv_buf, recv_count, data_type, op, comm, stream) -> int:
    """HcclReduceScatter: rank r's ``recv_buf`` = block r of the reduction of all ranks'
    ``send_buf`` (``recv_count`` elements per rank)."""
    if _zero(recv_count):
        return T.HCCL_SUCCESS
    m, s, code = _prologue(comm, stream, (("sendBuf", send_buf), ("recvBuf", recv_buf)))
    code = code or _count_ok(recv_count, "recvCount") or _check_dtype(data_type, True, op)
    if code:
        return code
    n = recv_count * T.DATA_TYPE_SIZE[data_type]
    code = _check_buffers(m, (("sendBuf", send_buf, n * m.comm.n_ranks),
                              ("recvBuf", recv_buf, n)))
    return code or _issue(m, s, "reduce_scatter", send_buf, recv_buf, data_type, op,
                          dict(count=recv_count, dtype=data_type, op=op), count=recv_count)


@_api(0)
def all_gather(send_buf, recv_buf, send_count, data_type, comm, stream) -> int:
    """HcclAllGather: every rank's ``recv_buf`` = all ranks' ``send_buf`` in rank order."""
    if _zero(send_count):
        return T.HCCL_SUCCESS
    m, s, code = _prologue(comm, stream, (("sendBuf", send_buf), ("recvBuf", recv_buf)))
    code = code or _count_ok(send_count, "sendCount") or _check_dtype(data_type, False)
    if code:
        return code
    n = send_count * T.DATA_TYPE_SIZE[data_type]
    code = _check_buffers(m, (("sendBuf", send_buf, n), ("recvBuf", recv_buf,
                                                          n * m.comm.n_ranks)))
    return code or _issue(m, s, "all_gather", send_buf, recv_buf, data_type, None,
                          dict(count=send_count, dtype=data_type), count=send_count)


@_api(0)
def reduce(send_buf, recv_buf, count, data_type, op, root, comm, stream) -> int:
    """HcclReduce: rank ``root``'s ``recv_buf`` = the reduction of all ranks' ``send_buf``."""
    if _zero(count):
        return T.HCCL_SUCCESS
    m, s, code = _prologue(comm, stream, (("sendBuf", send_buf), ("recvBuf", recv_buf)))
    code = code or _count_ok(count) or _check_dtype(data_type, True, op) or _root_ok(m, root)
    if code:
        return code
    n = count * T.DATA_TYPE_SIZE[data_type]
    code = _check_buffers(m, (("sendBuf", send_buf, n),
                              ("recvBuf", recv_buf, n if m.rank == root else 0)))
    return code or _issue(m, s, "reduce", send_buf, recv_buf, data_type, op,
                          dict(count=count, dtype=data_type, op=op, root=root),
                          count=count, root=root)


@_api(0)
def scatter(send_buf, recv_buf, recv_count, data_type, root, comm, stream) -> int:
    """HcclScatter: block r of rank ``root``'s ``send_buf`` to rank r's ``recv_buf``."""
    if _zero(recv_count):
        return T.HCCL_SUCCESS
    m, s, code = _prologue(comm, stream, (("recvBuf", recv_buf),))
    if code:
        return code
    # scatter_op.cc:76-84: the root's NULL sendBuf, then root, count, data type
    if _int(root) and m.rank == root and _null(send_buf):
        return _fail(T.HCCL_E_PTR, "sendBuf is NULL on the root")
    code = _root_ok(m, root) or _count_ok(recv_count, "recvCount") or \
        _check_dtype(data_type, False)
    if code:
        return code
    if not _null(send_buf) and not _int(send_buf):
        return _fail(T.HCCL_E_PARA, f"sendBuf {send_buf!r} is not an address")
    n = recv_count * T.DATA_TYPE_SIZE[data_type]
    code = _check_buffers(m, (("sendBuf", send_buf or 0, n * m.comm.n_ranks
                               if m.rank == root else 0), ("recvBuf", recv_buf, n)))
    return code or _issue(m, s, "scatter", send_buf, recv_buf, data_type, None,
                          dict(count=recv_count, dtype=data_type, root=root),
                          count=recv_count, root=root)


@_api(0)
def alltoall(send_buf, send_count, send_type, recv_buf, recv_count, recv_type, comm,
             stream) -> int:
    """HcclAlltoAll: block q of rank r's ``send_buf`` to block r of rank q's ``recv_buf``."""
    if _zero(send_count) and _zero(recv_count):     # all_to_all_v_op.cc: before any check
        return T.HCCL_SUCCESS
    m, s, code = _prologue(comm, stream, (("sendBuf", send_buf), ("recvBuf", recv_buf)))
    code = code or _count_ok(send_count, "sendCount") or _count_ok(recv_count, "recvCount") \
        or _check_dtype(send_type, False) or _check_dtype(recv_type, False)
    if code:
        return code
    if send_count * T.DATA_TYPE_SIZE[send_type] != recv_count * T.DATA_TYPE_SIZE[recv_type]:
        return _fail(T.HCCL_E_PARA, "sendCount x sendType and recvCount x recvType differ")
    if _zero(send_count):
        return T.HCCL_SUCCESS
    n = send_count * T.DATA_TYPE_SIZE[send_type] * m.comm.n_ranks
    code = _check_buffers(m, (("sendBuf", send_buf, n), ("recvBuf", recv_buf, n)))
    return code or _issue(m, s, "alltoall", send_buf, recv_buf, send_type, None,
                          dict(count=send_count, dtype=send_type), count=send_count)


def _counts(v, n, name):
    if not isinstance(v, (list, tuple)) or len(v) != n or not all(
            _int(x) and 0 <= x <= T.SYS_MAX_COUNT for x in v):
        return None
    return [int(x) for x in v]


@_api(0)
def alltoallv(send_buf, send_counts, sdispls, send_type, recv_buf, recv_counts, rdispls,
              recv_type, comm, stream) -> int:
    """HcclAlltoAllV: ``send_counts[q]`` elements at ``sdispls[q]`` of rank r's ``send_buf``
    to ``rdispls[r]`` of rank q's ``recv_buf`` (counts and displacements in elements)."""
    m, s, code = _prologue(comm, stream, ())
    if code:
        return code
    code = _check_dtype(send_type, False) or _check_dtype(recv_type, False) or \
        _addresses((("sendBuf", send_buf), ("recvBuf", recv_buf)))
    if code:
        return code
    p = m.comm.n_ranks
    vs = [_counts(v, p, nm) for v, nm in ((send_counts, "sendCounts"), (sdispls, "sdispls"),
                                          (recv_counts, "recvCounts"), (rdispls, "rdispls"))]
    if any(v is None for v in vs):
        return _fail(T.HCCL_E_PARA, f"sendCounts, sdispls, recvCounts and rdispls: {p} "
                                    f"counts each")
    sc, sd, rc, rd = vs
    es, er = T.DATA_TYPE_SIZE[send_type], T.DATA_TYPE_SIZE[recv_type]
    code = _check_buffers(m, (("sendBuf", send_buf or 0, max((c + d) * es for c, d in
                                                                zip(sc, sd)) if any(sc) else 0),
                              ("recvBuf", recv_buf or 0, max((c + d) * er for c, d in
                                                                zip(rc, rd)) if any(rc) else 0)))
    if code:
        return code
    if send_type != recv_type:
        return _fail(T.HCCL_E_NOT_SUPPORT, "sendType and recvType differ")
    slot = (m.comm.buffsize // p) // 512 * 512
    big = max(max(sc) * es, max(rc) * er)
    if big > slot:
        return _fail(T.HCCL_E_PARA, f"a block of {big} bytes is over the {slot}-byte share of "
                                    f"each peer in the CCL buffer (HCCL_BUFFSIZE / rank "
                                    f"count): raise hcclBufferSize")
    sched = _alltoallv_schedule(m.rank, p, tuple(m.comm.rank_server), send_type, tuple(sc),
                                tuple(sd), tuple(rc), tuple(rd), slot)
    return _issue(m, s, "alltoallv", send_buf, recv_buf, send_type, None,
                  dict(count=sum(sc), dtype=send_type,
                       extra=(("send_counts", tuple(sc)), ("recv_counts", tuple(rc)))),
                  sched=sched)


@functools.lru_cache(maxsize=64)
def _alltoallv_schedule(r, p, rank_server, dtype, sc, sd, rc, rd, slot):
    """Rank ``r``'s AlltoAllV from its own counts only (docs/fidelity.md row 375): every rank
    puts its block for peer q at ``q * slot`` of its CCL buffer, so a rank reads its block from
    each peer without knowing the peer's displacements. Built from ``algo``'s AlltoAll(V)
    schedule over a matrix that is rank ``r``'s own row and column (the rest: zeros), whose
    "in" layout is that slot layout; rank r's copies from "in" then take its real
    displacements."""
    es = T.DATA_TYPE_SIZE[dtype]
    el = slot // es
    send = [[0] * p for _ in range(p)]
    for q in range(p):
        send[r][q] = sc[q]
        send[q][r] = rc[q]
    recv = [[send[x][y] for x in range(p)] for y in range(p)]
    sdispls = [[q * el for q in range(p)] for _ in range(p)]
    rdispls = [[0] * p for _ in range(p)]
    rdispls[r] = list(rd)
    sched = algo.schedule("alltoallv", p, list(rank_server), 0, dtype, send_counts=send,
                          sdispls=sdispls, recv_counts=recv, rdispls=rdispls)
    steps = []
    for st in sched.per_rank[r]:
        if st.kind == "copy" and st.src[:2] == (r, "in"):
            if st.dst[:2] == (r, "scratch") and st.src[2] == 0:     # in -> CCL buffer, per block
                steps += [replace(st, src=(r, "in", sd[q] * es), dst=(r, "scratch", q * slot),
                                  nbytes=sc[q] * es) for q in range(p) if sc[q]]
                continue
            st = replace(st, src=(r, "in", sd[st.src[2] // slot] * es))
        steps.append(st)
    per_rank = [[] for _ in range(p)]
    per_rank[r] = steps
    return replace(sched, per_rank=per_rank, scratch_bytes=p * slot)


@_api(0)
def alltoallvc(send_buf, send_count_matrix, send_type, recv_buf, recv_type, comm,
               stream) -> int:
    """HcclAlltoAllVC: ``send_count_matrix[r][q]`` (p lists of p counts, or p*p counts row by
    row) elements from rank r to rank q, packed in rank order in each ``send_buf`` and each
    ``recv_buf``; every rank passes the same matrix."""
    m, s, code = _prologue(comm, stream, ())
    if code:
        return code
    if send_count_matrix is None:
        return _fail(T.HCCL_E_PTR, "sendCountMatrix is NULL")
    code = _check_dtype(send_type, False) or _check_dtype(recv_type, False)
    if code:
        return code
    code = _addresses((("sendBuf", send_buf), ("recvBuf", recv_buf)))
    if code:
        return code
    if send_type != recv_type:
        return _fail(T.HCCL_E_NOT_SUPPORT, "sendType and recvType differ")
    p = m.comm.n_ranks
    flat = list(send_count_matrix) if isinstance(send_count_matrix, (list, tuple)) else None
    if flat and all(isinstance(row, (list, tuple)) for row in flat):
        flat = [x for row in flat for x in row]
    mat = _counts(flat, p * p, "sendCountMatrix")
    if mat is None:
        return _fail(T.HCCL_E_PARA, f"sendCountMatrix: {p} x {p} counts")
    sc = [mat[r * p:(r + 1) * p] for r in range(p)]
    rc = [[sc[q][r] for q in range(p)] for r in range(p)]
    cum = lambda v: [sum(v[:i]) for i in range(len(v))]   # noqa: E731
    sd, rd = [cum(row) for row in sc], [cum(row) for row in rc]
    es = T.DATA_TYPE_SIZE[send_type]
    r = m.rank
    code = _check_buffers(m, (("sendBuf", send_buf or 0, sum(sc[r]) * es),
                              ("recvBuf", recv_buf or 0, sum(rc[r]) * es)))
    return code or _issue(m, s, "alltoallv", send_buf, recv_buf, send_type, None,
                          dict(kind="alltoallvc", count=sum(sc[r]), dtype=send_type,
                               extra=(("count_matrix", tuple(mat)),)),
                          count=0, send_counts=sc, sdispls=sd, recv_counts=rc, rdispls=rd)


@_api(0)
def send(send_buf, count, data_type, dest_rank, comm, stream) -> int:
    """HcclSend: ``count`` elements to rank ``dest_rank``, which must post the matching
    ``recv`` (blocking in stream order)."""
    return _p2p(True, send_buf, count, data_type, dest_rank, comm, stream)


@_api(0)
def recv(recv_buf, count, data_type, src_rank, comm, stream) -> int:
    """HcclRecv: ``count`` elements from rank ``src_rank``'s matching ``send``."""
    return _p2p(False, recv_buf, count, data_type, src_rank, comm, stream)


def _p2p(sending: bool, buf, count, data_type, peer, comm, stream) -> int:
    """HcclSend / HcclRecv in the order of ``send_op.cc`` / ``recv_op.cc``
    (``GetAndCheckSendPara`` / ``GetAndCheckRecvPara``: the peer being this rank is
    HCCL_E_NOT_SUPPORT before its range)."""
    what, who = ("sendBuf", "destRank") if sending else ("recvBuf", "srcRank")
    if _zero(count):
        return T.HCCL_SUCCESS
    m, s, code = _prologue(comm, stream, ((what, buf),))
    code = code or _count_ok(count) or _check_dtype(data_type, False)
    if code:
        return code
    if _int(peer) and peer == m.rank:
        return _fail(T.HCCL_E_NOT_SUPPORT, f"{who} is this rank")
    code = _root_ok(m, peer, who)
    if code:
        return code
    code = _check_buffers(m, ((what, buf, count * T.DATA_TYPE_SIZE[data_type]),))
    src, dst = (m.rank, peer) if sending else (peer, m.rank)
    return code or _issue(m, s, "send" if sending else "recv", buf if sending else 0,
                          0 if sending else buf, data_type, None,
                          dict(count=count, dtype=data_type, peer=peer),
                          count=count, root=src, peer=dst)


@_api(0)
def batch_send_recv(send_recv_info, item_num, comm, stream) -> int:
    """HcclBatchSendRecv: ``item_num`` items, each a dict with the C fields of HcclSendRecvItem
    (``sendRecvType`` HCCL_SEND / HCCL_RECV, ``buf``, ``count``, ``dataType``, ``remoteRank``),
    run at once: each item on its own HCCL side stream, forked from and joined back to
    ``stream``, so a ring of sends and receives does not wait for itself as a sequence of
    blocking HcclSend / HcclRecv would (docs/fidelity.md row 376)."""
    # batch_send_recv_op.cc:39-55: itemNum 0 succeeds first; NULL stream, comm, sendRecvInfo;
    # each item's count and data type; then each item's remoteRank
    if _zero(item_num):
        return T.HCCL_SUCCESS
    m, s, code = _prologue(comm, stream, ())
    if code:
        return code
    if send_recv_info is None:
        return _fail(T.HCCL_E_PTR, "sendRecvInfo is NULL")
    if not _int(item_num) or item_num < 0 or not isinstance(send_recv_info, (list, tuple)) \
            or len(send_recv_info) < item_num:
        return _fail(T.HCCL_E_PARA, f"itemNum {item_num!r} and sendRecvInfo")
    items = list(send_recv_info[:item_num])
    for i, it in enumerate(items):
        if not isinstance(it, dict) or not _int(it.get("sendRecvType")) or \
                it["sendRecvType"] not in (T.HCCL_SEND, T.HCCL_RECV):
            return _fail(T.HCCL_E_PARA, f"item {i}: sendRecvType HCCL_SEND or HCCL_RECV")
        code = _count_ok(it.get("count")) or _check_dtype(it.get("dataType"), False)
        if code:
            return code
    for i, it in enumerate(items):
        code = _root_ok(m, it.get("remoteRank"), "remoteRank")
        if code:
            return code
    parts = []
    for i, it in enumerate(items):
        buf, count, dt, peer = (it.get("buf"), it.get("count"), it.get("dataType"),
                                it.get("remoteRank"))
        if _null(buf):
            return _fail(T.HCCL_E_PTR, f"item {i}: buf is NULL")
        if not _int(buf):
            return _fail(T.HCCL_E_PARA, f"item {i}: buf {buf!r} is not an address")
        if peer == m.rank:
            return _fail(T.HCCL_E_PARA, f"item {i}: remoteRank is this rank")
        if count == 0:
            continue
        n = count * T.DATA_TYPE_SIZE[dt]
        code = _check_buffers(m, ((f"item {i} buf", buf, n),))
        if code:
            return code
        send = it["sendRecvType"] == T.HCCL_SEND
        parts.append((send, int(buf), count, dt, peer))
    if not parts:
        return T.HCCL_SUCCESS
    c = m.comm
    sched = _batch_schedule(m.rank, c.n_ranks, tuple(c.rank_server),
                            tuple((sd, cnt * T.DATA_TYPE_SIZE[dt], peer)
                                  for sd, _, cnt, dt, peer in parts))
    for sd, buf, cnt, dt, peer in parts:
        c.log(m.rank, "send" if sd else "recv", stream=s, site=_site(), count=cnt, dtype=dt,
              peer=peer) if s.capture is None else c.capture(
            m, s.capture.model, dict(kind="send" if sd else "recv", site=_site(), count=cnt,
                                     dtype=dt, peer=peer,
                                     graph=f"capture {lower.scope_of(m, s)} of {c.name}"))
    # each item's user buffer is its own "in" (send) / "out" (recv): issue one part at a time
    # would serialise them, so the batch's steps carry absolute offsets from buffer 0 instead
    pos = lower.issue(m, sched, s, 0, 0, parts[0][3], -1, bufs=[p[1] for p in parts])
    if pos < 0:
        return _fail(T.HCCL_E_RUNTIME, f"the runtime refused a task ({-pos})")
    return T.HCCL_SUCCESS


@functools.lru_cache(maxsize=64)
def _batch_schedule(r, p, rank_server, items):
    """Rank ``r``'s steps of a batch: item i's send or receive (``algo``'s send/recv pair,
    rank r's side) on side stream i + 1, its user buffer named ``("buf", i)``, its tags moved
    to a range of their own per direction (a send to q and a receive from q of one batch must
    not share a notify), between a fork and a join of the side streams."""
    steps = [algo.Step("local_post", 0, tag=algo.fork_tag(i + 1)) for i in range(len(items))]
    scratch = 0
    for i, (send, nbytes, peer) in enumerate(items):
        src, dst = (r, peer) if send else (peer, r)
        pair = algo.schedule("send", p, list(rank_server), nbytes, T.HCCL_DATA_TYPE_INT8,
                             root=src, peer=dst)
        base = 0x1000 * (1 + (src > dst))
        steps.append(algo.Step("local_wait", i + 1, tag=algo.fork_tag(i + 1)))
        for st in pair.per_rank[r]:
            kw = {"stream": i + 1}
            if st.kind in ("post", "wait"):
                kw["tag"] = st.tag + base
            if st.kind in ("copy", "reduce"):
                kw["src"] = _item_buf(st.src, r, i, send)
                kw["dst"] = _item_buf(st.dst, r, i, send)
            steps.append(replace(st, **kw))
        steps.append(algo.Step("local_post", i + 1, tag=algo.join_tag(i + 1)))
        scratch = max(scratch, pair.scratch_bytes)
    steps += [algo.Step("local_wait", 0, tag=algo.join_tag(i + 1)) for i in range(len(items))]
    per_rank = [[] for _ in range(p)]
    per_rank[r] = steps
    return algo.Schedule("batch_send_recv", p, "p2p", len(items), per_rank, scratch)


def _item_buf(ref, r, i, send):
    """A send/recv step's buffer in a batch: rank r's "in" / "out" is item i's buffer."""
    rank, buf, off = ref
    if rank == r and buf in ("in", "out"):
        return (rank, ("buf", i), off)
    return ref


@_api(0)
def barrier(comm, stream) -> int:
    """HcclBarrier: every rank's stream waits until all ranks reached it."""
    m, s, code = _prologue(comm, stream, ())
    if code:
        return code
    return _issue(m, s, "barrier", 0, 0, T.HCCL_DATA_TYPE_INT8, None,
                  dict(count=0, dtype=T.HCCL_DATA_TYPE_INT8), count=0)
