"""``npusim demo``: the two-stream demo program (:mod:`npusim.demo`)."""
from __future__ import annotations

import argparse

from .. import demo
from .command import Command, profile_name


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--profile", type=profile_name, default=None, metavar="NAME",
                   help="chip profile or alias (default: $NPUSIM_PROFILE or Ascend910B); "
                        "see `npusim profiles`")
    p.add_argument("--trace", default=None, metavar="OUT.json",
                   help="also write the device trace as Chrome/Perfetto JSON")


def run(args: argparse.Namespace) -> int:
    return demo.run(profile=args.profile, trace_path=args.trace)


COMMAND = Command("demo", "run a small two-stream program, check it, print its simulated "
                          "timeline", run, _arguments)
