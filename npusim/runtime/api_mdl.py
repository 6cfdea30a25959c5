"""aclmdlRI* capture and model APIs: check orders of ``spec/aclgraph.md`` §1, §4.5, §6."""
from __future__ import annotations

import threading

from .. import errors as ERR
from ..device import sqe as S
from ..device.launchjit import forget as _forget
from . import api_stream as AS
from . import capture as C
from . import cond, dump, tasks
from . import model as M
from . import taskgroup as TG
from .capture import bad_capture_flags
from .device import DeadlockError
from .runtime import RT, context_checks, profile

DESTROY_WAIT_NS = 10_000 * 1_000_000      # 10 000 polls of 1 ms before 107037
RELAXED = C.RELAXED


def _feature() -> int:
    return ERR.ACL_SUCCESS if profile().acl_graph else ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT


def model_of(h):
    """(model, code) of a model handle: NULL -> (None, 0), stale -> 107017."""
    return RT.handles.get("model", h)


def _stream_and_model(stream, model_ri):
    """Chip feature, then stream and model handle validation: (stream, model, code)."""
    code = _feature()
    if code:
        return None, None, code
    s, code = AS.lookup(stream)
    if code:
        return None, None, code
    m, code = model_of(model_ri)
    return s, m, code


# ---- capture begin / end ----
def ri_capture_begin(stream, mode) -> int:
    if not stream:
        return ERR.ACL_ERROR_INVALID_PARAM
    code = _feature()
    if code:
        return code
    s, code = AS.lookup(stream)
    if code:
        return code
    return _begin(s, mode, None)


def ri_capture_to_model_ri_begin(stream, model_ri, mode) -> int:
    if not stream or not model_ri:
        return ERR.ACL_ERROR_INVALID_PARAM
    s, m, code = _stream_and_model(stream, model_ri)
    if code:
        return code
    if not m.sub:
        RT.tls.explain("model_ri: a root model is never captured into (only a sub-model of a cond "
                       "task)")
        return ERR.ACL_ERROR_RT_PARAM_INVALID              # a root is never re-captured into
    return _begin(s, mode, m)


def _begin(s, mode, sub_model) -> int:
    if not isinstance(mode, int) or not 0 <= mode < 3:
        RT.tls.explain(f"mode: {mode!r} is not an aclmdlRICaptureMode (0 GLOBAL, 1 "
                       f"THREAD_LOCAL, 2 RELAXED)")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    if bad_capture_flags(s):
        return ERR.ACL_ERROR_RT_INTERNAL_ERROR
    code = context_checks(s, ERR.ACL_ERROR_RT_STREAM_CONTEXT)
    if code:
        return code
    if s.is_model or s.bound is not None:      # a model stream: a bound one too (§1.13)
        return ERR.ACL_ERROR_RT_STREAM_MODEL
    if s.is_default:
        return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    with RT.lock:
        _forget()                       # a locked region begins: the launch memo is void
        if sub_model is not None and sub_model.status != M.NONE:
            return ERR.ACL_ERROR_RT_MODEL_CAPTURED
        if s.capture is not None:
            return ERR.ACL_ERROR_RT_STREAM_CAPTURED
        RT.tick(s.device.timing.host_capture_begin_ns)
        if sub_model is None:
            m = M.CaptureModel(s.ctx)
            RT.handles.add("model", m)
        else:
            m = sub_model
        C.enter(s, m, "origin", original=True, head=True)
        C.mode_enter(s, mode)
    return ERR.ACL_SUCCESS


END_FAILING_HOOKS: list = []
"""``hook(stream)`` each: called by :func:`ri_capture_end` just before a failure that changes
state (the capture exits, or the model is destroyed), so the capture linter's snapshot of the
state before the call is taken there, not at every call (``acl/_hosttrace.py`` registers its
hook, as ``device.AFTER_RUN_HOOKS`` are registered). A failure that returns without calling them
changed nothing."""


