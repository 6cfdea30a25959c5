"""The standard view of a kernel ELF (pyelftools) next to the runtime's parse
(npusim/kernel/elfview.py): conforming files show no disagreement, and each planted quirk shows
exactly the disagreement it causes."""
from __future__ import annotations

import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npusim import samples
from npusim.kernel.elf import FEATURES_910B, FEATURES_CLOUD, MetaType, parse_elf
from npusim.kernel.elfview import KINDS, Disagreement, compare, standard_view, view
from npusim.kernel.elfwrite import (
    GlobalSpec, KernelSpec, ParamSpec, SectionSpec, mix_pair, write_elf,
)

CODE = bytes(range(40))
SHT_NOTE = 7
SHDR = 64


def k(name: str = "kern", **meta) -> KernelSpec:
    return KernelSpec(name, CODE, **meta)


def kinds(data, features=FEATURES_910B) -> list[str]:
    return [d.kind for d in compare(data, features)]


def shdr(data: bytes, index: int) -> int:
    return struct.unpack_from("<Q", data, 40)[0] + SHDR * index


def section(data: bytes, name: str):
    return next(s for s in parse_elf(data).sections if s.name == name)


def patch(data: bytes, offset: int, fmt: str, value) -> bytes:
    buf = bytearray(data)
    struct.pack_into(fmt, buf, offset, value)
    return bytes(buf)


EVERY_TLV = k("all_7", func_type=3, cross_core_sync=1, task_ratio=(1, 2), dfx_arg_count=4,
              share_mem_size=256, min_stack_size=4096, early_start=True, aiv_type=3,
              function_entry=77, params=[ParamSpec(0, 8), ParamSpec(8, 4)], sched_mode=1,
              extra_tlvs=[(MetaType.BLOCK_DIM_INFO, b"\1\0\0\0")])


# ---- conforming files
@pytest.mark.parametrize("variant", ["main", "placeholder"])
def test_the_shipped_samples_show_no_disagreement(variant):
    with open(samples.binary_path(variant), "rb") as f:
        data = f.read()
    v = view(data)
    assert v.standard.error is None and v.image is not None
    assert v.disagreements == ()


@pytest.mark.parametrize("data", [
    write_elf([EVERY_TLV, *mix_pair("mm_3", CODE, CODE[::-1], dfx_arg_count=2)],
              globals=[GlobalSpec("g", b"12345678"), GlobalSpec("ro", b"abcd", readonly=True),
                       GlobalSpec("z", size=16, bss=True)],
              so_name="libx.so", stack_size=16384, runtime_implicit=[1, 2]),
    write_elf([k("a"), k("b_3")], extra_sections=[SectionSpec(".comment", b"hello\0")]),
], ids=["every-feature", "plain"])
def test_little_endian_writer_output_shows_no_disagreement(data):
    assert compare(data) == []


def test_the_standard_view_reads_sections_symbols_and_tlvs():
    data = write_elf([k("a", func_type=3), k("b_3")], globals=[GlobalSpec("g", b"12345678")],
                     so_name="libx.so")
    std = standard_view(data)
    assert std.error is None and std.elfclass == 64 and std.little_endian
    assert [s.name for s in std.sections] == [s.name for s in parse_elf(data).sections]
    assert {s.name for s in std.symbols if s.type == "STT_FUNC"} == {"a", "b_3"}
    assert std.soname == "libx.so"
    meta = next(m for m in std.metadata if m.name == ".ascend.meta.a")
    assert [(t.type, t.length) for t in meta.tlvs] == [(MetaType.KERNEL_TYPE, 4)]
    assert meta.overrun is None and meta.trailing == 0


# ---- planted disagreements
def test_a_wrong_magic_loads_only_because_the_runtime_skips_the_check():
    data = write_elf([k("a")])
    found = compare(b"JUNK" + data[4:])
    assert [d.kind for d in found] == ["magic", "rejected"]
    assert "Magic" in found[1].standard


@pytest.mark.parametrize("ei_data", [0, 3])
def test_an_invalid_ei_data_is_read_little_endian(ei_data):
    data = patch(write_elf([k("a")]), 5, "B", ei_data)
    assert kinds(data) == ["ei_data", "rejected"]


