"""Process-wide runtime state: init/finalize, the chip profile, devices, handles, host clock.

One ``Runtime`` exists per process (``RT``), like the real ``Runtime`` singleton. ``acl.init``
fixes the chip profile (``NPUSIM_PROFILE`` or ``npusim.configure``); everything after follows it.
The host clock is simulated time on the host side: every API call advances it by the profile's
cost for that call, and observing the device (synchronize, query, D2H copy) moves it to the time
the device work it waited for finished.
"""
from __future__ import annotations

import os
import threading

from .. import errors as ERR
from ..device.launchjit import C_HOST as _C_HOST, CTLW as _CTLW, forget as _forget
from ..profiles import DEFAULT_PROFILE, get_profile
from .handles import Registry
from .pageable import PageableRegistry


MODE_NONE = 3
"""aclmdlRICaptureMode count (GLOBAL, THREAD_LOCAL, RELAXED = 0, 1, 2): "no capture mode"."""


class _ThreadState(threading.local):
    """Per thread: ``context`` (curCtx, set explicitly), ``primary`` (curRef, the primary
    context of the device this thread set), and the thread's capture-mode bookkeeping
    (``spec/aclgraph.md`` §3.2): captures begun per mode and the exchanged mode."""

    def __init__(self):
        self._context = None
        self._primary = None
        self.current = None
        """``context`` if set, else ``primary``: what :attr:`Runtime.current_context` and the
        hot paths' inline copies of it read first (one read of this thread-local object instead
        of two). Derived, never assigned elsewhere: the ``context`` and ``primary`` setters
        keep it."""
        self.capture_refs = [0, 0, 0]     # captures this thread began, per mode
        self.exchange_mode = 0            # aclmdlRICaptureThreadExchangeMode (GLOBAL)
        self.recent_error = None          # aclGetRecentErrMsg: the last failure's text
        self.error_detail = ""            # why the current call fails, set by the runtime
        self.arg_note = ""                # the argument boundary's note on a value it
        #                                   substituted (a non-int pointer passed as NULL),
        #                                   said before the runtime's reason on a failure
        self.last_error = 0               # aclrtGetLastError: the last runtime code returned
        self.last_bound_task = None       # (host time, task id) of the last task this thread
        #                                   wrote into a built model (aclrtGetThreadLastTaskId)
        # aclrtGetThreadLastTaskId is per thread (InnerThreadLocalContainer::GetLastTaskId):
        # once a second thread uses the runtime, each eager task a thread submits is noted here
        # as (doorbell ns, task id) (stream.note_task); ``first``: this thread used the runtime
        # first, so the tasks submitted before a second thread came are its own
        # (docs/fidelity.md row 296)
        self.last_task = None
        rt = globals().get("RT")              # None while the Runtime itself is being made
        self.first = rt is None or rt.threads == 0
        if rt is not None:
            rt.threads += 1

    @property
    def context(self):
        """curCtx: the context this thread set (aclrtSetCurrentContext / CreateContext)."""
        return self._context

    @context.setter
    def context(self, ctx) -> None:
        self._context = ctx
        self.current = ctx if ctx is not None else self._primary

    @property
    def primary(self):
        """curRef: the primary context of the device this thread set (aclrtSetDevice)."""
        return self._primary

    @primary.setter
    def primary(self, ctx) -> None:
        self._primary = ctx
        if self._context is None:
            self.current = ctx

    def explain(self, detail: str) -> None:
        """The runtime's reason for the failure the current call is about to return (the
        deadlock diagnosis, ...): the facade puts it into the recent error message."""
        self.error_detail = detail

    def take_detail(self) -> str:
        d, self.error_detail = self.error_detail, ""
        if self.arg_note:
            n, self.arg_note = self.arg_note, ""
            return f"{n}; {d}" if d else n
        return d


