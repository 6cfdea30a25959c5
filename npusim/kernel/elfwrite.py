"""Write conforming Ascend kernel ELF binaries (spec/kernel.md §1.11), pure Python.

Why a writer: tests, samples and user-defined Python kernels need real binaries so that the whole
load -> get-function -> launch path is the real one; no Ascend toolchain is available here.

Layout of a written file (64-bit, little-endian unless ``big_endian``; no program headers)::

  ELF header | .text (AX, addr 0) | .rodata (A) | .data (WA) | .bss (WA, NOBITS) |
  .ascend.meta.<kernel> (NOTE, one per kernel with metadata) | .ascend.meta (NOTE) |
  .ascend.stack.size.record | .dynstr/.dynamic (with an so name) | extra sections |
  .symtab | .strtab | .shstrtab | section header table

ALLOC sections are linked so that ``sh_addr == sh_offset - text_offset``: a symbol's ``st_value``
is then its offset in the device image, which is how the runtime computes function addresses.
.bss takes no file space, so the sections after it start at its file offset, like a linker does.

Metadata follows the runtime's reader, including its byte-order rules: TLV headers and most values
in the file's order, FUNCTION_ENTRY_INFO flag/entry and the RUNTIME_IMPLICIT_INFO type in host
(little-endian) order, nested DFX TLVs big-endian with lengths in 8-byte units. In a big-endian
file the runtime reads ``sh_link`` through the ``sh_info`` bytes, so the writer puts the string
table index there too (non-standard, but the only way such a file is usable).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Sequence

from npusim.kernel.elf import (
    DFX_NESTED_UNIT, DT_NULL, DT_SONAME, FUNCTION_ENTRY_ENABLE, SHF_ALLOC,
    SHT_DYNAMIC, SHT_NOBITS, SHT_NOTE, SHT_PROGBITS, SHT_STRTAB, SHT_SYMTAB, STB_GLOBAL,
    STT_FUNC, STT_OBJECT, BinaryMetaType, FuncType, MetaType, SECTION_BINARY_META,
    SECTION_META_PREFIX, SECTION_STACK_RECORD, MIX_AIC_SUFFIX, MIX_AIV_SUFFIX,
)

__all__ = ["KernelSpec", "ParamSpec", "GlobalSpec", "SectionSpec", "write_elf", "mix_pair",
           "tlv", "AICORE_MACHINE", "STB_LOCAL", "STB_WEAK", "STV_DEFAULT", "STV_HIDDEN"]

# ---- constants of the written files
AICORE_MACHINE = 0x1029  # e_machine of real AI Core binaries (GatherV3 test data)
ET_EXEC = 2
EV_CURRENT = 1
ELFCLASS64 = 2
ELFDATA2LSB, ELFDATA2MSB = 1, 2
EHDR_SIZE, SHDR_SIZE, SYM_SIZE, DYN_SIZE = 64, 64, 24, 16
SHF_WRITE, SHF_EXECINSTR = 0x1, 0x4
STB_LOCAL, STB_WEAK = 0, 2
STV_DEFAULT, STV_HIDDEN = 0, 2
STT_SECTION = 3
TEXT_ALIGN = 64
CODE_ALIGN = 16  # each kernel's code starts on this boundary inside .text
DATA_ALIGN = 8
NOTE_ALIGN = 4
SECTION_TEXT, SECTION_RODATA, SECTION_DATA, SECTION_BSS = ".text", ".rodata", ".data", ".bss"
SECTION_DYNSTR, SECTION_DYNAMIC = ".dynstr", ".dynamic"
SECTION_SYMTAB, SECTION_STRTAB, SECTION_SHSTRTAB = ".symtab", ".strtab", ".shstrtab"
PARAM_ALIGN = 8


@dataclass(frozen=True)
class ParamSpec:
    """One parameter description (PARAM_INFO); ``ordinal``/``index`` default to its position."""
    offset: int
    size: int
    align: int = PARAM_ALIGN
    param_type: int = 0
    ordinal: int | None = None
    index: int | None = None
    space_index: int = 0
    space_type: int = 0
    space: int = 0
    resv: int = 0


@dataclass(frozen=True)
class KernelSpec:
    """One kernel symbol and its ``.ascend.meta.<name>`` TLVs (None = TLV not written).

    ``name`` is the full symbol name: a numeric suffix (``add_3``) is the tiling key, a
    ``_mix_aic``/``_mix_aiv`` suffix makes it half of a mix kernel (see :func:`mix_pair`).
    A meta section is written only if at least one TLV is; note that the runtime then gives the
    kernel ``user_args_num`` 0 unless ``dfx_arg_count`` is set.
    """
    name: str
    code: bytes
    func_type: int | None = None
    cross_core_sync: int | None = None
    task_ratio: tuple[int, int] | None = None
    """MIX_TASK_RATION (aic, aiv)."""
    dfx_arg_count: int | None = None
    """DFX_TYPE with this many nested DFX_ARG_INFO items (runtime user_args_num = max(n, 1))."""
    share_mem_size: int | None = None
    min_stack_size: int | None = None
    early_start: bool | None = None
    aiv_type: int | None = None
    function_entry: int | None = None
    function_entry_flag: int = FUNCTION_ENTRY_ENABLE
    params: Sequence[ParamSpec] | None = None
    param_total_size: int | None = None
    """PARAM_SUMMARY total; default: end of the last parameter."""
    sched_mode: int | None = None
    extra_tlvs: Sequence[tuple[int, bytes]] = ()
    """Raw (type, value) TLVs appended after the typed ones (ignored types, tests)."""
    binding: int = STB_GLOBAL
    visibility: int = STV_DEFAULT
    symbol_type: int = STT_FUNC


@dataclass(frozen=True)
class GlobalSpec:
    """A global variable: initialised (``data``, in .data or .rodata) or zero (``size``, .bss)."""
    name: str
    data: bytes = b""
    size: int | None = None
    """Symbol size; defaults to len(data). With ``bss`` it is the reserved size."""
    bss: bool = False
    readonly: bool = False
    binding: int = STB_GLOBAL


@dataclass(frozen=True)
class SectionSpec:
    """An extra non-ALLOC section (tests: stray metadata, foreign sections)."""
    name: str
    data: bytes
    type: int = SHT_PROGBITS
    flags: int = 0


def mix_pair(base: str, aic_code: bytes, aiv_code: bytes, main: str = "aic",
             **meta) -> list[KernelSpec]:
    """The two symbols of a mix kernel: ``<base>_mix_aic`` then ``<base>_mix_aiv`` with funcType
    MIX_AIC_MAIN or MIX_AIV_MAIN (``main``). ``meta`` goes to both halves."""
    ft = FuncType.MIX_AIC_MAIN if main == "aic" else FuncType.MIX_AIV_MAIN
    return [KernelSpec(base + MIX_AIC_SUFFIX, aic_code, func_type=ft, **meta),
            KernelSpec(base + MIX_AIV_SUFFIX, aiv_code, func_type=ft, **meta)]


def tlv(kind: int, value: bytes, order: str = "<") -> bytes:
    """One TLV: u16 type, u16 value length, value."""
    return struct.pack(order + "HH", kind, len(value)) + value


def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def _dfx_value(count: int) -> bytes:
    """Nested DFX_ARG_INFO items, always big-endian, each one 8-byte unit of payload."""
    item = struct.pack(">HH", MetaType.DFX_ARG_INFO, 1) + bytes(DFX_NESTED_UNIT)
    return item * count


def _param_records(spec: KernelSpec, o: str) -> list[bytes]:
    params = list(spec.params or ())
    total = spec.param_total_size
    if total is None:
        total = max((p.offset + p.size for p in params), default=0)
    out = [tlv(MetaType.PARAM_SUMMARY, struct.pack(o + "IQ", len(params), total), o)]
    for i, p in enumerate(params):
        ordinal = i if p.ordinal is None else p.ordinal
        index = ordinal if p.index is None else p.index
        body = struct.pack(o + "IIIIHHIIII", index, ordinal, p.offset, p.size, p.align,
                           p.param_type, p.space_index, p.space_type, p.space, p.resv)
        out.append(tlv(MetaType.PARAM_INFO, body, o))
    return out


def _kernel_tlvs(spec: KernelSpec, o: str) -> bytes:
    """The TLVs of one kernel in type order; ``o`` is the struct byte-order prefix."""
    u32 = lambda kind, v: tlv(kind, struct.pack(o + "I", v), o)  # noqa: E731
    out = []
    if spec.func_type is not None:
        out.append(u32(MetaType.KERNEL_TYPE, spec.func_type))
    if spec.cross_core_sync is not None:
        out.append(u32(MetaType.CROSS_CORE, spec.cross_core_sync))
    if spec.task_ratio is not None:
        out.append(tlv(MetaType.MIX_TASK_RATION, struct.pack(o + "HH", *spec.task_ratio), o))
    if spec.dfx_arg_count is not None:
        out.append(tlv(MetaType.DFX_TYPE, _dfx_value(spec.dfx_arg_count), o))
    if spec.share_mem_size is not None:
        out.append(u32(MetaType.COMPILER_ALLOC_UB_SIZE, spec.share_mem_size))
    if spec.min_stack_size is not None:
        out.append(u32(MetaType.SU_STACK_SIZE, spec.min_stack_size))
    if spec.early_start is not None:
        out.append(u32(MetaType.EARLY_START_ENABLE, 1 if spec.early_start else 0))
    if spec.aiv_type is not None:
        out.append(u32(MetaType.AIV_TYPE_FLAG, spec.aiv_type))
    if spec.function_entry is not None:  # flag + reserved, then the entry in host order
        value = (bytes([spec.function_entry_flag & 0xFF, 0, 0, 0])
                 + struct.pack("<Q", spec.function_entry))
        out.append(tlv(MetaType.FUNCTION_ENTRY_INFO, value, o))
    if spec.params is not None:
        out.extend(_param_records(spec, o))
    if spec.sched_mode is not None:
        out.append(u32(MetaType.SCHED_MODE_INFO, spec.sched_mode))
    out.extend(tlv(kind, value, o) for kind, value in spec.extra_tlvs)
    return b"".join(out)


class _StrTab:
    """A string table under construction (offset 0 is the empty string)."""

    def __init__(self):
        self.data = bytearray(b"\0")
        self.index: dict[str, int] = {"": 0}

    def add(self, s: str) -> int:
        if s not in self.index:
            self.index[s] = len(self.data)
            self.data += s.encode("utf-8", "surrogateescape") + b"\0"
        return self.index[s]


@dataclass
class _Section:
    name: str
    type: int
    flags: int = 0
    data: bytes = b""
    size: int | None = None  # NOBITS size
    align: int = 1
    link: int = 0
    info: int = 0
    entsize: int = 0
    offset: int = 0
    addr: int = 0


@dataclass
class _Layout:
    """Sections in header order plus where each symbol's bytes went."""
    sections: list[_Section] = field(default_factory=lambda: [_Section("", 0)])
    kernel_offsets: list[int] = field(default_factory=list)
    global_places: list[tuple[int, int]] = field(default_factory=list)  # (section index, offset)

    def add(self, sec: _Section) -> int:
        self.sections.append(sec)
        return len(self.sections) - 1


