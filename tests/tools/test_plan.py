"""Resource budgets and the capture planner (``npusim.plan``), validated against the simulator:
``graph_cost`` against real captures (cascades, joins, added streams, sub-models, task groups,
EndCapture's internal tasks) and ``plan`` against ``simulate`` — the same plan run in npusim —
for every failure the planner predicts (207005 per graph, 207005 with graphs that must stay
resident, 207008, 207000) and for the SQ/CQ pool recycling counts."""
from __future__ import annotations

import dataclasses
import random

import pytest

import npusim
from npusim import acl
from npusim import errors as E
from npusim.cli import main
from npusim.plan import Budget, compare, graph_cost, parse_sizes, plan, simulate, usage
from npusim.profiles import PROFILES, get_profile

A2 = get_profile("Ascend910B")
# small profiles: a shallow capture depth makes cascades cheap, a small pool / stream budget
# makes the limits cheap to reach (the arithmetic is the same as with the real numbers)
TINY = dataclasses.replace(A2, name="tiny", sqcq_pool=16, max_user_streams=12,
                           capture_sq_depth_swsq=64)
TINY_RSV = dataclasses.replace(A2, name="tiny-rsv", capture_sq_depth_swsq=48,
                               expand_stream_rsv_task_num=8, sqcq_pool=40)
TINY_CLASSIC = dataclasses.replace(get_profile("Ascend310P"), name="tiny-classic", rtsq_depth=64,
                                   max_task_num_per_stream=48, sqcq_pool=40)


# ---- budgets ----
@pytest.mark.parametrize("name", list(PROFILES))
def test_budget_per_profile(name):
    p, b = get_profile(name), Budget.for_profile(name)
    assert b.user_streams.value == p.max_user_streams
    assert b.user_streams.code == E.ACL_ERROR_RT_NO_STREAM_RESOURCE
    assert b.sqcq_pool.value == b.sqcq_per_graph.value == p.sqcq_pool == 1024
    assert b.sqcq_per_graph.code == E.ACL_ERROR_RT_RESOURCE_ALLOC_FAIL
    assert (b.events.value, b.events.code) == (p.max_events, E.ACL_ERROR_RT_NO_EVENT_RESOURCE)
    assert (b.notifies.value, b.notifies.code) == (p.max_notifies,
                                                   E.ACL_ERROR_RT_NO_NOTIFY_RESOURCE)
    assert b.physical_streams.value == p.max_physical_streams
    assert all(x.source for x in b.limits())
    assert not b.graph_streams_hw.simulated
    depth = p.capture_sq_depth_swsq if p.software_sq else p.rtsq_depth
    assert b.cascade_at == depth - 32 - p.expand_stream_rsv_task_num
    assert str(b.user_streams.value) in str(b)


def test_cascade_points_of_the_real_profiles():
    assert Budget.for_profile("A2").cascade_at == 32736          # spec/aclgraph.md §5
    assert Budget.for_profile("950").cascade_at == 32728
    assert Budget.for_profile("310P").cascade_at == 2016
    for name, at in (("A2", 32736), ("950", 32728), ("310P", 2016)):
        assert graph_cost(at, name).capture_streams == 1 + (name == "310P" and 0)
        assert graph_cost(at + 1, name).cascades == 1
        assert graph_cost(3 * at, name).cascades == 2
    # classic: EndGraph at EndCapture, counted in the pairs; SW-SQ: at the first execution
    assert graph_cost(5, "310P").sqcq_pairs == 1 and graph_cost(5, "A2").sqcq_pairs == 1
    c = graph_cost(30, "A2", joined_streams=2)
    assert (c.capture_streams, c.sqcq_pairs, c.user_streams) == (3, 3, 3)
    assert graph_cost(1, "A2", joined_streams=1024).code == E.ACL_ERROR_RT_RESOURCE_ALLOC_FAIL
    assert graph_cost(1, "310P", sub_models=1).code == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT


