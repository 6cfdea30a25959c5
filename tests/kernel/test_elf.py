"""The ELF layer of the Kernel module: parse written binaries as the runtime does (kernel.md §1,
§2.3, §9), fail with the runtime's codes, and round-trip ``elfwrite`` output."""
from __future__ import annotations

import io
import struct
import subprocess
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npusim.kernel.elf import (
    EM_AARCH64, FEATURES_910B, FEATURES_950, FEATURES_CLOUD, FEATURES_DC, AttrType, ElfError,
    ElfFeatures, EntryType, FuncType, MetaType, MixType, ParamInfo, features_for, parse_elf,
    register_kernels, strip_mix_suffix, tiling_key,
)
from npusim.kernel.elfwrite import (
    STB_LOCAL, STB_WEAK, STV_HIDDEN, GlobalSpec, KernelSpec, ParamSpec, SectionSpec, mix_pair,
    write_elf,
)

from helpers.elf import CODE, SHDR, k, patch, patch_section, section_index, shdr  # noqa: F401

PARAM_INVALID = 107000
INTERNAL_ERROR = 507000


# ---- helpers
def parse(kernels, features=FEATURES_910B, **write_kw):
    return parse_elf(write_elf(kernels, **write_kw), features)


def only(image):
    assert len(image.kernels) == 1
    return image.kernels[0]


def fails(data, features=FEATURES_910B) -> ElfError:
    with pytest.raises(ElfError) as info:
        parse_elf(data, features)
    return info.value


def meta_with(*tlvs: tuple[int, bytes], **kw) -> KernelSpec:
    return k("kern", extra_tlvs=list(tlvs), **kw)


# ---- structure: what pyelftools and the parser agree on
def test_written_binary_is_standard_elf_per_pyelftools():
    data = write_elf([k("a"), k("b_3")], globals=[GlobalSpec("g", b"12345678")], so_name="x.so")
    elf = ELFFile(io.BytesIO(data))
    image = parse_elf(data)
    assert [s.name for s in elf.iter_sections()] == [s.name for s in image.sections]
    assert [s["sh_offset"] for s in elf.iter_sections()] == [s.offset for s in image.sections]
    funcs = {s.name: s for s in elf.get_section_by_name(".symtab").iter_symbols()
             if s["st_info"]["type"] == "STT_FUNC"}
    assert {n: (s["st_value"], s["st_size"]) for n, s in funcs.items()} == \
        {s.name: (s.offset, s.length) for s in image.symbols}


def test_kernel_code_is_at_its_offset_in_the_image():
    kernels = [k("a", b"\xaa" * 5), k("b", b"\xbb" * 17), k("c", b"\xcc" * 64)]
    image = parse(kernels)
    for spec in kernels:
        kern = image.kernel(spec.name)
        assert image.image[kern.offset:kern.offset + kern.length] == spec.code


def test_image_is_the_alloc_range_from_the_first_alloc_section():
    data = write_elf([k("a")], globals=[GlobalSpec("g", b"\x11" * 8)])
    image = parse_elf(data)
    text = next(s for s in image.sections if s.name == ".text")
    dsec = next(s for s in image.sections if s.name == ".data")
    assert image.image_offset == text.offset
    assert image.load_size == dsec.offset + dsec.size - text.offset


def test_symbols_keep_symbol_table_order_and_kernels_are_sorted_by_name():
    image = parse([k("zeta"), k("alpha"), k("Mid")])
    assert [s.name for s in image.symbols] == ["zeta", "alpha", "Mid"]
    assert [x.name for x in image.kernels] == ["Mid", "alpha", "zeta"]  # byte order


def test_kernel_without_meta_section_has_runtime_defaults():
    kern = only(parse([k("plain")]))
    assert (kern.func_type, kern.task_ration, kern.user_args_num, kern.sched_mode) == (0, 2, 128, 0)
    assert kern.attr_type == AttrType.CUBE and kern.mix_type == MixType.NO_MIX  # 910B default


# ---- symbols -> kernels
@pytest.mark.parametrize("spec", [
    k("weak", binding=STB_WEAK), k("local", binding=STB_LOCAL), k("hidden", visibility=STV_HIDDEN),
])
def test_only_global_visible_func_symbols_are_kernels(spec):
    image = parse([k("real"), spec])
    assert [x.name for x in image.kernels] == ["real"]


def test_binary_with_only_a_hidden_function_loads_with_no_kernels():
    image = parse([k("hidden", visibility=STV_HIDDEN)])
    assert image.kernels == () and image.entries == {}


def test_binary_without_any_function_symbol_fails():
    data = write_elf([k("obj", symbol_type=1)])  # STT_OBJECT only
    assert fails(data).code == PARAM_INVALID


def test_kernel_name_of_4096_bytes_is_skipped_and_4095_kept():
    image = parse([k("a" * 4095), k("b" * 4096)])
    assert [len(x.name) for x in image.kernels] == [4095]


def test_symbol_name_offset_beyond_string_table_fails_the_load():
    data = write_elf([k("a")])
    symtab = next(s for s in parse_elf(data).sections if s.name == ".symtab")
    strtab = parse_elf(data).sections[symtab.link]
    data = patch(data, symtab.offset + 24, "<I", strtab.size + 1)
    assert fails(data).code == PARAM_INVALID


