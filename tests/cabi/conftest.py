"""Fixtures of the C library's tests (issue 39, docs/cabi.md): the library built once per session
against npusim's own headers (``npusim/cabi/include``), and a runner that compiles one of the C
programs in ``tests/cabi/c/`` with the system's C compiler and returns what it printed ("name
value" lines) as a dict. Skips cleanly, with the reason, without a C compiler or cffi."""
from __future__ import annotations

import os
import pathlib
import shutil
import subprocess

import pytest

HERE = pathlib.Path(__file__).resolve().parent
C_DIR = HERE / "c"


@pytest.fixture(scope="session")
def cabi_lib(tmp_path_factory):
    """(lib64 dir, include dir) of a freshly built libascendcl.so."""
    from npusim.cabi import build
    try:
        build.check_tools()
    except RuntimeError as e:
        pytest.skip(f"npusim cabi cannot be built here: {e}")
    include = pathlib.Path(os.environ.get("NPUSIM_CABI_TEST_HEADERS", build.INCLUDE))
    if not (include / "acl" / "acl.h").exists():
        pytest.skip(f"npusim's own ACL declarations are not in {include} yet")
    lib = tmp_path_factory.mktemp("cabi") / "lib64"
    build.build_library(lib, include)
    return lib, include


def _cc() -> str:
    return shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")


@pytest.fixture(scope="session")
def run_c(cabi_lib, tmp_path_factory):
    """run_c(name, *argv) -> {name: int} of the C program tests/cabi/c/<name>.c."""
    lib, include = cabi_lib
    out_dir = tmp_path_factory.mktemp("cabi_bin")
    built: dict[str, pathlib.Path] = {}

    def run(name: str, *argv: str, timeout: float = 120) -> dict[str, int]:
        exe = built.get(name)
        if exe is None:
            exe = out_dir / name
            subprocess.run([_cc(), "-O1", "-Wno-deprecated-declarations", "-I", str(include),
                            str(C_DIR / f"{name}.c"), "-L", str(lib), "-lascendcl",
                            "-lpthread", f"-Wl,-rpath,{lib}", "-o", str(exe)], check=True,
                           capture_output=True, text=True)
            built[name] = exe
        env = dict(os.environ, LD_LIBRARY_PATH=str(lib))
        p = subprocess.run([str(exe), *argv], capture_output=True, text=True, env=env,
                           timeout=timeout)
        assert p.returncode == 0, f"{name} exited {p.returncode}\n{p.stdout}\n{p.stderr}"
        res = {}
        for line in p.stdout.splitlines():
            k, _, v = line.partition(" ")
            res[k] = int(v)
        res["__stderr__"] = p.stderr
        return res
    return run
