"""Crafting kernel ELF files for tests: a kernel spec with default code, and patching a section
header field of a written (little-endian) file."""
from __future__ import annotations

import struct

from npusim.kernel.elf import parse_elf
from npusim.kernel.elfwrite import KernelSpec

SHDR = 64
CODE = bytes(range(1, 33))


def k(name: str, code: bytes = CODE, **meta) -> KernelSpec:
    return KernelSpec(name, code, **meta)


def shdr(data: bytes, index: int) -> int:
    """File offset of section header ``index`` (little-endian file)."""
    return struct.unpack_from("<Q", data, 40)[0] + SHDR * index


def section_index(data: bytes, name: str) -> int:
    return next(s.index for s in parse_elf(data).sections if s.name == name)


def patch(data: bytes, offset: int, fmt: str, value) -> bytes:
    buf = bytearray(data)
    struct.pack_into(fmt, buf, offset, value)
    return bytes(buf)


def patch_section(data: bytes, name: str, field: str, value: int) -> bytes:
    fields = {"name": (0, "<I"), "type": (4, "<I"), "flags": (8, "<Q"), "addr": (16, "<Q"),
              "offset": (24, "<Q"), "size": (32, "<Q"), "link": (40, "<I"), "info": (44, "<I"),
              "entsize": (56, "<Q")}
    off, fmt = fields[field]
    return patch(data, shdr(data, section_index(data, name)) + off, fmt, value)
