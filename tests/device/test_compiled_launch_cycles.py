"""The compiled launch path's arrays under long and concurrent use (issue 40 part 1):
``mseq`` rows of 1,000 captured-and-destroyed models are reused, not accumulated; ``rings`` rows
of 1,000 created-and-destroyed streams likewise; and real threads launching and capturing at once
(the compiled calls step aside when a second thread uses the runtime: ``RT.threads``) leave every
count and every buffer as a single thread would."""
from __future__ import annotations

import numpy as np

import npusim
from npusim import acl
from npusim.device import engine as E
from npusim.runtime.runtime import RT

from helpers.acl import on_threads
from helpers.kernel import easy_counter

CYCLES = 1_000


def _ok(*values):
    *vals, ret = values
    assert ret == 0, ret
    return vals[0] if len(vals) == 1 else tuple(vals)


def _read(x) -> int:
    host = np.zeros(1, np.uint32)
    _ok(acl.rt.memcpy(acl.util.numpy_to_ptr(host), 4, x, 4, acl.ACL_MEMCPY_DEVICE_TO_HOST))
    return int(host[0])


def test_a_thousand_captured_models_reuse_their_mseq_rows():
    npusim.reset()
    acl.init()
    acl.rt.set_device(0)
    st = RT.devices[0].state
    easy, x, a = easy_counter()
    s = _ok(*acl.rt.create_stream())
    in_use, made = st.mrows_in_use(), st.nmrows
    for _ in range(CYCLES):
        _ok(acl.mdl.ri_capture_begin(s, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL))
        _ok(acl.rt.launch_kernel(easy, 1, a, 8, s))
        mh = _ok(*acl.mdl.ri_capture_end(s))
        _ok(acl.mdl.ri_execute_async(mh, s))
        _ok(acl.rt.synchronize_stream(s))
        _ok(acl.mdl.ri_destroy(mh))
    assert _read(x) == CYCLES
    assert st.mrows_in_use() == in_use
    assert st.nmrows <= made + 1            # one row, handed out again every cycle
    npusim.reset()


def test_a_thousand_streams_reuse_their_rings_rows():
    npusim.reset()
    acl.init()
    acl.rt.set_device(0)
    st = RT.devices[0].state
    easy, x, a = easy_counter()
    nsq = int(st.st[E.E_NSQ])
    for _ in range(CYCLES):
        s = _ok(*acl.rt.create_stream())
        _ok(acl.rt.launch_kernel(easy, 1, a, 8, s))
        _ok(acl.rt.synchronize_stream(s))
        _ok(acl.rt.destroy_stream(s))
    assert _read(x) == CYCLES
    assert int(st.st[E.E_NSQ]) <= nsq + 1   # the SQ (and its rings row) is reused
    npusim.reset()


def test_threads_launching_and_capturing_at_once_count_every_launch():
    """Four threads: two launch eagerly on their own streams, two capture THREAD_LOCAL graphs of
    the same launches and replay them; every counter ends at what one thread would leave."""
    npusim.reset()
    acl.init()
    acl.rt.set_device(0)
    counters = [easy_counter() for _ in range(4)]
    n = 200

    def work(k):
        _ok(acl.rt.set_device(0))
        easy, _, a = counters[k]
        s = _ok(*acl.rt.create_stream())
        if k % 2:
            _ok(acl.mdl.ri_capture_begin(s, acl.ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL))
            for _ in range(n):
                _ok(acl.rt.launch_kernel(easy, 1, a, 8, s))
            mh = _ok(*acl.mdl.ri_capture_end(s))
            _ok(acl.mdl.ri_execute_async(mh, s))
            _ok(acl.mdl.ri_execute_async(mh, s))
            _ok(acl.rt.synchronize_stream(s))
            _ok(acl.mdl.ri_destroy(mh))
        else:
            for _ in range(2 * n):
                _ok(acl.rt.launch_kernel(easy, 1, a, 8, s))
            _ok(acl.rt.synchronize_stream(s))
        _ok(acl.rt.destroy_stream(s))

    on_threads(work, 4)
    assert [_read(x) for _, x, _ in counters] == [2 * n] * 4
    npusim.reset()
