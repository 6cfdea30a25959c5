"""Simulated memory: one byte arena per device, an address space over it, and the allocator.

Device HBM and pinned host memory live in one numpy ``uint8`` arena so that the engine can copy
between them with a slice assignment. The arena (and the page table below) is an address-space
reservation: an anonymous ``MAP_NORESERVE`` mapping (:func:`reserve`) that the OS commits page by
page on first write, so a device of the chip's real size (64 GiB of HBM on A2 / A3, 128 GiB on
950) costs only the pages a program touches, and an untouched 60 GiB allocation costs nothing.
Where a reservation is refused (strict overcommit, an ``RLIMIT_AS``), the arrays are ``np.zeros``
and the runtime layer sizes devices down (``runtime/device.py``).

The device region of the arena is the device's *virtual* address space: ``dev_size`` bytes of
addresses, twice the HBM (``hbm_size``) where a reservation is possible, so that address ranges
reserved with ``aclrtReserveMemAddress`` do not use up what ``aclrtMalloc`` can have. What is
*physical* (``aclrtMalloc`` blocks, the runtime's buffers, ``aclrtMallocPhysical`` handles) is
counted against ``hbm_size`` (``phys_used``): that is what ``aclrtGetMemInfo`` reports.

::

    arena offset 0 ............ dev_size ............ dev_size+host_size ..... +SINK_SIZE
                 | device HBM    | pinned host memory   | sink (faulting writes land here)
    address      DEV_BASE ...     HOST_BASE ...           (not addressable)

Addresses look like real ones (non-zero, 48-bit). Every allocation is tracked in one table, the
*page table* (the live block of every allocation granule, below); the *context array* (``ctx``,
int64, a fixed header and trailer) carries the address map and the page table's address into the
jitted engine and into kernels, so every kernel access can be bounds-checked against a live
allocation in O(1) (``npusim.device.memview``), and the host's own lookups (``allocation_of``,
``device_fits``) read the same table. No structure is ordered by address, so a malloc or free
costs the same however many blocks are live (``bench/test_scaling_host.py``). Pageable host memory (a user's numpy array registered with
``acl.util.numpy_to_ptr``) is deliberately *not* in the arena: the runtime treats it differently
(async copies with it become synchronous), so the host layer copies it directly.
"""
from __future__ import annotations

import bisect
import ctypes
import gc
import mmap
import sys
import threading
from functools import cache

import numpy as np

DEV_BASE = 0x12C0_4000_0000
HOST_BASE = 0x7F4A_0000_0000
DEV_STRIDE = 1 << 38            # device d's HBM starts at DEV_BASE + d * DEV_STRIDE (256 GiB:
                                # the 950's 128 GiB of HBM and as many reservable addresses)
HOST_STRIDE = 1 << 36           # and its pinned host memory at HOST_BASE + d * HOST_STRIDE
PAGEABLE_BASE = 0x5600_0000_0000   # addresses handed out for registered numpy arrays
REAL_HOST_BASE = 0x2F4A_0000_0000  # HOST_BASE in real-host-memory mode (``claim`` below): where
                                   # neither the kernel's mmap area nor the program's heap goes
SINK_SIZE = 1 << 20
DEV_ALIGN = 512                    # aclrtMalloc returns 512-byte aligned blocks [fidelity.md]
HOST_ALIGN = 64

# ---- layout of the context array (one definition; engine, kernels and host all import it) ----
C_LEN = 0            # length of the ctx array itself
C_DEV_BASE = 1
C_DEV_SIZE = 2
C_HOST_BASE = 3
C_HOST_OFF = 4       # arena offset of the pinned-host region
C_HOST_SIZE = 5
C_SINK_OFF = 6
C_SINK_SIZE = 7
C_FAULT = 8          # first access fault in the current kernel (0 none, else FAULT_*)
C_FAULT_ADDR = 9
C_FAULT_SIZE = 10
C_PRINTF_OFF = 11    # arena offset of the device printf buffer
C_PRINTF_SIZE = 12
C_PRINTF_POS = 13    # bytes used in the printf buffer
C_REC = 14           # 0, or the address of the access-record array (``npusim.device.recording``)
CTX_HEADER = 15
# ... and a trailer, read as ``ctx[len(ctx) - CT_*]``: kept at the end, not in the header, so the
# header's positions never move when the array's length does (it held the allocation table
# before the page table replaced it; a body cached by an older npusim is recompiled anyway, its
# cache stamps are salted, ``jitcache.py``)
CT_PTAB = 2          # address of the page table (int32, ``Memory.ptab``; layout below)
CT_PT_HOST = 1       # index of the first pinned-host entry in it
CTX_TRAILER = 2

FAULT_NONE, FAULT_UNMAPPED, FAULT_OUT_OF_BOUNDS = 0, 1, 2

