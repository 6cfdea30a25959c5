"""Binary load / unload / lookup / device load APIs of the Kernel module (spec/kernel.md §2, §3,
§6): codes on each check path, entry-table rules, device images and addresses, validity per
device, globals, the legacy create/load flow."""
from __future__ import annotations

import json

import numpy as np
import pytest

import npusim
from npusim import acl
from npusim.kernel.elf import AttrType
from npusim.runtime.runtime import RT
from helpers.acl import in_fresh_thread, never_issued
from helpers.kernel import (E_ACL, E_CTX, E_HANDLE, E_PARAM, E_UNSUPPORTED, OK, SAMPLES,
                            GlobalSpec, KernelSpec, elf, func, kernel_spec, load_samples, out,
                            raw_device)

CODE = bytes(range(48))


# ---- load from file
def test_load_from_file_returns_a_handle(dev0):
    b, ret = acl.rt.binary_load_from_file(SAMPLES)
    assert ret == OK and b


def test_load_from_file_null_path_is_100000(dev0):
    assert acl.rt.binary_load_from_file(None) == (None, E_ACL)


def test_load_from_missing_file_is_107000(dev0, tmp_path):
    assert acl.rt.binary_load_from_file(str(tmp_path / "nope.o"))[1] == E_PARAM


def test_load_from_file_refuses_the_magic_option(dev0):
    opts = {acl.ACL_RT_BINARY_LOAD_OPT_MAGIC: acl.ACL_RT_BINARY_MAGIC_ELF_AICORE}
    assert acl.rt.binary_load_from_file(SAMPLES, opts)[1] == E_PARAM


@pytest.mark.parametrize("opts", [{1: 2}, {4: 0}, {99: 1}, [(1, "x")], 17])
def test_bad_load_options_are_107000(dev0, opts):
    assert acl.rt.binary_load_from_file(SAMPLES, opts)[1] == E_PARAM


def test_options_struct_without_array_is_107000(dev0):
    class Opts:
        options = None
    assert acl.rt.binary_load_from_file(SAMPLES, Opts())[1] == E_PARAM


def test_cpu_mode_2_from_file_is_107000(dev0):
    assert acl.rt.binary_load_from_file(SAMPLES, {3: 2})[1] == E_PARAM


def test_companion_json_magic_sets_the_default_kernel_type(dev0, tmp_path):
    path = tmp_path / "k.o"
    path.write_bytes(elf(KernelSpec("plain", CODE)))
    b = out(*acl.rt.binary_load_from_file(str(path)))
    assert acl.rt.get_function_attribute(func(b, "plain"), 1) == (AttrType.CUBE, OK)  # chip default
    (tmp_path / "k.json").write_text(json.dumps({"magic": "RT_DEV_BINARY_MAGIC_ELF_AIVEC"}))
    b = out(*acl.rt.binary_load_from_file(str(path)))
    assert acl.rt.get_function_attribute(func(b, "plain"), 1) == (AttrType.VECTOR, OK)


def test_companion_json_printf_debug_option_fails_the_load(dev0, tmp_path):
    path = tmp_path / "k.o"
    path.write_bytes(elf(KernelSpec("plain", CODE)))
    (tmp_path / "k.json").write_text(json.dumps({"debugOptions": "printf,assert"}))
    assert acl.rt.binary_load_from_file(str(path))[1] == E_PARAM


def test_unparsable_companion_json_is_ignored(dev0, tmp_path):
    path = tmp_path / "k.o"
    path.write_bytes(elf(KernelSpec("plain", CODE)))
    (tmp_path / "k.json").write_text("{not json")
    assert acl.rt.binary_load_from_file(str(path))[1] == OK


# ---- load from data
def test_load_from_data_null_is_100000(dev0):
    assert acl.rt.binary_load_from_data(None) == (None, E_ACL)


def test_load_from_empty_data_is_107000(dev0):
    assert acl.rt.binary_load_from_data(b"")[1] == E_PARAM


def test_load_from_garbage_is_107000(dev0):
    assert acl.rt.binary_load_from_data(b"\x7fELF" + bytes(100))[1] == E_PARAM


