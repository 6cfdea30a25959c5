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

from npusim.kernel.decorator import kernel_spec
from npusim.kernel.elfwrite import write_elf
from npusim.samples import HERE, MAIN, PLACEHOLDER

# name, parameter types, function entry
KERNELS = (
    ("EasyOPf", ("ptr",), 1),
    ("ShortOPf", ("ptr",), 2),
    ("LongOPf", ("ptr",), 3),
    ("ErrorOPf", (), 4),
    ("add_custom", ("ptr", "ptr", "ptr"), 5),
    ("AddKernel", ("ptr", "ptr", "ptr", "u32"), 6),
    ("VectorAddKernel", ("ptr", "ptr", "ptr", "f32", "u32"), 7),
    ("DeviceWrite", ("ptr", "i32"), 8),
    ("DeviceRead", ("ptr",), 9),
    ("KernelPrint", (), 10),
    ("CondSetU64", ("ptr", "u64"), 11),
    ("CountDown", ("ptr", "ptr"), 12),
)


def main_binary() -> bytes:
    return write_elf([kernel_spec(n, p, entry=e) for n, p, e in KERNELS],
                     so_name="libnpusim_samples.so")


def placeholder_binary() -> bytes:
    return write_elf([kernel_spec("add_custom", ("ptr",) * 5, body_key="add_custom_tiling",
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
