"""HCCL in the Pythonic API: ``npusim.communicator(devices)`` -> one :class:`Comm` per rank.

Each method calls ``npusim.hccl`` (the facade) and turns a non-zero ``HcclResult`` into
:class:`HcclError`; a collective that can never finish shows up where the program waits for
it — ``stream.synchronize()`` raises the ``AclError`` whose message is the cross-rank
diagnosis (``npusim/hccl/diagnose.py``). Buffers are :class:`Buffer` objects (or addresses);
counts default to what fits the buffer::

    devs = [npusim.Device(id=i) for i in range(8)]
    comms = npusim.communicator(devs)
    for c, d in zip(comms, devs):
        c.all_reduce(x[d.id], out=y[d.id], op="sum", dtype=np.float32, stream=s[d.id])
"""
from __future__ import annotations

import numpy as np

from .. import hccl
from ..hccl import types as T
from ..runtime.runtime import RT
from .device import Device
from .stream import Buffer

OPS = {"sum": T.HCCL_REDUCE_SUM, "prod": T.HCCL_REDUCE_PROD, "max": T.HCCL_REDUCE_MAX,
       "min": T.HCCL_REDUCE_MIN}
"""``op=`` names of the reduce ops (an ``HCCL_REDUCE_*`` value works too)."""
DTYPES = {np.dtype(np.int8): T.HCCL_DATA_TYPE_INT8, np.dtype(np.int16): T.HCCL_DATA_TYPE_INT16,
          np.dtype(np.int32): T.HCCL_DATA_TYPE_INT32, np.dtype(np.int64): T.HCCL_DATA_TYPE_INT64,
          np.dtype(np.uint8): T.HCCL_DATA_TYPE_UINT8,
          np.dtype(np.uint16): T.HCCL_DATA_TYPE_UINT16,
          np.dtype(np.uint32): T.HCCL_DATA_TYPE_UINT32,
          np.dtype(np.uint64): T.HCCL_DATA_TYPE_UINT64,
          np.dtype(np.float16): T.HCCL_DATA_TYPE_FP16,
          np.dtype(np.float32): T.HCCL_DATA_TYPE_FP32,
          np.dtype(np.float64): T.HCCL_DATA_TYPE_FP64}
"""numpy dtypes -> ``HcclDataType`` (``"bf16"`` names ``HCCL_DATA_TYPE_BFP16``)."""


class HcclError(Exception):
    """A failed HCCL call: ``.code`` is the ``HcclResult``, ``.name`` its C name, and the
    message the reason npusim found (as ``AclError``'s)."""

    def __init__(self, code: int, detail: str = ""):
        super().__init__(code, detail)
        self.code = int(code)
        self.name = T.RESULT_NAMES.get(self.code, "HCCL_E_UNKNOWN")
        self.detail = detail

    def __str__(self) -> str:
        s = f"{self.name} ({self.code}): {T.get_error_string(self.code)}"
        return f"{s} — {self.detail}" if self.detail else s


def _ok(code: int) -> None:
    if code:
        raise HcclError(code, RT.tls.error_detail)


def _dtype(dtype) -> int:
    if isinstance(dtype, str) and dtype.lower() in ("bf16", "bfloat16"):
        return T.HCCL_DATA_TYPE_BFP16
    if isinstance(dtype, int):
        return dtype
    return DTYPES[np.dtype(dtype)]


def _op(op) -> int:
    if isinstance(op, str):
        if op not in OPS:
            raise HcclError(T.HCCL_E_PARA, f"op={op!r}: one of {', '.join(OPS)} (or an "
                                           f"HCCL_REDUCE_* value)")
        return OPS[op]
    return op


def _stream_handle(stream) -> int:
    h = getattr(stream, "handle", stream)
    if not h:
        raise ValueError("collectives need a stream of the rank's device (Device.stream())")
    return h


