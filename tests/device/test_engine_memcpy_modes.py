"""The MEMCPY address modes (``sqe.MEMCPY_PTR`` / ``MEMCPY_DESC`` / ``MEMCPY_2D``) and the 32-bit
MEMSET (``sqe.MEMSET_D32``): the engine and the reference interpreter agree on memory, timing,
trace and access records, addresses read from memory are read when the task runs, and a pointer
or descriptor outside the arena faults the task."""
from __future__ import annotations

import numpy as np
import pytest

from npusim.device import engine as E
from npusim.device import sqe as S

from test_engine_reference import MEM, ST, put_i64, run_both, small_device, fill, u32_at

D2D = 3


def _bytes(arena, d, addr, n):
    off = d.mem.to_off(addr)
    return arena[off:off + n]


def test_2d_copy_rows_between_pitches():
    d = small_device()
    src, dst = d.mem.malloc(256), d.mem.malloc(256)
    d.mem.view(src, 256)[:] = np.arange(256, dtype=np.uint8)
    q = d.alloc_sq(4)
    fill(d, q, [dict(op=S.OP_MEMCPY, a0=dst, a1=src, a2=5 | 3 << 32, a3=16 | 8 << 32,
                     flag=D2D | S.MEMCPY_2D, t_submit=1000)])
    eng, log = run_both(d, record=(64, 64))
    out = _bytes(eng[MEM], d, dst, 24).reshape(3, 8)
    assert out[:, :5].tolist() == [list(range(r * 16, r * 16 + 5)) for r in range(3)]
    assert not out[:, 5:].any()


def test_overlapping_2d_rows_copy_like_memmove_per_row():
    d = small_device()
    buf = d.mem.malloc(64)
    d.mem.view(buf, 64)[:] = np.arange(64, dtype=np.uint8)
    q = d.alloc_sq(4)
    fill(d, q, [dict(op=S.OP_MEMCPY, a0=buf + 2, a1=buf, a2=8 | 2 << 32, a3=16 | 16 << 32,
                     flag=D2D | S.MEMCPY_2D, t_submit=1000)])
    eng, _ = run_both(d)
    assert _bytes(eng[MEM], d, buf, 10).tolist() == [0, 1, 0, 1, 2, 3, 4, 5, 6, 7]


def test_pointer_copy_reads_the_pointers_when_it_runs():
    d = small_device()
    a, b, out, cells = (d.mem.malloc(64) for _ in range(4))
    d.mem.view(a, 64)[:] = 1
    d.mem.view(b, 64)[:] = 2
    put_i64(d, cells, out)            # dst pointer
    put_i64(d, cells + 8, a)          # src pointer: a ... until the first task repoints it to b
    q = d.alloc_sq(4)
    fill(d, q, [dict(op=S.OP_MEM_WRITE_VALUE, a0=cells + 8, a1=b, a2=8, t_submit=1000),
                dict(op=S.OP_MEMCPY, a0=cells, a1=cells + 8, a2=4, a3=3 | 5 << 32, t_submit=1000,
                     flag=D2D | S.MEMCPY_PTR)])
    eng, _ = run_both(d, record=(64, 64))
    assert _bytes(eng[MEM], d, out, 8).tolist() == [0, 0, 0, 2, 2, 2, 2, 0]


def test_descriptor_copy_reads_length_src_and_dst():
    d = small_device()
    src, dst, desc = d.mem.malloc(64), d.mem.malloc(64), d.mem.malloc(64)
    d.mem.view(src, 64)[:] = np.arange(64, dtype=np.uint8)
    v = d.mem.view(desc, 32)
    v[:] = 0
    v[S.MEMCPY_DESC_LEN_AT:S.MEMCPY_DESC_LEN_AT + 4] = np.array([6], np.uint32).view(np.uint8)
    v[S.MEMCPY_DESC_SRC_AT:S.MEMCPY_DESC_SRC_AT + 8] = np.array([src + 10], np.int64).view(np.uint8)
    v[S.MEMCPY_DESC_DST_AT:S.MEMCPY_DESC_DST_AT + 8] = np.array([dst], np.int64).view(np.uint8)
    q = d.alloc_sq(4)
    fill(d, q, [dict(op=S.OP_MEMCPY, a0=desc, flag=D2D | S.MEMCPY_DESC, t_submit=1000)])
    eng, _ = run_both(d, record=(64, 64))
    assert _bytes(eng[MEM], d, dst, 8).tolist() == [10, 11, 12, 13, 14, 15, 0, 0]


@pytest.mark.parametrize("mode", [S.MEMCPY_PTR, S.MEMCPY_DESC])
def test_a_pointer_outside_the_arena_faults(mode):
    d = small_device()
    cells = d.mem.malloc(64)
    put_i64(d, cells, 0x1234)          # no arena address
    put_i64(d, cells + 8, 0x1234)
    if mode == S.MEMCPY_DESC:
        d.mem.view(cells + S.MEMCPY_DESC_LEN_AT, 4)[:] = 4
    q = d.alloc_sq(4)
    fill(d, q, [dict(op=S.OP_MEMCPY, a0=cells, a1=cells + 8, a2=4, flag=D2D | mode, t_submit=1000)])
    eng, log = run_both(d)
    assert log[0][0] == E.R_FAULT
    assert eng[ST][E.E_FKIND] == E.F_BAD_ADDRESS


def test_memset_d32_fills_words():
    d = small_device()
    buf = d.mem.malloc(64)
    q = d.alloc_sq(4)
    fill(d, q, [dict(op=S.OP_MEMSET, a0=buf + 4, a1=0xA1B2C3D4, a2=12, flag=S.MEMSET_D32,
                     t_submit=1000)])
    eng, _ = run_both(d, record=(64, 64))
    assert u32_at(eng[MEM], d, buf, 5).tolist() == [0] + [0xA1B2C3D4] * 3 + [0]
