"""The race detector across devices (issue 38 item 6, docs/fidelity.md rows 430-433): peer copies
and HCCL moves record their accesses; ``races_across`` merges the devices' logs so a notify
between devices (a ``runtime.peer`` bridge) and a host synchronization of another device order
what follows them; HCCL's inline reduces are atomic (concurrent reduces into one buffer are not
a race). A collective run under ``record()`` has no race; a user's write to a rank's send buffer
on another stream during the collective is reported with both tasks and devices."""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

import npusim as ns
from npusim import acl as A
from npusim.analysis import races_across, races_in_eager, record
from npusim.device import sqe as S
from npusim.runtime import peer
from npusim.runtime.runtime import RT


def line_of(marker: str) -> int:
    for i, text in enumerate(pathlib.Path(__file__).read_text().splitlines(), 1):
        if marker in text and "line_of(" not in text:
            return i
    raise AssertionError(marker)


@pytest.fixture
def pair():
    d0, d1 = ns.Device(id=0), ns.Device(id=1)
    s0, s1 = d0.stream(), d1.stream()
    x, y = d1.malloc(64), d0.malloc(64)
    A.rt.set_device(0)
    assert A.rt.device_enable_peer_access(1, 0) == 0
    return d0, d1, s0, s1, x, y


def _peer_copy(s0, y, x):
    A.rt.set_device(0)
    assert A.rt.memcpy_async(y.ptr, 64, x.ptr, 64, A.ACL_MEMCPY_DEVICE_TO_DEVICE,
                             s0.handle) == 0      # @copy


def test_a_peer_copy_reading_what_another_device_writes_races(pair):
    d0, d1, s0, s1, x, y = pair
    with record():
        s1.launch("EasyOPf", blocks=8, args=(x,))          # @write
        _peer_copy(s0, y, x)
        s0.synchronize()
        s1.synchronize()
    rep = races_across([d0, d1])
    assert len(rep) == 1, rep
    r = rep[0]
    sides = {(t.device, t.kernel, t.access) for t in (r.first, r.second)}
    assert sides == {(1, "EasyOPf", "write"), (0, "__npusim_peer_copy", "read")}
    assert r.buffer[0] == x.ptr and (r.lo, r.hi) == (x.ptr, x.ptr + 32)
    w = r.first if r.first.device == 1 else r.second
    assert f"{w.site.line}" == str(line_of("@write"))
    text = str(rep)
    assert "(device 0)" in text and "(device 1)" in text and "EasyOPf" in text
    # the same through races_in_eager(devices=...)
    assert len(races_in_eager(devices=[d0, d1])) == 1
    assert len(races_in_eager(devices="all")) == 1


def test_a_notify_between_the_devices_orders_them(pair):
    d0, d1, s0, s1, x, y = pair
    b = peer.bridge(RT.devices[1], RT.devices[0], None, "t")
    with record():
        s1.launch("EasyOPf", blocks=8, args=(x,))
        RT.handles.stream(s1.handle).submit(S.OP_NOTIFY_RECORD, 0, a0=b.src_slot)
        RT.handles.stream(s0.handle).submit(S.OP_NOTIFY_WAIT, 0, a0=b.dst_slot)
        _peer_copy(s0, y, x)
        s0.synchronize()
        s1.synchronize()
    rep = races_across([d0, d1])
    assert len(rep) == 0 and rep.unpaired == 0
    assert (y.read(np.uint8)[:32] == x.read(np.uint8)[:32]).all()


def test_a_record_with_no_wait_is_noted(pair):
    d0, d1, s0, s1, x, y = pair
    b = peer.bridge(RT.devices[1], RT.devices[0], None, "t")
    with record():
        RT.handles.stream(s1.handle).submit(S.OP_NOTIFY_RECORD, 0, a0=b.src_slot)
        s1.synchronize()
    rep = races_across([d0, d1])
    assert len(rep) == 0 and rep.unpaired == 1
    assert "no partner" in str(rep)


def test_a_notify_before_the_write_does_not_order_it(pair):
    d0, d1, s0, s1, x, y = pair
    b = peer.bridge(RT.devices[1], RT.devices[0], None, "t")
    with record():
        RT.handles.stream(s1.handle).submit(S.OP_NOTIFY_RECORD, 0, a0=b.src_slot)
        s1.launch("EasyOPf", blocks=8, args=(x,))
        RT.handles.stream(s0.handle).submit(S.OP_NOTIFY_WAIT, 0, a0=b.dst_slot)
        _peer_copy(s0, y, x)
        s0.synchronize()
        s1.synchronize()
    assert len(races_across([d0, d1])) == 1


def test_a_host_synchronize_of_the_writer_orders_a_later_copy(pair):
    d0, d1, s0, s1, x, y = pair
    with record():
        s1.launch("EasyOPf", blocks=8, args=(x,))
        s1.synchronize()                                    # the host saw device 1 finish
        _peer_copy(s0, y, x)
        s0.synchronize()
    assert len(races_across([d0, d1])) == 0


def test_a_peer_copy_writing_what_the_other_device_reads_races(pair):
    """The destination side: device 0 copies into device 1's buffer while a kernel of device 1
    reads it (a write/read race on device 1's memory, found from device 0's log)."""
    d0, d1, s0, s1, x, y = pair
    with record():
        A.rt.set_device(0)
        assert A.rt.memcpy_async(x.ptr, 64, y.ptr, 64, A.ACL_MEMCPY_DEVICE_TO_DEVICE,
                                 s0.handle) == 0
        s1.launch("EasyOPf", blocks=8, args=(x,))
        s0.synchronize()
        s1.synchronize()
    rep = races_across([d0, d1])
    assert len(rep) == 1 and rep[0].buffer[0] == x.ptr
    assert {t.device for t in (rep[0].first, rep[0].second)} == {0, 1}


