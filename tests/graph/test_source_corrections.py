"""Behaviour corrected against the runtime source (``spec/aclgraph.md`` §13)."""
from __future__ import annotations

import re
import threading

import numpy as np

from npusim import acl
from npusim import errors as E

from helpers.capture import (ACTIVE, GLOBAL, OK, begin, end, model, new_buf, new_stream,
                             status_of)
from helpers.cond import ASSIGN_DEFAULT as ASSIGN, add, capture_sub, cond, set_word


def test_legacy_event_reset_on_a_capturing_stream_is_207000_and_captures_nothing(dev0):
    """§13.7 ApiImpl::EventReset: an event made without the EXTERNAL flag (aclrtCreateEvent /
    aclrtCreateEventWithFlag) reset on a capturing stream -> 207000; with EXTERNAL it is fine."""
    s = new_stream()
    legacy, _ = acl.rt.create_event()
    flag, _ = acl.rt.create_event_with_flag(acl.ACL_EVENT_SYNC)
    external, _ = acl.rt.create_event_with_flag(acl.ACL_EVENT_EXTERNAL)
    mh = begin(s)
    n = model(mh).n_tasks()
    assert acl.rt.reset_event(legacy, s) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert acl.rt.reset_event(flag, s) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert model(mh).n_tasks() == n
    assert status_of(s) == ACTIVE
    assert acl.rt.reset_event(external, s) == OK
    end(s)


def test_assign_default_only_for_handles_with_a_cond_task(dev0):
    """§13.11: the default is written only into cond handles that have a cond task in the
    launched model; an ASSIGN_DEFAULT handle without one keeps its word."""
    s, sub_s, exe = new_stream(), new_stream(), new_stream()
    mh = begin(s)
    used, p_used = cond(mh, default=3, flag=ASSIGN)
    idle, p_idle = cond(mh, default=5, flag=ASSIGN)
    (body,) = add(used, 0, 1, s)
    capture_sub(sub_s, body)
    end(s)
    set_word(p_idle, 9)
    assert acl.mdl.ri_execute_async(mh, exe) == OK
    assert acl.rt.synchronize_stream(exe) == OK
    words = {}
    for name, p in (("used", p_used), ("idle", p_idle)):
        out = np.zeros(1, np.uint64)
        assert acl.rt.memcpy(acl.util.numpy_to_ptr(out), 8, p, 8, 2) == OK
        words[name] = int(out[0])
    assert words == {"used": 3, "idle": 9}


def test_a_capture_begun_on_an_ended_thread_is_not_the_next_threads(dev0):
    """§13.12: thread identity is the OS thread id. A GLOBAL capture begun on a thread that has
    ended cannot be ended by a later thread that happens to get the same ``get_ident`` value."""
    s = new_stream()
    ctx, _ = acl.rt.get_current_context()
    out = {}

    def run(key, fn):
        acl.rt.set_current_context(ctx)
        out[key] = (threading.get_ident(), fn())
    t = threading.Thread(target=run, args=("begin", lambda: acl.mdl.ri_capture_begin(s, GLOBAL)))
    t.start()
    t.join()
    t = threading.Thread(target=run, args=("end", lambda: acl.mdl.ri_capture_end(s)[-1]))
    t.start()
    t.join()
    assert out["begin"][1] == OK
    assert out["end"][1] == E.ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD


def test_facade_cond_constants_carry_the_header_names():
    """§13.13: acl_rt.h spells them ACL_MODEL_RI_COND_TYPE_* and ..._COND_HANDLE_ASSIGN_DEFAULT."""
    assert (acl.ACL_MODEL_RI_COND_TYPE_IF, acl.ACL_MODEL_RI_COND_TYPE_WHILE,
            acl.ACL_MODEL_RI_COND_TYPE_SWITCH) == (0, 1, 2)
    assert acl.ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT == 1
    assert not [n for n in dir(acl) if re.match(r"ACL_MODEL_RI_COND_(TASK|HANDLE_FLAG)_", n)]
