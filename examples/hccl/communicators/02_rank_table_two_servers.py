"""A communicator of two servers from a rank table, one thread per device (after hcomm's
``examples/01_communicators``: rank-table initialisation; run it with ``python`` from the
repository root, or ``npusim run``).

The program writes a rank table — HCCL's JSON description of the cluster: ``server_list``, each
server's ``device`` list with ``device_id``, ``device_ip`` and the global ``rank_id`` — for two
servers of four NPUs, and every thread joins with ``HcclCommInitClusterInfo(path, rank)``. On
real hardware each server numbers its own devices 0..7 and runs its own processes; one npusim
process simulates both servers, so the second server's devices are 4..7 of this process.

With ranks on two servers HCCL runs its cross-server algorithms: the AllReduce is hierarchical
(a ReduceScatter inside each server over HCCS, an AllReduce between the servers over RDMA, an
AllGather inside each server), the AllGather recursive halving-doubling. Rank r sends
``(r + 1) * (i + 1)`` at index i to the AllReduce and ``10 r`` to the AllGather. Expected
output::

    Found 8 NPU device(s) available
    rankId: 0, server: 0, device: 0, allreduce: [ 36 72 108 144 180 216 252 288 ]
    ...
    rankId: 7, server: 1, device: 7, allreduce: [ 36 72 108 144 180 216 252 288 ]
    rankId: 0, allgather: [ 0 10 20 30 40 50 60 70 ]
    ...
"""
import json
import os
import tempfile
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



SERVERS = 2
DEVICES_PER_SERVER = 4


def write_rank_table(path):
    """HCCL's rank table (version 1.0) for SERVERS servers of DEVICES_PER_SERVER devices."""
    servers = []
    for s in range(SERVERS):
        devices = []
        for local in range(DEVICES_PER_SERVER):
            rank = s * DEVICES_PER_SERVER + local
            devices.append({"device_id": str(rank), "device_ip": f"192.168.{s}.{local + 1}",
                            "rank_id": str(rank)})
        servers.append({"server_id": f"10.0.0.{s + 1}", "device": devices,
                        "host_nic_ip": "reserve"})
    table = {"version": "1.0", "status": "completed", "server_count": str(SERVERS),
             "server_list": servers}
    with open(path, "w") as f:
        json.dump(table, f, indent=2)
    return table


def rank_thread(rank, device, server, table_path, lines):
    check("acl.rt.set_device", acl.rt.set_device(device))
    comm, ret = hccl.comm_init_cluster_info(table_path, rank)
    check("hccl.comm_init_cluster_info", ret)
    rank_size, ret = hccl.get_rank_size(comm)
    check("hccl.get_rank_size", ret)
    stream, ret = acl.rt.create_stream()
    check("acl.rt.create_stream", ret)

    count = rank_size
    size = count * 4
    bufs = []
    for _ in range(4):
        buf, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_ONLY)
        check("acl.rt.malloc", ret)
        bufs.append(buf)
    ar_send, ar_recv, ag_send, ag_recv = bufs
    to_device(ar_send, (rank + 1) * np.arange(1, count + 1), size)
    to_device(ag_send, np.full(count, 10 * rank), size)

    check("hccl.all_reduce", hccl.all_reduce(ar_send, ar_recv, count, hccl.HCCL_DATA_TYPE_FP32,
                                             hccl.HCCL_REDUCE_SUM, comm, stream))
    check("hccl.all_gather", hccl.all_gather(ag_send, ag_recv, 1, hccl.HCCL_DATA_TYPE_FP32,
                                             comm, stream))
    check("acl.rt.synchronize_stream", acl.rt.synchronize_stream(stream))
    lines[rank] = (f"rankId: {rank}, server: {server}, device: {device}, allreduce: [ "
                   f"{cout(read_back(ar_recv, size))} ]",
                   f"rankId: {rank}, allgather: [ {cout(read_back(ag_recv, size))} ]")

    check("hccl.comm_destroy", hccl.comm_destroy(comm))
    for buf in bufs:
        check("acl.rt.free", acl.rt.free(buf))
    check("acl.rt.destroy_stream", acl.rt.destroy_stream(stream))


def main():
    check("acl.init", acl.init())
    dev_count, ret = acl.rt.get_device_count()
    check("acl.rt.get_device_count", ret)
    print(f"Found {dev_count} NPU device(s) available")

    with tempfile.TemporaryDirectory() as tmp:
        table_path = os.path.join(tmp, "rank_table.json")
        table = write_rank_table(table_path)
        ranks = [(int(d["rank_id"]), int(d["device_id"]), s)
                 for s, server in enumerate(table["server_list"]) for d in server["device"]]

        # each thread leaves its lines here; the main thread prints them in rank order at the
        # end (hcomm's samples sleep `device` seconds instead)
        lines = [None] * len(ranks)
        errors = []

        def run(*args):
            try:
                rank_thread(*args, table_path, lines)
            except Exception as e:
                errors.append(e)

        threads = [threading.Thread(target=run, args=r) for r in ranks]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    if errors:
        raise errors[0]
    for allreduce, _ in lines:
        print(allreduce)
    for _, allgather in lines:
        print(allgather)
    check("acl.finalize", acl.finalize())


if __name__ == "__main__":
    main()
