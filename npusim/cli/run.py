"""``npusim run script.py [--trace OUT.json] [--profile NAME] [--plot OUT.png] [args]``: run a
script under the simulator with tracing on and write the trace of every device.

For the script, ``import acl`` is npusim's facade (``npusim.install_as_acl``): an unmodified
pyACL program runs as it is (docs/pyacl.md). The script's directory is first on ``sys.path``,
as ``python script.py`` has it, so its own helper modules import too. Both are undone after.
"""
from __future__ import annotations

import argparse
import os
import runpy
import sys

import npusim

from ..runtime.runtime import RT
from ..trace.chrome import Trace
from ..trace.plot import timeline
from .command import Command, profile_name

_OWN_OPTIONS = ("--trace", "--profile", "--plot")


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("script", help="the Python script to run under the simulator")
    p.add_argument("script_args", nargs=argparse.REMAINDER, help="arguments for the script")
    p.add_argument("--profile", type=profile_name, default=None,
                   help="chip profile (default: NPUSIM_PROFILE or Ascend910B)")
    p.add_argument("--trace", metavar="OUT.json", default=None,
                   help="write the Chrome/Perfetto trace of every device here")
    p.add_argument("--plot", metavar="OUT.png", default=None,
                   help="also draw the device timeline (needs matplotlib)")


def _own_options_after_script(args: argparse.Namespace) -> None:
    """``npusim run script.py --trace t.json``: take our options from after the script name
    too (everything after a ``--`` goes to the script untouched)."""
    rest, out = list(args.script_args), []
    while rest:
        a = rest.pop(0)
        if a == "--":
            out.extend(rest)
            break
        key = a.split("=", 1)[0]
        if key in _OWN_OPTIONS:
            val = a.split("=", 1)[1] if "=" in a else (rest.pop(0) if rest else None)
            setattr(args, key[2:], profile_name(val) if key == "--profile" else val)
        else:
            out.append(a)
    args.script_args = out


def run(args: argparse.Namespace) -> int:
    """The script uses npusim (or its ``acl`` facade) as usual; the profile and tracing are
    configured before it starts."""
    _own_options_after_script(args)
    npusim.reset()
    npusim.configure(profile=args.profile, trace=True)
    old_argv, old_path = sys.argv, list(sys.path)
    sys.argv = [args.script, *args.script_args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(args.script)))
    try:
        npusim.install_as_acl()
    except RuntimeError as e:          # a real acl is already imported: leave it alone
        print(f"npusim: {e}; the script's `import acl` is that module", file=sys.stderr)
    code = 0
    try:
        runpy.run_path(args.script, run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        sys.argv = old_argv
        sys.path[:] = old_path
        npusim.uninstall_as_acl()
    for dev in list(RT.devices.values()):
        tr = Trace.from_device(dev)
        if args.trace:
            path = args.trace if len(RT.devices) == 1 else \
                args.trace.replace(".json", f".dev{dev.id}.json")
            tr.to_chrome(path)
            print(f"npusim: trace of device {dev.id} ({len(tr)} device tasks, "
                  f"{len(tr.host)} host calls) -> {path}", file=sys.stderr)
        if args.plot:
            timeline(tr, path=args.plot)            # imports matplotlib (optional) itself
            print(f"npusim: timeline -> {args.plot}", file=sys.stderr)
    return code


COMMAND = Command("run", "run a script under the simulator with tracing on and write the trace",
                  run, _arguments)
