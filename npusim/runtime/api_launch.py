"""Kernel launches of ``acl.rt`` (spec/kernel.md §5): the launch configuration and the one
kernel-submission core every launch variant ends in.

Every way to launch a kernel — ``aclrtLaunchKernel``, ``aclrtLaunchKernelV2``,
``...WithConfig`` (args handles), ``...WithHostArgs``, ``...WithArgsArray``, a CPU kernel, the
Pythonic ``Device.launch`` / ``Function.launch`` (through this facade), and a launch on a stream
updating a task group (``Stream.submit`` hands it to ``taskgroup.update_task``) — makes its API
checks here and then calls :func:`submit_kernel`: the sticky context failure, lazy load and mix
check, the SIMT shared-memory check, the kernel-injection hook (:data:`KERNEL_HOOK`), and the SQE
(on a capturing stream written straight into its capture stream, else ``Stream.submit``).

``launch_kernel`` is the capture-benchmark hot path: its handle checks read the registry's
per-kind lookups (``Registry.function`` / ``Registry.stream``) and its context resolution is
inline, with the same checks in the same order as the general path. Check orders and argument
forms: :mod:`.api_kernel`.
"""
from __future__ import annotations

import numpy as np

from ..device import launchjit as _LJ
from ..device import sqe as S
from ..device.kernels import TABLE
from ..kernel import loader as L
from ..kernel.elf import MixType
from ..kernel.program import BAD_PC_BODY, REG_CPU, REG_NON_CPU, runtime_features
from . import args as A
from . import tasks as _TASKS
from .argcheck import check as _check_args, declared as _declared
from .api_device import profile
from .api_kernel import (ACL_RT_LAUNCH_KERNEL_ATTR_BLOCK_TASK_PREFETCH,
                         ACL_RT_LAUNCH_KERNEL_ATTR_BLOCKDIM_OFFSET,
                         ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP,
                         ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE,
                         ACL_RT_LAUNCH_KERNEL_ATTR_ENABLE_PROFILING,
                         ACL_RT_LAUNCH_KERNEL_ATTR_ENGINE_TYPE,
                         ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE, ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT,
                         ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US, E_ACL, E_CTX, E_HANDLE, E_PARAM,
                         E_STREAM_CTX, E_UNSUPPORTED, OK, SIMT_ALIGN, SIMT_REMAIN_UB_SIZE,
                         SIMT_UB_SIZE, _bytes_of, _ctx, _get, _items, _writable)
from .capture import append as _capture_append
from .cost import MODELS as _COST_MODELS, launch_ns as _cost_ns
from .functions import table_function
from ..errors import ACL_ERROR_RT_INVALID_DEVICE_FUNCTION
from .recording import REC
from .runtime import RT
from .stream import refused

_OP_KERNEL = S.OP_KERNEL
_OFFER, _MEMO_CHECK, _memo_words, _NEW_RUN = _LJ.OFFER, _LJ.MEMO_CHECK, _LJ.memo_words, _LJ.NEW_RUN
_depth = getattr(RT.lock, "_recursion_count", lambda: 0)
"""The runtime lock's depth in this thread (CPython 3.11+; else 0: no launch is memoized). A
launch offers its memo entry at depth 1 only: inside a callback of another locked call, that
call may still change what the entry was made from after the launch returns."""
_ENTRIES = TABLE.entries        # the kernel table's entries (one list for the process)
_MIX_PAIR = int(MixType.MIX_AIC_AIV_MAIN_AIC)   # mix kernels of an AIC + AIV pair (and up)

KERNEL_HOOK = None
"""The kernel-injection hook point, asked by :func:`submit_kernel` for every launch:
``hook(stream, kernel_id, kernel_name) -> kernel_id`` returns the kernel-table id to launch
instead (a trap body). Registered by ``npusim.faults`` through :func:`set_kernel_hook` while a
kernel injection is armed; None otherwise (one test per launch)."""


def set_kernel_hook(hook) -> None:
    """Install (or, with None, remove) the :data:`KERNEL_HOOK`."""
    global KERNEL_HOOK
    KERNEL_HOOK = hook
    _LJ.forget()                      # a memoized launch skips the hook


# ---- launch configuration (api_error.cc CheckKernelLaunchCfg, para_convertor.cc
# ConvertLaunchCfgToTaskCfg)
class TaskCfg:
    """A launch configuration after conversion (the task's share of ``rtKernelLaunchCfg``)."""
    __slots__ = ("sched_mode", "dyn_ubuf", "engine_type", "block_dim_offset", "prefetch",
                 "dump", "timeout_us", "profiling")

    def __init__(self):
        self.sched_mode = None
        self.dyn_ubuf = 0
        self.engine_type = None
        self.block_dim_offset = 0
        self.prefetch = False
        self.dump = False
        self.timeout_us = None
        self.profiling = 0


def _u(v, bits: int) -> int:
    """An attribute value as the C union reads it: ``bits`` wide; a ``(low, high)`` pair is the
    two 32-bit halves."""
    if isinstance(v, (tuple, list)):
        v = (int(v[1]) << 32) | int(v[0])
    return int(v) & ((1 << bits) - 1)


def _is_one(v: int) -> bool:
    return v == 1


def _s_to_us(v: int) -> int:
    return v * 1_000_000


