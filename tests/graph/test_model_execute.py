"""Model lifecycle (spec/aclgraph.md §1.6–1.9, §1.14, §4.5, §6): the status machine, every check
of aclmdlRIExecuteAsync / aclmdlRIExecute / aclmdlRIDestroy / aclmdlRIUpdate, replays, the
1024 SQ/CQ limit per graph (207005) and the pool recycling between models, destroy of a running
model (107037), and rtStreamAddToModel with its notify synchronisation."""
from __future__ import annotations

import os

import pytest

from npusim import acl
from npusim.runtime import model as M
from npusim.runtime.api_mdl import capture_stream_handle

from helpers.acl import LONG_NS, host_ns, stream_done
from helpers.capture import (ACTIVE, NONE, OK, begin, chip, current_ctx, end, join,  # noqa: F401
                          join_back, lk, make_sub_model, model, new_buf, new_event, new_stream,
                          no_acl_graph, record, run, status_of, u32, wait)

E = acl
SLOW = pytest.mark.skipif(not os.environ.get("NPUSIM_SLOW"),
                          reason="slow (minutes): set NPUSIM_SLOW=1")


def captured(ops=("EasyOPf",), s=None, x=None):
    """(model handle, stream, buffer) of a finished capture of ``ops`` on x."""
    s = s or new_stream()
    x = x or new_buf()
    begin(s)
    for k in ops:
        lk(s, k, x)
    return end(s), s, x


# ---------------------------------------------------------------- §6.2 status machine
def test_status_machine(dev0):
    s, side = new_stream(), new_stream()
    m0 = model(make_sub_model())
    assert m0.status == M.NONE                              # created, not captured
    mh = begin(s)
    m = model(mh)
    assert m.status == M.CAPTURE_ACTIVE and m.is_capturing
    join(s, side)                                           # a join keeps it ACTIVE
    assert m.status == M.CAPTURE_ACTIVE
    join_back(side, s)
    end(s)
    assert m.status == M.READY and not m.is_capturing
    run(mh, s)
    assert m.status == M.READY                              # execution does not change it
    # INVALIDATED is sticky until the end of the capture (which then destroys the root)
    a, b = new_stream(), new_stream()
    ma, mb = model(begin(a)), model(begin(b))
    e = new_event()
    record(e, a)
    assert acl.rt.record_event(e, b) == E.ACL_ERROR_STREAM_CAPTURE_CONFLICT
    ma.terminate_capture()
    assert ma.status == M.CAPTURE_INVALIDATED and ma.is_capturing
    assert acl.mdl.ri_capture_end(a)[1] == E.ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED
    assert ma.destroyed and mb.status == M.CAPTURE_INVALIDATED
    acl.mdl.ri_capture_end(b)


# ---------------------------------------------------------------- §1.6 execute checks
def test_execute_checks_in_order(dev0):
    mh, s, x = captured()
    e = new_event()
    assert acl.mdl.ri_execute_async(None, s) == E.ACL_ERROR_INVALID_PARAM
    assert acl.mdl.ri_execute_async(e, s) == E.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.mdl.ri_execute_async(mh, e) == E.ACL_ERROR_RT_INVALID_HANDLE
    (cs,), _ = acl.mdl.ri_get_streams(mh)
    assert acl.mdl.ri_execute_async(mh, cs) == E.ACL_ERROR_RT_PARAM_INVALID      # model stream
    from helpers.capture import on_thread
    assert on_thread(acl.mdl.ri_execute_async, mh, s) == E.ACL_ERROR_RT_CONTEXT_NULL
    primary = current_ctx()
    _, ret = acl.rt.create_context(0)
    assert ret == OK
    assert acl.mdl.ri_execute_async(mh, new_stream()) == E.ACL_ERROR_RT_MODEL_CONTEXT
    assert acl.rt.set_current_context(primary) == OK
    assert u32(x)[0] == 0                                   # nothing ran
    run(mh, s)
    assert u32(x)[0] == 1


