"""Model dumps (spec/aclgraph.md §1.12, §10): aclmdlRIDebugPrint log lines, the Chrome-trace JSON
of aclmdlRIDebugJsonPrint with its per-stream synthetic timing, and the DOT graph of a model."""
from __future__ import annotations

import json
import logging
import os
import re

import numpy as np

import npusim
from npusim import acl
from npusim.device.kernels import TABLE, UNIT_AICPU
from npusim.runtime import dump

from helpers.capture import (OK, begin, chip, current_ctx, end, join, join_back, lk,  # noqa: F401
                          model, new_buf, new_event, new_stream, no_acl_graph, run)

E = acl
HEAD = r"^device_id=0, stream_id=(\d+), task_id=(\d+), task_type=([A-Z_]+)"
FORMS = {
    "event": re.compile(HEAD + r", event_id=(\d+)\.$"),
    "notify": re.compile(HEAD + r", notify_id=(\d+)\.$"),
    "kernel": re.compile(HEAD + r", mix_type=(NO_MIX|MIX_AIC|MIX_AIV)\.$"),
    "plain": re.compile(HEAD + r"\.$"),
}


def classify(line: str):
    for k, rx in FORMS.items():
        mm = rx.match(line)
        if mm:
            return k, mm
    raise AssertionError(f"unexpected debug line {line!r}")


def fork_join_model():
    """origin: EasyOPf(2 blocks), record; side: wait, D2D copy, record; origin: wait, ShortOPf."""
    s, side = new_stream(), new_stream()
    x, y = new_buf(), new_buf()
    mh = begin(s)
    assert acl.rt.get_current_context()[1] == OK
    from helpers.acl import launch
    assert launch(s, "EasyOPf", 2, (x,)) == OK
    join(s, side)
    assert acl.rt.memcpy_async(y, 64, x, 64, acl.ACL_MEMCPY_DEVICE_TO_DEVICE, side) == OK
    join_back(side, s)
    lk(s, "ShortOPf", x)
    assert end(s) == mh
    return mh, s, side, x, y


# ---------------------------------------------------------------- aclmdlRIDebugPrint
def test_debug_print_checks(dev0):
    mh, *_ = fork_join_model()
    assert acl.mdl.ri_debug_print(None) == E.ACL_ERROR_INVALID_PARAM
    assert acl.mdl.ri_debug_print(new_event()) == E.ACL_ERROR_RT_INVALID_HANDLE
    primary = current_ctx()
    _, ret = acl.rt.create_context(0)
    assert ret == OK
    assert acl.mdl.ri_debug_print(mh) == E.ACL_ERROR_RT_MODEL_CONTEXT
    assert acl.mdl.ri_debug_json_print(mh, "/tmp/x.json", 0) == E.ACL_ERROR_RT_MODEL_CONTEXT
    assert acl.rt.set_current_context(primary) == OK
    assert acl.mdl.ri_debug_print(mh) == OK


def test_debug_apis_without_feature_207000(no_acl_graph):
    assert acl.mdl.ri_debug_print(0x1234) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert acl.mdl.ri_debug_json_print(0x1234, "/tmp/x", 0) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT


def test_debug_print_lines(dev0, caplog):
    mh, s, side, *_ = fork_join_model()
    run(mh, s)                                              # SW-SQ: EndGraph exists from now
    m = model(mh)
    with caplog.at_level(logging.INFO, logger="npusim.aclgraph"):
        assert acl.mdl.ri_debug_print(mh) == OK
    lines = [r.getMessage() for r in caplog.records if r.name == "npusim.aclgraph"]
    assert lines[0] == f"model dot print begin, device_id=0, model_id={m.id}."
    assert lines[-1] == f"model dot print end, device_id=0, model_id={m.id}."
    body = [classify(ln) for ln in lines[1:-1]]
    assert len(body) == m.n_tasks()
    # streams in reverse creation order, tasks in submission order with per-stream task ids
    ids = [int(mm.group(1)) for _, mm in body]
    want = [cs.id for cs in reversed(m.streams) for _ in range(cs.task_count)]
    assert ids == want
    for cs in m.streams:
        tids = [int(mm.group(2)) for _, mm in body if int(mm.group(1)) == cs.id]
        assert tids == list(range(cs.task_count))
    types = [(k, mm.group(3)) for k, mm in body]
    side_types = [t for (k, t), (_, mm) in zip(types, body) if int(mm.group(1)) == m.streams[1].id]
    assert side_types == ["EVENT_WAIT", "MEMCPY_ASYNC", "EVENT_RECORD"]
    origin_types = [t for (k, t), (_, mm) in zip(types, body)
                    if int(mm.group(1)) == m.streams[0].id]
    assert origin_types[:4] == ["KERNEL_AIVEC", "EVENT_RECORD", "EVENT_WAIT", "KERNEL_AIVEC"]
    assert origin_types[4:-1] == ["EVENT_RESET"] * len(m.capture_events)
    assert origin_types[-1] == "NOTIFY_RECORD"                      # EndGraph
    forms = {t: k for k, t in types}
    assert forms["KERNEL_AIVEC"] == "kernel" and forms["EVENT_RECORD"] == "event"
    assert forms["NOTIFY_RECORD"] == "notify" and forms["MEMCPY_ASYNC"] == "plain"


