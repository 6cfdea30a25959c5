"""Kernel registration: the symbols of a parsed binary become the runtime's kernels
(program.cc ``ElfProgram::RegisterAllKernelCommon``, ``BuildNewKernel``, ``MergeKernel``,
``UnifiedKernelRegister``; spec/kernel.md §2.3, §9.6).

The ``_mix_aic``/``_mix_aiv`` halves of a mix kernel merge under their stripped name; the kernel
type and mix type come from the KERNEL_TYPE / CROSS_CORE metadata and the name; the entry table
maps a tiling key (numeric name suffix) or FUNCTION_ENTRY_INFO entry to a kernel. Failures raise
:class:`ElfError` 107000 like the parse (:mod:`npusim.kernel.elf`).
"""
from __future__ import annotations

import dataclasses
from typing import Iterable

from .elflayout import (
    EM_AARCH64, MIX_AIC_SUFFIX, MIX_AIV_SUFFIX, U64, AttrType, EntryType, FuncType, MixType,
)
from .elftypes import FEATURES_910B, ElfFeatures, ElfKernel, ElfSymbol, encode_name, invalid

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
        raise invalid(f"kernel {name}: funcType {ft} needs a _mix_aic/_mix_aiv name")
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
        raise invalid(f"kernel {old.name}: symbol {sym.name} (mix {mix}) conflicts with "
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
    return encode_name(name)


def build_kernels(symbols: Iterable[ElfSymbol], default_attr_type: int,
                  features: ElfFeatures = FEATURES_910B) -> tuple[ElfKernel, ...]:
    """RegisterAllKernelCommon: symbols in order, mix halves merged by stripped name; returns the
    name map's values in its (byte-wise) order."""
    by_name: dict[str, ElfKernel] = {}
    for sym in symbols:
        name = strip_mix_suffix(sym.name)
        if not name:
            raise invalid(f"kernel name {sym.name!r} is empty once _mix_aic/_mix_aiv is removed")
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


__all__ = ["strip_mix_suffix", "tiling_key", "kernel_type_and_mix", "build_kernels",
           "build_entry_table", "program_attr_type"]
