"""Unified (managed) memory (API reference chapter 11-05): ``aclrtMemAllocManaged``, advice and
its attributes, prefetch (single and batch), ``aclrtMemP2PMap`` and ``aclrtPointerGetAttributes``.

Managed memory is reachable from the host and the devices alike; the driver migrates pages on
a fault (doc 11-05). npusim has one copy of memory that every side already reaches, so: an
allocation is device memory of the current device (rounded up to 2 MiB, charged to its HBM at
once), freed with ``aclrtFree``; the host reads and writes it directly through
``acl.util.ptr_to_numpy`` (as the doc's "Host和Device侧都可以被访问" says) and with any copy;
advice is recorded and reported by the attribute queries; a prefetch is what the runtime makes
of it, a host function on the stream (``ApiImpl::MemManagedPrefetchAsync`` ->
``LaunchHostFunc(UvmCallback::PrefetchCallbackWrapper)``, ``api_impl_uvm.cc``), whose body has
nothing to move. Peer mappings (``aclrtMemP2PMap``) are refused with 207000 after the acl
layer's checks: peer access is not simulated (docs/fidelity.md #17). docs/fidelity.md #279-#283.

Check order: ``src/acl/aclrt_impl/memory.cpp`` (``aclrtMemAllocManagedImpl`` 590,
``aclrtMemManagedAdviseImpl`` 600, ``aclrtMemManagedGetAttrImpl`` 456, ``...GetAttrsImpl`` 470,
``...PrefetchAsyncImpl``, ``...PrefetchBatchAsyncImpl``, ``aclrtMemP2PMapImpl``: 100000 for NULL
pointers, zero sizes and reserved flags), then ``api_error_uvm.cc`` (107000 for an advice, an
attribute or a location id out of range, the batch's index rules; 507000 when there is no
stream), then the driver (not in the repository: a range that is not managed memory, 107000
[inferred]). Only the Atlas A2 and A3 have the chapter (doc "产品支持情况"): 207000 elsewhere.
"""
from __future__ import annotations

import threading
import weakref

from .. import errors as ERR
from . import api_memory as AM
from .device import CENSUS_HOOKS
from .runtime import RT, profile

ACL_RT_MEM_ATTACH_GLOBAL = 0x01
(ACL_MEM_ADVISE_SET_READ_MOSTLY, ACL_MEM_ADVISE_UNSET_READ_MOSTLY,
 ACL_MEM_ADVISE_SET_PREFERRED_LOCATION, ACL_MEM_ADVISE_UNSET_PREFERRED_LOCATION,
 ACL_MEM_ADVISE_SET_ACCESSED_BY, ACL_MEM_ADVISE_UNSET_ACCESSED_BY) = range(6)
(ACL_MEM_LOCATIONTYPE_INVALID, ACL_MEM_LOCATIONTYPE_DEVICE, ACL_MEM_LOCATIONTYPE_HOST,
 ACL_MEM_LOCATIONTYPE_HOST_NUMA, ACL_MEM_LOCATIONTYPE_HOST_NUMA_CURRENT) = range(5)
(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION,
 ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE,
 ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID, ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION,
 ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE,
 ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID) = range(1, 9)
GRANULE = 2 << 20
_CPU, _INVALID = -1, -2              # a location as one int: a device id, the host, none


class _Managed:
    """One managed allocation and its advice."""
    __slots__ = ("size", "read_mostly", "preferred", "accessed_by", "prefetched")

    def __init__(self, size: int):
        self.size = size
        self.read_mostly = 0
        self.preferred = (ACL_MEM_LOCATIONTYPE_INVALID, 0)      # (type, id)
        self.accessed_by: set[tuple[int, int]] = set()
        self.prefetched = (ACL_MEM_LOCATIONTYPE_INVALID, 0)


_STATE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()    # Device -> {ptr: _Managed}
_LOCK = threading.Lock()


def _live(dev) -> dict:
    """The device's managed allocations still allocated (aclrtFree drops them)."""
    table = _STATE.get(dev)
    if not table:
        return {}
    mem = dev.state.mem
    for p in [p for p in table if not mem.is_user(p)]:
        del table[p]
    return table


CENSUS_HOOKS.append(lambda dev: {"managed allocations": len(_live(dev))})


def is_managed(ptr: int) -> bool:
    """Is ``ptr`` inside a live managed allocation (for ``acl.util.ptr_to_numpy``)?"""
    for dev in list(RT.devices.values()):
        if _find(dev, ptr) is not None:
            return True
    return False


