"""Every resource has an owner that frees it: loops of create/use/destroy leave the resource
census (``npusim.census``) where it started, and ids/slots are reused rather than grown
(issue: trustworthy under long use)."""
from __future__ import annotations

import gc

import numpy as np

import npusim as ns
from npusim import acl
from npusim.device import engine as E
from npusim.runtime.runtime import RT
from helpers.acl import on_threads

OK = acl.ACL_SUCCESS
RELAXED = 2


def out(r):
    assert r[-1] == OK, r
    return r[0] if len(r) == 2 else r[:-1]


def dev_of(stream_h):
    return RT.handles.get("stream", stream_h)[0].device


def test_event_cycles_reuse_their_slot(stream):
    base = ns.census()
    dev = dev_of(stream)
    for _ in range(200):
        e = out(acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC))
        assert acl.rt.record_event(e, stream) == OK
        assert acl.rt.synchronize_event(e) == OK
        assert acl.rt.destroy_event(e) == OK
    assert ns.census().diff(base) == {}
    assert dev.state.nslots <= 2                     # the slot is reused, not grown


def test_notify_cycles_leave_the_census_as_it_was(stream):
    base = ns.census()
    for _ in range(200):
        n = out(acl.rt.create_notify(0))
        assert acl.rt.record_notify(n, stream) == OK
        assert acl.rt.wait_and_reset_notify(n, stream, 0) == OK
        assert acl.rt.synchronize_stream(stream) == OK
        assert acl.rt.destroy_notify(n) == OK
    assert ns.census().diff(base) == {}


def test_a_destroyed_events_slot_is_not_reused_while_a_queued_wait_names_it(stream):
    s2 = out(acl.rt.create_stream())
    x = out(acl.rt.malloc(64, 0))
    from helpers.acl import launch
    e1 = out(acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC))
    assert launch(stream, "LongOPf", 1, (x,)) == OK
    assert acl.rt.record_event(e1, stream) == OK
    assert acl.rt.stream_wait_event(s2, e1) == OK
    slot1 = RT.handles.get("event", e1)[0].slot
    assert acl.rt.destroy_event(e1) == OK              # its record and the wait are queued
    assert ns.census().devices[0]["slots retiring"] == 1
    e2 = out(acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC))
    assert RT.handles.get("event", e2)[0].slot != slot1
    assert acl.rt.synchronize_stream(s2) == OK         # the wait ran: the slot is free again
    assert ns.census().devices[0]["slots retiring"] == 0
    e3 = out(acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC))
    assert RT.handles.get("event", e3)[0].slot == slot1


def _graph(stream, x):
    assert acl.mdl.ri_capture_begin(stream, RELAXED) == OK
    assert acl.rt.memset_async(x, 256, 1, 256, stream) == OK
    return out(acl.mdl.ri_capture_end(stream))


def test_capture_replay_destroy_cycles_leave_the_census_as_it_was(stream):
    x = out(acl.rt.malloc(256, 0))
    dev = dev_of(stream)
    base = ns.census()
    for _ in range(100):
        m = _graph(stream, x)
        assert acl.mdl.ri_execute_async(m, stream) == OK
        assert acl.rt.synchronize_stream(stream) == OK
        out(acl.mdl.ri_get_tasks_by_stream(out(acl.mdl.ri_get_streams(m))[0]))
        assert acl.mdl.ri_destroy(m) == OK
    assert ns.census().diff(base) == {}
    assert len(dev.model_slots) == 1                   # the engine model id is reused


def _cond_graph(stream, side, x):
    assert acl.mdl.ri_capture_begin(stream, RELAXED) == OK
    _, mh, _ = acl.mdl.ri_capture_get_info(stream)
    h = out(acl.mdl.ri_cond_handle_create(mh, 1, 1))
    subs = out(acl.mdl.ri_add_cond_task(h, 0, 1, stream))
    assert acl.mdl.ri_capture_to_model_ri_begin(side, subs[0], RELAXED) == OK
    assert acl.rt.memset_async(x, 256, 2, 256, side) == OK
    out(acl.mdl.ri_capture_end(side))
    return out(acl.mdl.ri_capture_end(stream))


