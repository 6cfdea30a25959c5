"""Facade fuzz: every public ``npusim.acl`` function × a table of hostile values, in-process.

The facade's contract (design.md §3.1): misuse never raises, it returns the code. For each
function and each of its parameters, every hostile value below is passed in that position
(the other arguments valid: live handles, device and host memory, a loaded binary, a captured
model and its task) and the call must return the documented shape — the code, or the outputs
then the code, with ``None`` outputs on failure — and must not need the boundary's last resort
(``npusim/acl/_boundary.py`` ``ESCAPES``: an exception that escaped a runtime function). After
each function's run the simulator must still work: a fresh context runs a kernel and copies.
The same runs with the stream arguments capturing, to reach the capture paths.

``KNOWN_RUNTIME_BUGS`` lists escapes that are bugs inside ``npusim/runtime`` (function, hostile
value, exception); the boundary turns them into 507000 until they are fixed there.
"""
from __future__ import annotations

import inspect
import os
import tempfile
import threading

import numpy as np
import pytest

import npusim
from npusim import acl
from npusim.acl import _boundary as B
from npusim.runtime.runtime import RT


@pytest.fixture(autouse=True)
def _in_a_temporary_directory(tmp_path, monkeypatch):
    """Hostile paths (dump files named "x", "1.5", ...) are written here, not into the checkout."""
    monkeypatch.chdir(tmp_path)


OK = acl.ACL_SUCCESS


def _ro(n: int) -> np.ndarray:
    a = np.zeros(n, np.uint8)
    a.setflags(write=False)
    return a


class _Weird:
    """An object whose conversions all fail in unusual ways."""

    def __index__(self):
        raise RuntimeError("no index")

    def __bool__(self):
        raise RuntimeError("no bool")

    def __len__(self):
        raise RuntimeError("no len")

    def __eq__(self, other):
        raise RuntimeError("no eq")

    __hash__ = object.__hash__


# label -> value
HOSTILE = {
    "np.int32": np.int32(1), "np.int64 big": np.int64(2 ** 40),
    "np.uint64 2**63": np.uint64(2 ** 63), "np.uint8": np.uint8(255), "np.bool": np.bool_(True),
    "bool": True, "2**31": 2 ** 31, "2**32": 2 ** 32, "65536": 65536, "65537": 65537,
    "2**63": 2 ** 63, "2**64-1": 2 ** 64 - 1, "2**64": 2 ** 64, "2**100": 2 ** 100, "-1": -1,
    "-2**31-1": -2 ** 31 - 1, "-2**63": -2 ** 63, "-2**100": -2 ** 100,
    "None": None, "nan": float("nan"), "inf": float("inf"), "-0.0": -0.0, "1.5": 1.5, "1.0": 1.0,
    "np.float64": np.float64(1.0), "complex": 1j,
    "str": "x", "nul str": "a\0b", "empty str": "", "bytes": b"x", "nul bytes": b"\0",
    "array[2]": np.array([1, 2]), "array[1]": np.array([1]), "array0d": np.array(1),
    "float array": np.array([1.5]), "empty array": np.zeros(0), "read-only array": _ro(8),
    "list": [1], "tuple": (1, 2), "dict": {}, "bad dict": {"type": "x", "num_blocks": -1},
    "float type": {"type": 1.0}, "str args": {"type": 1, "args": "x"},
    "65536 blocks": {"type": 1, "num_blocks": 65536}, "nan value": {"type": 4, "value": np.nan},
    "inf attr": {1: float("inf")}, "inf key": {float("inf"): 1}, "nan pair": [(float("nan"), 0)],
    "inf pair": [(1, float("inf"))], "huge attr": {1: 2 ** 70}, "str attr": {3: "x"},
    "pair of pairs": [((1, 2), (3, 4))], "pair tuple value": {7: (1, float("inf"))},
    "object": object(), "weird": _Weird(), "lambda": (lambda *a: 1 / 0),
}
# label -> environment key: live handles in the wrong place
FROM_ENV = {"wrong-kind handle": "event", "model stream": "mstream",
            "destroyed stream": "dead_stream", "a model": "model"}


