"""The cost of one captured graph (:func:`graph_cost`): its capture streams (origin, cascades,
joined and added streams, sub-models' streams), the SQ/CQ pairs its first execution takes, the
SQEs written. The arithmetic is the simulator's own (``runtime/capture.py``): a capture stream
cascades when its counted SQEs reach ``depth - 32 - expandStreamRsvTaskNum``; the STREAM_ACTIVE
hop is not counted; EndCapture's internal tasks (notify per added stream, one reset per capture
event, classic EndGraph) cascade only when the ring itself is full. Part of :mod:`npusim.plan`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..profiles import Profile
from .budget import E_FEATURE, E_RESOURCE, Budget

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
             added_tasks: int = 0, task_groups: int = 0, cond_sqes: list[int] = (),
             hccl_main: int = 0, hccl_sides=(), hccl_events: int = 0):
    """The canonical capture of one model (see :func:`simulate`); returns (origin, added).
    HCCL's tasks (``hccl_main`` on the capturing stream, ``hccl_sides`` on its side streams,
    each joined by its first fork) are all one-SQE tasks, so where they fall among the
    capturing stream's tasks does not change the count."""
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
    o = vm.tasks(o, hccl_main)                             # HCCL's collectives
    for n in hccl_sides:
        vm.tasks(vm.new(), n)
    vm.events += hccl_events
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
               cond: str = "if", hccl=None) -> GraphCost:
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
    ``hccl``: an :class:`~npusim.plan.hccl.HcclLoad` (the collectives of one rank in the graph,
    on the capturing stream): its side streams are capture streams of the graph too.
    """
    b = Budget.for_profile(profile)
    spec = _spec(tasks_per_stream) + [0] * int(joined_streams)
    subs = [[1]] * sub_models if isinstance(sub_models, int) else [_spec(s) for s in sub_models]
    k = {"if": 2, "switch": 2, "while": 3}[cond]
    cond_sqes = ([k] if subs else []) if cond == "switch" else [k] * len(subs)
    root = _VModel(b)
    h = hccl
    o, adds = _capture(root, b, spec, max(1, join_rounds), added_streams, added_tasks,
                       task_groups, cond_sqes, h.main_sqes if h else 0,
                       h.side_sqes if h else (), h.capture_events if h else 0)
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
        user_streams=len(spec) + added_streams + (1 if subs else 0)
        + (h.side_streams if h else 0), models=models)
    if subs and not b.cond_supported:
        cost.code, cost.fails = E_FEATURE, "aclmdlRICondHandleCreate"
    elif pairs > b.sqcq_per_graph.value:
        cost.code, cost.fails = E_RESOURCE, "aclmdlRIExecuteAsync (first execution)"
    return cost
