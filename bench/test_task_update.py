"""Task-update benchmark (pytest-benchmark): ``pytest bench/test_task_update.py -s``.

A 1,000-kernel task group is captured once. Then, in the same run:

* **update**: ``aclmdlRICaptureTaskUpdateBegin`` + 1,000 ``aclrtLaunchKernel`` on an update stream
  (each rewrites one captured task: one SQE rebuilt and an SQE_UPDATE queued) +
  ``aclmdlRICaptureTaskUpdateEnd``, an event recorded on the update stream and waited by the
  replay stream, and the replay right after;
* **re-capture**: the same 1,000-task graph captured again from scratch (begin, group, 1,000
  launches, end, destroy of the previous graph) and its first replay (which builds its SQ/CQs).

Each phase is measured two ways: the simulator's wall time (how long the Python simulator takes,
per updated task) and the simulated host clock ``RT.host_ns`` (what the modelled runtime's host
side would spend: ``host_task_update_ns`` per updated task vs ``host_capture_task_ns`` per
captured task plus begin/end/first-launch costs). The ratio re-capture / update is reported for
both. Numbers are medians over the rounds; wall times depend on the machine.
"""
from __future__ import annotations

import statistics
import time

import numpy as np
import pytest

import npusim
from npusim import acl
from npusim.runtime.runtime import RT

N = 1000
ROUNDS = 8
RESULTS: dict[str, dict] = {}


def _ok(*values):
    *vals, ret = values
    assert ret == 0, ret
    return vals[0] if len(vals) == 1 else tuple(vals)


