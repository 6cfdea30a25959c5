"""The Ascend C CMake stand-in (npusim/cabi/ascendc.py, issue 39): kernel sources read as text,
host stubs whose <<<>>> launches become launches of the built-in kernels by name, the binary a
fatbin library gets, and an end-to-end CMake build of a kernel library that runs on npusim."""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from npusim.cabi import ascendc

SOURCE = r'''
#include "kernel_operator.h"
#include "my_ops.h"
// a comment with EasyOPf<<<1, nullptr, s>>>(x) that is not code
extern "C" __global__ __aicore__ void EasyOPf(__gm__ uint32_t* x)
{
    AscendC::Something();   /* device code, dropped */
}
extern "C" __global__ __aicore__ void ErrorOPf() { asm("trap"); }
extern "C" __global__ __aicore__ void VectorAddKernel(
    __gm__ float* a, __gm__ float* b, __gm__ float* c, float alpha, uint32_t n) {}
void EasyOP(uint32_t blockDim, void* stream, uint32_t* x) { EasyOPf<<<blockDim, nullptr, stream>>>(x); }
void ErrorOP(uint32_t blockDim, void* stream) { ErrorOPf<<<blockDim, nullptr, stream>>>(); }
int32_t VecAdd(uint32_t blockDim, void* stream, float* a, float* b, float* c, float alpha, uint32_t n)
{
    return static_cast<int32_t>(VectorAddKernel<<<blockDim, nullptr, stream>>>(a, b, c, alpha, n));
}
'''
HEADER = """#include <cstdint>
void EasyOP(uint32_t blockDim, void* stream, uint32_t* x);
void ErrorOP(uint32_t blockDim, void* stream);
int32_t VecAdd(uint32_t blockDim, void* stream, float* a, float* b, float* c, float alpha, uint32_t n);
"""


def _table():
    return ascendc._table()


def test_kernels_of_reads_names_and_parameter_types():
    k = ascendc.kernels_of(SOURCE)
    assert list(k) == ["EasyOPf", "ErrorOPf", "VectorAddKernel"]
    assert k["EasyOPf"] == [("uint32_t*", "x")]
    assert k["ErrorOPf"] == []
    assert [t for t, _ in k["VectorAddKernel"]] == ["float*", "float*", "float*", "float", "uint32_t"]
    k = ascendc.kernels_of('extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z)')
    assert [t for t, _ in k["add_custom"]] == ["uint8_t *"] * 3


def test_binary_choice_by_kernel_and_parameter_count():
    t = _table()
    assert ascendc.pick_binary({"add_custom": [1, 2, 3]}, t) == ("main", [])
    assert ascendc.pick_binary({"add_custom": [1, 2, 3, 4, 5]}, t) == ("placeholder", [])
    assert ascendc.pick_binary({"NoSuchKernel": []}, t)[1] == ["NoSuchKernel"]