LAUNCH_ATTRS = {
    # attribute id: (TaskCfg field, width in bits, conversion, largest valid value or None)
    ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE: ("sched_mode", 8, None, 1),
    ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE: ("dyn_ubuf", 32, None, None),
    ACL_RT_LAUNCH_KERNEL_ATTR_ENGINE_TYPE: ("engine_type", 32, None, None),
    ACL_RT_LAUNCH_KERNEL_ATTR_BLOCKDIM_OFFSET: ("block_dim_offset", 32, None, None),
    ACL_RT_LAUNCH_KERNEL_ATTR_BLOCK_TASK_PREFETCH: ("prefetch", 8, _is_one, 1),
    ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP: ("dump", 8, _is_one, 1),
    ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT: ("timeout_us", 16, _s_to_us, None),
    ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US: ("timeout_us", 64, None, None),
    ACL_RT_LAUNCH_KERNEL_ATTR_ENABLE_PROFILING: ("profiling", 8, None, 1),
}
"""The nine ``aclrtLaunchKernelAttrId`` values a launch config may carry, read by both the check
(CheckKernelLaunchCfg: the largest valid value; TIMEOUT and TIMEOUT_US exclude each other; a
mix kernel on a chip with extra vector cores needs ENGINE_TYPE and BLOCKDIM_OFFSET) and the
conversion (ConvertLaunchCfgToTaskCfg: the field and its conversion). Any other id -> 107000.
An attribute given twice counts with its last value."""


def _launch_cfg(cfg, kernel, rfeats):
    """(TaskCfg, code): CheckKernelLaunchCfg then ConvertLaunchCfgToTaskCfg, every failure
    107000."""
    mix_needs_cfg = rfeats.extra_vector_core and kernel.reg_type != REG_CPU and \
        kernel.mix_type != MixType.NO_MIX
    items, code = _items(cfg, "attrs")
    if code:
        return None, code
    if mix_needs_cfg and (cfg is None or not items):
        RT.tls.explain("cfg: a mix kernel on this chip needs a launch config with ENGINE_TYPE and "
                       "BLOCKDIM_OFFSET")
        return None, E_PARAM
    last = {}
    try:
        for aid, v in items:
            row = LAUNCH_ATTRS.get(aid)
            if row is None:
                RT.tls.explain(f"cfg: attribute id {aid} is not an aclrtLaunchKernelAttrId")
                return None, E_PARAM
            last[aid] = _u(v, row[1])
    except (TypeError, ValueError, IndexError):
        RT.tls.explain("cfg: an attribute value is not an integer")
        return None, E_PARAM
    if ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT in last and ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US in last:
        RT.tls.explain("cfg: TIMEOUT and TIMEOUT_US exclude each other")
        return None, E_PARAM
    if mix_needs_cfg and not (ACL_RT_LAUNCH_KERNEL_ATTR_ENGINE_TYPE in last
                              and ACL_RT_LAUNCH_KERNEL_ATTR_BLOCKDIM_OFFSET in last):
        RT.tls.explain("cfg: a mix kernel on this chip needs ENGINE_TYPE and BLOCKDIM_OFFSET")
        return None, E_PARAM
    tc = TaskCfg()
    for aid, value in last.items():
        field, _, convert, largest = LAUNCH_ATTRS[aid]
        if largest is not None and value > largest:
            RT.tls.explain(f"cfg: attribute {aid} value {value} is above its largest valid value "
                           f"{largest}")
            return None, E_PARAM
        setattr(tc, field, value if convert is None else convert(value))
    return tc, OK


def _task_params_cfg(cfg, kernel):
    """The same check and conversion for ``aclmdlRITaskSetParams``' ``kernelTaskParams.cfg``
    (``UpdateKernelParams``: ``ConvertLaunchCfgToTaskCfg``, kernel_utils.cc:248-250)."""
    return _launch_cfg(cfg, kernel, runtime_features(profile()))


if _task_params_cfg not in _TASKS.LAUNCH_CFG:
    _TASKS.LAUNCH_CFG.append(_task_params_cfg)