# ---- graph_cost against real captures ----
def _capture(prof, spec, added, added_tasks, subs, rounds, tg, cond):
    """An independent capture of graph_cost's canonical graph through the facade and the
    Pythonic API; (streams before the first execution, after it, its code, pairs taken)."""
    npusim.reset()
    npusim.configure(profile=prof)
    dev = npusim.Device()
    x = dev.malloc(64)
    main_s = dev.stream()
    sides = [dev.stream() for _ in spec[1:]]
    adds = [dev.stream() for _ in range(added)]
    br = dev.stream()
    evs = [(dev.event(), dev.event()) for _ in sides]

    def k(s):
        s.launch("EasyOPf", 1, args=(x,))
    g = npusim.graph(main_s)
    g.capture_begin()
    for _ in range(tg):
        npusim.graph_task_group_begin(main_s)
        k(main_s)
        npusim.graph_task_group_end(main_s)
    for s, (e1, _) in zip(sides, evs):
        main_s.record(e1)
        s.wait(e1)
    for _ in range(spec[0] - tg):
        k(main_s)
    for s, n in zip(sides, spec[1:]):
        for _ in range(n):
            k(s)
    for r in range(rounds):
        for s, (e1, e2) in zip(sides, evs):
            if r:
                main_s.record(e1)
                s.wait(e1)
            s.record(e2)
            main_s.wait(e2)
    mh = acl.mdl.ri_capture_get_info(main_s.handle)[1]
    for a in adds:
        assert acl.rt.stream_add_to_model(a.handle, mh) == 0
        for _ in range(added_tasks):
            k(a)
    if subs:
        if cond == "switch":
            branches = g.cond_switch(g.condition(), len(subs), br)
        else:
            branches = [(g.cond_while if cond == "while" else g.cond_if)(g.condition(), br)
                        for _ in subs]
        for b, n in zip(branches, subs):
            with b:
                for _ in range(n):
                    k(br)
    g.capture_end()
    m = g._model
    before = sum(len(y.streams) for y in m.all_models())
    try:
        g.replay(main_s)
        main_s.synchronize()
        code = 0
    except npusim.AclError as e:
        code = e.code
    return before, sum(len(y.streams) for y in m.all_models()), code, m.sqcq


def test_graph_cost_matches_real_captures():
    rng = random.Random(8)
    profs = (dataclasses.replace(TINY, sqcq_pool=40), TINY_RSV, TINY_CLASSIC)
    for _ in range(70):
        prof = rng.choice(profs)
        spec = [rng.randint(0, 120)] + [rng.randint(0, 70) for _ in range(rng.randint(0, 4))]
        rounds, added, added_tasks = rng.randint(1, 12), rng.randint(0, 2), rng.randint(0, 40)
        subs = [rng.randint(1, 70) for _ in range(rng.randint(0, 3))] if prof.software_sq else []
        cond, tg = rng.choice(["if", "while", "switch"]), rng.randint(0, min(2, spec[0]))
        before, after, code, pairs = _capture(prof, spec, added, added_tasks, subs, rounds, tg,
                                              cond)
        c = graph_cost(spec, prof, added_streams=added, added_tasks=added_tasks, sub_models=subs,
                       join_rounds=rounds, task_groups=tg, cond=cond)
        case = (prof.name, spec, added, added_tasks, subs, rounds, tg, cond)
        assert (c.sqcq_pairs, c.capture_streams, c.code) == (before, after, code), case
        if not code:
            assert pairs == c.sqcq_pairs, case


def test_per_graph_207005_on_the_real_a2_limit():
    """1024 joined streams: 1025 capture streams > 1024 pairs per graph, at the first execute."""
    c = graph_cost(1, "Ascend910B", joined_streams=1024)
    assert (c.sqcq_pairs, c.code) == (1025, E.ACL_ERROR_RT_RESOURCE_ALLOC_FAIL)
    assert graph_cost(1, "Ascend910B", joined_streams=1023).fits
    npusim.configure(profile="Ascend910B")
    dev = npusim.Device()
    s, x = dev.stream(), dev.malloc(64)
    sides = [dev.stream() for _ in range(1024)]
    e1, e2 = dev.event(), dev.event()
    with npusim.graph(s) as g:
        s.launch("EasyOPf", 1, args=(x,))
        for side in sides:
            s.record(e1)
            side.wait(e1)
            side.record(e2)
            s.wait(e2)
    assert len(g._model.streams) == c.capture_streams
    assert acl.mdl.ri_execute_async(g.handle, s.handle) == c.code
    assert RT_sqcq_used() == 0                           # nothing taken from the pool


