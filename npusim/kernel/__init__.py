"""The Kernel module: ELF binaries (``elf``, ``elfwrite``), programs and kernels (``program``),
device load (``loader``), kernel bodies (``builtin``, ``decorator``, ``cpu``), device printf
(``printf``). See docs/architecture.md and spec/kernel.md.

This package is also the ``@npusim.kernel`` decorator: calling the module calls
:func:`npusim.kernel.decorator.kernel`. Attributes load lazily, so importing ``npusim.kernel.elf``
stays light.
"""
from __future__ import annotations

import sys
import types

_LAZY = {
    "printf_sink": ("printf", "printf_sink"), "printf": ("printf", "printf"),
    "format_id": ("printf", "format_id"), "PrintfSink": ("printf", "PrintfSink"),
    "register_cpu_kernel": ("cpu", "register_cpu_kernel"), "cpu_kernel": ("cpu", "cpu_kernel"),
    "CpuKernelContext": ("cpu", "CpuKernelContext"), "kernel": ("decorator", "kernel"),
    "binary": ("decorator", "binary"), "UserKernel": ("decorator", "UserKernel"),
}


def __getattr__(name):
    if name in _LAZY:
        import importlib
        mod, attr = _LAZY[name]
        return getattr(importlib.import_module(f"{__name__}.{mod}"), attr)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _KernelPackage(types.ModuleType):
    """``@npusim.kernel`` / ``@npusim.kernel(name=...)``: see :mod:`npusim.kernel.decorator`."""

    def __call__(self, fn=None, **options):
        from .decorator import kernel
        return kernel(fn, **options)


sys.modules[__name__].__class__ = _KernelPackage
