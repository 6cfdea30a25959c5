"""Launch APIs of the Kernel module (spec/kernel.md §5, §6): aclrtLaunchKernel, V2, with config
(every attribute), with host args (placeholders), with args array, the args-handle family (128
parameters, 64 KiB, ordering rules, overflow slot), capture, exception callbacks."""
from __future__ import annotations

import struct

import numpy as np
import pytest

import npusim
from npusim import acl
from npusim.runtime.runtime import RT
from helpers.acl import in_fresh_thread, never_issued
from helpers.kernel import (E_ACL, E_CTX, E_HANDLE, E_PARAM, E_UNSUPPORTED, OK, VECTOR_EXCEPTION,
                            KernelSpec, dev_alloc, dev_args, elf, func, load_samples,
                            out, read, slots, write)


@pytest.fixture
def lib(dev0):
    return load_samples()


@pytest.fixture
def easy(lib):
    return func(lib, "EasyOPf")


@pytest.fixture
def x(dev0):
    return dev_alloc(64)


# ---- aclrtLaunchKernel
def test_launch_kernel_runs_the_body(easy, stream, x):
    args = dev_args(x)
    for _ in range(3):
        assert acl.rt.launch_kernel(easy, 1, args, 8, stream) == OK
    assert acl.rt.synchronize_stream(stream) == OK
    assert read(x, 1)[0] == 3


def test_launch_kernel_per_block(easy, stream, x):
    assert acl.rt.launch_kernel(easy, 4, dev_args(x), 8, stream) == OK
    assert acl.rt.synchronize_stream(stream) == OK
    assert list(read(x, 5)) == [1, 1, 1, 1, 0]


def test_launch_kernel_on_the_default_stream(easy, x):
    assert acl.rt.launch_kernel(easy, 1, dev_args(x), 8, None) == OK
    assert acl.rt.synchronize_stream(None) == OK
    assert read(x, 1)[0] == 1


@pytest.mark.parametrize("f,args,code", [(None, 1, E_ACL), ("f", None, E_ACL), ("f", 0, E_ACL),
                                         (never_issued("function"), 1, E_HANDLE)])
def test_launch_kernel_null_and_stale(easy, stream, f, args, code):
    assert acl.rt.launch_kernel(easy if f == "f" else f, 1, args and dev_args(0), 8,
                                stream) == code


def test_launch_kernel_zero_blocks_or_size_is_107000(easy, stream):
    a = dev_args(0)
    assert acl.rt.launch_kernel(easy, 0, a, 8, stream) == E_PARAM
    assert acl.rt.launch_kernel(easy, 1, a, 0, stream) == E_PARAM
    assert acl.rt.launch_kernel(easy, 2**32, a, 8, stream) == E_PARAM       # u32 truncation


def test_launch_kernel_stale_stream_is_107017(easy):
    s = out(*acl.rt.create_stream())
    acl.rt.destroy_stream(s)
    assert acl.rt.launch_kernel(easy, 1, dev_args(0), 8, s) == E_HANDLE


def test_launch_kernel_handle_checks_come_before_the_block_check(easy):
    assert acl.rt.launch_kernel(easy, 0, dev_args(0), 8, never_issued("stream")) == E_HANDLE


def test_launch_kernel_without_context_is_107002(easy):
    assert in_fresh_thread(acl.rt.launch_kernel, easy, 1, 0x1000, 8, None) == E_CTX


def test_launch_kernel_on_a_stream_of_another_context_is_107003(easy, stream):
    acl.rt.create_context(0)
    assert acl.rt.launch_kernel(easy, 1, dev_args(0), 8, stream) == acl.ACL_ERROR_RT_STREAM_CONTEXT


def test_error_op_returns_507035_at_synchronize(lib, stream):
    assert acl.rt.launch_kernel(func(lib, "ErrorOPf"), 1, dev_args(0), 8, stream) == OK
    assert acl.rt.synchronize_stream(stream) == VECTOR_EXCEPTION


def test_bad_args_pointer_faults_the_task_not_the_call(easy, stream):
    assert acl.rt.launch_kernel(easy, 1, 0x1234, 8, stream) == OK
    assert acl.rt.synchronize_stream(stream) == VECTOR_EXCEPTION


