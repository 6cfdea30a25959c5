"""The rest of chapter 11-03 (memory copy and set) and ``aclrtGetMemUsageInfo`` (11-01): batch
copies, the memcpy descriptor, the copy through second-level pointers, the asynchronous 2-D copy
and 32-bit fill, and the deprecated ``aclrtMemcpyAsyncWithCondition``.

Check orders are the runtime's (hicann/runtime): the acl layer ``src/acl/aclrt_impl/memory.cpp``
(``MemcpyBatchImpl``, ``ValidateMemcpyBatchParams``, ``aclrtGetMemcpyDescSizeImpl`` ...), the rt
entry points ``src/runtime/api/api_c_memory.cc`` / ``api_c_standard_soc.cc`` / ``api_c.cc`` (chip
features, stream handles), ``ApiErrorDecorator`` (``api_error.cc``: ``MemcpyBatch``,
``MemcpyBatchAsync``, ``SetMemcpyDesc``, ``MemcpyAsyncWithDesc``, ``MemCopy2DCheckParam`` /
``MemCopy2DAsync``, ``MemcpyAsyncCheckAddrCfg``; ``api_error_standard_soc.cc``
``MemsetD32Async``) and ``ApiImpl`` (``MemcpyBatch`` / ``LoopMemcpyAsync`` /
``CheckMemCpyAttr``, ``MemsetD32Async``, ``MemCopy2DAsync``, ``GetMemUsageInfo``). docs/fidelity.md
rows 100-104 record what npusim does where it differs.

The asynchronous copies are tasks on the stream — captured into the graph like any task while it
captures — and the addresses a task reads from device memory (a descriptor, a pointer cell) are
read when the task runs (``sqe.MEMCPY_DESC`` / ``MEMCPY_PTR`` / ``MEMCPY_2D``), so a replay sees
the descriptor as it is then.
"""
from __future__ import annotations

import numpy as np

from .. import errors as ERR
from ..device import sqe as S
from ..kernel.program import runtime_features
from . import api_memory as AM
from . import api_stream as AS
from .api_memory import _real_kind as real_kind   # the runtime's kind correction, one table
from .capture import stream_capturing
from .hostmem import DEVICE, PAGEABLE, PINNED, UNKNOWN, host_bytes, locate
from .runtime import RT
from .stream import refused

OK = ERR.ACL_SUCCESS
E_ACL = ERR.ACL_ERROR_INVALID_PARAM                 # 100000
E_PARAM = ERR.ACL_ERROR_RT_PARAM_INVALID            # 107000
E_UNSUPPORTED = ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT  # 207000
E_CTX = ERR.ACL_ERROR_RT_CONTEXT_NULL               # 107002
E_STREAM_CTX = ERR.ACL_ERROR_RT_STREAM_CONTEXT      # 107003

ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, ACL_MEMCPY_INTER_DEVICE_TO_DEVICE = 6, 7    # aclrtMemcpyKind
RT_MEMCPY_KIND_MAX = 8                              # rtMemcpyKind (mem_base.h)
(ACL_MEM_LOCATION_TYPE_HOST, ACL_MEM_LOCATION_TYPE_DEVICE, ACL_MEM_LOCATION_TYPE_UNREGISTERED,
 ACL_MEM_LOCATION_TYPE_MANAGED, ACL_MEM_LOCATION_TYPE_HOST_NUMA) = range(5)   # acl_rt.h
SIZE_MAX = 2 ** 64 - 1
DEVMM_MEMCPY_BATCH_MAX_COUNT = 4096                 # ascend_hal_define.h
MAX_MEMCPY_SIZE_OF_D2D = 4 * 1024 ** 3              # base_info.hpp
MAX_ADDR_OFFSET = 0xFFFF_FFFF_FFFF                  # MemcpyAsyncCheckAddrCfg
DESC_ALIGN = 64                                     # SetMemcpyDesc: "desc is not 64-byte aligned"
PACKED_MAX = 2 ** 31 - 1
"""npusim's limit for a pitch or an offset the task carries (two of them share one 64-bit SQE
operand): larger values are refused with 107000 and the reason (fidelity row 102)."""


def _stars() -> bool:
    """Runtime::ChipIsHaveStars: the STARS chips are the software-SQ ones (910B / 910_93 / 950)."""
    return RT.profile_in_force().software_sq


def _features():
    return runtime_features(RT.profile_in_force())


def _int(v):
    """An integer element of a Python array argument, else None."""
    if isinstance(v, (bool, float)) or not isinstance(v, (int, np.integer)):
        return None
    return int(v)


