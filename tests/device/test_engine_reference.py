"""The jitted engine and the pure-Python reference interpreter agree, SQE for SQE.

Random multi-stream programs (hypothesis) run on ``engine.run`` and on ``reference.run`` from
identical copies of the device state; final memory, SQE pool, SQ/sync/cond tables, engine
state, trace rows and the sequence of return codes (with the engine state after each call) must
be identical. Targeted tests pin behaviours the random programs reach rarely or not at all:
deadlock, kernel faults, trace growth, STREAM_ACTIVE and MODEL_EXECUTE activation, ring
wrap-around, value waits woken by data writes, unknown opcodes and WHILE cond loops.
"""
from __future__ import annotations

import inspect
import os
import types

import numba
import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import npusim.kernel.builtin  # noqa: F401  (registers the sample kernel bodies)
from npusim.device import engine as E
from npusim.device.engine import bodies
from npusim.testing import reference as R
from npusim.device import sqe as S
from npusim.device.kernels import TABLE
from npusim.device.memory import C_REC
from npusim.device.recording import AccessLog
from npusim.device.state import DeviceState
from npusim.device.timing import T_AIC_CORES, T_AICPU_CORES, T_AIV_CORES, T_WAKEUP
from npusim.profiles import get_profile

PROFILE = get_profile("Ascend910B")
EASY, SHORT = TABLE.id("EasyOPf"), TABLE.id("ShortOPf")
PARAMS = list(inspect.signature(E.run.py_func).parameters)
SQS, MEM, TRACE, ST = (PARAMS.index(n) for n in ("sqs", "mem", "trace", "st"))
COUNT_DOWN = TABLE.id("CountDown")
# random programs per run; test_engine_boundscheck.py runs this file again with fewer
EXAMPLES = int(os.environ.get("NPUSIM_ENGINE_EXAMPLES", "300"))


# ---------------------------------------------------------------- harness

def small_device(trace_capacity: int = 1 << 12) -> DeviceState:
    d = DeviceState(PROFILE, 1 << 16, 1 << 12, trace_capacity=trace_capacity)
    d.st[E.E_HORIZON] = E.INF
    return d


engine_args = R.engine_args         # the argument list DeviceState.run passes to the engine


class _Log:
    """A bare access log on one copy of the context array: ``AccessLog``'s record array and its
    growth (``make_room``), without the host-side bookkeeping."""
    _alloc = staticmethod(AccessLog._alloc)
    make_room = AccessLog.make_room

    def __init__(self, ctx: np.ndarray, tasks: int, accesses: int):
        self.mem = types.SimpleNamespace(ctx=ctx)
        self.arr = self._alloc(tasks, accesses)
        ctx[C_REC] = self.arr.ctypes.data


def drive(fn, args: list[np.ndarray], slice_steps: int = 0, log: _Log | None = None,
          max_calls: int = 100_000) -> list[tuple[int, list[int]]]:
    """Call ``fn`` the way ``DeviceState.run`` does (resume after a fault, grow a full trace or
    access log, go on after each slice of ``slice_steps`` SQEs when that is set); the return
    codes and the engine state after each call.

    The engine runs cold: before each call every body but the one just provided is forgotten,
    so nearly every rare-opcode SQE breaks its turn off with R_NEED_BODY (not logged: the
    reference has no such return) and the next call goes on with it; the logs still agree."""
    calls = []
    st_ = args[ST]
    st_[E.E_STEP_LIMIT] = st_[E.E_STEPS] + slice_steps if slice_steps else 0
    if log is not None:
        log.make_room()
    kept = -1
    for _ in range(max_calls):
        if fn is E.run:
            addr = st_[E.E_BODY + kept] if kept >= 0 else 0
            st_[E.E_BODY:E.E_NEED] = 0
            if kept >= 0:
                st_[E.E_BODY + kept] = addr
        r = int(fn(*args))
        kept = -1
        if r == E.R_NEED_BODY:
            kept = int(st_[E.E_NEED])
            E.provide(st_)
            continue
        calls.append((r, st_[:E.E_BODY].tolist()))
        if r == E.R_TRACE_FULL:
            grown = np.zeros(max(1, 2 * len(args[TRACE])), E.TRACE_DTYPE)
            grown[:len(args[TRACE])] = args[TRACE]
            args[TRACE] = grown
        elif r == E.R_STEPS:
            if log is not None:
                log.make_room()
            st_[E.E_STEP_LIMIT] = st_[E.E_STEPS] + slice_steps if slice_steps else 0
        elif r != E.R_FAULT:
            st_[E.E_STEP_LIMIT] = 0
            return calls
    raise AssertionError("engine never settled")


def run_both(d: DeviceState, phases=((E.INF, E.STOP_NONE, 0, 0),), slice_steps: int = 0,
             record: tuple[int, int] | None = None):
    """Run copies of ``d``'s state on the engine and on the reference; assert they agree (with
    ``record``, each copy also records accesses into its own (tasks, accesses)-sized log).
    Returns the engine's copy of the arguments and its call log."""
    eng = [a.copy() for a in engine_args(d)]
    ref = [a.copy() for a in engine_args(d)]
    CTX = PARAMS.index("ctx")
    acc_e = _Log(eng[CTX], *record) if record else None
    acc_r = _Log(ref[CTX], *record) if record else None
    log_e, log_r = [], []
    for horizon, kind, a, b in phases:
        for args in (eng, ref):
            args[ST][E.E_HORIZON], args[ST][E.E_STOP_KIND] = horizon, kind
            args[ST][E.E_STOP_A], args[ST][E.E_STOP_B] = a, b
        log_e += drive(E.run, eng, slice_steps, acc_e)
        log_r += drive(R.run, ref, slice_steps, acc_r)
    assert log_e == log_r
    if record:
        assert np.array_equal(acc_e.arr, acc_r.arr), "access records"
        eng[CTX][C_REC] = ref[CTX][C_REC] = 0       # (the two logs' addresses differ)
    for name, x, y in zip([n for n in PARAMS if n != "sched"], R.outcome(eng), R.outcome(ref)):
        assert np.array_equal(x, y), name
    return eng, log_e


def put_i64(d: DeviceState, addr: int, value: int) -> None:
    d.mem.view(addr, 8)[:] = np.array([value], np.int64).view(np.uint8)


def u32_at(arena: np.ndarray, d: DeviceState, addr: int, n: int = 1) -> np.ndarray:
    """``n`` u32 words at device address ``addr`` of ``arena`` (a copy of ``d``'s memory)."""
    off = d.mem.to_off(addr)
    return arena[off:off + 4 * n].view(np.uint32)


def fill(d: DeviceState, q: int, rows: list[dict]) -> None:
    for r in rows:
        d.push(q, **r)