def _end_failing(stream) -> None:
    for hook in END_FAILING_HOOKS:
        hook(stream)


CAPTURE_END_HOOKS: list = []
"""Callbacks ``hook(origin stream, model)`` called by ``aclmdlRICaptureEnd`` before it checks
that every side stream joined back: ``npusim/hccl/lower.py`` joins HCCL's side streams to the
origin (HCCL's ``CaptureSlaveStreams`` keeps them in the capture; their last task must be a
record the origin waits for)."""


def ri_capture_end(stream):
    if not stream:
        return None, ERR.ACL_ERROR_INVALID_PARAM
    code = _feature()
    if code:
        return None, code
    s, code = AS.lookup(stream)
    if code:
        return None, code
    if bad_capture_flags(s):
        return None, ERR.ACL_ERROR_RT_INTERNAL_ERROR
    code = context_checks(s, ERR.ACL_ERROR_RT_STREAM_CONTEXT)
    if code:
        return None, code
    if s.is_model or s.bound is not None:
        # ``stm->Model_() != nullptr`` (api_impl_aclgraph.cc:57-59): a stream bound to a built
        # model too, before "not capturing" (docs/fidelity.md row 291; it answered 107029)
        RT.tls.explain(f"Stream end capture: {s.describe()} is already bound to a model")
        return None, ERR.ACL_ERROR_RT_STREAM_MODEL
    if s.is_default:
        return None, ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    with RT.lock:
        _forget()                       # a locked region begins: the launch memo is void
        link = s.capture
        if link is None:
            return None, ERR.ACL_ERROR_RT_STREAM_NOT_CAPTURED
        if link.kind != "origin":
            return None, ERR.ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED
        m = link.model
        if link.mode != RELAXED and link.thread != threading.get_native_id():
            _end_failing(stream)
            C.mode_exit(s)
            C.exit_capture(m)                       # READY, neither returned nor destroyed
            return None, ERR.ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD
        if not m.destroyed:
            for hook in CAPTURE_END_HOOKS:
                hook(s, m)
        code = ERR.ACL_SUCCESS if m.destroyed else C.finish_refusal(m)
        if m.destroyed or code:
            _end_failing(stream)                # nothing changed yet: the linter's snapshot
        C.mode_exit(s)
        RT.tick(s.device.timing.host_capture_end_ns)
        if m.destroyed:                         # destroyed under the capture (root's 107045)
            for p in list(m.participants):
                p.capture = None
            return None, ERR.ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED
        if not code:
            C.finish(m)
        C.exit_capture(m)
        if code:
            if not m.sub:
                _destroy(m)
            return None, code
    return m.handle, ERR.ACL_SUCCESS


def ri_capture_get_info(stream):
    """(status, model handle or None, code)."""
    if not stream:
        return None, None, ERR.ACL_ERROR_INVALID_PARAM
    code = _feature()
    if code:
        return None, None, code
    s, code = AS.lookup(stream)
    if code:
        return None, None, code
    if s.capture is None:
        return 0, None, ERR.ACL_SUCCESS
    return s.capture.status, s.capture.model.handle or None, ERR.ACL_SUCCESS


def ri_capture_thread_exchange_mode(mode):
    """(old mode, code): C swaps ``*mode`` in place; the facade returns the old one."""
    if mode is None:
        RT.tls.explain("mode is NULL (None): the in/out aclmdlRICaptureMode")
        return None, ERR.ACL_ERROR_INVALID_PARAM
    code = _feature()
    if code:
        return None, code
    if not isinstance(mode, int) or not 0 <= mode < 3:
        RT.tls.explain(f"mode: {mode!r} is not an aclmdlRICaptureMode (0 GLOBAL, 1 "
                       f"THREAD_LOCAL, 2 RELAXED)")
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    if RT.current_context is None:
        return None, ERR.ACL_ERROR_RT_CONTEXT_NULL
    return C.exchange_mode(mode), ERR.ACL_SUCCESS


