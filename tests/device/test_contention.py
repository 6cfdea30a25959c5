"""Core contention between streams (docs/timing.md "Contention"): off by default, kernels of
different streams overlap freely; on, each device's units are pools of cores and a kernel waits
until min(blocks, C) cores are free. End times follow the documented closed forms, a single
stream is unchanged, the engine and the reference agree to the ns, and the facade (eager
launches, graph replay, aclrtSetDeviceResLimit) shows it."""
from __future__ import annotations

import inspect

import math
import random

import numpy as np
import pytest

import npusim
import npusim.trace
import npusim.kernel.builtin  # noqa: F401  (registers the sample kernel bodies)
from npusim import acl
from npusim.device import engine as E
from npusim.device import sqe as S
from npusim.device.kernels import TABLE
from npusim.device.state import DeviceState
from npusim.device.timing import T_AIC_CORES, T_AICPU_CORES, T_AIV_CORES
from npusim.profiles import get_profile
from npusim.testing import reference as R

PROFILE = get_profile("Ascend910B")
EASY = TABLE.id("EasyOPf")            # a vector (AIV) kernel
D = 1000                              # the kernels' explicit duration (ns)
C = 8                                 # cores of every unit in the engine-level tests


# ---------------------------------------------------------------- engine level

def _device(on: bool, cores: int = C) -> tuple[DeviceState, int]:
    d = DeviceState(PROFILE, 1 << 16, 1 << 12)
    for t in (T_AIC_CORES, T_AIV_CORES, T_AICPU_CORES):
        d.tc[t] = cores
    d.set_contention(on)
    buf = d.mem.malloc(1 << 12)
    argv = d.mem.malloc(8)
    d.mem.view(argv, 8)[:] = np.array([buf], np.int64).view(np.uint8)
    return d, argv


def _program(streams: int, kernels: int, blocks: int, on: bool, cores: int = C,
             dispatch: int = 0):
    """``streams`` SQs of ``kernels`` kernels of ``blocks`` blocks each, all submitted at 0."""
    d, argv = _device(on, cores)
    d.set_tracing(True)
    qs = [d.alloc_sq(64, dispatch_ns=dispatch) for _ in range(streams)]
    for q in qs:
        for _ in range(kernels):
            d.push(q, S.OP_KERNEL, 0, a0=EASY, a1=argv, a2=8, a3=D, blocks=blocks)
    return d, qs


def _end(*args, **kw) -> int:
    d, _ = _program(*args, **kw)
    assert d.run() == E.R_IDLE
    return d.now


def _d(dispatch: int = 0) -> int:
    """The kernel SQE's whole duration: dispatch, fixed cost and its explicit duration."""
    return _end(1, 1, 1, False, dispatch=dispatch)


@pytest.mark.parametrize("streams, kernels", [(2, 1), (2, 5), (3, 4), (6, 2)])
@pytest.mark.parametrize("blocks", [C, C + 1, 4 * C])
def test_kernels_that_fill_the_unit_serialise_across_streams(streams, kernels, blocks):
    """b >= C: off, the streams overlap (end K*d); on, every kernel waits for the one before
    (end S*K*d)."""
    d = _d(dispatch=300)
    assert _end(streams, kernels, blocks, False, dispatch=300) == kernels * d
    assert _end(streams, kernels, blocks, True, dispatch=300) == streams * kernels * d