def test_cond_graph_cycles_free_their_handles_and_sub_models(stream):
    side = out(acl.rt.create_stream())
    x = out(acl.rt.malloc(256, 0))
    dev = dev_of(stream)
    base = ns.census()
    for _ in range(50):
        m = _cond_graph(stream, side, x)
        assert acl.mdl.ri_execute_async(m, stream) == OK
        assert acl.rt.synchronize_stream(stream) == OK
        assert acl.mdl.ri_destroy(m) == OK
    assert ns.census().diff(base) == {}
    assert len(dev.conds) == 1 and len(dev.model_slots) == 2   # ids reused: root + its branch


def test_reset_device_frees_the_contexts_graphs_events_and_memory(dev0):
    base = ns.census()
    for _ in range(30):
        assert acl.rt.set_device(1) == OK
        s = out(acl.rt.create_stream())
        x = out(acl.rt.malloc(256, 0))
        m = _graph(s, x)
        assert acl.mdl.ri_execute_async(m, s) == OK
        out(acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC))
        out(acl.rt.create_notify(0))
        assert acl.rt.reset_device(1) == OK
        assert acl.rt.free(x) == OK
    assert acl.rt.set_device(0) == OK
    d1 = ns.census().devices[1]
    assert d1["models"] == d1["events"] == d1["notifies"] == d1["streams"] == 0
    assert d1["device allocations"] == 0
    assert ns.census().handles == base.handles


def test_numpy_to_ptr_does_not_keep_arrays_alive(dev0):
    keep = np.zeros(16, np.uint8)
    p = acl.util.numpy_to_ptr(keep)
    for _ in range(500):
        acl.util.numpy_to_ptr(np.zeros(16, np.uint8))
    gc.collect()
    assert len(RT.pageable) == 1
    assert acl.util.numpy_to_ptr(keep) == p            # a live array keeps its address
    dead = np.ones(4, np.uint8)
    q = acl.util.numpy_to_ptr(dead)
    del dead
    gc.collect()
    dst = np.zeros(4, np.uint8)
    # the dead array's pointer is unknown memory now (as a dangling pointer would be)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(dst), 4, q, 4, acl.ACL_MEMCPY_HOST_TO_HOST) != OK
    ns.reset()
    assert len(RT.pageable) == 0


def test_a_stream_capturing_into_a_sub_model_its_root_destroyed_is_invalidated(stream):
    """EndCapture of the root fails with 107045 (a branch still capturing) and destroys the root
    and its sub-models: the stream still capturing into the branch gets 507903 from then on
    (before: its launches returned 0 onto a freed SQ and the next engine run dropped every
    queued task of the device)."""
    side, healthy = out(acl.rt.create_stream()), out(acl.rt.create_stream())
    x, y = out(acl.rt.malloc(256, 0)), out(acl.rt.malloc(256, 0))
    assert acl.mdl.ri_capture_begin(stream, RELAXED) == OK
    _, mh, _ = acl.mdl.ri_capture_get_info(stream)
    h = out(acl.mdl.ri_cond_handle_create(mh, 1, 1))
    subs = out(acl.mdl.ri_add_cond_task(h, 0, 1, stream))
    assert acl.mdl.ri_capture_to_model_ri_begin(side, subs[0], RELAXED) == OK
    assert acl.rt.memset_async(x, 256, 2, 256, side) == OK
    assert acl.mdl.ri_capture_end(stream)[-1] == acl.ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING
    invalidated = acl.ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED
    assert acl.rt.memset_async(x, 256, 3, 256, side) == invalidated
    assert acl.mdl.ri_capture_end(side)[-1] == invalidated
    assert acl.mdl.ri_capture_get_info(side)[0] == 0            # no longer capturing
    assert acl.rt.memset_async(y, 256, 9, 256, healthy) == OK
    assert acl.rt.synchronize_stream(healthy) == OK
    got = np.zeros(256, np.uint8)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(got), 256, y, 256,
                         acl.ACL_MEMCPY_DEVICE_TO_HOST) == OK
    assert (got == 9).all()
    assert acl.rt.memset_async(x, 256, 4, 256, side) == OK     # eager again
    assert acl.rt.synchronize_stream(side) == OK


def test_a_stale_pointer_freed_again_cannot_free_the_runtimes_cond_word(stream):
    p = out(acl.rt.malloc(8, acl.ACL_MEM_MALLOC_HUGE1G_ONLY))
    assert acl.rt.free(p) == OK
    assert acl.mdl.ri_capture_begin(stream, RELAXED) == OK
    _, mh, _ = acl.mdl.ri_capture_get_info(stream)
    h = out(acl.mdl.ri_cond_handle_create(mh, 1, 1))
    word = out(acl.mdl.ri_cond_handle_get_cond_ptr(h))
    assert word == p                                   # the word reused the freed address
    assert acl.rt.free(p) == acl.ACL_ERROR_RT_PARAM_INVALID
    q = out(acl.rt.malloc(8, acl.ACL_MEM_MALLOC_HUGE1G_ONLY))
    assert q != word                                   # the word is still allocated


