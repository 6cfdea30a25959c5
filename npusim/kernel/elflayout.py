"""The layout of an Ascend kernel ELF, declared once: struct fields, constants, TLV type tables.

Everything here is data (spec/kernel.md §1, §9; the C sources are src/runtime/core/inc/elf.hpp,
src/runtime/core/src/kernel/elf.cc's anonymous namespace and pkg_inc/runtime/rt_external_base.h).
The logic that reads these layouts is elsewhere: :mod:`npusim.kernel.elf` (the runtime's
quirk-faithful reader), :mod:`npusim.kernel.elfview` (the standard view next to it) and
:mod:`npusim.kernel.elfwrite` (the writer). Like pyelftools' ``structs``/``enums`` modules, a
struct is a table of named fields; here each field is ``(offset, size)`` in bytes, because the
runtime reads fields one at a time (``GetByte``), some with the wrong width on purpose (see the
quirks in :mod:`npusim.kernel.elf`).
"""
from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple


class Field(NamedTuple):
    """One unsigned field of a C struct: byte offset and width."""
    offset: int
    size: int

    @property
    def end(self) -> int:
        return self.offset + self.size


# ---- ELF structs (elf.hpp; 64-bit only), the fields the runtime reads
class Ehdr(NamedTuple):
    """Elf64_Ehdr."""
    SIZE = 64
    magic: Field = Field(0, 4)
    ei_class: Field = Field(4, 1)
    ei_data: Field = Field(5, 1)
    e_type: Field = Field(16, 2)
    e_machine: Field = Field(18, 2)
    e_version: Field = Field(20, 4)
    e_shoff: Field = Field(40, 8)
    e_shentsize: Field = Field(58, 2)
    e_shnum: Field = Field(60, 2)
    e_shstrndx: Field = Field(62, 2)


class Shdr(NamedTuple):
    """Elf64_Shdr."""
    SIZE = 64
    sh_name: Field = Field(0, 4)
    sh_type: Field = Field(4, 4)
    sh_flags: Field = Field(8, 8)
    sh_addr: Field = Field(16, 8)
    sh_offset: Field = Field(24, 8)
    sh_size: Field = Field(32, 8)
    sh_link: Field = Field(40, 4)
    sh_info: Field = Field(44, 4)
    sh_addralign: Field = Field(48, 8)
    sh_entsize: Field = Field(56, 8)


class Sym(NamedTuple):
    """Elf64_Sym."""
    SIZE = 24
    st_name: Field = Field(0, 4)
    st_info: Field = Field(4, 1)
    st_other: Field = Field(5, 1)
    st_shndx: Field = Field(6, 2)
    st_value: Field = Field(8, 8)
    st_size: Field = Field(16, 8)


class Dyn(NamedTuple):
    """Elf64_Dyn."""
    SIZE = 16
    d_tag: Field = Field(0, 8)
    d_val: Field = Field(8, 8)


class TlvHead(NamedTuple):
    """The head of every metadata TLV (``.ascend.meta*`` sections): type, value length."""
    SIZE = 4
    type: Field = Field(0, 2)
    length: Field = Field(2, 2)


EHDR, SHDR, SYM, DYN, TLV_HEAD = Ehdr(), Shdr(), Sym(), Dyn(), TlvHead()
EHDR_SIZE, SHDR_SIZE, SYM_SIZE, DYN_SIZE, TLV_HEAD_SIZE = (
    Ehdr.SIZE, Shdr.SIZE, Sym.SIZE, Dyn.SIZE, TlvHead.SIZE)
EI_CLASS = EHDR.ei_class.offset
EI_DATA = EHDR.ei_data.offset

# ---- ELF constants (elf.hpp)
ELF_MAGIC = b"\x7fELF"
ELFCLASS64 = 2
ELFDATA2LSB = 1
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
DFX_NESTED_UNIT = 8  # nested DFX TLV lengths count 8-byte units (and are big-endian)
STACK_RECORD_ENTRY = 8  # .ascend.stack.size.record: an array of u64


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


