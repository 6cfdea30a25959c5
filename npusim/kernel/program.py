"""Programs and kernels: a loaded binary after registration (spec/kernel.md §2, §4).

``Program`` is the runtime's Program (binHandle), ``Kernel`` its Kernel (funcHandle). Two kinds:

* :class:`ElfProgram` — an AI Core binary parsed by :func:`npusim.kernel.elf.parse_elf`; its
  kernels come from the registered ELF kernels (mix pairs merged), found by name
  (``kernelNameMap_``, a dict kept in byte-wise name order) or by entry key (``KernelTable_``: a
  sorted key list searched with :func:`bisect.bisect_left`, as ``Program::GetKernelByTillingKey``
  does with ``HalfSearch``).
  Duplicate entry keys keep the first kernel in name order and silently drop the others
  (program.cc ``AllKernelAdd``, kernel.md §2.3 step B) — :func:`npusim.kernel.elf.build_entry_table`
  already applied that rule.
* :class:`PlainProgram` — a CPU (AICPU) program: kernels from the companion JSON or registered one
  by one (``aclrtRegisterCpuFunc``); no device image, no entry table.

Behaviour binding: a kernel's *body* is the numba function registered in
:data:`npusim.device.kernels.TABLE` under its binding key — the kernel name, or the value of the
simulator's own TLV :data:`BODY_TLV` in the kernel's ``.ascend.meta.<name>`` section (the runtime
skips unknown TLV types, so such a file is still a conforming binary). A kernel whose key has no
registered body runs :data:`NOP_BODY` (nothing, for the default duration): the simulator cannot
execute Ascend machine code, only bodies written for it.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass

from ..device.kernels import KERNEL_TRAP, TABLE, UNIT_AIC, UNIT_AICPU, UNIT_AIV, compiled_body
from .elf import AttrType, ElfImage, ElfKernel, EntryType, MixType

BODY_TLV = 0x4E53
"""``.ascend.meta.<kernel>`` TLV type holding the UTF-8 binding key of the kernel's body (an id
the runtime does not know, so it is skipped by the real parser)."""

REG_CPU, REG_NON_CPU = 0, 1                      # KernelRegisterType
PLAIN_PROGRAM, ELF_PROGRAM = 0, 1                # Program::progType_
NOP_BODY = "__npusim_nop__"                      # kernels without a bound body
BAD_PC_BODY = "__npusim_bad_pc__"                # AI Core launch of a CPU kernel (PC 0)
AICPU_PREFIX = "aicpu:"                          # binding keys of CPU kernel bodies
NOP_AICPU_BODY = AICPU_PREFIX + NOP_BODY

# CPU kernel types (aicpuKernelType from JSON opKernelLib, program_common.cc SetCpuKernelAttr)
AICPU_KERNEL_TYPE = {"CUSTAICPUKernel": 4, "TFKernel": 1, "KFCKernel": 5, "CUSTKFCKernel": 6}
AICPU_KERNEL_RESERVED = 99

# magics (acl_rt.h ACL_RT_BINARY_MAGIC_*; rt_model.h RT_DEV_BINARY_MAGIC_*)
MAGIC_ELF, MAGIC_ELF_AIVEC, MAGIC_ELF_AICUBE = 0x43554245, 0x41415246, 0x41494343
MAGICS = (MAGIC_ELF, MAGIC_ELF_AIVEC, MAGIC_ELF_AICUBE)
JSON_MAGICS = {
    "RT_DEV_BINARY_MAGIC_ELF": MAGIC_ELF, "RT_DEV_BINARY_MAGIC_ELF_AICUBE": MAGIC_ELF_AICUBE,
    "RT_DEV_BINARY_MAGIC_ELF_AIVEC": MAGIC_ELF_AIVEC,
    "FFTS_BINARY_MAGIC_ELF_MIX_AIC": MAGIC_ELF_AIVEC, "FFTS_BINARY_MAGIC_ELF_MIX_AIV": MAGIC_ELF_AIVEC,
}


@dataclass(frozen=True)
class RuntimeFeatures:
    """Chip features the Kernel module's launch and args paths consult (dev_info_reg.cc lists)."""
    ffts_plus: bool = True
    """RT_FEATURE_TASK_FFTS_PLUS: kernels needing inter-core sync get a system parameter."""
    inter_core_sync_addr: bool = True
    """RT_FEATURE_KERNEL_INTER_CORE_SYNC_ADDR: Finalize writes the sync address into slot 0."""
    simt: bool = False
    """RT_FEATURE_DEVICE_SIMT: +1280 B image padding, dynamic-UB checks (aix_starsv2.cc)."""
    acl_graph: bool = True
    """RT_FEATURE_MODEL_ACL_GRAPH: aclrtGetFunctionSize and the KERNEL_RATIO attribute."""
    extra_vector_core: bool = False
    """RT_FEATURE_DEVICE_EXTRA_VECTOR_CORE: mix kernels need ENGINE_TYPE + BLOCKDIM_OFFSET."""
    legacy_binary_load: bool = True
    """RT_FEATURE_KERNEL_BINARY_LOAD_DOT_WITHOUT_TILING: aclrtBinaryLoad is supported."""
    memory_batch_copy: bool = True
    """RT_FEATURE_TASK_MEMORY_BATCH_COPY: aclrtMemcpyBatch / aclrtMemcpyBatchAsync (and V2)."""
    memcpy_d2d_by_offset: bool = True
    """RT_FEATURE_TASK_MEMCPY_D2D_BY_OFFSET: aclrtMemcpyAsyncWithOffset."""
    memcpy_desc_size: int = 32
    """DevProperties.memcpyDescriptorSize: MEMCPY_DESC_SIZE_V1 32, V2 (950) 64 bytes."""


