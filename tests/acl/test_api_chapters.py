"""Chapters 02-24 of the runtime API reference through ``npusim.acl`` (issue 36 item 3): every
function answers under its pyACL-derived name with a code (or its C return value) even with
``None`` for every argument; and the behaviour of the functions simulated for it — the init /
finalize callbacks (chapter 02), the device state callbacks (04), the exception-info callbacks
(13), the data-type helpers and queries (24), the application log (23) — and the refusals'
reasons (docs/fidelity.md rows 220-235)."""
from __future__ import annotations

import importlib.util
import inspect
import logging
import pathlib

import numpy as np
import pytest

import npusim
from npusim import acl
from npusim.acl import _boundary as B
from npusim.runtime.api_refused import BY_DESIGN, facade_name

ROOT = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("api_coverage", ROOT / "scripts" / "api_coverage.py")
cov = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cov)

OK = 0
ROWS = cov.read_table()
VECTOR_CORE_EXCEPTION = 507035


def _resolve(c: str):
    obj = acl
    for part in facade_name(c).split(".")[1:]:
        obj = getattr(obj, part, None)
    return obj


# ---- every function answers ----
@pytest.mark.parametrize("c", [c for _, c in ROWS], ids=lambda c: c)
def test_every_function_answers_none_for_every_argument(c):
    fn = _resolve(c)
    if fn is None:
        assert cov.status(c)[0] == "missing"
        pytest.skip(f"{c}: not in this branch yet (docs/api_coverage.md: missing)")
    params = inspect.signature(fn).parameters.values()
    if any(p.kind is p.VAR_POSITIONAL for p in params) and \
            not any(p.kind is p.POSITIONAL_OR_KEYWORD for p in params):
        n = 3                                       # a refusal: it takes anything
    else:
        n = sum(p.kind is p.POSITIONAL_OR_KEYWORD for p in params)
    escapes = len(B.ESCAPES)
    r = fn(*[None] * n)
    assert len(B.ESCAPES) == escapes, f"{c} let an exception escape: {B.ESCAPES[-1]}"
    if isinstance(r, tuple):           # (507000 is a code some runtime checks give for NULL,
        assert isinstance(r[-1], int), (c, r)      # aclmdlRIAbort's; an escape is caught above)
    else:                                           # a code, or the C function's own value
        assert r is None or isinstance(r, (int, float, str)), (c, r)   # str: aclrtGetSocName


def test_refused_functions_have_the_c_function_s_output_count():
    """The refusals' shapes: outputs None then the code; a C function returning a value or
    nothing (``aclprofCreateStamp``, ``acltdtCreateChannel``, ``acldumpGetPath``) None."""
    assert acl.tdt.create_channel(0, "ch") is None
    assert acl.tdt.create_queue(None) == (None, 207000)
    assert acl.tdt.get_buf_data(1) == (None, None, 207000)
    assert acl.prof.create_stamp() is None
    assert acl.prof.range_start(1) == (None, 207000)
    assert acl.dump.get_path(0) is None
    assert acl.rt.get_mem_uce_info(0, None, 0) == (None, None, 207000)
    assert acl.rt.device_get_pci_bus_id(0, 64) == (None, 207000)
    assert acl.rt.get_group_count() == (None, 207000)
    assert "AI Core groups" in acl.get_recent_err_msg()


@pytest.mark.parametrize("profile", ["Ascend910B", "Ascend910_93"])
def test_counting_notifies_answer_207000_on_a2_and_a3(profile):
    npusim.reset()
    npusim.configure(profile=profile)
    assert acl.init() == OK and acl.rt.set_device(0) == OK
    assert acl.rt.cnt_notify_create(0) == (None, 207000)
    assert "Ascend 950 only" in acl.get_recent_err_msg()
    assert acl.rt.cnt_notify_record(1, None, None) == acl.ACL_ERROR_INVALID_PARAM   # acl first
    assert acl.rt.cnt_notify_record(1, None, {"mode": 0}) == 207000
    assert acl.rt.cnt_notify_get_id(1) == (None, 207000)