def _ints(seq, n: int):
    """The first ``n`` elements of a ``size_t`` / pointer array as non-negative ints, or None
    (not a sequence, too short — C would read past it — or a non-integer element)."""
    if seq is None or isinstance(seq, (str, bytes)) or not hasattr(seq, "__len__") or \
            len(seq) < n:
        return None
    out = []
    for v in list(seq[:n]):
        i = _int(v)
        if i is None or not 0 <= i <= SIZE_MAX:
            return None
        out.append(i)
    return out


# ---- batch copies (aclrtMemcpyBatch, ...Async, V2) ----
def _location(v):
    """aclrtMemLocation {id, type} as a dict or an (id, type) pair: (type, id) or None."""
    if isinstance(v, dict):
        if set(v) != {"id", "type"}:
            return None
        i, t = _int(v["id"]), _int(v["type"])
    elif isinstance(v, (list, tuple)) and len(v) == 2:
        i, t = _int(v[0]), _int(v[1])
    else:
        return None
    if i is None or t is None or not 0 <= i < 2 ** 32 or not -2 ** 31 <= t < 2 ** 31:
        return None
    return t, i


def _batch_attr(v):
    """aclrtMemcpyBatchAttr {dstLoc, srcLoc, rsv[16]} as a dict (``rsv`` optional) or a
    (dstLoc, srcLoc) pair: ((dst type, id), (src type, id), rsv all zero) or None."""
    rsv = ()
    if isinstance(v, dict):
        if not {"dstLoc", "srcLoc"} <= set(v) <= {"dstLoc", "srcLoc", "rsv"}:
            return None
        d, s, rsv = _location(v["dstLoc"]), _location(v["srcLoc"]), v.get("rsv", ())
    elif isinstance(v, (list, tuple)) and len(v) == 2:
        d, s = _location(v[0]), _location(v[1])
    else:
        return None
    if d is None or s is None:
        return None
    if isinstance(rsv, (bytes, bytearray)):
        rsv = list(rsv)
    r = _ints(rsv, len(rsv)) if hasattr(rsv, "__len__") else None
    if r is None or len(r) > 16:
        return None
    return d, s, not any(r)


def _actual(w, dev_id: int):
    """(location type, device id) the driver reports for an address (PtrGetAttributes); a
    pageable array is UNREGISTERED host memory, which the checks treat as HOST."""
    if w.kind == DEVICE:
        return ACL_MEM_LOCATION_TYPE_DEVICE, w.device.id
    return ACL_MEM_LOCATION_TYPE_HOST, dev_id


def _attr_matches(w, loc) -> bool:
    """CheckMemCpyAttr for one side: the given type (HOST_NUMA counts as HOST) must be the
    memory's real type, and for device memory the device id must match."""
    t, i = loc
    t = ACL_MEM_LOCATION_TYPE_HOST if t == ACL_MEM_LOCATION_TYPE_HOST_NUMA else t
    real, real_id = _actual(w, i)
    return t == real and (real != ACL_MEM_LOCATION_TYPE_DEVICE or i == real_id)


def _batch_acl(dsts, dest_maxs, srcs, sizes, num_batches, attrs, attrs_indexes, num_attrs):
    """MemcpyBatchImpl's acl checks: (parsed arrays or None, code); the parsed arrays are None
    with code 0 for a batch of zero sizes (success, nothing checked further)."""
    n = _int(num_batches)
    if sizes is None:
        RT.tls.explain("sizes is NULL")
        return None, E_ACL
    if not n or n < 0:
        RT.tls.explain(f"num_batches: {num_batches!r} is not a count >= 1")
        return None, E_ACL
    sz = _ints(sizes, n)
    if sz is None:
        RT.tls.explain(f"sizes: not {n} integers (num_batches)")
        return None, E_ACL
    if not any(sz):
        return None, OK
    if dsts is None or dest_maxs is None or srcs is None or attrs is None or \
            attrs_indexes is None:
        RT.tls.explain("dsts is NULL" if dsts is None else
                       "dest_maxs is NULL" if dest_maxs is None else
                       "srcs is NULL" if srcs is None else
                       "attrs is NULL" if attrs is None else "attrs_indexes is NULL")
        return None, E_ACL
    d, dm, s = _ints(dsts, n), _ints(dest_maxs, n), _ints(srcs, n)
    if d is None or dm is None or s is None:
        RT.tls.explain(f"dsts / dest_maxs / srcs: not {n} integers each (num_batches)")
        return None, E_ACL
    if any(m < z for m, z in zip(dm, sz)):
        RT.tls.explain("dest_maxs: a destination is smaller than its size")
        return None, E_ACL
    na = _int(num_attrs)
    if na is None or na < 0 or not hasattr(attrs, "__len__") or len(attrs) < na:
        RT.tls.explain(f"num_attrs: {num_attrs!r} is not a count of the attrs given")
        return None, E_ACL
    parsed = [_batch_attr(a) for a in list(attrs[:na])]
    if any(p is None or not p[2] for p in parsed):
        RT.tls.explain("attrs: an attribute is malformed or its rsv field is not 0")
        return None, E_ACL                          # "rsv field of attrs[idx] must be 0"
    idx = _ints(attrs_indexes, na)
    if idx is None:
        RT.tls.explain(f"attrs_indexes: not {na} integers (num_attrs)")
        return None, E_ACL
    return (d, dm, s, sz, n, parsed, idx, na), OK