def stream_add_to_model(stream, model_ri) -> int:
    """rtStreamAddToModel (§4.5). Order (``ApiErrorDecorator::StreamAddToModel``,
    ``src/runtime/feature/aclgraph/api_error_aclgraph.cc:139-158``): NULL 107000; a model that
    is not an ACL Graph (a built model) 107000 before the stream's flags (507000) and before a
    sub-graph (207000); then ``ApiImpl::StreamAddToModel`` (``api_impl_aclgraph.cc:151-167``)."""
    if not stream or not model_ri:
        RT.tls.explain("stream is NULL" if not stream else "model_ri is NULL")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    s, m, code = _stream_and_model(stream, model_ri)
    if code:
        return code
    if m.normal:                # RT_MODEL_CAPTURE_MODEL only (api_error_aclgraph.cc:145-147)
        RT.tls.explain("rtStreamAddToModel: Non ACL Graph mode is not supported (the model was "
                       "built with aclmdlRIBuildBegin)")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    if bad_capture_flags(s):
        return ERR.ACL_ERROR_RT_INTERNAL_ERROR
    if m.sub:
        return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    code = context_checks(s, ERR.ACL_ERROR_RT_STREAM_CONTEXT)
    if code:
        return code
    if s.is_model or s.bound is not None:
        return ERR.ACL_ERROR_RT_STREAM_MODEL
    if s.is_default:
        return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    if s in m.added:
        return ERR.ACL_SUCCESS
    if s.capture is not None:
        m.terminate_capture()
        return ERR.ACL_ERROR_RT_STREAM_CAPTURED
    if m.status != M.CAPTURE_ACTIVE:
        m.terminate_capture()
        return ERR.ACL_ERROR_RT_INTERNAL_ERROR
    C.enter(s, m, "added", original=False, head=True)
    return ERR.ACL_SUCCESS


# ---- execution (§1.6, §6.3) ----
def ri_execute_async(model_ri, stream) -> int:
    if not model_ri:
        return ERR.ACL_ERROR_INVALID_PARAM
    m, code = model_of(model_ri)
    if code:
        return code
    s, code = AS.lookup(stream)
    if code:
        return code
    if s is not None and (s.is_model or s.bound is not None):
        RT.tls.explain("stream: a model stream (its own or a bound one) cannot execute a model")
        return ERR.ACL_ERROR_RT_PARAM_INVALID              # a model stream (bound ones too)
    if s is not None and s.capture is not None:
        return ERR.ACL_ERROR_RT_STREAM_CAPTURED
    if s is not None and s.flags & AS.NO_SYNC_FLAGS and profile().is_v200:
        # §1.6 AICPU/PERSISTENT/CP streams; only where RT_FEATURE_MODEL_STREAM_DOT_SYNC (§13.9)
        RT.tls.explain("stream: an AICPU / persistent / CP stream cannot execute a model on this "
                       "chip")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    if m.sub:
        return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    code = context_checks(m, ERR.ACL_ERROR_RT_MODEL_CONTEXT)
    if code:
        return code
    if m.is_capturing:
        return ERR.ACL_ERROR_RT_MODEL_CAPTURED
    if m.status != M.READY:
        return ERR.ACL_ERROR_RT_MODEL_EXECUTE
    if s is None and m.sw_sq and not m.normal:
        # the software-SQ BuildSqCq dereferences the NULL stream (spec/aclgraph.md §12 item 4):
        # undefined on the real runtime, refused here (docs/fidelity.md)
        RT.tls.explain("a NULL execution stream on a software-SQ chip crashes the real runtime "
                       "(BuildSqCq dereferences it): launch the graph on a created stream")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    s, code = AS.resolve(s)
    if code:
        return code
    if s.ctx.failure_code:
        return s.ctx.failure_code
    return launch(m, s)


LAUNCH_HOOKS: list = []
"""Callbacks ``hook(model, stream, pos)`` told of every launch of a model (``pos``: its EndGraph
wait on ``stream``): ``npusim/hccl/comm.py`` logs the collectives a graph replays."""


