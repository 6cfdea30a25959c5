"""Parse an Ascend kernel ELF exactly as the runtime does (spec/kernel.md §1, §2.3, §9).

What this reproduces: ``ProcessObject`` (src/runtime/core/src/kernel/elf.cc) driven by
``ElfProgram::ParserBinary`` and then ``ElfProgram::RegisterAllKernelCommon`` /
``UnifiedKernelRegister`` (src/runtime/core/src/kernel/program.cc): header checks, section headers,
the device image ("text region"), symbols -> kernels, ``.ascend.meta.<kernel>`` TLVs,
``.ascend.meta``, ``.ascend.stack.size.record``, the so name, global variables, the merge of
``_mix_aic``/``_mix_aiv`` pairs and the entry-key (tiling key / function entry) table.

The ELF reader is split like pyelftools: the layouts (struct fields, constants, TLV type tables)
are declared once in :mod:`npusim.kernel.elflayout`, the result records in
:mod:`npusim.kernel.elftypes`, registration (program.cc) in :mod:`npusim.kernel.elfregister`;
this module is the reader (elf.cc) and the entry points :func:`parse_elf` and
:func:`register_kernels`. The names of all four are importable from here.

Why not pyelftools for the parse itself: the runtime's reader is not a standard ELF reader and
programs observe its quirks -- the ``\\x7fELF`` magic is never checked, ``EI_DATA`` values other
than 2 read little-endian, ``sh_link``/``sh_info`` are read as 8-byte fields and truncated (so a
big-endian file resolves a section's link through its ``sh_info`` bytes), TLV values are read at
fixed struct offsets whatever their declared length, and some fields are read in host order.
pyelftools rejects or normalises all of that, so it is used where a standard reader helps: in
:mod:`npusim.kernel.elfview` (``npusim elf FILE``), which puts pyelftools' view of a file next to
this one and lists where they disagree, and in the tests, to check that ``elfwrite`` produces
standard ELF.

Out-of-bounds reads: where the C code reads past its buffer (undefined behaviour), this module reads
the file's own bytes when they exist and zeros past the end of the file; every loop whose count
comes from the file is bounded by the file size, so no input can hang the parser.

Error codes (every failure raises :class:`ElfError`; ``code`` is what ``aclrtBinaryLoadFromData`` /
``aclrtBinaryGetFunction`` return for it)::

  107000 ACL_ERROR_RT_PARAM_INVALID -- every parse and registration failure:
         empty data (program.cc ``Program::Register``: data null / length 0 ->
         RT_ERROR_INVALID_VALUE);
         ``ProcessObject`` returning null (program.cc ``ElfProgram::ParserBinary``:
         NULL_PTR_RETURN_MSG_OUTER_WITH_FUNC_DESC(kernels_, RT_ERROR_INVALID_VALUE)), i.e.
         EI_CLASS != 2 (elf.cc ``GetFileHeader``), e_shentsize/e_shnum/section bounds/sh_link
         (``Get64bitSectionHeaders``), .shstrtab out of the file (``GetStringTable``), text size
         overflow (``ProcessSymbolTable``), no usable SHT_SYMTAB, string table out of the file,
         no STT_FUNC symbol, st_name beyond the string table (``GetKernels``), PARAM count/ordinal,
         SU stack size, function-entry flag, sched mode, task ratio (``UpdateKernelsInfo``);
         and registration (program.cc ``RegisterAllKernelCommon``: empty stripped name,
         ``GetKernelTypeAndMixType`` funcType 4/5 without a mix suffix, ``MergeKernel`` conflicts
         -> RT_ERROR_INVALID_VALUE; binary_loader.cc ``LoadNonCpu`` returns it unchanged).
  507000 ACL_ERROR_RT_INTERNAL_ERROR -- an empty device image at device-load time
         (runtime.cc ``Runtime::BinaryLoad``: LoadSize() == 0 -> RT_ERROR_PROGRAM_SIZE), raised by
         :meth:`ElfImage.device_image`, never by the parse (a binary without ALLOC data loads fine
         and fails at the first aclrtBinaryGetFunction).
  Decisions where the C code has undefined behaviour (all documented next to the code below):
         a symtab whose sh_link == e_shnum (reads one header past the array) -> 107000;
         e_shstrndx >= e_shnum for the metadata name lookup -> no section names, metadata skipped;
         a section / symbol name offset past its string table -> empty name (symbols: skipped);
         globals with no symbol string table -> none; an so name starting past the file -> none;
         param slots never described by a PARAM_INFO (count matches, ordinals repeat) -> zeros.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Iterable

from .elflayout import (  # noqa: F401  (names other modules import from here are re-exported)
    DEFAULT_TASK_RATION, DEFAULT_USER_ARGS_NUM, DFX_NESTED_UNIT, DT_NULL, DT_SONAME, DYN,
    DYN_SIZE, EHDR, EHDR_SIZE, EI_CLASS, EI_DATA, ELF_VERSION_MAGIC, ELFCLASS64, ELFDATA2MSB,
    EM_AARCH64, FUNCTION_ENTRY_DISABLE, FUNCTION_ENTRY_ENABLE, FUNCTION_ENTRY_VALUE,
    IMPLICIT_INFO_VALUE, META_FLAG_MAX_TYPE, META_FLAG_SYMBOLS, MIX_AIC_SUFFIX, MIX_AIV_SUFFIX,
    NAME_MAX_LENGTH, ONE_WORD, PARAM_INFO_VALUE, PARAM_INFO_VALUE_SIZE, PARAM_SUMMARY_VALUE,
    SCHED_MODE_END, SECTION_BINARY_META, SECTION_DATA, SECTION_DYNAMIC, SECTION_DYNSTR,
    SECTION_META_PREFIX, SECTION_STACK_RECORD, SHDR, SHDR_SIZE, SHF_ALLOC, SHT_DYNAMIC,
    SHT_NOBITS, SHT_NOTE, SHT_PROGBITS, SHT_STRTAB, SHT_SYMTAB, STACK_RECORD_ENTRY,
    STACK_SIZE_16K, STACK_SIZE_32K, STACK_TYPE_TO_SIZE, STB_GLOBAL, STT_FUNC, STT_OBJECT,
    STV_HIDDEN, SYM, SYM_SIZE, TASK_RATIO_VALUE, TASK_RATION_BY_RATIO, TLV_HEAD, TLV_HEAD_SIZE,
    U16, U32, U64, AttrType, BinaryMetaType, EntryType, Field, FuncType, MetaType, MixType,
)
from .elfregister import (  # noqa: F401  (re-exported)
    build_entry_table, build_kernels, kernel_type_and_mix, program_attr_type, strip_mix_suffix,
    tiling_key,
)
from .elftypes import (  # noqa: F401  (re-exported)
    FEATURES_910B, FEATURES_950, FEATURES_BY_CHIP_TYPE, FEATURES_CLOUD, FEATURES_DC, ElfError,
    ElfFeatures, ElfImage, ElfKernel, ElfSection, ElfSymbol, KernelMeta, ParamInfo, decode_name,
    encode_name, features_for, invalid,
)


# ---- the byte reader (GetByte / ByteGetLittleEndian / ByteGetBigEndian)
class _Reader:
    """Reads unsigned fields at absolute file offsets, zeros past the end of the file."""

    def __init__(self, data: bytes):
        self.data = data
        self.size = len(data)
        ei_data = data[EI_DATA] if self.size > EI_DATA else 0
        self.order = "big" if ei_data == ELFDATA2MSB else "little"  # SetGetByteFunc

    def raw(self, pos: int, n: int) -> bytes:
        chunk = self.data[pos:pos + n] if 0 <= pos < self.size else b""
        return chunk + bytes(n - len(chunk))

    def u(self, pos: int, n: int) -> int:
        """GetByte(field, n): sizes 1..8 only, anything else reads 0."""
        if not 1 <= n <= 8:
            return 0
        if 0 <= pos and pos + n <= self.size:  # the common case, without padding
            return int.from_bytes(self.data[pos:pos + n], self.order)
        return int.from_bytes(self.raw(pos, n), self.order)

    def host(self, pos: int, n: int) -> int:
        """A field the C code dereferences directly: host (little-endian) order."""
        return int.from_bytes(self.raw(pos, n), "little")

    def be(self, pos: int, n: int) -> int:
        return int.from_bytes(self.raw(pos, n), "big")

    def field(self, base: int, f: Field) -> int:
        """Field ``f`` of the struct at ``base``, in the file's order."""
        return self.u(base + f.offset, f.size)

    def clip(self, pos: int, n: int) -> int:
        """How many of ``n`` bytes at ``pos`` lie inside the file."""
        return max(0, min(n, self.size - pos)) if pos < self.size else 0