# ---------------------------------------------------------------- random programs

N_EVENTS, N_WORDS, N_BUFS, BUF = 3, 4, 4, 64
WORDS = N_BUFS     # buffer index of the flag words (value ops), also hit by memset, copy, kernel
N_TEMPLATES = 4    # rows an SQE_UPDATE copies into a model SQ


def _data_op(draw, kind: str) -> dict:
    """An SQE that touches memory only (no synchronisation)."""
    if kind == "nop":
        return dict(op=S.OP_NOP)
    if kind == "kernel":
        return dict(op=S.OP_KERNEL, a0=draw(st.sampled_from((EASY, SHORT))),
                    a1=("args", draw(st.integers(0, N_BUFS))), a2=8, blocks=draw(st.integers(0, 4)),
                    a3=draw(st.sampled_from((0, 0, 0, 777))))
    if kind == "memset":
        off = draw(st.integers(0, BUF))
        return dict(op=S.OP_MEMSET, a0=("buf", draw(st.integers(0, N_BUFS)), off),
                    a1=draw(st.integers(0, 300)), a2=draw(st.integers(0, BUF - off)))
    so, do = draw(st.integers(0, BUF)), draw(st.integers(0, BUF))
    return dict(op=S.OP_MEMCPY, a0=("buf", draw(st.integers(0, N_BUFS)), do),
                a1=("buf", draw(st.integers(0, N_BUFS)), so),
                a2=draw(st.integers(0, BUF - max(so, do))), flag=draw(st.integers(0, 3)))


@st.composite
def programs(draw):
    """A multi-stream SQE program, as (per-stream SQE dicts, per-SQ choices, device choices).

    Up to two model SQs (data ops only) are started by STREAM_ACTIVE or MODEL_EXECUTE from the
    eager streams, and rewritten by SQE_UPDATE from a template ring.

    Dependencies follow a global order in which every wait comes after the record (or value
    write) it waits for, so most programs terminate; a few draw a wait with no earlier
    record, a reset, a non-GEQ comparison or a data op over the flag words, which may
    deadlock (and must do so identically)."""
    ns = draw(st.integers(1, 6))
    streams: list[list[dict]] = [[] for _ in range(ns)]
    data = ("nop", "kernel", "memset", "memcpy")
    models = [[_data_op(draw, draw(st.sampled_from(data))) for _ in range(draw(st.integers(1, 4)))]
              for _ in range(draw(st.integers(0, 2)))]
    templates = [_data_op(draw, draw(st.sampled_from(data))) for _ in range(N_TEMPLATES)]
    rec = [0] * N_EVENTS                  # records so far per event
    wval = [0] * N_WORDS                  # last value written per flag word
    widths = [draw(st.sampled_from((1, 2, 4, 8))) for _ in range(N_WORDS)]
    n_notify = 0
    kinds = ("nop",) + ("kernel",) * 3 + ("memset", "memcpy") * 2 + ("record", "wait") * 3 \
        + ("notify",) + ("mwrite", "mwait") * 2 + ("rare",) \
        + ("activate", "update") * bool(models)
    for _ in range(draw(st.integers(0, 40))):
        s = draw(st.integers(0, ns - 1))
        kind = draw(st.sampled_from(kinds))
        e = None
        if kind in data:
            e = _data_op(draw, kind)
        elif kind == "activate":
            m = draw(st.integers(0, len(models) - 1))
            w, w2 = draw(st.integers(0, N_WORDS - 1)), draw(st.integers(0, N_WORDS - 1))
            switch = dict(op=S.OP_STREAM_SWITCH, a0=("word", w), a1=("word", w2),
                          a2=("model_sq", m), flag=draw(st.integers(0, 5))
                          | draw(st.sampled_from((0, S.SWITCH_INT64))))
            e = draw(st.sampled_from((dict(op=S.OP_STREAM_ACTIVE, a0=("model_sq", m)),
                                      dict(op=S.OP_MODEL_EXECUTE, a0=m),
                                      dict(op=S.OP_MODEL_EXECUTE, a0=len(models)),  # all
                                      switch)))
        elif kind == "update":
            m = draw(st.integers(0, len(models) - 1))
            e = dict(op=S.OP_SQE_UPDATE, a0=("row", -1, draw(st.integers(0, N_TEMPLATES - 1))),
                     a1=("row", m, draw(st.integers(0, len(models[m]) - 1))), a2=("model_sq", m))
        elif kind == "record":
            ev = draw(st.integers(0, N_EVENTS - 1))
            rec[ev] += 1
            e = dict(op=S.OP_EVENT_RECORD, a0=("event", ev), a1=rec[ev])
        elif kind == "wait":
            ev = draw(st.integers(0, N_EVENTS - 1))
            if rec[ev] == 0:
                e = dict(op=S.OP_NOP)
            else:
                e = dict(op=S.OP_EVENT_WAIT, a0=("event", ev), a1=draw(st.integers(1, rec[ev])))
        elif kind == "notify":
            other = draw(st.integers(0, ns - 1))
            streams[s].append(dict(op=S.OP_NOTIFY_RECORD, a0=("notify", n_notify)))
            streams[other].append(dict(op=S.OP_NOTIFY_WAIT, a0=("notify", n_notify)))
            n_notify += 1
        elif kind == "mwrite":
            w = draw(st.integers(0, N_WORDS - 1))
            wval[w] += 1
            e = dict(op=S.OP_MEM_WRITE_VALUE, a0=("word", w), a1=wval[w], a2=widths[w])
        elif kind == "mwait":
            w = draw(st.integers(0, N_WORDS - 1))
            if wval[w] == 0:
                e = dict(op=S.OP_NOP)
            else:
                e = dict(op=S.OP_MEM_WAIT_VALUE, a0=("word", w), a2=widths[w],
                         a1=draw(st.integers(1, wval[w])), flag=S.WAIT_GEQ)
        else:                                           # rare: may fault or deadlock
            which = draw(st.sampled_from(("future_wait", "wait_reset", "event_reset", "oob_kernel",
                                          "bad_memset", "mwait_other", "bad_switch")))
            ev = draw(st.integers(0, N_EVENTS - 1))
            if which == "future_wait":
                e = dict(op=S.OP_EVENT_WAIT, a0=("event", ev), a1=rec[ev] + 1)
            elif which == "wait_reset":
                e = dict(op=S.OP_EVENT_WAIT, a0=("event", ev), a1=max(rec[ev], 1),
                         flag=S.WAIT_RESET)
            elif which == "event_reset":
                e = dict(op=S.OP_EVENT_RESET, a0=("event", ev))
            elif which == "oob_kernel":
                e = dict(op=S.OP_KERNEL, a0=EASY, a1=("args_oob", 0), a2=8,
                         blocks=draw(st.integers(1, 3)))
            elif which == "bad_memset":
                e = dict(op=S.OP_MEMSET, a0=0x1000, a1=1, a2=8)
            elif which == "bad_switch":                 # an unmapped left or right value
                e = dict(op=S.OP_STREAM_SWITCH, a0=draw(st.sampled_from((0x1000, ("word", 0)))),
                         a1=0x2000, a2=0)
            else:
                w = draw(st.integers(0, N_WORDS - 1))
                e = dict(op=S.OP_MEM_WAIT_VALUE, a0=("word", w), a2=widths[w],
                         a1=draw(st.integers(0, 3)), flag=draw(st.sampled_from((1, 2, 3))))
        if e is not None:
            streams[s].append(e)
    sqs = []
    for s in range(ns):
        n = len(streams[s])
        depth = n + draw(st.integers(0, 3)) or 1
        sqs.append(dict(depth=depth, start=draw(st.integers(0, 2 * depth)),
                        dispatch=draw(st.sampled_from((0, 300, 1500))),
                        stop_on_fail=draw(st.booleans()),
                        gaps=[draw(st.sampled_from((0, 0, 0, 250, 5000))) for _ in range(n)]))
    dev = dict(trace=draw(st.sampled_from((0, 1, 3, 64))), n_notify=n_notify,
               phase=draw(st.sampled_from(("none", "horizon", "stop_pos", "stop_slot"))),
               horizon=draw(st.integers(0, 20_000)), stop_stream=draw(st.integers(0, ns - 1)),
               stop_pos=draw(st.integers(0, 10)), stop_event=draw(st.integers(0, N_EVENTS - 1)),
               stop_value=draw(st.integers(1, 3)), models=models, templates=templates,
               model_dispatch=draw(st.sampled_from((0, 300))),
               slice_steps=draw(st.sampled_from((0, 0, 1, 3, 7))),
               record=draw(st.sampled_from((None, None, (8, 8), (1 << 10, 1 << 10)))),
               # kernels share the cores (few, so they often wait), some busy from the start
               contention=draw(st.booleans()), cores=draw(st.sampled_from((1, 2, 3, 200))),
               busy=[draw(st.sampled_from((0, 0, 4000))) for _ in range(3)])
    return streams, sqs, dev