class Runtime:
    """The process singleton ``RT``. Every field is declared here; nothing else adds any."""

    __slots__ = ("initialized", "init_refs", "finalized", "profile_name", "profile_overrides",
                 "profile", "devices", "handles", "tls", "lock", "trace_on",
                 "host_trace", "markers", "device_options", "pageable", "progress", "users",
                 "stalled", "stall_wait_s", "op_wait_timeout_s", "op_execute_timeout_us",
                 "stream_state_callbacks", "task_fail_callback", "threads", "pre_thread_last",
                 "callbacks", "sat_mode")

    def __init__(self):
        self.initialized = False
        self.init_refs = 0
        self.finalized = False
        self.profile_name = os.environ.get("NPUSIM_PROFILE", DEFAULT_PROFILE)
        self.profile_overrides: dict = {}
        self.profile = None
        self.devices: dict = {}           # device id -> Device (opened by set_device/create ctx)
        self.handles = Registry()
        self.tls = _ThreadState()
        self.threads = 1        # thread states made since the last reset (the tls docstring)
        self.pre_thread_last = None  # (doorbell ns, task id): the last eager task before a
        #                              second thread used the runtime (stream.note_task)
        self.host_ns = 0
        self.lock = threading.RLock()
        self.trace_on = False
        self.host_trace: list = []       # (api name, host ns at entry, host ns at exit)
        self.markers: list = []          # (name, host ns, end ns or -1 for a mark): trace.mark
        self.device_options: dict = {}
        self.pageable = PageableRegistry()   # numpy arrays given to acl.util.numpy_to_ptr
        self.op_wait_timeout_s = 0           # aclrtSetOpWaitTimeout (0: none)
        self.op_execute_timeout_us = 0       # aclrtSetOpExecuteTimeOut* (0: the default)
        # aclrtRegStreamStateCallback: name -> (callback, args), process-wide (runtime/stream.py)
        self.stream_state_callbacks: dict = {}
        self.task_fail_callback = None       # aclrtSetExceptionInfoCallback (the acl module's)
        # the other process-wide callback registries (chapters 02 / 04 / 13): registry name ->
        # its table, owned and filled by its runtime module (api_lifecycle, api_devstate,
        # api_exception); emptied by ``reset`` like everything of the process
        self.callbacks: dict = {}
        # aclrtSetDeviceSatMode's process-wide mode (``Runtime::satMode_``); None: the chip's
        # default (``Profile.sat_default``), read by api_overflow.get_device_sat_mode
        self.sat_mode = None
        # threads (docs/architecture.md, "Threads"): every facade call holds ``lock``; a thread
        # whose wait nothing queued can satisfy waits on ``progress`` while another user thread
        # (one that set a device or context) is alive and not itself stalled
        self.progress = threading.Condition(self.lock)
        self.users: dict = {}                # thread ident -> Thread that set a device/context
        self.stalled: set = set()            # idents of threads waiting on ``progress``
        self.stall_wait_s = float(os.environ.get("NPUSIM_STALL_WAIT_S", 1.0))

    # ---- configuration ----
    def configure(self, profile: str | None = None, trace: bool | None = None,
                  **options) -> None:
        """Choose the chip profile (and simulator options) used by the next ``acl.init``."""
        _forget()                       # tracing, timing, options: the launch memo is void
        if profile is not None:
            get_profile(profile)                       # KeyError with the valid names
            self.profile_name = profile
        if trace is not None:
            self.trace_on = bool(trace)
            for d in self.devices.values():
                d.state.set_tracing(self.trace_on)
        timing = options.pop("timing", None)
        if timing:
            self.profile_overrides.update(timing)
        self.device_options.update(options)

    def profile_in_force(self):
        """The chip profile in force: fixed by ``acl.init``; APIs do not require init (as in the
        real runtime), so before it the configured one is used."""
        if self.profile is None:
            p = get_profile(self.profile_name)
            return p.with_timing(**self.profile_overrides) if self.profile_overrides else p
        return self.profile

    # ---- threads ----
    def note_user(self) -> None:
        """The calling thread uses the runtime (it set a device or a context)."""
        t = threading.current_thread()
        self.users[t.ident] = t

    def others_may_submit(self) -> bool:
        """Is another user thread alive and not itself stalled (it may still queue the record
        this thread's wait needs)?"""
        me = threading.get_ident()
        for ident, t in list(self.users.items()):
            if not t.is_alive():
                del self.users[ident]
            elif ident != me and ident not in self.stalled:
                return True
        return False

    def await_progress(self) -> bool:
        """Wait (releasing the lock) until another thread's facade call ends or
        ``stall_wait_s`` passes; True when woken. Called with the lock held."""
        me = threading.get_ident()
        self.stalled.add(me)
        try:
            return self.progress.wait(self.stall_wait_s)
        finally:
            self.stalled.discard(me)
            _forget()                   # the lock is held again: a region resumes

    def call_done(self) -> None:
        """A facade call ended: wake threads stalled on a wait it may have satisfied."""
        if self.stalled:
            with self.lock:
                self.progress.notify_all()

    # ---- host clock ----
    @property
    def host_ns(self) -> int:
        """The host clock (ns): ``launchjit.CTL[C_HOST]``, which the compiled launch path
        advances too."""
        return _CTLW[_C_HOST]

    @host_ns.setter
    def host_ns(self, t: int) -> None:
        try:
            _CTLW[_C_HOST] = t
        except TypeError:                 # a float (a cost scaled by a factor): whole ns
            _CTLW[_C_HOST] = int(t)

    def tick(self, ns: int) -> int:
        """Advance the host clock by an API's cost; returns the new host time."""
        self.host_ns += int(ns)
        return self.host_ns

    def host_at_least(self, t: int) -> None:
        if t > self.host_ns:
            self.host_ns = int(t)

    # ---- init / finalize ----
    def init(self) -> int:
        """aclInit: a second init counts a reference and returns 100002 (acl.cpp:388-391)."""
        if self.init_refs > 0:
            self.init_refs += 1
            return ERR.ACL_ERROR_REPEAT_INITIALIZE
        prof = get_profile(self.profile_name)
        if self.profile_overrides:
            prof = prof.with_timing(**self.profile_overrides)
        if self.profile is not None and prof != self.profile:
            self.reset()                 # a new chip: nothing of the old one survives
        self.profile = prof
        self.initialized = True
        self.finalized = False
        self.init_refs = 1
        return ERR.ACL_SUCCESS

    def finalize(self) -> int:
        """aclFinalize: 100037 only after a finalize; it does not reset devices or free memory
        (acl.cpp:547-646), so neither does the simulator. ``reset`` wipes everything."""
        if self.finalized:
            return ERR.ACL_ERROR_REPEAT_FINALIZE
        self.init_refs = 0
        self.finalized = True
        self.initialized = False
        return ERR.ACL_SUCCESS

    def reset(self, config: bool = False) -> None:
        """Forget every device, handle and thread binding (a fresh process, for tests); with
        ``config`` also the configuration (profile from NPUSIM_PROFILE, tracing off, options)."""
        _forget()
        self.stream_state_callbacks = {}        # none called while the devices close
        if config:
            self.profile_name = os.environ.get("NPUSIM_PROFILE", DEFAULT_PROFILE)
            self.profile_overrides = {}
            self.device_options = {}
            self.trace_on = False
        for d in list(self.devices.values()):
            d.close()
        self.devices.clear()
        self.handles.clear()
        self.pageable.clear()
        self.threads, self.pre_thread_last = 0, None
        self.tls = _ThreadState()
        self.users = {}
        self.initialized = self.finalized = False
        self.init_refs = 0
        self.profile = None
        self.host_ns = 0
        self.host_trace = []
        self.markers = []
        self.op_wait_timeout_s = 0
        self.op_execute_timeout_us = 0
        self.task_fail_callback = None
        self.callbacks = {}
        self.sat_mode = None

    # ---- contexts ----
    @property
    def current_context(self):
        """curCtx if still valid, else the referenced primary context if still valid."""
        tls = self.tls
        ctx = tls.current                   # curCtx if set, else curRef
        if ctx is not None and not ctx.destroyed:
            return ctx
        ctx = tls.primary
        return ctx if ctx is not None and not ctx.destroyed else None


