"""The points of a sweep: the cartesian product of named axes, or an explicit list of dicts; and
the key that says two points are the same (``npusim sweep --resume`` matches the rows of a CSV
file, whose numbers come back as ``int64``/``float64`` and whose strings come back as ``str``).
Part of :mod:`npusim.sweep`.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping

CONFIG_AXES = ("profile", "timing")
"""Axes that configure the simulator before the point runs (``npusim.configure(profile=...,
timing=...)``); passed on to the function too when its signature takes them."""


def _values(name: str, v) -> list:
    if isinstance(v, (str, bytes, Mapping)) or not isinstance(v, Iterable):
        return [v]                           # a fixed value: an axis of one point
    vals = list(v)
    if not vals:
        raise ValueError(f"sweep axis {name!r} has no values")
    return vals


def expand(grid=None, axes: Mapping | None = None) -> list[dict]:
    """The points, in order: ``grid`` (a list of dicts, each one point) or the cartesian product
    of ``axes`` (name -> values; the last axis varies fastest, as in ``itertools.product``)."""
    axes = dict(axes or {})
    if grid is not None:
        if axes:
            raise TypeError("sweep: give an explicit grid or axes, not both")
        pts = []
        for i, p in enumerate(grid):
            if not isinstance(p, Mapping):
                raise TypeError(f"sweep grid entry {i} is {type(p).__name__}, not a dict")
            pts.append(dict(p))
        return pts
    if not axes:
        raise TypeError("sweep: no axes (give name=values keywords or grid=[{...}, ...])")
    names = list(axes)
    return [dict(zip(names, combo))
            for combo in itertools.product(*(_values(n, axes[n]) for n in names))]


def axis_names(points: list[dict]) -> list[str]:
    """Every axis named by some point, in first-seen order."""
    seen: dict[str, None] = {}
    for p in points:
        seen.update(dict.fromkeys(p))
    return list(seen)


def _norm(v):
    """A value as the CSV round trip sees it: integral numbers as int, other numbers as float,
    missing values as None, the rest as their ``str``."""
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, str):
        try:
            v = float(v)
        except ValueError:
            return v
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    if math.isnan(f):
        return None
    return int(f) if f.is_integer() else f


def point_key(point: Mapping, names: list[str]) -> tuple:
    """The identity of a point over ``names`` (the same for ``8``, ``8.0`` and ``"8"``)."""
    return tuple(_norm(point.get(n)) for n in names)