def _cstr(table: bytes, off: int, limit: int | None = None) -> bytes:
    """C string at ``off`` of a NUL-terminated table copy; out of range -> b"" (decision)."""
    if off >= len(table):
        return b""
    end = table.find(b"\0", off)
    end = len(table) if end < 0 else end
    if limit is not None:
        end = min(end, off + limit)
    return table[off:end]


def _in_file(sec: ElfSection, size: int) -> bool:
    """The bounds test elf.cc repeats for string tables and .dynamic."""
    return not (sec.offset > size or sec.size > size or sec.offset + sec.size > size)


# ---- per-kernel metadata (ParseKernelMetaData / GetKernelTlvInfo / ElfParseTlvInfo)
@dataclass
class _KernelInfo:
    """ElfKernelInfo as value-initialised by ParseKernelMetaData (userArgsNum 0)."""
    dfx_offset: int
    dfx_size: int
    ei_data: int
    func_type: int = 0
    cross_core_sync: int = 0
    task_ratio: tuple[int, int] = (0, 0)
    user_args_num: int = 0
    kernel_vf_type: int = 0
    share_mem_size: int = 0
    min_stack_size: int = 0
    early_start: bool = False
    entry_supported: bool = False
    entry_flag: int = FUNCTION_ENTRY_DISABLE
    function_entry: int = 0
    sched_mode: int = 0
    has_param_summary: bool = False
    param_count: int = 0
    param_total_size: int = 0
    cached_params: list[ParamInfo] = field(default_factory=list)
    tlvs: list[tuple[int, bytes]] = field(default_factory=list)


