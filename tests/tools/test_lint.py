"""The capture linter: every capture error code, provoked through the facade, is recorded with
the source line of the offending call (this file's, found by the ``# @`` tag on it), the API
name and a one-line fix hint, plus the cause where it lies elsewhere (the unjoined side stream,
the call that invalidated the capture). The Pythonic API's ``AclError`` carries hint and line."""
from __future__ import annotations

import pathlib
import threading

import numpy as np
import pytest

import npusim as ns
from npusim import acl
from npusim import errors as ERR
from npusim.analysis import HINTS, last_errors

HERE = pathlib.Path(__file__)
GLOBAL = acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL
OK = 0


def line_of(tag: str) -> int:
    for i, text in enumerate(HERE.read_text().splitlines(), 1):
        if text.rstrip().endswith(tag):
            return i
    raise AssertionError(tag)


def stream() -> int:
    s, ret = acl.rt.create_stream()
    assert ret == OK
    return s


def event() -> int:
    e, ret = acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC)
    assert ret == OK
    return e


def buf(n: int = 64) -> int:
    p, ret = acl.rt.malloc(n, 0)
    assert ret == OK
    return p


def fork(origin: int, side: int) -> None:
    e = event()
    assert acl.rt.record_event(e, origin) == OK
    assert acl.rt.stream_wait_event(side, e) == OK


def k(s: int, x: int, duration_ns: int = 0) -> None:
    fn, ret = acl.rt.binary_get_function(LIB[0], "EasyOPf")
    arg = np.array([x], np.uint64)
    assert acl.rt.launch_kernel_with_host_args(fn, 1, s, None, arg.tobytes(), 8) == OK


LIB: list = []


@pytest.fixture(autouse=True)
def dev0():
    assert acl.init() == OK
    assert acl.rt.set_device(0) == OK
    lib, ret = acl.rt.binary_load_from_file(ns.samples.binary_path())
    assert ret == OK
    LIB[:] = [lib]


# ---- one scenario per code: returns the code the tagged call returned ----
def c107024():
    s1, s2, ev = stream(), stream(), event()
    acl.rt.record_event(ev, s2)
    acl.mdl.ri_capture_begin(s1, GLOBAL)
    return acl.rt.stream_wait_event(s1, ev)                    # @L107024


def c107025():
    s1, s2 = stream(), stream()
    acl.mdl.ri_capture_begin(s1, GLOBAL)
    fork(s1, s2)
    k(s2, buf())
    return acl.mdl.ri_capture_end(s1)[1]                       # @L107025


def c107026():
    s1 = stream()
    acl.mdl.ri_capture_begin(s1, GLOBAL)
    _, mh, _ = acl.mdl.ri_capture_get_info(s1)
    return acl.mdl.ri_destroy(mh)                              # @L107026


def c107027():
    s1 = stream()
    acl.mdl.ri_capture_begin(s1, GLOBAL)
    return acl.rt.synchronize_stream(s1)                       # @L107027


def c107028():
    s1, ev = stream(), event()
    acl.mdl.ri_capture_begin(s1, GLOBAL)
    acl.rt.record_event(ev, s1)
    return acl.rt.synchronize_event(ev)                        # @L107028


def c107029():
    return acl.mdl.ri_capture_end(stream())[1]                 # @L107029


def c107030():
    s1, x = stream(), buf()
    acl.mdl.ri_capture_begin(s1, GLOBAL)
    return acl.rt.memset(x, 64, 0, 64)                         # @L107030


def c107031():
    s1, ev = stream(), event()
    acl.mdl.ri_capture_begin(s1, GLOBAL)
    acl.rt.record_event(ev, s1)
    return acl.rt.stream_wait_event(None, ev)                  # @L107031