def hostile(e: dict) -> dict:
    """Every hostile value, the environment's included."""
    return {**HOSTILE, **{label: e[key] for label, key in FROM_ENV.items()}}

# Escapes from runtime functions that are bugs inside npusim/runtime, as (facade function,
# parameter, hostile label) -> exception type; each is reported as 507000. None are known.
KNOWN_RUNTIME_BUGS: dict[tuple[str, str, str], str] = {}


def _out(*r):
    *v, c = r
    assert c == OK, c
    return v[0] if len(v) == 1 else tuple(v)


def make_env(capturing: bool) -> dict:
    npusim.reset()
    B.ESCAPES.clear()
    assert acl.init() == OK and acl.rt.set_device(0) == OK
    e = {"ctx": _out(*acl.rt.get_current_context())}
    e["stream"] = _out(*acl.rt.create_stream())
    e["stream2"] = _out(*acl.rt.create_stream())
    e["dead_stream"] = _out(*acl.rt.create_stream())
    assert acl.rt.destroy_stream(e["dead_stream"]) == OK
    e["event"] = _out(*acl.rt.create_event())
    e["event2"] = _out(*acl.rt.create_event())
    e["notify"] = _out(*acl.rt.create_notify(0))
    e["dptr"] = _out(*acl.rt.malloc(4096, 0))
    slot = np.array([e["dptr"] + 2048], np.uint64)      # as kernel args: one pointer into it
    assert acl.rt.memcpy(e["dptr"], 8, acl.util.numpy_to_ptr(slot), 8, 1) == OK
    e["hptr"] = _out(*acl.rt.malloc_host(4096))
    e["arr"] = np.zeros(4096, np.uint8)
    e["aptr"] = acl.util.numpy_to_ptr(e["arr"])
    e["binary"] = _out(*acl.rt.binary_load_from_file(npusim.samples.binary_path()))
    e["func"] = _out(*acl.rt.binary_get_function(e["binary"], "EasyOPf"))
    e["args"] = _out(*acl.rt.kernel_args_init(e["func"]))
    e["param"] = _out(*acl.rt.kernel_args_append(e["args"], e["dptr"].to_bytes(8, "little")))
    size = _out(*acl.rt.kernel_args_get_mem_size(e["func"], 8))   # a second, finalized handle
    e["umem"] = np.zeros(size, np.uint8)
    e["fargs"] = _out(*acl.rt.kernel_args_init_by_user_mem(e["func"], 1, e["umem"], size))
    _out(*acl.rt.kernel_args_append(e["fargs"], e["dptr"].to_bytes(8, "little")))
    assert acl.rt.kernel_args_finalize(e["fargs"]) == OK
    e["elf"] = open(npusim.samples.binary_path(), "rb").read()
    e["desc"] = acl.rt.create_binary(e["elf"], len(e["elf"]))
    for ev in (e["event"], e["event2"]):                  # recorded and complete
        assert acl.rt.record_event(ev, e["stream2"]) == OK
    assert acl.rt.synchronize_stream(e["stream2"]) == OK
    e["cstream"] = cs = _out(*acl.rt.create_stream())
    assert acl.mdl.ri_capture_begin(cs, 0) == OK
    assert acl.rt.launch_kernel(e["func"], 1, e["dptr"], 8, cs) == OK
    e["model"] = _out(*acl.mdl.ri_capture_end(cs))
    e["mstream"] = _out(*acl.mdl.ri_get_streams(e["model"]))[0]
    e["task"] = _out(*acl.mdl.ri_get_tasks_by_stream(e["mstream"]))[0]
    e["capmodel"] = e["model"]
    if capturing:                        # relaxed mode: other threads' calls are not blocked
        assert acl.mdl.ri_capture_begin(e["stream"], acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED) == OK
        e["capmodel"] = _capture_model(e["stream"])
        e["cond"] = _out(*acl.mdl.ri_cond_handle_create(e["capmodel"], 0, 0))
    return e


