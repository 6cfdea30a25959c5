"""Where the points run: this process (``client="serial"``), a Dask ``LocalCluster`` of worker
processes sized to the machine (``client=None``), or a running Dask scheduler (a
``distributed.Client`` or its address). Rows come back as points complete, in any order, and
are put back in the grid's order. Part of :mod:`npusim.sweep`; docs/sweep.md.

dask and pandas are imported only when a sweep runs (``import npusim`` does not pay for them).
"""
from __future__ import annotations

import contextlib
import inspect
import logging
import os
import time
from collections.abc import Callable

import numpy as np

from ..progress import Progress
from .grid import CONFIG_AXES, axis_names, expand
from .point import RESERVED, PointProcess, run_point, run_points, run_points_timed

SERIAL = "serial"


def passed_axes(fn, point: dict) -> tuple[str, ...]:
    """The axes of ``point`` handed to ``fn``: all of them if it takes ``**kwargs``; else those
    it names. A configuration axis (``profile``, ``timing``) it does not name is only applied to
    the simulator; any other axis it does not take is a ``TypeError`` (before anything runs)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):          # a builtin without a signature: hand everything
        return tuple(point)
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return tuple(point)
    takes = {n for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    extra = [k for k in point if k not in takes and k not in CONFIG_AXES]
    if extra:
        raise TypeError(f"sweep: {fn!r} takes no argument "
                        f"{', '.join(map(repr, extra))} (an axis of the sweep)")
    return tuple(k for k in point if k in takes)


def workers_of_machine() -> int:
    """Worker processes of the default local cluster: the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:                   # not on Linux
        return max(1, os.cpu_count() or 1)


@contextlib.contextmanager
def connect(client):
    """A ``distributed.Client`` for ``client`` (None: a new LocalCluster, closed on exit; an
    address: a client of that scheduler, closed on exit; a Client: itself, left open)."""
    from distributed import Client, LocalCluster   # deferred: optional ([sweep] extra), slow
    if isinstance(client, Client):
        yield client
        return
    if client is None:
        with LocalCluster(n_workers=workers_of_machine(), threads_per_worker=1, processes=True,
                          dashboard_address=None, silence_logs=logging.ERROR,
                          env={"NPUSIM_PROGRESS": "0"}) as cluster, Client(cluster) as c:
            yield c
        return
    if isinstance(client, str):
        with Client(client) as c:
            yield c
        return
    raise TypeError(f"sweep: client must be None, 'serial', an address or a distributed.Client, "
                    f"not {type(client).__name__}")


def _failed_row(exc: BaseException) -> dict:
    """The row of a point whose task itself failed (its worker died, its result did not
    pickle ...): the point is lost, the sweep is not."""
    return {"error_code": None, "error": f"{type(exc).__name__}: {exc}", "wall_s": float("nan"),
            "worker": None}


