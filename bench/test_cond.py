"""Conditional control-flow benchmarks (pytest-benchmark): ``pytest bench/test_cond.py -s``
(the result lines go through ``bench_report``, ``bench/conftest.py``).

* WHILE whose body is ``CountDown`` running 1,000,000 iterations in one graph launch
  (iterations/s; target >= 8,000,000/s, the scale issue). Measured in the same run against (a) the pure-Python
  reference interpreter (``npusim.testing.reference``) running the same SQEs and (b) the same
  iterations issued as eager ``CountDown`` launches (one launch per iteration), both on fewer
  iterations and reported as rates.
* SWITCH over 1,000 branches (µs per evaluation): a WHILE loop whose body is
  ``CountDown(switch word, while word)`` + ``SWITCH(switch word)`` with 1,000 one-task branches
  (each memsets its own byte), so one launch evaluates the SWITCH 1,000 times and takes every
  branch exactly once (999 ... 0). Same run: the same loop without the SWITCH (the loop's own
  cost, subtracted to give the SWITCH's; timed before and after the branch SQs exist), and the
  1,000-branch graph on the reference interpreter. The loop without the SWITCH counts with
  ``count_mod`` (a ``@npusim.kernel`` of this file: a counter zeroed before each launch), not
  ``CountDown``: a switch word no cond task uses is never assigned its default, so a CountDown
  loop without the SWITCH ended after one iteration (an earlier version of this bench timed
  that, 0.03 us per "iteration"). ``count_mod`` is also the body of the SWITCH scaling table
  (``test_engine_scaling.py``), where every evaluation takes a branch.

Numbers are host wall-clock on the machine running the bench (the engine's simulated time is
reported too, in ``extra_info``); read them as ratios and orders of magnitude. Nothing here
asserts the target: the measured rate is printed and stored as it is.
"""
from __future__ import annotations

import time

import numpy as np
import pytest

import npusim
from npusim import acl
from npusim.device import engine as E
from npusim.device import memview as V
from npusim.testing import reference as R
from npusim.runtime import api_device

WHILE_ITERS = 1_000_000
WHILE_TARGET = 8_000_000            # iterations/s
REF_WHILE_ITERS = 20_000
EAGER_ITERS = 20_000
BRANCHES = 1000

IF, WHILE, SWITCH = (acl.ACL_MODEL_RI_COND_TYPE_IF, acl.ACL_MODEL_RI_COND_TYPE_WHILE,
                     acl.ACL_MODEL_RI_COND_TYPE_SWITCH)
ASSIGN_DEFAULT = acl.ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT


def _ok(*values):
    *vals, ret = values
    assert ret == 0, ret
    return vals[0] if len(vals) == 1 else tuple(vals)


def launch(stream, kernel: str, *args) -> None:
    """The one kernel launch of these benches (Pythonic ``Stream.launch``)."""
    npusim.Stream(_DEV, stream).launch(kernel, 1, args=args)


_DEV = object.__new__(npusim.Device)      # launches without an extra aclrtSetDevice


