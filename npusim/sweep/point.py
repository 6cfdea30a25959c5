"""One sweep point, run where the scheduler puts it (this process, or a Dask worker): a fresh
simulator, its own configuration, the function, and a row that says what happened. Part of
:mod:`npusim.sweep`.

A point starts from ``npusim.reset()`` (devices, handles, options, injections gone: like a new
process), then ``npusim.configure(profile=..., timing=...)`` from its ``profile`` / ``timing``
axes, and seeds Python's and numpy's global random generators from the point itself; kernel
costs set by ``npusim.set_kernel_cost`` are put back afterwards. So a row depends only on its
point — not on which worker ran it, nor what ran there before.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import pickle
import random
import socket
import time
import zlib
from collections.abc import Mapping

import numpy as np

from ..api import configure, reset
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
    digest = hashlib.sha1(blob).digest()
    fn = _LOADED.get(digest)
    if fn is None:
        fn = _LOADED[digest] = pickle.loads(blob)
    import cloudpickle                      # deferred: a cluster task only (comes with dask)
    rows = [run_point(fn, p, k) for p, k in zip(points, passed)]
    for i, row in enumerate(rows):
        try:
            cloudpickle.dumps(row)
        except Exception as e:               # noqa: BLE001  (the scheduler could not send it)
            keep = {k: row[k] for k in RESERVED}
            rows[i] = {**keep, "error": f"the result does not pickle: {type(e).__name__}: {e}"}
    return rows
