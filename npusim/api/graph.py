"""Graphs of the Pythonic API: ``Graph`` / ``graph()`` (stream capture as a context manager, cond
tasks: ``Condition``, ``Branch``) and ``BuiltModel`` (aclmdlRIBuild*).
"""
from __future__ import annotations

from .. import acl
from ..runtime.api_mdl import model_of
from ..runtime.dump import to_dot, to_dot_streams
from .base import _ok, _out
from .stream import Stream


_MODES = {"global": 0, "thread_local": 1, "relaxed": 2}


class Graph:
    """A captured model (``aclmdlRI``): replay it, inspect it, destroy it.

    Made by ``npusim.graph(stream=...)``, in the shape of ``torch.npu.graph``.
    """

    def __init__(self, stream: Stream | None = None, mode: str | int = "global"):
        self.stream = stream
        self.mode = _MODES[mode] if isinstance(mode, str) else int(mode)
        self.handle: int | None = None

    # ---- capture ----
    def capture_begin(self, stream: Stream | None = None) -> None:
        self.stream = stream or self.stream
        if self.stream is None:
            raise ValueError("graph capture needs a stream (the default stream cannot capture)")
        self.stream._use()
        _ok(acl.mdl.ri_capture_begin(self.stream.handle, self.mode))

    def capture_end(self) -> None:
        self.stream._use()
        self.handle = _out(acl.mdl.ri_capture_end(self.stream.handle))

    def __enter__(self) -> "Graph":
        self.capture_begin()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.capture_end()
        elif self.stream is not None and self.stream.handle:
            handle, code = acl.mdl.ri_capture_end(self.stream.handle)   # the body's error wins
            if code == 0 and handle:
                acl.mdl.ri_destroy(handle)                 # don't leak the half-made graph

    # ---- use ----
    def replay(self, stream: Stream | None = None) -> None:
        """Launch the graph on ``stream`` (default: the capture stream); asynchronous."""
        s = stream or self.stream
        h = s.handle if s else None
        if h:
            s._use()
        if not h:               # the default stream by its handle: NULL is refused on SW-SQ chips
            h = _out(acl.rt.ctx_get_current_default_stream())
        _ok(acl.mdl.ri_execute_async(self.handle, h))

    def destroy(self) -> None:
        _ok(acl.mdl.ri_destroy(self.handle))
        self.handle = None

    @property
    def _model(self):
        m, code = model_of(self.handle)
        _ok(code)
        return m

    @property
    def num_tasks(self) -> int:
        """The SQEs the graph's capture streams hold — internal tasks included: the prefetch NOPs
        a task group begins with (``task_prefetch_count`` per group), cascade hops
        (STREAM_ACTIVE), EndCapture's event resets and notifies, the EndGraph record — so it
        is more than the number of kernels and copies issued."""
        return self._model.n_tasks()

    @property
    def streams(self) -> list[int]:
        return _out(acl.mdl.ri_get_streams(self.handle))

    def debug_print(self) -> list[str]:
        """aclmdlRIDebugPrint; returns the log lines too."""
        _ok(acl.mdl.ri_debug_print(self.handle))
        return self._model.last_debug_lines

    def to_json(self, path, verbose: bool = False) -> str:
        """aclmdlRIDebugJsonPrint to ``path``."""
        _ok(acl.mdl.ri_debug_json_print(self.handle, str(path), 1 if verbose else 0))
        return str(path)

    # ---- conditional control flow (IF / WHILE / SWITCH sub-graphs) ----
    def condition(self, default: int = 0, assign_default: bool = True) -> "Condition":
        """A cond handle of the graph being captured: an 8-byte word in device memory that cond
        tasks read. ``assign_default`` rewrites it to ``default`` at every replay."""
        if self._capturing_model is None:
            raise ValueError("a condition is created while the graph captures")
        h = _out(acl.mdl.ri_cond_handle_create(self._capturing_model, default,
                                               1 if assign_default else 0))
        return Condition(h, _out(acl.mdl.ri_cond_handle_get_cond_ptr(h)))

    def cond_if(self, cond: "Condition", stream: Stream, with_else: bool = False):
        """IF: returns the branch(es) to capture — ``then`` runs when the word is non-zero,
        ``else_`` (``with_else=True``) when it is zero. Use each as ``with branch: ...``
        issuing the body on ``stream``."""
        br = self._cond(cond, acl.ACL_MODEL_RI_COND_TYPE_IF, 2 if with_else else 1, stream)
        return tuple(br) if with_else else br[0]

    def cond_while(self, cond: "Condition", stream: Stream) -> "Branch":
        """WHILE: the body runs while the word is non-zero; it must change the word."""
        return self._cond(cond, acl.ACL_MODEL_RI_COND_TYPE_WHILE, 1, stream)[0]

    def cond_switch(self, cond: "Condition", n: int, stream: Stream) -> list["Branch"]:
        """SWITCH: case ``v`` runs when 0 <= word < n, nothing otherwise."""
        return self._cond(cond, acl.ACL_MODEL_RI_COND_TYPE_SWITCH, n, stream)

    def _cond(self, cond, kind, n, stream):
        subs = _out(acl.mdl.ri_add_cond_task(cond.handle, kind, n, self._capture_stream.handle))
        return [Branch(sub, stream, self.mode) for sub in subs]

    @property
    def _capturing_model(self):
        s = self._capture_stream
        if s is None:
            return None
        status, model = _out(acl.mdl.ri_capture_get_info(s.handle))
        return model if status else None

    @property
    def _capture_stream(self):
        return self.stream

    def to_dot(self, path=None, level: str = "task") -> str:
        """Graphviz DOT of the captured DAG: one node per task (stream order, cascades,
        event/notify edges, cond branches), or with ``level="stream"`` one node per capture
        stream — readable for graphs of millions of tasks."""
        text = (to_dot_streams if level == "stream" else to_dot)(self._model)
        if path is not None:
            with open(path, "w") as f:
                f.write(text)
        return text