def _capture_model(stream: int) -> int:
    status, model, ret = acl.mdl.ri_capture_get_info(stream)
    assert ret == OK and status == acl.ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE
    return model


# valid argument by parameter name: an env key or a literal
VALID = {
    "stream": "stream", "sh": "stream", "eh": "event", "start_h": "event", "end_h": "event2",
    "nh": "notify", "func": "func", "binary": "binary", "args": "args", "param": "param",
    "model_ri": "model", "task": "task", "handle": None, "cond": "cond", "info": None,
    "dev_id": 0, "ptr": "dptr", "dst": "aptr", "src": "dptr", "dest_max": 64, "count": 64,
    "max_count": 64, "kind": 2, "value": 0, "size": 1, "policy": 0, "num_blocks": 1,
    "args_ptr": "dptr", "args_size": 8, "flag": 0, "flags": 0, "mode": 0, "timeout_ms": 10,
    "timeout_s": 0, "timeout": 10, "priority": 0, "max_len": 32, "index": 0, "attr": 1,
    "attr_id": 1, "kernel_name": "EasyOPf", "func_name": "EasyOPf", "name": "x",
    "path": "/nonexistent/npusim-fuzz.json", "config_path": None, "data": b"\0" * 8,
    "options": None, "length": None, "data_len": None, "cfg": None, "reserve": None,
    "host_args": b"\0" * 8, "place_holders": None, "place_holder_num": None, "callback": None,
    "user_data": None, "func_entry": 0, "user_args_size": 8, "param_size": None, "data_size": 8,
    "params": {}, "cond_type": 0, "default_value": 0, "args_handle_mem": "hptr",
    "user_host_mem": "hptr", "actual_args_size": 8,
}
# the handle parameter "h" names different objects
H_OF = {"destroy_context": "ctx", "set_current_context": "ctx"}
# valid arguments of one function's parameter, where the name's default does not fit
FN_VALID = {
    ("launch_kernel_with_config", "args"): lambda e: e["fargs"],
    ("launch_kernel_with_args_array", "args"): lambda e: [e["dptr"].to_bytes(8, "little")],
    ("kernel_args_para_update", "data"): lambda e: e["dptr"].to_bytes(8, "little"),
    ("ri_task_set_params", "params"): lambda e: {
        "type": acl.ACL_MODEL_RI_TASK_KERNEL, "func": e["func"], "args": e["dptr"],
        "args_size": 8, "num_blocks": 1},
    ("memcpy_async", "dst"): lambda e: e["hptr"],
    ("free_host", "ptr"): lambda e: e["hptr"],
    ("binary_load", "binary"): lambda e: e["desc"],
    ("binary_load_from_data", "data"): lambda e: e["elf"],
    ("binary_load_from_file", "path"): lambda e: npusim.samples.binary_path(),
    ("binary_set_exception_callback", "callback"): lambda e: (lambda *a: None),
    ("create_event_with_flag", "flag"): lambda e: acl.ACL_EVENT_SYNC,
    ("create_event_ex_with_flag", "flag"): lambda e: acl.ACL_EVENT_SYNC,
    ("kernel_args_append", "param_size"): lambda e: 8,
    ("ri_get_tasks_by_stream", "stream"): lambda e: e["mstream"],
    ("ri_cond_handle_create", "model_ri"): lambda e: e["capmodel"],
    ("random_num_async", "task_info"): lambda e: {
        "dataType": acl.ACL_FLOAT, "randomNumFuncParaInfo": {
            "funcType": acl.ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, "paramInfo": {
                "uniformDisInfo": {"min": {"valueOrAddr": 0.0, "size": 4},
                                   "max": {"valueOrAddr": 1.0, "size": 4}}}},
        "randomResultAddr": e["dptr"], "randomCounterAddr": e["dptr"] + 1024,
        "randomSeed": {"valueOrAddr": 1, "size": 8}, "randomNum": {"valueOrAddr": 4, "size": 8}},
    ("task_update_async", "task_stream"): lambda e: e["mstream"],
    ("task_update_async", "task_id"): lambda e: 0,
    ("task_update_async", "info"): lambda e: {
        "id": acl.ACL_RT_UPDATE_RANDOM_TASK,
        "val": {"randomTaskAttr": {"srcAddr": e["dptr"], "size": 104}}},
    ("task_update_async", "exec_stream"): lambda e: e["stream"],
    ("ri_debug_json_print", "path"): lambda e: os.path.join(tempfile.gettempdir(),
                                                            f"npusim-fuzz-{os.getpid()}.json"),
}
# functions that end the environment's usefulness when they succeed with valid arguments
TEARDOWN = {"finalize", "reset_device", "destroy_context"}


