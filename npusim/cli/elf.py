"""``npusim elf FILE``: the kernels of a kernel binary as the runtime registers them, the file as a
standard ELF reader sees it (pyelftools), and every place the two disagree
(:mod:`npusim.kernel.elfview`).

The kernel table has one row per registered kernel (``_mix_aic``/``_mix_aiv`` halves merged):
name, kernel type (and mix type), entry key (tiling key or function entry; ``-`` when the kernel
is not in the entry table), code offset(s) in the device image, code size(s), parameters
(PARAM_INFO ``offset:size`` per parameter, or the userArgsNum from DFX info when the binary has
no PARAM_SUMMARY). The standard view lists sections, the symbols of the first SHT_SYMTAB, the
metadata sections' TLVs and ELF notes; the disagreements come last.
"""
from __future__ import annotations

import argparse
import sys

from ..kernel import elfview
from ..kernel.elf import (DEFAULT_USER_ARGS_NUM, AttrType, ElfImage, MixType, features_for,
                          parse_elf)
from ..profiles import get_profile
from .command import Command

_ATTR = {int(a): a.name for a in AttrType}
_MIX = {int(m): m.name for m in MixType}
_COLUMNS = ("name", "type", "entry", "offset", "size", "params")


def describe(data: bytes, profile: str | None = None) -> list[dict]:
    """Rows (dicts) for the kernels of ``data``; raises ElfError like the loader."""
    return kernel_rows(parse_elf(data, features_for(get_profile(profile))))


def kernel_rows(image: ElfImage) -> list[dict]:
    """Rows (dicts) for the registered kernels of a parsed binary."""
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


def _table(rows: list[dict], cols: tuple[str, ...], indent: str = "") -> list[str]:
    width = {c: max([len(c)] + [len(r[c]) for r in rows]) for c in cols}
    lines = [indent + "  ".join(c.upper().ljust(width[c]) for c in cols).rstrip()]
    lines += [indent + "  ".join(r[c].ljust(width[c]) for c in cols).rstrip() for r in rows]
    return lines


def _short(name: str) -> str:
    """SHT_PROGBITS -> PROGBITS, STT_FUNC -> FUNC (pyelftools' enum names, readelf's style)."""
    return name.split("_", 1)[1] if name[:4] in ("SHT_", "STT_", "STB_", "STV_", "SHN_") else name


def standard_lines(std: elfview.StandardView) -> list[str]:
    """The standard view as text: header, sections, symbols, metadata TLVs, notes."""
    order = "little-endian" if std.little_endian else "big-endian"
    if not std.elfclass:                         # pyelftools stopped at e_ident
        out = ["standard view (pyelftools): not an ELF file it can read"]
    else:
        out = [f"standard view (pyelftools): ELF{std.elfclass} {order}, e_machine {std.machine}, "
               f"{len(std.sections)} sections" + (f", so name {std.soname}" if std.soname else "")]
    if std.sections:
        out += _table([{"nr": str(x.index), "name": x.name, "type": _short(x.type),
                        "flags": f"{x.flags:#x}", "offset": f"{x.offset:#x}", "size": str(x.size),
                        "link": str(x.link), "info": str(x.info)} for x in std.sections],
                      ("nr", "name", "type", "flags", "offset", "size", "link", "info"), "  ")
    if std.symtab is not None:
        out.append(f"  symbols of {std.symtab}: {len(std.symbols)}")
        out += _table([{"value": f"{x.value:#x}", "size": str(x.size), "type": _short(x.type),
                        "bind": _short(x.bind), "vis": _short(x.visibility),
                        "ndx": _short(str(x.shndx)), "name": x.name} for x in std.symbols],
                      ("value", "size", "type", "bind", "vis", "ndx", "name"), "    ")
    if std.metadata:
        out.append("  metadata sections, read as TLVs (type(length)):")
        for m in std.metadata:
            runs: list[list] = []                    # consecutive equal TLVs as one "x N" item
            for t in m.tlvs:
                item = f"{elfview.tlv_type_name(m.name, t.type)}({t.length})"
                if runs and runs[-1][0] == item:
                    runs[-1][1] += 1
                else:
                    runs.append([item, 1])
            tlvs = " ".join(item + (f" x{n}" if n > 1 else "") for item, n in runs)
            bad = (f" + overrun {m.overrun.type}({m.overrun.length})" if m.overrun else "") + \
                (f" + {m.trailing} trailing byte(s)" if m.trailing else "")
            out.append(f"    {m.name}: {tlvs or '(none)'}{bad}")
    for n in std.notes:
        out.append(f"  notes of {n.name}: " + ("; ".join(f"{name or '-'} {kind} ({size} bytes)"
                                                       for name, kind, size in n.records)
                                              or "(none)"))
    if std.error:
        out.append(f"  pyelftools stopped: {std.error}")
    return out


def run(args: argparse.Namespace) -> int:
    try:
        with open(args.file, "rb") as f:
            data = f.read()
    except OSError as e:
        print(f"npusim elf: {e}", file=sys.stderr)
        return 1
    v = elfview.view(data, features_for(get_profile(args.profile)))
    if v.image is None:
        print(f"npusim elf: {args.file}: the runtime would refuse this binary: {v.refused}",
              file=sys.stderr)
    else:
        rows = kernel_rows(v.image)
        print("\n".join(_table(rows, _COLUMNS)))
        print(f"{len(rows)} kernel(s)")
        print()
    print("\n".join(standard_lines(v.standard)))
    print()
    if not v.disagreements:
        print("the standard view and the runtime's parse agree")
    else:
        print(f"{len(v.disagreements)} disagreement(s) between the standard view and the "
              f"runtime's parse:")
        for d in v.disagreements:
            print(f"  {d}")
    return 0 if v.image is not None else 1


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="kernel ELF binary (.o)")
    p.add_argument("--profile", default=None, help="chip profile whose parse rules apply "
                                                   "(default: $NPUSIM_PROFILE or Ascend910B)")


COMMAND = Command("elf", "list the kernels of a kernel ELF binary (name, type, entry key, offset, "
                         "size, params)", run, _arguments)