def test_load_from_data_copies_the_buffer(dev0):
    data = bytearray(open(SAMPLES, "rb").read())
    b = out(*acl.rt.binary_load_from_data(data))
    data[:] = bytes(len(data))
    assert acl.rt.binary_get_function(b, "EasyOPf")[1] == OK


def test_load_from_host_pointer_with_length(dev0):
    data = np.frombuffer(open(SAMPLES, "rb").read(), np.uint8).copy()
    ptr = acl.util.numpy_to_ptr(data)
    b = out(*acl.rt.binary_load_from_data(ptr, None, length=data.nbytes))
    assert acl.rt.binary_get_function(b, "ShortOPf")[1] == OK


@pytest.mark.parametrize("magic,attr", [(0x43554245, AttrType.MIX), (0x41415246, AttrType.VECTOR),
                                        (0x41494343, AttrType.CUBE)])
def test_magic_option_sets_the_default_kernel_type(dev0, magic, attr):
    b = out(*acl.rt.binary_load_from_data(elf(KernelSpec("plain", CODE)), {2: magic}))
    assert acl.rt.get_function_attribute(func(b, "plain"), 1) == (attr, OK)


def test_invalid_magic_option_is_107000(dev0):
    assert acl.rt.binary_load_from_data(open(SAMPLES, "rb").read(), {2: 0x1234})[1] == E_PARAM


def test_cpu_mode_0_from_data_is_107000(dev0):
    assert acl.rt.binary_load_from_data(b"so bytes", {3: 0})[1] == E_PARAM


# ---- unload
def test_unload_null_is_100000(dev0):
    assert acl.rt.binary_unload(None) == E_ACL


def test_unload_twice_is_107017(dev0):
    b = load_samples()
    assert acl.rt.binary_unload(b) == OK
    assert acl.rt.binary_unload(b) == E_HANDLE


def test_unload_invalidates_function_handles(dev0, stream):
    b = load_samples()
    f = func(b, "EasyOPf")
    assert acl.rt.binary_unload(b) == OK
    assert acl.rt.get_function_name(f, 64)[1] == E_HANDLE
    assert acl.rt.launch_kernel(f, 1, 0x1000, 8, stream) == E_HANDLE
    assert acl.rt.binary_get_function(b, "EasyOPf")[1] == E_HANDLE


def test_unload_frees_the_device_image(dev0):
    b = load_samples()
    addr, size = out(*acl.rt.binary_get_dev_address(b))
    mem = RT.devices[0].state.mem
    assert mem.allocation_of(addr) is not None
    acl.rt.binary_unload(b)
    assert mem.allocation_of(addr) is None


# ---- get function
def test_get_function_by_name(dev0):
    b = load_samples()
    f, ret = acl.rt.binary_get_function(b, "add_custom")
    assert ret == OK and acl.rt.get_function_name(f, 64) == ("add_custom", OK)


def test_get_function_returns_the_same_handle_each_time(dev0):
    b = load_samples()
    assert func(b, "EasyOPf") == func(b, "EasyOPf")


@pytest.mark.parametrize("binary,name,code", [(None, "EasyOPf", E_ACL), ("b", None, E_ACL),
                                              ("b", "NoSuchKernel", E_PARAM),
                                              (0x5A20_0000_0040, "EasyOPf", E_HANDLE)])
def test_get_function_errors(dev0, binary, name, code):
    b = load_samples()
    assert acl.rt.binary_get_function(b if binary == "b" else binary, name)[1] == code


def test_get_function_without_context_is_107000(dev0):
    b = load_samples()
    assert in_fresh_thread(acl.rt.binary_get_function, b, "EasyOPf")[1] == E_PARAM


def test_get_function_of_a_binary_without_image_is_107000_by_entry_507000(dev0):
    data = elf(KernelSpec("k", b""))               # no ALLOC data: LoadSize 0
    b = out(*acl.rt.binary_load_from_data(data))
    assert acl.rt.binary_get_function(b, "k")[1] == E_PARAM
    assert acl.rt.binary_get_function_by_entry(b, 0)[1] == acl.ACL_ERROR_RT_INTERNAL_ERROR


