"""Write npusim's own C declarations of the ACL interface (``npusim/cabi/include/acl/*.h``).

The declarations are extracted from the runtime's API REFERENCE (``docs/zh/api_ref`` of
``hicann/runtime``, extracted to markdown: each function page shows its prototype in a ``c`` code
block, chapter 25 shows every typedef, enum and struct), the way Wine and MinGW-w64 write their
own headers of a documented interface; CANN's header files are never read by this script.
Constants come from npusim's own tables: error codes from ``npusim.errors.CODES``, flag macros from
``npusim.acl.constants`` and the ``#define`` lines of the reference pages.

    python scripts/gen_cabi_headers.py [APIREF_DIR]     # default /tmp/apiref

Output is deterministic; ``tests/cabi/test_headers.py`` compiles it as C11 and C++17 with -Werror.
"""
from __future__ import annotations

import glob
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
OUT = os.path.join(ROOT, "npusim", "cabi", "include", "acl")

# chapter prefix -> header holding that chapter's functions (the split follows the documentation's
# chapters; every header includes acl_base.h, acl.h includes the runtime ones).
HEADER_OF_CHAPTER = [
    ("02_", "acl.h"), ("11-08", "acl_rt_allocator.h"), ("15_", "acl_mdl.h"),
    ("17-", "acl_tdt.h"), ("18_", "acl_dump.h"), ("19-", "acl_prof.h"), ("23_", "acl_log.h"),
    ("25-03", "acl_base.h"), ("", "acl_rt.h"),
]
OPERATION_HEADER = [("acltdt", "acl_tdt.h"), ("aclprof", "acl_prof.h"), ("aclmdl", "acl_mdl.h"),
                    ("aclrtAllocator", "acl_rt_allocator.h"), ("aclrt", "acl_rt.h")]
DOC_TYPOS = {"uint32 ": "uint32_t "}   # a type the reference misspells (aclGetDataBufferSize)
# Where the reference's prototype and the runtime's interface disagree, the interface wins
# (found by tests/cabi/test_headers.py's signature comparison; the fact cited, nothing copied).
SIGNATURE_FIXES = {
    # include/external/acl/acl_rt.h:856 takes the device id as int32_t; the page says uint32_t
    "(*aclrtDeviceStateCallback)(uint32_t devId": "(*aclrtDeviceStateCallback)(int32_t devId",
}
# Declarations the reference states only in prose (quoted page in the comment).
PROSE_TYPES = [
    # 18_dump_configuration acldumpChunk: "ACL_DUMP_MAX_FILE_PATH_LENGTH ... 当前为4096"
    ({"ACL_DUMP_MAX_FILE_PATH_LENGTH"}, "#define ACL_DUMP_MAX_FILE_PATH_LENGTH 4096"),
    # 19-03 aclprofGetOpAttriValue: "ACL_SUBSCRIBE_ATTRI_THREADID(0) ... ACL_SUBSCRIBE_ATTRI_NONE"
    ({"aclprofSubscribeOpAttri", "ACL_SUBSCRIBE_ATTRI_THREADID", "ACL_SUBSCRIBE_ATTRI_NONE"},
     "typedef enum {\n    ACL_SUBSCRIBE_ATTRI_THREADID = 0,\n    ACL_SUBSCRIBE_ATTRI_NONE\n} aclprofSubscribeOpAttri;"),
]
FUNC_CHAPTERS = re.compile(r"^(0[2-9]|1\d|2[0-4]|25-03)")
TYPE_CHAPTERS = re.compile(r"^(25-0[1245])")
PROTO = re.compile(r"^\s*((?:const\s+)?[A-Za-z_]\w*(?:\s+\w+)*[\s\*]+)(acl\w+|acl_\w+)\s*\((.*)\)\s*;?\s*$", re.S)
WORD = re.compile(r"[A-Za-z_]\w*")
C_KEYWORDS = {"typedef", "struct", "union", "enum", "const", "void", "char", "int", "unsigned",
              "signed", "short", "long", "float", "double", "size_t", "uint8_t", "uint16_t",
              "uint32_t", "uint64_t", "int8_t", "int16_t", "int32_t", "int64_t", "uintptr_t",
              "bool", "va_list"}


