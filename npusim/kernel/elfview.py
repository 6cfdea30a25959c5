"""A kernel ELF as a standard reader sees it (pyelftools), next to the runtime's view
(:func:`npusim.kernel.elf.parse_elf`, the quirk-faithful parser), and every place they disagree.

:func:`view` returns both views and the disagreements; :func:`compare` only the disagreements
(``npusim elf FILE`` prints all three). The runtime's parser stays the one that loads binaries:
this module explains, for one file, where its quirks (kernel.md §9; the docstring of
:mod:`npusim.kernel.elf`) make a difference -- a file that loads only because the runtime skips a
check, a TLV whose fields the runtime reads past its declared length, a field read with the wrong
width or byte order, data the runtime never sees. A conforming file (every shipped sample, every
little-endian ``elfwrite`` output) has none.

The standard view: header, sections, symbols of the first SHT_SYMTAB, the so name and notes
from pyelftools. Ascend metadata sections (``.ascend.meta*``) are SHT_NOTE sections that hold
TLVs, not ELF note records, so the standard view reads them as back-to-back TLVs (type, length,
value of that length; :mod:`npusim.kernel.elflayout`) in the file's byte order.
"""
from __future__ import annotations

import io
from dataclasses import dataclass

from elftools.elf.elffile import ELFFile
from elftools.elf.sections import NoteSection, SymbolTableSection

from .elf import ElfError, ElfImage, parse_elf
from .elflayout import (
    BINARY_META_VALUE_LAYOUT, EHDR, ELF_MAGIC, ELFDATA2LSB, ELFDATA2MSB, META_VALUE_HOST_ORDER,
    META_VALUE_LAYOUT, META_VALUE_SIZED, NAME_MAX_LENGTH, SECTION_BINARY_META, SECTION_META_PREFIX,
    SYM_SIZE, TLV_HEAD, TLV_HEAD_SIZE, U16, U32, BinaryMetaType, MetaType,
)
from .elftypes import FEATURES_910B, ElfFeatures, decode_name

META_PREFIX = decode_name(SECTION_META_PREFIX)
BINARY_META = decode_name(SECTION_BINARY_META)
MAX_WIDTH = 8                    # GetByte reads fields of 1..8 bytes; any other width reads 0

KINDS = {
    "magic": "the e_ident magic is not \\x7fELF: the runtime never checks it",
    "ei_data": "EI_DATA is neither 1 nor 2: the runtime reads the file little-endian",
    "rejected": "a standard reader rejects the file; the runtime loads it",
    "refused": "the runtime refuses a file a standard reader accepts",
    "section": "a section header field the runtime reads differently (sh_link / sh_info are "
               "8-byte reads truncated to 32 bits; section names)",
    "bounds": "section data past the end of the file: the runtime reads zeros there",
    "symtab": "the symbol table's sh_entsize is not 24: the runtime reads 24-byte records",
    "symbols": "the kernel symbols (GLOBAL FUNC, not hidden) differ",
    "globals": "GLOBAL OBJECT symbols the runtime does not see",
    "soname": "the so name differs (the runtime uses the sections named .dynstr/.dynamic)",
    "meta_name": "a metadata section name the runtime matches as a substring",
    "meta_duplicate": "two metadata sections of one name: the runtime takes the kernel's "
                      "metadata from the last and the meta query APIs' TLVs from the first",
    "meta_size": "a metadata section over 64 KiB: the runtime keeps its size in 16 bits",
    "tlv_overrun": "a TLV declares a length past its section: the runtime drops it and the rest",
    "tlv_trailing": "bytes after the last TLV that the runtime never reads",
    "tlv_short": "the runtime reads a TLV's fields past its declared length",
    "tlv_width": "a TLV read as one field as wide as its declared length, which is not 1..8 "
                 "bytes: the runtime reads 0",
    "host_order": "a TLV field the runtime reads in host (little-endian) order in a big-endian "
                  "file",
}
"""Every kind of :class:`Disagreement`, with what it means."""


@dataclass(frozen=True)
class Disagreement:
    """One place where the standard view and the runtime's parse differ."""
    kind: str
    """A key of :data:`KINDS`."""
    where: str
    standard: str
    """What a standard reader (pyelftools) sees."""
    runtime: str
    """What the runtime's parser does instead."""

    def __str__(self) -> str:
        return f"{self.where}: standard: {self.standard}; runtime: {self.runtime}  [{self.kind}]"