def build(program) -> tuple[DeviceState, list[tuple[int, int, int, int]]]:
    streams, sq_specs, dev = program
    d = small_device(trace_capacity=max(dev["trace"], 1))
    d.set_tracing(dev["trace"] > 0)
    if dev.get("contention"):
        d.set_contention(True)
        for u, t in enumerate((T_AIC_CORES, T_AIV_CORES, T_AICPU_CORES)):
            d.tc[t] = dev["cores"]
            b = E.E_POOL + u * E.P_STRIDE        # a ring of 2 cores from slot 1: the
            d.st[b], d.st[b + 1] = 2, 1            # first free at 0, the other at ``busy``
            d.st[b + 2], d.st[b + 3] = dev["busy"][u], 0
    bufs = [d.mem.malloc(BUF) for _ in range(N_BUFS + 1)]
    for i, b in enumerate(bufs[:N_BUFS]):
        d.mem.view(b, BUF)[:] = np.arange(BUF, dtype=np.uint8) * (i + 1)
    words = bufs[WORDS]
    argv = d.mem.malloc(8 * len(bufs))
    for i, b in enumerate(bufs):
        put_i64(d, argv + 8 * i, b)
    small = d.mem.malloc(4)              # EasyOPf on it faults from block 1 on
    args_oob = d.mem.malloc(8)
    put_i64(d, args_oob, small)
    events = [d.alloc_slot() for _ in range(N_EVENTS)]
    notifies = [d.alloc_slot() for _ in range(dev["n_notify"])]
    model_sqs = [d.alloc_sq(len(rows), kind=E.K_MODEL, dispatch_ns=dev["model_dispatch"])
                 for rows in dev["models"]]
    template_sq = d.alloc_sq(N_TEMPLATES, kind=E.K_MODEL)     # never started: a row store
    d.set_model_heads([[m] for m in model_sqs] + [model_sqs])

    def resolve(v):
        if not isinstance(v, tuple):
            return v
        tag = v[0]
        if tag == "args":
            return argv + 8 * v[1]
        if tag == "args_oob":
            return args_oob
        if tag == "buf":
            return bufs[v[1]] + v[2]
        if tag == "word":
            return words + 8 * v[1]
        if tag == "event":
            return events[v[1]]
        if tag == "model_sq":
            return model_sqs[v[1]]
        if tag == "row":
            return d.row_of(template_sq if v[1] < 0 else model_sqs[v[1]], v[2])
        return notifies[v[1]]

    for q, rows in zip(model_sqs + [template_sq], dev["models"] + [dev["templates"]]):
        for i, row in enumerate(rows):
            # template rows carry a doorbell time: copied over a runnable model SQ's head, it
            # moves that SQ's next start (the engine re-keys it, the reference rescans)
            t = 1000 * (i + 1) if q == template_sq else 0
            d.push(q, t_submit=t, task_id=i, **{k: resolve(v) for k, v in row.items()})

    qs = []
    for rows, spec in zip(streams, sq_specs):
        q = d.alloc_sq(spec["depth"], dispatch_ns=spec["dispatch"])
        d.sqs[q, E.Q_HEAD] = d.sqs[q, E.Q_TAIL] = spec["start"]
        d.sqs[q, E.Q_STOP_ON_FAIL] = int(spec["stop_on_fail"])
        t = 0
        for i, (row, gap) in enumerate(zip(rows, spec["gaps"])):
            t += gap
            d.push(q, t_submit=t, task_id=(spec["start"] + i) & 0xFFFF,
                   **{k: resolve(v) for k, v in row.items()})
        qs.append(q)
    phases = []
    if dev["phase"] == "horizon":
        phases.append((dev["horizon"], E.STOP_NONE, 0, 0))
    elif dev["phase"] == "stop_pos":
        q = qs[dev["stop_stream"]]
        phases.append((E.INF, E.STOP_SQ_POS, q, int(d.sqs[q, E.Q_HEAD]) + dev["stop_pos"]))
    elif dev["phase"] == "stop_slot":
        phases.append((E.INF, E.STOP_SLOT, events[dev["stop_event"]], dev["stop_value"]))
    phases.append((E.INF, E.STOP_NONE, 0, 0))
    return d, phases


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_programs_run_identically_on_engine_and_reference(program):
    d, phases = build(program)
    _, log = run_both(d, phases, program[2]["slice_steps"], program[2]["record"])
    names = {E.R_IDLE: "idle", E.R_HORIZON: "horizon", E.R_STOPPED: "stopped",
             E.R_DEADLOCK: "deadlock", E.R_FAULT: "fault", E.R_TRACE_FULL: "trace full",
             E.R_STEPS: "step slice"}
    for code in sorted({r for r, _ in log}):
        event(f"returned {names[code]}")
    if program[2]["models"]:
        event("with model SQs")
    if program[2]["contention"]:
        event("with contention")


