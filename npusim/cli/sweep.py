"""``npusim sweep SCRIPT:FUNC --axis name=v1,v2,... [--scheduler ADDR] [--out results.csv]
[--resume] [--timeout SECONDS]``: run a function of a script (or of an importable module) over
the cartesian product of the axes with :func:`npusim.sweep` and write one row per point.

``SCRIPT`` is a ``.py`` file, loaded without running its ``if __name__ == "__main__":`` block
(the function is sent to the workers by value, so remote workers need npusim but not the
script), or a module name (``npusim.trace.savings:compare``). Axis values are numbers where
they parse as numbers, else strings. ``--scheduler``: ``local`` (default: a LocalCluster of
one worker process per core), ``serial`` (this process) or a Dask scheduler's address.
``--out`` is rewritten as points complete (every couple of seconds and at the end), so an
interrupted sweep keeps what it finished; ``--resume`` runs only the points the file has no
successful row for (the rows kept are read back with the types of their own values: an integer
column stays integer). ``--timeout``: seconds a point may run; past it the point is a failed
row and the others complete. Exit code: 0 when every point succeeded, 1 when some failed, 2 for
usage. docs/sweep.md.
"""
from __future__ import annotations

import argparse
import importlib
import io
import os
import runpy
import sys
import time

from ..sweep import SERIAL, expand, frame, point_key, run, workers_of_machine
from .command import Command

HELP = "run a function over a grid of parameters, each point in a fresh simulator (Dask)"
SAVE_EVERY_S = 2.0


def _number_or_str(text: str):
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def axis(text: str) -> tuple[str, list]:
    """argparse type: ``name=v1,v2,...``."""
    name, sep, values = text.partition("=")
    vals = [v.strip() for v in values.split(",") if v.strip()]
    if not sep or not name.strip().isidentifier() or not vals:
        raise argparse.ArgumentTypeError(f"{text!r}: expected name=v1,v2,...")
    return name.strip(), [_number_or_str(v) for v in vals]


def load_function(target: str):
    """``SCRIPT.py:FUNC`` or ``module:FUNC`` -> the function (a script's directory is put first
    on ``sys.path``, as ``python SCRIPT.py`` has it, and left there for the sweep)."""
    where, sep, name = target.rpartition(":")
    if not sep or not where or not name:
        raise ValueError(f"{target!r}: expected SCRIPT.py:FUNC or module:FUNC")
    if where.endswith(".py") or os.path.sep in where or os.path.exists(where):
        if not os.path.isfile(where):
            raise ValueError(f"{where}: no such script")
        sys.path.insert(0, os.path.dirname(os.path.abspath(where)))
        ns = runpy.run_path(where, run_name="__npusim_sweep__")
    else:
        ns = vars(importlib.import_module(where))
    fn = ns.get(name)
    if not callable(fn):
        raise ValueError(f"{target!r}: {where} has no function {name!r}")
    return fn


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", metavar="SCRIPT:FUNC",
                   help="the function to sweep: path/to/script.py:func or module:func")
    p.add_argument("--axis", type=axis, action="append", default=[], metavar="NAME=V1,V2,...",
                   help="an axis of the sweep (repeat for more; the grid is their product); "
                        "profile=... and timing are applied to the simulator of each point")
    p.add_argument("--scheduler", default="local", metavar="ADDR",
                   help="local (a LocalCluster, one worker process per core; the default), "
                        "serial (in this process) or a Dask scheduler address tcp://host:port")
    p.add_argument("--out", default=None, metavar="results.csv",
                   help="write the rows here as CSV (default: print the table)")
    p.add_argument("--resume", action="store_true",
                   help="with --out: keep its successful rows and run only the other points")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="seconds one point may run; past it the point is a failed row "
                        "(TimeoutError) and the sweep goes on")


def _read_done(path: str, names: list[str]):
    """The rows of an earlier run that succeeded, and their point keys."""
    import pandas as pd                      # deferred: optional ([sweep] extra), slow
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return None, set()
    # read as text, keep the successful rows, then let pandas type each column from those
    # rows alone: a column of integers with an empty cell in a failed row would come back float
    text = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [n for n in names if n not in text.columns]
    if missing:
        raise ValueError(f"{path} has no column {', '.join(missing)}: not a run of these axes")
    if "error" in text.columns:
        text = text[text["error"] == ""]
    old = pd.read_csv(io.StringIO(text.to_csv(index=False)))
    for c in ("error_code",):             # nullable integer, as frame() makes it
        if c in old.columns:
            old[c] = old[c].astype("Int64")
    keys = {point_key(r, names) for r in old[names].to_dict("records")}
    return old, keys


def _write(path: str, old, df) -> None:
    import pandas as pd                      # deferred: optional ([sweep] extra), slow
    out = df if old is None else pd.concat([old, df], ignore_index=True)
    tmp = f"{path}.tmp"
    out.to_csv(tmp, index=False)
    os.replace(tmp, path)                    # never a half-written file


def run_command(args: argparse.Namespace) -> int:
    if not args.axis:
        print("npusim sweep: give at least one --axis NAME=V1,V2,...", file=sys.stderr)
        return 2
    if args.resume and not args.out:
        print("npusim sweep: --resume needs --out", file=sys.stderr)
        return 2
    if args.timeout is not None and not args.timeout > 0:
        print("npusim sweep: --timeout wants a positive number of seconds", file=sys.stderr)
        return 2
    axes = dict(args.axis)
    try:
        fn = load_function(args.target)
    except (ValueError, ImportError) as e:
        print(f"npusim sweep: {e}", file=sys.stderr)
        return 2
    points = expand(None, axes)
    names = list(axes)
    old, done = _read_done(args.out, names) if args.resume else (None, set())
    todo = [p for p in points if point_key(p, names) not in done]
    client = {"local": None, SERIAL: SERIAL}.get(args.scheduler, args.scheduler)
    where = (f"a local cluster of {workers_of_machine()} workers" if client is None else
             "this process" if client == SERIAL else args.scheduler)
    print(f"npusim sweep: {len(todo)} points on {where}" +
          (f" ({len(points) - len(todo)} already in {args.out})" if done else ""),
          file=sys.stderr)
    rows: list = [None] * len(todo)
    last = [time.monotonic()]

    def on_row(i: int, row: dict) -> None:
        rows[i] = row
        if args.out and time.monotonic() - last[0] >= SAVE_EVERY_S:
            _write(args.out, old, frame(todo, rows))
            last[0] = time.monotonic()

    t0 = time.perf_counter()
    interrupted = False
    try:
        run(fn, todo, client, on_row=on_row, timeout=args.timeout)
    except KeyboardInterrupt:
        interrupted = True
    except TypeError as e:                   # an axis the function does not take
        print(f"npusim sweep: {e}", file=sys.stderr)
        return 2
    df = frame(todo, rows)
    if args.out:
        _write(args.out, old, df)
    else:
        import pandas as pd                  # deferred: optional ([sweep] extra), slow
        with pd.option_context("display.max_rows", None, "display.max_columns", None,
                               "display.width", 200):
            print(df.to_string(index=False))
    failed = int(df["error"].notna().sum())
    print(f"npusim sweep: {len(df)} of {len(todo)} points in {time.perf_counter() - t0:.1f} s, "
          f"{failed} failed" + (f"; written to {args.out}" if args.out else ""), file=sys.stderr)
    if interrupted:
        return 130
    return 1 if failed else 0


COMMAND = Command("sweep", HELP, run_command, _arguments)
