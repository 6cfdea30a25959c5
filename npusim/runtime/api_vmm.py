"""Virtual memory management (API reference chapter 11-04): reserve device addresses, allocate
physical memory as a handle, map one onto the other, set access, and undo it all.

This is the sequence a caching allocator with a "sleep mode" lives on (vllm-ascend's
CaMemAllocator): ``aclrtReserveMemAddress`` -> ``aclrtMallocPhysical`` -> ``aclrtMapMem`` ->
``aclrtMemSetAccess`` -> (kernels, copies) -> ``aclrtUnmapMem`` -> ``aclrtFreePhysical`` ->
``aclrtReleaseMemAddress``. In npusim the physical memory of a device is a sparse memfd and a
mapping places its pages into the device's arena at the reserved addresses
(``device/memory.py`` ``map_phys``), so the data is the handle's: it survives an unmap and a map
elsewhere, and one handle mapped at two addresses is the same memory at both (docs/fidelity.md
#261-#266).

Check order: the acl layer's (``src/acl/aclrt_impl/memory.cpp`` ``aclrtReserveMemAddressImpl``
1044, ``aclrtMallocPhysicalImpl`` 1073, ``aclrtFreePhysicalImpl`` 1148, ``aclrtMapMemImpl``
1160, ``aclrtUnmapMemImpl`` 1175, ``aclrtMemMapNoAccessImpl``, ``aclrtMemGetAccessImpl``,
``aclrtMemGetAllocationGranularityImpl`` 1299, ``aclrtMemSetAccessImpl`` 1956,
``aclrtMemRetainAllocationHandleImpl``, ``aclrtMemGetAllocationPropertiesFromHandleImpl``,
``aclrtReserveMemAddressNoUCMemoryImpl`` 2040, ``aclrtMemGetAddressRangeImpl`` 2057): NULL
outputs and inputs, sizes, reserved flags and the property struct give 100000; then the runtime
(``api_error.cc`` 6326-6400: NULL ``virPtr`` / ``desc`` of set-access 107000, the device id
107001) and the driver, whose checks are not in the repository: what it refuses is 107000
(``DRV_ERROR_INVALID_VALUE``), no memory 207001 [inferred, as docs/fidelity.md #18].

Sharing a handle with another process (export / import / set pid, V1 and V2) is refused with
207000 by pyACL's table of unsimulated functions (``npusim/acl/pyacl.py``, area IPC): npusim
simulates one process.
"""
from __future__ import annotations

import threading
import weakref

from .. import errors as ERR
from ..device.memory import VMM_GRANULE, OutOfMemory, can_remap
from . import api_memory as AM
from .device import CENSUS_HOOKS, CLOSE_HOOKS
from .runtime import RT, profile

ACL_MEM_LOCATION_TYPE_HOST, ACL_MEM_LOCATION_TYPE_DEVICE = 0, 1
ACL_MEM_LOCATION_TYPE_UNREGISTERED, ACL_MEM_LOCATION_TYPE_MANAGED = 2, 3
ACL_MEM_LOCATION_TYPE_HOST_NUMA = 4
ACL_MEM_HANDLE_TYPE_NONE, ACL_MEM_HANDLE_TYPE_POSIX = 0, 2
ACL_MEM_ALLOCATION_TYPE_PINNED = 0
ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED = 0, 1
ACL_RT_MEM_ACCESS_FLAGS_NONE, ACL_RT_MEM_ACCESS_FLAGS_READ = 0, 1
ACL_RT_MEM_ACCESS_FLAGS_READWRITE = 3
ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, ACL_MEM_SHARE_HANDLE_TYPE_FABRIC = 1, 2

_DDR_ONLY = (AM.ACL_DDR_MEM_HUGE, AM.ACL_DDR_MEM_NORMAL, AM.ACL_DDR_MEM_P2P_HUGE,
             AM.ACL_DDR_MEM_P2P_NORMAL)