def test_kernel_without_body_runs_as_a_no_op(dev0, stream):
    f = func(out(*acl.rt.binary_load_from_data(elf(KernelSpec("opaque", b"\x90" * 16)))),
             "opaque")
    assert acl.rt.launch_kernel(f, 4, dev_args(0), 8, stream) == OK
    assert acl.rt.synchronize_stream(stream) == OK


def test_cpu_kernel_through_the_ai_core_path_is_an_ai_core_exception(dev0, stream):
    b = out(*acl.rt.binary_load_from_data(b"fake so", {3: 2}))
    f = out(*acl.rt.register_cpu_func(b, "RunIt", "CpuOp"))
    assert acl.rt.launch_kernel(f, 1, dev_args(0), 8, stream) == OK
    assert acl.rt.synchronize_stream(stream) == acl.ACL_ERROR_RT_AICORE_EXCEPTION


# ---- capture
def test_launch_kernel_while_capturing_records_and_replays(easy, stream, x):
    args = dev_args(x)
    assert acl.mdl.ri_capture_begin(stream, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) == OK
    for _ in range(5):
        assert acl.rt.launch_kernel(easy, 1, args, 8, stream) == OK
    model = out(*acl.mdl.ri_capture_end(stream))
    assert read(x, 1)[0] == 0
    for _ in range(3):
        assert acl.mdl.ri_execute_async(model, stream) == OK
    assert acl.rt.synchronize_stream(stream) == OK
    assert read(x, 1)[0] == 15


def test_captured_task_reports_its_function_handle(easy, stream):
    args = dev_args(0)
    assert acl.mdl.ri_capture_begin(stream, 0) == OK
    acl.rt.launch_kernel(easy, 2, args, 8, stream)
    model = out(*acl.mdl.ri_capture_end(stream))
    cs = out(*acl.mdl.ri_get_streams(model))[0]
    task = out(*acl.mdl.ri_get_tasks_by_stream(cs))[0]
    params = out(*acl.mdl.ri_task_get_params(task))
    assert params["func"] == easy and params["num_blocks"] == 2


def test_host_args_launch_while_capturing_keeps_its_args(lib, stream, x):
    f = func(lib, "EasyOPf")
    assert acl.mdl.ri_capture_begin(stream, 0) == OK
    args = bytearray(slots(x))
    assert acl.rt.launch_kernel_with_host_args(f, 1, stream, None, args, 8) == OK
    model = out(*acl.mdl.ri_capture_end(stream))
    for _ in range(4):
        acl.mdl.ri_execute_async(model, stream)
    acl.rt.synchronize_stream(stream)
    assert read(x, 1)[0] == 4


# ---- V2 and launch configs
def test_launch_kernel_v2(easy, stream, x):
    assert acl.rt.launch_kernel_v2(easy, 1, dev_args(x), 8, None, stream) == OK
    acl.rt.synchronize_stream(stream)
    assert read(x, 1)[0] == 1


@pytest.mark.parametrize("cfg", [
    {1: 2}, {5: 2}, {6: 3}, {9: 2}, {7: 1, 8: 5}, {42: 0}, [(1, 0), (0, 0)],
])
def test_invalid_launch_configs_are_107000(easy, stream, cfg):
    assert acl.rt.launch_kernel_v2(easy, 1, dev_args(0), 8, cfg, stream) == E_PARAM


@pytest.mark.parametrize("cfg", [
    None, {}, {1: 1}, {1: 256}, {2: 0}, {3: 1}, {4: 8}, {5: 0}, {6: 1}, {7: 30}, {8: (5, 1)},
    {9: 1},
])
def test_valid_launch_configs(easy, stream, cfg):
    assert acl.rt.launch_kernel_v2(easy, 1, dev_args(dev_alloc(8)), 8, cfg, stream) == OK
    assert acl.rt.synchronize_stream(stream) == OK


