"""The Ascend C CMake stand-in of ``npusim cabi`` (issue 39; docs/cabi_samples.md).

The runtime's samples build their kernels with (``example/*/CMakeLists.txt``)::

    include(${ASCENDC_CMAKE_DIR}/ascendc.cmake)
    ascendc_library(kernels STATIC ../../../kernel_func/easy_OP.cpp)      # host calls <<<>>>
    ascendc_fatbin_library(ascendc_kernels_simple ${KERNEL_FILES})        # a binary to load

``install(prefix)`` writes npusim's own ``ascendc.cmake`` there. Instead of compiling Ascend C it

* maps every kernel a source defines (``extern "C" __global__ __aicore__ void NAME(...)``) to
  npusim's built-in kernel of that name (``npusim/kernel/builtin.py``) inside one of the shipped
  sample binaries (``npusim/samples``: the main one, or the placeholder build of ``add_custom``
  when the source's ``add_custom`` takes its five tiling parameters);
* for ``ascendc_library``: keeps only the source's host functions that launch with ``<<<>>>`` and
  turns each ``NAME<<<blockDim, l2ctrl, stream>>>(args...)`` into a call of a generated, typed
  function that packs the arguments into 8-byte slots (the args layout the built-in bodies read)
  and launches the kernel by name through the public API -- ``aclrtBinaryLoadFromFile`` of the
  shipped binary (once per context), ``aclrtBinaryGetFunction``, ``aclrtKernelArgsInit`` /
  ``Append`` / ``Finalize`` and ``aclrtLaunchKernelWithConfig`` -- returning its code (what the real ``<<<>>>`` expression gives);
* for ``ascendc_fatbin_library``: copies the matching shipped binary to
  ``<build>/fatbin/NAME/NAME.o`` and installs it as ``fatbin/NAME/NAME.o`` (the path the
  samples' ``main.cpp`` loads with ``aclrtBinaryLoadFromFile``).

The stub generation runs at build time from CMake (``add_custom_command``), with the Python that
ran the install (recorded then) executing this very file, copied into the CMake directory: it
uses the standard library only, so the build imports no part of npusim.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys

__all__ = ["install", "cmake_dir", "kernels_of", "host_stub", "pick_binary"]

SCRIPT = "npusim_ascendc.py"
TABLE = "kernels.json"


def cmake_dir(prefix: str) -> str:
    """Where ``ASCENDC_CMAKE_DIR`` points inside an install at ``prefix``: ``tikcpp/...``, the
    place the samples' ``example/set_sample_env.sh`` looks for ``ascendc.cmake`` (besides the
    ``<arch>-linux/`` ones); ``tools/tikcpp/ascendc_kernel_cmake`` is a link to it."""
    return os.path.join(os.fspath(prefix), "tikcpp", "ascendc_kernel_cmake")


ALIASES = (os.path.join("tools", "tikcpp", "ascendc_kernel_cmake"),)


# ----------------------------------------------------------------------------------------------
# reading an Ascend C source (text only: no compiler for the device side is needed)

_KERNEL = re.compile(r'(?:extern\s+"C"\s+)?__global__\s+(?:__aicore__\s+)?void\s+(\w+)\s*\(([^)]*)\)'
                     r'|(?:extern\s+"C"\s+)?__aicore__\s+__global__\s+void\s+(\w+)\s*\(([^)]*)\)')
_LAUNCH = re.compile(r"\b(\w+)\s*<<<")


def _strip_comments(text: str) -> str:
    def repl(m):
        s = m.group(0)
        return s if s[0] in "\"'" else re.sub(r"[^\n]", " ", s)
    return re.sub(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|/\*.*?\*/|//[^\n]*', repl, text, flags=re.S)


def _split_params(params: str) -> list[str]:
    params = " ".join(params.split())
    if not params or params == "void":
        return []
    return [p.strip() for p in params.split(",")]


def _param_type_and_name(p: str) -> tuple[str, str]:
    p = re.sub(r"\b__gm__\b", "", p)
    p = re.sub(r"\bGM_ADDR\b", "uint8_t *", p)
    m = re.match(r"^(.*?)(\w+)\s*$", p.strip())
    if not m or not m.group(1).strip():
        return p.strip(), ""
    return " ".join(m.group(1).split()), m.group(2)


def kernels_of(text: str) -> dict[str, list[tuple[str, str]]]:
    """The kernels a source defines: ``{name: [(C type, parameter name), ...]}``."""
    out = {}
    for m in _KERNEL.finditer(_strip_comments(text)):
        name = m.group(1) or m.group(3)
        params = m.group(2) if m.group(1) else m.group(4)
        out[name] = [_param_type_and_name(p) for p in _split_params(params)]
    return out


def _top_level_blocks(text: str):
    """(start of the declaration, '{' offset, '}' offset) of every top-level brace block."""
    depth, start, open_at = 0, 0, None
    i = 0
    while i < len(text):
        c = text[i]
        if c == "#" and depth == 0 and (i == 0 or text[i - 1] == "\n"):
            j = text.find("\n", i)
            i = len(text) if j < 0 else j + 1
            start = i
            continue
        if c == "{":
            if depth == 0:
                open_at = i
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                yield start, open_at, i
                start = i + 1
        elif c == ";" and depth == 0:
            start = i + 1
        i += 1


def pick_binary(kernels: dict, table: dict) -> tuple[str | None, list[str]]:
    """The shipped binary holding every kernel of ``kernels`` with its parameter count, and the
    names none holds."""
    for binary, names in table["binaries"].items():
        if all(names.get(k) == len(p) for k, p in kernels.items()):
            return binary, []
    first = next(iter(table["binaries"]))
    return first, [k for k, p in kernels.items() if table["binaries"][first].get(k) != len(p)]


PRELUDE = """// Generated by npusim's Ascend C stand-in (npusim/cabi/ascendc.py) from {src}:
// the host functions of the source, each <<<>>> launch replaced by a launch of npusim's
// built-in kernel of that name. Not compiled Ascend C.
#include <cstddef>
#include <cstdint>
#include <cstring>
#define __global__
#define __aicore__
#define __gm__
#ifndef GM_ADDR
#define GM_ADDR uint8_t *
#endif
extern "C" uint32_t npusim_ascendc_launch(const char *binary, const char *kernel, uint32_t blockDim,
                                          void *stream, const uint64_t *slots, size_t count);