# ---- the standard view
@dataclass(frozen=True)
class StdSection:
    index: int
    name: str
    type: str
    """pyelftools' name of sh_type (SHT_PROGBITS ...), or the number."""
    flags: int
    offset: int
    size: int
    link: int
    info: int
    entsize: int


@dataclass(frozen=True)
class StdSymbol:
    name: str
    type: str
    bind: str
    visibility: str
    shndx: int | str
    value: int
    size: int


@dataclass(frozen=True)
class Tlv:
    offset: int
    """Offset of the TLV head in its section."""
    type: int
    length: int
    """The declared value length."""
    value: bytes


@dataclass(frozen=True)
class TlvSection:
    """A ``.ascend.meta*`` section read as back-to-back TLVs."""
    index: int
    name: str
    type: str
    tlvs: tuple[Tlv, ...]
    overrun: Tlv | None
    """A TLV whose declared length runs past the section (its ``value`` is what is there)."""
    trailing: int
    """Bytes after the last TLV, too few for a TLV head."""


@dataclass(frozen=True)
class StdNotes:
    """The ELF note records of an SHT_NOTE section that is not Ascend metadata."""
    name: str
    records: tuple[tuple[str, str, int], ...]
    """(n_name, n_type, n_descsz) per record."""


@dataclass(frozen=True)
class StandardView:
    """What pyelftools reads; ``error`` is why it stopped, if it did (the rest is what it read
    before that)."""
    error: str | None = None
    elfclass: int = 0
    little_endian: bool = True
    machine: str = ""
    sections: tuple[StdSection, ...] = ()
    symtab: str | None = None
    """Name of the symbol table read (the first SHT_SYMTAB)."""
    symbols: tuple[StdSymbol, ...] = ()
    metadata: tuple[TlvSection, ...] = ()
    notes: tuple[StdNotes, ...] = ()
    soname: str | None = None


@dataclass(frozen=True)
class ElfView:
    """Both views of one file and where they disagree."""
    standard: StandardView
    image: ElfImage | None
    """The runtime's parse; None when it refuses the file (``refused``)."""
    refused: ElfError | None
    disagreements: tuple[Disagreement, ...]


def _tlv_section(index: int, name: str, type_: str, data: bytes, order: str) -> TlvSection:
    tlvs, pos, overrun = [], 0, None
    while len(data) - pos >= TLV_HEAD_SIZE:
        head = data[pos:pos + TLV_HEAD_SIZE]
        t = int.from_bytes(head[TLV_HEAD.type.offset:TLV_HEAD.type.end], order)
        n = int.from_bytes(head[TLV_HEAD.length.offset:TLV_HEAD.length.end], order)
        tlv = Tlv(pos, t, n, data[pos + TLV_HEAD_SIZE:pos + TLV_HEAD_SIZE + n])
        if pos + TLV_HEAD_SIZE + n > len(data):
            overrun = tlv
            break
        tlvs.append(tlv)
        pos += TLV_HEAD_SIZE + n
    trailing = 0 if overrun else len(data) - pos
    return TlvSection(index, name, type_, tuple(tlvs), overrun, trailing)


def _machine(value) -> str:
    """pyelftools' e_machine: a name (EM_AARCH64) or, for machines it does not know, a number."""
    return f"{value:#x}" if isinstance(value, int) else str(value)


