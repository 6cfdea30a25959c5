"""One trace of every device (issue 38 item 2, ``npusim.trace.world()``): a process row per
device, a track per stream, the host rows once, the rows' times the engines' own, peer copies by
a readable name, notifies between devices naming the other device; the summary per device and
stream; ``npusim.census()`` counting the bridges of each device."""
from __future__ import annotations

import json

import pytest

import npusim
from npusim import trace as T
from npusim.device import sqe as S
from npusim.runtime import peer
from npusim.runtime.runtime import RT

pytest_plugins = ["pytester"]


def _world(n_dev: int, n_streams: int = 2):
    """``n_dev`` devices with ``n_streams`` named streams each, a 1 KiB buffer each, every
    device allowed to read every other; returns (devices, streams per device, buffers)."""
    npusim.configure(trace=True)
    devs = [npusim.Device(id=d) for d in range(n_dev)]
    streams = [[dev.stream(name=f"d{d}.s{k}") for k in range(n_streams)]
               for d, dev in enumerate(devs)]
    bufs = [dev.malloc(1024, name=f"buf{d}").fill(d + 1) for d, dev in enumerate(devs)]
    for d in range(n_dev):
        for p in range(n_dev):
            if p != d:
                npusim.acl.rt.set_device(d)
                assert npusim.acl.rt.device_enable_peer_access(p, 0) == 0
    return devs, streams, bufs


def _ring(devs, streams, bufs):
    """A ring: device d copies its buffer into device d+1's (a peer copy on its first stream),
    then notifies d+1, whose second stream waits for it and launches a kernel. Returns the
    bridges."""
    n = len(devs)
    bridges = [peer.bridge(devs[d]._dev, devs[(d + 1) % n]._dev, None, f"ring{d}")
               for d in range(n)]
    for d in range(n):
        nxt = (d + 1) % n
        s0, s1 = streams[d][0], streams[nxt][1]
        _on(d)
        s0.copy(bufs[nxt], bufs[d], 512)
        s0._runtime_stream().submit(S.OP_NOTIFY_RECORD, 0, a0=bridges[d].src_slot)
        _on(nxt)
        s1._runtime_stream().submit(S.OP_NOTIFY_WAIT, 0, a0=bridges[d].dst_slot)
        s1.launch("EasyOPf", 1, (bufs[nxt],))
    for d, row in enumerate(streams):
        _on(d)
        for s in row:
            s.synchronize()
    return bridges


def _on(d: int) -> None:
    """Make device ``d`` current (a Pythonic stream runs in the current context)."""
    assert npusim.acl.rt.set_device(d) == 0


def _rows(events, pid):
    return [e for e in events if e.get("pid") == pid and e["ph"] == "X"]


@pytest.mark.parametrize("n_dev", [2, 4])
def test_one_json_of_every_device(tmp_path, n_dev):
    devs, streams, bufs = _world(n_dev)
    with T.range("ring"):
        bridges = _ring(devs, streams, bufs)
    w = T.world()
    assert w.devices == list(range(n_dev)) and len(w) == sum(len(w[d]) for d in w.devices)
    path = w.to_chrome(tmp_path / "world.json")
    doc = json.load(open(path))
    ev = doc["traceEvents"]
    assert doc == {"traceEvents": w.events(), "displayTimeUnit": "ns"}   # vectorised = per row
    assert json.loads(w.chrome_json()) == doc
    # one process per device, named and sorted by id; the host's rows once
    procs = {e["pid"]: e["args"]["name"] for e in ev if e["name"] == "process_name"}
    assert procs == {f"device {d}": f"npusim device {d}" for d in range(n_dev)}
    order = {e["pid"]: e["args"]["sort_index"] for e in ev if e["name"] == "process_sort_index"}
    assert order == {f"device {d}": d for d in range(n_dev)}
    host = _rows(ev, "host")
    assert host and len(host) == len(RT.host_trace) + 1     # the API calls and the range
    assert sum(e["tid"] == "markers" for e in host) == 1
    for d in range(n_dev):
        rows = _rows(ev, f"device {d}")
        # the device's tracks: its own streams, nobody else's
        assert {e["tid"] for e in rows} == {f"d{d}.s0", f"d{d}.s1"}
        # the rows are the engine's: same count, same start and end (ns -> µs exactly)
        eng = RT.devices[d].state.trace_rows()
        assert len(rows) == len(eng)
        assert sorted((round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)) for e in rows) \
            == sorted(zip(eng["start"].tolist(), eng["end"].tolist()))
        # the peer copy by a readable name, on the copying device's first stream
        copies = [e for e in rows if e["name"] == "peer copy"]
        assert len(copies) == 1 and copies[0]["tid"] == f"d{d}.s0"
        assert copies[0]["args"]["task_type"] == "MEMCPY_ASYNC"     # an SDMA copy (row 400)
        assert copies[0]["args"]["unit"] == "DMA"
        # the notifies between devices name the device at the other end
        rec = [e for e in rows if e["name"] == "NOTIFY_RECORD"]
        wait = [e for e in rows if e["name"] == "NOTIFY_WAIT"]
        assert [(e["args"]["peer_device"], e["args"]["notify"]) for e in rec] == \
            [((d + 1) % n_dev, f"ring{d}")]
        assert [(e["args"]["peer_device"], e["args"]["notify"]) for e in wait] == \
            [((d - 1) % n_dev, f"ring{(d - 1) % n_dev}")]
        # a wait on the next device ends no earlier than the record (one timeline)
        nxt = _rows(ev, f"device {(d + 1) % n_dev}")
        w_end = [e["ts"] + e["dur"] for e in nxt if e["name"] == "NOTIFY_WAIT"][0]
        assert w_end >= rec[0]["ts"] + rec[0]["dur"]
    assert all(b.delivered == 1 for b in bridges)
    assert not any("__npusim" in e["name"] for e in ev)


