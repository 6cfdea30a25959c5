"""Callbacks on a report thread: ``aclrtSubscribeReport``, ``aclrtLaunchCallback``,
``aclrtProcessReport``, ``aclrtUnSubscribeReport`` (and the run-mode / wait-status queries
pyACL programs make alongside them).

How the real runtime does it (hicann/runtime): ``src/acl/aclrt_impl/callback.cpp`` (the acl
checks: block type -> 100000, ProcessReport's timeout ``< -1 or == 0`` -> 100000),
``src/runtime/api/impl/api_error.cc`` (NULL callback -> 107000), ``api_impl.cc``
``ApiImpl::SubscribeReport`` / ``CallbackLaunch`` / ``ProcessReport`` / ``UnSubscribeReport``
(no context -> 107002, a NULL stream is the context's default stream, a stream of another
context -> 107003, a stream no thread is subscribed to -> 107015 ``RT_ERROR_STREAM_NO_CB_REG``),
``src/runtime/core/src/utils/subscribe.cc`` ``CbSubscribe::Insert`` / ``Delete`` /
``GetGroupIdByThreadId`` (a stream subscribed twice -> 107011, unsubscribing a stream from a
thread it is not subscribed to, or ProcessReport on a thread with no subscription -> 107012).
A wait that sees no report before ``timeout`` ms -> 507012 ``ACL_ERROR_RT_REPORT_TIMEOUT``.

The model (docs/fidelity.md row 80): a callback is one task on its stream. ``ACL_CALLBACK_NO_BLOCK``
is a NOP: the stream runs on. ``ACL_CALLBACK_BLOCK`` is a MEM_WAIT_VALUE on a word of the
subscription (the callbacks released so far on that stream): the stream waits there until the
report thread has run the callback and "sent the command" that releases it — on STARS chips that
command is an event record (``ProcessReport``'s ``STARS_CALLBACK_EVENT_RECORD_CMDTYPE``); here it
is a MEM_WRITE_VALUE of the word on the subscription's own SQ, submitted at the host time the
callback returned. A report is ready when the stream's head reached the callback's task (every
earlier task of the stream has run); ``aclrtProcessReport`` on the subscribed thread runs the
device until the first pending callback is reached (the host clock follows, as for a
synchronize), runs every ready callback in launch order with its user data, releases the
blocking ones, and returns 0. On a capturing stream a blocking callback is captured like a
host function (below) and served at every replay by the thread subscribed to the capturing
stream, in its aclrtProcessReport; a non-blocking one is refused (207000): nothing would tell
the report thread that a replay passed it.

Host functions in graphs (row 105): ``aclrtLaunchHostFunc`` on a capturing stream is captured
(``ApiImpl::StarsLaunchSubscribeProc`` skips only the subscription for a capturing stream; the
callback task, its event wait and reset go into the graph) as a MEM_WAIT_VALUE on a word of the
model's args memory followed by a MEM_WRITE_VALUE that clears it: every replay parks at the wait,
the host function runs when a host wait finds the model stream parked there (``STALL_HOOKS``),
and a release write on a runtime-owned SQ lets the replay go on.
"""
from __future__ import annotations

import sys
import threading
import time

from .. import errors as ERR
from ..device import engine as E
from ..device import sqe as S
from ..device.launchjit import forget as _forget
from . import api_stream as AS
from . import args as A
from .capture import stream_capturing
from .device import AFTER_RUN_HOOKS, STALL_HOOKS, WAIT_EXPLAINERS, DeadlockError
from .runtime import RT
from .stream import Stream

ACL_CALLBACK_NO_BLOCK, ACL_CALLBACK_BLOCK = 0, 1          # aclrtCallbackBlockType (acl_rt.h)
ACL_DEVICE, ACL_HOST = 0, 1                                 # aclrtRunMode (acl_rt.h)
ACL_EVENT_WAIT_STATUS_COMPLETE, ACL_EVENT_WAIT_STATUS_NOT_READY = 0, 1   # aclrtEventWaitStatus
_POLL_S = 0.005      # how often a waiting report thread looks again (wall time, lock released)


