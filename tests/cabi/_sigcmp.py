"""Compare function signatures of two sets of ACL headers with pycparser (tests/cabi/test_headers).

Both sets are preprocessed by ``cc -E`` against a tiny stand-in libc (the fixed-width types only)
so pycparser sees plain C; each function's declaration is reduced to its canonical type text with
typedef names resolved to their underlying type (opaque handles all become ``void *`` / a struct
pointer), and the two maps are compared function by function.
"""
from __future__ import annotations

import os
import re
import subprocess
import tempfile

FAKE_LIBC = {
    "stddef.h": "typedef unsigned long size_t; typedef long ptrdiff_t;\n#define NULL ((void*)0)\n",
    "stdint.h": "".join(f"typedef {c} {n};\n" for n, c in [
        ("int8_t", "signed char"), ("int16_t", "short"), ("int32_t", "int"), ("int64_t", "long"),
        ("uint8_t", "unsigned char"), ("uint16_t", "unsigned short"), ("uint32_t", "unsigned int"),
        ("uint64_t", "unsigned long"), ("uintptr_t", "unsigned long"), ("intptr_t", "long")]),
    "stdarg.h": "typedef char *va_list;\n",
    "stdbool.h": "typedef _Bool bool;\n",
}
for _h in ("stdlib.h", "string.h", "stdio.h"):
    FAKE_LIBC[_h] = ""


def preprocess(include_dir, headers, cc="gcc"):
    """``cc -E`` of a TU including ``headers`` from ``include_dir`` (``acl/acl.h`` ...)."""
    with tempfile.TemporaryDirectory() as tmp:
        libc = os.path.join(tmp, "libc")
        os.makedirs(libc)
        for name, text in FAKE_LIBC.items():
            with open(os.path.join(libc, name), "w") as f:
                f.write(text)
        src = os.path.join(tmp, "tu.c")
        with open(src, "w") as f:
            f.write("".join(f'#include "{h}"\n' for h in headers))
        out = subprocess.run(
            [cc, "-E", "-P", "-nostdinc", "-I", libc, "-I", include_dir,
             "-D__attribute__(x)=", "-D__declspec(x)=", "-DACL_FUNC_VISIBILITY=",
             "-D__extension__=", "-U__GNUC__", src],
            capture_output=True, text=True, check=True).stdout
    return out


def signatures(c_text):
    """{function name: (return type, [param types])} with typedefs resolved."""
    from pycparser import c_ast, c_generator, c_parser

    # pycparser does not take zero-length arrays in the old GNU spelling; [0] is fine; drop
    # `static const` initialisers' sizes are fine too.
    # a bare `enum X {...};` used as plain `X` (C++ spelling): give C its typedef
    c_text = re.sub(r"(^enum\s+(\w+)\s*\{[^}]*\}\s*;)", r"\1 typedef enum \2 \2;", c_text,
                    flags=re.M)
    c_text = re.sub(r"typedef enum (\w+) \1;(\s*typedef enum \1 \1;)", r"\2", c_text)
    ast = c_parser.CParser().parse(c_text)
    typedefs = {}
    for ext in ast.ext:
        if isinstance(ext, c_ast.Typedef):
            typedefs[ext.name] = ext.type
    gen = c_generator.CGenerator()

    def resolve(t, depth=0):
        if depth > 20:
            return "?"
        if isinstance(t, c_ast.PtrDecl):
            inner = resolve(t.type, depth + 1)
            return f"{inner}*"
        if isinstance(t, c_ast.ArrayDecl):
            return f"{resolve(t.type, depth + 1)}*"
        if isinstance(t, c_ast.FuncDecl):
            args = [resolve(p.type, depth + 1) for p in (t.args.params if t.args else [])
                    if not isinstance(p, c_ast.EllipsisParam)]
            return f"fn({','.join(args)})->{resolve(t.type, depth + 1)}"
        if isinstance(t, c_ast.TypeDecl):
            q = "const " if "const" in (t.quals or []) else ""
            ty = t.type
            if isinstance(ty, c_ast.IdentifierType):
                name = " ".join(ty.names)
                if name in typedefs:
                    return q + resolve(typedefs[name], depth + 1)
                return q + name
            if isinstance(ty, c_ast.Enum):
                return q + "int"               # an enum is passed as int
            if isinstance(ty, (c_ast.Struct, c_ast.Union)):
                return q + ("struct" if isinstance(ty, c_ast.Struct) else "union")
        return gen.visit(t)

    out = {}
    for ext in ast.ext:
        if isinstance(ext, c_ast.Decl) and isinstance(ext.type, c_ast.FuncDecl):
            fd = ext.type
            params = []
            for p in (fd.args.params if fd.args else []):
                if isinstance(p, c_ast.EllipsisParam):
                    params.append("...")
                else:
                    params.append(resolve(p.type))
            if params == ["void"]:
                params = []
            out[ext.name] = (resolve(fd.type), params)
    return out


def normalise(sig):
    """Loosen what does not change the ABI: top-level const of a by-value parameter, any opaque
    pointer (void * vs struct *), and plain int vs an enum."""
    ret, params = sig

    def norm(t):
        t = re.sub(r"^const (?!.*\*)", "", t)                  # by-value const
        t = t.replace("struct*", "void*").replace("union*", "void*")
        t = re.sub(r"const (void\*)", r"\1", t) if t.count("*") > 1 else t
        t = re.sub(r"\bsigned char\b", "char", t)
        return t
    return norm(ret), [norm(p) for p in params]


def compare(ours_dir, theirs_dir, headers):
    """[(name, ours, theirs)] for every function declared in both with a different signature."""
    ours = signatures(preprocess(ours_dir, headers))
    theirs = signatures(preprocess(theirs_dir, headers))
    diffs = []
    for name in sorted(set(ours) & set(theirs)):
        if normalise(ours[name]) != normalise(theirs[name]):
            diffs.append((name, ours[name], theirs[name]))
    return diffs, ours, theirs


def struct_names(c_text):
    """Names of the typedef'd structs and unions (complete ones) in a preprocessed text."""
    from pycparser import c_ast, c_parser
    c_text = re.sub(r"(^enum\s+(\w+)\s*\{[^}]*\}\s*;)", r"\1 typedef enum \2 \2;", c_text, flags=re.M)
    c_text = re.sub(r"typedef enum (\w+) \1;(\s*typedef enum \1 \1;)", r"\2", c_text)
    out = set()
    for ext in c_parser.CParser().parse(c_text).ext:
        if isinstance(ext, c_ast.Typedef) and isinstance(ext.type, c_ast.TypeDecl) and \
                isinstance(ext.type.type, (c_ast.Struct, c_ast.Union)) and ext.type.type.decls:
            out.add(ext.name)
    return out


def layouts(include_dir, headers, names, cxx="g++"):
    """{struct: 'size align'} measured by compiling a program against ``include_dir``."""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "l.cpp")
        with open(src, "w") as f:
            f.write("".join(f'#include "{h}"\n' for h in headers) + "#include <cstdio>\nint main(){\n")
            for n in sorted(names):
                f.write(f'std::printf("{n} %zu %zu\\n", sizeof({n}), alignof({n}));\n')
            f.write("return 0;}\n")
        exe = os.path.join(tmp, "l")
        subprocess.run([cxx, "-std=c++17", "-w", "-I", include_dir, src, "-o", exe], check=True,
                       capture_output=True)
        out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout
    return dict(line.split(" ", 1) for line in out.splitlines())
