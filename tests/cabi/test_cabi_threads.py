"""The C path with C threads, callbacks, a kernel launch by handle and capture / replay
(docs/cabi.md "Threads", "Callbacks")."""
from __future__ import annotations

import npusim.samples


def test_threads_callbacks_kernel_capture(run_c):
    r = run_c("threads", str(npusim.samples.binary_path()))
    err = r.pop("__stderr__")
    # per C thread: its own current context and its own recent error
    for k in ("thread0_context", "thread1_context", "thread0_no_error", "thread1_own_error",
              "main_no_error"):
        assert r[k] == 1, (k, err)
    # aclrtLaunchCallback: run by aclrtProcessReport on the subscribed C thread
    assert r["callback_sum"] == 11 and r["callback_thread"] == 1, err
    assert r["host_sum"] == 10, err
    # a bad kernel name and NULL args: the facade's codes
    assert r["get_function_bad"] == 107000 and r["launch_null_args"] == 100000
    # one launch + three replays of a two-launch capture: x[b] == 7
    assert r["kernel_result"] == 1, err
    assert r["ri_nonnull"] == 1
    codes = {k: v for k, v in r.items() if k not in (
        "get_function_bad", "launch_null_args", "kernel_result", "ri_nonnull", "callback_sum",
        "callback_thread", "host_sum") and not k.startswith(("thread", "main_")) and v != 0}
    assert not codes, (codes, err)