def test_execute_before_end_107026_and_on_capturing_stream_107027(dev0):
    s, other = new_stream(), new_stream()
    done, s2, x = captured()
    mh = begin(s)
    assert acl.mdl.ri_execute_async(mh, other) == E.ACL_ERROR_RT_MODEL_CAPTURED
    assert acl.mdl.ri_execute_async(done, s) == E.ACL_ERROR_RT_STREAM_CAPTURED
    # a graph launch is never captured into another graph, but another finished model may run
    # on a non-capturing stream while some capture is active (no mode check)
    assert acl.mdl.ri_execute_async(done, other) == OK
    assert model(mh).n_tasks() == 0
    end(s)
    assert acl.rt.synchronize_stream(other) == OK
    assert u32(x)[0] == 1


def test_execute_not_ready_507011(dev0):
    mh, s, _ = captured()
    m = model(mh)
    for st in (M.UPDATING, M.FAULT):
        m.status = st
        assert acl.mdl.ri_execute_async(mh, s) == E.ACL_ERROR_RT_MODEL_EXECUTE
    m.status = M.READY
    run(mh, s)


def test_execute_sync_refuses_capture_models(dev0):
    mh, s, _ = captured()
    assert acl.mdl.ri_execute(None, -1) == E.ACL_ERROR_INVALID_PARAM
    assert acl.mdl.ri_execute(mh, 0) == E.ACL_ERROR_RT_PARAM_INVALID
    assert acl.mdl.ri_execute(mh, -2) == E.ACL_ERROR_RT_PARAM_INVALID
    assert acl.mdl.ri_execute(mh, -1) == E.ACL_ERROR_RT_PARAM_INVALID       # ACL Graph mode
    assert acl.mdl.ri_execute(mh, 1000) == E.ACL_ERROR_RT_PARAM_INVALID


# ---------------------------------------------------------------- replays
def test_repeated_execution_is_asynchronous_and_ordered(dev0):
    mh, s, x = captured(("EasyOPf", "ShortOPf"))
    for _ in range(5):
        assert acl.mdl.ri_execute_async(mh, s) == OK
    assert acl.rt.synchronize_stream(s) == OK
    v = 0
    for _ in range(5):
        v = (v + 1) * 2
    assert u32(x)[0] == v
    for _ in range(3):                                     # with a sync after each replay
        run(mh, s)
        v = (v + 1) * 2
        assert u32(x)[0] == v


def test_runs_in_flight_stay_bounded_over_many_launches(dev0):
    """A model keeps one entry per launch not yet seen complete (refCount_); completed ones are
    dropped as the list doubles, so 5,000 launches through a full ring keep at most twice what
    is in flight, and after a synchronize the model is not running."""
    mh, s, x = captured(("EasyOPf",))
    m = model(mh)
    depth = m.device.profile.rtsq_depth                    # the exe stream's ring
    most = 0
    for _ in range(5_000):
        assert acl.mdl.ri_execute_async(mh, s) == OK
        most = max(most, len(m.runs))
    assert most <= max(M.RUNS_TRIM_AT, depth)              # 2 x (depth / 2 launches in flight)
    assert acl.rt.synchronize_stream(s) == OK
    assert not m.running() and len(m.runs) == 0
    assert u32(x)[0] == 5_000


def test_replay_returns_before_the_graph_finishes(dev0):
    mh, s, x = captured(("LongOPf",))
    t0 = host_ns()
    assert acl.mdl.ri_execute_async(mh, s) == OK
    assert host_ns() - t0 < LONG_NS // 10                   # enqueued, not waited for
    assert not stream_done(s)
    assert acl.rt.synchronize_stream(s) == OK
    assert host_ns() - t0 >= LONG_NS
    assert u32(x)[0] == 1