def test_host_stub_keeps_the_host_functions_and_replaces_the_launches(tmp_path):
    text = ascendc.host_stub(SOURCE, "src.cpp", "/bin", _table())
    assert "<<<" not in text.split("not compiled", 1)[-1].replace("<<<>>>", "")
    assert "AscendC::Something" not in text and 'asm("trap")' not in text
    assert '#include "my_ops.h"' in text and "kernel_operator.h" not in text.split("\n#include", 1)[1]
    assert "npusim_launch_ErrorOPf(blockDim, nullptr, stream)" in text
    assert "npusim_launch_VectorAddKernel(blockDim, nullptr, stream, a, b, c, alpha, n)" in text
    if shutil.which("g++") is None:
        pytest.skip("no g++")
    (tmp_path / "my_ops.h").write_text(HEADER)
    (tmp_path / "s.cpp").write_text(text)
    r = subprocess.run(["g++", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-I", str(tmp_path), "-c",
                        str(tmp_path / "s.cpp"), "-o", str(tmp_path / "s.o")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_unknown_kernel_is_a_build_error():
    src = 'extern "C" __global__ __aicore__ void Mine(int a) {}\nvoid F(){ Mine<<<1, nullptr, 0>>>(1); }'
    with pytest.raises(SystemExit, match="no npusim built-in kernel for Mine"):
        ascendc.host_stub(src, "mine.cpp", "/bin", _table())


def test_install_and_the_build_time_commands(tmp_path):
    d = pathlib.Path(ascendc.install(tmp_path / "cann"))
    assert d == tmp_path / "cann" / "tikcpp" / "ascendc_kernel_cmake"
    assert (tmp_path / "cann" / "tools" / "tikcpp" / "ascendc_kernel_cmake" / "ascendc.cmake").exists()
    for f in ("ascendc.cmake", "npusim_ascendc.py", "kernels.json", "npusim_ascendc_launch.cpp",
              "npusim_samples.o", "add_custom_placeholder.o"):
        assert (d / f).exists(), f
    assert sys.executable in (d / "ascendc.cmake").read_text()
    assert json.loads((d / "kernels.json").read_text())["binaries"]["placeholder"] == {"add_custom": 5}
    src = tmp_path / "tiling.cpp"
    src.write_text('extern "C" __global__ __aicore__ void add_custom(GM_ADDR a, GM_ADDR b, GM_ADDR c, '
                   'GM_ADDR d, GM_ADDR e) {}')
    out = tmp_path / "fat" / "x.o"
    subprocess.run([sys.executable, str(d / "npusim_ascendc.py"), "fatbin", str(out), str(src)],
                   check=True)
    assert out.read_bytes() == (d / "add_custom_placeholder.o").read_bytes()
    stub = tmp_path / "g" / "s.host.cpp"
    (tmp_path / "my_ops.h").write_text(HEADER)
    (tmp_path / "k.cpp").write_text(SOURCE)
    subprocess.run([sys.executable, str(d / "npusim_ascendc.py"), "stub", str(tmp_path / "k.cpp"),
                    str(stub)], check=True)
    assert str(d / "npusim_samples.o") in stub.read_text()


MAIN = r'''
#include <cstdio>
#include "acl/acl.h"
#include "my_ops.h"
int main()
{
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtStream s = nullptr;
    aclrtCreateStream(&s);
    uint32_t *x = nullptr;
    float *a = nullptr, *b = nullptr, *c = nullptr;
    aclrtMalloc((void **)&x, 4, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void **)&a, 16, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void **)&b, 16, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void **)&c, 16, ACL_MEM_MALLOC_HUGE_FIRST);
    uint32_t n = 0;
    float ha[4] = {1, 2, 3, 4}, hb[4] = {10, 20, 30, 40}, hc[4] = {0};
    aclrtMemcpy(x, 4, &n, 4, ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtMemcpy(a, 16, ha, 16, ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtMemcpy(b, 16, hb, 16, ACL_MEMCPY_HOST_TO_DEVICE);
    for (int i = 0; i < 5; ++i) EasyOP(1, s, x);
    int32_t r = VecAdd(1, s, a, b, c, 0.5f, 4);
    aclrtSynchronizeStream(s);
    aclrtMemcpy(&n, 4, x, 4, ACL_MEMCPY_DEVICE_TO_HOST);
    aclrtMemcpy(hc, 16, c, 16, ACL_MEMCPY_DEVICE_TO_HOST);
    printf("count %u\nvecadd %d\nc3 %d\n", n, r, (int)(hc[3] * 10));
    aclrtDestroyStream(s);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
'''
CMAKELISTS = """cmake_minimum_required(VERSION 3.16.0)
project(npusim_ascendc_test)
set(ASCENDC_CMAKE_DIR $ENV{ASCENDC_CMAKE_DIR})
include(${ASCENDC_CMAKE_DIR}/ascendc.cmake)
ascendc_library(kernels STATIC k.cpp)
include_directories(${ASCEND_CANN_PACKAGE_PATH}/include ${CMAKE_CURRENT_SOURCE_DIR})
add_executable(main main.cpp)
target_compile_options(main PRIVATE -std=c++17 -Wall -Werror)
target_link_libraries(main PRIVATE kernels)
"""


def test_cmake_build_of_a_kernel_library_runs_on_npusim(tmp_path):
    """ascendc_library + a host program linking only the kernels target, built by CMake against a
    full install (the library too), launches EasyOPf five times and VectorAddKernel once."""
    if shutil.which("cmake") is None or shutil.which("g++") is None:
        pytest.skip("no cmake / g++")
    from npusim.cabi import build
    try:
        build.check_tools()
    except RuntimeError as e:
        pytest.skip(f"npusim cabi cannot be built here: {e}")
    prefix = tmp_path / "cann"
    build.install(prefix)
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "k.cpp").write_text(SOURCE)
    (proj / "my_ops.h").write_text(HEADER)
    (proj / "main.cpp").write_text(MAIN)
    (proj / "CMakeLists.txt").write_text(CMAKELISTS)
    script = (f'source "{prefix}/bin/setenv.bash" && cmake -S . -B build '
              f'-DASCEND_CANN_PACKAGE_PATH="{prefix}" >/dev/null && cmake --build build >/dev/null '
              f'&& ./build/main')
    r = subprocess.run(["bash", "-c", script], cwd=proj, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    got = dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line)
    assert got["count"] == "5"
    assert got["vecadd"] == "0"
    assert got["c3"] == "240"      # 4 + 0.5 * 40