def test_a_file_the_runtime_refuses_and_pyelftools_reads():
    v = view(write_elf([k("a", task_ratio=(3, 1))]))
    assert v.image is None and v.refused.code == 107000
    assert [d.kind for d in v.disagreements] == ["refused"]
    # the same file on a chip without the task-ratio check loads: no disagreement
    assert kinds(write_elf([k("a", task_ratio=(3, 1))]), FEATURES_CLOUD) == []


def test_a_file_both_reject_is_no_disagreement():
    assert compare(b"\x7fELF\x01" + bytes(59)) == []


def test_big_endian_sh_link_and_sh_info_are_read_through_the_wrong_bytes():
    found = compare(write_elf([k("a")], globals=[GlobalSpec("g", b"12345678")],
                              so_name="libx.so", big_endian=True))
    by_name = {d.where.split()[-1]: d for d in found if d.kind == "section"}
    assert set(by_name) == {".symtab", ".dynamic"} and {d.kind for d in found} == {"section"}
    assert by_name[".symtab"].standard.startswith("sh_info")  # the writer's copy of sh_link
    assert "sh_addralign" in by_name[".symtab"].runtime
    assert by_name[".dynamic"].standard.startswith("sh_link")          # .dynamic -> .dynstr
    assert "the sh_info bytes" in by_name[".dynamic"].runtime


def test_big_endian_host_order_fields():
    found = compare(write_elf([k("a", function_entry=0x1234)], runtime_implicit=[1],
                              big_endian=True))
    host = [d for d in found if d.kind == "host_order"]
    assert [d.where.split(" TLV ")[1].split(" at ")[0] for d in host] == \
        ["FUNCTION_ENTRY_INFO", "RUNTIME_IMPLICIT_INFO"]
    # the writer puts the entry in host order, which the runtime reads; a file-order read differs
    assert (host[0].standard, host[0].runtime) == ("0x3412000000000000 (file order)",
                                                   "0x1234 (host order)")


@pytest.mark.parametrize("tlv, kind", [
    ((MetaType.KERNEL_TYPE, b"\3\0"), "tlv_short"),                    # 2 of 4 bytes
    ((MetaType.PARAM_INFO, bytes(20)), "tlv_short"),                   # 20 of 36
    ((MetaType.FUNCTION_ENTRY_INFO, bytes(8)), "tlv_short"),           # entry at +4..12
    ((MetaType.SU_STACK_SIZE, (4096).to_bytes(12, "little")), "tlv_width"),
    ((MetaType.SCHED_MODE_INFO, (1).to_bytes(9, "little")), "tlv_width"),
])
def test_tlv_values_the_runtime_reads_differently(tlv, kind):
    found = compare(write_elf([k("a", extra_tlvs=[tlv, (MetaType.BLOCK_DIM_INFO, bytes(40))])]))
    assert [d.kind for d in found] == [kind]
    assert MetaType(tlv[0]).name in found[0].where


def test_a_zero_length_sched_mode_reads_zero_like_the_standard_view():
    assert compare(write_elf([k("a", extra_tlvs=[(MetaType.SCHED_MODE_INFO, b""),
                                                 (MetaType.BLOCK_DIM_INFO, bytes(4))])])) == []


def test_a_tlv_past_its_section_is_dropped_with_the_rest():
    data = write_elf([k("a", func_type=3, cross_core_sync=1)])
    meta = section(data, ".ascend.meta.a")
    data = patch(data, meta.offset + 8 + 2, "<H", 200)        # the second TLV's length
    found = compare(data)
    assert [d.kind for d in found] == ["tlv_overrun"]
    assert "declares 200 bytes" in found[0].standard


def test_bytes_after_the_last_tlv():
    data = write_elf([k("a", func_type=3)], extra_sections=[SectionSpec(".pad", b"\xff" * 8)])
    meta = section(data, ".ascend.meta.a")
    data = patch(data, shdr(data, meta.index) + 32, "<Q", meta.size + 3)   # sh_size + 3
    assert kinds(data) == ["tlv_trailing"]