# ---- chapter 09: counting notifies on Ascend 950 ----
@pytest.fixture
def on_950():
    npusim.reset()
    npusim.configure(profile="Ascend950")
    assert acl.init() == OK and acl.rt.set_device(0) == OK
    s1, _ = acl.rt.create_stream()
    s2, _ = acl.rt.create_stream()
    n, ret = acl.rt.cnt_notify_create(0)
    assert ret == OK
    return n, s1, s2


def _counter(n) -> int:
    from npusim.runtime.runtime import RT
    return RT.handles.get("cnt_notify", n)[0].value()


def _done(s) -> bool:
    return acl.rt.stream_query(s) == (acl.ACL_STREAM_STATUS_COMPLETE, OK)


def _wait(n, s, mode, value, clear=0):
    return acl.rt.cnt_notify_wait_with_timeout(
        n, s, {"mode": mode, "value": value, "timeout": 0, "isClear": clear})


def _record(n, s, mode, value):
    return acl.rt.cnt_notify_record(n, s, {"mode": mode, "value": value})


def test_a_wait_holds_its_stream_until_the_adds_reach_its_value(on_950):
    n, s1, s2 = on_950
    assert _wait(n, s1, acl.ACL_RT_CNT_NOTIFY_WAIT_BIGGER_OR_EQUAL_MODE, 3, clear=1) == OK
    for _ in range(2):
        assert _record(n, s2, acl.ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE, 1) == OK
    assert acl.rt.synchronize_stream(s2) == OK
    assert _counter(n) == 2 and not _done(s1)
    assert _record(n, s2, acl.ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE, 1) == OK
    assert acl.rt.synchronize_stream(s1) == OK
    assert _counter(n) == 0                          # isClear
    assert acl.rt.cnt_notify_destroy(n) == OK


@pytest.mark.parametrize("mode,records,value,released", [
    ("EQUAL", [("SET_VALUE", 5)], 5, True),
    ("EQUAL", [("SET_VALUE", 6)], 5, False),
    ("LESS", [("SET_VALUE", 9), ("BIT_AND", 3)], 4, True),           # 9 & 3 = 1 < 4
    ("LESS", [("SET_VALUE", 9)], 4, False),
    ("BIGGER", [("SET_VALUE", 4)], 4, False),
    ("BIGGER", [("ADD", 0xFFFFFFFF), ("ADD", 6)], 4, True),           # uint32: 5 > 4
    ("EQUAL_WITH_BITMASK", [("BIT_OR", 0b0100), ("BIT_OR", 0b0001)], 0b0101, True),
    ("EQUAL_WITH_BITMASK", [("BIT_OR", 0b0100)], 0b0101, False)])
def test_wait_modes_against_record_modes(on_950, mode, records, value, released):
    n, s1, s2 = on_950
    for m, v in records:
        assert _record(n, s2, getattr(acl, f"ACL_RT_CNT_NOTIFY_RECORD_{m}_MODE"), v) == OK
    assert acl.rt.synchronize_stream(s2) == OK
    assert _wait(n, s1, getattr(acl, f"ACL_RT_CNT_NOTIFY_WAIT_{mode}_MODE"), value) == OK
    if released:
        assert acl.rt.synchronize_stream(s1) == OK
    else:                                            # never released: a deadlock, reported
        assert acl.rt.synchronize_stream(s1) == acl.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
        assert acl.rt.cnt_notify_reset(n, s2) == OK  # release it: counter 0 ...
        assert _record(n, s2, acl.ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE,
                       {"EQUAL": 5, "LESS": 0, "BIGGER": 5, "EQUAL_WITH_BITMASK": 5}[mode]) == OK
        assert acl.rt.synchronize_stream(s1) == OK