def test_an_attribute_given_twice_counts_with_its_last_value(easy, stream):
    args = dev_args(dev_alloc(8))
    assert acl.rt.launch_kernel_v2(easy, 1, args, 8, [(1, 5), (1, 0)], stream) == OK
    assert acl.rt.launch_kernel_v2(easy, 1, args, 8, [(1, 0), (1, 5)], stream) == E_PARAM
    assert acl.rt.synchronize_stream(stream) == OK


def test_one_table_checks_and_converts_the_nine_attributes():
    from npusim.kernel.program import RuntimeFeatures, Kernel, Program
    from npusim.runtime import api_launch as AL
    assert sorted(AL.LAUNCH_ATTRS) == list(range(1, 10))
    k = Kernel(Program(1, 0), "k")
    tc, code = AL._launch_cfg({1: 1, 2: 4096, 3: 1, 4: 8, 5: 1, 6: 1, 7: 30, 9: 1}, k,
                              RuntimeFeatures())
    assert code == OK
    assert (tc.sched_mode, tc.dyn_ubuf, tc.engine_type, tc.block_dim_offset, tc.prefetch,
            tc.dump, tc.timeout_us, tc.profiling) == (1, 4096, 1, 8, True, True, 30_000_000, 1)
    tc, code = AL._launch_cfg({8: (5, 1)}, k, RuntimeFeatures())
    assert code == OK and tc.timeout_us == (1 << 32) | 5


def test_config_without_attrs_array_is_107000(easy, stream):
    class Cfg:
        attrs = None
    assert acl.rt.launch_kernel_v2(easy, 1, dev_args(0), 8, Cfg(), stream) == E_PARAM


def test_block_task_prefetch_queues_nops_first(easy, stream):
    args = dev_args(dev_alloc(8))
    assert acl.mdl.ri_capture_begin(stream, 0) == OK
    acl.rt.launch_kernel_v2(easy, 1, args, 8, {5: 1}, stream)
    model = out(*acl.mdl.ri_capture_end(stream))
    cs = out(*acl.mdl.ri_get_streams(model))[0]
    tasks = out(*acl.mdl.ri_get_tasks_by_stream(cs))
    types = [out(*acl.mdl.ri_task_get_type(t)) for t in tasks]
    n = RT.devices[0].profile.task_prefetch_count
    assert types[:n] == [acl.ACL_MODEL_RI_TASK_DEFAULT] * n
    assert types[n] == acl.ACL_MODEL_RI_TASK_KERNEL


def test_dynamic_ub_needs_a_simt_kernel_on_950(stream):
    npusim.reset()
    npusim.configure(profile="Ascend950")
    try:
        acl.init()
        acl.rt.set_device(0)
        f = func(load_samples(), "EasyOPf")
        args = dev_args(dev_alloc(8))
        assert acl.rt.launch_kernel_v2(f, 1, args, 8, {2: 1024}, None) == E_PARAM
        assert acl.rt.launch_kernel_v2(f, 1, args, 8, {2: 0}, None) == OK
        simt = func(out(*acl.rt.binary_load_from_data(elf(KernelSpec(
            "s", b"\0" * 16, aiv_type=3, share_mem_size=1024)))), "s")
        assert acl.rt.launch_kernel_v2(simt, 1, args, 8, {2: 200 * 1024}, None) == OK
        assert acl.rt.launch_kernel_v2(simt, 1, args, 8, {2: 224 * 1024}, None) == E_PARAM
    finally:
        npusim.reset()
        npusim.configure(profile="Ascend910B")


def test_mix_kernels_need_engine_type_and_offset_on_310p():
    from npusim.kernel.elfwrite import mix_pair
    npusim.reset()
    npusim.configure(profile="Ascend310P")
    try:
        acl.init()
        acl.rt.set_device(0)
        f = func(out(*acl.rt.binary_load_from_data(elf(*mix_pair("m", b"\0" * 16, b"\1" * 16)))),
                 "m")
        args = dev_args(0)
        assert acl.rt.launch_kernel_v2(f, 1, args, 8, None, None) == E_PARAM
        assert acl.rt.launch_kernel_v2(f, 1, args, 8, {3: 1}, None) == E_PARAM
        assert acl.rt.launch_kernel_v2(f, 1, args, 8, {3: 1, 4: 0}, None) == OK
    finally:
        npusim.reset()
        npusim.configure(profile="Ascend910B")


