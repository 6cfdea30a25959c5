"""Python work per host call, counted instead of timed: bytecodes executed per call of each hot
call of the peer program (``bench/test_simpy_peer.py``), eager and captured, through ``npusim.acl``.

Wall-clock figures of one call on this 2-core shared machine move by +-15 % between identical
runs; the count of Python opcodes a call executes (``sys.settrace`` with ``f_trace_opcodes``) is
the same every run, so an A/B of a hot-path change shows in it exactly. It is a proxy: opcodes
differ in cost (a call into C counts one), a Python frame costs more than its opcodes say. The
table splits each call by function (``B:`` is the facade's generated argument-boundary wrapper,
``_boundary.py``). Run:

    pytest -p no:nbmake -o addopts="" bench/test_host_opcodes.py -s --benchmark-only

Measured (session 5, per call; before -> after the per-kernel argument-check memo and the
launch core's removed re-tests): aclrtLaunchKernel eager 429 -> 407, captured 451 -> 435;
aclrtStreamWaitEvent eager 377 -> 371, captured 464 -> 458; aclrtRecordEvent eager 374, captured
588; memset_async 485; memcpy_async 480 (unchanged).

Session 6 (one-shift integer range tests in the boundary, per-kind handle lookups, one
thread-local read for the current context, memset's one-frame device check): launch eager 407 ->
347, captured 435.5 -> 390.5; record eager 374 -> 339, captured 588 -> 561 (its sync slot is
zeroed through a memoryview: more opcodes, ~115 ns less); wait eager 371 -> 337, captured 458 ->
424; memset_async 485 -> 374; memcpy_async 480 -> 432 (the handle lookups' last step, reading
each lookup as an attribute before calling it, costs 6 opcodes and saves ~20 ns a launch). Opcodes are a proxy: the same session's
wall clock moved ~8-10 % on the 8-stream program, not 12-16 % (the removed opcodes were cheap
ones; a facade call's RLock, thread-local read and ``pack_into`` are single opcodes).
"""
from __future__ import annotations

import collections
import sys

from npusim import acl

from test_simpy_peer import BLOCK, Program, _ok

CALLS = 64


def _count(run, n: int) -> collections.Counter:
    counts: collections.Counter = collections.Counter()

    def tracer(frame, event, arg):
        frame.f_trace_opcodes = True
        code = frame.f_code
        if event == "opcode" and code.co_filename != __file__:   # the calls, not this loop
            counts[("B:" if code.co_filename.endswith("_boundary.py") else "")
                   + code.co_qualname] += 1
        return tracer
    sys.settrace(tracer)
    try:
        run(n)
    finally:
        sys.settrace(None)
    return counts


def test_opcodes_per_host_call(benchmark, bench_report):
    p = Program()
    assert p.issue(2 * BLOCK) == 0
    p.sync()
    s0, s1, easy, a, evs = p.streams[0], p.streams[1], p.easy, p.args[0], p.events
    launch, record, wait = acl.rt.launch_kernel, acl.rt.record_event, acl.rt.stream_wait_event
    calls = {
        "launch": lambda cap: lambda n: [launch(easy, 1, a, 8, s0) for _ in range(n)],
        "record": lambda cap: lambda n: [record(evs[i % 8], s0) for i in range(n)],
        "wait": lambda cap: lambda n: [wait(s0 if cap else s1, evs[0]) for _ in range(n)],
        "memset": lambda cap: lambda n: [acl.rt.memset_async(p.dst, 64, i & 0xFF, 64, s0)
                                         for i in range(n)],
        "memcpy": lambda cap: lambda n: [acl.rt.memcpy_async(p.dst, 64, p.src, 64,
                                                             acl.ACL_MEMCPY_DEVICE_TO_DEVICE, s0)
                                         for _ in range(n)],
    }
    rows = []

    def measure():
        rows.clear()
        for kind, make in calls.items():
            for cap in (False, True):
                if cap and kind in ("memset", "memcpy"):
                    continue
                if cap:
                    _ok(acl.mdl.ri_capture_begin(s0, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL))
                for e in evs:
                    _ok(record(e, s0))
                run = make(cap)
                run(40)                                   # warm: memos, staged rings
                counts = _count(run, CALLS)
                if cap:
                    _ok(acl.mdl.ri_destroy(_ok(*acl.mdl.ri_capture_end(s0))))
                else:
                    _ok(acl.rt.synchronize_device())
                rows.append((f"{kind} {'captured' if cap else 'eager'}", counts))
    benchmark.pedantic(measure, rounds=1, iterations=1)
    for name, counts in rows:
        total = sum(counts.values()) / CALLS
        top = ", ".join(f"{k} {v / CALLS:.0f}" for k, v in counts.most_common(5))
        benchmark.extra_info[name] = round(total, 1)
        bench_report(f"[opcodes] {name:<16} {total:6.1f} per call  ({top})")