# ---- TLV values: where ElfParseTlvInfo reads each field, as an offset from the value start
# (the TLV start + 4). The runtime reads these at fixed offsets whatever the TLV's declared
# length; fields marked "host order" are dereferenced directly, not read in the file's order.
class OneWord(NamedTuple):
    """KERNEL_TYPE, CROSS_CORE, AIV_TYPE_FLAG, COMPILER_ALLOC_UB_SIZE, EARLY_START_ENABLE."""
    value: Field = Field(0, 4)


class TaskRatioValue(NamedTuple):
    """MIX_TASK_RATION."""
    aic: Field = Field(0, 2)
    aiv: Field = Field(2, 2)


class FunctionEntryValue(NamedTuple):
    """FUNCTION_ENTRY_INFO (both fields host order)."""
    flag: Field = Field(0, 1)
    entry: Field = Field(4, 8)


class ParamSummaryValue(NamedTuple):
    """PARAM_SUMMARY."""
    count: Field = Field(0, 4)
    total_size: Field = Field(4, 8)


class ParamInfoValue(NamedTuple):
    """PARAM_INFO (ElfParamBody); field names are those of ``ParamInfo``."""
    index: Field = Field(0, 4)
    ordinal: Field = Field(4, 4)
    offset: Field = Field(8, 4)
    size: Field = Field(12, 4)
    align: Field = Field(16, 2)
    param_type: Field = Field(18, 2)
    space_index: Field = Field(20, 4)
    space_type: Field = Field(24, 4)
    space: Field = Field(28, 4)
    resv: Field = Field(32, 4)


class ImplicitInfoValue(NamedTuple):
    """RUNTIME_IMPLICIT_INFO of ``.ascend.meta`` (host order)."""
    kind: Field = Field(0, 4)


ONE_WORD, TASK_RATIO_VALUE, FUNCTION_ENTRY_VALUE = OneWord(), TaskRatioValue(), FunctionEntryValue()
PARAM_SUMMARY_VALUE, PARAM_INFO_VALUE = ParamSummaryValue(), ParamInfoValue()
IMPLICIT_INFO_VALUE = ImplicitInfoValue()
PARAM_INFO_VALUE_SIZE = max(f.end for f in PARAM_INFO_VALUE)  # 36

META_VALUE_LAYOUT: dict[int, NamedTuple] = {
    MetaType.KERNEL_TYPE: ONE_WORD,
    MetaType.CROSS_CORE: ONE_WORD,
    MetaType.MIX_TASK_RATION: TASK_RATIO_VALUE,
    MetaType.AIV_TYPE_FLAG: ONE_WORD,
    MetaType.COMPILER_ALLOC_UB_SIZE: ONE_WORD,
    MetaType.EARLY_START_ENABLE: ONE_WORD,
    MetaType.FUNCTION_ENTRY_INFO: FUNCTION_ENTRY_VALUE,
    MetaType.PARAM_SUMMARY: PARAM_SUMMARY_VALUE,
    MetaType.PARAM_INFO: PARAM_INFO_VALUE,
}
"""Per-kernel TLV types whose value the runtime reads at fixed offsets."""
META_VALUE_SIZED = frozenset({MetaType.SU_STACK_SIZE, MetaType.SCHED_MODE_INFO})
"""Per-kernel TLV types whose value is one field as wide as the TLV's declared length (GetByte
reads widths 1..8 only; any other width reads 0)."""
META_VALUE_HOST_ORDER = frozenset({MetaType.FUNCTION_ENTRY_INFO})
BINARY_META_VALUE_LAYOUT: dict[int, NamedTuple] = {
    BinaryMetaType.RUNTIME_IMPLICIT_INFO: IMPLICIT_INFO_VALUE,
}
"""``.ascend.meta`` TLV types the runtime reads (host order)."""

# ascendMetaFlag bit -> STT_OBJECT symbol the runtime patches with a device address at load
# (elf.cc SetSymbolAddress; bit 4 "assert" shares the printf FIFO symbol).
META_FLAG_SYMBOLS = {
    0x01: "g_sysPrintFifoSpace",
    0x02: "g_sysFftsAddr",
    0x04: "g_opL2CacheHintCfg",
    0x08: "g_sysSimtPrintFifoSpace",
    0x10: "g_sysPrintFifoSpace",
}