def standard_view(data: bytes) -> StandardView:
    """The file as pyelftools reads it. pyelftools signals a malformed file with many exception
    types (ELFError, construct's errors, ValueError, struct.error ...); any of them ends the
    standard view with ``error`` set."""
    got: dict = {}
    try:
        elf = ELFFile(io.BytesIO(bytes(data)))
        got.update(elfclass=elf.elfclass, little_endian=elf.little_endian,
                   machine=_machine(elf["e_machine"]))
        order = "little" if elf.little_endian else "big"
        sections, metadata, notes = [], [], []
        for i in range(elf.num_sections()):
            sec = elf.get_section(i)
            h = sec.header
            sections.append(StdSection(i, sec.name, str(h["sh_type"]), h["sh_flags"],
                                       h["sh_offset"], h["sh_size"], h["sh_link"], h["sh_info"],
                                       h["sh_entsize"]))
            got["sections"] = tuple(sections)
            if BINARY_META in sec.name:
                metadata.append(_tlv_section(i, sec.name, str(h["sh_type"]), sec.data(), order))
            elif isinstance(sec, NoteSection):
                notes.append(StdNotes(sec.name, tuple(
                    (str(n["n_name"]), str(n["n_type"]), n["n_descsz"]) for n in sec.iter_notes())))
            got.update(metadata=tuple(metadata), notes=tuple(notes))
        symtab = next((s for s in elf.iter_sections() if s["sh_type"] == "SHT_SYMTAB"), None)
        if isinstance(symtab, SymbolTableSection):
            got["symtab"] = symtab.name
            got["symbols"] = tuple(
                StdSymbol(s.name, str(s["st_info"]["type"]), str(s["st_info"]["bind"]),
                          str(s["st_other"]["visibility"]), s["st_shndx"], s["st_value"],
                          s["st_size"])
                for s in symtab.iter_symbols())
        dynamic = next((s for s in elf.iter_sections() if s["sh_type"] == "SHT_DYNAMIC"), None)
        if dynamic is not None:
            got["soname"] = next((t.soname for t in dynamic.iter_tags()
                                  if t.entry.d_tag == "DT_SONAME"), None)
    except Exception as exc:  # noqa: BLE001  (see the docstring: any failure is a rejection)
        got["error"] = f"{type(exc).__name__}: {exc}"
    return StandardView(**got)


# ---- the comparison
def _header(data: bytes, image: ElfImage) -> list[Disagreement]:
    out = []
    magic = bytes(data[EHDR.magic.offset:EHDR.magic.end])
    if magic != ELF_MAGIC:
        out.append(Disagreement("magic", "header", f"magic {magic!r}: not an ELF file",
                                "never checks the magic; loads it"))
    if image.ei_data not in (ELFDATA2LSB, ELFDATA2MSB):
        out.append(Disagreement("ei_data", "header", f"EI_DATA {image.ei_data}: invalid",
                                "reads the file little-endian"))
    return out


def _sections(std: StandardView, data: bytes, image: ElfImage) -> list[Disagreement]:
    out = []
    big = not std.little_endian
    for s in std.sections:
        if s.index >= len(image.sections):
            break
        r = image.sections[s.index]
        where = f"section {s.index} {s.name or r.name or '(no name)'}"
        if s.name != r.name:
            out.append(Disagreement("section", where, f"name {s.name!r}",
                                    f"name {r.name!r} (from e_shstrndx {_shstrndx(data)})"))
        if s.link != r.link:
            out.append(Disagreement(
                "section", where, f"sh_link {s.link}", f"sh_link {r.link}: an 8-byte read "
                "truncated to 32 bits" + (" (the sh_info bytes in a big-endian file)" if big
                                          else "")))
        if s.info != r.info:
            out.append(Disagreement(
                "section", where, f"sh_info {s.info}", f"sh_info {r.info}: an 8-byte read "
                "truncated to 32 bits" + (" (the high half of sh_addralign in a big-endian "
                                          "file)" if big else "")))
        if s.type != "SHT_NOBITS" and s.size and s.offset + s.size > len(data):
            out.append(Disagreement(
                "bounds", where, f"[{s.offset:#x}, +{s.size:#x}) ends past the end of the file "
                f"({len(data):#x})", "reads zeros past the end of the file"))
    return out


def _shstrndx(data: bytes) -> int:
    """e_shstrndx in the order the runtime reads it (little-endian unless EI_DATA is 2)."""
    order = "big" if len(data) > EHDR.ei_data.offset and \
        data[EHDR.ei_data.offset] == ELFDATA2MSB else "little"
    return int.from_bytes(data[EHDR.e_shstrndx.offset:EHDR.e_shstrndx.end], order)


