"""Traces (``npusim/trace``): busy time without parked waits, user names for streams, buffers and
kernels, markers and ranges, time windows, clear, and the vectorised export against the per-row
reference."""
from __future__ import annotations

import json

import numpy as np
import pytest

import npusim
from npusim import trace as T
from npusim.device import memview as V


@npusim.kernel
def named_kernel(mem, ctx, b, nb, x: "ptr"):
    v = V.u32(mem, ctx, x, 1)
    v[0] += 1


def _dev():
    npusim.configure(trace=True)
    return npusim.Device("Ascend910B")


def test_busy_excludes_the_time_a_wait_is_parked():
    dev = _dev()
    t = dev.profile.timing
    a, b = dev.stream(name="producer"), dev.stream(name="consumer")
    x = dev.malloc(64).fill(0)
    ev = dev.event()
    a.launch("EasyOPf", 1, (x,), duration_ns=50_000)
    a.record(ev)
    b.wait(ev)
    b.launch("EasyOPf", 1, (x,), duration_ns=1_000)
    dev.synchronize()
    tr = dev.trace()
    r = tr.rows
    w = int(np.flatnonzero(r["op"] == 5)[0])
    row = r[w]
    service = t.sqe_dispatch_eager_ns + t.event_wait_ns
    assert int(tr.waiting[w]) == int(row["end"] - row["start"]) - service > 40_000
    assert tr.waiting[r["op"] != 5].sum() == 0
    line = [ln for ln in tr.summary().splitlines() if ln.startswith("consumer")][0]
    busy, waiting = (float(v) for v in line.split()[2:4])
    m = r["sq"] == row["sq"]
    assert busy == pytest.approx(round((int((r[m]["end"] - r[m]["start"]).sum())
                                        - int(tr.waiting[w])) / 1e3, 1))
    assert waiting == pytest.approx(round(int(tr.waiting[w]) / 1e3, 1))


def test_user_names_in_traces_exports_plots_and_messages(tmp_path):
    dev = _dev()
    s = dev.stream(name="comm")
    x = dev.malloc(64, name="kv cache").fill(0)
    y = dev.malloc(64)
    f = npusim.load_binary(named_kernel)["named_kernel"]
    f.launch(s, 1, (x,))
    s.copy(x, y, 16)
    with npusim.graph(stream=s) as g:
        f.launch(s, 1, (x,))
    g.replay()
    s.synchronize()
    tr = dev.trace()
    assert s.name == "comm" and "comm" in repr(s) and "kv cache" in repr(x)
    assert "comm" in tr.stream_names.values()
    assert any(n.startswith("comm (model ") for n in tr.stream_names.values())
    ev = json.loads(tr.chrome_json())["traceEvents"]
    kernels = [e for e in ev if e["name"] == "named_kernel"]
    assert len(kernels) == 2 and {e["tid"].split(" (")[0] for e in kernels} == {"comm"}
    assert [e["args"]["buffer"] for e in ev if e["name"] == "MEMCPY"] == ["kv cache"]
    from npusim.trace.plot import timeline
    fig = timeline(tr)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert "comm" in labels
    # messages: a stream's description and a fault in a named buffer
    assert "'comm'" in dev._dev.streams[s._runtime_stream().sq].describe()


def test_a_fault_message_names_the_buffer_and_the_kernel():
    dev = _dev()
    s = dev.stream(name="worker")
    small = dev.malloc(512, name="tiny")

    @npusim.kernel
    def overrun(mem, ctx, b, nb, x: "ptr"):
        v = V.u32(mem, ctx, x, 1024)
        v[0] = 1

    npusim.load_binary(overrun)["overrun"].launch(s, 1, (small,))
    with pytest.raises(npusim.AclError) as e:
        s.synchronize()
    msg = str(e.value)
    assert "kernel overrun" in msg and "buffer 'tiny'" in msg and "'worker'" in msg