# ---------------------------------------------------------------- targeted behaviours

def test_deadlock_is_reported_with_a_parked_sq():
    d = small_device()
    a, b = d.alloc_slot(), d.alloc_slot()
    ok, q1, q2 = d.alloc_sq(4), d.alloc_sq(4), d.alloc_sq(4)
    fill(d, ok, [dict(op=S.OP_NOP, t_submit=0)])
    fill(d, q1, [dict(op=S.OP_EVENT_WAIT, a0=b, a1=1, t_submit=0),
                 dict(op=S.OP_EVENT_RECORD, a0=a, a1=1, t_submit=0)])
    fill(d, q2, [dict(op=S.OP_EVENT_WAIT, a0=a, a1=1, t_submit=0),
                 dict(op=S.OP_EVENT_RECORD, a0=b, a1=1, t_submit=0)])
    eng, log = run_both(d)
    assert log[-1][0] == E.R_DEADLOCK
    sqs, st_ = eng[SQS], eng[ST]
    q = int(st_[E.E_SQ])
    assert q == q1
    assert sqs[q, E.Q_STATE] == E.S_PARKED and sqs[q, E.Q_WAIT] == b
    assert d.run() == E.R_DEADLOCK and d.st[E.E_SQ] == q1


def test_out_of_bounds_kernel_faults_and_the_run_resumes():
    d = small_device()
    x = d.mem.malloc(4)
    argv = d.mem.malloc(8)
    put_i64(d, argv, x)
    q = d.alloc_sq(4)
    fill(d, q, [dict(op=S.OP_KERNEL, a0=EASY, a1=argv, a2=8, blocks=2, t_submit=0),
                dict(op=S.OP_KERNEL, a0=EASY, a1=argv, a2=8, blocks=1, t_submit=0)])
    eng, log = run_both(d)
    r, st_ = log[0]
    assert r == E.R_FAULT
    assert (st_[E.E_SQ], st_[E.E_POS], st_[E.E_FKIND]) == (q, 0, E.F_KERNEL_OOB)
    assert (st_[E.E_INFO], st_[E.E_INFO2]) == (x + 4, 4)
    assert log[-1][0] == E.R_IDLE
    assert u32_at(eng[MEM], d, x)[0] == 2             # block 0 of both launches ran
    assert d.run() == E.R_IDLE
    assert [(f.sq, f.pos, f.kind, f.kernel) for f in d.faults] == [(q, 0, E.F_KERNEL_OOB, EASY)]


def test_full_trace_grows_in_device_state_run(monkeypatch):
    rows = {}
    for impl in (E.run, R.run):
        monkeypatch.setattr(E, "run", impl)       # the reference is a drop-in for the engine
        d = small_device(trace_capacity=4)
        d.set_tracing(True)
        q = d.alloc_sq(32)
        fill(d, q, [dict(op=S.OP_NOP, t_submit=0, task_id=i) for i in range(20)])
        assert d.run() == E.R_IDLE
        assert len(d.trace) == 32
        rows[impl] = d.trace_rows().copy()
    assert np.array_equal(rows[E.run], rows[R.run])
    assert list(rows[R.run]["pos"]) == list(range(20))
    assert list(rows[R.run]["task_id"]) == list(range(20))


def test_stream_active_replays_a_model_sq_which_then_goes_idle():
    d = small_device()
    x = d.mem.malloc(4)
    argv = d.mem.malloc(8)
    put_i64(d, argv, x)
    done = d.alloc_slot()
    m = d.alloc_sq(2, kind=E.K_MODEL, dispatch_ns=300)
    fill(d, m, [dict(op=S.OP_KERNEL, a0=EASY, a1=argv, a2=8, blocks=1, t_submit=0),
                dict(op=S.OP_END_GRAPH, a0=done, t_submit=0)])
    q = d.alloc_sq(8)
    wait = dict(op=S.OP_EVENT_WAIT, a0=done, a1=1, flag=S.WAIT_RESET, t_submit=0)
    fill(d, q, [dict(op=S.OP_STREAM_ACTIVE, a0=m, t_submit=0), wait,
                dict(op=S.OP_STREAM_ACTIVE, a0=m, t_submit=0), wait])
    eng, log = run_both(d)
    sqs = eng[SQS]
    assert log[-1][0] == E.R_IDLE
    assert u32_at(eng[MEM], d, x)[0] == 2
    assert sqs[m, E.Q_STATE] == E.S_IDLE and sqs[m, E.Q_HEAD] == 2 and sqs[m, E.Q_DONE] == 4
    assert sqs[q, E.Q_HEAD] == 4


@pytest.mark.parametrize("cond, left, right, dtype, taken", [
    (S.SWITCH_EQ, 1, 1, 0, True), (S.SWITCH_EQ, 1, 2, 0, False),
    (S.SWITCH_NE, 1, 2, 0, True), (S.SWITCH_GT, -1, -2, 0, True),
    (S.SWITCH_GE, 2, 2, S.SWITCH_INT64, True), (S.SWITCH_LT, -5, 3, 0, True),
    (S.SWITCH_LE, 1 << 40, 0, S.SWITCH_INT64, False), (S.SWITCH_LE, 1 << 40, 0, 0, True),
])
def test_stream_switch_starts_the_true_sq_and_stops_its_own(cond, left, right, dtype, taken):
    """STREAM_SWITCH compares signed 4- or 8-byte values (1 << 40 is 0 as an int32); taken, the
    target SQ runs from position 0 and the switching SQ skips the rest of its SQEs."""
    d = small_device()
    lv, rv, x = d.mem.malloc(8), d.mem.malloc(8), d.mem.malloc(4)
    put_i64(d, lv, left)
    put_i64(d, rv, right)
    argv = d.mem.malloc(8)
    put_i64(d, argv, x)
    target = d.alloc_sq(1, kind=E.K_MODEL)
    fill(d, target, [dict(op=S.OP_KERNEL, a0=EASY, a1=argv, a2=8, blocks=1, t_submit=0)])
    q = d.alloc_sq(8)
    fill(d, q, [dict(op=S.OP_STREAM_SWITCH, a0=lv, a1=rv, a2=target, flag=cond | dtype,
                     t_submit=0),
                dict(op=S.OP_KERNEL, a0=EASY, a1=argv, a2=8, blocks=1, t_submit=0),
                dict(op=S.OP_KERNEL, a0=EASY, a1=argv, a2=8, blocks=1, t_submit=0)])
    d.set_tracing(True)
    eng, log = run_both(d)
    assert log[-1][0] == E.R_IDLE
    assert u32_at(eng[MEM], d, x)[0] == (1 if taken else 2)
    assert eng[SQS][q, E.Q_HEAD] == 3 and eng[SQS][q, E.Q_DONE] == (1 if taken else 3)
    assert eng[SQS][target, E.Q_DONE] == (1 if taken else 0)


