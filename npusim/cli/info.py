"""``npusim info``: version, numba cache location, the chip profile in force, the kernels."""
from __future__ import annotations

import argparse
import os
import sys

import numba
import numpy

from .. import __version__
from ..device.kernels import TABLE
from ..runtime.api_device import profile
from .command import Command

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # npusim/


def _numba_cache_dir() -> str:
    configured = numba.config.CACHE_DIR
    if configured:
        return f"{configured} (NUMBA_CACHE_DIR)"
    return f"{_PACKAGE_DIR}/**/__pycache__ (numba's default: next to the sources)"


def run(args: argparse.Namespace) -> int:
    p = profile()
    env = os.environ.get("NPUSIM_PROFILE")
    source = f"from NPUSIM_PROFILE={env}" if env else "the default; set NPUSIM_PROFILE to change"
    rows = (
        ("npusim", f"{__version__} ({_PACKAGE_DIR})"),
        ("python", sys.version.split()[0]),
        ("numpy / numba", f"{numpy.__version__} / {numba.__version__}"),
        ("numba cache", _numba_cache_dir()),
        ("profile", f"{p.name} ({p.soc_version}, {p.chip_type}) - {source}"),
        ("cores", f"{p.aic_cores} AIC, {p.aiv_cores} AIV, {p.die_num} die(s)"),
        ("kernels", ", ".join(e.name for e in TABLE.entries)),
    )
    for k, v in rows:
        print(f"{k:<15}{v}")
    return 0


COMMAND = Command("info", "version, numba cache location, the chip profile in force", run)
