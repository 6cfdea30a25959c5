"""A memory round trip in pyACL's own style (runs unmodified on hardware and under
``npusim run examples/pyacl/memory_round_trip.py``).

numpy data goes to the device through ``acl.util.bytes_to_ptr`` (the bytes object's own
buffer), is copied device to device, comes back into pinned host memory and is read with
``acl.util.ptr_to_numpy(ptr, shape, npy_type)`` and ``acl.util.ptr_to_bytes``.
"""
import acl
import numpy as np

DEVICE_ID = 0
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_MEMCPY_DEVICE_TO_DEVICE = 3
NPY_FLOAT32 = 11


def check_ret(message, ret):
    if ret != 0:
        raise Exception(f"{message} failed ret={ret}")


def main():
    check_ret("acl.init", acl.init())
    print("soc", acl.get_soc_name())
    major, minor, patch, ret = acl.get_version()
    check_ret("acl.get_version", ret)
    check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
    context, ret = acl.rt.create_context(DEVICE_ID)
    check_ret("acl.rt.create_context", ret)
    stream, ret = acl.rt.create_stream()
    check_ret("acl.rt.create_stream", ret)

    data = np.linspace(0.0, 1.5, 16, dtype=np.float32)
    size = data.nbytes
    data_bytes = data.tobytes()
    host_src = acl.util.bytes_to_ptr(data_bytes)

    dev_a, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
    check_ret("acl.rt.malloc", ret)
    dev_b, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
    check_ret("acl.rt.malloc", ret)
    host_dst, ret = acl.rt.malloc_host(size)
    check_ret("acl.rt.malloc_host", ret)

    check_ret("acl.rt.memcpy", acl.rt.memcpy(dev_a, size, host_src, size,
                                             ACL_MEMCPY_HOST_TO_DEVICE))
    check_ret("acl.rt.memset_async", acl.rt.memset_async(dev_b, size, 0, size, stream))
    check_ret("acl.rt.memcpy_async", acl.rt.memcpy_async(dev_b, size, dev_a, size,
                                                         ACL_MEMCPY_DEVICE_TO_DEVICE, stream))
    check_ret("acl.rt.memcpy_async", acl.rt.memcpy_async(host_dst, size, dev_b, size,
                                                         ACL_MEMCPY_DEVICE_TO_HOST, stream))
    check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(stream))

    back = acl.util.ptr_to_numpy(host_dst, data.shape, NPY_FLOAT32)
    raw = acl.util.ptr_to_bytes(host_dst, size)
    print("round trip equal", bool(np.array_equal(back, data)), raw == data_bytes)
    print("values", back[:4].tolist(), "...", back[-1].item())

    check_ret("acl.rt.free", acl.rt.free(dev_a))
    check_ret("acl.rt.free", acl.rt.free(dev_b))
    check_ret("acl.rt.free_host", acl.rt.free_host(host_dst))
    check_ret("acl.rt.destroy_stream", acl.rt.destroy_stream(stream))
    check_ret("acl.rt.destroy_context", acl.rt.destroy_context(context))
    check_ret("acl.rt.reset_device", acl.rt.reset_device(DEVICE_ID))
    check_ret("acl.finalize", acl.finalize())
    print(f"done (acl {major}.{minor}.{patch})")


if __name__ == "__main__":
    main()
