"""``npusim cabi --prefix DIR [--headers DIR]``: write a CANN-shaped install whose
``lib64/libascendcl.so`` forwards every ``acl*`` C function to the simulator (issue 39,
docs/cabi.md)."""
from __future__ import annotations

import argparse
import sys

from .command import Command


def _add(p: argparse.ArgumentParser) -> None:
    p.add_argument("--prefix", required=True,
                   help="the install directory (lib64/, include/, bin/setenv.bash ...)")
    p.add_argument("--headers", default=None,
                   help="an include directory holding acl/acl.h (a CANN install's include/) to "
                        "build against instead of npusim's own declarations")
    p.add_argument("-v", "--verbose", action="store_true", help="show the compiler's commands")


def run(args: argparse.Namespace) -> int:
    from ..cabi import build
    try:
        build.check_tools()
        prefix = build.install(args.prefix, args.headers, args.verbose)
    except RuntimeError as e:
        print(f"npusim cabi: {e}", file=sys.stderr)
        return 1
    print(f"npusim cabi: wrote {prefix}\n"
          f"  source {prefix}/bin/setenv.bash, then build the program against "
          f"{prefix}/include and {prefix}/lib64 (-lascendcl)")
    return 0


COMMAND = Command("cabi", "write a libascendcl-compatible C library and CANN-shaped install "
                          "over the simulator (docs/cabi.md)", run, _add)