def _iter_tlvs(rd: _Reader, start: int, length: int) -> Iterable[tuple[int, int, int]]:
    """(type, value length, TLV position) of each TLV that fits; stops at the first overrun.
    The section is clipped to the file, so the loop is bounded by the file size."""
    remain = rd.clip(start, length)
    pos = start
    while remain > TLV_HEAD_SIZE:
        t, n = rd.field(pos, TLV_HEAD.type), rd.field(pos, TLV_HEAD.length)
        if TLV_HEAD_SIZE + n > remain:
            return
        yield t, n, pos
        pos += TLV_HEAD_SIZE + n
        remain -= TLV_HEAD_SIZE + n


def _dfx_user_args(rd: _Reader, pos: int) -> int | None:
    """ElfParseKernelArgNum: nested big-endian TLVs in 8-byte units; the budget is the outer
    length - 4 (u16), so the last item usually is not counted. None = length 0, unchanged."""
    length = rd.field(pos, TLV_HEAD.length)
    if length == 0:
        return None
    cur, remain, count = pos + TLV_HEAD_SIZE, (length - TLV_HEAD_SIZE) & U16, 1
    while remain > TLV_HEAD_SIZE and cur < rd.size:  # past EOF only zero items: nothing counts
        t = rd.be(cur + TLV_HEAD.type.offset, TLV_HEAD.type.size)
        n = (rd.be(cur + TLV_HEAD.length.offset, TLV_HEAD.length.size) * DFX_NESTED_UNIT) & U16
        if TLV_HEAD_SIZE + n > remain:
            break
        count += t == MetaType.DFX_ARG_INFO
        cur += TLV_HEAD_SIZE + n
        remain -= TLV_HEAD_SIZE + n
    return count & U16


def _param_info(rd: _Reader, v: int) -> ParamInfo:
    """ElfParamBody at the value start ``v`` (PARAM_INFO_VALUE names the ParamInfo fields)."""
    return ParamInfo(**{name: rd.field(v, f) for name, f in PARAM_INFO_VALUE._asdict().items()})


def _apply_tlv(rd: _Reader, info: _KernelInfo, t: int, n: int, p: int) -> None:
    """ElfParseTlvInfo: fields at fixed struct offsets from the TLV start ``p``, whatever ``n``."""
    v = p + TLV_HEAD_SIZE
    if t == MetaType.KERNEL_TYPE:
        info.func_type = rd.field(v, ONE_WORD.value)
    elif t == MetaType.CROSS_CORE:
        info.cross_core_sync = rd.field(v, ONE_WORD.value)
    elif t == MetaType.MIX_TASK_RATION:
        info.task_ratio = (rd.field(v, TASK_RATIO_VALUE.aic), rd.field(v, TASK_RATIO_VALUE.aiv))
    elif t == MetaType.DFX_TYPE:
        args = _dfx_user_args(rd, p)
        info.user_args_num = info.user_args_num if args is None else args
    elif t == MetaType.AIV_TYPE_FLAG:
        info.kernel_vf_type = rd.field(v, ONE_WORD.value)
    elif t == MetaType.COMPILER_ALLOC_UB_SIZE:
        info.share_mem_size = rd.field(v, ONE_WORD.value)
    elif t == MetaType.SU_STACK_SIZE:
        info.min_stack_size = rd.u(v, n) & U32  # read with the TLV length as field size
    elif t == MetaType.EARLY_START_ENABLE:
        info.early_start = rd.field(v, ONE_WORD.value) == 1
    elif t == MetaType.FUNCTION_ENTRY_INFO:  # flag and entry read raw (host order)
        info.entry_supported = True
        flag, entry = FUNCTION_ENTRY_VALUE
        info.entry_flag = rd.host(v + flag.offset, flag.size)
        info.function_entry = rd.host(v + entry.offset, entry.size)
    elif t == MetaType.SCHED_MODE_INFO:
        info.sched_mode = rd.u(v, n) & U32
    elif t == MetaType.PARAM_SUMMARY:
        info.has_param_summary = True
        info.param_count = rd.field(v, PARAM_SUMMARY_VALUE.count)
        info.param_total_size = rd.field(v, PARAM_SUMMARY_VALUE.total_size)
    elif t == MetaType.PARAM_INFO:
        info.cached_params.append(_param_info(rd, v))