def _share_mem_ok(kernel, dyn: int, rfeats) -> bool:
    """CheckAndGetTotalShareMemorySize (aix_starsv2.cc, SIMT chips only)."""
    if not rfeats.simt:
        return True
    vf = kernel.kernel_vf_type
    simt = vf in (3, 4)
    limit = (SIMT_REMAIN_UB_SIZE if simt else SIMT_UB_SIZE) if vf != 0 else 0
    total = kernel.share_mem_size + dyn
    if simt:
        total = -(-total // SIMT_ALIGN) * SIMT_ALIGN
    return total <= limit


# ---- the steps the launch variants share, in their order
def _kernel_and_stream(func, stream):
    """rts handle validation of the function and the stream: (kernel, stream, code)."""
    k, code = _get("function", func)
    if code:
        return None, None, code
    s, code = _get("stream", stream)
    if code:
        return None, None, code
    return k, s, OK


def _resolve(kernel, s):
    """ApiImpl: context (107002), default stream, stream context (107003), device validity
    (107017): (stream, code)."""
    ctx = _ctx()
    if ctx is None:
        return None, E_CTX
    if s is None:
        s = ctx.default_stream
    elif s.is_model:
        return None, E_UNSUPPORTED                 # a model's own stream (as api_stream.resolve)
    elif s.ctx is not ctx:
        return None, E_STREAM_CTX
    if not kernel.program.is_valid_on(ctx.device):
        return None, E_HANDLE
    return s, OK


def _config_and_stream(kernel, s, cfg):
    """The launch configuration (CheckKernelLaunchCfg / ConvertLaunchCfgToTaskCfg), then
    context, stream and device validity: (stream, task config, runtime features, code)."""
    rfeats = runtime_features(profile())
    tc, code = _launch_cfg(cfg, kernel, rfeats)
    if code:
        return None, None, None, code
    s, code = _resolve(kernel, s)
    return s, tc, rfeats, code


def _prefetch_nops(kernel, s, tc) -> int:
    """isBlockTaskPrefetch: taskPrefetchCount NOP tasks first (non-CPU kernels)."""
    if tc is not None and tc.prefetch and kernel.reg_type == REG_NON_CPU:
        cost = s.device.timing.host_api_ns
        for _ in range(s.device.profile.task_prefetch_count):
            code = refused(s.submit(S.OP_NOP, cost))
            if code:
                return code
    return OK


def _place_host_args(s, buf_view, args_size: int, placeholders) -> int:
    """LoadArgsWithCopy: allocate the device args area, patch each placeholder's device address
    into the *host* buffer (in place), then copy argsSize bytes; the device address."""
    addr = A.place(s, bytes(args_size))
    n = len(buf_view)
    for addr_off, data_off in placeholders:
        value = (addr + data_off).to_bytes(8, "little")
        end = min(addr_off + 8, n)
        if addr_off < end:
            buf_view[addr_off:end] = np.frombuffer(value[:end - addr_off], np.uint8)
    dst = s.device.state.mem.view(addr, args_size)
    m = min(n, args_size)
    dst[:m] = buf_view[:m]
    if m < args_size:
        dst[m:] = 0
    return addr


# ---- the kernel-submission core
def _args_refused(kernel, s, kid: int, args_addr: int, args_size: int) -> int:
    """``argcheck.check`` of a launch (107000 in ``check_args="error"`` mode). A launch the
    check cannot refuse or warn about (the size is the declared total, or none is declared, and
    no parameter is a float: a fact of the kernel, body and size, not of the arguments) is
    remembered in the kernel's ``plain_args``, one per kernel (a program alternating kernels
    keeps every memo), and a launch repeating it skips the check."""
    d = _declared(kernel, kid)
    if d is None or ((args_size == d.total or not d.total) and not d.floats):
        kernel.plain_args = (kid, args_size)                # one store: readers see one tuple
        return 0
    return _check_args(kernel, s, kid, args_addr, args_size)


def submit_kernel(kernel, s, kid: int, num_blocks: int, args_addr: int, args_size: int,
                  tc=None, rfeats=None) -> int:
    """StreamLaunchKernelV2 after the API checks, for a resolved stream ``s``: the context's
    sticky failure code, lazy load (GetFunctionDevAddr), the mix check (CheckMixKernelValid),
    the SIMT shared-memory check, the kernel-injection hook, then one kernel SQE running body
    ``kid`` (the kernel's own, ``kernel.kid``, but for an AI Core launch of a CPU kernel), with
    ``a3`` = the kernel's explicit duration, else what its per-launch cost model
    (``runtime/cost.py``) makes of these blocks and arguments. The ACL code."""
    if kernel.has_param_summary and kernel.plain_args != (kid, args_size) \
            and _args_refused(kernel, s, kid, args_addr, args_size):
        return E_PARAM                            # check_args="error" (argcheck.py)
    ctx = s.ctx
    if kernel.reg_type:                           # REG_NON_CPU
        prog = kernel.program
        mix = kernel.mix_type
        if s.capture is not None and s.tg_update is None and not prog.lazy and mix < _MIX_PAIR \
                and not kernel.share_mem_size and (tc is None or not tc.dyn_ubuf) \
                and not ctx.failure_code:
            # the capture hot path: nothing below applies but the hook, and the task goes
            # straight into the capture stream (what Stream.submit does for a capturing stream)
            dur = kernel.duration_ns
            if _COST_MODELS and not dur:           # a per-launch cost model (runtime/cost.py)
                dur = _cost_ns(kid, num_blocks, s.device, args_addr, args_size)
                if dur < 0:
                    return -dur
            if KERNEL_HOOK is not None:
                kid = KERNEL_HOOK(s, kid, kernel.name)
            link = s.capture
            model, cs = link.model, link.cstream
            if model.destroyed or model.taskgrp_streams or cs.sqe_num >= model.cascade_at \
                    or cs.task_group is not None:
                pos = _capture_append(s, _OP_KERNEL, kid, args_addr, args_size, dur,
                                      0, num_blocks & 0xFFFF)
                if pos < 0:
                    return -pos
            else:
                # capture.append when none of its rules applies (a live model, no task group,
                # no cascade due): the capture cost, then the SQE into the capture stream
                pos = cs.append_kernel(kid, args_addr, args_size, dur, num_blocks & 0xFFFF)
            if tc is not None:                    # the task keeps its launch configuration
                s.capture.model.task_cfgs[(s.capture.cstream, pos)] = tc
            return OK
        if ctx.failure_code:
            return ctx.failure_code
        if prog.lazy or mix >= _MIX_PAIR:
            code, f1, f2 = L.function_addresses(kernel, s.device)
            if code:
                return code
            if mix >= _MIX_PAIR and not f2:
                RT.tls.explain(f"func: mix kernel {kernel.name} has no second (AIV) function in "
                               f"its binary")
                return E_PARAM
        dyn = tc.dyn_ubuf if tc is not None else 0
        if (dyn or kernel.share_mem_size) and \
                not _share_mem_ok(kernel, dyn, rfeats or runtime_features(s.device.profile)):
            RT.tls.explain(f"cfg: the dynamic UB ({dyn} bytes) and kernel {kernel.name}'s share "
                           f"memory exceed the chip's SIMT UB")
            return E_PARAM
    elif ctx.failure_code:
        return ctx.failure_code
    dur = kernel.duration_ns
    if _COST_MODELS and not dur:                   # a per-launch cost model (runtime/cost.py)
        dur = _cost_ns(kid, num_blocks, s.device, args_addr, args_size)
        if dur < 0:
            return -dur
    if KERNEL_HOOK is not None:
        kid = KERNEL_HOOK(s, kid, kernel.name)
    if s.tg_update is not None:       # a task update stages its row without DeviceState.push,
        TABLE.ensure(kid)             # which builds a lazy body before its SQE otherwise
    pos = s.submit(_OP_KERNEL, s.device.timing.host_kernel_launch_ns, kid, args_addr,
                   args_size, dur, 0, num_blocks & 0xFFFF)
    if pos < 0:
        return -pos
    if tc is not None:                              # kept for GetAttribute (§13.4)
        if s.capture is not None:
            s.capture.model.task_cfgs[(s.capture.cstream, pos)] = tc
        elif s.bound is not None:     # a built model's task keeps its TaskCfg too (row 292)
            s.bound.model.task_cfgs[(s.bound, pos)] = tc
    return OK


# ---- the launch APIs
def launch_kernel(func, num_blocks, args_ptr, args_size, stream):
    """aclrtLaunchKernel (rtLaunchKernelByFuncHandleV3): acl (func, args NULL -> 100000) ->
    function / stream handles (107017) -> numBlocks 0, argsSize 0 (107000) -> context (107002),
    stream context (107003), device validity (107017) -> the core (args are device memory, used
    in place). A CPU kernel launched here is an AI Core launch with PC 0 (kernel.md §9.13): its
    task runs the trap body. Launching on a capturing stream records the task."""
    if not func or not args_ptr:
        return E_ACL
    try:
        # the registry's lookups are read as attributes, then called: ``handles.function(h)``
        # would look one up as a method, which CPython 3.11 does not specialize for an
        # instance attribute (~10 ns a lookup)
        handles = RT.handles
        get = handles.function
        k = get(func)
        if k is None:
            return E_HANDLE
        if stream:
            get = handles.stream
            s = get(stream)
            if s is None:
                return E_HANDLE
        else:
            s = None
        num_blocks &= 0xFFFFFFFF
        args_size &= 0xFFFFFFFF
        if not num_blocks or not args_size:
            RT.tls.explain("num_blocks is 0"
                           if not num_blocks else
                           "args_size is 0 (as the uint32_t argsSize)")
            return E_PARAM
        tls = RT.tls                              # RT.current_context, inline
        ctx = tls.current                 # curCtx if set, else curRef
        if ctx is None or ctx.destroyed:
            ctx = tls.primary
            if ctx is None or ctx.destroyed:
                return E_CTX
        if s is None:
            s = ctx.default_stream
        elif s.is_model:
            return E_UNSUPPORTED                   # a model's own stream
        elif s.ctx is not ctx:
            return E_STREAM_CTX
        prog = k.program
        if prog.new_flow and prog.valid.get(ctx.device.id) is not ctx.device:
            return E_HANDLE
        if k.reg_type:                            # REG_NON_CPU
            link = s.capture
            kid = k.kid
            dur = k.duration_ns
            if s.tg_update is None and KERNEL_HOOK is None \
                    and (not k.has_param_summary or k.plain_args == (kid, args_size)) \
                    and not prog.lazy and k.mix_type < _MIX_PAIR and not k.share_mem_size \
                    and not ctx.failure_code and (dur or kid not in _COST_MODELS):
                # (``ctx`` is ``s.ctx`` here: the default stream's, or checked just above)
                if REC.on or _ENTRIES[kid].func is None:     # recorded; a lazy body
                    pass
                elif link is None:
                    # submit_kernel's eager path when none of its checks applies: one compiled
                    # call (Stream.submit_kernel's) when not bound, one thread, no GLOBAL
                    # capture and the staged ring has room; else Stream.submit_kernel
                    if s.bound is None and RT.threads <= 1 and not ctx.capture_refs[0]:
                        w = _memo_words(s.sq, kid, dur)
                        if _MEMO_CHECK:
                            _OFFER[1] = (args_size, s.jd, w, None, None)
                        if _LJ.eager_kernel(s.jd, s.sq, kid, args_ptr, args_size, dur,
                                            num_blocks & 0xFFFF) >= 0:
                            if w is not None and _depth() == 1:     # the launch memo's offer
                                _OFFER[0] = ((func, stream), (args_size, s.jd) + w
                                             + (None, None, None))
                            return OK
                    _LJ.forget()                # the Python path: memo entries may go stale
                    pos = s.submit_kernel(kid, args_ptr, args_size, dur, num_blocks & 0xFFFF)
                    return -pos if pos < 0 else OK      # a bound stream's full model stream
                else:
                    # submit_kernel's capture hot path when none of its rules applies (no
                    # argument check can fire, no cost model, no hook, a live model, no task
                    # group): one compiled call (CaptureStream.append_kernel's) writes the SQE
                    # when no cascade is due and the staged ring holds it; else the general path
                    model, cs = link.model, link.cstream
                    if not (model.destroyed or model.taskgrp_streams
                            or cs.task_group is not None):
                        w = _memo_words(cs.sq, kid, dur)
                        if _MEMO_CHECK and RT.threads <= 1:
                            _OFFER[1] = (args_size, cs.jd, w, cs, model)
                        r = _LJ.capture_kernel(cs.jd, cs.sq, kid, args_ptr, args_size, dur,
                                               num_blocks & 0xFFFF)
                        if r >= 0:
                            if r >> 62:             # a new run of the model's capture order
                                cs.seq_runs.append(r ^ _NEW_RUN)
                            if cs.last_event is not None:
                                cs.last_event = None
                            if w is not None and RT.threads <= 1 and _depth() == 1:
                                _OFFER[0] = ((func, stream), (args_size, cs.jd) + w
                                             + (cs, model, cs.seq_runs))   # the memo's offer
                            return OK
            _LJ.forget()
            return submit_kernel(k, s, kid, num_blocks, args_ptr, args_size)
        _LJ.forget()
        return submit_kernel(k, s, TABLE.by_name[BAD_PC_BODY], num_blocks, args_ptr, args_size)
    except (TypeError, AttributeError):
        RT.tls.explain("an argument is not of its C type")
        return E_PARAM


launch_kernel.voids_memo_itself = True
"""Its locked region does not begin with ``launchjit.forget()`` (acl/_boundary.py): the compiled
path changes what a memo hit changes, and every other path forgets before it changes anything,
so a launch missing the memo keeps the other streams' entries."""


def launch_kernel_v2(func, num_blocks, args_ptr, args_size, cfg, stream):
    """aclrtLaunchKernelV2 (rtsLaunchKernelWithDevArgs): acl (func, args NULL) -> handles ->
    args (size 0 -> 107000) -> numBlocks 0 -> launch config -> context/stream/validity ->
    prefetch NOPs -> AI Core or AICPU task; args are device memory used in place."""
    if not func or not args_ptr:
        return E_ACL
    k, s, code = _kernel_and_stream(func, stream)
    if code:
        return code
    try:
        args_size = int(args_size) & 0xFFFFFFFF
        num_blocks = int(num_blocks) & 0xFFFFFFFF
    except (TypeError, ValueError):
        RT.tls.explain("num_blocks / args_size: not integers")
        return E_PARAM
    if not args_size or not num_blocks:
        RT.tls.explain("args_size is 0 (as the uint32_t argsSize)"
                       if not args_size else
                       "num_blocks is 0")
        return E_PARAM
    s, tc, rfeats, code = _config_and_stream(k, s, cfg)
    if code:
        return code
    code = _prefetch_nops(k, s, tc)
    if code:
        return code
    return submit_kernel(k, s, k.kid, num_blocks, int(args_ptr), args_size, tc, rfeats)


def launch_kernel_with_host_args(func, num_blocks, stream, cfg, host_args, args_size,
                                 place_holders=None, place_holder_num=None):
    """aclrtLaunchKernelWithHostArgs: acl (func, hostArgs NULL) -> handles -> args checks
    (size 0; placeholders: NULL array with a count, or an offset >= argsSize -> 107000; AI Core
    kernels only) -> numBlocks 0 -> config -> context/stream/validity -> the host buffer is
    patched in place with each placeholder's device address and copied to device args memory."""
    if not func or host_args is None or \
            (isinstance(host_args, (int, np.integer)) and not host_args):
        return E_ACL
    k, s, code = _kernel_and_stream(func, stream)
    if code:
        return code
    try:
        args_size = int(args_size) & 0xFFFFFFFF
        num_blocks = int(num_blocks) & 0xFFFFFFFF
        phs = [] if place_holders is None else [(int(a), int(d)) for a, d in place_holders]
        count = len(phs) if place_holder_num is None else int(place_holder_num)
    except (TypeError, ValueError):
        RT.tls.explain("args_size / num_blocks / place_holders: not integers")
        return E_PARAM
    if not args_size:
        RT.tls.explain("args_size is 0 (as the uint32_t argsSize)")
        return E_PARAM
    if k.reg_type == REG_NON_CPU:
        count &= 0xFFFF                                  # hostInputInfoNum is u16
        if count and place_holders is None:
            RT.tls.explain(f"place_holders is NULL with place_holder_num {count}")
            return E_PARAM
        if count > len(phs):
            RT.tls.explain(f"place_holder_num: {count} (as the u16 hostInputInfoNum) is more "
                           f"than the {len(phs)} place_holders given")
            return E_PARAM
        phs = phs[:count]
        for a, d in phs:
            if a >= args_size or d >= args_size or a < 0 or d < 0:
                RT.tls.explain(f"place_holders: ({a}, {d}) has an offset outside args_size "
                               f"({args_size})")
                return E_PARAM
    else:
        phs = [(a, d) for a, d in phs[:count] if 0 <= a and 0 <= d]
    if not num_blocks:
        RT.tls.explain("num_blocks is 0")
        return E_PARAM
    s, tc, rfeats, code = _config_and_stream(k, s, cfg)
    if code:
        return code
    buf = _writable(host_args, args_size)
    if buf is None:
        RT.tls.explain(f"host_args: {args_size} bytes (args_size) at 0x{int(host_args):x} are "
                       f"not host memory the process holds" if isinstance(
                           host_args, (int, np.integer)) else
                       f"host_args: not a host buffer of args_size ({args_size}) bytes")
        return E_PARAM
    code = _prefetch_nops(k, s, tc)
    if code:
        return code
    addr = _place_host_args(s, buf, args_size, phs)
    return submit_kernel(k, s, k.kid, num_blocks, addr, args_size, tc, rfeats)


def _pack_args(k, args):
    """``args`` (one value per declared parameter) packed at the PARAM_SUMMARY offsets of kernel
    ``k``: the bytes, or None when a value is missing, NULL / 0, does not fit its parameter, or a
    parameter lies past the total size (the caller returns 107000)."""
    total = k.param_total_size
    buf = bytearray(total)
    try:
        for i in range(k.param_count):
            a = args[i]
            if a is None or (isinstance(a, (int, np.integer)) and not a):
                return None
            p = k.params[i]
            if p.offset + p.size > total:
                return None
            b = _bytes_of(a, p.size)
            if b is None:
                return None
            buf[p.offset:p.offset + p.size] = b
    except (TypeError, IndexError):
        return None
    return buf


def launch_kernel_with_args_array(func, num_blocks, stream, cfg, args):
    """aclrtLaunchKernelWithArgsArray: acl (func NULL, numBlocks 0 -> 100000) -> handles -> CPU
    kernel 207000 -> no PARAM_SUMMARY 107000 -> args NULL with params 107000 -> config ->
    context/stream/validity -> buffer of paramTotalSize built from PARAM_INFO (a NULL element or a
    parameter outside the total -> 107000) and copied to device args memory."""
    if not func:
        return E_ACL
    try:
        num_blocks = int(num_blocks) & 0xFFFFFFFF
    except (TypeError, ValueError):
        RT.tls.explain("num_blocks: not an integer")
        return E_ACL
    if not num_blocks:
        RT.tls.explain("num_blocks is 0")
        return E_ACL
    k, s, code = _kernel_and_stream(func, stream)
    if code:
        return code
    if k.reg_type == REG_CPU:
        return E_UNSUPPORTED
    if not k.has_param_summary:
        RT.tls.explain(f"func: kernel {k.name} declares no parameters (no PARAM_SUMMARY): launch "
                       f"it with host args")
        return E_PARAM
    if k.param_count > 0 and args is None:
        RT.tls.explain(f"args is NULL: kernel {k.name} declares {k.param_count} parameter(s)")
        return E_PARAM
    s, tc, rfeats, code = _config_and_stream(k, s, cfg)
    if code:
        return code
    buf = _pack_args(k, args)
    if buf is None:
        RT.tls.explain(f"args: not one value per declared parameter of kernel {k.name} "
                       f"({k.param_count}; a NULL / 0 element, a value that does not fit its "
                       f"parameter, or a parameter outside paramTotalSize)")
        return E_PARAM
    total = len(buf)
    code = _prefetch_nops(k, s, tc)
    if code:
        return code
    if total == 0:
        return submit_kernel(k, s, k.kid, num_blocks, 0, 0, tc, rfeats)
    addr = _place_host_args(s, np.frombuffer(buf, np.uint8), total, [])
    return submit_kernel(k, s, k.kid, num_blocks, addr, total, tc, rfeats)


def launch_kernel_with_config(func, num_blocks, stream, cfg, args, reserve=None):
    """aclrtLaunchKernelWithConfig: acl (func NULL, numBlocks 0, args NULL, reserve not NULL ->
    100000) -> function / args / stream handles (107017) -> handle not finalized or updating,
    empty, placeholder offsets >= argsSize (107000) -> config -> context/stream/validity -> the
    buffer's argsSize bytes copied to device args memory with placeholder addresses patched."""
    if not func:
        return E_ACL
    try:
        num_blocks = int(num_blocks) & 0xFFFFFFFF
    except (TypeError, ValueError):
        RT.tls.explain("num_blocks: not an integer")
        return E_ACL
    if not num_blocks or not args or reserve is not None:
        RT.tls.explain("num_blocks is 0" if not num_blocks else "args is NULL" if not args else
                       f"reserve: must be NULL (None), got {reserve!r:.40}")
        return E_ACL
    k, code = _get("function", func)
    if code:
        return code
    h, code = _get("args", args)
    if code:
        return code
    s, code = _get("stream", stream)
    if code:
        return code
    if not h.finalized or h.updating or h.args_size == 0:
        RT.tls.explain("args: the args handle is not finalized (aclrtKernelArgsFinalize)"
                       if not h.finalized else
                       "args: the handle is being updated: finalize it again"
                       if h.updating else
                       "args: the handle holds no arguments")
        return E_PARAM
    phs = []
    for p in h.params:
        if p.type == 1:
            if p.offset >= h.args_size or p.data_offset >= h.args_size:
                RT.tls.explain("args: a placeholder offset is outside the handle's argsSize")
                return E_PARAM
            phs.append((p.offset, p.data_offset))
    s, tc, rfeats, code = _config_and_stream(k, s, cfg)
    if code:
        return code
    code = _prefetch_nops(k, s, tc)
    if code:
        return code
    addr = _place_host_args(s, h.buffer, h.args_size, phs)
    return submit_kernel(k, s, k.kid, num_blocks, addr, h.args_size, tc, rfeats)



# ---- SIMT launches (chapter 14; aix_starsv2.cc StreamLaunchSimtArgs*, api_error.cc
# CheckSimtArgsArray / CheckSimtArgsHost, arg_manage_pcie.cc PrepareSimtArgsBuffer)
SIMT_SYNC_COUNTER_SIZE, SIMT_IMPLICIT_PARAM_COUNT = 8, 6
SIMT_IMPLICIT_PARAM_SIZE = SIMT_SYNC_COUNTER_SIZE + 4 * SIMT_IMPLICIT_PARAM_COUNT   # 32 bytes
_SIMT_VF_TYPES = (3, 4)         # AIV_TYPE_SIMT_VF_ONLY, AIV_TYPE_SIMD_SIMT_MIX_VF


def _dim3(v):
    """dim3 {x, y, z} as an (x, y, z) sequence, a dict or one int (x; y = z = 1): the three
    uint32 values, a malformed one as 0 (which the SIMT checks refuse)."""
    if isinstance(v, dict):
        v = (v.get("x", 0), v.get("y", 0), v.get("z", 0))
    elif isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        v = (v, 1, 1)
    if not isinstance(v, (list, tuple)) or len(v) != 3:
        return 0, 0, 0
    out = []
    for x in v:
        ok = isinstance(x, (int, np.integer)) and not isinstance(x, bool) and 0 <= x < 2 ** 32
        out.append(int(x) if ok else 0)
    return tuple(out)


def _simt_prefix(grid, block) -> bytes:
    """The implicit parameters before the kernel's own: a zero 8-byte sync counter, then
    blockDim z, y, x and gridDim z, y, x as uint32 (PrepareSimtArgsBuffer)."""
    dims = np.array([block[2], block[1], block[0], grid[2], grid[1], grid[0]], np.uint32)
    return bytes(SIMT_SYNC_COUNTER_SIZE) + dims.tobytes()


def _simt_target(stream, func, grid_dim, block_dim):
    """The SIMT launches' common checks, in order: the stream handle, then the function handle
    (107017), then :func:`_simt_checks`. Returns (stream, kernel, grid, block, code)."""
    s, code = _get("stream", stream)
    if code:
        return None, None, None, None, code
    k, code = _get("function", func)
    if code:
        return None, None, None, None, code
    grid, block = _dim3(grid_dim), _dim3(block_dim)
    return s, k, grid, block, _simt_checks(k, grid, block)


def _simt_checks(k, grid, block):
    """CheckSimtArgs*: a kernel that is not SIMT, no PARAM_SUMMARY, a zero grid or block
    dimension -> 107000."""
    if k.kernel_vf_type not in _SIMT_VF_TYPES or not k.has_param_summary:
        RT.tls.explain(f"func: kernel {k.name} is not a SIMT kernel with a PARAM_SUMMARY")
        return E_PARAM
    if 0 in grid or 0 in block:
        RT.tls.explain("grid_dim is 0 in a dimension"
                       if 0 in grid else
                       "block_dim is 0 in a dimension")
        return E_PARAM
    return OK


def _simt_submit(k, s, cfg, grid, dyn_ubuf_size, buf: bytes, placeholders):
    """ApiImpl(David)::LaunchKernelV2 for SIMT args: 107000 on a chip without SIMT (the
    non-David ``LaunchKernelV2`` has no SIMT case), then the launch config, context / stream
    checks, the dynamic UB size as the task's local memory (the share-memory check), the args
    copied to device memory and the kernel task with gridDim.x * y * z blocks."""
    rfeats = runtime_features(profile())
    if not rfeats.simt:
        RT.tls.explain("func: this chip has no SIMT kernels (the 950 only)")
        return E_PARAM
    blocks = grid[0] * grid[1] * grid[2]
    if blocks > 0xFFFF:
        RT.tls.explain("numBlocks (gridDim.x * y * z) is a uint16_t field of the kernel task")
        return E_PARAM
    s, tc, rfeats, code = _config_and_stream(k, s, cfg)
    if code:
        return code
    if tc is None:
        tc = TaskCfg()
    tc.dyn_ubuf = int(dyn_ubuf_size) & 0xFFFFFFFF      # taskCfg.base.localMemorySize
    code = _prefetch_nops(k, s, tc)
    if code:
        return code
    addr = _place_host_args(s, np.frombuffer(bytearray(buf), np.uint8), len(buf), placeholders)
    return submit_kernel(k, s, k.kid, blocks, addr, len(buf), tc, rfeats)


def launch_simt_kernel_with_host_args(func, grid_dim, block_dim, dyn_ubuf_size, stream, cfg,
                                      host_args, args_size, place_holders=None,
                                      place_holder_num=None):
    """aclrtLaunchSIMTKernelWithHostArgs: a SIMT kernel on gridDim.x * y * z blocks of blockDim
    threads. Order: acl: NULL func / hostArgs, argsSize 0 -> 100000; the stream handle, then the
    function handle (107017); a kernel that is not SIMT (vf type 3 / 4) or has no PARAM_SUMMARY,
    a zero dimension, placeholders NULL with a count or an offset >= argsSize -> 107000; a chip
    without SIMT (all but the 950) 107000; the launch config, context, stream (107002 /
    107003); the dynamic UB size over the chip's SIMT UB 107000. The device args are the 32-byte
    implicit parameters (sync counter, blockDim z y x, gridDim z y x) then the host args, each
    placeholder patched with its device address in that copy (the caller's buffer is left as
    it is)."""
    if not func or host_args is None or \
            (isinstance(host_args, (int, np.integer)) and not host_args) or not args_size:
        return E_ACL
    s, k, grid, block, code = _simt_target(stream, func, grid_dim, block_dim)
    if code:
        return code
    try:
        args_size = int(args_size) & 0xFFFFFFFF
        phs = [] if place_holders is None else [(int(a), int(d)) for a, d in place_holders]
        count = len(phs) if place_holder_num is None else int(place_holder_num) & 0xFFFFFFFF
    except (TypeError, ValueError):
        RT.tls.explain("args_size / place_holders: not integers")
        return E_PARAM
    if count and place_holders is None or count > len(phs):
        RT.tls.explain(f"place_holder_num: {count} placeholders, {len(phs)} given"
                       if place_holders is not None else
                       "place_holders is NULL with a count")
        return E_PARAM
    phs = phs[:count]
    if any(not 0 <= a < args_size or not 0 <= d < args_size for a, d in phs):
        RT.tls.explain(f"place_holders: an offset outside args_size ({args_size})")
        return E_PARAM
    view = _writable(host_args, args_size)
    if view is None:
        RT.tls.explain(f"host_args: not {args_size} bytes (args_size) of host memory")
        return E_PARAM
    user = bytes(np.asarray(view[:args_size], np.uint8).tobytes()).ljust(args_size, b"\0")
    shift = SIMT_IMPLICIT_PARAM_SIZE
    return _simt_submit(k, s, cfg, grid, dyn_ubuf_size, _simt_prefix(grid, block) + user,
                        [(a + shift, d + shift) for a, d in phs])


def launch_simt_kernel_with_args_array(func, grid_dim, block_dim, dyn_ubuf_size, stream, cfg,
                                       args):
    """aclrtLaunchSIMTKernelWithArgsArray: as the host-args variant, with the parameters given
    one pointer each (PARAM_INFO gives offset and size; the buffer is paramTotalSize bytes after
    the implicit parameters). Order: acl: NULL func 100000; stream then function handle
    (107017); not a SIMT kernel, no PARAM_SUMMARY, a zero dimension, NULL args with parameters
    -> 107000; a NULL parameter or one outside paramTotalSize 107000; a chip without SIMT
    107000; then the launch checks."""
    if not func:
        return E_ACL
    s, k, grid, block, code = _simt_target(stream, func, grid_dim, block_dim)
    if code:
        return code
    if k.param_count > 0 and args is None:
        RT.tls.explain(f"args is NULL: kernel {k.name} declares {k.param_count} parameter(s)")
        return E_PARAM
    buf = _pack_args(k, args)
    if buf is None:
        RT.tls.explain(f"args: not one value per declared parameter of kernel {k.name}")
        return E_PARAM
    return _simt_submit(k, s, cfg, grid, dyn_ubuf_size, _simt_prefix(grid, block) + bytes(buf),
                        [])


def function_get_avail_dyn_ubuf_per_block(func, flags):
    """aclrtFunctionGetAvailDynUbufPerBlock -> (bytes, code): the dynamic UB a SIMT kernel may
    ask for per block, the chip's SIMT UB (224 KiB) minus the kernel's own share memory; 0 for a
    kernel that is not SIMT. Order: acl: NULL func, flags not 0 -> 100000; the handle 107017; a
    share memory above the SIMT UB 107000."""
    if not func or flags != 0:
        RT.tls.explain("func is NULL" if not func else f"flags: {flags} is reserved, must be 0")
        return None, E_ACL
    k, code = _get("function", func)
    if code:
        return None, code
    if k is None:
        RT.tls.explain("func: names no kernel")
        return None, E_PARAM
    if k.kernel_vf_type not in _SIMT_VF_TYPES:
        return 0, OK
    if k.share_mem_size > SIMT_REMAIN_UB_SIZE:
        RT.tls.explain(f"func: kernel {k.name}'s share memory exceeds the chip's SIMT UB")
        return None, E_PARAM
    return SIMT_REMAIN_UB_SIZE - k.share_mem_size, OK


def get_func_by_symbol(symbol):
    """aclrtGetFuncBySymbol -> (function handle, code): the kernel the compiler registered for a
    host symbol (rtRegisterFuncSymbol). npusim's registered kernels are the kernel table's
    (built-in samples, ``@npusim.kernel`` bodies), and a symbol is a kernel's name (``str``).
    Order: acl: NULL symbol 100000; no context 107002; a symbol no kernel has 107044
    (ACL_ERROR_RT_INVALID_DEVICE_FUNCTION). The handle is valid on every device."""
    if symbol is None or (isinstance(symbol, (int, np.integer)) and not symbol):
        return None, E_ACL
    if _ctx() is None:
        return None, E_CTX
    h = table_function(symbol) if isinstance(symbol, str) else None
    if h is None:
        return None, ACL_ERROR_RT_INVALID_DEVICE_FUNCTION
    return h, OK