RT = Runtime()


def profile():
    """The chip profile in force (``Runtime.profile_in_force`` of ``RT``)."""
    return RT.profile_in_force()


def context_checks(obj, mismatch: int) -> int:
    """``ApiImpl``'s context checks of a stream or model handle, in the runtime's order: no
    current context 107002, then ``obj`` made in another context ``mismatch`` (107003 for a
    stream, 107004 for a model); else 0."""
    ctx = RT.current_context
    if ctx is None:
        return ERR.ACL_ERROR_RT_CONTEXT_NULL
    if obj.ctx is not ctx:
        return mismatch
    return ERR.ACL_SUCCESS


def null_param(what: str) -> int:
    """The acl layer's NULL check (``ACL_REQUIRES_NOT_NULL``): 100000, naming ``what``."""
    RT.tls.explain(f"{what} is NULL")
    return ERR.ACL_ERROR_INVALID_PARAM


# ---- watching failures (npusim run --explain) ----
ERROR_WATCHERS: list = []
"""Callbacks ``watch(text)`` told of every recent error message a failed facade call sets (the
text ``acl.get_recent_err_msg()`` returns): ``npusim run --explain`` prints them. Empty, they cost
one list test per failed call and nothing per successful one."""


def set_recent_error(text: str) -> None:
    """The calling thread's recent error message (aclGetRecentErrMsg), told to the watchers."""
    RT.tls.recent_error = text
    if ERROR_WATCHERS:
        for watch in ERROR_WATCHERS:
            watch(text)