def test_nothing_recorded_on_a_device_is_an_error(pair):
    d0, d1, *_ = pair
    with pytest.raises(ValueError, match="nothing recorded"):
        races_across([d0, d1])


# ---------------------------------------------------------------- HCCL

def _ranks(p: int, n: int = 1000):
    devs = [ns.Device(id=i) for i in range(p)]
    comms = ns.communicator(devs)
    xs, ys, ss = [], [], []
    for r, d in enumerate(devs):
        x = d.malloc(4 * n)
        x.write(np.arange(n, dtype=np.float32) * (r + 1))
        xs.append(x)
        ys.append(d.malloc(4 * n))
        ss.append(d.stream())
    return devs, comms, xs, ys, ss


@pytest.mark.parametrize("p", [2, 4])
def test_an_all_reduce_has_no_race(p):
    n = 1000
    devs, comms, xs, ys, ss = _ranks(p, n)
    with record():
        for r, c in enumerate(comms):
            c.all_reduce(xs[r], out=ys[r], stream=ss[r])
        for s in ss:
            s.synchronize()
        for c in comms:                 # destroyed inside the block: its notifies are known
            c.destroy()
    rep = races_across(devs)
    assert len(rep) == 0, rep
    assert rep.tasks > 0 and rep.accesses >= 3 * p
    assert rep.unpaired == 0            # every wait between devices found its record
    exp = np.arange(n, dtype=np.float32) * sum(range(1, p + 1))
    for r in range(p):
        assert (ys[r].read(np.float32) == exp).all()


def test_two_all_reduces_in_a_row_have_no_race():
    devs, comms, xs, ys, ss = _ranks(4)
    with record():
        for _ in range(2):
            for r, c in enumerate(comms):
                c.all_reduce(xs[r], out=ys[r], stream=ss[r])
        for s in ss:
            s.synchronize()
    rep = races_across(devs)
    assert len(rep) == 0 and rep.unpaired == 0, rep


def test_overwriting_a_send_buffer_during_an_all_reduce_races():
    devs, comms, xs, ys, ss = _ranks(4)
    other = devs[1].stream()
    with record():
        for r, c in enumerate(comms):
            c.all_reduce(xs[r], out=ys[r], stream=ss[r])
            if r == 1:
                other.launch("EasyOPf", blocks=8, args=(xs[1],))     # @overwrite
        for s in ss:
            s.synchronize()
        other.synchronize()
    rep = races_across(devs)
    assert len(rep) >= 1, rep
    for r in rep:
        kernels = {r.first.kernel, r.second.kernel}
        assert kernels == {"EasyOPf", "__npusim_hccl_move"}, rep
        assert r.buffer[0] == xs[1].ptr
        user = r.first if r.first.kernel == "EasyOPf" else r.second
        assert user.device == 1 and user.site.line == line_of("@overwrite")
    assert "__npusim_hccl_move (read)" in str(rep)


def test_the_user_waiting_for_the_collective_before_overwriting_is_no_race():
    devs, comms, xs, ys, ss = _ranks(2)
    ev = devs[1].event()
    other = devs[1].stream()
    with record():
        for r, c in enumerate(comms):
            c.all_reduce(xs[r], out=ys[r], stream=ss[r])
        ss[1].record(ev)
        other.wait(ev)
        other.launch("EasyOPf", blocks=8, args=(xs[1],))
        for s in ss + [other]:
            s.synchronize()
    assert len(races_across(devs)) == 0


def _capture(devs, comms, xs, ys, ss):
    models = []
    for r, c in enumerate(comms):
        A.rt.set_device(r)
        assert A.mdl.ri_capture_begin(ss[r].handle, A.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) == 0
        c.all_reduce(xs[r], out=ys[r], stream=ss[r])
        m, ret = A.mdl.ri_capture_end(ss[r].handle)
        assert ret == 0
        models.append(m)
    return models


@pytest.mark.parametrize("plant", [False, True])
def test_replays_of_captured_all_reduces(plant):
    """Every rank's graph replayed inside ``record()``: the replays are analysed together; a
    write to a send buffer on another stream during the replays is reported."""
    devs, comms, xs, ys, ss = _ranks(2, 256)
    models = _capture(devs, comms, xs, ys, ss)
    other = devs[0].stream()
    with record():
        for r in range(2):
            A.rt.set_device(r)
            assert A.mdl.ri_execute_async(models[r], ss[r].handle) == 0
        if plant:
            other.launch("EasyOPf", blocks=8, args=(xs[0],))
        for r in range(2):
            A.rt.set_device(r)
            assert A.rt.synchronize_stream(ss[r].handle) == 0
        other.synchronize()
    rep = races_across(devs)
    if not plant:
        assert len(rep) == 0, rep
        return
    assert len(rep) >= 1
    assert all({r.first.kernel, r.second.kernel} == {"EasyOPf", "__npusim_hccl_move"}
               for r in rep), rep


def test_one_device_analysis_of_a_multi_device_program_still_works(pair):
    """``races_in_eager(device)`` alone: the other devices' observations noted in its log order
    nothing; a race inside the device is still found."""
    d0, d1, s0, s1, x, y = pair
    s2 = d1.stream()
    with record():
        s1.launch("EasyOPf", blocks=8, args=(x,))
        s2.launch("ShortOPf", blocks=8, args=(x,))
        s0.synchronize()
        s1.synchronize()
        s2.synchronize()
    rep = races_in_eager(d1)
    assert len(rep) == 1 and rep.unpaired == 0 and "no partner" not in str(rep)
    assert len(races_in_eager(d0)) == 0