# ---- host args and placeholders
def test_host_args_placeholders_are_patched_in_place(lib, stream):
    f = func(lib, "DeviceRead")
    buf = bytearray(slots(0) + struct.pack("<i", 77) + bytes(4))
    npusim.kernel.printf_sink().clear()
    assert acl.rt.launch_kernel_with_host_args(f, 1, stream, None, buf, 16, [(0, 8)]) == OK
    acl.rt.synchronize_stream(stream)
    dev_ptr = struct.unpack_from("<Q", buf)[0]
    assert dev_ptr != 0 and read(dev_ptr, 1, np.int32)[0] == 77
    assert npusim.kernel.printf_sink().take() == ["Destination data: 77\n"]


@pytest.mark.parametrize("phs,num", [([(16, 0)], None), ([(0, 16)], None), (None, 1),
                                     ([(0, 8)], 2)])
def test_bad_placeholders_are_107000(lib, stream, phs, num):
    f = func(lib, "DeviceRead")
    assert acl.rt.launch_kernel_with_host_args(f, 1, stream, None, bytearray(16), 16, phs,
                                               num) == E_PARAM


def test_host_args_checks(lib, stream):
    f = func(lib, "EasyOPf")
    assert acl.rt.launch_kernel_with_host_args(None, 1, stream, None, b"x" * 8, 8) == E_ACL
    assert acl.rt.launch_kernel_with_host_args(f, 1, stream, None, None, 8) == E_ACL
    assert acl.rt.launch_kernel_with_host_args(f, 1, stream, None, b"x" * 8, 0) == E_PARAM
    assert acl.rt.launch_kernel_with_host_args(f, 0, stream, None, b"x" * 8, 8) == E_PARAM


def test_host_args_from_a_host_pointer(lib, stream, x):
    f = func(lib, "EasyOPf")
    host = np.array([x], np.uint64)
    assert acl.rt.launch_kernel_with_host_args(f, 1, stream, None, acl.util.numpy_to_ptr(host),
                                               8) == OK
    acl.rt.synchronize_stream(stream)
    assert read(x, 1)[0] == 1


# ---- args array
def test_args_array_builds_the_buffer_from_param_info(lib, stream):
    f = func(lib, "AddKernel")
    a, c, d = dev_alloc(64), dev_alloc(64), dev_alloc(64)
    write(a, np.arange(16, dtype=np.float32))
    write(c, np.full(16, 2, np.float32))
    args = [slots(a), slots(c), slots(d), struct.pack("<I", 16)]
    assert acl.rt.launch_kernel_with_args_array(f, 1, stream, None, args) == OK
    acl.rt.synchronize_stream(stream)
    assert list(read(d, 16, np.float32)) == list(np.arange(16, dtype=np.float32) + 2)


def test_args_array_errors(lib, stream):
    f = func(lib, "AddKernel")
    assert acl.rt.launch_kernel_with_args_array(None, 1, stream, None, []) == E_ACL
    assert acl.rt.launch_kernel_with_args_array(f, 0, stream, None, []) == E_ACL
    assert acl.rt.launch_kernel_with_args_array(f, 1, stream, None, None) == E_PARAM
    assert acl.rt.launch_kernel_with_args_array(f, 1, stream, None,
                                                [slots(0), None, slots(0), b"\0" * 4]) == E_PARAM
    plain = func(out(*acl.rt.binary_load_from_data(elf(KernelSpec("p", b"\0" * 8)))), "p")
    assert acl.rt.launch_kernel_with_args_array(plain, 1, stream, None, []) == E_PARAM
    cpu = out(*acl.rt.register_cpu_func(out(*acl.rt.binary_load_from_data(b"so", {3: 2})),
                                        "f", "k"))
    assert acl.rt.launch_kernel_with_args_array(cpu, 1, stream, None, []) == E_UNSUPPORTED