def _write(ptr: int, value: int, dtype) -> None:
    a = np.array([value], dtype)
    assert acl.rt.memcpy(ptr, a.nbytes, acl.util.numpy_to_ptr(a), a.nbytes,
                         acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0


def _read(ptr: int, n: int, dtype) -> np.ndarray:
    a = np.zeros(n, dtype)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(a), a.nbytes, ptr, a.nbytes,
                         acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0
    return a


def _sim_ns() -> int:
    return int(api_device.device(0).state.now)


def _on_reference(monkeypatch, fn):
    """Run ``fn()`` with the reference interpreter as the engine; its wall time."""
    with monkeypatch.context() as m:
        m.setattr(E, "run", R.run)
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0


@pytest.fixture(scope="module")
def device():
    npusim.reset()
    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    yield
    npusim.reset()


def _stream() -> int:
    return _ok(*acl.rt.create_stream())


# ---------------------------------------------------------------- WHILE + CountDown
@pytest.fixture(scope="module")
def while_graph(device):
    s, body_s, exe = _stream(), _stream(), _stream()
    cnt = _ok(*acl.rt.malloc(8, 0))
    assert acl.mdl.ri_capture_begin(s, 0) == 0
    _, mh, _ = acl.mdl.ri_capture_get_info(s)
    h = _ok(*acl.mdl.ri_cond_handle_create(mh, 1, ASSIGN_DEFAULT))
    word = _ok(*acl.mdl.ri_cond_handle_get_cond_ptr(h))
    (body,) = _ok(*acl.mdl.ri_add_cond_task(h, WHILE, 1, s))
    assert acl.mdl.ri_capture_to_model_ri_begin(body_s, body, 0) == 0
    launch(body_s, "CountDown", cnt, word)
    _ok(*acl.mdl.ri_capture_end(body_s))
    mh = _ok(*acl.mdl.ri_capture_end(s))
    return mh, exe, cnt, word


def _run_while(mh, exe, cnt, word, n: int) -> None:
    _write(cnt, n, np.int64)
    assert acl.mdl.ri_execute_async(mh, exe) == 0
    assert acl.rt.synchronize_stream(exe) == 0


def test_while_countdown_1m_iterations(benchmark, while_graph, monkeypatch, bench_report):
    mh, exe, cnt, word = while_graph
    _run_while(mh, exe, cnt, word, 1000)                     # build + JIT warm-up
    sim = {}

    def run():
        t0 = _sim_ns()
        _run_while(mh, exe, cnt, word, WHILE_ITERS)
        sim["ns"] = _sim_ns() - t0
    benchmark.pedantic(run, rounds=5, iterations=1, warmup_rounds=1)
    assert _read(cnt, 1, np.int64)[0] == 0 and _read(word, 1, np.uint64)[0] == 0
    median = benchmark.stats.stats.median
    rate = WHILE_ITERS / median

    # reference 1: the same SQEs on the pure-Python interpreter (fewer iterations)
    ref_s = _on_reference(monkeypatch, lambda: _run_while(mh, exe, cnt, word, REF_WHILE_ITERS))
    assert _read(cnt, 1, np.int64)[0] == 0
    ref_rate = REF_WHILE_ITERS / ref_s

    # reference 2: the same iterations as eager kernel launches on one stream
    eager = _stream()
    _write(cnt, EAGER_ITERS, np.int64)
    t0 = time.perf_counter()
    for _ in range(EAGER_ITERS):
        launch(eager, "CountDown", cnt, word)
    assert acl.rt.synchronize_stream(eager) == 0
    eager_rate = EAGER_ITERS / (time.perf_counter() - t0)
    assert _read(cnt, 1, np.int64)[0] == 0

    info = dict(iterations=WHILE_ITERS, iterations_per_s=round(rate),
                target_iterations_per_s=WHILE_TARGET, target_met=rate >= WHILE_TARGET,
                reference_interpreter_iterations_per_s=round(ref_rate),
                speedup_vs_reference=round(rate / ref_rate, 1),
                eager_launch_iterations_per_s=round(eager_rate),
                speedup_vs_eager=round(rate / eager_rate, 1),
                simulated_ns_per_iteration=round(sim["ns"] / WHILE_ITERS, 1))
    benchmark.extra_info.update(info)
    met = "met" if rate >= WHILE_TARGET else "NOT met"
    bench_report(f"WHILE/CountDown x{WHILE_ITERS:,}: median {median:.3f} s = {rate:,.0f} "
                 f"iterations/s (target {WHILE_TARGET:,}: {met}); reference interpreter "
                 f"{ref_rate:,.0f}/s (x{rate / ref_rate:.0f}); eager launches "
                 f"{eager_rate:,.0f}/s (x{rate / eager_rate:.0f}); simulated "
                 f"{sim['ns'] / WHILE_ITERS:.0f} ns/iteration")


# ---------------------------------------------------------------- SWITCH over 1,000 branches
@npusim.kernel
def count_mod(mem, ctx, block_idx, block_num, cnt: "ptr", w: "ptr", sw: "ptr", n: "i64",
              iters: "i64"):
    """The loop body of the "mod" switch loops: counter += 1 (it starts at 0, zeroed before each
    launch); the WHILE word = counter < iters; the switch word = (iters - counter) mod n, so
    iteration i (0-based) selects branch (iters - 1 - i) mod n: every evaluation takes a
    branch whatever n, and n == iters gives CountDown's order (iters-1 ... 0)."""
    c = V.i64(mem, ctx, cnt, 1)
    c[0] += 1
    V.i64(mem, ctx, w, 1)[0] = 1 if c[0] < iters else 0
    V.i64(mem, ctx, sw, 1)[0] = (iters - c[0]) % n


def _switch_loop(n_branches: int, iterations: int, word: str = "countdown", modulo: int = 0):
    """root: WHILE(w) { body(sw, w); SWITCH(sw) over n branches (branch k: x[k] = 1) }; one
    launch runs the loop ``iterations`` times.

    * ``word="countdown"``: the body is ``CountDown(sw, w)`` and sw starts at ``iterations``
      (ASSIGN_DEFAULT), so the SWITCH sees iterations-1 ... 0: every branch once when
      iterations == n, but with fewer branches the evaluations with sw >= n skip (no branch).
    * ``word="mod"``: the body is ``count_mod`` (a counter at the end of x, zeroed with x before
      each launch): the SWITCH sees (iterations-1-i) mod n, so every evaluation takes a branch
      (``modulo`` > 0: mod ``modulo`` instead, so only branches 0 .. modulo-1 are taken).

    ``n_branches`` 0: the same loop without the SWITCH task (the loop's own cost); only "mod"
    loops then (an ASSIGN_DEFAULT handle no cond task uses is never assigned, so CountDown's sw
    would start at 0 and the loop end after one iteration). Returns (model, exe stream, x,
    bytes of x zeroed per launch, capture seconds)."""
    assert word in ("countdown", "mod") and (n_branches or word == "mod")
    nx = -(-max(n_branches, 1) // 8) * 8 + 8             # the branch bytes, then the counter
    s, body_s, br_s, exe = _stream(), _stream(), _stream(), _stream()
    x = _ok(*acl.rt.malloc(nx, 0))
    t0 = time.perf_counter()
    assert acl.mdl.ri_capture_begin(s, 0) == 0
    _, mh, _ = acl.mdl.ri_capture_get_info(s)
    hw = _ok(*acl.mdl.ri_cond_handle_create(mh, 1, ASSIGN_DEFAULT))
    w = _ok(*acl.mdl.ri_cond_handle_get_cond_ptr(hw))
    (body,) = _ok(*acl.mdl.ri_add_cond_task(hw, WHILE, 1, s))
    assert acl.mdl.ri_capture_to_model_ri_begin(body_s, body, 0) == 0
    hs = _ok(*acl.mdl.ri_cond_handle_create(body, iterations, ASSIGN_DEFAULT))
    sw = _ok(*acl.mdl.ri_cond_handle_get_cond_ptr(hs))
    if word == "mod":
        launch(body_s, "count_mod", x + nx - 8, w, sw, modulo or max(n_branches, 1), iterations)
    else:
        launch(body_s, "CountDown", sw, w)
    if n_branches:
        for k, br in enumerate(_ok(*acl.mdl.ri_add_cond_task(hs, SWITCH, n_branches, body_s))):
            assert acl.mdl.ri_capture_to_model_ri_begin(br_s, br, 0) == 0
            assert acl.rt.memset_async(x + k, 1, 1, 1, br_s) == 0
            _ok(*acl.mdl.ri_capture_end(br_s))
    _ok(*acl.mdl.ri_capture_end(body_s))
    mh = _ok(*acl.mdl.ri_capture_end(s))
    capture_s = time.perf_counter() - t0
    return mh, exe, x, nx, capture_s


def _run_switch(mh, exe, x, n) -> None:
    assert acl.rt.memset(x, n, 0, n) == 0
    assert acl.mdl.ri_execute_async(mh, exe) == 0
    assert acl.rt.synchronize_stream(exe) == 0


@pytest.fixture(scope="module")
def switch_graphs(device):
    """The loop without a SWITCH (timed before and after the big graph exists) and with the
    1,000-branch SWITCH."""
    loop = _switch_loop(0, BRANCHES, "mod")
    loop_alone_s = _time_launches(loop)
    return {"loop": loop, "loop_alone_s": loop_alone_s, "switch": _switch_loop(BRANCHES, BRANCHES)}


def _time_launches(g, rounds: int = 7) -> float:
    """Median wall time of one launch of graph ``g`` (after a warm-up launch)."""
    mh, exe, x, n, _ = g
    _run_switch(mh, exe, x, n)
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        _run_switch(mh, exe, x, n)
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def test_switch_1000_branches(benchmark, switch_graphs, monkeypatch, bench_report):
    mh, exe, x, n, capture_s = switch_graphs["switch"]
    _run_switch(mh, exe, x, n)                               # build + warm-up
    sim = {}

    def run():
        t0 = _sim_ns()
        _run_switch(mh, exe, x, n)
        sim["ns"] = _sim_ns() - t0
    benchmark.pedantic(run, rounds=10, iterations=1, warmup_rounds=1)
    assert (_read(x, BRANCHES, np.uint8) == 1).all()        # every branch taken once
    median = benchmark.stats.stats.median
    us_eval = median / BRANCHES * 1e6
    # the same loop without the SWITCH, now that the device holds the 1,000 branch SQs too
    loop_us = _time_launches(switch_graphs["loop"]) / BRANCHES * 1e6
    loop_alone_us = switch_graphs["loop_alone_s"] / BRANCHES * 1e6
    ref_s = _on_reference(monkeypatch, lambda: _run_switch(mh, exe, x, n))
    assert (_read(x, BRANCHES, np.uint8) == 1).all()
    us_ref = ref_s / BRANCHES * 1e6

    info = dict(branches=BRANCHES, evaluations_per_launch=BRANCHES,
                us_per_evaluation=round(us_eval, 3),
                loop_us_per_iteration_without_switch=round(loop_us, 3),
                switch_own_us_per_evaluation=round(us_eval - loop_us, 3),
                loop_us_per_iteration_before_the_branch_sqs_existed=round(loop_alone_us, 3),
                reference_interpreter_us_per_evaluation=round(us_ref, 1),
                speedup_vs_reference=round(us_ref / us_eval, 1),
                simulated_ns_per_evaluation=round(sim["ns"] / BRANCHES, 1),
                capture_s_1000_branches=round(capture_s, 2))
    benchmark.extra_info.update(info)
    bench_report(f"SWITCH over {BRANCHES} branches: {us_eval:.2f} us/evaluation (median "
                 f"launch {median * 1e3:.2f} ms, {BRANCHES} evaluations in a WHILE). Same loop "
                 f"without the SWITCH: {loop_us:.2f} us/iteration (so the SWITCH itself "
                 f"{us_eval - loop_us:.2f} us); that loop took {loop_alone_us:.2f} us/iteration "
                 f"before the 1,000 branch SQs existed (idle SQs cost nothing per pick). "
                 f"Reference interpreter {us_ref:.1f} us/evaluation (x{us_ref / us_eval:.0f}); "
                 f"simulated {sim['ns'] / BRANCHES:.0f} ns/evaluation; capture of the "
                 f"1000-branch graph {capture_s:.1f} s")
