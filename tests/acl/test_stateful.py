"""A stateful property test over the facade (hypothesis ``RuleBasedStateMachine``).

Random programs of streams, events, device buffers, kernel launches (the sample binary's
EasyOPf ``x[b] += 1`` and ShortOPf ``x[b] *= 2``), async memsets, captures in every mode with
cross-stream joins, task groups and task update, graph replay and destroy. A small model of the
program says what every buffer must hold; after each read the device must agree. Invariants:
no facade call raises, every call returns its documented code, synchronize returns, and after
teardown the resource census (``npusim.census``) is back to where it started.

``NPUSIM_STATEFUL_EXAMPLES`` / ``NPUSIM_STATEFUL_STEPS`` make the run longer (the suite runs a
bounded one; ``bench/`` and the closing notes quote a long one).
"""
from __future__ import annotations

import os

import numpy as np
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (Bundle, RuleBasedStateMachine, consumes, initialize,
                                 invariant, precondition, rule)

import npusim as ns
from npusim import acl

OK = acl.ACL_SUCCESS
WORDS = 16                      # a buffer: 16 u32 words (EasyOPf / ShortOPf touch word b)
NBYTES = 4 * WORDS
EXAMPLES = int(os.environ.get("NPUSIM_STATEFUL_EXAMPLES", 25))
STEPS = int(os.environ.get("NPUSIM_STATEFUL_STEPS", 40))


def _code(r):
    assert isinstance(r, (int, tuple)), f"facade returned {r!r}"
    return r[-1] if isinstance(r, tuple) else r


def _ok(r):
    assert _code(r) == OK, r
    return r[0] if isinstance(r, tuple) and len(r) == 2 else r


def _apply(words: np.ndarray, op: tuple) -> None:
    """The model of one task on a buffer's words."""
    kind, arg = op
    if kind == "memset":
        words[:] = np.uint32(arg * 0x01010101)
    elif kind == "easy":
        words[:arg] += np.uint32(1)
    elif kind == "short":
        words[:arg] *= np.uint32(2)


