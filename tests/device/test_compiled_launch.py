"""The compiled launch path (``npusim/device/launchjit.py``, issue 40 part 1) against its reference.

One program — eager launches past a full ring, memsets, records and waits across streams, a
GLOBAL capture over three streams whose launches interleave (a new run of the capture order at
almost every task) and grow their rings, a capture whose streams cascade, replays — runs twice
on fresh simulators: through the compiled entry points and through the same bodies as Python
(``launchjit.set_compiled(False)``). Every effect must be the same: the host clock, each SQE
row written (eager rings and capture streams), the task ids, the capture-order sequence ids, the
streams' counters, the data the replays computed, the census.
"""
from __future__ import annotations

import numpy as np

import npusim
from npusim import acl
from npusim.device import launchjit as LJ
from npusim.runtime.runtime import RT
from npusim.runtime.stream import last_eager_task

from helpers.capture import model as model_of
from helpers.kernel import counter_args, easy_counter


def _ok(*values):
    *vals, ret = values
    assert ret == 0, ret
    return vals[0] if len(vals) == 1 else tuple(vals)


def _rows(st, cs) -> bytes:
    """The capture stream's SQE rows, as written."""
    st.flush()
    base = st.row_of(cs.sq, 0)
    return st.pool[base:base + cs.task_count].tobytes()


def _program(compiled: bool, memo: bool = True) -> dict:
    LJ.set_compiled(compiled)
    launch = acl.rt.launch_kernel if memo else acl.rt.launch_kernel.__general__
    hits = []
    try:
        npusim.reset()
        acl.init()
        acl.rt.set_device(0)
        lib = _ok(*acl.rt.binary_load_from_file(npusim.samples.binary_path()))
        easy = _ok(*acl.rt.binary_get_function(lib, "EasyOPf"))
        streams = [_ok(*acl.rt.create_stream()) for _ in range(3)]
        bufs, args = [], []
        for _ in range(3):
            x, a = counter_args()
            bufs.append(x)
            args.append(a)
        new = acl.rt.create_event_ex_with_flag
        events = [_ok(*new(acl.ACL_EVENT_SYNC)) for _ in range(4)]
        s0, s1, s2 = streams
        dev = RT.devices[0]
        st = dev.state
        out = {}
        # eager: more launches than a ring holds (full-ring waits), memsets, records and waits
        for i in range(2500):
            _ok(launch(easy, 1, args[0], 8, s0))
            if i == 2000:
                hits.append(len(LJ.MEMO))
            if i % 100 == 0:
                _ok(acl.rt.memset_async(bufs[1], 64, 0, 64, s1))
                _ok(acl.rt.record_event(events[0], s0))
                _ok(acl.rt.stream_wait_event(s1, events[0]))
                _ok(launch(easy, 2, args[1], 8, s1))
        out["eager_host"] = RT.host_ns
        out["last_task"] = last_eager_task()
        _ok(acl.rt.synchronize_device())
        out["eager_seq"] = [dev.streams[q].task_seq for q in sorted(dev.streams)]
        # a capture over three streams, interleaved (a new run almost every task)
        _ok(acl.mdl.ri_capture_begin(s0, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL))
        _ok(acl.rt.record_event(events[1], s0))
        _ok(acl.rt.stream_wait_event(s1, events[1]))
        _ok(acl.rt.stream_wait_event(s2, events[1]))
        for i in range(300):
            for k, s in enumerate(streams):
                if k == 0 or i % 3:
                    _ok(launch(easy, 1 + k, args[k], 8, s))
            if i == 200:
                hits.append(len(LJ.MEMO))
            if i % 50 == 0:
                _ok(acl.rt.memset_async(bufs[2], 4, 0, 4, s2))
        _ok(acl.rt.record_event(events[2], s1))
        _ok(acl.rt.stream_wait_event(s0, events[2]))
        _ok(acl.rt.record_event(events[3], s2))
        _ok(acl.rt.stream_wait_event(s0, events[3]))
        mh = _ok(*acl.mdl.ri_capture_end(s0))
        m = model_of(mh)
        out["cap_host"] = RT.host_ns
        out["cap"] = [(_rows(st, cs), cs.task_count, cs.sqe_num, cs.last_op, cs.capacity)
                      for cs in m.streams]
        out["seq"] = [[m.seq_id(cs, p) for p in range(cs.task_count)] for cs in m.streams]
        out["runs"] = [list(cs.seq_runs) for cs in m.streams]
        # a capture that cascades every 20 SQEs
        _ok(acl.mdl.ri_capture_begin(s1, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL))
        m2 = RT.handles.get("stream", s1)[0].capture.model
        m2.cascade_at = 20
        for _ in range(90):
            _ok(launch(easy, 1, args[1], 8, s1))
        mh2 = _ok(*acl.mdl.ri_capture_end(s1))
        out["cascade"] = [(_rows(st, cs), cs.task_count, cs.sqe_num) for cs in m2.streams]
        # replays
        for _ in range(2):
            _ok(acl.mdl.ri_execute_async(mh, s0))
            _ok(acl.mdl.ri_execute_async(mh2, s1))
        _ok(acl.rt.synchronize_device())
        out["data"] = []
        for x in bufs:
            host = np.zeros(16, np.uint32)
            _ok(acl.rt.memcpy(acl.util.numpy_to_ptr(host), 64, x, 64,
                              acl.ACL_MEMCPY_DEVICE_TO_HOST))
            out["data"].append(host.tolist())
        out["end_host"] = RT.host_ns
        out["census"] = npusim.census().devices
        _ok(acl.mdl.ri_destroy(mh))
        _ok(acl.mdl.ri_destroy(mh2))
        out["census_after"] = npusim.census().devices
        assert all(hits) == memo, hits          # the launches went through the memo (or not)
        return out
    finally:
        LJ.set_compiled(True)
        npusim.reset()