def _symbols(std: StandardView, image: ElfImage) -> list[Disagreement]:
    out = []
    symtab = next((s for s in std.sections if s.type == "SHT_SYMTAB"), None)
    if symtab is not None and symtab.entsize and symtab.entsize != SYM_SIZE:
        out.append(Disagreement("symtab", f"section {symtab.index} {symtab.name}",
                                f"sh_entsize {symtab.entsize}: symbols every "
                                f"{symtab.entsize} bytes",
                                f"reads {SYM_SIZE}-byte records whatever sh_entsize says"))
    want = [(s.name, s.value, s.size) for s in std.symbols
            if s.type == "STT_FUNC" and s.bind == "STB_GLOBAL" and s.visibility != "STV_HIDDEN"
            and s.name]
    got = [(s.name, s.offset, s.length) for s in image.symbols]
    if want != got:
        diffs = []
        by_name = {s[0]: s for s in got}
        for name, value, size in want:
            r = by_name.pop(name, None)
            where = f"symbol {name[:60]}" + ("..." if len(name) > 60 else "")
            if r is None:
                why = (f"skips names of {NAME_MAX_LENGTH} bytes or more"
                       if len(name.encode("utf-8", "surrogateescape")) >= NAME_MAX_LENGTH
                       else "does not register it")
                diffs.append(Disagreement("symbols", where, "a kernel symbol", why))
            elif (value, size) != r[1:]:
                diffs.append(Disagreement(
                    "symbols", where, f"st_value {value:#x}, st_size {size}",
                    f"offset {r[1]:#x}, length {r[2]} (st_value and st_size truncated to "
                    f"32 bits)" if value > U32 or size > U32 else
                    f"offset {r[1]:#x}, length {r[2]}"))
        for name, offset, length in by_name.values():
            diffs.append(Disagreement("symbols", f"symbol {name}", "not a kernel symbol of "
                                      f"{std.symtab or 'the symbol table'}",
                                      f"a kernel at {offset:#x}, {length} bytes"))
        if not diffs:                                    # the same symbols in another order
            diffs.append(Disagreement("symbols", "symbols",
                                      "order " + ", ".join(n for n, *_ in want),
                                      "order " + ", ".join(n for n, *_ in got)))
        out += diffs
    missing = [s.name for s in std.symbols if s.type == "STT_OBJECT" and s.bind == "STB_GLOBAL"
               and isinstance(s.shndx, int) and s.name and s.name not in image.globals]
    if missing:
        stop = next((s for s in std.symbols if s.type == "STT_OBJECT"
                     and not isinstance(s.shndx, int)), None)
        out.append(Disagreement(
            "globals", "global variables", ", ".join(missing),
            "does not see them" + (f": it stops reading object symbols at {stop.name!r} "
                                   f"(st_shndx {stop.shndx})" if stop else "")))
    return out


def _soname(std: StandardView, image: ElfImage) -> list[Disagreement]:
    if std.soname == image.so_name:
        return []
    return [Disagreement("soname", "so name", repr(std.soname), repr(image.so_name))]


def tlv_type_name(section: str, t: int) -> str:
    """MetaType / BinaryMetaType name of TLV type ``t`` in the metadata section ``section``
    (the number for a type the runtime does not know)."""
    kinds = BinaryMetaType if section == BINARY_META else MetaType
    return kinds(t).name if t in kinds._value2member_map_ else str(t)


def _value_checks(sec: TlvSection, tlv: Tlv, big: bool, binary: bool) -> list[Disagreement]:
    where = f"{sec.name} TLV {tlv_type_name(sec.name, tlv.type)} at +{tlv.offset:#x}"
    layout = (BINARY_META_VALUE_LAYOUT if binary else META_VALUE_LAYOUT).get(tlv.type)
    out = []
    if layout is not None:
        need = max(f.end for f in layout)
        if tlv.length < need:
            out.append(Disagreement("tlv_short", where, f"a {tlv.length}-byte value",
                                    f"reads {need} bytes of value at fixed offsets, "
                                    f"{need - tlv.length} past the declared length"))
        host = binary or tlv.type in META_VALUE_HOST_ORDER
        if big and host:
            for fname, f in layout._asdict().items():
                raw = tlv.value[f.offset:f.end] if f.end <= tlv.length else b""
                if f.size > 1 and raw and raw != raw[::-1]:
                    out.append(Disagreement(
                        "host_order", f"{where} field {fname}",
                        f"{int.from_bytes(raw, 'big'):#x} (file order)",
                        f"{int.from_bytes(raw, 'little'):#x} (host order)"))
    elif not binary and tlv.type in META_VALUE_SIZED and not 1 <= tlv.length <= MAX_WIDTH:
        value = int.from_bytes(tlv.value, "big" if big else "little")
        if value:
            out.append(Disagreement("tlv_width", where,
                                    f"value {value:#x} ({tlv.length} bytes)",
                                    f"reads 0 (a {tlv.length}-byte field)"))
    return out


