"""The launch memo (``npusim/acl/_launchmemo.py``): a repeated ``acl.rt.launch_kernel`` takes one
compiled call, and every change an entry depends on voids it first.

The effects of a whole program through the memo and through the general wrapper are compared in
``tests/device/test_compiled_launch.py``; here each way an entry can go stale is made to happen
between two launches, and the second launch must do what the general path does.
"""
from __future__ import annotations

import os
import threading

import numpy as np
import pytest

import npusim
from npusim import acl
from npusim.device import launchjit as LJ
from npusim.runtime.runtime import RT

from helpers.capture import model as model_of
from helpers.kernel import OK, counter_args, easy_counter, out


@pytest.fixture
def k(acl):
    """(EasyOPf handle, args block pointing at a zeroed 64-byte buffer, the buffer, a stream)."""
    easy, x, a = easy_counter()
    s = out(*acl.rt.create_stream())
    return easy, a, x, s


def _word0(x: int) -> int:
    host = np.zeros(16, np.uint32)
    out(acl.rt.memcpy(acl.util.numpy_to_ptr(host), 64, x, 64, acl.ACL_MEMCPY_DEVICE_TO_HOST))
    return int(host[0])


def _memoized(easy, a, s, n: int = 3) -> None:
    for _ in range(n):
        assert acl.rt.launch_kernel(easy, 1, a, 8, s) == OK
    assert (easy, s) in LJ.MEMO


def test_repeated_eager_launches_run_through_the_memo(k):
    easy, a, x, s = k
    _memoized(easy, a, s, 500)
    out(acl.rt.synchronize_stream(s))
    assert _word0(x) == 500


def test_capture_end_voids_the_entry_and_the_stream_launches_eagerly(k):
    easy, a, x, s = k
    out(acl.mdl.ri_capture_begin(s, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL))
    _memoized(easy, a, s)
    assert LJ.MEMO[(easy, s)][4] is not None              # the capture stream's entry
    mh = out(*acl.mdl.ri_capture_end(s))
    assert not LJ.MEMO
    assert acl.rt.launch_kernel(easy, 1, a, 8, s) == OK    # eager now
    out(acl.rt.synchronize_stream(s))
    assert _word0(x) == 1
    assert [cs.task_count for cs in model_of(mh).streams] == [3]
    out(acl.mdl.ri_execute_async(mh, s))
    out(acl.rt.synchronize_stream(s))
    assert _word0(x) == 4
    out(acl.mdl.ri_destroy(mh))


def test_a_record_between_captured_launches_keeps_the_entry_and_its_bookkeeping(k):
    easy, a, x, s = k
    e = out(*acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC))
    out(acl.mdl.ri_capture_begin(s, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL))
    _memoized(easy, a, s)
    out(acl.rt.record_event(e, s))
    assert (easy, s) in LJ.MEMO                           # a record changes no launch
    cs = RT.handles.get("stream", s)[0].capture.cstream
    assert cs.last_event is not None
    assert acl.rt.launch_kernel(easy, 1, a, 8, s) == OK    # a hit
    assert cs.last_event is None                          # the general path's bookkeeping
    out(acl.mdl.ri_destroy(out(*acl.mdl.ri_capture_end(s))))


def test_a_wait_that_joins_a_stream_to_a_capture_voids_its_eager_entry(k):
    easy, a, x, s = k
    s2 = out(*acl.rt.create_stream())
    e = out(*acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC))
    _memoized(easy, a, s2)                                 # s2: eager
    out(acl.mdl.ri_capture_begin(s, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL))
    _memoized(easy, a, s)
    out(acl.rt.record_event(e, s))
    out(acl.rt.stream_wait_event(s2, e))                   # s2 joins the capture
    assert not LJ.MEMO
    _memoized(easy, a, s2)                                 # now captured
    assert LJ.MEMO[(easy, s2)][4] is not None
    out(acl.rt.record_event(e, s2))
    out(acl.rt.stream_wait_event(s, e))
    mh = out(*acl.mdl.ri_capture_end(s))
    assert len(model_of(mh).streams) == 2
    out(acl.rt.synchronize_device())
    assert _word0(x) == 3                                  # s2's eager launches only
    out(acl.mdl.ri_execute_async(mh, s))
    out(acl.rt.synchronize_device())
    assert _word0(x) == 3 + 6