def test_reset_sets_the_counter_to_zero_in_stream_order(on_950):
    n, _, s2 = on_950
    assert _record(n, s2, acl.ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE, 7) == OK
    assert acl.rt.synchronize_stream(s2) == OK and _counter(n) == 7
    assert acl.rt.cnt_notify_reset(n, s2) == OK
    assert acl.rt.synchronize_stream(s2) == OK and _counter(n) == 0
    assert acl.rt.cnt_notify_record(n, None, {"mode": 1, "value": 2}) == OK   # default stream
    assert acl.rt.synchronize_device() == OK and _counter(n) == 2


def test_counting_notify_codes_on_950(on_950):
    n, s1, _ = on_950
    assert acl.rt.cnt_notify_create(1) == (None, acl.ACL_ERROR_RT_PARAM_INVALID)
    assert acl.rt.cnt_notify_record(n, s1, None) == acl.ACL_ERROR_INVALID_PARAM
    assert acl.rt.cnt_notify_record(None, s1, {"mode": 0}) == acl.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.cnt_notify_record(n, s1, {"mode": 3}) == acl.ACL_ERROR_RT_PARAM_INVALID
    assert _wait(n, s1, 5, 1) == acl.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.cnt_notify_record(s1, s1, {"mode": 0}) == acl.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.rt.cnt_notify_record(n, n, {"mode": 0}) == acl.ACL_ERROR_RT_INVALID_HANDLE
    slot, ret = acl.rt.cnt_notify_get_id(n)
    assert ret == OK and isinstance(slot, int)
    before = npusim.census()
    assert acl.rt.cnt_notify_destroy(n) == OK
    assert npusim.census().diff(before) == {"handles cnt_notify": -1, "device 0 sync slots": -1}
    assert acl.rt.cnt_notify_destroy(n) == acl.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.rt.cnt_notify_get_id(n) == (None, acl.ACL_ERROR_RT_INVALID_HANDLE)


def test_the_submodules_resolve_through_import_acl():
    npusim.install_as_acl()
    try:
        import acl as real     # noqa: F401 -- the drop-in
        import acl.tdt, acl.log, acl.sys  # noqa: E401,F401
        assert real.tdt.create_queue is acl.tdt.create_queue
        assert real.sys.get_cann_version(0) == (None, 207000)
        assert real.sys.get_version_str is acl.sys.get_version_str
    finally:
        npusim.uninstall_as_acl()


# ---- chapter 02: init / finalize callbacks ----
def _fresh():
    npusim.reset()
    return acl


def test_init_callbacks_run_in_the_runtime_s_order_with_the_config_text(tmp_path):
    _fresh()
    cfg = tmp_path / "acl.json"
    cfg.write_text('{"dump": {}}')
    seen = []

    def cb(name):
        return lambda text, n, data: seen.append((name, text, n, data))
    assert acl.init_callback_register(acl.ACL_REG_TYPE_OTHER, cb("other1"), 1) == OK
    assert acl.init_callback_register(acl.ACL_REG_TYPE_ACL_DVPP, cb("dvpp"), 2) == OK
    assert acl.init_callback_register(acl.ACL_REG_TYPE_ACL_MODEL, cb("model"), 3) == OK
    assert acl.init_callback_register(acl.ACL_REG_TYPE_ACL_OP_EXECUTOR, cb("op"), 4) == OK
    assert acl.init_callback_register(acl.ACL_REG_TYPE_OTHER, cb("other2"), 5) == OK
    assert acl.init(str(cfg)) == OK
    text = cfg.read_text()
    assert seen == [("model", text, len(text), 3), ("op", text, len(text), 4),
                    ("dvpp", text, len(text), 2), ("other1", text, len(text), 1),
                    ("other2", text, len(text), 5)]
    seen.clear()                                         # a second aclInit: a reference only
    assert acl.init(str(cfg)) == acl.ACL_ERROR_REPEAT_INITIALIZE and seen == []
    late = []                                            # registered after aclInit: called now
    assert acl.init_callback_register(acl.ACL_REG_TYPE_ACL_RETR,
                                      lambda t, n, d: late.append(d), 9) == OK
    assert late == [9]