_FEATURES = {
    "CHIP_910_B_93": RuntimeFeatures(),
    "CHIP_DAVID": RuntimeFeatures(ffts_plus=False, inter_core_sync_addr=False, simt=True,
                                  memcpy_desc_size=64),
    "CHIP_DC": RuntimeFeatures(ffts_plus=False, inter_core_sync_addr=False,
                               extra_vector_core=True, memory_batch_copy=False,
                               memcpy_d2d_by_offset=False),
    "CHIP_CLOUD": RuntimeFeatures(ffts_plus=False, inter_core_sync_addr=False, acl_graph=False),
}


def runtime_features(profile) -> RuntimeFeatures:
    return _FEATURES.get(profile.chip_type, _FEATURES["CHIP_910_B_93"])


def magic_attr_type(magic: int, cv_separated: bool) -> int | None:
    """Runtime::Magic2KernelAttrType for the magics a binary load accepts (None: invalid)."""
    if magic == MAGIC_ELF:
        return AttrType.MIX if cv_separated else AttrType.AICORE
    if magic == MAGIC_ELF_AICUBE:
        return AttrType.CUBE
    if magic == MAGIC_ELF_AIVEC:
        return AttrType.VECTOR
    return None


# ---- kernels
class Kernel:
    """One function handle's object. Plain slots: the launch hot path reads them directly."""
    __slots__ = (
        "handle", "program", "name", "entry_key", "attr_type", "mix_type", "func_type",
        "reg_type", "offset1", "offset2", "length1", "length2", "task_ration", "sched_mode",
        "func_entry_type", "kernel_vf_type", "share_mem_size", "user_para_num",
        "system_para_num", "support_overflow", "need_ffts_addr", "has_param_summary",
        "param_count", "param_total_size", "params", "body_key", "kid", "cpu_so",
        "cpu_func_name", "aicpu_kernel_type", "elf", "duration_ns", "plain_args", "__weakref__")

    def __init__(self, program: "Program", name: str, **fields):
        self.handle = 0
        self.program = program
        self.name = name
        self.entry_key = 0
        self.attr_type = AttrType.AICORE
        self.mix_type = MixType.NO_MIX
        self.func_type = 0
        self.reg_type = REG_NON_CPU
        self.offset1 = self.offset2 = self.length1 = self.length2 = 0
        self.task_ration = 2
        self.sched_mode = 0
        self.func_entry_type = EntryType.TILING_KEY
        self.kernel_vf_type = self.share_mem_size = 0
        self.user_para_num = 128
        self.system_para_num = 0
        self.support_overflow = False
        self.need_ffts_addr = False
        self.has_param_summary = False
        self.param_count = self.param_total_size = 0
        self.params = ()
        self.body_key = name
        self.kid = -1
        self.cpu_so = self.cpu_func_name = ""
        self.aicpu_kernel_type = 0
        self.elf: ElfKernel | None = None
        self.duration_ns = 0
        """An explicit run time for every launch of this kernel (SQE ``a3``), 0: the kernel
        table's cost. Only the kernel table's own handles set it (``runtime/functions.py``)."""
        self.plain_args: tuple | None = None
        """(body id, args size) of a launch whose argument check could find nothing (the launch
        core's memo, ``api_launch._args_refused``): a launch repeating them skips the check."""
        for k, v in fields.items():
            setattr(self, k, v)

    def __repr__(self):
        return f"Kernel({self.name!r}, key={self.entry_key}, attr={self.attr_type})"

    @property
    def is_cpu(self) -> bool:
        return self.reg_type == REG_CPU

    def bind(self) -> int:
        """Resolve the body's kernel-table id (re-resolved at every get-function, so a body
        registered after the load is picked up)."""
        kid = TABLE.by_name.get(self.body_key)
        if kid is None:
            kid = TABLE.by_name[NOP_AICPU_BODY if self.is_cpu else NOP_BODY]
        self.kid = kid
        return kid