def test_a_destroyed_stream_is_refused_after_its_entry(k):
    easy, a, x, s = k
    _memoized(easy, a, s)
    out(acl.rt.destroy_stream(s))
    assert acl.rt.launch_kernel(easy, 1, a, 8, s) == acl.ACL_ERROR_RT_INVALID_HANDLE


def test_an_api_injection_reaches_a_memoized_launch(k):
    easy, a, x, s = k
    _memoized(easy, a, s)
    with npusim.inject(acl.ACL_ERROR_RT_PARAM_INVALID, api="aclrtLaunchKernel"):
        assert not LJ.MEMO
        assert acl.rt.launch_kernel(easy, 1, a, 8, s) == acl.ACL_ERROR_RT_PARAM_INVALID


def test_a_kernel_injection_reaches_a_memoized_launch(k):
    easy, a, x, s = k
    _memoized(easy, a, s)
    out(acl.rt.synchronize_stream(s))
    with npusim.inject(kernel="EasyOPf"):
        assert not LJ.MEMO
        assert acl.rt.launch_kernel(easy, 1, a, 8, s) == OK
        assert acl.rt.synchronize_stream(s) != OK          # the trap body faulted


def test_tracing_and_recording_void_the_memo_and_make_none(k):
    easy, a, x, s = k
    _memoized(easy, a, s)
    npusim.configure(trace=True)
    try:
        assert not LJ.MEMO
        n = len(RT.host_trace)
        for _ in range(3):
            assert acl.rt.launch_kernel(easy, 1, a, 8, s) == OK
        assert not LJ.MEMO
        assert [t[0] for t in RT.host_trace[n:]] == ["aclrt.launch_kernel"] * 3
    finally:
        npusim.configure(trace=False)
    _memoized(easy, a, s)
    npusim.configure(record_accesses=True)
    try:
        assert not LJ.MEMO
        assert acl.rt.launch_kernel(easy, 1, a, 8, s) == OK
        assert not LJ.MEMO
    finally:
        npusim.configure(record_accesses=False)


def test_a_cost_model_voids_the_memo(k):
    easy, a, x, s = k
    _memoized(easy, a, s)
    npusim.set_kernel_cost("EasyOPf", cost=lambda blocks, *args: 5000)
    try:
        assert not LJ.MEMO
        assert acl.rt.launch_kernel(easy, 1, a, 8, s) == OK
        assert not LJ.MEMO                                 # a cost model: the general path
    finally:
        npusim.reset_kernel_cost("EasyOPf")


def test_no_entry_is_made_inside_another_locked_call_or_with_two_threads(k):
    easy, a, x, s = k
    with RT.lock:                                          # lock depth 2: a callback's launch
        assert acl.rt.launch_kernel(easy, 1, a, 8, s) == OK
        assert acl.rt.launch_kernel(easy, 1, a, 8, s) == OK
    assert not LJ.MEMO
    _memoized(easy, a, s)
    t = threading.Thread(target=lambda: acl.rt.set_device(0))
    t.start()
    t.join()
    assert not LJ.MEMO                                     # the second thread's call voided it
    for _ in range(3):
        assert acl.rt.launch_kernel(easy, 1, a, 8, s) == OK
    assert not LJ.MEMO                                     # per-thread task ids: the general path
    out(acl.rt.synchronize_stream(s))
    assert _word0(x) == 8


def test_a_stale_entry_fails_its_generation_test(k):
    easy, a, x, s = k
    _memoized(easy, a, s)
    e = LJ.MEMO[(easy, s)]
    LJ.forget()
    assert not LJ.MEMO
    assert LJ.memo_eager(e[1], e[2], e[3], a, 8, 1) == LJ.SLOW
    LJ.set_compiled(False)
    try:
        assert LJ.memo_eager(e[1], e[2], e[3], a, 8, 1) == LJ.SLOW
    finally:
        LJ.set_compiled(True)


@pytest.mark.parametrize("bad", ["func float", "func bool", "func numpy", "stream numpy",
                                 "size float", "blocks 0", "blocks float", "ptr 0", "size 0",
                                 "func list"])