def test_symbol_name_offset_at_end_of_table_gives_empty_name_which_fails_registration():
    data = write_elf([k("a")])
    symtab = next(s for s in parse_elf(data).sections if s.name == ".symtab")
    strtab = parse_elf(data).sections[symtab.link]
    data = patch(data, symtab.offset + 24, "<I", strtab.size)
    assert fails(data).code == PARAM_INVALID


# ---- every metadata TLV type
@pytest.mark.parametrize("func_type, sync, attr, mix", [
    (FuncType.AICORE, None, AttrType.AICORE, MixType.NO_MIX),
    (FuncType.AIC, None, AttrType.CUBE, MixType.NO_MIX),
    (FuncType.AIV, None, AttrType.VECTOR, MixType.NO_MIX),
    (FuncType.AIC, 1, AttrType.CUBE, MixType.MIX_AIC),
    (FuncType.AIV, 1, AttrType.VECTOR, MixType.MIX_AIV),
    (FuncType.AIC_ROLLBACK, 1, AttrType.CUBE, MixType.MIX_AIC),
    (FuncType.AIV_ROLLBACK, 0, AttrType.VECTOR, MixType.NO_MIX),
    (FuncType.INVALID, None, AttrType.CUBE, MixType.NO_MIX),
])
def test_kernel_type_and_cross_core_give_attr_and_mix_type(func_type, sync, attr, mix):
    kern = only(parse([k("kern", func_type=func_type, cross_core_sync=sync)]))
    assert (kern.func_type, kern.attr_type, kern.mix_type) == (func_type, attr, mix)
    assert kern.cross_core_sync == (sync or 0)


@pytest.mark.parametrize("ratio, ration", [((1, 2), 2), ((2, 1), 2), ((1, 1), 1), ((1, 0), 0),
                                           ((0, 1), 0), ((0, 0), 2)])
def test_mix_task_ration_maps_ratio(ratio, ration):
    assert only(parse([k("kern", task_ratio=ratio)])).task_ration == ration


def test_invalid_task_ratio_fails_on_chips_with_the_feature():
    assert fails(write_elf([k("kern", task_ratio=(3, 1))])).code == PARAM_INVALID


def test_invalid_task_ratio_is_ignored_without_the_feature():
    kern = only(parse([k("kern", task_ratio=(3, 1))], FEATURES_CLOUD))
    assert kern.task_ration == 2


@pytest.mark.parametrize("count, user_args", [(1, 1), (2, 2), (6, 6)])
def test_dfx_type_counts_nested_arg_infos_except_the_last(count, user_args):
    assert only(parse([k("kern", dfx_arg_count=count)])).user_args_num == user_args


def test_meta_section_without_dfx_gives_zero_user_args():
    assert only(parse([k("kern", func_type=FuncType.AIV)])).user_args_num == 0


def test_empty_dfx_type_leaves_user_args_unchanged():
    assert only(parse([k("kern", dfx_arg_count=0)])).user_args_num == 0


@pytest.mark.parametrize("kind", [MetaType.DFX_ARG_INFO, MetaType.L0_EXCEPTION_DFX_IS_TIK,
                                  MetaType.SIMT_WARP_STACK_SIZE, MetaType.SIMT_DVG_WARP_STACK_SIZE,
                                  MetaType.DETERMINISTIC_INFO, MetaType.BLOCK_DIM_INFO, 99])
def test_ignored_tlv_types_are_kept_raw_and_change_nothing(kind):
    image = parse([meta_with((kind, b"\x07\x00\x00\x00"), func_type=FuncType.AIV)])
    assert image.symbols[0].meta.tlvs == ((MetaType.KERNEL_TYPE, b"\x03\0\0\0"), (kind, b"\x07\0\0\0"))
    assert only(image).func_type == FuncType.AIV
    assert image.function_meta["kern"] == image.symbols[0].meta.tlvs


def test_share_mem_size_needs_a_vf_type():
    assert only(parse([k("kern", share_mem_size=4096)])).share_mem_size == 0
    kern = only(parse([k("kern", share_mem_size=4096, aiv_type=3)]))
    assert (kern.share_mem_size, kern.kernel_vf_type) == (4096, 3)


def test_su_stack_size_is_kept_on_chips_with_the_check():
    assert only(parse([k("kern", min_stack_size=8192)])).min_stack_size == 8192
    assert only(parse([k("kern", min_stack_size=8192)], FEATURES_CLOUD)).min_stack_size == 0


def test_su_stack_size_above_the_process_stack_fails():
    assert fails(write_elf([k("kern", min_stack_size=32769)])).code == PARAM_INVALID
    big = ElfFeatures(customer_stack_size=65536)
    assert only(parse([k("kern", min_stack_size=32769)], big)).min_stack_size == 32769


def test_su_stack_size_is_read_with_the_tlv_length_as_width():
    image = parse([meta_with((MetaType.SU_STACK_SIZE, b"\x00\x20"))])  # 2-byte value
    assert only(image).min_stack_size == 0x2000


