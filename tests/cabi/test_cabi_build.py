"""The generator and the install (docs/cabi.md "Install"): every facade function is exported,
the install has the CANN-shaped files, the CLI reports a missing tool clearly."""
from __future__ import annotations

import os
import pathlib
import re
import subprocess

import pytest

from npusim.cabi import build, cdecl
from npusim.runtime.api_refused import facade_name

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _coverage_names() -> list[str]:
    text = (ROOT / "docs" / "api_coverage.md").read_text()
    return re.findall(r"^\| [^|]+ \| `(acl\w+)` \|", text, re.M)


def test_every_facade_function_is_exported():
    if not (build.INCLUDE / "acl" / "acl.h").exists():
        pytest.skip("npusim's own ACL declarations are not there yet")
    try:
        funcs, _ = cdecl.parse(build.INCLUDE, build.header_list(build.INCLUDE))
    except RuntimeError as e:
        pytest.skip(str(e))
    p = build.plan(funcs)
    exported = {e.func.name for e in p.exports}
    names = _coverage_names()
    assert len(names) == 460
    assert not [n for n in names if n not in exported]
    # the generic rule maps most; the rest are listed with a reason
    generic = {e.func.name for e in p.exports if e.mode == "generic"}
    assert {"aclrtSetDevice", "aclrtMalloc", "aclrtMemcpy", "aclrtLaunchKernel",
            "aclrtLaunchKernelWithConfig", "aclrtBinaryLoadFromFile", "aclmdlRICaptureEnd",
            "aclrtLaunchCallback", "aclrtSetExceptionInfoCallback",
            "aclGetRecentErrMsg"} <= generic
    assert all(p.skipped.values())
    assert facade_name("aclrtGetDevice") == "acl.rt.get_device"


def test_install_tree(cabi_lib, tmp_path):
    prefix = build.install(tmp_path / "cann")
    lib = prefix / "lib64"
    assert (lib / "libascendcl.so").is_file()
    for alias in ("libacl_rt.so", "libacl_rt_impl.so"):
        assert (lib / alias).resolve() == (lib / "libascendcl.so").resolve()
    for stub in ("libnnopbase.so", "libopapi.so"):
        assert (lib / stub).is_file()
    assert (prefix / "include" / "acl" / "acl.h").is_file()
    env = subprocess.run(["bash", "-c", f"source {prefix}/bin/setenv.bash && env"],
                         capture_output=True, text=True, check=True).stdout
    assert f"ASCEND_HOME_PATH={prefix}" in env and f"ASCEND_INSTALL_PATH={prefix}" in env
    assert f"{prefix}/lib64" in env
    assert (prefix / "set_env.sh").read_text() == (prefix / "bin" / "setenv.bash").read_text()
    # the runtime package's version, where aclsysGetVersionStr reads it (fidelity row 510)
    assert (prefix / "share" / "info" / "runtime" / "version.info").read_text() == \
        "Version=9.1.0\n"


def test_cli_names_the_fix_without_a_compiler(tmp_path, monkeypatch, capsys):
    from npusim.cli import main
    monkeypatch.setenv("CC", "no-such-compiler-xyz")
    monkeypatch.setattr(build.shutil, "which", lambda name: None)
    assert main(["cabi", "--prefix", str(tmp_path / "p")]) == 1
    err = capsys.readouterr().err
    assert "no C compiler" in err and "gcc" in err


def test_a_failed_start_answers_507000(cabi_lib, tmp_path, monkeypatch):
    """The interpreter's start failing (here: the init code raising) makes every call return
    507000, not cffi's 0 (success), and nothing is written through output pointers."""
    _, include = cabi_lib
    monkeypatch.setattr(build, "PY_PRELUDE", "raise RuntimeError('npusim test: start fails')\n"
                        + build.PY_PRELUDE)
    lib = tmp_path / "lib64"
    build.build_library(lib, include)
    src = tmp_path / "t.c"
    src.write_text('#include <stdio.h>\n#include "acl/acl.h"\n'
                   "int main(void) { int32_t d = -7; int r = aclrtSetDevice(0);\n"
                   '  int g = aclrtGetDevice(&d); printf("%d %d %d\\n", r, g, d); return 0; }\n')
    cc = os.environ.get("CC", "cc")
    subprocess.run([cc, "-I", str(include), str(src), "-L", str(lib), "-lascendcl",
                    f"-Wl,-rpath,{lib}", "-o", str(tmp_path / "t")], check=True)
    p = subprocess.run([str(tmp_path / "t")], capture_output=True, text=True)
    assert p.stdout.split() == ["507000", "507000", "-7"], (p.stdout, p.stderr)
    assert "start fails" in p.stderr
