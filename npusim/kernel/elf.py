"""Parse an Ascend kernel ELF exactly as the runtime does (spec/kernel.md §1, §2.3, §9).

What this reproduces: ``ProcessObject`` (src/runtime/core/src/kernel/elf.cc) driven by
``ElfProgram::ParserBinary`` and then ``ElfProgram::RegisterAllKernelCommon`` /
``UnifiedKernelRegister`` (src/runtime/core/src/kernel/program.cc): header checks, section headers,
the device image ("text region"), symbols -> kernels, ``.ascend.meta.<kernel>`` TLVs,
``.ascend.meta``, ``.ascend.stack.size.record``, the so name, global variables, the merge of
``_mix_aic``/``_mix_aiv`` pairs and the entry-key (tiling key / function entry) table.

Why not pyelftools for the parse itself: the runtime's reader is not a standard ELF reader and
programs observe its quirks -- the ``\\x7fELF`` magic is never checked, ``EI_DATA`` values other
than 2 read little-endian, ``sh_link``/``sh_info`` are read as 8-byte fields and truncated (so a
big-endian file resolves a section's link through its ``sh_info`` bytes), TLV values are read at
fixed struct offsets whatever their declared length, and some fields are read in host order.
pyelftools rejects or normalises all of that, so it is used where it helps: in the tests, to check
that ``elfwrite`` produces standard ELF and that both readers agree on well-formed files.

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
from enum import IntEnum
from functools import cached_property
from typing import Iterable

from npusim.errors import ACL_ERROR_RT_INTERNAL_ERROR, ACL_ERROR_RT_PARAM_INVALID, AclError

# ---- ELF layout (elf.hpp; 64-bit only)
EHDR_SIZE = 64
SHDR_SIZE = 64
SYM_SIZE = 24
DYN_SIZE = 16
TLV_HEAD_SIZE = 4
EI_CLASS = 4
EI_DATA = 5
ELFCLASS64 = 2
ELFDATA2MSB = 2
SHT_PROGBITS = 1
SHT_SYMTAB = 2
SHT_STRTAB = 3
SHT_DYNAMIC = 6
SHT_NOTE = 7
SHT_NOBITS = 8
SHF_ALLOC = 0x2
STT_OBJECT = 1
STT_FUNC = 2
STB_GLOBAL = 1
STV_HIDDEN = 2
DT_NULL = 0
DT_SONAME = 14
NAME_MAX_LENGTH = 4096  # names of this length or longer are skipped
EM_AARCH64 = 183  # "AICPU machine" (program.cc ParserBinary)
U16, U32, U64 = 0xFFFF, 0xFFFF_FFFF, 0xFFFF_FFFF_FFFF_FFFF

# ---- section names (elf.cc anonymous namespace)
SECTION_DATA = b".data"
SECTION_META_PREFIX = b".ascend.meta."
SECTION_BINARY_META = b".ascend.meta"
SECTION_STACK_RECORD = b".ascend.stack.size.record"
SECTION_DYNSTR = b".dynstr"
SECTION_DYNAMIC = b".dynamic"
MIX_AIC_SUFFIX = "_mix_aic"
MIX_AIV_SUFFIX = "_mix_aiv"

# ---- metadata constants (elf.hpp, pkg_inc/runtime/rt_external_base.h)
DEFAULT_TASK_RATION = 2
DEFAULT_USER_ARGS_NUM = 128  # USER_ARGS_MAX_NUM: kernels without a meta section
FUNCTION_ENTRY_ENABLE = 0x00
FUNCTION_ENTRY_DISABLE = 0x80
SCHED_MODE_END = 2  # RT_SCHEM_MODE_NORMAL 0, BATCH 1
STACK_SIZE_16K = 16384
STACK_SIZE_32K = 32768
ELF_VERSION_MAGIC = 0x5A5A
STACK_TYPE_TO_SIZE = {1: STACK_SIZE_16K, 2: STACK_SIZE_32K}
TASK_RATION_BY_RATIO = {(1, 2): 2, (2, 1): 2, (1, 1): 1, (1, 0): 0, (0, 1): 0}  # (aic, aiv)
META_FLAG_MAX_TYPE = 32
PARAM_INFO_VALUE_SIZE = 36
DFX_NESTED_UNIT = 8  # nested DFX TLV lengths count 8-byte units


class MetaType(IntEnum):
    """TLV types of ``.ascend.meta.<kernel>`` (rtFunctionMetaType)."""
    KERNEL_TYPE = 1
    CROSS_CORE = 2
    MIX_TASK_RATION = 3
    DFX_TYPE = 4
    DFX_ARG_INFO = 5
    L0_EXCEPTION_DFX_IS_TIK = 6
    COMPILER_ALLOC_UB_SIZE = 7
    SU_STACK_SIZE = 8
    SIMT_WARP_STACK_SIZE = 9
    SIMT_DVG_WARP_STACK_SIZE = 10
    EARLY_START_ENABLE = 11
    AIV_TYPE_FLAG = 12
    DETERMINISTIC_INFO = 13
    FUNCTION_ENTRY_INFO = 14
    BLOCK_DIM_INFO = 15
    PARAM_SUMMARY = 16
    PARAM_INFO = 17
    SCHED_MODE_INFO = 18


class BinaryMetaType(IntEnum):
    """TLV types of the binary-level ``.ascend.meta`` section (rtBinaryMetaType)."""
    BIN_VERSION = 0
    DEBUG_INFO = 1
    DYNAMIC_PARAM = 2
    OPTIONAL_PARAM = 3
    RUNTIME_IMPLICIT_INFO = 4
    SK_INFO = 5


class FuncType(IntEnum):
    """KERNEL_TYPE values (elf.hpp KERNEL_FUNCTION_TYPE_*)."""
    INVALID = 0
    AICORE = 1
    AIC = 2
    AIV = 3
    MIX_AIC_MAIN = 4
    MIX_AIV_MAIN = 5
    AIC_ROLLBACK = 6
    AIV_ROLLBACK = 7


class AttrType(IntEnum):
    """rtKernelAttrType (pkg_inc/runtime/runtime/kernel.h)."""
    AICORE = 0
    CUBE = 1
    VECTOR = 2
    MIX = 3
    AICPU = 100


class MixType(IntEnum):
    """RtMixType (src/runtime/core/inc/runtime.hpp)."""
    NO_MIX = 0
    MIX_AIC = 1
    MIX_AIV = 2
    MIX_AIC_AIV_MAIN_AIC = 3
    MIX_AIC_AIV_MAIN_AIV = 4


class EntryType(IntEnum):
    """KernelFunctionEntryType: how a kernel is found by aclrtBinaryGetFunctionByEntry."""
    TILING_KEY = 0
    FUNCTION_ENTRY = 1
    NOT_SUPPORT_FUNCTION_ENTRY = 2


# ascendMetaFlag bit -> STT_OBJECT symbol the runtime patches with a device address at load
# (elf.cc SetSymbolAddress; bit 4 "assert" shares the printf FIFO symbol).
META_FLAG_SYMBOLS = {
    0x01: "g_sysPrintFifoSpace",
    0x02: "g_sysFftsAddr",
    0x04: "g_opL2CacheHintCfg",
    0x08: "g_sysSimtPrintFifoSpace",
    0x10: "g_sysPrintFifoSpace",
}


class ElfError(AclError):
    """The one failure type of this module: ``code`` is the ACL code the runtime returns."""


# ---- chip features that change the parse (dev_info_reg.cc feature lists, DevProperties)
@dataclass(frozen=True)
class ElfFeatures:
    """The chip facts the ELF parse and registration depend on.

    Why a separate record: :mod:`npusim.profiles` describes streams, events and timing; these are
    the ``RtOptionalFeatureType`` flags ``elf.cc``/``program.cc`` consult. :func:`features_for`
    maps a profile to them by its ``chip_type``.
    """
    cv_separated: bool = True
    """CV_ARCH_SEPARATION: chip default attr CUBE (else AICORE); merged mix kernels become MIX."""
    task_ration: bool = True
    """RT_FEATURE_KERNEL_TASK_RATION: MIX_TASK_RATION TLVs are validated and converted."""
    aicpu_machine: bool = False
    """RT_FEATURE_KERNEL_ELF_AICPU_MACHINE: e_machine 183 -> default AICPU, else AICORE."""
    su_stack_size: bool = True
    """RT_FEATURE_KERNEL_META_TYPE_SU_STACK_SIZE: SU_STACK_SIZE is kept and checked."""
    customer_stack_size: int = STACK_SIZE_32K
    """Runtime::GetDeviceCustomerStackSize (default 32 KiB; aclInit json can change it)."""
    stack_record: bool = True
    """RT_FEATURE_KERNEL_ELF_16K_STACK: the parsed stack size becomes the program's."""
    stack_in_version: bool = True
    """RT_FEATURE_KERNEL_ELF_INCLUDE_STACK_SIZE: e_version may carry the stack size."""
    data_read_only: bool = False
    """RT_FEATURE_KERNEL_DATA_READ_ONLY: the image is never advised read-only."""

    @property
    def chip_default_attr_type(self) -> int:
        """Runtime::GetDefaultKernelAttrType (runtime.cc): CUBE on CV-separated chips."""
        return AttrType.CUBE if self.cv_separated else AttrType.AICORE