def _find(dev, ptr: int, size: int = 1):
    for p, m in _live(dev).items():
        if p <= ptr and ptr + size <= p + m.size:
            return m
    return None


def _fail(code: int, why: str) -> int:
    RT.tls.explain(why)
    return code


def _supported(who: str) -> int:
    if profile().name in ("Ascend910B", "Ascend910_93"):
        return ERR.ACL_SUCCESS
    return _fail(ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT, f"{who}: managed memory is supported on "
                 f"the Atlas A2 / A3 only (doc 11-05), not on {profile().name}")


def _location(loc):
    """(type, id) of an aclrtMemManagedLocation dict, or None."""
    if not isinstance(loc, dict):
        return None
    t, i = loc.get("type", 0), loc.get("id", 0)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (t, i)):
        return None
    return t, i


def _bad_device(loc) -> bool:
    return loc[0] == ACL_MEM_LOCATIONTYPE_DEVICE and not 0 <= loc[1] < profile().device_count


# ---- allocation ----
def mem_alloc_managed(size, flag=ACL_RT_MEM_ATTACH_GLOBAL):
    """aclrtMemAllocManaged: (pointer, code); the size is rounded up to 2 MiB."""
    who = "aclrtMemAllocManaged"
    if flag != ACL_RT_MEM_ATTACH_GLOBAL:
        return None, _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: flag must be "
                           "ACL_RT_MEM_ATTACH_GLOBAL (1)")
    code = _supported(who)
    if code:
        return None, code
    if not size:
        return None, _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: size must be positive")
    ctx = RT.current_context
    if ctx is None:
        return None, _fail(ERR.ACL_ERROR_RT_CONTEXT_NULL, f"{who}: no current context")
    n = -(-size // GRANULE) * GRANULE
    ptr, code = AM.malloc_align32(n, AM.ACL_MEM_MALLOC_HUGE_ONLY)
    if code:
        return None, code
    with _LOCK:
        _STATE.setdefault(ctx.device, {})[ptr] = _Managed(n)
    return ptr, ERR.ACL_SUCCESS


def _range(who: str, ptr, size):
    """(device, _Managed) of a managed range of the current device, or a code."""
    ctx = RT.current_context
    if ctx is None:
        return _fail(ERR.ACL_ERROR_RT_CONTEXT_NULL, f"{who}: no current context")
    m = _find(ctx.device, ptr, size)
    if m is None:
        return _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: [ptr, ptr + size) is not inside "
                     "one aclrtMemAllocManaged allocation of the current device")
    return ctx.device, m


def mem_managed_advise(ptr, size, advise, location) -> int:
    """aclrtMemManagedAdvise: record the advice for the allocation holding the range (npusim
    keeps one set of advice per allocation) [fidelity.md #280]."""
    who = "aclrtMemManagedAdvise"
    code = AM.null_size_flags(who, size, ptr=ptr) or _supported(who)
    if code:
        return code
    if not 0 <= advise <= ACL_MEM_ADVISE_UNSET_ACCESSED_BY:
        return _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: advise {advise} is not in [0, 5]")
    loc = _location(location)
    if loc is None or _bad_device(loc):
        return _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: location is not an "
                     "aclrtMemManagedLocation with a valid device id")
    if size % GRANULE:
        return _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: size must be 2 MiB aligned")
    r = _range(who, ptr, size)
    if isinstance(r, int):
        return r
    m = r[1]
    if advise == ACL_MEM_ADVISE_SET_READ_MOSTLY:
        m.read_mostly = 1
    elif advise == ACL_MEM_ADVISE_UNSET_READ_MOSTLY:
        m.read_mostly = 0
    elif advise == ACL_MEM_ADVISE_SET_PREFERRED_LOCATION:
        m.preferred = loc
    elif advise == ACL_MEM_ADVISE_UNSET_PREFERRED_LOCATION:
        m.preferred = (ACL_MEM_LOCATIONTYPE_INVALID, 0)
    elif advise == ACL_MEM_ADVISE_SET_ACCESSED_BY:
        m.accessed_by.add(loc)
    else:
        m.accessed_by.discard(loc)
    return ERR.ACL_SUCCESS


