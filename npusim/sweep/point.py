"""One sweep point, run where the scheduler puts it (this process, or a Dask worker): a fresh
simulator, its own configuration, the function, and a row that says what happened. Part of
:mod:`npusim.sweep`.

A point starts from ``npusim.reset()`` (devices, handles, options, injections gone: like a new
process), then ``npusim.configure(profile=..., timing=...)`` from its ``profile`` / ``timing``
axes, and seeds Python's and numpy's global random generators from the point itself; kernel
costs set by ``npusim.set_kernel_cost`` are put back afterwards. So a row depends only on its
point — not on which worker ran it, nor what ran there before.

A point may have a timeout (``npusim.sweep(..., timeout=s)``): past it the point is a failed row
(``error`` "TimeoutError: ...") and the sweep goes on. A hung point cannot be stopped inside
the process that runs it (a thread cannot be killed, and it may hold the runtime lock), so the
point runs where it can be thrown away: in this process's serial sweep, a worker process
(:class:`PointProcess`) killed and replaced on a timeout; on a cluster, a thread of the Dask
worker (:func:`run_points_timed`), which then takes no other point (they are rescheduled) until
the runner restarts it.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import pickle
import random
import socket
import threading
import time
import zlib
from collections.abc import Mapping

import numpy as np

from ..api import Device, configure, reset
from ..device.kernels import TABLE
from ..errors import BY_VALUE, AclError
from .grid import CONFIG_AXES

RESERVED = ("error_code", "error", "wall_s", "worker")
"""The columns every row has besides the axes and the function's results."""


def seed_of(point: Mapping) -> int:
    """A 32-bit seed from the point's items (stable across processes and machines)."""
    return zlib.crc32(repr(sorted((str(k), repr(v)) for k, v in point.items())).encode())


def _results(out, taken: set) -> dict:
    """The function's return value as columns (a dict's keys; a dataclass's fields; else one
    ``result``); a name that is an axis or a reserved column gets ``_result`` appended."""
    if dataclasses.is_dataclass(out) and not isinstance(out, type):
        out = {f.name: getattr(out, f.name) for f in dataclasses.fields(out)}  # declared fields
    if not isinstance(out, Mapping):
        return {"result": out}
    return {(f"{k}_result" if k in taken else str(k)): v for k, v in out.items()}


def run_point(fn, point: dict, passed: tuple[str, ...]) -> dict:
    """Run ``fn(**{k: point[k] for k in passed})`` in a fresh simulator; returns the point's row
    (without the axes): the results, ``error_code`` (the ACL code of an ``AclError``, of a
    non-zero returned code, of ``SystemExit(code)``; ``None`` for other exceptions), ``error``
    (the message), ``wall_s`` and ``worker`` (host:pid)."""
    row: dict = {"error_code": None, "error": None}
    saved = TABLE.saved_costs()
    t0 = time.perf_counter()
    try:
        reset()
        cfg = {k: point[k] for k in CONFIG_AXES if point.get(k) is not None}
        if cfg:
            configure(**cfg)
        seed = seed_of(point)
        random.seed(seed)
        np.random.seed(seed)
        out = fn(**{k: point[k] for k in passed})
        if isinstance(out, (int, np.integer)) and not isinstance(out, (bool, np.bool_)) \
                and out != 0 and int(out) in BY_VALUE:
            row["error_code"], row["error"] = int(out), str(AclError(int(out)))  # a status
        else:
            row.update(_results(out, set(point) | set(RESERVED)))
    except AclError as e:
        row["error_code"], row["error"] = e.code, str(e)
    except SystemExit as e:                  # a script's sys.exit(code)
        row["error_code"] = e.code if isinstance(e.code, int) else None
        row["error"] = f"SystemExit: {e.code}"
    except Exception as e:                   # noqa: BLE001  (the point's failure is its row)
        row["error"] = f"{type(e).__name__}: {e}"
    finally:
        row["wall_s"] = time.perf_counter() - t0
        reset()
        TABLE.restore_costs(saved)
    row["worker"] = f"{socket.gethostname()}:{os.getpid()}"
    return row


_LOADED: dict[bytes, object] = {}
"""Functions unpickled in this worker, by their pickle's digest (each task carries the bytes;
unpickling a function sent by value runs once per worker)."""


def run_points(blob: bytes, points: list[dict], passed: list[tuple[str, ...]]) -> list[dict]:
    """A task of a cluster sweep: the function (``cloudpickle`` bytes) at several points; their
    rows, in order."""
    fn = _loaded(blob)
    import cloudpickle                      # deferred: a cluster task only (comes with dask)
    rows = [run_point(fn, p, k) for p, k in zip(points, passed)]
    return [_sendable(row, cloudpickle.dumps) for row in rows]


def timeout_row(timeout: float, wall_s: float, how: str) -> dict:
    """The row of a point that ran past ``timeout`` seconds."""
    return {"error_code": None, "wall_s": wall_s, "worker": None,
            "error": f"TimeoutError: the point ran past the sweep's timeout of {timeout:g} s; "
                     f"{how}"}


def _loaded(blob: bytes):
    """The function a task carries (its pickle ``blob``), unpickled once per worker."""
    digest = hashlib.sha1(blob).digest()
    fn = _LOADED.get(digest)
    if fn is None:
        fn = _LOADED[digest] = pickle.loads(blob)
    return fn


def _sendable(row: dict, dumps=pickle.dumps) -> dict:
    """``row``, or its bookkeeping with the reason when its results do not pickle (with
    ``dumps``: ``pickle`` for a worker process's pipe, ``cloudpickle`` for Dask's scheduler)."""
    try:
        dumps(row)
        return row
    except Exception as e:                   # noqa: BLE001  (a result no process can receive)
        keep = {k: row[k] for k in RESERVED}
        return {**keep, "error": f"the result does not pickle: {type(e).__name__}: {e}"}