def _batch_rt(n: int, na: int, idx, limit: bool) -> int:
    """ApiErrorDecorator::MemcpyBatch / MemcpyBatchAsync: numAttrs 0 or above count, (sync) a
    count above DEVMM_MEMCPY_BATCH_MAX_COUNT, attrsIdxs not starting at 0 or not increasing
    or past the count: 107000."""
    if na == 0 or na > n:
        RT.tls.explain(f"num_attrs: {na} is 0 or above num_batches ({n})")
        return E_PARAM
    if limit and n > DEVMM_MEMCPY_BATCH_MAX_COUNT:
        RT.tls.explain(f"num_batches: {n} is above the driver's batch limit "
                       f"({DEVMM_MEMCPY_BATCH_MAX_COUNT})")
        return E_PARAM
    if idx[0] != 0:
        RT.tls.explain("attrs_indexes: the first index is not 0")
        return E_PARAM
    for i in range(1, na):
        if idx[i] <= idx[i - 1] or idx[i] >= n:
            RT.tls.explain("attrs_indexes: not increasing, or past num_batches")
            return E_PARAM
    return OK


def _attr_of(i: int, parsed, idx):
    """The attribute set of copy ``i``: attrs[k] covers attrsIdxs[k] .. attrsIdxs[k+1] - 1."""
    k = 0
    while k + 1 < len(idx) and i >= idx[k + 1]:
        k += 1
    return parsed[k]


def _check_pair(dst: int, src: int, attr):
    """CheckMemCpyAttr and the direction check of one copy: (dst Where, src Where, code)."""
    dw, sw = locate(dst), locate(src)
    if not _attr_matches(dw, attr[0]) or not _attr_matches(sw, attr[1]):
        RT.tls.explain("attrs: an attribute's location does not match the memory of its copy")
        return dw, sw, E_PARAM
    if (dw.kind == DEVICE) == (sw.kind == DEVICE):
        RT.tls.explain("dsts / srcs: a batch copy is host to device or device to host only")
        return dw, sw, E_PARAM                      # only H2D and D2H
    return dw, sw, OK


def _memcpy_batch(args, fail_out: bool):
    parsed, code = _batch_acl(*args)
    if code or parsed is None:
        return (SIZE_MAX, code) if fail_out else code
    d, dm, s, sz, n, attrs, idx, na = parsed
    fail = SIZE_MAX

    def out(c):
        return (fail, c) if fail_out else c
    if not _features().memory_batch_copy:
        return out(E_UNSUPPORTED)
    code = _batch_rt(n, na, idx, limit=True)
    if code:
        return out(code)
    pairs = []
    for i in range(n):                              # ApiImpl::MemcpyBatch: attributes first
        dw, sw, code = _check_pair(d[i], s[i], _attr_of(i, attrs, idx))
        if code:
            fail = i
            return out(code)
        pairs.append((dw, sw))
    for i, (dw, sw) in enumerate(pairs):            # NpuDriver::MemcpyBatch: the copies
        if sz[i] and (not dw.fits(d[i], sz[i]) or not sw.fits(s[i], sz[i])):
            RT.tls.explain(f"copy {i}: {sz[i]} bytes do not fit its destination or source memory")
            return out(E_PARAM)
    if RT.current_context is None:
        return out(E_CTX)
    for w in {id(p.device): p.device for pr in pairs for p in pr if p.device is not None}.values():
        w.advance_to_host()
    total = 0
    for i, (dw, sw) in enumerate(pairs):
        if sz[i]:
            host_bytes(dw, d[i], sz[i])[:] = host_bytes(sw, s[i], sz[i])
            total += sz[i]
    dev = RT.current_context.device
    RT.tick(dev.timing.host_api_ns + dev.timing.memcpy_setup_ns + total // max(
        dev.timing.memcpy_h2d_bytes_per_ns, 1))
    return out(OK)


