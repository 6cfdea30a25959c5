"""The C declarations the library exports, read from headers: ``cc -E`` with the include
directory (and a few typedef-only stand-ins for the C library's headers, so the preprocessed text
is only the ACL interface), parsed with pycparser (cffi's dependency).

Each ``acl*`` function becomes a :class:`CFunc`: its name, return type and parameters, every type
both as written (the C text the generated wrapper repeats, so the compiler checks it against the
header's declaration) and classified (:class:`CType`): an integer of a given C base type, a
floating type, a pointer (to what), a function pointer (with its resolved signature, for cffi), a
struct by value, or ``void``.
"""
from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import tempfile

import pycparser
from pycparser import c_ast, c_generator

# typedef-only stand-ins for the C library headers the ACL headers include (the types are what
# matters: the wrappers are compiled against the real ones afterwards)
FAKE_LIBC = {
    "stdint.h": """typedef signed char int8_t; typedef short int16_t; typedef int int32_t;
typedef long int64_t; typedef unsigned char uint8_t; typedef unsigned short uint16_t;
typedef unsigned int uint32_t; typedef unsigned long uint64_t; typedef unsigned long uintptr_t;
typedef long intptr_t;
#define INT32_MAX 2147483647
#define UINT32_MAX 4294967295U
#define INT64_MAX 9223372036854775807L
#define UINT64_MAX 18446744073709551615UL
""",
    "stddef.h": "typedef unsigned long size_t; typedef long ptrdiff_t;\n#define NULL ((void*)0)\n",
    "stdbool.h": "typedef _Bool bool;\n#define true 1\n#define false 0\n",
    "stdio.h": "typedef struct _FILE FILE;\n", "stdlib.h": "", "string.h": "",
    "stdarg.h": "typedef char *va_list;\n",
}

INT_BASES = {
    "char": ("int8_t", True), "signed char": ("int8_t", True), "unsigned char": ("uint8_t", False),
    "short": ("int16_t", True), "unsigned short": ("uint16_t", False), "int": ("int32_t", True),
    "signed int": ("int32_t", True), "unsigned int": ("uint32_t", False),
    "unsigned": ("uint32_t", False), "long": ("int64_t", True),
    "unsigned long": ("uint64_t", False), "long long": ("int64_t", True),
    "unsigned long long": ("uint64_t", False), "_Bool": ("uint8_t", False),
    "long int": ("int64_t", True), "unsigned long int": ("uint64_t", False),
    "short int": ("int16_t", True), "long long int": ("int64_t", True),
    "unsigned long long int": ("uint64_t", False),
}
NAMED_INTS = {"int8_t": True, "int16_t": True, "int32_t": True, "int64_t": True,
              "uint8_t": False, "uint16_t": False, "uint32_t": False, "uint64_t": False,
              "size_t": False, "uintptr_t": False, "intptr_t": True, "ptrdiff_t": True,
              "bool": False}

_GEN = c_generator.CGenerator()


class CType:
    """A classified C type. ``kind``: "int" (``base`` the fixed-width C type, ``signed``),
    "float" (``base`` "float"/"double"), "ptr" (``to`` the pointee's CType, ``const`` whether the
    pointee is const, ``char`` whether it is a char), "fn" (a function pointer: ``ret``, ``args``
    CTypes), "struct" (by value), "void"."""
    __slots__ = ("kind", "base", "signed", "to", "const", "char", "ret", "args", "text")

    def __init__(self, kind, base="", signed=False, to=None, const=False, char=False, ret=None,
                 args=(), text=""):
        self.kind, self.base, self.signed, self.to, self.const = kind, base, signed, to, const
        self.char, self.ret, self.args, self.text = char, ret, tuple(args), text

    def cffi(self) -> str:
        """The type in cffi's basic spelling (typedefs resolved; every pointer ``void *``)."""
        if self.kind == "int":
            return self.base
        if self.kind == "float":
            return self.base
        if self.kind == "void":
            return "void"
        if self.kind == "fn":
            return f"{self.ret.cffi()}(*)({', '.join(a.cffi() for a in self.args) or 'void'})"
        return "void *"

    def __repr__(self):
        return f"CType({self.kind}, {self.text!r})"


class CFunc:
    """One declared function: ``name``, ``ret`` (CType), ``params`` [(name, CType)], ``decl``
    (the prototype's text as the header declares it, parameter names included)."""
    __slots__ = ("name", "ret", "params", "decl")

    def __init__(self, name, ret, params, decl):
        self.name, self.ret, self.params, self.decl = name, ret, params, decl


class Types:
    """The typedef table of one parse, and the classifier over it."""

    def __init__(self, typedefs: dict[str, c_ast.Node], structs: set[str]):
        self.typedefs, self.structs = typedefs, structs

    def classify(self, node) -> CType:
        text = _GEN.visit(node)
        if isinstance(node, c_ast.Decl):
            node = node.type
        if isinstance(node, c_ast.Typename):
            node = node.type
        if isinstance(node, c_ast.PtrDecl):
            inner = node.type
            to = self.classify(inner)
            if to.kind == "fn":                     # a pointer to a function type
                return CType("fn", ret=to.ret, args=to.args, text=text)
            const = "const" in getattr(inner, "quals", []) or _is_const(inner)
            char = to.kind == "int" and _names(inner) in (["char"], ["const", "char"])
            return CType("ptr", to=to, const=const, char=char, text=text)
        if isinstance(node, c_ast.ArrayDecl):
            return CType("ptr", to=self.classify(node.type), text=text)
        if isinstance(node, c_ast.FuncDecl):
            args = []
            if node.args is not None:
                for p in node.args.params:
                    if isinstance(p, c_ast.EllipsisParam):
                        continue
                    t = self.classify(p)
                    if t.kind != "void":
                        args.append(t)
            return CType("fn", ret=self.classify(node.type), args=args, text=text)
        if isinstance(node, c_ast.TypeDecl):
            t = node.type
            if isinstance(t, c_ast.IdentifierType):
                name = " ".join(x for x in t.names)
                if name == "void":
                    return CType("void", text=text)
                if name in ("float", "double"):
                    return CType("float", base=name, text=text)
                if name in NAMED_INTS:
                    return CType("int", base=_fixed(name), signed=NAMED_INTS[name], text=text)
                if name in INT_BASES:
                    b, s = INT_BASES[name]
                    return CType("int", base=b, signed=s, text=text)
                if name in self.typedefs:
                    r = self.classify(self.typedefs[name])
                    r.text = text
                    return r
                raise ValueError(f"unknown type {name}")
            if isinstance(t, c_ast.Enum):
                return CType("int", base="int32_t", signed=True, text=text)
            if isinstance(t, (c_ast.Struct, c_ast.Union)):
                return CType("struct", base=t.name or "", text=text)
        raise ValueError(f"cannot classify {text}")


