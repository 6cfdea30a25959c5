"""``npusim elf FILE``: list the kernels of a kernel binary as the runtime registers them.

One row per registered kernel (``_mix_aic``/``_mix_aiv`` halves merged): name, kernel type (and mix
type), entry key (tiling key or function entry; ``-`` when the kernel is not in the entry table),
code offset(s) in the device image, code size(s), parameters (PARAM_INFO ``offset:size`` per
parameter, or the userArgsNum from DFX info when the binary has no PARAM_SUMMARY).
"""
from __future__ import annotations

import argparse
import sys

from ..kernel.elf import DEFAULT_USER_ARGS_NUM, AttrType, ElfError, MixType, features_for, parse_elf
from ..profiles import get_profile
from .command import Command

_ATTR = {int(a): a.name for a in AttrType}
_MIX = {int(m): m.name for m in MixType}
_COLUMNS = ("name", "type", "entry", "offset", "size", "params")


def describe(data: bytes, profile: str | None = None) -> list[dict]:
    """Rows (dicts) for the kernels of ``data``; raises ElfError like the loader."""
    image = parse_elf(data, features_for(get_profile(profile)))
    in_table = {name: key for key, name in image.entries.items()}
    rows = []
    for k in image.kernels:
        kind = _ATTR.get(k.attr_type, str(k.attr_type))
        if k.mix_type:
            kind += "/" + _MIX.get(k.mix_type, str(k.mix_type))
        if k.has_param_summary:
            params = " ".join(f"{p.offset}:{p.size}" for p in k.params) or "(none)"
        else:
            params = f"{k.user_args_num} args (DFX)" if k.user_args_num != DEFAULT_USER_ARGS_NUM \
                else "-"
        rows.append({
            "name": k.name, "type": kind,
            "entry": str(in_table[k.name]) if k.name in in_table else "-",
            "offset": f"0x{k.offset:x}" + (f",0x{k.offset2:x}" if k.offset2 else ""),
            "size": str(k.length) + (f",{k.length2}" if k.length2 else ""),
            "params": params,
        })
    return rows


def run(args: argparse.Namespace) -> int:
    try:
        with open(args.file, "rb") as f:
            data = f.read()
    except OSError as e:
        print(f"npusim elf: {e}", file=sys.stderr)
        return 1
    try:
        rows = describe(data, args.profile)
    except ElfError as e:
        print(f"npusim elf: {args.file}: the runtime would refuse this binary: {e}",
              file=sys.stderr)
        return 1
    width = {c: max([len(c)] + [len(r[c]) for r in rows]) for c in _COLUMNS}
    print("  ".join(c.upper().ljust(width[c]) for c in _COLUMNS).rstrip())
    for r in rows:
        print("  ".join(r[c].ljust(width[c]) for c in _COLUMNS).rstrip())
    print(f"{len(rows)} kernel(s)")
    return 0


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="kernel ELF binary (.o)")
    p.add_argument("--profile", default=None, help="chip profile whose parse rules apply "
                                                   "(default: $NPUSIM_PROFILE or Ascend910B)")


COMMAND = Command("elf", "list the kernels of a kernel ELF binary (name, type, entry key, offset, "
                         "size, params)", run, _arguments)