# memory.cpp memAttrHandlers: the attributes aclrtMallocPhysical knows (ACL_HBM_MEM and the DDR
# kinds without HUGE1G are absent: "not supported", 100000)
_KNOWN_ATTRS = {AM.ACL_HBM_MEM_HUGE, AM.ACL_HBM_MEM_NORMAL, AM.ACL_HBM_MEM_HUGE1G, *_DDR_ONLY,
                AM.ACL_MEM_NORMAL, AM.ACL_MEM_HUGE, AM.ACL_MEM_HUGE1G, AM.ACL_MEM_P2P_NORMAL,
                AM.ACL_MEM_P2P_HUGE, 17}                   # 17: ACL_MEM_P2P_HUGE1G
_HUGE1G = {AM.ACL_HBM_MEM_HUGE1G, AM.ACL_MEM_HUGE1G, 17}
# ... and what aclrtMemGetAllocationPropertiesFromHandle reports for a device handle (the
# driver's page and memory type read back through memory.cpp's ``mapping`` table: NORMAL is
# allocated as HUGE, HBM_MEM_NORMAL: "接口内部会按照ACL_HBM_MEM_HUGE类型申请")
_REPORTED = {AM.ACL_MEM_NORMAL: AM.ACL_HBM_MEM_NORMAL, AM.ACL_MEM_HUGE: AM.ACL_HBM_MEM_HUGE,
             AM.ACL_MEM_HUGE1G: AM.ACL_HBM_MEM_HUGE1G, AM.ACL_MEM_P2P_NORMAL: 15,
             AM.ACL_MEM_P2P_HUGE: 16, 17: 17}
GIB = 1 << 30



class PhysicalMem:
    """One ``aclrtMallocPhysical`` handle: ``size`` bytes at ``foff`` of its device's memory."""
    __slots__ = ("handle", "device", "size", "foff", "attr", "dev_id", "reserve", "maps",
                 "freed")

    def __init__(self, device, size: int, foff: int, attr: int, reserve: int):
        self.device, self.size, self.foff, self.attr = device, size, foff, attr
        self.dev_id, self.reserve = device.id, reserve
        self.maps: set[int] = set()          # addresses it is mapped at
        self.freed = False
        self.handle = RT.handles.add("physmem", self)


class _DeviceVmm:
    """A device's reserved ranges and mappings (address -> PhysicalMem)."""
    __slots__ = ("ranges", "maps", "access")

    def __init__(self):
        self.ranges: dict[int, int] = {}      # start -> size
        self.maps: dict[int, PhysicalMem] = {}
        self.access: dict[int, int] = {}      # mapped address -> aclrtMemAccessFlags


_STATE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()    # Device -> _DeviceVmm
_LOCK = threading.RLock()


def _vmm(dev) -> _DeviceVmm:
    st = _STATE.get(dev)
    if st is None:
        st = _STATE[dev] = _DeviceVmm()
    return st


def release_device(dev) -> None:
    """Free every mapping, physical handle and reserved range of ``dev`` (its last reset, or
    ``npusim.reset``)."""
    with _LOCK:
        st = _STATE.pop(dev, None)
        mem = dev.state.mem
        if st is not None:
            for addr in list(st.maps):
                mem.unmap_phys(addr)
            for start in list(st.ranges):
                mem.release_va(start)
        for obj in RT.handles.live("physmem"):
            if obj.device is dev:
                _free_handle(obj)


CLOSE_HOOKS.append(release_device)


def census(dev) -> dict:
    """What ``npusim.census`` counts for the virtual-memory APIs on ``dev``."""
    st = _STATE.get(dev)
    return {"reserved ranges": len(st.ranges) if st else 0,
            "vmm mappings": len(st.maps) if st else 0,
            "physical handles": sum(1 for p in RT.handles.live("physmem") if p.device is dev)}


CENSUS_HOOKS.append(census)


def _fail(code: int, why: str):
    RT.tls.explain(why)
    return code


def _device():
    ctx = RT.current_context
    return None if ctx is None else ctx.device


def _int_field(d, name: str, default=0):
    v = d.get(name, default) if isinstance(d, dict) else None
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _location(d) -> tuple[int, int] | None:
    loc = d.get("location") if isinstance(d, dict) else None
    if not isinstance(loc, dict):
        return None
    t, i = _int_field(loc, "type"), _int_field(loc, "id")
    return None if t is None or i is None else (t, i)


