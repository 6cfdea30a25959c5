"""The prediction of a capture plan (:func:`plan`): N capture sizes x L layers (piecewise: one
graph per layer segment, ``L + 1`` per size), E extra streams per graph -- the first failing call
and its code, the sizes that fit, the sizes whose graphs stay resident in the SQ/CQ pool, the
graphs rebuilt per replay pass when they do not; and :func:`parse_sizes` for size lists written
as text. Part of :mod:`npusim.plan`.
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import errors as ERR
from ..profiles import Profile
from .budget import E_FEATURE, E_NO_STREAM, E_RESOURCE, VLLM_ASCEND_GRAPH_STREAMS, Budget
from .cost import GraphCost, graph_cost
from .hccl import HcclLoad, hccl_load

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
    tp: int = 1
    """Ranks (``--tp``): each runs the plan on its own device, one communicator over them."""
    collectives_per_layer: int = 0
    hccl: HcclLoad | None = None
    """What HCCL adds to each graph on the rank that needs the most SQ/CQ pairs."""
    rank_costs: list = None
    """The graph cost on each rank (ranks differ only for rooted or multi-server schedules)."""

    def report(self) -> str:
        return _report(self)

    def __str__(self) -> str:
        return self.report()


def graph_spec(piecewise: bool, layers: int, tasks_per_layer: int, extra: int,
                side_tasks: int, external_wait: bool = False):
    """(tasks per stream, join rounds) of every graph of a plan."""
    main = (tasks_per_layer if piecewise else layers * tasks_per_layer) + bool(external_wait)
    return [main] + [side_tasks] * extra, (1 if piecewise else max(1, layers))


def collectives_per_graph(piecewise: bool, layers: int, per_layer: int) -> int:
    """Collectives captured into every graph: a layer segment's, or all layers' (full)."""
    return per_layer if piecewise else layers * per_layer


def hccl_loads(tp: int, piecewise: bool, layers: int, collectives_per_layer: int,
               collective: str, collective_bytes: int, ranks_per_server: int) -> list:
    """Per rank, what HCCL adds to each graph (empty list for ``tp`` 1: no collectives)."""
    if tp <= 1 or collectives_per_layer <= 0:
        return []
    n = collectives_per_graph(piecewise, layers, collectives_per_layer)
    return [hccl_load(tp, collective, collective_bytes, n, r, ranks_per_server)
            for r in range(tp)]


def plan(graph_sizes, layers: int, tasks_per_layer: int, extra_streams_per_graph: int = 0,
         piecewise: bool = True, profile: str | Profile | None = None, *, side_tasks: int = 1,
         fresh_streams: bool = False, sub_models: int = 0, task_groups: int = 0,
         external_wait: bool = False, passes: int = 2, tp: int = 1,
         collectives_per_layer: int = 2, collective: str = "all_reduce",
         collective_bytes: int = 4096, ranks_per_server: int = 8) -> Plan:
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

    ``tp`` > 1: the plan runs on ``tp`` devices, one communicator over them, and every layer has
    ``collectives_per_layer`` collectives ``collective`` (``hccl.KINDS``) of ``collective_bytes``
    per rank on the capturing stream (``ranks_per_server`` ranks to a server decide the
    algorithm): HCCL's side streams, SQEs and capture events are part of every graph's cost
    (:func:`~npusim.plan.hccl.hccl_load`), and its side streams are user streams of each rank
    from the first capture on. The prediction is the rank that needs the most SQ/CQ pairs.
    The modelled program is written out in :func:`simulate`, which runs it.
    """
    b = Budget.for_profile(profile)
    sizes = [int(s) for s in graph_sizes]
    G = layers + 1 if piecewise else 1
    spec, rounds = graph_spec(piecewise, layers, tasks_per_layer, extra_streams_per_graph,
                               side_tasks, external_wait)
    loads = hccl_loads(tp, piecewise, layers, collectives_per_layer, collective,
                       collective_bytes, ranks_per_server)
    costs = [graph_cost(spec, b.chip, sub_models=sub_models, join_rounds=rounds,
                        task_groups=task_groups, hccl=h) for h in loads or [None]]
    worst = max(range(len(costs)), key=lambda r: (costs[r].sqcq_pairs, -r))
    cost, load = costs[worst], (loads[worst] if loads else None)
    hccl_streams = load.side_streams if load else 0
    E = extra_streams_per_graph
    failure: Failure | None = None
    # setup: the default stream, the capturing stream, shared side streams, a branch stream
    base = 1 + 1 + (0 if fresh_streams else E) + (1 if sub_models else 0) + bool(external_wait)
    users = min(base, b.user_streams.value)
    if tp > b.chip.device_count:
        failure = Failure("aclrtSetDevice", ERR.ACL_ERROR_RT_INVALID_DEVICEID, "setup",
                          why=f"{tp} ranks, one per device: {b.profile} has "
                              f"{b.chip.device_count} devices")
    elif base > b.user_streams.value:
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
                if hccl_streams and captured == 0 and g == 0:
                    users += hccl_streams   # HCCL makes its side streams at its first collective
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
            need += base + hccl_streams + (E * G * (i + 1) if fresh_streams else 0)
        return need <= b.graph_streams_hw.value
    hw_sizes = next((i for i in range(len(sizes)) if not hw_ok(i)), len(sizes))
    comm_groups = 1 if load else 0   # vllm-ascend update_aclgraph_sizes, non-AIV expansion
    vllm = (VLLM_ASCEND_GRAPH_STREAMS - 40 * comm_groups) // G // (1 + E + 2 * comm_groups)
    rows, users_now = [], min(base, b.user_streams.value)
    for i, size in enumerate(sizes):
        if fresh_streams:
            users_now = min(users_now + E * G, b.user_streams.value)
        if i == 0:
            users_now = min(users_now + hccl_streams, b.user_streams.value)
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
                replayed, resident, hw_sizes, vllm, builds, build_pairs, users, tp,
                collectives_per_layer if load else 0, load, costs)


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
    if p.hccl is not None:
        h = p.hccl
        out.append(f"collectives: tp {p.tp} (one communicator), {p.collectives_per_layer} "
                   f"{h.kind} of {h.nbytes} bytes per layer -> {h.per_graph} per graph, "
                   f"{h.algorithm}")
        out.append(f"  {h}")
        ranks = sorted({(x.capture_streams, x.sqcq_pairs) for x in p.rank_costs})
        if len(ranks) > 1:
            out.append(f"  ranks differ (capture streams, pairs): {ranks}; the table is rank "
                       f"{h.rank}'s")
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
               + (f"vllm-ascend's formula floor(1800/{p.graphs_per_size}/{1 + p.extra_streams}) "
                  if p.hccl is None else
                  f"vllm-ascend's formula with 1 comm group floor((1800 - 40)/"
                  f"{p.graphs_per_size}/{1 + p.extra_streams + 2}) ")
               + f"= {p.vllm_sizes}")
    if p.hccl is not None:
        h = p.hccl
        total = len(p.sizes) * p.graphs_per_size * h.notifies
        out.append(f"HCCL notifies (npusim: one bridge slot per graph, peer and tag; not "
                   f"counted against the {b.notifies.value} notifies): {h.notifies} per graph, "
                   f"{total} for all graphs per rank; real HCCL reuses its link notifies in "
                   f"every graph")
    return "\n".join(out)



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