"""


def host_stub(text: str, src_name: str, binary_path: str, table: dict) -> str:
    """The C++ translation unit that replaces an Ascend C source in ``ascendc_library``."""
    kernels = kernels_of(text)
    clean = _strip_comments(text)
    launched = {m.group(1) for m in _LAUNCH.finditer(clean)}
    missing = sorted(launched - set(kernels))
    if missing:
        raise SystemExit(f"npusim ascendc: {src_name}: <<<>>> of {', '.join(missing)}, "
                         "which the source does not define")
    used = {k: kernels[k] for k in launched}
    _, unknown = pick_binary(used, table)
    if unknown:
        raise SystemExit(f"npusim ascendc: {src_name}: no npusim built-in kernel for "
                         f"{', '.join(unknown)} (npusim/kernel/builtin.py lists them)")
    out = [PRELUDE.format(src=src_name)]
    for line in clean.split("\n"):
        m = re.match(r'\s*#\s*include\s*[<"]([^>"]+)[>"]', line)
        if m and m.group(1) != "kernel_operator.h" and not m.group(1).startswith("lib/"):
            out.append(line.strip())        # the source's own headers (the wrappers' prototypes)
    out.append("")
    for name in sorted(used):
        binary, _ = pick_binary({name: used[name]}, table)
        path = json.dumps(os.path.join(binary_path, table["files"][binary]))
        params = used[name]
        decl = ", ".join(f"{t} a{i}" for i, (t, _) in enumerate(params))
        out.append(f"static uint32_t npusim_launch_{name}(uint32_t blockDim, void *l2ctrl, "
                   f"void *stream{', ' if decl else ''}{decl})")
        out.append("{")
        out.append("    (void)l2ctrl;")
        out.append(f"    uint64_t slots[{max(len(params), 1)}] = {{0}};")
        for i, (t, _) in enumerate(params):
            out.append(f"    std::memcpy(&slots[{i}], &a{i}, sizeof(a{i}) < 8 ? sizeof(a{i}) : 8);")
        out.append(f'    return npusim_ascendc_launch({path}, "{name}", blockDim, stream, slots, '
                   f"{len(params)});")
        out.append("}")
        out.append("")
    # the host functions: top-level blocks whose body launches with <<<>>>
    for start, lb, rb in _top_level_blocks(clean):
        body = clean[lb:rb + 1]
        if "<<<" not in body:
            continue
        head = clean[start:lb].strip()
        if re.search(r"\b(namespace|class|struct)\b", head):
            continue
        body = re.sub(r"\b(\w+)\s*<<<\s*(.*?)\s*>>>\s*\(",
                      lambda m: f"npusim_launch_{m.group(1)}({m.group(2)}" +
                      ("" if m.string[m.end():].lstrip().startswith(")") else ", "),
                      body, flags=re.S)
        out.append(head + "\n" + body + "\n")
    return "\n".join(out)


# ----------------------------------------------------------------------------------------------
# the files of the install

LAUNCH_CPP = r"""// npusim's launcher behind the Ascend C stand-in's <<<>>> stubs (npusim/cabi/ascendc.py):
// loads a shipped sample binary once per context with the public API and launches a kernel of it
// by name, its arguments in 8-byte slots.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include "acl/acl.h"