def test_the_op_executor_callback_needs_a_config_path():
    _fresh()
    seen = []
    assert acl.init_callback_register(acl.ACL_REG_TYPE_ACL_OP_EXECUTOR,
                                      lambda t, n, d: seen.append(t), None) == OK
    assert acl.init() == OK and seen == []


def test_init_callback_registration_checks():
    _fresh()
    f = lambda t, n, d: 0                                # noqa: E731
    assert acl.init_callback_register(acl.ACL_REG_TYPE_ACL_MODEL, None, None) == \
        acl.ACL_ERROR_INVALID_PARAM
    assert acl.init_callback_register(acl.ACL_REG_TYPE_ACL_MODEL, f, None) == OK
    assert acl.init_callback_register(acl.ACL_REG_TYPE_ACL_MODEL, f, None) == \
        acl.ACL_ERROR_INTERNAL_ERROR                     # one per type but OTHER
    assert acl.init_callback_un_register(acl.ACL_REG_TYPE_ACL_DVPP, f) == \
        acl.ACL_ERROR_INTERNAL_ERROR                     # not under that type
    assert acl.init_callback_un_register(acl.ACL_REG_TYPE_ACL_MODEL, None) == \
        acl.ACL_ERROR_INVALID_PARAM
    assert acl.init_callback_un_register(acl.ACL_REG_TYPE_ACL_MODEL, f) == OK
    assert acl.init_callback_un_register(acl.ACL_REG_TYPE_ACL_MODEL, f) == \
        acl.ACL_ERROR_INTERNAL_ERROR


def test_a_failing_init_callback_fails_acl_init_and_leaves_it_undone():
    _fresh()
    results = [100000, 0]
    assert acl.init_callback_register(acl.ACL_REG_TYPE_ACL_MODEL,
                                      lambda t, n, d: results.pop(0), None) == OK
    assert acl.init() == 100000
    assert acl.init() == OK                              # not a repeat: the first one failed


def test_finalize_callbacks_and_finalize_reference():
    _fresh()
    seen = []
    for t in (acl.ACL_REG_TYPE_OTHER, acl.ACL_REG_TYPE_ACL_DVPP, acl.ACL_REG_TYPE_ACL_MODEL,
              acl.ACL_REG_TYPE_ACL_OP_COMPILER, acl.ACL_REG_TYPE_ACL_TDT_QUEUE):
        assert acl.finalize_callback_register(t, seen.append, t) == OK
    assert acl.init() == OK
    assert acl.init() == acl.ACL_ERROR_REPEAT_INITIALIZE       # two references
    assert acl.finalize_reference() == (1, OK) and seen == []
    assert acl.finalize_reference() == (0, OK)
    assert seen == [acl.ACL_REG_TYPE_ACL_OP_COMPILER, acl.ACL_REG_TYPE_ACL_MODEL,
                    acl.ACL_REG_TYPE_ACL_DVPP, acl.ACL_REG_TYPE_OTHER]   # TDT_QUEUE: not aclrt's
    assert acl.finalize_reference() == (0, acl.ACL_ERROR_REPEAT_FINALIZE)
    assert acl.finalize() == acl.ACL_ERROR_REPEAT_FINALIZE
    assert acl.init() == OK and acl.rt.set_device(0) == OK


def test_a_failing_finalize_callback_is_acl_finalize_s_result():
    _fresh()
    assert acl.finalize_callback_register(acl.ACL_REG_TYPE_OTHER, lambda d: 500000, None) == OK
    assert acl.init() == OK
    assert acl.finalize() == 500000
    never = acl.finalize_callback_register                # a callable never registered
    assert acl.finalize_callback_un_register(acl.ACL_REG_TYPE_OTHER, never) == \
        acl.ACL_ERROR_INTERNAL_ERROR