def memcpy_batch(dsts, dest_maxs, srcs, sizes, num_batches, attrs, attrs_indexes, num_attrs):
    """aclrtMemcpyBatch -> (failIndex, code): ``num_batches`` synchronous copies, each host to
    device or device to host. Order: sizes NULL or numBatches 0 -> 100000; every size 0 -> 0
    (failIndex SIZE_MAX); a NULL array, destMaxs[i] < sizes[i], a non-zero ``rsv`` byte of an
    attribute (or an array shorter than its count) -> 100000; a chip without batch copies
    (310P) 207000; numAttrs 0 or above numBatches, numBatches above 4096, attrsIndexes[0] != 0,
    not increasing or not below numBatches -> 107000; then per copy its attribute set (attrs[k]
    from attrsIndexes[k]): a location type (HOST_NUMA = HOST, a numpy array is unregistered =
    HOST) or device id that is not the memory's, or a copy within host or within device memory
    -> 107000 with failIndex = that copy; a copy outside its memory 107000 (failIndex SIZE_MAX,
    the driver's refusal); no context 107002. ``attrs`` items: ``{"dstLoc": {"id", "type"},
    "srcLoc": {...}, "rsv": [...]}`` or ``((id, type), (id, type))``."""
    return _memcpy_batch((dsts, dest_maxs, srcs, sizes, num_batches, attrs, attrs_indexes,
                          num_attrs), True)


def memcpy_batch_v2(dsts, dest_maxs, srcs, sizes, num_batches, attrs, attrs_indexes,
                    num_attrs) -> int:
    """aclrtMemcpyBatchV2: aclrtMemcpyBatch without failIndex."""
    return _memcpy_batch((dsts, dest_maxs, srcs, sizes, num_batches, attrs, attrs_indexes,
                          num_attrs), False)


def _memcpy_batch_async(args, stream, fail_out: bool):
    parsed, code = _batch_acl(*args)
    if code or parsed is None:
        return (SIZE_MAX, code) if fail_out else code
    d, dm, s, sz, n, attrs, idx, na = parsed
    fail = SIZE_MAX

    def out(c):
        return (fail, c) if fail_out else c
    if not _features().memory_batch_copy:
        return out(E_UNSUPPORTED)
    st, code = AS.lookup(stream)
    if code:
        return out(code)
    code = _batch_rt(n, na, idx, limit=False)
    if code:
        return out(code)
    if RT.current_context is None:
        return out(E_CTX)
    for i in range(n):                              # ApiImpl::LoopMemcpyAsync, copy by copy
        if sz[i] > dm[i] or sz[i] == 0 or not s[i] or not d[i]:
            fail = i
            RT.tls.explain(f"copy {i}: its memory is not what the copy needs")
            return out(E_PARAM)
        dw, sw, code = _check_pair(d[i], s[i], _attr_of(i, attrs, idx))
        if code:
            fail = i
            return out(code)
        kind = AM.ACL_MEMCPY_HOST_TO_DEVICE if dw.kind == DEVICE else \
            AM.ACL_MEMCPY_DEVICE_TO_HOST
        code = AM.memcpy_async(d[i], dm[i], s[i], sz[i], kind, stream)
        if code:
            return out(code)
    return out(OK)


def memcpy_batch_async(dsts, dest_maxs, srcs, sizes, num_batches, attrs, attrs_indexes,
                       num_attrs, stream):
    """aclrtMemcpyBatchAsync -> (failIndex, code): the checks of aclrtMemcpyBatch up to the
    attribute indexes (no 4096 limit), then the stream handle (107017), the context (107002),
    then copy by copy (``LoopMemcpyAsync``): size 0 or above destMax, a NULL address, a wrong
    attribute or direction -> 107000 with failIndex = the copy; each copy is then
    aclrtMemcpyAsync with the kind of its direction (a task; with a numpy array: stream sync and
    a synchronous copy; refused on a capturing stream). Copies before a failing one were
    submitted, as in the runtime."""
    return _memcpy_batch_async((dsts, dest_maxs, srcs, sizes, num_batches, attrs,
                                attrs_indexes, num_attrs), stream, True)


def memcpy_batch_async_v2(dsts, dest_maxs, srcs, sizes, num_batches, attrs, attrs_indexes,
                          num_attrs, stream) -> int:
    """aclrtMemcpyBatchAsyncV2: aclrtMemcpyBatchAsync without failIndex."""
    return _memcpy_batch_async((dsts, dest_maxs, srcs, sizes, num_batches, attrs,
                                attrs_indexes, num_attrs), stream, False)