def _text_section(kernels: Sequence[KernelSpec], lay: _Layout) -> int:
    code = bytearray()
    for spec in kernels:
        code += bytes(_align(len(code), CODE_ALIGN) - len(code))
        lay.kernel_offsets.append(len(code))
        code += spec.code
    return lay.add(_Section(SECTION_TEXT, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, bytes(code),
                            align=TEXT_ALIGN))


def _global_sections(globals_: Sequence[GlobalSpec], lay: _Layout) -> None:
    """.rodata, .data, .bss (each only if used); records each global's (section, offset)."""
    groups = {SECTION_RODATA: bytearray(), SECTION_DATA: bytearray(), SECTION_BSS: 0}
    places = []
    for g in globals_:
        key = SECTION_BSS if g.bss else SECTION_RODATA if g.readonly else SECTION_DATA
        if key == SECTION_BSS:
            off = _align(groups[key], DATA_ALIGN)
            groups[key] = off + (g.size if g.size is not None else len(g.data))
        else:
            buf = groups[key]
            buf += bytes(_align(len(buf), DATA_ALIGN) - len(buf))
            off = len(buf)
            buf += g.data
        places.append((key, off))
    index = {}
    if groups[SECTION_RODATA]:
        index[SECTION_RODATA] = lay.add(_Section(SECTION_RODATA, SHT_PROGBITS, SHF_ALLOC,
                                                 bytes(groups[SECTION_RODATA]), align=DATA_ALIGN))
    if groups[SECTION_DATA] or any(k == SECTION_DATA for k, _ in places):
        index[SECTION_DATA] = lay.add(_Section(SECTION_DATA, SHT_PROGBITS, SHF_ALLOC | SHF_WRITE,
                                               bytes(groups[SECTION_DATA]), align=DATA_ALIGN))
    if any(k == SECTION_BSS for k, _ in places):
        index[SECTION_BSS] = lay.add(_Section(SECTION_BSS, SHT_NOBITS, SHF_ALLOC | SHF_WRITE,
                                              size=groups[SECTION_BSS], align=DATA_ALIGN))
    lay.global_places = [(index[k], off) for k, off in places]