def test_args_handles_in_user_memory_are_reused_not_accumulated(dev0):
    """aclrtKernelArgsInitByUserMem: the handle lives in the given memory, so initialising the
    same memory again replaces it (before, every call added a handle that was never freed)."""
    b = out(acl.rt.binary_load_from_file(ns.samples.binary_path(), None))
    f = out(acl.rt.binary_get_function(b, "EasyOPf"))
    handle_mem, user_mem = np.zeros(64, np.uint8), np.zeros(256, np.uint8)
    first = out(acl.rt.kernel_args_init_by_user_mem(f, handle_mem, user_mem, 256))
    base = ns.census()
    for _ in range(300):
        h = out(acl.rt.kernel_args_init_by_user_mem(f, handle_mem, user_mem, 256))
    assert ns.census().diff(base) == {}
    assert RT.handles.get("args", first)[1] != OK          # the earlier handle was replaced
    assert RT.handles.get("args", h)[1] == OK


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_an_elf_declaring_a_3_gb_text_costs_no_memory_and_gives_it_back(dev0):
    """A 4 KB file whose .text claims 3 GB loads (zeros past the file, as the runtime reads
    them), but the zero-filled device image takes no resident memory, and unload frees it
    (before: binary_get_function made 3.2 GB resident that unload did not give back)."""
    from helpers.elf import k, patch_section
    from npusim.kernel.elfwrite import write_elf
    data = patch_section(write_elf([k("a")]), ".text", "size", 3 << 30)
    before = _rss()
    b = out(acl.rt.binary_load_from_data(data, None, len(data)))
    r = acl.rt.binary_get_function(b, "a")
    assert r[-1] in (OK, acl.ACL_ERROR_RT_PARAM_INVALID, acl.ACL_ERROR_RT_MEMORY_ALLOCATION)
    assert _rss() - before < 256 << 20
    assert acl.rt.binary_unload(b) == OK
    assert ns.census().devices[0]["device allocations"] <= 1        # the printf area


def test_external_event_replay_cycles_stay_flat(stream):
    """1,000 launches of a graph pair ordered by an external event: each launch rewrites the
    external tasks through the update payload ring; nothing grows with the launches."""
    side = out(acl.rt.create_stream())
    x = out(acl.rt.malloc(256, 0))
    ev = out(acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC))
    models = []
    for s, external in ((stream, acl.rt.record_event_with_flag), (side, None)):
        assert acl.mdl.ri_capture_begin(s, RELAXED) == OK
        if external is None:
            assert acl.rt.stream_wait_event_with_flag(s, ev, 0, acl.ACL_EVENT_WAIT_EXTERNAL) == OK
        assert acl.rt.memset_async(x, 256, 1, 256, s) == OK
        if external is not None:
            assert external(ev, s, acl.ACL_EVENT_RECORD_EXTERNAL) == OK
        models.append(out(acl.mdl.ri_capture_end(s)))
    dev = dev_of(stream)
    base = None
    for i in range(1000):
        assert acl.mdl.ri_execute_async(models[0], stream) == OK
        assert acl.mdl.ri_execute_async(models[1], side) == OK
        if i % 100 == 99:
            assert acl.rt.synchronize_stream(side) == OK
            if base is None:
                base = ns.census()
    assert acl.rt.synchronize_stream(stream) == OK
    assert ns.census().diff(base) == {}
    # the payload ring's bookkeeping is bounded by the ring (an entry goes when its row is
    # reused), two rows per launch here
    pay = dev.update_payload()
    assert len(pay.users) <= min(2 * 1000, int(dev.state.sqs[pay.sq, E.Q_DEPTH]))
    assert acl.rt.query_event_status(ev) == (acl.ACL_EVENT_RECORDED_STATUS_COMPLETE, OK)


def test_host_func_cycles_stay_flat(stream):
    from npusim.runtime import api_callback
    ran = []
    base = None
    for i in range(1000):
        assert acl.rt.launch_host_func(stream, ran.append, i) == OK
        assert acl.rt.synchronize_stream(stream) == OK
        if i == 9:
            base = ns.census()
    assert ran == list(range(1000))
    assert ns.census().diff(base) == {}
    assert len(api_callback.SUBS) == 1


