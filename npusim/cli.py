"""The ``npusim`` command (``python -m npusim ...``): demo, profiles, info.

Subcommands live in :data:`COMMANDS` (name -> :class:`Command`); a new one (``elf``, ``run`` ...)
is one :func:`command`-decorated function here or in its own module imported below, so
``main`` never changes. Each command's function takes the parsed ``argparse.Namespace`` and
returns the process exit code.
"""
from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from typing import Callable


@dataclass
class Command:
    name: str
    help: str
    run: Callable[[argparse.Namespace], int]
    add_arguments: Callable[[argparse.ArgumentParser], None] | None = None


COMMANDS: dict[str, Command] = {}


def command(name: str, help: str, add_arguments=None):
    """Register the decorated ``fn(args) -> int`` as subcommand ``name``."""
    def wrap(fn):
        COMMANDS[name] = Command(name, help, fn, add_arguments)
        return fn
    return wrap


def _profile_name(name: str) -> str:
    """argparse type: a profile name or alias, checked against the table."""
    from .profiles import get_profile
    try:
        return get_profile(name).name
    except KeyError as e:
        raise argparse.ArgumentTypeError(str(e.args[0])) from None


# ---- demo ----
def _demo_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--profile", type=_profile_name, default=None, metavar="NAME",
                   help="chip profile or alias (default: $NPUSIM_PROFILE or Ascend910B); "
                        "see `npusim profiles`")
    p.add_argument("--trace", default=None, metavar="OUT.json",
                   help="also write the device trace as Chrome/Perfetto JSON")


@command("demo", "run a small two-stream program, check it, print its simulated timeline",
         _demo_args)
def _demo(args) -> int:
    from . import demo
    return demo.run(profile=args.profile, trace_path=args.trace)


# ---- profiles ----
@command("profiles", "list the chip profiles and their key limits")
def _profiles(args) -> int:
    from .profiles import ALIASES, DEFAULT_PROFILE, PROFILES
    cols = (("profile", 14), ("SoC", 18), ("AIC", 5), ("AIV", 5), ("SQ depth", 9),
            ("tasks/SQ", 9), ("streams", 8), ("events", 7), ("notifies", 9), ("pad", 4),
            ("SW-SQ", 6), ("cond", 5))
    print("".join(f"{n:<{w}}" if i < 2 else f"{n:>{w}}" for i, (n, w) in enumerate(cols)))
    for p in PROFILES.values():
        cells = (p.name + ("*" if p.name == DEFAULT_PROFILE else ""), p.soc_version, p.aic_cores,
                 p.aiv_cores, p.rtsq_depth, p.max_task_num_per_stream, p.max_user_streams,
                 p.max_events, p.max_notifies, p.malloc_padding, "yes" if p.software_sq else "no",
                 "yes" if p.cond_supported else "no")
        print("".join(f"{str(c):<{w}}" if i < 2 else f"{str(c):>{w}}"
                      for i, (c, (_, w)) in enumerate(zip(cells, cols))))
    by_target: dict[str, list[str]] = {}
    for alias, target in ALIASES.items():
        by_target.setdefault(target, []).append(alias)
    print()
    print("* default.  aliases: " + "; ".join(f"{t} = {', '.join(a)}"
                                             for t, a in by_target.items()))
    print("streams = user streams per device (default streams included); pad = aclrtMalloc "
          "padding bytes;\nSW-SQ = capture on software SQs; cond = IF/WHILE/SWITCH tasks. "
          "Choose one with NPUSIM_PROFILE=NAME,\nnpusim.configure(profile=NAME) or "
          "npusim.Device(NAME); sources in npusim/profiles.py.")
    return 0


# ---- info ----
def _numba_cache_dir() -> str:
    import numba
    configured = numba.config.CACHE_DIR
    if configured:
        return f"{configured} (NUMBA_CACHE_DIR)"
    here = os.path.dirname(os.path.abspath(__file__))
    return f"{here}/**/__pycache__ (numba's default: next to the sources)"


@command("info", "version, numba cache location, the chip profile in force")
def _info(args) -> int:
    import numba
    import numpy

    from . import __version__
    from .device.kernels import TABLE
    from .runtime.api_device import profile
    p = profile()
    env = os.environ.get("NPUSIM_PROFILE")
    source = f"from NPUSIM_PROFILE={env}" if env else "the default; set NPUSIM_PROFILE to change"
    rows = (
        ("npusim", f"{__version__} ({os.path.dirname(os.path.abspath(__file__))})"),
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


# ---- entry point ----
def _run_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("script", help="the Python script to run under the simulator")
    p.add_argument("script_args", nargs=argparse.REMAINDER, help="arguments for the script")
    p.add_argument("--profile", type=_profile_name, default=None,
                   help="chip profile (default: NPUSIM_PROFILE or Ascend910B)")
    p.add_argument("--trace", metavar="OUT.json", default=None,
                   help="write the Chrome/Perfetto trace of every device here")
    p.add_argument("--plot", metavar="OUT.png", default=None,
                   help="also draw the device timeline (needs matplotlib)")


def _own_options_after_script(args) -> None:
    """``npusim run script.py --trace t.json``: take our options from after the script name
    too (everything after a ``--`` goes to the script untouched)."""
    rest, out = list(args.script_args), []
    while rest:
        a = rest.pop(0)
        if a == "--":
            out.extend(rest)
            break
        key = a.split("=", 1)[0]
        if key in ("--trace", "--profile", "--plot"):
            val = a.split("=", 1)[1] if "=" in a else (rest.pop(0) if rest else None)
            setattr(args, key[2:], _profile_name(val) if key == "--profile" else val)
        else:
            out.append(a)
    args.script_args = out


@command("run", "run a script under the simulator with tracing on and write the trace",
         _run_args)
def _run(args) -> int:
    """``npusim run script.py --trace out.json --profile Ascend950``: the script uses npusim (or
    its ``acl`` facade) as usual; the profile and tracing are configured before it starts."""
    import runpy

    import npusim as ns
    from .runtime.runtime import RT
    _own_options_after_script(args)
    ns.reset()
    ns.configure(profile=args.profile, trace=True)
    old_argv = sys.argv
    sys.argv = [args.script, *args.script_args]
    code = 0
    try:
        runpy.run_path(args.script, run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        sys.argv = old_argv
    for dev in list(RT.devices.values()):
        from .trace.chrome import Trace
        tr = Trace.from_device(dev)
        if args.trace:
            path = args.trace if len(RT.devices) == 1 else \
                args.trace.replace(".json", f".dev{dev.id}.json")
            tr.to_chrome(path)
            print(f"npusim: trace of device {dev.id} ({len(tr)} device tasks, "
                  f"{len(tr.host)} host calls) -> {path}", file=sys.stderr)
        if args.plot:
            from .trace.plot import timeline
            timeline(tr, path=args.plot)
            print(f"npusim: timeline -> {args.plot}", file=sys.stderr)
    return code


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="npusim", description="Simulator of the Ascend NPU runtime (ACL Graph + Kernel "
                                   "module). See README.md.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for c in COMMANDS.values():
        sp = sub.add_parser(c.name, help=c.help, description=c.help)
        if c.add_arguments is not None:
            c.add_arguments(sp)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Console script ``npusim`` and ``python -m npusim``; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return COMMANDS[args.command].run(args)
    except BrokenPipeError:                  # `npusim profiles | head`
        sys.stderr.close()
        return 0


# ---- commands that live in their own modules ----
from .kernel import cli_elf as _cli_elf  # noqa: E402

_cli_elf.register()

from . import plan as _plan  # noqa: E402

_plan.register()
