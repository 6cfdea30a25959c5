"""Every NPU of the server driven from one thread: ``HcclCommInitAll`` and a group of
collectives (after hcomm's ``examples/01_communicators``: one process, all devices; run it with
``python`` from the repository root, or ``npusim run``).

``HcclCommInitAll(ndev, devices)`` makes the communicator of all ranks at once, one handle per
device (rank r on ``devices[r]``). The thread then switches devices with ``aclrtSetDevice``
before each rank's calls. The collectives of all ranks are issued between ``HcclGroupStart``
and ``HcclGroupEnd``: issued one rank after the other from a single thread, none of them waits
for the peers at issue time (each waits on its own stream). Rank r sends ``(r + 1) * (i + 1)``
at index i; after the AllReduce every rank holds ``n(n+1)/2 * (i + 1)``; a Broadcast from the
last rank then gives every rank the last rank's input. Expected output on 8 devices::

    Found 8 NPU device(s) available
    rankId: 0, device: 0, allreduce: [ 36 72 108 144 180 216 252 288 ]
    ...
    rankId: 7, device: 7, allreduce: [ 36 72 108 144 180 216 252 288 ]
    rankId: 0, broadcast: [ 8 16 24 32 40 48 56 64 ]
    ...
"""
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


def main():
    check("acl.init", acl.init())
    dev_count, ret = acl.rt.get_device_count()
    check("acl.rt.get_device_count", ret)
    print(f"Found {dev_count} NPU device(s) available")

    devices = list(range(dev_count))
    comms, ret = hccl.comm_init_all(dev_count, devices)
    check("hccl.comm_init_all", ret)

    count = dev_count
    size = count * 4
    streams, send_bufs, recv_bufs, bcast_bufs = [], [], [], []
    for rank, device in enumerate(devices):
        check("acl.rt.set_device", acl.rt.set_device(device))
        stream, ret = acl.rt.create_stream()
        check("acl.rt.create_stream", ret)
        bufs = []
        for _ in range(3):
            buf, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_ONLY)
            check("acl.rt.malloc", ret)
            bufs.append(buf)
        to_device(bufs[0], (rank + 1) * np.arange(1, count + 1), size)
        to_device(bufs[2], (rank + 1) * np.arange(1, count + 1), size)
        streams.append(stream)
        send_bufs.append(bufs[0])
        recv_bufs.append(bufs[1])
        bcast_bufs.append(bufs[2])

    # one group: every rank's AllReduce, then every rank's Broadcast (each rank's own stream
    # keeps its two collectives in order)
    root = dev_count - 1
    check("hccl.group_start", hccl.group_start())
    for rank, device in enumerate(devices):
        check("acl.rt.set_device", acl.rt.set_device(device))
        check("hccl.all_reduce", hccl.all_reduce(send_bufs[rank], recv_bufs[rank], count,
                                                 hccl.HCCL_DATA_TYPE_FP32, hccl.HCCL_REDUCE_SUM,
                                                 comms[rank], streams[rank]))
    for rank, device in enumerate(devices):
        check("acl.rt.set_device", acl.rt.set_device(device))
        check("hccl.broadcast", hccl.broadcast(bcast_bufs[rank], count, hccl.HCCL_DATA_TYPE_FP32,
                                               root, comms[rank], streams[rank]))
    check("hccl.group_end", hccl.group_end())

    allreduce, broadcast = [], []
    for rank, device in enumerate(devices):
        check("acl.rt.set_device", acl.rt.set_device(device))
        check("acl.rt.synchronize_stream", acl.rt.synchronize_stream(streams[rank]))
        allreduce.append(f"rankId: {rank}, device: {device}, allreduce: [ "
                         f"{cout(read_back(recv_bufs[rank], size))} ]")
        broadcast.append(f"rankId: {rank}, broadcast: [ "
                         f"{cout(read_back(bcast_bufs[rank], size))} ]")
    for line in allreduce + broadcast:
        print(line)

    for rank, device in enumerate(devices):
        check("acl.rt.set_device", acl.rt.set_device(device))
        check("hccl.comm_destroy", hccl.comm_destroy(comms[rank]))
        for buf in (send_bufs[rank], recv_bufs[rank], bcast_bufs[rank]):
            check("acl.rt.free", acl.rt.free(buf))
        check("acl.rt.destroy_stream", acl.rt.destroy_stream(streams[rank]))
    for device in devices:
        check("acl.rt.reset_device", acl.rt.reset_device(device))
    check("acl.finalize", acl.finalize())


if __name__ == "__main__":
    main()
