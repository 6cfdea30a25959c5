"""Labels (chapter 10; ``src/acl/aclrt_impl/label.cpp``, ``src/runtime/launch/label*.cc``,
``task/stars_cond_isa_helper.cc``; fidelity row 513): a label list, labels set on the streams of
a built model, and the switch that jumps by an index read from device memory when the model
runs. ``2_advanced_features/label/0_simple_label`` makes these calls."""
from __future__ import annotations

import numpy as np
import pytest

import npusim
from npusim import acl
from npusim import errors as E

from helpers.acl import in_fresh_thread, launch, read, write
from helpers.capture import OK, new_stream

PERSISTENT = acl.ACL_STREAM_PERSISTENT
HEAD, DEFAULT = acl.ACL_MODEL_STREAM_FLAG_HEAD, acl.ACL_MODEL_STREAM_FLAG_DEFAULT


def malloc(n: int = 64) -> int:
    p, ret = acl.rt.malloc(n, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == OK and acl.rt.memset(p, n, 0, n) == OK
    return p


def labels(n: int):
    out = []
    for _ in range(n):
        lb, ret = acl.rt.create_label()
        assert ret == OK and lb
        out.append(lb)
    lst, ret = acl.rt.create_label_list(out, n)
    assert ret == OK and lst
    return out, lst


def two_branches(index: int, max_value: int = 2):
    """The sample's model, with work after each label: switch on the index, label 0, EasyOPf
    on x, label 1, EasyOPf on y, EndGraph. Returns (model, x, y, the index's word)."""
    x, y, idx = malloc(), malloc(), malloc(4)
    write(idx, np.array([index], np.uint32))
    m, ret = acl.mdl.ri_build_begin(0)
    assert ret == OK
    s = new_stream(PERSISTENT)
    assert acl.mdl.ri_bind_stream(m, s, HEAD) == OK
    (l0, l1), lst = labels(2)
    assert acl.rt.switch_label_by_index(idx, max_value, lst, s) == OK
    assert acl.rt.set_label(l0, s) == OK
    assert launch(s, "EasyOPf", 1, (x,)) == OK
    assert acl.rt.set_label(l1, s) == OK
    assert launch(s, "EasyOPf", 1, (y,)) == OK
    assert acl.mdl.ri_end_task(m, s) == OK
    assert acl.mdl.ri_build_end(m, None) == OK
    return m, x, y, idx


@pytest.mark.parametrize("index,max_value,ran_x", [(0, 2, 1), (1, 2, 0), (7, 2, 0), (1, 1, 1)])
def test_the_switch_jumps_to_the_label_the_index_picks(dev0, index, max_value, ran_x):
    """Index 0 runs both kernels, 1 skips to label 1; an index past maxValue is clamped to
    maxValue - 1 (7 -> 1; 1 with maxValue 1 -> 0)."""
    m, x, y, _ = two_branches(index, max_value)
    assert acl.mdl.ri_execute(m, -1) == OK
    assert (read(x, 1)[0], read(y, 1)[0]) == (ran_x, 1)


def test_the_index_is_read_when_the_model_runs(dev0):
    m, x, y, idx = two_branches(1)
    assert acl.mdl.ri_execute(m, -1) == OK
    write(idx, np.array([0], np.uint32))
    assert acl.mdl.ri_execute(m, -1) == OK
    assert (read(x, 1)[0], read(y, 1)[0]) == (1, 2)


def test_a_label_on_another_stream_starts_it_there_and_stops_this_one(dev0):
    """s1 switches to label 1 on s2 (an idle stream of the model): s2 runs from there, s1's
    later tasks do not run."""
    x, y, z, idx = malloc(), malloc(), malloc(), malloc(4)
    write(idx, np.array([1], np.uint32))
    m, _ = acl.mdl.ri_build_begin(0)
    s1, s2 = new_stream(PERSISTENT), new_stream(PERSISTENT)
    assert acl.mdl.ri_bind_stream(m, s1, HEAD) == OK
    assert acl.mdl.ri_bind_stream(m, s2, DEFAULT) == OK
    (l0, l1), lst = labels(2)
    assert acl.rt.switch_label_by_index(idx, 2, lst, s1) == OK
    assert launch(s1, "EasyOPf", 1, (z,)) == OK                 # skipped: s1 stops
    assert acl.rt.set_label(l0, s2) == OK
    assert launch(s2, "EasyOPf", 1, (x,)) == OK                 # before label 1: skipped
    assert acl.rt.set_label(l1, s2) == OK
    assert launch(s2, "EasyOPf", 1, (y,)) == OK
    assert acl.mdl.ri_end_task(m, s2) == OK
    assert acl.mdl.ri_build_end(m, None) == OK
    assert acl.mdl.ri_execute(m, -1) == OK
    assert (read(x, 1)[0], read(y, 1)[0], read(z, 1)[0]) == (0, 1, 0)


def test_no_label_or_a_jump_back_is_a_device_fault(dev0):
    """An index whose label is not set, and (npusim: no bound for the loop) a label behind the
    switch, fault the stream at execution; the launch reports it."""
    idx = malloc(4)
    write(idx, np.array([1], np.uint32))
    m, _ = acl.mdl.ri_build_begin(0)
    s = new_stream(PERSISTENT)
    assert acl.mdl.ri_bind_stream(m, s, HEAD) == OK
    (l0, _l1), lst = labels(2)
    assert acl.rt.set_label(l0, s) == OK
    assert acl.rt.switch_label_by_index(idx, 2, lst, s) == OK    # label 1 never set
    assert acl.mdl.ri_end_task(m, s) == OK
    assert acl.mdl.ri_build_end(m, None) == OK
    assert acl.mdl.ri_execute(m, -1) != OK
    write(idx, np.array([0], np.uint32))                          # label 0: behind the switch
    assert acl.mdl.ri_execute(m, -1) != OK


def test_the_checks(dev0):
    """NULLs 100000; num 0 or over 65535 107000; a label in a second list, set twice, or set
    before its list 507000; an unbound stream 107005; a stale handle 107017."""
    s = new_stream(PERSISTENT)
    lb, _ = acl.rt.create_label()
    assert acl.rt.create_label_list(None, 1) == (None, E.ACL_ERROR_INVALID_PARAM)
    for n in (0, 65536):
        assert acl.rt.create_label_list([lb], n) == (None, E.ACL_ERROR_RT_PARAM_INVALID)
    m, _ = acl.mdl.ri_build_begin(0)
    assert acl.mdl.ri_bind_stream(m, s, HEAD) == OK
    assert acl.rt.set_label(lb, s) == E.ACL_ERROR_RT_INTERNAL_ERROR       # in no list yet
    assert "aclrtCreateLabelList" in acl.get_recent_err_msg()
    lst, ret = acl.rt.create_label_list([lb], 1)
    assert ret == OK
    assert acl.rt.create_label_list([lb], 1) == (None, E.ACL_ERROR_RT_INTERNAL_ERROR)
    assert acl.rt.set_label(lb, 0) == E.ACL_ERROR_INVALID_PARAM
    assert acl.rt.set_label(lb, new_stream()) == E.ACL_ERROR_RT_STREAM_MODEL
    assert acl.rt.set_label(lb, s) == OK
    assert acl.rt.set_label(lb, s) == E.ACL_ERROR_RT_INTERNAL_ERROR       # set already
    idx = malloc(4)
    assert acl.rt.switch_label_by_index(0, 1, lst, s) == E.ACL_ERROR_INVALID_PARAM
    assert acl.rt.switch_label_by_index(idx, 1, lst, new_stream()) == E.ACL_ERROR_RT_STREAM_MODEL
    assert acl.rt.destroy_label_list(lst) == OK
    assert acl.rt.switch_label_by_index(idx, 1, lst, s) == E.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.rt.destroy_label_list(lst) == E.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.rt.destroy_label(lb) == OK
    assert acl.rt.destroy_label(lb) == E.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.rt.destroy_label(0) == E.ACL_ERROR_INVALID_PARAM


def test_context_rules(dev0):
    """No context 107002; a label of another context 507031 (its own code)."""
    assert in_fresh_thread(acl.rt.create_label) == (None, E.ACL_ERROR_RT_CONTEXT_NULL)
    lb, _ = acl.rt.create_label()
    ctx, ret = acl.rt.create_context(0)
    assert ret == OK
    assert acl.rt.destroy_label(lb) == E.ACL_ERROR_RT_LABEL_CONTEXT == 507031
    assert acl.rt.destroy_context(ctx) == OK
    assert npusim.census().handles.get("label") == 1