def test_two_exe_streams(dev0):
    mh, s, x = captured(("EasyOPf", "ShortOPf"))
    e1, e2 = new_stream(), new_stream()
    run(mh, e1)
    run(mh, e2)
    assert u32(x)[0] == 6
    # ordered without a host sync: e2 waits for e1's replay through an event
    ev = new_event()
    assert acl.mdl.ri_execute_async(mh, e1) == OK
    record(ev, e1)
    wait(e2, ev)
    assert acl.mdl.ri_execute_async(mh, e2) == OK
    assert acl.rt.synchronize_stream(e2) == OK
    assert u32(x)[0] == ((6 + 1) * 2 + 1) * 2


def test_stream_work_before_and_after_a_replay_is_ordered(dev0):
    mh, s, x = captured(("ShortOPf",))
    lk(s, "LongOPf", x)                     # eager, before: x = 1 after 50 ms
    assert acl.mdl.ri_execute_async(mh, s) == OK          # x = 2
    lk(s, "EasyOPf", x)                     # eager, after: x = 3
    assert acl.rt.synchronize_stream(s) == OK
    assert u32(x)[0] == 3


# ---------------------------------------------------------------- 207005 and the SQ/CQ pool
def capture_n_streams(s, x, n_streams: int):
    """A capture whose model has ``n_streams`` capture streams, made cheap by shrinking the
    model's capture depth to 34 (cascade after 2 SQEs: 34 - 32 reserve)."""
    mh = begin(s)
    m = model(mh)
    m.capture_depth, m.cascade_at = 34, 2
    n_tasks = 2 * n_streams
    for _ in range(n_tasks):
        lk(s, "EasyOPf", x)
    assert end(s) == mh
    assert len(m.streams) == n_streams
    return mh, n_tasks


def test_a_graph_of_1024_streams_runs_1025_is_207005(dev0):
    s = new_stream()
    x, y = new_buf(), new_buf()
    ok, n = capture_n_streams(s, x, 1024)
    run(ok, s)
    assert u32(x)[0] == n
    big, _ = capture_n_streams(s, y, 1025)
    assert acl.mdl.ri_execute_async(big, s) == E.ACL_ERROR_RT_RESOURCE_ALLOC_FAIL
    assert acl.mdl.ri_execute_async(big, s) == E.ACL_ERROR_RT_RESOURCE_ALLOC_FAIL
    assert not model(big).built and model(big).status == M.READY
    assert u32(y)[0] == 0
    assert acl.mdl.ri_destroy(big) == OK
    run(ok, s)                                      # the 1024-stream graph is unaffected
    assert u32(x)[0] == 2 * n


@SLOW
def test_207005_on_the_classic_profile_with_real_depth(chip):
    """> 1024 capture streams of 2016 SQEs each on the 310P profile (about 2 M captures)."""
    chip("Ascend310P")
    s = new_stream()
    x = new_buf()
    mh = begin(s)
    for _ in range(1024 * 2016 + 1):
        lk(s, "EasyOPf", x)
    end(s)
    assert len(model(mh).streams) == 1025
    assert acl.mdl.ri_execute_async(mh, s) == E.ACL_ERROR_RT_RESOURCE_ALLOC_FAIL


def test_pool_is_recycled_between_idle_models(dev0):
    s = new_stream()
    x, y = new_buf(), new_buf()
    a, na = capture_n_streams(s, x, 1000)
    b, nb = capture_n_streams(s, y, 100)
    dev = model(a).device
    run(a, s)
    assert model(a).built and dev.sqcq_used == 1000
    run(b, s)                                       # a is idle: its SQ/CQs are released
    assert not model(a).built and model(b).built and dev.sqcq_used == 100
    run(a, s)                                       # a rebuilds, b gives way
    assert model(a).built and not model(b).built
    assert u32(x)[0] == 2 * na and u32(y)[0] == nb


