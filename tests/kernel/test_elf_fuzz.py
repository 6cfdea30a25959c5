"""Malformed kernel binaries never escape as anything but ``ElfError`` with an int ACL code.

Inputs are derived from conforming binaries written by ``elfwrite`` (mix kernels, every TLV type,
globals, .bss, so name, stack record, big-endian): truncated, byte-mutated, with header / section /
symbol fields overwritten by boundary values, with metadata sections scrambled, or followed by
garbage. Whatever the parse returns must also be usable (registration, device image). The
example counts add up to >= 10,000 inputs; ``derandomize`` keeps runs reproducible.
"""
from __future__ import annotations

import struct

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npusim.kernel.elf import (
    FEATURES_910B, FEATURES_950, FEATURES_CLOUD, AttrType, ElfError, FuncType, MetaType,
    parse_elf, register_kernels,
)
from npusim.kernel.elfwrite import (
    GlobalSpec, KernelSpec, ParamSpec, SectionSpec, mix_pair, write_elf,
)

KNOWN_CODES = {107000, 507000}
MAX_IMAGE = 1 << 20  # materialise device images up to this size
FIELD_WIDTHS = (1, 2, 4, 8)
BOUNDARY = [0, 1, 2, 3, 4, 7, 8, 12, 16, 24, 63, 64, 65, 183, 255, 0x7F, 0x80, 0xFFFF, 0x10000,
            0x7FFF_FFFF, 0xFFFF_FFFF, 0x1_0000_0000, 2**63 - 1, 2**64 - 1]


def _corpus() -> list[bytes]:
    """Conforming binaries that together exercise every parser path."""
    code = bytes(range(40))
    every_tlv = KernelSpec(
        "all_7", code, func_type=FuncType.AIV, cross_core_sync=1, task_ratio=(1, 2),
        dfx_arg_count=4, share_mem_size=256, min_stack_size=4096, early_start=True, aiv_type=3,
        function_entry=77, params=[ParamSpec(0, 8), ParamSpec(8, 4)], sched_mode=1,
        extra_tlvs=[(MetaType.BLOCK_DIM_INFO, b"\1\0\0\0"), (MetaType.DETERMINISTIC_INFO, b"")])
    return [
        write_elf([every_tlv, *mix_pair("mm_3", code, code[::-1], dfx_arg_count=2),
                   KernelSpec("k", code)],
                  globals=[GlobalSpec("g_sysPrintFifoSpace", bytes(8)),
                           GlobalSpec("g_b", size=32, bss=True),
                           GlobalSpec("g_r", b"ro", readonly=True)],
                  so_name="libfuzz.so", stack_size=32768, runtime_implicit=[1, 5],
                  binary_meta=[(0, b"1.0")]),
        write_elf([KernelSpec("a_1", code, func_type=2), KernelSpec("b_2", code, func_type=3),
                   *mix_pair("x", code, code, main="aiv")], e_version=0x5A5A_0100),
        write_elf([every_tlv, KernelSpec("be", code, function_entry=5)],
                  globals=[GlobalSpec("g", b"x" * 8)], runtime_implicit=[2], big_endian=True),
        write_elf([KernelSpec("cpu", code)], e_machine=183,
                  extra_sections=[SectionSpec(".ascend.meta.cpu",
                                              struct.pack("<HHI", 4, 2, 0), 7)]),
    ]


CORPUS = _corpus()
FEATURES = [FEATURES_910B, FEATURES_950, FEATURES_CLOUD]


def _check(data: bytes, features=FEATURES_910B) -> None:
    """The contract: an ElfImage that can be registered and loaded, or one ElfError."""
    try:
        image = parse_elf(data, features)
    except ElfError as err:
        assert type(err.code) is int and err.code in KNOWN_CODES, err
        assert not err.detail.startswith("unexpected"), err.detail
        return
    try:
        register_kernels(image, AttrType.AICORE, features)
    except ElfError as err:
        assert err.code == 107000 and not err.detail.startswith("unexpected"), err
    if image.load_size <= MAX_IMAGE:
        try:
            assert len(image.device_image()) == image.load_size
        except ElfError as err:
            assert err.code == 507000 and image.load_size == 0
    for kern in image.kernels:
        assert isinstance(kern.name, str) and kern.entry_key >= 0


