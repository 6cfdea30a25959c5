"""Task groups of the Pythonic API: ``graph_task_group_*`` / ``graph_task_update_*`` and their
context managers ``task_group`` / ``task_update`` (``TaskGroup``, ``TaskUpdate``).
"""
from __future__ import annotations

import sys
import warnings

from .. import acl
from ..errors import CaptureWarning
from .base import _ok, _out
from .stream import Stream


# ---- task groups and task update, in the shape of torch_npu's graph_task_* functions ----
def graph_task_group_begin(stream: Stream) -> None:
    """Open a task group on a capturing stream (captures the profile's prefetch NOPs)."""
    stream._use()
    _ok(acl.mdl.ri_capture_task_grp_begin(stream.handle))


def graph_task_group_end(stream: Stream) -> int:
    """Close the task group; returns its handle (for ``graph_task_update_begin``)."""
    return _out(acl.mdl.ri_capture_task_grp_end(stream.handle))


def graph_task_update_begin(stream: Stream, handle: "int | TaskGroup") -> None:
    """The next kernel launches on ``stream`` (not capturing) rewrite the group's tasks, in
    order; each rewrite takes effect when ``stream`` runs it. ``handle``: what
    ``graph_task_group_end`` returned, or a :class:`TaskGroup` whose block ended."""
    stream._use()
    _ok(acl.mdl.ri_capture_task_update_begin(stream.handle, int(handle)))


def graph_task_update_end(stream: Stream) -> None:
    _ok(acl.mdl.ri_capture_task_update_end(stream.handle))


def _user_site() -> tuple[str, int]:
    """(file, line) of the first caller outside this module: where the user wrote the call."""
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename == __file__:
        f = f.f_back
    return (f.f_code.co_filename, f.f_lineno) if f is not None else ("<unknown>", 0)


class _ContextManagerOnly:
    """A context manager that says so when it is used without ``with``: a message naming the
    fix when its result is asked for, and a ``CaptureWarning`` at the line that made it when it
    is dropped without ever being entered (the launches after it went on as if it were not
    there)."""

    __slots__ = ("_site", "_entered")
    _usage = ""                                   # the ``with`` line to show, per subclass

    def __init__(self):
        self._site = _user_site()
        self._entered = False

    def _not_entered(self, what: str) -> str:
        f, line = self._site
        return (f"{what}: {type(self).__name__} made at {f}:{line} is a context manager and "
                f"was never entered — write `{self._usage}` and launch inside the block")

    def __del__(self):
        if self._entered or sys.meta_path is None:    # used as meant, or interpreter shutdown
            return
        f, line = self._site
        warnings.warn_explicit(self._not_entered("nothing was captured or updated"),
                               CaptureWarning, f, line)


class TaskGroup(_ContextManagerOnly):
    """``with npusim.task_group(stream) as tg:`` — the kernels launched on the capturing
    ``stream`` inside the block form a task group (aclmdlRICaptureTaskGrpBegin / End); ``tg.handle``
    is the group's handle once the block ends (None before; ``int(tg)`` too). ``with
    tg.update(stream): ...`` then rewrites its tasks, in order, with the kernels launched on
    ``stream`` (not capturing) inside that block (aclmdlRICaptureTaskUpdateBegin / End): one
    launch per captured task; each rewrite takes effect when ``stream`` runs it, so order it
    before the next replay (an event, or the same stream). Both raise ``AclError`` with the
    call's code (107033 out of order, 507000 a launch count that does not match the group, with
    the counts). The same calls as functions: :func:`graph_task_group_begin` /
    :func:`graph_task_group_end` and :func:`graph_task_update_begin` /
    :func:`graph_task_update_end`."""

    __slots__ = ("stream", "handle")
    _usage = "with npusim.task_group(stream) as tg:"

    def __init__(self, stream: Stream):
        super().__init__()
        self.stream = stream
        self.handle: int | None = None

    def __enter__(self) -> "TaskGroup":
        self._entered = True
        graph_task_group_begin(self.stream)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.handle = graph_task_group_end(self.stream)
        else:
            acl.mdl.ri_capture_task_grp_end(self.stream.handle)     # the body's error wins

    def __int__(self) -> int:
        if self.handle is None:
            raise self._group_missing("the task group has no handle")
        return self.handle

    __index__ = __int__

    def __repr__(self):
        h = f"0x{self.handle:x}" if self.handle is not None else "no handle yet"
        return f"TaskGroup({self.stream!r}, {h})"

    def _group_missing(self, what: str) -> Exception:
        """The error for using the group's handle before there is one: TypeError when the
        group was never entered (used without ``with``), ValueError inside its block."""
        if not self._entered:
            return TypeError(self._not_entered(what))
        return ValueError(f"{what}: its `with` block has not ended yet (the handle comes at "
                          "the block's end)")

    def update(self, stream: Stream) -> "TaskUpdate":
        """An update of this group on ``stream``, as a context manager: ``with tg.update(u):``."""
        if self.handle is None:
            raise self._group_missing("the task group is updated before it was captured")
        return TaskUpdate(stream, self.handle)


class TaskUpdate(_ContextManagerOnly):
    """``with npusim.task_update(stream, handle):`` (or ``with tg.update(stream):``) — see
    :class:`TaskGroup`."""

    __slots__ = ("stream", "handle")
    _usage = "with tg.update(stream):"

    def __init__(self, stream: Stream, handle: int):
        super().__init__()
        self.stream, self.handle = stream, handle

    def __enter__(self) -> "TaskUpdate":
        self._entered = True
        graph_task_update_begin(self.stream, self.handle)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            graph_task_update_end(self.stream)
        else:
            acl.mdl.ri_capture_task_update_end(self.stream.handle)  # the body's error wins


def task_group(stream: Stream) -> TaskGroup:
    """A task group captured on ``stream`` as a context manager (:class:`TaskGroup`):
    ``with npusim.task_group(stream) as tg:``."""
    return TaskGroup(stream)


def task_update(stream: Stream, group: "TaskGroup | int") -> TaskUpdate:
    """An update of ``group`` (a :class:`TaskGroup` or its handle) on ``stream`` as a context
    manager (:class:`TaskUpdate`): ``with npusim.task_update(stream, tg):``."""
    if isinstance(group, TaskGroup) and group.handle is None:
        raise group._group_missing("the task group is updated before it was captured")
    return TaskUpdate(stream, int(group))