@pytest.mark.parametrize("value, early", [(True, True), (False, False)])
def test_early_start_enable(value, early):
    assert only(parse([k("kern", early_start=value)])).early_start is early


def test_early_start_is_true_only_for_value_1():
    image = parse([meta_with((MetaType.EARLY_START_ENABLE, struct.pack("<I", 2)))])
    assert only(image).early_start is False


def test_function_entry_replaces_the_tiling_key():
    kern = only(parse([k("kern_5", function_entry=1234)]))
    assert (kern.entry_key, kern.func_entry_type) == (1234, EntryType.FUNCTION_ENTRY)


def test_disabled_function_entry_keeps_kernel_out_of_the_entry_table():
    image = parse([k("kern_5", function_entry=7, function_entry_flag=0x80)])
    assert only(image).func_entry_type == EntryType.NOT_SUPPORT_FUNCTION_ENTRY
    assert only(image).entry_key == 5 and image.entries == {}


def test_invalid_function_entry_flag_fails():
    assert fails(write_elf([k("kern", function_entry=7, function_entry_flag=1)])).code == PARAM_INVALID


def test_param_summary_and_infos_are_stored_by_ordinal():
    params = [ParamSpec(8, 4, ordinal=1), ParamSpec(0, 8, ordinal=0, param_type=2)]
    kern = only(parse([k("kern", params=params, param_total_size=16)]))
    assert (kern.has_param_summary, kern.param_count, kern.param_total_size) == (True, 2, 16)
    assert kern.params == (ParamInfo(0, 0, 0, 8, 8, 2), ParamInfo(1, 1, 8, 4, 8, 0))


def test_param_summary_with_zero_params_keeps_total_size_zero():
    kern = only(parse([k("kern", params=[], param_total_size=64)]))
    assert (kern.has_param_summary, kern.param_count, kern.param_total_size) == (True, 0, 0)


def test_param_info_without_summary_is_ignored():
    body = struct.pack("<IIIIHHIIII", 0, 0, 0, 8, 8, 0, 0, 0, 0, 0)
    kern = only(parse([meta_with((MetaType.PARAM_INFO, body))]))
    assert (kern.has_param_summary, kern.params) == (False, ())


def test_param_count_mismatch_fails():
    extra = (MetaType.PARAM_INFO, struct.pack("<IIIIHHIIII", 1, 1, 8, 8, 8, 0, 0, 0, 0, 0))
    data = write_elf([k("kern", params=[ParamSpec(0, 8)], extra_tlvs=[extra])])
    assert fails(data).code == PARAM_INVALID


def test_param_ordinal_out_of_range_fails():
    data = write_elf([k("kern", params=[ParamSpec(0, 8, ordinal=1)])])
    assert fails(data).code == PARAM_INVALID


@pytest.mark.parametrize("mode", [0, 1])
def test_sched_mode(mode):
    assert only(parse([k("kern", sched_mode=mode)])).sched_mode == mode


def test_sched_mode_2_fails():
    assert fails(write_elf([k("kern", sched_mode=2)])).code == PARAM_INVALID


def test_repeated_tlv_overwrites():
    kern = only(parse([meta_with((MetaType.KERNEL_TYPE, struct.pack("<I", 2)),
                                 (MetaType.KERNEL_TYPE, struct.pack("<I", 3)))]))
    assert kern.func_type == FuncType.AIV


def test_tlv_value_is_read_at_its_struct_offset_whatever_its_length():
    # a KERNEL_TYPE with length 0 reads its u32 from the next TLV's header (type 12, length 4)
    image = parse([meta_with((MetaType.KERNEL_TYPE, b""), (MetaType.AIV_TYPE_FLAG, b"\2\0\0\0"))])
    assert only(image).func_type == 12 | (4 << 16)


def test_overrunning_tlv_stops_the_scan():
    meta = struct.pack("<HHI", 1, 4, 3) + struct.pack("<HH", 12, 200)  # second TLV overruns
    data = write_elf([k("kern")], extra_sections=[SectionSpec(".ascend.meta.kern", meta, 7)])
    kern = only(parse_elf(data))
    assert (kern.func_type, kern.kernel_vf_type) == (3, 0)


def test_meta_section_without_matching_symbol_is_ignored():
    data = write_elf([k("kern")], extra_sections=[
        SectionSpec(".ascend.meta.other", struct.pack("<HHI", 1, 4, 3), 7)])
    assert only(parse_elf(data)).func_type == 0


def test_meta_section_name_must_be_the_full_symbol_name():
    image = parse([k("m_mix_aic", func_type=FuncType.AIC)])
    assert only(image).name == "m" and only(image).func_type == FuncType.AIC


# ---- binary-level metadata, stack size, so name, globals
def test_runtime_implicit_info_sets_meta_flags_and_locates_runtime_symbols():
    image = parse([k("kern")], runtime_implicit=[1, 2],
                  globals=[GlobalSpec("g_sysPrintFifoSpace", bytes(8)),
                           GlobalSpec("g_sysFftsAddr", bytes(8), binding=STB_LOCAL)])
    assert image.ascend_meta_flag == 0b11
    assert set(image.runtime_symbols) == {"g_sysPrintFifoSpace", "g_sysFftsAddr"}
    assert image.runtime_symbols["g_sysPrintFifoSpace"] == image.globals["g_sysPrintFifoSpace"][0]
    assert "g_sysFftsAddr" not in image.globals  # local: patched, but not a global