def _metadata(std: StandardView, image: ElfImage) -> list[Disagreement]:
    out = []
    big = not std.little_endian
    seen: dict[str, TlvSection] = {}
    for sec in std.metadata:
        where = f"section {sec.index} {sec.name}"
        binary = sec.name == BINARY_META
        kernel_meta = sec.name.startswith(META_PREFIX)
        if not (binary or kernel_meta):
            if META_PREFIX in sec.name and sec.type in ("SHT_PROGBITS", "SHT_NOTE"):
                out.append(Disagreement("meta_name", where, "not a kernel metadata section",
                                        f"takes it for the metadata of kernel "
                                        f"{sec.name[len(META_PREFIX):]!r}"))
            continue
        first = seen.setdefault(sec.name, sec)
        if first is not sec:
            out.append(Disagreement("meta_duplicate", where,
                                    f"a second section named {sec.name}",
                                    f"kernel metadata from section {sec.index}, meta query "
                                    f"TLVs from section {first.index}"))
        size = next(s.size for s in std.sections if s.index == sec.index)
        if kernel_meta and size > U16:
            out.append(Disagreement("meta_size", where, f"{size} bytes",
                                    f"keeps the size as {size & U16} (16 bits)"))
        if sec.overrun is not None:
            t = sec.overrun
            out.append(Disagreement("tlv_overrun", f"{where} TLV at +{t.offset:#x}",
                                    f"type {t.type} declares {t.length} bytes, "
                                    f"{len(t.value)} left in the section",
                                    "drops it and everything after it"))
        if sec.trailing:
            out.append(Disagreement("tlv_trailing", where,
                                    f"{sec.trailing} byte(s) after the last TLV",
                                    "never reads them"))
        if first is sec:
            out += _runtime_tlvs(sec, image, binary)
        if sec.type in ("SHT_PROGBITS", "SHT_NOTE"):
            for tlv in sec.tlvs:
                out += _value_checks(sec, tlv, big, binary)
    return out


def _runtime_tlvs(sec: TlvSection, image: ElfImage, binary: bool) -> list[Disagreement]:
    """The TLVs the runtime's meta query APIs return for this section, against the standard
    walk (a zero-length TLV in the last 4 bytes is one the runtime's loop never reaches)."""
    want = tuple((t.type, t.value) for t in sec.tlvs)
    got = image.binary_meta if binary else image.function_meta.get(sec.name[len(META_PREFIX):])
    where = f"section {sec.index} {sec.name}"
    if got is None:
        return [Disagreement("meta_name", where, f"{len(want)} TLVs", "does not see the section")]
    if got == want:
        return []
    if want[:len(got)] == got:
        return [Disagreement("tlv_trailing", where,
                             f"{len(want)} TLVs; the last {len(want) - len(got)} end the section",
                             f"reads {len(got)}: its loop stops when {TLV_HEAD_SIZE} bytes or "
                             f"fewer are left")]
    return [Disagreement("tlv_overrun", where, f"{len(want)} TLVs", f"{len(got)} other TLVs")]


def view(data, features: ElfFeatures = FEATURES_910B) -> ElfView:
    """Both views of ``data`` and their disagreements (``features``: the chip's parse rules)."""
    std = standard_view(data)
    image, refused = None, None
    try:
        image = parse_elf(data, features)
    except ElfError as e:
        refused = e
    out: list[Disagreement] = []
    if image is None:
        if std.error is None:
            out.append(Disagreement("refused", "file", f"an ELF{std.elfclass} file of "
                                    f"{len(std.sections)} sections", f"refuses it: {refused}"))
    else:
        raw = bytes(data)
        out += _header(raw, image)
        if std.error is not None:            # the rest of the standard view is incomplete
            out.append(Disagreement("rejected", "file", f"rejects it: {std.error}",
                                    f"loads it ({len(image.kernels)} kernels)"))
        else:
            out += _sections(std, raw, image)
            out += _symbols(std, image)
            out += _soname(std, image)
            out += _metadata(std, image)
    return ElfView(std, image, refused, tuple(out))


def compare(data, features: ElfFeatures = FEATURES_910B) -> list[Disagreement]:
    """Every place where a standard ELF reader (pyelftools) and the runtime's parser disagree
    about ``data``; empty for a conforming file."""
    return list(view(data, features).disagreements)


__all__ = ["Disagreement", "KINDS", "StandardView", "StdSection", "StdSymbol", "StdNotes",
           "Tlv", "TlvSection", "ElfView", "standard_view", "view", "compare", "tlv_type_name"]
