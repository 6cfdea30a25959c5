"""``npusim plan``: predict a capture plan with :mod:`npusim.plan` (optionally run it in the
simulator and compare)."""
from __future__ import annotations

import argparse
import sys

from ..plan import compare, parse_sizes, plan, simulate
from .command import Command, profile_name

HELP = ("predict which capture/execute call of a capture plan fails (207005, 207008 ...) and how "
        "many graph sizes fit")


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--profile", type=profile_name, default=None, metavar="NAME",
                   help="chip profile or alias (default: $NPUSIM_PROFILE or Ascend910B)")
    p.add_argument("--sizes", required=True, type=parse_sizes, metavar="LIST",
                   help="capture sizes: 1,2,4,...,512 or 1,2,4,8,16 or 8-256:8")
    p.add_argument("--layers", type=int, required=True, help="hidden layers of the model")
    p.add_argument("--tasks-per-layer", type=int, default=30, metavar="N",
                   help="tasks captured per layer segment (default 30)")
    p.add_argument("--extra-streams", type=int, default=0, metavar="E",
                   help="side streams joined into every graph (comm domains, extra streams)")
    p.add_argument("--side-tasks", type=int, default=1, metavar="N",
                   help="tasks per side stream per graph (default 1)")
    p.add_argument("--full", action="store_true",
                   help="one full graph per size instead of layers + 1 piecewise graphs")
    p.add_argument("--fresh-streams", action="store_true",
                   help="create the side streams anew for every graph (never destroyed)")
    p.add_argument("--sub-models", type=int, default=0, metavar="N",
                   help="one-task cond sub-models per graph")
    p.add_argument("--task-groups", type=int, default=0, metavar="N",
                   help="task groups per graph (each adds the chip's prefetch NOPs)")
    p.add_argument("--external-wait", action="store_true",
                   help="every graph waits on an event the host records after launching all "
                        "graphs of the size (they must hold their SQ/CQ pairs at once)")
    p.add_argument("--passes", type=int, default=2, help="replay passes (default 2)")
    p.add_argument("--budget", action="store_true", help="also print the profile's budget")
    p.add_argument("--simulate", action="store_true",
                   help="also run the plan in the simulator and compare (small plans)")


def run(args: argparse.Namespace) -> int:
    kw = dict(piecewise=not args.full, profile=args.profile, side_tasks=args.side_tasks,
              fresh_streams=args.fresh_streams, sub_models=args.sub_models,
              task_groups=args.task_groups, external_wait=args.external_wait,
              passes=args.passes)
    if args.task_groups > args.tasks_per_layer * (1 if not args.full else args.layers):
        print("npusim plan: --task-groups cannot exceed the tasks per graph", file=sys.stderr)
        return 2
    p = plan(args.sizes, args.layers, args.tasks_per_layer, args.extra_streams, **kw)
    if args.budget:
        print(p.budget)
        print()
    print(p.report())
    if args.simulate:
        s = simulate(args.sizes, args.layers, args.tasks_per_layer, args.extra_streams, **kw)
        print()
        print(s)
        diffs = compare(p, s)
        print("prediction and simulation agree" if not diffs else
              "DIFFERENCES:\n  " + "\n  ".join(diffs))
        return 1 if diffs else 0
    return 0


COMMAND = Command("plan", HELP, run, _arguments)
