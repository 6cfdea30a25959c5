"""aclrtCreateBinary / aclrtDestroyBinary / aclrtBinaryLoad with descriptors that are not live.

The acl layer checks only NULL (hicann/runtime src/acl/aclrt_impl/kernel.cpp:61, :73); deleting
or reading through any other bad pointer is undefined in C. npusim answers like every handle it
does not know: 107017 for destroy (a double destroy included), 107000 for load (the runtime
would read garbage data and length); docs/fidelity.md row 341.
"""
from __future__ import annotations

import pytest

import npusim
from npusim import acl
from npusim import errors as E

OK = acl.ACL_SUCCESS


def _desc():
    elf = open(npusim.samples.binary_path(), "rb").read()
    return acl.rt.create_binary(elf, len(elf))


@pytest.mark.parametrize("bad", [1.5, float("nan"), "abc", object(), 0x5AD0_0000_1000],
                         ids=["float", "nan", "str", "object", "never-created"])
def test_destroy_refuses_what_is_not_a_descriptor(dev0, bad):
    assert acl.rt.destroy_binary(bad) == E.ACL_ERROR_RT_INVALID_HANDLE
    assert "binary" in acl.get_recent_err_msg()


def test_destroy_null_is_100000(dev0):
    assert acl.rt.destroy_binary(None) == E.ACL_ERROR_INVALID_PARAM
    assert acl.rt.destroy_binary(0) == E.ACL_ERROR_INVALID_PARAM
    assert "binary is NULL" in acl.get_recent_err_msg()


def test_double_destroy_and_load_after_destroy(dev0):
    d = _desc()
    assert acl.rt.destroy_binary(d) == OK
    assert acl.rt.destroy_binary(d) == E.ACL_ERROR_RT_INVALID_HANDLE
    assert "destroyed already" in acl.get_recent_err_msg()
    assert acl.rt.binary_load(d) == (None, E.ACL_ERROR_RT_PARAM_INVALID)
    assert "not a live aclrtCreateBinary descriptor" in acl.get_recent_err_msg()


def test_another_kinds_handle_is_not_a_descriptor(dev0):
    b, ret = acl.rt.binary_load_from_file(npusim.samples.binary_path())
    assert ret == OK
    assert acl.rt.destroy_binary(b) == E.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.rt.binary_unload(b) == OK              # still loaded: nothing was destroyed


def test_the_census_counts_descriptors(dev0):
    base = npusim.census()
    d = _desc()
    assert npusim.census().diff(base) == {"handles binary_desc": 1}
    assert acl.rt.destroy_binary(d) == OK
    assert npusim.census().diff(base) == {}