def test_host_funcs_on_real_threads(dev0):
    """Threads each queue host functions on their own stream and synchronize it: every function
    runs once, on a waiting thread, in its stream's order."""
    ctx = out(acl.rt.get_current_context())
    seen = {}

    def worker(k):
        assert acl.rt.set_current_context(ctx) == OK
        s = out(acl.rt.create_stream())
        for i in range(50):
            assert acl.rt.launch_host_func(s, lambda d: seen.setdefault(k, []).append(d),
                                           i) == OK
        assert acl.rt.synchronize_stream(s) == OK
        assert acl.rt.destroy_stream(s) == OK

    on_threads(worker)
    assert seen == {k: list(range(50)) for k in range(4)}


# ---- this stop's paths: built models, reduce / 32-bit fills, the thread's last error ----
from helpers.acl import launch, read  # noqa: E402
def _built_model(x):
    m = out(acl.mdl.ri_build_begin(0))
    s = out(acl.rt.create_stream_with_config(0, acl.ACL_STREAM_PERSISTENT))
    assert acl.mdl.ri_bind_stream(m, s, acl.ACL_MODEL_STREAM_FLAG_HEAD) == OK
    assert launch(s, "EasyOPf", 1, (x,)) == OK
    assert acl.mdl.ri_end_task(m, s) == OK
    assert acl.mdl.ri_build_end(m, None) == OK
    return m, s


def test_built_model_cycles_leave_the_census_as_it_was(stream):
    """1,000 build / bind / execute / unbind / destroy cycles: the model, its model stream and
    the persistent stream are all given back each time."""
    x = out(acl.rt.malloc(64, 0))
    assert acl.rt.memset(x, 64, 0, 64) == OK
    base = None
    for i in range(1000):
        m, s = _built_model(x)
        assert acl.mdl.ri_execute_async(m, stream) == OK
        assert acl.rt.synchronize_stream(stream) == OK
        assert acl.mdl.ri_unbind_stream(m, s) == OK
        assert acl.mdl.ri_destroy(m) == OK
        assert acl.rt.destroy_stream(s) == OK
        if i == 9:
            base = ns.census()
    assert ns.census().diff(base) == {}
    assert read(x, 1)[0] == 1000                 # EasyOPf adds 1 per execution


def test_reduce_and_fill_cycles_leave_the_census_as_it_was(stream):
    """1,000 rounds of aclrtMemsetD32Async + aclrtReduceAsync (SUM, int32) on one stream: the
    sums are exact and nothing grows with the rounds."""
    a, b = out(acl.rt.malloc(256, 0)), out(acl.rt.malloc(256, 0))
    assert acl.rt.memset(a, 256, 0, 256) == OK
    base = None
    for i in range(1000):
        assert acl.rt.memset_d32_async(b, 256, 1, 64, stream) == OK
        assert acl.rt.reduce_async(a, b, 256, acl.ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM,
                                   acl.ACL_INT32, stream, None) == OK
        if i % 100 == 99:
            assert acl.rt.synchronize_stream(stream) == OK
            if base is None:
                base = ns.census()
    assert ns.census().diff(base) == {}
    assert (read(a, 64, np.int32) == 1000).all()


def test_built_models_and_last_errors_on_real_threads(dev0):
    """Four threads each build and execute their own model 50 times while provoking their own
    runtime error: every model runs exactly its executions, and each thread's
    aclrtGetLastError is its own error, not another thread's."""
    ctx = out(acl.rt.get_current_context())
    results = {}
    codes = {0: (lambda: acl.rt.free(0x1234)), 1: (lambda: acl.rt.destroy_stream(0x7777)),
             2: (lambda: acl.rt.free(0x1234)), 3: (lambda: acl.rt.destroy_stream(0x7777))}

    def worker(k):
        assert acl.rt.set_current_context(ctx) == OK
        x = out(acl.rt.malloc(64, 0))
        assert acl.rt.memset(x, 64, 0, 64) == OK
        ex = out(acl.rt.create_stream())
        m, s = _built_model(x)
        want = codes[k]()
        assert want != OK
        for _ in range(50):
            assert acl.mdl.ri_execute_async(m, ex) == OK
        assert acl.rt.synchronize_stream(ex) == OK
        count = int(read(x, 1)[0])
        last = acl.rt.get_last_error(acl.ACL_RT_THREAD_LEVEL)
        assert acl.mdl.ri_destroy(m) == OK
        assert acl.rt.destroy_stream(s) == OK
        assert acl.rt.destroy_stream(ex) == OK
        results[k] = (count, want, last)

    on_threads(worker, timeout=120)
    for k, (count, want, last) in results.items():
        assert count == 50, k
        assert last == want, k
    assert len(results) == 4
    assert acl.rt.get_last_error(acl.ACL_RT_THREAD_LEVEL) == OK     # the test's own thread