def warm_up() -> None:
    """Load the engine (numba's compiled code) once in this process, outside any point's
    timeout: one kernel and a synchronize, then a reset. A process that has run the engine
    already pays a few microseconds."""
    try:
        reset()
        dev = Device()
        s, x = dev.stream(), dev.malloc(64)
        s.launch("EasyOPf", 1, args=(x,))
        s.synchronize()
    except Exception:                        # noqa: BLE001  (the points will say what fails)
        pass
    finally:
        reset()


def _serve(conn, payload) -> None:
    """The loop of a :class:`PointProcess`: warm up, say "ready", then (point, passed axes) in,
    the row out, until the pipe closes."""
    fn = payload if callable(payload) else pickle.loads(payload)
    warm_up()
    conn.send("ready")
    while True:
        try:
            point, passed = conn.recv()
        except (EOFError, OSError):
            return
        conn.send(_sendable(run_point(fn, point, passed)))


class PointProcess:
    """A worker process running one point at a time for a serial sweep with a timeout: started
    on first use (``fork`` where the platform has it: it inherits the loaded package and the
    function; else ``spawn``, the function sent pickled), killed when a point runs past the
    timeout or when the sweep ends, and started again for the next point. Its points run in a
    simulator of its own: the caller's is left as it was."""
    __slots__ = ("fn", "proc", "conn")

    def __init__(self, fn):
        self.fn = fn
        self.proc = None
        self.conn = None

    def _start(self) -> None:
        import multiprocessing as mp
        ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
        if ctx.get_start_method() == "fork":
            payload = self.fn
        else:
            try:
                import cloudpickle           # deferred: comes with dask ([sweep] extra)
                payload = cloudpickle.dumps(self.fn)
            except ImportError:
                payload = pickle.dumps(self.fn)
        parent, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child, payload), daemon=True,
                                name="npusim-sweep-point")
        self.proc.start()
        child.close()
        self.conn = parent
        try:
            parent.recv()                     # "ready": warmed up, outside the timeout
        except (EOFError, OSError):
            pass                              # died starting: the point's row says so

    def run(self, point: dict, passed: tuple, timeout: float) -> dict:
        """The point's row: the process's answer, a timeout row (the process is killed), or a
        failed row when the process died under the point."""
        if self.proc is None or not self.proc.is_alive():
            self._start()
        t0 = time.perf_counter()
        try:
            self.conn.send((point, passed))
        except (EOFError, OSError):
            pass                              # the process died: judged below
        except Exception as e:               # noqa: BLE001  (an axis value that does not pickle)
            return {"error_code": None, "wall_s": 0.0, "worker": None,
                    "error": f"the point does not pickle (needed to run it in a worker "
                             f"process): {type(e).__name__}: {e}"}
        try:
            if self.conn.poll(timeout):
                return self.conn.recv()
        except (EOFError, OSError):
            pass                              # the process died: judged below
        wall = time.perf_counter() - t0
        if self.proc.is_alive():
            self.close()
            return timeout_row(timeout, wall, "its worker process was killed")
        code = self.proc.exitcode
        self.close()
        return {"error_code": None, "wall_s": wall, "worker": None,
                "error": f"the point's worker process died (exit code {code})"}

    def close(self) -> None:
        """Kill the process (if it runs) and close the pipe."""
        if self.proc is not None:
            if self.proc.is_alive():
                self.proc.kill()
            self.proc.join()
            self.proc = None
        if self.conn is not None:
            self.conn.close()
            self.conn = None


_WARM: list = []
"""Not empty once this Dask worker ran :func:`warm_up`."""
_HUNG: list = []
"""Threads of this Dask worker whose point ran past its timeout: while one is listed the worker
takes no other point (it may hold the runtime lock); the runner restarts the worker."""


def run_points_timed(blob: bytes, points: list[dict], passed: list[tuple[str, ...]],
                     timeout: float) -> list[dict]:
    """:func:`run_points` with a timeout per point, for a cluster: each point in a thread of
    the worker, joined for ``timeout`` seconds. A point past it is a timeout row carrying
    ``_restart`` (this worker's address: the runner restarts it and drops the key); the worker
    then reschedules any other point sent to it (``distributed.Reschedule``)."""
    from distributed import Reschedule, get_worker   # deferred: a cluster task only
    if _HUNG:
        raise Reschedule()
    if not _WARM:
        warm_up()                             # the worker's first point: outside the timeout
        _WARM.append(True)
    fn = _loaded(blob)
    rows = []
    for p, k in zip(points, passed):
        box: list = []
        t = threading.Thread(target=lambda p=p, k=k: box.append(run_point(fn, p, k)),
                             daemon=True, name="npusim-sweep-point")
        t0 = time.perf_counter()
        t.start()
        t.join(timeout)
        if t.is_alive():
            _HUNG.append(t)
            row = timeout_row(timeout, time.perf_counter() - t0,
                              "its Dask worker was restarted")
            row["worker"] = f"{socket.gethostname()}:{os.getpid()}"
            row["_restart"] = get_worker().address
            rows.append(row)
            rows += [_lost(timeout) for _ in points[len(rows):]]
            break
        rows.append(box[0])
    import cloudpickle                      # deferred: a cluster task only (comes with dask)
    return [_sendable(row, cloudpickle.dumps) for row in rows]


def _lost(timeout: float) -> dict:
    return {"error_code": None, "wall_s": float("nan"), "worker": None,
            "error": f"not run: an earlier point of its task ran past the timeout of "
                     f"{timeout:g} s"}