def test_mix_suffixes_are_stripped_and_merged(dev0):
    from npusim.kernel.elfwrite import mix_pair
    b = out(*acl.rt.binary_load_from_data(elf(*mix_pair("mm", CODE, CODE[::-1]))))
    f = func(b, "mm")
    assert acl.rt.get_function_attribute(f, 1) == (AttrType.MIX, OK)
    aic, aiv = out(*acl.rt.get_function_addr(f))
    assert aic and aiv and aiv - aic == 48


# ---- entries
def test_get_function_by_entry_uses_function_entry_metadata(dev0):
    b = load_samples()
    f = out(*acl.rt.binary_get_function_by_entry(b, 7))
    assert acl.rt.get_function_name(f, 64) == ("VectorAddKernel", OK)


def test_entry_key_is_the_numeric_name_suffix(dev0):
    b = out(*acl.rt.binary_load_from_data(elf(KernelSpec("op_10430", CODE),
                                                  KernelSpec("op_10330", CODE))))
    f = out(*acl.rt.binary_get_function_by_entry(b, 10330))
    assert acl.rt.get_function_name(f, 64) == ("op_10330", OK)


def test_duplicate_entry_keys_keep_the_first_name(dev0):
    b = out(*acl.rt.binary_load_from_data(elf(KernelSpec("zeta", CODE), KernelSpec("alpha", CODE))))
    f = out(*acl.rt.binary_get_function_by_entry(b, 0))
    assert acl.rt.get_function_name(f, 64) == ("alpha", OK)
    assert acl.rt.binary_get_function(b, "zeta")[1] == OK         # still found by name


@pytest.mark.parametrize("entry", [0, 13, 2**64 - 1])
def test_unknown_entry_is_107000(dev0, entry):
    b = load_samples()
    assert acl.rt.binary_get_function_by_entry(b, entry)[1] == E_PARAM


def test_by_entry_without_context_is_107002(dev0):
    b = load_samples()
    assert in_fresh_thread(acl.rt.binary_get_function_by_entry, b, 1)[1] == E_CTX


def test_by_entry_null_and_stale(dev0):
    b = load_samples()
    assert acl.rt.binary_get_function_by_entry(None, 1)[1] == E_ACL
    acl.rt.binary_unload(b)
    assert acl.rt.binary_get_function_by_entry(b, 1)[1] == E_HANDLE


def test_lookup_by_entry_in_a_large_table(dev0):
    data = elf(*(KernelSpec(f"k_{i * 3}", b"\0" * 8) for i in range(2000)))
    b = out(*acl.rt.binary_load_from_data(data))
    for key in (0, 3, 2997, 5997):
        f = out(*acl.rt.binary_get_function_by_entry(b, key))
        assert acl.rt.get_function_name(f, 64) == (f"k_{key}", OK)
    assert acl.rt.binary_get_function_by_entry(b, 4)[1] == E_PARAM


# ---- device image
def test_device_image_is_4k_aligned_and_holds_the_file_bytes(dev0):
    b = load_samples()
    addr, size = out(*acl.rt.binary_get_dev_address(b))
    assert addr % 4096 == 0
    prog = RT.handles.get("binary", b)[0]
    img = prog.image
    assert size == img.load_size
    assert raw_device(addr, size) == open(SAMPLES, "rb").read()[img.image_offset:
                                                                  img.image_offset + size]


def test_function_address_is_base_plus_symbol_offset(dev0):
    b = load_samples()
    base, _ = out(*acl.rt.binary_get_dev_address(b))
    f = func(b, "ShortOPf")
    aic, aiv = out(*acl.rt.get_function_addr(f))
    assert (aic, aiv) == (0, base + 0x20)               # a vector kernel: the aiv address
    assert raw_device(aiv, 32).startswith(b"NPUSIM:ShortOPf")