def test_summary_per_device_and_stream():
    devs, streams, bufs = _world(2)
    with T.range("ring"):
        _ring(devs, streams, bufs)
    w = T.world()
    lines = w.summary().splitlines()
    assert lines[0].split()[:3] == ["device", "stream", "tasks"]
    body = [ln.split() for ln in lines[1:5]]
    assert [(b[0], b[1]) for b in body] == [("0", "d0.s0"), ("0", "d0.s1"), ("1", "d1.s0"),
                                            ("1", "d1.s1")]
    for b in body:                      # the task counts are the engine's
        d, name = int(b[0]), b[1]
        sq = next(s for s in streams[d] if s.name == name)._runtime_stream().sq
        assert int(b[2]) == int((RT.devices[d].state.trace_rows()["sq"] == sq).sum())
    assert any(ln.startswith("ring") for ln in lines[5:])
    # a device's part of it is that device's own summary
    one = w[1].summary().splitlines()
    assert [ln.split()[0] for ln in one[1:3]] == ["d1.s0", "d1.s1"]


def test_window_of_every_device():
    devs, streams, bufs = _world(2)
    _ring(devs, streams, bufs)
    _on(1)
    with T.range("late"):
        streams[1][0].launch("EasyOPf", 1, (bufs[1],))
        streams[1][0].synchronize()
    w = T.world().window("late")
    t0, t1 = w.markers[0][1], w.markers[0][2]
    for d in w.devices:
        r = w[d].rows
        assert ((r["end"] > t0) & (r["start"] < t1)).all()
    assert any(e["name"] == "EasyOPf" for e in _rows(w.events(), "device 1"))
    assert json.loads(w.chrome_json()) == {"traceEvents": w.events(), "displayTimeUnit": "ns"}
    with pytest.raises(KeyError):
        T.world().window("nope")


def test_world_of_some_devices_and_empty():
    devs, streams, bufs = _world(3)
    _ring(devs, streams, bufs)
    part = T.world([devs[2], 0])
    assert part.devices == [0, 2]
    assert {e["pid"] for e in part.events() if e["ph"] == "X"} == {"host", "device 0",
                                                                    "device 2"}
    T.clear()
    w = T.world()
    assert len(w) == 0 and w.summary() == "(empty trace)"
    assert json.loads(w.chrome_json())["traceEvents"] == w.events()


def test_census_counts_bridges_per_device():
    devs, streams, bufs = _world(3, 1)
    base = npusim.census()
    assert all(base.devices[d]["bridges"] == 0 for d in range(3))
    b01 = peer.bridge(devs[0]._dev, devs[1]._dev, None, "a")
    peer.bridge(devs[1]._dev, devs[2]._dev, None, "b")
    c = npusim.census()
    assert [c.devices[d]["bridges"] for d in range(3)] == [1, 2, 1]
    assert c.diff(base) == {"device 0 bridges": 1, "device 1 bridges": 2, "device 2 bridges": 1,
                            # each bridge holds a notify slot on either device
                            "device 0 sync slots": 1, "device 1 sync slots": 2,
                            "device 2 sync slots": 1}
    from npusim.plan.budget import usage         # a bridge is not a notify of the budget
    assert usage(1)["notifies"] == 0
    peer.drop([b01])
    assert [npusim.census().devices[d]["bridges"] for d in range(3)] == [0, 1, 1]
    # a device's reset drops every bridge it held, on the devices at the other end too
    while RT.devices[2].set_count:
        assert npusim.acl.rt.reset_device(2) == 0
    c = npusim.census()
    assert [c.devices[d].get("bridges", 0) for d in range(3)] == [0, 0, 0]
    npusim.reset()
    assert peer.BRIDGES == []