@pytest.mark.parametrize("kernels", [1, 3, 7])
def test_two_half_unit_streams_fit_side_by_side(kernels):
    """b = C/2: two streams run at once (K*d either way); a third waits."""
    d = _d()
    assert _end(2, kernels, C // 2, True) == _end(2, kernels, C // 2, False) == kernels * d
    assert _end(3, kernels, C // 2, True) > kernels * d


@pytest.mark.parametrize("blocks", [1, 2, 3, 4, 5, 8])
@pytest.mark.parametrize("streams", range(1, 11))
def test_identical_streams_follow_the_greedy_bounds(streams, blocks):
    """m = C // min(b, C) kernels fit at once: S <= m ends at K*d, S a multiple of m at
    (S/m)*K*d, and any S between ceil(S*K/m)*d and ceil(S/m)*K*d."""
    d, m = _d(), C // min(blocks, C)
    for k in range(1, 6):
        end = _end(streams, k, blocks, True)
        if streams <= m:
            assert end == k * d
        elif streams % m == 0:
            assert end == streams // m * k * d
        assert math.ceil(streams * k / m) * d <= end <= math.ceil(streams / m) * k * d


@pytest.mark.parametrize("blocks", [0, 1, 3, C, 3 * C + 1])
def test_a_single_stream_is_unchanged(blocks):
    """One stream never waits for its own cores: each kernel starts when the last one ended
    (the pool follows it), cost-model kernels included."""
    for a3 in (D, 0):
        ends = []
        for on in (False, True):
            d, argv = _device(on)
            d.set_tracing(True)
            q = d.alloc_sq(16, dispatch_ns=300)
            for i in range(5):
                d.push(q, S.OP_KERNEL, 100 * i, a0=EASY, a1=argv, a2=8, a3=a3, blocks=blocks)
            d.run()
            ends.append((d.now, d.trace_rows()[["start", "end", "val"]].tolist()))
        assert ends[0] == ends[1]


def test_the_trace_starts_a_waiting_kernel_when_it_really_starts():
    d, (q0, q1) = _program(2, 1, C, True)
    d.run()
    rows = d.trace_rows()
    first, second = (rows[rows["sq"] == q] for q in (q0, q1))
    assert first["start"][0] == 0 and first["val"][0] == 0
    assert second["start"][0] == first["end"][0]            # waited for the first's cores
    assert second["val"][0] == first["end"][0]              # ... from 0: its core wait


def test_off_leaves_the_pools_untouched():
    d, _ = _program(3, 4, C, False)
    d.run()
    assert not d.contention and not d.st[E.E_POOL:E.E_BODY].any()


def test_the_pools_persist_across_runs_and_slices():
    """Run in horizon slices (as the host's waits do), the end is the one-run end; switching
    off and on frees every core."""
    d, _ = _program(2, 4, C, True)
    for h in range(0, 8 * D, 700):
        d.run(horizon=h)
    d.run()
    assert d.now == 8 * _d()
    assert d.st[E.E_POOL + E.P_AIV * E.P_STRIDE] == C and d.st[E.E_POOL:E.E_BODY].any()
    d.set_contention(True)                       # no change: the pool is kept
    assert d.st[E.E_POOL:E.E_BODY].any()
    d.set_contention(False)
    d.set_contention(True)
    assert not d.st[E.E_POOL:E.E_BODY].any()


def test_kernels_of_different_units_do_not_contend():
    d, argv = _device(True)
    aic = next(i for i, e in enumerate(TABLE.entries) if e.unit == 1)
    q0, q1 = d.alloc_sq(8), d.alloc_sq(8)
    d.push(q0, S.OP_KERNEL, 0, a0=EASY, a1=argv, a2=8, a3=D, blocks=C)
    d.push(q1, S.OP_KERNEL, 0, a0=aic, a1=argv, a2=8, a3=D, blocks=C)
    d.run()
    assert d.now == _d()


# ---------------------------------------------------------------- engine == reference
_ST = list(inspect.signature(E.run.py_func).parameters).index("st")     # run's state argument

def _same_on_engine_and_reference(d: DeviceState, phases) -> list:
    eng = [a.copy() for a in R.engine_args(d)]
    ref = [a.copy() for a in R.engine_args(d)]
    names = list(inspect.signature(E.run.py_func).parameters)
    st_, tc_ = names.index("st"), names.index("tc")
    for horizon, cores in phases:
        for args in (eng, ref):
            args[st_][E.E_HORIZON] = horizon
            args[tc_][T_AIV_CORES] = cores           # aclrtSetDeviceResLimit between runs
        r_e, r_r = E.run(*eng), R.run(*ref)
        while r_e == E.R_FAULT:
            r_e = E.run(*eng)
        while r_r == E.R_FAULT:
            r_r = R.run(*ref)
        assert r_e == r_r
    for x, y in zip(R.outcome(eng), R.outcome(ref)):
        assert np.array_equal(x, y)
    return eng


@pytest.mark.parametrize("seed", range(40))
def test_random_contended_programs_agree_with_the_reference(seed):
    """Several streams of kernels (random blocks, explicit and cost-model durations, submit
    gaps) ordered by events, run in horizon slices while the vector core count changes."""
    rnd = random.Random(seed)
    d, argv = _device(True, cores=rnd.choice((2, 4, 8)))
    d.set_tracing(True)
    ns = rnd.randint(2, 6)
    qs = [d.alloc_sq(64, dispatch_ns=rnd.choice((0, 300))) for _ in range(ns)]
    slots = [d.alloc_slot() for _ in range(4)]
    recs = [0] * len(slots)
    t = [0] * ns
    for _ in range(rnd.randint(5, 50)):
        i = rnd.randrange(ns)
        t[i] += rnd.choice((0, 0, 200, 3000))
        k = rnd.random()
        if k < 0.75:
            d.push(qs[i], S.OP_KERNEL, t[i], a0=EASY, a1=argv, a2=8,
                   a3=rnd.choice((0, D, 2500)), blocks=rnd.randint(0, 10))
        elif k < 0.9:
            s = rnd.randrange(len(slots))
            recs[s] += 1
            d.push(qs[i], S.OP_EVENT_RECORD, t[i], a0=slots[s], a1=recs[s])
        else:
            s = rnd.randrange(len(slots))
            if recs[s]:
                d.push(qs[i], S.OP_EVENT_WAIT, t[i], a0=slots[s], a1=rnd.randint(1, recs[s]))
    d.flush()
    phases = [(rnd.randint(0, 20_000), rnd.choice((1, 3, 8, 200))) for _ in range(3)]
    eng = _same_on_engine_and_reference(d, phases + [(E.INF, rnd.choice((2, 8)))])
    assert eng[_ST][E.E_CONTEND] == 1


@pytest.mark.parametrize("before, after", [(4, 8), (8, 3), (5, 5)])
def test_the_pool_follows_a_changed_core_count_like_the_reference(before, after):
    """Cores added are free since 0; fewer keep the ones free first (both implementations,
    from a ring whose head has moved)."""
    d, argv = _device(True, cores=before)
    qs = [d.alloc_sq(16) for _ in range(3)]
    for i, q in enumerate(qs):
        for b in (1, 3, 2, 8):
            d.push(q, S.OP_KERNEL, 100 * i, a0=EASY, a1=argv, a2=8, a3=D + 10 * b, blocks=b)
    d.flush()
    eng = _same_on_engine_and_reference(d, [(1500, before), (E.INF, after)])
    b = E.E_POOL + E.P_AIV * E.P_STRIDE
    assert eng[_ST][b] == after


# ---------------------------------------------------------------- the facade

K, DUR = 4, 1_000_000            # kernels per stream, their duration (1 ms)


def _two_streams(dev, blocks: int, graph: bool = False):
    """Two streams of K EasyOPf kernels each (on two graphs replayed at once when ``graph``);
    the trace's kernel rows (the trace is cleared first)."""
    npusim.trace.clear()
    s1, s2 = dev.stream("a"), dev.stream("b")
    x = dev.malloc(4 * 256)
    if graph:
        gs = []
        for s in (s1, s2):
            g = npusim.graph(s)
            with g:
                for _ in range(K):
                    s.launch("EasyOPf", blocks, (x,), duration_ns=DUR)
            gs.append(g)
        for g, s in zip(gs, (s1, s2)):
            g.replay(s)
    else:
        for _ in range(K):
            for s in (s1, s2):
                s.launch("EasyOPf", blocks, (x,), duration_ns=DUR)
    dev.synchronize()
    rows = dev.trace().rows
    return rows[rows["op"] == S.OP_KERNEL]


def _spans(rows):
    """(first kernel start, last kernel end, the kernel rows' length)."""
    lengths = set((rows["end"] - rows["start"]).tolist())
    assert len(lengths) == 1
    return int(rows["start"].min()), int(rows["end"].max()), lengths.pop()


@pytest.mark.parametrize("graph", [False, True], ids=["eager", "graph"])
def test_contention_serialises_two_full_streams_on_the_facade(graph):
    npusim.configure(trace=True)
    dev = npusim.Device("Ascend910B")
    full = dev.profile.aiv_cores
    assert not dev.contention
    t0, t1, d = _spans(_two_streams(dev, full, graph))
    assert t1 - t0 < 2 * K * d                    # off: the streams overlap
    dev.contention = True
    rows = _two_streams(dev, full, graph)
    t0, t1, d = _spans(rows)
    assert t1 - t0 == 2 * K * d                   # on: S*K*d, back to back
    assert rows["val"].sum() > 0


def test_configure_switches_it_on_for_devices_opened_later():
    npusim.configure(contention=True, trace=True)
    dev = npusim.Device("Ascend910B")
    assert dev.contention
    t0, t1, d = _spans(_two_streams(dev, dev.profile.aiv_cores))
    assert t1 - t0 == 2 * K * d
    npusim.configure(contention=False)            # open devices too
    assert not dev.contention


def test_half_unit_launches_fit_side_by_side_until_a_res_limit_halves_the_unit():
    npusim.configure(trace=True)
    dev = npusim.Device("Ascend910B", contention=True)
    half = dev.profile.aiv_cores // 2
    t0, t1, d = _spans(_two_streams(dev, half))
    assert t1 - t0 < 2 * K * d                    # two halves side by side
    assert acl.rt.set_device_res_limit(0, acl.ACL_RT_DEV_RES_VECTOR_CORE, half) == 0
    rows = _two_streams(dev, half)
    t0, t1, d = _spans(rows)
    assert t1 - t0 == 2 * K * d                   # C is now ``half``: they serialise


def test_the_summary_and_the_export_show_core_waits(tmp_path):
    npusim.configure(trace=True)
    dev = npusim.Device("Ascend910B", contention=True)
    rows = _two_streams(dev, dev.profile.aiv_cores)
    tr = dev.trace()
    lines = {ln.split()[0]: ln.split() for ln in tr.summary().splitlines()[1:]}
    waited = {n: int(rows["val"][rows["sq"] == sq].sum()) for sq, n in tr.stream_names.items()
              if n in ("a", "b")}
    assert waited["b"] > 0
    for n in ("a", "b"):                          # waiting us: the core waits (no parked wait)
        assert float(lines[n][3]) == round(waited[n] / 1e3, 1)
    events = [e for e in tr.events() if e.get("args", {}).get("core_wait_ns")]
    assert sum(e["args"]["core_wait_ns"] for e in events) == int(rows["val"].sum())
    text = open(tr.to_chrome(tmp_path / "t.json")).read()
    assert text.count('"core_wait_ns":') == len(events)


def test_a_device_reset_frees_every_core():
    dev = npusim.Device("Ascend910B", contention=True)
    _two_streams(dev, dev.profile.aiv_cores)
    assert dev._dev.state.st[E.E_POOL:E.E_BODY].any()
    dev.reset()
    assert not dev._dev.state.st[E.E_POOL:E.E_BODY].any()