# ---- the memcpy descriptor (aclrtGetMemcpyDescSize / aclrtSetMemcpyDesc / ...WithDesc) ----
def get_memcpy_desc_size(kind):
    """aclrtGetMemcpyDescSize -> (size, code): kind outside aclrtMemcpyKind (>= 8) 100000; a
    chip without STARS (310P) 207000; a kind other than INNER_DEVICE_TO_DEVICE 207000; the
    chip's descriptor size (32 bytes; 64 on the 950)."""
    if not 0 <= kind < RT_MEMCPY_KIND_MAX:
        RT.tls.explain(f"kind: {kind} is not an aclrtMemcpyKind (0..{RT_MEMCPY_KIND_MAX - 1})")
        return None, E_ACL
    if not _stars():
        return None, E_UNSUPPORTED
    if kind != ACL_MEMCPY_INNER_DEVICE_TO_DEVICE:
        return None, E_UNSUPPORTED
    return _features().memcpy_desc_size, OK


def set_memcpy_desc(desc, kind, src_addr, dst_addr, count, config=None) -> int:
    """aclrtSetMemcpyDesc: write (count, src, dst) into the descriptor at ``desc`` (device
    memory; ``rtMemcpyAddrInfo``: u32 length at +12, src +16, dst +24), synchronously. Order:
    acl: NULL desc, kind >= 8, NULL src / dst, count 0, config not NULL -> 100000; no STARS
    207000; kind not INNER_DEVICE_TO_DEVICE 207000; count above 4 GiB, desc not 64-byte
    aligned, desc / src / dst not device memory, src and dst on different devices -> 107000
    (``ApiErrorDecorator::SetMemcpyDesc``); no context 107002; a descriptor allocation smaller
    than 32 bytes 107000."""
    if not desc or not 0 <= kind < RT_MEMCPY_KIND_MAX or not src_addr or not dst_addr or \
            not count or config is not None:
        RT.tls.explain("a NULL argument, count 0 or a non-NULL config (set_memcpy_desc)")
        return E_ACL
    if not _stars() or kind != ACL_MEMCPY_INNER_DEVICE_TO_DEVICE:
        return E_UNSUPPORTED
    if count > MAX_MEMCPY_SIZE_OF_D2D or int(desc) % DESC_ALIGN:
        RT.tls.explain("count: above the D2D maximum" if count > MAX_MEMCPY_SIZE_OF_D2D else
                       "desc: not aligned")
        return E_PARAM
    dw, sw, tw = locate(desc), locate(src_addr), locate(dst_addr)
    if dw.kind != DEVICE or sw.kind != DEVICE or tw.kind != DEVICE or sw.device is not tw.device:
        RT.tls.explain("dst_addr / src_addr / desc: not device memory of one device")
        return E_PARAM
    ctx = RT.current_context
    if ctx is None:
        return E_CTX
    if not dw.fits(int(desc), S.MEMCPY_DESC_DST_AT + 8):
        RT.tls.explain("desc: the descriptor does not fit its device memory")
        return E_PARAM
    dw.device.advance_to_host()
    b = host_bytes(dw, int(desc), S.MEMCPY_DESC_DST_AT + 8)
    b[:] = 0
    b[S.MEMCPY_DESC_LEN_AT:S.MEMCPY_DESC_LEN_AT + 4] = np.frombuffer(
        int(count).to_bytes(4, "little"), np.uint8)
    b[S.MEMCPY_DESC_SRC_AT:S.MEMCPY_DESC_SRC_AT + 8] = np.frombuffer(
        (int(src_addr) & SIZE_MAX).to_bytes(8, "little"), np.uint8)
    b[S.MEMCPY_DESC_DST_AT:S.MEMCPY_DESC_DST_AT + 8] = np.frombuffer(
        (int(dst_addr) & SIZE_MAX).to_bytes(8, "little"), np.uint8)
    RT.tick(ctx.device.timing.host_api_ns + ctx.device.timing.memcpy_setup_ns)
    return OK


def _same_ctx_stream(s):
    """ApiImpl's context / default stream / stream context checks: (stream, code)."""
    s, code = AS.resolve_same_ctx(s)
    if code:
        return None, code
    if s.ctx.failure_code:
        return None, s.ctx.failure_code
    return s, OK