def test_recycling_takes_the_oldest_idle_model_after_a_rebuild_out_of_order(dev0):
    """Recycling takes the idle built models oldest first (creation order), whatever order they
    were built in: ``a`` rebuilt after ``c`` still comes first, so the next shortage releases
    ``a``, not ``c`` (the device's recycling heaps are keyed by creation)."""
    s = new_stream()
    bufs = [new_buf() for _ in range(3)]
    (a, _), (b, _), (c, _) = (capture_n_streams(s, x, 400) for x in bufs)
    dev = model(a).device
    run(a, s)
    run(b, s)
    run(c, s)                                       # 1,200 > 1,024: a (oldest idle) goes
    assert [model(h).built for h in (a, b, c)] == [False, True, True]
    run(a, s)                                       # b goes; a is built after c
    assert set(dev.built_models) == {model(a), model(c)}
    run(b, s)                                       # the oldest idle is a, not c
    assert [model(h).built for h in (a, b, c)] == [False, True, True]


@pytest.mark.parametrize("seed", range(3))
def test_recycling_releases_the_oldest_idle_models_until_the_new_one_fits(dev0, seed):
    """Random executions of graphs of 60-400 streams, each synchronized (so every built model is
    idle): each build releases exactly the oldest built models (creation order) needed for it
    to fit, as the walk over the built models did before the device kept its recycling index."""
    import random
    rnd = random.Random(seed)
    s = new_stream()
    x = new_buf()
    graphs = [capture_n_streams(s, x, rnd.randint(60, 400))[0] for _ in range(8)]
    dev = model(graphs[0]).device
    pool = dev.profile.sqcq_pool
    for _ in range(40):
        h = rnd.choice(graphs)
        m = model(h)
        expect = {o for o in dev.built_models}
        if not m.built:
            need = sum(len(o.streams) for o in m.all_models())
            used = dev.sqcq_used
            for o in sorted(dev.built_models, key=lambda o: o.id):
                if used + need <= pool:
                    break
                expect.discard(o)
                used -= o.sqcq
            expect.add(m)
        run(h, s)
        assert set(dev.built_models) == expect


def test_a_running_model_is_recycled_once_it_finishes(dev0):
    """The runtime retries every 1 ms while the pool is short (§6.3 phase 2): the second launch
    waits for the first graph to finish, then takes its SQ/CQ pairs."""
    s, s2 = new_stream(), new_stream()
    x, y = new_buf(), new_buf()
    mh_a = begin(s)
    ma = model(mh_a)
    ma.capture_depth, ma.cascade_at = 34, 2
    lk(s, "LongOPf", x)
    for _ in range(2 * 1000 - 1):
        lk(s, "EasyOPf", y)
    end(s)
    b, nb = capture_n_streams(s2, y, 100)
    t0 = host_ns()
    assert acl.mdl.ri_execute_async(mh_a, s) == OK
    assert acl.mdl.ri_execute_async(b, s2) == OK     # a is still running: wait for it
    assert host_ns() - t0 >= LONG_NS
    assert not ma.built and model(b).built
    assert acl.rt.synchronize_stream(s2) == OK
    assert u32(x)[0] == 1 and u32(y)[0] == 2 * 1000 - 1 + nb


def test_destroy_releases_the_pool(dev0):
    s = new_stream()
    x = new_buf()
    a, _ = capture_n_streams(s, x, 10)
    dev = model(a).device
    run(a, s)
    assert dev.sqcq_used == 10
    assert acl.mdl.ri_destroy(a) == OK
    assert dev.sqcq_used == 0


# ---------------------------------------------------------------- §1.8 destroy
def test_destroy_checks(dev0):
    mh, s, _ = captured()
    assert acl.mdl.ri_destroy(None) == E.ACL_ERROR_INVALID_PARAM
    assert acl.mdl.ri_destroy(new_event()) == E.ACL_ERROR_RT_INVALID_HANDLE
    primary = current_ctx()
    _, ret = acl.rt.create_context(0)
    assert ret == OK
    assert acl.mdl.ri_destroy(mh) == E.ACL_ERROR_RT_MODEL_CONTEXT
    assert acl.rt.set_current_context(primary) == OK
    assert acl.mdl.ri_destroy(mh) == OK
    assert acl.mdl.ri_destroy(mh) == E.ACL_ERROR_RT_INVALID_HANDLE        # destroyed
    assert acl.mdl.ri_execute_async(mh, s) == E.ACL_ERROR_RT_INVALID_HANDLE
    s2 = new_stream()
    cap = begin(s2)
    assert acl.mdl.ri_destroy(cap) == E.ACL_ERROR_RT_MODEL_CAPTURED
    end(s2)
    assert acl.mdl.ri_destroy(cap) == OK


