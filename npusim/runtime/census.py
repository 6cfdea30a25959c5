"""The resource census: what the simulator holds right now, for "back to baseline" checks.

``npusim.census()`` counts every kind of resource that an API creates and another API (or a
reset) frees — user and capture streams, events, notifies, models, cond handles, SQs, sync
slots (and those waiting to be freed), allocations, pageable registrations and live handles by
kind. A program that frees what it made leaves the census where it started; a leak shows as
the kind that grew (``Census.diff``).

Per device, ``bridges`` counts the live notifies between devices (``runtime/peer.py``
``BRIDGES``) that hold a slot on it, recorded there or waited on there: a bridge between two
devices counts on both. A device's reset drops its bridges (peer.py's close hook). Modules
above this layer add their own kinds through ``runtime.device.CENSUS_HOOKS``
(``hook(dev) -> {kind: count}``; ``api_vmm``, ``api_mempool``, ``api_managed`` do), which is
where HCCL communicators belong.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..device.launchjit import forget as _forget
from . import peer
from .device import CENSUS_HOOKS
from .runtime import RT


@dataclass(frozen=True)
class Census:
    devices: dict = field(default_factory=dict)    # device id -> {resource: count}
    handles: dict = field(default_factory=dict)    # handle kind -> live handles
    pageable: int = 0                              # live numpy_to_ptr registrations

    def diff(self, base: "Census") -> dict:
        """What grew or shrank since ``base``: {"device 0 streams": +1, "handles event": +1}."""
        out = {}
        for d in set(self.devices) | set(base.devices):
            a, b = self.devices.get(d, {}), base.devices.get(d, {})
            for k in set(a) | set(b):
                if a.get(k, 0) != b.get(k, 0):
                    out[f"device {d} {k}"] = a.get(k, 0) - b.get(k, 0)
        for k in set(self.handles) | set(base.handles):
            n = self.handles.get(k, 0) - base.handles.get(k, 0)
            if n:
                out[f"handles {k}"] = n
        if self.pageable != base.pageable:
            out["pageable registrations"] = self.pageable - base.pageable
        return out


def _device(dev) -> dict:
    st = dev.state
    alloc_dev, alloc_host = st.mem.n_allocations()
    extra = {}
    for hook in CENSUS_HOOKS:              # the memory chapters' resources (api_vmm, ...)
        extra.update(hook(dev))
    return extra | {
        "contexts": sum(1 for c in dev.contexts if not c.destroyed),
        "streams": len(dev.streams),
        "capture streams": len(dev.streams_by_sq_model),
        "models": len(dev.models),
        "model rows": st.mrows_in_use(),      # models' capture-order rows (launchjit mseq)
        "cond handles": sum(1 for c in dev.conds if c is not None),
        "events": dev.live_events,
        "notifies": dev.live_notifies,
        "sqs": st.sqs_in_use() - dev.has_update_payload(),   # the device's own ring aside
        "sync slots": st.slots_in_use(),
        "slots retiring": dev.retiring_slots(),
        "sqcq pairs": dev.sqcq_used,
        "bridges": sum(1 for b in peer.BRIDGES if b.src is dev or b.dst is dev),
        "device allocations": alloc_dev,
        "host allocations": alloc_host,
    }


def census() -> Census:
    """A snapshot of every live resource (see the module docstring)."""
    with RT.lock:
        _forget()                       # a locked region begins: the launch memo is void
        return Census({i: _device(d) for i, d in RT.devices.items()}, RT.handles.counts(),
                      len(RT.pageable))