class Subscription:
    """One stream bound to one report thread: the word its blocking callbacks wait on, the SQ
    that releases them, and its callbacks not yet run (in launch order)."""
    __slots__ = ("thread_id", "stream", "word", "releaser", "launched", "released", "pending")

    def __init__(self, thread_id: int, stream):
        self.thread_id = thread_id
        self.stream = stream
        mem = stream.device.state.mem
        self.word = mem.malloc(8)
        mem.view(self.word, 8)[:] = 0
        self.releaser = Stream(stream.ctx)        # the subscription's SQ (SqCqAllocate)
        self.launched = 0                          # blocking callbacks launched
        self.released = 0                          # blocking callbacks released
        self.pending: list = []                    # [position, fn, user_data, blocking]

    def close(self) -> None:
        """Release what still waits (a stream must not hang on a dropped subscription), then
        free the word and the SQ."""
        if self.pending and any(p[3] for p in self.pending) and not self.releaser.ctx.destroyed:
            self.release_up_to(self.launched)
        self.pending = []
        dev = self.stream.device
        if not self.releaser.destroyed and not self.releaser.ctx.destroyed:
            try:
                dev.wait_sq(self.releaser.sq, self.releaser.tail)
            except DeadlockError:
                pass
            self.releaser.release()
        if dev.state.mem.allocation_of(self.word) is not None:
            dev.state.mem.free(self.word)

    def release_up_to(self, n: int) -> None:
        """Let the stream past its first ``n`` blocking callbacks (host time: now)."""
        self.released = n
        self.releaser.submit(S.OP_MEM_WRITE_VALUE, 0, self.word, n, 8)


SUBS: dict = {}                    # stream -> Subscription


def _live() -> None:
    """Forget subscriptions of destroyed streams and of devices a reset replaced."""
    for s, sub in list(SUBS.items()):
        replaced = RT.devices.get(s.device.id) is not s.device
        if s.destroyed or replaced:
            del SUBS[s]
            if not replaced and not s.ctx.destroyed:
                sub.close()          # its SQ and word (a destroyed stream's context lives on)


def _stream(sh):
    """(stream, code): the stream argument as ApiImpl resolves it (NULL: the default stream)."""
    s, code = AS.lookup(sh)
    if code:
        return None, code
    return AS.resolve(s)


def _runtime_subscribed(s) -> bool:
    """``stm->GetSubscribeFlag() == SUBSCRIBE_RUNTIME``: ``aclrtLaunchHostFunc`` subscribed the
    stream to the runtime's own callback thread (``Runtime::SubscribeCallback``,
    ``runtime.cc:5970-5977``) and the flag stays until the stream goes. The decorators test a
    non-NULL stream argument only (``api_error.cc:4700-4745``)."""
    sub = SUBS.get(s) if s is not None else None
    if sub is None or sub.thread_id != RUNTIME_THREAD:
        return False
    RT.tls.explain(f"{s.describe()} is in the host callback process (aclrtLaunchHostFunc "
                   f"subscribed it to the runtime's callback thread): aclrtSubscribeReport, "
                   f"aclrtLaunchCallback and aclrtUnSubscribeReport are refused on it")
    return True


def _user_stream(sh):
    """(stream, code): the prologue aclrtSubscribeReport and aclrtUnSubscribeReport share —
    forget stale subscriptions, the handle (107017), a stream aclrtLaunchHostFunc subscribed
    (107011), then the stream as ``ApiImpl`` resolves it (:func:`stream.resolve`: no context
    107002, NULL the default stream)."""
    _live()
    s, code = AS.lookup(sh)
    if code:
        return None, code
    if _runtime_subscribed(s):
        return None, ERR.ACL_ERROR_RT_STREAM_SUBSCRIBE
    return AS.resolve(s)