def test_destroy_waits_for_a_short_running_model(dev0):
    mh, s, x = captured(("LongOPf",))
    t0 = host_ns()
    assert acl.mdl.ri_execute_async(mh, s) == OK
    assert acl.mdl.ri_destroy(mh) == OK                    # polls until the launch completes
    assert host_ns() - t0 >= LONG_NS
    assert acl.rt.synchronize_stream(s) == OK
    assert u32(x)[0] == 1


def test_destroy_of_a_model_running_longer_than_10s_107037(dev0):
    s = new_stream()
    x = new_buf()
    mh = begin(s)
    lk(s, "LongOPf", x, duration_ns=12_000_000_000)        # a LongOPf that runs 12 s
    end(s)
    assert acl.mdl.ri_execute_async(mh, s) == OK
    t0 = host_ns()
    assert acl.mdl.ri_destroy(mh) == E.ACL_ERROR_RT_MODEL_RUNNING
    assert host_ns() - t0 >= 10_000_000_000                # ~10 000 polls of 1 ms
    assert model(mh).status == M.READY                     # still valid
    assert acl.rt.synchronize_stream(s) == OK
    assert acl.mdl.ri_destroy(mh) == OK
    assert u32(x)[0] == 1


def test_destroy_of_a_blocked_model_107037(dev0):
    """A graph waiting on an external event nobody records never finishes."""
    s = new_stream()
    ext, ret = acl.rt.create_event_with_flag(acl.ACL_EVENT_EXTERNAL)
    assert ret == OK
    mh = begin(s)
    wait(s, ext)
    end(s)
    assert acl.mdl.ri_execute_async(mh, s) == OK
    assert acl.mdl.ri_destroy(mh) == E.ACL_ERROR_RT_MODEL_RUNNING
    record(ext, new_stream())
    assert acl.rt.synchronize_stream(s) == OK
    assert acl.mdl.ri_destroy(mh) == OK


def test_classic_profile_destroy_never_waits(chip):
    """§12.15: 310P models keep no running ref count, so destroy never returns 107037."""
    chip("Ascend310P")
    s = new_stream()
    x = new_buf()
    mh = begin(s)
    lk(s, "LongOPf", x, duration_ns=12_000_000_000)
    end(s)
    assert acl.mdl.ri_execute_async(mh, s) == OK
    t0 = host_ns()
    assert acl.mdl.ri_destroy(mh) == OK
    assert host_ns() - t0 < 1_000_000                      # the host did not wait
    assert acl.mdl.ri_destroy(mh) == E.ACL_ERROR_RT_INVALID_HANDLE


# ---------------------------------------------------------------- §1.9 update
def test_update_checks(dev0):
    mh, s, _ = captured()
    assert acl.mdl.ri_update(None) == E.ACL_ERROR_RT_PARAM_INVALID          # no ACL check
    assert acl.mdl.ri_update(new_event()) == E.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.mdl.ri_update(mh) == OK                                       # READY: no-op
    m = model(mh)
    m.status = M.FAULT
    assert acl.mdl.ri_update(mh) == E.ACL_ERROR_RT_MODEL_UPDATE_FAILED
    m.status = M.READY
    s2 = new_stream()
    cap = begin(s2)
    assert acl.mdl.ri_update(cap) == E.ACL_ERROR_RT_MODEL_UPDATE_FAILED     # capturing
    end(s2)


