"""npusim's own ACL headers (npusim/cabi/include/acl, issue 39): they compile clean as C11 and
C++17 with -Wall -Werror, declare every function of the facade, accept the runtime's own samples,
and agree with the runtime's interface function by function (when the mirror is present)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import io

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INCLUDE = os.path.join(ROOT, "npusim", "cabi", "include")
MIRROR = os.environ.get("NPUSIM_RUNTIME_MIRROR", "/work/.mirror/hicann+runtime/repo")
HEADERS = ["acl/acl.h", "acl/acl_rt_allocator.h", "acl/acl_rt_memory_soma.h", "acl/acl_prof.h",
           "acl/acl_tdt.h", "acl/acl_dump.h", "acl/acl_log.h"]
OUT_OF_SCOPE = re.compile(r"aclnn|acl_tdt|acl_prof|acl_dump|kernel_operator\.h|aprof_pub|ms_tools_ext")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def _compile(compiler, std, suffix, tmp_path):
    if shutil.which(compiler) is None:
        pytest.skip(f"no {compiler}")
    src = tmp_path / f"tu.{suffix}"
    src.write_text("".join(f'#include "{h}"\n' for h in HEADERS) +
                   "int main(void) { aclrtStream s = 0; (void)s; return ACL_SUCCESS; }\n")
    r = subprocess.run([compiler, f"-std={std}", "-Wall", "-Wextra", "-Werror", "-I", INCLUDE,
                        "-c", str(src), "-o", str(tmp_path / "tu.o")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_headers_compile_as_c11(tmp_path):
    _compile("gcc", "c11", "c", tmp_path)


def test_headers_compile_as_cxx17(tmp_path):
    _compile("g++", "c++17", "cpp", tmp_path)


def test_headers_included_twice_and_alone(tmp_path):
    if shutil.which("gcc") is None:
        pytest.skip("no gcc")
    for h in os.listdir(os.path.join(INCLUDE, "acl")):
        src = tmp_path / "one.c"
        src.write_text(f'#include "acl/{h}"\n#include "acl/{h}"\n')
        r = subprocess.run(["gcc", "-std=c11", "-Wall", "-Werror", "-I", INCLUDE, "-c", str(src),
                            "-o", str(tmp_path / "one.o")], capture_output=True, text=True)
        assert r.returncode == 0, (h, r.stderr)


def test_every_facade_function_is_declared():
    text = open(os.path.join(ROOT, "docs", "api_coverage.md"), encoding="utf-8").read()
    facade = set(re.findall(r"^\| [^|]+ \| `(\w+)` \|", text, re.M))
    assert len(facade) >= 460
    declared = set()
    for h in os.listdir(os.path.join(INCLUDE, "acl")):
        declared |= set(re.findall(r"\b(\w+)\(", open(os.path.join(INCLUDE, "acl", h)).read()))
    assert sorted(facade - declared) == []


def test_constants_match_npusim_tables():
    from npusim import errors
    from npusim.acl import constants
    text = "".join(open(os.path.join(INCLUDE, "acl", h)).read()
                   for h in os.listdir(os.path.join(INCLUDE, "acl")))
    for c in errors.CODES:
        if c.name.startswith("ACL_"):
            m = re.search(rf"\b{c.name} = (-?\d+);", text)
            assert m and int(m.group(1)) == c.value, c.name
    for name in ("ACL_STREAM_FAST_LAUNCH", "ACL_EVENT_TIME_LINE", "ACL_EVENT_SYNC"):
        m = re.search(rf"#define {name} (\w+)", text)
        assert m and int(m.group(1).rstrip("UL"), 0) == getattr(constants, name), name


def _mirror_tree(path, dest):
    if not os.path.isdir(MIRROR):
        pytest.skip("no hicann/runtime mirror")
    data = subprocess.run(["git", "-C", MIRROR, "archive", "HEAD", path], capture_output=True,
                          check=True).stdout
    tarfile.open(fileobj=io.BytesIO(data)).extractall(dest)
    return os.path.join(dest, path)


def test_samples_pass_syntax_check(tmp_path):
    if shutil.which("g++") is None:
        pytest.skip("no g++")
    example = _mirror_tree("example", str(tmp_path))
    failures, checked = [], 0
    for dirpath, _, files in os.walk(example):
        if "kernel_func" in dirpath:
            continue
        for f in files:
            if f != "main.cpp":
                continue
            src = os.path.join(dirpath, f)
            if OUT_OF_SCOPE.search(open(src, errors="replace").read()):
                continue
            r = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-I", INCLUDE, "-I", example,
                                "-I", dirpath, "-I", os.path.dirname(dirpath),
                                "-I", os.path.join(example, "kernel_func"), src],
                               capture_output=True, text=True)
            checked += 1
            if r.returncode:
                failures.append((src, r.stderr[:500]))
    assert checked >= 30
    assert failures == []


def test_signatures_agree_with_the_runtime_headers(tmp_path):
    if shutil.which("gcc") is None:
        pytest.skip("no gcc")
    pytest.importorskip("pycparser")
    import _sigcmp
    inc = _mirror_tree("include/external/acl", str(tmp_path))
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.symlink(inc, theirs / "acl")
    diffs, ours, real = _sigcmp.compare(INCLUDE, str(theirs), HEADERS[:-1])
    assert len(set(ours) & set(real)) >= 450
    assert diffs == []


def test_struct_layouts_agree_with_the_runtime_headers(tmp_path):
    if shutil.which("g++") is None:
        pytest.skip("no g++")
    pytest.importorskip("pycparser")
    import _sigcmp
    inc = _mirror_tree("include/external/acl", str(tmp_path))
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.symlink(inc, theirs / "acl")
    heads = HEADERS[:-1]
    ours = _sigcmp.struct_names(_sigcmp.preprocess(INCLUDE, heads))
    real = _sigcmp.struct_names(_sigcmp.preprocess(str(theirs), heads))
    common = ours & real
    assert len(common) >= 55
    a = _sigcmp.layouts(INCLUDE, heads, common)
    b = _sigcmp.layouts(str(theirs), heads, common)
    assert {n: (a[n], b[n]) for n in common if a[n] != b[n]} == {}


def test_generator_reproduces_the_committed_headers(tmp_path):
    """scripts/gen_cabi_headers.py over the extracted API reference writes exactly the headers in
    the tree (skipped without the reference at /tmp/apiref or $NPUSIM_APIREF)."""
    apiref = os.environ.get("NPUSIM_APIREF", "/tmp/apiref")
    if not os.path.exists(os.path.join(apiref, "05_context_management.md")):
        pytest.skip("no extracted API reference")
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import gen_cabi_headers as gen
    funcs, types, macros, codes = gen.main(apiref)
    names = gen.write(funcs, types, macros, codes, out=str(tmp_path))
    for name in names:
        assert (tmp_path / name).read_text() == \
            open(os.path.join(INCLUDE, "acl", name), encoding="utf-8").read(), name
    assert sorted(names) == sorted(os.listdir(os.path.join(INCLUDE, "acl")))