def launch(m, s) -> int:
    """A model's launch on stream ``s`` once the checks passed: build (first launch), the
    added streams' notifies, cond defaults, external events, MODEL_EXECUTE and the EndGraph
    wait (§6.3)."""
    with RT.lock:
        _forget()                       # a locked region begins: the launch memo is void
        code = _build(m)
        if code:
            return code
        dev = m.device
        t = dev.timing
        # §4.5 SetNotifyForExeModel: 2 notifies per added stream, made once and reused by
        # every launch (a notify wait consumes its record); a destroyed added stream is skipped
        pairs = [(a, _exe_notifies(m, a)) for a in m.added if not a.destroyed]
        for added, (before, _) in pairs:                   # notify sync before the launch
            added.submit(S.OP_NOTIFY_RECORD, 0, a0=before)
            s.submit(S.OP_NOTIFY_WAIT, 0, a0=before)
        cond.assign_defaults(m, s)                         # cond default values (§6.3 step 4)
        published = refresh_external(m, s) if m.ext_records or m.ext_waits else ()
        # its EndGraph wait follows at once, at no cost: a full ring waits once for both
        pos = s.submit(S.OP_MODEL_EXECUTE, t.host_model_execute_ns, a0=m.engine_id, then=1)
        if pos < 0:
            for ev in published:       # no launch: those records will never be written
                ev.seq -= 1
            return -pos
        pos = s.submit(S.OP_NOTIFY_WAIT, 0, a0=m.endgraph_slot)
        for ev in published:           # the launch's external records are the events' latest
            ev.last = (s, pos)         # complete (for sync / query) once the graph is
            ev.note_task(s, pos)
        m.note_run(s, pos)
        for hook in LAUNCH_HOOKS:
            hook(m, s, pos)
        for added, (_, after) in pairs:                    # and after it
            s.submit(S.OP_NOTIFY_RECORD, 0, a0=after)
            added.submit(S.OP_NOTIFY_WAIT, 0, a0=after)
    return ERR.ACL_SUCCESS


def refresh_external(m, s) -> list:
    """Bind a launch's external tasks (§9.4, ``capture_model_utils.cc`` refresh table): each
    external wait waits for its event's latest record before this launch (value 0 — satisfied —
    when it has none; its reset is not tracked), then each external record becomes a new record
    of its event. Written in ``s``'s order before the launch; returns the recorded events."""
    for ev, (cs, pos) in m.ext_waits.items():
        v = ev.wait_value() if ev.last is not None and not ev.destroyed else 0
        TG.rewrite_task(s, cs, pos, ev.slot, v)
    out = []
    for ev, (cs, pos) in m.ext_records.items():
        if ev.destroyed:
            continue
        TG.rewrite_task(s, cs, pos, ev.slot, ev.record_value())
        out.append(ev)
    return out


def _exe_notifies(m, added) -> tuple[int, int]:
    """The (before, after) notify slots of an added stream for the model's launches."""
    ns = m.exe_notifies
    if added not in ns:
        ns[added] = (m.new_slot(), m.new_slot())
    return ns[added]


def _build(m) -> int:
    """BuildSqCq on the first execution (and after a release): SQ/CQ pairs from the device pool
    (at most 1024 per graph, sub-models included), EndGraph, publication of the head SQs."""
    if m.built:
        return ERR.ACL_SUCCESS
    dev = m.device
    models = m.all_models()
    need = sum(len(x.streams) for x in models)
    if need == 0:
        RT.tls.explain("the models have no streams to execute")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    pool = dev.profile.sqcq_pool
    if need > pool:
        return ERR.ACL_ERROR_RT_RESOURCE_ALLOC_FAIL
    if dev.sqcq_used + need > pool:
        code = _recycle(dev, need, pool)
        if code:
            return code
    for x in models:
        C.add_endgraph(x)
    dev.sqcq_used += need
    m.sqcq, m.built = need, True
    dev.set_built(m, True)
    RT.tick(dev.timing.host_model_first_execute_per_stream_ns * need)
    dev.publish_models(models)
    return ERR.ACL_SUCCESS


