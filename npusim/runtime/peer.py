"""Several devices on one timeline: notifies between devices, peer copies, peer access.

Each device runs its own engine over its own SQs (``device/engine``). What joins them is what
joins real NPUs: a notify that one device records and another waits on (HCCL's pre- and post-
syncs, ``../shared/spec/hccl.md`` §4), and copies between their memories (SDMA over HCCS).

**A notify between devices** is a :class:`Bridge`: a slot on the recording device (its
*outbox*, which the recording task sets like any notify record) and a slot on the waiting
device (its *inbox*, which the waiting task waits on like any notify wait). :func:`pump` moves
each set outbox into its inbox with the time it was recorded at (``DeviceState.signal``), so
the wait ends where it would on one timeline: no earlier than the record (plus the wake-up, for
a wait that had parked).

**When devices run.** A device runs ahead — up to what its host waits for, or until every SQ
is idle or parked — exactly as it runs alone. When a host wait finds its device stalled
(``runtime.device.STALL_HOOKS``), :func:`_progress` runs the other devices and pumps the
bridges until the stalled device received something or nothing can move (a device whose run
would do nothing is not run, and only devices that executed an SQE since the last pump have
new records to move: row 420, ``docs/timing.md`` "Several devices"). Running one device
ahead of another up to its next wait on another device gives the same simulated times as one
global time order (a device's times depend only on its own SQEs and on when its cross-device
waits are satisfied, which the record times carry); with core contention on, it is exact for
each device's own cores, which no other device shares. A program without races keeps its data
(docs/fidelity.md row 370). Nothing here costs a single-device program anything: with no
bridge, the stall hook returns at once.

**Peer copies** are kernel tasks of the runtime's (``device/peer.py``) whose arguments name each
side by device id and arena offset; :func:`move` checks both ranges against live allocations at
submit and registers the devices in ``ARENAS``. Peer access (``aclrtDeviceEnablePeerAccess``)
is the per-device set :data:`ENABLED` (``runtime/api_peer.py``).
"""
from __future__ import annotations

import struct

from ..device import engine as E
from ..device import peer as P
from ..device import sqe as S
from . import args as A
from .device import CLOSE_HOOKS, SLOT_EXPLAINERS, STALL_HOOKS
from .hostmem import DEVICE, PINNED, locate
from .runtime import RT


class Bridge:
    """A notify from device ``src`` to device ``dst``: ``src_slot`` is recorded on ``src``,
    ``dst_slot`` waited on on ``dst``. ``owner`` (a communicator ...) names it in diagnoses
    (``owner.explain_bridge(bridge)`` when it has one); ``open`` is False once its owner is
    destroyed: a record is no longer delivered, and its waiter hangs as on the hardware."""

    __slots__ = ("src", "src_slot", "dst", "dst_slot", "owner", "label", "open", "delivered")

    def __init__(self, src, dst, owner, label: str):
        self.src, self.dst, self.owner, self.label = src, dst, owner, label
        self.src_slot = src.new_slot(self)
        self.dst_slot = dst.new_slot(self)
        self.open = True
        self.delivered = 0          # records moved (statistics, diagnoses)

    def describe(self) -> str:
        return (f"notify {self.label} from device {self.src.id} to device "
                f"{self.dst.id}")


BRIDGES: list[Bridge] = []
"""Every live bridge, in creation order (:func:`pump` walks them)."""
ENABLED: dict[int, set[int]] = {}
"""Device id -> the peer device ids it may access (``aclrtDeviceEnablePeerAccess``)."""


BRIDGE_HOOKS: list = []
"""Callbacks ``hook(bridge)`` told of every new bridge (``npusim.analysis`` remembers those made
while accesses are recorded: the race pass pairs their records and waits after their owner
may have dropped them)."""


def bridge(src, dst, owner, label: str = "") -> Bridge:
    """A new notify from device ``src`` to device ``dst`` (host ``Device`` objects)."""
    b = Bridge(src, dst, owner, label)
    BRIDGES.append(b)
    _replan()
    for hook in BRIDGE_HOOKS:
        hook(b)
    return b


