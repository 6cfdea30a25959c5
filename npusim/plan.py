"""Resource budgets and capture planning: which call of a capture plan fails, with which code, and
how many graph sizes fit — before running it (``npusim plan`` on the command line).

Three layers, each usable alone:

* :class:`Budget` — the limits of a chip profile as objects with their sources: user streams
  (207008 at ``aclrtCreateStream``), the SQ/CQ pool and its per-graph cap (207005 at the first
  ``aclmdlRIExecuteAsync``), events (207007), notifies (207009), the capture-stream geometry that
  decides cascades, and the hardware stream budget frameworks plan against (not simulated).
* :func:`graph_cost` — what one captured graph consumes: its capture streams (origin, cascades,
  joined and added streams, sub-models' streams), the SQ/CQ pairs its first execution takes, the
  SQEs written. The arithmetic is the simulator's own (``runtime/capture.py``): a capture stream
  cascades when its counted SQEs reach ``depth - 32 - expandStreamRsvTaskNum``; the STREAM_ACTIVE
  hop is not counted; EndCapture's internal tasks (notify per added stream, one reset per capture
  event, classic EndGraph) cascade only when the ring itself is full.
* :func:`plan` — the question vllm-ascend's ``update_aclgraph_sizes`` answers by hand: N capture
  sizes × L layers (piecewise: one graph per layer segment, ``L + 1`` per size), E extra streams
  per graph: the first failing call and its code, the sizes that fit, the sizes whose graphs stay
  resident in the SQ/CQ pool, the graphs rebuilt per replay pass when they do not.

:func:`simulate` runs the same plan in the simulator (the canonical program the planner models,
written out in the docstring) and returns the observed outcome, so every prediction can be
checked: ``npusim plan ... --simulate``, and ``tests/test_plan.py``.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field

from . import errors as ERR
from .profiles import Profile, get_profile

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


def _profile(name: str | Profile | None) -> Profile:
    if name is None:
        from .runtime.runtime import RT
        return RT.profile or get_profile(RT.profile_name)
    return get_profile(name)


# ---- budgets ----
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
        p = _profile(name)
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
    from .runtime.event import FLAG, Event, Notify
    from .runtime.runtime import RT
    dev = RT.devices.get(device_id)
    if dev is None:
        raise ValueError(f"device {device_id} is not open")
    live = [o for o in dev.slot_owner.values() if not getattr(o, "destroyed", False)]
    return {
        "user_streams": sum(len(c.streams) for c in dev.contexts if not c.destroyed),
        "sqcq_pairs": dev.sqcq_used,
        "graphs": sum(1 for m in dev.models if not m.sub),
        "graphs_built": sum(1 for m in dev.models if m.built),
        "capture_streams": sum(len(m.streams) for m in dev.models),
        "events": sum(1 for o in live if isinstance(o, Event) and o.kind == FLAG),
        "notifies": sum(1 for o in live if isinstance(o, Notify)),
    }


# ---- the cost of one graph ----
class _VModel:
    """The capture-stream arithmetic of ``runtime/capture.py`` without SQEs: per stream
    [counted SQEs (captureSqeNum), rows written (tail)]."""

    def __init__(self, b: Budget):
        self.depth, self.cat = b.capture_depth, b.cascade_at
        self.streams = self.cascades = self.sqes = self.events = 0

    def new(self) -> list:
        self.streams += 1
        return [0, 0]

    def cascade(self, vs: list) -> list:            # cascade_from: STREAM_ACTIVE, not counted
        vs[1] += 1
        self.sqes += 1
        self.cascades += 1
        return self.new()

    def tasks(self, vs: list, n: int, sqe: int = 1) -> list:
        """``n`` captured tasks of ``sqe`` SQEs (rows) each (capture.append / append_task)."""
        while n > 0:
            if vs[0] >= self.cat:
                vs = self.cascade(vs)
            k = 1 if sqe != 1 else min(n, max(self.cat - vs[0], 1))
            vs[0] += k * sqe
            vs[1] += k * sqe
            self.sqes += k * sqe
            n -= k
        return vs

    def internal(self, vs: list) -> list:           # append_internal: only a full ring cascades
        if vs[1] + 2 > self.depth:
            vs = self.cascade(vs)
        vs[0] += 1
        vs[1] += 1
        self.sqes += 1
        return vs


@dataclass
class ModelCost:
    """One model of a graph (the root or a sub-model)."""
    name: str
    streams: int
    cascades: int
    sqes: int
    capture_events: int


@dataclass
class GraphCost:
    """What one captured graph consumes (``graph_cost``)."""
    profile: str
    capture_streams: int
    """All capture streams of the graph (root and sub-models) once it has executed."""
    sqcq_pairs: int
    """SQ/CQ pairs its first execution takes from the pool (and the count the 1024 cap checks)."""
    sqcq_limit: int
    cascades: int
    sqes: int
    user_streams: int
    """User streams that take part: the capturing stream, joined and added streams, and one
    stream that captures the sub-models."""
    models: list[ModelCost] = field(default_factory=list)
    code: int = 0
    fails: str = ""

    @property
    def fits(self) -> bool:
        return not self.code

    def __str__(self) -> str:
        s = (f"{self.capture_streams} capture streams ({self.cascades} cascades), "
             f"{self.sqcq_pairs} SQ/CQ pairs of {self.sqcq_limit}, {self.sqes} SQEs, "
             f"{self.user_streams} user stream{'s' if self.user_streams != 1 else ''}")
        return s + (f"; fails: {self.code} at {self.fails}" if self.code else "")


def _spec(tasks) -> list[int]:
    return [int(tasks)] if isinstance(tasks, int) else [int(t) for t in tasks]


def _capture(vm: _VModel, b: Budget, spec: list[int], rounds: int = 1, added: int = 0,
             added_tasks: int = 0, task_groups: int = 0, cond_sqes: list[int] = ()):
    """The canonical capture of one model (see :func:`simulate`); returns (origin, added)."""
    o = vm.new()
    o = vm.tasks(o, task_groups * b.task_prefetch_count)
    sides = [vm.new() for _ in spec[1:]]                   # the side streams join
    o = vm.tasks(o, len(sides))                            # one fork record per side
    sides = [vm.tasks(s, 1) for s in sides]                # ... and its wait
    o = vm.tasks(o, spec[0])
    sides = [vm.tasks(s, n) for s, n in zip(sides, spec[1:])]
    sides = [vm.tasks(s, 1 + 2 * (rounds - 1)) for s in sides]   # join record (+ more rounds)
    o = vm.tasks(o, len(sides) * (1 + 2 * (rounds - 1)))   # join waits, more rounds
    vm.events += 2 * rounds * len(sides)
    adds = [vm.tasks(vm.new(), added_tasks) for _ in range(added)]
    for k in cond_sqes:
        o = vm.tasks(o, 1, sqe=k)
    return o, adds


def _end_capture(vm: _VModel, b: Budget, o, adds):
    """EndCapture's internal tasks: added-stream notifies, event resets, classic EndGraph."""
    for i, a in enumerate(adds):
        adds[i] = vm.internal(a)
        o = vm.internal(o)
    for _ in range(vm.events):
        o = vm.internal(o)
    if not b.software_sq:
        o = vm.internal(o)
    return o


