"""Issue "the rest of the runtime surface", divergences part 2: aclmdlRIGetStreams' array form,
global task sequence ids, kernel task attributes from the task's own config, event task params,
and the NULL execution stream on software-SQ chips."""
from __future__ import annotations

from npusim import acl
from npusim import errors as E

from helpers.acl import launch
from helpers.kernel import dev_args, func, load_samples
from helpers.capture import begin, end, join, join_back, new_buf, new_event, new_stream, run

OK = acl.ACL_SUCCESS


def _two_stream_graph():
    s, side = new_stream(), new_stream()
    buf = new_buf()
    mh = begin(s)
    assert launch(s, "EasyOPf", 1, [buf]) == OK        # seq 0 on the origin
    join(s, side)                                        # record on s, wait on side
    assert launch(side, "EasyOPf", 1, [buf]) == OK
    assert launch(s, "EasyOPf", 1, [buf]) == OK
    join_back(side, s)
    end(s)
    return mh, s


def test_get_streams_array_form(dev0):
    mh, _ = _two_stream_graph()
    every, ret = acl.mdl.ri_get_streams(mh)
    assert ret == OK and len(every) == 2
    assert acl.mdl.ri_get_streams(mh, 2) == (every, OK)
    assert acl.mdl.ri_get_streams(mh, 4) == (every, OK)              # no NULL padding
    assert acl.mdl.ri_get_streams(mh, 2 ** 32 - 1) == (every, OK)
    assert acl.mdl.ri_get_streams(mh, 1) == (every[:1], E.ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY)
    assert acl.mdl.ri_get_streams(mh, 0) == ([], E.ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY)


def test_task_seq_ids_are_the_global_capture_order(dev0):
    mh, _ = _two_stream_graph()
    streams, _ = acl.mdl.ri_get_streams(mh)
    seqs = {}
    for cs in streams:
        for t in acl.mdl.ri_get_tasks_by_stream(cs)[0]:
            seqs[t] = acl.mdl.ri_task_get_seq_id(t)[0]
    # one counter for the model: every id once, from 0, interleaved across the two streams
    assert sorted(seqs.values()) == list(range(len(seqs)))
    origin = [seqs[t] for t in acl.mdl.ri_get_tasks_by_stream(streams[-1])[0]]
    side = [seqs[t] for t in acl.mdl.ri_get_tasks_by_stream(streams[0])[0]]
    assert origin == sorted(origin) and side == sorted(side)
    assert min(side) > origin[0] and min(side) < max(origin)       # not per-stream blocks


def test_kernel_task_attributes_come_from_the_tasks_own_config(dev0):
    s = new_stream()
    fn = func(load_samples(), "EasyOPf")
    args = dev_args(new_buf())
    mh = begin(s)
    cfg = {acl.ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP: 1,
           acl.ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US: 2_500_000}
    assert acl.rt.launch_kernel_v2(fn, 1, args, 8, cfg, s) == OK
    assert acl.rt.launch_kernel(fn, 1, args, 8, s) == OK
    end(s)
    (cs,), _ = acl.mdl.ri_get_streams(mh)
    configured, plain = [t for t in acl.mdl.ri_get_tasks_by_stream(cs)[0]
                         if acl.mdl.ri_task_get_type(t)[0] == acl.ACL_MODEL_RI_TASK_KERNEL][:2]
    get = acl.mdl.ri_kernel_task_get_attribute
    assert get(configured, acl.ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP) == (1, OK)
    assert get(plain, acl.ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP) == (0, OK)
    assert get(configured, acl.ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US) == (2_500_000, OK)
    assert get(configured, acl.ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT) == (2, OK)
    assert get(plain, acl.ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US)[0] != 2_500_000
    assert get(None, acl.ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT)[1] == E.ACL_ERROR_INVALID_PARAM