@pytest.mark.parametrize("kind", [0, 33])
def test_runtime_implicit_type_out_of_1_to_32_is_ignored(kind):
    assert parse([k("kern")], runtime_implicit=[kind]).ascend_meta_flag == 0


def test_binary_meta_tlvs_are_kept_raw():
    image = parse([k("kern")], binary_meta=[(0, b"v1.0"), (5, b"\1\2")])
    assert image.binary_meta == ((0, b"v1.0"), (5, b"\1\2"))


@pytest.mark.parametrize("size", [16384, 32768])
def test_stack_size_record(size):
    image = parse([k("a"), k("b")], stack_size=size)
    assert image.stack_size == size


def test_stack_record_with_unequal_values_is_ignored():
    record = struct.pack("<2Q", 16384, 32768)
    data = write_elf([k("a")], extra_sections=[SectionSpec(".ascend.stack.size.record", record)])
    assert parse_elf(data).stack_size == 0


def test_stack_record_with_other_size_is_ignored():
    assert parse([k("a")], stack_size=4096).stack_size == 0


def test_stack_size_from_e_version_when_there_is_no_record():
    assert parse([k("a")], e_version=0x5A5A_0100).stack_size == 16384
    assert parse([k("a")], e_version=0x5A5A_0200).stack_size == 32768
    assert parse([k("a")], e_version=0x5A5A_0300).stack_size == 0


def test_stack_size_is_only_used_on_chips_with_the_feature():
    image = parse([k("a")], FEATURES_950, stack_size=16384)
    assert (image.stack_size, image.elf_stack_size) == (0, 16384)


def test_so_name_and_metadata():
    image = parse([k("a")], so_name="libop.so")
    assert image.so_name == "libop.so" and image.metadata == "libop.so,0.1,,exclusive;"
    assert parse([k("a")]).so_name is None


def test_globals_are_global_objects_with_image_offsets():
    image = parse([k("a")], globals=[GlobalSpec("g_data", b"ABCDEFGH"),
                                     GlobalSpec("g_ro", b"xyz", readonly=True),
                                     GlobalSpec("g_weak", b"w" * 8, binding=STB_WEAK),
                                     GlobalSpec("g_local", b"l" * 8, binding=STB_LOCAL)])
    assert set(image.globals) == {"g_data", "g_ro"}
    off, size = image.globals["g_data"]
    assert (image.image[off:off + size], size) == (b"ABCDEFGH", 8)
    off, size = image.globals["g_ro"]
    assert image.image[off:off + size] == b"xyz"


def test_global_scan_stops_at_an_object_in_a_special_section():
    data = write_elf([k("a")], globals=[GlobalSpec("g1", b"1" * 8), GlobalSpec("g2", b"2" * 8)])
    symtab = next(s for s in parse_elf(data).sections if s.name == ".symtab")
    data = patch(data, symtab.offset + 2 * 24 + 6, "<H", 0xFFF1)  # g1 -> SHN_ABS
    assert parse_elf(data).globals == {}


def test_data_section_makes_the_image_writable():
    assert parse([k("a")]).read_only is True
    assert parse([k("a")], globals=[GlobalSpec("g", b"x" * 8)]).read_only is False


# ---- NOBITS zero fill
def test_bss_range_of_the_image_is_zero_although_the_file_has_other_bytes_there():
    data = write_elf([k("a", func_type=3)], globals=[GlobalSpec("g_bss", size=32, bss=True)])
    image = parse_elf(data)
    off, size = image.globals["g_bss"]
    bss = next(s for s in image.sections if s.name == ".bss")
    assert data[bss.offset:bss.offset + size] != bytes(size)  # the meta section lives there
    assert image.image[off:off + size] == bytes(size)
    assert image.load_size == off + size


# ---- mix kernels (§2.3)
def test_mix_pair_merges_into_one_mix_kernel_main_aic():
    image = parse(mix_pair("mm", b"\xc0" * 16, b"\xd0" * 24, dfx_arg_count=3))
    kern = only(image)
    assert (kern.name, kern.attr_type, kern.mix_type) == ("mm", AttrType.MIX, MixType.MIX_AIC_AIV_MAIN_AIC)
    assert image.image[kern.offset:kern.offset + kern.length] == b"\xc0" * 16
    assert image.image[kern.offset2:kern.offset2 + kern.length2] == b"\xd0" * 24
    assert kern.symbols == ("mm_mix_aic", "mm_mix_aiv")


def test_mix_pair_main_aiv():
    assert only(parse(mix_pair("mm", CODE, CODE, main="aiv"))).mix_type == MixType.MIX_AIC_AIV_MAIN_AIV


def test_mix_pair_with_aiv_first_swaps_so_part_one_is_aic():
    aic, aiv = mix_pair("mm", b"\xc0" * 16, b"\xd0" * 24)
    image = parse([k("first"), aiv, aic])
    kern = image.kernel("mm")
    assert image.image[kern.offset:kern.offset + kern.length] == b"\xc0" * 16
    assert image.image[kern.offset2:kern.offset2 + kern.length2] == b"\xd0" * 24