def test_debug_print_any_time_shows_what_is_recorded(dev0):
    s = new_stream()
    x = new_buf()
    mh = begin(s)
    lk(s, "EasyOPf", x)
    assert acl.mdl.ri_debug_print(mh) == OK                 # during capture
    lines = model(mh).last_debug_lines
    assert len(lines) == 3 and "task_type=KERNEL_AIVEC, mix_type=NO_MIX." in lines[1]
    end(s)


def test_cascade_hop_and_aicpu_kernel_lines(chip):
    chip("Ascend310P")
    if "TestAicpuOp" not in TABLE.by_name:
        TABLE.register("TestAicpuOp", TABLE.body(TABLE.id("EasyOPf")), 1_000, unit=UNIT_AICPU)
    s = new_stream()
    x = new_buf()
    mh = begin(s)
    for _ in range(2016):
        lk(s, "EasyOPf", x)
    lk(s, "TestAicpuOp", x)
    end(s)
    assert acl.mdl.ri_debug_print(mh) == OK
    lines = model(mh).last_debug_lines
    hop = [ln for ln in lines if "STREAM_ACTIVE" in ln]
    assert len(hop) == 1 and classify(hop[0])[0] == "plain"
    cpu = [ln for ln in lines if "KERNEL_AICPU" in ln]
    assert len(cpu) == 1 and classify(cpu[0])[0] == "plain"        # no mix_type for AICPU
    recs = dump.json_records(model(mh), verbose=True)
    (r,) = [r for r in recs if r["args"]["Task Type"] == "KERNEL_AICPU"]
    assert r["args"]["Numblocks"] == 1 and "Kernel Args" not in r["args"]
    assert all("Kernel Args" in r["args"] for r in recs if r["args"]["Task Type"] == "KERNEL_AIVEC")
    run(mh, s)


# ---------------------------------------------------------------- aclmdlRIDebugJsonPrint
def read_json(path):
    text = open(path).read()
    return text, json.loads(text)


def test_json_checks(dev0, tmp_path):
    mh, *_ = fork_join_model()
    assert acl.mdl.ri_debug_json_print(None, str(tmp_path / "a"), 0) == E.ACL_ERROR_INVALID_PARAM
    assert acl.mdl.ri_debug_json_print(mh, None, 0) == E.ACL_ERROR_INVALID_PARAM
    assert acl.mdl.ri_debug_json_print(new_event(), str(tmp_path / "a"), 0) == \
        E.ACL_ERROR_RT_INVALID_HANDLE
    bad = str(tmp_path / "no" / "such" / "dir" / "m.json")
    assert acl.mdl.ri_debug_json_print(mh, bad, 0) == E.ACL_ERROR_RT_PARAM_INVALID


def test_json_records_and_synthetic_timing(dev0, tmp_path):
    mh, s, side, x, y = fork_join_model()
    run(mh, s)
    m = model(mh)
    p = tmp_path / "m.json"
    assert acl.mdl.ri_debug_json_print(mh, str(p), acl.ACL_MDLRI_DEBUG_JSON_PRINT_SUMMARY) == OK
    text, recs = read_json(p)
    lines = text.split("\n")
    assert lines[0] == "[" and lines[-1].endswith("}}]")
    assert all(ln.endswith("},") for ln in lines[1:-1])     # one record per line
    assert len(recs) == m.n_tasks()
    pid = f"{os.getpid()} aclGraph"
    steps = {"NOP": (0.5, 1)}
    by_stream = {}
    for r in recs:
        assert list(r) == ["name", "pid", "tid", "ts", "dur", "ph", "args"]
        assert r["pid"] == pid and r["ph"] == "X"
        a = r["args"]
        assert list(a)[:4] == ["Model Id", "Stream Id", "Task Id", "Task Type"]
        assert a["Model Id"] == m.id and r["tid"] == f"stream{a['Stream Id']}"
        by_stream.setdefault(a["Stream Id"], []).append(r)
    assert list(by_stream) == [cs.id for cs in reversed(m.streams)]
    for sid, rs in by_stream.items():
        ts = 0
        for i, r in enumerate(rs):
            t = r["args"]["Task Type"]
            assert r["args"]["Task Id"] == i and r["ts"] == ts and isinstance(r["ts"], int)
            dur, step = steps.get(t) or ((4.5, 5) if "RECORD" in t else
                                         (14.5, 15) if "WAIT" in t else (9.5, 10))
            assert r["dur"] == dur and isinstance(r["dur"], float)
            ts += step
    kern = [r for r in recs if r["args"]["Task Type"] == "KERNEL_AIVEC"]
    assert [r["name"] for r in kern] == ["EasyOPf", "ShortOPf"]
    assert [r["args"]["Numblocks"] for r in kern] == [2, 1]
    assert all("Schem Mode" in r["args"] and "Kernel Args" not in r["args"] for r in kern)
    ev = [r for r in recs if r["args"]["Task Type"].startswith("EVENT_")]
    assert all(re.fullmatch(r"EVENT_(RECORD|WAIT|RESET)_\d+", r["name"]) for r in ev)
    eg = [r for r in recs if r["args"]["Task Type"] == "NOTIFY_RECORD"]
    assert len(eg) == 1 and eg[0]["name"] == f"NOTIFY_RECORD_{m.endgraph_slot}"
    assert [r["name"] for r in recs if r["args"]["Task Type"] == "MEMCPY_ASYNC"] == \
        ["MEMCPY_ASYNC"]


