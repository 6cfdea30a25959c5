"""The planner with collectives (``npusim plan --tp N``): what HCCL adds to every graph on each
rank (side streams joined into the capture, their SQEs, capture events, notifies, events, CCL
buffers — ``npusim/plan/hccl.py``), predicted by ``plan`` and checked against ``simulate``,
which runs the same plan on N simulated devices with one communicator over them."""
from __future__ import annotations

import dataclasses

import pytest

import npusim
from npusim import acl
from npusim.cli import main
from npusim.hccl import algo
from npusim.plan import compare, hccl_load, plan, simulate
from npusim.profiles import get_profile

A2 = get_profile("Ascend910B")
TINY = dataclasses.replace(A2, name="tiny-hccl", sqcq_pool=16, max_user_streams=12,
                           capture_sq_depth_swsq=64)

SMALL = dict(graph_sizes=[1, 2], layers=2, tasks_per_layer=6, extra_streams_per_graph=1,
             profile="Ascend910B")


@pytest.mark.parametrize("tp", [1, 2, 8])
def test_small_plan_predicted_and_simulated_agree(tp):
    p, s = plan(**SMALL, tp=tp), simulate(**SMALL, tp=tp)
    assert compare(p, s) == [], p.report()
    assert p.failure is None and s.fit_sizes == 2
    # mesh on p ranks: p - 2 HCCL side streams joined into every graph (none for 1 or 2 ranks)
    k = max(0, tp - 2)
    assert p.cost.capture_streams == p.cost.sqcq_pairs == 2 + k
    assert s.capture_streams == s.sqcq_pairs == {2 + k}
    assert (p.hccl is None) == (tp == 1)
    assert s.rank_user_streams == {p.user_streams} == {3 + k}
    assert p.builds == s.builds == [6, 0]


def test_load_of_an_8_rank_all_reduce_matches_its_schedule():
    h = hccl_load(8, "all_reduce", 4096, per_graph=2)
    sched = algo.schedule("all_reduce", 8, [0] * 8, 1024, 4)
    assert h.side_streams == sched.streams == 6 and h.algorithm == "mesh"
    steps = sched.per_rank[0]
    assert h.main_sqes == 2 * sum(1 for st in steps if st.stream == 0)
    assert h.side_sqes == [2 * sum(1 for st in steps if st.stream == j) for j in range(1, 7)]
    assert h.capture_events == 2 * sum(1 for st in steps if st.kind == "local_post")
    assert h.events == 12                       # fork and join tag of each side stream
    assert h.ccl_bytes == 2 * 200 * 1024 * 1024 and h.npusim_ccl_bytes == 200 * 1024 * 1024
    assert hccl_load(2, per_graph=2).side_streams == 0
    assert hccl_load(8, per_graph=0).side_streams == 0


def test_load_matches_a_real_8_rank_capture():
    """Two AllReduces captured on 8 ranks: the capture streams, their SQEs and the capture
    events are the load's (the origin also holds EndCapture's resets), the Ex events and the
    bridge slots too."""
    from npusim.hccl import comm as C
    from npusim.runtime.runtime import RT
    devs = [npusim.Device(id=i) for i in range(8)]
    comms = npusim.communicator(devs)
    h = hccl_load(8, "all_reduce", 4096, per_graph=2)
    for r, (d, c) in enumerate(zip(devs, comms)):
        acl.rt.set_device(r)
        s, x = d.stream(), d.malloc(4096)
        g = npusim.graph(s)
        g.capture_begin()
        c.all_reduce(x, stream=s)
        c.all_reduce(x, stream=s)
        g.capture_end()
        m = g._model
        assert len(m.streams) == 1 + h.side_streams
        assert len(m.capture_events) == h.capture_events
        assert m.streams[0].sqe_num == h.main_sqes + h.capture_events
        assert sorted(cs.sqe_num for cs in m.streams[1:]) == sorted(h.side_sqes)
        assert RT.devices[r].live_events == h.events
    (cm,) = C.COMMS.values()
    assert len(cm.bridges) * 2 == 8 * h.notifies


