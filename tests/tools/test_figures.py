"""Figures stay readable (issue 37 item 5): the eager-vs-graph labels cover no bar, and lines of a
sweep plot that coincide stay visible (their own markers, lifted, named in the legend)."""
import pytest

pytest.importorskip("matplotlib")

import numpy as np  # noqa: E402

from npusim.trace.plot import eager_vs_graph  # noqa: E402


def _bar_boxes(fig, ax):
    """Display-space boxes of every bar drawn with broken_barh."""
    fig.canvas.draw()
    boxes = []
    for coll in ax.collections:
        for path in coll.get_paths():
            boxes.append(path.transformed(ax.transData).get_extents())
    return boxes


@pytest.mark.parametrize("n, kernel_ns", [(16, 4_000), (4, 500), (64, 1_000), (1, 500)])
def test_the_saved_time_labels_cover_no_bar(n, kernel_ns):
    fig = eager_vs_graph(n=n, kernel_ns=kernel_ns)
    ax = fig.axes[0]
    bars = _bar_boxes(fig, ax)
    labels = [t for t in ax.texts if t.get_text().startswith("saved ")]
    assert {t.get_text().split(" time")[0] for t in labels} == {"saved CPU", "saved NPU"}
    renderer = fig.canvas.get_renderer()
    for t in labels:
        box = t.get_window_extent(renderer)
        hits = [b for b in bars if box.overlaps(b)]
        assert not hits, f"{t.get_text()!r} is drawn over {len(hits)} bar(s)"
    legend = ax.get_legend().get_window_extent(renderer)
    assert not [b for b in bars if legend.overlaps(b)], "the legend covers a bar"


def test_coinciding_sweep_lines_are_marked_lifted_and_named():
    pd = pytest.importorskip("pandas")
    import npusim.sweep as sw
    rows = [dict(profile=p, n=n, speedup=f * (1 + n ** 0.5))
            for p, f in [("A2", 1.0), ("A3", 1.0), ("950", 0.8)] for n in (1, 4, 16)]
    fig = sw.lines(pd.DataFrame(rows), "n", "speedup", logx=True)
    ax = fig.axes[0]
    fig.canvas.draw()
    by_label = {ln.get_label(): ln for ln in ax.lines}
    assert set(by_label) == {"950", "A2", "A3 (= A2)"}
    assert len({ln.get_marker() for ln in ax.lines}) == 3
    a2, a3 = by_label["A2"], by_label["A3 (= A2)"]
    assert np.array_equal(a2.get_ydata(), a3.get_ydata())           # the data is not changed
    y2 = a2.get_transform().transform(a2.get_xydata())[:, 1]
    y3 = a3.get_transform().transform(a3.get_xydata())[:, 1]
    assert (y3 - y2 > 1).all()                                       # drawn visibly apart
    assert by_label["950"].get_transform().transform(
        by_label["950"].get_xydata()).shape == (3, 2)