namespace {
std::mutex g_lock;
std::map<std::pair<aclrtContext, std::string>, aclrtBinHandle> g_bins;

aclError Function(const char *binary, const char *kernel, bool reload, aclrtFuncHandle *func)
{
    aclrtContext ctx = nullptr;
    aclError ret = aclrtGetCurrentContext(&ctx);
    if (ret != ACL_SUCCESS) {
        return ret;
    }
    std::lock_guard<std::mutex> guard(g_lock);
    auto key = std::make_pair(ctx, std::string(binary));
    auto it = g_bins.find(key);
    if (it == g_bins.end() || reload) {
        aclrtBinHandle bin = nullptr;
        ret = aclrtBinaryLoadFromFile(binary, nullptr, &bin);
        if (ret != ACL_SUCCESS) {
            return ret;
        }
        g_bins[key] = bin;
        it = g_bins.find(key);
    }
    return aclrtBinaryGetFunction(it->second, kernel, func);
}
}  // namespace

extern "C" uint32_t npusim_ascendc_launch(const char *binary, const char *kernel, uint32_t blockDim,
                                          void *stream, const uint64_t *slots, size_t count)
{
    aclrtFuncHandle func = nullptr;
    aclError ret = Function(binary, kernel, false, &func);
    if (ret != ACL_SUCCESS) {      // a context destroyed and another made at the same address
        ret = Function(binary, kernel, true, &func);
    }
    if (ret != ACL_SUCCESS) {
        return static_cast<uint32_t>(ret);
    }
    // the args-handle path the samples themselves use (aclrtKernelArgsInit/Append/Finalize +
    // aclrtLaunchKernelWithConfig), one 8-byte slot per parameter
    aclrtArgsHandle args = nullptr;
    ret = aclrtKernelArgsInit(func, &args);
    for (size_t i = 0; ret == ACL_SUCCESS && i < count; ++i) {
        uint64_t slot = slots[i];
        aclrtParamHandle param = nullptr;
        ret = aclrtKernelArgsAppend(args, &slot, sizeof(slot), &param);
    }
    if (ret == ACL_SUCCESS) {
        ret = aclrtKernelArgsFinalize(args);
    }
    if (ret == ACL_SUCCESS) {
        ret = aclrtLaunchKernelWithConfig(func, blockDim, stream, nullptr, args, nullptr);
    }
    return static_cast<uint32_t>(ret);
}
"""

CMAKE = r"""# npusim's stand-in for the Ascend C CMake support (written by npusim/cabi/ascendc.py).
# Kernel sources are not compiled for a device: each kernel maps to npusim's built-in kernel of
# the same name in a shipped sample binary, and the host functions' <<<>>> launches become calls
# of generated stubs that launch it through libascendcl. See docs/cabi_samples.md.
set(NPUSIM_ASCENDC_DIR "${CMAKE_CURRENT_LIST_DIR}")
set(NPUSIM_ASCENDC_PYTHON "@PYTHON@")
set(NPUSIM_CABI_PREFIX "@PREFIX@")
if(NOT SOC_VERSION)
  set(SOC_VERSION "$ENV{SOC_VERSION}")
endif()