def memcpy_async_with_desc(desc, kind, stream) -> int:
    """aclrtMemcpyAsyncWithDesc: a copy task that reads its length, source and destination from
    the descriptor when it runs (so a graph replay copies what the descriptor says then).
    Order: acl: NULL desc, kind >= 8, NULL stream -> 100000; no STARS 207000; the stream
    handle 107017; kind not INNER_DEVICE_TO_DEVICE 207000; desc not device memory 107000; no
    context 107002, another context's stream 107003. A descriptor that names memory outside
    the arena faults the task (507000-range code at the next synchronize)."""
    if not desc or not 0 <= kind < RT_MEMCPY_KIND_MAX or stream is None or stream == 0:
        RT.tls.explain("desc is NULL" if not desc else
                       "stream is NULL" if stream is None or stream == 0 else
                       f"kind: {kind} is not an aclrtMemcpyKind")
        return E_ACL
    if not _stars():
        return E_UNSUPPORTED
    s, code = AS.lookup(stream)
    if code:
        return code
    if kind != ACL_MEMCPY_INNER_DEVICE_TO_DEVICE:
        return E_UNSUPPORTED
    w = locate(desc)
    if w.kind != DEVICE:
        RT.tls.explain("desc: not device memory")
        return E_PARAM
    s, code = _same_ctx_stream(s)
    if code:
        return code
    if w.device is not s.device or not w.fits(int(desc), S.MEMCPY_DESC_DST_AT + 8):
        RT.tls.explain("desc: not device memory of the stream's device")
        return E_PARAM
    return refused(s.submit(S.OP_MEMCPY, s.device.timing.host_memcpy_async_ns, a0=int(desc),
                            flag=AM.ACL_MEMCPY_DEVICE_TO_DEVICE | S.MEMCPY_DESC))


# ---- second-level pointers (aclrtMemcpyAsyncWithOffset) ----
def memcpy_async_with_offset(dst, dest_max, dst_data_offset, src, count, src_data_offset,
                             kind, stream) -> int:
    """aclrtMemcpyAsyncWithOffset: ``dst`` and ``src`` are device addresses of 8-byte pointers;
    the task copies ``count`` bytes from ``*src + srcDataOffset`` to ``*dst + dstDataOffset``,
    reading the pointers when it runs. Order: count 0 -> 0; kind not INNER_DEVICE_TO_DEVICE
    107000; a chip without D2D-by-offset (310P) 207000; the stream handle 107017; NULL dst /
    src, count above destMax or above 4 GiB -> 107000 (the acl layer checks nothing);
    an offset above 0xFFFFFFFFFFFF, dstDataOffset >= destMax, count above destMax -
    dstDataOffset -> 107000 (``MemcpyAsyncCheckAddrCfg``); no context 107002; another context's
    stream 107003; the pointer cells not device memory of the stream's device 107000; an offset
    above 2**31 - 1 107000 (npusim's limit, fidelity row 102)."""
    if count == 0:
        return OK
    if kind != ACL_MEMCPY_INNER_DEVICE_TO_DEVICE:
        RT.tls.explain(f"kind: {kind} is not ACL_MEMCPY_INNER_DEVICE_TO_DEVICE")
        return E_PARAM
    if not _features().memcpy_d2d_by_offset:
        return E_UNSUPPORTED
    s, code = AS.lookup(stream)
    if code:
        return code
    if not dst or not src or count > dest_max or count > MAX_MEMCPY_SIZE_OF_D2D:
        RT.tls.explain("dst / src is NULL, or count above dest_max or the D2D maximum")
        return E_PARAM
    if src_data_offset > MAX_ADDR_OFFSET or dst_data_offset > MAX_ADDR_OFFSET or \
            dst_data_offset >= dest_max or count > dest_max - dst_data_offset:
        RT.tls.explain("dst_data_offset / count: past dest_max")
        return E_PARAM
    s, code = _same_ctx_stream(s)
    if code:
        return code
    dw, sw = locate(dst), locate(src)
    if dw.kind != DEVICE or sw.kind != DEVICE or dw.device is not s.device or \
            sw.device is not s.device or not dw.fits(int(dst), 8) or not sw.fits(int(src), 8):
        RT.tls.explain("dst / src: not device memory of the stream's device")
        return E_PARAM
    if dst_data_offset > PACKED_MAX or src_data_offset > PACKED_MAX:
        RT.tls.explain("npusim keeps both offsets of aclrtMemcpyAsyncWithOffset in one 64-bit "
                       "task operand: offsets above 2**31 - 1 are not simulated")
        return E_PARAM
    return refused(s.submit(S.OP_MEMCPY, s.device.timing.host_memcpy_async_ns, a0=int(dst),
                            a1=int(src), a2=int(count),
                            a3=int(dst_data_offset) | int(src_data_offset) << 32,
                            flag=AM.ACL_MEMCPY_DEVICE_TO_DEVICE | S.MEMCPY_PTR))


