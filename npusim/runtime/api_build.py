"""Build-mode models and stream control: ``aclmdlRIBuildBegin`` / ``BindStream`` / ``EndTask`` /
``BuildEnd`` / ``UnbindStream`` (``spec/aclgraph.md`` §1.13, chapter 15), stream activation and
the conditional stream switch inside a built model (``aclrtActiveStream``, ``aclrtSwitchStream``,
chapter 06), and the stream-control functions of chapter 06 (``aclrtStreamAbort``,
``aclrtDestroyStreamForce``, ``aclrtStreamStop``, ``aclrtPersistentTaskClean``,
``aclrtRegStreamStateCallback``) and ``aclrtCheckArchCompatibility`` (chapter 15).

Check orders are the runtime's (``hicann/runtime``): ``src/acl/aclrt_impl/model_ri.cpp`` and
``stream.cpp`` (ACL NULL checks, 100000), ``src/runtime/api/api_c_model.cc`` /
``api_c_stream.cc`` / ``api_c.cc`` (flag checks, handle validation 107017),
``src/runtime/api/impl/api_error.cc`` (``ApiErrorDecorator``: a capture model 107000, a capturing
stream 107027, stream flags), ``api_impl.cc`` (context 107002 / 107003 / 107004), then
``src/runtime/core/src/context/context.cc`` and ``src/runtime/feature/model/model.cc``.

A built model is a ``model.BuildModel``: each persistent stream bound to it gets a model stream
(an SQ of model kind, replayed from position 0 at every activation) into which the user stream's
later tasks are written; HEAD streams start when the model runs (MODEL_EXECUTE), the others when
an ``aclrtActiveStream`` task or a taken ``aclrtSwitchStream`` task (the engine's STREAM_ACTIVE
and STREAM_SWITCH) starts them. Execution is the capture models' path (``api_mdl``).
"""
from __future__ import annotations

from .. import errors as ERR
from ..device import engine as E
from ..device import sqe as S
from . import model as M
from .runtime import RT, context_checks, profile
from .stream import (ACL_STREAM_CPU_SCHEDULE, ACL_STREAM_DEVICE_USE_ONLY, ACL_STREAM_FAST_LAUNCH,
                     ACL_STREAM_PERSISTENT, lookup)

ACL_MODEL_STREAM_FLAG_HEAD, ACL_MODEL_STREAM_FLAG_DEFAULT = 0x0, 0x7FFFFFFF
# aclrtCondition (acl_rt.h:720-727) and aclrtCompareDataType (acl_rt.h:729-732)
ACL_RT_EQUAL, ACL_RT_NOT_EQUAL, ACL_RT_GREATER, ACL_RT_GREATER_OR_EQUAL = 0, 1, 2, 3
ACL_RT_LESS, ACL_RT_LESS_OR_EQUAL = 4, 5
ACL_RT_SWITCH_INT32, ACL_RT_SWITCH_INT64 = 0, 1


def _model(h):
    return RT.handles.get("model", h)


def _cur_stream(s):
    """Runtime::GetCurStream: NULL is the current context's default stream (None without a
    context: the decorators' NULL check, 107000)."""
    if s is not None:
        return s
    ctx = RT.current_context
    return None if ctx is None else ctx.default_stream


def _explain_capture_model():
    RT.tls.explain("ACL Graph mode is not supported: a captured model cannot be built, bound, "
                   "ended or executed synchronously (use aclmdlRIBuildBegin)")


# ---- aclmdlRIBuildBegin ----
def ri_build_begin(flag=0):
    """aclmdlRIBuildBegin: (model handle, code). ``flag`` must be 0 (``rtsModelCreate``: 107000);
    no current context: 107002. The model is a normal (built) model, status NONE until
    aclmdlRIBuildEnd."""
    if flag != 0:
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    ctx = RT.current_context
    if ctx is None:
        return None, ERR.ACL_ERROR_RT_CONTEXT_NULL
    RT.tick(ctx.device.timing.host_api_ns)
    m = M.BuildModel(ctx)
    return RT.handles.add("model", m), ERR.ACL_SUCCESS