def drop(bridges, models=()) -> None:
    """Free ``bridges``: their slots retire once no task of ``models`` (graphs that captured
    them) can run, as an event's slot does."""
    gone = set(map(id, bridges))
    BRIDGES[:] = [b for b in BRIDGES if id(b) not in gone]
    _replan()
    for b in bridges:
        b.open = False
        for dev, slot in ((b.src, b.src_slot), (b.dst, b.dst_slot)):
            if _alive(dev):
                dev.retire_slot(slot, models=[m for m in models if m.device is dev])


def _alive(dev) -> bool:
    return RT.devices.get(dev.id) is dev


class _Outboxes:
    """The bridges recorded on one device, for :func:`pump`: their outbox slots and the
    engine step count when they were last looked at (a device that executed no SQE since
    cannot have recorded one)."""

    __slots__ = ("src", "slots", "bridges", "seen")

    def __init__(self, src, bridges):
        self.src = src
        self.bridges = bridges
        self.slots = [b.src_slot for b in bridges]
        self.seen = -1


_PLAN: list = []
""":class:`_Outboxes` per recording device, made from ``BRIDGES`` when ``_PLAN_OK[0]`` is
False (a bridge made or dropped, a device closed)."""
_PLAN_OK = [False]


def _replan() -> None:
    """The bridges changed: the next pump makes the plan again (none holds a device till then)."""
    _PLAN.clear()
    _PLAN_OK[0] = False


def _plan() -> list:
    if not _PLAN_OK[0]:
        by_src: dict = {}
        for b in BRIDGES:
            if b.open:
                by_src.setdefault(b.src, []).append(b)
        _PLAN[:] = [_Outboxes(src, bs) for src, bs in by_src.items()]
        _PLAN_OK[0] = True
    return _PLAN


def pump() -> set:
    """Deliver every recorded outbox to its inbox; the devices that received one.

    Per recording device that executed an SQE since it was last looked at: its recorded
    outboxes taken (``DeviceState.take_records``), and the records handed to each receiving
    device in one ``DeviceState.signal_many``. The same deliveries, with the same times, as a
    walk over every bridge (docs/fidelity.md row 370)."""
    got: dict = {}
    steps_col = E.E_STEPS
    for ob in _plan():
        state = ob.src.state
        steps = int(state.st[steps_col])
        if steps == ob.seen:
            continue
        ob.seen = steps
        taken = state.take_records(ob.slots)
        if not taken:
            continue
        bridges = ob.bridges
        for i, t in taken:
            b = bridges[i]
            b.delivered += 1
            d = got.get(b.dst)
            if d is None:
                d = got[b.dst] = ([], [])
            d[0].append(b.dst_slot)
            d[1].append(t)
    for dst, (slots, times) in got.items():
        dst.state.signal_many(slots, times)
    return set(got)


def _progress(dev) -> bool:
    """``STALL_HOOKS``: ``dev``'s host wait is stalled. Run the other devices and pump until
    ``dev`` received a record (True), or nothing moved anywhere (False). A device whose run
    would do nothing (``DeviceState.quiet``: its last run left nothing runnable, and nothing
    was pushed to it or delivered to it since) is not run."""
    if not BRIDGES:
        return False
    got = pump()
    while dev not in got:
        moved = bool(got)
        for other in list(RT.devices.values()):
            if other is not dev and not other.state.quiet():
                before = int(other.state.st[E.E_STEPS])
                other._run()
                moved |= int(other.state.st[E.E_STEPS]) != before
        got = pump()
        if not got and not moved:
            return False
    return True


