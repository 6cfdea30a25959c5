"""The launch memo: ``acl.rt.launch_kernel`` repeating a launch in one compiled call (issue 40).

A program scripting a graph launches the same function on the same stream again and again; each
launch through the general path repeats the same dozen checks (``runtime/api_launch.py``
``launch_kernel``: handles, context, the kernel's and the stream's state, spec/kernel.md §5 and
spec/aclgraph.md §4) before its one compiled call (``device/launchjit.py``). The front made
here remembers, per ``(function handle, stream handle)``, what those checks found when they
allowed the compiled call — the SQ, the body, the duration, the capture stream and model — and
a later launch with the same handles and arguments of the canonical types goes straight to that
call (``memo_capture`` / ``memo_eager``). Anything else — a miss, other argument types, the
compiled call's ``SLOW`` — is the general wrapper (``_boundary.wrap``), unchanged: the codes,
their order and the state after a failure are the general path's.

When an entry is made: the general path offers it (``launchjit.OFFER``) after its compiled
call succeeded, with one user thread (``RT.threads``), at lock depth 1 (not inside a callback
of another call); the front keeps it when host tracing is off and nothing is injected into the
launch (``faults.ARMED``).

When it is dropped: ``launchjit.forget`` empties the memo and bumps its generation at the start
of every region that holds the runtime lock (every other facade call, engine run, condition
wake-up) and at every change made outside one that an entry depends on (``npusim.reset``,
``configure``, recording, cost models, injections, the kernel hook). A launch, a record and a
wait forget only where they change more than a hit does (``voids_memo_itself``). The generation is tested
inside the compiled call, so the hit needs no lock: the call is atomic under the GIL, and an
entry read before another thread's region began fails the test (docs/architecture.md §16).
``NPUSIM_MEMO_CHECK=1`` makes every hit take the general path and compare the entry with what
that path finds now (``MISMATCHES``; tests/conftest.py fails a test with one): the whole suite
passes so, and CI runs a share of it so (tests/acl/test_launch_memo.py).
"""
from __future__ import annotations

from ..device import launchjit as _LJ
from ..faults import ARMED as _ARMED
from ..runtime.runtime import RT as _RT
from . import _launchc

MEMO = _LJ.MEMO
_OFFER = _LJ.OFFER
_NAME = "acl.rt.launch_kernel"
MISMATCHES: list = []
"""(key, memo entry, the general path's entry) of every hit the check found stale."""


def front(general):
    """The facade's ``launch_kernel``: the memo's hit, else ``general`` (the argument boundary's
    wrapper) and, after a success, the entry the general path offered."""
    memo, offer, armed, rt = MEMO, _OFFER, _ARMED, _RT
    lj, check, new_run, chits = _LJ, _LJ.MEMO_CHECK, _LJ.NEW_RUN, _launchc.HIT

    def take(r):
        o = offer[0]
        if o is not None:
            offer[0] = None
            if not r and not rt.trace_on and _NAME not in armed:
                memo[o[0]] = o[1] + o[0]
                if chits[0] is None:
                    _launchc.ensure()
        return r

    last = _LJ.LAST                     # [the entry of the last hit]

    def launch_kernel(func, num_blocks, args_ptr, args_size, stream):
        chit = chits[0]
        if chit is not None:            # the same hit in C (acl/_launchc.py)
            r = chit(func, num_blocks, args_ptr, args_size, stream)
            if not r:
                return 0
            if r < 0:                   # a miss
                offer[0] = last[0] = None
                return take(general(func, num_blocks, args_ptr, args_size, stream))
        e = last[0]
        if e is None or e[7] is not func or e[8] is not stream:
            try:
                e = memo.get((func, stream))
            except TypeError:           # an unhashable value: the boundary's to refuse
                e = None
        # the handles: the very objects the entry was made with (an equal float, bool or numpy
        # integer is not one); the size: the entry's (a small int is one object) or an int
        if e is not None and e[7] is func and e[8] is stream \
                and type(num_blocks) is int and 0 < num_blocks < 0x10000 \
                and type(args_ptr) is int and 0 < args_ptr < 0x8000000000000000 \
                and (args_size is e[0] or type(args_size) is int and args_size == e[0]):
            if check:
                return _checked(func, num_blocks, args_ptr, args_size, stream, e)
            cs = e[4]
            if cs is None:
                if lj.memo_eager(e[1], e[2], e[3], args_ptr, args_size, num_blocks) >= 0:
                    last[0] = e
                    return 0
            else:
                r = lj.memo_capture(e[1], e[2], e[3], args_ptr, args_size, num_blocks)
                if r >= 0:
                    if r >> 62:                 # a new run of the model's capture order
                        e[6].append(r ^ new_run)
                    if cs.last_event is not None:   # a record came before (api_event.py)
                        cs.last_event = None
                    last[0] = e
                    return 0
        offer[0] = last[0] = None
        return take(general(func, num_blocks, args_ptr, args_size, stream))

    def _checked(func, num_blocks, args_ptr, args_size, stream, e):
        gen = lj.CTLW[lj.C_GEN]
        offer[0] = offer[1] = None
        r = general(func, num_blocks, args_ptr, args_size, stream)
        now, offer[1] = offer[1], None
        if e[2] >> lj.GQ_SHIFT == gen and (
                now is None or now[2] is None or now[:2] != e[:2]
                or now[2][0] & lj.Q_MASK != e[2] & lj.Q_MASK or now[2][1] != e[3]
                or now[3] is not e[4] or now[4] is not e[5]):
            MISMATCHES.append(((func, stream), e, now))   # the general path disagrees
        return take(r)

    launch_kernel.__name__ = general.__name__
    launch_kernel.__qualname__ = general.__qualname__
    launch_kernel.__doc__ = general.__doc__
    launch_kernel.__module__ = general.__module__
    launch_kernel.__wrapped__ = general.__wrapped__
    launch_kernel.__boundary__ = general.__boundary__
    launch_kernel.__general__ = general
    return launch_kernel