def test_stream_switch_on_an_unmapped_value_faults():
    d = small_device()
    lv = d.mem.malloc(8)
    target = d.alloc_sq(1, kind=E.K_MODEL)
    q = d.alloc_sq(2)
    fill(d, q, [dict(op=S.OP_STREAM_SWITCH, a0=lv, a1=0x1000, a2=target, t_submit=0)])
    eng, log = run_both(d)
    assert log[0][0] == E.R_FAULT
    assert eng[ST][E.E_FKIND] == E.F_BAD_ADDRESS and eng[ST][E.E_INFO] == 0x1000


def _label_list(d, slots) -> int:
    """A label list (16 bytes a slot: SQ, position as int64; -1 unset) in device memory."""
    lst = d.mem.malloc(16 * len(slots))
    d.mem.view(lst, 16 * len(slots))[:] = np.array(
        [w for sq_pos in slots for w in (sq_pos or (-1, -1))], np.int64).view(np.uint8)
    return lst


@pytest.mark.parametrize("index, max_value, kernels_run", [(0, 3, 3), (1, 3, 2), (2, 3, 1),
                                                          (9, 3, 1), (9, 1, 3)])
def test_label_switch_jumps_ahead_within_its_sq(index, max_value, kernels_run):
    """LABEL_SWITCH: the uint32 index, clamped to max - 1, picks the slot; the SQ goes on at its
    position (labels at 1, 3, 5: each a NOP before a kernel)."""
    d = small_device()
    x, idx, argv = d.mem.malloc(4), d.mem.malloc(4), d.mem.malloc(8)
    d.mem.view(idx, 4)[:] = np.array([index], np.uint32).view(np.uint8)
    put_i64(d, argv, x)
    q = d.alloc_sq(8)
    lst = _label_list(d, [(q, 1), (q, 3), (q, 5)])
    k = dict(op=S.OP_KERNEL, a0=EASY, a1=argv, a2=8, blocks=1, t_submit=0)
    fill(d, q, [dict(op=S.OP_LABEL_SWITCH, a0=idx, a1=max_value, a2=lst, a3=3, t_submit=0),
                dict(op=S.OP_NOP, t_submit=0), k, dict(op=S.OP_NOP, t_submit=0), k,
                dict(op=S.OP_NOP, t_submit=0), k])
    d.set_tracing(True)
    eng, log = run_both(d)
    assert log[-1][0] == E.R_IDLE
    assert u32_at(eng[MEM], d, x)[0] == kernels_run


def test_label_switch_to_another_sq_starts_it_at_the_label():
    d = small_device()
    x, idx, argv = d.mem.malloc(4), d.mem.malloc(4), d.mem.malloc(8)
    put_i64(d, argv, x)
    target = d.alloc_sq(4, kind=E.K_MODEL)
    k = dict(op=S.OP_KERNEL, a0=EASY, a1=argv, a2=8, blocks=1, t_submit=0)
    fill(d, target, [k, dict(op=S.OP_NOP, t_submit=0), k])
    q = d.alloc_sq(4)
    lst = _label_list(d, [(target, 1)])
    fill(d, q, [dict(op=S.OP_LABEL_SWITCH, a0=idx, a1=1, a2=lst, a3=1, t_submit=0), k])
    d.set_tracing(True)
    eng, log = run_both(d)
    assert log[-1][0] == E.R_IDLE
    assert u32_at(eng[MEM], d, x)[0] == 1                      # target's second kernel only
    assert eng[SQS][q, E.Q_DONE] == 1 and eng[SQS][target, E.Q_DONE] == 2


@pytest.mark.parametrize("slots, index, fkind", [
    ([None, None], 1, E.F_LABEL),              # the label is not set
    ([("q", 0)], 0, E.F_LABEL),                # a jump back (to the switch itself)
    ([("q", 2)], 0, None),                     # ahead: runs
])
def test_label_switch_faults(slots, index, fkind):
    d = small_device()
    idx = d.mem.malloc(4)
    d.mem.view(idx, 4)[:] = np.array([index], np.uint32).view(np.uint8)
    q = d.alloc_sq(4)
    lst = _label_list(d, [(q, s[1]) if s else None for s in slots])
    fill(d, q, [dict(op=S.OP_LABEL_SWITCH, a0=idx, a1=len(slots), a2=lst, a3=len(slots),
                     t_submit=0), dict(op=S.OP_NOP, t_submit=0), dict(op=S.OP_NOP, t_submit=0)])
    eng, log = run_both(d)
    if fkind is None:
        assert log[-1][0] == E.R_IDLE
    else:
        assert log[0][0] == E.R_FAULT and eng[ST][E.E_FKIND] == fkind


def test_label_switch_on_an_unmapped_index_faults():
    d = small_device()
    q = d.alloc_sq(2)
    lst = _label_list(d, [None])
    fill(d, q, [dict(op=S.OP_LABEL_SWITCH, a0=0x1000, a1=1, a2=lst, a3=1, t_submit=0)])
    eng, log = run_both(d)
    assert log[0][0] == E.R_FAULT
    assert eng[ST][E.E_FKIND] == E.F_BAD_ADDRESS and eng[ST][E.E_INFO] == 0x1000


def test_model_execute_activates_every_head_sq():
    d = small_device()
    x, y = d.mem.malloc(4), d.mem.malloc(4)
    ax, ay = d.mem.malloc(8), d.mem.malloc(8)
    put_i64(d, ax, x)
    put_i64(d, ay, y)
    d.mem.view(y, 4)[:] = np.array([3], np.uint32).view(np.uint8)
    m1 = d.alloc_sq(1, kind=E.K_MODEL)
    m2 = d.alloc_sq(1, kind=E.K_MODEL)
    fill(d, m1, [dict(op=S.OP_KERNEL, a0=EASY, a1=ax, a2=8, blocks=1, t_submit=0)])
    fill(d, m2, [dict(op=S.OP_KERNEL, a0=SHORT, a1=ay, a2=8, blocks=1, t_submit=0)])
    d.set_model_heads([[m1, m2]])
    q = d.alloc_sq(2)
    fill(d, q, [dict(op=S.OP_MODEL_EXECUTE, a0=0, t_submit=100)])
    eng, log = run_both(d)
    sqs = eng[SQS]
    assert log[-1][0] == E.R_IDLE
    assert u32_at(eng[MEM], d, x)[0] == 1 and u32_at(eng[MEM], d, y)[0] == 6
    exec_end = 100 + int(d.tc[S.OP_MODEL_EXECUTE])
    for mq in (m1, m2):
        assert sqs[mq, E.Q_STATE] == E.S_IDLE
        assert sqs[mq, E.Q_TIME] > exec_end


