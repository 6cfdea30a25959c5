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