def memcpy_async_with_condition(dst, dest_max, src, count, kind, stream) -> int:
    """aclrtMemcpyAsyncWithCondition (deprecated; "use aclrtMemcpyAsync"): aclrtMemcpyAsync with
    the runtime's pinned-memory check bit (``checkBitmap`` 0x2). The simulated driver always
    knows which host memory is pinned, so the check never refuses, and the call is
    aclrtMemcpyAsync: the same codes, pageable host memory through a stream synchronize and a
    synchronous copy, a task (captured while the stream captures) otherwise."""
    return AM.memcpy_async(dst, dest_max, src, count, kind, stream)


# ---- 2-D copy and 32-bit fill, asynchronous ----
def memcpy2d_async(dst, dpitch, src, spitch, width, height, kind, stream) -> int:
    """aclrtMemcpy2dAsync: one task copying ``height`` rows of ``width`` bytes, ``spitch`` /
    ``dpitch`` apart. Order: width or height 0 -> 0; acl (``CheckMemcpy2dParam``): NULL dst /
    src, width above a pitch, a kind other than H2D / D2H / D2D / DEFAULT -> 100000; the stream
    handle 107017; height above 5,242,880 or width above 5,000,000 -> 107000; the kind the
    memory really is (the runtime corrects it) not H2D / D2H / D2D, or D2D on the 310P (the
    chapter: only 950 / A3 / A2) -> 107000; a numpy array (pageable memory): a capturing stream
    107000, else stream synchronize and the synchronous 2-D copy (aclrtMemcpy2d's codes, 107031
    for a blocking capture mode); no context 107002; another context's stream 107003; rows
    outside an allocation 107000; a pitch above 2**31 - 1 107000 (npusim's limit, row 102)."""
    if width == 0 or height == 0:
        return OK
    if not dst or not src or width > spitch or width > dpitch or \
            kind not in (AM.ACL_MEMCPY_HOST_TO_DEVICE, AM.ACL_MEMCPY_DEVICE_TO_HOST,
                         AM.ACL_MEMCPY_DEVICE_TO_DEVICE, AM.ACL_MEMCPY_DEFAULT):
        RT.tls.explain(f"kind: {kind} is not a 2-D copy kind")
        return E_ACL
    s, code = AS.lookup(stream)
    if code:
        return code
    if height > AM.MAX_MEMCPY2D_HEIGHT or width > AM.MAX_MEMCPY2D_WIDTH:
        RT.tls.explain("height / width: above the 2-D copy maximum")
        return E_PARAM
    sw, dw = locate(src), locate(dst)
    if UNKNOWN in (sw.kind, dw.kind):
        RT.tls.explain("dst / src: not memory of this process")
        return E_PARAM
    real = real_kind(sw.kind, dw.kind)
    if real not in (AM.ACL_MEMCPY_HOST_TO_DEVICE, AM.ACL_MEMCPY_DEVICE_TO_HOST,
                    AM.ACL_MEMCPY_DEVICE_TO_DEVICE):
        RT.tls.explain(f"kind: {kind} does not match the memory given")
        return E_PARAM
    if real == AM.ACL_MEMCPY_DEVICE_TO_DEVICE and not _stars():
        RT.tls.explain("kind: a device-to-device 2-D copy needs a STARS chip")
        return E_PARAM
    if PAGEABLE in (sw.kind, dw.kind):
        sc = s if s is not None else (RT.current_context.default_stream
                                      if RT.current_context is not None else None)
        if sc is not None and stream_capturing(sc):
            RT.tls.explain("a 2-D copy with pageable host memory (a numpy array) cannot be "
                           "captured: it turns synchronous; copy through aclrtMallocHost memory")
            return E_PARAM
        code = AS.synchronize_stream(stream)
        if code:
            return code
        code = AM.memcpy2d(dst, dpitch, src, spitch, width, height, real)
        return ERR.ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC \
            if code == ERR.ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT else code
    s, code = _same_ctx_stream(s)
    if code:
        return code
    last_s, last_d = int(src) + (height - 1) * spitch, int(dst) + (height - 1) * dpitch
    if not sw.fits(int(src), 1) or not sw.fits(last_s, width) or \
            not dw.fits(int(dst), 1) or not dw.fits(last_d, width):
        RT.tls.explain("dst / src: the 2-D region does not fit its memory")
        return E_PARAM
    if sw.device is not s.device or dw.device is not s.device:
        RT.tls.explain("dst / src: memory of another device than the stream's")
        return E_PARAM                              # no peer access in the simulator
    if spitch > PACKED_MAX or dpitch > PACKED_MAX:
        RT.tls.explain("npusim keeps both pitches of a 2-D copy in one 64-bit task operand: "
                       "pitches above 2**31 - 1 are not simulated")
        return E_PARAM
    return refused(s.submit(S.OP_MEMCPY, s.device.timing.host_memcpy_async_ns, a0=int(dst),
                            a1=int(src), a2=int(width) | int(height) << 32,
                            a3=int(spitch) | int(dpitch) << 32, flag=real | S.MEMCPY_2D))