def _check_prop(prop, who: str):
    """The acl layer's checks of an aclrtPhysicalMemProp (memory.cpp 1085-1141): returns
    (location type, id, memAttr) or a code."""
    if not isinstance(prop, dict):
        return _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: prop is not an aclrtPhysicalMemProp")
    fields = {k: _int_field(prop, k) for k in ("handleType", "allocationType", "memAttr",
                                                "reserve")}
    loc = _location(prop)
    if None in fields.values() or loc is None:
        return _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: a field of prop is not an integer")
    return fields, loc


def _granule(attr: int) -> int:
    return GIB if attr in _HUGE1G else VMM_GRANULE


# ---- physical memory ----
def malloc_physical(size, prop, flags=0):
    """aclrtMallocPhysical: (handle, code). Device memory only (location type DEVICE); host
    physical memory is refused with 207000. The size is rounded up to the granularity."""
    who = "aclrtMallocPhysical"
    if prop is None:
        return None, _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: prop is NULL")
    if not size:
        return None, _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: size must be positive")
    if flags != 0:
        return None, _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: flags is reserved and must be 0")
    r = _check_prop(prop, who)
    if isinstance(r, int):
        return None, r
    fields, (ltype, lid) = r
    if fields["handleType"] != ACL_MEM_HANDLE_TYPE_NONE:
        return None, _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: prop.handleType must be "
                           "ACL_MEM_HANDLE_TYPE_NONE")
    if fields["allocationType"] != ACL_MEM_ALLOCATION_TYPE_PINNED:
        return None, _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: prop.allocationType must be "
                           "ACL_MEM_ALLOCATION_TYPE_PINNED")
    if ltype in (ACL_MEM_LOCATION_TYPE_UNREGISTERED, ACL_MEM_LOCATION_TYPE_MANAGED):
        return None, _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: location type {ltype} is not "
                           "supported")
    attr = fields["memAttr"]
    if ltype == ACL_MEM_LOCATION_TYPE_DEVICE and attr in _DDR_ONLY:
        return None, _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: memAttr {attr} is host memory "
                           "only (location HOST or HOST_NUMA)")
    if attr not in _KNOWN_ATTRS:
        return None, _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: memAttr {attr} is not supported")
    if ltype == ACL_MEM_LOCATION_TYPE_DEVICE and not 0 <= lid < profile().device_count:
        return None, _fail(ERR.ACL_ERROR_RT_INVALID_DEVICEID, f"{who}: prop.location.id {lid} is "
                           "not a device")
    if ltype != ACL_MEM_LOCATION_TYPE_DEVICE:
        return None, _fail(ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT, f"{who}: host physical memory "
                           f"(location type {ltype}) is not simulated: npusim keeps host and "
                           "device memory apart")
    if attr in _HUGE1G and profile().name == "Ascend950" and attr == AM.ACL_MEM_HUGE1G:
        return None, _fail(ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT, f"{who}: ACL_MEM_HUGE1G is not "
                           "supported on Ascend 950 (doc 11-04)")
    if not can_remap():
        return None, _fail(ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT, f"{who}: this host cannot map "
                           "memory into the simulated address space (no memfd / reservation)")
    from .api_device import device
    dev = device(lid)
    g = _granule(attr)
    n = -(-int(size) // g) * g
    try:
        with _LOCK:
            foff = dev.state.mem.phys_alloc(n)
    except OutOfMemory:
        return None, _fail(ERR.ACL_ERROR_RT_MEMORY_ALLOCATION, f"{who}: {n} bytes do not fit in "
                           f"the free HBM of device {lid}")
    p = PhysicalMem(dev, n, foff, _REPORTED.get(attr, attr), fields["reserve"])
    return p.handle, ERR.ACL_SUCCESS


def _handle(h):
    obj, code = RT.handles.get("physmem", h)
    return None if code or obj is None else obj


def _free_handle(p: PhysicalMem) -> None:
    p.freed = True
    p.device.state.mem.phys_free(p.foff)
    RT.handles.remove(p.handle)


def free_physical(handle) -> int:
    """aclrtFreePhysical: NULL 100000; a handle that is not live 107000; one still mapped
    107000 (unmap first) [inferred]."""
    if not handle:
        return _fail(ERR.ACL_ERROR_INVALID_PARAM, "aclrtFreePhysical: handle is NULL")
    with _LOCK:
        p = _handle(handle)
        if p is None:
            return _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, "aclrtFreePhysical: handle is not a live "
                         "aclrtMallocPhysical handle")
        if p.maps:
            return _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, "aclrtFreePhysical: the handle is still "
                         f"mapped at {len(p.maps)} address(es): aclrtUnmapMem first")
        _free_handle(p)
    return ERR.ACL_SUCCESS


