"""The facade's argument boundary (``npusim/acl/_boundary.py``, ``docs/fidelity.md`` "Facade
argument boundary"): each hostile input that used to raise, truncate or leave partial state.

numpy integer scalars are ints; values outside the C type's range and values of no C type are
refused with the parameter's code before the runtime runs; ``numBlocks`` above 65535 (the
task's 16-bit field) is refused, not cut to 16 bits; pointers at or above 2**63 are valid
64-bit values; sizes are checked against the bytes given before anything is allocated; paths
end at their first NUL, as C reads them; read-only and empty registered arrays are not written.
"""
from __future__ import annotations

import numpy as np
import pytest

import npusim
from npusim import acl
from npusim.acl import _boundary as B
from npusim.runtime.runtime import RT

from test_facade_fuzz import make_env


@pytest.fixture(autouse=True)
def _in_a_temporary_directory(tmp_path, monkeypatch):
    """Hostile paths (dump files named "x", "1.5", ...) are written here, not into the checkout."""
    monkeypatch.chdir(tmp_path)


OK = acl.ACL_SUCCESS
E_ACL = acl.ACL_ERROR_INVALID_PARAM
E_PARAM = acl.ACL_ERROR_RT_PARAM_INVALID
E_HANDLE = acl.ACL_ERROR_RT_INVALID_HANDLE
VECTOR_EXCEPTION = acl.ACL_ERROR_RT_VECTOR_CORE_EXCEPTION


@pytest.fixture
def env():
    e = make_env(False)
    yield e
    assert not B.ESCAPES, list(B.ESCAPES)


def _blocks_run(e, launch) -> int:
    """How many blocks of EasyOPf (block b does word[b] += 1) one launch ran."""
    x = e["x"] = acl.rt.malloc(4 * 65536, 0)[0]
    assert acl.rt.memset(x, 4 * 65536, 0, 4 * 65536) == OK
    args = acl.rt.malloc(8, 0)[0]
    slot = np.array([x], np.uint64)
    assert acl.rt.memcpy(args, 8, acl.util.numpy_to_ptr(slot), 8, 1) == OK
    code = launch(args)
    assert acl.rt.synchronize_stream(e["stream"]) == OK
    out = np.zeros(65536, np.uint32)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(out), out.nbytes, x, out.nbytes, 2) == OK
    return code, int(out.sum())


# ---- numpy integer scalars are ints (OverflowError before) ----
@pytest.mark.parametrize("t", [np.int32, np.int64, np.uint32, np.uint16])
def test_numpy_int_counts_and_blocks_are_ints(env, t):
    f, s = env["func"], env["stream"]
    code, ran = _blocks_run(env, lambda a: acl.rt.launch_kernel(f, t(3), a, t(8), s))
    assert (code, ran) == (OK, 3)
    host = np.arange(16, dtype=np.uint32)
    back = np.zeros(16, np.uint32)
    assert acl.rt.memcpy(env["dptr"], t(64), acl.util.numpy_to_ptr(host), t(64), t(1)) == OK
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(back), t(64), env["dptr"], t(64), t(2)) == OK
    assert (back == host).all()


# ---- numBlocks: refused above 65535, never cut to 16 bits ----
@pytest.mark.parametrize("n", [65536, 65537, -1, 2 ** 32, 2 ** 32 + 1])
def test_num_blocks_outside_the_task_field_is_refused(env, n):
    f, s = env["func"], env["stream"]
    code, ran = _blocks_run(env, lambda a: acl.rt.launch_kernel(f, n, a, 8, s))
    assert (code, ran) == (E_PARAM, 0)


def test_num_blocks_65535_runs_65535_blocks(env):
    f, s = env["func"], env["stream"]
    code, ran = _blocks_run(env, lambda a: acl.rt.launch_kernel(f, 65535, a, 8, s))
    assert (code, ran) == (OK, 65535)


def test_num_blocks_refusal_in_every_launch_variant(env):
    """Each variant refuses like its numBlocks == 0 (acl level 100000 for WithConfig and
    WithArgsArray, 107000 at the runtime for the others)."""
    f, s, d = env["func"], env["stream"], env["dptr"]
    for n in (65536, -1, 1.0, None, np.array([1, 2])):
        assert acl.rt.launch_kernel(f, n, d, 8, s) == E_PARAM
        assert acl.rt.launch_kernel_v2(f, n, d, 8, None, s) == E_PARAM
        assert acl.rt.launch_kernel_with_host_args(f, n, s, None, bytes(8), 8) == E_PARAM
        assert acl.rt.launch_kernel_with_config(f, n, s, None, env["fargs"]) == E_ACL
        assert acl.rt.launch_kernel_with_args_array(f, n, s, None, [bytes(8)]) == E_ACL
    assert acl.rt.synchronize_stream(s) == OK


