"""Fault injection (``npusim.inject``): one test per code the issue lists (207005, 207008, 507903,
207019, a kernel exception), selection by call count, kernel name, model and stream, and after
every injected fault a consistent simulator — the same calls succeed once the injection is gone,
no capture state is left behind."""
from __future__ import annotations

import numpy as np
import pytest

import npusim
from npusim import acl
from npusim import errors as E
from npusim import faults
from npusim.runtime import api_launch
from npusim.runtime import capture as C
from npusim.runtime.runtime import RT

from helpers.acl import launch, read
from helpers.capture import OK, begin, end, model, new_buf, new_stream

E_RES = E.ACL_ERROR_RT_RESOURCE_ALLOC_FAIL          # 207005
E_STREAM = E.ACL_ERROR_RT_NO_STREAM_RESOURCE        # 207008
E_INVAL = E.ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED  # 507903
E_UPD = E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT_UPDATE_OP  # 207019
E_AIV = E.ACL_ERROR_RT_VECTOR_CORE_EXCEPTION        # 507035
E_AIC = E.ACL_ERROR_RT_AICORE_EXCEPTION             # 507015


def one_kernel_graph(s, x) -> int:
    begin(s)
    assert launch(s, "EasyOPf", 1, (x,)) == OK
    return end(s)


def replay(mh, s) -> int:
    code = acl.mdl.ri_execute_async(mh, s)
    return code or acl.rt.synchronize_stream(s)


def user_streams() -> int:
    return sum(len(c.streams) for c in RT.devices[0].contexts)


@pytest.fixture(autouse=True)
def no_injection_left():
    yield
    npusim.clear_injections()
    assert api_launch.KERNEL_HOOK is None and not faults.ARMED


# ---- the codes of the issue ----
def test_207005_at_execute_leaves_the_model_unbuilt(stream):
    x = new_buf()
    mh = one_kernel_graph(stream, x)
    dev = RT.devices[0]
    with npusim.inject(E_RES, api="aclmdlRIExecuteAsync") as inj:
        tail = RT.handles.get("stream", stream)[0].tail
        assert acl.mdl.ri_execute_async(mh, stream) == E_RES
        # the call did nothing: no SQ/CQ pairs taken, no task queued, the model still READY
        assert dev.sqcq_used == 0 and not model(mh).built
        assert RT.handles.get("stream", stream)[0].tail == tail
        assert (inj.calls, inj.fired, inj.done) == (1, 1, True)
        assert replay(mh, stream) == OK                  # times=1: the next call is real
    assert read(x, 1)[0] == 1
    assert replay(mh, stream) == OK and read(x, 1)[0] == 2


def test_207005_at_capture_begin_starts_no_capture(stream):
    with npusim.inject(E_RES, api="aclmdlRICaptureBegin"):
        assert acl.mdl.ri_capture_begin(stream, 0) == E_RES
    assert acl.mdl.ri_capture_get_info(stream) == (0, None, OK)
    assert not RT.devices[0].models
    x = new_buf()
    mh = one_kernel_graph(stream, x)                     # the same calls now succeed
    assert replay(mh, stream) == OK and read(x, 1)[0] == 1


def test_207008_at_create_stream_by_call_count(dev0):
    n0 = user_streams()
    with npusim.inject(E_STREAM, api="aclrtCreateStream", call=2):
        a = acl.rt.create_stream()
        b = acl.rt.create_stream()
        c = acl.rt.create_stream()
    assert a[1] == OK and b == (None, E_STREAM) and c[1] == OK
    assert user_streams() == n0 + 2                      # the failed call created nothing
    dev = npusim.Device()
    with npusim.inject(E_STREAM, api="acl.rt.create_stream"):
        with pytest.raises(E.ResourceError) as ei:
            dev.stream()
        assert ei.value.code == E_STREAM
    assert isinstance(dev.stream(), npusim.Stream)


