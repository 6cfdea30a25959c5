"""Build the shipped sample binaries (run: ``python -m npusim.samples.build``).

Each kernel is a functional twin of a runtime example kernel (spec/kernel.md §7, design.md §3.3):
its real name, its parameters as 8-byte slots with PARAM_INFO, KERNEL_TYPE AIV, DFX arg info and a
FUNCTION_ENTRY_INFO key (so ``aclrtBinaryGetFunctionByEntry`` finds it too). Bodies bind by name
(``npusim.kernel.builtin``), except the placeholder binary's ``add_custom``, which binds to the
``add_custom_tiling`` body through the BODY_TLV record (the runtime's two sample builds also share
the kernel name).
"""
from __future__ import annotations

from pathlib import Path

from npusim.kernel.builtin import PARAMS
from npusim.kernel.decorator import kernel_spec
from npusim.kernel.elfwrite import write_elf
from npusim.samples import HERE, MAIN, PLACEHOLDER

# name, function entry; the parameter types are the built-in bodies' (kernel/builtin.py PARAMS)
KERNELS = tuple((n, PARAMS[n], e) for n, e in (
    ("EasyOPf", 1), ("ShortOPf", 2), ("LongOPf", 3), ("ErrorOPf", 4), ("add_custom", 5),
    ("AddKernel", 6), ("VectorAddKernel", 7), ("DeviceWrite", 8), ("DeviceRead", 9),
    ("KernelPrint", 10), ("CondSetU64", 11), ("CountDown", 12)))


def main_binary() -> bytes:
    return write_elf([kernel_spec(n, p, entry=e) for n, p, e in KERNELS],
                     so_name="libnpusim_samples.so")


def placeholder_binary() -> bytes:
    return write_elf([kernel_spec("add_custom", PARAMS["add_custom_tiling"],
                                  body_key="add_custom_tiling",
                                  entry=5)])


def build(out_dir: Path = HERE) -> list[Path]:
    out = []
    for name, data in ((MAIN, main_binary()), (PLACEHOLDER, placeholder_binary())):
        p = Path(out_dir) / name
        p.write_bytes(data)
        out.append(p)
    return out


if __name__ == "__main__":
    for p in build():
        print(p)