FEATURES_910B = ElfFeatures()  # config/910_B_93 (A2, A3)
FEATURES_950 = ElfFeatures(stack_record=False, stack_in_version=False)  # config/950
FEATURES_CLOUD = ElfFeatures(  # config/cloud (Atlas training): the only AICPU-machine chip
    cv_separated=False, task_ration=False, aicpu_machine=True, su_stack_size=False,
    stack_record=False, stack_in_version=False)
FEATURES_DC = ElfFeatures(  # config/dc (310P)
    cv_separated=False, task_ration=False, su_stack_size=False, stack_record=False,
    stack_in_version=False)
FEATURES_BY_CHIP_TYPE = {
    "CHIP_910_B_93": FEATURES_910B, "CHIP_DAVID": FEATURES_950,
    "CHIP_CLOUD": FEATURES_CLOUD, "CHIP_DC": FEATURES_DC,
}


def features_for(profile) -> ElfFeatures:
    """ELF features of a :class:`npusim.profiles.Profile` (or anything with ``chip_type``)."""
    return FEATURES_BY_CHIP_TYPE.get(getattr(profile, "chip_type", ""), FEATURES_910B)


# ---- plain result data
@dataclass(frozen=True)
class ElfSection:
    """One section header as the runtime reads it (sh_link/sh_info truncated from 8 bytes)."""
    index: int
    name: str
    """Name from the e_shstrndx table ("" when it has none)."""
    name_offset: int
    type: int
    flags: int
    addr: int
    offset: int
    size: int
    link: int
    info: int
    addralign: int
    entsize: int


