"""Device args areas: where a launch's argument bytes live in device memory.

Like the runtime's per-stream args pool (``spec/kernel.md`` §5.3: ``1024 * rtsqDepth`` bytes,
used for launches of at most 1024 bytes of args), each stream gets a ring of args slots in device
memory on its first launch. A slot is reused only after ``rtsq_depth`` later launches on the same
stream, and a stream never has more tasks in flight than that, so a slot is never overwritten
while a task still reads it. Larger args get their own allocation, kept for the stream's life.
"""
from __future__ import annotations

import struct

import numpy as np

SLOT = 1024


def pack(values) -> bytes:
    """Arguments as the device sees them: one little-endian 8-byte slot each; Python floats
    and np.float32 go into the low 4 bytes as fp32, everything else as a 64-bit integer."""
    out = np.zeros(len(values), np.uint64)
    for i, v in enumerate(values):
        if isinstance(v, (float, np.floating)):
            out[i] = np.array([v], np.float32).view(np.uint32)[0]
        else:
            out[i] = np.uint64(int(v) & 0xFFFF_FFFF_FFFF_FFFF)
    return out.tobytes()


_SLOT = struct.Struct("<Q")
_HIGH_ZERO = bytes(4)


def pack_typed(values, types) -> bytes:
    """As :func:`pack`, each value converted to its declared parameter type first (``types``:
    a type of ``device.kernels.PARAM_TYPES`` per parameter, None where unknown): an ``f32`` /
    ``f64`` parameter gets ``float(v)`` (a Python int 101 becomes 101.0, not the integer's
    bits), an integer or pointer parameter ``int(v)``. Values past the declared ones pack as
    :func:`pack` does (the same bytes). Built with ``struct``, not a numpy array per slot."""
    out = bytearray()
    n = len(types)
    for i, v in enumerate(values):
        t = types[i] if i < n else None
        if t == "f32" or (t is None and isinstance(v, (float, np.floating))):
            out += np.float32(float(v)).tobytes()
            out += _HIGH_ZERO
        elif t == "f64":
            out += np.float64(float(v)).tobytes()
        else:
            out += _SLOT.pack(int(v) & 0xFFFF_FFFF_FFFF_FFFF)
    return bytes(out)


def owner_model(stream):
    """The model a launch on ``stream`` writes into (capturing, bound to a built model, or
    updating a task group): its args must live as long as the model, since every replay
    re-reads them."""
    if stream.capture is not None:
        return stream.capture.model
    if stream.bound is not None:                # bound to a built model: every run re-reads
        return stream.bound.model
    g = None if stream.is_model else stream.tg_update
    if g is not None and g.entries:
        return g.entries[0][0].model
    return None


def place(stream, data: bytes) -> int:
    """Copy ``data`` into a device args area for one launch on ``stream``; its address."""
    mem = stream.device.state.mem
    n = max(len(data), 8)
    model = owner_model(stream)
    if model is not None:
        addr = model.args_alloc(n)
    elif n > SLOT:
        addr = mem.malloc(n)
        stream.extra_args.append(addr)
    else:
        ring = stream.args_ring
        if ring is None:
            ring = stream.args_ring = [mem.malloc(SLOT * stream.device.profile.rtsq_depth), 0]
        addr = ring[0] + SLOT * (ring[1] % stream.device.profile.rtsq_depth)
        ring[1] += 1
    mem.view(addr, len(data))[:] = np.frombuffer(data, np.uint8)
    return addr