# ---- aclmdlRIBindStream ----
def ri_bind_stream(model_ri, stream, flag) -> int:
    """aclmdlRIBindStream (``rtsModelBindStream``, ``ApiErrorDecorator::ModelBindStream``,
    ``Model::BindStream``). Order: NULL model 100000; flag not HEAD / DEFAULT 107000; handles
    107017; a stream without ACL_STREAM_PERSISTENT 107000; a stream bound already (or a model's
    own stream) 107005; a capture model 107000; a capturing stream 107027; DEVICE_USE_ONLY
    507000; a STOP_ON_FAILURE stream 207000; FAST_LAUNCH 207000; context 107002 / model of
    another context 107004. A NULL stream is refused with 107000 (docs/fidelity.md row 89)."""
    if not model_ri:
        return ERR.ACL_ERROR_INVALID_PARAM
    if flag not in (ACL_MODEL_STREAM_FLAG_HEAD, ACL_MODEL_STREAM_FLAG_DEFAULT):
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    m, code = _model(model_ri)
    if code:
        return code
    s, code = lookup(stream)
    if code:
        return code
    if s is None:
        RT.tls.explain("aclmdlRIBindStream needs a stream created with ACL_STREAM_PERSISTENT "
                       "(chapter 15: 不支持传NULL)")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    if not s.flags & ACL_STREAM_PERSISTENT:
        RT.tls.explain("Non-persistent stream cannot be bound to a model: create it with "
                       "aclrtCreateStreamWithConfig(..., ACL_STREAM_PERSISTENT)")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    if s.is_model or s.bound is not None:
        return ERR.ACL_ERROR_RT_STREAM_MODEL
    if not m.normal:
        _explain_capture_model()
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    if s.capture is not None:
        return ERR.ACL_ERROR_RT_STREAM_CAPTURED
    if s.flags & ACL_STREAM_DEVICE_USE_ONLY:
        return ERR.ACL_ERROR_RT_INTERNAL_ERROR              # RT_ERROR_STREAM_INVALID
    if s.stop_on_failure:
        return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    if s.flags & ACL_STREAM_FAST_LAUNCH:
        return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    code = context_checks(m, ERR.ACL_ERROR_RT_MODEL_CONTEXT)
    if code:
        return code
    RT.tick(m.device.timing.host_api_ns)
    cs = M.CaptureStream(m, original=False, head=(flag == ACL_MODEL_STREAM_FLAG_HEAD),
                         user_stream=s)
    m.bindings[s] = cs
    s.bound = cs
    m.release_resources()                  # the model's streams changed: built again on launch
    return ERR.ACL_SUCCESS


def _bound_stream(model_ri, stream):
    """The model and its bound user stream for EndTask / Unbind: NULL model 100000, handles
    107017, NULL stream = the default stream (none without a context: 107000), a capture model
    107000, a capturing stream 107027. (model, stream, code)."""
    if not model_ri:
        return None, None, ERR.ACL_ERROR_INVALID_PARAM
    m, code = _model(model_ri)
    if code:
        return None, None, code
    s, code = lookup(stream)
    if code:
        return None, None, code
    s = _cur_stream(s)
    if s is None:
        return None, None, ERR.ACL_ERROR_RT_PARAM_INVALID
    if not m.normal:
        _explain_capture_model()
        return None, None, ERR.ACL_ERROR_RT_PARAM_INVALID
    if s.capture is not None:
        return None, None, ERR.ACL_ERROR_RT_STREAM_CAPTURED
    return m, s, ERR.ACL_SUCCESS


