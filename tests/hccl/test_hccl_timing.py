"""The alpha-beta model (issue 38 item 4): the simulated duration of a CAPTURED AllReduce replay
against ``cost.closed_form(..., local_copies=True)`` for each algorithm (mesh on one server;
hierarchical, rhd and ring across servers via rank tables) and 1 KiB, 1 MiB, 64 MiB.

Duration: from the start of the last rank's replay (the collective cannot finish before every
rank is in it: the ranks' replays are issued one after another by the host) to the last end of
any device's task, from the world trace. Asserted within one alpha (``Timing.hccl_alpha_ns``)
where it holds; the cases where it does not are ``xfail(strict=True)`` with the reason
(measured gaps in the helper's report; the lead decides)."""
from __future__ import annotations

import collections

import numpy as np
import pytest

import npusim
from helpers.hccl_world import World, rank_table
from npusim import acl, hccl
from npusim.hccl import algo, cost
from npusim.hccl import types as T
from npusim.runtime.runtime import profile

KIB, MIB = 1024, 1 << 20


def replay_ns(w, nbytes):
    p, n = w.p, nbytes // 4
    x = [w.malloc(r, nbytes) for r in range(p)]
    y = [w.malloc(r, nbytes) for r in range(p)]
    models = []
    for r in range(p):
        acl.rt.set_device(r)
        assert acl.mdl.ri_capture_begin(w.streams[r], acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) == 0
        assert hccl.all_reduce(int(x[r]), int(y[r]), n, T.HCCL_DATA_TYPE_FP32,
                               T.HCCL_REDUCE_SUM, w.comms[r], w.streams[r]) == 0
        m, code = acl.mdl.ri_capture_end(w.streams[r])
        assert code == 0
        models.append(m)
    for it in range(2):                 # the first replay warms up; the second is measured
        npusim.trace.clear()
        for r in range(p):
            acl.rt.set_device(r)
            assert acl.mdl.ri_execute_async(models[r], w.streams[r]) == 0
        assert w.sync() == [0] * p
    first, last = collections.defaultdict(lambda: float("inf")), collections.defaultdict(float)
    for e in npusim.trace.world().events():
        if e.get("ph") == "X" and str(e.get("pid", "")).startswith("device"):
            first[e["pid"]] = min(first[e["pid"]], e["ts"])
            last[e["pid"]] = max(last[e["pid"]], e["ts"] + e["dur"])
    return (max(last.values()) - max(first.values())) * 1000.0


# (algorithm, ranks, servers): one server of 8 (mesh); 2 x 4 (hierarchical); 4 x 1 (rhd, a
# power of 2); 3 x 1 (ring)
CASES = [("mesh", 8, 1), ("hierarchical", 8, 2), ("rhd", 4, 4), ("ring", 3, 3)]
GAPS = {("mesh", KIB): "+3 alpha: the graph's side-stream fork/join by Ex events (18 "
                        "EVENT_RECORD/WAIT + 36 EVENT_RESET SQEs on the origin stream)",
        ("mesh", MIB): "+2.7 alpha: the same fork/join SQEs",
        ("mesh", 64 * MIB): "-22 alpha: the simulated mesh moves faster than closed_form's",
        ("hierarchical", 64 * MIB): "-2.9 alpha: faster than closed_form's sum of phases",
        ("ring", KIB): "-1.5 alpha: the ring's early ranks start before the last one",
        ("ring", MIB): "-2 alpha: the same skew",
        ("ring", 64 * MIB): "-43 alpha: the simulated ring is faster than closed_form's"}


@pytest.mark.parametrize("nbytes", [KIB, MIB, 64 * MIB], ids=["1KiB", "1MiB", "64MiB"])
@pytest.mark.parametrize("alg,p,servers", CASES, ids=[c[0] for c in CASES])
def test_all_reduce_replay_vs_closed_form(acl, tmp_path, request, alg, p, servers, nbytes):
    if (alg, nbytes) in GAPS:
        request.applymarker(pytest.mark.xfail(strict=True, reason=GAPS[alg, nbytes]))
    npusim.configure(trace=True)
    if servers == 1:
        w = World(p)
    else:
        w = World(p, how="table", table=rank_table(tmp_path / "rt.json", servers, p // servers))
    rs = [r * servers // p for r in range(p)]
    assert algo.choose("all_reduce", p, rs) == alg
    tm = profile().timing
    sim = replay_ns(w, nbytes)
    cf = cost.closed_form("all_reduce", alg, nbytes, p, tm, servers=servers, local_copies=True)
    assert abs(sim - cf) <= tm.hccl_alpha_ns, (alg, nbytes, sim, cf, sim - cf)