def _parse_kernel_info(rd: _Reader, sec: ElfSection) -> _KernelInfo:
    info = _KernelInfo(dfx_offset=sec.offset, dfx_size=sec.size & U16,
                       ei_data=rd.raw(EI_DATA, 1)[0])
    for t, n, p in _iter_tlvs(rd, sec.offset, sec.size & U32):
        info.tlvs.append((t, rd.raw(p + TLV_HEAD_SIZE, n)))
        _apply_tlv(rd, info, t, n, p)
    if info.kernel_vf_type == 0:
        info.share_mem_size = 0
    return info


def _raw_tlvs(rd: _Reader, sec: ElfSection, length: int) -> tuple[tuple[int, bytes], ...]:
    tlvs = _iter_tlvs(rd, sec.offset, length)
    return tuple((t, rd.raw(p + TLV_HEAD_SIZE, n)) for t, n, p in tlvs)


# ---- the object parse (ProcessObject)
@dataclass
class _Parse:
    """Mutable state of one ProcessObject run (the runtime's rtElfData)."""
    rd: _Reader
    features: ElfFeatures
    machine: int = 0
    elf_type: int = 0
    e_version: int = 0
    shoff: int = 0
    shentsize: int = 0
    shnum: int = 0
    shstrndx: int = 0
    sections: list[ElfSection] = field(default_factory=list)
    text_offset: int = 0
    text_size: int = 0
    data_flag: bool = False
    stack_size: int = 0
    meta_flag: int = 0
    kernel_infos: dict[bytes, _KernelInfo] = field(default_factory=dict)
    binary_meta: tuple[tuple[int, bytes], ...] | None = None
    function_meta: dict[str, tuple[tuple[int, bytes], ...]] = field(default_factory=dict)
    so_name: str | None = None
    globals: dict[str, tuple[int, int]] = field(default_factory=dict)
    objects: list[tuple[str, int, int]] = field(default_factory=list)
    runtime_symbols: dict[str, int] = field(default_factory=dict)
    symbols: list[ElfSymbol] = field(default_factory=list)


def _read_header(st: _Parse) -> None:
    """GetFileHeader: only EI_CLASS is checked; the magic is not (kernel.md §9.1)."""
    rd = st.rd
    if rd.raw(EI_CLASS, 1)[0] != ELFCLASS64:
        raise invalid("the ELF file must be a 64-bit file (EI_CLASS != 2)")
    st.elf_type, st.machine = rd.field(0, EHDR.e_type), rd.field(0, EHDR.e_machine)
    st.e_version, st.shoff = rd.field(0, EHDR.e_version), rd.field(0, EHDR.e_shoff)
    st.shentsize, st.shnum = rd.field(0, EHDR.e_shentsize), rd.field(0, EHDR.e_shnum)
    st.shstrndx = rd.field(0, EHDR.e_shstrndx)


def _read_section_headers(st: _Parse) -> None:
    """Get64bitSectionHeaders: e_shentsize 64, e_shnum > 0, each header inside the file,
    sh_link <= e_shnum. sh_link/sh_info are 8-byte reads truncated to 32 bits."""
    rd = st.rd
    if st.shentsize == 0 or st.shnum == 0:
        raise invalid(f"e_shentsize {st.shentsize} / e_shnum {st.shnum} must not be 0")
    if st.shentsize != SHDR_SIZE:
        raise invalid(f"e_shentsize {st.shentsize} must be {SHDR_SIZE}")
    for i in range(st.shnum):
        h = st.shoff + SHDR_SIZE * i
        if h + SHDR_SIZE > rd.size:
            raise invalid(f"section header {i} ends at {h + SHDR_SIZE}, beyond the file "
                          f"({rd.size})")
        link = rd.u(h + SHDR.sh_link.offset, 8) & U32  # 8-byte read of a 4-byte field
        if link > st.shnum:
            raise invalid(f"sh_link {link} of section {i} is out of [0, {st.shnum}]")
        st.sections.append(ElfSection(
            index=i, name="", name_offset=rd.field(h, SHDR.sh_name),
            type=rd.field(h, SHDR.sh_type), flags=rd.field(h, SHDR.sh_flags),
            addr=rd.field(h, SHDR.sh_addr), offset=rd.field(h, SHDR.sh_offset),
            size=rd.field(h, SHDR.sh_size), link=link,
            info=rd.u(h + SHDR.sh_info.offset, 8) & U32,  # 8-byte read of a 4-byte field
            addralign=rd.field(h, SHDR.sh_addralign), entsize=rd.field(h, SHDR.sh_entsize)))


def _table(rd: _Reader, sec: ElfSection) -> bytes:
    """GetStringTableCopy: the section bytes plus a terminating NUL."""
    return rd.data[sec.offset:sec.offset + sec.size] + b"\0"


