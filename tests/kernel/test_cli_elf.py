"""``npusim elf FILE`` (npusim/cli/elf.py): the runtime's kernel table of a binary, the standard
view (pyelftools) and their disagreements."""
from __future__ import annotations

import argparse

import npusim
from npusim.cli import elf as cli_elf
from npusim.cli import main
from npusim.kernel.elfwrite import KernelSpec, write_elf

SAMPLES = npusim.samples.binary_path()


def test_npusim_elf_lists_the_kernels(capsys):
    assert main(["elf", SAMPLES]) == 0
    out_ = capsys.readouterr().out.splitlines()
    assert out_[0].split() == ["NAME", "TYPE", "ENTRY", "OFFSET", "SIZE", "PARAMS"]
    row = next(r for r in out_ if r.startswith("VectorAddKernel"))
    assert row.split() == ["VectorAddKernel", "VECTOR", "7", "0xc0", "32", "0:8", "8:8", "16:8",
                           "24:4", "32:4"]
    assert "12 kernel(s)" in out_
    assert out_[-1] == "the standard view and the runtime's parse agree"
    std = out_.index("standard view (pyelftools): ELF64 little-endian, e_machine 0x1029, "
                     "19 sections, so name libnpusim_samples.so")
    assert out_[std + 1].split() == ["NR", "NAME", "TYPE", "FLAGS", "OFFSET", "SIZE", "LINK",
                                     "INFO"]
    assert "  symbols of .symtab: 13" in out_
    assert "0xc0 32 FUNC GLOBAL DEFAULT 1 VectorAddKernel" in {" ".join(r.split()) for r in out_}
    assert ("    .ascend.meta.VectorAddKernel: KERNEL_TYPE(4) DFX_TYPE(72) "
            "FUNCTION_ENTRY_INFO(12) PARAM_SUMMARY(12) PARAM_INFO(36) x5") in out_


def test_npusim_elf_flags_a_disagreement(tmp_path, capsys):
    p = tmp_path / "junk.o"
    p.write_bytes(b"JUNK" + write_elf([KernelSpec("a", bytes(8))])[4:])
    assert main(["elf", str(p)]) == 0                  # the runtime loads it
    out_ = capsys.readouterr().out.splitlines()
    assert out_[0].split() == ["NAME", "TYPE", "ENTRY", "OFFSET", "SIZE", "PARAMS"]
    i = out_.index("2 disagreement(s) between the standard view and the runtime's parse:")
    assert out_[i + 1].startswith("  header: standard: magic b'JUNK'") and \
        out_[i + 1].endswith("[magic]")
    assert out_[i + 2].endswith("[rejected]")


def test_npusim_elf_on_a_bad_file(tmp_path, capsys):
    p = tmp_path / "bad.o"
    p.write_bytes(b"\x7fELF\x01" + bytes(59))
    assert main(["elf", str(p)]) == 1
    assert "107000" in capsys.readouterr().err


def test_npusim_elf_on_a_file_only_the_runtime_refuses(tmp_path, capsys):
    p = tmp_path / "ratio.o"
    p.write_bytes(write_elf([KernelSpec("a", bytes(8), task_ratio=(3, 1))]))
    assert main(["elf", str(p)]) == 1
    captured = capsys.readouterr()
    assert "the runtime would refuse this binary" in captured.err
    assert captured.out.splitlines()[-1].endswith("task ratio 3:1 invalid  [refused]")


def test_the_elf_command_on_a_plain_parser(capsys):
    parser = argparse.ArgumentParser()
    cli_elf.COMMAND.add_to(parser.add_subparsers())
    args = parser.parse_args(["elf", SAMPLES])
    assert args.func(args) == 0
