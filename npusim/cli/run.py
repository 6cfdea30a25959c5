"""``npusim run script.py [--trace OUT.json] [--profile NAME] [--plot OUT.png] [--explain]
[args]``: run a script under the simulator with tracing on and write the trace of every device
that ran, in one file (a process row per device, ``npusim.trace.world()``).

For the script, ``import acl`` is npusim's facade (``npusim.install_as_acl``): an unmodified
pyACL program runs as it is (docs/pyacl.md). The script's directory is first on ``sys.path``,
as ``python script.py`` has it, so its own helper modules import too. Both are undone after.

The script ends as under ``python``: ``sys.exit("message")`` prints the message on stderr and
exits 1; an exception propagates with its traceback (exit 1) — after the trace of what ran until
then is written. ``--explain`` prints on stderr, for every failed ``acl.*`` call, npusim's reason
(the text ``acl.get_recent_err_msg()`` returns, which the program can still read) and the
script's line that made the call: an unmodified program that never asks still shows why.
"""
from __future__ import annotations

import argparse
import os
import runpy
import sys
import traceback

import npusim

from ..runtime.runtime import ERROR_WATCHERS, RT
from ..trace.chrome import Trace, WorldTrace
from ..trace.plot import timeline
from .command import Command, profile_name

_OWN_OPTIONS = ("--trace", "--profile", "--plot")
_OWN_FLAGS = ("--explain",)
_NPUSIM_DIR = os.path.dirname(os.path.abspath(npusim.__file__))     # the package's own files


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("script", help="the Python script to run under the simulator")
    p.add_argument("script_args", nargs=argparse.REMAINDER, help="arguments for the script")
    p.add_argument("--profile", type=profile_name, default=None,
                   help="chip profile (default: NPUSIM_PROFILE or Ascend910B)")
    p.add_argument("--trace", metavar="OUT.json", default=None,
                   help="write the Chrome/Perfetto trace of every device here")
    p.add_argument("--plot", metavar="OUT.png", default=None,
                   help="also draw the device timeline (needs matplotlib)")
    p.add_argument("--explain", action="store_true",
                   help="print npusim's reason on stderr for every failed acl.* call")


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
        if a in _OWN_FLAGS:
            setattr(args, a[2:], True)
        elif key in _OWN_OPTIONS:
            val = a.split("=", 1)[1] if "=" in a else (rest.pop(0) if rest else None)
            setattr(args, key[2:], profile_name(val) if key == "--profile" else val)
        else:
            out.append(a)
    args.script_args = out


def _script_line(script: str) -> str:
    """`` (file:line)`` of the innermost caller outside npusim (the script's call), or ""."""
    for f in reversed(traceback.extract_stack()[:-2]):
        if not os.path.abspath(f.filename).startswith(_NPUSIM_DIR + os.sep) or \
                os.path.abspath(f.filename) == script:
            return f" ({os.path.basename(f.filename)}:{f.lineno})"
    return ""


def _explainer(script: str):
    """The ``ERROR_WATCHERS`` entry of ``--explain``: prints the reason, leaves it unread."""
    def explain(text: str) -> None:
        print(f"npusim: {text}{_script_line(script)}", file=sys.stderr, flush=True)
    return explain


def _from_script(tb, script: str):
    """The traceback from the script's first frame on (python's own traceback of the script
    starts there; runpy's and this module's frames are not the program's)."""
    t = tb
    while t is not None and os.path.abspath(t.tb_frame.f_code.co_filename) != script:
        t = t.tb_next
    return t if t is not None else tb


def _exit_code(e: SystemExit) -> int:
    """What ``python script.py`` exits with after ``sys.exit(e.code)``: None -> 0, an int as
    it is, anything else is printed on stderr and gives 1."""
    if e.code is None:
        return 0
    if isinstance(e.code, int):
        return e.code
    print(e.code, file=sys.stderr, flush=True)
    return 1


def run(args: argparse.Namespace) -> int:
    """The script uses npusim (or its ``acl`` facade) as usual; the profile and tracing are
    configured before it starts. An exception of the script is raised again once the trace
    is written."""
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
    explain = _explainer(os.path.abspath(args.script)) if getattr(args, "explain", False) \
        else None
    if explain is not None:
        ERROR_WATCHERS.append(explain)
    code, raised = 0, None
    try:
        runpy.run_path(args.script, run_name="__main__")
    except SystemExit as e:
        code = _exit_code(e)
    except BaseException as e:         # noqa: BLE001 -- raised again below, after the trace
        raised = e
    finally:
        sys.argv = old_argv
        sys.path[:] = old_path
        npusim.uninstall_as_acl()
        if explain is not None:
            ERROR_WATCHERS.remove(explain)
    _write_traces(args)
    if raised is not None:
        raise raised.with_traceback(_from_script(raised.__traceback__,
                                                 os.path.abspath(args.script)))
    return code


def _write_traces(args: argparse.Namespace) -> None:
    """One trace of the devices that ran: a single device's as before, several in one file
    (``npusim.trace.world()``: a process row per device, the host rows once); the plot
    likewise (one group of rows per device)."""
    devs = [d for d in RT.devices.values() if len(d.state.trace_rows())] or \
        list(RT.devices.values())[:1]
    if not devs:
        return
    tr = Trace.from_device(devs[0]) if len(devs) == 1 else WorldTrace.from_devices(devs)
    which = f"device {devs[0].id}" if len(devs) == 1 else \
        "devices " + ", ".join(str(d.id) for d in devs)
    if args.trace:
        tr.to_chrome(args.trace)
        print(f"npusim: trace of {which} ({len(tr)} device tasks, {len(tr.host)} host calls) "
              f"-> {args.trace}", file=sys.stderr)
    if args.plot:
        timeline(tr, path=args.plot)            # imports matplotlib (optional) itself
        print(f"npusim: timeline -> {args.plot}", file=sys.stderr)


COMMAND = Command("run", "run a script under the simulator with tracing on and write the trace",
                  run, _arguments)