def _body_key(sym_meta_tlvs, name: str) -> str:
    for t, v in sym_meta_tlvs:
        if t == BODY_TLV and v:
            return v.split(b"\0", 1)[0].decode("utf-8", "replace") or name
    return name


def elf_kernel(program: "Program", ek: ElfKernel, tlvs, feats: RuntimeFeatures) -> Kernel:
    """BuildNewKernel + SetKernelAttribute: systemParaNum = overflow (1, ELF kernels support it)
    + the FFTS address slot on FFTS+ chips when the kernel needs inter-core sync and the binary
    does not get the address through its .ascend.meta flags."""
    needs_sync = (program.intercore_sync or ek.cross_core_sync == 1
                  or ek.build_mix_type != MixType.NO_MIX)
    ffts = feats.ffts_plus and not (program.ascend_meta_flag & 0x02) and needs_sync
    return Kernel(
        program, ek.name, entry_key=ek.entry_key, attr_type=int(ek.attr_type),
        mix_type=int(ek.mix_type), func_type=ek.func_type, offset1=ek.offset & 0xFFFFFFFF,
        offset2=ek.offset2 & 0xFFFFFFFF, length1=ek.length, length2=ek.length2,
        task_ration=ek.task_ration, sched_mode=ek.sched_mode, func_entry_type=ek.func_entry_type,
        kernel_vf_type=ek.kernel_vf_type, share_mem_size=ek.share_mem_size,
        user_para_num=ek.user_args_num & 0xFFFF, system_para_num=1 + (1 if ffts else 0),
        support_overflow=True, need_ffts_addr=ffts, has_param_summary=ek.has_param_summary,
        param_count=ek.param_count, param_total_size=ek.param_total_size, params=ek.params,
        body_key=_body_key(tlvs, ek.name), elf=ek)


def cpu_kernel(program: "Program", name: str, func_name: str, so: str, kernel_type: int) -> Kernel:
    """PlainProgram::RegisterCpuKernel / RegisterSingleCpuKernel."""
    return Kernel(program, name, attr_type=AttrType.AICPU, reg_type=REG_CPU, cpu_so=so,
                  cpu_func_name=func_name, aicpu_kernel_type=kernel_type, user_para_num=128,
                  body_key=AICPU_PREFIX + name)