def subscribe_report(thread_id: int, sh) -> int:
    """aclrtSubscribeReport: bind ``thread_id`` (a ``pthread_self`` value: a Python thread's
    ``ident``, or what ``acl.util.start_thread`` returned) to the stream. Order: the handle
    (107017, ``rtSubscribeReport``), a stream aclrtLaunchHostFunc subscribed 107011
    (``ApiErrorDecorator::SubscribeReport``), then ``ApiImpl::SubscribeReport``."""
    s, code = _user_stream(sh)
    if code:
        return code
    if s in SUBS:
        return ERR.ACL_ERROR_RT_STREAM_SUBSCRIBE
    mine = [x for x in SUBS.values() if x.thread_id == thread_id]
    if any(x.stream.device is not s.device for x in mine):
        return ERR.ACL_ERROR_RT_THREAD_SUBSCRIBE   # one thread serves one device (CheckForInsert)
    RT.tick(s.device.timing.host_api_ns)
    SUBS[s] = Subscription(thread_id, s)
    return ERR.ACL_SUCCESS


def unsubscribe_report(thread_id: int, sh) -> int:
    """aclrtUnSubscribeReport: callbacks not yet run are dropped (blocking ones released).
    Order: the handle (107017), a stream aclrtLaunchHostFunc subscribed 107011
    (``ApiErrorDecorator::UnSubscribeReport``: the runtime's own subscription is not the
    user's to cancel, whatever ``thread_id``), then ``ApiImpl::UnSubscribeReport``."""
    s, code = _user_stream(sh)
    if code:
        return code
    sub = SUBS.get(s)
    if sub is None:
        return ERR.ACL_ERROR_RT_STREAM_SUBSCRIBE
    if sub.thread_id != thread_id:
        return ERR.ACL_ERROR_RT_THREAD_SUBSCRIBE
    del SUBS[s]
    sub.close()
    return ERR.ACL_SUCCESS


def launch_callback(fn, user_data, block_type: int, sh) -> int:
    """aclrtLaunchCallback: ``fn(user_data)`` runs on the subscribed thread when the stream
    reaches this task (pyACL passes its ``user_data_list`` as that one argument). Order: block
    type 100000 (acl); the handle 107017 (``rtCallbackLaunch``, ``api_c.cc:2187``); NULL ``fn``
    107000, a stream aclrtLaunchHostFunc subscribed 107011 (``ApiErrorDecorator::CallbackLaunch``);
    no context 107002, another context's stream 107003, no subscription 107015
    (``ApiImpl::CallbackLaunch``)."""
    _live()
    if block_type not in (ACL_CALLBACK_NO_BLOCK, ACL_CALLBACK_BLOCK):
        return ERR.ACL_ERROR_INVALID_PARAM
    s, code = AS.lookup(sh)
    if code:
        return code
    if fn is None or not callable(fn):
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    if _runtime_subscribed(s):
        return ERR.ACL_ERROR_RT_STREAM_SUBSCRIBE
    ctx = RT.current_context
    if ctx is None:
        return ERR.ACL_ERROR_RT_CONTEXT_NULL
    s, code = AS.resolve(s)
    if code:
        return code
    if s.ctx is not ctx:
        return ERR.ACL_ERROR_RT_STREAM_CONTEXT
    sub = SUBS.get(s)
    if stream_capturing(s):
        if block_type != ACL_CALLBACK_BLOCK:
            RT.tls.explain("a non-blocking callback in a graph is not simulated: nothing would "
                           "tell the report thread that a replay passed it")
            return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
        if sub is None:
            return ERR.ACL_ERROR_RT_STREAM_NO_CB_REG
        return _capture_host_func(s, fn, user_data, sub.thread_id)   # row 105
    if sub is None:
        return ERR.ACL_ERROR_RT_STREAM_NO_CB_REG
    cost = s.device.timing.host_kernel_launch_ns
    blocking = block_type == ACL_CALLBACK_BLOCK
    if blocking:
        sub.launched += 1
        pos = s.submit(S.OP_MEM_WAIT_VALUE, cost, sub.word, sub.launched, 8, flag=S.WAIT_GEQ)
    else:
        pos = s.submit(S.OP_NOP, cost)
    if pos < 0:
        if blocking:
            sub.launched -= 1
        return -pos
    sub.pending.append([pos, fn, user_data, blocking])
    return ERR.ACL_SUCCESS


