"""Chapter 11-11 device variables (npusim/runtime/api_symbol.py, docs/fidelity.md #276-#278): the
symbol is a registered host address standing for an ELF global of a loaded binary."""
from __future__ import annotations

import numpy as np
import pytest

from npusim import acl
from npusim.kernel.elfwrite import GlobalSpec, KernelSpec, write_elf
from helpers.acl import in_fresh_thread

OK = 0
E_ACL, E_RT = 100000, 107000
H2D, D2H, DEFAULT = 1, 2, 4


@pytest.fixture
def sym(dev0):
    """(binary, host variable): a binary with the 16-byte global ``g_table`` registered under
    the address of a host shadow array, as the toolchain's start-up code would."""
    data = write_elf([KernelSpec("k", bytes(range(48)))],
                     globals=[GlobalSpec("g_table", bytes(range(16)))])
    b, ret = acl.rt.binary_load_from_data(data)
    assert ret == OK
    shadow = np.zeros(16, np.uint8)
    host_var = acl.util.numpy_to_ptr(shadow)
    assert acl.rt.register_variable(b, host_var, "g_table", 16) == OK
    return b, host_var


def test_address_and_size(sym):
    b, hv = sym
    addr, ret = acl.rt.get_symbol_address(hv)
    assert ret == OK
    assert acl.rt.binary_get_global(b, "g_table")[:2] == (addr, 16)
    assert acl.rt.get_symbol_size(hv) == (16, OK)


def test_copies_to_and_from_the_variable(sym, stream):
    _, hv = sym
    out = np.zeros(16, np.uint8)
    po = acl.util.numpy_to_ptr(out)
    assert acl.rt.memcpy_from_symbol(po, 16, hv, 16, 0, D2H) == OK
    assert (out == np.arange(16)).all()                      # the ELF's initial value
    src = np.full(4, 0xAB, np.uint8)
    assert acl.rt.memcpy_to_symbol(hv, acl.util.numpy_to_ptr(src), 4, 8, DEFAULT) == OK
    assert acl.rt.memcpy_from_symbol(po, 16, hv, 8, 8, DEFAULT) == OK
    assert list(out[:8]) == [0xAB] * 4 + [12, 13, 14, 15]
    pin, _ = acl.rt.malloc_host(16)
    acl.util.ptr_to_numpy(pin, (4,), np.uint8)[:] = 7
    assert acl.rt.memcpy_to_symbol_async(hv, pin, 4, 0, H2D, stream) == OK
    assert acl.rt.memcpy_from_symbol_async(pin + 8, 8, hv, 8, 0, D2H, stream) == OK
    assert acl.rt.synchronize_stream(stream) == OK
    assert list(acl.util.ptr_to_numpy(pin + 8, (8,), np.uint8)) == [7] * 4 + [4, 5, 6, 7]


def test_the_registered_size_bounds_the_copies(dev0):
    data = write_elf([KernelSpec("k", bytes(48))], globals=[GlobalSpec("g", bytes(16))])
    b, _ = acl.rt.binary_load_from_data(data)
    hv = 0x1234_5670
    assert acl.rt.register_variable(b, hv, "g", 8) == OK       # the size the toolchain gives
    assert acl.rt.get_symbol_size(hv) == (8, OK)
    buf = np.zeros(16, np.uint8)
    p = acl.util.numpy_to_ptr(buf)
    assert acl.rt.memcpy_from_symbol(p, 16, hv, 16, 0, D2H) == E_ACL
    assert acl.rt.memcpy_from_symbol(p, 16, hv, 4, 5, D2H) == E_ACL
    assert acl.rt.memcpy_from_symbol(p, 16, hv, 4, 4, D2H) == OK
    assert acl.rt.register_variable(b, hv, "g", 16) == OK      # a second registration: skipped
    assert acl.rt.get_symbol_size(hv) == (8, OK)


def test_codes(sym):
    b, hv = sym
    p = acl.util.numpy_to_ptr(np.zeros(16, np.uint8))
    assert acl.rt.get_symbol_address(0) == (None, E_ACL)
    assert acl.rt.get_symbol_size(None) == (None, E_ACL)
    assert acl.rt.get_symbol_address(hv + 1) == (None, acl.ACL_ERROR_RT_INVALID_SYMBOL)
    assert in_fresh_thread(acl.rt.get_symbol_address, hv)[-1] == acl.ACL_ERROR_RT_CONTEXT_NULL
    assert acl.rt.memcpy_from_symbol(p, 16, hv, 0, 99, 99) == OK         # count 0 first
    assert acl.rt.memcpy_from_symbol(p, 16, 0, 4, 0, D2H) == E_ACL
    assert acl.rt.memcpy_from_symbol(0, 16, hv, 4, 0, D2H) == E_ACL
    assert acl.rt.memcpy_from_symbol(p, 2, hv, 4, 0, D2H) == E_ACL       # count > dstMax
    assert acl.rt.memcpy_from_symbol(p, 16, hv, 4, 0, H2D) == E_ACL      # kind
    assert acl.rt.memcpy_from_symbol(p, 16, hv + 1, 4, 0, D2H) == acl.ACL_ERROR_RT_INVALID_SYMBOL
    assert acl.rt.memcpy_from_symbol(p, 16, hv, 4, 2 ** 64 - 1, D2H) == E_ACL
    assert acl.rt.memcpy_to_symbol(hv, p, 4, 0, D2H) == E_ACL
    assert acl.rt.memcpy_to_symbol(hv, 0, 4, 0, H2D) == E_ACL
    assert acl.rt.memcpy_to_symbol(0, p, 4, 0, H2D) == E_ACL
    assert acl.rt.memcpy_to_symbol(hv, p, 17, 0, H2D) == E_ACL
    assert acl.rt.memcpy_to_symbol(hv, p, 4, 0, 1.5) == E_ACL
    assert acl.rt.memcpy_to_symbol_async(hv, p, 4, 0, H2D, 12345) == acl.ACL_ERROR_RT_INVALID_HANDLE


def test_registration_codes(sym):
    b, hv = sym
    assert acl.rt.register_variable(12345, 0x1000, "g_table", 16) == acl.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.rt.register_variable(b, 0, "g_table", 16) == E_RT
    assert acl.rt.register_variable(b, 0x1000, "nope", 16) == acl.ACL_ERROR_RT_SYMBOL_NOT_FOUND
    assert acl.rt.register_variable(b, 0x1000, None, 16) == acl.ACL_ERROR_RT_SYMBOL_NOT_FOUND


def test_an_unloaded_binary_makes_its_symbols_invalid(sym):
    b, hv = sym
    assert acl.rt.binary_unload(b) == OK
    assert acl.rt.get_symbol_address(hv) == (None, acl.ACL_ERROR_RT_INVALID_SYMBOL)
