"""Parameter sweeps: run a function over a grid of points, each in a fresh simulator, in this
process or on a Dask cluster (one machine or many), and get a pandas DataFrame back.

This package is also the function: ``npusim.sweep(fn, grid=None, *, client=None, timeout=None,
**axes)`` calls
:func:`npusim.sweep.runner.sweep`. ``npusim sweep SCRIPT:FUNC --axis n=1,2,4`` is the command
(:mod:`npusim.cli.sweep`); ``npusim plan --simulate`` over several profiles/sizes runs on it
(:mod:`npusim.plan.sweep`); :mod:`.plot` draws the usual shapes. docs/sweep.md.

Modules: :mod:`.grid` (the points, their keys), :mod:`.point` (one point in a fresh
simulator: the row), :mod:`.runner` (serial / LocalCluster / scheduler, the DataFrame),
:mod:`.plot` (heat map, lines). dask, pandas and matplotlib are imported only when used.
"""
from __future__ import annotations

import sys
import types

from .grid import CONFIG_AXES, expand, point_key
from .plot import heatmap, lines
from .point import RESERVED, run_point
from .runner import SERIAL, connect, frame, run, sweep, workers_of_machine


class _SweepPackage(types.ModuleType):
    """``npusim.sweep(fn, grid=None, *, client=None, timeout=None, **axes)``: see
    :func:`.runner.sweep`."""

    def __call__(self, fn, grid=None, *, client=None, timeout=None, **axes):
        return sweep(fn, grid, client=client, timeout=timeout, **axes)


sys.modules[__name__].__class__ = _SweepPackage

__all__ = ["sweep", "run", "frame", "expand", "point_key", "run_point", "connect",
           "workers_of_machine", "CONFIG_AXES", "RESERVED", "SERIAL", "heatmap", "lines"]