def test_update_needs_sw_sq(chip):
    chip("Ascend310P")
    s = new_stream()
    begin(s)
    mh = end(s)
    assert acl.mdl.ri_update(mh) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT


# ---------------------------------------------------------------- §1.14 misc model APIs
def test_get_streams_name_id(dev0):
    s, side = new_stream(), new_stream()
    mh = begin(s)
    join(s, side)
    join_back(side, s)
    assert acl.mdl.ri_get_streams(None)[1] == E.ACL_ERROR_RT_PARAM_INVALID   # §13.2: rt's check
    streams, ret = acl.mdl.ri_get_streams(mh)           # no capture-state check
    assert ret == OK and len(streams) == 2
    m = model(mh)
    assert [acl.mdl.ri_get_tasks_by_stream(h)[1] for h in streams] == [OK, OK]
    assert streams[-1] == capture_stream_handle(m.streams[0])   # §13.1: newest first, origin last
    end(s)
    assert acl.mdl.ri_get_streams(mh)[0] == streams
    mid, ret = acl.mdl.ri_get_id(mh)
    assert ret == OK and mid == model(mh).id
    assert acl.mdl.ri_get_name(mh, 8) == ("", OK)
    assert acl.mdl.ri_set_name(mh, "decode") == OK
    assert acl.mdl.ri_get_name(mh, 7) == ("decode", OK)
    assert acl.mdl.ri_get_name(mh, 6)[1] == E.ACL_ERROR_RT_INTERNAL_ERROR
    assert acl.mdl.ri_get_name(mh, 0)[1] == E.ACL_ERROR_RT_PARAM_INVALID


def test_get_streams_without_feature_207000(no_acl_graph):
    assert acl.mdl.ri_get_streams(0x1234)[1] == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT


# ---------------------------------------------------------------- §4.5 rtStreamAddToModel
def test_add_to_model_checks(dev0):
    s, a = new_stream(), new_stream()
    mh = begin(s)
    assert acl.rt.stream_add_to_model(None, mh) == E.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.stream_add_to_model(a, None) == E.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.stream_add_to_model(a, new_event()) == E.ACL_ERROR_RT_INVALID_HANDLE
    for flag in (acl.ACL_STREAM_DEVICE_USE_ONLY, acl.ACL_STREAM_CPU_SCHEDULE):
        assert acl.rt.stream_add_to_model(new_stream(flag), mh) == E.ACL_ERROR_RT_INTERNAL_ERROR
    assert acl.rt.stream_add_to_model(a, make_sub_model()) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    streams, _ = acl.mdl.ri_get_streams(mh)
    assert acl.rt.stream_add_to_model(streams[0], mh) == E.ACL_ERROR_RT_STREAM_MODEL
    assert acl.rt.stream_add_to_model(a, mh) == OK
    assert acl.rt.stream_add_to_model(a, mh) == OK          # already added: warning, 0
    assert len(model(mh).added[next(iter(model(mh).added))]) == 1
    assert model(mh).status == M.CAPTURE_ACTIVE            # none of the refusals invalidated
    assert acl.mdl.ri_capture_get_info(a)[:2] == (ACTIVE, mh)
    end(s)


def test_add_to_model_without_feature_207000(no_acl_graph):
    assert acl.rt.stream_add_to_model(new_stream(), 0x1234) == \
        E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT


def test_add_capturing_stream_107027_invalidates_the_model(dev0):
    s, other = new_stream(), new_stream()
    mh = begin(s)
    begin(other)
    assert acl.rt.stream_add_to_model(other, mh) == E.ACL_ERROR_RT_STREAM_CAPTURED
    assert model(mh).status == M.CAPTURE_INVALIDATED
    assert acl.mdl.ri_capture_end(s) == (None, E.ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED)
    end(other)


def test_add_to_finished_model_507000(dev0):
    mh, s, _ = captured()
    a = new_stream()
    assert acl.rt.stream_add_to_model(a, mh) == E.ACL_ERROR_RT_INTERNAL_ERROR
    assert model(mh).status == M.READY and status_of(a) == NONE
    run(mh, s)


