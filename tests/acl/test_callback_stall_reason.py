"""The deadlock diagnosis of a host wait stalled on a callback no report thread will run
(docs/fidelity.md row 360): the 507046 reason names the callbacks (BLOCK / NO_BLOCK), the stream,
the subscribed thread and why it does not serve them, and the fix — instead of "waits on a
memory value"."""
from __future__ import annotations

import threading

import numpy as np

from npusim import acl

SYNC_TIMEOUT = acl.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
FIX = ("keep the report thread calling acl.rt.process_report until", "or unsubscribe first")


def _exited_thread() -> int:
    tid, ret = acl.util.start_thread(lambda args: None, [])
    assert ret == 0 and acl.util.stop_thread(tid) == 0
    return tid


def on_hold(d) -> None:
    """A callback the report thread never runs."""


def _stall_reason(stream) -> str:
    """The 507046 reason of a synchronize of ``stream``, which must state the fix."""
    assert acl.rt.synchronize_stream(stream) == SYNC_TIMEOUT
    msg = acl.get_recent_err_msg()
    assert all(f in msg for f in FIX), msg
    return msg


def _blocked_on_callbacks(tid, stream, *block_types) -> str:
    """Subscribe ``tid`` to ``stream``, launch ``on_hold`` callbacks of these block types (user
    data: their index), and answer the reason of the synchronize that stalls on them."""
    assert acl.rt.subscribe_report(tid, stream) == 0
    for i, block in enumerate(block_types):
        assert acl.rt.launch_callback(on_hold, i, block, stream) == 0
    return _stall_reason(stream)


def test_an_exited_report_thread_is_named_with_the_fix(dev0, stream):
    tid = _exited_thread()
    msg = _blocked_on_callbacks(tid, stream, acl.ACL_CALLBACK_BLOCK)
    assert "on the callback on_hold (ACL_CALLBACK_BLOCK) at task position 0" in msg, msg
    assert f"report thread {tid} has exited or is not a live thread" in msg, msg
    assert "on a memory value" not in msg.split("wait-for chain")[0], msg
    assert "(device 0) is synchronized" in msg, msg
    assert acl.rt.unsubscribe_report(tid, stream) == 0


def test_a_thread_id_no_thread_has_is_named(dev0, stream):
    alive = {t.ident for t in threading.enumerate()}
    tid = next(i for i in range(12345, 10 ** 6) if i not in alive)
    msg = _blocked_on_callbacks(tid, stream, acl.ACL_CALLBACK_BLOCK)
    assert f"report thread {tid} has exited or is not a live thread" in msg, msg
    assert acl.rt.unsubscribe_report(tid, stream) == 0


def test_non_blocking_callbacks_before_the_blocking_one_are_listed(dev0, stream):
    tid = _exited_thread()
    msg = _blocked_on_callbacks(tid, stream, acl.ACL_CALLBACK_NO_BLOCK, acl.ACL_CALLBACK_BLOCK)
    assert ("2 callbacks not yet run: on_hold (ACL_CALLBACK_NO_BLOCK) at task position 0, "
            "on_hold (ACL_CALLBACK_BLOCK) at task position 1") in msg, msg
    assert acl.rt.unsubscribe_report(tid, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0          # the unsubscribe released it


def test_a_graph_s_blocking_callback_names_the_model(dev0, stream):
    tid = _exited_thread()
    assert acl.rt.subscribe_report(tid, stream) == 0
    assert acl.mdl.ri_capture_begin(stream, acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED) == 0
    assert acl.rt.launch_callback(on_hold, None, acl.ACL_CALLBACK_BLOCK, stream) == 0
    model, ret = acl.mdl.ri_capture_end(stream)
    assert ret == 0
    assert acl.mdl.ri_execute_async(model, stream) == 0
    msg = _stall_reason(stream)
    assert "the callback on_hold (ACL_CALLBACK_BLOCK) captured in" in msg, msg
    assert f"report thread {tid} has exited or is not a live thread" in msg, msg
    assert acl.rt.unsubscribe_report(tid, stream) == 0    # (the replay stays parked: the
    # model is still running, and the fixture's reset frees it)


def test_a_live_thread_that_stops_serving_is_named_alive(dev0, stream, monkeypatch):
    from npusim.runtime.runtime import RT
    monkeypatch.setattr(RT, "stall_wait_s", 0.05)
    release = threading.Event()
    tid, _ = acl.util.start_thread(lambda args: release.wait(), [])
    try:
        msg = _blocked_on_callbacks(tid, stream, acl.ACL_CALLBACK_BLOCK)
        assert f"report thread {tid} is alive but made no acl.rt.process_report call" in msg, msg
        assert acl.rt.unsubscribe_report(tid, stream) == 0
    finally:
        release.set()
        assert acl.util.stop_thread(tid) == 0


def test_a_plain_value_wait_still_waits_on_a_memory_value(dev0, stream):
    word, ret = acl.rt.malloc(8, 0)
    assert ret == 0
    zero = np.zeros(1, np.uint64)
    assert acl.rt.memcpy(word, 8, acl.util.numpy_to_ptr(zero), 8,
                         acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
    assert acl.rt.value_wait(word, 1, 0, stream) == 0
    assert acl.rt.synchronize_stream(stream) == SYNC_TIMEOUT
    msg = acl.get_recent_err_msg()
    assert "on a memory value" in msg and "report thread" not in msg, msg
    assert acl.rt.free(word) == 0