class Comm:
    """One rank of a communicator: ``rank``, ``size``, ``device`` and the collectives."""

    def __init__(self, handle: int, device: Device):
        self.handle, self.device = handle, device
        self.rank = self._get(hccl.get_rank_id)
        self.size = self._get(hccl.get_rank_size)

    def _get(self, fn):
        v, code = fn(self.handle)
        _ok(code)
        return v

    def __repr__(self):
        return f"Comm(rank {self.rank} of {self.size}, device {self.device.id})"

    def _n(self, buf, dtype, count, per_rank: int = 1) -> int:
        if count is not None:
            return int(count)
        size = buf.size if isinstance(buf, Buffer) else None
        if size is None:
            raise ValueError("count= is needed when the buffer is an address")
        return size // T.DATA_TYPE_SIZE[_dtype(dtype)] // per_rank

    # ---- collectives ----
    def all_reduce(self, send, out=None, op="sum", dtype=np.float32, count=None, stream=None):
        """Every rank's ``out`` (default: ``send`` itself, in place) = ``op`` over the ranks'
        ``send``; returns ``out``."""
        out = send if out is None else out
        _ok(hccl.all_reduce(int(send), int(out), self._n(send, dtype, count), _dtype(dtype),
                            _op(op), self.handle, _stream_handle(stream)))
        return out

    def all_gather(self, send, out, dtype=np.float32, count=None, stream=None):
        """``out`` = every rank's ``send`` in rank order (``count`` elements each)."""
        _ok(hccl.all_gather(int(send), int(out), self._n(send, dtype, count), _dtype(dtype),
                            self.handle, _stream_handle(stream)))
        return out

    def reduce_scatter(self, send, out, op="sum", dtype=np.float32, count=None, stream=None):
        """``out`` = this rank's block of ``op`` over the ranks' ``send`` (``count`` elements
        per rank, default: ``send``'s size over the rank count)."""
        n = self._n(send, dtype, count, self.size) if count is None else count
        _ok(hccl.reduce_scatter(int(send), int(out), n, _dtype(dtype), _op(op), self.handle,
                                _stream_handle(stream)))
        return out

    def broadcast(self, buf, root=0, dtype=np.float32, count=None, stream=None):
        _ok(hccl.broadcast(int(buf), self._n(buf, dtype, count), _dtype(dtype), root,
                           self.handle, _stream_handle(stream)))
        return buf

    def reduce(self, send, out, root=0, op="sum", dtype=np.float32, count=None, stream=None):
        _ok(hccl.reduce(int(send), int(out), self._n(send, dtype, count), _dtype(dtype), _op(op),
                        root, self.handle, _stream_handle(stream)))
        return out

    def scatter(self, send, out, root=0, dtype=np.float32, count=None, stream=None):
        n = self._n(out, dtype, count)
        _ok(hccl.scatter(int(send) if send is not None else 0, int(out), n, _dtype(dtype), root,
                         self.handle, _stream_handle(stream)))
        return out

    def alltoall(self, send, out, dtype=np.float32, count=None, stream=None):
        """Block q of this rank's ``send`` to block ``rank`` of rank q's ``out`` (``count``
        elements per block, default: ``send``'s size over the rank count)."""
        n = self._n(send, dtype, count, self.size) if count is None else count
        t = _dtype(dtype)
        _ok(hccl.alltoall(int(send), n, t, int(out), n, t, self.handle, _stream_handle(stream)))
        return out

    def send(self, buf, peer: int, dtype=np.float32, count=None, stream=None):
        _ok(hccl.send(int(buf), self._n(buf, dtype, count), _dtype(dtype), peer, self.handle,
                      _stream_handle(stream)))

    def recv(self, buf, peer: int, dtype=np.float32, count=None, stream=None):
        _ok(hccl.recv(int(buf), self._n(buf, dtype, count), _dtype(dtype), peer, self.handle,
                      _stream_handle(stream)))
        return buf

    def barrier(self, stream=None):
        _ok(hccl.barrier(self.handle, _stream_handle(stream)))

    def destroy(self) -> None:
        _ok(hccl.comm_destroy(self.handle))


def communicator(devices, ranks_per_server: int | None = None) -> list:
    """One :class:`Comm` per device (``HcclCommInitAll``): ``devices`` is a rank count (devices
    0..n-1), a list of device ids or of :class:`Device` objects; rank r is the r-th.
    ``ranks_per_server``: the topology, as a rank table would give it (rank r on server
    ``r // ranks_per_server``; default: one server), which decides HCCL's algorithms (mesh
    inside a server; ring, RHD or hierarchical across servers: ``npusim.hccl.algo.choose``)."""
    if isinstance(devices, int):
        devices = list(range(devices))
    devs = [d if isinstance(d, Device) else Device(id=int(d)) for d in devices]
    handles, code = hccl.comm_init_all(len(devs), [d.id for d in devs])
    _ok(code)
    if ranks_per_server:
        if ranks_per_server < 1:
            raise ValueError(f"ranks_per_server={ranks_per_server}: at least 1")
        m, _ = RT.handles.get("hccl_comm", handles[0])
        m.comm.rank_server = [r // ranks_per_server for r in range(len(devs))]
    return [Comm(h, d) for h, d in zip(handles, devs)]