def _reached(sub, first: int) -> bool:
    return sub.stream.device.state.sqs[sub.stream.sq, E.Q_HEAD] >= first


def _ready(thread_id: int, block: bool) -> list:
    """The subscriptions of ``thread_id`` whose first pending callback the stream reached.
    ``block``: when none is, run the device until the earliest one is (unless it never can)."""
    subs = [x for x in SUBS.values() if x.thread_id == thread_id and x.pending]
    for dev in {x.stream.device for x in subs}:
        dev.advance_to_host()
    ready = [x for x in subs if _reached(x, x.pending[0][0])]
    if ready or not block or not subs:
        return ready
    first = subs[0]
    try:
        first.stream.device.wait_sq(first.stream.sq, first.pending[0][0])
    except DeadlockError:
        return []
    return [x for x in subs if _reached(x, x.pending[0][0])]


def _run_callbacks(sub) -> None:
    dev = sub.stream.device
    while sub.pending and _reached(sub, sub.pending[0][0]):
        pos, fn, data, blocking = sub.pending.pop(0)
        RT.tick(dev.timing.host_api_ns)
        try:
            fn(data)
        except Exception as e:  # noqa: BLE001 -- a user's callback must not take the runtime down
            print(f"npusim: callback {fn!r} raised {e!r} (ignored, as on the report thread)",
                  file=sys.stderr)
        if blocking:
            sub.release_up_to(sub.released + 1)
            if sub.pending:              # the release lets the stream reach the next one
                dev.advance_to_host()


def process_report(timeout: int) -> int:
    """aclrtProcessReport(timeout ms; -1 waits for ever): run the callbacks reported to the
    calling thread, or 507012 when none is reported in time."""
    if timeout < -1 or timeout == 0:
        return ERR.ACL_ERROR_INVALID_PARAM
    _live()
    me = threading.get_ident()
    if not any(x.thread_id == me for x in SUBS.values()):
        return ERR.ACL_ERROR_RT_THREAD_SUBSCRIBE
    deadline = None if timeout == -1 else time.monotonic() + timeout / 1000.0
    block = True
    while True:
        ready = _ready(me, block)
        if ready:
            for sub in ready:
                _run_callbacks(sub)
            return ERR.ACL_SUCCESS
        if GRAPH_FUNCS:                    # blocking callbacks of replayed graphs
            for dev in list(RT.devices.values()):
                dev.advance_to_host()
            if _run_graph_host_funcs(None, me):
                return ERR.ACL_SUCCESS
        block = False                      # the device ran as far as it can without others
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            return ERR.ACL_ERROR_RT_REPORT_TIMEOUT
        RT.progress.wait(_POLL_S if left is None else min(_POLL_S, left))   # lock released
        _forget()                       # ... and held again: the launch memo is void
        block = True


RUNTIME_THREAD = -1
"""The thread id of the runtime's own callback thread (``Context::CreateContextCallBackThread``):
the subscription ``aclrtLaunchHostFunc`` makes for a stream."""