def blocks(apiref):
    """Yield (file, section, text) of every ``c`` code block, in file order."""
    for path in sorted(glob.glob(os.path.join(apiref, "*.md"))):
        name = os.path.basename(path)
        text = open(path, encoding="utf-8").read()
        section = None
        for m in re.finditer(r"^## ([^\n]+)$|^[ \t]*```(\w*)\n(.*?)^[ \t]*```", text, re.M | re.S):
            if m.group(1):
                section = m.group(1).strip()
            elif m.group(2) == "c":
                yield name, section, m.group(3)


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def doc_defines(apiref):
    """``#define ACL_X value`` lines anywhere in the reference (tables join lines with <br>)."""
    out = {}
    for path in sorted(glob.glob(os.path.join(apiref, "*.md"))):
        text = open(path, encoding="utf-8").read().replace("<br>", "\n").replace("`", "\n")
        for m in re.finditer(r"#define\s+(ACL_\w+)\s+(\(?[-\w]+(?:\s*<<\s*\w+)?\)?)[ \t]*(?:$|\|)", text, re.M):
            out.setdefault(m.group(1), m.group(2))
    return out


def doc_table_types(apiref):
    """Type definitions written inside parameter tables (``typedef enum {<br>...} X;``, callback
    prototypes ``typedef R (*Name)(...)``), with links and <br> removed, as code text."""
    out = []
    for path in sorted(glob.glob(os.path.join(apiref, "*.md"))):
        for row in open(path, encoding="utf-8").read().split("\n"):
            if not row.startswith("|") or "typedef" not in row:
                continue
            text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", row).replace("`", "")
            text = text.replace("<br>", "\n").replace("&lt;", "<").replace("&gt;", ">")
            for m in re.finditer(r"typedef\s", text):
                rest = text[m.start():]
                if re.match(r"typedef\s+(enum|struct|union)\b[^;{]*\{", rest):
                    depth, i = 0, 0
                    while i < len(rest):
                        depth += (rest[i] == "{") - (rest[i] == "}")
                        if rest[i] == "}" and depth == 0:
                            break
                        i += 1
                    end = rest.find(";", i)
                    out.append(rest[:end + 1])
                else:
                    fm = re.match(r"typedef\s+[\w\s\*]+\(\s*\*\s*\w+\s*\)\s*\([^;|)]*\)", rest)
                    if fm:
                        out.append(" ".join(fm.group(0).split()) + ";")
    return out


def split_type_chunks(text):
    """Split a type block into top-level declarations ending in ';' (and #define lines)."""
    text = strip_comments(text).replace("\\\n", " ")
    chunks, depth, cur = [], 0, []
    for line in text.split("\n"):
        if depth == 0 and line.strip().startswith("#define"):
            chunks.append(" ".join(line.split()))
            continue
        if depth == 0 and cur and re.match(r"^\s*\}\s*\w+\s*$", cur[-1]):
            cur[-1] += ";"          # the reference omits the ';' after aclprofStepTag
            chunks.append("\n".join(cur).strip())
            cur = []
        cur.append(line)
        depth += line.count("{") - line.count("}")
        if depth == 0 and line.rstrip().endswith(";"):
            chunks.append("\n".join(cur).strip())
            cur = []
    if "".join(cur).strip():
        chunks.append("\n".join(cur).strip())
    return [c for c in chunks if c]


def defined_names(chunk):
    if chunk.startswith("#define"):
        return {chunk.split()[1]}
    names = set()
    m = re.search(r"\}\s*(\w+)\s*;\s*$", chunk)
    if m:
        names.add(m.group(1))
    m = re.match(r"typedef\s+(?:struct|union|enum)\s+(\w+)\s*\{", chunk)
    if m:
        names.add("struct " + m.group(1))
    m = re.match(r"(?:typedef\s+)?(?:struct|union|enum)\s+(\w+)\s*\{", chunk)
    if m:
        names.add("tag " + m.group(1))
    m = re.search(r"\(\s*\*\s*(\w+)\s*\)\s*\(", chunk)
    if m and chunk.startswith("typedef"):
        names.add(m.group(1))
    if chunk.startswith("typedef") and "{" not in chunk and not m:
        names.add(WORD.findall(chunk)[-1])
    if "{" in chunk and re.match(r"(typedef\s+)?enum", chunk):
        body = chunk[chunk.index("{") + 1:chunk.rindex("}")]
        for item in body.split(","):
            w = WORD.findall(item)
            if w:
                names.add(w[0])
    return names


def main(apiref="/tmp/apiref"):
    from npusim import errors
    from npusim.acl import constants

    funcs = {}          # name -> (header, prototype)
    type_chunks = []    # (names, text)
    seen_types = set()
    for fname, section, text in blocks(apiref):
        clean = strip_comments(text).strip()
        clean = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", clean)
        if FUNC_CHAPTERS.match(fname):
            m = PROTO.match(clean)
            if m and not clean.startswith(("typedef", "#", "enum", "struct")) and "{" not in clean:
                name = m.group(2)
                if name in funcs or (section and section.split()[0] != name and name not in section):
                    continue
                header = next(h for p, h in HEADER_OF_CHAPTER if fname.startswith(p))
                if header == "acl_base.h":      # 25-03: the operation APIs of each area's types
                    header = next((h for p, h in OPERATION_HEADER if name.startswith(p)), header)
                ret = " ".join(m.group(1).split()).replace(" *", "*").replace("*", " *").strip()
                ret = DOC_TYPOS.get(ret + " ", ret + " ").strip()
                ret = re.sub(r"\s*\*\s*", " *", ret).rstrip()
                params = " ".join(m.group(3).split())
                for typo, fix in DOC_TYPOS.items():
                    params = params.replace(typo, fix)
                funcs[name] = (header, f"ACL_FUNC_VISIBILITY {ret}{'' if ret.endswith('*') else ' '}{name}({params or 'void'});")
                continue
        if TYPE_CHAPTERS.match(fname) or clean.startswith(("typedef", "enum", "#define", "struct")):
            for chunk in split_type_chunks(text):
                if fname.startswith("23_") and not re.search(r"\bacl\w+\s*[;)]", chunk):
                    continue        # the log module's DLOG_* types belong to its own header
                if chunk.startswith("static const"):
                    continue
                m = re.match(r"enum\s+(\w+)\s*\{", chunk)
                if m:       # `enum X {...};` is used as plain `X` in the prototypes
                    chunk += f"\ntypedef enum {m.group(1)} {m.group(1)};"
                names = defined_names(chunk)
                if not names or names & seen_types:
                    continue
                seen_types |= names
                type_chunks.append((names, chunk))

    type_chunks[:0] = PROSE_TYPES
    for names, _ in PROSE_TYPES:
        seen_types |= names
    for text in doc_table_types(apiref):
        for wrong, right in SIGNATURE_FIXES.items():
            text = text.replace(wrong, right)
        for chunk in split_type_chunks(text):
            names = defined_names(chunk)
            if names and not names & seen_types:
                seen_types |= names
                type_chunks.append((names, chunk))
    # opaque handle types: used by a prototype or struct, documented only by their operation APIs
    used = set()
    for _, proto in funcs.values():
        used |= set(WORD.findall(proto))
    for _, chunk in type_chunks:
        used |= set(WORD.findall(chunk))
    known = {n.split()[-1] for names, _ in type_chunks for n in names}
    for w in sorted(used - known - C_KEYWORDS):
        if re.match(r"^acl[a-z]*[A-Z]\w*$", w) and w not in funcs and not w.startswith("ACL"):
            # a handle passed by pointer is an incomplete struct, one passed by value a void *
            texts = [p for _, p in funcs.values()] + [c for _, c in type_chunks]
            by_value = any(re.search(rf"\b{w}\s+\w+\s*[,;)]|\b{w}\s+acl\w*\(", t)
                           for t in texts)
            by_ptr = not by_value and any(re.search(rf"\b{w}\s*\*", t) for t in texts)
            decl = f"typedef struct {w} {w};" if by_ptr else f"typedef void *{w};"
            type_chunks.insert(0, ({w}, decl))

    # constants: flag macros not already enumerators or defines of the type blocks
    defines = doc_defines(apiref)
    macros = {}
    for name in sorted(dir(constants)):
        if name.startswith(("ACL_", "ACL_RT")) and isinstance(getattr(constants, name), int):
            macros[name] = getattr(constants, name)
    for name, value in defines.items():
        macros.setdefault(name, value)
    return funcs, type_chunks, macros, errors.CODES


def order_types(type_chunks, extra_known):
    """Topological order: each declaration after the ones whose names it uses."""
    provider = {}
    for i, (names, _) in enumerate(type_chunks):
        for n in names:
            provider.setdefault(n.split()[-1], i)
    done, out = set(), []

    def visit(i, stack=()):
        if i in done or i in stack:
            return
        names, chunk = type_chunks[i]
        own = {n.split()[-1] for n in names}
        for w in sorted(set(WORD.findall(chunk)) - own - C_KEYWORDS):
            j = provider.get(w)
            if j is not None and j != i:
                visit(j, stack + (i,))
        done.add(i)
        out.append(chunk)
    for i in range(len(type_chunks)):
        visit(i)
    return out


PRELUDE = """/* npusim's own declarations of the Ascend Computing Language interface ({what}).
 * Written from the runtime's API reference by scripts/gen_cabi_headers.py; not CANN's header.
 * SPDX-License-Identifier: same as npusim. */
#ifndef {guard}
#define {guard}
{includes}
#ifdef __cplusplus
extern "C" {{
#endif
"""
POSTLUDE = """
#ifdef __cplusplus
}}
#endif
#endif /* {guard} */
"""


def write(funcs, type_chunks, macros, codes, out=OUT):
    os.makedirs(out, exist_ok=True)
    typed = order_types(type_chunks, set())
    enumerators = set()
    for names, _ in type_chunks:
        enumerators |= names
    files = {}
    base = ["#include <stddef.h>", "#include <stdint.h>", "#include <stdarg.h>", ""]
    body = ["#ifndef ACL_FUNC_VISIBILITY",
            "#define ACL_FUNC_VISIBILITY __attribute__((visibility(\"default\")))",
            "#endif", "#ifndef ACL_DEPRECATED", "#define ACL_DEPRECATED", "#endif", ""]
    body.append("/* return codes (npusim/errors.py; 25-01_aclError) */")
    body.append("typedef int aclError;")
    seen = set()
    for c in codes:
        if c.name in seen or not c.name.startswith("ACL_"):
            continue
        seen.add(c.name)
        body.append(f"static const int {c.name} = {c.value};")
    body.append("")
    body.append("/* flags and limits (npusim/acl/constants.py and the reference pages) */")
    for name, value in sorted(macros.items()):
        if name in enumerators or name in seen:
            continue
        v = value if isinstance(value, str) else (f"{value}U" if value >= 0 else str(value))
        if isinstance(value, int) and value > 0xFFFFFFFF:
            v = f"{value}ULL"
        body.append(f"#define {name} {v}")
    body.append("")
    body.append("/* types (chapter 25 of the reference and the function pages) */")
    for chunk in typed:
        if chunk.startswith("typedef int aclError"):
            continue
        body.append(chunk if chunk.startswith("#") else chunk + "\n")
    files["acl_base.h"] = (base, body)
    for name, (header, proto) in sorted(funcs.items()):
        files.setdefault(header, (['#include "acl_base.h"', ""], []))[1].append(proto)
    inc_acl = files["acl.h"][0]
    for h in ("acl_rt.h", "acl_rt_allocator.h", "acl_mdl.h"):
        inc_acl.insert(1, f'#include "{h}"')
    # file names of the runtime's interface whose declarations npusim keeps in another header
    for alias, target in (("acl_rt_memory_soma.h", "acl_rt.h"), ("acl_base_rt.h", "acl_base.h"),
                          ("acl_base_mdl.h", "acl_base.h"), ("acl_rt_api.h", "acl_rt.h"),
                          ("acl_op.h", "acl_base.h")):
        files[alias] = ([f'#include "{target}"', ""], [])
    for header, (includes, lines) in files.items():
        guard = "NPUSIM_ACL_" + header.upper().replace(".", "_") + "_"
        text = PRELUDE.format(what=header, guard=guard, includes="\n".join(includes))
        text += "\n".join(lines) + "\n" + POSTLUDE.format(guard=guard)
        with open(os.path.join(out, header), "w", encoding="utf-8") as f:
            f.write(text)
    return sorted(files)


if __name__ == "__main__":
    f, t, m, c = main(*sys.argv[1:])
    print(len(f), "functions;", write(f, t, m, c))
