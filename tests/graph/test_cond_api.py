"""Conditional control flow, API level (``spec/aclgraph.md`` §8.1–8.4, §1.2/1.3 for sub-model
capture, §6.3 for SQ/CQ sharing): every check of aclmdlRICondHandleCreate / GetCondPtr /
AddCondTask in its documented order, sub-model capture (exactly once, 107026), the sub-model
restrictions (207000), EndCapture's 107045 and what it destroys, and the chip profiles.

Order is tested by making two checks fail at once: the earlier one's code must win.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from npusim import acl
from npusim import errors as E
from npusim.runtime import model as M

from helpers.acl import in_fresh_thread
from helpers.capture import chip  # noqa: F401  (fixture)
from helpers.capture import (ACTIVE, GLOBAL, NONE, OK, RELAXED, begin, default_stream_handle, end,
                          join, join_back, model, new_buf, new_event, new_stream, record,
                          status_of)
from helpers.cond import (ASSIGN_DEFAULT, IF, SWITCH, USER, WHILE, add, capture_sub, cond,
                       cond_obj, k, live_models, set_word, sub_begin, sub_end, word)

BAD = 0xDEAD_BEEF_0000


def invalidated_capture() -> tuple[int, int]:
    """(stream, model) of a capture whose model is CAPTURE_INVALIDATED (§3.5: an event record
    conflict terminates the stream's model). A second capture on another stream stays open."""
    a, b = new_stream(), new_stream()
    begin(a)
    mh = begin(b)
    e = new_event()
    record(e, a)
    assert acl.rt.record_event(e, b) == E.ACL_ERROR_STREAM_CAPTURE_CONFLICT
    assert model(mh).status == M.CAPTURE_INVALIDATED
    return b, mh


def no_cond_feature(monkeypatch) -> None:
    """Device 0 loses TS_FEATURE_ACLGRAPH_COND_OP (after handles were made on it)."""
    from npusim.runtime import api_device
    d = api_device.device(0)
    monkeypatch.setattr(d, "profile", dataclasses.replace(d.profile, cond_supported=False))


# =============================== §8.1 aclmdlRICondHandleCreate ===============================
def test_create_null_model_100000(dev0):
    assert acl.mdl.ri_cond_handle_create(None, 0, USER) == (None, E.ACL_ERROR_INVALID_PARAM)
    assert acl.mdl.ri_cond_handle_create(0, 0, 7) == (None, E.ACL_ERROR_INVALID_PARAM)


def test_create_bad_handle_107017_before_flag(dev0, stream):
    mh = begin(stream)
    assert acl.mdl.ri_cond_handle_create(BAD, 0, 5)[1] == E.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.mdl.ri_cond_handle_create(stream, 0, USER)[1] == E.ACL_ERROR_RT_INVALID_HANDLE
    end(stream)
    assert acl.mdl.ri_destroy(mh) == OK
    assert acl.mdl.ri_cond_handle_create(mh, 0, USER)[1] == E.ACL_ERROR_RT_INVALID_HANDLE


@pytest.mark.parametrize("flag", [2, 3, 0x7FFF_FFFF])
def test_create_flag_over_1_is_107000(dev0, stream, flag):
    mh = begin(stream)
    assert acl.mdl.ri_cond_handle_create(mh, 0, flag) == (None, E.ACL_ERROR_RT_PARAM_INVALID)
    # the flag is checked before the context (a thread without one still gets 107000)
    assert in_fresh_thread(acl.mdl.ri_cond_handle_create, mh, 0, flag)[1] == \
        E.ACL_ERROR_RT_PARAM_INVALID
    assert acl.mdl.ri_cond_handle_create(mh, 0, USER)[1] == OK
    assert acl.mdl.ri_cond_handle_create(mh, 0, ASSIGN_DEFAULT)[1] == OK
    end(stream)


def test_create_on_ready_model_107000_before_context(dev0, stream):
    mh = begin(stream)
    end(stream)
    assert acl.mdl.ri_cond_handle_create(mh, 0, USER) == (None, E.ACL_ERROR_RT_PARAM_INVALID)
    assert in_fresh_thread(acl.mdl.ri_cond_handle_create, mh, 0, USER)[1] == \
        E.ACL_ERROR_RT_PARAM_INVALID


def test_create_on_invalidated_model_107000(dev0):
    _, mh = invalidated_capture()
    assert acl.mdl.ri_cond_handle_create(mh, 0, USER) == (None, E.ACL_ERROR_RT_PARAM_INVALID)


def test_create_on_sub_model_needs_it_capturing(dev0, stream):
    """Nesting: a sub-model may own handles while it captures, not before (NONE) or after."""
    mh = begin(stream)
    h, _ = cond(mh)
    (sub,) = add(h, IF, 1, stream)
    assert acl.mdl.ri_cond_handle_create(sub, 0, USER)[1] == E.ACL_ERROR_RT_PARAM_INVALID
    s2 = new_stream()
    sub_begin(s2, sub)
    inner, ret = acl.mdl.ri_cond_handle_create(sub, 3, ASSIGN_DEFAULT)
    assert ret == OK and cond_obj(inner).model is model(sub)
    (inner_sub,) = add(inner, IF, 1, s2)
    capture_sub(new_stream(), inner_sub)
    sub_end(s2)
    assert acl.mdl.ri_cond_handle_create(sub, 0, USER)[1] == E.ACL_ERROR_RT_PARAM_INVALID
    end(stream)


def test_create_context_107002_107004(dev0):
    s = new_stream()
    assert acl.mdl.ri_capture_begin(s, RELAXED) == OK
    _, mh, _ = acl.mdl.ri_capture_get_info(s)
    assert in_fresh_thread(acl.mdl.ri_cond_handle_create, mh, 0, USER) == \
        (None, E.ACL_ERROR_RT_CONTEXT_NULL)
    primary, ret = acl.rt.get_current_context()
    other, ret = acl.rt.create_context(0)                  # becomes current
    assert ret == OK
    assert acl.mdl.ri_cond_handle_create(mh, 0, USER) == (None, E.ACL_ERROR_RT_MODEL_CONTEXT)
    assert acl.rt.set_current_context(primary) == OK
    assert acl.mdl.ri_cond_handle_create(mh, 0, USER)[1] == OK
    end(s)
    assert acl.rt.destroy_context(other) == OK


def test_create_without_cond_feature_207000_after_state_checks(dev0, stream, monkeypatch):
    mh = begin(stream)
    no_cond_feature(monkeypatch)
    assert acl.mdl.ri_cond_handle_create(mh, 0, USER) == (None, E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT)
    assert acl.mdl.ri_cond_handle_create(mh, 0, 2)[1] == E.ACL_ERROR_RT_PARAM_INVALID
    assert in_fresh_thread(acl.mdl.ri_cond_handle_create, mh, 0, USER)[1] == \
        E.ACL_ERROR_RT_CONTEXT_NULL                        # context before the feature
    end(stream)
    assert acl.mdl.ri_cond_handle_create(mh, 0, USER)[1] == E.ACL_ERROR_RT_PARAM_INVALID


@pytest.mark.parametrize("profile, code", [("Ascend910B", OK), ("Ascend910_93", OK),
                                           ("Ascend950", OK),
                                           ("Ascend310P", E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT)])
def test_cond_support_by_profile(chip, profile, code):
    """Cond APIs need SW-SQ and the TS cond feature (§6.1, §11): A2/A3/950 yes; 310P (classic
    capture, which works there) refuses the handle with 207000."""
    chip(profile)
    s = new_stream()
    mh = begin(s)
    h, ret = acl.mdl.ri_cond_handle_create(mh, 0, ASSIGN_DEFAULT)
    assert ret == code
    assert acl.mdl.ri_cond_handle_create(mh, 0, 2)[1] == E.ACL_ERROR_RT_PARAM_INVALID
    if code == OK:
        assert acl.mdl.ri_cond_handle_get_cond_ptr(h)[1] == OK
    else:
        assert h is None
    end(s)


def test_create_zeroes_the_word_and_gives_each_handle_its_own(dev0, stream):
    dirty = new_buf(4096)
    assert acl.rt.memset(dirty, 4096, 0xFF, 4096) == OK
    assert acl.rt.free(dirty) == OK                       # the word may land on dirty memory
    mh = begin(stream)
    words = [cond(mh, default=9, flag=f)[1] for f in (USER, ASSIGN_DEFAULT, USER)]
    assert len(set(words)) == 3
    assert len(model(mh).cond_handles) == 3
    end(stream)
    assert [word(p) for p in words] == [0, 0, 0]          # 0 at creation, not the default


def test_handles_die_with_their_model(dev0, stream):
    """No destroy API: the handle, its word and its sub-models go with the model (§8.1, §1.8)."""
    mh = begin(stream)
    h, p = cond(mh)
    subs = add(h, IF, 2, stream)
    for sub in subs:
        capture_sub(new_stream(), sub)
    end(stream)
    n = live_models()
    assert acl.mdl.ri_destroy(mh) == OK
    assert live_models() == n - 3
    assert acl.mdl.ri_cond_handle_get_cond_ptr(h)[1] == E.ACL_ERROR_RT_INVALID_HANDLE
    for sub in subs:
        assert acl.mdl.ri_destroy(sub) == E.ACL_ERROR_RT_INVALID_HANDLE
    from npusim.runtime.api_memory import locate
    assert locate(p).kind != "device" or locate(p).start != p


# =============================== §8.2 aclmdlRICondHandleGetCondPtr ===============================
def test_get_cond_ptr_checks(dev0, stream, monkeypatch):
    mh = begin(stream)
    h, ret = acl.mdl.ri_cond_handle_create(mh, 0, USER)
    assert acl.mdl.ri_cond_handle_get_cond_ptr(None) == (None, E.ACL_ERROR_INVALID_PARAM)
    assert acl.mdl.ri_cond_handle_get_cond_ptr(BAD)[1] == E.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.mdl.ri_cond_handle_get_cond_ptr(mh)[1] == E.ACL_ERROR_RT_INVALID_HANDLE
    assert in_fresh_thread(acl.mdl.ri_cond_handle_get_cond_ptr, h) == \
        (None, E.ACL_ERROR_RT_CONTEXT_NULL)
    p, ret = acl.mdl.ri_cond_handle_get_cond_ptr(h)
    assert ret == OK
    end(stream)
    assert acl.mdl.ri_cond_handle_get_cond_ptr(h) == (p, OK)   # valid until the model dies
    no_cond_feature(monkeypatch)
    assert acl.mdl.ri_cond_handle_get_cond_ptr(h) == (None, E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT)
    assert in_fresh_thread(acl.mdl.ri_cond_handle_get_cond_ptr, h)[1] == \
        E.ACL_ERROR_RT_CONTEXT_NULL                        # context before the feature


def test_cond_ptr_is_8_bytes_of_device_memory(dev0, stream):
    from npusim.runtime.api_memory import locate
    mh = begin(stream, RELAXED)                           # RELAXED: host copies allowed
    h, p = cond(mh)
    w = locate(p)
    assert w.kind == "device" and w.start == p and w.size == 8
    set_word(p, 0x1234_5678_9ABC_DEF0)                    # a user (or kernel) writes it
    assert word(p) == 0x1234_5678_9ABC_DEF0
    k(stream, "CondSetU64", p, 5)                         # captured: runs only at launch
    end(stream)
    assert word(p) == 0x1234_5678_9ABC_DEF0


# =============================== §8.3 aclmdlRIAddCondTask ===============================
@pytest.fixture
def capturing(dev0):
    """(stream, root model, fresh cond handle) of an open capture."""
    s = new_stream()
    mh = begin(s, RELAXED)
    h, _ = cond(mh)
    yield s, mh, h
    if status_of(s) != NONE:
        acl.mdl.ri_capture_end(s)


def test_add_null_stream_100000_first(capturing):
    s, mh, h = capturing
    assert acl.mdl.ri_add_cond_task(h, IF, 1, None) == (None, E.ACL_ERROR_INVALID_PARAM)
    assert acl.mdl.ri_add_cond_task(BAD, 9, 0, None) == (None, E.ACL_ERROR_INVALID_PARAM)


def test_add_bad_handles_107017_before_params(capturing):
    s, mh, h = capturing
    assert acl.mdl.ri_add_cond_task(BAD, 9, 0, s, 1)[1] == E.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.mdl.ri_add_cond_task(mh, IF, 1, s)[1] == E.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.mdl.ri_add_cond_task(h, 9, 0, BAD, 1)[1] == E.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.mdl.ri_add_cond_task(None, IF, 1, BAD)[1] == E.ACL_ERROR_RT_INVALID_HANDLE


@pytest.mark.parametrize("typ, flags", [(3, 0), (100, 0), (IF, 1), (SWITCH, 0x80000000)])
def test_add_bad_type_or_flags_107000(capturing, typ, flags):
    s, mh, h = capturing
    assert acl.mdl.ri_add_cond_task(h, typ, 1, s, flags) == (None, E.ACL_ERROR_RT_PARAM_INVALID)
    # step 3 comes before the context and capture checks
    idle = new_stream()
    assert acl.mdl.ri_add_cond_task(h, typ, 1, idle, flags)[1] == E.ACL_ERROR_RT_PARAM_INVALID
    assert in_fresh_thread(acl.mdl.ri_add_cond_task, h, typ, 1, s, flags)[1] == \
        E.ACL_ERROR_RT_PARAM_INVALID
    assert acl.mdl.ri_add_cond_task(h, IF, 1, s)[1] == OK    # the handle is still unused


def test_add_null_handle_107000(capturing):
    s, _, _ = capturing
    assert acl.mdl.ri_add_cond_task(None, IF, 1, s) == (None, E.ACL_ERROR_RT_PARAM_INVALID)
    assert acl.mdl.ri_add_cond_task(0, IF, 1, new_stream())[1] == E.ACL_ERROR_RT_PARAM_INVALID


def test_add_handle_used_once_107000_before_context_and_capture(capturing):
    s, mh, h = capturing
    subs = add(h, IF, 2, s)
    assert acl.mdl.ri_add_cond_task(h, IF, 2, s) == (None, E.ACL_ERROR_RT_PARAM_INVALID)
    assert acl.mdl.ri_add_cond_task(h, SWITCH, 3, s)[1] == E.ACL_ERROR_RT_PARAM_INVALID
    assert acl.mdl.ri_add_cond_task(h, IF, 1, new_stream())[1] == E.ACL_ERROR_RT_PARAM_INVALID
    assert in_fresh_thread(acl.mdl.ri_add_cond_task, h, IF, 1, s)[1] == \
        E.ACL_ERROR_RT_PARAM_INVALID
    assert cond_obj(h).sub_models == [model(x) for x in subs]   # unchanged


def test_add_context_107002_107003_before_capture_state(capturing):
    s, mh, h = capturing
    idle = new_stream()
    assert in_fresh_thread(acl.mdl.ri_add_cond_task, h, IF, 1, s) == \
        (None, E.ACL_ERROR_RT_CONTEXT_NULL)
    primary, _ = acl.rt.get_current_context()
    other, _ = acl.rt.create_context(0)
    assert acl.mdl.ri_add_cond_task(h, IF, 1, s)[1] == E.ACL_ERROR_RT_STREAM_CONTEXT
    assert acl.mdl.ri_add_cond_task(h, IF, 1, idle)[1] == E.ACL_ERROR_RT_STREAM_CONTEXT
    assert acl.rt.set_current_context(primary) == OK
    assert acl.rt.destroy_context(other) == OK
    assert acl.mdl.ri_add_cond_task(h, IF, 1, s)[1] == OK


def test_add_stream_not_capturing_107029_before_feature(capturing, monkeypatch):
    s, mh, h = capturing
    idle = new_stream()
    assert acl.mdl.ri_add_cond_task(h, IF, 1, idle) == (None, E.ACL_ERROR_RT_STREAM_NOT_CAPTURED)
    assert acl.mdl.ri_add_cond_task(h, IF, 7, idle)[1] == E.ACL_ERROR_RT_STREAM_NOT_CAPTURED
    no_cond_feature(monkeypatch)
    assert acl.mdl.ri_add_cond_task(h, IF, 1, idle)[1] == E.ACL_ERROR_RT_STREAM_NOT_CAPTURED
    # cond-op support (step 5) before the model match (6), added stream (7) and size (8)
    assert acl.mdl.ri_add_cond_task(h, IF, 7, s) == (None, E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT)
    other = new_stream()
    begin(other)
    assert acl.mdl.ri_add_cond_task(h, IF, 1, other)[1] == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    end(other)


def test_add_on_another_models_stream_107000(capturing):
    """The task must go into the model that owns the handle (step 6) — checked before size."""
    s, mh, h = capturing
    other = new_stream()
    begin(other)
    assert acl.mdl.ri_add_cond_task(h, IF, 1, other) == (None, E.ACL_ERROR_RT_PARAM_INVALID)
    assert acl.mdl.ri_add_cond_task(h, IF, 1, other)[1] == E.ACL_ERROR_RT_PARAM_INVALID
    end(other)
    # a handle of the root used on a stream capturing one of its sub-models, and the reverse
    (sub,) = add(h, IF, 1, s)
    s2 = new_stream()
    sub_begin(s2, sub)
    h2, _ = cond(mh)
    assert acl.mdl.ri_add_cond_task(h2, IF, 1, s2)[1] == E.ACL_ERROR_RT_PARAM_INVALID
    inner, _ = cond(sub)
    assert acl.mdl.ri_add_cond_task(inner, IF, 1, s)[1] == E.ACL_ERROR_RT_PARAM_INVALID
    sub_end(s2)


def test_add_on_added_stream_207000_before_size(capturing):
    s, mh, h = capturing
    added = new_stream()
    assert acl.rt.stream_add_to_model(added, mh) == OK
    assert acl.mdl.ri_add_cond_task(h, IF, 1, added) == (None, E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT)
    assert acl.mdl.ri_add_cond_task(h, IF, 9, added)[1] == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert acl.mdl.ri_add_cond_task(h, IF, 1, s)[1] == OK   # still unused


def test_add_on_a_joined_stream_is_allowed(capturing):
    s, mh, h = capturing
    side = new_stream()
    join(s, side)
    (sub,) = add(h, IF, 1, side)
    capture_sub(new_stream(), sub)
    join_back(side, s)
    assert end(s) == mh


@pytest.mark.parametrize("typ, size, ok", [
    (IF, 0, False), (IF, 1, True), (IF, 2, True), (IF, 3, False),
    (WHILE, 0, False), (WHILE, 1, True), (WHILE, 2, False),
    (SWITCH, 0, False), (SWITCH, 1, True), (SWITCH, 2, True), (SWITCH, 17, True)])
def test_add_sizes(capturing, typ, size, ok):
    s, mh, h = capturing
    n = live_models()
    subs, ret = acl.mdl.ri_add_cond_task(h, typ, size, s)
    if not ok:
        assert (subs, ret) == (None, E.ACL_ERROR_RT_PARAM_INVALID)
        assert live_models() == n and cond_obj(h).sub_models == []
        assert model(mh).n_tasks() == 0                      # nothing captured
        return
    assert ret == OK and len(subs) == size and len(set(subs)) == size
    assert live_models() == n + size
    for sub in subs:
        m = model(sub)
        assert m.sub and m.status == M.NONE and m.parent is model(mh)
    # 2 SQEs for IF / SWITCH, 3 for WHILE, on the stream's capture stream (§8.3 step 10)
    cs = model(mh).origin_stream()
    assert cs.task_count == (3 if typ == WHILE else 2)
    assert cs.sqe_num == (3 if typ == WHILE else 2)
    ch = cond_obj(h)
    assert ch.type == typ and [x.handle for x in ch.sub_models] == subs
    assert len({x.endgraph_slot for x in ch.sub_models}) == 1     # one shared notify


def test_add_failure_after_sub_models_destroys_them(capturing):
    """A failure once the sub-models exist (here: the task-group packing rule, §7 — a cond task
    is not a kernel, 507009) destroys them again; nothing is handed out."""
    s, mh, h = capturing
    assert acl.mdl.ri_capture_task_grp_begin(s) == OK
    n = live_models()
    assert acl.mdl.ri_add_cond_task(h, IF, 2, s) == (None, E.ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT)
    assert live_models() == n
    assert cond_obj(h).sub_models == []


# =============================== §8.4 capturing sub-models ===============================
def test_to_model_ri_begin_checks(capturing):
    s, mh, h = capturing
    sub_a, sub_b = add(h, IF, 2, s)
    free = new_stream()
    assert acl.mdl.ri_capture_to_model_ri_begin(None, sub_a, GLOBAL) == E.ACL_ERROR_INVALID_PARAM
    assert acl.mdl.ri_capture_to_model_ri_begin(free, None, GLOBAL) == E.ACL_ERROR_INVALID_PARAM
    assert acl.mdl.ri_capture_to_model_ri_begin(free, BAD, GLOBAL) == \
        E.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.mdl.ri_capture_to_model_ri_begin(free, mh, GLOBAL) == \
        E.ACL_ERROR_RT_PARAM_INVALID                      # a root is never captured into
    assert acl.mdl.ri_capture_to_model_ri_begin(free, sub_a, 3) == E.ACL_ERROR_RT_PARAM_INVALID
    assert acl.mdl.ri_capture_to_model_ri_begin(default_stream_handle(), sub_a, GLOBAL) == \
        E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    # the parent's origin stream is capturing: 107027 for a sub-model still in NONE
    assert acl.mdl.ri_capture_to_model_ri_begin(s, sub_a, GLOBAL) == \
        E.ACL_ERROR_RT_STREAM_CAPTURED
    sub_begin(free, sub_a)
    assert status_of(free) == ACTIVE
    assert acl.mdl.ri_capture_get_info(free)[1] == sub_a
    # a sub-model captures once: 107026 while capturing and after, before the stream check
    assert acl.mdl.ri_capture_to_model_ri_begin(new_stream(), sub_a, GLOBAL) == \
        E.ACL_ERROR_RT_MODEL_CAPTURED
    assert acl.mdl.ri_capture_to_model_ri_begin(s, sub_a, GLOBAL) == \
        E.ACL_ERROR_RT_MODEL_CAPTURED
    assert sub_end(free) == sub_a
    assert model(sub_a).status == M.READY
    assert acl.mdl.ri_capture_to_model_ri_begin(free, sub_a, GLOBAL) == \
        E.ACL_ERROR_RT_MODEL_CAPTURED
    # two sub-models may capture at the same time, on any free streams
    x, y = new_stream(), new_stream()
    sub_begin(x, sub_b)
    assert acl.mdl.ri_capture_to_model_ri_begin(y, sub_b, GLOBAL) == \
        E.ACL_ERROR_RT_MODEL_CAPTURED
    sub_end(x)
    assert end(s) == mh


def test_sub_model_end_capture_with_null_model_allowed(capturing):
    """EndCapture: NULL modelRI is 107000 for a root, fine for a sub-model (§1.3)."""
    s, mh, h = capturing
    (sub,) = add(h, WHILE, 1, s)
    capture_sub(new_stream(), sub)
    assert model(sub).status == M.READY
    assert end(s) == mh


def test_sub_model_restrictions_207000(capturing):
    s, mh, h = capturing
    (sub,) = add(h, IF, 1, s)
    other, x = new_stream(), new_buf()

    def check():
        assert acl.mdl.ri_destroy(sub) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
        assert acl.mdl.ri_execute_async(sub, other) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
        assert acl.mdl.ri_update(sub) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
        assert acl.mdl.ri_get_streams(sub) == (None, E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT)
        assert acl.rt.stream_add_to_model(new_stream(), sub) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
        assert acl.mdl.ri_execute(sub, -1) == E.ACL_ERROR_RT_PARAM_INVALID   # a capture model
    check()                                                  # NONE
    s2 = new_stream()
    sub_begin(s2, sub)
    check()                                                  # capturing
    k(s2, "EasyOPf", x)
    sub_end(s2)
    check()                                                  # READY
    end(s)
    check()                                                  # parent READY
    assert acl.mdl.ri_execute_async(mh, other) == OK
    assert acl.rt.synchronize_stream(other) == OK
    check()                                                  # after a launch


def test_parent_end_107045_while_sub_capturing_destroys_root(dev0):
    s, s2 = new_stream(), new_stream()
    mh = begin(s)
    h, p = cond(mh)
    sub_a, sub_b = add(h, IF, 2, s)
    capture_sub(new_stream(), sub_b)
    sub_begin(s2, sub_a)
    n = live_models()
    assert acl.mdl.ri_capture_end(s) == (None, E.ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING)
    # ClearCaptureModel: the stream left capture and the root (with its handle, word and
    # sub-models) is destroyed
    assert status_of(s) == NONE
    assert live_models() == n - 3
    assert acl.mdl.ri_execute_async(mh, s) == E.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.mdl.ri_destroy(mh) == E.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.mdl.ri_cond_handle_get_cond_ptr(h)[1] == E.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.mdl.ri_capture_to_model_ri_begin(new_stream(), sub_b, GLOBAL) == \
        E.ACL_ERROR_RT_INVALID_HANDLE
    # the stream that was capturing the (now gone) sub-model can be ended and reused
    assert acl.mdl.ri_capture_end(s2)[1] != OK
    assert status_of(s2) == NONE
    mh2 = begin(s2)
    assert end(s2) == mh2
    # and the root's stream captures again
    mh3 = begin(s)
    assert end(s) == mh3


def test_parent_end_107045_with_a_never_captured_sub(dev0):
    s = new_stream()
    mh = begin(s)
    h, _ = cond(mh)
    subs = add(h, SWITCH, 3, s)
    capture_sub(new_stream(), subs[0])
    capture_sub(new_stream(), subs[2])                       # subs[1] stays NONE
    assert model(subs[1]).status == M.NONE
    assert acl.mdl.ri_capture_end(s) == (None, E.ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING)
    assert acl.mdl.ri_execute_async(mh, s) == E.ACL_ERROR_RT_INVALID_HANDLE


def test_end_107045_checks_descendants_and_leaves_a_failed_sub_model(dev0):
    """EndCapture of *any* model needs every descendant READY (recursively); a sub-model's own
    failed end leaves it READY (not destroyed), so finishing the inner capture and then the
    root works (§1.3 step 6, §8.4)."""
    s0, s1, s2 = new_stream(), new_stream(), new_stream()
    mh = begin(s0)
    h, _ = cond(mh)
    (outer,) = add(h, WHILE, 1, s0)
    sub_begin(s1, outer)
    hi, _ = cond(outer)
    (inner,) = add(hi, IF, 1, s1)
    sub_begin(s2, inner)
    assert acl.mdl.ri_capture_end(s1) == (None, E.ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING)
    assert status_of(s1) == NONE and model(outer).status == M.READY
    assert acl.mdl.ri_capture_end(s0) == (None, E.ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING)
    assert acl.mdl.ri_execute_async(mh, s0) == E.ACL_ERROR_RT_INVALID_HANDLE


def test_nested_end_order_inner_outer_root(dev0):
    s0, s1, s2 = new_stream(), new_stream(), new_stream()
    mh = begin(s0)
    h, _ = cond(mh)
    (outer,) = add(h, IF, 1, s0)
    sub_begin(s1, outer)
    hi, _ = cond(outer)
    (inner,) = add(hi, IF, 1, s1)
    sub_begin(s2, inner)
    assert sub_end(s2) == inner
    assert sub_end(s1) == outer
    assert end(s0) == mh
    assert [m.handle for m in model(mh).all_models()] == [mh, outer, inner]


def test_sub_models_use_the_roots_sq_budget(dev0, monkeypatch):
    """SQ/CQ pairs of root + every descendant are taken together at the first launch and count
    against one graph's limit (§6.3: > pool → 207005); executing a sub-model alone is 207000."""
    from npusim.runtime import api_device
    d = api_device.device(0)

    def graph(n_branches: int) -> int:
        s = new_stream()
        mh = begin(s)
        h, _ = cond(mh)
        for sub in add(h, SWITCH, n_branches, s):
            capture_sub(new_stream(), sub)
        return end(s), s

    mh, s = graph(2)
    before = d.sqcq_used
    assert acl.mdl.ri_execute_async(mh, s) == OK
    assert acl.rt.synchronize_stream(s) == OK
    assert d.sqcq_used - before == 3 and model(mh).sqcq == 3
    monkeypatch.setattr(d, "profile", dataclasses.replace(d.profile, sqcq_pool=4))
    big, s2 = graph(4)                                      # 5 SQs > a pool of 4
    assert acl.mdl.ri_execute_async(big, s2) == E.ACL_ERROR_RT_RESOURCE_ALLOC_FAIL


def test_cond_task_is_one_task_in_the_dumps(dev0, stream, tmp_path):
    """aclmdlRIDebugPrint / DebugJsonPrint list tasks: the cond task is one CONDITION_OP task
    of 2 (IF/SWITCH) or 3 (WHILE) SQEs (§8.3 step 10, §10); sub-model streams are not in the
    parent's dump."""
    import json
    x = new_buf()
    mh = begin(stream)
    h, _ = cond(mh)
    (sub,) = add(h, WHILE, 1, stream)
    capture_sub(new_stream(), sub, lambda: k(sub_stream_of(sub), "EasyOPf", x))
    h2, _ = cond(mh)
    for s2 in add(h2, SWITCH, 2, stream):
        capture_sub(new_stream(), s2)
    k(stream, "EasyOPf", x)
    end(stream)
    assert acl.mdl.ri_debug_print(mh) == OK
    types = [ln.split("task_type=")[1].split(",")[0].rstrip(".")
             for ln in model(mh).last_debug_lines if "task_type=" in ln]
    assert types == ["CONDITION_OP", "CONDITION_OP", "KERNEL_AIVEC"]
    path = tmp_path / "m.json"
    assert acl.mdl.ri_debug_json_print(mh, str(path), 0) == OK
    recs = json.loads(path.read_text())
    assert [r["args"]["Task Type"] for r in recs] == ["CONDITION_OP", "CONDITION_OP",
                                                      "KERNEL_AIVEC"]
    assert [r["ts"] for r in recs] == [0, 10, 20]
    assert {r["args"]["Model Id"] for r in recs} == {model(mh).id}


def sub_stream_of(sub: int) -> int:
    """The user stream currently capturing sub-model ``sub``."""
    (s,) = model(sub).participants
    return s.handle


def test_numpy_integer_arguments(capturing):
    """The C parameters are integers: numpy integers pass the same checks."""
    s, mh, h = capturing
    h2, ret = acl.mdl.ri_cond_handle_create(mh, np.uint32(3), np.int32(ASSIGN_DEFAULT))
    assert ret == OK and cond_obj(h2).flag == ASSIGN_DEFAULT and cond_obj(h2).default == 3
    assert acl.mdl.ri_cond_handle_create(mh, 0, np.int64(2))[1] == E.ACL_ERROR_RT_PARAM_INVALID
    subs, ret = acl.mdl.ri_add_cond_task(h, np.int32(SWITCH), np.uint32(2), s, np.uint32(0))
    assert ret == OK and len(subs) == 2
    assert acl.mdl.ri_add_cond_task(h2, IF, np.uint32(3), s)[1] == E.ACL_ERROR_RT_PARAM_INVALID
    assert acl.mdl.ri_add_cond_task(h2, IF, 1.0, s)[1] == E.ACL_ERROR_RT_PARAM_INVALID