def test_mix_pair_whose_aiv_part_is_at_offset_0_has_no_second_address():
    aic, aiv = mix_pair("mm", CODE, CODE)
    kern = only(parse([aiv, aic]))  # kernel.md §9.11
    assert (kern.offset2, kern.mix_type) == (0, MixType.MIX_AIC_AIV_MAIN_AIC)


def test_mix_vf_type_and_shared_memory_come_from_the_aiv_part():
    aic, aiv = mix_pair("mm", CODE, CODE)
    aiv = KernelSpec(aiv.name, aiv.code, func_type=aiv.func_type, aiv_type=3, share_mem_size=512,
                     min_stack_size=4096)
    aic = KernelSpec(aic.name, aic.code, func_type=aic.func_type, aiv_type=2, min_stack_size=1024)
    kern = only(parse([aic, aiv]))
    assert (kern.kernel_vf_type, kern.share_mem_size) == (3, 512)
    assert (kern.min_stack_size, kern.min_stack_size2) == (4096, 4096)


def test_traditional_mix_names_without_func_type_merge_to_main_aic():
    kern = only(parse([k("mm_mix_aic"), k("mm_mix_aiv")]))
    assert (kern.attr_type, kern.mix_type) == (AttrType.MIX, MixType.MIX_AIC_AIV_MAIN_AIC)


def test_mix_merge_on_a_cv_integrated_chip_gives_aicore():
    kern = only(parse(mix_pair("mm", CODE, CODE), FEATURES_CLOUD))
    assert (kern.attr_type, kern.mix_type) == (AttrType.AICORE, MixType.MIX_AIC_AIV_MAIN_AIC)


@pytest.mark.parametrize("kernels", [
    [k("mm_mix_aic"), k("x"), k("mm_mix_aic")],
    [k("mm_mix_aic"), k("mm")],
    [k("a_mix_aic"), k("a_mix_aiv"), k("a_mix_aiv")],
], ids=["same-half", "mix-then-plain", "third-part"])
def test_conflicting_mix_halves_fail(kernels):
    assert fails(write_elf(kernels)).code == PARAM_INVALID


def test_plain_kernel_followed_by_a_mix_half_of_its_name_merges():
    kern = only(parse([k("mm", b"\xc0" * 8), k("mm_mix_aiv", b"\xd0" * 8)]))
    assert (kern.attr_type, kern.mix_type, kern.offset, kern.offset2) == \
        (AttrType.MIX, MixType.MIX_AIC_AIV_MAIN_AIC, 0, 16)


def test_mix_main_func_type_without_suffix_fails():
    assert fails(write_elf([k("mm", func_type=FuncType.MIX_AIC_MAIN)])).code == PARAM_INVALID


def test_name_that_is_only_a_mix_suffix_fails():
    assert fails(write_elf([k("_mix_aic")])).code == PARAM_INVALID


@pytest.mark.parametrize("name, stripped", [
    ("add_mix_aic", "add"), ("add_mix_aiv", "add"), ("a_mix_aic_x_mix_aic", "a_mix_aic_x"),
    ("a_mix_aic_b_mix_aiv", "a_b_mix_aiv"), ("plain", "plain"),
])
def test_strip_mix_suffix_removes_the_rightmost_aic_else_aiv(name, stripped):
    assert strip_mix_suffix(name) == stripped


# ---- entry keys (§2.3, §9.6)
@pytest.mark.parametrize("name, key", [
    ("add_custom", 0), ("GatherV3_x_high_performance_10430", 10430), ("123", 123), ("k_", 0),
    ("k_1a", 0), ("k_18446744073709551615", 2**64 - 1), ("k_18446744073709551616", 0), ("k_007", 7),
])
def test_tiling_key_from_name(name, key):
    assert tiling_key(name) == key


def test_entry_table_maps_keys_to_kernels():
    image = parse([k("op_20"), k("op_10"), k("other")])
    assert image.entries == {0: "other", 10: "op_10", 20: "op_20"}


def test_duplicate_entry_keys_keep_the_first_kernel_by_name():
    image = parse([k("zz"), k("aa"), k("mm_7"), k("b", function_entry=7)])
    assert image.entries == {0: "aa", 7: "b"}
    assert {x.name for x in image.kernels} == {"zz", "aa", "mm_7", "b"}  # all still by name


def test_mix_kernel_key_comes_from_the_stripped_name():
    image = parse(mix_pair("op_12", CODE, CODE))
    assert image.entries == {12: "op_12"}


# ---- e_machine and default kernel type
def test_aarch64_machine_makes_aicpu_kernels_on_aicpu_machine_chips():
    image = parse([k("cpu")], FEATURES_CLOUD, e_machine=EM_AARCH64)
    assert (image.machine, image.default_attr_type, only(image).attr_type) == (183, 100, AttrType.AICPU)


def test_other_machine_on_aicpu_machine_chip_is_aicore():
    assert only(parse([k("k")], FEATURES_CLOUD)).attr_type == AttrType.AICORE


