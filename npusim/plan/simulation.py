"""The plan run in the simulator (:func:`simulate`, the canonical program the planner models,
written out in its docstring) and :func:`compare`, the differences between a prediction and a
simulation of the same plan. Part of :mod:`npusim.plan`.
"""
from __future__ import annotations

from dataclasses import dataclass

import npusim

from ..profiles import Profile
from ..runtime.runtime import RT
from .budget import resolve_profile
from .cost import graph_cost
from .predict import Failure, Plan, graph_spec

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
    sizes = [int(s) for s in graph_sizes]
    G = layers + 1 if piecewise else 1
    spec, rounds = graph_spec(piecewise, layers, tasks_per_layer, extra_streams_per_graph,
                               side_tasks, external_wait)
    E = extra_streams_per_graph
    if kernel_ns is None:
        t = resolve_profile(profile).timing
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
    npusim.configure(profile=saved)       # the profile name configured before the run
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
