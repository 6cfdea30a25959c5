"""One communicator over every NPU of a server from HCCL's root info, one thread per device
(after hcomm's ``examples/01_communicators``: root-info initialisation; run it with ``python``
from the repository root, or ``npusim run``).

The main thread makes the root info on device 0 (``HcclGetRootInfo``); in a multi-process job
it would be broadcast to the other processes, here the threads share it. Each thread sets its
device, fills an ``HcclCommConfig`` (``HcclCommConfigInit``, then a buffer size and a name) and
joins with ``HcclCommInitRootInfoConfig`` — which returns once every rank joined — reads its
rank and the rank count back (``HcclGetRankId`` / ``HcclGetRankSize``) and runs one AllReduce
to show the communicator works: rank r sends ``(r + 1) * (i + 1)`` at index i, so every rank
receives ``n(n+1)/2 * (i + 1)``. Expected output on 8 devices::

    Found 8 NPU device(s) available
    rankId: 0, rankSize: 8, output: [ 36 72 108 144 180 216 252 288 ]
    ...
    rankId: 7, rankSize: 8, output: [ 36 72 108 144 180 216 252 288 ]
"""
import threading

import numpy as np

from npusim import acl, hccl

ACL_MEM_MALLOC_HUGE_ONLY = 2
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
NPY_FLOAT32 = 11
BUFFER_MB = 64                  # HcclCommConfig.hcclBufferSize: the CCL buffer, in MB


def check(what, ret):
    if ret != 0:
        raise RuntimeError(f"{what} returned {ret}: {acl.get_recent_err_msg()}")


def cout(values) -> str:
    """The floats as C++'s ``std::cout`` prints them (6 significant digits: 6.0 -> ``6``)."""
    return " ".join(f"{v:g}" for v in values)


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


def rank_thread(device, dev_count, root_info, lines):
    check("acl.rt.set_device", acl.rt.set_device(device))

    config, ret = hccl.comm_config_init()
    check("hccl.comm_config_init", ret)
    config["hcclBufferSize"] = BUFFER_MB
    config["hcclCommName"] = "world"
    comm, ret = hccl.comm_init_root_info_config(dev_count, root_info, device, config)
    check("hccl.comm_init_root_info_config", ret)
    rank, ret = hccl.get_rank_id(comm)
    check("hccl.get_rank_id", ret)
    rank_size, ret = hccl.get_rank_size(comm)
    check("hccl.get_rank_size", ret)

    count = rank_size
    size = count * 4
    send_buf, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_ONLY)
    check("acl.rt.malloc", ret)
    recv_buf, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_ONLY)
    check("acl.rt.malloc", ret)
    to_device(send_buf, (rank + 1) * np.arange(1, count + 1), size)
    stream, ret = acl.rt.create_stream()
    check("acl.rt.create_stream", ret)

    check("hccl.all_reduce", hccl.all_reduce(send_buf, recv_buf, count, hccl.HCCL_DATA_TYPE_FP32,
                                             hccl.HCCL_REDUCE_SUM, comm, stream))
    check("acl.rt.synchronize_stream", acl.rt.synchronize_stream(stream))
    lines[rank] = f"rankId: {rank}, rankSize: {rank_size}, output: [ " \
                  f"{cout(read_back(recv_buf, size))} ]"

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

    # each thread leaves its line here; the main thread prints them in rank order at the end
    # (hcomm's samples sleep `device` seconds instead)
    lines = [None] * dev_count
    errors = []

    def run(device):
        try:
            rank_thread(device, dev_count, root_info, lines)
        except Exception as e:
            errors.append(e)

    threads = [threading.Thread(target=run, args=(d,)) for d in range(dev_count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    for line in lines:
        print(line)
    check("acl.finalize", acl.finalize())


if __name__ == "__main__":
    main()