def test_aarch64_machine_is_ignored_on_910b():
    assert only(parse([k("cpu")], e_machine=EM_AARCH64)).attr_type == AttrType.CUBE


def test_load_option_type_is_the_default_without_the_machine_feature():
    image = parse_elf(write_elf([k("v")]), FEATURES_910B, initial_attr_type=AttrType.VECTOR)
    assert only(image).attr_type == AttrType.VECTOR


def test_register_kernels_again_with_a_json_magic_type():
    image = register_kernels(parse([k("v"), k("c", func_type=2)]), AttrType.AICORE)
    assert [(x.name, x.attr_type) for x in image.kernels] == [("c", AttrType.CUBE), ("v", AttrType.AICORE)]


# ---- header and section checks with their codes
def test_magic_is_not_checked():
    assert only(parse_elf(b"JUNK" + write_elf([k("a")])[4:])).name == "a"


def test_32_bit_class_fails():
    assert fails(patch(write_elf([k("a")]), 4, "B", 1)).code == PARAM_INVALID


@pytest.mark.parametrize("ei_data", [0, 1, 3, 255])
def test_ei_data_other_than_2_reads_little_endian(ei_data):
    assert only(parse_elf(patch(write_elf([k("a")]), 5, "B", ei_data))).name == "a"


def test_ei_data_2_reads_a_little_endian_file_big_endian_and_fails():
    assert fails(patch(write_elf([k("a")]), 5, "B", 2)).code == PARAM_INVALID


def test_big_endian_file_round_trips_with_host_order_function_entry():
    data = write_elf([k("a_3", func_type=3, dfx_arg_count=2, task_ratio=(1, 1)),
                      k("b", function_entry=0x0102030405060708, params=[ParamSpec(0, 8)])],
                     globals=[GlobalSpec("g", b"x" * 8)], runtime_implicit=[2], big_endian=True)
    image = parse_elf(data)
    a, b = image.kernel("a_3"), image.kernel("b")
    assert (a.func_type, a.user_args_num, a.task_ration, a.entry_key) == (3, 2, 1, 3)
    assert (b.entry_key, b.params[0].size) == (0x0102030405060708, 8)
    assert (image.ascend_meta_flag, image.ei_data, list(image.globals)) == (2, 2, ["g"])


@pytest.mark.parametrize("shentsize", [0, 40, 65])
def test_section_header_entry_size_must_be_64(shentsize):
    assert fails(patch(write_elf([k("a")]), 58, "<H", shentsize)).code == PARAM_INVALID


def test_zero_section_headers_fail():
    assert fails(patch(write_elf([k("a")]), 60, "<H", 0)).code == PARAM_INVALID


def test_section_headers_beyond_the_file_fail():
    data = write_elf([k("a")])
    assert fails(data[:-1]).code == PARAM_INVALID
    assert fails(patch(data, 40, "<Q", len(data))).code == PARAM_INVALID


def test_sh_link_above_section_count_fails():
    data = write_elf([k("a")])
    shnum = struct.unpack_from("<H", data, 60)[0]
    assert fails(patch_section(data, ".text", "link", shnum + 1)).code == PARAM_INVALID


def test_symtab_linked_to_section_count_fails():
    data = write_elf([k("a")])
    shnum = struct.unpack_from("<H", data, 60)[0]
    assert fails(patch_section(data, ".symtab", "link", shnum)).code == PARAM_INVALID


def test_section_name_table_outside_the_file_fails():
    data = write_elf([k("a")])
    assert fails(patch_section(data, ".shstrtab", "offset", len(data))).code == PARAM_INVALID


def test_section_name_index_out_of_range_skips_names_and_metadata():
    data = patch(write_elf([k("a", func_type=3)]), 62, "<H", 0xFFFF)
    image = parse_elf(data)
    assert only(image).func_type == 0 and image.sections[1].name == ""


def test_missing_symbol_table_fails():
    data = patch_section(write_elf([k("a")]), ".symtab", "type", 11)  # SHT_DYNSYM
    assert fails(data).code == PARAM_INVALID


def test_symbol_table_outside_the_file_fails():
    data = patch_section(write_elf([k("a")]), ".symtab", "size", 24 * 10_000)
    assert fails(data).code == PARAM_INVALID


def test_symbol_string_table_outside_the_file_fails():
    data = write_elf([k("a")])
    assert fails(patch_section(data, ".strtab", "size", len(data))).code == PARAM_INVALID


def test_text_size_overflow_fails():
    data = write_elf([k("a")], globals=[GlobalSpec("g", b"x" * 8)])
    assert fails(patch_section(data, ".data", "size", 2**64 - 8)).code == PARAM_INVALID


@pytest.mark.parametrize("data", [b"", bytearray(), None, 12, "text"])
def test_empty_or_non_bytes_data_fails(data):
    assert fails(data).code == PARAM_INVALID


def test_short_file_fails():
    assert fails(b"\x7fELF\x02\x01").code == PARAM_INVALID


def test_bytearray_and_memoryview_are_accepted():
    data = write_elf([k("a")])
    assert only(parse_elf(bytearray(data))).name == only(parse_elf(memoryview(data))).name == "a"