def test_args_array_without_params_needs_no_args(lib, stream):
    assert acl.rt.launch_kernel_with_args_array(func(lib, "KernelPrint"), 1, stream, None,
                                                None) == OK


# ---- args handles
def test_args_handle_simple_layout_has_the_overflow_slot(lib):
    f = func(lib, "add_custom")
    h = out(*acl.rt.kernel_args_init(f))
    for p in (1, 2, 3):
        out(*acl.rt.kernel_args_append(h, slots(p)))
    assert acl.rt.kernel_args_finalize(h) == OK
    obj = RT.handles.get("args", h)[0]
    assert obj.args_size == 32                                       # x, y, z + overflow at 24
    assert obj.buffer[24:32].view(np.uint64)[0] != 0


def test_args_handle_placeholder_layout(lib):
    f = func(lib, "add_custom")
    h = out(*acl.rt.kernel_args_init(f))
    for p in (1, 2, 3):
        out(*acl.rt.kernel_args_append(h, slots(p)))
    ph4 = out(*acl.rt.kernel_args_append_place_holder(h))
    ph5 = out(*acl.rt.kernel_args_append_place_holder(h))
    b4 = out(*acl.rt.kernel_args_get_place_holder_buffer(h, ph4, 4))
    b5 = out(*acl.rt.kernel_args_get_place_holder_buffer(h, ph5, 4))
    obj = RT.handles.get("args", h)[0]
    assert (b4 - obj.buffer_addr, b5 - obj.buffer_addr) == (48, 56)  # overflow slot at 40
    assert acl.rt.kernel_args_finalize(h) == OK
    assert obj.args_size == 60


def test_args_handle_is_a_thread_singleton_and_reinit_invalidates_params(lib):
    f = func(lib, "EasyOPf")
    h1 = out(*acl.rt.kernel_args_init(f))
    p = out(*acl.rt.kernel_args_append(h1, slots(1)))
    h2 = out(*acl.rt.kernel_args_init(f))
    assert h1 == h2
    assert acl.rt.kernel_args_para_update(h2, p, slots(2)) == E_HANDLE


def test_128_parameter_limit(lib):
    h = out(*acl.rt.kernel_args_init(func(lib, "EasyOPf")))
    for _ in range(128):
        out(*acl.rt.kernel_args_append(h, b"\1"))
    assert acl.rt.kernel_args_append(h, b"\1")[1] == E_PARAM
    assert acl.rt.kernel_args_append_place_holder(h)[1] == E_PARAM


def test_64k_buffer_limit(lib):
    h = out(*acl.rt.kernel_args_init(func(lib, "EasyOPf")))
    out(*acl.rt.kernel_args_append(h, bytes(64 * 1024 - 8)))
    assert acl.rt.kernel_args_append(h, bytes(16))[1] == E_PARAM
    out(*acl.rt.kernel_args_append(h, bytes(8)))                  # exactly full
    assert acl.rt.kernel_args_finalize(h) == E_PARAM              # no room for the overflow slot


def test_append_after_finalize_or_placeholder_buffer_is_207000(lib):
    f = func(lib, "EasyOPf")
    h = out(*acl.rt.kernel_args_init(f))
    ph = out(*acl.rt.kernel_args_append_place_holder(h))
    out(*acl.rt.kernel_args_get_place_holder_buffer(h, ph, 4))
    assert acl.rt.kernel_args_append(h, b"x")[1] == E_UNSUPPORTED
    assert acl.rt.kernel_args_append_place_holder(h)[1] == E_UNSUPPORTED
    h = out(*acl.rt.kernel_args_init(f))
    acl.rt.kernel_args_finalize(h)
    assert acl.rt.kernel_args_append(h, b"x")[1] == E_UNSUPPORTED


def test_placeholder_buffer_of_a_normal_param_is_107000(lib):
    h = out(*acl.rt.kernel_args_init(func(lib, "EasyOPf")))
    p = out(*acl.rt.kernel_args_append(h, slots(1)))
    assert acl.rt.kernel_args_get_place_holder_buffer(h, p, 4)[1] == E_PARAM