# ---- address ranges ----
def reserve_mem_address(size, alignment=0, expect_ptr=0, flags=0):
    """aclrtReserveMemAddress: (address, code). ``alignment`` must be 0 and ``expect_ptr`` NULL
    (a chosen address is an experimental feature: refused with 207000); the range is aligned to
    2 MiB (1 GiB from 1 GiB on) and its size rounded up to 2 MiB."""
    return _reserve("aclrtReserveMemAddress", size, alignment, expect_ptr, flags)


def reserve_mem_address_no_uc_memory(size, alignment=0, expect_ptr=0, flags=0):
    """aclrtReserveMemAddressNoUCMemory: aclrtReserveMemAddress with the driver's dynamic
    allocation flag; the same in a simulator."""
    return _reserve("aclrtReserveMemAddressNoUCMemory", size, alignment, expect_ptr, flags)


def _reserve(who, size, alignment, expect_ptr, flags):
    if not size:
        return None, _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: size must be positive")
    if flags not in (0, 1):
        return None, _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: flags must be 0 (or 1)")
    dev = _device()
    if dev is None:
        return None, _fail(ERR.ACL_ERROR_RT_CONTEXT_NULL, f"{who}: no current context")
    if alignment:
        return None, _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: alignment is reserved and "
                           "must be 0")
    if expect_ptr:
        return None, _fail(ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT, f"{who}: expectPtr (a chosen "
                           "start address, an experimental feature) is not simulated: pass NULL")
    n = -(-int(size) // VMM_GRANULE) * VMM_GRANULE
    align = GIB if n >= GIB else VMM_GRANULE
    try:
        with _LOCK:
            addr = dev.state.mem.reserve_va(n, align)
            _vmm(dev).ranges[addr] = n
    except OutOfMemory:
        return None, _fail(ERR.ACL_ERROR_RT_MEMORY_ALLOCATION, f"{who}: no free range of {n} "
                           "device addresses")
    return addr, ERR.ACL_SUCCESS


def _range_of(st: _DeviceVmm, addr: int) -> tuple[int, int] | None:
    """(start, size) of the aclrtReserveMemAddress range of ``st`` holding ``addr`` (a memory
    pool's range is reserved too, but is not one of these)."""
    for start, n in st.ranges.items():
        if start <= addr < start + n:
            return start, n
    return None


def _owner(addr):
    """(device, its _DeviceVmm) whose reserved range holds ``addr``, else (None, None)."""
    for dev in list(RT.devices.values()):
        st = _STATE.get(dev)
        if st is not None and _range_of(st, addr) is not None:
            return dev, st
    return None, None


def _starting_at(who, ptr, table: str, what: str):
    """(device, its _DeviceVmm, code): the device whose ``table`` (``"ranges"`` or ``"maps"``
    of its _DeviceVmm) has an entry starting at ``ptr``; else 107000 "virPtr is not the start
    of ``what``". The caller holds _LOCK."""
    dev, st = _owner(ptr)
    if dev is None or ptr not in getattr(st, table):
        return None, None, _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: virPtr is not the "
                                 f"start of {what}")
    return dev, st, ERR.ACL_SUCCESS


def release_mem_address(ptr) -> int:
    """aclrtReleaseMemAddress: NULL 100000; not the start of a reserved range, or a range with
    a mapping left, 107000."""
    if not ptr:
        return _fail(ERR.ACL_ERROR_INVALID_PARAM, "aclrtReleaseMemAddress: virPtr is NULL")
    with _LOCK:
        dev, st, code = _starting_at("aclrtReleaseMemAddress", ptr, "ranges",
                                     "an aclrtReserveMemAddress range")
        if code:
            return code
        n = st.ranges[ptr]
        if any(ptr <= a < ptr + n for a in st.maps):
            return _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, "aclrtReleaseMemAddress: the range still "
                         "has mappings: aclrtUnmapMem them first")
        del st.ranges[ptr]
        dev.state.mem.release_va(ptr)
    return ERR.ACL_SUCCESS