def launch_host_func(sh, fn, args=None) -> int:
    """aclrtLaunchHostFunc: ``fn(args)`` runs on the host when the stream reaches this task, and
    the stream waits until it returned (a blocking callback on the runtime's own callback
    thread, ``ApiImpl::LaunchHostFunc``). Checks: the handle 107017; NULL ``fn`` 107000; a stream
    a user thread subscribed to (aclrtSubscribeReport) 107011 (``RT_ERROR_SUBSCRIBE_STREAM``); no context
    107002; NULL is the default stream; another context's stream 107003. On a capturing stream
    the host function becomes two tasks of the graph and runs at every replay (module text).

    When it runs: npusim has no host thread running beside the program, so a host function runs
    when a host wait (synchronize, a blocking copy, ...) finds the device stopped at it — on the
    waiting thread, before anything that waits on its stream goes on."""
    _live()
    s, code = AS.lookup(sh)             # the handle first (rtsLaunchHostFunc, api_c.cc:4126)
    if code:
        return code
    if fn is None or not callable(fn):
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    sub = SUBS.get(s) if s is not None else None
    if sub is not None and sub.thread_id != RUNTIME_THREAD:
        return ERR.ACL_ERROR_RT_STREAM_SUBSCRIBE
    ctx = RT.current_context
    if ctx is None:
        return ERR.ACL_ERROR_RT_CONTEXT_NULL
    s, code = AS.resolve(s)
    if code:
        return code
    if s.ctx is not ctx:
        return ERR.ACL_ERROR_RT_STREAM_CONTEXT
    if stream_capturing(s):
        return _capture_host_func(s, fn, args)
    sub = SUBS.get(s)
    if sub is None:
        sub = SUBS[s] = Subscription(RUNTIME_THREAD, s)
    elif sub.thread_id != RUNTIME_THREAD:
        return ERR.ACL_ERROR_RT_STREAM_SUBSCRIBE
    sub.launched += 1
    pos = s.submit(S.OP_MEM_WAIT_VALUE, s.device.timing.host_kernel_launch_ns, sub.word,
                   sub.launched, 8, flag=S.WAIT_GEQ)
    if pos < 0:
        sub.launched -= 1
        return -pos
    sub.pending.append([pos, fn, args, True])
    return ERR.ACL_SUCCESS


class GraphHostFuncs:
    """The host-function tasks of one model: per task (capture stream, position of its wait,
    word, fn, user data, the releaser's tail once released — None while not in release), and
    the runtime-owned SQ that releases them (created at the first replay that reaches one)."""
    __slots__ = ("model", "tasks", "releaser")

    def __init__(self, model):
        self.model = model
        self.tasks: list = []
        self.releaser = None

    def close(self) -> None:
        r, self.releaser = self.releaser, None
        RELEASING.pop(self, None)
        if r is not None and not r.destroyed and not r.ctx.destroyed:
            try:
                r.device.wait_sq(r.sq, r.tail)
            except DeadlockError:
                pass
            r.release()


GRAPH_FUNCS: dict = {}             # model -> GraphHostFuncs


def _capture_host_func(s, fn, args, thread_id: int = -1) -> int:
    """A host function (or, with ``thread_id``, a blocking callback that thread serves) on a
    capturing stream: a wait on a fresh word (model args memory, freed with the model) and the
    write that clears it again, both captured."""
    m = s.capture.model
    cost = s.device.timing.host_kernel_launch_ns
    word = A.place(s, bytes(8))
    pos = s.submit(S.OP_MEM_WAIT_VALUE, cost, word, 1, 8, flag=S.WAIT_GEQ)
    if pos < 0:
        return -pos
    cs = s.capture.cstream
    reset = s.submit(S.OP_MEM_WRITE_VALUE, s.device.timing.host_api_ns, word, 0, 8)
    if reset < 0:
        return -reset
    m.inner_tasks.update(((cs, pos), (s.capture.cstream, reset)))  # DEFAULT type (row 298)
    g = GRAPH_FUNCS.get(m)
    if g is None:
        g = GRAPH_FUNCS[m] = GraphHostFuncs(m)
    g.tasks.append([cs, pos, word, fn, args, None, thread_id])
    return ERR.ACL_SUCCESS