def test_added_stream_is_joined_with_notifies_at_end_and_at_each_launch(dev0):
    """EndCapture joins the added stream to the origin with a notify; each launch is framed by
    notify pairs: the graph waits for earlier work on the added stream, and later work on the
    added stream waits for the graph (§4.5)."""
    s, a, exe = new_stream(), new_stream(), new_stream()
    x, z = new_buf(), new_buf()
    mh = begin(s)
    assert acl.rt.stream_add_to_model(a, mh) == OK
    lk(s, "EasyOPf", z)
    lk(a, "ShortOPf", x)                   # captured on the added stream: x *= 2
    assert end(s) == mh
    assert status_of(a) == NONE
    lk(a, "LongOPf", x)                    # eager, before the launch: x = 1 after 50 ms
    assert acl.mdl.ri_execute_async(mh, exe) == OK
    lk(a, "EasyOPf", x)                    # eager, after the launch: runs after the graph
    assert acl.rt.synchronize_stream(exe) == OK
    assert u32(x)[0] in (2, 3)             # the graph's x*2 ran after the LongOPf
    assert acl.rt.synchronize_stream(a) == OK
    assert u32(x)[0] == 3 and u32(z)[0] == 1


def test_added_stream_notifies_are_reused_and_a_destroyed_added_stream_is_skipped(dev0):
    s, a = new_stream(), new_stream()
    x = new_buf()
    mh = begin(s)
    assert acl.rt.stream_add_to_model(a, mh) == OK
    lk(a, "EasyOPf", x)
    end(s)
    m = model(mh)
    slots = m.device.state.nslots
    for _ in range(5):
        assert acl.mdl.ri_execute_async(mh, s) == OK
    assert acl.rt.synchronize_stream(s) == OK and acl.rt.synchronize_stream(a) == OK
    assert m.device.state.nslots == slots + 2               # one (before, after) pair
    assert u32(x)[0] == 5
    assert acl.rt.destroy_stream(a) == OK
    run(mh, s)                                              # the captured tasks still run
    assert u32(x)[0] == 6


def test_execute_takes_aicpu_persistent_and_device_only_streams_on_910b(dev0):
    """§13.9: without RT_FEATURE_MODEL_STREAM_DOT_SYNC the stream flags are not checked."""
    mh, s, x = captured()
    for flag in (acl.ACL_STREAM_PERSISTENT, acl.ACL_STREAM_DEVICE_USE_ONLY,
                 acl.ACL_STREAM_CPU_SCHEDULE):
        assert acl.mdl.ri_execute_async(mh, new_stream(flag)) == OK


def test_execute_refuses_aicpu_persistent_and_device_only_streams_on_950():
    """§13.9: the stream-flag checks of aclmdlRIExecuteAsync exist where the chip has
    RT_FEATURE_MODEL_STREAM_DOT_SYNC (the 950 configuration) — 107000 there, accepted on 910B."""
    import npusim
    npusim.configure(profile="Ascend950")
    assert acl.init() == OK and acl.rt.set_device(0) == OK
    mh, s, x = captured()
    for flag in (acl.ACL_STREAM_DEVICE_USE_ONLY, acl.ACL_STREAM_CPU_SCHEDULE):
        assert acl.mdl.ri_execute_async(mh, new_stream(flag)) == E.ACL_ERROR_RT_PARAM_INVALID



def test_destroy_with_no_current_context_is_107002(dev0):
    """§13.10: aclmdlRIDestroy with no current context -> 107002 (ApiImpl::ModelDestroy)."""
    mh, s, x = captured()
    from helpers.acl import in_fresh_thread
    assert in_fresh_thread(acl.mdl.ri_destroy, mh) == E.ACL_ERROR_RT_CONTEXT_NULL
    assert acl.mdl.ri_destroy(mh) == OK