def test_507903_at_capture_end_ends_the_capture(stream):
    x = new_buf()
    begin(stream)
    assert launch(stream, "EasyOPf", 1, (x,)) == OK
    mh = acl.mdl.ri_capture_get_info(stream)[1]
    with npusim.inject(E_INVAL, api="aclmdlRICaptureEnd"):
        assert acl.mdl.ri_capture_end(stream) == (None, E_INVAL)
    # as a real failed EndCapture: the stream left capture, the model is gone, no mode counts
    assert acl.mdl.ri_capture_get_info(stream) == (0, None, OK)
    assert acl.mdl.ri_get_id(mh)[1] == E.ACL_ERROR_RT_INVALID_HANDLE
    assert not RT.devices[0].models and not C.unsafe_call_blocked()
    assert RT.handles.get("stream", stream)[0].capture is None
    mh = one_kernel_graph(stream, x)                     # capture again, run it
    assert replay(mh, stream) == OK and read(x, 1)[0] == 1


def test_507903_through_the_pythonic_graph(dev0):
    dev = npusim.Device()
    s, x = dev.stream(), dev.malloc(64).fill(0)
    with npusim.inject(E_INVAL, api="aclmdlRICaptureEnd"):
        with pytest.raises(E.CaptureError) as ei:
            with npusim.graph(s):
                s.launch("EasyOPf", 1, args=(x,))
    assert ei.value.code == E_INVAL
    with npusim.graph(s) as g:
        s.launch("EasyOPf", 1, args=(x,))
    g.replay()
    s.synchronize()
    assert x.read(np.uint32, 1)[0] == 1


def test_207019_at_task_disable_changes_nothing(stream):
    x = new_buf()
    mh = one_kernel_graph(stream, x)
    cs = acl.mdl.ri_get_streams(mh)[0][0]
    task = acl.mdl.ri_get_tasks_by_stream(cs)[0][0]
    with npusim.inject(E_UPD, api="aclmdlRITaskDisable"):
        assert acl.mdl.ri_task_disable(task) == E_UPD
    assert acl.mdl.ri_update(mh) == OK                   # still READY: nothing was staged
    assert replay(mh, stream) == OK and read(x, 1)[0] == 1
    assert acl.mdl.ri_task_disable(task) == OK           # the same call now works
    assert acl.mdl.ri_update(mh) == OK
    assert replay(mh, stream) == OK and read(x, 1)[0] == 1   # the task no longer runs


def test_207019_at_task_update_begin_leaves_the_stream_out_of_update(stream):
    x = new_buf()
    begin(stream)
    assert acl.mdl.ri_capture_task_grp_begin(stream) == OK
    assert launch(stream, "EasyOPf", 1, (x,)) == OK
    grp, code = acl.mdl.ri_capture_task_grp_end(stream)
    assert code == OK
    mh = end(stream)
    upd = new_stream()
    with npusim.inject(E_UPD, api="aclmdlRICaptureTaskUpdateBegin", stream=upd):
        assert acl.mdl.ri_capture_task_update_begin(upd, grp) == E_UPD
    assert RT.handles.get("stream", upd)[0].tg_update is None
    assert launch(upd, "EasyOPf", 1, (x,)) == OK         # a plain launch, not an update
    assert acl.rt.synchronize_stream(upd) == OK and read(x, 1)[0] == 1
    y = new_buf()
    assert acl.mdl.ri_capture_task_update_begin(upd, grp) == OK      # the same call now works
    assert launch(upd, "EasyOPf", 1, (y,)) == OK                     # the group task -> y
    assert acl.mdl.ri_capture_task_update_end(upd) == OK
    assert acl.rt.synchronize_stream(upd) == OK
    assert replay(mh, stream) == OK
    assert (read(x, 1)[0], read(y, 1)[0]) == (1, 1)