def _meta_sections(kernels, runtime_implicit, binary_meta, stack_size, stack_count, o, lay) -> None:
    for spec in kernels:
        body = _kernel_tlvs(spec, o)
        if body:
            lay.add(_Section(SECTION_META_PREFIX.decode() + spec.name, SHT_NOTE, data=body,
                             align=NOTE_ALIGN))
    records = [tlv(BinaryMetaType.RUNTIME_IMPLICIT_INFO, struct.pack("<I", kind), o)
               for kind in runtime_implicit]
    records += [tlv(kind, value, o) for kind, value in binary_meta]
    if records:
        lay.add(_Section(SECTION_BINARY_META.decode(), SHT_NOTE, data=b"".join(records),
                         align=NOTE_ALIGN))
    if stack_size is not None:
        count = stack_count if stack_count is not None else max(len(kernels), 1)
        lay.add(_Section(SECTION_STACK_RECORD.decode(), SHT_PROGBITS,
                         data=struct.pack(f"{o}{count}Q", *([stack_size] * count)), align=8))


def _dynamic_sections(so_name: str, o: str, lay: _Layout) -> None:
    dynstr = _StrTab()
    name_off = dynstr.add(so_name)
    i = lay.add(_Section(SECTION_DYNSTR, SHT_STRTAB, data=bytes(dynstr.data)))
    entries = struct.pack(o + "qQqQ", DT_SONAME, name_off, DT_NULL, 0)
    lay.add(_Section(SECTION_DYNAMIC, SHT_DYNAMIC, data=entries, align=8, link=i,
                     entsize=DYN_SIZE))


