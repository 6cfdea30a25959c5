"""``npusim elf FILE`` (npusim/cli/elf.py): the runtime's kernel table of a binary."""
from __future__ import annotations

import argparse

import npusim
from npusim.cli import elf as cli_elf
from npusim.cli import main

SAMPLES = npusim.samples.binary_path()


def test_npusim_elf_lists_the_kernels(capsys):
    assert main(["elf", SAMPLES]) == 0
    out_ = capsys.readouterr().out.splitlines()
    assert out_[0].split() == ["NAME", "TYPE", "ENTRY", "OFFSET", "SIZE", "PARAMS"]
    row = next(r for r in out_ if r.startswith("VectorAddKernel"))
    assert row.split() == ["VectorAddKernel", "VECTOR", "7", "0xc0", "32", "0:8", "8:8", "16:8",
                           "24:4", "32:4"]
    assert out_[-1] == "12 kernel(s)"


def test_npusim_elf_on_a_bad_file(tmp_path, capsys):
    p = tmp_path / "bad.o"
    p.write_bytes(b"\x7fELF\x01" + bytes(59))
    assert main(["elf", str(p)]) == 1
    assert "107000" in capsys.readouterr().err


def test_the_elf_command_on_a_plain_parser(capsys):
    parser = argparse.ArgumentParser()
    cli_elf.COMMAND.add_to(parser.add_subparsers())
    args = parser.parse_args(["elf", SAMPLES])
    assert args.func(args) == 0