# ---- aclmdlRIEndTask ----
def ri_end_task(model_ri, stream) -> int:
    """aclmdlRIEndTask (``rtsEndGraph`` -> ``ModelEndGraph`` -> ``Context::ModelAddEndGraph``,
    ``context.cc:2088-2159``; on the 950 ``MdlAddEndGraph``, ``model_c.cc:673-720``): a record
    of the model's EndGraph notify at the end of ``stream``'s tasks. After the checks of
    ``_bound_stream``: context 107002, a stream of another context 107003, the model's 107004.

    STARS chips (910B / 910_93 / 950): a stream not bound to this model is
    RT_ERROR_STREAM_INVALID, 507000. Their path records the notify without counting it in
    ``endGraphNum_`` (only the HWTS task path calls ``IncEndGraphNum``, ``context.cc:2154``), so
    the "one EndGraph" check (``endGraphNum >= 1``) never refuses there: a second EndTask — on
    the same or another bound stream — records the same notify again (docs/fidelity.md row 89).

    310P (HWTS, ``RT_FEATURE_MODEL_EXECUTOR_WITH_QUEUE``): the runtime submits no EndGraph at all
    and returns 0 (``context.cc:2092-2101``), the TS ends the model; npusim writes its EndGraph
    for the first EndTask on a bound stream (its stand-in for the TS's end of the model) and
    answers 0 without a task for every other call (row 293)."""
    m, s, code = _bound_stream(model_ri, stream)
    if code:
        return code
    ctx = RT.current_context
    if ctx is None:
        return ERR.ACL_ERROR_RT_CONTEXT_NULL
    if s.ctx is not ctx:
        return ERR.ACL_ERROR_RT_STREAM_CONTEXT
    if m.ctx is not ctx:
        return ERR.ACL_ERROR_RT_MODEL_CONTEXT
    cs = m.bindings.get(s)
    if not m.device.profile.software_sq:               # 310P: no EndGraph task is submitted
        if cs is None or m.has_endgraph:
            RT.tick(m.device.timing.host_api_ns)
            return ERR.ACL_SUCCESS
    elif cs is None:
        RT.tls.explain(f"aclmdlRIEndTask: {s.describe()} must be bound to the model "
                       f"(RT_ERROR_STREAM_INVALID)")
        return ERR.ACL_ERROR_RT_INTERNAL_ERROR
    pos = cs.append_task(S.OP_END_GRAPH, m.endgraph_slot)
    if pos < 0:
        return -pos
    RT.tick(m.device.timing.host_api_ns)
    m.has_endgraph = True
    return ERR.ACL_SUCCESS


# ---- aclmdlRIBuildEnd ----
def ri_build_end(model_ri, reserve=None) -> int:
    """aclmdlRIBuildEnd (``rtsModelLoadComplete``, ``Model::LoadCompleteByStreamPrep``): NULL
    model or a non-NULL ``reserve`` 100000 (ACL); handle 107017; a capture model 107000; context
    107002 / 107004; no bound stream (RT_ERROR_MODEL_STREAM) 107005; no EndGraph
    (RT_ERROR_MODEL_NOT_END) 507011. Then READY: it can be executed."""
    if not model_ri or reserve is not None:
        return ERR.ACL_ERROR_INVALID_PARAM
    m, code = _model(model_ri)
    if code:
        return code
    if not m.normal:
        _explain_capture_model()
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    code = context_checks(m, ERR.ACL_ERROR_RT_MODEL_CONTEXT)
    if code:
        return code
    if not m.bindings:
        RT.tls.explain("The model running instance does not contain any stream: bind one with "
                       "aclmdlRIBindStream before aclmdlRIBuildEnd")
        return ERR.ACL_ERROR_RT_STREAM_MODEL
    if not m.has_endgraph:
        RT.tls.explain("Before calling aclmdlRIBuildEnd, you must call aclmdlRIEndTask to mark "
                       "the end of task delivery in the stream")
        return ERR.ACL_ERROR_RT_MODEL_EXECUTE
    for cs in m.streams:
        m.device.state.flush(cs.sq)
    RT.tick(m.device.timing.host_sync_ns)               # load complete syncs the default stream
    m.status = M.READY
    return ERR.ACL_SUCCESS


def _wait_model_idle(m) -> int:
    """Wait until no launch of ``m`` is in flight (the unbind's stream synchronize)."""
    while m.running():
        why = m.wait_oldest_run()
        if why is not None:
            RT.tls.explain(why)
            return ERR.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    return ERR.ACL_SUCCESS