def c107032():
    s1, s3, ev = stream(), stream(), event()
    acl.mdl.ri_capture_begin(s1, GLOBAL)
    acl.mdl.ri_capture_begin(s3, acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
    acl.rt.record_event(ev, s1)
    return acl.rt.stream_wait_event(s3, ev)                    # @L107032


def c107033():
    s1 = stream()
    acl.mdl.ri_capture_begin(s1, GLOBAL)
    return acl.mdl.ri_capture_task_grp_end(s1)[1]              # @L107033


def c107034():
    s1, s2 = stream(), stream()
    acl.mdl.ri_capture_begin(s1, GLOBAL)
    fork(s1, s2)
    acl.mdl.ri_capture_task_grp_begin(s1)
    return acl.rt.record_event(event(), s2)                    # @L107034


def c107036():
    s1, s2 = stream(), stream()
    acl.mdl.ri_capture_begin(s1, GLOBAL)
    fork(s1, s2)
    return acl.mdl.ri_capture_end(s2)[1]                       # @L107036


def c107037():
    s1, exe = stream(), stream()
    acl.mdl.ri_capture_begin(s1, GLOBAL)
    k(s1, buf())
    fn, _ = acl.rt.binary_get_function(LIB[0], "LongOPf")
    for _ in range(400):                                        # 400 x 50 ms > the 10 s poll
        acl.rt.launch_kernel_with_host_args(fn, 1, s1, None, bytes(8), 8)
    mh, _ = acl.mdl.ri_capture_end(s1)
    acl.mdl.ri_execute_async(mh, exe)
    return acl.mdl.ri_destroy(mh)                              # @L107037


def c107038():
    s1 = stream()
    ctx, _ = acl.rt.get_current_context()
    acl.mdl.ri_capture_begin(s1, GLOBAL)
    out = []

    def other():
        acl.rt.set_current_context(ctx)
        out.append(acl.mdl.ri_capture_end(s1)[1])              # @L107038
    t = threading.Thread(target=other)
    t.start()
    t.join()
    return out[0]


def c107041():
    s1, other, x = stream(), stream(), buf()
    host = np.zeros(16, np.uint32)
    acl.mdl.ri_capture_begin(s1, GLOBAL)
    return acl.rt.memcpy_async(x, 64, acl.util.numpy_to_ptr(host), 64,  # @L107041
                               acl.ACL_MEMCPY_HOST_TO_DEVICE, other)


def c107045():
    s1, s2 = stream(), stream()
    acl.mdl.ri_capture_begin(s1, GLOBAL)
    _, mh, _ = acl.mdl.ri_capture_get_info(s1)
    ch, _ = acl.mdl.ri_cond_handle_create(mh, 1, 1)
    subs, _ = acl.mdl.ri_add_cond_task(ch, 0, 1, s1)
    acl.mdl.ri_capture_to_model_ri_begin(s2, subs[0], GLOBAL)
    return acl.mdl.ri_capture_end(s1)[1]                       # @L107045


def c507009():
    s1 = stream()
    acl.mdl.ri_capture_begin(s1, GLOBAL)
    acl.mdl.ri_capture_task_grp_begin(s1)
    return acl.rt.memset_async(buf(), 64, 0, 64, s1)           # @L507009


def c507903():
    s1, s3, ev = stream(), stream(), event()
    acl.mdl.ri_capture_begin(s1, GLOBAL)
    acl.mdl.ri_capture_begin(s3, acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
    acl.rt.record_event(ev, s1)
    acl.rt.stream_wait_event(s3, ev)                            # @INVALIDATES
    return acl.mdl.ri_capture_end(s1)[1]                       # @L507903


SCENARIOS = {int(name[1:]): fn for name, fn in list(globals().items())
             if name.startswith("c") and name[1:].isdigit()}


def test_every_capture_code_has_a_hint_and_a_scenario():
    capture = {c.value for c in ERR.CODES if c.family == "capture"}
    assert capture <= set(HINTS)
    assert capture - {107040} <= set(SCENARIOS)           # 107040: tests/test_task_update.py
    assert {507009, 507903} <= set(SCENARIOS)
    assert all(h and len(h) < 220 and "\n" not in h for h in HINTS.values())


@pytest.mark.parametrize("code", sorted(SCENARIOS))
def test_capture_error_records_line_api_and_hint(code):
    ret = SCENARIOS[code]()
    assert ret == code
    errs = [e for e in last_errors() if e.code == code]
    assert errs, last_errors()
    e = errs[-1]
    assert e.site is not None and pathlib.Path(e.site.file) == HERE
    assert e.site.line == line_of(f"# @L{code}")
    assert e.api.startswith("acl.") and e.hint == HINTS.get(code) or e.hint
    assert e.name == ERR.name_of(code)
    text = str(e)
    assert f"{HERE.name}:{e.site.line}" in text and "fix: " in text and str(code) in text


def test_unjoined_stream_is_named():
    c107025()
    e = last_errors()[-1]
    assert "stream" in e.detail and "ends with KERNEL" in e.detail
    assert "joined at" not in e.detail or HERE.name in e.detail


def test_invalidated_capture_names_the_call_that_invalidated_it():
    c507903()
    e = last_errors()[-1]
    assert e.code == 507903
    assert "invalidated by" in e.detail and f"{HERE.name}:{line_of('# @INVALIDATES')}" in e.detail
    assert "stream_wait_event" in e.detail
    inv = [x for x in last_errors() if x.code == 107032]
    assert inv and inv[-1].site.line == line_of("# @INVALIDATES")


def test_busy_stream_names_its_capture():
    c107027()
    assert "is capturing into model" in last_errors()[-1].detail


def test_pythonic_aclerror_carries_hint_and_line():
    dev = ns.Device()
    s = dev.stream()
    with pytest.raises(ns.errors.CaptureError) as ei:
        with ns.graph(stream=s):
            s.synchronize()                                     # @PY107027
    msg = str(ei.value)
    assert ei.value.code == 107027
    assert "fix: " in msg and f"{HERE.name}:{line_of('# @PY107027')}" in msg
    assert last_errors()[-1].code == 107027


def test_pythonic_unjoined_capture_end_names_the_side_stream():
    dev = ns.Device()
    s1, s2 = dev.stream(), dev.stream()
    x = dev.malloc(64)
    fork_ev = dev.event()
    g = ns.graph(stream=s1)
    g.capture_begin()
    s1.record(fork_ev)
    s2.wait(fork_ev)
    s2.launch("EasyOPf", args=(x,))
    with pytest.raises(ns.errors.CaptureError) as ei:
        g.capture_end()                                          # @PY107025
    msg = str(ei.value)
    assert ei.value.code == 107025
    assert "stream 2" in msg and "ends with KERNEL" in msg
    assert f"{HERE.name}:{line_of('# @PY107025')}" in msg


def test_non_capture_errors_are_not_linted():
    n = len(last_errors())
    assert acl.rt.malloc(0, 0)[1] == acl.ACL_ERROR_INVALID_PARAM
    assert acl.rt.destroy_stream(12345) != OK
    assert len(last_errors()) == n


# ---------------------------------------------------------------- warnings: un-joined streams

def test_eager_work_on_an_unjoined_stream_during_a_global_capture_is_warned():
    dev = ns.Device("Ascend910B")
    s, comm = dev.stream(), dev.stream()
    x = dev.malloc(64)
    with pytest.warns(ERR.CaptureWarning, match="never joined") as w:
        with ns.graph(s):                                   # @unjoined-begin
            s.launch("EasyOPf", 1, args=(x,))
            comm.launch("ShortOPf", 1, args=(x,))           # @unjoined-launch
            comm.launch("ShortOPf", 1, args=(x,))           # once per stream and capture
    assert len(w) == 1
    assert (pathlib.Path(w[0].filename).name, w[0].lineno) == \
        (HERE.name, line_of("# @unjoined-launch"))
    (e,) = [e for e in last_errors() if e.severity == "warning"]
    assert e.code == 0 and e.site.line == line_of("# @unjoined-launch")
    assert f"stream {dev._dev.streams[comm_sq(comm)].id}" in e.detail
    assert f"{HERE.name}:{line_of('# @unjoined-begin')}" in e.detail
    assert "aclrtStreamWaitEvent" in e.hint and str(e).count("warning:") == 1


def comm_sq(stream):
    return ns.runtime.stream.lookup(stream.handle)[0].sq


@pytest.mark.parametrize("how", ["joined", "relaxed", "after"])
def test_no_warning_for_a_joined_stream_another_mode_or_after_the_capture(how):
    import warnings
    dev = ns.Device("Ascend910B")
    s, comm = dev.stream(), dev.stream()
    x = dev.malloc(64)
    e1, e2 = dev.event(), dev.event()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ERR.CaptureWarning)
        with ns.graph(s, mode="relaxed" if how == "relaxed" else "global"):
            s.launch("EasyOPf", 1, args=(x,))
            if how == "joined":
                s.record(e1)
                comm.wait(e1)
            if how != "after":
                comm.launch("ShortOPf", 1, args=(x,))
            if how == "joined":
                comm.record(e2)
                s.wait(e2)
        comm.launch("ShortOPf", 1, args=(x,))
    assert not [e for e in last_errors() if e.severity == "warning"]


def test_no_warning_for_eager_work_of_another_thread_during_a_global_capture():
    import warnings
    dev = ns.Device("Ascend910B")
    s, other = dev.stream(), dev.stream()
    x = dev.malloc(64)
    ctx, _ = acl.rt.get_context()
    errors = []

    def work():
        try:
            acl.rt.set_context(ctx)
            other.launch("ShortOPf", 1, args=(x,))
        except Exception as e:        # noqa: BLE001 — reported below
            errors.append(e)

    with warnings.catch_warnings():
        warnings.simplefilter("error", ERR.CaptureWarning)
        with ns.graph(s):
            s.launch("EasyOPf", 1, args=(x,))
            t = threading.Thread(target=work)
            t.start()
            t.join()
    assert not errors and not [e for e in last_errors() if e.severity == "warning"]