def _as_int(loc) -> int:
    """A location as one int (``PREFERRED_LOCATION``, ``LAST_PREFETCH_LOCATION``): the device id,
    -1 for the host, -2 for none (the CUDA convention the enum's names follow) [inferred]."""
    t, i = loc
    return i if t == ACL_MEM_LOCATIONTYPE_DEVICE else _INVALID if t == 0 else _CPU


def _attr(m: _Managed, attribute: int):
    if attribute == ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY:
        return m.read_mostly
    if attribute == ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION:
        return _as_int(m.preferred)
    if attribute == ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY:
        return sorted(_as_int(loc) for loc in m.accessed_by)
    if attribute == ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE:
        return m.preferred[0]
    if attribute == ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID:
        return m.preferred[1]
    if attribute == ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION:
        return _as_int(m.prefetched)
    if attribute == ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE:
        return m.prefetched[0]
    return m.prefetched[1]


def mem_managed_get_attr(attribute, ptr, size):
    """aclrtMemManagedGetAttr: (value, code): an int, or for ACCESSED_BY a list of locations
    (device ids, -1 the host)."""
    who = "aclrtMemManagedGetAttr"
    code = AM.null_size_flags(who, size, ptr=ptr) or _supported(who)
    if code:
        return None, code
    if not ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY <= attribute <= 8:
        return None, _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: attribute {attribute} is not "
                           "in [1, 8]")
    r = _range(who, ptr, size)
    if isinstance(r, int):
        return None, r
    return _attr(r[1], attribute), ERR.ACL_SUCCESS


def mem_managed_get_attrs(attributes, num_attributes, ptr, size):
    """aclrtMemManagedGetAttrs: (list of values, code) for the first ``num_attributes``."""
    who = "aclrtMemManagedGetAttrs"
    if not ptr:
        return None, _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: ptr is NULL")
    if attributes is None:
        return None, _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: attributes is NULL")
    if not size:
        return None, _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: size must be positive")
    code = _supported(who)
    if code:
        return None, code
    attrs = list(attributes)[:num_attributes]
    if len(attrs) < num_attributes or not all(
            isinstance(a, int) and not isinstance(a, bool) and 1 <= a <= 8 for a in attrs):
        return None, _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: an attribute is not in [1, 8] "
                           "(or fewer than numAttributes are given)")
    r = _range(who, ptr, size)
    if isinstance(r, int):
        return None, r
    return [_attr(r[1], a) for a in attrs], ERR.ACL_SUCCESS


# ---- prefetch ----
def _prefetch_task(stream, ranges) -> int:
    """The runtime's host function: note the prefetch location of each managed range it names
    (there is nothing to move)."""
    from . import api_callback as CB
    dev = RT.current_context.device

    def prefetch(_):
        for ptr, size, loc in ranges:
            m = _find(dev, ptr, size)
            if m is not None:
                m.prefetched = loc
    return CB.launch_host_func(stream, prefetch, None)


def _stream_ok(who: str, stream) -> int:
    if stream:
        return ERR.ACL_SUCCESS
    if RT.current_context is None:           # GetCurStream(NULL) finds no stream
        return _fail(ERR.ACL_ERROR_RT_INTERNAL_ERROR, f"{who}: no stream (no current context)")
    return ERR.ACL_SUCCESS


def mem_managed_prefetch_async(ptr, size, location, flags, stream) -> int:
    """aclrtMemManagedPrefetchAsync: a host function on ``stream`` (NULL: the default stream)."""
    who = "aclrtMemManagedPrefetchAsync"
    code = AM.null_size_flags(who, size, flags, ptr=ptr) or _supported(who) or \
        _stream_ok(who, stream)
    if code:
        return code
    loc = _location(location)
    if loc is None or _bad_device(loc) or loc[0] == ACL_MEM_LOCATIONTYPE_INVALID:
        return _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: location is not a valid "
                     "aclrtMemManagedLocation")
    return _prefetch_task(stream, [(ptr, size, loc)])