# ---- chapter 04: device state callbacks ----
def test_device_state_callbacks_see_set_and_reset():
    seen = []
    cb = lambda dev, state, args: seen.append((dev, state, args))   # noqa: E731
    assert acl.rt.reg_device_state_callback("mine", cb, "x") == OK
    assert acl.rt.reg_device_state_callback("mine", cb, "x") == acl.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.reg_device_state_callback(None, cb, None) == acl.ACL_ERROR_INVALID_PARAM
    assert acl.rt.set_device(1) == OK                    # a new device: SET_PRE, SET_POST
    assert acl.rt.set_device(1) == OK                    # again: SET_POST only
    assert acl.rt.reset_device(1) == OK                  # one reference left: nothing
    assert acl.rt.reset_device(1) == OK                  # the last: RESET_PRE, RESET_POST
    pre, post, rpre, rpost = (acl.ACL_RT_DEVICE_STATE_SET_PRE, acl.ACL_RT_DEVICE_STATE_SET_POST,
                              acl.ACL_RT_DEVICE_STATE_RESET_PRE,
                              acl.ACL_RT_DEVICE_STATE_RESET_POST)
    assert seen == [(1, pre, "x"), (1, post, "x"), (1, post, "x"), (1, rpre, "x"),
                    (1, rpost, "x")]
    assert acl.rt.reg_device_state_callback("mine", None, None) == OK   # NULL: unregistered
    assert acl.rt.set_device(1) == OK and len(seen) == 5
    assert acl.rt.reset_device(1) == OK


def test_task_abort_callbacks_register_by_name():
    f = lambda *a: 0                                     # noqa: E731
    assert acl.rt.set_device_task_abort_callback("a", f, None) == OK
    assert acl.rt.set_device_task_abort_callback("a", f, None) == acl.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.set_device_task_abort_callback("a", None, None) == OK
    assert acl.rt.set_device_task_abort_callback(None, f, None) == acl.ACL_ERROR_INVALID_PARAM


# ---- chapter 13: exception-info callbacks ----
def _faulting_launch(stream, times: int = 1):
    lib, _ = acl.rt.binary_load_from_file(npusim.samples.binary_path(), None)
    f, _ = acl.rt.binary_get_function(lib, "EasyOPf")
    bad, _ = acl.rt.malloc(8, 0)
    assert acl.rt.memset(bad, 8, 0, 8) == OK           # x = NULL: every launch faults
    for _ in range(times):
        assert acl.rt.launch_kernel(f, 1, bad, 8, stream) == OK


def test_registered_exception_callbacks_fire_on_a_kernel_fault_with_its_info(stream):
    legacy, first, second = [], [], []
    assert acl.rt.set_exception_info_callback(legacy.append) == OK
    assert acl.rt.exception_info_callback_register(first.append) == OK
    assert acl.rt.exception_info_callback_register(second.append) == OK
    assert acl.rt.exception_info_callback_register(first.append) == OK     # one registration
    _faulting_launch(stream, 2)
    assert acl.rt.synchronize_stream(stream) == VECTOR_CORE_EXCEPTION
    assert len(legacy) == len(first) == len(second) == 2
    sid = acl.rt.stream_get_id(stream)[0]
    for info, task in zip(first, (0, 1)):
        assert acl.rt.get_stream_id_from_exception_info(info) == sid
        assert acl.rt.get_task_id_from_exception_info(info) == task
        assert acl.rt.get_error_code_from_exception_info(info) == VECTOR_CORE_EXCEPTION
        assert acl.rt.get_device_id_from_exception_info(info) == 0
    assert first[0] is second[0] is legacy[0]                              # one info per fault
    assert acl.rt.exception_info_callback_unregister(first.append) == OK
    assert acl.rt.exception_info_callback_unregister(first.append) == OK   # not there: fine
    _faulting_launch(stream)
    assert acl.rt.synchronize_stream(stream) == VECTOR_CORE_EXCEPTION
    assert (len(legacy), len(first), len(second)) == (3, 2, 3)
    assert acl.rt.set_exception_info_callback(None) == OK