def _recycle(dev, need: int, pool: int) -> int:
    """§6.3 phase 2 (TryRecycleCaptureModelResource): release the SQ/CQ pairs of idle models
    (refCount_ == 0, judged at the host's current time); while that is not enough the runtime
    retries every 1 ms, i.e. waits for running models to finish — the host clock moves to that
    completion. A model that can never finish (deadlock) leaves 207005."""
    dev.advance_to_host()
    while dev.sqcq_used + need > pool:
        # idle built models oldest first (creation order), from the device's recycling index:
        # no walk over the running ones (the model being built is not built: never among them)
        dev.see_launches_done()
        while dev.sqcq_used + need > pool:
            o = dev.oldest_idle_built()
            if o is None:
                break
            o.release_resources()
        if dev.sqcq_used + need <= pool:
            return ERR.ACL_SUCCESS
        busy = dev.oldest_busy_built()
        if busy is None:
            return ERR.ACL_ERROR_RT_RESOURCE_ALLOC_FAIL
        if not busy.running():          # (its finished launches off the front of its runs;
            continue                    # none left in flight: the index catches up)
        why = busy.wait_oldest_run()                       # wait for one launch to complete
        if why is not None:
            RT.tls.explain(why)
            return ERR.ACL_ERROR_RT_RESOURCE_ALLOC_FAIL
    return ERR.ACL_SUCCESS


def ri_execute(model_ri, timeout) -> int:
    """aclmdlRIExecute (``rtsModelExecute`` -> ``ModelExecuteSync``, ``Model::ExecuteSync``):
    launch a built model on the context's default stream and wait for it. NULL 100000; handle
    107017; ``timeout`` < -1 or 0 107000; a capture model 107000 ("ACL Graph mode is not
    supported", §1.7); context 107002 / 107004; not built (aclmdlRIBuildEnd) 507011; then the
    launch's codes; a wait longer than ``timeout`` ms of simulated time (or one that can never
    end) 507046, the launch staying queued."""
    if not model_ri:
        return ERR.ACL_ERROR_INVALID_PARAM
    m, code = model_of(model_ri)
    if code:
        return code
    if timeout < -1 or timeout == 0:
        RT.tls.explain(f"timeout: {timeout} (-1 waits forever; a timeout is >= 1 ms)")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    if not m.normal:
        RT.tls.explain("aclmdlRIExecute: ACL Graph mode is not supported (a captured model runs "
                       "with aclmdlRIExecuteAsync)")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    ctx = RT.current_context
    if ctx is None:
        return ERR.ACL_ERROR_RT_CONTEXT_NULL
    if m.ctx is not ctx:
        return ERR.ACL_ERROR_RT_MODEL_CONTEXT
    if m.status != M.READY:
        return ERR.ACL_ERROR_RT_MODEL_EXECUTE
    s = ctx.default_stream
    if s.ctx.failure_code:
        return s.ctx.failure_code
    code = launch(m, s)
    if code:
        return code
    return AS.synchronize_stream(0, timeout)


# ---- destroy / update ----
def ri_destroy(model_ri) -> int:
    if not model_ri:
        return ERR.ACL_ERROR_INVALID_PARAM
    m, code = model_of(model_ri)
    if code:
        return code
    if m.sub:
        return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    code = context_checks(m, ERR.ACL_ERROR_RT_MODEL_CONTEXT)                                        # §13.10 ApiImpl::ModelDestroy
    if code:
        return code
    if m.is_capturing:
        return ERR.ACL_ERROR_RT_MODEL_CAPTURED
    dev = m.device
    dev.advance_to_host()
    if not m.sw_sq:
        # §1.8, §12.15: classic models keep no running ref count, so destroy never waits or
        # fails. The device still finishes the launches already sent (the host does not wait)
        # so that no freed SQ is left half-run.
        if m.running():
            dev._run()
        _destroy(m)
        return ERR.ACL_SUCCESS
    if m.running():                                        # poll up to ~10 s of device time
        try:
            dev._run(horizon=RT.host_ns + DESTROY_WAIT_NS)
        except DeadlockError:
            pass
        if m.running():
            RT.tick(DESTROY_WAIT_NS)
            return ERR.ACL_ERROR_RT_MODEL_RUNNING
        RT.host_at_least(dev.state.now)
    _destroy(m)
    return ERR.ACL_SUCCESS