def test_marks_ranges_windows_and_clear():
    dev = _dev()
    s = dev.stream()
    x = dev.malloc(64).fill(0)
    for step in range(3):
        with T.range(f"step {step}"):
            T.mark(f"begin {step}")
            s.launch("EasyOPf", 1, (x,))
            s.synchronize()
    tr = dev.trace()
    names = [m[0] for m in tr.markers]
    assert names == ["begin 0", "step 0", "begin 1", "step 1", "begin 2", "step 2"]
    ev = json.loads(tr.chrome_json())["traceEvents"]
    marks = [e for e in ev if e.get("tid") == "markers"]
    assert [(e["name"], e["ph"]) for e in marks] == [(n, "i" if n.startswith("begin") else "X")
                                                   for n in names]
    t0, t1 = tr.range_bounds("step 1")
    w = tr.window("step 1")
    assert len(w) > 0 and all(r["end"] > t0 and r["start"] < t1 for r in w.rows)
    assert int((w.rows["op"] == 1).sum()) == 1
    assert [m[0] for m in w.markers] == ["begin 1", "step 1"]
    assert all(h[2] > t0 and h[1] < t1 for h in w.host)
    assert "step 1" in w.summary() and "step 0" not in w.summary()
    assert len(tr.window(None, 0)) == 0 and len(tr.window(0)) == len(tr)
    with pytest.raises(KeyError):
        tr.window("step 9")
    T.clear()
    assert len(dev.trace()) == 0 and dev.trace().markers == () and dev.trace().host == ()
    s.launch("EasyOPf", 1, (x,))
    s.synchronize()
    assert len(dev.trace()) == 1                   # recording goes on


def test_markers_are_not_kept_while_tracing_is_off():
    npusim.configure(trace=False)
    npusim.Device("Ascend910B")
    T.mark("x")
    with T.range("y"):
        pass
    assert npusim.api.RT.markers == []


def test_the_vectorised_export_equals_the_per_row_reference(tmp_path):
    dev = _dev()
    s, u = dev.stream(name="main"), dev.stream(name="side \"quoted\"")
    x = dev.malloc(4096, name="buf").fill(0)
    ev = dev.event()
    with T.range("all"):
        for i in range(20):
            s.launch("EasyOPf", 1 + i % 3, (x,))
            s.record(ev)
            u.wait(ev)
            u.copy(int(x) + 1024, x, 64)
        with npusim.graph(stream=s) as g:
            c = g.condition(1)
            b = dev.stream()
            with g.cond_if(c, b):
                b.launch("EasyOPf", 1, (x,))
        g.replay()
    dev.synchronize()
    tr = dev.trace()
    fast = json.loads(tr.chrome_json())
    assert fast == {"traceEvents": tr.events(), "displayTimeUnit": "ns"}
    assert any(e["name"] == "COND_FIRST" and "branch" in e["args"] for e in fast["traceEvents"])
    p = tr.to_chrome(tmp_path / "t.json")
    assert json.load(open(p)) == fast
    w = tr.window(*tr.range_bounds("all"))
    assert json.loads(w.chrome_json()) == {"traceEvents": w.events(), "displayTimeUnit": "ns"}


def test_an_empty_trace_exports():
    dev = _dev()
    tr = dev.trace()
    assert json.loads(tr.chrome_json())["traceEvents"] == tr.events()
    assert tr.summary() == "(empty trace)"


def test_rows_of_destroyed_streams_keep_their_names_and_waits():
    dev = _dev()
    t = dev.profile.timing
    a, b = dev.stream(name="gone soon"), dev.stream(name="waiter")
    x = dev.malloc(64).fill(0)
    ev = dev.event()
    a.launch("EasyOPf", 1, (x,), duration_ns=30_000)
    a.record(ev)
    b.wait(ev)
    dev.synchronize()
    b.destroy()
    a.destroy()
    tr = dev.trace()
    assert {"gone soon", "waiter"} <= set(tr.stream_names.values())
    w = int(np.flatnonzero(tr.rows["op"] == 5)[0])
    r = tr.rows[w]
    assert int(tr.waiting[w]) == int(r["end"] - r["start"]) - t.sqe_dispatch_eager_ns - \
        t.event_wait_ns
