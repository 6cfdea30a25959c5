"""Conditional control flow: cond handles and IF / WHILE / SWITCH tasks (``spec/aclgraph.md`` §8).

A cond handle is an 8-byte word in device memory plus the sub-models an ``aclmdlRIAddCondTask``
creates for it. The cond task is captured as 2 SQEs (IF, SWITCH) or 3 (WHILE): COND_FIRST reads
the word and activates the chosen sub-model's head SQs (or skips), COND_NOTIFY_WAIT waits for that
sub-model's EndGraph on the handle's shared notify, COND_JUMP_BACK re-reads the word and loops a
WHILE. The engine does all of it from the device cond table this module publishes; a WHILE that
keeps looping past the iteration bound stops with a fault naming the handle and the last value.
"""
from __future__ import annotations

import operator

import numpy as np

from .. import errors as ERR
from ..device import sqe as S
from . import capture as C
from . import model as M
from . import stream as ST
from .runtime import RT

ACL_MODEL_RI_COND_TYPE_IF, ACL_MODEL_RI_COND_TYPE_WHILE, ACL_MODEL_RI_COND_TYPE_SWITCH = 0, 1, 2
COND_HANDLE_USER = 0                          # no flag: the program sets the word itself
ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT = 1   # aclmdlRICondHandleFlag (acl_rt.h)
DEFAULT_MAX_ITERATIONS = 100_000_000
SQE_NUM = {ACL_MODEL_RI_COND_TYPE_IF: 2, ACL_MODEL_RI_COND_TYPE_WHILE: 3,
           ACL_MODEL_RI_COND_TYPE_SWITCH: 2}


class CondHandle:
    __slots__ = ("model", "device", "default", "flag", "addr", "notify_slot", "sub_models", "type",
                 "handle", "max_iterations", "engine_id")

    def __init__(self, model, default: int, flag: int):
        dev = model.device
        self.model = model
        self.device = dev
        self.default = int(default) & 0xFFFF_FFFF
        self.flag = flag
        self.addr = dev.state.mem.malloc(8)
        dev.state.mem.view(self.addr, 8)[:] = 0               # set to 0 at creation
        self.notify_slot = dev.new_slot()                       # shared by all its sub-models
        self.sub_models: list = []
        self.type = -1
        self.handle = 0
        self.max_iterations = 0                                 # 0: the device's bound
        self.engine_id = dev.add_cond(self)
        model.cond_handles.append(self)

    def describe(self) -> str:
        kind = {0: "IF", 1: "WHILE", 2: "SWITCH"}.get(self.type, "unused")
        return f"cond handle 0x{self.handle:x} ({kind}, word 0x{self.addr:x})"

    def assigned_at_launch(self) -> bool:
        """Does every launch write the default into the word? An ASSIGN_DEFAULT handle with a
        cond task (§13.11: only handles in condHandleTaskMap_)."""
        return self.flag == ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT and bool(self.sub_models)

    def value(self) -> int:
        return int(self.device.state.mem.view(self.addr, 8).view(np.uint64)[0])

    def release(self) -> None:
        """With its model: the word, the notify, the handle and the engine cond id."""
        dev = self.device
        if dev.state.mem.allocation_of(self.addr) is not None:
            dev.state.mem.free(self.addr)
        dev.retire_slot(self.notify_slot)
        dev.remove_cond(self)
        RT.handles.remove(self.handle)
        self.sub_models = []
        self.model.conds_changed()


def _as_int(v):
    """An integer argument (Python or numpy int), None for anything else. The C parameters are
    uint32 / enum values, so a numpy integer must pass the same checks as a Python int."""
    try:
        return operator.index(v)
    except TypeError:
        return None


def _feature(dev_profile) -> int:
    ok = dev_profile.software_sq and dev_profile.cond_supported
    return ERR.ACL_SUCCESS if ok else ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT


