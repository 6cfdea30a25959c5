"""Callbacks on a report thread, in pyACL's own style (runs unmodified on hardware and under
``npusim run examples/pyacl/callbacks_report_thread.py``).

A thread started with ``acl.util.start_thread`` loops on ``acl.rt.process_report``; the stream
is bound to it with ``acl.rt.subscribe_report``; ``acl.rt.launch_callback`` queues callbacks
that receive their user-data list when the stream reaches them. A blocking callback holds the
stream: the copy queued after it reads the buffer the callback filled.
"""
import acl
import numpy as np

DEVICE_ID = 0
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_CALLBACK_NO_BLOCK = 0
ACL_CALLBACK_BLOCK = 1
NPY_INT32 = 5

running = True
seen = []


def check_ret(message, ret):
    if ret != 0:
        raise Exception(f"{message} failed ret={ret}")


def report_loop(args_list):
    context = args_list[0]
    ret = acl.rt.set_context(context)
    check_ret("acl.rt.set_context", ret)
    while running:
        acl.rt.process_report(100)      # 507012 when no callback was reported in 100 ms


def callback(user_data_list):
    step, host_ptr, n = user_data_list
    if host_ptr:
        # the blocking callback fills the pinned buffer before the stream copies it on
        arr = acl.util.ptr_to_numpy(host_ptr, (n,), NPY_INT32)
        arr[:] = np.arange(n, dtype=np.int32) * 10
    seen.append(step)


def main():
    global running
    check_ret("acl.init", acl.init())
    check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
    context, ret = acl.rt.create_context(DEVICE_ID)
    check_ret("acl.rt.create_context", ret)
    stream, ret = acl.rt.create_stream()
    check_ret("acl.rt.create_stream", ret)
    run_mode, ret = acl.rt.get_run_mode()
    check_ret("acl.rt.get_run_mode", ret)

    n = 8
    size = n * 4
    host_in, ret = acl.rt.malloc_host(size)
    check_ret("acl.rt.malloc_host", ret)
    host_out, ret = acl.rt.malloc_host(size)
    check_ret("acl.rt.malloc_host", ret)
    dev, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
    check_ret("acl.rt.malloc", ret)

    tid, ret = acl.util.start_thread(report_loop, [context])
    check_ret("acl.util.start_thread", ret)
    check_ret("acl.rt.subscribe_report", acl.rt.subscribe_report(tid, stream))

    check_ret("acl.rt.launch_callback",
              acl.rt.launch_callback(callback, [1, 0, 0], ACL_CALLBACK_NO_BLOCK, stream))
    check_ret("acl.rt.launch_callback",
              acl.rt.launch_callback(callback, [2, host_in, n], ACL_CALLBACK_BLOCK, stream))
    check_ret("acl.rt.memcpy_async", acl.rt.memcpy_async(dev, size, host_in, size,
                                                         ACL_MEMCPY_HOST_TO_DEVICE, stream))
    check_ret("acl.rt.memcpy_async", acl.rt.memcpy_async(host_out, size, dev, size,
                                                         ACL_MEMCPY_DEVICE_TO_HOST, stream))
    check_ret("acl.rt.launch_callback",
              acl.rt.launch_callback(callback, [3, 0, 0], ACL_CALLBACK_BLOCK, stream))
    check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(stream))

    out = acl.util.ptr_to_numpy(host_out, (n,), NPY_INT32)
    print("run mode", run_mode)
    print("callbacks run", seen)
    print("copied after the blocking callback", out.tolist())

    check_ret("acl.rt.unsubscribe_report", acl.rt.unsubscribe_report(tid, stream))
    running = False
    check_ret("acl.util.stop_thread", acl.util.stop_thread(tid))
    acl.rt.free(dev)
    acl.rt.free_host(host_in)
    acl.rt.free_host(host_out)
    acl.rt.destroy_stream(stream)
    acl.rt.destroy_context(context)
    acl.rt.reset_device(DEVICE_ID)
    acl.finalize()


if __name__ == "__main__":
    main()