def _run_graph_host_funcs(dev, thread_id: int = -1) -> bool:
    """The host functions (or the callbacks ``thread_id`` serves) of graphs whose replay is
    parked at one: run it, then release it. ``dev`` None: on every device."""
    ran = False
    for m, g in list(GRAPH_FUNCS.items()):
        if m.destroyed or RT.devices.get(m.device.id) is not m.device:
            del GRAPH_FUNCS[m]
            g.close()
            continue
        if dev is not None and m.device is not dev:
            continue
        st = m.device.state
        for t in g.tasks:
            cs, pos, word, fn, data, released, serving = t
            if serving != thread_id:
                continue
            if released is not None:
                if g.releaser is not None and st.sqs[g.releaser.sq, E.Q_HEAD] < released:
                    continue                        # its release has not run yet
                t[5] = None
            if cs.destroyed:
                continue
            q = st.sqs[cs.sq]
            if q[E.Q_STATE] != E.S_PARKED or q[E.Q_WAIT] != E.W_MEMORY or q[E.Q_HEAD] != pos:
                continue
            RT.tick(m.device.timing.host_api_ns)
            try:
                fn(data)
            except Exception as e:  # noqa: BLE001 -- a user's function must not break a replay
                print(f"npusim: host function {fn!r} raised {e!r} (ignored, as on the "
                      f"runtime's callback thread)", file=sys.stderr)
            if g.releaser is None or g.releaser.destroyed:
                g.releaser = Stream(m.ctx)
                RELEASING[g] = None
            g.releaser.submit(S.OP_MEM_WRITE_VALUE, 0, word, 1, 8)
            t[5] = g.releaser.tail
            ran = True
    return ran


RELEASING: dict = {}
"""The GraphHostFuncs whose releaser SQ exists (keys, in order): it is freed once its writes
have run. A dict, so a release made while the hook walks it (a stream-state callback that
synchronizes another device, whose hooks free some) is an O(1) lookup, not a list search."""


def _free_idle_releasers(dev) -> None:
    """``device.AFTER_RUN_HOOKS``: a releaser whose writes have all run is freed, so a graph's
    host functions hold no SQ between replays (the census stays flat)."""
    if not RELEASING:
        return
    for g in list(RELEASING):
        if g not in RELEASING:              # released meanwhile (by a nested run's hooks)
            continue
        r = g.releaser
        if r is None or r.destroyed or r.ctx.destroyed or \
                RT.devices.get(r.device.id) is not r.device:
            del RELEASING[g]
            g.releaser = None
        elif r.device is dev and dev.state.sqs[r.sq, E.Q_HEAD] >= r.tail:
            del RELEASING[g]
            g.releaser = None
            for t in g.tasks:
                t[5] = None
            r.release()


def _run_host_funcs(dev) -> bool:
    """``device.STALL_HOOKS``: run the host functions the device has reached (the runtime's
    callback thread), eager ones and those of replayed graphs; True when any ran, so the
    waiting host looks again."""
    ran = False
    for sub in list(SUBS.values()):
        if sub.thread_id == RUNTIME_THREAD and sub.stream.device is dev and sub.pending and \
                _reached(sub, sub.pending[0][0]):
            _run_callbacks(sub)
            ran = True
    if GRAPH_FUNCS and _run_graph_host_funcs(dev):
        ran = True
    return ran


def _served_by(dev, me: int) -> set:
    """The ids of the report threads (other than ``me``) with a callback on ``dev`` that its
    stream has reached: an eager one (``SUBS``), or a blocking one of a graph whose replay is
    parked at it (``GRAPH_FUNCS``)."""
    ids = {sub.thread_id for sub in SUBS.values()
           if sub.thread_id not in (RUNTIME_THREAD, me) and sub.stream.device is dev and
           sub.pending and _reached(sub, sub.pending[0][0])}
    for m, g in GRAPH_FUNCS.items():
        if m.device is not dev or m.destroyed:
            continue
        for cs, pos, _word, _fn, _data, released, serving in g.tasks:
            if serving in (RUNTIME_THREAD, me) or released is not None or cs.destroyed:
                continue
            q = dev.state.sqs[cs.sq]
            if q[E.Q_STATE] == E.S_PARKED and q[E.Q_WAIT] == E.W_MEMORY and q[E.Q_HEAD] == pos:
                ids.add(serving)
    return ids


def _await_report_thread(dev) -> bool:
    """``device.STALL_HOOKS`` (docs/fidelity.md row 202): the device waits on a callback a
    report thread will run in its next ``aclrtProcessReport`` — a live thread subscribed to
    the stream, whether or not it ever set a device or context (pyACL's report threads often
    do not: ``RT.users`` counts only threads that did). Wait for a facade call to end, as for
    another user thread (``Runtime.await_progress``); True when one did, so the waiting host
    looks again. A report thread that has exited, or never existed, serves nothing: False, and
    the wait is a deadlock at once."""
    ids = _served_by(dev, threading.get_ident())
    if not ids:
        return False
    alive = {t.ident for t in threading.enumerate()}
    if not any(i in alive and i not in RT.stalled for i in ids):
        return False
    return RT.await_progress()


