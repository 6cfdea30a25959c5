"""Labels (chapter 10): ``aclrtCreateLabel``, ``aclrtDestroyLabel``, ``aclrtCreateLabelList``,
``aclrtDestroyLabelList``, ``aclrtSetLabel``, ``aclrtSwitchLabelByIndex``: a jump, chosen at
run time by an index in device memory, to a position of a stream bound to a built model.

As the runtime does it (``src/acl/aclrt_impl/label.cpp``; ``src/runtime/launch/label.cc``,
``label_stars.cc``; ``task/stars_cond_isa_helper.cc``): a label list is device memory of 16
bytes a label, set to 0xFF; ``aclrtSetLabel`` queues a placeholder task (here a NOP) on the
model stream and writes the label's slot with that task's SQ and position; the switch is a
task (``OP_LABEL_SWITCH``) that reads a uint32 index, clamps it to ``maxValue - 1``, and jumps
there through the slot. npusim's slot holds the engine SQ and position as two int64 (the
runtime's packs ``sqId | pos << 16`` and the SQ's executed-times counter: the device memory is
the runtime's own, never read by the program). docs/fidelity.md row 513.
"""
from __future__ import annotations

import numpy as np

from .. import errors as ERR
from ..device import sqe as S
from .api_build import _model_stream
from .runtime import RT, context_checks, null_param
from .stream import lookup, refused

SLOT_BYTES = 16
MAX_LABELS = 65535
"""Labels a list may hold (and ids the runtime's pool has)."""


class Label:
    """An ``aclrtLabel``: the context it was made in, its list and slot, the stream it is set on."""

    __slots__ = ("handle", "ctx", "lst", "slot", "stream")

    def __init__(self, ctx):
        self.handle = 0
        self.ctx = ctx
        self.lst = None         # its LabelList (kept after that list is destroyed, as the runtime)
        self.slot = -1
        self.stream = None      # the stream aclrtSetLabel set it on


class LabelList:
    """An ``aclrtLabelList``: its labels and the device memory of their slots."""

    __slots__ = ("handle", "device", "labels", "addr")

    def __init__(self, device, labels: list, addr: int):
        self.handle = 0
        self.device = device
        self.labels = labels
        self.addr = addr


def create_label():
    """aclrtCreateLabel -> (label, code): no current context 107002 (``ApiImpl::LabelCreateEx``)."""
    ctx = RT.current_context
    if ctx is None:
        return None, ERR.ACL_ERROR_RT_CONTEXT_NULL
    return RT.handles.add("label", Label(ctx)), ERR.ACL_SUCCESS


def _own_label(label):
    """(label, code) of a non-NULL handle: not a label 107017, no context 107002, a label of
    another context 507031."""
    lb, code = RT.handles.get("label", label)
    if code:
        return None, code
    ctx = RT.current_context
    if ctx is None:
        return None, ERR.ACL_ERROR_RT_CONTEXT_NULL
    if lb.ctx is not ctx:
        return None, ERR.ACL_ERROR_RT_LABEL_CONTEXT
    return lb, ERR.ACL_SUCCESS


def destroy_label(label) -> int:
    """aclrtDestroyLabel: NULL 100000; then :func:`_own_label`. Its slot and its task stay as
    they are (the runtime checks no use)."""
    if not label:
        return null_param("label")
    lb, code = _own_label(label)
    if code:
        return code
    RT.handles.remove(lb.handle)
    return ERR.ACL_SUCCESS