# ---- the page table: an O(1) answer to "is [off, off+n) inside the live block holding off?" ----
# One int32 entry per allocation granule: DEV_ALIGN bytes of device memory (entries 0 ..), then
# HOST_ALIGN bytes of pinned host memory (from the entry the trailer names). Blocks start on granule
# boundaries of their region and cover whole granules, so every granule lies in at most one
# block's extent. An entry is 0 for a granule in no block, else 1 + the bytes from the granule's
# start to its block's end (``hi``), capped at PT_CAP: the range is in that block when
# ``off - granule start + n < entry``. The context array's trailer holds its address and the
# index of the first host entry. Anything else (a hole, a crossing range, a capped entry)
# takes the exact answer, which records the fault (``npusim.device.memview.check``).
#
# The same entries give every answer about a block, with no table sorted by address:
# * the block holding offset ``off``, if any, is the one whose extent covers its granule (an entry
#   of 0: none); its end is the granule's start + entry - 1;
# * a capped entry (a block of 2 GiB or more) is followed, PT_STRIDE granules on, by an entry of
#   the same block: its last PT_CAP bytes are all uncapped, and PT_STRIDE granules are fewer
#   bytes than that, so a few strides reach an exact end (at most 32 for 64 GiB of HBM);
# * a block's start is ``Memory._starts[end]`` (ends of blocks that hold a byte are distinct);
# * a block ending exactly at a granule boundary is the one whose last entry is granule + 1.
# The table is ``np.zeros``: the OS commits only the pages of entries that were ever written,
# i.e. in proportion to the memory allocated.
DEV_SHIFT, HOST_SHIFT = DEV_ALIGN.bit_length() - 1, HOST_ALIGN.bit_length() - 1
PT_CAP = (1 << 31) - 2
PT_DEV_STRIDE, PT_HOST_STRIDE = PT_CAP // DEV_ALIGN, PT_CAP // HOST_ALIGN    # granules
_CAPPED = PT_CAP + 1                 # a capped entry
_DEV_MASK = DEV_ALIGN - 1


class OutOfMemory(Exception):
    """The arena region has no hole large enough (the API layer maps it to 207001)."""


_RUN = 64      # a run of the first-fit index holds at most 2 * _RUN holes; a small one joins the next