# ---- programs
class Program:
    """binHandle object: kernels by name and by entry key, per-device load state."""
    kind = ELF_PROGRAM

    def __init__(self, reg_type: int, default_attr_type: int):
        self.handle = 0
        self.reg_type = reg_type
        self.default_attr_type = default_attr_type
        self.kernels: dict[str, Kernel] = {}
        self.entry_keys: list[int] = []
        self.image = None                  # the device image (ElfProgram); None: nothing to load
        self.entry_kernels: list[Kernel] = []
        self.lazy = False
        self.new_flow = True
        self.so_name: str | None = None
        self.magic = 0
        self.intercore_sync = False
        self.ascend_meta_flag = 0
        self.exception_callback = None
        self.exception_user_data = None
        self.loaded: dict[int, tuple] = {}       # device id -> (Device, base, aligned base)
        self.valid: dict[int, object] = {}       # device id -> Device (devicePtr_)
        self.unloaded = False

    # ---- lookups (Program::GetKernelByName / GetKernelByTillingKey)
    def kernel_by_name(self, name: str) -> Kernel | None:
        return self.kernels.get(name)

    def kernel_by_entry(self, key: int) -> Kernel | None:
        keys = self.entry_keys
        i = bisect.bisect_left(keys, key)
        if i < len(keys) and keys[i] == key:
            return self.entry_kernels[i]
        return None

    def kernel_by_entry_linear(self, key: int) -> Kernel | None:
        """The same lookup by a linear scan (the bench's baseline)."""
        for k, kern in zip(self.entry_keys, self.entry_kernels):
            if k == key:
                return kern
        return None

    # ---- device state
    def base_on(self, device) -> int:
        """baseAddrAlign_ on ``device`` (0 when not loaded there)."""
        entry = self.loaded.get(device.id)
        return entry[2] if entry is not None and entry[0] is device else 0

    def is_valid_on(self, device) -> bool:
        """IsDeviceSoAndNameValid: always true for legacy (old-flow) programs."""
        return not self.new_flow or self.valid.get(device.id) is device

    @property
    def load_size(self) -> int:
        return 0

    def describe(self) -> str:
        return f"program 0x{self.handle:x}"


class ElfProgram(Program):
    kind = ELF_PROGRAM

    def __init__(self, image: ElfImage, feats: RuntimeFeatures, intercore_sync: bool = False,
                 magic: int = 0, entries: bool = True):
        super().__init__(REG_NON_CPU, image.default_attr_type)
        self.image = image
        self.so_name = image.so_name
        self.magic = magic
        self.intercore_sync = intercore_sync
        self.ascend_meta_flag = image.ascend_meta_flag
        tlvs = {s.name: s.meta.tlvs for s in image.symbols}
        for ek in image.kernels:          # kernelNameMap_ order
            self.kernels[ek.name] = elf_kernel(self, ek, tlvs.get(ek.symbols[0], ()), feats)
        if entries:                        # UnifiedKernelRegister step B (not the legacy load)
            for key, name in image.entries.items():
                self.entry_keys.append(key)
                self.entry_kernels.append(self.kernels[name])

    @property
    def load_size(self) -> int:
        return self.image.load_size


class PlainProgram(Program):
    kind = PLAIN_PROGRAM

    def __init__(self, so_name: str, mode: int, so_data: bytes = b"", bin_path: str = ""):
        super().__init__(REG_CPU, AttrType.AICPU)
        self.so_name = so_name
        self.cpu_mode = mode
        self.so_data = so_data
        self.bin_path = bin_path

    @property
    def load_size(self) -> int:
        return len(self.so_data)


def aicpu_kernel_type(op_kernel_lib, user_defined) -> int:
    """aicpuKernelType from the JSON ``opKernelLib`` (program_common.cc SetCpuKernelAttr)."""
    if op_kernel_lib == "AICPUKernel":
        return 4 if user_defined == "True" else 2
    return AICPU_KERNEL_TYPE.get(op_kernel_lib, AICPU_KERNEL_RESERVED)


# ---- the bodies every program can fall back to
def _nop(memp, msize, ctxp, args, b, nb):
    return 0


def _bad_pc(memp, msize, ctxp, args, b, nb):
    return KERNEL_TRAP


def _register_fallback_bodies() -> None:
    TABLE.register_lazy(NOP_BODY, lambda: compiled_body(_nop), 0, UNIT_AIV)
    TABLE.register_lazy(NOP_AICPU_BODY, lambda: compiled_body(_nop), 0, UNIT_AICPU)
    TABLE.register_lazy(BAD_PC_BODY, lambda: compiled_body(_bad_pc), 0, UNIT_AIC)


if NOP_BODY not in TABLE.by_name:
    _register_fallback_bodies()
