"""Every non-zero code npusim returns is explained: a specific message per code (the capture
linter's hints, ``lint.ADVICE`` for the others) and, where npusim knows the cause, a message
for that cause — in ``acl.get_recent_err_msg()`` and in the Pythonic ``AclError``. User kernels
are named by the name they were defined with."""
from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest

import npusim as ns
from npusim import acl
from npusim import errors as E
from npusim.analysis import lint

ROOT = pathlib.Path(ns.__file__).resolve().parent
HERE = pathlib.Path(__file__)


def line_of(tag: str) -> int:
    for i, text in enumerate(HERE.read_text().splitlines(), 1):
        if text.rstrip().endswith(tag):
            return i
    raise AssertionError(tag)


def returnable_codes() -> set[int]:
    """Every non-zero code the package's source names (``ERR.X`` / ``acl.X`` constants): what
    npusim can return."""
    names = set()
    for f in ROOT.rglob("*.py"):
        names |= set(re.findall(r"\b(?:ERR|acl|E)\.(ACL_ERROR_\w+)", f.read_text()))
    return {E.BY_NAME[n].value for n in names if n in E.BY_NAME}


def test_every_code_npusim_can_return_has_a_specific_message():
    codes = returnable_codes()
    assert len(codes) > 40
    for code in sorted(codes):
        text = lint.hint(code) or lint.ADVICE.get(code)
        assert text, f"{code} {E.name_of(code)} has no message"
        assert text != E.BY_VALUE[code].meaning and len(text) > 40, code
    assert not set(lint.ADVICE) & set(lint.HINTS)         # one message table per code


def test_a_code_without_a_runtime_reason_carries_its_advice():
    ns.Device("Ascend910B")
    assert acl.rt.destroy_stream(0x5A20_0000_7777) == E.ACL_ERROR_RT_INVALID_HANDLE
    assert lint.ADVICE[107017] in acl.get_recent_err_msg()


@pytest.fixture
def grp():
    dev = ns.Device("Ascend910B")
    s, u = dev.stream(), dev.stream()
    x = dev.malloc(64)
    with ns.graph(s) as g:
        ns.graph_task_group_begin(s)
        s.launch("EasyOPf", 1, args=(x,))
        h = ns.graph_task_group_end(s)
    return dev, s, u, x, g, h


def test_a_second_launch_into_a_one_task_group_says_expected_and_actual(grp):
    dev, s, u, x, g, h = grp
    ns.graph_task_update_begin(u, h)                                    # @upd-begin
    u.launch("EasyOPf", 1, args=(x,))
    with pytest.raises(E.InternalError) as e:
        u.launch("EasyOPf", 1, args=(x,))
    assert e.value.code == 507000
    assert "expected 1 launch(es), got 2" in str(e.value)
    assert f"{HERE.name}:{line_of('# @upd-begin')}" in str(e.value)


def test_an_update_begun_twice_says_it_is_still_open_since_its_line(grp):
    dev, s, u, x, g, h = grp
    ns.graph_task_update_begin(u, h)                                    # @upd-open
    code = acl.mdl.ri_capture_task_update_begin(u.handle, h)
    assert code == E.ACL_ERROR_STREAM_TASK_GROUP_STATUS
    msg = acl.get_recent_err_msg()
    assert f"still updating task group 0x{h:x}" in msg
    assert f"since {HERE.name}:{line_of('# @upd-open')}" in msg or \
        f"since tests/acl/{HERE.name}:{line_of('# @upd-open')}" in msg
    other = dev.stream()
    with pytest.raises(E.CaptureError) as e:
        ns.graph_task_update_begin(other, h)
    assert "is still being updated by stream" in str(e.value)


def test_update_begin_and_end_with_no_launch(grp):
    dev, s, u, x, g, h = grp
    ns.graph_task_update_begin(u, h)
    with pytest.raises(E.InternalError) as e:
        ns.graph_task_update_end(u)
    assert "no kernel was launched" in str(e.value)
    with pytest.raises(E.CaptureError) as e:
        ns.graph_task_update_end(u)                  # not updating any more
    assert "is not updating a task group" in str(e.value)


def test_a_non_kernel_task_on_a_stream_still_in_update_mode(grp):
    dev, s, u, x, g, h = grp
    ns.graph_task_update_begin(u, h)
    with pytest.raises(E.AclError) as e:
        x.fill(0, stream=u)
    assert e.value.code == E.ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT
    assert "is in task-update mode" in str(e.value) and "MEMSET" in str(e.value)


def test_pageable_async_copy_during_capture_says_use_malloc_host():
    dev = ns.Device("Ascend910B")
    s = dev.stream()
    x = dev.malloc(64)
    a = np.zeros(16, np.uint8)
    with pytest.raises(E.ParamError) as e:
        with ns.graph(s):
            s.copy(x, acl.util.numpy_to_ptr(a), 16, acl.ACL_MEMCPY_HOST_TO_DEVICE)
    assert "use malloc_host for async copies during capture" in str(e.value)


# its own name: the kernel table is per process and a launch by name finds the newest kernel
# of that name, so a common name ("attn" is the guide's too) would launch another test's body
@ns.kernel(name="attn_named_in_messages")
def attn(mem, ctx, block_idx, block_num, p: "ptr"):
    pass


def test_user_kernels_are_named_by_their_own_name():
    ns.configure(trace=True)
    dev = ns.Device("Ascend910B")
    s = dev.stream()
    x = dev.malloc(64)
    assert ns.set_kernel_cost("attn_named_in_messages", ns=3000) == 3000
    s.launch("attn_named_in_messages", 1, args=(x,))   # Stream.launch of a user kernel by name
    s.launch(ns.load_binary(attn)["attn_named_in_messages"], 1, args=(x,))
    s.synchronize()
    names = {dev.trace().name_of(r) for r in dev.trace().rows}
    assert "attn_named_in_messages" in names and not any(n.startswith("py:") for n in names)


def test_an_unknown_kernel_name_gets_the_close_matches():
    dev = ns.Device("Ascend910B")
    with pytest.raises(E.ParamError) as e:
        dev.stream().launch("EasyOPF", 1)
    assert "did you mean 'EasyOPf'" in str(e.value)
    lib = ns.load_binary(ns.samples.binary_path())
    with pytest.raises(E.ParamError) as e:
        lib["VectorAdd"]
    assert "did you mean 'VectorAddKernel'" in str(e.value)
    with pytest.raises(KeyError, match="did you mean 'LongOPf'"):
        ns.set_kernel_cost("LongOP", ns=1)


def test_an_injection_armed_during_a_capture_names_the_kernel_at_the_replay():
    dev = ns.Device("Ascend910B")
    s = dev.stream()
    x = dev.malloc(64)
    ns.inject(kernel="EasyOPf")
    with ns.graph(s) as g:
        s.launch("EasyOPf", 1, args=(x,))
    ns.clear_injections()
    g.replay(s)
    with pytest.raises(E.KernelError) as e:
        s.synchronize()
    assert "kernel EasyOPf" in str(e.value)


def test_the_deadlock_wait_for_chain_reaches_both_apis():
    dev = ns.Device("Ascend910B")
    a = dev.stream()
    e = dev.event(kind="legacy")
    a.record(e)
    a.reset(e)
    a.wait(e)                                        # waits for a record never queued
    assert acl.rt.synchronize_stream(a.handle) == E.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    assert "wait-for chain" in acl.get_recent_err_msg()
    with pytest.raises(E.AclTimeoutError) as err:
        a.synchronize()
    assert "wait-for chain" in str(err.value)
