"""An AllReduce captured into an ACL graph on every rank and replayed (a Python port of
hcomm's ``examples/02_aclgraphs/allreduce_aclgraph_demo.cpp``; run it with ``python`` from the
repository root, or ``npusim run``).

The C demo runs one MPI process per NPU and broadcasts the root info with ``MPI_Bcast``; here
one thread per device shares the root info the main thread made. Each rank:

1. joins the communicator with ``HcclCommInitRootInfoConfig`` (deterministic reduction on) and
   fills its send buffer with its rank id — all synchronous copies happen *before* the capture
   (a synchronous ``aclrtMemcpy`` inside a GLOBAL capture fails with 107030);
2. captures ``HcclAllReduce`` on its stream between ``aclmdlRICaptureBegin(GLOBAL)`` and
   ``aclmdlRICaptureEnd``: the collective is recorded, not run, and HCCL's own side streams are
   joined into the graph;
3. replays the graph ``REPLAY_TIMES`` times (``aclmdlRIExecuteAsync`` + synchronize), zeroing
   the receive buffer before each replay and checking after it that every element is the sum
   of the rank ids, ``n(n-1)/2``: each replay moves the data again;
4. prints the result as the C demo does, then tears down in its order: the graph, the stream,
   the buffers, the communicator, the device.

Expected output on 8 devices::

    Found 8 NPU device(s) available
    [rank 0] AllReduce(sum) replayed 4 times, recvBuf = [ 28 28 28 28 28 28 28 28 ]
    ...
    [rank 7] AllReduce(sum) replayed 4 times, recvBuf = [ 28 28 28 28 28 28 28 28 ]
"""
import threading

import numpy as np

from npusim import acl, hccl

ACL_MEM_MALLOC_HUGE_ONLY = 2
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
NPY_FLOAT32 = 11
ACL_MODEL_RI_CAPTURE_MODE_GLOBAL = 0
REPLAY_TIMES = 4               # capture once, replay this many times


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


def rank_thread(dev_id, dev_count, root_info, lines, torn_down):
    check("acl.rt.set_device", acl.rt.set_device(dev_id))
    config, ret = hccl.comm_config_init()
    check("hccl.comm_config_init", ret)
    config["hcclDeterministic"] = 1             # reproducible sums, to compare the ranks
    comm, ret = hccl.comm_init_root_info_config(dev_count, root_info, dev_id, config)
    check("hccl.comm_init_root_info_config", ret)

    # 1. buffers and input, before the capture
    count = dev_count
    size = count * 4
    send_buf, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_ONLY)
    check("acl.rt.malloc", ret)
    recv_buf, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_ONLY)
    check("acl.rt.malloc", ret)
    to_device(send_buf, np.full(count, dev_id), size)
    stream, ret = acl.rt.create_stream()
    check("acl.rt.create_stream", ret)

    # 2. capture: the AllReduce is recorded into the graph, not run
    check("acl.mdl.ri_capture_begin",
          acl.mdl.ri_capture_begin(stream, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL))
    check("hccl.all_reduce", hccl.all_reduce(send_buf, recv_buf, count, hccl.HCCL_DATA_TYPE_FP32,
                                             hccl.HCCL_REDUCE_SUM, comm, stream))
    model_ri, ret = acl.mdl.ri_capture_end(stream)
    check("acl.mdl.ri_capture_end", ret)

    # 3. replay, checking every replay's result
    expected = dev_count * (dev_count - 1) // 2
    for i in range(REPLAY_TIMES):
        check("acl.rt.memset", acl.rt.memset(recv_buf, size, 0, size))
        check("acl.mdl.ri_execute_async", acl.mdl.ri_execute_async(model_ri, stream))
        check("acl.rt.synchronize_stream", acl.rt.synchronize_stream(stream))
        got = read_back(recv_buf, size)
        if not (got == expected).all():
            raise RuntimeError(f"rank {dev_id}, replay {i}: {got} instead of {expected}")

    # 4. the result, then the teardown: graph, stream, buffers, communicator, device
    lines[dev_id] = f"[rank {dev_id}] AllReduce(sum) replayed {REPLAY_TIMES} times, recvBuf = [" \
                    + "".join(f" {v:.0f}" for v in read_back(recv_buf, size)) + " ]"
    check("acl.mdl.ri_destroy", acl.mdl.ri_destroy(model_ri))
    check("acl.rt.destroy_stream", acl.rt.destroy_stream(stream))
    check("acl.rt.free", acl.rt.free(send_buf))
    check("acl.rt.free", acl.rt.free(recv_buf))
    check("hccl.comm_destroy", hccl.comm_destroy(comm))
    # npusim workaround: reset a device only once every rank has torn its communicator down
    # (resetting one while a peer still runs drops that peer's pending notifies: a bug of
    # npusim's, not of the program)
    torn_down.wait()
    check("acl.rt.reset_device", acl.rt.reset_device(dev_id))


def main():
    check("acl.init", acl.init())
    dev_count, ret = acl.rt.get_device_count()
    check("acl.rt.get_device_count", ret)
    print(f"Found {dev_count} NPU device(s) available")

    check("acl.rt.set_device", acl.rt.set_device(0))      # the root rank makes the root info
    root_info, ret = hccl.get_root_info()
    check("hccl.get_root_info", ret)

    # each thread leaves its line here; the main thread prints them in rank order at the end
    lines = [None] * dev_count
    torn_down = threading.Barrier(dev_count, timeout=60)
    errors = []

    def run(dev_id):
        try:
            rank_thread(dev_id, dev_count, root_info, lines, torn_down)
        except Exception as e:
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
        print(line)
    check("acl.finalize", acl.finalize())


if __name__ == "__main__":
    main()