def test_task_params_num_blocks_beyond_16_bits_is_refused(env):
    params = {"type": acl.ACL_MODEL_RI_TASK_KERNEL, "func": env["func"], "args": env["dptr"],
              "args_size": 8, "num_blocks": 65536}
    assert acl.mdl.ri_task_set_params(env["task"], params) == E_PARAM
    assert acl.mdl.ri_execute_async(env["model"], env["stream"]) == OK
    assert acl.rt.synchronize_stream(env["stream"]) == OK


# ---- pointers at or above 2**63 (struct.error before) ----
def test_pointer_above_2_63_is_a_pointer_nothing_is_mapped_at(env):
    s = env["stream"]
    for p in (2 ** 63, np.uint64(2 ** 64 - 8)):
        assert acl.rt.memcpy(p, 8, env["dptr"], 8, 2) == E_PARAM          # not memory
        assert acl.rt.free(p) == E_PARAM
    assert acl.rt.launch_kernel(env["func"], 1, 2 ** 63, 8, s) == OK      # C launches too
    assert acl.rt.synchronize_stream(s) == VECTOR_EXCEPTION               # the args fault


@pytest.mark.parametrize("p", [2 ** 64, -1, 1.5, "x", np.array([1, 2])])
def test_pointer_of_no_c_value_is_null(env, p):
    assert acl.rt.memcpy(p, 8, env["dptr"], 8, 2) == E_ACL
    assert acl.rt.launch_kernel(env["func"], 1, p, 8, env["stream"]) == E_ACL
    assert acl.rt.free(p) == E_ACL


# ---- None / NaN / floats / strings for integers (TypeError, ValueError before) ----
@pytest.mark.parametrize("v", [None, float("nan"), 1.0, 1.5, "8", np.float64(8), [8],
                               np.array([8]), 2 ** 64, -1])
def test_non_integer_or_out_of_range_size_is_refused(env, v):
    d, a = env["dptr"], env["aptr"]
    assert acl.rt.memcpy(a, v, d, 8, 2) == E_PARAM
    assert acl.rt.memcpy(a, 64, d, v, 2) == E_PARAM
    assert acl.rt.memset_async(d, 64, 0, v, env["stream"]) == E_PARAM
    assert acl.rt.create_event_with_flag(v) == (None, E_PARAM)
    assert acl.rt.create_stream_with_config(v, 0) == (None, E_PARAM)
    assert acl.rt.get_function_name(env["func"], v) == (None, E_PARAM)
    assert acl.rt.function_get_param_info(env["func"], v) == (None, None, E_PARAM)
    assert acl.rt.synchronize_stream(env["stream"]) == OK


def test_out_of_range_ints_per_c_type(env):
    """uint32_t refuses 2**32 and -1, int32_t 2**31, size_t 2**64; the largest values pass."""
    assert acl.rt.create_event_with_flag(2 ** 32) == (None, E_PARAM)
    assert acl.rt.create_event_with_flag(-1) == (None, E_PARAM)
    assert acl.rt.synchronize_stream_with_timeout(env["stream"], 2 ** 31) == E_PARAM
    assert acl.rt.synchronize_stream_with_timeout(env["stream"], 2 ** 31 - 1) == OK
    assert acl.rt.set_device(2 ** 31) == E_PARAM
    assert acl.rt.set_device(-2 ** 31 - 1) == E_PARAM
    assert acl.rt.memset(env["dptr"], 2 ** 64, 0, 8) == E_PARAM
    assert acl.rt.memset(env["dptr"], 2 ** 64 - 1, 0, 8) == OK
    assert acl.rt.malloc(2 ** 64, 0) == (None, E_ACL)     # the acl layer checks malloc's size


def test_bool_and_0d_arrays_are_ints(env):
    assert acl.rt.memcpy(env["aptr"], np.array(64), env["dptr"], np.array(8), True + 1) == OK
    assert acl.rt.synchronize_stream(np.array(env["stream"])) == OK


# ---- handles: multi-element arrays, floats, strings (ValueError, TypeError before) ----
@pytest.mark.parametrize("h", [np.array([1, 2]), np.array([1]), np.zeros(0), 1.5, "s", [1],
                               {}, object()])
def test_handle_of_no_c_value_is_an_invalid_handle(env, h):
    assert acl.rt.synchronize_stream(h) == E_HANDLE
    assert acl.rt.destroy_event(h) == E_HANDLE
    assert acl.rt.launch_kernel(env["func"], 1, env["dptr"], 8, h) == E_HANDLE
    assert acl.mdl.ri_get_streams(h) == (None, E_HANDLE)
    assert acl.rt.binary_load(h) == (None, E_PARAM)        # no descriptor has that handle