# ---- this stop's paths: random-number tasks, their update, core contention ----
from npusim.runtime import api_random as R  # noqa: E402
from helpers.acl import write  # noqa: E402


def _random_info(out, ctr, seed, n=8) -> dict:
    return {"dataType": acl.ACL_UINT32,
            "randomNumFuncParaInfo": {"funcType": acl.ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS,
                                      "paramInfo": {"uniformDisInfo": {
                                          "min": {"valueOrAddr": 0, "size": 4},
                                          "max": {"valueOrAddr": 1000, "size": 4}}}},
            "randomParaAddr": 0, "randomResultAddr": out, "randomCounterAddr": ctr,
            "randomSeed": {"isAddr": 0, "valueOrAddr": seed, "size": 8},
            "randomNum": {"valueOrAddr": n, "size": 8}}


def _zeroed(n: int) -> int:
    p = out(acl.rt.malloc(n, 0))
    assert acl.rt.memset(p, n, 0, n) == OK
    return p


def test_random_task_cycles_give_their_args_blocks_back(stream):
    """1,000 eager aclrtRandomNumAsync (each owns a 128-byte block of args memory for its
    parameters and configuration) and 1,000 captured ones, captured, replayed and destroyed:
    the census is flat, and the values are the generator's each time."""
    res, ctr = _zeroed(64), _zeroed(16)
    base, first = None, None
    for i in range(1000):
        assert acl.rt.random_num_async(_random_info(res, ctr, i % 10), stream, None) == OK
        if i % 100 == 99:
            assert acl.rt.synchronize_stream(stream) == OK
        if i == 99:
            base = ns.census()
            first = read(res, 8, np.uint32).tolist()
    assert acl.rt.synchronize_stream(stream) == OK
    assert read(res, 8, np.uint32).tolist() == first          # seed 999 % 10 == 99 % 10
    assert ns.census().diff(base) == {}
    for i in range(1000):
        assert acl.mdl.ri_capture_begin(stream, acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED) == OK
        assert acl.rt.random_num_async(_random_info(res, ctr, 1), stream, None) == OK
        m = out(acl.mdl.ri_capture_end(stream))
        assert acl.mdl.ri_execute_async(m, stream) == OK
        assert acl.rt.synchronize_stream(stream) == OK
        assert acl.mdl.ri_destroy(m) == OK
        if i == 9:
            base = ns.census()
    assert ns.census().diff(base) == {}


def test_task_update_cycles_on_one_built_model_stay_flat(stream):
    """1,000 aclrtTaskUpdateAsync + replays of one built model's random task, alternating two
    seeds: each replay gives the values of the seed last written, and the census is flat."""
    res, ctr = _zeroed(64), _zeroed(16)
    m = out(acl.mdl.ri_build_begin(0))
    s = out(acl.rt.create_stream_with_config(0, acl.ACL_STREAM_PERSISTENT))
    assert acl.mdl.ri_bind_stream(m, s, acl.ACL_MODEL_STREAM_FLAG_HEAD) == OK
    assert acl.rt.random_num_async(_random_info(res, ctr, 1), s, None) == OK
    tid = out(acl.rt.get_thread_last_task_id())
    assert acl.mdl.ri_end_task(m, s) == OK
    assert acl.mdl.ri_build_end(m, None) == OK
    src = _zeroed(128)
    upd = {"id": acl.ACL_RT_UPDATE_RANDOM_TASK,
           "val": {"randomTaskAttr": {"srcAddr": src, "size": R.TASK_INFO_BYTES}}}
    want, base = {}, None
    for i in range(1000):
        seed = 1 + i % 2
        write(src, np.frombuffer(R.pack_task_info(_random_info(res, ctr, seed)), np.uint8))
        assert acl.rt.task_update_async(s, tid, upd, stream) == OK
        assert acl.mdl.ri_execute_async(m, stream) == OK
        assert acl.rt.synchronize_stream(stream) == OK
        got = read(res, 8, np.uint32).tolist()
        assert want.setdefault(seed, got) == got
        if i == 9:
            base = ns.census()
    assert want[1] != want[2]
    assert ns.census().diff(base) == {}
    assert acl.mdl.ri_unbind_stream(m, s) == OK
    assert acl.mdl.ri_destroy(m) == OK
    assert acl.rt.destroy_stream(s) == OK