class BuiltModel:
    """A model built with aclmdlRIBuildBegin (``spec/aclgraph.md`` §1.13): bind persistent
    streams (``Device.stream(persistent=True)``), issue their tasks (they are kept, not run),
    ``end_task`` on one stream, ``build_end``, then ``execute`` / ``launch`` any number of
    times. Streams bound with ``head=False`` run when another stream's ``activate`` or taken
    ``switch`` task starts them."""

    def __init__(self, handle: int):
        self.handle = handle

    def __repr__(self):
        return f"BuiltModel(0x{self.handle or 0:x})"

    def bind(self, stream: Stream, head: bool = False) -> Stream:
        """aclmdlRIBindStream; ``head``: the stream starts when the model runs."""
        _ok(acl.mdl.ri_bind_stream(self.handle, stream.handle,
                                   acl.ACL_MODEL_STREAM_FLAG_HEAD if head
                                   else acl.ACL_MODEL_STREAM_FLAG_DEFAULT))
        return stream

    def unbind(self, stream: Stream) -> None:
        _ok(acl.mdl.ri_unbind_stream(self.handle, stream.handle))

    def end_task(self, stream: Stream) -> None:
        """aclmdlRIEndTask: the model's EndGraph after ``stream``'s tasks (one per model)."""
        _ok(acl.mdl.ri_end_task(self.handle, stream.handle))

    def build_end(self) -> "BuiltModel":
        _ok(acl.mdl.ri_build_end(self.handle, None))
        return self

    def execute(self, timeout_ms: int = -1) -> None:
        """aclmdlRIExecute: run the model on the default stream and wait (``timeout_ms`` of
        simulated time, -1 for ever)."""
        _ok(acl.mdl.ri_execute(self.handle, timeout_ms))

    def launch(self, stream: Stream | None = None) -> None:
        """aclmdlRIExecuteAsync on ``stream`` (default: the default stream)."""
        _ok(acl.mdl.ri_execute_async(self.handle, stream.handle if stream else None))

    @property
    def streams(self) -> list[int]:
        return _out(acl.mdl.ri_get_streams(self.handle))

    def update_random(self, stream: Stream, task_id: int, src, exec_stream: Stream | None = None
                      ) -> None:
        """aclrtTaskUpdateAsync(ACL_RT_UPDATE_RANDOM_TASK): when ``exec_stream`` (default: the
        default stream) reaches it, random task ``task_id`` of the bound ``stream`` takes the
        result, counter and parameter addresses, seed and count of the task info at device
        address ``src`` (the bytes :func:`random_task_info` gives)."""
        info = {"id": acl.ACL_RT_UPDATE_RANDOM_TASK,
                "val": {"randomTaskAttr": {"srcAddr": int(src), "size": 104}}}
        _ok(acl.rt.task_update_async(stream.handle, task_id, info,
                                     exec_stream.handle if exec_stream else None))

    def destroy(self) -> None:
        _ok(acl.mdl.ri_destroy(self.handle))
        self.handle = None


def graph(stream: Stream | None = None, mode: str | int = "global") -> Graph:
    """``with npusim.graph(stream=s) as g: ...`` captures the work issued on ``s`` (and on the
    streams it joins through events) into ``g``."""
    return Graph(stream, mode)


class Condition:
    """A cond handle: ``ptr`` is the device address of its 8-byte word (a kernel argument)."""

    def __init__(self, handle: int, ptr: int):
        self.handle, self.ptr = handle, ptr

    def __int__(self):
        return self.ptr

    __index__ = __int__

    def __repr__(self):
        return f"Condition(0x{self.handle:x}, word at 0x{self.ptr:x})"


class Branch:
    """One sub-graph of a cond task: ``with branch:`` captures the work issued on its stream
    into the sub-model (aclmdlRICaptureToModelRIBegin ... aclmdlRICaptureEnd)."""

    def __init__(self, model: int, stream: Stream, mode: int = 0):
        self.model, self.stream, self.mode = model, stream, mode

    def __enter__(self) -> "Branch":
        _ok(acl.mdl.ri_capture_to_model_ri_begin(self.stream.handle, self.model, self.mode))
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        handle, code = acl.mdl.ri_capture_end(self.stream.handle)
        if exc_type is None:
            _ok(code)

    # Nesting (spec/aclgraph.md §8.1, §8.4: a sub-model that is capturing may own cond handles
    # and cond tasks, with no depth limit): inside ``with branch:`` the same calls as on a Graph
    # create the condition in the sub-model and add the cond task on the branch's stream.
    condition = Graph.condition
    cond_if = Graph.cond_if
    cond_while = Graph.cond_while
    cond_switch = Graph.cond_switch
    _cond = Graph._cond
    _capturing_model = Graph._capturing_model

    @property
    def _capture_stream(self):
        return self.stream