def test_a_launch_starting_many_sqs_at_once_keeps_the_time_order():
    """One launch starts 13 head SQs while two eager SQs run (the scheduler's tree of runnable
    SQs grows mid-run, several times); equal start times go to the lower SQ index. Every head
    SQ counts into the same word, records its own event, and a third eager SQ waits for all."""
    d = small_device(trace_capacity=1 << 8)
    d.set_tracing(True)
    x = d.mem.malloc(4 * 13)
    heads, slots = [], []
    for i in range(13):
        argv = d.mem.malloc(8)
        put_i64(d, argv, x + 4 * (i % 3))
        m = d.alloc_sq(3, kind=E.K_MODEL, dispatch_ns=(0, 300)[i % 2])
        slot = d.alloc_slot()
        fill(d, m, [dict(op=S.OP_KERNEL, a0=(EASY, SHORT)[i % 2], a1=argv, a2=8, blocks=1,
                         t_submit=0),
                    dict(op=S.OP_EVENT_RECORD, a0=slot, a1=1, t_submit=0)])
        heads.append(m)
        slots.append(slot)
    d.set_model_heads([heads])
    q = d.alloc_sq(4)
    fill(d, q, [dict(op=S.OP_MODEL_EXECUTE, a0=0, t_submit=100),
                dict(op=S.OP_MEMSET, a0=x + 48, a1=1, a2=4, t_submit=100)])
    busy = d.alloc_sq(16)
    fill(d, busy, [dict(op=S.OP_NOP, t_submit=50 * k) for k in range(16)])
    waiter = d.alloc_sq(16)
    fill(d, waiter, [dict(op=S.OP_EVENT_WAIT, a0=sl, a1=1, t_submit=0) for sl in slots])
    eng, log = run_both(d)
    assert log[-1][0] == E.R_IDLE
    assert eng[SQS][waiter, E.Q_HEAD] == 13
    assert all(eng[SQS][m, E.Q_STATE] == E.S_IDLE for m in heads)


def test_ring_positions_wrap_past_the_depth():
    d = small_device()
    d.set_tracing(True)
    x = d.mem.malloc(4)
    argv = d.mem.malloc(8)
    put_i64(d, argv, x)
    q = d.alloc_sq(4)
    for _ in range(4):                     # 12 positions through a ring of 4 rows
        tail = int(d.sqs[q, E.Q_TAIL])
        fill(d, q, [dict(op=S.OP_KERNEL, a0=EASY, a1=argv, a2=8, blocks=1, t_submit=0,
                         task_id=tail + i) for i in range(3)])
        eng, _ = run_both(d)
        assert d.run() == E.R_IDLE
    assert d.sqs[q, E.Q_HEAD] == 12
    assert d.row_of(q, 9) == d.sqs[q, E.Q_BASE] + 1
    assert u32_at(d.mem.arena, d, x)[0] == 12
    rows = d.trace_rows()
    assert list(rows["pos"]) == list(range(12))
    assert list(rows["task_id"]) == list(range(12))


@pytest.mark.parametrize("width,value", [(1, 0x1FF), (2, 0x12345), (4, -1), (8, -5)])
def test_mem_write_value_wakes_a_parked_value_wait(width, value):
    d = small_device()
    w = d.mem.malloc(8)
    waiter, writer = d.alloc_sq(2), d.alloc_sq(2)
    mask = (1 << (8 * width)) - 1
    fill(d, waiter, [dict(op=S.OP_MEM_WAIT_VALUE, a0=w, a1=value & mask if width < 8 else value,
                          a2=width, flag=S.WAIT_EQ, t_submit=0)])
    fill(d, writer, [dict(op=S.OP_MEM_WRITE_VALUE, a0=w, a1=value, a2=width, t_submit=1000)])
    eng, log = run_both(d)
    assert log[-1][0] == E.R_IDLE
    assert eng[SQS][waiter, E.Q_HEAD] == 1


def test_a_body_built_mid_turn_keeps_the_turn():
    """A rare opcode's first use stops the engine before the SQE (R_NEED_BODY) in the middle of
    its SQ's turn; the next run goes on with that turn. Here the writer's MEM_WRITE_VALUE starts
    at 4,000 ns, before the waiter's MEM_WAIT_VALUE (5,000): the wait finds the word written and
    pays no wakeup."""
    d = small_device()
    w = d.mem.malloc(8)
    waiter, writer = d.alloc_sq(2), d.alloc_sq(2)
    fill(d, waiter, [dict(op=S.OP_MEM_WAIT_VALUE, a0=w, a1=1, a2=8, flag=S.WAIT_GEQ,
                          t_submit=5000)])
    fill(d, writer, [dict(op=S.OP_NOP, t_submit=0),
                     dict(op=S.OP_MEM_WRITE_VALUE, a0=w, a1=1, a2=8, t_submit=4000)])
    cold = [a.copy() for a in engine_args(d)]
    cold[ST][E.E_BODY:E.E_NEED] = 0
    assert E.run(*cold) == E.R_NEED_BODY
    assert cold[SQS][writer, E.Q_HEAD] == 1 and cold[ST][E.E_RESUME] == writer + 1
    E.provide(cold[ST])
    r = E.run(*cold)
    while r == E.R_NEED_BODY:               # then the wait's own body
        E.provide(cold[ST])
        r = E.run(*cold)
    assert r == E.R_IDLE
    eng, log = run_both(d)
    assert log[-1][0] == E.R_IDLE
    for x, y in zip(R.outcome(cold), R.outcome(eng)):
        assert np.array_equal(x, y)
    assert eng[SQS][waiter, E.Q_TIME] == 5000 + d.tc[S.OP_MEM_WAIT_VALUE]   # no wakeup
    assert eng[ST][E.E_RESUME] == 0