# ---- mappings ----
def map_mem(ptr, size, offset, handle, flags=0) -> int:
    """aclrtMapMem: map the whole physical handle at ``ptr`` (inside a reserved range of the
    handle's device, 2 MiB aligned, not overlapping a mapping); ``size`` must be the handle's
    size and ``offset`` 0 (doc 11-04). Readable and writable at once."""
    return _map("aclrtMapMem", ptr, size, offset, handle, flags, True)


def mem_map_no_access(ptr, size, offset, handle, flags=0) -> int:
    """aclrtMemMapNoAccess: aclrtMapMem without access: kernels and copies fault there until
    aclrtMemSetAccess grants it."""
    return _map("aclrtMemMapNoAccess", ptr, size, offset, handle, flags, False)


def _map(who, ptr, size, offset, handle, flags, access) -> int:
    code = AM.null_size_flags(who, size, flags, virPtr=ptr, handle=handle)
    if code:
        return code
    with _LOCK:
        p = _handle(handle)
        if p is None:
            return _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: handle is not a live "
                         "aclrtMallocPhysical handle")
        if offset != 0:
            return _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: offset must be 0")
        if size != p.size:
            return _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: size {size} is not the handle's "
                         f"size {p.size}")
        dev, st = _owner(ptr)
        rng = None if dev is None else _range_of(st, ptr)
        if rng is None or ptr % VMM_GRANULE or ptr + size > rng[0] + rng[1]:
            return _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: [virPtr, virPtr + size) is not a "
                         "2 MiB aligned part of one reserved range")
        if dev is not p.device:
            return _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: the range is on device {dev.id}, "
                         f"the physical memory on device {p.dev_id}")
        if any(a < ptr + size and ptr < a + q.size for a, q in st.maps.items()):
            return _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: the range overlaps a mapping")
        if not dev.state.mem.map_phys(ptr, size, p.foff, access):
            return _fail(ERR.ACL_ERROR_RT_MEMORY_ALLOCATION, f"{who}: the host refused the "
                         "mapping (mmap)")
        st.maps[ptr] = p
        st.access[ptr] = ACL_RT_MEM_ACCESS_FLAGS_READWRITE if access else \
            ACL_RT_MEM_ACCESS_FLAGS_NONE
        p.maps.add(ptr)
    return ERR.ACL_SUCCESS


def unmap_mem(ptr) -> int:
    """aclrtUnmapMem: NULL 100000; not the address of a mapping 107000. The device's work up
    to the host's time runs first (the addresses stop being memory)."""
    if not ptr:
        return _fail(ERR.ACL_ERROR_INVALID_PARAM, "aclrtUnmapMem: virPtr is NULL")
    with _LOCK:
        dev, st, code = _starting_at("aclrtUnmapMem", ptr, "maps", "a mapping")
        if code:
            return code
        dev.advance_to_host()
        p = st.maps.pop(ptr)
        st.access.pop(ptr, None)
        p.maps.discard(ptr)
        dev.state.mem.unmap_phys(ptr)
    return ERR.ACL_SUCCESS


def _mapping(ptr):
    """(device, state, mapping start) of the mapping holding ``ptr``, else (None, None, None)."""
    dev, st = _owner(ptr)
    if dev is None:
        return None, None, None
    for a, p in st.maps.items():
        if a <= ptr < a + p.size:
            return dev, st, a
    return dev, st, None