def test_args_handle_acl_checks(lib):
    f = func(lib, "EasyOPf")
    h = out(*acl.rt.kernel_args_init(f))
    ph = out(*acl.rt.kernel_args_append_place_holder(h))
    assert acl.rt.kernel_args_init(None)[1] == E_ACL
    assert acl.rt.kernel_args_append(None, b"x")[1] == E_ACL
    assert acl.rt.kernel_args_append(h, None)[1] == E_ACL
    assert acl.rt.kernel_args_append(h, b"")[1] == E_ACL
    assert acl.rt.kernel_args_get_place_holder_buffer(h, ph, 0)[1] == E_ACL
    assert acl.rt.kernel_args_finalize(None) == E_ACL
    assert acl.rt.kernel_args_append_place_holder(never_issued("args"))[1] == E_HANDLE


def test_para_update_requires_same_size_and_refinalize(lib, stream, x):
    f = func(lib, "EasyOPf")
    h = out(*acl.rt.kernel_args_init(f))
    p = out(*acl.rt.kernel_args_append(h, slots(0)))
    acl.rt.kernel_args_finalize(h)
    assert acl.rt.kernel_args_para_update(h, p, b"1234") == E_PARAM
    assert acl.rt.kernel_args_para_update(h, p, slots(x)) == OK
    assert acl.rt.launch_kernel_with_config(f, 1, stream, None, h) == E_PARAM   # updating
    assert acl.rt.kernel_args_finalize(h) == OK
    assert acl.rt.launch_kernel_with_config(f, 1, stream, None, h) == OK
    acl.rt.synchronize_stream(stream)
    assert read(x, 1)[0] == 1


def test_launch_with_config_checks(lib, stream):
    f = func(lib, "EasyOPf")
    h = out(*acl.rt.kernel_args_init(f))
    out(*acl.rt.kernel_args_append(h, slots(0)))
    assert acl.rt.launch_kernel_with_config(f, 1, stream, None, h) == E_PARAM    # not finalized
    acl.rt.kernel_args_finalize(h)
    assert acl.rt.launch_kernel_with_config(None, 1, stream, None, h) == E_ACL
    assert acl.rt.launch_kernel_with_config(f, 0, stream, None, h) == E_ACL
    assert acl.rt.launch_kernel_with_config(f, 1, stream, None, None) == E_ACL
    assert acl.rt.launch_kernel_with_config(f, 1, stream, None, h, reserve=1) == E_ACL
    assert acl.rt.launch_kernel_with_config(f, 1, stream, {1: 3}, h) == E_PARAM


def test_init_by_user_mem(lib, stream, x):
    f = func(lib, "EasyOPf")
    size = out(*acl.rt.kernel_args_get_mem_size(f, 8))
    hsize = out(*acl.rt.kernel_args_get_handle_mem_size(f))
    assert (size, hsize) == (8 + 64 + 2 * 8, 104 + 2 * 48)
    mem = np.zeros(size, np.uint8)
    h = out(*acl.rt.kernel_args_init_by_user_mem(f, 1, mem, size))
    out(*acl.rt.kernel_args_append(h, slots(x)))
    assert acl.rt.kernel_args_append(h, slots(x))[1] == OK         # userArgsNum 2 (DFX)
    assert acl.rt.kernel_args_append(h, slots(x))[1] == E_PARAM
    assert acl.rt.kernel_args_finalize(h) == OK
    assert mem[:8].view(np.uint64)[0] == x                          # the user's buffer
    assert acl.rt.launch_kernel_with_config(f, 1, stream, None, h) == OK
    acl.rt.synchronize_stream(stream)
    assert read(x, 1)[0] == 1


def test_init_by_user_mem_checks(lib):
    f = func(lib, "EasyOPf")
    assert acl.rt.kernel_args_init_by_user_mem(f, 1, np.zeros(8, np.uint8), 0)[1] == E_ACL
    assert acl.rt.kernel_args_init_by_user_mem(f, None, np.zeros(8, np.uint8), 8)[1] == E_ACL
    assert acl.rt.kernel_args_init_by_user_mem(None, 1, np.zeros(8, np.uint8), 8)[1] == E_ACL