# ---- a model's own stream in the launch variants (AttributeError before) ----
def test_model_stream_in_launch_variants_returns_a_code(env):
    f, ms, d = env["func"], env["mstream"], env["dptr"]
    codes = [acl.rt.launch_kernel(f, 1, d, 8, ms),
             acl.rt.launch_kernel_v2(f, 1, d, 8, None, ms),
             acl.rt.launch_kernel_with_host_args(f, 1, ms, None, bytes(8), 8),
             acl.rt.launch_kernel_with_config(f, 1, ms, None, env["fargs"]),
             acl.rt.launch_kernel_with_args_array(f, 1, ms, None, [bytes(8)])]
    assert all(type(c) is int and c != OK for c in codes), codes
    assert not B.ESCAPES
    assert acl.rt.synchronize_stream(env["stream"]) == OK


def test_model_stream_in_launch_variants_is_unsupported_like_other_stream_apis(env):
    f, ms, d = env["func"], env["mstream"], env["dptr"]
    unsupported = acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert acl.rt.memcpy_async(d, 64, env["hptr"], 64, 1, ms) == unsupported
    assert acl.rt.launch_kernel(f, 1, d, 8, ms) == unsupported
    assert acl.rt.launch_kernel_v2(f, 1, d, 8, None, ms) == unsupported
    assert not B.ESCAPES


# ---- read-only and empty registered arrays ----
def test_read_only_array_is_not_a_copy_target(env):
    ro = np.zeros(64, np.uint8)
    ro.setflags(write=False)
    p = acl.util.numpy_to_ptr(ro)
    assert acl.rt.memset(env["dptr"], 64, 7, 64) == OK
    assert acl.rt.memcpy(p, 64, env["dptr"], 64, 2) == E_PARAM
    assert acl.rt.memcpy_async(p, 64, env["dptr"], 64, 2, env["stream"]) == E_PARAM
    assert acl.rt.memset(p, 64, 1, 64) == E_PARAM
    assert acl.rt.memset_async(p, 64, 1, 64, env["stream"]) == E_PARAM
    assert not ro.any()
    assert acl.rt.memcpy(env["dptr"], 64, p, 64, 1) == OK                  # a source is fine
    assert acl.rt.memcpy(p, 64, env["dptr"], 0, 2) == OK                   # nothing written


def test_one_byte_copy_with_an_empty_array_is_refused(env):
    z = acl.util.numpy_to_ptr(np.zeros(0, np.uint8))
    assert acl.rt.memcpy(z, 1, env["dptr"], 1, 2) == E_PARAM              # returned 0 before
    assert acl.rt.memcpy(env["dptr"], 1, z, 1, 1) == E_PARAM              # raised before
    assert acl.rt.memcpy(z, 1, env["dptr"], 0, 2) == OK


def test_util_raises_only_value_error(env):
    for bad in ([1, 2], None, 3, np.zeros((4, 4))[:, 0]):
        with pytest.raises(ValueError):
            acl.util.numpy_to_ptr(bad)
    p = env["aptr"]
    for args in ((1.5, 4, np.uint8), (p, 4.0, np.uint8), (p, 4, "nonsense"), (p, 4, object),
                 (p, -1, np.uint8), (None, 4, np.uint8), (p, 10 ** 30, np.uint8),
                 (acl.util.numpy_to_ptr(np.zeros(0, np.uint8)), 1, np.uint8)):
        with pytest.raises(ValueError):
            acl.util.ptr_to_numpy(*args)
    assert acl.util.ptr_to_numpy(np.int64(p), np.int32(4), np.uint8).shape == (4,)


# ---- strings: NUL, non-strings ----
def test_path_ends_at_its_first_nul_as_c_reads_it(env, tmp_path):
    path = npusim.samples.binary_path()
    b, ret = acl.rt.binary_load_from_file(str(path) + "\0ignored")
    assert ret == OK and acl.rt.binary_get_function(b, "EasyOPf")[1] == OK
    out = tmp_path / "model.json"
    assert acl.mdl.ri_debug_json_print(env["model"], str(out) + "\0.txt") == OK
    assert out.exists()
    assert acl.rt.binary_load_from_file(b"\0" + bytes(str(path), "utf-8")) == (None, E_PARAM)
    assert acl.rt.binary_load_from_file(3.5) == (None, E_PARAM)


def test_names_end_at_their_first_nul(env):
    assert acl.rt.binary_get_function(env["binary"], "EasyOPf\0junk")[1] == OK
    assert acl.mdl.ri_set_name(env["model"], "graph\0tail") == OK
    assert acl.mdl.ri_get_name(env["model"], 64) == ("graph", OK)
    assert acl.mdl.ri_set_name(env["model"], 12) == E_PARAM