def test_event_task_params_name_the_event(dev0):
    s, side = new_stream(), new_stream()
    buf = new_buf()
    mh = begin(s)
    ev = new_event()
    assert acl.rt.record_event(ev, s) == OK
    assert acl.rt.stream_wait_event(side, ev) == OK
    assert launch(side, "EasyOPf", 1, [buf]) == OK
    join_back(side, s)
    end(s)
    found = {}
    for cs in acl.mdl.ri_get_streams(mh)[0]:
        for t in acl.mdl.ri_get_tasks_by_stream(cs)[0]:
            p, ret = acl.mdl.ri_task_get_params(t)
            if ret == OK and p["type"] != acl.ACL_MODEL_RI_TASK_KERNEL and p.get("event") == ev:
                found[p["type"]] = p
    assert acl.ACL_MODEL_RI_TASK_EVENT_RECORD in found and acl.ACL_MODEL_RI_TASK_EVENT_WAIT in found
    assert found[acl.ACL_MODEL_RI_TASK_EVENT_RECORD]["event_flag"] == acl.ACL_EVENT_SYNC
    assert found[acl.ACL_MODEL_RI_TASK_EVENT_RECORD]["record_flag"] == 0
    assert found[acl.ACL_MODEL_RI_TASK_EVENT_WAIT]["wait_flag"] == 0


def test_null_execution_stream_is_refused_on_software_sq_chips(dev0):
    mh, s = _two_stream_graph()
    assert acl.mdl.ri_execute_async(mh, None) == E.ACL_ERROR_RT_PARAM_INVALID
    assert "NULL execution stream" in acl.get_recent_err_msg()
    dflt, _ = acl.rt.ctx_get_current_default_stream()
    assert acl.mdl.ri_execute_async(mh, dflt) == OK           # the default stream by handle
    assert acl.rt.synchronize_stream(dflt) == OK
    run(mh, s)


def test_launch_attrs_and_load_options_in_their_c_struct_shapes(dev0):
    fn = func(load_samples([{"type": acl.ACL_RT_BINARY_LOAD_OPT_LAZY_LOAD, "value": 1}]),
              "EasyOPf")
    buf = new_buf()
    args = dev_args(buf)
    s = new_stream()
    pairs = [{"id": acl.ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE, "value": 1}]
    assert acl.rt.launch_kernel_v2(fn, 1, args, 8, pairs, s) == OK
    struct = {"attrs": pairs + [{"id": 999, "value": 0}], "numAttrs": 1}   # only the first read
    assert acl.rt.launch_kernel_v2(fn, 1, args, 8, struct, s) == OK
    assert acl.rt.launch_kernel_v2(fn, 1, args, 8, {"attrs": pairs + [{"id": 999, "value": 0}]},
                                   s) == E.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.launch_kernel_v2(fn, 1, args, 8, [{"id": 1}], s) == E.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.synchronize_stream(s) == OK
    assert acl.rt.binary_load_from_file(
        __import__("npusim").samples.binary_path(),
        {"options": [{"type": acl.ACL_RT_BINARY_LOAD_OPT_LAZY_LOAD, "value": 1}], "numOpt": 1}
    )[1] == OK


def test_destroy_callbacks_run_once_after_the_model_is_freed(dev0):
    mh, _ = _two_stream_graph()
    calls = []
    first = lambda data: calls.append(("first", data))      # noqa: E731
    second = lambda data: calls.append(("second", data))    # noqa: E731
    gone = lambda data: calls.append(("gone", data))        # noqa: E731
    reg, unreg = acl.mdl.ri_destroy_register_callback, acl.mdl.ri_destroy_unregister_callback
    assert reg(mh, first, [1, 2]) == OK
    assert reg(mh, second) == OK
    assert reg(mh, gone, 0) == OK
    assert reg(mh, first, 7) == E.ACL_ERROR_RT_PARAM_INVALID        # registered already
    assert unreg(mh, gone) == OK
    assert unreg(mh, gone) == E.ACL_ERROR_RT_PARAM_INVALID
    assert reg(None, first) == E.ACL_ERROR_RT_PARAM_INVALID
    assert reg(mh, None) == E.ACL_ERROR_RT_PARAM_INVALID
    assert calls == []
    assert acl.mdl.ri_destroy(mh) == OK
    assert calls == [("first", [1, 2]), ("second", None)]
    assert reg(mh, first) == E.ACL_ERROR_RT_INVALID_HANDLE          # the model is gone


def test_destroy_callbacks_run_at_device_reset(dev0):
    mh, _ = _two_stream_graph()
    seen = []
    assert acl.mdl.ri_destroy_register_callback(mh, seen.append, "bye") == OK
    assert acl.rt.reset_device(0) == OK
    assert seen == ["bye"]


def test_abort_refuses_acl_graph_models(dev0):
    mh, _ = _two_stream_graph()
    assert acl.mdl.ri_abort(mh) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert "ACL Graph" in acl.get_recent_err_msg()
    assert acl.mdl.ri_abort(None) == E.ACL_ERROR_RT_INTERNAL_ERROR
