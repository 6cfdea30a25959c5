"""Malformed kernel binaries through the API: ``acl.rt.binary_load_from_data`` +
``binary_get_function`` (+ by entry, dev address, unload) return ACL codes for every input, and
the Pythonic ``load_binary`` raises ``AclError`` — never another exception, a crash or a hang.

Inputs: small conforming binaries written by ``elfwrite`` (every TLV type, mix pairs, globals,
.bss, so name, big-endian, AICPU machine), then truncated, byte-mutated, with header / section
header / symbol fields overwritten by boundary values, or extended with garbage. The two API tests
run 6,000 + 4,000 = 10,000 examples (``derandomize``: reproducible). Device arenas are 64 MiB so
crafted image sizes stay cheap.
"""
from __future__ import annotations

import random
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import npusim
from npusim import acl
from npusim.kernel.elf import FuncType, MetaType
from npusim.kernel.elfwrite import (GlobalSpec, KernelSpec, ParamSpec, SectionSpec, mix_pair,
                                    write_elf)
from npusim.runtime.runtime import RT

LOAD_CODES = {0, 107000}
GET_CODES = {0, 107000}
DEVICE_CODES = {0, 107000, 507000, 207001}
BOUNDARY = [0, 1, 2, 3, 7, 8, 24, 63, 64, 65, 183, 255, 0x7F, 0x80, 0xFFFF, 0x10000,
            0x7FFF_FFFF, 0xFFFF_FFFF, 0x1_0000_0000, 2**63 - 1, 2**64 - 1]


def _corpus() -> list[bytes]:
    code = bytes(range(24))
    full = KernelSpec("all_7", code, func_type=FuncType.AIV, cross_core_sync=1, task_ratio=(1, 2),
                      dfx_arg_count=3, share_mem_size=64, min_stack_size=1024, early_start=True,
                      aiv_type=3, function_entry=9, params=[ParamSpec(0, 8), ParamSpec(8, 4)],
                      sched_mode=1, extra_tlvs=[(MetaType.BLOCK_DIM_INFO, b"\1\0\0\0")])
    return [
        write_elf([full, *mix_pair("mm_3", code, code[::-1], dfx_arg_count=2)],
                  globals=[GlobalSpec("g_sysPrintFifoSpace", bytes(8)),
                           GlobalSpec("g_b", size=16, bss=True)],
                  so_name="libf.so", stack_size=32768, runtime_implicit=[1]),
        write_elf([KernelSpec("EasyOPf", code, func_type=3), KernelSpec("b_2", code)],
                  e_version=0x5A5A_0100),
        write_elf([full, KernelSpec("be", code, function_entry=5)],
                  globals=[GlobalSpec("g", b"x" * 8)], big_endian=True),
        write_elf([KernelSpec("cpu", code)], e_machine=183,
                  extra_sections=[SectionSpec(".ascend.meta.cpu", struct.pack("<HHI", 4, 2, 0),
                                              7)]),
    ]


CORPUS = _corpus()


@pytest.fixture
def small_device():
    RT.device_options["hbm_bytes"] = 64 << 20
    try:
        acl.init()
        acl.rt.set_device(0)
        yield
    finally:
        RT.device_options.pop("hbm_bytes", None)
        npusim.reset()


def _shoff(data: bytes) -> int:
    return struct.unpack_from("<Q", data, 40)[0] if len(data) >= 48 else 0


def mutate(base: bytes, seed: int) -> bytes:
    """1-4 mutations of ``base`` chosen by ``seed`` (one hypothesis draw per input keeps the
    generation cheap; hypothesis still drives and replays the inputs)."""
    rnd = random.Random(seed)
    data = bytearray(base)
    for _ in range(rnd.randint(1, 4)):
        kind = rnd.choice(("truncate", "byte", "byte", "field", "shdr", "append"))
        n = len(data)
        if kind == "truncate" and n:
            del data[rnd.randrange(n):]
        elif kind == "byte" and n:
            data[rnd.randrange(n)] = rnd.randrange(256)
        elif kind in ("field", "shdr") and n >= 8:
            width = rnd.choice((1, 2, 4, 8))
            if kind == "shdr":               # a field of a section header
                pos = _shoff(data) + 64 * rnd.randrange(13) + \
                    rnd.choice((0, 4, 8, 16, 24, 32, 40, 44, 48, 56))
            else:
                pos = rnd.choice((4, 5, 18, 20, 40, 58, 60, 62, rnd.randrange(64, max(n, 65))))
            if pos + width <= n:
                value = rnd.choice(BOUNDARY) & ((1 << 8 * width) - 1)
                data[pos:pos + width] = value.to_bytes(width, "little")
        elif kind == "append":
            data += rnd.randbytes(rnd.randrange(65))
    return bytes(data)


mutated = st.builds(mutate, st.sampled_from(CORPUS), st.integers(0, 2**32 - 1))


def _exercise(data: bytes) -> None:
    b, ret = acl.rt.binary_load_from_data(data)
    assert type(ret) is int and ret in LOAD_CODES, ret
    if ret:
        assert b is None
        return
    prog = RT.handles.get("binary", b)[0]
    names = list(prog.kernels)[:3] + ["no_such_kernel"]
    for name in names:
        f, code = acl.rt.binary_get_function(b, name)
        assert type(code) is int and code in GET_CODES, code
        if code == 0:
            assert acl.rt.get_function_name(f, 4096) == (name, 0)
            assert acl.rt.get_function_attribute(f, 1)[1] == 0
    f, code = acl.rt.binary_get_function_by_entry(b, 0)
    assert code in DEVICE_CODES, code
    *_, code = acl.rt.binary_get_dev_address(b)
    assert code in DEVICE_CODES, code
    assert acl.rt.binary_unload(b) == 0


FUZZ = settings(max_examples=6000, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))


@FUZZ
@given(data=mutated)
def test_mutated_binaries_through_the_facade_give_acl_codes(small_device, data):
    _exercise(data)


@settings(max_examples=4000, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(data=st.one_of(mutated, st.binary(max_size=256),
                      st.sampled_from(CORPUS).flatmap(
                          lambda c: st.integers(0, len(c)).map(lambda i: c[:i]))))
def test_truncated_and_random_bytes_through_the_pythonic_api_raise_acl_errors(small_device,
                                                                             data):
    try:
        lib = npusim.load_binary(data)
    except npusim.AclError as e:
        assert e.code in LOAD_CODES
        return
    for name in lib.names[:2]:
        try:
            lib[name]
        except npusim.AclError as e:
            assert e.code in GET_CODES
    lib.unload()


def test_the_corpus_loads(small_device):
    for data in CORPUS:
        b, ret = acl.rt.binary_load_from_data(data)
        assert ret == 0
        assert acl.rt.binary_unload(b) == 0