def _explain(dev, slot: int) -> str:
    """``SLOT_EXPLAINERS``: what a wait on a bridge's inbox waits for."""
    o = dev.slot_owner.get(slot)
    if not isinstance(o, Bridge) or o.dst_slot != slot or o.dst is not dev:
        return ""
    explain = getattr(o.owner, "explain_bridge", None)
    if explain is not None:
        return explain(o)
    if not o.open:
        return "its owner was destroyed, so it is never delivered"
    return f"device {o.src.id} has not recorded it, and nothing queued there will"


def _closed(dev) -> None:
    """``CLOSE_HOOKS``: a closing device leaves the arena table and every bridge — after what
    it recorded was delivered (a peer that synchronizes later still gets it)."""
    pump()
    if 0 <= dev.id < P.MAX_DEVICES:
        P.ARENAS[dev.id * P.A_COLS:(dev.id + 1) * P.A_COLS] = 0
    _REGISTERED.pop(dev.id, None)
    gone = [b for b in BRIDGES if b.src is dev or b.dst is dev]
    BRIDGES[:] = [b for b in BRIDGES if b.src is not dev and b.dst is not dev]
    _replan()
    for b in gone:
        b.open = False
        other, slot = (b.dst, b.dst_slot) if b.src is dev else (b.src, b.src_slot)
        if b.owner is None and other is not dev and _alive(other):
            other.retire_slot(slot)     # an ownerless bridge: its other side goes back now
        # (an owner's bridge keeps the other side's slot, which may hold a delivered record
        # a wait there still needs, until the owner drops it: ``drop``)
    ENABLED.pop(dev.id, None)
    for peers in ENABLED.values():
        peers.discard(dev.id)


STALL_HOOKS.append(_progress)
SLOT_EXPLAINERS.append(_explain)
CLOSE_HOOKS.append(_closed)


_ARENAS_ADDR = P.ARENAS.ctypes.data
_PACK: dict = {}
"""Words of a peer task's arguments -> the ``struct`` packer of that many int64."""
_REGISTERED: dict = {}
"""Device id -> the arena array ``register`` last put in ``ARENAS`` for it."""


def register(dev) -> None:
    """Put device ``dev``'s arena in ``ARENAS`` (a peer task names it by id); nothing to do
    when that arena is already there (a collective registers both sides of each copy)."""
    mem = dev.state.mem
    i = dev.id * P.A_COLS
    if _REGISTERED.get(dev.id) is mem.arena and P.ARENAS[i + P.A_PTR] != 0:
        return
    P.ARENAS[i + P.A_PTR] = mem.arena.ctypes.data
    P.ARENAS[i + P.A_SIZE] = mem.arena.nbytes
    _REGISTERED[dev.id] = mem.arena


def owner_of(addr: int, n: int):
    """(device, arena offset) of ``n`` bytes at device or pinned-host address ``addr`` inside
    one live allocation of some device (``hostmem.locate``), or (None, -1)."""
    w = locate(addr)
    if w.kind not in (DEVICE, PINNED) or not w.fits(addr, n):
        return None, -1
    return w.device, w.device.state.mem.to_off(addr)


def move(stream, dst: int, src: int, n: int, dur: int, host_ns: int, kid: int = -1,
         extra=()) -> int:
    """Queue on ``stream`` a task that copies ``n`` bytes from ``src`` to ``dst`` (device
    addresses, each inside one live allocation of any device; the caller checked) and lasts
    ``dur`` ns; ``kid``/``extra``: another body of the same first arguments (an inline reduce)
    and its further words. Returns the stream position, or a negative code."""
    dd, doff = owner_of(dst, n)
    sd, soff = owner_of(src, n)
    register(dd)
    register(sd)
    words = (dd.id, doff, sd.id, soff, n, *extra, _ARENAS_ADDR)
    pack = _PACK.get(len(words))
    if pack is None:
        pack = _PACK[len(words)] = struct.Struct(f"<{len(words)}q").pack
    addr = A.place(stream, pack(*words))
    return stream.submit(S.OP_KERNEL, host_ns, P.COPY_KID if kid < 0 else kid, addr,
                         8 * len(words), max(1, int(dur)), 0, 1)
