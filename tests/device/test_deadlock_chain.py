"""Deadlock and runaway-WHILE explanations: the wait-for chain from a blocked stream through who
records what it waits on, to a cycle or to a wait nothing can satisfy, with the source lines that
issued each task (when recorded); a runaway WHILE names the handle, its value and its loop."""
from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest

import npusim as ns
from npusim import acl

HERE = pathlib.Path(__file__)


def at(tag: str) -> str:
    for i, text in enumerate(HERE.read_text().splitlines(), 1):
        if text.rstrip().endswith(tag):
            return f"{HERE.name}:{i}"
    raise AssertionError(tag)


def chain_of(msg: str) -> str:
    assert "wait-for chain:" in msg, msg
    return msg.split("wait-for chain:", 1)[1]


def test_three_stream_event_cycle_shows_the_whole_chain_with_lines():
    dev = ns.Device()
    s1, s2, s3 = dev.stream(), dev.stream(), dev.stream()
    a, b, c = (dev.event(kind="flag") for _ in range(3))
    with ns.analysis.record():
        s1.wait(b)                       # @W1
        s1.record(a)                     # @R1
        s2.wait(c)                       # @W2
        s2.record(b)                     # @R2
        s3.wait(a)                       # @W3
        s3.record(c)                     # @R3
        with pytest.raises(ns.errors.AclTimeoutError) as ei:
            s1.synchronize()
    msg = str(ei.value)
    chain = chain_of(msg)
    hops = [ln.strip() for ln in chain.strip().splitlines()]
    assert len(hops) == 4                                  # s1, ← s2, ← s3, ← s1 (cycle)
    assert hops[0].startswith("stream 1") and at("# @W1") in hops[0]
    assert f"event 0x{b.handle:x}" in hops[0]
    assert hops[1].startswith("← recorded by stream 2") and at("# @R2") in hops[1]
    assert at("# @W2") in hops[1] and f"event 0x{c.handle:x}" in hops[1]
    assert hops[2].startswith("← recorded by stream 3") and at("# @R3") in hops[2]
    assert at("# @W3") in hops[2]
    assert hops[3].startswith("← recorded by stream 1") and at("# @R1") in hops[3]
    assert "a cycle (stream 1 → stream 2 → stream 3 → stream 1)" in hops[3]
    assert msg.count("wait-for chain") == 1                # one chain covers the cycle


def test_chain_through_a_notify_to_a_wait_nobody_satisfies():
    dev = ns.Device()
    s1, s2, s3 = dev.stream(), dev.stream(), dev.stream()
    a, never = dev.event(kind="flag"), dev.event(kind="flag")
    n, ret = acl.rt.create_notify(0)
    assert ret == 0
    s1.wait(a)
    s2.wait(never)                                         # nothing will record `never`
    acl.rt.record_notify(n, s2.handle)
    acl.rt.wait_and_reset_notify(n, s3.handle)
    s3.record(a)
    with pytest.raises(ns.AclError) as ei:
        s1.synchronize()
    chain = chain_of(str(ei.value))
    assert re.search(r"stream 1 \(device 0\) is blocked at task 0 on event", chain)
    assert "← recorded by stream 3 (device 0) at task 1, which is blocked at task 0 on " \
           f"notify 0x{n:x}" in chain
    assert "← recorded by stream 2 (device 0) at task 1, which is blocked at task 0 on " \
           f"event 0x{never.handle:x}" in chain
    assert f"← nothing queued on any stream records event 0x{never.handle:x}" in chain
    assert "[" not in chain                                # nothing recorded: no lines


def test_wait_on_a_record_inside_a_graph_that_was_never_launched():
    dev = ns.Device()
    cap, s1, exe = dev.stream(), dev.stream(), dev.stream()
    n, _ = acl.rt.create_notify(0)
    x = dev.malloc(64)
    with ns.analysis.record():
        with ns.graph(stream=cap) as g:
            cap.launch("EasyOPf", args=(x,))
            acl.rt.record_notify(n, cap.handle)            # @GRAPH_RECORD
        acl.rt.wait_and_reset_notify(n, s1.handle)          # @EAGER_WAIT
        with pytest.raises(ns.AclError) as ei:
            s1.synchronize()
    chain = chain_of(str(ei.value))
    assert at("# @EAGER_WAIT") in chain and at("# @GRAPH_RECORD") in chain
    assert "capture stream" in chain and "not running" in chain
    g.replay(exe)                                           # launching it resolves the wait
    s1.synchronize()
    exe.synchronize()
    assert x.read(np.uint32, 1)[0] == 1


def test_runaway_while_names_handle_value_and_loop():
    dev = ns.Device()
    s, body = dev.stream(), dev.stream()
    dev.max_while_iterations = 40
    x = dev.malloc(64)
    with ns.analysis.record():
        with ns.graph(stream=s) as g:
            c = g.condition(default=3)
            with g.cond_while(c, body):                     # @WHILE
                body.launch("EasyOPf", args=(x,))
        g.replay()
        with pytest.raises(ns.AclError) as ei:
            s.synchronize()
    msg = str(ei.value)
    assert ei.value.code == 507046
    assert f"cond handle 0x{c.handle:x}" in msg and "still 3 after 40 iterations" in msg
    loop = msg.split("loop:", 1)[1]
    assert "WHILE task at capture stream" in loop and at("# @WHILE") in loop
    assert "no task of the body writes the cond word: the loop can never end" in loop
    assert x.read(np.uint32, 1)[0] == 40


def test_runaway_while_names_the_body_task_that_writes_the_word():
    dev = ns.Device()
    s, body = dev.stream(), dev.stream()
    dev.max_while_iterations = 25
    counter = dev.malloc(8).write(np.array([10 ** 9], np.int64))
    with ns.analysis.record():
        with ns.graph(stream=s) as g:
            c = g.condition(default=1)
            with g.cond_while(c, body):
                body.launch("CountDown", args=(counter, c))   # @WRITER
        g.replay()
        with pytest.raises(ns.AclError) as ei:
            s.synchronize()
    loop = str(ei.value).split("loop:", 1)[1]
    assert "written by kernel CountDown" in loop and at("# @WRITER") in loop
    assert "never set it to 0" in loop