def facade_functions():
    out = [("acl", "init", acl.init), ("acl", "finalize", acl.finalize)]
    for mod, name in ((acl.rt, "rt"), (acl.mdl, "mdl")):
        for attr, fn in sorted(vars(mod).items()):
            if not attr.startswith("_") and inspect.isfunction(fn):
                out.append((name, attr, fn))
    return out


FUNCTIONS = facade_functions()


def test_every_facade_function_is_behind_the_boundary():
    assert len(FUNCTIONS) >= 107            # acl.init, acl.finalize, acl.rt.*, acl.mdl.*
    for _, attr, fn in FUNCTIONS:
        assert hasattr(fn, "__boundary__"), attr
    assert B.UNDECLARED == [], "parameters without a kind in _params.PARAMS"


def test_refusals_have_the_runtime_functions_own_shape():
    """The boundary's failure result (outputs as None, then the code) has the width of the
    runtime function's own result: checked against each runtime function called with NULLs."""
    make_env(False)
    checked = 0
    for _, attr, fn in FUNCTIONS:
        if attr in TEARDOWN:
            continue
        runtime_fn = inspect.unwrap(fn)
        try:
            r = runtime_fn(*[None] * len(inspect.signature(runtime_fn).parameters))
        except Exception:       # noqa: BLE001 -- a NULL the runtime does not expect
            continue
        n = B.outputs_of(attr, runtime_fn)
        width = -1 if r is None or (n < 0 and type(r) is int) else \
            (0 if type(r) is int else len(r) - 1)
        assert width == n, (attr, r, n)
        checked += 1
    assert checked >= 90


def _valid_args(attr: str, params: list[str], e: dict) -> list:
    vals = []
    for p in params:
        if (attr, p) in FN_VALID:
            vals.append(FN_VALID[attr, p](e))
            continue
        key = H_OF.get(attr, "stream") if p == "h" else VALID.get(p)
        vals.append(e.get(key) if isinstance(key, str) and key in e else key)
    return vals


def _check_shape(attr: str, fn, r) -> None:
    n = B.outputs_of(attr, inspect.unwrap(fn))
    if n < 0:
        assert r is None or type(r) is int, r
        return
    if n == 0:
        assert type(r) is int, r
        return
    assert type(r) is tuple and len(r) == n + 1 and type(r[-1]) is int, r
    if r[-1] != OK:
        assert all(v is None for v in r[:-1]), r


