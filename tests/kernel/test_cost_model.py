"""Per-launch kernel cost models (``npusim/runtime/cost.py``, docs/timing.md "Cost models"):
the duration a launch gets from its blocks and arguments, evaluated on the host into the SQE's
explicit duration, eager, captured and after a task update — checked against the closed forms."""
from __future__ import annotations

import math

import numpy as np
import pytest

import npusim
from npusim import acl
from npusim.device import memview as V
from npusim.trace.savings import predict_eager_end, predict_graph_end


@npusim.kernel(cost=lambda blocks, x, n: 1000 + 7 * n)
def costed(mem, ctx, b, nb, x: "ptr", n: "u32"):
    v = V.u32(mem, ctx, x, 1)
    if b == 0:
        v[0] += 1


@npusim.kernel
def plain(mem, ctx, b, nb, x: "ptr", n: "u32", alpha: "f32"):
    pass


def _kernel_rows(dev, since=0):
    r = dev.trace().rows
    return r[(r["op"] == 1) & (r["start"] >= since)]


def test_eager_launches_take_the_cost_of_their_arguments():
    npusim.configure(trace=True)
    dev = npusim.Device("Ascend910B")
    t = dev.profile.timing
    s = dev.stream()
    x = dev.malloc(64).fill(0)
    f = npusim.load_binary(costed)["costed"]
    sizes = [1, 10, 100, 1000, 12345]
    for n in sizes:
        f.launch(s, 1, (x, n))
    s.synchronize()
    rows = _kernel_rows(dev)
    assert (rows["end"] - rows["start"]).tolist() == \
        [t.sqe_dispatch_eager_ns + 1000 + 7 * n for n in sizes]
    assert int(x.read(np.uint32, 1)[0]) == len(sizes)      # the body still ran


def test_n_equal_eager_launches_end_where_the_closed_form_says():
    npusim.configure(trace=True)
    dev = npusim.Device("Ascend910B")
    t = dev.profile.timing
    s = dev.stream()
    x = dev.malloc(64).fill(0)
    f = npusim.load_binary(costed)["costed"]
    s.synchronize()
    h0 = npusim.api.RT.host_ns
    for _ in range(16):
        f.launch(s, 1, (x, 300))
    s.synchronize()
    rows = _kernel_rows(dev, h0)
    assert int(rows["end"][-1]) == predict_eager_end(t, 16, 1000 + 7 * 300, h0)


@pytest.mark.parametrize("n", [64, 4096])
def test_a_captured_launch_keeps_its_cost_and_the_replay_matches_the_closed_form(n):
    npusim.configure(trace=True)
    dev = npusim.Device("Ascend910B")
    t = dev.profile.timing
    s = dev.stream()
    x = dev.malloc(64).fill(0)
    f = npusim.load_binary(costed)["costed"]
    with npusim.graph(stream=s) as g:
        for _ in range(8):
            f.launch(s, 1, (x, n))
    g.replay()
    s.synchronize()                    # warm: SQ/CQ built
    h1 = npusim.api.RT.host_ns
    g.replay()
    s.synchronize()
    rows = dev.trace().rows
    k = rows[(rows["op"] == 1) & (rows["start"] >= h1)]
    assert (k["end"] - k["start"]).tolist() == [t.sqe_dispatch_graph_ns + 1000 + 7 * n] * 8
    wait = rows[(rows["op"] == 8) & (rows["start"] >= h1)]          # the launch stream's wait
    assert int(wait["end"].max()) == predict_graph_end(t, 8, 1000 + 7 * n, h1)


def test_a_task_update_recomputes_the_cost_from_the_new_arguments():
    npusim.configure(trace=True)
    dev = npusim.Device("Ascend910B")
    t = dev.profile.timing
    s, u = dev.stream(), dev.stream()
    x = dev.malloc(64).fill(0)
    f = npusim.load_binary(costed)["costed"]
    ev = dev.external_event()
    with npusim.graph(stream=s) as g:
        ev.wait(s)
        ev.reset(s)
        npusim.graph_task_group_begin(s)
        f.launch(s, 1, (x, 10))
        handle = npusim.graph_task_group_end(s)
    got = []
    for n in (10, 500, 2000, 3):
        npusim.graph_task_update_begin(u, handle)
        f.launch(u, 1, (x, n))
        npusim.graph_task_update_end(u)
        ev.record(u)
        h = npusim.api.RT.host_ns
        g.replay(s)
        s.synchronize()
        k = _kernel_rows(dev, h)
        got.append(int(k["end"][-1] - k["start"][-1]))
    assert got == [t.sqe_dispatch_graph_ns + 1000 + 7 * n for n in (10, 500, 2000, 3)]