def _symbol_sections(kernels, globals_, text_index: int, big_endian: bool, o: str,
                     lay: _Layout) -> None:
    """.symtab (locals first, as ELF requires) and .strtab."""
    strtab = _StrTab()
    syms = []  # (binding, packed-without-name-order)
    for spec, off in zip(kernels, lay.kernel_offsets):
        info = (spec.binding << 4) | spec.symbol_type
        syms.append((spec.binding, strtab.add(spec.name), info, spec.visibility, text_index,
                     off, len(spec.code)))
    for g, (sec_index, off) in zip(globals_, lay.global_places):
        size = g.size if g.size is not None else len(g.data)
        syms.append((g.binding, strtab.add(g.name), (g.binding << 4) | STT_OBJECT, STV_DEFAULT,
                     sec_index, lay.sections[sec_index].addr + off, size))
    syms.sort(key=lambda s: s[0] != STB_LOCAL)  # stable: locals first
    first_global = 1 + sum(1 for s in syms if s[0] == STB_LOCAL)
    table = bytes(SYM_SIZE) + b"".join(
        struct.pack(o + "IBBHQQ", name, info, other, shndx, value, size)
        for _, name, info, other, shndx, value, size in syms)
    strtab_index = len(lay.sections) + 1
    info = strtab_index if big_endian else first_global  # see the module docstring
    lay.add(_Section(SECTION_SYMTAB, SHT_SYMTAB, data=table, align=8, link=strtab_index,
                     info=info, entsize=SYM_SIZE))
    lay.add(_Section(SECTION_STRTAB, SHT_STRTAB, data=bytes(strtab.data)))