def create_label_list(labels, num):
    """aclrtCreateLabelList -> (label list, code): NULL labels 100000; ``num`` 0 or over 65535
    107000; a handle that is not a label 107017; no context 107002; a label already in a list
    507000. ``16 * num`` bytes of the context's device memory, 0xFF, one slot a label in order."""
    if labels is None:
        return None, null_param("labels")
    if not 0 < num <= MAX_LABELS:
        RT.tls.explain(f"num: {num} is not in [1, {MAX_LABELS}]")
        return None, ERR.ACL_ERROR_RT_PARAM_INVALID
    if len(labels) < num:
        RT.tls.explain(f"labels: {len(labels)} handles for num {num}")
        return None, ERR.ACL_ERROR_INVALID_PARAM
    objs = []
    for h in list(labels)[:num]:
        lb, code = RT.handles.get("label", h)
        if code or lb is None:
            return None, code or null_param("a label of labels")
        objs.append(lb)
    ctx = RT.current_context
    if ctx is None:
        return None, ERR.ACL_ERROR_RT_CONTEXT_NULL
    for lb in objs:
        if lb.lst is not None:
            RT.tls.explain(f"label 0x{lb.handle:x} is in a label list already")
            return None, ERR.ACL_ERROR_RT_INTERNAL_ERROR
    dev = ctx.device
    addr = dev.state.mem.malloc(SLOT_BYTES * num)
    dev.state.mem.view(addr, SLOT_BYTES * num)[:] = 0xFF
    lst = LabelList(dev, objs, addr)
    for i, lb in enumerate(objs):
        lb.lst, lb.slot = lst, i
    return RT.handles.add("label_list", lst), ERR.ACL_SUCCESS


def destroy_label_list(label_list) -> int:
    """aclrtDestroyLabelList: NULL 100000; not a label list 107017; its device memory freed. Its
    labels stay bound to it, so none goes into another list (as in the runtime)."""
    if not label_list:
        return null_param("labelList")
    lst, code = RT.handles.get("label_list", label_list)
    if code:
        return code
    RT.handles.remove(lst.handle)
    lst.device.state.mem.free(lst.addr)
    return ERR.ACL_SUCCESS


def _resolve(stream):
    """(stream, its model SQ, code): the handle (107017), no context 107002, another context's
    stream 107003, not bound to a model 107005 (a capture model's stream 207000)."""
    s, code = lookup(stream)
    if code:
        return None, -1, code
    code = context_checks(s, ERR.ACL_ERROR_RT_STREAM_CONTEXT)
    if code:
        return None, -1, code
    sq, code = _model_stream(s)
    return s, sq, code


def set_label(label, stream) -> int:
    """aclrtSetLabel: NULL label or stream 100000 (the default stream cannot be named); the
    handles 107017; no context 107002; a label of another context 507031; the stream's checks
    (107003, 107005, 207000); a label set already, or on another stream, or in no list 507000.
    Then a placeholder task on the model stream, and the label's slot written with its SQ and
    position (``LabelSet``, label.cc)."""
    if not label or not stream:
        return null_param("label" if not label else "stream")
    lb, code = _own_label(label)
    if code:
        return code
    s, sq, code = _resolve(stream)
    if code:
        return code
    if lb.stream is not None:
        RT.tls.explain(f"label 0x{lb.handle:x} is set already")
        return ERR.ACL_ERROR_RT_INTERNAL_ERROR
    if lb.lst is None or RT.handles.get("label_list", lb.lst.handle)[0] is not lb.lst:
        RT.tls.explain(f"label 0x{lb.handle:x} is in no live label list: create the list "
                       "(aclrtCreateLabelList) before aclrtSetLabel")
        return ERR.ACL_ERROR_RT_INTERNAL_ERROR
    pos = s.submit(S.OP_NOP, s.device.timing.host_api_ns)
    if pos < 0:
        return refused(pos)
    slot = lb.lst.device.state.mem.view(lb.lst.addr + SLOT_BYTES * lb.slot, SLOT_BYTES)
    slot[:] = np.array([sq, pos], np.int64).view(np.uint8)
    lb.stream = s
    return ERR.ACL_SUCCESS


def switch_label_by_index(ptr, max_value, label_list, stream) -> int:
    """aclrtSwitchLabelByIndex: NULL ``ptr``, list or stream 100000; the handles 107017; no
    context 107002; the stream's checks (107003, 107005, 207000). ``maxValue`` is not checked.
    A LABEL_SWITCH task on the model stream (``StreamLabelSwitchByIndex``); what it does when
    it runs is the engine's (``bodies._op_label_switch``)."""
    if not ptr or not label_list or not stream:
        return null_param("ptr" if not ptr else "labelList" if not label_list else "stream")
    lst, code = RT.handles.get("label_list", label_list)
    if code:
        return code
    s, _, code = _resolve(stream)
    if code:
        return code
    return refused(s.submit(S.OP_LABEL_SWITCH, s.device.timing.host_api_ns, a0=int(ptr),
                            a1=int(max_value), a2=lst.addr, a3=len(lst.labels)))