# ---- sizes against the bytes given, before anything is allocated ----
def test_sizes_beyond_the_buffer_are_refused_before_allocating(env):
    f, s = env["func"], env["stream"]
    assert acl.rt.binary_load_from_data(b"\x7fELF", None, 2 ** 40) == (None, E_PARAM)
    assert acl.rt.binary_load_from_data(b"\x7fELF", None, 2 ** 64) == (None, E_PARAM)
    assert acl.rt.launch_kernel_with_host_args(f, 1, s, None, bytes(8), -1) == E_PARAM
    assert acl.rt.launch_kernel_with_host_args(f, 1, s, None, bytes(8), 2 ** 32 - 1) == E_PARAM
    assert acl.rt.kernel_args_append(env["args"], bytes(8), 2 ** 40) == (None, E_PARAM)
    assert acl.rt.create_binary(bytes(8), 2 ** 40) is None
    assert acl.rt.synchronize_stream(s) == OK


# ---- no partial state ----
def test_float_cond_type_leaves_the_cond_handle_unused():
    e = make_env(True)
    s = e["stream"]
    assert acl.mdl.ri_add_cond_task(e["cond"], 1.0, 1, s) == (None, E_PARAM)
    assert acl.mdl.ri_add_cond_task(e["cond"], np.float64(0), 1, s) == (None, E_PARAM)
    subs, ret = acl.mdl.ri_add_cond_task(e["cond"], acl.ACL_MODEL_RI_COND_TYPE_WHILE, 1, s)
    assert ret == OK and len(subs) == 1                   # the handle was still unused


@pytest.mark.parametrize("params", [[("type", 1)], "params", 7, (1,), {"type": 1.0},
                                    {"type": acl.ACL_MODEL_RI_TASK_KERNEL, "args": "x"},
                                    {"type": acl.ACL_MODEL_RI_TASK_KERNEL, "func": 1.5}])
def test_bad_task_params_leave_the_model_ready(env, params):
    from npusim.runtime import model as M
    assert acl.mdl.ri_task_set_params(env["task"], params) == E_PARAM
    m = RT.handles.get("model", env["model"])[0]
    assert m.status != M.UPDATING
    assert acl.mdl.ri_execute_async(env["model"], env["stream"]) == OK
    assert acl.rt.synchronize_stream(env["stream"]) == OK


def test_the_callers_task_params_dict_is_not_changed(env):
    params = {"type": np.int32(acl.ACL_MODEL_RI_TASK_KERNEL), "func": env["func"],
              "args": np.uint64(env["dptr"]), "args_size": np.int64(8), "num_blocks": 1}
    before = dict(params)
    assert acl.mdl.ri_task_set_params(env["task"], params) == OK
    assert params == before and type(params["args"]) is np.uint64


# ---- the last resort ----
def test_an_escaping_exception_is_recorded_and_returned_as_507000(env, monkeypatch):
    def broken(stream):
        raise RuntimeError("boom")
    wrapped = B.wrap("acl.rt.fake", "fake", broken, 1)
    assert wrapped(env["stream"]) == (None, acl.ACL_ERROR_RT_INTERNAL_ERROR)
    assert wrapped(np.int64(env["stream"])) == (None, acl.ACL_ERROR_RT_INTERNAL_ERROR)
    assert [(n, type(x).__name__) for n, _, x in B.ESCAPES] == [("acl.rt.fake", "RuntimeError")] * 2
    B.ESCAPES.clear()


def test_integer_kinds_fast_test_is_their_range():
    """The generated wrapper's fast test of an integer kind (one shift, ``_boundary._in_range``)
    accepts exactly the ints of the kind's C range — the values the general path would pass
    through unchanged — at and around both ends and far outside them; bools and int subclasses
    take the general path."""
    ranges = {B.U32: (0, 2 ** 32 - 1), B.U64K: (0, 2 ** 64 - 1), B.SIZE: (0, 2 ** 64 - 1),
              B.I32: (-2 ** 31, 2 ** 31 - 1), B.ENUM: (-2 ** 31, 2 ** 31 - 1),
              B.POINTER: (0, 2 ** 63 - 1), B.BLOCKS: (0, B.BLOCKS_MAX)}
    for kind, (lo, hi) in ranges.items():
        fast = eval("lambda p: " + kind.fast.format(p="p"))   # noqa: S307 -- our own table
        for v in (lo, hi, lo - 1, hi + 1, lo + 1, hi - 1, 0, -1, 1, 2 ** 63, 2 ** 64, -2 ** 64,
                  2 ** 100, -2 ** 100):
            assert bool(fast(v)) == (lo <= v <= hi), (kind.name, v)
        assert not fast(True) and not fast(False)

        class Sub(int):
            pass
        assert not fast(Sub(lo))
