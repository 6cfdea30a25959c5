"""Two streams and two events in pyACL's own style (runs unmodified on hardware and under
``npusim run examples/pyacl/events_two_streams.py``).

Stream 1 fills a buffer and records ``start`` and ``end`` around a copy; stream 2 waits on
``end`` before it copies the result back. The program reads the elapsed time, the recorded and
wait statuses, and switches contexts with ``acl.rt.set_context`` / ``acl.rt.get_context``.
"""
import acl
import numpy as np

DEVICE_ID = 0
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_MEMCPY_DEVICE_TO_DEVICE = 3
ACL_EVENT_RECORDED_STATUS_COMPLETE = 1
ACL_EVENT_WAIT_STATUS_COMPLETE = 0
NPY_UINT8 = 2


def check_ret(message, ret):
    if ret != 0:
        raise Exception(f"{message} failed ret={ret}")


def main():
    check_ret("acl.init", acl.init())
    check_ret("acl.rt.set_device", acl.rt.set_device(DEVICE_ID))
    context, ret = acl.rt.create_context(DEVICE_ID)
    check_ret("acl.rt.create_context", ret)
    check_ret("acl.rt.set_context", acl.rt.set_context(context))
    current, ret = acl.rt.get_context()
    check_ret("acl.rt.get_context", ret)
    print("context is current", current == context)

    stream1, ret = acl.rt.create_stream()
    check_ret("acl.rt.create_stream", ret)
    stream2, ret = acl.rt.create_stream()
    check_ret("acl.rt.create_stream", ret)
    start, ret = acl.rt.create_event()
    check_ret("acl.rt.create_event", ret)
    end, ret = acl.rt.create_event()
    check_ret("acl.rt.create_event", ret)

    size = 1 << 20
    src, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
    check_ret("acl.rt.malloc", ret)
    dst, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
    check_ret("acl.rt.malloc", ret)
    host, ret = acl.rt.malloc_host(size)
    check_ret("acl.rt.malloc_host", ret)

    check_ret("acl.rt.memset_async", acl.rt.memset_async(src, size, 7, size, stream1))
    check_ret("acl.rt.record_event", acl.rt.record_event(start, stream1))
    check_ret("acl.rt.memcpy_async", acl.rt.memcpy_async(dst, size, src, size,
                                                         ACL_MEMCPY_DEVICE_TO_DEVICE, stream1))
    check_ret("acl.rt.record_event", acl.rt.record_event(end, stream1))
    check_ret("acl.rt.stream_wait_event", acl.rt.stream_wait_event(stream2, end))
    check_ret("acl.rt.memcpy_async", acl.rt.memcpy_async(host, size, dst, size,
                                                         ACL_MEMCPY_DEVICE_TO_HOST, stream2))
    check_ret("acl.rt.synchronize_stream", acl.rt.synchronize_stream(stream2))

    status, ret = acl.rt.query_event_status(end)
    check_ret("acl.rt.query_event_status", ret)
    wait_status, ret = acl.rt.query_event_wait_status(end)
    check_ret("acl.rt.query_event_wait_status", ret)
    check_ret("acl.rt.synchronize_event", acl.rt.synchronize_event(end))
    ms, ret = acl.rt.event_elapsed_time(start, end)
    check_ret("acl.rt.event_elapsed_time", ret)
    out = acl.util.ptr_to_numpy(host, (size,), NPY_UINT8)
    print("recorded", status == ACL_EVENT_RECORDED_STATUS_COMPLETE,
          "waited", wait_status == ACL_EVENT_WAIT_STATUS_COMPLETE)
    print(f"copy of {size} bytes took {ms:.6f} ms")
    print("data on the host", int(out.min()), int(out.max()))

    for event in (start, end):
        check_ret("acl.rt.destroy_event", acl.rt.destroy_event(event))
    for stream in (stream1, stream2):
        check_ret("acl.rt.destroy_stream", acl.rt.destroy_stream(stream))
    for ptr in (src, dst):
        check_ret("acl.rt.free", acl.rt.free(ptr))
    check_ret("acl.rt.free_host", acl.rt.free_host(host))
    check_ret("acl.rt.destroy_context", acl.rt.destroy_context(context))
    check_ret("acl.rt.reset_device", acl.rt.reset_device(DEVICE_ID))
    check_ret("acl.finalize", acl.finalize())


if __name__ == "__main__":
    main()