def _place(lay: _Layout) -> tuple[int, int]:
    """Assign file offsets (and ALLOC addresses); returns (end of data, text offset)."""
    pos = EHDR_SIZE
    text_offset = None
    for sec in lay.sections[1:]:
        pos = _align(pos, sec.align)
        sec.offset = pos
        if sec.flags & SHF_ALLOC:
            text_offset = pos if text_offset is None else text_offset
            sec.addr = pos - text_offset
        if sec.type != SHT_NOBITS:
            pos += len(sec.data)
    return pos, text_offset or 0


def _pack(lay: _Layout, end: int, machine: int, e_type: int, e_version: int, o: str,
          big_endian: bool) -> bytes:
    shstrtab = lay.sections[-1]
    shoff = _align(end, 8)
    ident = b"\x7fELF" + bytes([ELFCLASS64, ELFDATA2MSB if big_endian else ELFDATA2LSB,
                                EV_CURRENT]) + bytes(9)
    out = bytearray(ident + struct.pack(o + "HHIQQQIHHHHHH", e_type, machine, e_version, 0, 0,
                                        shoff, 0, EHDR_SIZE, 0, 0, SHDR_SIZE, len(lay.sections),
                                        len(lay.sections) - 1))
    for sec in lay.sections[1:]:
        if sec.type != SHT_NOBITS:
            out += bytes(sec.offset - len(out)) + sec.data
    out += bytes(shoff - len(out))
    names = _StrTab()
    offsets = [names.add(s.name) for s in lay.sections]
    assert bytes(names.data) == shstrtab.data
    for sec, name in zip(lay.sections, offsets):
        size = sec.size if sec.type == SHT_NOBITS else len(sec.data)
        out += struct.pack(o + "IIQQQQIIQQ", name, sec.type, sec.flags, sec.addr, sec.offset,
                           size, sec.link, sec.info, sec.align if sec.type else 0, sec.entsize)
    return bytes(out)


def write_elf(kernels: Sequence[KernelSpec], *, globals: Sequence[GlobalSpec] = (),
              so_name: str | None = None, stack_size: int | None = None,
              stack_record_count: int | None = None, e_machine: int = AICORE_MACHINE,
              e_type: int = ET_EXEC, e_version: int = EV_CURRENT,
              runtime_implicit: Sequence[int] = (), binary_meta: Sequence[tuple[int, bytes]] = (),
              extra_sections: Sequence[SectionSpec] = (), big_endian: bool = False) -> bytes:
    """An Ascend kernel ELF holding ``kernels`` (code in .text, in order) and ``globals``.

    ``stack_size``: write ``.ascend.stack.size.record`` (one u64 per kernel, or
    ``stack_record_count``); ``runtime_implicit``: RUNTIME_IMPLICIT_INFO types for ``.ascend.meta``
    (1 printf FIFO, 2 FFTS address ...), ``binary_meta`` further raw TLVs there; ``so_name``: a
    ``.dynamic`` DT_SONAME; ``e_machine`` 183 marks an AICPU binary (on chips that honour it).
    """
    o = ">" if big_endian else "<"
    lay = _Layout()
    text_index = _text_section(kernels, lay)
    _global_sections(globals, lay)
    _meta_sections(kernels, runtime_implicit, binary_meta, stack_size, stack_record_count, o, lay)
    if so_name is not None:
        _dynamic_sections(so_name, o, lay)
    for extra in extra_sections:
        lay.add(_Section(extra.name, extra.type, extra.flags, extra.data))
    # addresses of ALLOC sections are needed for symbol values: place once before the symtab
    _place(lay)
    _symbol_sections(kernels, globals, text_index, big_endian, o, lay)
    names = _StrTab()
    for sec in lay.sections:
        names.add(sec.name)
    names.add(SECTION_SHSTRTAB)
    lay.add(_Section(SECTION_SHSTRTAB, SHT_STRTAB, data=bytes(names.data)))
    end, _ = _place(lay)
    return _pack(lay, end, e_machine, e_type, e_version, o, big_endian)