def test_a_zero_length_tlv_ending_the_section_is_never_read_by_the_runtime():
    found = compare(write_elf([k("a", func_type=3,
                                 extra_tlvs=[(MetaType.DETERMINISTIC_INFO, b"")])]))
    assert [d.kind for d in found] == ["tlv_trailing"]
    assert "reads 1" in found[0].runtime


def test_a_symbol_table_with_another_entry_size():
    data = write_elf([k("a"), k("b"), k("c")])        # null + 3 symbols = 96 bytes
    symtab = section(data, ".symtab")
    data = patch(data, shdr(data, symtab.index) + 56, "<Q", 48)
    found = kinds(data)
    assert found[0] == "symtab" and set(found) == {"symtab", "symbols"}


def test_a_kernel_name_the_runtime_skips():
    data = write_elf([k("a"), k("b" * 4096)])
    found = compare(data)
    assert [d.kind for d in found] == ["symbols"] and "4096" in found[0].runtime


def test_globals_after_an_absolute_object_symbol_are_not_seen():
    data = write_elf([k("a")], globals=[GlobalSpec("first", b"1" * 8),
                                        GlobalSpec("second", b"2" * 8)])
    symtab = section(data, ".symtab")
    syms = [struct.unpack_from("<IBBHQQ", data, symtab.offset + 24 * i)
            for i in range(symtab.size // 24)]
    strtab = data[section(data, ".strtab").offset:]
    first = next(i for i, s in enumerate(syms) if strtab[s[0]:].startswith(b"first\0"))
    data = patch(data, symtab.offset + 24 * first + 6, "<H", 0xFFF1)     # SHN_ABS
    found = compare(data)
    assert [d.kind for d in found] == ["globals"]
    assert found[0].standard == "second" and "'first'" in found[0].runtime


def test_an_so_name_through_a_renamed_dynstr():
    data = write_elf([k("a")], so_name="libx.so")
    dynstr, strtab = section(data, ".dynstr"), section(data, ".strtab")
    data = patch(data, shdr(data, dynstr.index), "<I", strtab.name_offset)   # now ".strtab"
    found = compare(data)
    assert [d.kind for d in found] == ["soname"]
    assert (found[0].standard, found[0].runtime) == ("'libx.so'", "None")


def test_section_data_past_the_end_of_the_file():
    data = write_elf([k("a")])
    text = section(data, ".text")
    data = patch(data, shdr(data, text.index) + 32, "<Q", len(data) * 2)
    assert "bounds" in kinds(data)


def test_two_meta_sections_of_one_kernel():
    extra = SectionSpec(".ascend.meta.a", b"\1\0\4\0\2\0\0\0", type=SHT_NOTE)
    found = compare(write_elf([k("a", func_type=3)], extra_sections=[extra]))
    assert [d.kind for d in found] == ["meta_duplicate"]


def test_a_meta_section_name_matched_as_a_substring():
    extra = SectionSpec("x.ascend.meta.a", b"\1\0\4\0\2\0\0\0", type=SHT_NOTE)
    found = compare(write_elf([k("a")], extra_sections=[extra]))
    assert [d.kind for d in found] == ["meta_name"] and "'.a'" in found[0].runtime


def test_a_meta_section_over_64k():
    big = [(MetaType.BLOCK_DIM_INFO, bytes(40000))] * 2
    assert kinds(write_elf([k("a", extra_tlvs=big)])) == ["meta_size"]


def test_every_kind_is_documented_and_printable():
    d = Disagreement("magic", "header", "x", "y")
    assert str(d) == "header: standard: x; runtime: y  [magic]"
    assert all(isinstance(v, str) and v for v in KINDS.values())


# ---- robustness: any bytes, a list of known kinds, no exception
@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_compare_never_raises_on_mutated_binaries(data):
    base = write_elf([EVERY_TLV, k("b_2")], globals=[GlobalSpec("g", b"12345678")],
                     so_name="libx.so")
    buf = bytearray(base)
    for _ in range(data.draw(st.integers(1, 6))):
        pos = data.draw(st.integers(0, len(buf) - 1))
        buf[pos] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(1, len(buf)))
    for d in compare(bytes(buf[:cut])):
        assert d.kind in KINDS
