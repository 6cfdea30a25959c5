"""The simulated eager-vs-graph timeline matches the timing model's closed form exactly."""
import pytest

from npusim.profiles import get_profile
from npusim.trace import savings as S

CASES = [(1, 2_000), (32, 2_000), (100, 100), (50, 20_000)]


@pytest.mark.parametrize("profile", ["Ascend910B", "Ascend950", "Ascend310P"])
@pytest.mark.parametrize("n,k", CASES)
def test_straight_line_graph_matches_closed_form(profile, n, k):
    c = S.compare(n, k, profile)
    t = get_profile(profile).timing
    assert c.eager.device_end == S.predict_eager_end(t, n, k, c.eager.host_start)
    assert c.graph.device_end == S.predict_graph_end(t, n, k, c.graph.host_start)


def test_saved_cpu_time_is_launches_minus_one_execute():
    n, k = 32, 2_000
    c = S.compare(n, k)
    t = get_profile("Ascend910B").timing
    assert c.saved_cpu_ns == n * t.host_kernel_launch_ns - t.host_model_execute_ns


def test_graph_wins_when_launch_bound_and_loses_for_one_kernel():
    assert S.compare(100, 100).speedup > 5
    assert S.compare(1, 2_000).speedup < 1


def test_eager_vs_graph_figure_is_drawn(tmp_path):
    pytest.importorskip("matplotlib")
    from npusim.trace.plot import eager_vs_graph
    path = tmp_path / "eager_vs_graph.png"
    eager_vs_graph(n=8, kernel_ns=4_000, path=path)
    assert path.stat().st_size > 10_000


def test_roofline_cost_is_the_slower_of_compute_and_memory():
    import npusim as ns
    from npusim.device.kernels import KC_BODY_NS, TABLE  # noqa: F401
    ns.reset()
    ns.Device("Ascend910B")
    t = get_profile("Ascend910B").timing
    try:
        compute = ns.set_kernel_cost("VectorAddKernel", flops_per_block=8_000_000)
        assert compute == 8_000_000 // t.aiv_flops_per_ns
        memory = ns.set_kernel_cost("VectorAddKernel", flops_per_block=1, bytes_per_block=64_000)
        assert memory == 64_000 * 50 // t.hbm_bytes_per_ns
    finally:
        TABLE.set_cost(TABLE.id("VectorAddKernel"), 4_000)


def test_kernel_cost_constant_is_used_by_the_engine():
    import numpy as np
    import npusim as ns
    from npusim.device.kernels import KC_BODY_NS, TABLE  # noqa: F401
    ns.reset()
    dev = ns.Device("Ascend910B")
    s = dev.stream()
    x = dev.malloc(64).fill(0)
    kid = TABLE.id("EasyOPf")
    old = int(TABLE.cost[kid, KC_BODY_NS])
    try:
        ns.set_kernel_cost("EasyOPf", ns=123_456)
        ns.configure(trace=True)
        dev2 = ns.Device("Ascend910B")
        s.launch("EasyOPf", 1, (x,))
        s.synchronize()
        r = dev2.trace().rows
        k = r[r["op"] == 1][-1]
        t = get_profile("Ascend910B").timing
        assert k["end"] - k["start"] == t.sqe_dispatch_eager_ns + 123_456 + t.kernel_per_block_ns
        assert x.read(np.uint32, 1)[0] == 1
    finally:
        TABLE.set_cost(kid, old)
