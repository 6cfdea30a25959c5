"""AllGather of one element per rank, one thread per device (a Python port of hccl's
``examples/02_collectives/03_allgather``; run it with ``python`` from the repository root, or
``npusim run``).

Each rank contributes its device id; ``HcclAllGather`` concatenates the contributions in rank
order on every rank. Expected output on 8 devices::

    Found 8 NPU device(s) available
    rankId: 0, output: [ 0 1 2 3 4 5 6 7 ]
    ...
    rankId: 7, output: [ 0 1 2 3 4 5 6 7 ]
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
    send_count, recv_count = 1, dev_count
    send_size, recv_size = send_count * 4, recv_count * 4
    check("acl.rt.set_device", acl.rt.set_device(device))
    send_buf, recv_buf = malloc(send_size), malloc(recv_size)
    to_device(send_buf, np.full(send_count, device), send_size)

    comm, ret = hccl.comm_init_root_info(dev_count, root_info, device)
    check("hccl.comm_init_root_info", ret)
    stream, ret = acl.rt.create_stream()
    check("acl.rt.create_stream", ret)

    check("hccl.all_gather", hccl.all_gather(send_buf, recv_buf, send_count,
                                             hccl.HCCL_DATA_TYPE_FP32, comm, stream))
    check("acl.rt.synchronize_stream", acl.rt.synchronize_stream(stream))

    lines[device] = f"rankId: {device}, output: [ {cout(read_back(recv_buf, recv_size))} ]"

    check("hccl.comm_destroy", hccl.comm_destroy(comm))
    check("acl.rt.free", acl.rt.free(send_buf))
    check("acl.rt.free", acl.rt.free(recv_buf))
    check("acl.rt.destroy_stream", acl.rt.destroy_stream(stream))


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