def mem_set_access(ptr, size, desc, count=None) -> int:
    """aclrtMemSetAccess: ``desc`` an aclrtMemAccessDesc dict (or a list of them, ``count``
    of them read): {"flags": ..., "location": {"type": DEVICE, "id": n}}. The range must be
    whole mappings; READWRITE opens them to kernels and copies, NONE closes them. READ is
    treated as READWRITE (npusim does not model read-only pages) [fidelity.md #264]."""
    who = "aclrtMemSetAccess"
    if not ptr:
        return _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: virPtr is NULL")
    if desc is None:
        return _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: desc is NULL")
    descs = [desc] if isinstance(desc, dict) else desc
    if not isinstance(descs, (list, tuple)) or not all(isinstance(d, dict) for d in descs):
        return _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: desc is not aclrtMemAccessDesc")
    n = len(descs) if count is None else count
    if not size or not n or n > len(descs):
        return _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: size and count must be positive "
                     "and count at most the descriptors given")
    flag = None
    for d in descs[:n]:
        f, loc = _int_field(d, "flags"), _location(d)
        if f not in (0, 1, 3) or loc is None or loc[0] != ACL_MEM_LOCATION_TYPE_DEVICE:
            return _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: a descriptor's flags or "
                         "location is invalid (flags NONE / READ / READWRITE, location DEVICE)")
        flag = f
    with _LOCK:
        dev, st, a = _mapping(ptr)
        if a is None or a != ptr:
            return _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: virPtr is not the start of a "
                         "mapping")
        end, todo = ptr, []
        while end < ptr + size:
            p = st.maps.get(end)
            if p is None:
                return _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: [virPtr, virPtr + size) is "
                             "not whole mappings")
            todo.append(end)
            end += p.size
        if end != ptr + size:
            return _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: size ends inside a mapping")
        if any(loc_id != dev.id for loc_id in (_location(d)[1] for d in descs[:n])):
            return _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: access for another device "
                         "(peer access) is not simulated")
        dev.advance_to_host()
        for a in todo:
            dev.state.mem.set_access(a, flag != ACL_RT_MEM_ACCESS_FLAGS_NONE)
            st.access[a] = flag
    return ERR.ACL_SUCCESS


def mem_get_access(ptr):
    """aclrtMemGetAccess: (location dict, flags, code) of the mapping holding ``ptr``."""
    if not ptr:
        return None, None, _fail(ERR.ACL_ERROR_INVALID_PARAM, "aclrtMemGetAccess: virPtr is NULL")
    with _LOCK:
        dev, st, a = _mapping(ptr)
        if a is None:
            return None, None, _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, "aclrtMemGetAccess: virPtr "
                                     "is not in a mapping")
        return ({"type": ACL_MEM_LOCATION_TYPE_DEVICE, "id": dev.id}, st.access[a],
                ERR.ACL_SUCCESS)


def mem_retain_allocation_handle(ptr):
    """aclrtMemRetainAllocationHandle: (the physical handle mapped at ``ptr``, code); the same
    handle the mapping was made with (no reference is counted: freeing it needs no extra
    aclrtFreePhysical) [fidelity.md #265]."""
    if not ptr:
        return None, _fail(ERR.ACL_ERROR_INVALID_PARAM, "aclrtMemRetainAllocationHandle: virPtr "
                           "is NULL")
    with _LOCK:
        dev, st, a = _mapping(ptr)
        if a is None:
            return None, _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, "aclrtMemRetainAllocationHandle: "
                               "virPtr is not in a mapping")
        return st.maps[a].handle, ERR.ACL_SUCCESS


def mem_get_allocation_properties_from_handle(handle):
    """aclrtMemGetAllocationPropertiesFromHandle: (aclrtPhysicalMemProp dict, code)."""
    if not handle:
        return None, _fail(ERR.ACL_ERROR_INVALID_PARAM, "aclrtMemGetAllocationPropertiesFrom"
                           "Handle: handle is NULL")
    p = _handle(handle)
    if p is None:
        return None, _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, "aclrtMemGetAllocationPropertiesFrom"
                           "Handle: handle is not a live aclrtMallocPhysical handle")
    return ({"handleType": ACL_MEM_HANDLE_TYPE_NONE,
             "allocationType": ACL_MEM_ALLOCATION_TYPE_PINNED, "memAttr": p.attr,
             "location": {"type": ACL_MEM_LOCATION_TYPE_DEVICE, "id": p.dev_id},
             "reserve": p.reserve}, ERR.ACL_SUCCESS)