def memset_d32_async(ptr, mem_size, value, n, stream) -> int:
    """aclrtMemsetD32Async: ``n`` 32-bit words of ``value`` at ``ptr``. Order (acl,
    ``aclrtMemsetD32AsyncImpl``): n 0 -> 0; NULL ptr, ptr not 4-byte aligned, n * 4 above
    memSize, memory not from aclrtMalloc / aclrtMallocHost -> 100000; the stream handle 107017;
    no context 107002; pinned host memory is set at once, out of stream order (the chapter:
    "Host内存的初始化任务不会下发到Stream上执行"); device memory: another context's stream
    107003, past the allocation 107000, else one MEMSET task (captured while capturing)."""
    if n == 0:
        return OK
    if not ptr or int(ptr) & 3 or n * 4 > mem_size:
        RT.tls.explain("ptr is NULL" if not ptr else "ptr: not 4-byte aligned" if int(ptr) & 3 else
                       f"n: {n} words exceed mem_size ({mem_size})")
        return E_ACL
    w = locate(ptr)
    if w.kind not in (DEVICE, PINNED):
        RT.tls.explain("ptr: not device or pinned host memory")
        return E_ACL
    s, code = AS.lookup(stream)
    if code:
        return code
    ctx = RT.current_context
    if ctx is None:
        return E_CTX
    if w.kind == PINNED:
        if not w.fits(int(ptr), 4 * n):
            RT.tls.explain(f"ptr: {4 * n} bytes do not fit its memory")
            return E_PARAM
        w.device.advance_to_host()
        host_bytes(w, int(ptr), 4 * n).view(np.uint32)[:] = np.uint32(int(value) & 0xFFFF_FFFF)
        RT.tick(ctx.device.timing.host_api_ns)
        return OK
    s, code = _same_ctx_stream(s)
    if code:
        return code
    if w.device is not s.device or not w.fits(int(ptr), 4 * n):
        RT.tls.explain(f"ptr: {4 * n} bytes do not fit the stream's device memory")
        return E_PARAM
    return refused(s.submit(S.OP_MEMSET, s.device.timing.host_memset_async_ns, a0=int(ptr),
                            a1=int(value) & 0xFFFF_FFFF, a2=4 * int(n), flag=S.MEMSET_D32))


# ---- memory usage (chapter 11-01) ----
def get_mem_usage_info(dev_id, input_num):
    """aclrtGetMemUsageInfo -> (list of {"name", "curMemSize", "memPeakSize"}, code): the
    device memory of each simulated component — ``app`` (the program's aclrtMalloc blocks) and
    ``runtime`` (the runtime's own device buffers: args, cond words, kernel images, descriptors)
    — largest current size first, at most ``input_num`` of them (outputNum is the list's
    length). Order (``ApiErrorDecorator::GetMemUsageInfo``): inputNum 0 107000; a device id
    outside the devices 107000 (``ChgUserDevIdToDeviceId``); no context on that device (it was
    never set) 107002."""
    if input_num == 0:
        RT.tls.explain("input_num is 0")
        return None, E_PARAM
    if not 0 <= dev_id < RT.profile_in_force().device_count:
        RT.tls.explain(f"dev_id: {dev_id} is not a device of this chip")
        return None, E_PARAM
    dev = RT.devices.get(dev_id)
    if dev is None or not dev.contexts:
        return None, E_CTX
    mem = dev.state.mem
    rows = [{"name": "app", "curMemSize": mem.app_bytes, "memPeakSize": mem.app_peak},
            {"name": "runtime", "curMemSize": mem.rt_bytes, "memPeakSize": mem.rt_peak}]
    rows.sort(key=lambda r: -r["curMemSize"])
    return rows[:int(input_num)], OK
