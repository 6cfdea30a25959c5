"""Python-side Kernel module: the ``@npusim.kernel`` decorator, device printf, CPU kernels bound to
Python callables, the Pythonic ``load_binary`` API and the ``npusim elf`` command."""
from __future__ import annotations

import json
import struct

import numpy as np
import pytest

import npusim
from npusim import acl
from npusim.device import memview as V
from npusim.kernel.printf import format_id, printf
from helpers.kernel import (E_PARAM, OK, SAMPLES, dev_alloc, dev_args, func, load_samples, out,
                            read, slots, write)

FMT_SUM = format_id("block %d: sum=%d half=%.1f\n")


@npusim.kernel
def saxpy(mem, ctx, block_idx, block_num, x: "ptr", y: "ptr", n: "u32", a: "f32"):
    xs = V.f32(mem, ctx, x, n)
    ys = V.f32(mem, ctx, y, n)
    for i in range(block_idx, n, block_num):
        ys[i] += a * xs[i]


@npusim.kernel(name="Summer", params=("ptr", "i32"))
def summer(mem, ctx, block_idx, block_num, data, n):
    v = V.i32(mem, ctx, data, 4)               # a view of 4: n > 4 indexes past it
    s = 0
    for i in range(n):
        s += v[i]
    printf(mem, ctx, FMT_SUM, block_idx, block_idx, s, s / 2.0)


# ---- decorator
def test_decorator_returns_an_elf_that_binds_to_the_body(dev0, stream):
    assert bytes(saxpy)[:4] == b"\x7fELF"
    lib = npusim.load_binary(saxpy)
    assert lib.names == ["saxpy"]
    x, y = dev_alloc(64), dev_alloc(64)
    write(x, np.arange(16, dtype=np.float32))
    write(y, np.ones(16, np.float32))
    lib["saxpy"].launch(npusim.Stream(None, stream), blocks=4, args=(x, y, 16, 0.5))
    acl.rt.synchronize_stream(stream)
    assert list(read(y, 16, np.float32)) == list(1 + 0.5 * np.arange(16, dtype=np.float32))


def test_decorated_kernel_through_the_facade_and_args_array(dev0, stream):
    b = out(*acl.rt.binary_load_from_data(bytes(saxpy)))
    f = func(b, "saxpy")
    assert acl.rt.function_get_param_count(f) == (4, OK)
    x, y = dev_alloc(16), dev_alloc(16)
    write(x, np.full(4, 2, np.float32))
    args = [slots(x), slots(y), struct.pack("<I", 4), struct.pack("<f", 3.0)]
    assert acl.rt.launch_kernel_with_args_array(f, 1, stream, None, args) == OK
    acl.rt.synchronize_stream(stream)
    assert list(read(y, 4, np.float32)) == [6.0] * 4


def test_out_of_bounds_index_in_a_python_kernel_is_a_kernel_exception(dev0, stream):
    lib = npusim.load_binary(summer)
    lib["Summer"].launch(npusim.Stream(None, stream), args=(dev_alloc(64), 5))
    with pytest.raises(npusim.errors.KernelError) as e:
        npusim.Stream(None, stream).synchronize()
    assert e.value.code == 507035


def test_python_kernel_name_parameters_and_file(dev0, tmp_path):
    path = summer.save(tmp_path / "summer.o")
    b = out(*acl.rt.binary_load_from_file(path))
    assert acl.rt.get_function_name(func(b, "Summer"), 16) == ("Summer", OK)
    assert "Summer(data: ptr, n: i32)" in repr(summer)
    with pytest.raises(TypeError):
        summer(1, 2)


def test_binary_of_several_python_kernels(dev0):
    lib = npusim.load_binary(npusim.kernel.binary(saxpy, summer))
    assert lib.names == ["Summer", "saxpy"]


def test_bad_parameter_type_is_refused():
    with pytest.raises(TypeError):
        npusim.kernel(lambda mem, ctx, b, nb, x: None, params=("complex",))


# ---- device printf
def test_kernel_print_prints_once_per_block(lib8_stream, sink):
    lib, s = lib8_stream
    assert acl.rt.launch_kernel(func(lib, "KernelPrint"), 8, dev_args(0), 8, s) == OK
    assert acl.rt.synchronize_stream(s) == OK
    assert sink.take() == ["Hello World\n"] * 8


@pytest.fixture
def lib8_stream(dev0, stream):
    return load_samples(), stream


def test_device_write_then_read_prints_123(lib8_stream, sink):
    lib, s = lib8_stream
    p = dev_alloc(4)
    assert acl.rt.launch_kernel(func(lib, "DeviceWrite"), 1, dev_args(p, 123), 16, s) == OK
    assert acl.rt.launch_kernel(func(lib, "DeviceRead"), 1, dev_args(p), 8, s) == OK
    acl.rt.synchronize_stream(s)
    assert sink.take() == ["Source data: 123\n", "Destination data: 123\n"]
    assert read(p, 1, np.int32)[0] == 123


def test_printf_with_int_and_float_arguments(dev0, stream, sink, capsys):
    sink.echo = True
    data = dev_alloc(16)
    write(data, np.array([1, 2, 3, 4], np.int32))
    npusim.load_binary(summer)["Summer"].launch(npusim.Stream(None, stream), blocks=2,
                                                 args=(data, 4))
    npusim.Stream(None, stream).synchronize()
    assert sink.take() == ["block 0: sum=10 half=5.0\n", "block 1: sum=10 half=5.0\n"]
    assert capsys.readouterr().out.count("sum=10") == 2


