"""Real threads over the functions of fidelity rows 508-513: each thread builds and runs its own
labelled model, registers and reads back its own allocator, reads the overflow status on its
own stream and asks the device attributes, while the others do the same and one thread flips
the process's saturation mode. Every facade call holds the runtime lock (docs/architecture.md,
"Threads"), so each thread sees its own results and the census comes back to where it was."""
from __future__ import annotations

import threading

import numpy as np

import npusim as ns
from npusim import acl

OK = acl.ACL_SUCCESS
THREADS, ROUNDS = 4, 25


def _ok(r):
    code = r[-1] if isinstance(r, tuple) else r
    if code != OK:
        raise AssertionError(f"code {code}: {acl.get_recent_err_msg()}")
    return r[0] if isinstance(r, tuple) and len(r) == 2 else r


def _byte(p) -> int:
    out = np.zeros(1, np.uint8)
    _ok(acl.rt.memcpy(acl.util.numpy_to_ptr(out), 1, p, 1, acl.ACL_MEMCPY_DEVICE_TO_HOST))
    return int(out[0])


def _worker(i: int, errors: list) -> None:
    try:
        _ok(acl.rt.set_device(0))
        s = _ok(acl.rt.create_stream())
        marks, idx, status = (_ok(acl.rt.malloc(n, 0)) for n in (2, 4, 64))
        for r in range(ROUNDS):
            branch = (i + r) % 2                    # which label the switch takes
            _ok(acl.rt.memset(marks, 2, 0, 2))
            _ok(acl.rt.memset(idx, 4, 0, 4))
            _ok(acl.rt.memset(idx, 1, branch, 1))
            m = _ok(acl.mdl.ri_build_begin(0))
            t = _ok(acl.rt.create_stream_with_config(0, acl.ACL_STREAM_PERSISTENT))
            _ok(acl.mdl.ri_bind_stream(m, t, acl.ACL_MODEL_STREAM_FLAG_HEAD))
            l0, l1 = _ok(acl.rt.create_label()), _ok(acl.rt.create_label())
            lst = _ok(acl.rt.create_label_list([l0, l1], 2))
            _ok(acl.rt.switch_label_by_index(idx, 2, lst, t))
            _ok(acl.rt.set_label(l0, t))
            _ok(acl.rt.memset_async(marks, 1, 1, 1, t))
            _ok(acl.rt.set_label(l1, t))
            _ok(acl.rt.memset_async(marks + 1, 1, 1, 1, t))
            _ok(acl.mdl.ri_end_task(m, t))
            _ok(acl.mdl.ri_build_end(m, None))
            _ok(acl.mdl.ri_execute_async(m, s))
            # meanwhile: this thread's allocator, the status, the attributes
            d = acl.rt.allocator_create_desc()
            for fn, v in ((acl.rt.allocator_set_obj_to_desc, 0x1000 + i),
                          (acl.rt.allocator_set_alloc_func_to_desc, 0x2000 + i),
                          (acl.rt.allocator_set_free_func_to_desc, 0x3000 + i),
                          (acl.rt.allocator_set_get_addr_from_block_func_to_desc, 0x4000 + i)):
                _ok(fn(d, v))
            _ok(acl.rt.allocator_register(s, d))
            got = acl.rt.allocator_get_by_stream(s)
            assert got[:2] == (d, 0x1000 + i) and got[-1] == OK, got
            _ok(acl.rt.get_overflow_status(status, 64, s))
            assert acl.rt.get_device_info(0, acl.ACL_DEV_ATTR_VECTOR_CORE_NUM) == (48, OK)
            assert acl.rt.get_device_sat_mode()[0] in (0, 1)
            if i == 0:
                _ok(acl.rt.set_device_sat_mode(r % 2))
            _ok(acl.rt.synchronize_stream(s))
            assert (_byte(marks), _byte(marks + 1)) == ((1, 1) if branch == 0 else (0, 1))
            _ok(acl.rt.allocator_unregister(s))
            _ok(acl.rt.allocator_destroy_desc(d))
            _ok(acl.mdl.ri_unbind_stream(m, t))
            _ok(acl.mdl.ri_destroy(m))
            _ok(acl.rt.destroy_label_list(lst))
            _ok(acl.rt.destroy_label(l0))
            _ok(acl.rt.destroy_label(l1))
            _ok(acl.rt.destroy_stream(t))
        for p in (marks, idx, status):
            _ok(acl.rt.free(p))
        _ok(acl.rt.destroy_stream(s))
    except BaseException as e:                      # reported on the test's thread
        errors.append((i, e))


def test_threads_use_labels_allocators_and_queries_at_once(dev0):
    before = ns.census()
    errors: list = []
    threads = [threading.Thread(target=_worker, args=(i, errors)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads), "a thread hangs"
    assert not errors, errors
    assert not ns.census().diff(before)
