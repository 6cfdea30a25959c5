"""Huge sizes given to the launch and args APIs: answered at once, with bounded memory.

``argsSize`` reaches the runtime as ``uint32_t`` (the acl layer's cast, hicann/runtime
src/acl/aclrt_impl/kernel.cpp:123, :478, :510), so ``2**64 - 1`` is a launch of 4 GiB - 1 bytes of
device arguments, which the runtime takes as given (no copy: ``isNoNeedH2DCopy``,
stars_arg_manager.hpp LoadArgsWithGenericPolicy). npusim's argument check reads only the bytes
it judges (the declared parameters and the system slots after them), not 4 GiB (docs/fidelity.md
row 340). Host arguments are copied, so a size past the bytes given is refused (107000) before
anything is allocated.
"""
from __future__ import annotations

import tracemalloc
import warnings

import pytest

import npusim
from npusim import acl
from npusim import errors as E

from helpers.acl import easy_opf

OK = acl.ACL_SUCCESS
HUGE = [2 ** 64 - 1, 2 ** 32 - 1, 2 ** 31]
BOUND = 32 << 20          # bytes any one of these calls may allocate at its peak


def _peak(call):
    tracemalloc.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = call()
        return r, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.fixture
def env(dev0, stream):
    d, ret = acl.rt.malloc(4096, 0)
    assert ret == OK
    return easy_opf(), stream, d


@pytest.mark.parametrize("size", HUGE)
def test_device_args_of_a_huge_size_launch_without_copying_them(env, size):
    f, s, d = env
    r, peak = _peak(lambda: acl.rt.launch_kernel(f, 1, d, size, s))
    assert r == OK and peak < BOUND, peak
    r, peak = _peak(lambda: acl.rt.launch_kernel_v2(f, 1, d, size, None, s))
    assert r == OK and peak < BOUND, peak


def test_a_huge_size_warns_with_the_size(env):
    f, s, d = env
    with pytest.warns(E.ArgumentWarning, match="4294967295 bytes of arguments"):
        assert acl.rt.launch_kernel(f, 1, d, 2 ** 64 - 1, s) == OK


def test_check_args_error_refuses_a_huge_size_and_says_why(env):
    f, s, d = env
    npusim.configure(check_args="error")
    r, peak = _peak(lambda: acl.rt.launch_kernel(f, 1, d, 2 ** 64 - 1, s))
    assert r == E.ACL_ERROR_RT_PARAM_INVALID and peak < BOUND
    assert "4294967295 bytes of arguments" in acl.get_recent_err_msg()


@pytest.mark.parametrize("size", HUGE)
def test_host_args_past_the_buffer_are_refused_before_allocating(env, size):
    f, s, d = env
    h, ret = acl.rt.malloc_host(64)
    assert ret == OK
    for host in (b"\0" * 8, bytearray(8), h):
        r, peak = _peak(lambda: acl.rt.launch_kernel_with_host_args(f, 1, s, None, host, size))
        assert r == E.ACL_ERROR_RT_PARAM_INVALID and peak < BOUND, (host, r, peak)
        assert "args_size" in acl.get_recent_err_msg()


@pytest.mark.parametrize("size", HUGE)
def test_args_handle_apis_refuse_huge_sizes_before_allocating(env, size):
    f, s, d = env
    a, ret = acl.rt.kernel_args_init(f)
    assert ret == OK
    h, ret = acl.rt.malloc_host(64)
    assert ret == OK
    r, peak = _peak(lambda: acl.rt.kernel_args_append(a, h, size))
    assert r[-1] == E.ACL_ERROR_RT_PARAM_INVALID and peak < BOUND
    p, ret = acl.rt.kernel_args_append_place_holder(a)
    assert ret == OK
    r, peak = _peak(lambda: acl.rt.kernel_args_get_place_holder_buffer(a, p, size))
    assert r[-1] == E.ACL_ERROR_RT_PARAM_INVALID and peak < BOUND
    r, peak = _peak(lambda: acl.rt.kernel_args_init_by_user_mem(f, 1, h, size))
    assert r[-1] == E.ACL_ERROR_RT_PARAM_INVALID and peak < BOUND


def test_get_mem_size_wraps_like_size_t(env):
    f, _, _ = env
    n, ret = acl.rt.kernel_args_get_mem_size(f, 2 ** 64 - 1)
    assert ret == OK and 0 <= n < 2 ** 64
    small, _ = acl.rt.kernel_args_get_mem_size(f, 0)
    assert n == small - 1                  # (2**64 - 1 + extra) mod 2**64


def test_a_cost_model_reads_at_most_a_64k_args_block(env):
    from npusim.runtime.cost import CostModel
    from npusim.runtime.runtime import RT
    _, _, d = env
    m = CostModel(lambda blocks, *args: 5)              # no declared kinds: every slot an i64
    mem = RT.devices[0].state.mem
    args, peak = _peak(lambda: m.args(mem, d, 2 ** 32 - 1))
    assert len(args) == 64 * 1024 // 8 and peak < BOUND
