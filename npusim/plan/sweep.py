"""Many capture plans at once — several profiles, size lists, layer counts, extra streams —
predicted and (optionally) simulated, one sweep point per plan on :func:`npusim.sweep`'s
machinery (serially or on a Dask cluster): ``npusim plan --profile A2,310P --layers 24,48
--simulate``. Part of :mod:`npusim.plan`.
"""
from __future__ import annotations

from ..sweep import expand, frame, run
from .predict import parse_sizes, plan
from .simulation import compare, simulate


def check(sizes: str, layers: int, tasks_per_layer: int, extra_streams: int,
          profile: str | None = None, simulated: bool = False, tp: int = 1,
          **options) -> dict:
    """One plan as a sweep row: the prediction (first failing call, sizes that fit, builds per
    pass) and, when ``simulated``, the simulation's and whether the two agree. ``sizes`` is the
    text ``parse_sizes`` reads (so the table shows it as given); ``tp``: ranks (collectives in
    every layer, ``plan``'s HCCL keywords in ``options``)."""
    sz = parse_sizes(sizes)
    p = plan(sz, layers, tasks_per_layer, extra_streams, profile=profile, tp=tp, **options)
    row = {"predicted_failure": str(p.failure or "none"), "predicted_fit": p.fit_sizes,
           "sqcq_pairs_per_graph": p.cost.sqcq_pairs,
           "resident_sizes": p.resident_sizes,
           "predicted_builds": ",".join(map(str, p.builds))}
    if simulated:
        s = simulate(sz, layers, tasks_per_layer, extra_streams, profile=profile, tp=tp,
                     **options)
        diffs = compare(p, s)
        row.update(simulated_failure=str(s.failure or "none"), simulated_fit=s.fit_sizes,
                   simulated_builds=",".join(map(str, s.builds)), agree=not diffs,
                   differences="; ".join(diffs))
    return row


def check_many(axes: dict, options: dict, simulated: bool = False, client="serial"):
    """:func:`check` over the product of ``axes`` (``sizes``, ``layers``, ``tasks_per_layer``,
    ``extra_streams``, ``profile``, ``tp``: lists), with ``options`` (``plan``'s keywords) fixed; a
    DataFrame with one row per plan."""
    points = expand(None, axes)
    return frame(points, run(_Check(simulated, options), points, client, desc="plans"))


class _Check:
    """:func:`check` with the fixed options bound (picklable by reference for Dask workers)."""

    __slots__ = ("simulated", "options")

    def __init__(self, simulated: bool, options: dict):
        self.simulated, self.options = simulated, dict(options)

    def __call__(self, sizes: str, layers: int, tasks_per_layer: int, extra_streams: int,
                 profile: str | None = None, tp: int = 1) -> dict:
        return check(sizes, layers, tasks_per_layer, extra_streams, profile, self.simulated,
                     tp, **self.options)