def RT_sqcq_used() -> int:
    from npusim.runtime.runtime import RT
    return RT.devices[0].sqcq_used


# ---- plan against simulate ----
PLANS = {
    "a2-small": dict(graph_sizes=[1, 2, 4], layers=2, tasks_per_layer=6,
                     extra_streams_per_graph=1, profile="Ascend910B"),
    "a3-groups-submodels": dict(graph_sizes=[1, 2, 4, 8], layers=3, tasks_per_layer=4,
                                extra_streams_per_graph=2, profile="Ascend910_93",
                                task_groups=1, sub_models=1),
    "950-full-graphs": dict(graph_sizes=[1, 2], layers=3, tasks_per_layer=3, piecewise=False,
                            extra_streams_per_graph=3, profile="Ascend950"),
    "310p-sub-models-207000": dict(graph_sizes=[1, 2, 4], layers=2, tasks_per_layer=5,
                                   extra_streams_per_graph=1, profile="Ascend310P",
                                   sub_models=1),
    "310p-fresh-streams-207008": dict(graph_sizes=[1, 2, 3, 4, 5, 6], layers=1,
                                      tasks_per_layer=3, extra_streams_per_graph=100,
                                      fresh_streams=True, profile="Ascend310P"),
    "950-per-graph-207005": dict(graph_sizes=[1, 2], layers=1, tasks_per_layer=3,
                                 extra_streams_per_graph=1030, profile="Ascend950"),
    "tiny-resident-207005": dict(graph_sizes=[1, 2, 4], layers=3, tasks_per_layer=4,
                                 extra_streams_per_graph=4, profile=TINY, external_wait=True),
    "a2-must-stay-resident-ok": dict(graph_sizes=[1, 2, 4, 8], layers=40, tasks_per_layer=4,
                                     extra_streams_per_graph=8, profile="Ascend910B",
                                     external_wait=True),
    "tiny-recycling": dict(graph_sizes=[1, 2, 4, 8], layers=2, tasks_per_layer=40,
                           extra_streams_per_graph=1, profile=TINY),
    "tiny-recycling-3-passes": dict(graph_sizes=[1, 2, 4, 8, 16], layers=3, tasks_per_layer=5,
                                    profile=dataclasses.replace(TINY, sqcq_pool=9), passes=3),
    "tiny-setup-207008": dict(graph_sizes=[1, 2], layers=1, tasks_per_layer=2,
                              extra_streams_per_graph=11, profile=TINY),
    "tiny-rsv-cascades": dict(graph_sizes=[1, 2, 4], layers=2, tasks_per_layer=30,
                              extra_streams_per_graph=1, profile=TINY_RSV, task_groups=2),
}


@pytest.mark.parametrize("name", list(PLANS))
def test_plan_matches_simulation(name):
    kw = PLANS[name]
    p, s = plan(**kw), simulate(**kw)
    assert compare(p, s) == [], p.report()
    assert p.fit_sizes == s.fit_sizes
    assert p.report()