def mem_get_address_range(ptr):
    """aclrtMemGetAddressRange: (base, size, code) of the block holding ``ptr``: an aclrtMalloc
    block, pinned host memory, or a reserved range; else 107000."""
    if not ptr:
        return None, None, _fail(ERR.ACL_ERROR_INVALID_PARAM, "aclrtMemGetAddressRange: ptr is "
                                 "NULL")
    with _LOCK:
        dev, st = _owner(ptr)
        if dev is not None:
            start, n = _range_of(st, ptr)
            return start, n, ERR.ACL_SUCCESS
    from .hostmem import DEVICE, PINNED, locate
    w = locate(ptr)
    if w.kind in (DEVICE, PINNED):
        return w.start, w.size, ERR.ACL_SUCCESS
    return None, None, _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, "aclrtMemGetAddressRange: ptr is in "
                             "no allocation")


def mem_get_allocation_granularity(prop, option=ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM):
    """aclrtMemGetAllocationGranularity: (bytes, code): 2 MiB for device memory (1 GiB for the
    HUGE1G attributes), minimum and recommended alike [fidelity.md #262]."""
    who = "aclrtMemGetAllocationGranularity"
    if prop is None:
        return None, _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: prop is NULL")
    r = _check_prop(prop, who)
    if isinstance(r, int):
        return None, r
    fields, (ltype, _) = r
    attr = fields["memAttr"]
    if ltype == ACL_MEM_LOCATION_TYPE_DEVICE and attr in _DDR_ONLY:
        return None, _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: memAttr {attr} is host memory "
                           "only")
    if attr not in _KNOWN_ATTRS:
        return None, _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: memAttr {attr} is not supported")
    if option not in (ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM,
                      ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED):
        return None, _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: option {option} is not "
                           "MINIMUM or RECOMMENDED")
    return _granule(attr), ERR.ACL_SUCCESS


ACL_RT_MEM_LINK_IDX_0, ACL_RT_MEM_LINK_IDX_1 = 0, 1     # SIO, HCCS


def mem_map_selected_link(vir_ptr_dst, size, vir_ptr_src, link_idx) -> int:
    """aclrtMemMapSelectedLink: map the reserved range starting at ``vir_ptr_dst`` (of exactly
    ``size`` bytes) onto the physical memory behind ``vir_ptr_src`` (mappings laid end to end
    from it, ``size`` bytes in all), keeping offsets: each mapping of the source is mapped again
    at the same offset of the destination (one aclrtUnmapMem each, as the doc says). The link
    (SIO or HCCS) changes nothing simulated. acl: NULL pointers, size 0, a link index above 1
    100000; then 107000 for ranges that do not fit those rules [fidelity.md #284]."""
    who = "aclrtMemMapSelectedLink"
    if not vir_ptr_dst or not vir_ptr_src:
        return _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: virPtrDst and virPtrSrc must not be "
                     "NULL")
    if not size:
        return _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: size must be greater than 0")
    if link_idx > ACL_RT_MEM_LINK_IDX_1:
        return _fail(ERR.ACL_ERROR_INVALID_PARAM, f"{who}: linkIdx must be 0 (SIO) or 1 (HCCS)")
    with _LOCK:
        dev, st = _owner(vir_ptr_dst)
        if dev is None or st.ranges.get(vir_ptr_dst) != size:
            return _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: virPtrDst is not the start of a "
                         "reserved range of size bytes")
        if any(vir_ptr_dst <= a < vir_ptr_dst + size for a in st.maps):
            return _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: virPtrDst's range has mappings")
        sdev, sst = _owner(vir_ptr_src)
        parts, at = [], vir_ptr_src
        while sdev is not None and at < vir_ptr_src + size:
            p = sst.maps.get(at)
            if p is None:
                break
            parts.append((at - vir_ptr_src, p))
            at += p.size
        if sdev is not dev or at != vir_ptr_src + size:
            return _fail(ERR.ACL_ERROR_RT_PARAM_INVALID, f"{who}: [virPtrSrc, virPtrSrc + size) "
                         "is not mappings laid end to end on the destination's device")
        for off, p in parts:
            if not dev.state.mem.map_phys(vir_ptr_dst + off, p.size, p.foff,
                                          sst.access[vir_ptr_src + off] != 0):
                return _fail(ERR.ACL_ERROR_RT_MEMORY_ALLOCATION, f"{who}: the host refused the "
                             "mapping (mmap)")
            st.maps[vir_ptr_dst + off] = p
            st.access[vir_ptr_dst + off] = sst.access[vir_ptr_src + off]
            p.maps.add(vir_ptr_dst + off)
    return ERR.ACL_SUCCESS