def ri_cond_handle_create(model_ri, default_value, flag):
    """(cond handle, code) — §8.1."""
    if not model_ri:
        return None, ERR.ACL_ERROR_INVALID_PARAM
    m, code = RT.handles.get("model", model_ri)
    if code:
        return None, code
    flag = _as_int(flag)
    if flag is None or flag > 1 or flag < 0:
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    if m.normal:    # api_error_aclgraph.cc:200-202: not an ACL Graph -> RT_ERROR_FEATURE_NOT_SUPPORT
        RT.tls.explain("aclmdlRICondHandleCreate: the modelRI is not an ACL Graph (a built model)")
        return None, ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    if m.status != M.CAPTURE_ACTIVE:
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    ctx = RT.current_context
    if ctx is None:
        return None, ERR.ACL_ERROR_RT_CONTEXT_NULL
    if m.ctx is not ctx:
        return None, ERR.ACL_ERROR_RT_MODEL_CONTEXT
    code = _feature(m.device.profile)
    if code:
        return None, code
    ch = CondHandle(m, default_value, flag)
    return RT.handles.add("cond", ch), ERR.ACL_SUCCESS


def ri_cond_handle_get_cond_ptr(cond):
    """(device address of the 8-byte cond word, code) — §8.2."""
    if not cond:
        return None, ERR.ACL_ERROR_INVALID_PARAM
    ch, code = RT.handles.get("cond", cond)
    if code:
        return None, code
    if RT.current_context is None:
        return None, ERR.ACL_ERROR_RT_CONTEXT_NULL
    code = _feature(ch.device.profile)
    if code:
        return None, code
    return ch.addr, ERR.ACL_SUCCESS


def ri_add_cond_task(cond, cond_type, size, stream, flags=0):
    """(list of sub-model handles, code) — §8.3."""
    if not stream:
        return None, ERR.ACL_ERROR_INVALID_PARAM
    ch, code = RT.handles.get("cond", cond)
    if code:
        return None, code
    s, code = ST.lookup(stream)
    if code:
        return None, code
    if cond_type not in (0, 1, 2) or flags != 0 or ch is None:
        RT.tls.explain(f"cond_type: {cond_type} is not IF (0), WHILE (1) or SWITCH (2)"
                       if cond_type not in (0, 1, 2) else
                       f"flags: {flags} is reserved, must be 0" if flags != 0 else
                       "cond is NULL")
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    if ch.sub_models:
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID              # a handle is used once
    s, code = ST.resolve_same_ctx(s)
    if code:
        return None, code
    if s.capture is None:
        return None, ERR.ACL_ERROR_RT_STREAM_NOT_CAPTURED
    code = _feature(s.device.profile)
    if code:
        return None, code
    if s.capture.model is not ch.model:
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    if s.capture.kind == "added":
        return None, ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    size = _as_int(size)
    if size is None or {0: size not in (1, 2), 1: size != 1, 2: size < 1}[int(cond_type)]:
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    subs = []
    for _ in range(size):
        sub = M.CaptureModel(s.ctx, sub=True, parent=ch.model)
        sub.endgraph_slot = ch.notify_slot
        RT.handles.add("model", sub)
        subs.append(sub)
    ch.sub_models, ch.type = subs, cond_type
    ch.model.conds_changed()
    rows = [(S.OP_COND_FIRST, dict(a0=ch.engine_id, flag=cond_type)),
            (S.OP_COND_NOTIFY_WAIT, dict(a0=ch.notify_slot))]
    if cond_type == ACL_MODEL_RI_COND_TYPE_WHILE:
        rows.append((S.OP_COND_JUMP_BACK, dict(a0=ch.engine_id)))
    pos = C.append_task(s, rows, SQE_NUM[cond_type])
    if pos < 0:
        for sub in subs:
            RT.handles.remove(sub.handle)
            sub.free()
        ch.sub_models = []
        ch.model.conds_changed()
        return None, -pos
    return [sub.handle for sub in subs], ERR.ACL_SUCCESS


def assign_defaults(model, stream) -> None:
    """ExecuteAsync step 4: ASSIGN_DEFAULT handles of the root and every sub-model get their
    default value by a synchronous host write, before the launch (not stream-ordered)."""
    handles = model.default_conds()      # kept by the model: nothing per sub-model per launch
    if not handles:
        return
    model.device.advance_to_host()
    for ch in handles:
        ch.device.state.mem.view(ch.addr, 8).view(np.uint64)[0] = ch.default