def test_expected_outcomes_of_the_validation_plans():
    """What the plans above demonstrate (and the simulator confirmed in the test above)."""
    f = {n: plan(**kw).failure for n, kw in PLANS.items()}
    assert f["a2-small"] is None and f["tiny-recycling"] is None
    assert (f["310p-sub-models-207000"].call, f["310p-sub-models-207000"].code) == \
        ("aclmdlRICondHandleCreate", E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT)
    x = f["310p-fresh-streams-207008"]
    assert (x.call, x.code, x.phase, x.size) == ("aclrtCreateStream", 207008, "capture", 6)
    x = f["950-per-graph-207005"]
    assert (x.call, x.code, x.size, x.graph, x.replay_pass) == \
        ("aclmdlRIExecuteAsync", 207005, 1, 0, 1)
    x = f["tiny-resident-207005"]                # 4 graphs x 5 pairs > 16 held at once
    assert (x.call, x.code, x.size, x.graph) == ("aclmdlRIExecuteAsync", 207005, 1, 16 // 5)
    assert f["a2-must-stay-resident-ok"] is None
    assert f["tiny-setup-207008"].phase == "setup"
    p = plan(**PLANS["tiny-recycling"])
    assert p.resident_sizes < p.fit_sizes == 4 and p.builds[1] > 0
    assert plan(**PLANS["a2-small"]).builds == [9, 0]


def test_vllm_ascend_question_a2_48_layers():
    """The flagship plan: 10 sizes x 49 piecewise graphs x 3 capture streams on A2. Everything
    captures and replays; 6 sizes fit the SQ/CQ pool together, beyond that graphs are rebuilt
    at replay; the simulator agrees on all of it."""
    kw = dict(graph_sizes=parse_sizes("1,2,4,...,512"), layers=48, tasks_per_layer=30,
              extra_streams_per_graph=2, profile="A2")
    p = plan(**kw)
    assert p.failure is None and p.fit_sizes == 10
    assert p.cost.sqcq_pairs == 3 and p.graphs_per_size == 49
    assert p.resident_sizes == 1024 // (49 * 3) == 6
    assert p.vllm_sizes == 1800 // 49 // 3 == 12
    assert p.hw_sizes == 10
    s = simulate(**kw)
    assert compare(p, s) == []
    assert s.builds == p.builds and p.builds[0] == 490


# ---- sizes, CLI, usage ----
def test_parse_sizes():
    assert parse_sizes("1,2,4,...,512") == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
    assert parse_sizes("8,16,...,64") == [8, 16, 24, 32, 40, 48, 56, 64]
    assert parse_sizes("1,2,4,8,16,...,48") == [1, 2, 4, 8, 16, 32, 48]
    assert parse_sizes("8-32:8") == [8, 16, 24, 32]
    assert parse_sizes("3,5,7") == [3, 5, 7]
    with pytest.raises(ValueError):
        parse_sizes("1,...,8")


def test_cli_plan_report(capsys):
    assert main(["plan", "--profile", "A2", "--sizes", "1,2,4,...,512", "--layers", "48",
                 "--tasks-per-layer", "30", "--extra-streams", "2"]) == 0
    out = capsys.readouterr().out
    assert "49 graphs per size" in out and "capture streams" in out
    assert "first failing call: none" in out
    assert "sizes whose graphs fit the SQ/CQ pool together: 6" in out
    lines = [ln for ln in out.splitlines() if ln.strip().startswith("512 ")]
    assert lines and "147" in lines[0]


def test_cli_plan_failure_and_simulate(capsys):
    assert main(["plan", "--profile", "310P", "--sizes", "1,2,3,4,5,6", "--layers", "1",
                 "--tasks-per-layer", "3", "--extra-streams", "100", "--fresh-streams",
                 "--budget", "--simulate"]) == 0
    out = capsys.readouterr().out
    assert "207008" in out and "aclrtCreateStream" in out
    assert "budget of Ascend310P" in out
    assert "prediction and simulation agree" in out


def test_usage_of_a_live_device():
    dev = npusim.Device("Ascend910B")
    s, side, x = dev.stream(), dev.stream(), dev.malloc(64)
    e1, e2 = dev.event(), dev.event()
    with npusim.graph(s) as g:
        s.record(e1)
        side.wait(e1)
        s.launch("EasyOPf", 1, args=(x,))
        side.record(e2)
        s.wait(e2)
    u = usage()
    assert (u["user_streams"], u["graphs"], u["sqcq_pairs"], u["capture_streams"]) == (3, 1, 0, 2)
    g.replay()
    s.synchronize()
    assert usage()["sqcq_pairs"] == graph_cost([1, 0], "A2").sqcq_pairs == 2
    assert usage()["graphs_built"] == 1