def test_exception_callback_registration_refuses_null():
    assert acl.rt.exception_info_callback_register(None) == acl.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.exception_info_callback_unregister(None) == acl.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.exception_info_callback_register(3) == acl.ACL_ERROR_RT_PARAM_INVALID


# ---- chapter 24: data-type helpers and queries ----
def test_float16_to_float_is_exact_for_every_half():
    halves = np.arange(65536, dtype=np.uint16)
    ref = halves.view(np.float16).astype(np.float32)
    got = np.array([acl.float16_to_float(int(h)) for h in halves], dtype=np.float32)
    finite = np.isfinite(ref)
    # every finite half exactly, -0.0 and the subnormals included
    assert np.array_equal(got[finite].view(np.uint32), ref[finite].view(np.uint32))
    # exponent 31 is read as a number (fp16_impl.cpp:81): no Inf, no NaN
    e31 = ~finite
    h = halves[e31].astype(np.int64)
    expect = np.where(h >> 15, -1.0, 1.0) * (1024 + (h & 0x3FF)) * 2.0 ** 6
    assert np.array_equal(got[e31].astype(np.float64), expect)
    assert (acl.float16_to_float(0x7C00), acl.float16_to_float(0xFC00),
            acl.float16_to_float(0x7E00)) == (65536.0, -65536.0, 98304.0)
    assert acl.float16_to_float(np.float16(1.5)) == 1.5
    assert acl.float16_to_float(-1) is None and acl.float16_to_float(0x10000) is None