def _healthy() -> None:
    """The simulator still works: the lock is free, and a fresh context copies and runs."""
    assert RT.lock.acquire(timeout=1)
    RT.lock.release()
    res = {}

    def work():
        try:
            acl.init()
            assert acl.rt.set_device(0) == OK
            ctx = _out(*acl.rt.create_context(0))
            s = _out(*acl.rt.create_stream())
            p = _out(*acl.rt.malloc(64, 0))
            host = np.arange(16, dtype=np.uint32)
            assert acl.rt.memcpy(p, 64, acl.util.numpy_to_ptr(host), 64, 1) == OK
            b = _out(*acl.rt.binary_load_from_file(npusim.samples.binary_path()))
            f = _out(*acl.rt.binary_get_function(b, "EasyOPf"))
            a = _out(*acl.rt.kernel_args_init(f))
            _out(*acl.rt.kernel_args_append(a, p.to_bytes(8, "little")))
            assert acl.rt.kernel_args_finalize(a) == OK
            assert acl.rt.launch_kernel_with_config(f, 1, s, None, a) == OK
            assert acl.rt.synchronize_stream(s) == OK
            back = np.zeros(16, np.uint32)
            assert acl.rt.memcpy(acl.util.numpy_to_ptr(back), 64, p, 64, 2) == OK
            assert acl.rt.destroy_context(ctx) == OK
            res["ok"] = True
        except BaseException as ex:      # reported on the test's thread
            res["ex"] = ex
    t = threading.Thread(target=work)    # a thread of its own: no context of the fuzzed one
    t.start()
    t.join(30)
    assert not t.is_alive(), "the simulator hangs after the fuzz"
    if "ex" in res:
        raise res["ex"]


@pytest.mark.parametrize("capturing", [False, True], ids=["eager", "capturing"])
@pytest.mark.parametrize("mod, attr, fn", FUNCTIONS, ids=[f"{m}.{a}" for m, a, _ in FUNCTIONS])
def test_hostile_arguments(mod, attr, fn, capturing):
    params = list(inspect.signature(fn).parameters)
    escapes = []
    e = make_env(capturing)
    for i, p in enumerate(params):
        for label in [*HOSTILE, *FROM_ENV]:
            value = hostile(e)[label]
            args = _valid_args(attr, params, e)
            args[i] = value
            B.ESCAPES.clear()
            r = fn(*args)
            _check_shape(attr, fn, r)
            for name, _, exc in B.ESCAPES:
                key = (attr, p, label)
                if KNOWN_RUNTIME_BUGS.get(key) != type(exc).__name__:
                    escapes.append(f"{name}({p}={label}): {type(exc).__name__}: {exc}")
            code = r if type(r) is int else (r[-1] if type(r) is tuple else None)
            if code == OK or attr in TEARDOWN:         # the call did something: start afresh
                e = make_env(capturing)
    assert not escapes, "exceptions escaped runtime functions:\n" + "\n".join(escapes)
    _healthy()


@pytest.mark.parametrize("label", [*HOSTILE, *FROM_ENV])
def test_hostile_value_in_every_position(label):
    """The same hostile value for every parameter of every function at once."""
    e = make_env(False)
    value = hostile(e)[label]
    escapes = []
    for _, attr, fn in FUNCTIONS:
        if attr in TEARDOWN:
            continue
        n = len(inspect.signature(fn).parameters)
        B.ESCAPES.clear()
        r = fn(*[value] * n)
        _check_shape(attr, fn, r)
        escapes += [f"{name}: {type(exc).__name__}: {exc}" for name, _, exc in B.ESCAPES]
    assert not escapes, "\n".join(escapes)
    _healthy()


@pytest.mark.parametrize("pos", [0, 1, 2])
def test_util_helpers_raise_only_value_error(pos):
    """acl.util returns no code: any bad argument raises ValueError, nothing else."""
    e = make_env(False)
    valid = [e["aptr"], 8, np.uint8]
    for value in hostile(e).values():
        args = list(valid)
        args[pos] = value
        try:
            acl.util.ptr_to_numpy(*args)
        except ValueError:
            pass
        if pos == 0:
            try:
                acl.util.numpy_to_ptr(value)
            except ValueError:
                pass
