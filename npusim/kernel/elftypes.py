"""The records of a parsed kernel ELF (ElfImage and its parts), the chip features the parse
depends on, and the one failure type, :class:`ElfError`.

Plain data, filled in by :mod:`npusim.kernel.elf` (``ProcessObject``, elf.cc) and
:mod:`npusim.kernel.elfregister` (``RegisterAllKernelCommon``, program.cc); the runtime keeps the
same things in ``ElfProgram`` and its ``Kernel`` objects (spec/kernel.md §1, §2.3).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from npusim.errors import ACL_ERROR_RT_INTERNAL_ERROR, ACL_ERROR_RT_PARAM_INVALID, AclError
from npusim.profiles import Profile

from .elflayout import (
    DEFAULT_TASK_RATION, DEFAULT_USER_ARGS_NUM, STACK_SIZE_32K, AttrType, EntryType, FuncType,
    MixType,
)


class ElfError(AclError):
    """The one failure type of the ELF parse and registration: ``code`` is the ACL code the
    runtime returns."""


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


def features_for(profile: Profile) -> ElfFeatures:
    """ELF features of a chip profile, by its ``chip_type`` (910B rules for chip types without
    a feature list here)."""
    return FEATURES_BY_CHIP_TYPE.get(profile.chip_type, FEATURES_910B)


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


def invalid(detail: str) -> ElfError:
    """The parse / registration failure: 107000 (ACL_ERROR_RT_PARAM_INVALID) with ``detail``."""
    return ElfError(ACL_ERROR_RT_PARAM_INVALID, detail)


def decode_name(name: bytes) -> str:
    """Names are bytes in the file; undecodable bytes survive a round trip."""
    return name.decode("utf-8", "surrogateescape")


def encode_name(name: str) -> bytes:
    return name.encode("utf-8", "surrogateescape")
