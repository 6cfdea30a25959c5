"""A synchronous aclrtMemcpy moves its bytes at the copy's end, after the device has run up to
then (fidelity row 501; ``ApiImpl::MemCopySync`` is a driver copy with no stream order): the
runtime's ``5_d2d_sync_memory_copy`` sample launches ``WriteDo`` and copies without
synchronizing, and shows the written value copied."""
from __future__ import annotations

import numpy as np

from npusim import acl

from helpers.acl import LONG_NS, host_ns, launch, read
from helpers.kernel import dev_alloc, dev_args, func, load_samples

OK = acl.ACL_SUCCESS


def test_sync_d2d_copy_sees_a_kernel_launched_just_before(dev0, stream, sink):
    lib = load_samples()
    size = 1 << 20
    a, b = dev_alloc(size), dev_alloc(size)
    assert acl.rt.launch_kernel(func(lib, "DeviceWrite"), 1, dev_args(a, 123), 16, stream) == OK
    assert acl.rt.memcpy(b, size, a, size, acl.ACL_MEMCPY_DEVICE_TO_DEVICE) == OK
    assert read(b, 1, np.int32)[0] == 123
    assert sink.take() == ["Source data: 123\n"]


def test_sync_d2h_copy_sees_a_kernel_launched_just_before(dev0, stream, buf):
    assert launch(stream, "EasyOPf", 1, (buf,)) == OK
    out = np.zeros(16, np.uint32)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(out), out.nbytes, buf, out.nbytes,
                         acl.ACL_MEMCPY_DEVICE_TO_HOST) == OK
    assert out[0] == 1


def test_sync_copy_does_not_wait_for_a_long_kernel(dev0, stream, buf):
    assert launch(stream, "LongOPf", 1, (buf,)) == OK
    x = dev_alloc(64)
    assert acl.rt.memcpy(x, 64, buf, 64, acl.ACL_MEMCPY_DEVICE_TO_DEVICE) == OK
    assert host_ns() < LONG_NS                           # no stream order: a driver copy
    assert read(x, 1)[0] == 1                            # LongOPf's store happens at its start
