"""``npusim plan``: predict a capture plan with :mod:`npusim.plan` (optionally run it in the
simulator and compare). Several values of ``--profile``, ``--layers``, ``--tasks-per-layer``,
``--extra-streams``, ``--tp`` (comma lists) or several ``--sizes`` make a grid of plans: one
table row per plan, predicted and (``--simulate``) simulated as the points of a sweep
(:mod:`npusim.plan.sweep`, on ``--scheduler``). ``--tp N`` puts collectives in every layer
(``--collectives-per-layer``, ``--collective``, ``--collective-bytes``, ``--ranks-per-server``):
HCCL's side streams, SQEs, capture events and notifies count in every graph, and ``--simulate``
runs the plan on N devices."""
from __future__ import annotations

import argparse
import sys

from ..plan import compare, parse_sizes, plan, simulate
from ..plan.hccl import KINDS
from ..plan.sweep import check_many
from ..sweep import SERIAL
from .command import Command, profile_name

HELP = ("predict which capture/execute call of a capture plan fails (207005, 207008 ...) and how "
        "many graph sizes fit")


def _sizes(text: str) -> str:
    """argparse type: a capture-size list ``parse_sizes`` reads (kept as written)."""
    try:
        parse_sizes(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def _list(conv):
    """argparse type: one value or a comma list of them."""
    def parse(text: str) -> list:
        return [conv(v) for v in text.split(",") if v.strip()]
    parse.__name__ = conv.__name__          # argparse names the type in its error message
    return parse


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--profile", type=_list(profile_name), default=[None], metavar="NAME",
                   help="chip profile or alias (default: $NPUSIM_PROFILE or Ascend910B); a "
                        "comma list plans each")
    p.add_argument("--sizes", required=True, type=_sizes, action="append", metavar="LIST",
                   help="capture sizes: 1,2,4,...,512 or 1,2,4,8,16 or 8-256:8 (repeat the "
                        "option to plan several lists)")
    p.add_argument("--layers", type=_list(int), required=True,
                   help="hidden layers of the model (a comma list plans each)")
    p.add_argument("--tasks-per-layer", type=_list(int), default=[30], metavar="N",
                   help="tasks captured per layer segment (default 30; a comma list plans each)")
    p.add_argument("--extra-streams", type=_list(int), default=[0], metavar="E",
                   help="side streams joined into every graph (comm domains, extra streams; "
                        "a comma list plans each)")
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
    p.add_argument("--tp", type=_list(int), default=[1], metavar="N",
                   help="ranks: run the plan on N devices with one communicator over them and "
                        "the collectives below in every layer (default 1: no collectives; a "
                        "comma list plans each)")
    p.add_argument("--collectives-per-layer", type=int, default=2, metavar="K",
                   help="collectives per layer on the capturing stream when --tp > 1 "
                        "(default 2: attention and MLP AllReduce)")
    p.add_argument("--collective", default="all_reduce", choices=KINDS,
                   help="the collective (default all_reduce)")
    p.add_argument("--collective-bytes", type=int, default=4096, metavar="B",
                   help="bytes each rank sends per collective (default 4096)")
    p.add_argument("--ranks-per-server", type=int, default=8, metavar="R",
                   help="ranks per server: decides HCCL's algorithm (default 8)")
    p.add_argument("--budget", action="store_true", help="also print the profile's budget")
    p.add_argument("--simulate", action="store_true",
                   help="also run the plan in the simulator and compare (small plans)")
    p.add_argument("--scheduler", default="local", metavar="ADDR",
                   help="where a grid of plans is simulated: local (a LocalCluster, one worker "
                        "process per core; the default), serial (this process) or a Dask "
                        "scheduler address tcp://host:port")


def _hccl(args: argparse.Namespace) -> dict:
    """The plan's collectives (``plan``'s keywords)."""
    return dict(collectives_per_layer=args.collectives_per_layer,
                collective=args.collective, collective_bytes=args.collective_bytes,
                ranks_per_server=args.ranks_per_server)


def _grid(args: argparse.Namespace) -> int:
    """Several plans: a table, one row per plan; exit 1 if a simulation disagrees."""
    import pandas as pd                      # deferred: optional ([sweep] extra), slow
    options = dict(piecewise=not args.full, side_tasks=args.side_tasks,
                   fresh_streams=args.fresh_streams, sub_models=args.sub_models,
                   task_groups=args.task_groups, external_wait=args.external_wait,
                   passes=args.passes, **_hccl(args))
    axes = dict(profile=args.profile, sizes=args.sizes, layers=args.layers,
                tasks_per_layer=args.tasks_per_layer, extra_streams=args.extra_streams,
                tp=args.tp)
    client = {"local": None, SERIAL: SERIAL}.get(args.scheduler, args.scheduler) \
        if args.simulate else SERIAL        # predictions alone take microseconds
    df = check_many(axes, options, simulated=args.simulate, client=client)
    df = df.drop(columns=["wall_s", "worker"] + (["error_code", "error"] if
                                                  df["error"].isna().all() else []))
    with pd.option_context("display.max_rows", None, "display.max_columns", None,
                           "display.width", 250, "display.max_colwidth", 80):
        print(df.to_string(index=False))
    failed = int(df["error"].notna().sum()) if "error" in df.columns else 0
    if args.simulate:
        bad = int((~df["agree"].fillna(False).astype(bool)).sum())
        print(f"\n{len(df)} plans: " + ("prediction and simulation agree on all" if not bad
                                         else f"{bad} DIFFER"))
        return 1 if bad else 0
    return 1 if failed else 0


def run(args: argparse.Namespace) -> int:
    if not args.tp or min(args.tp) < 1 or args.collectives_per_layer < 0 \
            or args.collective_bytes < 1 or args.ranks_per_server < 1:
        print("npusim plan: --tp, --collective-bytes and --ranks-per-server must be >= 1, "
              "--collectives-per-layer >= 0", file=sys.stderr)
        return 2
    limits = [(tp, layers) for tp in args.tasks_per_layer for layers in args.layers]
    if any(args.task_groups > tp * (1 if not args.full else layers) for tp, layers in limits):
        print("npusim plan: --task-groups cannot exceed the tasks per graph", file=sys.stderr)
        return 2
    grid = [args.profile, args.sizes, args.layers, args.tasks_per_layer, args.extra_streams,
            args.tp]
    if any(len(v) > 1 for v in grid):
        return _grid(args)
    profile, sizes, layers, tasks_per_layer, extra_streams, tp = (v[0] for v in grid)
    sizes = parse_sizes(sizes)
    kw = dict(piecewise=not args.full, profile=profile, side_tasks=args.side_tasks,
              fresh_streams=args.fresh_streams, sub_models=args.sub_models,
              task_groups=args.task_groups, external_wait=args.external_wait,
              passes=args.passes, tp=tp, **_hccl(args))
    p = plan(sizes, layers, tasks_per_layer, extra_streams, **kw)
    if args.budget:
        print(p.budget)
        print()
    print(p.report())
    if args.simulate:
        s = simulate(sizes, layers, tasks_per_layer, extra_streams, **kw)
        print()
        print(s)
        diffs = compare(p, s)
        print("prediction and simulation agree" if not diffs else
              "DIFFERENCES:\n  " + "\n  ".join(diffs))
        return 1 if diffs else 0
    return 0


COMMAND = Command("plan", HELP, run, _arguments)