def test_json_verbose_kernel_args_and_flag_bits(dev0, tmp_path):
    s = new_stream()
    x = new_buf()
    mh = begin(s)
    lk(s, "EasyOPf", x)
    end(s)
    p = tmp_path / "v.json"
    assert acl.mdl.ri_debug_json_print(mh, str(p), acl.ACL_MDLRI_DEBUG_JSON_PRINT_VERBOSE) == OK
    (r,) = read_json(p)[1]
    assert r["args"]["Kernel Args"] == f"0x{x:016x}" and r["args"]["Kernel Args Size"] == 8
    # only bit 0 is used
    q = tmp_path / "q.json"
    assert acl.mdl.ri_debug_json_print(mh, str(q), 0x7) == OK
    assert read_json(q)[1] == [r]
    assert acl.mdl.ri_debug_json_print(mh, str(q), 0x6) == OK
    assert "Kernel Args" not in read_json(q)[1][0]["args"]


def test_json_active_stream_id_on_cascade(chip, tmp_path):
    chip("Ascend310P")
    s = new_stream()
    x = new_buf()
    mh = begin(s)
    for _ in range(2017):
        lk(s, "EasyOPf", x)
    end(s)
    m = model(mh)
    p = tmp_path / "c.json"
    assert acl.mdl.ri_debug_json_print(mh, str(p), 0) == OK
    recs = read_json(p)[1]
    hop = [r for r in recs if r["args"]["Task Type"] == "STREAM_ACTIVE"]
    assert len(hop) == 1 and hop[0]["args"]["Active Stream Id"] == m.streams[1].id
    assert hop[0]["args"]["Stream Id"] == m.streams[0].id
    assert recs[0]["args"]["Stream Id"] == m.streams[1].id       # reverse creation order
    # the classic profile has its EndGraph from EndCapture on
    assert any(r["args"]["Task Type"] == "NOTIFY_RECORD" for r in recs)


def test_json_logs_the_dot_print_lines(dev0, tmp_path, caplog):
    mh, *_ = fork_join_model()
    with caplog.at_level(logging.INFO, logger="npusim.aclgraph"):
        assert acl.mdl.ri_debug_json_print(mh, str(tmp_path / "m.json"), 0) == OK
    msgs = [r.getMessage() for r in caplog.records if r.name == "npusim.aclgraph"]
    assert msgs[0].startswith("model dot print begin")
    assert msgs[-1].startswith("model dot print end")


# ---------------------------------------------------------------- DOT
def test_dot_has_one_node_per_task_and_event_edges(dev0):
    mh, s, side, *_ = fork_join_model()
    m = model(mh)
    text = dump.to_dot(m)
    assert text.startswith(f"digraph model_{m.id} {{") and text.rstrip().endswith("}")
    nodes = re.findall(r"^\s+(s\d+_\d+) \[label=", text, re.M)
    assert len(nodes) == len(set(nodes)) == m.n_tasks()
    ev_edges = re.findall(r"^\s+(s\d+_\d+) -> (s\d+_\d+) \[color=blue", text, re.M)
    # fork (origin record -> side wait) and join (side record -> origin wait)
    o, sd = m.streams[0].id, m.streams[1].id
    assert (f"s{o}_1", f"s{sd}_0") in ev_edges and (f"s{sd}_2", f"s{o}_2") in ev_edges
    assert len(ev_edges) == 2
    order = re.findall(r"^\s+(s\d+_\d+) -> (s\d+_\d+);$", text, re.M)
    assert len(order) == sum(cs.task_count - 1 for cs in m.streams)


def test_dot_cascade_edge_and_pythonic_wrappers(chip, tmp_path):
    chip("Ascend310P")
    dev = npusim.Device()
    st = dev.stream()
    b = dev.malloc(64)
    b.fill(0)
    with npusim.graph(stream=st) as g:
        for _ in range(2017):
            st.launch("EasyOPf", 1, args=(b,))
    text = g.to_dot(tmp_path / "g.dot")
    assert open(tmp_path / "g.dot").read() == text
    assert len(re.findall(r'label="cascade"', text)) == 1
    lines = g.debug_print()
    assert lines[0].startswith("model dot print begin")
    g.to_json(tmp_path / "g.json", verbose=True)
    assert len(json.load(open(tmp_path / "g.json"))) == g.num_tasks
    g.replay()
    st.synchronize()
    assert b.read(np.uint32, 1)[0] == 2017