# ---- the device image
def test_empty_device_image_fails_at_load_with_internal_error():
    image = parse([k("a", b"")])
    assert image.load_size == 0
    with pytest.raises(ElfError) as info:
        image.device_image()
    assert info.value.code == INTERNAL_ERROR


def test_device_image_of_a_normal_binary():
    image = parse([k("a", b"\x5a" * 8)])
    assert image.device_image()[:8] == b"\x5a" * 8


def test_alloc_section_past_the_end_of_the_file_reads_zeros():
    data = write_elf([k("a", b"\x5a" * 8)])
    data = patch_section(data, ".text", "size", len(data) + 100)
    image = parse_elf(data)
    assert image.load_size == len(data) + 100 and image.image.endswith(bytes(100 + 64))


def test_error_is_an_acl_error_with_the_acl_name():
    from npusim.errors import AclError
    err = fails(b"\0" * 64)
    assert isinstance(err, AclError) and err.name == "ACL_ERROR_RT_PARAM_INVALID"


# ---- the real test binary of the runtime (when the mirror is present)
MIRROR = Path("/work/.mirror/hicann+runtime/repo")
GATHER = "tests/ut/runtime/runtime/test/data/GatherV3_9e31943a1a48bf81ddff1fc6379e0be3_high_performance.txt"