def test_a_synchronization_at_a_tie_ends_the_turn():
    """The canonical tie order (docs/architecture.md §5, "Run-ahead"): the writer's
    MEM_WRITE_VALUE starts at 5,000 ns, exactly when the waiter's MEM_WAIT_VALUE does. A
    synchronization that ties another SQ's next start ends the turn, and the lower SQ (the
    waiter) runs first: parked, then woken a wakeup later — with and without run-ahead, in the
    engine and the oracle alike."""
    for exact in (0, 1):
        d = small_device()
        d.set_exact_order(bool(exact))
        w = d.mem.malloc(8)
        waiter, writer = d.alloc_sq(2), d.alloc_sq(2)
        fill(d, waiter, [dict(op=S.OP_MEM_WAIT_VALUE, a0=w, a1=1, a2=8, flag=S.WAIT_GEQ,
                              t_submit=5000)])
        fill(d, writer, [dict(op=S.OP_NOP, t_submit=0),
                         dict(op=S.OP_MEM_WRITE_VALUE, a0=w, a1=1, a2=8, t_submit=5000)])
        eng, log = run_both(d)
        assert log[-1][0] == E.R_IDLE
        assert eng[SQS][waiter, E.Q_TIME] == (5000 + d.tc[S.OP_MEM_WAIT_VALUE]
                                              + d.tc[T_WAKEUP])


def test_device_state_builds_a_missing_body_once_and_runs_on(monkeypatch):
    """``DeviceState.run`` answers R_NEED_BODY by building the body (``engine.provide``) and
    running again; the address stays in the device's state, so the next run needs no round trip."""
    d = small_device()
    w = d.mem.malloc(8)
    q = d.alloc_sq(4)
    d.st[E.E_BODY:E.E_NEED] = 0
    codes = []
    run = E.run

    def counted(*args):
        codes.append(int(run(*args)))
        return codes[-1]

    monkeypatch.setattr(E, "run", counted)
    fill(d, q, [dict(op=S.OP_MEM_WRITE_VALUE, a0=w, a1=7, a2=8, t_submit=0)])
    assert d.run() == E.R_IDLE
    assert codes == [E.R_NEED_BODY, E.R_IDLE]
    assert d.st[E.E_BODY + E.B_MEM_WRITE_VALUE] == E.body(E.B_MEM_WRITE_VALUE).address
    assert d.st[E.E_RESUME] == 0
    fill(d, q, [dict(op=S.OP_MEM_WRITE_VALUE, a0=w, a1=9, a2=8, t_submit=0)])
    assert d.run() == E.R_IDLE
    assert codes[2:] == [E.R_IDLE]
    assert int(d.mem.view(w, 8).view(np.int64)[0]) == 9