def chunk_size(points: int, slots: int, per_slot: int = 8) -> int:
    """Points per task on a cluster of ``slots`` worker threads: about ``per_slot`` tasks per
    slot (enough to balance uneven points; fewer round trips than one task per point)."""
    return max(1, -(-points // max(1, slots * per_slot)))


def _timeout(timeout) -> float | None:
    if timeout is None:
        return None
    t = float(timeout)
    if not t > 0:
        raise ValueError(f"sweep: timeout must be a positive number of seconds, not {timeout!r}")
    return t


def run(fn: Callable, points: list[dict], client=None, *,
        on_row: Callable[[int, dict], None] | None = None, chunk: int | None = None,
        desc: str = "sweep", timeout: float | None = None) -> list[dict]:
    """Run ``fn`` at every point; returns the rows (without the axes), in the points' order.
    ``on_row(index, row)`` hears of each as it completes; on a cluster ``chunk`` points share
    one task (default :func:`chunk_size`; 1 with a timeout). ``timeout``: seconds a point may
    run; past it the point is a failed row and the sweep goes on (serial: the points run in a
    worker process, killed and replaced on a timeout; cluster: the Dask worker is restarted;
    docs/sweep.md)."""
    timeout = _timeout(timeout)
    passed = [passed_axes(fn, p) for p in points]
    rows: list[dict | None] = [None] * len(points)
    bar = Progress(desc, "points", total=len(points))

    def done(i: int, row: dict) -> None:
        rows[i] = row
        bar.update(1)
        if on_row is not None:
            on_row(i, row)

    try:
        if client == SERIAL and timeout is None:
            for i, (p, k) in enumerate(zip(points, passed)):
                done(i, run_point(fn, p, k))
        elif client == SERIAL:
            worker = PointProcess(fn)
            try:
                for i, (p, k) in enumerate(zip(points, passed)):
                    done(i, worker.run(p, k, timeout))
            finally:
                worker.close()
        elif points:
            import cloudpickle                  # deferred: comes with dask ([sweep] extra)
            from distributed import as_completed   # deferred: optional ([sweep] extra), slow
            blob = cloudpickle.dumps(fn)        # once: each task carries these bytes
            with connect(client) as c:
                size = chunk or (1 if timeout is not None else
                                 chunk_size(len(points), sum(c.nthreads().values())))
                futures = {}
                for s in range(0, len(points), size):
                    idx = list(range(s, min(s + size, len(points))))
                    pts, ks = [points[i] for i in idx], [passed[i] for i in idx]
                    f = c.submit(run_points, blob, pts, ks, pure=False) if timeout is None \
                        else c.submit(run_points_timed, blob, pts, ks, timeout, pure=False)
                    futures[f] = idx
                try:
                    for f, out in as_completed(futures, with_results=True, raise_errors=False):
                        idx = futures[f]
                        if f.status == "error":       # a lost task is its rows
                            exc = out[1] if isinstance(out, tuple) else out   # (typ, exc, tb)
                            out = [_failed_row(exc)] * len(idx)
                        elif not isinstance(out, list):
                            out = [_failed_row(RuntimeError(f"task {f.status}"))] * len(idx)
                        if timeout is not None:
                            # its result is taken: forget it, or a worker restart would make
                            # the scheduler run it again (a hung point: hang again)
                            c.cancel([f])
                        for i, row in zip(idx, out):
                            hung = row.pop("_restart", None)
                            if hung is not None:      # its thread still runs the point
                                _restart(c, hung)
                            done(i, row)
                finally:
                    c.cancel([f for f in futures if not f.done()])
    finally:
        bar.close()
    return rows


def _restart(c, address: str) -> None:
    """Restart the Dask worker whose point ran past the timeout (its thread cannot be stopped);
    the points it would have taken meanwhile were rescheduled."""
    try:
        c.restart_workers([address], raise_for_error=False)
    except Exception:                        # noqa: BLE001  (a worker without a nanny ...)
        logging.getLogger(__name__).warning("sweep: could not restart worker %s", address)


def _int_column(values: list) -> bool:
    """Integers (no bool) with at least one missing value: a nullable ``Int64`` column, which
    stays integer in the DataFrame and in its CSV (pandas makes such a column float)."""
    present = [v for v in values if v is not None]
    return bool(present) and len(present) < len(values) and all(
        isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) and
        -2 ** 63 <= int(v) < 2 ** 63 for v in present)


def frame(points: list[dict], rows: list[dict | None]):
    """The DataFrame of a sweep: one row per point (points not run are left out), the axes,
    the function's results (first-seen order), then ``error_code`` (nullable int), ``error``,
    ``wall_s``, ``worker``."""
    import pandas as pd                      # deferred: optional ([sweep] extra), slow
    names = axis_names(points)
    results: dict[str, None] = {}
    for r in rows:
        if r is not None:
            results.update(dict.fromkeys(k for k in r if k not in RESERVED))
    cols = names + list(results) + list(RESERVED)
    keep = [i for i, r in enumerate(rows) if r is not None]
    df = pd.DataFrame([{**points[i], **rows[i]} for i in keep], columns=cols, index=keep)
    df["error_code"] = df["error_code"].astype("Int64")
    for c in list(results):                  # results missing in failed rows stay integers
        values = [rows[i].get(c) for i in keep]
        if _int_column(values):
            df[c] = pd.array([None if v is None else int(v) for v in values], dtype="Int64")
    return df


def sweep(fn: Callable, grid=None, *, client=None, timeout=None, **axes):
    """Run ``fn(**point)`` at every point and return a pandas DataFrame, one row per point.

    The points are the cartesian product of ``axes`` (``name=[values]``; a single value is a
    fixed argument) or ``grid``, an explicit list of dicts. Each runs in a fresh simulator:
    ``npusim.reset()``, then a ``profile`` / ``timing`` axis configures it (and is passed to
    ``fn`` only if ``fn`` takes it), the global random generators seeded from the point.

    ``fn`` returns a dict (its keys become columns), a dataclass (its fields), another value (a
    ``result`` column) or — pyACL style — an int ACL error code. A point that raises (an
    ``AclError`` gives its code) or returns a non-zero code gets ``error_code`` / ``error`` in
    its row; the other points run on. Columns: the axes, the results, ``error_code``,
    ``error``, ``wall_s`` (wall time of the point), ``worker``.

    ``client``: ``None`` — a Dask LocalCluster of one single-threaded worker process per core,
    closed afterwards; ``"serial"`` — in this process; a ``distributed.Client`` or a scheduler
    address (``"tcp://host:8786"``) — that cluster. A progress bar is shown on a terminal.

    ``timeout``: seconds one point may run (None: no limit). A point past it is a failed row
    (``error`` "TimeoutError: ...") and the others complete: serially the points then run in a
    worker process of their own, killed and replaced on a timeout; on a cluster each point is a
    task, and the worker of a point past its timeout is restarted. (``client`` and
    ``timeout`` are not axis names: give such an axis in ``grid``.)
    """
    points = expand(grid, axes)
    return frame(points, run(fn, points, client, timeout=timeout))