# ---- aclmdlRIUnbindStream ----
def ri_unbind_stream(model_ri, stream) -> int:
    """aclmdlRIUnbindStream (``Model::UnbindStream``): the checks of ``_bound_stream``, context
    107002 / 107004, a stream not bound to this model 107005; it waits for the model's launches
    in flight, then the stream is an ordinary persistent stream again (its later tasks run at
    once) and the model no longer has it (the model is built again at its next launch)."""
    m, s, code = _bound_stream(model_ri, stream)
    if code:
        return code
    code = context_checks(m, ERR.ACL_ERROR_RT_MODEL_CONTEXT)
    if code:
        return code
    cs = m.bindings.get(s)
    if cs is None:
        RT.tls.explain("The specified stream is not bound to the current model")
        return ERR.ACL_ERROR_RT_STREAM_MODEL
    code = _wait_model_idle(m)
    if code:
        return code
    del m.bindings[s]
    m.streams.remove(cs)
    m.unbound.append(cs)            # its SQ lives as long as the model (tasks may name it)
    cs.head = False
    s.bound = None
    m.release_resources()
    RT.tick(m.device.timing.host_api_ns)
    return ERR.ACL_SUCCESS


# ---- aclrtActiveStream / aclrtSwitchStream ----
def _model_stream(s):
    """(the model SQ of a bound stream, code): an unbound stream 107005; a capture model's own
    stream 207000 (npusim's rule for a model stream handle in a user API)."""
    if s.is_model:
        return -1, ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    if s.bound is None:
        RT.tls.explain(f"The {s.describe()} is not bound to a model (aclmdlRIBindStream)")
        return -1, ERR.ACL_ERROR_RT_STREAM_MODEL
    return s.bound.sq, ERR.ACL_SUCCESS


def active_stream(active_stream, stream) -> int:
    """aclrtActiveStream (``rtStreamActive``, ``ApiImpl::StreamActive``, ``CondStreamActive``): a
    STREAM_ACTIVE task on ``stream`` that starts ``active_stream`` from its first task when it
    runs. Order: NULL either 100000 (ACL); handles 107017; context 107002; ``stream`` not bound
    107005; ``active_stream`` not bound 107005; ``stream`` of another context 107003."""
    if not active_stream or not stream:
        return ERR.ACL_ERROR_INVALID_PARAM
    a, code = lookup(active_stream)
    if code:
        return code
    s, code = lookup(stream)
    if code:
        return code
    ctx = RT.current_context
    if ctx is None:
        return ERR.ACL_ERROR_RT_CONTEXT_NULL
    _, code = _model_stream(s)
    if code:
        return code
    target, code = _model_stream(a)
    if code:
        return code
    if s.ctx is not ctx:
        return ERR.ACL_ERROR_RT_STREAM_CONTEXT
    pos = s.submit(S.OP_STREAM_ACTIVE, s.device.timing.host_api_ns, a0=target)
    return -pos if pos < 0 else ERR.ACL_SUCCESS


def switch_stream(left_value, condition, right_value, data_type, true_stream, false_stream,
                  stream) -> int:
    """aclrtSwitchStream (``rtsSwitchStream`` -> ``rtStreamSwitchEx``,
    ``ApiErrorDecorator/ApiImpl::StreamSwitchEx``, ``CondStreamSwitchEx``): a STREAM_SWITCH task
    on ``stream``; when it runs, ``*left condition *right`` (int32 or int64 values in device
    memory) starts ``true_stream`` and stops ``stream`` (chapter 06: only the target stream's
    tasks run after a taken switch). Order: NULL left, right, true stream or stream, or a
    non-NULL ``false_stream``, 100000 (ACL); handles 107017; condition outside
    EQUAL..LESS_OR_EQUAL 107000; data type outside INT32..INT64 107000; ``true_stream`` not bound
    107005; ``stream`` not bound 107005; context 107002; ``stream`` of another context 107003.
    The addresses are read by the device: an unmapped one is a device fault at execution."""
    if not left_value or not right_value or not true_stream or not stream:
        return ERR.ACL_ERROR_INVALID_PARAM
    if false_stream:
        RT.tls.explain("falseStream is a reserved parameter and must be NULL")
        return ERR.ACL_ERROR_INVALID_PARAM
    t, code = lookup(true_stream)
    if code:
        return code
    s, code = lookup(stream)
    if code:
        return code
    if not ACL_RT_EQUAL <= condition <= ACL_RT_LESS_OR_EQUAL:
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    if data_type not in (ACL_RT_SWITCH_INT32, ACL_RT_SWITCH_INT64):
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    target, code = _model_stream(t)
    if code:
        return code
    _, code = _model_stream(s)
    if code:
        return code
    code = context_checks(s, ERR.ACL_ERROR_RT_STREAM_CONTEXT)
    if code:
        return code
    flag = condition | (S.SWITCH_INT64 if data_type == ACL_RT_SWITCH_INT64 else 0)
    pos = s.submit(S.OP_STREAM_SWITCH, s.device.timing.host_api_ns, a0=int(left_value),
                   a1=int(right_value), a2=target, flag=flag)
    return -pos if pos < 0 else ERR.ACL_SUCCESS


