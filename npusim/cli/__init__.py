"""The ``npusim`` command (``python -m npusim ...``): demo, profiles, info, run, elf, plan, sweep,
cabi.

The top of the layer order: this package imports the simulator, nothing in the simulator imports
it. One module per subcommand, each declaring ``COMMAND``, a :class:`~npusim.cli.command.Command`
(name, help, argument declarations, handler ``run(args) -> exit code``); :data:`COMMANDS` lists
them once, and :func:`main` never changes when a command is added.

Importing this package imports ``npusim`` (its ``__init__`` loads the simulator); a command that
needs a heavy optional package (matplotlib, dask, pandas) imports it only when it runs.
"""
from __future__ import annotations

import argparse
import sys

from . import cabi, demo, elf, info, plan, profiles, run, sweep
from .command import Command

COMMANDS: dict[str, Command] = {c.name: c for c in (
    demo.COMMAND, profiles.COMMAND, info.COMMAND, run.COMMAND, elf.COMMAND, plan.COMMAND,
    sweep.COMMAND, cabi.COMMAND)}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="npusim", description="Simulator of the Ascend NPU runtime (ACL Graph + Kernel "
                                   "module). See README.md.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for c in COMMANDS.values():
        c.add_to(sub)
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


__all__ = ["main", "build_parser", "COMMANDS", "Command"]