def mem_managed_prefetch_batch_async(ptrs, sizes, count, prefetch_locs, prefetch_loc_idxs,
                                     num_prefetch_locs, flags, stream) -> int:
    """aclrtMemManagedPrefetchBatchAsync: ``ptrs[i]`` / ``sizes[i]`` go to ``prefetch_locs[k]``
    for ``prefetch_loc_idxs[k] <= i < prefetch_loc_idxs[k + 1]``; one host function."""
    who = "aclrtMemManagedPrefetchBatchAsync"
    for name, v in (("ptrs", ptrs), ("sizes", sizes), ("prefetchLocs", prefetch_locs),
                    ("prefetchLocIdxs", prefetch_loc_idxs)):
        if v is None:
            return _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: {name} is NULL")
    if not count or not num_prefetch_locs:
        return _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: count and numPrefetchLocs must be "
                     "positive")
    if flags != 0:
        return _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: flags is reserved and must be 0")
    if count < num_prefetch_locs:
        return _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: count must be >= numPrefetchLocs")
    code = _supported(who)
    if code:
        return code
    ptrs, sizes = list(ptrs), list(sizes)
    locs, idxs = [_location(x) for x in prefetch_locs], list(prefetch_loc_idxs)
    if len(ptrs) < count or len(sizes) < count or len(locs) < num_prefetch_locs or \
            len(idxs) < num_prefetch_locs or \
            not all(isinstance(v, int) and not isinstance(v, bool)
                    for v in ptrs[:count] + sizes[:count] + idxs[:num_prefetch_locs]):
        return _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: the arrays are shorter than count / "
                     "numPrefetchLocs or hold non-integers")
    idxs = idxs[:num_prefetch_locs]
    if idxs[0] != 0:
        return _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: prefetchLocIdxs[0] must be 0")
    if any(not p for p in ptrs[:count]):
        return _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: a pointer of ptrs is NULL")
    for k, i in enumerate(idxs):
        if i >= count or (k and i <= idxs[k - 1]):
            return _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: prefetchLocIdxs must rise and "
                         "stay below count")
    locs = locs[:num_prefetch_locs]
    if any(loc is None or _bad_device(loc) for loc in locs):
        return _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: a location is not valid")
    code = _stream_ok(who, stream)
    if code:
        return code
    bounds = idxs + [count]
    ranges = [(ptrs[i], sizes[i], locs[k]) for k in range(len(locs))
              for i in range(bounds[k], bounds[k + 1])]
    return _prefetch_task(stream, ranges)


def mem_p2p_map(dev_ptr, size, dst_dev_id, flags=0) -> int:
    """aclrtMemP2PMap: the acl layer's checks (NULL, size 0, flags: 100000; the device id:
    107001), then 207000: peer access between devices is not simulated."""
    who = "aclrtMemP2PMap"
    code = AM.null_size_flags(who, size, flags, devPtr=dev_ptr)
    if code:
        return code
    if not 0 <= dst_dev_id < profile().device_count:
        return _fail(ERR.ACL_ERROR_RT_INVALID_DEVICEID, f"{who}: dstDevId {dst_dev_id} is not a "
                     "device")
    return _fail(ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT, f"{who}: peer mappings between devices are "
                 "not simulated (no peer access in npusim)")


# ---- where a pointer lives ----
ACL_MEM_LOCATION_TYPE_HOST, ACL_MEM_LOCATION_TYPE_DEVICE = 0, 1
ACL_MEM_LOCATION_TYPE_UNREGISTERED, ACL_MEM_LOCATION_TYPE_MANAGED = 2, 3


def pointer_get_attributes(ptr):
    """aclrtPointerGetAttributes: (aclrtPtrAttributes dict, code): ``{"location": {"type",
    "id"}, "pageSize"}``. Device memory (aclrtMalloc, mapped virtual memory, pool blocks):
    DEVICE and its device, 2 MiB pages; managed memory: MANAGED and its device; pinned host
    memory: HOST, id 0; anything else (a registered numpy array, an unknown address): the
    driver's "user malloc" memory, UNREGISTERED, 4 KiB pages [fidelity.md #283]. NULL 100000."""
    from .hostmem import DEVICE, PINNED, locate
    if not ptr:
        return None, _fail(ERR.ACL_ERROR_INVALID_PARAM, "aclrtPointerGetAttributes: ptr is NULL")
    w = locate(ptr)
    if w.kind == DEVICE:
        t = ACL_MEM_LOCATION_TYPE_MANAGED if _find(w.device, ptr) is not None else \
            ACL_MEM_LOCATION_TYPE_DEVICE
        loc, page = {"type": t, "id": w.device.id}, GRANULE
    elif w.kind == PINNED:
        loc, page = {"type": ACL_MEM_LOCATION_TYPE_HOST, "id": 0}, 4096
    else:
        loc, page = {"type": ACL_MEM_LOCATION_TYPE_UNREGISTERED, "id": 0}, 4096
    return {"location": loc, "pageSize": page}, ERR.ACL_SUCCESS