def test_kernel_exception_on_the_next_launch(stream):
    x = new_buf()
    with npusim.inject(kernel="EasyOPf") as inj:
        assert launch(stream, "EasyOPf", 1, (x,)) == OK          # the launch itself is fine
        assert acl.rt.synchronize_stream(stream) == E_AIV        # the task faulted
        assert inj.done
        assert launch(stream, "EasyOPf", 1, (x,)) == OK
        assert acl.rt.synchronize_stream(stream) == OK           # reported once, then clean
    assert read(x, 1)[0] == 1                             # the faulted task wrote nothing


def test_kernel_exception_pythonic_detail_and_cube_code(dev0):
    dev = npusim.Device()
    s, x = dev.stream(), dev.malloc(64).fill(0)
    npusim.inject(kernel="EasyOPf")
    s.launch("EasyOPf", 1, args=(x,))
    with pytest.raises(E.KernelError) as ei:
        s.synchronize()
    assert ei.value.code == E_AIV and "ErrorOPf" in str(ei.value)
    npusim.inject(E_AIC, kernel="EasyOPf")              # as a cube kernel would fault
    s.launch("EasyOPf", 1, args=(x,))
    with pytest.raises(E.KernelError) as ei:
        s.synchronize()
    assert ei.value.code == E_AIC
    s.launch("EasyOPf", 1, args=(x,))
    s.synchronize()
    assert x.read(np.uint32, 1)[0] == 1


def test_kernel_by_call_count_and_times(stream):
    x = new_buf()
    npusim.inject(kernel="EasyOPf", call=2, times=2)
    codes = []
    for _ in range(5):
        assert launch(stream, "EasyOPf", 1, (x,)) == OK
        codes.append(acl.rt.synchronize_stream(stream))
    assert codes == [OK, E_AIV, E_AIV, OK, OK]
    assert read(x, 1)[0] == 3


def test_kernel_by_name_ignores_other_kernels(stream):
    x = new_buf()
    with npusim.inject(kernel="ShortOPf", every=True) as inj:
        for _ in range(3):
            assert launch(stream, "EasyOPf", 1, (x,)) == OK
        assert acl.rt.synchronize_stream(stream) == OK
        assert inj.calls == 0
    assert read(x, 1)[0] == 3


def test_kernel_by_stream(dev0):
    s1, s2, x = new_stream(), new_stream(), new_buf()
    with npusim.inject(kernel="EasyOPf", stream=s2, every=True) as inj:
        for s in (s1, s2, s1, s2):
            assert launch(s, "EasyOPf", 1, (x,)) == OK
        assert acl.rt.synchronize_stream(s1) == OK
        assert acl.rt.synchronize_stream(s2) == E_AIV
        assert (inj.calls, inj.fired) == (2, 2)
    assert read(x, 1)[0] == 2


def test_kernel_in_a_model_faults_every_replay(stream):
    x = new_buf()
    begin(stream)
    mh = acl.mdl.ri_capture_get_info(stream)[1]
    with npusim.inject(kernel="EasyOPf", model=mh):
        assert launch(stream, "EasyOPf", 1, (x,)) == OK        # captured: the trap is in the graph
        assert end(stream) == mh
        assert launch(stream, "EasyOPf", 1, (x,)) == OK        # eager: not in the model
        assert acl.rt.synchronize_stream(stream) == OK
    assert replay(mh, stream) == E_AIV
    assert replay(mh, stream) == E_AIV                   # the graph task itself is the trap
    assert read(x, 1)[0] == 1
    assert acl.mdl.ri_destroy(mh) == OK
    mh = one_kernel_graph(stream, x)                     # a fresh capture is clean
    assert replay(mh, stream) == OK and read(x, 1)[0] == 2


