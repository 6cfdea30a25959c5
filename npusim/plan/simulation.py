"""The plan run in the simulator (:func:`simulate`, the canonical program the planner models,
written out in its docstring) and :func:`compare`, the differences between a prediction and a
simulation of the same plan. Part of :mod:`npusim.plan`.
"""
from __future__ import annotations

import json
import os
import tempfile
import threading
from dataclasses import dataclass

import npusim

from .. import acl
from ..profiles import Profile
from ..runtime.runtime import RT
from .budget import resolve_profile
from .cost import graph_cost
from .hccl import buffers_of, count_of
from .predict import Failure, Plan, graph_spec, hccl_loads

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
    rank_user_streams: set = None
    """User streams (HCCL's side streams included) on each rank at the end."""

    def __str__(self) -> str:
        return (f"simulated: first failing call {self.failure or 'none'}; sizes that fit "
                f"{self.fit_sizes}; builds per pass {self.builds}; capture streams per graph "
                f"{sorted(self.capture_streams)}; SQ/CQ pairs per graph {sorted(self.sqcq_pairs)}")


def simulate(graph_sizes, layers: int, tasks_per_layer: int, extra_streams_per_graph: int = 0,
             piecewise: bool = True, profile: str | Profile | None = None, *, side_tasks: int = 1,
             fresh_streams: bool = False, sub_models: int = 0, task_groups: int = 0,
             external_wait: bool = False, passes: int = 2, tp: int = 1,
             collectives_per_layer: int = 2, collective: str = "all_reduce",
             collective_bytes: int = 4096, ranks_per_server: int = 8,
             kernel_ns: int | None = None) -> SimResult:
    """Run the plan :func:`plan` models in a fresh simulator and report what happened. The
    program (stopping at the first failing call, then replaying what was captured):

    1. devices 0..tp-1, each: the capturing stream; the side streams (once, unless
       ``fresh_streams``), a stream for sub-model capture, a stream that records the external
       event; two events per side stream (fork, join), the external event
       (``ACL_EVENT_EXTERNAL``). ``tp`` > 1: one communicator over the devices
       (``npusim.communicator``, ``HcclCommInitAll``) and per rank the buffers of the
       collective.
    2. for each size, for each of its graphs, for each rank: (new side streams)
       ``aclmdlRICaptureBegin``; (the wait on the external event); the task groups (begin, one
       kernel, end); per side stream: record fork on the capturing stream, wait on the side; the
       kernels, the graph's collectives among them on the capturing stream (``tp`` > 1: after
       each of the first ``c`` equal shares of the kernels, ``c`` the collectives per graph);
       the side kernels; per side: record join, wait on the capturing stream (a full graph
       repeats fork/join once per layer); one IF cond task per sub-model with one kernel in its
       branch; ``aclmdlRICaptureEnd``.
    3. ``passes`` times: for each captured size, per graph ``aclmdlRIExecuteAsync`` on every
       rank's capturing stream (so each rank's graphs run back to back, and the peers of a
       graph's collectives are all launched before the next graph), (the external event
       recorded,) ``aclrtSynchronizeStream`` on every rank.

    Kernels are ``EasyOPf`` lasting ``kernel_ns`` each (default: long enough that one graph
    outlasts the host launching all graphs of a size on all ranks, builds included), so the
    device is behind the host (the case graphs exist for) and which graphs are still running
    at each execution is the one the planner assumes. It runs in a fresh simulator:
    ``npusim.reset()`` before and after (devices, handles, options, injections gone; the
    configured profile name is kept).
    """
    sizes = [int(s) for s in graph_sizes]
    G = layers + 1 if piecewise else 1
    spec, rounds = graph_spec(piecewise, layers, tasks_per_layer, extra_streams_per_graph,
                               side_tasks, external_wait)
    E = extra_streams_per_graph
    N = max(1, int(tp))
    loads = hccl_loads(N, piecewise, layers, collectives_per_layer, collective,
                       collective_bytes, ranks_per_server)
    C = loads[0].per_graph if loads else 0
    if kernel_ns is None:
        t = resolve_profile(profile).timing
        pairs = max(graph_cost(spec, profile, sub_models=sub_models, join_rounds=rounds,
                               task_groups=task_groups, hccl=h).sqcq_pairs
                    for h in loads or [None])
        per_graph = t.host_model_execute_ns + pairs * t.host_model_first_execute_per_stream_ns
        per_graph += C * t.host_hccl_launch_ns if C else 0
        kernel_ns = max(1_000_000, -(-4 * N * G * per_graph // max(1, spec[0] - external_wait)))
    saved = RT.profile_name
    npusim.reset()
    npusim.configure(profile=profile if profile is not None else saved)
    state = {"failure": None}
    graphs: list[list] = []        # per size: per graph: per rank, the Graph

    def call(name, fn, phase, size=None, g=None, pas=None):
        try:
            return fn()
        except (npusim.AclError, npusim.HcclError) as e:
            if state["failure"] is None:
                state["failure"] = Failure(name, e.code, phase, size, g, pas)
            raise

    ranks: list[_Rank] = []
    try:
        for r in range(N):
            dev = call("aclrtSetDevice", lambda: npusim.Device(id=r), "setup") if N > 1 \
                else npusim.Device()
            acl.rt.set_device(r)
            x = dev.malloc(64)
            main = call("aclrtCreateStream", dev.stream, "setup")
            sides = [] if fresh_streams else \
                [call("aclrtCreateStream", dev.stream, "setup") for _ in range(E)]
            branch = call("aclrtCreateStream", dev.stream, "setup") if sub_models else None
            trigger = call("aclrtCreateStream", dev.stream, "setup") if external_wait else None
            evs = [(dev.event(), dev.event()) for _ in range(E)]
            ext = dev.event(npusim.acl.ACL_EVENT_EXTERNAL, kind="flag") if external_wait \
                else None
            ranks.append(_Rank(dev, x, main, sides, branch, trigger, evs, ext))
        if C:
            devs = [k.dev for k in ranks]
            comms = call("HcclCommInitAll", lambda: npusim.communicator(devs), "setup") \
                if ranks_per_server >= N else \
                call("HcclCommInitClusterInfo", lambda: _cluster(devs, ranks_per_server),
                     "setup")
            sb, rb = buffers_of(collective, N, collective_bytes)
            for k, c in zip(ranks, comms):
                acl.rt.set_device(k.dev.id)
                k.comm, k.send, k.recv = c, k.dev.malloc(sb), k.dev.malloc(rb)

        def kern(k, s):
            s.launch("EasyOPf", 1, args=(k.x,), duration_ns=kernel_ns)

        def coll(k):
            c, n = k.comm, count_of(collective, N, collective_bytes)
            if collective == "all_reduce":
                c.all_reduce(k.send, out=k.recv, count=n, stream=k.main)
            elif collective == "all_gather":
                c.all_gather(k.send, k.recv, count=n, stream=k.main)
            elif collective == "reduce_scatter":
                c.reduce_scatter(k.send, k.recv, count=n, stream=k.main)
            elif collective == "alltoall":
                c.alltoall(k.send, k.recv, count=n, stream=k.main)
            elif collective == "broadcast":
                c.broadcast(k.send, root=0, count=n, stream=k.main)
            else:
                c.reduce(k.send, k.recv, root=0, count=n, stream=k.main)

        n_main = spec[0] - task_groups - bool(external_wait)
        share = n_main // (C + 1) if C else n_main
        for size in sizes:
            row = []
            for g in range(G):
                per_rank = []
                for k in ranks:
                    acl.rt.set_device(k.dev.id)
                    if fresh_streams:
                        k.sides = [call("aclrtCreateStream", k.dev.stream, "capture", size, g)
                                   for _ in range(E)]
                    gr = npusim.graph(k.main)
                    call("aclmdlRICaptureBegin", gr.capture_begin, "capture", size, g)
                    main = k.main
                    try:
                        if external_wait:
                            main.wait(k.ext)
                        for _ in range(task_groups):
                            npusim.graph_task_group_begin(main)
                            kern(k, main)
                            npusim.graph_task_group_end(main)
                        for side, (e1, _) in zip(k.sides, k.evs):
                            main.record(e1)
                            side.wait(e1)
                        done = 0
                        for _ in range(C):
                            for _ in range(share):
                                kern(k, main)
                            done += share
                            call(f"Hccl {collective}", lambda: coll(k), "capture", size, g)
                        for _ in range(n_main - done):
                            kern(k, main)
                        for side in k.sides:
                            for _ in range(side_tasks):
                                kern(k, side)
                        for r in range(rounds):
                            for side, (e1, e2) in zip(k.sides, k.evs):
                                if r:
                                    main.record(e1)
                                    side.wait(e1)
                                side.record(e2)
                                main.wait(e2)
                        for _ in range(sub_models):
                            cnd = call("aclmdlRICondHandleCreate", gr.condition, "capture",
                                       size, g)
                            with gr.cond_if(cnd, k.branch):
                                kern(k, k.branch)
                    except (npusim.AclError, npusim.HcclError):
                        npusim.acl.mdl.ri_capture_end(main.handle)
                        raise
                    call("aclmdlRICaptureEnd", gr.capture_end, "capture", size, g)
                    per_rank.append(gr)
                row.append(per_rank)
            graphs.append(row)
    except (npusim.AclError, npusim.HcclError):
        pass
    builds: list[int] = []
    fit = 0
    cstreams = set()
    pairs = {sum(len(x.streams) for x in gr._model.all_models())
             for row in graphs for per in row for gr in per}
    try:
        if graphs:
            fit = len(graphs)
            for pas in range(1, passes + 1):
                nb = 0
                for si, row in enumerate(graphs):
                    for g, per_rank in enumerate(row):
                        for k, gr in zip(ranks, per_rank):
                            acl.rt.set_device(k.dev.id)
                            m = gr._model
                            was = m.built
                            call("aclmdlRIExecuteAsync", lambda: gr.replay(k.main), "replay",
                                 sizes[si], g, pas)
                            if not was and k is ranks[0]:
                                nb += 1
                            if not was:
                                pairs.add(m.sqcq)      # what the build took from the pool
                            cstreams.add(sum(len(x.streams) for x in m.all_models()))
                    for k in ranks:
                        acl.rt.set_device(k.dev.id)
                        if external_wait:
                            k.trigger.record(k.ext)
                    for k in ranks:
                        acl.rt.set_device(k.dev.id)
                        call("aclrtSynchronizeStream", k.main.synchronize, "replay", sizes[si],
                             None, pas)
                builds.append(nb)
    except (npusim.AclError, npusim.HcclError):
        fit = 0
    dev_ = RT.devices.get(0)
    users = [sum(len(c.streams) for c in RT.devices[k.dev.id].contexts)
             for k in ranks if RT.devices.get(k.dev.id) is not None]
    res = SimResult(state["failure"], fit, builds, cstreams, pairs,
                    dev_.sqcq_used if dev_ else 0, users[0] if users else 0,
                    set(users))
    npusim.reset()
    npusim.configure(profile=saved)       # the profile name configured before the run
    return res


def _cluster(devs, per_server: int) -> list:
    """One communicator over ``devs``, ``per_server`` ranks to a server: a rank table file
    and ``HcclCommInitClusterInfo`` on one thread per rank (each waits for all to join)."""
    table = {"server_list": [
        {"server_id": f"server{i}", "device": [
            {"device_id": str(d.id), "rank_id": str(r)}
            for r, d in enumerate(devs) if r // per_server == i]}
        for i in range((len(devs) + per_server - 1) // per_server)]}
    fd, path = tempfile.mkstemp(suffix=".json", prefix="npusim-plan-")
    with os.fdopen(fd, "w") as f:
        json.dump(table, f)
    out = [None] * len(devs)

    def init(r):
        acl.rt.set_device(devs[r].id)
        out[r] = npusim.hccl.comm_init_cluster_info(path, r)
    try:
        threads = [threading.Thread(target=init, args=(r,)) for r in range(len(devs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        os.unlink(path)
    for h, code in out:
        if code:
            raise npusim.HcclError(code, "HcclCommInitClusterInfo")
    return [npusim.Comm(h, d) for (h, _), d in zip(out, devs)]


class _Rank:
    """One rank of :func:`simulate`: its device, streams, events, communicator and buffers."""

    __slots__ = ("dev", "x", "main", "sides", "branch", "trigger", "evs", "ext", "comm",
                 "send", "recv")

    def __init__(self, dev, x, main, sides, branch, trigger, evs, ext):
        self.dev, self.x, self.main, self.sides, self.branch = dev, x, main, sides, branch
        self.trigger, self.evs, self.ext = trigger, evs, ext
        self.comm = self.send = self.recv = None


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
    costs = p.rank_costs or [p.cost]
    cs, pairs = {c.capture_streams for c in costs}, {c.sqcq_pairs for c in costs}
    if s.capture_streams and s.capture_streams != cs:
        diffs.append(f"capture streams per graph: predicted {sorted(cs)}, "
                     f"simulated {sorted(s.capture_streams)}")
    if s.sqcq_pairs and s.sqcq_pairs != pairs:
        diffs.append(f"SQ/CQ pairs per graph: predicted {sorted(pairs)}, "
                     f"simulated {sorted(s.sqcq_pairs)}")
    if s.rank_user_streams and s.fit_sizes and p.failure is None \
            and s.rank_user_streams != {p.user_streams}:
        diffs.append(f"user streams per rank: predicted {p.user_streams}, "
                     f"simulated {sorted(s.rank_user_streams)}")
    return diffs
