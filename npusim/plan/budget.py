"""Resource budgets: the limits of a chip profile as objects with their sources (user streams,
the SQ/CQ pool and its per-graph cap, events, notifies, the capture-stream geometry that decides
cascades, the hardware stream budget frameworks plan against), and :func:`usage`, what a live
simulated device consumes now. Part of :mod:`npusim.plan`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .. import errors as ERR
from ..profiles import Profile, get_profile
from ..runtime.event import FLAG, Event, Notify
from ..runtime.runtime import RT

E_RESOURCE = ERR.ACL_ERROR_RT_RESOURCE_ALLOC_FAIL        # 207005
E_NO_STREAM = ERR.ACL_ERROR_RT_NO_STREAM_RESOURCE         # 207008
E_NO_EVENT = ERR.ACL_ERROR_RT_NO_EVENT_RESOURCE           # 207007
E_NO_NOTIFY = ERR.ACL_ERROR_RT_NO_NOTIFY_RESOURCE         # 207009
E_FEATURE = ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT          # 207000

VLLM_ASCEND_GRAPH_STREAMS = 1800
"""vllm-ascend ``update_aclgraph_sizes``: "we can only capture 1800 graphs at most ... bounded by
the number of streams, which is 2048, we save 248 streams as a buffer" (``MAX_CAPTURE_SIZE``;
1920 in older releases). Each capture stream of a live graph holds a device stream id on real
hardware; npusim does not model stream ids of capture streams, so this budget is an estimate."""




def resolve_profile(name: str | Profile | None) -> Profile:
    """A profile by name, alias or itself; ``None``: the profile in force (the initialised one,
    else the configured name)."""
    if name is None:
        return RT.profile or get_profile(RT.profile_name)
    return get_profile(name)


@dataclass(frozen=True)
class Limit:
    """One resource limit: how many, what the failing call returns, and where the number is from."""
    name: str
    value: int
    unit: str
    code: int | None
    fails: str
    source: str
    simulated: bool = True

    def __str__(self) -> str:
        code = f"{self.code} at {self.fails}" if self.code else self.fails
        sim = "" if self.simulated else "; not enforced by npusim"
        return (f"{self.name:<21}{self.value:>7}  {self.unit:<27}{code}\n"
                f"{'':<30}[{self.source}{sim}]")


@dataclass(frozen=True)
class Budget:
    """The resource limits of one chip profile, with their sources (``Budget.for_profile``)."""
    profile: str
    user_streams: Limit
    physical_streams: Limit
    alloc_streams: Limit
    sqcq_pool: Limit
    sqcq_per_graph: Limit
    events: Limit
    notifies: Limit
    graph_streams_hw: Limit
    software_sq: bool
    cond_supported: bool
    capture_depth: int
    capture_reserve: int
    expand_stream_rsv_task_num: int
    cascade_at: int
    task_prefetch_count: int
    chip: Profile = field(repr=False, compare=False, default=None)
    """The profile itself (custom profiles have names the table does not know)."""

    @classmethod
    def for_profile(cls, name: str | Profile | None = None) -> "Budget":
        """The budget of a profile (name, alias or :class:`Profile`); ``None``: the profile in
        force (``npusim.configure`` / ``NPUSIM_PROFILE``)."""
        p = resolve_profile(name)
        depth = p.capture_sq_depth_swsq if p.software_sq else p.rtsq_depth
        hw = VLLM_ASCEND_GRAPH_STREAMS if p.software_sq else p.max_physical_streams
        return cls(
            profile=p.name,
            user_streams=Limit(
                "user streams", p.max_user_streams, "per device, default incl.", E_NO_STREAM,
                "aclrtCreateStream", "06_stream_management.md; Profile.max_user_streams"),
            physical_streams=Limit(
                "physical streams", p.max_physical_streams, "hardware streams", None,
                "-", "maxPhysicalStreamNum, dev_info_reg.cc", False),
            alloc_streams=Limit(
                "allocatable streams", p.max_streams, "stream ids", None,
                "-", "maxAllocStreamNum, dev_info_reg.cc", False),
            sqcq_pool=Limit(
                "SQ/CQ pool", p.sqcq_pool, "pairs per device", None,
                "full: idle graphs released, rebuilt at their next execute; "
                "207005 only if running graphs never finish",
                "RT_DEVICE_SQCQ_RES_MAX_NUM, device_sq_cq_pool.hpp:23; aclgraph.md §6.3"),
            sqcq_per_graph=Limit(
                "SQ/CQ per graph", p.sqcq_pool, "pairs, sub-models incl.", E_RESOURCE,
                "the graph's first aclmdlRIExecuteAsync",
                "BuildSqCq, capture_model.cc; aclgraph.md §6.3, §11"),
            events=Limit(
                "events", p.max_events, "per device (WithFlag kind)", E_NO_EVENT,
                "aclrtCreateEventWithFlag", "07_event_management.md; Profile.max_events"),
            notifies=Limit(
                "notifies", p.max_notifies, "per device", E_NO_NOTIFY, "aclrtCreateNotify",
                "08_notify_management.md; Profile.max_notifies"),
            graph_streams_hw=Limit(
                "graph streams (hw)", hw, "capture streams alive", E_RESOURCE,
                "aclmdlRICaptureBegin on hardware",
                "estimate: vllm-ascend update_aclgraph_sizes, 2048 streams - 248 reserved"
                if p.software_sq else "estimate: classic capture streams hold real SQs, "
                "maxPhysicalStreamNum", False),
            software_sq=p.software_sq,
            cond_supported=p.cond_supported and p.software_sq,
            capture_depth=depth,
            capture_reserve=p.capture_reserve,
            expand_stream_rsv_task_num=p.expand_stream_rsv_task_num,
            cascade_at=depth - p.capture_reserve - p.expand_stream_rsv_task_num,
            task_prefetch_count=p.task_prefetch_count,
            chip=p,
        )

    def limits(self) -> list[Limit]:
        return [self.user_streams, self.physical_streams, self.alloc_streams, self.sqcq_pool,
                self.sqcq_per_graph, self.events, self.notifies, self.graph_streams_hw]

    def __str__(self) -> str:
        mode = "SW-SQ" if self.software_sq else "classic"
        lines = [f"budget of {self.profile} ({mode} capture)"]
        lines += ["  " + str(x) for x in self.limits()]
        lines.append(f"  capture stream: depth {self.capture_depth}, cascades at "
                     f"{self.cascade_at} SQEs (depth - {self.capture_reserve} reserve - "
                     f"{self.expand_stream_rsv_task_num} expandStreamRsvTaskNum); "
                     f"task group: {self.task_prefetch_count} prefetch NOPs")
        lines.append("  each capture stream (origin, cascade, joined, added, sub-model) = one "
                     "SQ/CQ pair at the graph's first execution")
        return "\n".join(lines)


def usage(device_id: int = 0) -> dict:
    """What a live simulated device consumes now: user streams (default streams included), SQ/CQ
    pairs held by built graphs, live graphs and their capture streams, FLAG events, notifies."""
    dev = RT.devices.get(device_id)
    if dev is None:
        raise ValueError(f"device {device_id} is not open")
    live = [o for o in dev.slot_owner.values()      # events and notifies (not a Bridge between
            if not getattr(o, "destroyed", True)]   # devices: runtime/peer.py)
    return {
        "user_streams": sum(len(c.streams) for c in dev.contexts if not c.destroyed),
        "sqcq_pairs": dev.sqcq_used,
        "graphs": sum(1 for m in dev.models if not m.sub),
        "graphs_built": sum(1 for m in dev.models if m.built),
        "capture_streams": sum(len(m.streams) for m in dev.models),
        "events": sum(1 for o in live if isinstance(o, Event) and o.kind == FLAG),
        "notifies": sum(1 for o in live if isinstance(o, Notify)),
    }