def test_values_of_other_types_get_the_general_paths_code(k, bad):
    easy, a, x, s = k
    args = {"func": easy, "num_blocks": 1, "args_ptr": a, "args_size": 8, "stream": s}
    name, how = bad.split()
    key = {"func": "func", "stream": "stream", "size": "args_size", "blocks": "num_blocks",
           "ptr": "args_ptr"}[name]
    v = args[key]
    args[key] = {"float": float(v), "bool": True, "numpy": np.uint64(v), "0": 0,
                 "list": [v]}[how]
    general = acl.rt.launch_kernel.__general__
    want = general(*args.values())
    _memoized(easy, a, s)
    assert acl.rt.launch_kernel(*args.values()) == want


def test_the_c_hit_is_built_where_a_compiler_is(k):
    """acl/_launchc.py: with a C compiler and Python's headers (CI has both) the memo's hit runs
    in C once the memo keeps an entry; tests/device/test_compiled_launch.py compares a whole
    program through it with the general path."""
    import shutil
    import sysconfig
    from npusim.acl import _launchc
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) is None or os.environ.get("NPUSIM_NO_CFRONT") or LJ.MEMO_CHECK:
        pytest.skip("no C compiler (or NPUSIM_NO_CFRONT, or check mode): the Python hit")
    easy, a, x, s = k
    _memoized(easy, a, s, 100)
    assert _launchc.HIT[0] is not None
    out(acl.rt.synchronize_stream(s))
    assert _word0(x) == 100


def test_the_python_hit_passes_the_memo_tests():
    """``NPUSIM_NO_CFRONT=1``: the memo's hit in Python (no C hit) through this file's tests and
    the whole-program comparison."""
    r = _pytest_with({"NPUSIM_NO_CFRONT": "1"}, ["tests/acl/test_launch_memo.py",
                                                  "tests/device/test_compiled_launch.py"],
                     "not python_hit and not check_mode")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert " passed" in r.stdout


def _pytest_with(env_vars: dict, files: list, select: str = ""):
    import pathlib
    import subprocess
    import sys
    root = pathlib.Path(__file__).resolve().parents[2]
    env = dict(os.environ, **env_vars)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p",
                           "no:cacheprovider", "-o", "addopts=", *files]
                          + (["-k", select] if select else []), cwd=root, env=env,
                          capture_output=True, text=True, timeout=600)


def test_memo_check_mode_finds_no_stale_entry_in_the_stateful_and_graph_tests():
    """``NPUSIM_MEMO_CHECK=1``: every hit of the facade's stateful test, the threads test and
    the capture-path tests also takes the general path, and the two must agree (the fixture of
    tests/conftest.py fails a test with a mismatch). The whole suite passes so too; this runs a
    share of it in CI."""
    files = ["tests/acl/test_stateful.py", "tests/acl/test_threads.py",
             "tests/device/test_compiled_launch.py", "tests/graph/test_run_ahead_graphs.py",
             "tests/graph/test_capture_cascade.py",
             "tests/graph/test_capture_cross_stream.py", "tests/graph/test_task_update.py"]
    r = _pytest_with({"NPUSIM_MEMO_CHECK": "1"}, files)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert " passed" in r.stdout


def test_a_thread_that_starts_while_another_hits_the_memo(k):
    """Real threads: the main thread captures 20,000 launches through the memo while a second
    thread starts, sets the device and launches eagerly on its own stream; every launch of
    both lands once (the graph's task count, both buffers' counts after a replay)."""
    easy, a, x, s = k
    n, m_other = 20_000, 2_000
    x2, a2 = counter_args()
    started, codes = threading.Event(), []

    def other():
        codes.append(acl.rt.set_device(0))
        s2, code = acl.rt.create_stream()
        codes.append(code)
        started.set()
        for _ in range(m_other):
            codes.append(acl.rt.launch_kernel(easy, 1, a2, 8, s2))
        codes.append(acl.rt.synchronize_stream(s2))
        codes.append(acl.rt.destroy_stream(s2))

    out(acl.mdl.ri_capture_begin(s, acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED))
    t = threading.Thread(target=other)
    bad = 0
    for i in range(n):
        if i == 1_000:
            t.start()
        bad |= acl.rt.launch_kernel(easy, 1, a, 8, s)
    t.join()
    assert bad == 0 and codes == [0] * len(codes) and started.is_set()
    mh = out(*acl.mdl.ri_capture_end(s))
    assert sum(cs.task_count for cs in model_of(mh).streams) >= n
    out(acl.mdl.ri_execute_async(mh, s))
    out(acl.rt.synchronize_stream(s))
    assert _word0(x) == n
    assert _word0(x2) == m_other
    out(acl.mdl.ri_destroy(mh))