def test_devices_timeline_renders(tmp_path):
    pytest.importorskip("matplotlib")
    from npusim.trace.plot import devices_timeline, timeline
    devs, streams, bufs = _world(2)
    with T.range("ring"):
        _ring(devs, streams, bufs)
    w = T.world()
    fig = devices_timeline(w, path=tmp_path / "w.png")
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == ["device 0: d0.s0", "device 0: d0.s1", "device 1: d1.s0",
                      "device 1: d1.s1"]
    assert (tmp_path / "w.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    fig2 = timeline(w, path=tmp_path / "w2.png")        # a WorldTrace: the same grouped chart
    assert [t.get_text() for t in fig2.axes[0].get_yticklabels()] == labels
    import matplotlib.pyplot as plt
    plt.close(fig)
    plt.close(fig2)


TWO_DEVICES = """
import npusim as ns
from npusim.device import sqe as S
from npusim.runtime import peer
from npusim.runtime.runtime import RT
import acl
a, b = ns.Device(id=0), ns.Device(id=1)
x, y = a.malloc(256, name="x").fill(1), b.malloc(256, name="y").fill(0)
acl.rt.set_device(0)
acl.rt.device_enable_peer_access(1, 0)
s = a.stream(name="main")
s.copy(y, x, 256)
s.synchronize()
acl.rt.set_device(1)
t = b.stream(name="other")
t.launch("EasyOPf", 1, (y,))
t.synchronize()
"""


def test_run_writes_one_trace_of_every_device(tmp_path, capsys):
    from npusim import cli
    script = tmp_path / "two.py"
    script.write_text(TWO_DEVICES)
    out = tmp_path / "t.json"
    assert cli.main(["run", str(script), "--trace", str(out)]) == 0
    assert "trace of devices 0, 1" in capsys.readouterr().err
    ev = json.load(open(out))["traceEvents"]
    procs = {e["pid"] for e in ev if e["name"] == "process_name"}
    assert procs == {"device 0", "device 1"}
    tracks = {(e["pid"], e["tid"]) for e in ev if e["ph"] == "X" and e["pid"] != "host"}
    assert ("device 0", "main") in tracks and ("device 1", "other") in tracks
    assert any(e["name"] == "peer copy" and e["pid"] == "device 0" for e in ev)
    assert not list(tmp_path.glob("t.dev*.json"))


def test_the_trace_fixture_of_every_device(pytester):
    from helpers.pytester_run import run
    pytester.makepyfile(test_two="""
        import npusim
        def test_two(npusim_trace, acl):
            a, b = npusim.Device(id=0), npusim.Device(id=1)
            for d, dev in enumerate((a, b)):
                acl.rt.set_device(d)
                s = dev.stream(name=f"s{d}")
                s.launch("EasyOPf", 1, (dev.malloc(64).fill(0),))
                s.synchronize()
            w = npusim_trace(None)
            assert w.devices == [0, 1] and len(npusim_trace(1)) == len(w[1])
            assert False, "fail: write the trace"
    """)
    r = run(pytester, "-o", "npusim_leaks=off")
    r.assert_outcomes(failed=1)
    written = list((pytester.path / "npusim-traces").glob("*.json"))
    assert len(written) == 1
    ev = json.load(open(written[0]))["traceEvents"]
    assert {e["pid"] for e in ev if e["name"] == "process_name"} == {"device 0", "device 1"}


def test_arrows_from_each_record_to_the_wait_it_satisfied():
    devs, streams, bufs = _world(4, 1)
    bridges = _ring(devs, [[row[0], row[0]] for row in streams], bufs)
    # a second round on the same bridges: two records and two waits per bridge
    _ring_again = [(d, (d + 1) % 4) for d in range(4)]
    for d, nxt in _ring_again:
        _on(d)
        streams[d][0]._runtime_stream().submit(S.OP_NOTIFY_RECORD, 0, a0=bridges[d].src_slot)
        _on(nxt)
        streams[nxt][0]._runtime_stream().submit(S.OP_NOTIFY_WAIT, 0, a0=bridges[d].dst_slot)
    for d in range(4):
        _on(d)
        streams[d][0].synchronize()
    w = T.world()
    ev = w.events()
    assert json.loads(w.chrome_json()) == {"traceEvents": ev, "displayTimeUnit": "ns"}
    starts = {e["id"]: e for e in ev if e.get("ph") == "s"}
    ends = {e["id"]: e for e in ev if e.get("ph") == "f"}
    assert len(starts) == len(ends) == 8 and set(starts) == set(ends)
    rows = {(e["pid"], e["ts"]): e for e in ev if e["ph"] == "X" and e["pid"] != "host"}
    for i, s in starts.items():
        f = ends[i]
        rec, wait = rows[(s["pid"], s["ts"])], rows[(f["pid"], f["ts"])]
        assert rec["name"] == "NOTIFY_RECORD" and wait["name"] == "NOTIFY_WAIT"
        assert s["name"] == f["name"] == rec["args"]["notify"] == wait["args"]["notify"]
        assert f["pid"] == f"device {rec['args']['peer_device']}"
        assert f["bp"] == "e"
        # the record that satisfied the wait: it ended no later than the wait
        assert rec["ts"] + rec["dur"] <= wait["ts"] + wait["dur"]
    # the second wait of each bridge points at the second record
    for b in range(4):
        mine = sorted((s["ts"], ends[i]["ts"]) for i, s in starts.items()
                      if s["name"] == f"ring{b}")
        assert len(mine) == 2 and mine[0][0] < mine[1][0] and mine[0][1] < mine[1][1]
    assert not [e for e in T.world(flows=False).events() if e["ph"] in ("s", "f")]
