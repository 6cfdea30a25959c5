"""Asynchronous copies through a DVPP buffer, in pyACL's idiom (runs unmodified on hardware and
under ``npusim run examples/pyacl/dvpp_async_copy.py``).

The device buffer comes from ``acl.media.dvpp_malloc`` — the allocator of the media functions,
which rounds the size up to 32 bytes plus 32 and aligns the start to 128 bytes — retried until it
succeeds, as media samples do. Copies in and out are queued with ``acl.rt.memcpy_async`` and
waited for with ``acl.rt.synchronize_stream``; the buffer goes back with ``acl.media.dvpp_free``.
"""
import acl
import time

import numpy as np

DEVICE_ID = 0
ACL_SUCCESS = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
NPY_FLOAT32 = 11


def check_ret(message, ret):
    if ret != ACL_SUCCESS:
        raise Exception("{} failed ret={}".format(message, ret))


def dvpp_buffer(size):
    while True:
        ptr, ret = acl.media.dvpp_malloc(size)
        if ret == ACL_SUCCESS:
            return ptr
        print("acl.media.dvpp_malloc failed ret={}, retrying".format(ret))
        time.sleep(0.1)


def main():
    ret = acl.init()
    check_ret("acl.init", ret)
    ret = acl.rt.set_device(DEVICE_ID)
    check_ret("acl.rt.set_device", ret)
    context, ret = acl.rt.create_context(DEVICE_ID)
    check_ret("acl.rt.create_context", ret)
    stream, ret = acl.rt.create_stream()
    check_ret("acl.rt.create_stream", ret)

    frame = np.linspace(0.0, 2.0, 9, dtype=np.float32).reshape(3, 3)
    size = frame.nbytes
    dev_ptr = dvpp_buffer(size)
    print("dvpp buffer aligned to 128 bytes:", dev_ptr % 128 == 0)

    host_in, ret = acl.rt.malloc_host(size)
    check_ret("acl.rt.malloc_host", ret)
    host_out, ret = acl.rt.malloc_host(size)
    check_ret("acl.rt.malloc_host", ret)
    acl.util.ptr_to_numpy(host_in, frame.shape, NPY_FLOAT32)[:] = frame

    ret = acl.rt.memcpy_async(dev_ptr, size, host_in, size, ACL_MEMCPY_HOST_TO_DEVICE, stream)
    check_ret("acl.rt.memcpy_async", ret)
    ret = acl.rt.memcpy_async(host_out, size, dev_ptr, size, ACL_MEMCPY_DEVICE_TO_HOST, stream)
    check_ret("acl.rt.memcpy_async", ret)
    ret = acl.rt.synchronize_stream(stream)
    check_ret("acl.rt.synchronize_stream", ret)

    out = np.frombuffer(acl.util.ptr_to_bytes(host_out, size), dtype=np.float32)
    print("frame back from the dvpp buffer:")
    print(out.reshape(frame.shape))

    ret = acl.media.dvpp_free(dev_ptr)
    check_ret("acl.media.dvpp_free", ret)
    ret = acl.rt.free_host(host_in)
    check_ret("acl.rt.free_host", ret)
    ret = acl.rt.free_host(host_out)
    check_ret("acl.rt.free_host", ret)
    ret = acl.rt.destroy_stream(stream)
    check_ret("acl.rt.destroy_stream", ret)
    ret = acl.rt.destroy_context(context)
    check_ret("acl.rt.destroy_context", ret)
    ret = acl.rt.reset_device(DEVICE_ID)
    check_ret("acl.rt.reset_device", ret)
    ret = acl.finalize()
    check_ret("acl.finalize", ret)


if __name__ == "__main__":
    main()