def _section_name_table(st: _Parse) -> bytes | None:
    """GetStringTable (e_shstrndx in (0, e_shnum)): used for section names generally and for
    .dynstr/.dynamic; a table outside the file fails the load."""
    if not 0 < st.shstrndx < st.shnum:
        return None
    sec = st.sections[st.shstrndx]
    if sec.size == 0:
        return None
    if not _in_file(sec, st.rd.size):
        raise invalid(f"section name table [{sec.offset}, +{sec.size}) is outside the file")
    return _table(st.rd, sec)


def _meta_name_table(st: _Parse) -> bytes | None:
    """The table ParseKernelMetaData/GetMetaSection use: section e_shstrndx *unchecked* (0 is
    section 0; >= e_shnum is undefined -> decision: no names); out of the file -> skipped."""
    if st.shstrndx >= st.shnum:
        return None
    sec = st.sections[st.shstrndx]
    if sec.size == 0 or not _in_file(sec, st.rd.size):
        return None
    return _table(st.rd, sec)


def _named(sections: list[ElfSection], names: bytes | None) -> list[ElfSection]:
    """Attach names from the GetStringTable view (sh_name must be inside the table)."""
    if names is None:
        return sections
    return [dataclasses.replace(s, name=decode_name(_cstr(names, s.name_offset)))
            if s.name_offset < len(names) - 1 else s for s in sections]


def _text_region(st: _Parse) -> None:
    """ProcessSymbolTable: ALLOC sections with data define [text_offset, text_offset+text_size).
    text_offset is (re)taken from any ALLOC section while it is still 0."""
    for sec in st.sections:
        if not (sec.flags & SHF_ALLOC and sec.size > 0):
            continue
        if st.text_offset == 0:
            st.text_offset = sec.offset
        if U64 - sec.size < (sec.offset - st.text_offset) & U64:
            raise invalid(f"text size of section {sec.index} overflows 64 bits")
        st.text_size = (sec.offset + sec.size - st.text_offset) & U64


def _dynamic_sections(st: _Parse,
                      names: bytes | None) -> tuple[ElfSection | None, ElfSection | None]:
    """get_dynamic_section: the last .dynstr (STRTAB) and .dynamic (DYNAMIC), by exact name."""
    dynstr = dynamic = None
    if names is None:
        return None, None
    for sec in st.sections:
        if sec.name_offset >= len(names) - 1:
            continue
        name = _cstr(names, sec.name_offset)
        if sec.type == SHT_STRTAB and name == SECTION_DYNSTR:
            dynstr = sec
        elif sec.type == SHT_DYNAMIC and name == SECTION_DYNAMIC:
            dynamic = sec
    return dynstr, dynamic