def graph_cost(tasks_per_stream: list[int] | int, profile: str | Profile | None = None,
               joined_streams: int = 0, added_streams: int = 0, sub_models=(), *,
               join_rounds: int = 1, added_tasks: int = 0, task_groups: int = 0,
               cond: str = "if") -> GraphCost:
    """SQ/CQ pairs and capture streams one graph needs, with the simulator's exact arithmetic.

    ``tasks_per_stream``: SQEs captured on the capturing stream (an int), or a list: the capturing
    stream first, then one entry per joined side stream (forked from it through an event and
    joined back). ``joined_streams`` adds that many more side streams with no work of their own.
    Fork and join SQEs are added here (per side and round: a record and a wait on each stream,
    two capture events, so two event resets at EndCapture); ``join_rounds`` forks and joins every
    side that many times (a full graph does it once per layer). ``added_streams`` streams join with
    ``rtStreamAddToModel`` and capture ``added_tasks`` each. ``sub_models``: an int (that many
    one-task sub-models) or a list of specs like ``tasks_per_stream``, one per cond sub-model,
    each the branch of its own IF task (``cond="if"``, 2 SQEs on the capturing stream) or WHILE
    task (``"while"``, 3 SQEs), or all the branches of one SWITCH task (``"switch"``, 2 SQEs).
    ``task_groups``: task groups opened on the capturing stream (``task_prefetch_count`` NOPs
    each; the tasks inside the groups are part of ``tasks_per_stream``). The canonical order is
    the one of :func:`simulate`: prefetch NOPs, forks, work, joins, added streams, cond tasks.
    """
    b = Budget.for_profile(profile)
    spec = _spec(tasks_per_stream) + [0] * int(joined_streams)
    subs = [[1]] * sub_models if isinstance(sub_models, int) else [_spec(s) for s in sub_models]
    k = {"if": 2, "switch": 2, "while": 3}[cond]
    cond_sqes = ([k] if subs else []) if cond == "switch" else [k] * len(subs)
    root = _VModel(b)
    o, adds = _capture(root, b, spec, max(1, join_rounds), added_streams, added_tasks,
                       task_groups, cond_sqes)
    sub_vms = []
    for s in subs:
        vm = _VModel(b)
        so, _ = _capture(vm, b, s)
        sub_vms.append((vm, _end_capture(vm, b, so, [])))
    o = _end_capture(root, b, o, adds)
    pairs = root.streams + sum(vm.streams for vm, _ in sub_vms)   # counted before EndGraph
    if b.software_sq and pairs <= b.sqcq_per_graph.value:   # EndGraph at the first execution
        root.internal(o)
        for vm, so in sub_vms:
            vm.internal(so)
    models = [ModelCost("root", root.streams, root.cascades, root.sqes, root.events)]
    models += [ModelCost(f"sub-model {i}", vm.streams, vm.cascades, vm.sqes, vm.events)
               for i, (vm, _) in enumerate(sub_vms)]
    cost = GraphCost(
        profile=b.profile, capture_streams=sum(m.streams for m in models), sqcq_pairs=pairs,
        sqcq_limit=b.sqcq_per_graph.value, cascades=sum(m.cascades for m in models),
        sqes=sum(m.sqes for m in models),
        user_streams=len(spec) + added_streams + (1 if subs else 0), models=models)
    if subs and not b.cond_supported:
        cost.code, cost.fails = E_FEATURE, "aclmdlRICondHandleCreate"
    elif pairs > b.sqcq_per_graph.value:
        cost.code, cost.fails = E_RESOURCE, "aclmdlRIExecuteAsync (first execution)"
    return cost