def test_printf_inside_a_captured_graph_prints_at_each_replay(dev0, sink):
    dev = npusim.Device()
    s = dev.stream()
    lib = npusim.load_binary(SAMPLES)
    with npusim.graph(stream=s) as g:
        lib["KernelPrint"].launch(s, blocks=2)
    assert sink.take() == []
    g.replay(s)
    g.replay(s)
    s.synchronize()
    assert sink.take() == ["Hello World\n"] * 4


# ---- CPU kernels
def test_cpu_kernel_mode_2_with_a_python_behaviour(dev0, stream):
    calls = []

    @npusim.cpu_kernel("AddOne")
    def add_one(k):
        (ptr,) = k.slots(1)
        k.view(ptr, 1, np.uint32)[0] += 1
        calls.append(k.block_idx)

    b = out(*acl.rt.binary_load_from_data(b"\x7fELF fake cpu so", {3: 2}))
    f = out(*acl.rt.register_cpu_func(b, "RunAddOne", "AddOne"))
    assert acl.rt.get_function_attribute(f, 1) == (100, OK)          # AICPU
    x = dev_alloc(4)
    assert acl.rt.launch_kernel_with_host_args(f, 2, stream, None, bytearray(slots(x)), 8) == OK
    assert acl.rt.synchronize_stream(stream) == OK
    assert read(x, 1)[0] == 2 and calls == [0, 1]
    assert out(*acl.rt.register_cpu_func(b, "RunAddOne", "AddOne")) == f


def test_cpu_kernel_exception_is_507018(dev0, stream):
    npusim.register_cpu_kernel("Boom", lambda k: 1 / 0)
    b = out(*acl.rt.binary_load_from_data(b"so", {3: 2}))
    f = out(*acl.rt.register_cpu_func(b, "f", "Boom"))
    assert acl.rt.launch_kernel_v2(f, 1, dev_args(0), 8, None, stream) == OK
    assert acl.rt.synchronize_stream(stream) == acl.ACL_ERROR_RT_AICPU_EXCEPTION


def test_cpu_kernels_from_json_modes_0_and_1(dev0, tmp_path):
    so = tmp_path / "libcust_aicpu_kernels.so"
    (tmp_path / "libcust_aicpu_kernels.json").write_text(json.dumps({
        "AddBlockCust": {"opInfo": {"functionName": "RunCpuKernelWithBlock",
                                    "kernelSo": "libcust_aicpu_kernels.so",
                                    "opKernelLib": "CUSTAICPUKernel", "userDefined": "True"}},
        "NoInfo": {"other": 1}}))
    b = out(*acl.rt.binary_load_from_file(str(so), {3: 0}))          # the .so need not exist
    assert acl.rt.binary_get_function(b, "AddBlockCust")[1] == OK
    assert acl.rt.binary_get_function(b, "NoInfo")[1] == E_PARAM
    assert acl.rt.binary_load_from_file(str(so), {3: 1})[1] == E_PARAM  # mode 1 reads the .so
    so.write_bytes(b"\x7fELF so")
    assert acl.rt.binary_load_from_file(str(so), {3: 1})[1] == OK
    assert acl.rt.binary_load_from_file(str(tmp_path / "x.so"), {3: 0})[1] == E_PARAM  # no json


def test_cpu_program_refusals(dev0):
    b = out(*acl.rt.binary_load_from_data(b"so", {3: 2}))
    f = out(*acl.rt.register_cpu_func(b, "f", "k"))
    assert acl.rt.binary_get_function_by_entry(b, 0)[1] == E_PARAM
    assert acl.rt.get_function_addr(f)[2] == E_PARAM
    assert acl.rt.get_function_size(f)[2] == E_PARAM
    assert acl.rt.get_function_attribute(f, 2)[1] == E_PARAM
    assert acl.rt.function_get_param_count(f)[1] == acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    elf_bin = load_samples()
    assert acl.rt.register_cpu_func(elf_bin, "f", "k")[1] == E_PARAM
    assert acl.rt.register_cpu_func(b, None, "k")[1] == acl.ACL_ERROR_INVALID_PARAM


# ---- Pythonic API
def test_design_example_capture_and_replay():
    dev = npusim.Device("Ascend910B")
    s = dev.stream()
    x = dev.malloc(4096).fill(0)
    lib = npusim.load_binary(npusim.samples.binary_path())
    with npusim.graph(stream=s, mode="global") as g:
        lib["EasyOPf"].launch(s, blocks=1, args=(x,))
    for _ in range(3):
        g.replay(s)
    s.synchronize()
    assert x.read(np.uint32, 1)[0] == 3


def test_pythonic_errors_raise_acl_errors(dev0):
    lib = npusim.load_binary(SAMPLES)
    with pytest.raises(npusim.AclError) as e:
        lib["Missing"]
    assert e.value.code == 107000
    with pytest.raises(npusim.AclError) as e:
        npusim.load_binary(b"not an elf")
    assert e.value.code == 107000
    assert lib.by_entry(2).name == "ShortOPf"
    addr, size = lib.dev_address
    assert addr % 4096 == 0 and size > 0
    lib.unload()
    with pytest.raises(npusim.errors.HandleError):
        lib["EasyOPf"]


def test_pythonic_lazy_load_and_exception_hook(dev0):
    seen = []
    lib = npusim.load_binary(SAMPLES, lazy=True)
    assert lib.dev_address[0] is None
    lib.on_exception(lambda info, u: seen.append(info.retcode))
    s = npusim.Stream(None, None)
    lib["ErrorOPf"].launch(s)
    with pytest.raises(npusim.errors.KernelError):
        s.synchronize()
    assert seen == [507035] and lib.dev_address[0] is not None