def test_contention_with_kernels_launched_from_real_threads():
    """Contention on, four real threads each launching 25 full-unit kernels (every vector core,
    1 ms each) onto their own stream: no two run at once, so the first start to the last end is
    exactly the sum of their durations (docs/timing.md, b >= C: S*K*d) whatever the threads'
    interleaving, and every row but the first waited or followed its stream."""
    from npusim.device import sqe as S
    ns.configure(trace=True)
    dev = ns.Device("Ascend910B", contention=True)
    ns.trace.clear()
    full, d, k = dev.profile.aiv_cores, 1_000_000, 25
    x = dev.malloc(4 * 256)
    ctx = out(acl.rt.get_current_context())
    streams = [dev.stream(f"t{i}") for i in range(4)]

    def worker(i):
        assert acl.rt.set_current_context(ctx) == OK
        s = streams[i]
        for _ in range(k):
            s.launch("EasyOPf", full, (x,), duration_ns=d)

    on_threads(worker)
    dev.synchronize()
    rows = dev.trace().rows
    rows = rows[rows["op"] == S.OP_KERNEL]
    assert len(rows) == 4 * k
    span = set((rows["end"] - rows["start"]).tolist())
    assert len(span) == 1
    assert int(rows["end"].max() - rows["start"].min()) == 4 * k * span.pop()
    ns.configure(contention=False)


def test_registry_kind_lookups_follow_add_remove_and_clear():
    """``Registry.stream`` / ``event`` / ``function`` (the hot paths' per-kind lookups) answer
    exactly what ``entry`` and ``get`` answer: a removed or cleared handle is gone from both, a
    handle of another kind is not found, and a destroyed stream or event is refused by the
    record / wait / launch paths that use them (107017)."""
    from npusim.runtime.handles import Registry

    class Obj:
        handle = 0
    reg = Registry()
    s, e = Obj(), Obj()
    hs, he = reg.add("stream", s), reg.add("event", e)
    assert reg.stream(hs) is s and reg.event(he) is e and reg.entry(hs) == ("stream", s)
    assert reg.stream(he) is None and reg.function(hs) is None       # another kind's handle
    assert reg.get("event", hs) == (None, acl.ACL_ERROR_RT_INVALID_HANDLE)
    assert reg.live("stream") == [s] and reg.counts() == {"stream": 1, "event": 1}
    reg.remove(hs)
    assert reg.stream(hs) is None and reg.entry(hs) is None and reg.live("stream") == []
    assert reg.get("stream", hs) == (None, acl.ACL_ERROR_RT_INVALID_HANDLE)
    reg.remove(hs)                                                    # twice: a no-op
    reg.clear()
    assert reg.event(he) is None and reg.entry(he) is None and reg.counts() == {}

    # the facade: destroyed handles are refused by the hot paths
    acl.init()
    acl.rt.set_device(0)
    st = out(acl.rt.create_stream())
    ev = out(acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC))
    assert acl.rt.record_event(ev, st) == OK
    assert acl.rt.stream_wait_event(st, ev) == OK
    assert acl.rt.synchronize_stream(st) == OK
    assert acl.rt.destroy_event(ev) == OK
    assert acl.rt.record_event(ev, st) == acl.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.rt.stream_wait_event(st, ev) == acl.ACL_ERROR_RT_INVALID_HANDLE
    ev2 = out(acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC))
    assert acl.rt.destroy_stream(st) == OK
    assert acl.rt.record_event(ev2, st) == acl.ACL_ERROR_RT_INVALID_HANDLE
    lib = out(acl.rt.binary_load_from_file(ns.samples.binary_path()))
    f = out(acl.rt.binary_get_function(lib, "EasyOPf"))
    args = out(acl.rt.malloc(64, 0))
    assert acl.rt.launch_kernel(f, 1, args, 8, st) == acl.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.rt.launch_kernel(ev2, 1, args, 8, None) == acl.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.rt.binary_unload(lib) == OK
    assert acl.rt.launch_kernel(f, 1, args, 8, None) == acl.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.rt.destroy_event(ev2) == OK
    assert acl.rt.free(args) == OK