# ---- plans ----
@dataclass
class Failure:
    """The first call of a plan that fails."""
    call: str
    code: int
    phase: str                 # "setup", "capture" or "replay"
    size: int | None = None    # the capture size being captured / replayed
    graph: int | None = None   # the graph (layer segment) of that size, 0-based
    replay_pass: int | None = None
    why: str = ""

    def key(self) -> tuple:
        return (self.call, self.code, self.phase, self.size, self.graph, self.replay_pass)

    def __str__(self) -> str:
        where = "" if self.size is None else f" (size {self.size}, graph {self.graph}" + (
            f", pass {self.replay_pass})" if self.replay_pass is not None else ")")
        return f"{self.call} -> {self.code} {ERR.name_of(self.code)}{where}" + (
            f": {self.why}" if self.why else "")


@dataclass
class PlanRow:
    size: int
    graphs: int
    capture_streams: int
    sqcq_pairs: int
    pairs_total: int
    user_streams: int
    resident: bool
    hw_ok: bool
    outcome: str


@dataclass
class Plan:
    """A capture plan's prediction (``plan``); ``report()`` renders it."""
    budget: Budget
    sizes: list[int]
    layers: int
    tasks_per_layer: int
    extra_streams: int
    piecewise: bool
    fresh_streams: bool
    side_tasks: int
    sub_models: int
    task_groups: int
    external_wait: bool
    passes: int
    graphs_per_size: int
    cost: GraphCost
    rows: list[PlanRow]
    failure: Failure | None
    fit_sizes: int
    """Sizes (in the order given) that capture and replay with no failing call."""
    resident_sizes: int
    """Sizes whose graphs all stay built together in the SQ/CQ pool (no rebuild at replay)."""
    hw_sizes: int
    """Estimate for real hardware: sizes within the graph stream budget (not simulated)."""
    vllm_sizes: int
    """vllm-ascend's formula: floor(1800 / graphs per size / (1 + extra streams))."""
    builds: list[int]
    """Graph builds (first executions and rebuilds) per replay pass."""
    build_pairs: list[int]
    """SQ/CQ pairs taken from the pool per replay pass (host cost of the builds)."""
    user_streams: int

    def report(self) -> str:
        return _report(self)

    def __str__(self) -> str:
        return self.report()


def _graph_spec(piecewise: bool, layers: int, tasks_per_layer: int, extra: int,
                side_tasks: int, external_wait: bool = False):
    """(tasks per stream, join rounds) of every graph of a plan."""
    main = (tasks_per_layer if piecewise else layers * tasks_per_layer) + bool(external_wait)
    return [main] + [side_tasks] * extra, (1 if piecewise else max(1, layers))