def _so_name(st: _Parse, dynstr: ElfSection | None, dynamic: ElfSection | None) -> None:
    """ProcessDynamicSection: the first DT_SONAME before DT_NULL; the string is not bounded by
    .dynstr (decision: a name starting past the end of the file is absent)."""
    rd = st.rd
    if dynstr is None or dynstr.size == 0 or dynamic is None or dynamic.size == 0:
        return
    if not _in_file(dynamic, rd.size):
        return
    tag, pos = DT_NULL, dynamic.offset
    for k in range(dynamic.size // DYN_SIZE):
        pos = dynamic.offset + DYN_SIZE * k
        tag = rd.field(pos, DYN.d_tag)
        if tag in (DT_NULL, DT_SONAME):
            break
    if tag != DT_SONAME:
        return
    start = (dynstr.offset + rd.field(pos, DYN.d_val)) & U64
    if start < rd.size:
        st.so_name = decode_name(_cstr(rd.data, start))


def _stack_record(st: _Parse, sec: ElfSection) -> None:
    """ParseElfStackInfoFromSection: u64 array, first is 16K/32K and all equal. An entry past the
    end of the file reads 0 and ends the scan (so the loop is bounded by the file)."""
    rd, length = st.rd, sec.size & U32
    if length < STACK_RECORD_ENTRY or length % STACK_RECORD_ENTRY:
        return
    first = rd.u(sec.offset, STACK_RECORD_ENTRY)
    if first not in (STACK_SIZE_16K, STACK_SIZE_32K):
        return
    for i in range(1, length // STACK_RECORD_ENTRY):
        if rd.u(sec.offset + STACK_RECORD_ENTRY * i, STACK_RECORD_ENTRY) != first:
            return
    st.stack_size = first


def _binary_meta(st: _Parse, sec: ElfSection) -> None:
    """ParseElfBinaryMetaInfo: RUNTIME_IMPLICIT_INFO sets ascendMetaFlag bit (type-1)."""
    rd = st.rd
    for t, _, p in _iter_tlvs(rd, sec.offset, sec.size):
        if t == BinaryMetaType.RUNTIME_IMPLICIT_INFO:
            f = IMPLICIT_INFO_VALUE.kind
            kind = rd.host(p + TLV_HEAD_SIZE + f.offset, f.size)  # read raw (host order)
            if 1 <= kind <= META_FLAG_MAX_TYPE:
                st.meta_flag |= 1 << (kind - 1)


def _metadata_sections(st: _Parse) -> None:
    """ParseKernelMetaData for every PROGBITS/NOTE section, in header order."""
    table = _meta_name_table(st)
    if table is None:
        return
    for sec in st.sections:
        name = _cstr(table, sec.name_offset)  # sh_name unchecked: out of range -> "" (decision)
        _remember_meta_section(st, sec, name)
        if sec.type not in (SHT_PROGBITS, SHT_NOTE):
            continue
        if name == SECTION_DATA:
            st.data_flag = True
        if SECTION_META_PREFIX in name:
            kernel = name[len(SECTION_META_PREFIX):]
            if 0 < len(kernel) < NAME_MAX_LENGTH:
                st.kernel_infos[kernel] = _parse_kernel_info(st.rd, sec)  # last one wins
        elif SECTION_STACK_RECORD in name:
            _stack_record(st, sec)
        elif name == SECTION_BINARY_META:
            _binary_meta(st, sec)


def _remember_meta_section(st: _Parse, sec: ElfSection, name: bytes) -> None:
    """GetMetaSection view (any section type, first exact match) for the meta query APIs."""
    if name == SECTION_BINARY_META and st.binary_meta is None:
        st.binary_meta = _raw_tlvs(st.rd, sec, sec.size)
    elif name.startswith(SECTION_META_PREFIX):
        key = decode_name(name[len(SECTION_META_PREFIX):])
        st.function_meta.setdefault(key, _raw_tlvs(st.rd, sec, sec.size))


# ---- symbols (GetKernels / Get64bitElfSymbols / SetSymbolAddress)
@dataclass(frozen=True)
class _Sym:
    name: int
    info: int
    other: int
    shndx: int
    value: int
    size: int


def _read_symbols(st: _Parse, sec: ElfSection) -> list[_Sym] | None:
    """Get64bitElfSymbols: entries are 24-byte records whatever sh_entsize says; all must lie
    inside the file. None = this table is unusable (the next SHT_SYMTAB is tried)."""
    rd = st.rd
    if sec.size == 0 or sec.entsize == 0 or sec.entsize > sec.size:
        return None
    number = sec.size // sec.entsize
    if (number * SYM_SIZE) & U64 > (sec.size + 1) & U64:
        return None
    if sec.offset + SYM_SIZE * number > rd.size:
        return None
    syms = []
    for j in range(number):
        p = sec.offset + SYM_SIZE * j
        syms.append(_Sym(*(rd.field(p, f) for f in SYM)))
    return syms


def _object_symbols(st: _Parse, syms: list[_Sym], strtab: bytes | None) -> None:
    """GetSymbolName + SetSymbolAddress: STT_OBJECT symbols, stopping entirely at the first one
    whose st_shndx >= e_shnum. Without a string table: none (decision; the C code would
    dereference null)."""
    if strtab is None:
        return
    flagged = {bit: sym for bit, sym in META_FLAG_SYMBOLS.items() if st.meta_flag & bit}
    for sym in syms:
        if sym.info & 0xF != STT_OBJECT:
            continue
        if sym.shndx >= st.shnum:
            return
        if sym.name >= len(strtab):
            continue  # decision: a name outside the table is skipped
        name = decode_name(_cstr(strtab, sym.name))
        sec = st.sections[sym.shndx]
        host = (sym.value + sec.offset - sec.addr) & U64
        offset = (host - st.text_offset) & U64
        st.objects.append((name, host, sym.size & U32))
        if sym.info >> 4 == STB_GLOBAL:
            st.globals[name] = (offset, sym.size)
        if name in flagged.values():
            st.runtime_symbols[name] = offset


def _is_kernel_symbol(sym: _Sym) -> bool:
    """CheckKernelAttr: GLOBAL (not WEAK) FUNC, not hidden, named."""
    return (sym.info & 0xF == STT_FUNC and sym.info >> 4 == STB_GLOBAL
            and sym.other & 3 != STV_HIDDEN and sym.name != 0)


def _kernel_symbols(st: _Parse) -> None:
    """GetKernels: the first readable SHT_SYMTAB (sh_entsize != 0) gives the kernels."""
    for sec in st.sections:
        if sec.type != SHT_SYMTAB or sec.entsize == 0:
            continue
        syms = _read_symbols(st, sec)
        if syms is None:
            continue
        if sec.link >= st.shnum:
            raise invalid(f"symbol table {sec.index} links to section {sec.link} "
                        f"(e_shnum {st.shnum})")
        strsec = st.sections[sec.link]
        strtab = None
        if strsec.size != 0:
            if not _in_file(strsec, st.rd.size):
                raise invalid(f"symbol string table {strsec.index} is outside the file")
            strtab = _table(st.rd, strsec)
        _object_symbols(st, syms, strtab)
        if not any(s.info & 0xF == STT_FUNC for s in syms):
            raise invalid("the symbol table has no STT_FUNC symbol")
        for sym in syms:
            if not (_is_kernel_symbol(sym) and strtab is not None):
                continue
            if sym.name > strsec.size:
                raise invalid(f"st_name {sym.name} is beyond the string table ({strsec.size})")
            name = _cstr(strtab, sym.name, NAME_MAX_LENGTH)
            if len(name) >= NAME_MAX_LENGTH:
                continue
            st.symbols.append(ElfSymbol(decode_name(name), sym.value & U32, sym.size & U32))
        return
    raise invalid("no usable SHT_SYMTAB section")


# ---- UpdateKernelsInfo
def _params(info: _KernelInfo, name: str) -> tuple[tuple[ParamInfo, ...], int, int]:
    """UpdateCachedParamInfos: with a summary of n > 0, exactly n PARAM_INFO with ordinal < n."""
    if not info.has_param_summary or info.param_count == 0:
        return (), 0, 0
    if len(info.cached_params) != info.param_count:
        raise invalid(f"kernel {name}: {len(info.cached_params)} PARAM_INFO for "
                    f"PARAM_SUMMARY count {info.param_count}")
    slots = [ParamInfo()] * info.param_count
    for p in info.cached_params:
        if p.ordinal >= info.param_count:
            raise invalid(f"kernel {name}: PARAM_INFO ordinal {p.ordinal} >= {info.param_count}")
        slots[p.ordinal] = p
    return tuple(slots), info.param_count, info.param_total_size


def _entry(info: _KernelInfo, name: str) -> tuple[int, int]:
    """SetKernelFunctionEntry: flag 0x00 -> FUNCTION_ENTRY, 0x80 -> NOT_SUPPORT, else fail."""
    if not info.entry_supported:
        return EntryType.TILING_KEY, 0
    if info.entry_flag == FUNCTION_ENTRY_ENABLE:
        return EntryType.FUNCTION_ENTRY, info.function_entry
    if info.entry_flag == FUNCTION_ENTRY_DISABLE:
        return EntryType.NOT_SUPPORT_FUNCTION_ENTRY, 0
    raise invalid(f"kernel {name}: FUNCTION_ENTRY_INFO flag {info.entry_flag:#x} is invalid")


def _task_ration(info: _KernelInfo, name: str, features: ElfFeatures) -> int:
    """ConvertTaskRation, only for a present ratio on chips with the feature."""
    if info.task_ratio == (0, 0) or not features.task_ration:
        return DEFAULT_TASK_RATION
    if info.task_ratio not in TASK_RATION_BY_RATIO:
        raise invalid(f"kernel {name}: task ratio {info.task_ratio[0]}:{info.task_ratio[1]} "
                      f"invalid")
    return TASK_RATION_BY_RATIO[info.task_ratio]


def _kernel_meta(info: _KernelInfo, name: str, features: ElfFeatures) -> KernelMeta:
    params, count, total = _params(info, name)
    min_stack = 0
    if features.su_stack_size:
        min_stack = info.min_stack_size
        if min_stack > features.customer_stack_size:
            raise invalid(f"kernel {name}: min stack size {min_stack} > process stack size "
                        f"{features.customer_stack_size}")
    entry_type, entry = _entry(info, name)
    if info.sched_mode >= SCHED_MODE_END:
        raise invalid(f"kernel {name}: sched mode {info.sched_mode} is not 0 or 1")
    return KernelMeta(
        has_meta=True, func_type=info.func_type, cross_core_sync=info.cross_core_sync,
        task_ration=_task_ration(info, name, features), task_ratio=info.task_ratio,
        user_args_num=info.user_args_num, kernel_vf_type=info.kernel_vf_type,
        share_mem_size=info.share_mem_size, min_stack_size=min_stack,
        early_start=info.early_start, func_entry_type=entry_type, function_entry=entry,
        sched_mode=info.sched_mode, has_param_summary=info.has_param_summary,
        param_count=count, param_total_size=total, params=params, dfx_offset=info.dfx_offset,
        dfx_size=info.dfx_size, ei_data=info.ei_data, tlvs=tuple(info.tlvs))


def _attach_meta(st: _Parse) -> None:
    """UpdateKernelsInfo: match meta sections to symbols by full name, in symbol order."""
    for i, sym in enumerate(st.symbols):
        info = st.kernel_infos.get(encode_name(sym.name))
        if info is not None:
            st.symbols[i] = dataclasses.replace(sym, meta=_kernel_meta(info, sym.name, st.features))


# ---- entry points
def _parse_object(data: bytes, features: ElfFeatures) -> _Parse:
    """ProcessObject: header, sections, text region, metadata, so name, symbols, meta -> symbols."""
    st = _Parse(rd=_Reader(data), features=features)
    _read_header(st)
    _read_section_headers(st)
    names = _section_name_table(st)
    st.sections = _named(st.sections, names)
    _text_region(st)
    _metadata_sections(st)
    if st.stack_size == 0 and features.stack_in_version and \
            (st.e_version >> 16) & U16 == ELF_VERSION_MAGIC:  # ParseElfStackInfoHeader
        st.stack_size = STACK_TYPE_TO_SIZE.get((st.e_version >> 8) & 0xFF, 0)
    _so_name(st, *_dynamic_sections(st, names))
    _kernel_symbols(st)
    if st.kernel_infos:
        _attach_meta(st)
    return st


def _nobits_ranges(st: _Parse, load_size: int) -> tuple[tuple[int, int], ...]:
    out = []
    for sec in st.sections:
        if sec.type == SHT_NOBITS and sec.flags & SHF_ALLOC and sec.size > 0:
            lo = sec.offset - st.text_offset
            lo, hi = max(lo, 0), min(lo + sec.size, load_size)
            if lo < hi:
                out.append((lo, hi))
    return tuple(out)


def _to_bytes(data) -> bytes:
    try:
        raw = bytes(data)
    except Exception as exc:  # not bytes-like: the C API would get a bad pointer
        raise invalid(f"binary data is not bytes-like ({type(data).__name__})") from exc
    if not raw:
        raise invalid("binary size can not be 0")
    return raw


def parse_elf(data, features=FEATURES_910B, initial_attr_type: int | None = None) -> ElfImage:
    """Parse and register one kernel binary, as aclrtBinaryLoadFromData does up to the point
    where the program is complete (nothing is copied to the device here).

    ``features``: an :class:`ElfFeatures` or a chip profile (see :func:`features_for`).
    ``initial_attr_type``: the program's kernel type before the parse (from a load-option magic);
    None = the chip default. Raises :class:`ElfError` and nothing else.
    """
    if not isinstance(features, ElfFeatures):
        features = features_for(features)
    try:
        raw = _to_bytes(data)
        st = _parse_object(raw, features)
        attr = program_attr_type(st.machine, features, initial_attr_type)
        kernels = build_kernels(st.symbols, attr, features)
        return _image(st, raw, kernels, attr)
    except ElfError:
        raise
    except Exception as exc:  # a bug here must still honour the one-exception contract
        raise invalid(f"unexpected: {type(exc).__name__}: {exc}") from exc


def register_kernels(image: ElfImage, default_attr_type: int,
                     features: ElfFeatures = FEATURES_910B) -> ElfImage:
    """Re-run registration with another program default type (e.g. a companion JSON "magic",
    which binary_loader.cc applies after the parse and before UnifiedKernelRegister)."""
    try:
        kernels = build_kernels(image.symbols, default_attr_type, features)
        return dataclasses.replace(image, kernels=kernels, entries=build_entry_table(kernels),
                                   default_attr_type=default_attr_type)
    except ElfError:
        raise
    except Exception as exc:
        raise invalid(f"unexpected: {type(exc).__name__}: {exc}") from exc


def _image(st: _Parse, raw: bytes, kernels: tuple[ElfKernel, ...], attr: int) -> ElfImage:
    load_size = st.text_size & U32  # ElfProgram::LoadSize returns uint32_t
    so = st.so_name
    return ElfImage(
        machine=st.machine, elf_type=st.elf_type, ei_data=raw[EI_DATA] if len(raw) > EI_DATA else 0,
        e_version=st.e_version, sections=tuple(st.sections), image_offset=st.text_offset,
        text_size=st.text_size, load_size=load_size, nobits=_nobits_ranges(st, load_size),
        read_only=False if st.features.data_read_only else not st.data_flag,
        symbols=tuple(st.symbols), kernels=kernels, entries=build_entry_table(kernels),
        default_attr_type=attr, globals=dict(st.globals), objects=tuple(st.objects),
        runtime_symbols=dict(st.runtime_symbols), so_name=so,
        metadata=f"{so},0.1,,exclusive;" if so is not None else "",
        stack_size=st.stack_size if st.features.stack_record else 0,
        elf_stack_size=st.stack_size, ascend_meta_flag=st.meta_flag,
        binary_meta=st.binary_meta or (), function_meta=dict(st.function_meta), data=raw)


__all__ = [
    "ElfError", "ElfFeatures", "FEATURES_910B", "FEATURES_950", "FEATURES_CLOUD", "FEATURES_DC",
    "features_for", "ElfSection", "ParamInfo", "KernelMeta", "ElfSymbol", "ElfKernel", "ElfImage",
    "MetaType", "BinaryMetaType", "FuncType", "AttrType", "MixType", "EntryType",
    "parse_elf", "register_kernels", "build_kernels", "build_entry_table", "program_attr_type",
    "strip_mix_suffix", "tiling_key", "kernel_type_and_mix", "META_FLAG_SYMBOLS",
]