def test_set_params_recomputes_the_cost():
    npusim.configure(trace=True)
    dev = npusim.Device("Ascend910B")
    t = dev.profile.timing
    s = dev.stream()
    x = dev.malloc(64).fill(0)
    lib = npusim.load_binary(costed)
    f = lib["costed"]
    with npusim.graph(stream=s) as g:
        f.launch(s, 1, (x, 10))
    cs = g.streams[0]
    task = [h for h in acl.mdl.ri_get_tasks_by_stream(cs)[0]
            if acl.mdl.ri_task_get_type(h)[0] == acl.ACL_MODEL_RI_TASK_KERNEL][0]
    args = dev.malloc(16)
    args.write(np.array([int(x), 900], np.int64))
    assert acl.mdl.ri_task_set_params(task, {"type": acl.ACL_MODEL_RI_TASK_KERNEL, "func": f.handle, "args": int(args),
                                             "args_size": 16}) == 0
    assert acl.mdl.ri_update(g.handle) == 0
    h = npusim.api.RT.host_ns
    g.replay()
    s.synchronize()
    k = _kernel_rows(dev, h)
    assert int(k["end"][0] - k["start"][0]) == t.sqe_dispatch_graph_ns + 1000 + 7 * 900


def test_roofline_closed_form_on_a_named_table_kernel():
    npusim.configure(trace=True)
    dev = npusim.Device("Ascend910B")
    p, t = dev.profile, dev.profile.timing
    s = dev.stream()
    x = dev.malloc(1 << 16).fill(0)
    rl = npusim.roofline(flops=lambda blocks, ptr, n: 2.0 * n * n,
                         bytes=lambda blocks, ptr, n: 4 * n)
    npusim.set_kernel_cost("EasyOPf", cost=rl)
    try:
        cases = [(1, 8), (4, 1000), (48, 100_000), (64, 3_000_000)]
        for blocks, n in cases:
            s.launch("EasyOPf", blocks, (x, n))
        s.synchronize()
        rows = _kernel_rows(dev)
        want = [t.sqe_dispatch_eager_ns
                + math.ceil(max(2.0 * n * n / (t.aiv_flops_per_ns * min(b, p.aiv_cores)),
                                4 * n / t.hbm_bytes_per_ns))
                + b * t.kernel_per_block_ns for b, n in cases]
        assert (rows["end"] - rows["start"]).tolist() == want
    finally:
        npusim.reset_kernel_cost("EasyOPf")
    s.launch("EasyOPf", 1, (x,))
    s.synchronize()
    r = _kernel_rows(dev)[-1]
    assert int(r["end"] - r["start"]) == t.sqe_dispatch_eager_ns + t.kernel_per_block_ns + \
        int(npusim.device.kernels.TABLE.cost[npusim.device.kernels.TABLE.id("EasyOPf"), 0])


def test_params_read_floats_and_an_explicit_duration_wins():
    npusim.configure(trace=True)
    dev = npusim.Device("Ascend910B")
    t = dev.profile.timing
    s = dev.stream()
    x = dev.malloc(64)
    seen = []

    def cost(blocks, ptr, n, alpha):
        seen.append((blocks, ptr, n, alpha))
        return 100 * alpha

    plain.set_cost(cost)
    try:
        npusim.load_binary(plain)["plain"].launch(s, 3, (x, 7, 2.5))
        s.launch("EasyOPf", 1, (x,), duration_ns=777)       # no model: untouched
        s.synchronize()
        rows = _kernel_rows(dev)
        assert seen == [(3, int(x), 7, 2.5)]
        assert (rows["end"] - rows["start"]).tolist() == [t.sqe_dispatch_eager_ns + 250,
                                                          t.sqe_dispatch_eager_ns + 777]
    finally:
        plain.set_cost(None)


def test_a_failing_cost_model_refuses_the_launch_with_the_reason():
    dev = npusim.Device("Ascend910B")
    s = dev.stream()
    x = dev.malloc(64)
    plain.set_cost(lambda blocks, *a: 1 / 0)
    try:
        f = npusim.load_binary(plain)["plain"]
        with pytest.raises(npusim.AclError) as e:
            f.launch(s, 1, (x, 1, 1.0))
        assert e.value.code == 107000
        assert "cost model of kernel 'plain' raised ZeroDivisionError" in str(e.value)
    finally:
        plain.set_cost(None)


def test_set_kernel_cost_by_defined_name_and_reset_goes_back_to_the_declared_model():
    npusim.configure(trace=True)
    dev = npusim.Device("Ascend910B")
    t = dev.profile.timing
    s = dev.stream()
    x = dev.malloc(64).fill(0)
    f = npusim.load_binary(costed)["costed"]
    npusim.set_kernel_cost("costed", cost=lambda blocks, ptr, n: 5 * n)
    f.launch(s, 1, (x, 100))
    npusim.reset_kernel_cost("costed")
    f.launch(s, 1, (x, 100))
    f.set_cost(lambda blocks, ptr, n: 9)                   # a loaded Function
    f.launch(s, 1, (x, 100))
    npusim.reset_kernel_cost(f)
    s.synchronize()
    d = _kernel_rows(dev)
    assert (d["end"] - d["start"]).tolist() == [t.sqe_dispatch_eager_ns + v
                                                for v in (500, 1700, 9)]