@dataclass(frozen=True)
class ParamInfo:
    """One PARAM_INFO record (ElfParamBody), used by aclrtLaunchKernelWithArgsArray."""
    index: int = 0
    ordinal: int = 0
    offset: int = 0
    size: int = 0
    align: int = 0
    param_type: int = 0
    space_index: int = 0
    space_type: int = 0
    space: int = 0
    resv: int = 0


@dataclass(frozen=True)
class KernelMeta:
    """A symbol's metadata after ``UpdateKernelsInfo``; defaults = no meta section."""
    has_meta: bool = False
    func_type: int = FuncType.INVALID
    cross_core_sync: int = 0
    task_ration: int = DEFAULT_TASK_RATION
    task_ratio: tuple[int, int] = (0, 0)
    """Raw MIX_TASK_RATION (aic, aiv); (0, 0) when absent."""
    user_args_num: int = DEFAULT_USER_ARGS_NUM
    """1 + counted DFX_ARG_INFO items; 0 for a meta section without DFX_TYPE (value-initialised
    ElfKernelInfo in elf.cc ParseKernelMetaData)."""
    kernel_vf_type: int = 0
    share_mem_size: int = 0
    min_stack_size: int = 0
    early_start: bool = False
    func_entry_type: int = EntryType.TILING_KEY
    function_entry: int = 0
    sched_mode: int = 0
    has_param_summary: bool = False
    param_count: int = 0
    param_total_size: int = 0
    params: tuple[ParamInfo, ...] = ()
    dfx_offset: int = 0
    """File offset of the meta section (the kernel's "dfx" blob)."""
    dfx_size: int = 0
    """Meta section size truncated to 16 bits, as stored."""
    ei_data: int = 0
    """elfDataFlag: e_ident[EI_DATA] of the binary (0 without a meta section)."""
    tlvs: tuple[tuple[int, bytes], ...] = ()
    """Every TLV of the section in order as (type, value); covers the types the parser ignores."""


@dataclass(frozen=True)
class ElfSymbol:
    """One qualifying STT_FUNC symbol (the runtime's RtKernel), in symbol-table order."""
    name: str
    offset: int
    """(u32) st_value: offset of the code in the device image."""
    length: int
    """(u32) st_size."""
    meta: KernelMeta = KernelMeta()


@dataclass(frozen=True)
class ElfKernel:
    """A registered kernel (the runtime's Kernel): mix pairs merged, suffix stripped."""
    name: str
    entry_key: int
    """Tiling key (numeric name suffix) or FUNCTION_ENTRY_INFO entry."""
    attr_type: int
    mix_type: int
    offset: int
    length: int
    offset2: int = 0
    length2: int = 0
    min_stack_size: int = 0
    min_stack_size2: int = 0
    func_type: int = FuncType.INVALID
    cross_core_sync: int = 0
    task_ration: int = DEFAULT_TASK_RATION
    sched_mode: int = 0
    func_entry_type: int = EntryType.TILING_KEY
    kernel_vf_type: int = 0
    share_mem_size: int = 0
    user_args_num: int = DEFAULT_USER_ARGS_NUM
    early_start: bool = False
    has_param_summary: bool = False
    param_count: int = 0
    param_total_size: int = 0
    params: tuple[ParamInfo, ...] = ()
    dfx_offset: int = 0
    dfx_size: int = 0
    ei_data: int = 0
    build_mix_type: int = MixType.NO_MIX
    """mixType when the kernel was built (before a merge): SetKernelAttribute decides the FFTS
    system parameter from it."""
    symbols: tuple[str, ...] = ()
    """The ELF symbol names registered under this name (two for a merged mix kernel)."""


