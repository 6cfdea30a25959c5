"""Callbacks served by a report thread that never sets a context, in pyACL's idiom (runs
unmodified on hardware and under ``npusim run examples/pyacl/callbacks_without_context.py``).

The thread started with ``acl.util.start_thread`` does nothing but loop on
``acl.rt.process_report``: serving callbacks needs no context of its own. The stream is bound to
it with ``acl.rt.subscribe_report``; each ``ACL_CALLBACK_BLOCK`` callback holds the stream until
the thread has run it, so ``acl.rt.synchronize_stream`` returns once all of them ran.
"""
import acl

DEVICE_ID = 0
ACL_SUCCESS = 0
ACL_CALLBACK_BLOCK = 1
REPORT_TIMEOUT_MS = 100

exit_flag = False
results = []


def check_ret(message, ret):
    if ret != ACL_SUCCESS:
        raise Exception("{} failed ret={}".format(message, ret))


def process_callback(args_list):
    timeout = args_list[0]
    while not exit_flag:
        acl.rt.process_report(timeout)


def callback_func(user_data):
    step, value = user_data
    results.append(value * value)
    print("callback {} ran with {}".format(step, value))


def main():
    global exit_flag
    ret = acl.init()
    check_ret("acl.init", ret)
    ret = acl.rt.set_device(DEVICE_ID)
    check_ret("acl.rt.set_device", ret)
    context, ret = acl.rt.create_context(DEVICE_ID)
    check_ret("acl.rt.create_context", ret)
    stream, ret = acl.rt.create_stream()
    check_ret("acl.rt.create_stream", ret)

    thread_id, ret = acl.util.start_thread(process_callback, [REPORT_TIMEOUT_MS])
    check_ret("acl.util.start_thread", ret)
    ret = acl.rt.subscribe_report(thread_id, stream)
    check_ret("acl.rt.subscribe_report", ret)

    for step in range(3):
        ret = acl.rt.launch_callback(callback_func, [step, step + 2], ACL_CALLBACK_BLOCK, stream)
        check_ret("acl.rt.launch_callback", ret)
    ret = acl.rt.synchronize_stream(stream)
    check_ret("acl.rt.synchronize_stream", ret)
    print("results after the synchronize:", results)

    ret = acl.rt.unsubscribe_report(thread_id, stream)
    check_ret("acl.rt.unsubscribe_report", ret)
    exit_flag = True
    ret = acl.util.stop_thread(thread_id)
    check_ret("acl.util.stop_thread", ret)

    ret = acl.rt.destroy_stream(stream)
    check_ret("acl.rt.destroy_stream", ret)
    ret = acl.rt.destroy_context(context)
    check_ret("acl.rt.destroy_context", ret)
    ret = acl.rt.reset_device(DEVICE_ID)
    check_ret("acl.rt.reset_device", ret)
    ret = acl.finalize()
    check_ret("acl.finalize", ret)


if __name__ == "__main__":
    main()