def plan(graph_sizes, layers: int, tasks_per_layer: int, extra_streams_per_graph: int = 0,
         piecewise: bool = True, profile: str | Profile | None = None, *, side_tasks: int = 1,
         fresh_streams: bool = False, sub_models: int = 0, task_groups: int = 0,
         external_wait: bool = False, passes: int = 2) -> Plan:
    """Predict a capture plan: every size in ``graph_sizes`` is captured as ``layers + 1`` graphs
    (``piecewise``; else one full graph per size), each with ``tasks_per_layer`` tasks (a full
    graph: ``layers * tasks_per_layer``) on the capturing stream and ``extra_streams_per_graph``
    side streams joined through events with ``side_tasks`` tasks each; then every size's graphs
    are replayed back to back, ``passes`` times, the host synchronizing after each size.

    ``fresh_streams``: the side streams are created anew for every graph (and never destroyed)
    instead of once. ``sub_models``: one-task cond sub-models per graph (IF tasks).
    ``external_wait``: every graph starts with a wait on an external event that the host records
    (on another stream) only after launching all graphs of the size — e.g. an event ordering a
    parameter update before the replay — so a size's graphs must hold their SQ/CQ pairs at once:
    a size needing more than the pool deadlocks the recycling and the execution fails with 207005.
    The modelled program is written out in :func:`simulate`, which runs it.
    """
    b = Budget.for_profile(profile)
    sizes = [int(s) for s in graph_sizes]
    G = layers + 1 if piecewise else 1
    spec, rounds = _graph_spec(piecewise, layers, tasks_per_layer, extra_streams_per_graph,
                               side_tasks, external_wait)
    cost = graph_cost(spec, b.chip, sub_models=sub_models, join_rounds=rounds,
                      task_groups=task_groups)
    E = extra_streams_per_graph
    failure: Failure | None = None
    # setup: the default stream, the capturing stream, shared side streams, a branch stream
    base = 1 + 1 + (0 if fresh_streams else E) + (1 if sub_models else 0) + bool(external_wait)
    users = min(base, b.user_streams.value)
    if base > b.user_streams.value:
        failure = Failure("aclrtCreateStream", E_NO_STREAM, "setup",
                          why=f"{base} user streams needed, {b.user_streams.value} per device")
    # capture phase: sizes in order, graphs in order
    captured = 0                                   # sizes fully captured
    if failure is None:
        for size in sizes:
            for g in range(G):
                if fresh_streams and users + E > b.user_streams.value:
                    failure = Failure("aclrtCreateStream", E_NO_STREAM, "capture", size, g,
                                      why=f"side streams of every graph are new: "
                                          f"{users} of {b.user_streams.value} in use")
                    users = b.user_streams.value
                    break
                if fresh_streams:
                    users += E
                if cost.code == E_FEATURE:
                    failure = Failure(cost.fails, cost.code, "capture", size, g,
                                      why=f"{b.profile} has no cond tasks")
                    break
            if failure is not None:
                break
            captured += 1
    # replay phase
    builds, build_pairs, per_size, pairs_of = [], [], [], cost.sqcq_pairs
    replayed = captured
    if captured and cost.code == E_RESOURCE:
        failure = failure or Failure("aclmdlRIExecuteAsync", E_RESOURCE, "replay", sizes[0], 0,
                                     1, f"a graph needs {pairs_of} SQ/CQ pairs, at most "
                                        f"{b.sqcq_per_graph.value} per graph")
        replayed = 0
    elif captured:
        builds, build_pairs, per_size, stuck = _replay_accounting(
            captured, G, pairs_of, b.sqcq_pool.value, passes, external_wait)
        if stuck is not None:
            si, g, pas = stuck
            failure = failure or Failure(
                "aclmdlRIExecuteAsync", E_RESOURCE, "replay", sizes[si], g, pas,
                f"the {G} graphs of a size wait for an event recorded after all of them are "
                f"launched: they need {G * pairs_of} SQ/CQ pairs at once, the pool has "
                f"{b.sqcq_pool.value}")
            replayed = 0
    pool = b.sqcq_pool.value
    resident = min(captured if replayed else 0, pool // max(G * pairs_of, 1))

    def hw_ok(i: int) -> bool:      # sizes 0..i alive: their capture streams (+ user streams)
        need = (i + 1) * G * cost.capture_streams
        if not b.software_sq:
            need += base + (E * G * (i + 1) if fresh_streams else 0)
        return need <= b.graph_streams_hw.value
    hw_sizes = next((i for i in range(len(sizes)) if not hw_ok(i)), len(sizes))
    vllm = VLLM_ASCEND_GRAPH_STREAMS // G // (1 + E)
    rows, users_now = [], min(base, b.user_streams.value)
    for i, size in enumerate(sizes):
        if fresh_streams:
            users_now = min(users_now + E * G, b.user_streams.value)
        if i < replayed:
            n = per_size[i] if per_size else 0
            outcome = "ok" if not n else f"ok, {n} of {G} graphs rebuilt every pass"
        elif failure is not None and failure.size == size:
            outcome = f"{failure.code} at {failure.call}, graph {failure.graph}"
        elif failure is not None and failure.phase == "setup" and i == 0:
            outcome = f"{failure.code} at {failure.call} (setup)"
        else:
            outcome = "-"
        rows.append(PlanRow(size, G, G * cost.capture_streams, G * pairs_of,
                            (i + 1) * G * pairs_of, users_now, i < resident, hw_ok(i),
                            outcome))
    return Plan(b, sizes, layers, tasks_per_layer, E, piecewise, fresh_streams, side_tasks,
                sub_models, task_groups, external_wait, passes, G, cost, rows, failure,
                replayed, resident, hw_sizes, vllm, builds, build_pairs, users)


def _replay_accounting(n_sizes: int, G: int, pairs: int, pool: int, passes: int,
                       hold: bool = False):
    """The SQ/CQ pool over the replay passes, as ``api_mdl._build`` / ``_recycle`` do it: a graph
    not built takes its pairs at its execution; when the pool is short, idle graphs (all but the
    ones launched since the host's last synchronize) are released in creation order, then the
    host waits for the running ones in launch order. Graph i of size s has creation index
    s * G + i. With ``hold`` the running graphs cannot finish before the size's last launch, so
    waiting for them deadlocks (207005). Returns (builds per pass, pairs built per pass, builds
    per size in the last pass, (size index, graph, pass) of a deadlocked execution or None)."""
    built: dict[int, bool] = {}
    used = 0
    builds, bpairs = [], []
    per_size: list[int] = []
    for pas in range(1, passes + 1):
        nb = 0
        per_size = [0] * n_sizes
        for s in range(n_sizes):
            running: list[int] = []
            for g in range(G):
                m = s * G + g
                if not built.get(m):
                    if used + pairs > pool:
                        idle = [o for o in sorted(built) if built[o] and o not in running]
                        for o in idle:
                            built[o] = False
                            used -= pairs
                            if used + pairs <= pool:
                                break
                        if used + pairs > pool and hold:
                            return builds, bpairs, per_size, (s, g, pas)
                        while used + pairs > pool and running:
                            o = running.pop(0)
                            if built.get(o):
                                built[o] = False
                                used -= pairs
                    built[m] = True
                    used += pairs
                    nb += 1
                    per_size[s] += 1
                running.append(m)
        builds.append(nb)
        bpairs.append(nb * pairs)
    return builds, bpairs, (per_size if passes > 1 else [0] * n_sizes), None


def _report(p: Plan) -> str:
    b, c = p.budget, p.cost
    out = []
    layers = f"{p.layers} layer{'s' if p.layers != 1 else ''}"
    kind = (f"piecewise: {layers} -> {p.graphs_per_size} graphs per size"
            if p.piecewise else f"full graphs: {layers} in one graph per size")
    out.append(f"npusim plan on {b.profile} ({'SW-SQ' if b.software_sq else 'classic'} capture)"
               f" -- {len(p.sizes)} sizes, {kind}")
    out.append(f"each graph: {p.tasks_per_layer if p.piecewise else p.layers * p.tasks_per_layer}"
               f" tasks + {p.extra_streams} extra streams ({p.side_tasks} "
               f"task{'s' if p.side_tasks != 1 else ''} each)"
               + (f", {p.sub_models} cond sub-models" if p.sub_models else "")
               + (f", {p.task_groups} task groups" if p.task_groups else "")
               + (", waits on an external event" if p.external_wait else "")
               + ("; side streams created per graph" if p.fresh_streams else ""))
    out.append(f"  -> {c}")
    out.append(f"budget: SQ/CQ pool {b.sqcq_pool.value} pairs (cap {b.sqcq_per_graph.value} per "
               f"graph), user streams {b.user_streams.value}, cascade at {b.cascade_at} SQEs per "
               f"capture stream")
    out.append("")
    hdr = ("size", "graphs", "capture streams", "SQ/CQ pairs", "pairs total", "in pool",
           "hw streams", "outcome in npusim")
    widths = (7, 7, 16, 12, 12, 8, 11, 0)
    out.append("".join(f"{h:>{w}}" if w else f"  {h}" for h, w in zip(hdr, widths)))
    for r in p.rows:
        cells = (r.size, r.graphs, r.capture_streams, r.sqcq_pairs, r.pairs_total,
                 "yes" if r.resident else "no", "ok" if r.hw_ok else "over", r.outcome)
        out.append("".join(f"{str(v):>{w}}" if w else f"  {v}" for v, w in zip(cells, widths)))
    out.append("")
    if p.failure is not None:
        out.append(f"first failing call: {p.failure}")
    else:
        out.append("first failing call: none")
    out.append(f"sizes that fit (no failing call): {p.fit_sizes} of {len(p.sizes)}")
    out.append(f"sizes whose graphs fit the SQ/CQ pool together: {p.resident_sizes} (with at most "
               f"that many sizes no graph is ever rebuilt)")
    if p.builds:
        t = b.chip.timing.host_model_first_execute_per_stream_ns
        steady = p.builds[-1]
        out.append(f"graph builds per replay pass: {', '.join(map(str, p.builds))}"
                   + (f"  (steady state: {steady} graphs rebuilt per pass, "
                      f"+{p.build_pairs[-1] * t / 1e3:,.0f} us of host time)" if steady else ""))
        if steady:
            out.append("  (pool recycling as npusim and the runtime do it: idle graphs released in "
                       "creation order, then the host waits for running ones; assumes the device "
                       "is behind the host within a size's replay)")
    out.append(f"hardware estimate (not simulated): {p.hw_sizes} sizes within "
               f"{b.graph_streams_hw.value} graph streams ({b.graph_streams_hw.source}); "
               f"vllm-ascend's formula floor(1800/{p.graphs_per_size}/{1 + p.extra_streams}) "
               f"= {p.vllm_sizes}")
    return "\n".join(out)


# ---- the plan, run in the simulator ----
@dataclass
class SimResult:
    """What :func:`simulate` observed."""
    failure: Failure | None
    fit_sizes: int
    builds: list[int]
    capture_streams: set
    """Capture streams per graph after its first execution (graphs that executed)."""
    sqcq_pairs: set
    """Capture streams per graph before its first execution and the pairs its builds took."""
    pool_used: int
    user_streams: int

    def __str__(self) -> str:
        return (f"simulated: first failing call {self.failure or 'none'}; sizes that fit "
                f"{self.fit_sizes}; builds per pass {self.builds}; capture streams per graph "
                f"{sorted(self.capture_streams)}; SQ/CQ pairs per graph {sorted(self.sqcq_pairs)}")


def simulate(graph_sizes, layers: int, tasks_per_layer: int, extra_streams_per_graph: int = 0,
             piecewise: bool = True, profile: str | Profile | None = None, *, side_tasks: int = 1,
             fresh_streams: bool = False, sub_models: int = 0, task_groups: int = 0,
             external_wait: bool = False, passes: int = 2,
             kernel_ns: int | None = None) -> SimResult:
    """Run the plan :func:`plan` models in a fresh simulator and report what happened. The
    program (stopping at the first failing call, then replaying what was captured):

    1. device 0; the capturing stream; the side streams (once, unless ``fresh_streams``), a
       stream for sub-model capture, a stream that records the external event; two events per
       side stream (fork, join), the external event (``ACL_EVENT_EXTERNAL``).
    2. for each size, for each of its graphs: (new side streams) ``aclmdlRICaptureBegin``; (the
       wait on the external event); the task groups (begin, one kernel, end); per side stream:
       record fork on the capturing stream, wait on the side; the kernels; the side kernels; per
       side: record join, wait on the capturing stream (a full graph repeats fork/join once per
       layer); one IF cond task per sub-model with one kernel in its branch;
       ``aclmdlRICaptureEnd``.
    3. ``passes`` times: for each captured size, ``aclmdlRIExecuteAsync`` of its graphs back to
       back on the capturing stream, (the external event recorded,) ``aclrtSynchronizeStream``.

    Kernels are ``EasyOPf`` lasting ``kernel_ns`` each (default: long enough that one graph
    outlasts the host launching all graphs of a size, builds included), so the device is behind
    the host (the case graphs exist for) and which graphs are still running at each execution
    is the one the planner assumes. It runs in a fresh simulator: ``npusim.reset()`` before and
    after (devices, handles, options, injections gone; the configured profile name is kept).
    """
    import npusim
    from .runtime.runtime import RT
    sizes = [int(s) for s in graph_sizes]
    G = layers + 1 if piecewise else 1
    spec, rounds = _graph_spec(piecewise, layers, tasks_per_layer, extra_streams_per_graph,
                               side_tasks, external_wait)
    E = extra_streams_per_graph
    if kernel_ns is None:
        t = _profile(profile).timing
        pairs = graph_cost(spec, profile, sub_models=sub_models, join_rounds=rounds,
                           task_groups=task_groups).sqcq_pairs
        per_graph = t.host_model_execute_ns + pairs * t.host_model_first_execute_per_stream_ns
        kernel_ns = max(1_000_000, -(-4 * G * per_graph // max(1, spec[0] - external_wait)))
    saved = RT.profile_name
    npusim.reset()
    npusim.configure(profile=profile if profile is not None else saved)
    state = {"failure": None}
    graphs: list[list] = []

    def call(name, fn, phase, size=None, g=None, pas=None):
        try:
            return fn()
        except npusim.AclError as e:
            if state["failure"] is None:
                state["failure"] = Failure(name, e.code, phase, size, g, pas)
            raise

    try:
        dev = npusim.Device()
        x = dev.malloc(64)
        main = call("aclrtCreateStream", dev.stream, "setup")
        sides = [] if fresh_streams else \
            [call("aclrtCreateStream", dev.stream, "setup") for _ in range(E)]
        branch = call("aclrtCreateStream", dev.stream, "setup") if sub_models else None
        trigger = call("aclrtCreateStream", dev.stream, "setup") if external_wait else None
        evs = [(dev.event(), dev.event()) for _ in range(E)]
        ext = dev.event(npusim.acl.ACL_EVENT_EXTERNAL, kind="flag") if external_wait else None

        def k(s):
            s.launch("EasyOPf", 1, args=(x,), duration_ns=kernel_ns)

        for size in sizes:
            row = []
            for g in range(G):
                if fresh_streams:
                    sides = [call("aclrtCreateStream", dev.stream, "capture", size, g)
                             for _ in range(E)]
                gr = npusim.graph(main)
                call("aclmdlRICaptureBegin", gr.capture_begin, "capture", size, g)
                try:
                    if external_wait:
                        main.wait(ext)
                    for _ in range(task_groups):
                        npusim.graph_task_group_begin(main)
                        k(main)
                        npusim.graph_task_group_end(main)
                    for side, (e1, _) in zip(sides, evs):
                        main.record(e1)
                        side.wait(e1)
                    for _ in range(spec[0] - task_groups - bool(external_wait)):
                        k(main)
                    for side in sides:
                        for _ in range(side_tasks):
                            k(side)
                    for r in range(rounds):
                        for side, (e1, e2) in zip(sides, evs):
                            if r:
                                main.record(e1)
                                side.wait(e1)
                            side.record(e2)
                            main.wait(e2)
                    for _ in range(sub_models):
                        cnd = call("aclmdlRICondHandleCreate", gr.condition, "capture", size, g)
                        with gr.cond_if(cnd, branch):
                            k(branch)
                except npusim.AclError:
                    npusim.acl.mdl.ri_capture_end(main.handle)
                    raise
                call("aclmdlRICaptureEnd", gr.capture_end, "capture", size, g)
                row.append(gr)
            graphs.append(row)
    except npusim.AclError:
        pass
    builds: list[int] = []
    fit = 0
    cstreams = set()
    pairs = {sum(len(x.streams) for x in gr._model.all_models()) for row in graphs for gr in row}
    try:
        if graphs:
            fit = len(graphs)
            for pas in range(1, passes + 1):
                nb = 0
                for si, row in enumerate(graphs):
                    for g, gr in enumerate(row):
                        m = gr._model
                        was = m.built
                        call("aclmdlRIExecuteAsync", gr.replay, "replay", sizes[si], g, pas)
                        if not was:
                            nb += 1
                            pairs.add(m.sqcq)      # what the build took from the pool
                        cstreams.add(sum(len(x.streams) for x in m.all_models()))
                    if external_wait:
                        trigger.record(ext)
                    call("aclrtSynchronizeStream", main.synchronize, "replay", sizes[si], None,
                         pas)
                builds.append(nb)
    except npusim.AclError:
        fit = 0
    dev_ = RT.devices.get(0)
    res = SimResult(state["failure"], fit, builds, cstreams, pairs,
                    dev_.sqcq_used if dev_ else 0,
                    sum(len(c.streams) for c in dev_.contexts) if dev_ else 0)
    npusim.reset()
    RT.profile_name = saved
    return res


def compare(p: Plan, s: SimResult) -> list[str]:
    """Differences between a prediction and a simulation of the same plan (empty: they agree)."""
    diffs = []
    pf = p.failure.key() if p.failure else None
    sf = s.failure.key() if s.failure else None
    if pf != sf:
        diffs.append(f"first failing call: predicted {p.failure}, simulated {s.failure}")
    if p.fit_sizes != s.fit_sizes:
        diffs.append(f"sizes that fit: predicted {p.fit_sizes}, simulated {s.fit_sizes}")
    if s.builds and p.builds != s.builds:
        diffs.append(f"builds per pass: predicted {p.builds}, simulated {s.builds}")
    if s.capture_streams and s.capture_streams != {p.cost.capture_streams}:
        diffs.append(f"capture streams per graph: predicted {p.cost.capture_streams}, "
                     f"simulated {sorted(s.capture_streams)}")
    if s.sqcq_pairs and s.sqcq_pairs != {p.cost.sqcq_pairs}:
        diffs.append(f"SQ/CQ pairs per graph: predicted {p.cost.sqcq_pairs}, "
                     f"simulated {sorted(s.sqcq_pairs)}")
    return diffs


# ---- the `npusim plan` command ----
HELP = ("predict which capture/execute call of a capture plan fails (207005, 207008 ...) and how "
        "many graph sizes fit")


def parse_sizes(text: str) -> list[int]:
    """Capture sizes: ``"1,2,4,8"``; ``"1,2,4,...,512"`` (the run before ``...`` continued up to
    the number after it: geometric when the last three numbers are, else arithmetic with the last
    step; ``"8,16,...,64"`` is arithmetic); ``"8-64:8"`` (from-to:step)."""
    text = text.replace(" ", "")
    if ":" in text and "-" in text and "," not in text:
        rng, step = text.split(":")
        lo, hi = rng.split("-")
        return list(range(int(lo), int(hi) + 1, int(step)))
    parts = [v for v in text.split(",") if v]
    if "..." not in parts:
        return [int(v) for v in parts]
    i = parts.index("...")
    head, tail = [int(v) for v in parts[:i]], [int(v) for v in parts[i + 1:]]
    if len(head) < 2 or len(tail) != 1:
        raise ValueError("'...' needs two or more numbers before it and one after: 1,2,4,...,512")
    a, c, last = head[-2], head[-1], tail[0]
    geometric = len(head) >= 3 and a > 0 and c % a == 0 and c // a > 1 \
        and head[-3] * (c // a) == a
    if not geometric and c <= a:
        raise ValueError(f"{text!r}: the run before '...' must increase")
    out = list(head)
    while True:
        v = out[-1] * (c // a) if geometric else out[-1] + (c - a)
        if v > last:
            break
        out.append(v)
    return out + ([last] if last > out[-1] else [])


def _arguments(p: argparse.ArgumentParser) -> None:
    from .cli import _profile_name
    p.add_argument("--profile", type=_profile_name, default=None, metavar="NAME",
                   help="chip profile or alias (default: $NPUSIM_PROFILE or Ascend910B)")
    p.add_argument("--sizes", required=True, type=parse_sizes, metavar="LIST",
                   help="capture sizes: 1,2,4,...,512 or 1,2,4,8,16 or 8-256:8")
    p.add_argument("--layers", type=int, required=True, help="hidden layers of the model")
    p.add_argument("--tasks-per-layer", type=int, default=30, metavar="N",
                   help="tasks captured per layer segment (default 30)")
    p.add_argument("--extra-streams", type=int, default=0, metavar="E",
                   help="side streams joined into every graph (comm domains, extra streams)")
    p.add_argument("--side-tasks", type=int, default=1, metavar="N",
                   help="tasks per side stream per graph (default 1)")
    p.add_argument("--full", action="store_true",
                   help="one full graph per size instead of layers + 1 piecewise graphs")
    p.add_argument("--fresh-streams", action="store_true",
                   help="create the side streams anew for every graph (never destroyed)")
    p.add_argument("--sub-models", type=int, default=0, metavar="N",
                   help="one-task cond sub-models per graph")
    p.add_argument("--task-groups", type=int, default=0, metavar="N",
                   help="task groups per graph (each adds the chip's prefetch NOPs)")
    p.add_argument("--external-wait", action="store_true",
                   help="every graph waits on an event the host records after launching all "
                        "graphs of the size (they must hold their SQ/CQ pairs at once)")
    p.add_argument("--passes", type=int, default=2, help="replay passes (default 2)")
    p.add_argument("--budget", action="store_true", help="also print the profile's budget")
    p.add_argument("--simulate", action="store_true",
                   help="also run the plan in the simulator and compare (small plans)")


def run(args) -> int:
    kw = dict(piecewise=not args.full, profile=args.profile, side_tasks=args.side_tasks,
              fresh_streams=args.fresh_streams, sub_models=args.sub_models,
              task_groups=args.task_groups, external_wait=args.external_wait,
              passes=args.passes)
    if args.task_groups > args.tasks_per_layer * (1 if not args.full else args.layers):
        print("npusim plan: --task-groups cannot exceed the tasks per graph", file=sys.stderr)
        return 2
    p = plan(args.sizes, args.layers, args.tasks_per_layer, args.extra_streams, **kw)
    if args.budget:
        print(p.budget)
        print()
    print(p.report())
    if args.simulate:
        s = simulate(args.sizes, args.layers, args.tasks_per_layer, args.extra_streams, **kw)
        print()
        print(s)
        diffs = compare(p, s)
        print("prediction and simulation agree" if not diffs else
              "DIFFERENCES:\n  " + "\n  ".join(diffs))
        return 1 if diffs else 0
    return 0


def register() -> None:
    """Register ``plan`` in :data:`npusim.cli.COMMANDS`."""
    from .cli import COMMANDS, command
    if "plan" not in COMMANDS:
        command("plan", HELP, _arguments)(run)


__all__ = ["Budget", "Limit", "usage", "graph_cost", "GraphCost", "ModelCost", "plan", "Plan",
           "PlanRow", "Failure", "simulate", "SimResult", "compare", "parse_sizes",
           "VLLM_ASCEND_GRAPH_STREAMS"]