@dataclass(frozen=True)
class ElfImage:
    """Everything the runtime keeps from one kernel binary (ElfProgram + its Kernels)."""
    machine: int
    elf_type: int
    ei_data: int
    e_version: int
    sections: tuple[ElfSection, ...]
    image_offset: int
    """text_offset: file offset of the device image."""
    text_size: int
    """u64 text_size as computed (may exceed the file: NOBITS, bogus headers)."""
    load_size: int
    """u32 LoadSize(): the byte count copied to the device."""
    nobits: tuple[tuple[int, int], ...]
    """Image ranges [start, end) of NOBITS ALLOC sections: zero-filled (§9.2 decision)."""
    read_only: bool
    symbols: tuple[ElfSymbol, ...]
    kernels: tuple[ElfKernel, ...]
    """Registered kernels in kernelNameMap_ order (byte-wise by name)."""
    entries: dict[int, str]
    """Entry key -> kernel name, ascending; first kernel by name wins a duplicate key."""
    default_attr_type: int
    globals: dict[str, tuple[int, int]]
    """GLOBAL STT_OBJECT name -> (offset in the image (u64), st_size) (aclrtBinaryGetGlobal)."""
    objects: tuple[tuple[str, int, int], ...]
    """Every STT_OBJECT (name, file offset, u32 size) handed to rtsRegKernelLaunchFillFunc."""
    runtime_symbols: dict[str, int]
    """Symbols the runtime patches at load (per .ascend.meta flags) -> offset in the image (u64)."""
    so_name: str | None
    metadata: str
    stack_size: int
    """Program stack size (0 unless the chip has RT_FEATURE_KERNEL_ELF_16K_STACK)."""
    elf_stack_size: int
    """Stack size parsed from the record / e_version, before the feature gate."""
    ascend_meta_flag: int
    binary_meta: tuple[tuple[int, bytes], ...]
    """TLVs of the first section named .ascend.meta (rtBinaryGetMetaNum/Info)."""
    function_meta: dict[str, tuple[tuple[int, bytes], ...]]
    """Section name minus ``.ascend.meta.`` -> its TLVs (first section of that name), for
    rtFunctionGetMetaInfo."""
    data: bytes = field(repr=False, default=b"")

    @cached_property
    def image(self) -> bytes:
        """The device image: ``load_size`` bytes of the file from ``image_offset``, zeros past the
        end of the file and over NOBITS ALLOC sections. Materialised on first use (may be large)."""
        start = self.image_offset
        buf = bytearray(self.data[start:start + self.load_size] if start < len(self.data) else b"")
        buf.extend(bytes(self.load_size - len(buf)))
        for lo, hi in self.nobits:
            buf[lo:hi] = bytes(hi - lo)
        return bytes(buf)

    def device_image(self) -> bytes:
        """The bytes Runtime::BinaryLoad copies; an empty image fails like the runtime (507000)."""
        if self.load_size == 0:
            raise ElfError(ACL_ERROR_RT_INTERNAL_ERROR,
                           "module load failed: program size is 0 (no ALLOC section data)")
        return self.image

    def kernel(self, name: str) -> ElfKernel | None:
        """Registered kernel by (stripped) name, like Program::GetKernelByName."""
        return next((k for k in self.kernels if k.name == name), None)


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

    def clip(self, pos: int, n: int) -> int:
        """How many of ``n`` bytes at ``pos`` lie inside the file."""
        return max(0, min(n, self.size - pos)) if pos < self.size else 0


def _fail(detail: str) -> ElfError:
    return ElfError(ACL_ERROR_RT_PARAM_INVALID, detail)


def _cstr(table: bytes, off: int, limit: int | None = None) -> bytes:
    """C string at ``off`` of a NUL-terminated table copy; out of range -> b"" (decision)."""
    if off >= len(table):
        return b""
    end = table.find(b"\0", off)
    end = len(table) if end < 0 else end
    if limit is not None:
        end = min(end, off + limit)
    return table[off:end]


def _decode(name: bytes) -> str:
    return name.decode("utf-8", "surrogateescape")