@pytest.fixture(scope="module")
def gather_v3() -> bytes:
    try:
        text = subprocess.run(["git", "-C", str(MIRROR), "show", f"HEAD:{GATHER}"], check=True,
                              capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("hicann/runtime mirror not available")
    return bytes(int(x, 16) for x in text.replace(",", " ").split())


def test_real_gather_v3_binary(gather_v3):
    image = parse_elf(gather_v3)
    assert (image.machine, image.image_offset, len(image.kernels)) == (0x1029, 0xE8, 48)
    assert {x.user_args_num for x in image.kernels} == {6}  # 6 nested items, 5 counted (+1)
    assert {x.attr_type for x in image.kernels} == {AttrType.VECTOR}
    assert image.entries[10430].endswith("_10430") and len(image.entries) == 48
    assert list(image.globals) == ["g_opSystemRunCfg"] and image.stack_size == 32768


# ---- round trip property
NAME = st.text("abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=6)
RATIOS = st.sampled_from([None, (1, 2), (2, 1), (1, 1), (1, 0), (0, 1)])


@st.composite
def meta_fields(draw, func_types):
    params = draw(st.none() | st.lists(st.tuples(st.integers(0, 255), st.integers(1, 64)),
                                       max_size=4))
    entry = draw(st.none() | st.tuples(st.sampled_from([0, 0x80]), st.integers(0, 2**64 - 1)))
    return dict(
        func_type=draw(st.sampled_from(func_types)),
        cross_core_sync=draw(st.sampled_from([None, 0, 1])),
        task_ratio=draw(RATIOS),
        dfx_arg_count=draw(st.none() | st.integers(1, 8)),
        share_mem_size=draw(st.none() | st.integers(0, 2**32 - 1)),
        min_stack_size=draw(st.none() | st.integers(0, 32768)),
        early_start=draw(st.none() | st.booleans()),
        aiv_type=draw(st.none() | st.integers(0, 4)),
        function_entry=None if entry is None else entry[1],
        function_entry_flag=0 if entry is None else entry[0],
        params=None if params is None else [ParamSpec(o, s) for o, s in params],
        sched_mode=draw(st.sampled_from([None, 0, 1])),
    )


@st.composite
def kernel_sets(draw):
    plain_names = draw(st.lists(NAME, max_size=5, unique=True))
    plain = []
    for name in plain_names:
        suffix = draw(st.none() | st.integers(0, 40))
        full = "k" + name + ("" if suffix is None else f"_{suffix}")
        meta = draw(meta_fields([None, 1, 2, 3, 6, 7]))
        plain.append(KernelSpec(full, draw(st.binary(min_size=1, max_size=48)), **meta))
    mixes = []
    for base in draw(st.lists(NAME, max_size=3, unique=True)):
        shared = draw(meta_fields([FuncType.MIX_AIC_MAIN, FuncType.MIX_AIV_MAIN]))
        halves = []
        for suffix in ("_mix_aic", "_mix_aiv"):
            own = dict(shared, aiv_type=draw(st.none() | st.integers(0, 4)),
                       share_mem_size=draw(st.none() | st.integers(0, 1024)),
                       min_stack_size=draw(st.none() | st.integers(0, 32768)),
                       early_start=draw(st.none() | st.booleans()))
            halves.append(KernelSpec("m" + base + suffix, draw(st.binary(min_size=1, max_size=48)),
                                     **own))
        mixes.append(halves)
    specs = plain + [h for pair in mixes for h in pair]
    if not specs:
        specs = [KernelSpec("kfallback", b"\x01")]
    return draw(st.permutations(specs))


def _expected_meta(spec: KernelSpec) -> dict:
    """What the runtime derives from one symbol's TLVs (kernel.md §1.5)."""
    has_meta = any(v is not None for v in (
        spec.func_type, spec.cross_core_sync, spec.task_ratio, spec.dfx_arg_count,
        spec.share_mem_size, spec.min_stack_size, spec.early_start, spec.aiv_type,
        spec.function_entry, spec.params, spec.sched_mode))
    if not has_meta:
        return dict(func_type=0, sync=0, ration=2, user_args=128, vf=0, share=0, stack=0,
                    early=False, entry_type=0, entry=0, sched=0, params=None)
    vf = spec.aiv_type or 0
    ratio = {(1, 2): 2, (2, 1): 2, (1, 1): 1, (1, 0): 0, (0, 1): 0}.get(spec.task_ratio, 2)
    entry_type = (0 if spec.function_entry is None
                  else 1 if spec.function_entry_flag == 0 else 2)
    return dict(
        func_type=spec.func_type or 0, sync=spec.cross_core_sync or 0, ration=ratio,
        user_args=spec.dfx_arg_count or 0, vf=vf, share=(spec.share_mem_size or 0) if vf else 0,
        stack=spec.min_stack_size or 0, early=bool(spec.early_start), entry_type=entry_type,
        entry=spec.function_entry if entry_type == 1 else 0, sched=spec.sched_mode or 0,
        params=spec.params)


def _check_common(kern, spec: KernelSpec, meta: dict, name: str) -> None:
    assert kern.func_type == meta["func_type"] and kern.cross_core_sync == meta["sync"]
    assert kern.task_ration == meta["ration"] and kern.user_args_num == meta["user_args"]
    assert kern.sched_mode == meta["sched"] and kern.func_entry_type == meta["entry_type"]
    expected_key = meta["entry"] if meta["entry_type"] == 1 else tiling_key(name)
    assert kern.entry_key == expected_key
    if meta["params"] is None:
        assert not kern.has_param_summary
    else:
        assert kern.param_count == len(meta["params"])
        assert [(p.offset, p.size) for p in kern.params] == [(p.offset, p.size) for p in meta["params"]]


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(kernel_sets())
def test_round_trip_written_kernels_parse_back_to_the_same_kernels_and_metadata(specs):
    data = write_elf(specs)
    image = parse_elf(data)
    symtab = ELFFile(io.BytesIO(data)).get_section_by_name(".symtab")  # a standard reader agrees
    assert [(s.name, s["st_value"], s["st_size"]) for s in symtab.iter_symbols() if s.name] == \
        [(s.name, s.offset, s.length) for s in image.symbols]
    code_at = lambda off, n: image.image[off:off + n]  # noqa: E731
    by_base: dict[str, list[KernelSpec]] = {}
    for spec in specs:
        by_base.setdefault(strip_mix_suffix(spec.name), []).append(spec)
    assert [x.name for x in image.kernels] == sorted(by_base)
    for name, group in by_base.items():
        kern = image.kernel(name)
        first = group[0]
        _check_common(kern, first, _expected_meta(first), name)
        if len(group) == 1:
            assert code_at(kern.offset, kern.length) == first.code
            meta = _expected_meta(first)
            assert (kern.kernel_vf_type, kern.share_mem_size, kern.min_stack_size) == \
                (meta["vf"], meta["share"], meta["stack"])
            continue
        aic = next(s for s in group if s.name.endswith("_mix_aic"))
        aiv = next(s for s in group if s.name.endswith("_mix_aiv"))
        assert kern.attr_type == AttrType.MIX
        main = MixType.MIX_AIC_AIV_MAIN_AIC if group[1].func_type == FuncType.MIX_AIC_MAIN \
            else MixType.MIX_AIC_AIV_MAIN_AIV
        assert kern.mix_type == main
        assert code_at(kern.offset, kern.length) == aic.code
        assert (kern.length2, kern.symbols) == (len(aiv.code), tuple(s.name for s in group))
        if kern.offset2:
            assert code_at(kern.offset2, kern.length2) == aiv.code
        m_aic, m_aiv = _expected_meta(aic), _expected_meta(aiv)
        assert (kern.kernel_vf_type, kern.share_mem_size) == (m_aiv["vf"], m_aiv["share"])
        assert (kern.min_stack_size, kern.min_stack_size2) == \
            (max(m_aic["stack"], m_aiv["stack"]), m_aiv["stack"])
        assert kern.early_start == (m_aic["early"] or m_aiv["early"])
    expected_entries: dict[int, str] = {}
    for kern in sorted(image.kernels, key=lambda x: x.name.encode()):
        if kern.func_entry_type != EntryType.NOT_SUPPORT_FUNCTION_ENTRY:
            expected_entries.setdefault(kern.entry_key, kern.name)
    assert image.entries == dict(sorted(expected_entries.items()))


@pytest.mark.parametrize("profile, features", [
    ("Ascend910B", FEATURES_910B), ("Ascend910_93", FEATURES_910B), ("Ascend950", FEATURES_950),
    ("Ascend310P", FEATURES_DC),
])
def test_features_follow_the_chip_profile(profile, features):
    from npusim.profiles import get_profile
    assert features_for(get_profile(profile)) is features


def test_parse_accepts_a_chip_profile():
    from npusim.profiles import get_profile
    image = parse_elf(write_elf(mix_pair("mm", CODE, CODE)), get_profile("Ascend310P"))
    assert only(image).attr_type == AttrType.AICORE  # CV-integrated chip