def _fixed(name: str) -> str:
    return {"size_t": "uint64_t", "uintptr_t": "uint64_t", "intptr_t": "int64_t",
            "ptrdiff_t": "int64_t", "bool": "uint8_t"}.get(name, name)


def _names(node) -> list[str]:
    if isinstance(node, c_ast.TypeDecl) and isinstance(node.type, c_ast.IdentifierType):
        return list(node.quals) + node.type.names
    return []


def _is_const(node) -> bool:
    return isinstance(node, c_ast.TypeDecl) and "const" in node.quals


def preprocess(include_dir: os.PathLike, headers: list[str], cc: str | None = None) -> str:
    """The ACL headers preprocessed with the C library's headers replaced by typedef stand-ins."""
    cc = cc or shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if cc is None:
        raise RuntimeError("no C compiler: install gcc (apt-get install gcc) or set CC")
    with tempfile.TemporaryDirectory() as tmp:
        fake = pathlib.Path(tmp, "fake")
        fake.mkdir()
        for name, text in FAKE_LIBC.items():
            (fake / name).write_text(text)
        src = pathlib.Path(tmp, "all.c")
        src.write_text("".join(f'#include "{h}"\n' for h in headers))
        out = subprocess.run(
            [cc, "-E", "-P", "-nostdinc", "-I", str(fake), "-I", str(include_dir),
             "-D__attribute__(x)=", "-D__declspec(x)=", "-D__extension__=", "-D__restrict=",
             "-D__inline=", str(src)], capture_output=True, text=True)
        if out.returncode:
            raise RuntimeError(f"preprocessing the headers in {include_dir} failed:\n"
                               f"{out.stderr}")
        return out.stdout


def parse(include_dir: os.PathLike, headers: list[str]) -> tuple[dict[str, CFunc], Types]:
    """Every function declared in ``headers`` (under ``include_dir``), by name."""
    text = _cxx_tags(preprocess(include_dir, headers))
    ast = pycparser.CParser().parse(text, "acl-headers")
    typedefs, structs, decls = {}, set(), []
    for ext in ast.ext:
        if isinstance(ext, c_ast.Typedef):
            typedefs[ext.name] = ext.type
        elif isinstance(ext, c_ast.Decl) and isinstance(ext.type, c_ast.FuncDecl):
            decls.append(ext)
        elif isinstance(ext, c_ast.Decl) and isinstance(ext.type, c_ast.Struct):
            structs.add(ext.type.name)
    types = Types(typedefs, structs)
    funcs = {}
    for d in decls:
        fd = d.type
        params = []
        if fd.args is not None:
            for i, p in enumerate(fd.args.params):
                if isinstance(p, c_ast.EllipsisParam):
                    params.append(("...", CType("void", text="...")))
                    continue
                if not getattr(p, "name", None):
                    if types.classify(p).kind == "void":
                        continue                       # f(void)
                    _name(p, f"arg{i}")
                t = types.classify(p)
                params.append((p.name, t))
        funcs[d.name] = CFunc(d.name, types.classify(fd.type), params, _GEN.visit(d))
    return funcs, types


def _cxx_tags(text: str) -> str:
    """C++ lets a struct or enum tag name a type without a typedef (``enum acltdtTensorType
    {...};`` then ``acltdtTensorType f(...)``); C does not: add the typedefs for pycparser."""
    import re
    tags = re.findall(r"^\s*(?:enum|struct)\s+(\w+)\s*\{", text, re.M)
    typedefs = set(re.findall(r"typedef\s+(?:enum|struct)\s+\w*\s*\{?[^;]*?\b(\w+)\s*;",
                              text))
    extra = []
    for tag in tags:
        if tag not in typedefs:
            kind = re.search(rf"^\s*(enum|struct)\s+{tag}\s*\{{", text, re.M).group(1)
            extra.append(f"typedef {kind} {tag} {tag};")
    if not extra:
        return text
    # the typedefs go right after each definition's closing "};"
    for line in extra:
        kind, tag = line.split()[1:3]
        m = re.search(rf"^\s*{kind}\s+{tag}\s*\{{.*?^\s*\}}\s*;", text, re.M | re.S)
        text = text[:m.end()] + "\n" + line + text[m.end():]
    return text


def param_text(func: CFunc) -> list[str]:
    """The parameters as C declarations (``const void *argsData``), names always present."""
    return [t.text for n, t in func.params]


def _name(decl, name: str) -> None:
    """Name an unnamed parameter (its innermost TypeDecl's declname)."""
    decl.name = name
    node = decl.type
    while not isinstance(node, c_ast.TypeDecl):
        node = node.type
    node.declname = name