# ---- aclrtStreamAbort / aclrtDestroyStreamForce / aclrtStreamStop ----
def _drain(s, handshake: bool = False) -> int:
    """Discard the stream's tasks that have not started by the host's time (they never run);
    a task running then ends now. Returns how many were dropped.

    ``handshake`` (aclrtDestroyStreamForce): the discard is the device's work, not the host's.
    ``Stream::TearDown`` (src/runtime/core/src/stream/stream.cc, the force branch) submits an
    ``MT_STREAM_RECYCLE_TASK`` maintenance task on another SQ (the primary stream's, on STARS)
    when the stream has tasks pending, then polls the SQ's head and tail until they meet: the
    tasks are dropped when that task is dispatched, one doorbell and one SQE dispatch after
    the call, so a task the scheduler has started by then (the kernel launched just before)
    runs -- its stores and printf happen -- and only the ones still queued behind it are
    dropped. A stream with nothing pending submits no recycle task (fidelity row 500)."""
    dev = s.device
    dev.advance_to_host()
    if handshake:
        row = dev.state.sqs[s.sq]
        if dev.state.pending(s.sq) == 0 and row[E.Q_TIME] <= RT.host_ns:
            return 0
        RT.tick(dev.timing.doorbell_ns + dev.timing.sqe_dispatch_eager_ns)
        dev.advance_to_host()
    return dev.state.discard(s.sq, RT.host_ns)


def stream_abort(stream) -> int:
    """aclrtStreamAbort (``rtStreamAbort``, ``Context::StreamAbort``): stop the running task and
    discard the queued ones; the stream is usable again afterwards (its abort status is
    restored). Order: handle 107017; NULL = the default stream (none without a context 107000);
    context 107002 / another context's stream 107003; a stream bound to a model 507000
    (RT_ERROR_STREAM_INVALID); a chip without stream abort (310P) 207000. A model's own stream:
    207000. Streams waiting on events the discarded tasks would have recorded stay waiting
    (chapter 06: abort them too)."""
    s, code = lookup(stream)
    if code:
        return code
    s = _cur_stream(s)
    if s is None:
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    code = context_checks(s, ERR.ACL_ERROR_RT_STREAM_CONTEXT)
    if code:
        return code
    if s.is_model:
        return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    if s.bound is not None:
        RT.tls.explain("Aborting a stream that is bound to a model is not supported")
        return ERR.ACL_ERROR_RT_INTERNAL_ERROR
    if not s.device.profile.stream_clear_supported:
        return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    RT.tick(s.device.timing.host_sync_ns)
    _drain(s)
    s.room = 0                           # the ring check starts afresh
    s.behind = False
    return ERR.ACL_SUCCESS


def destroy_stream_force(stream) -> int:
    """aclrtDestroyStreamForce (``rtStreamDestroyForce`` -> ``StreamDestroy(stm, true)``): as
    aclrtDestroyStream, but queued tasks are discarded instead of waited for, by the device one
    dispatch after the call (``_drain(handshake=True)``, fidelity row 500). Order: NULL 100000
    (ACL); handle 107017; the context's default stream 107000; a capturing stream 107027;
    context 107002 / 107003; a model's own stream 207000; a stream bound to a model 107005
    (``TearDownOwnedStream``: RT_ERROR_STREAM_MODEL)."""
    if not stream:
        return ERR.ACL_ERROR_INVALID_PARAM
    s, code = lookup(stream)
    if code:
        return code
    if s.is_default:
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    if s.capture is not None:
        return ERR.ACL_ERROR_RT_STREAM_CAPTURED
    code = context_checks(s, ERR.ACL_ERROR_RT_STREAM_CONTEXT)
    if code:
        return code
    if s.is_model:
        return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    if s.bound is not None:
        RT.tls.explain("The stream is bound to a model: unbind it (aclmdlRIUnbindStream) first")
        return ERR.ACL_ERROR_RT_STREAM_MODEL
    RT.tick(s.device.timing.host_api_ns)
    _drain(s, handshake=True)
    s.device.take_sq_error(s.sq)
    s.release()
    return ERR.ACL_SUCCESS


