"""``npusim.freeze_permanent()`` (docs/architecture.md §17, "The collector"): the objects alive
when it is called move into the collector's permanent generation (``gc.freeze``), and the
simulator works on as before — graphs captured before and after it replay with the right data.
It is opt-in: importing npusim and using it never freezes anything."""
from __future__ import annotations

import gc

import numpy as np

import npusim
from npusim import acl

from helpers.capture import OK, begin, end, lk, new_buf, new_stream, u32


def test_nothing_is_frozen_implicitly(dev0):
    gc.unfreeze()
    s = new_stream()
    x = new_buf()
    begin(s)
    lk(s, "EasyOPf", x)
    mh = end(s)
    assert acl.mdl.ri_execute_async(mh, s) == OK and acl.rt.synchronize_stream(s) == OK
    assert gc.get_freeze_count() == 0


def test_freeze_then_capture_and_replay(dev0):
    gc.unfreeze()
    try:
        s, exe = new_stream(), new_stream()
        x, y = new_buf(), new_buf()
        begin(s)
        lk(s, "EasyOPf", x)
        before = end(s)
        n = npusim.freeze_permanent()
        assert n > 0 and n == gc.get_freeze_count()
        begin(s)
        lk(s, "ShortOPf", y)
        lk(s, "EasyOPf", y)
        after = end(s)
        for _ in range(3):
            assert acl.mdl.ri_execute_async(before, exe) == OK
            assert acl.mdl.ri_execute_async(after, exe) == OK
        assert acl.rt.synchronize_stream(exe) == OK
        assert u32(x).tolist() == [3]
        assert u32(y).tolist() == [7]               # ((0*2+1)*2+1)*2+1
        assert acl.mdl.ri_destroy(before) == OK and acl.mdl.ri_destroy(after) == OK
        gc.collect()
        assert np.all(u32(x) == 3)
    finally:
        gc.unfreeze()