class FacadeMachine(RuleBasedStateMachine):
    streams = Bundle("streams")
    buffers = Bundle("buffers")
    events = Bundle("events")
    graphs = Bundle("graphs")

    def __init__(self):
        super().__init__()
        self.base = None                # census after setup
        self.model: dict = {}           # buffer ptr -> expected words (None: unknown)
        self.args: dict = {}            # buffer ptr -> device args block holding the pointer
        self.args_ready: set = set()    # buffers whose args block was written
        self.owners: dict = {}          # buffer ptr -> the one stream its eager writes use
        self.capture = None             # dict while a capture is open
        self.graph_ops: dict = {}       # graph handle -> [(buf, op)] in replay order
        self.groups: dict = {}          # graph handle -> (group handle, indices into its ops)
        self.live_streams: set = set()
        self.live_events: set = set()

    @initialize()
    def setup(self):
        ns.reset()
        _ok(acl.init())
        _ok(acl.rt.set_device(0))
        self.binary = _ok(acl.rt.binary_load_from_file(ns.samples.binary_path(), None))
        self.funcs = {k: _ok(acl.rt.binary_get_function(self.binary, n))
                      for k, n in (("easy", "EasyOPf"), ("short", "ShortOPf"))}
        self.base = ns.census()         # the binary (and the device's printf area) stay

    # ---- resources ----
    @rule(target=streams)
    def create_stream(self):
        s = _ok(acl.rt.create_stream())
        self.live_streams.add(s)
        return s

    @rule(target=buffers, value=st.integers(0, 255))
    def create_buffer(self, value):
        p = _ok(acl.rt.malloc(NBYTES, acl.ACL_MEM_MALLOC_HUGE_FIRST))
        a = _ok(acl.rt.malloc(8, acl.ACL_MEM_MALLOC_HUGE_FIRST))
        ptr = np.array([p], np.uint64)
        if self.capture is not None and self.capture["mode"] != 2:
            # synchronous calls are refused while a GLOBAL / THREAD_LOCAL capture is open
            assert _code(acl.rt.memset(p, NBYTES, value, NBYTES)) == \
                acl.ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT
            self.model[p] = None                           # contents unknown until written
        else:
            _ok(acl.rt.memset(p, NBYTES, value, NBYTES))
            self.model[p] = np.full(WORDS, value * 0x01010101, np.uint32)
        self.args[p] = a
        if self.capture is None or self.capture["mode"] == 2:
            _ok(acl.rt.memcpy(a, 8, acl.util.numpy_to_ptr(ptr), 8,
                              acl.ACL_MEMCPY_HOST_TO_DEVICE))
            self.args_ready.add(p)
        return p

    @rule(target=events)
    def create_event(self):
        ev = _ok(acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC))
        self.live_events.add(ev)
        return ev

    @precondition(lambda self: self.capture is None)
    @rule(ev=consumes(events))
    def destroy_event(self, ev):
        _ok(acl.rt.destroy_event(ev))
        self.live_events.discard(ev)

    # ---- eager or captured work ----
    def _ready(self, buf) -> bool:
        return buf in self.args_ready and self.model[buf] is not None

    def _submit(self, s, buf, op) -> int:
        kind, arg = op
        if kind == "memset":
            return _code(acl.rt.memset_async(buf, NBYTES, arg, NBYTES, s))
        return _code(acl.rt.launch_kernel(self.funcs[kind], arg, self.args[buf], 8, s))

    @rule(s=streams, buf=buffers, op=st.one_of(
        st.tuples(st.just("memset"), st.integers(0, 255)),
        st.tuples(st.sampled_from(["easy", "short"]), st.integers(1, WORDS))))
    def work(self, s, buf, op):
        if s not in self.live_streams or not self._ready(buf):
            return
        cap = self.capture
        if cap is not None and s in cap["streams"]:
            if s != cap["origin"]:
                return                          # joined streams only fork and join (see module)
            if cap["group"] is not None and op[0] == "memset":
                # a non-kernel task inside an open task group: 507009, capture invalidated
                assert self._submit(s, buf, op) == acl.ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT
                cap["invalid"] = True
                return
            assert self._submit(s, buf, op) == OK
            if cap["group"] is not None:
                cap["group"].append(len(cap["ops"]))
            cap["ops"].append((buf, op))
            return
        if self._owner(buf, s):
            assert self._submit(s, buf, op) == OK
            _apply(self.model[buf], op)

    def _owner(self, buf, s) -> bool:
        """A buffer's eager writes all go through one stream, so the model's program order
        is the device's order."""
        return self.owners.setdefault(buf, s) == s

    # ---- capture ----
    @precondition(lambda self: self.capture is None)
    @rule(s=streams, mode=st.sampled_from([0, 1, 2]))
    def capture_begin(self, s, mode):
        if s not in self.live_streams:
            return
        _ok(acl.mdl.ri_capture_begin(s, mode))
        event(f"capture mode {mode}")
        self.capture = {"origin": s, "mode": mode, "streams": {s}, "ops": [], "joins": [],
                        "group": None, "groups": [], "invalid": False}

    @precondition(lambda self: self.capture is not None)
    @rule(s=streams, ev=events)
    def join(self, s, ev):
        """Fork: record on the origin, wait on another stream (it joins the capture)."""
        cap = self.capture
        if s in cap["streams"] or s not in self.live_streams or cap["group"] is not None or \
                ev not in self.live_events:
            return
        if cap["invalid"]:
            # joining an invalidated capture (§3.5): the wait is refused with 507000
            _ok(acl.rt.record_event(ev, cap["origin"]))
            assert _code(acl.rt.stream_wait_event(s, ev)) == acl.ACL_ERROR_RT_INTERNAL_ERROR
            return
        _ok(acl.rt.record_event(ev, cap["origin"]))
        _ok(acl.rt.stream_wait_event(s, ev))
        cap["streams"].add(s)
        cap["joins"].append(s)
        event("joined a stream")

    @precondition(lambda self: self.capture is not None and self.capture["group"] is None)
    @rule()
    def group_begin(self):
        _ok(acl.mdl.ri_capture_task_grp_begin(self.capture["origin"]))
        self.capture["group"] = []

    @precondition(lambda self: self.capture is not None and self.capture["group"] is not None)
    @rule()
    def group_end(self):
        cap = self.capture
        r = acl.mdl.ri_capture_task_grp_end(cap["origin"])
        if cap["invalid"]:
            assert _code(r) != OK
        else:
            cap["groups"].append((_ok(r), cap["group"]))
        cap["group"] = None

    @precondition(lambda self: self.capture is not None)
    @rule(target=graphs)
    def capture_end(self):
        cap = self.capture
        o = cap["origin"]
        if cap["group"] is not None:
            self.group_end()
        for s in cap["joins"]:                      # join back: record on the side, wait on o
            ev = _ok(acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_SYNC))
            _ok(acl.rt.record_event(ev, s))
            _ok(acl.rt.stream_wait_event(o, ev))
            _ok(acl.rt.destroy_event(ev))
        m, code = acl.mdl.ri_capture_end(o)
        self.capture = None
        if cap["invalid"]:
            assert code == acl.ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED and m is None
            return None
        assert code == OK
        event(f"captured {min(len(cap['ops']), 3)}+ tasks")
        self.graph_ops[m] = cap["ops"]
        if cap["groups"]:
            self.groups[m] = cap["groups"][-1]
        return m

    @precondition(lambda self: self.capture is None)
    @rule(target=graphs, s=streams, mode=st.sampled_from([0, 1, 2]), grouped=st.booleans(),
          work=st.lists(st.tuples(buffers, st.sampled_from(["easy", "short"]),
                                  st.integers(1, WORDS)), min_size=1, max_size=6),
          n=st.integers(1, 3))
    def whole_graph(self, s, mode, grouped, work, n):
        """Capture a few kernels (in a task group or not), end, replay ``n`` times."""
        if s not in self.live_streams:
            return None
        work = [(b, k, nb) for b, k, nb in work if self._ready(b)]
        if not work:
            return None
        self.capture_begin(s, mode)
        if grouped:
            self.group_begin()
        for b, k, nb in work:
            self.work(s, b, (k, nb))
        m = self.capture_end()
        self.replay(m, s, n)
        return m

    # ---- replay ----
    @precondition(lambda self: self.capture is None)
    @rule(m=graphs, s=streams, n=st.integers(1, 3))
    def replay(self, m, s, n):
        if m is None or m not in self.graph_ops or s not in self.live_streams:
            return
        _ok(acl.rt.synchronize_device())
        for _ in range(n):
            _ok(acl.mdl.ri_execute_async(m, s))
        _ok(acl.rt.synchronize_stream(s))
        event(f"replayed a graph of {min(len(self.graph_ops[m]), 3)}+ tasks")
        for _ in range(n):
            for buf, op in self.graph_ops[m]:
                if self.model.get(buf) is not None:
                    _apply(self.model[buf], op)

    @precondition(lambda self: self.capture is None)
    @rule(m=graphs, s=streams, kinds=st.lists(st.sampled_from(["easy", "short"]), max_size=8))
    def update_group(self, m, s, kinds):
        """Rewrite a graph's task group on an update stream (same number of kernels)."""
        if m not in self.groups or s not in self.live_streams:
            return
        handle, idx = self.groups[m]
        _ok(acl.rt.synchronize_device())
        _ok(acl.mdl.ri_capture_task_update_begin(s, handle))
        ops = self.graph_ops[m]
        for j, i in enumerate(idx):
            buf, (kind, blocks) = ops[i]
            kind = kinds[j] if j < len(kinds) else kind
            _ok(acl.rt.launch_kernel(self.funcs[kind], blocks, self.args[buf], 8, s))
            ops[i] = (buf, (kind, blocks))
        _ok(acl.mdl.ri_capture_task_update_end(s))
        event("updated a task group")
        _ok(acl.rt.synchronize_stream(s))           # the update lands before any replay

    @precondition(lambda self: self.capture is None)
    @rule(m=consumes(graphs))
    def destroy_graph(self, m):
        if m is None or m not in self.graph_ops:
            return
        _ok(acl.rt.synchronize_device())
        _ok(acl.mdl.ri_destroy(m))
        del self.graph_ops[m]
        self.groups.pop(m, None)

    @precondition(lambda self: self.capture is None)
    @rule(s=consumes(streams))
    def destroy_stream(self, s):
        if s not in self.live_streams:
            return
        _ok(acl.rt.destroy_stream(s))
        self.live_streams.discard(s)
        self.owners = {b: o for b, o in self.owners.items() if o != s}

    # ---- checks ----
    @precondition(lambda self: self.capture is None)
    @rule()
    def read_back(self):
        _ok(acl.rt.synchronize_device())
        for p, words in self.model.items():
            if words is None:
                continue
            got = np.zeros(WORDS, np.uint32)
            _ok(acl.rt.memcpy(acl.util.numpy_to_ptr(got), NBYTES, p, NBYTES,
                              acl.ACL_MEMCPY_DEVICE_TO_HOST))
            assert (got == words).all(), (hex(p), got, words)
            event("checked a buffer")

    @invariant()
    def census_counts_what_the_program_holds(self):
        if self.base is None:
            return
        c = ns.census().devices[0]
        assert c["models"] == len(self.graph_ops) + (self.capture is not None)
        assert c["streams"] == len(self.live_streams) + 1          # + the default stream
        assert c["events"] == len(self.live_events)

    def teardown(self):
        if self.base is None:
            return
        if self.capture is not None:                # end it; a graph it made goes too
            m, code = acl.mdl.ri_capture_end(self.capture["origin"])
            if code == OK:
                _ok(acl.mdl.ri_destroy(m))
            self.capture = None
        self.read_back()
        for m in list(self.graph_ops):
            _ok(acl.mdl.ri_destroy(m))
        for s in self.live_streams:
            _ok(acl.rt.destroy_stream(s))
        for p, a in self.args.items():
            _ok(acl.rt.free(p))
            _ok(acl.rt.free(a))
        for ev in self.live_events:
            _ok(acl.rt.destroy_event(ev))
        assert ns.census().diff(self.base) == {}
        _ok(acl.rt.binary_unload(self.binary))


FacadeMachine.TestCase.settings = settings(
    max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
test_facade_state_machine = FacadeMachine.TestCase