def stream_stop(stream) -> int:
    """aclrtStreamStop (``rtsStreamStop`` -> ``ApiImpl::StreamClear(RT_STREAM_STOP)``): stop the
    task running on the stream; queued tasks are not cleaned and run afterwards. Order: handle
    107017; NULL (no default stream here) 107000; context 107002; a chip without stream clear
    (310P) 207000; another context's stream 107003; a model's own stream 207000; a stream bound
    to a model 507000 (``Context::StreamClear``)."""
    s, code = lookup(stream)
    if code:
        return code
    if s is None:
        RT.tls.explain("aclrtStreamStop does not support the default stream (NULL)")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    if RT.current_context is None:
        return ERR.ACL_ERROR_RT_CONTEXT_NULL
    if not s.device.profile.stream_clear_supported:
        return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    if s.ctx is not RT.current_context:
        return ERR.ACL_ERROR_RT_STREAM_CONTEXT
    if s.is_model:
        return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    if s.bound is not None:
        RT.tls.explain("Clearing model stream is not supported")
        return ERR.ACL_ERROR_RT_INTERNAL_ERROR
    dev = s.device
    RT.tick(dev.timing.host_sync_ns)
    dev.advance_to_host()
    row = dev.state.sqs[s.sq]
    if row[E.Q_TIME] > RT.host_ns:              # the running task ends now
        row[E.Q_TIME] = RT.host_ns
    return ERR.ACL_SUCCESS


# ---- aclrtPersistentTaskClean ----
def persistent_task_clean(stream) -> int:
    """aclrtPersistentTaskClean (``rtsPersistentTaskClean``, ``ApiErrorDecorator::
    StreamTaskClean``, ``Stream::StreamTaskClean``): drop the tasks of a bound persistent stream
    so new ones can be issued without destroying it. Order: handle 107017; NULL 107000; a chip
    without the feature (310P) 207000; not PERSISTENT 507000; not bound to a model 507000;
    CPU_SCHEDULE 507000; the model not built (aclmdlRIBuildEnd) 507000; context 107002 / 107003;
    a launch of the model in flight (the SQ must be disabled) 507000. The model's EndGraph count
    is kept: cleaning the stream that holds the EndGraph leaves the model without one."""
    s, code = lookup(stream)
    if code:
        return code
    if s is None:
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    if not s.device.profile.stream_clear_supported:
        return ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    if not s.flags & ACL_STREAM_PERSISTENT:
        RT.tls.explain("Non-persistent stream does not support stream task clearance")
        return ERR.ACL_ERROR_RT_INTERNAL_ERROR
    if s.bound is None:
        RT.tls.explain("The stream must be bound to a model (aclmdlRIBindStream)")
        return ERR.ACL_ERROR_RT_INTERNAL_ERROR
    if s.flags & ACL_STREAM_CPU_SCHEDULE:
        return ERR.ACL_ERROR_RT_INTERNAL_ERROR
    cs = s.bound
    m = cs.model
    if m.status != M.READY:
        RT.tls.explain("Clear stream tasks after the model is loaded (aclmdlRIBuildEnd)")
        return ERR.ACL_ERROR_RT_INTERNAL_ERROR
    code = context_checks(s, ERR.ACL_ERROR_RT_STREAM_CONTEXT)
    if code:
        return code
    s.device.advance_to_host()
    if m.running():
        RT.tls.explain("During task cleaning, the SQ must be disabled: the model is running")
        return ERR.ACL_ERROR_RT_INTERNAL_ERROR
    s.device.state.clear_sq(cs.sq)
    cs.task_count = cs.sqe_num = 0
    cs.last_op, cs.last_event = -1, None
    for h in cs.task_handles.values():
        RT.handles.remove(h)
    cs.task_handles = {}
    for key in [k for k in m.task_cfgs if k[0] is cs]:     # the dropped tasks' configurations
        del m.task_cfgs[key]
    RT.tick(s.device.timing.host_api_ns)
    return ERR.ACL_SUCCESS