_BLOCK_TYPE_NAMES = {True: "ACL_CALLBACK_BLOCK", False: "ACL_CALLBACK_NO_BLOCK"}


def _thread_state(thread_id: int) -> str:
    """Why report thread ``thread_id`` does not run the callback, as the diagnosis says it."""
    if thread_id == threading.get_ident():
        return "is the thread waiting here, which cannot call acl.rt.process_report meanwhile"
    if thread_id not in {t.ident for t in threading.enumerate()}:
        return "has exited or is not a live thread"
    if thread_id in RT.stalled:
        return "is alive but itself blocked in a host wait"
    return "is alive but made no acl.rt.process_report call within the stall wait"


def _fn_name(fn) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


def _callback_wait_text(what: str, thread_id: int, stream: str) -> str:
    return (f"{what}: its subscribed report thread {thread_id} {_thread_state(thread_id)}, so no "
            f"aclrtProcessReport runs them and the stream never resumes. Fix: keep the report "
            f"thread calling acl.rt.process_report until {stream} is synchronized, or "
            f"unsubscribe first (acl.rt.unsubscribe_report)")


def _explain_callback_wait(dev, sq: int, pos: int) -> str:
    """``device.WAIT_EXPLAINERS`` (docs/fidelity.md row 360): a stream parked at the blocking
    callback at ``pos`` of SQ ``sq`` — eager, or a graph's at a replay — that no report thread
    will run: the callbacks it waits for (BLOCK / NO_BLOCK, in launch order), the thread and
    why it does not serve them, and the fix. ``""`` for any other memory wait."""
    with RT.lock:                    # (the diagnosis runs outside the lock; the tables change)
        return _callback_wait(dev, sq, pos)


def _callback_wait(dev, sq: int, pos: int) -> str:
    for sub in list(SUBS.values()):
        s = sub.stream
        if s.device is not dev or s.sq != sq or sub.thread_id == RUNTIME_THREAD:
            continue
        todo = [p for p in sub.pending if p[0] <= pos]
        if not todo or todo[-1][0] != pos:
            continue
        names = ", ".join(f"{_fn_name(fn)} ({_BLOCK_TYPE_NAMES[bool(block)]}) at task position {p}"
                          for p, fn, _data, block in todo)
        what = "the callback " if len(todo) == 1 else f"{len(todo)} callbacks not yet run: "
        return _callback_wait_text(what + names, sub.thread_id, s.describe())
    for m, g in list(GRAPH_FUNCS.items()):
        if m.device is not dev or m.destroyed:
            continue
        for cs, p, _word, fn, _args, released, serving in g.tasks:
            if serving != RUNTIME_THREAD and released is None and not cs.destroyed and \
                    cs.sq == sq and p == pos:
                what = f"the callback {_fn_name(fn)} (ACL_CALLBACK_BLOCK) captured in " \
                       f"{m.describe()}"
                return _callback_wait_text(what, serving, "the stream that launched the graph")
    return ""


if _explain_callback_wait not in WAIT_EXPLAINERS:
    WAIT_EXPLAINERS.append(_explain_callback_wait)
if _run_host_funcs not in STALL_HOOKS:
    STALL_HOOKS.append(_run_host_funcs)
if _await_report_thread not in STALL_HOOKS:
    STALL_HOOKS.append(_await_report_thread)
if _free_idle_releasers not in AFTER_RUN_HOOKS:
    AFTER_RUN_HOOKS.append(_free_idle_releasers)


def get_run_mode():
    """aclrtGetRunMode: npusim runs where a host CPU drives a card: ACL_HOST."""
    return ACL_HOST, ERR.ACL_SUCCESS