def _encode(name: str) -> bytes:
    return name.encode("utf-8", "surrogateescape")


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
        t, n = rd.u(pos, 2), rd.u(pos + 2, 2)
        if TLV_HEAD_SIZE + n > remain:
            return
        yield t, n, pos
        pos += TLV_HEAD_SIZE + n
        remain -= TLV_HEAD_SIZE + n


def _dfx_user_args(rd: _Reader, pos: int) -> int | None:
    """ElfParseKernelArgNum: nested big-endian TLVs in 8-byte units; the budget is the outer
    length - 4 (u16), so the last item usually is not counted. None = length 0, unchanged."""
    length = rd.u(pos + 2, 2)
    if length == 0:
        return None
    cur, remain, count = pos + TLV_HEAD_SIZE, (length - TLV_HEAD_SIZE) & U16, 1
    while remain > TLV_HEAD_SIZE and cur < rd.size:  # past EOF only zero items: nothing counts
        t, n = rd.be(cur, 2), (rd.be(cur + 2, 2) * DFX_NESTED_UNIT) & U16
        if TLV_HEAD_SIZE + n > remain:
            break
        count += t == MetaType.DFX_ARG_INFO
        cur += TLV_HEAD_SIZE + n
        remain -= TLV_HEAD_SIZE + n
    return count & U16


def _param_info(rd: _Reader, p: int) -> ParamInfo:
    return ParamInfo(
        index=rd.u(p + 4, 4), ordinal=rd.u(p + 8, 4), offset=rd.u(p + 12, 4), size=rd.u(p + 16, 4),
        align=rd.u(p + 20, 2), param_type=rd.u(p + 22, 2), space_index=rd.u(p + 24, 4),
        space_type=rd.u(p + 28, 4), space=rd.u(p + 32, 4), resv=rd.u(p + 36, 4))


def _apply_tlv(rd: _Reader, info: _KernelInfo, t: int, n: int, p: int) -> None:
    """ElfParseTlvInfo: fields at fixed struct offsets from the TLV start ``p``, whatever ``n``."""
    v = p + TLV_HEAD_SIZE
    if t == MetaType.KERNEL_TYPE:
        info.func_type = rd.u(v, 4)
    elif t == MetaType.CROSS_CORE:
        info.cross_core_sync = rd.u(v, 4)
    elif t == MetaType.MIX_TASK_RATION:
        info.task_ratio = (rd.u(v, 2), rd.u(v + 2, 2))
    elif t == MetaType.DFX_TYPE:
        args = _dfx_user_args(rd, p)
        info.user_args_num = info.user_args_num if args is None else args
    elif t == MetaType.AIV_TYPE_FLAG:
        info.kernel_vf_type = rd.u(v, 4)
    elif t == MetaType.COMPILER_ALLOC_UB_SIZE:
        info.share_mem_size = rd.u(v, 4)
    elif t == MetaType.SU_STACK_SIZE:
        info.min_stack_size = rd.u(v, n) & U32  # read with the TLV length as field size
    elif t == MetaType.EARLY_START_ENABLE:
        info.early_start = rd.u(v, 4) == 1
    elif t == MetaType.FUNCTION_ENTRY_INFO:  # flag and entry read raw (host order)
        info.entry_supported = True
        info.entry_flag = rd.host(v, 1)
        info.function_entry = rd.host(p + 8, 8)
    elif t == MetaType.SCHED_MODE_INFO:
        info.sched_mode = rd.u(v, n) & U32
    elif t == MetaType.PARAM_SUMMARY:
        info.has_param_summary = True
        info.param_count, info.param_total_size = rd.u(v, 4), rd.u(p + 8, 8)
    elif t == MetaType.PARAM_INFO:
        info.cached_params.append(_param_info(rd, p))


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
        raise _fail("the ELF file must be a 64-bit file (EI_CLASS != 2)")
    st.elf_type, st.machine, st.e_version = rd.u(16, 2), rd.u(18, 2), rd.u(20, 4)
    st.shoff, st.shentsize = rd.u(40, 8), rd.u(58, 2)
    st.shnum, st.shstrndx = rd.u(60, 2), rd.u(62, 2)