def test_lazy_load_defers_the_copy_until_launch(dev0, stream):
    b = load_samples({acl.ACL_RT_BINARY_LOAD_OPT_LAZY_LOAD: 1})
    f = func(b, "EasyOPf")
    assert acl.rt.binary_get_dev_address(b)[0] is None
    x = npusim.Device().malloc(64).fill(0)
    from helpers.kernel import dev_args
    assert acl.rt.launch_kernel(f, 1, dev_args(int(x)), 8, stream) == OK
    assert acl.rt.binary_get_dev_address(b)[0] is not None


def test_dev_address_without_context_is_107002(dev0):
    b = load_samples()
    assert in_fresh_thread(acl.rt.binary_get_dev_address, b)[2] == E_CTX


# ---- validity per device
def test_launch_on_a_device_where_the_binary_is_not_valid_is_107017(dev0):
    from helpers.kernel import dev_args
    b = load_samples()
    f = func(b, "EasyOPf")
    assert acl.rt.set_device(1) == OK
    s = out(*acl.rt.create_stream())
    args = dev_args(0)
    assert acl.rt.launch_kernel(f, 1, args, 8, s) == E_HANDLE
    assert acl.rt.binary_get_function(b, "EasyOPf")[1] == OK      # makes it valid on device 1
    assert acl.rt.launch_kernel(f, 1, args, 8, s) == OK


# ---- globals
def test_get_global_returns_the_device_copy(dev0):
    data = elf(KernelSpec("k", CODE), globals=[GlobalSpec("g_table", b"ABCDEFGH")])
    b = out(*acl.rt.binary_load_from_data(data))
    addr, size = out(*acl.rt.binary_get_global(b, "g_table"))
    assert size == 8 and raw_device(addr, 8) == b"ABCDEFGH"


def test_get_global_loads_even_a_lazy_binary(dev0):
    data = elf(KernelSpec("k", CODE), globals=[GlobalSpec("g", b"12345678")])
    b = out(*acl.rt.binary_load_from_data(data, {1: 1}))
    addr, _ = out(*acl.rt.binary_get_global(b, "g"))
    assert raw_device(addr, 8) == b"12345678"


def test_get_global_errors(dev0):
    b = load_samples()
    assert acl.rt.binary_get_global(b, "nope")[2] == acl.ACL_ERROR_RT_SYMBOL_NOT_FOUND
    assert acl.rt.binary_get_global(None, "g")[2] == E_ACL
    assert acl.rt.binary_get_global(b, None)[2] == E_ACL
    assert in_fresh_thread(acl.rt.binary_get_global, b, "g")[2] == E_CTX
    cpu = out(*acl.rt.binary_load_from_data(b"\x7fELF so", {3: 2}))
    assert acl.rt.binary_get_global(cpu, "g")[2] == E_UNSUPPORTED


def test_printf_fifo_symbol_gets_the_device_printf_area(dev0):
    data = elf(KernelSpec("k", CODE), globals=[GlobalSpec("g_sysPrintFifoSpace", bytes(8))],
               runtime_implicit=[1])
    b = out(*acl.rt.binary_load_from_data(data))
    addr, _ = out(*acl.rt.binary_get_global(b, "g_sysPrintFifoSpace"))
    patched = int.from_bytes(raw_device(addr, 8), "little")
    from npusim.kernel import printf
    assert patched == printf.buffer_address(RT.devices[0])


# ---- legacy flow
def test_legacy_create_and_load_binary(dev0):
    data = open(SAMPLES, "rb").read()
    desc = acl.rt.create_binary(data, len(data))
    b = out(*acl.rt.binary_load(desc))
    assert acl.rt.binary_get_function(b, "EasyOPf")[1] == OK
    assert acl.rt.binary_get_function_by_entry(b, 1)[1] == E_PARAM  # no entry table
    assert acl.rt.destroy_binary(desc) == OK
    assert acl.rt.binary_unload(b) == OK


def test_legacy_flow_errors(dev0):
    assert acl.rt.create_binary(None, 4) is None
    assert acl.rt.destroy_binary(None) == E_ACL
    assert acl.rt.binary_load(None)[1] == E_ACL
    assert acl.rt.binary_load(acl.rt.create_binary(b"x", 0))[1] == E_PARAM
    desc = acl.rt.create_binary(open(SAMPLES, "rb").read())
    assert in_fresh_thread(acl.rt.binary_load, desc)[1] == E_CTX