PLANS = {
    # 8 ranks: 1 + 6 HCCL side streams + a cascade of the capturing stream (its HCCL SQEs pass
    # 64 - 32) = 8 pairs per graph; 3 graphs per size > 16 pairs
    "tiny-pool-tp8-rebuilds": dict(graph_sizes=[1, 2, 4], layers=2, tasks_per_layer=4,
                                   profile=TINY, tp=8, collectives_per_layer=1),
    # cascades of the capturing stream and of HCCL's side streams at 64 - 32 = 32 SQEs
    "tiny-cascades-tp8-full": dict(graph_sizes=[1, 2], layers=3, tasks_per_layer=5,
                                   piecewise=False, profile=dataclasses.replace(TINY,
                                                                                sqcq_pool=64),
                                   tp=8, collectives_per_layer=2),
    # HCCL's side streams are user streams: fresh side streams run out one graph earlier
    "tiny-user-streams-207008-tp4": dict(graph_sizes=[1, 2, 3], layers=1, tasks_per_layer=2,
                                         extra_streams_per_graph=2, fresh_streams=True,
                                         profile=TINY, tp=4),
    # a graph with more capture streams than the per-graph cap: 207005 at its first execution
    "per-graph-207005-tp8": dict(graph_sizes=[1, 2], layers=1, tasks_per_layer=3,
                                 profile=dataclasses.replace(TINY, sqcq_pool=6), tp=8),
    # graphs that must stay resident together: 4 graphs x (2 + 2 HCCL) pairs > 16 at once
    "tiny-resident-207005-tp4": dict(graph_sizes=[1, 2, 4], layers=3, tasks_per_layer=4,
                                     extra_streams_per_graph=1, profile=TINY,
                                     external_wait=True, tp=4),
    "a3-groups-submodels-tp4": dict(graph_sizes=[1, 2], layers=2, tasks_per_layer=4,
                                    profile="A3", task_groups=1, sub_models=1, tp=4),
    "310p-classic-tp4": dict(graph_sizes=[1, 2], layers=2, tasks_per_layer=3, profile="310P",
                             tp=4),
    # more ranks than the chip has devices: 107001 at the first device past the last
    "a2-tp16-107001": dict(graph_sizes=[1], layers=1, tasks_per_layer=3, profile="A2", tp=16),
    # 16 devices on two servers of 8: hierarchical AllReduce, 6 side streams per rank
    "two-servers-tp16": dict(graph_sizes=[1], layers=1, tasks_per_layer=3,
                             profile=dataclasses.replace(A2, name="a2x16", device_count=16),
                             tp=16, collectives_per_layer=1),
    "broadcast-ring-tp4": dict(graph_sizes=[1, 2], layers=1, tasks_per_layer=3, profile="A2",
                               tp=4, collective="broadcast", ranks_per_server=2),
    "reduce-mesh-tp4": dict(graph_sizes=[1], layers=1, tasks_per_layer=3, profile="A2", tp=4,
                            collective="reduce"),
    "all-gather-tp4": dict(graph_sizes=[1, 2], layers=2, tasks_per_layer=3, profile="A2", tp=4,
                           collective="all_gather", collectives_per_layer=1),
    "reduce-scatter-tp4": dict(graph_sizes=[1], layers=1, tasks_per_layer=3,
                                        profile="A2", tp=4, collective="reduce_scatter"),
    "alltoall-tp4": dict(graph_sizes=[1], layers=1, tasks_per_layer=3, profile="A3", tp=4,
                         collective="alltoall", collectives_per_layer=1),
    "two-servers-hierarchical-tp4": dict(graph_sizes=[1, 2], layers=1, tasks_per_layer=3,
                                         profile="A2", tp=4, ranks_per_server=2),
}


@pytest.mark.parametrize("name", list(PLANS))
def test_plans_with_collectives_match_simulation(name):
    kw = PLANS[name]
    p, s = plan(**kw), simulate(**kw)
    assert compare(p, s) == [], p.report() + "\n" + str(s)
    assert p.report()