def _read_section_headers(st: _Parse) -> None:
    """Get64bitSectionHeaders: e_shentsize 64, e_shnum > 0, each header inside the file,
    sh_link <= e_shnum. sh_link/sh_info are 8-byte reads truncated to 32 bits."""
    rd = st.rd
    if st.shentsize == 0 or st.shnum == 0:
        raise _fail(f"e_shentsize {st.shentsize} / e_shnum {st.shnum} must not be 0")
    if st.shentsize != SHDR_SIZE:
        raise _fail(f"e_shentsize {st.shentsize} must be {SHDR_SIZE}")
    for i in range(st.shnum):
        h = st.shoff + SHDR_SIZE * i
        if h + SHDR_SIZE > rd.size:
            raise _fail(f"section header {i} ends at {h + SHDR_SIZE}, beyond the file ({rd.size})")
        link = rd.u(h + 40, 8) & U32
        if link > st.shnum:
            raise _fail(f"sh_link {link} of section {i} is out of [0, {st.shnum}]")
        st.sections.append(ElfSection(
            index=i, name="", name_offset=rd.u(h, 4), type=rd.u(h + 4, 4),
            flags=rd.u(h + 8, 8), addr=rd.u(h + 16, 8), offset=rd.u(h + 24, 8),
            size=rd.u(h + 32, 8), link=link, info=rd.u(h + 44, 8) & U32,
            addralign=rd.u(h + 48, 8), entsize=rd.u(h + 56, 8)))


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
        raise _fail(f"section name table [{sec.offset}, +{sec.size}) is outside the file")
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
    return [dataclasses.replace(s, name=_decode(_cstr(names, s.name_offset)))
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
            raise _fail(f"text size of section {sec.index} overflows 64 bits")
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
        tag = rd.u(pos, 8)
        if tag in (DT_NULL, DT_SONAME):
            break
    if tag != DT_SONAME:
        return
    start = (dynstr.offset + rd.u(pos + 8, 8)) & U64
    if start < rd.size:
        st.so_name = _decode(_cstr(rd.data, start))


def _stack_record(st: _Parse, sec: ElfSection) -> None:
    """ParseElfStackInfoFromSection: u64 array, first is 16K/32K and all equal. An entry past the
    end of the file reads 0 and ends the scan (so the loop is bounded by the file)."""
    rd, length = st.rd, sec.size & U32
    if length < 8 or length % 8:
        return
    first = rd.u(sec.offset, 8)
    if first not in (STACK_SIZE_16K, STACK_SIZE_32K):
        return
    for i in range(1, length // 8):
        if rd.u(sec.offset + 8 * i, 8) != first:
            return
    st.stack_size = first


def _binary_meta(st: _Parse, sec: ElfSection) -> None:
    """ParseElfBinaryMetaInfo: RUNTIME_IMPLICIT_INFO sets ascendMetaFlag bit (type-1)."""
    rd = st.rd
    for t, _, p in _iter_tlvs(rd, sec.offset, sec.size):
        if t == BinaryMetaType.RUNTIME_IMPLICIT_INFO:
            kind = rd.host(p + TLV_HEAD_SIZE, 4)  # read raw
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
        key = _decode(name[len(SECTION_META_PREFIX):])
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
        syms.append(_Sym(rd.u(p, 4), rd.u(p + 4, 1), rd.u(p + 5, 1), rd.u(p + 6, 2),
                         rd.u(p + 8, 8), rd.u(p + 16, 8)))
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
        name = _decode(_cstr(strtab, sym.name))
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
            raise _fail(f"symbol table {sec.index} links to section {sec.link} "
                        f"(e_shnum {st.shnum})")
        strsec = st.sections[sec.link]
        strtab = None
        if strsec.size != 0:
            if not _in_file(strsec, st.rd.size):
                raise _fail(f"symbol string table {strsec.index} is outside the file")
            strtab = _table(st.rd, strsec)
        _object_symbols(st, syms, strtab)
        if not any(s.info & 0xF == STT_FUNC for s in syms):
            raise _fail("the symbol table has no STT_FUNC symbol")
        for sym in syms:
            if not (_is_kernel_symbol(sym) and strtab is not None):
                continue
            if sym.name > strsec.size:
                raise _fail(f"st_name {sym.name} is beyond the string table ({strsec.size})")
            name = _cstr(strtab, sym.name, NAME_MAX_LENGTH)
            if len(name) >= NAME_MAX_LENGTH:
                continue
            st.symbols.append(ElfSymbol(_decode(name), sym.value & U32, sym.size & U32))
        return
    raise _fail("no usable SHT_SYMTAB section")


# ---- UpdateKernelsInfo
def _params(info: _KernelInfo, name: str) -> tuple[tuple[ParamInfo, ...], int, int]:
    """UpdateCachedParamInfos: with a summary of n > 0, exactly n PARAM_INFO with ordinal < n."""
    if not info.has_param_summary or info.param_count == 0:
        return (), 0, 0
    if len(info.cached_params) != info.param_count:
        raise _fail(f"kernel {name}: {len(info.cached_params)} PARAM_INFO for "
                    f"PARAM_SUMMARY count {info.param_count}")
    slots = [ParamInfo()] * info.param_count
    for p in info.cached_params:
        if p.ordinal >= info.param_count:
            raise _fail(f"kernel {name}: PARAM_INFO ordinal {p.ordinal} >= {info.param_count}")
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
    raise _fail(f"kernel {name}: FUNCTION_ENTRY_INFO flag {info.entry_flag:#x} is invalid")


def _task_ration(info: _KernelInfo, name: str, features: ElfFeatures) -> int:
    """ConvertTaskRation, only for a present ratio on chips with the feature."""
    if info.task_ratio == (0, 0) or not features.task_ration:
        return DEFAULT_TASK_RATION
    if info.task_ratio not in TASK_RATION_BY_RATIO:
        raise _fail(f"kernel {name}: task ratio {info.task_ratio[0]}:{info.task_ratio[1]} invalid")
    return TASK_RATION_BY_RATIO[info.task_ratio]


def _kernel_meta(info: _KernelInfo, name: str, features: ElfFeatures) -> KernelMeta:
    params, count, total = _params(info, name)
    min_stack = 0
    if features.su_stack_size:
        min_stack = info.min_stack_size
        if min_stack > features.customer_stack_size:
            raise _fail(f"kernel {name}: min stack size {min_stack} > process stack size "
                        f"{features.customer_stack_size}")
    entry_type, entry = _entry(info, name)
    if info.sched_mode >= SCHED_MODE_END:
        raise _fail(f"kernel {name}: sched mode {info.sched_mode} is not 0 or 1")
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
        info = st.kernel_infos.get(_encode(sym.name))
        if info is not None:
            st.symbols[i] = dataclasses.replace(sym, meta=_kernel_meta(info, sym.name, st.features))


# ---- registration (program.cc RegisterAllKernelCommon / BuildNewKernel / MergeKernel)
def strip_mix_suffix(name: str) -> str:
    """AdjustKernelName: drop the right-most ``_mix_aic``, else the right-most ``_mix_aiv``,
    wherever it is in the name."""
    for suffix in (MIX_AIC_SUFFIX, MIX_AIV_SUFFIX):
        pos = name.rfind(suffix)
        if pos >= 0:
            return name[:pos] + name[pos + len(suffix):]
    return name


def tiling_key(name: str) -> int:
    """ParseTilingKey: the text after the last '_' (whole name without one) if all ASCII digits,
    as u64 (out of range -> 0); otherwise 0."""
    tail = name[name.rfind("_") + 1:]
    if not tail or any(c not in "0123456789" for c in tail):
        return 0
    value = int(tail)
    return value if value <= U64 else 0


def kernel_type_and_mix(sym: ElfSymbol, default_attr_type: int) -> tuple[int, int]:
    """GetKernelTypeAndMixType: (attr type, mix type) from funcType, crossCoreSync and the name."""
    ft, sync, name = sym.meta.func_type, sym.meta.cross_core_sync, sym.name
    aic, aiv = MIX_AIC_SUFFIX in name, MIX_AIV_SUFFIX in name
    if ft == FuncType.AICORE:
        mix = MixType.MIX_AIC if aic else MixType.MIX_AIV if aiv else MixType.NO_MIX
        return AttrType.AICORE, mix
    if ft in (FuncType.AIC, FuncType.AIC_ROLLBACK):
        return AttrType.CUBE, MixType.MIX_AIC if sync == 1 else MixType.NO_MIX
    if ft in (FuncType.AIV, FuncType.AIV_ROLLBACK):
        return AttrType.VECTOR, MixType.MIX_AIV if sync == 1 else MixType.NO_MIX
    if ft in (FuncType.MIX_AIC_MAIN, FuncType.MIX_AIV_MAIN) and not (aic or aiv):
        raise _fail(f"kernel {name}: funcType {ft} needs a _mix_aic/_mix_aiv name")
    if aic:
        return AttrType.CUBE, MixType.MIX_AIC
    if aiv:
        return AttrType.VECTOR, MixType.MIX_AIV
    return default_attr_type, MixType.NO_MIX


def _build_kernel(name: str, sym: ElfSymbol, default_attr_type: int) -> ElfKernel:
    """BuildNewKernel + SetKernelAttribute."""
    attr, mix = kernel_type_and_mix(sym, default_attr_type)
    m = sym.meta
    key = m.function_entry if m.func_entry_type == EntryType.FUNCTION_ENTRY else tiling_key(name)
    return ElfKernel(
        name=name, entry_key=key, attr_type=attr, mix_type=mix, offset=sym.offset,
        length=sym.length, min_stack_size=m.min_stack_size, func_type=m.func_type,
        cross_core_sync=m.cross_core_sync, task_ration=m.task_ration, sched_mode=m.sched_mode,
        func_entry_type=m.func_entry_type, kernel_vf_type=m.kernel_vf_type,
        share_mem_size=m.share_mem_size, user_args_num=m.user_args_num,
        early_start=m.early_start, has_param_summary=m.has_param_summary,
        param_count=m.param_count, param_total_size=m.param_total_size, params=m.params,
        dfx_offset=m.dfx_offset, dfx_size=m.dfx_size, ei_data=m.ei_data, build_mix_type=mix,
        symbols=(sym.name,))


def _merge_kernel(old: ElfKernel, sym: ElfSymbol, default_attr_type: int,
                  features: ElfFeatures) -> ElfKernel:
    """MergeKernel: the second half of a mix pair; offset1 = aic part, offset2 = aiv part."""
    _, mix = kernel_type_and_mix(sym, default_attr_type)
    if old.offset2 != 0 or old.mix_type == mix or mix == MixType.NO_MIX:
        raise _fail(f"kernel {old.name}: symbol {sym.name} (mix {mix}) conflicts with "
                    f"{'/'.join(old.symbols)} (mix {old.mix_type}, offset2 {old.offset2})")
    m = sym.meta
    if old.mix_type == MixType.MIX_AIV:  # swap so that part 1 is the aic one
        merged = dataclasses.replace(
            old, offset=sym.offset, length=sym.length, min_stack_size=m.min_stack_size,
            offset2=old.offset, length2=old.length, min_stack_size2=old.min_stack_size)
    else:
        merged = dataclasses.replace(
            old, offset2=sym.offset, length2=sym.length, min_stack_size2=m.min_stack_size,
            kernel_vf_type=m.kernel_vf_type, share_mem_size=m.share_mem_size)
    if not features.cv_separated:
        attr, mix_type = AttrType.AICORE, MixType.MIX_AIC_AIV_MAIN_AIC
    elif old.func_type in (FuncType.MIX_AIC_MAIN, FuncType.MIX_AIV_MAIN):
        attr = AttrType.MIX
        mix_type = (MixType.MIX_AIC_AIV_MAIN_AIC if m.func_type == FuncType.MIX_AIC_MAIN
                    else MixType.MIX_AIC_AIV_MAIN_AIV)
    else:
        attr, mix_type = AttrType.MIX, MixType.MIX_AIC_AIV_MAIN_AIC
    return dataclasses.replace(
        merged, attr_type=attr, mix_type=mix_type,
        min_stack_size=max(merged.min_stack_size, merged.min_stack_size2),
        early_start=old.early_start or m.early_start, symbols=old.symbols + (sym.name,))


def _name_order(name: str) -> bytes:
    """std::map<std::string> order: byte-wise (unsigned char) comparison."""
    return _encode(name)


def build_kernels(symbols: Iterable[ElfSymbol], default_attr_type: int,
                  features: ElfFeatures = FEATURES_910B) -> tuple[ElfKernel, ...]:
    """RegisterAllKernelCommon: symbols in order, mix halves merged by stripped name; returns the
    name map's values in its (byte-wise) order."""
    by_name: dict[str, ElfKernel] = {}
    for sym in symbols:
        name = strip_mix_suffix(sym.name)
        if not name:
            raise _fail(f"kernel name {sym.name!r} is empty once _mix_aic/_mix_aiv is removed")
        old = by_name.get(name)
        if old is None:
            by_name[name] = _build_kernel(name, sym, default_attr_type)
        else:
            by_name[name] = _merge_kernel(old, sym, default_attr_type, features)
    return tuple(by_name[n] for n in sorted(by_name, key=_name_order))


def build_entry_table(kernels: Iterable[ElfKernel]) -> dict[int, str]:
    """UnifiedKernelRegister step B: in name order, each kernel that supports entries is added
    under its key unless the key is taken (then silently dropped, §9.6). Sorted by key."""
    table: dict[int, str] = {}
    for k in sorted(kernels, key=lambda k: _name_order(k.name)):
        if k.func_entry_type != EntryType.NOT_SUPPORT_FUNCTION_ENTRY and k.entry_key not in table:
            table[k.entry_key] = k.name
    return dict(sorted(table.items()))


def program_attr_type(machine: int, features: ElfFeatures, initial: int | None = None) -> int:
    """The program default kernel type after ParserBinary: the e_machine rule on AICPU-machine
    chips, else ``initial`` (load-option magic) or the chip default."""
    if features.aicpu_machine:
        return AttrType.AICPU if machine == EM_AARCH64 else AttrType.AICORE
    return features.chip_default_attr_type if initial is None else initial


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
        raise _fail(f"binary data is not bytes-like ({type(data).__name__})") from exc
    if not raw:
        raise _fail("binary size can not be 0")
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
        raise _fail(f"unexpected: {type(exc).__name__}: {exc}") from exc


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
        raise _fail(f"unexpected: {type(exc).__name__}: {exc}") from exc


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