def test_legacy_binary_is_valid_on_every_device(dev0):
    from helpers.kernel import dev_args
    desc = acl.rt.create_binary(open(SAMPLES, "rb").read())
    f = func(out(*acl.rt.binary_load(desc)), "EasyOPf")
    acl.rt.set_device(1)
    s = out(*acl.rt.create_stream())
    assert acl.rt.launch_kernel(f, 1, dev_args(0), 8, s) == OK


# ---- function info
def test_function_name_needs_room_for_the_terminator(dev0):
    f = func(load_samples(), "EasyOPf")
    assert acl.rt.get_function_name(f, 8) == ("EasyOPf", OK)
    assert acl.rt.get_function_name(f, 7)[1] == E_PARAM


@pytest.mark.parametrize("attr", [0, 4, -1])
def test_function_attribute_out_of_range_is_107000(dev0, attr):
    f = func(load_samples(), "EasyOPf")
    assert acl.rt.get_function_attribute(f, attr)[1] == E_PARAM


def test_function_attributes(dev0):
    f = func(load_samples(), "EasyOPf")
    assert acl.rt.get_function_attribute(f, 1) == (AttrType.VECTOR, OK)
    assert acl.rt.get_function_attribute(f, 2) == (0, OK)       # NO_MIX: 0:0
    assert acl.rt.get_function_attribute(f, 3) == (0, OK)


def test_mix_ratio_attribute(dev0):
    from npusim.kernel.elfwrite import mix_pair
    data = elf(*mix_pair("mm", CODE, CODE, task_ratio=(1, 2)))
    f = func(out(*acl.rt.binary_load_from_data(data)), "mm")
    value = out(*acl.rt.get_function_attribute(f, 2))
    assert (value & 0xFFFF, value >> 16) == (2, 1)                 # u16[0] aiv, u16[1] aic


def test_sched_mode_attribute(dev0):
    f = func(out(*acl.rt.binary_load_from_data(elf(KernelSpec("k", CODE, sched_mode=1)))), "k")
    assert acl.rt.get_function_attribute(f, 3) == (1, OK)


def test_function_size_and_params(dev0):
    b = load_samples()
    f = func(b, "VectorAddKernel")
    assert acl.rt.get_function_size(f) == (0, 32, OK)
    assert acl.rt.function_get_param_count(f) == (5, OK)
    assert acl.rt.function_get_param_info(f, 3) == (24, 4, OK)
    assert acl.rt.function_get_param_info(f, 5)[2] == E_PARAM
    assert acl.rt.function_get_binary(f) == (b, OK)


def test_param_count_without_summary_is_107000(dev0):
    f = func(out(*acl.rt.binary_load_from_data(elf(KernelSpec("k", CODE)))), "k")
    assert acl.rt.function_get_param_count(f)[1] == E_PARAM


def test_function_info_null_and_stale(dev0):
    assert acl.rt.get_function_attribute(None, 1)[1] == E_ACL
    assert acl.rt.get_function_addr(None)[2] == E_ACL
    assert acl.rt.get_function_size(None)[2] == E_PARAM           # no acl check: runtime 107000
    assert acl.rt.get_function_size(never_issued("function"))[2] == E_HANDLE


def test_kernel_without_meta_uses_128_user_args(dev0):
    f = func(out(*acl.rt.binary_load_from_data(elf(KernelSpec("k", CODE)))), "k")
    assert acl.rt.kernel_args_get_mem_size(f, 24) == (24 + 64 + 128 * 8, OK)
    assert acl.rt.kernel_args_get_handle_mem_size(f) == (104 + 48 * 128, OK)


def test_user_args_from_dfx_info(dev0):
    f = func(out(*acl.rt.binary_load_from_data(elf(kernel_spec("k", ("ptr",) * 3)))), "k")
    assert acl.rt.kernel_args_get_mem_size(f, 24) == (24 + 64 + 4 * 8, OK)