def test_kernel_in_a_sub_model_matches_the_root(dev0):
    dev = npusim.Device()
    s, br, x = dev.stream(), dev.stream(), dev.malloc(64).fill(0)
    g = npusim.graph(s)
    g.capture_begin()
    root = g._capturing_model
    with npusim.inject(kernel="EasyOPf", model=root, every=True) as inj:
        s.launch("EasyOPf", 1, args=(x,))                      # in the root: faults
        with g.cond_if(g.condition(default=1), br):
            br.launch("EasyOPf", 1, args=(x,))                 # in the IF sub-model: faults
        assert inj.fired == 2
    g.capture_end()
    g.replay()
    with pytest.raises(E.KernelError):
        s.synchronize()
    assert x.read(np.uint32, 1)[0] == 0


def test_kernel_module_launch_by_function_handle(stream):
    lib, ret = acl.rt.binary_load_from_file(npusim.samples.binary_path())
    assert ret == OK
    easy, ret = acl.rt.binary_get_function(lib, "EasyOPf")
    assert ret == OK
    x = new_buf()
    args, _ = acl.rt.malloc(8, 0)
    from helpers.acl import write
    write(args, np.array([x], np.uint64))
    with npusim.inject(kernel="EasyOPf"):
        assert acl.rt.launch_kernel(easy, 1, args, 8, stream) == OK
        assert acl.rt.synchronize_stream(stream) == E_AIV
    begin(stream)
    with npusim.inject(kernel="EasyOPf"):                # the captured (hot) path
        assert acl.rt.launch_kernel(easy, 1, args, 8, stream) == OK
    mh = end(stream)
    assert replay(mh, stream) == E_AIV
    assert acl.rt.launch_kernel(easy, 1, args, 8, stream) == OK
    assert acl.rt.synchronize_stream(stream) == OK and read(x, 1)[0] == 1


# ---- selection by model / stream, every, times ----
def test_api_by_model(stream):
    x = new_buf()
    g1, g2 = one_kernel_graph(stream, x), one_kernel_graph(stream, x)
    with npusim.inject(E_RES, api="aclmdlRIExecuteAsync", model=g2, every=True) as inj:
        assert replay(g1, stream) == OK
        assert replay(g2, stream) == E_RES
        assert replay(g1, stream) == OK
        assert replay(g2, stream) == E_RES
        assert (inj.calls, inj.fired) == (2, 2)
    assert replay(g2, stream) == OK and read(x, 1)[0] == 3


def test_api_by_model_matches_a_stream_capturing_into_it(dev0):
    s1, s2, x = new_stream(), new_stream(), new_buf()
    begin(s1)
    mh = acl.mdl.ri_capture_get_info(s1)[1]
    with npusim.inject(E.ACL_ERROR_RT_PARAM_INVALID, api="aclrtMemsetAsync", model=mh):
        assert acl.rt.memset_async(x, 64, 0, 64, s2) == OK          # not capturing: real
        assert acl.rt.memset_async(x, 64, 0, 64, s1) == E.ACL_ERROR_RT_PARAM_INVALID
    assert end(s1) == mh


def test_api_by_stream(dev0):
    s1, s2 = new_stream(), new_stream()
    with npusim.inject(E.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, api="aclrtSynchronizeStream",
                       stream=s2):
        assert acl.rt.synchronize_stream(s1) == OK
        assert acl.rt.synchronize_stream(s2) == E.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
        assert acl.rt.synchronize_stream(s2) == OK


def test_every_from_the_nth_call_until_removed(dev0):
    inj = npusim.inject(E_STREAM, api="aclrtCreateStream", call=3, every=True)
    codes = [acl.rt.create_stream()[1] for _ in range(5)]
    assert codes == [OK, OK, E_STREAM, E_STREAM, E_STREAM]
    assert not inj.done
    inj.remove()
    assert inj.done and acl.rt.create_stream()[1] == OK


