"""Plots of the usual sweep shapes, from the DataFrame :func:`npusim.sweep` returns: a heat map of
one metric over two axes (:func:`heatmap`), and lines of a metric over one axis, one per value
of another (:func:`lines`; by default one per ``profile``). Failed points (``error`` set) are
left out. matplotlib is imported lazily (the ``[plot]`` extra). Part of :mod:`npusim.sweep`.
"""
from __future__ import annotations


def _plt():
    import matplotlib          # deferred: optional (the [plot] extra), and slow to import
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    return plt


def _ok(df):
    return df[df["error"].isna()] if "error" in df.columns else df


def heatmap(df, x: str, y: str, value: str, *, agg: str = "mean", ax=None, path=None,
            fmt: str = "{:.2g}", cmap: str = "viridis", title: str | None = None):
    """``value`` over axes ``x`` (columns) and ``y`` (rows), aggregated with ``agg`` over the
    other axes (e.g. ``"mean"``, ``"max"``), each cell labelled with ``fmt``. Returns the
    figure (saved to ``path`` when given)."""
    plt = _plt()
    table = _ok(df).pivot_table(index=y, columns=x, values=value, aggfunc=agg).sort_index()
    table = table.reindex(sorted(table.columns), axis=1)
    if ax is None:
        fig, ax = plt.subplots(figsize=(1.0 + 0.75 * len(table.columns),
                                        1.2 + 0.45 * len(table.index)))
    else:
        fig = ax.figure
    im = ax.imshow(table.to_numpy(dtype=float), cmap=cmap, aspect="auto", origin="lower")
    ax.set_xticks(range(len(table.columns)), [str(c) for c in table.columns])
    ax.set_yticks(range(len(table.index)), [str(r) for r in table.index])
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    vals = table.to_numpy(dtype=float)
    lo, hi = float(vals.min()), float(vals.max())
    for i in range(vals.shape[0]):
        for j in range(vals.shape[1]):
            v = vals[i, j]
            if v == v:                       # not NaN
                dark = hi > lo and (v - lo) / (hi - lo) < 0.5
                ax.text(j, i, fmt.format(v), ha="center", va="center", fontsize=7,
                        color="white" if dark else "black")
    fig.colorbar(im, ax=ax, label=value)
    ax.set_title(title or f"{value} ({agg} over the other axes)")
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=110)
    return fig


_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
_STYLES = ("-", "--", "-.", ":")


def lines(df, x: str, value: str, *, by: str | None = "profile", agg: str = "mean", ax=None,
          path=None, logx: bool = False, title: str | None = None):
    """``value`` over axis ``x``, one line per value of ``by`` (``None``: one line), aggregated
    with ``agg`` over the other axes. Returns the figure (saved to ``path`` when given).

    Lines that coincide stay visible: each has its own marker (shrinking from line to line, so
    a point shared by several shows every marker) and dash style, and a line equal to an
    earlier one at every point is drawn a few points higher and labelled ``"B (= A)"`` in the
    legend."""
    import numpy as np
    from matplotlib.transforms import offset_copy   # deferred with matplotlib (see _plt)
    plt = _plt()
    d = _ok(df)
    if ax is None:
        fig, ax = plt.subplots(figsize=(7, 4))
    else:
        fig = ax.figure
    groups = [(None, d)] if by is None else sorted(d.groupby(by), key=lambda g: str(g[0]))
    drawn: list = []                                # (label, x values, y values) so far
    for i, (key, g) in enumerate(groups):
        s = g.groupby(x)[value].agg(agg).sort_index()
        xs, ys = s.index.to_numpy(), s.to_numpy(dtype=float)
        label = None if key is None else str(key)
        same = [lab for lab, px, py in drawn if len(px) == len(xs) and (px == xs).all()
                and np.allclose(py, ys, rtol=1e-9, atol=0.0, equal_nan=True)]
        transform = ax.transData
        if same:                                    # hidden under an equal line: lift it
            transform = offset_copy(ax.transData, fig=fig, y=3.0 * len(same), units="points")
            label = f"{label} (= {same[0]})" if label is not None else label
        ax.plot(xs, ys, marker=_MARKERS[i % len(_MARKERS)], ls=_STYLES[i % len(_STYLES)],
                markersize=max(3.5, 8.0 - 1.5 * i), label=label, transform=transform)
        drawn.append((str(key), xs, ys))
    if logx:
        ax.set_xscale("log", base=2)
    ax.set_xlabel(x)
    ax.set_ylabel(value)
    if by is not None:
        ax.legend(title=by)
    ax.set_title(title or f"{value} over {x}" + (f" per {by}" if by else ""))
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=110)
    return fig