# ---- aclrtRegStreamStateCallback ----
def reg_stream_state_callback(reg_name, callback, user_data=None) -> int:
    """aclrtRegStreamStateCallback (``StreamStateCallbackManager::RegStreamStateCallback``):
    ``callback(stream, state, user_data)`` after every stream is created (state 1,
    ACL_RT_STREAM_STATE_CREATE_POST) and before it is destroyed (2, DESTROY_PRE), default
    streams included. NULL name 100000 (ACL); a None callback removes the name (0 even when it
    was not registered); a name registered already 107000."""
    if reg_name is None:
        return ERR.ACL_ERROR_INVALID_PARAM
    name = str(reg_name)
    table = RT.stream_state_callbacks
    if callback is None:
        table.pop(name, None)
        return ERR.ACL_SUCCESS
    if name in table or not callable(callback):
        RT.tls.explain(f"The callback name {name!r} has already been registered"
                       if name in table else "the callback is not callable")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    table[name] = (callback, user_data)
    return ERR.ACL_SUCCESS


# ---- aclrtCheckArchCompatibility ----
_NPU_ARCH_TEXT = """
1001 Ascend910A Ascend910B Ascend910PremiumA Ascend910ProA Ascend910ProB
2002 Ascend310P1 Ascend310P3 Ascend310P5 Ascend310P7
2201 Ascend910B1 Ascend910B2 Ascend910B2C Ascend910B3 Ascend910B4 Ascend910B4-1 Ascend910_9362
     Ascend910_9363 Ascend910_9372 Ascend910_9381 Ascend910_9382 Ascend910_9391 Ascend910_9392
3002 Ascend310B1 Ascend310B2 Ascend310B3 Ascend310B4
3003 KirinX90
3004 Ascend031
3113 Kirin9030
3505 Ascend035 Ascend035A Ascend035B
5101 KirinDev0000
5161 KirinDev0001
5163 KirinDev0003
5165 KirinDev0002
"""
"""``NpuArch`` of each SoC's platform file (``src/platform/platform_config/*/<soc>.ini``,
``[version] NpuArch``), read by ``GetNpuArchByName`` (``src/runtime/core/src/common/
soc_info.cc``); the Ascend 950 / 350 files (NpuArch 3510) are matched by prefix below."""


def _npu_arch_table() -> dict[str, int]:
    out, arch = {}, 0
    for tok in _NPU_ARCH_TEXT.split():
        if tok.isdigit():
            arch = int(tok)
        else:
            out[tok] = arch
    return out


NPU_ARCH = _npu_arch_table()
_ARCH_3510_PREFIXES = ("Ascend950PR_", "Ascend950DT_", "Ascend350_")


def npu_arch(soc: str) -> int:
    """The NpuArch of a SoC version name, -1 when no platform file has it."""
    if soc in NPU_ARCH:
        return NPU_ARCH[soc]
    return 3510 if soc.startswith(_ARCH_3510_PREFIXES) else -1


def check_arch_compatibility(soc_version):
    """aclrtCheckArchCompatibility (``rtCheckArchCompatibility``, ``ApiImpl::
    CheckArchCompatibility``): (1 when ``soc_version``'s NpuArch is the simulated chip's, else 0;
    code). NULL or empty 107000; a SoC with no platform file 107000."""
    if soc_version is None or str(soc_version) == "":
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    want = npu_arch(str(soc_version))
    if want < 0:
        RT.tls.explain(f"SoC version {soc_version} is invalid")
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    have = npu_arch(profile().soc_version)
    if have < 0:
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    return (1 if want == have else 0), ERR.ACL_SUCCESS