# ---- exception callback
def test_exception_callback_sees_the_faulting_kernel(lib, stream):
    seen = []
    assert acl.rt.binary_set_exception_callback(lib, lambda info, u: seen.append((info, u)),
                                                "me") == OK
    f = func(lib, "ErrorOPf")
    args = dev_args(0)
    acl.rt.launch_kernel(f, 1, args, 8, stream)
    assert acl.rt.synchronize_stream(stream) == VECTOR_EXCEPTION
    (info, user), = seen
    assert user == "me" and info.retcode == VECTOR_EXCEPTION
    assert acl.rt.get_args_from_exception_info(info) == (args, 8, OK)
    assert acl.rt.get_func_handle_from_exception_info(info) == (f, OK)
    acl.rt.binary_unload(lib)
    assert acl.rt.get_func_handle_from_exception_info(info)[1] == E_HANDLE


def test_exception_info_null(dev0):
    bad = acl.ACL_ERROR_INVALID_EXCEPTION_INFO
    assert acl.rt.get_args_from_exception_info(None)[2] == bad
    assert acl.rt.get_func_handle_from_exception_info(None)[1] == bad


def test_set_exception_callback_checks(lib):
    assert acl.rt.binary_set_exception_callback(None, print) == E_ACL
    assert acl.rt.binary_set_exception_callback(lib, None) == E_ACL


# ---- one submission core: every launch variant, the Pythonic API included
def test_pythonic_launch_goes_through_the_facade(stream, x):
    npusim.configure(trace=True)
    s = npusim.Stream(npusim.Device(), stream)
    s.launch("EasyOPf", args=(x,))
    assert RT.host_trace[-1][0] == "aclrt.launch_kernel_with_host_args"
    with npusim.inject(acl.ACL_ERROR_RT_PARAM_INVALID, api="aclrtLaunchKernelWithHostArgs"):
        with pytest.raises(npusim.AclError) as info:
            s.launch("EasyOPf", args=(x,))
    assert info.value.code == E_PARAM
    s.synchronize()
    assert read(x, 1)[0] == 1                          # the injected launch never ran


def test_kernel_injection_sees_every_launch_variant(lib, stream, x):
    easy = func(lib, "EasyOPf")
    args = dev_args(x)
    launches = [
        lambda: acl.rt.launch_kernel(easy, 1, args, 8, stream),
        lambda: acl.rt.launch_kernel_v2(easy, 1, args, 8, None, stream),
        lambda: acl.rt.launch_kernel_with_host_args(easy, 1, stream, None, slots(x), 8),
        lambda: npusim.Stream(npusim.Device(), stream).launch("EasyOPf", args=(x,)),
    ]
    with npusim.inject(kernel="EasyOPf", every=True) as inj:
        for launch in launches:
            assert launch() in (OK, None)
            assert acl.rt.synchronize_stream(stream) == VECTOR_EXCEPTION
        assert inj.calls == inj.fired == len(launches)
    assert read(x, 1)[0] == 0                          # every one ran the trap instead


def test_kernel_table_handles_by_name_and_duration(dev0):
    from npusim.runtime.functions import table_function
    h = table_function("EasyOPf")
    assert h and table_function("EasyOPf") == h
    assert table_function("EasyOPf", 1000) not in (None, h)
    assert table_function("NoSuchKernel") is None
    k, code = RT.handles.get("function", h)
    assert code == OK and k.name == "EasyOPf" and k.program.is_valid_on(RT.devices[0])
    assert RT.handles.entry(h) == ("function", k) and RT.handles.entry(h + 1) is None
    npusim.reset()
    assert RT.handles.entry(h) is None
    assert RT.handles.get("function", table_function("EasyOPf"))[0] is k


def test_by_name_launch_runs_for_its_explicit_duration(stream, x):
    s = npusim.Stream(npusim.Device(), stream)
    s.launch("EasyOPf", args=(x,), duration_ns=5_000_000)
    t0 = RT.host_ns
    s.synchronize()
    assert RT.host_ns - t0 >= 5_000_000
    assert read(x, 1)[0] == 1