def _destroy(m) -> None:
    m.destroy()


def ri_destroy_register_callback(model_ri, func, user_data=None) -> int:
    """aclmdlRIDestroyRegisterCallback: ``func(user_data)`` runs when the model is destroyed
    (aclmdlRIDestroy, or its context's or device's teardown), after its resources are freed
    (``Model::TearDown`` -> ``ModelDestroyCallback``). NULL model or func: 107000; a sub-graph:
    207000; ``func`` registered already on this model: 107000."""
    m, code = _callback_model(model_ri, func)
    if code:
        return code
    if _callback_index(m, func) >= 0:
        RT.tls.explain("func: this callback is registered on the model already")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    m.destroy_callbacks.append((func, user_data))
    return ERR.ACL_SUCCESS


def _callback_model(model_ri, func):
    """The model handle first (107017: ``RT_VALIDATE_AND_UNWRAP_OBJECT`` in
    ``rtModelDestroy(Un)registerCallback``, ``api_c_standard_soc.cc:1798-1818``), then
    ``ApiErrorDecorator::ModelDestroy(Un)registerCallback`` (``api_error.cc:7019-7046``): NULL
    model or func (anything not callable) 107000, a sub-graph 207000: (model, code)."""
    m, code = model_of(model_ri)
    if code:
        return None, code
    if m is None or not callable(func):
        RT.tls.explain("model_ri is NULL" if m is None else "func: not callable")
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    if m.sub:
        return None, ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    return m, ERR.ACL_SUCCESS


def _callback_index(m, func) -> int:
    """Where ``func`` is registered on ``m`` (-1: not): the same function, or an equal one (a
    bound method is a new object at every attribute access)."""
    for i, (f, _) in enumerate(m.destroy_callbacks):
        try:
            if f is func or f == func:
                return i
        except Exception:      # noqa: BLE001 -- a user object's __eq__
            continue
    return -1


def ri_destroy_unregister_callback(model_ri, func) -> int:
    """aclmdlRIDestroyUnregisterCallback: forget ``func``; not registered: 107000."""
    m, code = _callback_model(model_ri, func)
    if code:
        return code
    i = _callback_index(m, func)
    if i < 0:
        RT.tls.explain("func: this callback is not registered on the model")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    del m.destroy_callbacks[i]
    return ERR.ACL_SUCCESS


def ri_abort(model_ri) -> int:
    """aclmdlRIAbort: not for ACL Graph models (chapter 15: "不支持在模型捕获场景下使用"); for a
    built model the TS model abort is not simulated: after the model, context (107002) and
    model-context (107004) checks, 207000 for both. A NULL model: the rt layer's
    RT_ERROR_MODEL_NULL (507000)."""
    if not model_ri:
        return ERR.ACL_ERROR_RT_INTERNAL_ERROR
    m, code = model_of(model_ri)
    if code:
        return code
    code = context_checks(m, ERR.ACL_ERROR_RT_MODEL_CONTEXT)
    if code:
        return code
    if m.normal:             # a built model (aclmdlRIBuildBegin): abort is not simulated yet
        RT.tls.explain("aclmdlRIAbort of a built model is not simulated (docs/fidelity.md "
                       "row 97)")
    else:
        RT.tls.explain("aclmdlRIAbort does not support ACL Graph (captured) models")
    return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT


def ri_update(model_ri) -> int:
    if not model_ri:
        RT.tls.explain("model_ri is NULL")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    m, code = model_of(model_ri)
    if code:
        return code
    if m.normal or m.sub or not m.device.profile.model_update_supported:
        return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT          # a built model: not a capture one
    if m.status == M.READY:
        return ERR.ACL_SUCCESS
    if m.status != M.UPDATING:
        return ERR.ACL_ERROR_RT_MODEL_UPDATE_FAILED
    code = tasks.apply_updates(m)
    m.status = M.FAULT if code else M.READY
    return code


# ---- introspection ----
def ri_get_streams(model_ri, num_streams=None):
    """(list of the model's capture stream handles, code): newest first, so the origin capture
    stream is last (``Model::AddStream`` inserts at the front, §13.1). No ACL-level NULL check
    (§13.2): a NULL model is the rt layer's 107000.

    ``num_streams`` is C's in/out array size (``Model::ModelGetStreams``): None gives every
    stream (C's count query, ``streams == NULL``, is ``len()`` of it); an int N is an array of
    N: the first min(N, count) streams, and 107039 (ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY) with
    the streams that fitted when N < count. (C pads a larger array with NULLs; the list here
    holds only the streams, so a huge N costs nothing.)"""
    if not model_ri:
        RT.tls.explain("model_ri is NULL")
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    code = _feature()
    if code:
        return None, code
    m, code = model_of(model_ri)
    if code:
        return None, code
    if m.sub:
        return None, ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    out = [(cs.user_stream.handle if m.normal else capture_stream_handle(cs))
           for cs in reversed(m.streams)]           # a built model's: its bound user streams
    if num_streams is None:
        return out, ERR.ACL_SUCCESS
    if num_streams < len(out):
        return out[:num_streams], ERR.ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY
    return out, ERR.ACL_SUCCESS          # C pads the rest of its array with NULL: not built here


def capture_stream_handle(cs) -> int:
    if not cs.handle:
        RT.handles.add("stream", cs)
    return cs.handle


def ri_get_id(model_ri):
    m, code = model_of(model_ri) if model_ri else (None, ERR.ACL_ERROR_INVALID_PARAM)
    return (m.id if m else None), code


def ri_set_name(model_ri, name) -> int:
    if not model_ri or name is None:
        return ERR.ACL_ERROR_INVALID_PARAM
    m, code = model_of(model_ri)
    if code:
        return code
    m.name = str(name)
    return ERR.ACL_SUCCESS


def ri_get_name(model_ri, max_len):
    if not model_ri:
        return None, ERR.ACL_ERROR_INVALID_PARAM
    m, code = model_of(model_ri)
    if code:
        return None, code
    if max_len == 0:
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    if max_len < len(m.name.encode()) + 1:
        return None, ERR.ACL_ERROR_RT_INTERNAL_ERROR
    return m.name, ERR.ACL_SUCCESS



# ---- dumps (§1.12, §10) ----
def ri_debug_print(model_ri) -> int:
    if not model_ri:
        return ERR.ACL_ERROR_INVALID_PARAM
    code = _feature()
    if code:
        return code
    m, code = model_of(model_ri)
    if code:
        return code
    if RT.current_context is not None and m.ctx is not RT.current_context:
        return ERR.ACL_ERROR_RT_MODEL_CONTEXT
    dump.debug_print(m)
    return ERR.ACL_SUCCESS


def ri_debug_json_print(model_ri, path, flags=0) -> int:
    if not model_ri or not path:
        return ERR.ACL_ERROR_INVALID_PARAM
    code = _feature()
    if code:
        return code
    m, code = model_of(model_ri)
    if code:
        return code
    if RT.current_context is not None and m.ctx is not RT.current_context:
        return ERR.ACL_ERROR_RT_MODEL_CONTEXT
    try:
        dump.debug_json_print(m, str(path), int(flags))
    except OSError:
        RT.tls.explain("path: cannot be written")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    return ERR.ACL_SUCCESS
