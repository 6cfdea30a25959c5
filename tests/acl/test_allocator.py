"""User memory allocators registered on a stream (chapter 11-08, the 25-03 desc functions;
``src/acl/aclrt_impl/allocator.cpp``; fidelity row 512): a process-wide table keyed by the
stream, which the runtime never calls itself. ``3_memory_advanced/allocator/0_custom_allocator``
makes these calls."""
from __future__ import annotations

import npusim
from npusim import acl

from helpers.acl import in_fresh_thread

OK, BAD = acl.ACL_SUCCESS, acl.ACL_ERROR_INVALID_PARAM


def _desc(obj=0x1000, alloc=0x2000, free=0x3000, get_addr=0x4000, advise=None):
    d = acl.rt.allocator_create_desc()
    assert d
    for fn, v in ((acl.rt.allocator_set_obj_to_desc, obj),
                  (acl.rt.allocator_set_alloc_func_to_desc, alloc),
                  (acl.rt.allocator_set_free_func_to_desc, free),
                  (acl.rt.allocator_set_get_addr_from_block_func_to_desc, get_addr),
                  (acl.rt.allocator_set_alloc_advise_func_to_desc, advise)):
        if v is not None:
            assert fn(d, v) == OK
    return d


def test_register_and_read_back(dev0, stream):
    """The six values come back as they went in, Python callables included; the advise
    function is optional (NULL when unset); the registration is a copy: a later change or
    DestroyDesc leaves it, and the desc's handle comes back even after it is destroyed."""
    calls = []
    d = _desc(alloc=lambda a, n: calls.append(n))
    assert acl.rt.allocator_register(stream, d) == OK
    got = acl.rt.allocator_get_by_stream(stream)
    assert got[:2] == (d, 0x1000) and got[3:] == (0x3000, None, 0x4000, OK)
    got[2](0x1000, 256)
    assert calls == [256]                      # the caller's own function; npusim calls none
    assert acl.rt.allocator_set_free_func_to_desc(d, 0x3333) == OK
    assert acl.rt.allocator_destroy_desc(d) == OK
    assert acl.rt.allocator_get_by_stream(stream)[3] == 0x3000
    assert acl.rt.allocator_get_by_stream(stream)[0] == d


def test_checks(dev0, stream):
    """NULL desc or value 100000; Register: NULL stream, NULL desc, then a desc without its
    object / alloc / free / get-address function 100000; a second registration replaces the
    first; GetByStream of a stream with none 100000 with the reason; Unregister always
    succeeds but for NULL."""
    d = acl.rt.allocator_create_desc()
    assert acl.rt.allocator_set_obj_to_desc(0, 1) == BAD
    assert acl.rt.allocator_set_obj_to_desc(d, 0) == BAD
    assert acl.rt.allocator_set_alloc_func_to_desc(d, None) == BAD
    assert acl.rt.allocator_register(0, d) == BAD
    assert acl.rt.allocator_register(stream, 0) == BAD
    assert acl.rt.allocator_register(stream, d) == BAD
    assert "obj" in acl.get_recent_err_msg()
    for setter in (acl.rt.allocator_set_obj_to_desc, acl.rt.allocator_set_alloc_func_to_desc,
                   acl.rt.allocator_set_free_func_to_desc):
        assert setter(d, 0x10) == OK
        assert acl.rt.allocator_register(stream, d) == BAD      # get-address still missing
    assert acl.rt.allocator_set_get_addr_from_block_func_to_desc(d, 0x20) == OK
    assert acl.rt.allocator_register(stream, d) == OK
    assert acl.rt.allocator_register(stream, _desc(obj=0x99)) == OK
    assert acl.rt.allocator_get_by_stream(stream)[1] == 0x99
    assert acl.rt.allocator_get_by_stream(0) == (None,) * 6 + (BAD,)
    assert acl.rt.allocator_unregister(stream) == OK
    assert acl.rt.allocator_get_by_stream(stream) == (None,) * 6 + (BAD,)
    assert "not registered" in acl.get_recent_err_msg()
    assert acl.rt.allocator_unregister(stream) == OK
    assert acl.rt.allocator_unregister(0) == BAD
    assert acl.rt.allocator_destroy_desc(0) == BAD
    assert acl.rt.allocator_destroy_desc(d) == OK
    assert acl.rt.allocator_destroy_desc(d) == BAD               # not a live desc any more


def test_the_table_is_the_processes():
    """No context or device needed, any thread; the stream is not otherwise checked (the
    runtime's unit test registers (aclrtStream)0x01); npusim.reset() empties it."""
    d = _desc()
    assert in_fresh_thread(acl.rt.allocator_register, 0x01, d) == OK
    assert acl.rt.allocator_get_by_stream(0x01)[1] == 0x1000
    assert npusim.census().handles.get("allocator_desc") == 1
    npusim.reset()
    assert acl.rt.allocator_get_by_stream(0x01)[-1] == BAD