class _Region:
    """First-fit allocator over one arena region: a block goes in the hole of lowest address
    that is large enough; holes merge with their neighbours on free.

    The holes (disjoint ``[lo, hi)``, in address order) are kept in *runs* of consecutive holes,
    each with a bound on its largest hole's size (``_big``: exact when a hole grows it, left
    high when one shrinks or goes, made exact by the first fit that scans the run in vain) and
    its first hole's start (``_firsts``). The first fit reads the bounds up to the first large
    enough, then that run: O(holes / _RUN + _RUN) per call instead of a scan of every hole
    below the one that fits, so a malloc costs about the same with 10 or 10,000 smaller holes
    below it. A free finds its place by two bisects (the run, then the hole)."""

    def __init__(self, off: int, size: int, align: int):
        self.off, self.size, self.align = off, size, align
        self._runs: list[list[tuple[int, int]]] = [[(off, off + size)]]
        self._big: list[int] = [size]
        self._firsts: list[int] = [off]
        self.live: dict[int, int] = {}        # arena offset -> requested size

    @property
    def holes(self) -> list[tuple[int, int]]:
        """Every hole, in address order (for tests and dumps)."""
        return [h for run in self._runs for h in run]

    def alloc(self, nbytes: int) -> int:
        need = -(-max(nbytes, 1) // self.align) * self.align
        runs, big = self._runs, self._big
        for j in range(len(big)):
            if big[j] < need:
                continue
            run = runs[j]
            for i, (lo, hi) in enumerate(run):
                if hi - lo >= need:
                    break
            else:                             # the bound was high: make it exact, go on
                big[j] = max(b - a for a, b in run)
                continue
            break
        else:
            raise OutOfMemory(nbytes)
        if hi - lo == need:
            self._remove(j, i)
        else:
            run[i] = (lo + need, hi)
            if i == 0:
                self._firsts[j] = lo + need
        self.live[lo] = nbytes
        return lo

    def free(self, off: int) -> int:
        nbytes = self.live.pop(off)
        need = -(-max(nbytes, 1) // self.align) * self.align
        lo, hi = off, off + need
        runs = self._runs
        if not runs:
            runs.append([(lo, hi)])
            self._big.append(hi - lo)
            self._firsts.append(lo)
            return nbytes
        j = bisect.bisect_right(self._firsts, lo) - 1     # the run it belongs to
        if j < 0:
            j = 0
        run = runs[j]
        i = bisect.bisect_left(run, (lo,))
        # the hole before ends at lo? (a freed block is never a run's first hole: the run it
        # belongs to starts lower); the hole after (this run's next, or the next run's first)
        # starts at hi?
        left = i > 0 and run[i - 1][1] == lo
        nj, ni = (j, i) if i < len(run) else (j + 1, 0)
        right = nj < len(runs) and runs[nj][ni][0] == hi
        big = self._big
        if left:
            lo = run[i - 1][0]
            if right:
                hi = runs[nj][ni][1]
                self._remove(nj, ni)            # runs may join: find the hole at lo again
                j = bisect.bisect_right(self._firsts, lo) - 1
                run = runs[j]
                i = bisect.bisect_left(run, (lo,)) + 1
            run[i - 1] = (lo, hi)
        elif right:
            hi = runs[nj][ni][1]
            runs[nj][ni] = (lo, hi)
            if ni == 0:
                self._firsts[nj] = lo
            j = nj
        else:
            run.insert(i, (lo, hi))
            if i == 0:
                self._firsts[j] = lo
        if hi - lo > big[j]:
            big[j] = hi - lo
        if len(runs[j]) > 2 * _RUN:
            self._split(j)
        return nbytes

    # ---- the runs ----
    def _remove(self, j: int, i: int) -> None:
        """Take hole ``i`` out of run ``j`` (the run's bound stays an upper bound); an emptied
        run goes, a small one joins the next or the one before (so runs stay few: at most about
        2 * holes / _RUN + 1)."""
        runs = self._runs
        run = runs[j]
        del run[i]
        if not run:
            del runs[j], self._big[j], self._firsts[j]
            return
        if i == 0:
            self._firsts[j] = run[0][0]
        if len(run) >= _RUN // 2:
            return
        big = self._big
        if j + 1 < len(runs) and len(run) + len(runs[j + 1]) <= 2 * _RUN:
            run.extend(runs[j + 1])
            if big[j + 1] > big[j]:
                big[j] = big[j + 1]
            del runs[j + 1], big[j + 1], self._firsts[j + 1]
        elif j > 0 and len(runs[j - 1]) + len(run) <= 2 * _RUN:
            runs[j - 1].extend(run)
            if big[j] > big[j - 1]:
                big[j - 1] = big[j]
            del runs[j], big[j], self._firsts[j]

    def _split(self, j: int) -> None:
        """Run ``j`` outgrew 2 * _RUN holes: split it in halves, their bounds exact."""
        run = self._runs[j]
        tail = run[_RUN:]
        del run[_RUN:]
        self._runs.insert(j + 1, tail)
        self._firsts.insert(j + 1, tail[0][0])
        self._big.insert(j + 1, max(b - a for a, b in tail))
        self._big[j] = max(b - a for a, b in run)

    @property
    def used(self) -> int:
        return sum(self.live.values())


PAGE = mmap.PAGESIZE
DISCARD_MIN = 1 << 20           # zero fills and frees of at least this many bytes give pages back
MADV_DONTNEED = 4               # linux: the pages read as zeros again and leave the process RSS
try:
    _madvise = ctypes.CDLL(None, use_errno=True).madvise
    _madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
except (OSError, AttributeError):          # no libc madvise: zero fills write every byte
    _madvise = None


def zero_fill(arr: np.ndarray, lo: int, hi: int) -> None:
    """``arr[lo:hi] = 0``; for a large range the whole pages inside it are handed back to the
    OS instead (``madvise(MADV_DONTNEED)``: they read as zeros and cost no memory until written),
    so a huge zero-filled range — a crafted device image, a freed 3 GB buffer — never becomes
    resident. The arena is an anonymous mapping, for which that is exact."""
    if hi - lo >= DISCARD_MIN and _madvise is not None:
        base = arr.ctypes.data
        a = -(-(base + lo) // PAGE) * PAGE
        b = (base + hi) // PAGE * PAGE
        if b > a and _madvise(a, b - a, MADV_DONTNEED) == 0:
            arr[lo:a - base] = 0
            arr[b - base:hi] = 0
            return
    arr[lo:hi] = 0


MAP_NORESERVE = 0x4000 if sys.platform.startswith("linux") else 0


@cache
def may_reserve() -> bool:
    """Whether an address-space reservation is free here (checked once per process): not under
    strict overcommit (``vm.overcommit_memory`` 2, which charges a mapping in full whatever its
    flags) nor under a limit on the address space (``RLIMIT_AS``)."""
    if not MAP_NORESERVE:
        return False
    try:
        with open("/proc/sys/vm/overcommit_memory") as f:
            if f.read().strip() == "2":
                return False
    except OSError:
        pass
    try:
        import resource
        if resource.getrlimit(resource.RLIMIT_AS)[0] != resource.RLIM_INFINITY:
            return False
    except (ImportError, OSError, ValueError):
        pass
    return True


def reserve(nbytes: int):
    """An anonymous private ``MAP_NORESERVE`` mapping of ``nbytes`` (zero pages, committed on
    first write), or None where reservations are not free (:func:`may_reserve`) or the address
    space is full even after a collection (devices dropped but not yet collected still hold
    theirs: a cycle keeps a Device alive until the cyclic collector runs)."""
    if not may_reserve() or nbytes <= 0:
        return None
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_NORESERVE
    for attempt in range(2):
        try:
            return mmap.mmap(-1, nbytes, flags=flags)
        except (OSError, ValueError, OverflowError):
            if attempt == 0:
                gc.collect()
    return None


def reserved_array(nbytes: int, dtype) -> tuple[np.ndarray, object]:
    """(a zeroed array of ``nbytes`` bytes of ``dtype``, the mapping it views or None): a
    :func:`reserve` mapping where one is free, else ``np.zeros``."""
    m = reserve(nbytes)
    if m is None:
        return np.zeros(nbytes // np.dtype(dtype).itemsize, dtype), None
    return np.frombuffer(m, dtype), m


# ---- remapping pages of a reservation (linux): shared file pages placed inside the arena ----
# Physical memory of the virtual-memory APIs (aclrtMallocPhysical) lives in a memfd; mapping it
# at an address (aclrtMapMem) places the file's pages over that part of the arena with
# ``mmap(MAP_FIXED | MAP_SHARED)``, so the engine, kernels and host copies see it at the same
# arena offsets, one handle mapped at two addresses aliases, and its data outlives an unmap. The
# page table uses the same means for the capped entries of a huge block (below).
PROT_RW = 3
_MAP_SHARED, _MAP_FIXED = 0x01, 0x10
_FALLOC_PUNCH = 0x03                    # FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE
try:
    _libc = ctypes.CDLL(None, use_errno=True)
    _mmap = _libc.mmap
    _mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                      ctypes.c_long)
    _mmap.restype = ctypes.c_void_p
    _fallocate = _libc.fallocate
    _fallocate.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long)
    _munmap = _libc.munmap
    _munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
except (OSError, AttributeError):
    _mmap = _fallocate = _munmap = None


def can_remap() -> bool:
    """Whether pages of a reservation can be replaced by file pages (linux, memfd, libc mmap)."""
    return _mmap is not None and hasattr(__import__("os"), "memfd_create") and may_reserve()


def map_file(addr: int, nbytes: int, fd: int, offset: int) -> bool:
    """Place ``nbytes`` of file ``fd`` from ``offset`` at ``addr`` (page-aligned, inside a
    reservation this process owns), replacing what was there."""
    r = _mmap(addr, nbytes, PROT_RW, _MAP_SHARED | _MAP_FIXED, fd, offset)
    return r == addr


def map_anon(addr: int, nbytes: int) -> bool:
    """Put fresh zero pages (reserved, not committed) back at ``addr``: undoes :func:`map_file`."""
    r = _mmap(addr, nbytes, PROT_RW, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_NORESERVE
              | _MAP_FIXED, -1, 0)
    return r == addr


def punch(fd: int, offset: int, nbytes: int) -> None:
    """Free the pages of ``[offset, offset + nbytes)`` of file ``fd`` (they read as zeros)."""
    if _fallocate is not None and nbytes > 0:
        _fallocate(fd, _FALLOC_PUNCH, offset, nbytes)


_CAP_CHUNK = 2 << 20            # bytes of page table one mapping of the capped file covers
VMM_GRANULE = 2 << 20           # physical memory and mappings of the virtual-memory APIs


@cache
def _capped_file() -> int:
    """A memfd of _CAP_CHUNK bytes of capped page-table entries (made once per process)."""
    import os
    fd = os.memfd_create("npusim-ptab-capped")
    os.write(fd, np.full(_CAP_CHUNK // 4, _CAPPED, np.int32).tobytes())
    return fd


# ---- real host memory (issue 39: ``runtime.hostmem.use_real_memory``) ----
# A C program writes through the pointer aclrtMallocHost returns and reads what a copy left
# there, so in this mode a device's pinned-host region is real memory at its simulated address:
# the region's pages are a memfd mapped twice, once over the arena's host region (where the
# engine, kernels and host copies reach it, unchanged) and once at ``host_base`` (where C
# reaches it) — the two alias, so no line of the engine changes. Every simulated range is first
# *claimed*: a PROT_NONE reservation made with MAP_FIXED_NOREPLACE, so no later malloc, mmap or
# library of the process can land in it, and a range the process already uses is refused with
# the mapping that holds it (``/proc/self/maps``). The pinned-host ranges move to REAL_HOST_BASE
# in this mode: HOST_BASE (0x7F4A...) lies in the 1 TiB window where the kernel places the mmap
# area at random, and libraries loaded before the mode starts sat in one of the eight 1 GiB
# ranges there in about 1 process of 40 (measured); 0x2F4A... (47 TiB) is far below any mmap
# base, above the device ranges and far from the program's heap. Off (the default), nothing
# here runs: the addresses and the arena are exactly those above.
USER_TOP = 1 << 47                       # x86-64 / aarch64 (4 levels): the user address space
_MAP_FIXED_NOREPLACE = 0x100000
_REAL_HOST = [False]
_CLAIMS: list[tuple[int, int, str]] = []   # (start, end, what) of the ranges this process holds
_CLAIM_LOCK = threading.Lock()


class AddressTaken(RuntimeError):
    """A simulated address range the real-memory mode needs is used by the process already."""


def real_host() -> bool:
    """Is the process in real-host-memory mode?"""
    return _REAL_HOST[0]


def host_base() -> int:
    """Start of device 0's pinned-host range in the mode in force."""
    return REAL_HOST_BASE if _REAL_HOST[0] else HOST_BASE


def set_real_host() -> None:
    """Enter real-host-memory mode (``hostmem.use_real_memory`` checks that no device is open;
    there is no way back: claimed ranges and aliases live as long as the process)."""
    _REAL_HOST[0] = True


def _occupant(lo: int, hi: int) -> str:
    """The mappings of this process inside ``[lo, hi)`` (``/proc/self/maps`` lines)."""
    try:
        with open("/proc/self/maps") as f:
            rows = [r.split() for r in f]
    except OSError:
        return "(no /proc/self/maps)"
    hits = []
    for r in rows:
        a, b = (int(x, 16) for x in r[0].split("-"))
        if a < hi and lo < b:
            hits.append(f"{r[0]} {r[1]} {r[5] if len(r) > 5 else '[anon]'}")
    return "; ".join(hits[:4]) or "(nothing listed: the kernel refused it)"


def claim(addr: int, nbytes: int, what: str) -> None:
    """Hold ``[addr, addr + nbytes)`` (rounded out to pages) for the simulator: a PROT_NONE
    reservation of its parts not held yet. AddressTaken when a part lies beyond the user address
    space or the process maps something there already (the message names it)."""
    lo = addr // PAGE * PAGE
    hi = -(-(addr + nbytes) // PAGE) * PAGE
    if hi > USER_TOP:
        raise AddressTaken(f"{what} [0x{lo:x}, 0x{hi:x}) ends above the user address space "
                           f"(0x{USER_TOP:x})")
    if _mmap is None:
        raise AddressTaken("real host memory needs libc mmap (linux)")
    with _CLAIM_LOCK:
        gaps, at = [], lo
        for a, b, _ in sorted(_CLAIMS):
            if b <= at or a >= hi:
                continue
            if a > at:
                gaps.append((at, a))
            at = max(at, b)
        if at < hi:
            gaps.append((at, hi))
        for a, b in gaps:
            r = _mmap(a, b - a, 0, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_NORESERVE
                      | _MAP_FIXED_NOREPLACE, -1, 0)
            if r != a:
                if r not in (None, ctypes.c_void_p(-1).value):
                    _munmap(r, b - a)    # a kernel before 4.17 took the flag as a hint
                raise AddressTaken(f"{what} [0x{a:x}, 0x{b:x}) is already used by this process: "
                                   f"{_occupant(a, b)} (errno {ctypes.get_errno()})")
            _CLAIMS.append((a, b, what))


def claimed(addr: int) -> int:
    """0 when ``addr`` is in no claimed range; else the end of the one holding it."""
    for a, b, _ in _CLAIMS:
        if a <= addr < b:
            return b
    return 0


def claim_above(addr: int) -> int:
    """The start of the lowest claimed range above ``addr`` (USER_TOP: none)."""
    return min((a for a, _, _ in _CLAIMS if a > addr), default=USER_TOP)


def _unmap_to_claim(addr: int, nbytes: int) -> None:
    """Put the PROT_NONE reservation back over ``[addr, addr + nbytes)`` (inside a claim)."""
    _mmap(addr, nbytes, 0, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_NORESERVE | _MAP_FIXED,
          -1, 0)


class Memory:
    """One device's arena, its two allocators and the context array the engine reads."""

    def __init__(self, dev_size: int, host_size: int, hbm_size: int | None = None):
        self.dev_size, self.host_size = dev_size, host_size
        self.hbm_size = dev_size if hbm_size is None else min(hbm_size, dev_size)
        self.phys_used = 0                    # physical device bytes in use (see module doc)
        self.dev_base, self.host_base = DEV_BASE, HOST_BASE
        self.arena, self.arena_map = reserved_array(dev_size + host_size + SINK_SIZE, np.uint8)
        self.dev = _Region(0, dev_size, DEV_ALIGN)
        self.host = _Region(dev_size, host_size, HOST_ALIGN)
        self._starts: dict[int, int] = {}    # arena end -> start of each live block with a byte
        self._lock = threading.RLock()        # API calls may come from several threads
        self._user: set = set()               # arena offsets of aclrtMalloc/MallocHost blocks
        # device-memory bytes in use and their peaks: the program's blocks (aclrtMalloc) and
        # the runtime's own (args, cond words, images) — aclrtGetMemUsageInfo's components
        self.app_bytes = self.app_peak = self.rt_bytes = self.rt_peak = 0
        # the context array: a fixed header and trailer, written here and never reallocated
        self.ctx = np.zeros(CTX_HEADER + CTX_TRAILER, np.int64)
        pt_host = -(-dev_size // DEV_ALIGN)
        self.pt_host = pt_host                # page-table index of the first host granule
        n_pt = pt_host + -(-host_size // HOST_ALIGN) + 1
        self.ptab, self.ptab_map = reserved_array(4 * n_pt, np.int32)
        self._va: dict[int, tuple[int, int]] = {}       # reserved range start (offset) ->
                                                        # (its region block, size)
        self._vmaps: dict[int, list] = {}               # mapped address -> [size, accessible]
        self._phys_fd: int | None = None                # memfd of physical memory, and
        self._phys: _Region | None = None               # its allocator (made on first use)
        self._host_fd: int | None = None                # real-memory mode: the memfd of the
                                                        # pinned-host region (_make_real)
        self._capped: dict[int, tuple[int, int]] = {}   # block offset -> page-table span mapped
                                                        # from the capped file (_fill_capped)
        self._pt = memoryview(self.ptab)      # the entries as Python ints (host lookups)
        self.observer = None                  # access recording: told of every malloc/free
        self.labels: dict[int, str] = {}      # allocation start address -> the user's name
        h = self.ctx
        h[C_DEV_BASE], h[C_DEV_SIZE] = DEV_BASE, dev_size
        h[C_HOST_BASE], h[C_HOST_OFF], h[C_HOST_SIZE] = HOST_BASE, dev_size, host_size
        h[C_SINK_OFF], h[C_SINK_SIZE] = dev_size + host_size, SINK_SIZE
        h[C_LEN] = n = len(h)
        h[n - CT_PTAB], h[n - CT_PT_HOST] = self.ptab.ctypes.data, pt_host

    def place(self, device_id: int) -> None:
        """Give device ``device_id`` its own address ranges (before anything is allocated), so
        no two devices' pointers coincide — one unified virtual address space, as on hardware."""
        assert not self.dev.live and not self.host.live, "place() before the first malloc"
        self.dev_base = DEV_BASE + device_id * DEV_STRIDE
        self.host_base = host_base() + device_id * HOST_STRIDE
        self.ctx[C_DEV_BASE], self.ctx[C_HOST_BASE] = self.dev_base, self.host_base
        if _REAL_HOST[0]:
            self._make_real(device_id)

    def _make_real(self, device_id: int) -> None:
        """Real-host-memory mode (see :func:`claim`): claim the device's two ranges, and put one
        memfd under both the arena's pinned-host region and ``host_base``. AddressTaken (a
        RuntimeError) when that cannot be done, with the reason."""
        import os
        what = f"device {device_id}"
        if self.arena_map is None or not can_remap():
            raise AddressTaken(f"{what}: real host memory needs an address-space reservation "
                               "and memfd (linux, overcommit not strict, no RLIMIT_AS)")
        if self.dev_size % PAGE or self.host_size % PAGE:
            raise AddressTaken(f"{what}: real host memory needs page-multiple sizes (device "
                               f"{self.dev_size}, pinned host {self.host_size} bytes)")
        claim(self.dev_base, self.dev_size, f"{what}'s device memory")
        claim(self.host_base, self.host_size, f"{what}'s pinned host memory")
        fd = os.memfd_create(f"npusim-host{device_id}")
        try:
            os.ftruncate(fd, self.host_size)             # sparse: no page until written
            if not (map_file(self.arena.ctypes.data + self.dev_size, self.host_size, fd, 0)
                    and map_file(self.host_base, self.host_size, fd, 0)):
                raise AddressTaken(f"{what}: mapping its pinned host memory failed "
                                   f"(errno {ctypes.get_errno()})")
        except BaseException:
            os.close(fd)
            raise
        self._host_fd = fd

    def _zero(self, lo: int, hi: int) -> None:
        """:func:`zero_fill` of arena ``[lo, hi)``; in real-memory mode the pinned-host region's
        whole pages are punched out of its memfd instead (MADV_DONTNEED on a shared mapping
        would keep the file's bytes: the pages would not read as zeros)."""
        fd = self._host_fd
        h0 = self.dev_size
        h1 = h0 + self.host_size
        if fd is None or hi <= h0 or lo >= h1:
            zero_fill(self.arena, lo, hi)
            return
        if lo < h0:
            zero_fill(self.arena, lo, h0)
        a, b = max(lo, h0), min(hi, h1)
        pa, pb = -(-(a - h0) // PAGE) * PAGE, (b - h0) // PAGE * PAGE
        if b - a >= DISCARD_MIN and pb > pa:
            punch(fd, pa, pb - pa)
            self.arena[a:h0 + pa] = 0
            self.arena[h0 + pb:b] = 0
        else:
            self.arena[a:b] = 0
        if hi > h1:
            zero_fill(self.arena, h1, hi)

    # ---- address map ----
    def to_off(self, addr: int) -> int:
        """Arena offset of an address, or -1 when it is not in device or pinned-host memory."""
        if self.dev_base <= addr < self.dev_base + self.dev_size:
            return addr - self.dev_base
        if self.host_base <= addr < self.host_base + self.host_size:
            return self.dev_size + addr - self.host_base
        return -1

    def to_addr(self, off: int) -> int:
        return self.dev_base + off if off < self.dev_size else self.host_base + off - self.dev_size

    def is_device(self, addr: int) -> bool:
        return self.dev_base <= addr < self.dev_base + self.dev_size

    def is_pinned_host(self, addr: int) -> bool:
        return self.host_base <= addr < self.host_base + self.host_size

    # ---- allocation ----
    def malloc(self, nbytes: int, host: bool = False, user: bool = False) -> int:
        """Allocate; ``user`` marks a block the program owns (``aclrtMalloc``): only those may
        be freed by ``aclrtFree``, so a stale user pointer never frees the runtime's own
        memory (a cond word, args) that reused its address."""
        with self._lock:
            addr = self._malloc(nbytes, host)
            if user:
                self._user.add(self.to_off(addr))
            if not host:
                self._count(nbytes, user)
            return addr

    def _count(self, nbytes: int, user: bool) -> None:
        if user:
            self.app_bytes += nbytes
            self.app_peak = max(self.app_peak, self.app_bytes)
        else:
            self.rt_bytes += nbytes
            self.rt_peak = max(self.rt_peak, self.rt_bytes)

    def is_user(self, addr: int) -> bool:
        """Is ``addr`` the start of a live block the program allocated?"""
        return self.to_off(addr) in self._user

    def _malloc(self, nbytes: int, host: bool) -> int:
        region = self.host if host else self.dev
        if not host and self.phys_used + nbytes > self.hbm_size:
            raise OutOfMemory(nbytes)           # the HBM is used up (the addresses may not be)
        off = region.alloc(nbytes)
        if not host:
            self.phys_used += nbytes
        if nbytes > 0:
            self._starts[off + nbytes] = off
        self._map(off, nbytes, host)
        if self.observer is not None:
            self.observer.on_malloc(self.to_addr(off), nbytes)
        return self.to_addr(off)

    def free(self, addr: int, host: bool = False) -> int:
        """Free the allocation starting at ``addr``; KeyError when there is none."""
        with self._lock:
            return self._free(addr, host)

    def _free(self, addr: int, host: bool) -> int:
        off = self.to_off(addr)
        region = self.host if host else self.dev
        if off < 0 or off not in region.live:
            raise KeyError(addr)
        nbytes = region.free(off)
        if not host:
            self.phys_used -= nbytes
            if off in self._user:
                self.app_bytes -= nbytes
            else:
                self.rt_bytes -= nbytes
        self._user.discard(off)
        self.labels.pop(addr, None)
        if nbytes >= DISCARD_MIN:            # a big block's pages go back to the OS
            self._zero(off, off + nbytes)
        if nbytes > 0:
            del self._starts[off + nbytes]
        self._unmap(off, nbytes, host)
        if self.observer is not None:
            self.observer.on_free(addr, nbytes)
        return nbytes

    def _pages(self, off: int, nbytes: int, host: bool) -> tuple[int, int, int]:
        """(first entry, entry count, granule bytes) of the block at ``off`` in the page table."""
        if host:
            g, first = HOST_ALIGN, self.pt_host + ((off - self.dev_size) >> HOST_SHIFT)
        else:
            g, first = DEV_ALIGN, off >> DEV_SHIFT
        return first, -(-max(nbytes, 1) // g), g

    def _map(self, off: int, nbytes: int, host: bool) -> None:
        """Enter a new block in the page table: O(its granules), one vector store."""
        first, n, g = self._pages(off, nbytes, host)
        if n == 1:
            self.ptab[first] = min(nbytes, PT_CAP) + 1
            return
        capped = max(0, min(n, (nbytes - PT_CAP) // g + 1))     # granules whose entry is capped
        self._fill_capped(off, first, capped)
        k = first + capped
        top = nbytes - capped * g + 1                            # entry of granule ``capped``
        self.ptab[k:first + n] = np.arange(top, top - (n - capped) * g, -g, dtype=np.int32)

    def _fill_capped(self, off: int, first: int, capped: int) -> None:
        """``ptab[first:first + capped] = _CAPPED`` for the block at arena offset ``off``. Past
        _CAP_CHUNK bytes of entries, the whole pages among them are the capped file mapped in
        (:func:`_capped_file`; a few hundred mappings for the largest block) instead of
        written: a huge block that is never touched costs no memory, not 1/128 of its size."""
        lo, hi = first, first + capped
        if 4 * capped >= 2 * _CAP_CHUNK and self.ptab_map is not None and can_remap():
            base = self.ptab.ctypes.data
            a = -(-(base + 4 * lo) // PAGE) * PAGE
            b = (base + 4 * hi) // PAGE * PAGE
            done = a
            fd = _capped_file()
            while done < b:
                n = min(_CAP_CHUNK, b - done)
                if not map_file(done, n, fd, 0):
                    break
                done += n
            if done > a:
                self._capped[off] = (a, done)
                self.ptab[lo:(a - base) // 4] = _CAPPED
                self.ptab[(done - base) // 4:hi] = _CAPPED
                return
        self.ptab[lo:hi] = _CAPPED

    def _unmap(self, off: int, nbytes: int, host: bool) -> None:
        span = self._capped.pop(off, None)
        if span is not None:                   # zero pages back in place of the capped file
            map_anon(span[0], span[1] - span[0])
        first, n, _ = self._pages(off, nbytes, host)
        if n == 1:
            self.ptab[first] = 0
        else:                                  # a big block's table pages go back to the OS
            zero_fill(self.ptab.view(np.uint8), 4 * first, 4 * (first + n))

    # ---- lookups: the page table's entries (the layout above), O(1) in the live blocks ----
    def _granule(self, off: int) -> tuple[int, int]:
        """(page-table index, arena offset of its granule's start) of arena offset ``off``."""
        if off < self.dev_size:
            k = off >> DEV_SHIFT
            return k, k << DEV_SHIFT
        k = (off - self.dev_size) >> HOST_SHIFT
        return self.pt_host + k, self.dev_size + (k << HOST_SHIFT)

    def _end(self, k: int, gstart: int) -> int:
        """Arena end (``hi``) of the block whose extent covers granule ``k`` (starting at arena
        offset ``gstart``; its entry is not 0): a capped entry is followed by strides."""
        pt = self._pt
        e = pt[k]
        if e == _CAPPED:
            g, stride = (DEV_ALIGN, PT_DEV_STRIDE) if k < self.pt_host else \
                (HOST_ALIGN, PT_HOST_STRIDE)
            while e == _CAPPED:
                k += stride
                gstart += stride * g
                e = pt[k]
        return gstart + e - 1

    def _block_at(self, off: int) -> tuple[int, int] | None:
        """(start, end) arena offsets of the live block holding byte ``off`` (an arena offset of
        device or pinned-host memory), else None."""
        k, g = self._granule(off)
        if self._pt[k] == 0:                    # no block's extent covers the granule
            return None
        end = self._end(k, g)
        start = self._starts.get(end) if off < end else None    # (None: freed meanwhile)
        return (start, end) if start is not None else None

    def blocks(self) -> list[tuple[int, int]]:
        """(arena offset, size) of every live block, by offset (O(n log n): for a tool that
        starts watching, not for a hot path)."""
        return sorted([*self.dev.live.items(), *self.host.live.items()])

    def allocation_of(self, addr: int) -> tuple[int, int] | None:
        """(start address, size) of the live allocation holding ``addr``, else None."""
        off = self.to_off(addr)
        if off < 0:
            return None
        b = self._block_at(off)
        if b is None:
            return None
        return self.to_addr(b[0]), b[1] - b[0]

    def device_fits(self, a: int, n: int):
        """``hostmem.locate(a).fits(a, n)`` for this device's memory in one frame (an async
        memset's hot path): None when ``a`` is not in device memory, else does ``[a, a+n)`` lie
        inside one live allocation (``a`` is a byte of one, and ``a + n`` at most its end)? One
        page-table entry: ``e - 1`` bytes from the granule's start to the block's end."""
        base = self.dev_base
        if not base <= a < base + self.dev_size:
            return None
        off = a - base
        r = off & _DEV_MASK
        e = self._pt[off >> DEV_SHIFT]
        if e == _CAPPED:                        # a block of 2 GiB or more: its exact end
            end = self._end(off >> DEV_SHIFT, off - r)
            return off < end and off + n <= end
        return r < e - 1 and r + n < e

    def device_pair_fits(self, a: int, b: int, n: int) -> bool:
        """Do ``[a, a+n)`` and ``[b, b+n)`` both lie in device memory, each inside one live
        allocation? ``bool(device_fits(a, n) and device_fits(b, n))`` in one frame (an async
        device-to-device copy's hot path)."""
        base = self.dev_base
        end = base + self.dev_size
        if not (base <= a < end and base <= b < end):
            return False
        pt = self._pt
        a -= base
        b -= base
        e, f = pt[a >> DEV_SHIFT], pt[b >> DEV_SHIFT]
        if e == _CAPPED or f == _CAPPED:        # a block of 2 GiB or more: the general way
            return bool(self.device_fits(a + base, n) and self.device_fits(b + base, n))
        r, q = a & _DEV_MASK, b & _DEV_MASK
        return r < e - 1 and r + n < e and q < f - 1 and q + n < f

    def set_label(self, addr: int, name: str) -> None:
        """Name the allocation starting at ``addr`` (forgotten when it is freed)."""
        self.labels[addr] = str(name)

    def label_of(self, addr: int) -> str:
        """The name of the live allocation holding ``addr`` ("" when it has none)."""
        if not self.labels:
            return ""
        a = self.allocation_of(addr)
        return self.labels.get(a[0], "") if a is not None else ""

    def release(self) -> None:
        """Give every page of the arena and the page table back to the OS (the device is gone:
        ``runtime.device.Device.close``). The addresses stay valid (they read as zeros) until the
        last view of the mappings is collected, which unmaps them."""
        with self._lock:
            for addr in list(self._vmaps):
                self.unmap_phys(addr)
            self._zero(0, self.arena.nbytes)
            zero_fill(self.ptab.view(np.uint8), 0, self.ptab.nbytes)
            if self._host_fd is not None:      # C's view of the pinned memory goes: the
                import os                      # range is held (PROT_NONE) for a device again
                _unmap_to_claim(self.host_base, self.host_size)
                os.close(self._host_fd)
                self._host_fd = None
            if self._phys_fd is not None:
                import os
                os.close(self._phys_fd)
                self._phys_fd, self._phys = None, None

    # ---- virtual memory (runtime/api_vmm.py): address ranges, physical pages, mappings ----
    def reserve_va(self, nbytes: int, align: int) -> int:
        """Reserve ``nbytes`` of device addresses aligned to ``align`` (a power of two): no
        physical memory, no page-table entry (an access there faults until a mapping). Raises
        OutOfMemory when no range is free."""
        with self._lock:
            raw = self.dev.alloc(nbytes + align)
            off = -(-(self.dev_base + raw) // align) * align - self.dev_base
            self._va[off] = (raw, nbytes)
            return self.dev_base + off

    def release_va(self, addr: int) -> None:
        with self._lock:
            raw, _ = self._va.pop(addr - self.dev_base)
            self.dev.free(raw)

    def reserve_block(self, nbytes: int, align: int) -> int:
        """Reserve ``nbytes`` of addresses (as :meth:`reserve_va`) that are one block of the page
        table from the start: memory kernels and copies may reach, committed page by page on
        first write, and charged to the HBM only through :meth:`charge` (a stream-ordered memory
        pool, ``runtime/api_mempool.py``)."""
        with self._lock:
            addr = self.reserve_va(nbytes, align)
            off = addr - self.dev_base
            self._starts[off + nbytes] = off
            self._map(off, nbytes, False)
            return addr

    def release_block(self, addr: int) -> None:
        """Undo :meth:`reserve_block`: its pages go back to the OS."""
        with self._lock:
            off = addr - self.dev_base
            nbytes = self._va[off][1]
            self._starts.pop(off + nbytes, None)
            self._unmap(off, nbytes, False)
            zero_fill(self.arena, off, off + nbytes)
            self.release_va(addr)

    def charge(self, nbytes: int) -> None:
        """Count ``nbytes`` more of physical HBM in use; OutOfMemory when it has no room."""
        with self._lock:
            if self.phys_used + nbytes > self.hbm_size:
                raise OutOfMemory(nbytes)
            self.phys_used += nbytes

    def uncharge(self, nbytes: int) -> None:
        with self._lock:
            self.phys_used -= nbytes

    def phys_alloc(self, nbytes: int) -> int:
        """``nbytes`` of physical device memory (an offset in the device's memfd, granule
        aligned), counted in ``phys_used``; OutOfMemory when the HBM has no room."""
        import os
        with self._lock:
            if self.phys_used + nbytes > self.hbm_size:
                raise OutOfMemory(nbytes)
            if self._phys_fd is None:
                fd = os.memfd_create("npusim-hbm")
                os.ftruncate(fd, self.hbm_size + VMM_GRANULE)     # sparse: no page until written
                self._phys_fd, self._phys = fd, _Region(0, self.hbm_size + VMM_GRANULE,
                                                        VMM_GRANULE)
            foff = self._phys.alloc(nbytes)
            self.phys_used += nbytes
            return foff

    def phys_free(self, foff: int) -> None:
        """Free physical memory (its pages go back to the OS at once)."""
        with self._lock:
            nbytes = self._phys.free(foff)
            self.phys_used -= nbytes
            punch(self._phys_fd, foff, -(-nbytes // VMM_GRANULE) * VMM_GRANULE)

    def map_phys(self, addr: int, nbytes: int, foff: int, access: bool = True) -> bool:
        """Place physical memory ``[foff, foff + nbytes)`` at device address ``addr`` (granule
        aligned, inside a reserved range, not mapped): the engine and the host read and write
        the file's pages there. ``access`` False (``aclrtMemMapNoAccess``) leaves it out of
        the page table until :meth:`set_access`."""
        off = addr - self.dev_base
        with self._lock:
            if not map_file(self.arena.ctypes.data + off, nbytes, self._phys_fd, foff):
                return False
            self._vmaps[addr] = [nbytes, False]
            if access:
                self._enter(addr)
            return True

    def _enter(self, addr: int) -> None:
        entry = self._vmaps[addr]
        if not entry[1]:
            off, nbytes = addr - self.dev_base, entry[0]
            self._starts[off + nbytes] = off
            self._map(off, nbytes, False)
            entry[1] = True

    def set_access(self, addr: int, on: bool) -> None:
        """Let kernels and copies reach a mapping (or no longer)."""
        with self._lock:
            entry = self._vmaps[addr]
            if on:
                self._enter(addr)
            elif entry[1]:
                off = addr - self.dev_base
                self._starts.pop(off + entry[0], None)
                self._unmap(off, entry[0], False)
                entry[1] = False

    def mapping_at(self, addr: int) -> tuple[int, int, bool] | None:
        """(start, size, accessible) of the mapping holding ``addr``, else None."""
        for a, (n, acc) in self._vmaps.items():
            if a <= addr < a + n:
                return a, n, acc
        return None

    def unmap_phys(self, addr: int) -> None:
        """Undo :meth:`map_phys`: the addresses are reserved again (zero pages, no access)."""
        self.set_access(addr, False)
        nbytes = self._vmaps.pop(addr)[0]
        map_anon(self.arena.ctypes.data + addr - self.dev_base, nbytes)

    def n_allocations(self) -> tuple[int, int]:
        """Live allocations: (device, pinned host); reserved address ranges are not."""
        return len(self.dev.live) - len(self._va), len(self.host.live)

    def check_range(self, addr: int, nbytes: int) -> bool:
        """True when ``[addr, addr+nbytes)`` lies inside one live allocation."""
        a = self.allocation_of(addr)
        return a is not None and addr + nbytes <= a[0] + a[1]

    def zero(self, addr: int, nbytes: int) -> None:
        """Zero ``nbytes`` at ``addr`` (whole pages of a large range are discarded instead)."""
        off = self.to_off(addr)
        self._zero(off, off + nbytes)

    # ---- host access (the engine must have run first: the runtime layer makes sure) ----
    def view(self, addr: int, nbytes: int) -> np.ndarray:
        """A writable uint8 view of simulated memory (caller has checked the range)."""
        off = self.to_off(addr)
        return self.arena[off:off + nbytes]