base = st.sampled_from(CORPUS)
features = st.sampled_from(FEATURES)
WHICH = st.integers(0, len(CORPUS) - 1)
ANY_INDEX = st.integers(0, 1 << 20)  # taken modulo the list it indexes (cheap to draw)
fuzz = settings(deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@settings(fuzz, max_examples=2000)
@given(base, ANY_INDEX, features)
def test_truncated_binaries(data, cut, feats):
    _check(data[:cut % (len(data) + 1)], feats)


@settings(fuzz, max_examples=3000)
@given(base, st.binary(min_size=3, max_size=36), features)
def test_byte_mutated_binaries(data, script, feats):
    """``script`` is a list of 3-byte edits: u16 position (modulo the size), new byte value.
    (Plain bytes keep Hypothesis' own cost per example low, so 10k inputs fit the time budget.)"""
    buf = bytearray(data)
    for i in range(0, len(script) - 2, 3):
        buf[int.from_bytes(script[i:i + 2], "little") % len(buf)] = script[i + 2]
    _check(bytes(buf), feats)


def _field_offsets(data: bytes) -> list[int]:
    """Offsets of the ELF header fields and of every section header's fields."""
    o = ">" if data[5] == 2 else "<"
    offs = list(range(4, 64, 2))
    shoff, shnum = struct.unpack_from(o + "Q", data, 40)[0], struct.unpack_from(o + "H", data, 60)[0]
    for i in range(shnum):
        offs += [shoff + 64 * i + f for f in (0, 4, 8, 16, 24, 32, 40, 44, 56)]
    return offs


FIELDS = [_field_offsets(d) for d in CORPUS]


WRITE_SIZE = 12  # u16 field index, u8 selector, u8 unused, u64 value


@settings(fuzz, max_examples=3000)
@given(WHICH, st.binary(min_size=WRITE_SIZE, max_size=3 * WRITE_SIZE), features)
def test_header_fields_set_to_boundary_values(which, script, feats):
    """Each 12-byte write picks a header/section/symbol field (index modulo the field list), a
    width (selector bits 0-1: 1/2/4/8 bytes) and a value: a boundary value (selector bit 2,
    value modulo the table) or the raw u64."""
    buf = bytearray(CORPUS[which])
    order = "big" if buf[5] == 2 else "little"
    fields = FIELDS[which]
    for i in range(0, len(script) - WRITE_SIZE + 1, WRITE_SIZE):
        index, selector, _, value = struct.unpack_from("<HBBQ", script, i)
        off, width = fields[index % len(fields)], FIELD_WIDTHS[selector & 3]
        if selector & 4:
            value = BOUNDARY[value % len(BOUNDARY)]
        chunk = (value & ((1 << 8 * width) - 1)).to_bytes(width, order)
        buf[off:off + width] = chunk[:max(0, len(buf) - off)]
    _check(bytes(buf), feats)


SECTIONS = [[(s.offset, s.size) for s in parse_elf(d).sections if s.size and s.type != 8]
            for d in CORPUS]


@settings(fuzz, max_examples=2000)
@given(WHICH, ANY_INDEX, ANY_INDEX, st.binary(min_size=1, max_size=32), features)
def test_section_contents_scrambled(which, section, where, noise, feats):
    """Metadata, symbol and string tables with random content: TLV lengths, counts, names."""
    buf = bytearray(CORPUS[which])
    offset, size = SECTIONS[which][section % len(SECTIONS[which])]
    start = offset + where % size
    buf[start:start + len(noise)] = noise[:len(buf) - start]
    _check(bytes(buf), feats)


@settings(fuzz, max_examples=500)
@given(base, st.binary(max_size=256), st.integers(0, 128))
def test_header_prefix_followed_by_garbage(data, garbage, keep):
    _check(data[:keep] + garbage)
