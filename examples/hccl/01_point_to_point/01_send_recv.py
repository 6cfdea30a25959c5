"""Point-to-point Send / Recv in pairs, one thread per device (a Python port of hccl's
``examples/01_point_to_point/01_send_recv``; run it with ``python`` from the repository root,
or ``npusim run``).

Even ranks fill a buffer with their device id and ``HcclSend`` it to the next rank; odd ranks
``HcclRecv`` it from the previous one and print it (Send and Recv must be paired). Expected
output on 8 devices::

    Found 8 NPU device(s) available
    rankId: 1, output: [ 0 0 0 0 0 0 0 0 ]
    rankId: 3, output: [ 2 2 2 2 2 2 2 2 ]
    rankId: 5, output: [ 4 4 4 4 4 4 4 4 ]
    rankId: 7, output: [ 6 6 6 6 6 6 6 6 ]
"""
import threading

import numpy as np

from npusim import acl, hccl

ACL_MEM_MALLOC_HUGE_ONLY = 2
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
NPY_FLOAT32 = 11


def check(what, ret):
    if ret != 0:
        raise RuntimeError(f"{what} returned {ret}: {acl.get_recent_err_msg()}")


def cout(values) -> str:
    """The floats as C++'s ``std::cout`` prints them (6 significant digits: 6.0 -> ``6``)."""
    return " ".join(f"{v:g}" for v in values)


class ThreadContext:
    """What each rank's thread is given (the C sample's struct of the same name)."""
    __slots__ = ("root_info", "device", "dev_count", "lines", "torn_down")

    def __init__(self, root_info, device, dev_count, lines, torn_down):
        self.root_info, self.device, self.dev_count = root_info, device, dev_count
        self.lines = lines                  # each rank's printed line, by rank
        self.torn_down = torn_down          # a threading.Barrier of all the ranks


def to_device(dev_buf, values, size):
    """Stage ``values`` (float32) in pinned host memory and copy them to ``dev_buf``."""
    host_buf, ret = acl.rt.malloc_host(size)
    check("acl.rt.malloc_host", ret)
    acl.util.ptr_to_numpy(host_buf, (size // 4,), NPY_FLOAT32)[:] = values
    check("acl.rt.memcpy", acl.rt.memcpy(dev_buf, size, host_buf, size, ACL_MEMCPY_HOST_TO_DEVICE))
    check("acl.rt.free_host", acl.rt.free_host(host_buf))


def read_back(dev_buf, size):
    """The float32 values of ``dev_buf``, copied to the host."""
    host_buf, ret = acl.rt.malloc_host(size)
    check("acl.rt.malloc_host", ret)
    check("acl.rt.memcpy", acl.rt.memcpy(host_buf, size, dev_buf, size, ACL_MEMCPY_DEVICE_TO_HOST))
    values = acl.util.ptr_to_numpy(host_buf, (size // 4,), NPY_FLOAT32).copy()
    check("acl.rt.free_host", acl.rt.free_host(host_buf))
    return values


def malloc(size):
    buf, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_ONLY)
    check("acl.rt.malloc", ret)
    return buf


def rank_main(ctx):
    device, dev_count, root_info, lines = ctx.device, ctx.dev_count, ctx.root_info, ctx.lines
    count = dev_count
    size = count * 4
    check("acl.rt.set_device", acl.rt.set_device(device))
    comm, ret = hccl.comm_init_root_info(dev_count, root_info, device)
    check("hccl.comm_init_root_info", ret)
    stream, ret = acl.rt.create_stream()
    check("acl.rt.create_stream", ret)

    if device % 2 == 0:                         # 0, 2, 4, 6 send their id to the next rank
        buf = malloc(size)
        to_device(buf, np.full(count, device), size)
        check("hccl.send", hccl.send(buf, count, hccl.HCCL_DATA_TYPE_FP32, device + 1, comm,
                                     stream))
    else:                                       # 1, 3, 5, 7 receive from the previous one
        buf = malloc(size)
        check("hccl.recv", hccl.recv(buf, count, hccl.HCCL_DATA_TYPE_FP32, device - 1, comm,
                                     stream))
    check("acl.rt.synchronize_stream", acl.rt.synchronize_stream(stream))

    if device % 2 == 1:
        lines[device] = f"rankId: {device}, output: [ {cout(read_back(buf, size))} ]"

    check("hccl.comm_destroy", hccl.comm_destroy(comm))
    check("acl.rt.free", acl.rt.free(buf))
    check("acl.rt.destroy_stream", acl.rt.destroy_stream(stream))
    # npusim workaround: reset a device only once every rank has torn its communicator down
    # (resetting one while a peer still runs drops that peer's pending notifies: a bug of
    # npusim's, not of the program; the C sample resets at once)
    ctx.torn_down.wait()
    check("acl.rt.reset_device", acl.rt.reset_device(device))


def main():
    check("acl.init", acl.init())
    dev_count, ret = acl.rt.get_device_count()
    check("acl.rt.get_device_count", ret)
    print(f"Found {dev_count} NPU device(s) available")

    check("acl.rt.set_device", acl.rt.set_device(0))      # the root rank makes the root info
    root_info, ret = hccl.get_root_info()
    check("hccl.get_root_info", ret)

    # The C sample sleeps `device` seconds before printing to order its output; here each
    # thread leaves its line in `lines` and the main thread prints them in rank order.
    lines = [None] * dev_count
    torn_down = threading.Barrier(dev_count, timeout=60)
    errors = []

    def run(device):
        try:
            rank_main(ThreadContext(root_info, device, dev_count, lines, torn_down))
        except Exception as e:                  # a thread's failure ends the program below
            torn_down.abort()
            errors.append(e)

    threads = [threading.Thread(target=run, args=(d,)) for d in range(dev_count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    for line in lines:
        if line is not None:                    # ranks that print nothing leave None
            print(line)
    check("acl.finalize", acl.finalize())


if __name__ == "__main__":
    main()