class Setup:
    """Device, streams, the kernel and two args areas (EasyOPf on buffer x or y)."""

    def __init__(self):
        npusim.reset()
        acl.init()
        acl.rt.set_device(0)
        self.s = _ok(*acl.rt.create_stream())
        self.u = _ok(*acl.rt.create_stream())
        self.ev = _ok(*acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC))
        self.x = _ok(*acl.rt.malloc(64, 0))
        self.y = _ok(*acl.rt.malloc(64, 0))
        self.use_facade = hasattr(acl.rt, "binary_get_function")
        if self.use_facade:
            lib = _ok(*acl.rt.binary_load_from_file(npusim.samples.binary_path()))
            self.func = _ok(*acl.rt.binary_get_function(lib, "EasyOPf"))
        self.args = {}
        for name, p in (("x", self.x), ("y", self.y)):
            a = _ok(*acl.rt.malloc(8, 0))
            v = np.array([p], np.uint64)
            assert acl.rt.memcpy(a, 8, acl.util.numpy_to_ptr(v), 8,
                                 acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
            self.args[name] = a
        self.mh = None
        self.group = None

    def launch(self, stream: int, which: str) -> int:
        """The one launch helper: aclrtLaunchKernel of EasyOPf (Kernel-module facade), else the
        Pythonic Stream.launch by name."""
        if self.use_facade:
            return acl.rt.launch_kernel(self.func, 1, self.args[which], 8, stream)
        try:
            npusim.Stream(None, stream).launch("EasyOPf", 1,
                                               (self.x if which == "x" else self.y,))
        except npusim.AclError as e:
            return e.code
        return 0

    def capture(self) -> None:
        """Capture the 1,000-task group graph on ``s`` (replacing the previous one)."""
        s = self.s
        assert acl.mdl.ri_capture_begin(s, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) == 0
        assert acl.mdl.ri_capture_task_grp_begin(s) == 0
        launch = self.launch
        for _ in range(N):
            assert launch(s, "x") == 0
        g = _ok(*acl.mdl.ri_capture_task_grp_end(s))
        mh = _ok(*acl.mdl.ri_capture_end(s))
        if self.mh is not None:
            assert acl.mdl.ri_destroy(self.mh) == 0
        self.mh, self.group = mh, g

    def update(self, which: str) -> None:
        u = self.u
        assert acl.mdl.ri_capture_task_update_begin(u, self.group) == 0
        launch = self.launch
        for _ in range(N):
            assert launch(u, which) == 0
        assert acl.mdl.ri_capture_task_update_end(u) == 0

    def replay(self) -> None:
        assert acl.mdl.ri_execute_async(self.mh, self.s) == 0
        assert acl.rt.synchronize_stream(self.s) == 0


@pytest.fixture(scope="module")
def setup():
    st = Setup()
    st.capture()
    st.replay()                                           # build SQ/CQs, warm the engine
    yield st
    npusim.reset()


def _read(p) -> int:
    v = np.zeros(1, np.uint32)
    acl.rt.memcpy(acl.util.numpy_to_ptr(v), 4, p, 4, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    return int(v[0])


def _med(xs) -> float:
    return statistics.median(xs)


def _record(name: str, rows: list[tuple]) -> dict:
    """rows: (phase wall s, phase host ns, replay wall s, replay host ns) per round."""
    d = {
        "wall_us_per_task": _med([r[0] for r in rows]) / N * 1e6,
        "host_us_per_task": _med([r[1] for r in rows]) / N / 1e3,
        "wall_ms_phase": _med([r[0] for r in rows]) * 1e3,
        "host_us_phase": _med([r[1] for r in rows]) / 1e3,
        "wall_ms_replay": _med([r[2] for r in rows]) * 1e3,
        "host_us_replay": _med([r[3] for r in rows]) / 1e3,
    }
    RESULTS[name] = d
    return d


def _round_update(st: Setup, rows: list, k: list) -> None:
    which = "y" if k[0] % 2 == 0 else "x"
    k[0] += 1
    t0, h0 = time.perf_counter(), RT.host_ns
    st.update(which)
    t1, h1 = time.perf_counter(), RT.host_ns
    # the replay right after, ordered by an event: record on the update stream, wait on s
    assert acl.rt.record_event(st.ev, st.u) == 0
    assert acl.rt.stream_wait_event(st.s, st.ev) == 0
    before = _read(st.x if which == "x" else st.y)
    st.replay()
    t2, h2 = time.perf_counter(), RT.host_ns
    assert _read(st.x if which == "x" else st.y) == before + N       # new arguments observed
    rows.append((t1 - t0, h1 - h0, t2 - t1, h2 - h1))


def _round_recapture(st: Setup, rows: list) -> None:
    t0, h0 = time.perf_counter(), RT.host_ns
    st.capture()
    t1, h1 = time.perf_counter(), RT.host_ns
    before = _read(st.x)
    st.replay()                                           # the first replay builds SQ/CQs
    t2, h2 = time.perf_counter(), RT.host_ns
    assert _read(st.x) == before + N
    rows.append((t1 - t0, h1 - h0, t2 - t1, h2 - h1))


def _print(name: str, d: dict) -> None:
    print(f"\n[{name}] {N} tasks, median of {ROUNDS}: "
          f"wall {d['wall_us_per_task']:.2f} us/task ({d['wall_ms_phase']:.1f} ms), "
          f"simulated host {d['host_us_per_task']:.2f} us/task ({d['host_us_phase']:.0f} us); "
          f"replay after: wall {d['wall_ms_replay']:.2f} ms, simulated host "
          f"{d['host_us_replay']:.0f} us")


def test_update_1000_task_group(benchmark, setup):
    rows: list = []
    k = [0]
    benchmark.pedantic(_round_update, args=(setup, rows, k), rounds=ROUNDS, iterations=1,
                       warmup_rounds=1)
    d = _record("update", rows[1:])                        # rows[0]: the warm-up round
    benchmark.extra_info.update({k_: round(v, 3) for k_, v in d.items()},
                                launch_path="aclrtLaunchKernel" if setup.use_facade
                                else "Stream.launch")
    _print("task update + replay", d)
    t = RT.profile.timing
    assert d["host_us_per_task"] == pytest.approx(t.host_task_update_ns / 1e3)


def test_recapture_1000_task_graph(benchmark, setup):
    rows: list = []
    benchmark.pedantic(_round_recapture, args=(setup, rows), rounds=ROUNDS, iterations=1,
                       warmup_rounds=1)
    d = _record("recapture", rows[1:])
    if "update" not in RESULTS:                            # run alone: measure the update too
        urows: list = []
        k = [0]
        for _ in range(ROUNDS):
            _round_update(setup, urows, k)
        _record("update", urows)
    u = RESULTS["update"]
    wall_ratio = d["wall_ms_phase"] / u["wall_ms_phase"]
    host_ratio = d["host_us_phase"] / u["host_us_phase"]
    e2e_wall = (d["wall_ms_phase"] + d["wall_ms_replay"]) / \
        (u["wall_ms_phase"] + u["wall_ms_replay"])
    e2e_host = (d["host_us_phase"] + d["host_us_replay"]) / \
        (u["host_us_phase"] + u["host_us_replay"])
    benchmark.extra_info.update({k_: round(v, 3) for k_, v in d.items()},
                                ratio_recapture_over_update_wall=round(wall_ratio, 3),
                                ratio_recapture_over_update_host=round(host_ratio, 3),
                                ratio_with_replay_wall=round(e2e_wall, 3),
                                ratio_with_replay_host=round(e2e_host, 3))
    _print("re-capture + first replay", d)
    print(f"[ratio re-capture / update] wall {wall_ratio:.2f}x, simulated host "
          f"{host_ratio:.2f}x; including the replay: wall {e2e_wall:.2f}x, simulated host "
          f"{e2e_host:.2f}x")