# ---- output shapes, bookkeeping ----
def test_outputs_come_first_and_none(stream):
    cases = [("aclmdlRICaptureGetInfo", lambda: acl.mdl.ri_capture_get_info(stream), 3),
             ("aclmdlRICaptureEnd", lambda: acl.mdl.ri_capture_end(stream), 2),
             ("aclrtMalloc", lambda: acl.rt.malloc(64, 0), 2),
             ("aclrtCreateEventExWithFlag", lambda: acl.rt.create_event_ex_with_flag(1), 2),
             ("aclrtSynchronizeDevice", lambda: acl.rt.synchronize_device(), 1)]
    for name, fn, n in cases:
        with npusim.inject(123456, api=name):
            got = fn()
        assert got == (123456 if n == 1 else (None,) * (n - 1) + (123456,)), name


def test_names_and_argument_checks():
    assert faults.resolve_api("aclmdlRIExecuteAsync") == "acl.mdl.ri_execute_async"
    assert faults.resolve_api("acl.rt.create_stream") == "acl.rt.create_stream"
    assert faults.resolve_api("rtStreamAddToModel") == "acl.rt.stream_add_to_model"
    assert faults.resolve_api("ri_capture_end") == "acl.mdl.ri_capture_end"
    assert ("acl.mdl.ri_capture_to_model_ri_begin", "aclmdlRICaptureToModelRIBegin") in \
        faults.api_names()
    with pytest.raises(ValueError, match="aclmdlRIExecuteAsync"):
        npusim.inject(E_RES, api="aclmdlRIExecuteAsyn")      # unknown: the close name is given
    with pytest.raises(ValueError):
        npusim.inject(E_RES)                                 # neither api nor kernel
    with pytest.raises(ValueError):
        npusim.inject(E_RES, api="aclrtCreateStream", kernel="EasyOPf")
    with pytest.raises(ValueError):
        npusim.inject(api="aclrtCreateStream")               # an API injection needs a code
    with pytest.raises(ValueError):
        npusim.inject(E_RES, kernel="EasyOPf")               # not a kernel-exception code
    with pytest.raises(ValueError):
        npusim.inject(E_RES, api="aclrtCreateStream", call=0)
    with pytest.raises(ValueError, match="stream argument"):
        npusim.inject(E_RES, api="aclrtCreateStream", stream=0x1234)
    with pytest.raises(ValueError, match="model"):
        npusim.inject(E_RES, api="aclrtMalloc", model=0x1234)
    npusim.inject(E_RES, api="aclrtDestroyStream", stream=0x1234).remove()   # `h` is a stream
    npusim.inject(E_RES, api="aclrtMemcpyAsync", model=0x1234).remove()      # via its stream
    assert not faults.injections()


def test_clear_and_reset_disarm_everything(dev0):
    a = npusim.inject(E_STREAM, api="aclrtCreateStream", every=True)
    b = npusim.inject(kernel="EasyOPf", every=True)
    assert faults.injections() == [a, b] and api_launch.KERNEL_HOOK is not None
    assert "aclrtCreateStream" in repr(a) and "kernel='EasyOPf'" in repr(b)
    npusim.clear_injections()
    assert a.done and b.done and api_launch.KERNEL_HOOK is None
    npusim.inject(E_STREAM, api="aclrtCreateStream")
    npusim.reset()
    assert not faults.injections()
    assert acl.init() == OK and acl.rt.set_device(0) == OK
    assert acl.rt.create_stream()[1] == OK


def test_injected_call_is_on_the_host_trace(stream):
    npusim.configure(trace=True)
    x = new_buf()
    mh = one_kernel_graph(stream, x)
    with npusim.inject(E_RES, api="aclmdlRIExecuteAsync"):
        assert acl.mdl.ri_execute_async(mh, stream) == E_RES
    assert RT.host_trace[-1][0] == "aclmdlRI.ri_execute_async"


def test_an_injected_device_code_says_so_in_the_pythonic_error(dev0):
    dev = npusim.Device()
    s = dev.stream()
    with npusim.inject(E_AIV, api="aclrtSynchronizeStream"):
        with pytest.raises(E.KernelError, match="injected by npusim.inject"):
            s.synchronize()
    s.synchronize()