def test_compiled_and_reference_paths_have_the_same_effects():
    ref = _program(False)
    fast = _program(True)
    assert set(ref) == set(fast)
    for k in ref:
        assert fast[k] == ref[k], k
    assert ref["data"][0][0] == 2500 + 2 * 300 + 2 * 0      # s0's launches: eager + replays
    assert len(ref["cascade"]) > 3                          # the 90 tasks cascaded
    assert sum(map(len, ref["runs"])) > 300                 # interleaved: many runs


def test_launch_memo_has_the_general_paths_effects():
    """acl/_launchmemo.py: the same program through the memo's front and through the general
    wrapper alone (``launch_kernel.__general__``) — every effect the same."""
    general = _program(True, memo=False)
    memo = _program(True, memo=True)
    for k in general:
        assert memo[k] == general[k], k


def test_reference_path_is_selected_and_restored():
    LJ.set_compiled(False)
    try:
        assert not LJ.compiled()
        assert LJ.capture_kernel is LJ._capture_kernel_py
    finally:
        LJ.set_compiled(True)
    assert LJ.compiled()


def test_model_rows_follow_models_in_the_census():
    npusim.reset()
    acl.init()
    acl.rt.set_device(0)
    s = _ok(*acl.rt.create_stream())
    before = npusim.census()
    _ok(acl.mdl.ri_capture_begin(s, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL))
    mh = _ok(*acl.mdl.ri_capture_end(s))
    grown = npusim.census().diff(before)
    assert grown["device 0 model rows"] == grown["device 0 models"] == 1
    _ok(acl.mdl.ri_destroy(mh))
    assert "device 0 model rows" not in npusim.census().diff(before)


def test_rings_grow_past_the_reserve_and_are_re_pointed():
    """SQs past the reserved ``rings`` rows: the array grows, the directory follows it and the
    compiled calls write the right rows (an eager launch on the last SQ made)."""
    npusim.reset()
    acl.init()
    acl.rt.set_device(0)
    st = RT.devices[0].state
    old = st.jdir[LJ.J_RINGS]
    st.rings = st.rings[:8].copy()              # as if the reserve were 8 rows
    st._rv = memoryview(st.rings).cast("B").cast("q")
    st.repoint()
    easy, x, a = easy_counter()
    streams = [_ok(*acl.rt.create_stream()) for _ in range(12)]
    assert len(st.rings) >= 16 and st.jdir[LJ.J_RINGS] != old
    for s in streams:
        for _ in range(3):
            _ok(acl.rt.launch_kernel(easy, 1, a, 8, s))
    _ok(acl.rt.synchronize_device())
    host = np.zeros(1, np.uint32)
    _ok(acl.rt.memcpy(acl.util.numpy_to_ptr(host), 4, x, 4, acl.ACL_MEMCPY_DEVICE_TO_HOST))
    assert host[0] == 36
    npusim.reset()
