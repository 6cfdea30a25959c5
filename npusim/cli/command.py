"""What every ``npusim`` subcommand is: a :class:`Command` (name, help, argument declarations,
handler), declared as ``COMMAND`` in its module under :mod:`npusim.cli` and listed once in
:data:`npusim.cli.COMMANDS`; and the argument types several commands share.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Callable

from ..profiles import get_profile


@dataclass(frozen=True)
class Command:
    """One subcommand. ``run(args)`` takes the parsed ``argparse.Namespace`` and returns the
    process exit code; ``add_arguments(parser)`` declares its options."""
    name: str
    help: str
    run: Callable[[argparse.Namespace], int]
    add_arguments: Callable[[argparse.ArgumentParser], None] | None = None

    def add_to(self, subparsers) -> argparse.ArgumentParser:
        """Add this command to an argparse subparsers object (``npusim``'s own, or another
        program's); its handler is then also ``args.func``."""
        p = subparsers.add_parser(self.name, help=self.help, description=self.help)
        if self.add_arguments is not None:
            self.add_arguments(p)
        p.set_defaults(func=self.run)
        return p


def profile_name(name: str) -> str:
    """argparse type: a profile name or alias, checked against the table."""
    try:
        return get_profile(name).name
    except KeyError as e:
        raise argparse.ArgumentTypeError(str(e.args[0])) from None