function(_npusim_ascendc_abs out)
  set(result)
  foreach(src ${ARGN})
    get_filename_component(abs "${src}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND result "${abs}")
  endforeach()
  set(${out} "${result}" PARENT_SCOPE)
endfunction()

# ascendc_library(<target> STATIC|SHARED|OBJECT <kernel sources...>)
function(ascendc_library target kind)
  _npusim_ascendc_abs(srcs ${ARGN})
  set(gen_dir "${CMAKE_CURRENT_BINARY_DIR}/npusim_ascendc/${target}")
  set(outs)
  set(dirs)
  foreach(abs ${srcs})
    get_filename_component(stem "${abs}" NAME_WE)
    get_filename_component(dir "${abs}" DIRECTORY)
    set(out "${gen_dir}/${stem}.host.cpp")
    add_custom_command(OUTPUT "${out}"
      COMMAND "${NPUSIM_ASCENDC_PYTHON}" "${NPUSIM_ASCENDC_DIR}/@SCRIPT@" stub "${abs}" "${out}"
      DEPENDS "${abs}" "${NPUSIM_ASCENDC_DIR}/@SCRIPT@"
      COMMENT "npusim ascendc: host stubs of ${stem}"
      VERBATIM)
    list(APPEND outs "${out}")
    list(APPEND dirs "${dir}")
  endforeach()
  list(REMOVE_DUPLICATES dirs)
  add_library(${target} ${kind} ${outs} "${NPUSIM_ASCENDC_DIR}/npusim_ascendc_launch.cpp")
  target_include_directories(${target} PRIVATE ${dirs} "${NPUSIM_CABI_PREFIX}/include")
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_link_libraries(${target} PUBLIC "${NPUSIM_CABI_PREFIX}/lib64/libascendcl.so")
endfunction()

# ascendc_fatbin_library(<target> <kernel sources...>): the kernel binary, loaded at run time
function(ascendc_fatbin_library target)
  _npusim_ascendc_abs(srcs ${ARGN})
  set(out "${CMAKE_CURRENT_BINARY_DIR}/fatbin/${target}/${target}.o")
  add_custom_command(OUTPUT "${out}"
    COMMAND "${NPUSIM_ASCENDC_PYTHON}" "${NPUSIM_ASCENDC_DIR}/@SCRIPT@" fatbin "${out}" ${srcs}
    DEPENDS ${srcs} "${NPUSIM_ASCENDC_DIR}/@SCRIPT@"
    COMMENT "npusim ascendc: kernel binary ${target}"
    VERBATIM)
  add_custom_target(${target} ALL DEPENDS "${out}")
  install(FILES "${out}" DESTINATION fatbin/${target})
endfunction()

# options of the real module that change nothing here
function(ascendc_compile_definitions)
endfunction()
function(ascendc_compile_options)
endfunction()
function(ascendc_include_directories)
endfunction()
"""


def _table() -> dict:
    from ..kernel.builtin import PARAMS
    from .. import samples
    main = {name: len(PARAMS[name]) for name in samples.KERNEL_NAMES}
    return {"files": {"main": samples.MAIN, "placeholder": samples.PLACEHOLDER},
            "binaries": {"main": main,
                         "placeholder": {"add_custom": len(PARAMS["add_custom_tiling"])}}}


def install(prefix: str) -> str:
    """Write the Ascend C CMake stand-in under ``prefix``; return ``ASCENDC_CMAKE_DIR``."""
    from .. import samples
    d = cmake_dir(os.path.abspath(os.fspath(prefix)))
    os.makedirs(d, exist_ok=True)
    table = _table()
    for variant, name in (("main", samples.MAIN), ("placeholder", samples.PLACEHOLDER)):
        shutil.copyfile(samples.binary_path(variant), os.path.join(d, name))
    with open(os.path.join(d, TABLE), "w", encoding="utf-8") as f:
        json.dump(table, f, indent=1, sort_keys=True)
    shutil.copyfile(os.path.abspath(__file__), os.path.join(d, SCRIPT))
    with open(os.path.join(d, "npusim_ascendc_launch.cpp"), "w", encoding="utf-8") as f:
        f.write(LAUNCH_CPP)
    for alias in ALIASES:
        link = os.path.join(os.path.abspath(os.fspath(prefix)), alias)
        os.makedirs(os.path.dirname(link), exist_ok=True)
        if os.path.islink(link) or os.path.isfile(link):
            os.unlink(link)
        elif os.path.isdir(link):
            shutil.rmtree(link)
        os.symlink(os.path.relpath(d, os.path.dirname(link)), link)
    text = (CMAKE.replace("@PYTHON@", sys.executable.replace("\\", "/"))
            .replace("@PREFIX@", os.path.abspath(os.fspath(prefix)).replace("\\", "/"))
            .replace("@SCRIPT@", SCRIPT))
    with open(os.path.join(d, "ascendc.cmake"), "w", encoding="utf-8") as f:
        f.write(text)
    return d


# ----------------------------------------------------------------------------------------------
# the build-time command (this file, copied into ASCENDC_CMAKE_DIR, run by CMake)

def _main(argv: list[str]) -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, TABLE), encoding="utf-8") as f:
        table = json.load(f)
    if len(argv) == 3 and argv[0] == "stub":
        src, out = argv[1], argv[2]
        with open(src, encoding="utf-8", errors="replace") as f:
            text = host_stub(f.read(), os.path.basename(src), here, table)
        os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
        with open(out, "w", encoding="utf-8") as f:
            f.write(text)
        return 0
    if len(argv) >= 3 and argv[0] == "fatbin":
        out, kernels = argv[1], {}
        for src in argv[2:]:
            with open(src, encoding="utf-8", errors="replace") as f:
                kernels.update(kernels_of(f.read()))
        binary, unknown = pick_binary(kernels, table)
        if unknown:
            raise SystemExit(f"npusim ascendc: no npusim built-in kernel for {', '.join(unknown)}")
        os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
        shutil.copyfile(os.path.join(here, table["files"][binary]), out)
        return 0
    print("usage: npusim_ascendc.py stub SRC OUT | fatbin OUT SRC...", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