def test_what_the_plans_show():
    p1 = plan(**{**PLANS["tiny-pool-tp8-rebuilds"], "tp": 1})
    p8 = plan(**PLANS["tiny-pool-tp8-rebuilds"])
    assert p1.cost.sqcq_pairs == 1 and p8.cost.sqcq_pairs == 1 + 6 + 1   # + a cascade
    assert p1.resident_sizes == 3 and p8.resident_sizes == 0
    assert p8.builds[-1] > 0 == p1.builds[-1]
    assert plan(**PLANS["tiny-cascades-tp8-full"]).cost.cascades > 0
    f = plan(**PLANS["tiny-user-streams-207008-tp4"]).failure
    f1 = plan(**{**PLANS["tiny-user-streams-207008-tp4"], "tp": 1}).failure
    assert f.code == f1.code == 207008 and (f.size, f.graph) < (f1.size, f1.graph)
    f = plan(**PLANS["per-graph-207005-tp8"]).failure
    assert (f.call, f.code, f.phase) == ("aclmdlRIExecuteAsync", 207005, "replay")
    assert plan(**{**PLANS["per-graph-207005-tp8"], "tp": 1}).failure is None
    assert plan(**PLANS["two-servers-hierarchical-tp4"]).hccl.algorithm == "hierarchical"
    f = plan(**PLANS["a2-tp16-107001"]).failure
    assert (f.call, f.code, f.phase) == ("aclrtSetDevice", 107001, "setup")
    p = plan(**PLANS["two-servers-tp16"])
    assert (p.hccl.algorithm, p.hccl.side_streams, p.failure) == ("hierarchical", 6, None)
    kw = PLANS["tiny-resident-207005-tp4"]
    assert plan(**{**kw, "tp": 1}).failure is None
    f = plan(**kw).failure
    assert (f.call, f.code, f.graph) == ("aclmdlRIExecuteAsync", 207005, 16 // 5)


def test_vllm_question_with_tp8():
    """48 layers, 2 AllReduces per layer on 8 ranks: 6 HCCL side streams per graph take the
    capture streams from 3 to 9 per graph, the sizes resident in the pool from 6 to 2."""
    from npusim.plan import parse_sizes
    kw = dict(graph_sizes=parse_sizes("1,2,4,...,512"), layers=48, tasks_per_layer=30,
              extra_streams_per_graph=2, profile="A2")
    p1, p8 = plan(**kw), plan(**kw, tp=8)
    assert p1.cost.sqcq_pairs == 3 and p8.cost.sqcq_pairs == 9
    assert p1.resident_sizes == 6 and p8.resident_sizes == 1024 // (49 * 9) == 2
    assert p8.vllm_sizes == (1800 - 40) // 49 // 5
    assert p8.hw_sizes < p1.hw_sizes


def test_cli_prints_the_hccl_counts(capsys):
    assert main(["plan", "--profile", "A2", "--sizes", "1,2", "--layers", "2",
                 "--tasks-per-layer", "6", "--extra-streams", "1", "--tp", "8",
                 "--simulate"]) == 0
    out = capsys.readouterr().out
    assert "collectives: tp 8" in out and "2 all_reduce of 4096 bytes per layer" in out
    assert "6 side streams (mesh)" in out and "capture events" in out
    assert "notifies per graph" in out and "CCL buffers 400 MB" in out
    assert "prediction and simulation agree" in out
    assert main(["plan", "--sizes", "1", "--layers", "1", "--tp", "0"]) == 2


def test_cli_grid_over_tp(capsys):
    assert main(["plan", "--profile", "A2", "--sizes", "1,2", "--layers", "1",
                 "--tasks-per-layer", "4", "--tp", "1,2,4", "--simulate",
                 "--scheduler", "serial"]) == 0
    out = capsys.readouterr().out
    assert "3 plans: prediction and simulation agree on all" in out
    rows = [ln.split() for ln in out.splitlines() if ln.strip().startswith("Ascend910B")]
    assert len(rows) == 3

