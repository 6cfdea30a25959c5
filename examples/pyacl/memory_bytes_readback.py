"""The memory round trip of Huawei's pyACL memory samples, in their idiom (runs unmodified on
hardware and under ``npusim run examples/pyacl/memory_bytes_readback.py``).

numpy data reaches the device through pinned host memory; the result comes back the way the
samples read it: a ``tobytes()`` buffer handed to ``acl.util.bytes_to_ptr`` is the copy's
destination, and ``np.frombuffer`` over that same buffer is the array printed. pyACL's helper
gives the bytes object's own buffer, so the copy lands in it.
"""
import acl
import numpy as np

DEVICE_ID = 0
ACL_SUCCESS = 0
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_HOST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2


def check_ret(message, ret):
    if ret != ACL_SUCCESS:
        raise Exception("{} failed ret={}".format(message, ret))


def main():
    ret = acl.init()
    check_ret("acl.init", ret)
    ret = acl.rt.set_device(DEVICE_ID)
    check_ret("acl.rt.set_device", ret)
    context, ret = acl.rt.create_context(DEVICE_ID)
    check_ret("acl.rt.create_context", ret)

    np_data = np.arange(1, 17, dtype=np.int32) * 3
    size = np_data.size * np_data.itemsize

    host_ptr, ret = acl.rt.malloc_host(size)
    check_ret("acl.rt.malloc_host", ret)
    dev_ptr, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
    check_ret("acl.rt.malloc", ret)

    # the input: numpy data into the pinned buffer, then to the device
    in_bytes = np_data.tobytes()
    in_ptr = acl.util.bytes_to_ptr(in_bytes)
    ret = acl.rt.memcpy(host_ptr, size, in_ptr, size, ACL_MEMCPY_HOST_TO_HOST)
    check_ret("acl.rt.memcpy", ret)
    ret = acl.rt.memcpy(dev_ptr, size, host_ptr, size, ACL_MEMCPY_HOST_TO_DEVICE)
    check_ret("acl.rt.memcpy", ret)

    # the read-back: straight into a bytes object's buffer
    out_data = np.zeros(np_data.shape, dtype=np_data.dtype)
    out_bytes = out_data.tobytes()
    out_ptr = acl.util.bytes_to_ptr(out_bytes)
    ret = acl.rt.memcpy(out_ptr, size, dev_ptr, size, ACL_MEMCPY_DEVICE_TO_HOST)
    check_ret("acl.rt.memcpy", ret)
    result = np.frombuffer(out_bytes, dtype=np_data.dtype)
    print("data on the device:", result)
    print("equal to the input:", bool((result == np_data).all()))

    ret = acl.rt.free(dev_ptr)
    check_ret("acl.rt.free", ret)
    ret = acl.rt.free_host(host_ptr)
    check_ret("acl.rt.free_host", ret)
    ret = acl.rt.destroy_context(context)
    check_ret("acl.rt.destroy_context", ret)
    ret = acl.rt.reset_device(DEVICE_ID)
    check_ret("acl.rt.reset_device", ret)
    ret = acl.finalize()
    check_ret("acl.finalize", ret)


if __name__ == "__main__":
    main()