def test_float_to_float16_rounds_to_nearest_even_and_saturates():
    rng = np.random.default_rng(36)
    halves = np.arange(65536, dtype=np.uint16).view(np.float16).astype(np.float32).view(np.uint32)
    bits = np.concatenate([rng.integers(0, 2 ** 32, 50_000, dtype=np.uint64).astype(np.uint32),
                           halves, halves + 1, halves - 1,
                           (halves.astype(np.uint64) + 0x1000).astype(np.uint32),   # the ties
                           np.array([0x477FF000, 0x477FEFFF, 0x33000000, 0x33000001, 0x32FFFFFF,
                                     0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000],
                                    dtype=np.uint32)])
    values = bits.view(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        ref = values.astype(np.float16)
    got = np.array([acl.float_to_float16(v) for v in values], dtype=np.uint16)
    finite = np.isfinite(ref)
    assert np.array_equal(got[finite], ref[finite].view(np.uint16))
    # beyond 65504 (after rounding), Inf and NaN: +-65504 with the sign kept (fp16_impl.cpp:112)
    assert np.all(got[~finite] == np.where(bits[~finite] >> 31, 0xFBFF, 0x7BFF))
    assert acl.float_to_float16(1.0) == 0x3C00 and acl.float_to_float16(10 ** 400) == 0x7BFF
    assert acl.float_to_float16(None) is None and acl.float_to_float16("1") is None


def test_data_type_size_is_the_runtime_s_switch():
    sizes = {acl.ACL_FLOAT: 4, acl.ACL_FLOAT16: 2, acl.ACL_INT8: 1, acl.ACL_INT32: 4,
             acl.ACL_UINT8: 1, acl.ACL_INT16: 2, acl.ACL_UINT16: 2, acl.ACL_UINT32: 4,
             acl.ACL_INT64: 8, acl.ACL_UINT64: 8, acl.ACL_DOUBLE: 8, acl.ACL_BOOL: 1,
             acl.ACL_STRING: 0, acl.ACL_DT_UNDEFINED: 0, acl.ACL_COMPLEX64: 8,
             acl.ACL_COMPLEX128: 16, acl.ACL_BF16: 2, acl.ACL_INT4: 1, acl.ACL_UINT1: 1,
             acl.ACL_COMPLEX32: 4, acl.ACL_HIFLOAT8: 1, 38: 8, 1000: 8}
    assert {dt: acl.data_type_size(dt) for dt in sizes} == sizes
    assert acl.data_type_size(None) is None and acl.data_type_size(2.0) is None


def test_get_device_capability_reads_the_platform_file():
    """ai_core_cnt / vector_core_cnt / l2_size of Ascend910B1.ini: 24, 48, 192 MiB (the driver's
    25 AI Cores and 50 vector cores, which the timing model uses, less the ones kept back)."""
    prof = npusim.runtime.runtime.profile()
    assert prof.name == "Ascend910B" and (prof.aic_cores, prof.aiv_cores) == (25, 50)
    assert acl.get_device_capability(0, acl.ACL_DEVICE_INFO_AI_CORE_NUM) == (24, OK)
    assert acl.get_device_capability(0, acl.ACL_DEVICE_INFO_VECTOR_CORE_NUM) == (48, OK)
    assert acl.get_device_capability(0, acl.ACL_DEVICE_INFO_L2_SIZE) == (201_326_592, OK)
    assert acl.get_device_capability(prof.device_count, 0) == (None, acl.ACL_ERROR_INVALID_PARAM)
    assert acl.get_device_capability(0, 7) == (None, acl.ACL_ERROR_INVALID_PARAM)


# ---- chapter 23: the application log ----
def test_log_records_go_to_python_logging_at_enabled_levels(monkeypatch, caplog):
    monkeypatch.setenv("ASCEND_GLOBAL_LOG_LEVEL", "1")
    assert acl.log.check_debug_level(0, acl.ACL_DEBUG) == 0
    assert acl.log.check_debug_level(0, acl.ACL_INFO) == 1
    assert acl.log.check_debug_level(-1, acl.ACL_ERROR) == 0
    with caplog.at_level(logging.DEBUG, logger="npusim.acllog"):
        assert acl.log.record(0, acl.ACL_INFO, "step %d of %s", 3, "x") is None
        assert acl.log.record(0, acl.ACL_DEBUG, "hidden") is None
        assert acl.log.record(-5, acl.ACL_ERROR, "dropped") is None
        assert acl.app_log(acl.ACL_WARNING, "f", "a.py", 7, "w=%d", 2) is None
    msgs = [r.getMessage() for r in caplog.records]
    assert msgs == ["step 3 of x", "[a.py:7] f: w=2"]


def test_every_refusal_of_the_new_chapters_names_its_area():
    for c, (outputs, why) in BY_DESIGN.items():
        fn = _resolve(c)
        fn(None)
        assert why in acl.get_recent_err_msg(), c


# ---- chapter 04: device id mappings ----
@pytest.mark.parametrize("name,negative", [
    ("get_logic_dev_id_by_phy_dev_id", 107000), ("get_phy_dev_id_by_logic_dev_id", 107000),
    ("get_user_dev_id_by_phy_dev_id", 107000), ("get_phy_dev_id_by_user_dev_id", 107000),
    ("get_user_dev_id_by_logic_dev_id", 107001), ("get_logic_dev_id_by_user_dev_id", 107001)])
def test_device_ids_map_to_themselves_with_the_runtime_s_checks(name, negative):
    fn = getattr(acl.rt, name)
    count = acl.rt.get_device_count()[0]
    assert [fn(i) for i in range(count)] == [(i, OK) for i in range(count)]
    assert fn(-1) == (None, negative)
    assert fn(count) == (None, acl.ACL_ERROR_RT_INVALID_DEVICEID)


def test_log_callbacks_register_like_plog():
    f = lambda data, kind, text, n: 0                    # noqa: E731
    handles = [acl.log.register_callback(f, None, t) for t in (0, 1, 2)]
    assert handles == [(1, 0), (2, 0), (3, 0)]
    assert acl.log.register_callback(None, None, 0) == (None, -1)
    assert acl.log.register_callback(f, None, 3) == (None, -1)
    for _ in range(13):
        assert acl.log.register_callback(f, None, 0)[1] == 0
    assert acl.log.register_callback(f, None, 0) == (None, -1)      # 16 at most
    assert acl.log.unregister_callback(2) == 0
    assert acl.log.unregister_callback(2) == -1
    assert acl.log.register_callback(f, None, 0) == (17, 0)


def test_ctx_float_overflow_addr_is_the_word_kernels_get(acl):
    from helpers.acl import in_fresh_thread
    addr, ret = acl.rt.ctx_get_float_overflow_addr()
    assert ret == OK and addr
    assert acl.rt.ctx_get_float_overflow_addr() == (addr, OK)            # one per context
    ctx, _ = acl.rt.create_context(0)
    other, ret = acl.rt.ctx_get_float_overflow_addr()                    # the new current one
    assert ret == OK and other != addr
    assert acl.rt.destroy_context(ctx) == OK
    assert in_fresh_thread(acl.rt.ctx_get_float_overflow_addr) == (None, 107002)


@pytest.mark.parametrize("hostile", [float("nan"), "x", -1, 2 ** 70, object(), b"\0", [1, 2]],
                         ids=["nan", "str", "neg", "huge", "object", "bytes", "list"])
def test_no_function_of_the_new_modules_raises_on_hostile_arguments(hostile):
    """The acl-level functions and the submodules of chapters 02-24 (``acl.tdt`` ... and the
    new ``acl.rt`` ones) with one hostile value in every argument: a code or a C value, never
    an exception (the facade fuzz walks acl.rt / acl.mdl with more)."""
    modules = {"acl": acl, "tdt": acl.tdt, "dump": acl.dump, "log": acl.log, "sys": acl.sys,
               "platform": acl.platform}
    escapes = len(B.ESCAPES)
    for ch, c in ROWS:
        fn = _resolve(c)
        name = facade_name(c)
        if fn is None or name.split(".")[1] not in modules and not any(
                ch.startswith(p) for p in ("02", "04", "09", "13", "23", "24")):
            continue
        if name in ("acl.init", "acl.finalize", "acl.finalize_reference"):
            continue                                     # they would end the session's init
        kinds = [p.kind for p in inspect.signature(fn).parameters.values()]
        n = kinds.count(inspect.Parameter.POSITIONAL_OR_KEYWORD)
        r = fn(*[hostile] * (2 if inspect.Parameter.VAR_POSITIONAL in kinds and not n else n))
        assert r is None or isinstance(r, (int, float, str, tuple)), (c, r)
        if isinstance(r, tuple):
            assert isinstance(r[-1], int), (c, r)
    assert len(B.ESCAPES) == escapes, B.ESCAPES[-1]


def test_prof_trace_is_a_task_in_stream_order(stream):
    data = (1).to_bytes(8, "little") + (2).to_bytes(8, "little") + (3).to_bytes(8, "little")
    assert acl.rt.prof_trace(data, 24, stream) == OK
    assert acl.rt.get_thread_last_task_id() == (0, OK)             # the stream's first task
    assert acl.rt.prof_trace(data, 24, stream) == OK
    assert acl.rt.get_thread_last_task_id() == (1, OK)
    assert acl.rt.synchronize_stream(stream) == OK
    assert acl.rt.prof_trace(None, 24, stream) == acl.ACL_ERROR_INVALID_PARAM
    assert acl.rt.prof_trace(data, 25, stream) == acl.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.prof_trace(data, 0, stream) == acl.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.prof_trace(data[:8], 16, stream) == acl.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.prof_trace(data, 24, 0x5A20_0000_7777) == acl.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.rt.prof_trace(data, 24, None) == OK                   # the default stream