def test_threads_building_a_body_at_once_share_one(monkeypatch):
    """``engine.body`` from several threads at once hands them all the same cfunc (one compile;
    the address every device keeps is that of the cfunc the process holds)."""
    import threading
    monkeypatch.setattr(bodies, "_BUILT", {})
    got, go = [], threading.Barrier(4)

    def build():
        go.wait()
        got.append(E.body(E.B_STREAM_SWITCH))

    threads = [threading.Thread(target=build) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 4 and all(f is got[0] for f in got)
    assert bodies._BUILT[E.B_STREAM_SWITCH] is got[0]


@pytest.mark.parametrize("writer_op", ["memset", "memcpy", "kernel"])
def test_data_writes_wake_a_parked_value_wait(writer_op):
    d = small_device()
    w, one, argv = d.mem.malloc(8), d.mem.malloc(8), d.mem.malloc(8)
    put_i64(d, one, 1)
    put_i64(d, argv, w)
    waiter, writer = d.alloc_sq(2), d.alloc_sq(2)
    fill(d, waiter, [dict(op=S.OP_MEM_WAIT_VALUE, a0=w, a1=1, a2=4, flag=S.WAIT_GEQ,
                          t_submit=0)])
    write = {"memset": dict(op=S.OP_MEMSET, a0=w, a1=1, a2=1),
             "memcpy": dict(op=S.OP_MEMCPY, a0=w, a1=one, a2=4),
             "kernel": dict(op=S.OP_KERNEL, a0=EASY, a1=argv, a2=8, blocks=1)}[writer_op]
    fill(d, writer, [dict(write, t_submit=1000)])
    eng, log = run_both(d)
    assert log[-1][0] == E.R_IDLE
    assert eng[SQS][waiter, E.Q_HEAD] == 1


def test_reference_takes_the_engine_arguments():
    """The engine's parameters, in order; then only keyword-only extras (``stats``)."""
    params = inspect.signature(R.run).parameters
    assert list(params)[:len(PARAMS)] == PARAMS
    assert all(p.kind is p.KEYWORD_ONLY for p in list(params.values())[len(PARAMS):])


def test_unknown_opcode_faults():
    d = small_device()
    q = d.alloc_sq(2)
    fill(d, q, [dict(op=S.N_OPCODES + 3, t_submit=0), dict(op=S.OP_NOP, t_submit=0)])
    eng, log = run_both(d)
    r, st_ = log[0]
    assert r == E.R_FAULT and st_[E.E_FKIND] == E.F_BAD_OP and st_[E.E_INFO] == S.N_OPCODES + 3
    assert log[-1][0] == E.R_IDLE and eng[SQS][q, E.Q_HEAD] == 2


def _while_loop(counter: int, bound: int) -> tuple[DeviceState, int, int]:
    """A WHILE cond whose body (a model SQ) runs CountDown(counter, cond word)."""
    d = small_device()
    d.set_tracing(True)
    word, cnt, argv = d.mem.malloc(8), d.mem.malloc(8), d.mem.malloc(16)
    put_i64(d, word, 1)
    put_i64(d, cnt, counter)
    put_i64(d, argv, cnt)
    put_i64(d, argv + 8, word)
    done = d.alloc_slot()
    body = d.alloc_sq(2, kind=E.K_MODEL, dispatch_ns=300)
    fill(d, body, [dict(op=S.OP_KERNEL, a0=COUNT_DOWN, a1=argv, a2=16, blocks=1, t_submit=0),
                   dict(op=S.OP_END_GRAPH, a0=done, t_submit=0)])
    d.set_model_heads([[body]])
    d.set_conds([(word, E.COND_WHILE, 1, 0, bound)], [0])
    q = d.alloc_sq(4)
    fill(d, q, [dict(op=S.OP_COND_FIRST, a0=0, t_submit=0),
                dict(op=S.OP_COND_NOTIFY_WAIT, a0=done, t_submit=0),
                dict(op=S.OP_COND_JUMP_BACK, a0=0, t_submit=0),
                dict(op=S.OP_NOP, t_submit=0)])
    return d, cnt, q


def test_while_cond_loops_until_its_word_is_zero():
    d, cnt, q = _while_loop(counter=3, bound=100)
    eng, log = run_both(d)
    assert log[-1][0] == E.R_IDLE
    off = d.mem.to_off(cnt)
    assert eng[MEM][off:off + 8].view(np.int64)[0] == 0
    assert eng[SQS][q, E.Q_HEAD] == 4


def test_runaway_while_cond_faults_at_its_bound():
    d, _, q = _while_loop(counter=50, bound=3)
    eng, log = run_both(d)
    r, st_ = log[0]
    assert r == E.R_FAULT and st_[E.E_FKIND] == E.F_RUNAWAY and st_[E.E_SQ] == q


@pytest.mark.skipif(not numba.config.BOUNDSCHECK, reason="only under NUMBA_BOUNDSCHECK=1")
def test_an_out_of_range_index_raises_under_boundscheck():
    """The run of this file under NUMBA_BOUNDSCHECK=1 (test_engine_boundscheck.py) does check
    the engine's indexing: a sync slot past the table raises instead of writing past it."""
    d = small_device()
    q = d.alloc_sq(2)
    fill(d, q, [dict(op=S.OP_EVENT_RECORD, a0=len(d.sync) + 5, a1=1, t_submit=0)])
    with pytest.raises(IndexError):
        E.run(*engine_args(d))


@pytest.mark.skipif(not numba.config.BOUNDSCHECK, reason="only under NUMBA_BOUNDSCHECK=1")
def test_an_out_of_range_index_in_a_body_raises_under_boundscheck():
    """A rare opcode's body is a cfunc, which cannot raise: numba prints its exception and
    returns. The engine sees the body's results were never written and raises instead of
    running on with stale ones (an SQE_UPDATE whose row is far past the pool)."""
    d = small_device()
    q = d.alloc_sq(2)
    fill(d, q, [dict(op=S.OP_SQE_UPDATE, a0=0, a1=1 << 40, a2=-1, t_submit=0)])
    args = engine_args(d)
    with pytest.raises(RuntimeError, match="body raised"):
        while E.run(*args) == E.R_NEED_BODY:
            E.provide(args[ST])


def test_a_stale_resume_word_is_ignored():
    """E_RESUME is the turn an R_NEED_BODY broke off. The engine goes on with it only while its
    SQ could run within that turn's limit and the horizon: here the horizon moved, and the run
    picks as if the word were not there. (``DeviceState.run`` clears the word before a run of
    its own: there it is always stale, left by a run that was interrupted.)"""
    d = small_device()
    early, late = d.alloc_sq(2), d.alloc_sq(2)
    fill(d, early, [dict(op=S.OP_NOP, t_submit=0)])
    fill(d, late, [dict(op=S.OP_NOP, t_submit=1_000_000)])
    args = engine_args(d)
    args[ST][E.E_RESUME], args[ST][E.E_RESUME_LIMIT] = late + 1, E.INF
    args[ST][E.E_HORIZON] = 10_000
    assert E.run(*args) == E.R_HORIZON
    assert args[SQS][early, E.Q_HEAD] == 1 and args[SQS][late, E.Q_HEAD] == 0
    assert args[ST][E.E_RESUME] == 0


def test_reference_counts_scheduler_turns():
    """``reference.run(..., stats=)`` counts turns: one SQ runs all its SQEs in one turn; two
    SQs whose SQEs are submitted in alternation (a at 0, 1,000, 2,000 ns; b at 500, 1,500,
    2,500) take turns SQE by SQE in exact order (a turn ends once its SQ's next start is later
    than the other's), and one turn each when they run ahead (private SQEs, no synchronization)."""
    d = small_device()
    q = d.alloc_sq(16)
    fill(d, q, [dict(op=S.OP_NOP, t_submit=0) for _ in range(10)])
    stats: dict = {}
    assert R.run(*engine_args(d), stats=stats) == E.R_IDLE
    assert stats == {"turns": 1} and d.st[E.E_STEPS] == 10

    for exact, turns in ((True, 6), (False, 2)):
        d = small_device()
        d.set_exact_order(exact)
        a, b = d.alloc_sq(8), d.alloc_sq(8)
        for s, t0 in ((a, 0), (b, 500)):
            fill(d, s, [dict(op=S.OP_NOP, t_submit=t0 + 1_000 * i) for i in range(3)])
        stats = {}
        assert R.run(*engine_args(d), stats=stats) == E.R_IDLE
        assert stats["turns"] == turns and d.st[E.E_STEPS] == 6


@pytest.mark.parametrize("records,mode,value,clear,released", [
    ([(S.CNT_RECORD_ADD, 1)] * 3, S.CNT_WAIT_GEQ, 3, 1, True),
    ([(S.CNT_RECORD_ADD, 1)] * 2, S.CNT_WAIT_GEQ, 3, 0, False),
    ([(S.CNT_RECORD_SET, 9), (S.CNT_RECORD_AND, 3)], S.CNT_WAIT_LESS, 4, 0, True),
    ([(S.CNT_RECORD_SET, 9)], S.CNT_WAIT_LESS, 4, 0, True),          # 0 < 4 before the record
    ([(S.CNT_RECORD_SET, 9)] * 2, S.CNT_WAIT_EQ, 0, 0, True),        # the same: 0 == 0
    ([(S.CNT_RECORD_SET, 6), (S.CNT_RECORD_AND, 4)], S.CNT_WAIT_EQ, 5, 0, False),
    ([(S.CNT_RECORD_ADD, 0xFFFFFFFF), (S.CNT_RECORD_ADD, 6)], S.CNT_WAIT_BIGGER, 4, 0, True),
    ([(S.CNT_RECORD_OR, 4), (S.CNT_RECORD_OR, 1)], S.CNT_WAIT_MASK, 5, 1, True),
    ([(S.CNT_RECORD_SET, 6), (S.CNT_RECORD_SET, 5)], S.CNT_WAIT_EQ, 5, 0, True)])
def test_counting_notify_records_and_waits_agree(records, mode, value, clear, released):
    """Counting notifies (EVENT_RECORD / EVENT_WAIT with sqe.CNT): the counter's record modes
    (set, uint32 add, or, and: it may go down) and the wait's conditions, re-checked at every
    record, on the engine and the reference alike; isClear (WAIT_RESET) empties it."""
    d = small_device()
    slot = d.alloc_slot()
    waiter, writer = d.alloc_sq(2), d.alloc_sq(4)
    fill(d, waiter, [dict(op=S.OP_EVENT_WAIT, a0=slot, a1=value,
                          flag=S.CNT | (mode << 1) | clear, t_submit=0)])
    fill(d, writer, [dict(op=S.OP_EVENT_RECORD, a0=slot, a1=v, flag=S.CNT | m,
                          t_submit=1000 * (i + 1)) for i, (m, v) in enumerate(records)])
    eng, _ = run_both(d)
    assert (eng[SQS][waiter, E.Q_HEAD] == 1) == released
    sync = eng[PARAMS.index("sync")]
    if released and clear:
        assert sync[slot, E.Y_VAL] == 0
