"""Device printf: kernels append records to a buffer in device memory; the host drains it.

Like AscendC's ``printf`` (a FIFO in device memory the runtime reads back), a kernel body calls
``printf(mem, ctx, FMT, block_idx, *args)`` where ``FMT = format_id("x = %d\\n")`` is a module-level
constant (an int: a stable hash of the format string, so numba's on-disk cache stays valid across
processes). The record goes into the device's printf area (``ctx[C_PRINTF_OFF/SIZE/POS]``, one
:data:`PRINTF_BYTES` allocation per device, made when a binary is first loaded on it). Whenever the
host observes the device (every engine run: synchronize, query, D2H copy), the records are
formatted with Python's ``%`` and appended, in execution order, to the :class:`PrintfSink`
(``npusim.kernel.printf_sink()``), which also echoes them to stdout unless ``echo`` is False.

Record layout (int64 words): ``[n_words, fmt_id, block_idx, n_args, (kind, bits) * n_args]``,
kind 0 = integer, 1 = float64 bits. A full buffer drops the record, as a full device FIFO loses
output.
"""
from __future__ import annotations

import sys
import zlib

import numpy as np
from numba import literal_unroll, njit, types
from numba.extending import overload

from ..device.memory import C_PRINTF_OFF, C_PRINTF_POS, C_PRINTF_SIZE

PRINTF_BYTES = 1 << 20
HEADER_WORDS = 4
_FORMATS: dict[int, str] = {}


def format_id(fmt: str) -> int:
    """Register a format string; its id (a positive int63 hash) for kernel bodies."""
    fid = (zlib.crc32(fmt.encode()) << 16 | (len(fmt) & 0xFFFF)) & 0x7FFF_FFFF_FFFF
    _FORMATS[fid] = fmt
    return fid


def _arg_word(v):
    raise NotImplementedError("device-side only")


@overload(_arg_word)
def _arg_word_impl(v):
    if isinstance(v, types.Float):
        return lambda v: (np.int64(1), np.array([np.float64(v)]).view(np.int64)[0])
    return lambda v: (np.int64(0), np.int64(v))


@njit(cache=True)
def _reserve(mem, ctx, nwords):
    """Arena offset for a record of ``nwords`` int64 words, or -1 (no buffer / full)."""
    size = ctx[C_PRINTF_SIZE]
    pos = ctx[C_PRINTF_POS]
    need = 8 * nwords
    if size <= 0 or pos + need > size:
        return -1
    ctx[C_PRINTF_POS] = pos + need
    return ctx[C_PRINTF_OFF] + pos


def printf(mem, ctx, fmt, block_idx, *args):
    """Device printf (call it from a kernel body; see the module docstring)."""
    raise NotImplementedError("printf is called from numba kernel bodies")


@overload(printf)
def _printf_impl(mem, ctx, fmt, block_idx, *args):
    n = len(args)
    if n == 0:
        def impl0(mem, ctx, fmt, block_idx, *args):
            off = _reserve(mem, ctx, HEADER_WORDS)
            if off >= 0:
                w = mem[off:off + 8 * HEADER_WORDS].view(np.int64)
                w[0], w[1], w[2], w[3] = HEADER_WORDS, fmt, block_idx, 0
        return impl0

    def impl(mem, ctx, fmt, block_idx, *args):
        nw = HEADER_WORDS + 2 * n
        off = _reserve(mem, ctx, nw)
        if off >= 0:
            w = mem[off:off + 8 * nw].view(np.int64)
            w[0], w[1], w[2], w[3] = nw, fmt, block_idx, n
            i = HEADER_WORDS
            for a in literal_unroll(args):
                kind, bits = _arg_word(a)
                w[i] = kind
                w[i + 1] = bits
                i += 2
    return impl


class PrintfSink:
    """Where device printf output goes: ``lines`` (str, with their newlines), ``records``
    ((device id, block idx, text)), optional echo to stdout."""

    def __init__(self):
        self.lines: list[str] = []
        self.records: list[tuple[int, int, str]] = []
        self.echo = True

    def take(self) -> list[str]:
        """The lines printed so far, and forget them."""
        out, self.lines, self.records = self.lines, [], []
        return out

    def text(self) -> str:
        return "".join(self.lines)

    def clear(self) -> None:
        self.lines.clear()
        self.records.clear()

    def write(self, dev_id: int, block: int, text: str) -> None:
        self.lines.append(text)
        self.records.append((dev_id, block, text))
        if self.echo:
            sys.stdout.write(text)


SINK = PrintfSink()


def printf_sink() -> PrintfSink:
    return SINK


def _format(fid: int, args: list) -> str:
    fmt = _FORMATS.get(fid)
    if fmt is None:
        return f"<printf format 0x{fid:x}> {args}\n"
    try:
        return fmt % tuple(args)
    except (TypeError, ValueError):
        return f"{fmt!r} % {args}\n"


def ensure_buffer(device) -> None:
    """Give ``device`` its printf area (once)."""
    mem = device.state.mem
    if mem.ctx[C_PRINTF_SIZE] > 0:
        return
    addr = mem.malloc(PRINTF_BYTES)
    off = mem.to_off(addr)
    mem.ctx[C_PRINTF_OFF], mem.ctx[C_PRINTF_SIZE], mem.ctx[C_PRINTF_POS] = off, PRINTF_BYTES, 0


def buffer_address(device) -> int:
    """The device address of the printf area (the context array holds its arena offset)."""
    ensure_buffer(device)
    mem = device.state.mem
    return mem.to_addr(int(mem.ctx[C_PRINTF_OFF]))


def drain(device) -> None:
    """Format and emit every record in the device's printf area, then empty it."""
    mem = device.state.mem
    ctx = mem.ctx
    used = int(ctx[C_PRINTF_POS])
    if used <= 0:
        return
    off = int(ctx[C_PRINTF_OFF])
    words = mem.arena[off:off + used].view(np.int64).copy()
    ctx[C_PRINTF_POS] = 0
    i = 0
    while i + HEADER_WORDS <= len(words):
        nw, fid, block, nargs = (int(x) for x in words[i:i + HEADER_WORDS])
        if nw < HEADER_WORDS or i + nw > len(words):
            break
        args = []
        for j in range(nargs):
            kind, bits = int(words[i + HEADER_WORDS + 2 * j]), words[i + HEADER_WORDS + 2 * j + 1]
            args.append(float(np.array([bits], np.int64).view(np.float64)[0]) if kind == 1
                        else int(bits))
        SINK.write(device.id, block, _format(fid, args))
        i += nw
