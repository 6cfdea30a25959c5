"""Kernel-module APIs of ``acl.rt``: binary load/unload, function lookup, launches, args handles,
function info, CPU kernels, exception callbacks (spec/kernel.md §0, §2–§6).

Every function returns the ACL code last (outputs first), never raises for API misuse. Check
order per API = acl layer (``src/acl/aclrt_impl/kernel.cpp``: NULL inputs and ``> 0`` checks ->
100000) -> rts handle validation (``api_c_kernel.cc``: a stale or foreign handle -> 107017) ->
``ApiErrorDecorator`` (``api_error.cc``: 107000 argument checks) -> ``ApiImpl`` (``api_impl.cc``:
context 107002, stream context 107003, device validity 107017 ...) -> the launch
(``StreamLaunchKernelV2``). Each function's docstring names the order it reproduces.

Python forms of C arguments: handles and pointers are ints (0/None = NULL); byte buffers may be
``bytes``/``bytearray``/numpy arrays or a host pointer int (pinned or ``acl.util.numpy_to_ptr``
memory); load options and launch configs are ``None``, a dict ``{id: value}``, a list of
``(id, value)`` pairs, or an object with ``.options`` / ``.attrs`` (``None`` there is the C
"struct given, array NULL" case); placeholders are ``(addr_offset, data_offset)`` pairs.

``launch_kernel`` is the capture-benchmark hot path: it reads the handle registry directly and
writes a captured task with one SQE push, with the same checks in the same order as the general
path, which it falls back to for every less common case.
"""
from __future__ import annotations

import os
import threading

import numpy as np

from .. import errors as ERR
from ..device import sqe as S
from ..device.kernels import TABLE
from ..kernel import loader as L
from ..kernel import printf as P
from ..kernel.cpu import JsonError, parse_cpu_json, so_name_from_data
from ..kernel.elf import AttrType, ElfError, MixType, features_for, parse_elf, register_kernels
from ..kernel.program import (BAD_PC_BODY, JSON_MAGICS, MAGICS, REG_CPU, REG_NON_CPU, ElfProgram,
                              PlainProgram, cpu_kernel, magic_attr_type, runtime_features)
from . import api_launch as _AL
from . import args as A
from .api_device import profile
from .capture import append as _capture_append
from .device import AFTER_RUN_HOOKS
from .hostmem import PAGEABLE, PAGEABLE_MEM, PINNED, host_bytes, locate
from .runtime import RT
from .stream import refused

OK = ERR.ACL_SUCCESS
E_ACL = ERR.ACL_ERROR_INVALID_PARAM                  # 100000
E_PARAM = ERR.ACL_ERROR_RT_PARAM_INVALID             # 107000
E_HANDLE = ERR.ACL_ERROR_RT_INVALID_HANDLE           # 107017
E_CTX = ERR.ACL_ERROR_RT_CONTEXT_NULL                # 107002
E_STREAM_CTX = ERR.ACL_ERROR_RT_STREAM_CONTEXT       # 107003
E_UNSUPPORTED = ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT  # 207000
ACL_ERROR_INVALID_EXCEPTION_INFO = 0xFFFFFFFF

# ---- enums (acl_rt.h)
ACL_RT_BINARY_LOAD_OPT_LAZY_LOAD = 1
ACL_RT_BINARY_LOAD_OPT_MAGIC = 2
ACL_RT_BINARY_LOAD_OPT_LAZY_MAGIC = 2
ACL_RT_BINARY_LOAD_OPT_CPU_KERNEL_MODE = 3
ACL_RT_BINARY_MAGIC_ELF_AICORE = 0x43554245
ACL_RT_BINARY_MAGIC_ELF_VECTOR_CORE = 0x41415246
ACL_RT_BINARY_MAGIC_ELF_CUBE_CORE = 0x41494343
ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE = 1
ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE = 2
ACL_RT_LAUNCH_KERNEL_ATTR_LOCAL_MEMORY_SIZE = 2
ACL_RT_LAUNCH_KERNEL_ATTR_ENGINE_TYPE = 3
ACL_RT_LAUNCH_KERNEL_ATTR_BLOCKDIM_OFFSET = 4
ACL_RT_LAUNCH_KERNEL_ATTR_BLOCK_TASK_PREFETCH = 5
ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP = 6
ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT = 7
ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US = 8
ACL_RT_LAUNCH_KERNEL_ATTR_ENABLE_PROFILING = 9
ACL_RT_ENGINE_TYPE_AIC, ACL_RT_ENGINE_TYPE_AIV = 0, 1
ACL_FUNC_ATTR_KERNEL_TYPE = 1
ACL_FUNC_ATTR_KERNEL_RATIO = 2
ACL_FUNC_ATTR_KERNEL_SCHED_MODE = 3
ACL_RT_EXCEPTION_AICORE, ACL_RT_EXCEPTION_AICPU = 1, 2

MAX_ARGS_BUFF_SIZE = 64 * 1024        # args_handle_allocator.hpp
MAX_PARAM_CNT = 128
MAX_SYSTEM_PARAM_CNT = 8
ARGS_HANDLE_SIZE, PARA_DETAIL_SIZE = 104, 48     # sizeof(RtArgsHandle), sizeof(ParaDetail), LP64
SIMT_UB_SIZE, SIMT_REMAIN_UB_SIZE, SIMT_ALIGN = 256 * 1024, 224 * 1024, 128
_OP_KERNEL = S.OP_KERNEL


# ---- small helpers
def _ctx():
    return RT.current_context


def _features():
    p = profile()
    return features_for(p), runtime_features(p)


def _get(kind: str, h):
    """(obj, code): NULL -> (None, 0); stale/foreign -> (None, 107017)."""
    return RT.handles.get(kind, h)


def _bytes_of(data, length=None):
    """Bytes of a host buffer argument (bytes-like, numpy, or host pointer + length); None when it
    is not host memory."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        b = bytes(data)
    elif isinstance(data, np.ndarray):
        b = np.ascontiguousarray(data).tobytes()
    elif isinstance(data, (int, np.integer)):
        n = int(length or 0)
        w = locate(int(data))
        if w.kind not in (PINNED, PAGEABLE) or not w.fits(int(data), n):
            return None
        b = host_bytes(w, int(data), n).tobytes()
    else:
        return None
    if length is not None and not isinstance(data, (int, np.integer)):
        b = b[:int(length)] + bytes(max(0, int(length) - len(b)))
    return b


def _writable(data, length: int):
    """A writable uint8 view of a host buffer argument (for in-place placeholder patching), or a
    private copy when the buffer is immutable."""
    if isinstance(data, bytearray):
        return np.frombuffer(data, np.uint8)
    if isinstance(data, np.ndarray) and data.flags.c_contiguous and data.flags.writeable:
        return data.reshape(-1).view(np.uint8)
    if isinstance(data, (int, np.integer)):
        w = locate(int(data))
        if w.kind in (PINNED, PAGEABLE) and w.fits(int(data), length):
            return host_bytes(w, int(data), length)
        return None
    b = _bytes_of(data)
    return None if b is None else np.frombuffer(bytearray(b), np.uint8)


def _with_ext(path: str, ext: str) -> str:
    """GetFilePathByExtension: replace from the last '.' anywhere in the path."""
    i = path.rfind(".")
    return (path[:i] if i >= 0 else "") + ext


def _items(obj, attr: str):
    """(items or None, code) of an options/config argument."""
    if obj is None:
        return [], OK
    if hasattr(obj, attr):
        inner = getattr(obj, attr)
        if inner is None:
            return None, E_PARAM
        obj = inner
    if isinstance(obj, dict):
        return list(obj.items()), OK
    try:
        out = [(int(k), v) for k, v in obj]
    except (TypeError, ValueError):
        return None, E_PARAM
    return out, OK


# ==== binary load (BinaryLoader, binary_loader.cc) ====
class _LoadOpts:
    lazy = False
    magic = 0
    cpu_mode = None


def _parse_load_options(options, from_file: bool):
    """ParseLoadOptions: (opts, code)."""
    items, code = _items(options, "options")
    if code:
        return None, code
    o = _LoadOpts()
    for opt, value in items:
        try:
            v = int(value)
        except (TypeError, ValueError):
            return None, E_PARAM
        if opt == ACL_RT_BINARY_LOAD_OPT_LAZY_LOAD:
            if v & 0xFFFFFFFF not in (0, 1):
                return None, E_PARAM
            o.lazy = v == 1
        elif opt == ACL_RT_BINARY_LOAD_OPT_MAGIC:
            if from_file or v & 0xFFFFFFFF not in MAGICS:
                return None, E_PARAM
            o.magic = v & 0xFFFFFFFF
        elif opt == ACL_RT_BINARY_LOAD_OPT_CPU_KERNEL_MODE:
            mode = (v + 2**31) % 2**32 - 2**31                 # int32
            if (from_file and mode not in (0, 1)) or (not from_file and mode != 2):
                return None, E_PARAM
            o.cpu_mode = mode
        else:
            return None, E_PARAM
    return o, OK


def _register(prog) -> int:
    return RT.handles.add("binary", prog)


def _read_file(path: str):
    try:
        real = os.path.realpath(path)
        if not os.path.isfile(real):
            return None, None
        with open(real, "rb") as f:
            return real, f.read()
    except (OSError, ValueError, TypeError):
        return None, None


def _read_json(path: str):
    """The parsed companion JSON, or None when missing or unparsable (GetJsonObj)."""
    try:
        with open(path, "rb") as f:
            import json
            return json.loads(f.read())
    except (OSError, ValueError, UnicodeDecodeError):
        return None


def _load_elf(data: bytes, opts: _LoadOpts, json_path: str | None):
    """LoadNonCpu: (program, code)."""
    feats, rfeats = _features()
    initial = magic_attr_type(opts.magic, feats.cv_separated) if opts.magic else None
    try:
        image = parse_elf(data, feats, initial)
    except ElfError as e:
        return None, e.code
    intercore = False
    if json_path is not None:                     # ParseKernelJsonFile: after the parse
        js = _read_json(json_path)
        if isinstance(js, dict):
            intercore = js.get("intercoreSync") == 1
            dbg = js.get("debugOptions")
            if dbg is not None and (not isinstance(dbg, str) or "printf" in dbg):
                return None, E_PARAM
            m = JSON_MAGICS.get(js.get("magic")) if isinstance(js.get("magic"), str) else None
            attr = magic_attr_type(m, feats.cv_separated) if m else feats.chip_default_attr_type
            if attr != image.default_attr_type:
                try:
                    image = register_kernels(image, attr, feats)
                except ElfError as e:
                    return None, e.code
    prog = ElfProgram(image, rfeats, intercore_sync=intercore, magic=opts.magic)
    prog.lazy = opts.lazy
    return prog, OK


def _load_cpu_from_file(path: str, mode: int):
    """LoadCpuKernelFromFile: modes 0 (JSON only) and 1 (.so + JSON)."""
    so_path = _with_ext(path, ".so")
    so_data = b""
    if mode == 1:
        real, so_data = _read_file(so_path)
        if real is None:
            return None, E_PARAM
    try:
        with open(_with_ext(so_path, ".json"), "rb") as f:
            entries = parse_cpu_json(f.read())
    except (OSError, JsonError):
        return None, E_PARAM
    prog = PlainProgram(os.path.basename(so_path), mode, so_data, so_path)
    for op, fn, so, ktype in entries:
        if op not in prog.kernels:
            prog.kernels[op] = cpu_kernel(prog, op, fn, so, ktype)
    return prog, OK


_SO_NAMES: set = set()


def binary_load_from_file(path, options=None):
    """aclrtBinaryLoadFromFile: acl (path NULL -> 100000) -> options -> CPU modes 0/1 or
    file read (107000) + ELF parse (107000) + companion JSON (magic > option magic > chip default;
    debugOptions "printf" -> 107000)."""
    if path is None:
        return None, E_ACL
    path = os.fspath(path) if isinstance(path, os.PathLike) else path
    if not isinstance(path, str):
        return None, E_PARAM
    opts, code = _parse_load_options(options, from_file=True)
    if code:
        return None, code
    if opts.cpu_mode is not None:
        prog, code = _load_cpu_from_file(path, opts.cpu_mode)
    else:
        real, data = _read_file(path)
        if real is None or not data:
            return None, E_PARAM
        prog, code = _load_elf(data, opts, _with_ext(real, ".json"))
    if code:
        return None, code
    RT.tick(profile().timing.host_api_ns)
    return _register(prog), OK


def binary_load_from_data(data, options=None, length=None):
    """aclrtBinaryLoadFromData: acl (data NULL -> 100000) -> length 0 (107000) -> options ->
    CPU mode 2 (the data is the .so) or ELF parse (any failure -> 107000). The data is copied."""
    if data is None or (isinstance(data, (int, np.integer)) and not data):
        return None, E_ACL
    raw = _bytes_of(data, length)
    if raw is None:
        return None, E_PARAM
    if not raw:
        return None, E_PARAM
    opts, code = _parse_load_options(options, from_file=False)
    if code:
        return None, code
    if opts.cpu_mode is not None:
        prog = PlainProgram(so_name_from_data(raw, _SO_NAMES), 2, raw)
    else:
        prog, code = _load_elf(raw, opts, None)
        if code:
            return None, code
    RT.tick(profile().timing.host_api_ns)
    return _register(prog), OK


def binary_unload(binary) -> int:
    """aclrtBinaryUnLoad: acl NULL -> 100000; stale -> 107017; legacy programs need a context
    (107002) and are unloaded from the current device; new-flow ones from every device."""
    if not binary:
        return E_ACL
    prog, code = _get("binary", binary)
    if code:
        return code
    if not prog.new_flow and _ctx() is None:
        return E_CTX
    L.unload(prog)
    return OK


def _required(kind: str, handle):
    """(object, code) of a handle the ACL layer requires: NULL -> 100000, stale -> 107017."""
    if not handle:
        return None, E_ACL
    return _get(kind, handle)


def _program(binary):
    """The get-function family's binary handle."""
    return _required("binary", binary)


def _make_valid_here(prog):
    """(device, code) of CopySoAndNameToCurrentDevice on the current context's device."""
    ctx = _ctx()
    if ctx is None:
        return None, E_CTX
    code = L.make_valid(prog, ctx.device)
    return ctx.device, code


def _export(kernel) -> int:
    kernel.bind()
    return L.function_handle(kernel)


def binary_get_function(binary, kernel_name):
    """aclrtBinaryGetFunction: acl (binary, name NULL -> 100000) -> 107017 -> every runtime
    failure becomes 107000 (ApiImpl::BinaryGetFunctionByName), including no context, a failed
    device load and an unknown name."""
    if kernel_name is None:
        return None, E_ACL
    prog, code = _program(binary)
    if code or prog is None:
        return None, code or E_ACL
    dev, code = _make_valid_here(prog)
    if code:
        return None, E_PARAM
    k = prog.kernel_by_name(kernel_name) if isinstance(kernel_name, str) else None
    if k is None:
        return None, E_PARAM
    return _export(k), OK


def binary_get_function_by_entry(binary, func_entry):
    """aclrtBinaryGetFunctionByEntry: acl -> 107017 -> CPU program 107000 -> context 107002 ->
    device load (its code) -> binary search of the entry table (not found -> 107000)."""
    prog, code = _program(binary)
    if code or prog is None:
        return None, code or E_ACL
    if prog.reg_type != REG_NON_CPU:
        return None, E_PARAM
    dev, code = _make_valid_here(prog)
    if code:
        return None, code
    try:
        key = int(func_entry) & 0xFFFF_FFFF_FFFF_FFFF
    except (TypeError, ValueError):
        return None, E_PARAM
    k = prog.kernel_by_entry(key)
    if k is None:
        return None, E_PARAM
    return _export(k), OK


def binary_get_dev_address(binary):
    """aclrtBinaryGetDevAddress -> (aligned base or None while lazy and unloaded, LoadSize)."""
    prog, code = _program(binary)
    if code or prog is None:
        return None, None, code or E_ACL
    dev, code = _make_valid_here(prog)
    if code:
        return None, None, code
    return (prog.base_on(dev) or None), prog.load_size & 0xFFFFFFFF, OK


def binary_get_global(binary, name):
    """aclrtBinaryGetGlobal -> (device address, size): acl (binary, name NULL -> 100000) ->
    107017 -> CPU program 207000 -> context 107002 -> Load2Device (even when lazy) -> unknown
    symbol 107042."""
    if name is None:
        return None, None, E_ACL
    prog, code = _program(binary)
    if code or prog is None:
        return None, None, code or E_ACL
    if prog.reg_type == REG_CPU:
        return None, None, E_UNSUPPORTED
    ctx = _ctx()
    if ctx is None:
        return None, None, E_CTX
    code = L.load_to_device(prog, ctx.device)
    if code:
        return None, None, code
    sym = prog.image.globals.get(name) if isinstance(name, str) else None
    if sym is None:
        return None, None, ERR.ACL_ERROR_RT_SYMBOL_NOT_FOUND
    return prog.base_on(ctx.device) + sym[0], sym[1], OK


def binary_set_exception_callback(binary, callback, user_data=None) -> int:
    """aclrtBinarySetExceptionCallback: the last callback wins; it is called on the host, when
    the host observes the device after a kernel of this binary faulted, as
    ``callback(info: ExceptionInfo, user_data)``."""
    if not binary or callback is None:
        return E_ACL
    prog, code = _get("binary", binary)
    if code:
        return code
    prog.exception_callback, prog.exception_user_data = callback, user_data
    return OK


# ---- legacy binary descriptors (aclrtCreateBinary / aclrtBinaryLoad)
class _DevBinary:
    """rtDevBinary_t {magic 0, version 0, data, length}: only a descriptor."""

    def __init__(self, data, length):
        self.data, self.length = data, length


_BINARIES: dict[int, _DevBinary] = {}
_next_binary = iter(range(0x5AD0_0000_0040, 0x5AD0_FFFF_FFFF, 0x40))


def create_binary(data, data_len=None):
    """aclrtCreateBinary: the descriptor handle, or None when data is NULL (no error code)."""
    if data is None or (isinstance(data, (int, np.integer)) and not data):
        return None
    if data_len is None:
        data_len = len(data) if hasattr(data, "__len__") else 0
    h = next(_next_binary)
    _BINARIES[h] = _DevBinary(data, int(data_len))
    return h


def destroy_binary(binary) -> int:
    if not binary:
        return E_ACL
    _BINARIES.pop(binary, None)
    return OK


def binary_load(binary):
    """aclrtBinaryLoad (rtBinaryLoadWithoutTilingKey): length 0 -> 107000; unsupported chip ->
    207000; needs a context (107002); name map only (no entry table); loaded on the current
    device at once; old flow (valid on every device, unloaded from the current one)."""
    if not binary:
        return None, E_ACL
    desc = _BINARIES.get(binary)
    if desc is None:
        return None, E_PARAM
    if desc.length == 0:
        return None, E_PARAM
    feats, rfeats = _features()
    if not rfeats.legacy_binary_load:
        return None, E_UNSUPPORTED
    ctx = _ctx()
    if ctx is None:
        return None, E_CTX
    raw = _bytes_of(desc.data, desc.length)
    if raw is None:
        return None, E_PARAM
    try:
        image = parse_elf(raw, feats)
    except ElfError as e:
        return None, e.code
    prog = ElfProgram(image, rfeats, entries=False)
    prog.new_flow = False
    code = L.load_to_device(prog, ctx.device)
    if code:
        return None, code
    return _register(prog), OK


# ==== launch configuration (api_error.cc CheckKernelLaunchCfg, para_convertor.cc) ====
class TaskCfg:
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
    if isinstance(v, (tuple, list)):
        v = (int(v[1]) << 32) | int(v[0])
    return int(v) & ((1 << bits) - 1)


def _launch_cfg(cfg, kernel, rfeats):
    """(TaskCfg, code): CheckKernelLaunchCfg then ConvertLaunchCfgToTaskCfg."""
    mix_needs_cfg = rfeats.extra_vector_core and kernel.reg_type != REG_CPU and \
        kernel.mix_type != MixType.NO_MIX
    items, code = _items(cfg, "attrs")
    if code:
        return None, code
    if mix_needs_cfg and (cfg is None or not items):
        return None, E_PARAM
    try:
        sched = prefetch = dump = prof = 0
        timeout = timeout_us = engine = offset = False
        for aid, v in items:
            if aid == ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE:
                sched = _u(v, 8)
            elif aid == ACL_RT_LAUNCH_KERNEL_ATTR_ENGINE_TYPE:
                engine = True
            elif aid == ACL_RT_LAUNCH_KERNEL_ATTR_BLOCKDIM_OFFSET:
                offset = True
            elif aid == ACL_RT_LAUNCH_KERNEL_ATTR_BLOCK_TASK_PREFETCH:
                prefetch = _u(v, 8)
            elif aid == ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP:
                dump = _u(v, 8)
            elif aid == ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT:
                timeout = True
            elif aid == ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US:
                timeout_us = True
            elif aid == ACL_RT_LAUNCH_KERNEL_ATTR_ENABLE_PROFILING:
                prof = _u(v, 8)
        if (timeout and timeout_us) or sched >= 2 or prefetch > 1 or dump > 1 or prof > 1:
            return None, E_PARAM
        if mix_needs_cfg and not (engine and offset):
            return None, E_PARAM
        tc = TaskCfg()
        for aid, v in items:                            # ConvertLaunchCfgToTaskCfg
            if aid == ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE:
                tc.sched_mode = _u(v, 8)
            elif aid == ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE:
                tc.dyn_ubuf = _u(v, 32)
            elif aid == ACL_RT_LAUNCH_KERNEL_ATTR_ENGINE_TYPE:
                tc.engine_type = _u(v, 32)
            elif aid == ACL_RT_LAUNCH_KERNEL_ATTR_BLOCKDIM_OFFSET:
                tc.block_dim_offset = _u(v, 32)
            elif aid == ACL_RT_LAUNCH_KERNEL_ATTR_BLOCK_TASK_PREFETCH:
                tc.prefetch = _u(v, 8) == 1
            elif aid == ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP:
                tc.dump = _u(v, 8) == 1
            elif aid == ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT:
                tc.timeout_us = _u(v, 16) * 1_000_000
            elif aid == ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US:
                tc.timeout_us = _u(v, 64)
            elif aid == ACL_RT_LAUNCH_KERNEL_ATTR_ENABLE_PROFILING:
                tc.profiling = _u(v, 8)
            else:
                return None, E_PARAM
    except (TypeError, ValueError, IndexError):
        return None, E_PARAM
    return tc, OK


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


# ==== launch core ====
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
    (107017): (stream, device, code)."""
    ctx = _ctx()
    if ctx is None:
        return None, None, E_CTX
    if s is None:
        s = ctx.default_stream
    elif s.ctx is not ctx:
        return None, None, E_STREAM_CTX
    dev = ctx.device
    if not kernel.program.is_valid_on(dev):
        return None, None, E_HANDLE
    return s, dev, OK


def _config_and_stream(kernel, s, cfg):
    """The step every launch variant takes in the same order: the launch configuration
    (CheckKernelLaunchCfg / ConvertLaunchCfgToTaskCfg), then context, stream and device validity:
    (stream, device, task config, runtime features, code)."""
    rfeats = runtime_features(profile())
    tc, code = _launch_cfg(cfg, kernel, rfeats)
    if code:
        return None, None, None, None, code
    s, dev, code = _resolve(kernel, s)
    return s, dev, tc, rfeats, code


def _prefetch_nops(kernel, s, tc) -> int:
    """isBlockTaskPrefetch: taskPrefetchCount NOP tasks first (non-CPU kernels)."""
    if tc is not None and tc.prefetch and kernel.reg_type == REG_NON_CPU:
        cost = s.device.timing.host_api_ns
        for _ in range(s.device.profile.task_prefetch_count):
            code = refused(s.submit(S.OP_NOP, cost))
            if code:
                return code
    return OK


def _submit(kernel, func, s, dev, num_blocks: int, args_addr: int, args_size: int,
            tc=None, rfeats=None) -> int:
    """StreamLaunchKernelV2 after the API checks: lazy load (GetFunctionDevAddr), the mix check
    (CheckMixKernelValid), the SIMT shared-memory check, then the task."""
    if s.ctx.failure_code:
        return s.ctx.failure_code
    if kernel.reg_type != REG_CPU:
        if kernel.program.lazy or kernel.mix_type >= MixType.MIX_AIC_AIV_MAIN_AIC:
            code, f1, f2 = L.function_addresses(kernel, dev)
            if code:
                return code
            if kernel.mix_type >= MixType.MIX_AIC_AIV_MAIN_AIC and not f2:
                return E_PARAM
        dyn = tc.dyn_ubuf if tc is not None else 0
        if (dyn or kernel.share_mem_size) and \
                not _share_mem_ok(kernel, dyn, rfeats or runtime_features(dev.profile)):
            return E_PARAM
    kid = kernel.kid if _AL.KERNEL_HOOK is None else _AL.KERNEL_HOOK(s, kernel.kid, kernel.name)
    return refused(s.submit(_OP_KERNEL, dev.timing.host_kernel_launch_ns, kid,
                            int(args_addr), int(args_size), 0, 0, num_blocks & 0xFFFF))


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


def launch_kernel(func, num_blocks, args_ptr, args_size, stream):
    """aclrtLaunchKernel (rtLaunchKernelByFuncHandleV3): acl (func, args NULL -> 100000) ->
    function / stream handles (107017) -> numBlocks 0, argsSize 0 (107000) -> context (107002),
    stream context (107003), device validity (107017) -> lazy load, mix check -> the task (args
    are device memory, used in place). Launching on a capturing stream records the task.

    Hot path: the common case (a live function handle, a capture or eager stream without task
    groups) is written inline; anything else takes the general path with the same checks."""
    if not func or not args_ptr:
        return E_ACL
    try:
        live = RT.handles._live
        ent = live.get(func)
        if ent is None or ent[0] != "function":
            return E_HANDLE
        k = ent[1]
        if stream:
            ent = live.get(stream)
            if ent is None or ent[0] != "stream":
                return E_HANDLE
            s = ent[1]
        else:
            s = None
        num_blocks &= 0xFFFFFFFF
        args_size &= 0xFFFFFFFF
        if not num_blocks or not args_size:
            return E_PARAM
        tls = RT.tls
        ctx = tls.context
        if ctx is None or ctx.destroyed:
            ctx = RT.current_context
            if ctx is None:
                return E_CTX
        if s is None:
            s = ctx.default_stream
        elif s.ctx is not ctx:
            return E_STREAM_CTX
        dev = ctx.device
        prog = k.program
        if prog.new_flow and prog.valid.get(dev.id) is not dev:
            return E_HANDLE
        if k.reg_type and s.capture is not None and s.tg_update is None and not prog.lazy \
                and k.mix_type < 3 and not k.share_mem_size and not ctx.failure_code:
            kid = k.kid if _AL.KERNEL_HOOK is None else _AL.KERNEL_HOOK(s, k.kid, k.name)
            pos = _capture_append(s, _OP_KERNEL, kid, args_ptr, args_size, 0, 0,
                                  num_blocks & 0xFFFF)
            return -pos if pos < 0 else OK
        if k.reg_type == REG_CPU:                 # the AI Core path with PC 0 (kernel.md §9.13)
            if s.ctx.failure_code:
                return s.ctx.failure_code
            return refused(s.submit(_OP_KERNEL, dev.timing.host_kernel_launch_ns,
                                    TABLE.by_name[BAD_PC_BODY], int(args_ptr), args_size, 0, 0,
                                    num_blocks & 0xFFFF))
        return _submit(k, func, s, dev, num_blocks, args_ptr, args_size)
    except (TypeError, AttributeError):
        return E_PARAM


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
        return E_PARAM
    if not args_size or not num_blocks:
        return E_PARAM
    s, dev, tc, rfeats, code = _config_and_stream(k, s, cfg)
    if code:
        return code
    code = _prefetch_nops(k, s, tc)
    if code:
        return code
    return _submit(k, func, s, dev, num_blocks, int(args_ptr), args_size, tc, rfeats)


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
        return E_PARAM
    if not args_size:
        return E_PARAM
    if k.reg_type == REG_NON_CPU:
        count &= 0xFFFF                                  # hostInputInfoNum is u16
        if count and place_holders is None:
            return E_PARAM
        if count > len(phs):
            return E_PARAM
        phs = phs[:count]
        for a, d in phs:
            if a >= args_size or d >= args_size or a < 0 or d < 0:
                return E_PARAM
    else:
        phs = [(a, d) for a, d in phs[:count] if 0 <= a and 0 <= d]
    if not num_blocks:
        return E_PARAM
    s, dev, tc, rfeats, code = _config_and_stream(k, s, cfg)
    if code:
        return code
    buf = _writable(host_args, args_size)
    if buf is None:
        return E_PARAM
    code = _prefetch_nops(k, s, tc)
    if code:
        return code
    addr = _place_host_args(s, buf, args_size, phs)
    return _submit(k, func, s, dev, num_blocks, addr, args_size, tc, rfeats)


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
        return E_ACL
    if not num_blocks:
        return E_ACL
    k, s, code = _kernel_and_stream(func, stream)
    if code:
        return code
    if k.reg_type == REG_CPU:
        return E_UNSUPPORTED
    if not k.has_param_summary:
        return E_PARAM
    if k.param_count > 0 and args is None:
        return E_PARAM
    s, dev, tc, rfeats, code = _config_and_stream(k, s, cfg)
    if code:
        return code
    total = k.param_total_size
    buf = bytearray(total)
    try:
        for i in range(k.param_count):
            a = args[i]
            if a is None or (isinstance(a, (int, np.integer)) and not a):
                return E_PARAM
            p = k.params[i]
            if p.offset + p.size > total:
                return E_PARAM
            b = _bytes_of(a, p.size)
            if b is None:
                return E_PARAM
            buf[p.offset:p.offset + p.size] = b
    except (TypeError, IndexError):
        return E_PARAM
    code = _prefetch_nops(k, s, tc)
    if code:
        return code
    if total == 0:
        return _submit(k, func, s, dev, num_blocks, 0, 0, tc, rfeats)
    addr = _place_host_args(s, np.frombuffer(buf, np.uint8), total, [])
    return _submit(k, func, s, dev, num_blocks, addr, total, tc, rfeats)


# ==== args handles (api_impl.cc KernelArgs*, args_inner.h) ====
class ParaDetail:
    __slots__ = ("handle", "owner", "type", "offset", "size", "data_offset")

    def __init__(self, owner, ptype, offset, size):
        self.handle = 0
        self.owner, self.type, self.offset, self.size, self.data_offset = owner, ptype, offset, \
            size, 0


class ArgsHandle:
    """RtArgsHandle: a host buffer (64 KiB, or the user's), its layout and its state."""

    def __init__(self):
        self.handle = 0
        self.buffer = np.zeros(MAX_ARGS_BUFF_SIZE, np.uint8)
        self.buffer_addr = PAGEABLE_MEM.register(self.buffer)
        self.params: list[ParaDetail] = []
        self.kernel = None
        self.reset(None, MAX_ARGS_BUFF_SIZE, MAX_PARAM_CNT)

    def reset(self, kernel, buffer_size: int, max_params: int) -> None:
        for p in getattr(self, "params", ()):
            RT.handles.remove(p.handle)                  # ResetKernelArgsParamHandles
        self.params = []
        self.kernel = kernel
        self.buffer_size = buffer_size
        self.max_params = max_params
        self.args_size = self.sys_param_size = 0
        self.placeholders = 0
        self.got_ph_buffer = self.overflow_done = False
        self.finalized = self.updating = False

    @property
    def align(self) -> int:
        return 1 if self.kernel is not None and self.kernel.reg_type == REG_CPU else 8

    def aligned_end(self) -> int:
        a = self.align
        return -(-self.args_size // a) * a


_TLS = threading.local()


def _sys_params(kernel, rfeats) -> int:
    """GetToBeCalSystemParaNum: system params before the user's (overflow is not among them)."""
    n = kernel.system_para_num
    if n == 0:
        return 0
    n = n - 1 if kernel.support_overflow else n
    if not rfeats.inter_core_sync_addr and kernel.need_ffts_addr and n > 1:
        n -= 1
    return n


def _func_for_args(func):
    """The args-handle family's function handle."""
    return _required("function", func)


def kernel_args_init(func):
    """aclrtKernelArgsInit: the calling thread's one args handle (re-initialised each time, which
    invalidates its previous parameter handles), a 64 KiB buffer, at most 128 parameters."""
    k, code = _func_for_args(func)
    if code:
        return None, code
    h = getattr(_TLS, "args", None)
    if h is None or RT.handles.get("args", h.handle)[1] or not h.handle:
        h = ArgsHandle()
        RT.handles.add("args", h)
        _TLS.args = h
    h.reset(k, MAX_ARGS_BUFF_SIZE, MAX_PARAM_CNT)
    if k.reg_type == REG_NON_CPU:
        h.sys_param_size = 8 * _sys_params(k, runtime_features(profile()))
        h.args_size = h.sys_param_size
    return h.handle, OK


def kernel_args_init_by_user_mem(func, args_handle_mem, user_host_mem, actual_args_size):
    """aclrtKernelArgsInitByUserMem: acl (NULLs, size 0 -> 100000) -> 107017 -> a new handle on
    the user's buffer (``user_host_mem``: host pointer or writable array) with at most
    userParaNum (AI Core) or 128 (CPU) parameters. ``args_handle_mem`` (the handle's memory in C)
    is checked for NULL only; the handle comes back as the output."""
    if not func or args_handle_mem is None or user_host_mem is None:
        return None, E_ACL
    if isinstance(user_host_mem, (int, np.integer)) and not user_host_mem:
        return None, E_ACL
    try:
        size = int(actual_args_size)
    except (TypeError, ValueError):
        return None, E_ACL
    if size <= 0:
        return None, E_ACL
    k, code = _get("function", func)
    if code:
        return None, code
    buf = _writable(user_host_mem, size)
    if buf is None or len(buf) < size:
        return None, E_PARAM
    h = ArgsHandle.__new__(ArgsHandle)
    h.handle, h.params = 0, []
    h.buffer = buf[:size]
    h.buffer_addr = int(user_host_mem) if isinstance(user_host_mem, (int, np.integer)) \
        else PAGEABLE_MEM.register(h.buffer)
    cpu = k.reg_type == REG_CPU
    h.reset(k, size, MAX_PARAM_CNT if cpu else min(k.user_para_num, 255))
    if not cpu:
        h.sys_param_size = 8 * _sys_params(k, runtime_features(profile()))
        h.args_size = h.sys_param_size
    RT.handles.add("args", h)
    return h.handle, OK


def kernel_args_get_mem_size(func, user_args_size):
    """aclrtKernelArgsGetMemSize: userArgsSize + 8*8 + userParaNum*8 (AI Core), or userArgsSize
    (CPU)."""
    k, code = _func_for_args(func)
    if code:
        return None, code
    n = int(user_args_size)
    if k.reg_type == REG_NON_CPU:
        return n + MAX_SYSTEM_PARAM_CNT * 8 + k.user_para_num * 8, OK
    return n, OK


def kernel_args_get_handle_mem_size(func):
    """aclrtKernelArgsGetHandleMemSize: sizeof(RtArgsHandle) + n * sizeof(ParaDetail) (LP64:
    104 + 48 n), n = userParaNum (AI Core) or 128 (CPU)."""
    k, code = _func_for_args(func)
    if code:
        return None, code
    n = MAX_PARAM_CNT if k.reg_type == REG_CPU else k.user_para_num
    return ARGS_HANDLE_SIZE + n * PARA_DETAIL_SIZE, OK


def _args(h):
    if not h:
        return None, E_ACL
    return _get("args", h)


def kernel_args_append(args, param, param_size=None):
    """aclrtKernelArgsAppend: acl (args, param NULL; size 0 -> 100000) -> 107017 -> finalized
    (207000) -> after a placeholder buffer (207000) -> parameter count (107000) -> buffer
    overflow (107000); the bytes go at the aligned end. ``param``: bytes-like, or a host pointer
    with ``param_size``."""
    if not args or param is None or (isinstance(param, (int, np.integer)) and not param):
        return None, E_ACL
    try:
        size = int(param_size) if param_size is not None else len(param)
    except (TypeError, ValueError):
        return None, E_ACL
    if size <= 0:
        return None, E_ACL
    h, code = _get("args", args)
    if code:
        return None, code
    if h.finalized:
        return None, E_UNSUPPORTED
    if h.got_ph_buffer:
        return None, E_UNSUPPORTED
    if len(h.params) + 1 > h.max_params:
        return None, E_PARAM
    off = h.aligned_end()
    if off + size > h.buffer_size:
        return None, E_PARAM
    data = _bytes_of(param, size)
    if data is None:
        return None, E_PARAM
    h.buffer[off:off + size] = np.frombuffer(data, np.uint8)
    p = ParaDetail(h, 0, off, size)
    h.params.append(p)
    h.args_size = off + size
    return RT.handles.add("param", p), OK


def kernel_args_append_place_holder(args):
    """aclrtKernelArgsAppendPlaceHolder: after a placeholder buffer (207000) -> finalized
    (207000) -> count (107000) -> overflow (107000); reserves an 8-byte pointer slot."""
    if not args:
        return None, E_ACL
    h, code = _get("args", args)
    if code:
        return None, code
    if h.got_ph_buffer or h.finalized:
        return None, E_UNSUPPORTED
    if len(h.params) + 1 > h.max_params:
        return None, E_PARAM
    off = h.aligned_end()
    if off + 8 > h.buffer_size:
        return None, E_PARAM
    p = ParaDetail(h, 1, off, 8)
    h.params.append(p)
    h.args_size = off + 8
    h.placeholders += 1
    return RT.handles.add("param", p), OK


def _overflow_addr(ctx) -> int:
    addr = getattr(ctx, "overflow_addr", 0)
    if not addr:
        addr = ctx.overflow_addr = ctx.device.state.mem.malloc(64)
    return addr


def _process_overflow(h) -> int:
    """ProcessOverFlowArgs: once, for AI Core kernels with system params and overflow support,
    an 8-byte slot with the context's overflow-status address at the aligned end."""
    k = h.kernel
    if k.reg_type == REG_CPU or h.overflow_done or k.system_para_num == 0 \
            or not k.support_overflow:
        return OK
    off = h.aligned_end()
    if off + 8 > h.buffer_size:
        return E_PARAM
    ctx = _ctx()
    if ctx is None:
        return E_CTX
    h.buffer[off:off + 8] = np.frombuffer(_overflow_addr(ctx).to_bytes(8, "little"), np.uint8)
    h.args_size = off + 8
    h.overflow_done = True
    return OK


def _param(p):
    if not p:
        return None, E_ACL
    return _get("param", p)


def kernel_args_get_place_holder_buffer(args, param, data_size):
    """aclrtKernelArgsGetPlaceHolderBuffer -> host pointer (int) of the data region: acl (NULLs,
    size 0 -> 100000) -> 107017 -> not a placeholder (107000) -> finalized (207000) -> the
    overflow slot -> overflow (107000)."""
    if not args or not param:
        return None, E_ACL
    try:
        size = int(data_size)
    except (TypeError, ValueError):
        return None, E_ACL
    if size <= 0:
        return None, E_ACL
    h, code = _get("args", args)
    if code:
        return None, code
    p, code = _get("param", param)
    if code:
        return None, code
    if p.type == 0:
        return None, E_PARAM
    if h.finalized:
        return None, E_UNSUPPORTED
    code = _process_overflow(h)
    if code:
        return None, code
    off = h.aligned_end()
    if off + size > h.buffer_size:
        return None, E_PARAM
    h.got_ph_buffer = True
    p.data_offset = off
    h.args_size = off + size
    return h.buffer_addr + off, OK


def kernel_args_para_update(args, param, data, param_size=None) -> int:
    """aclrtKernelArgsParaUpdate: only normal parameters of the same size (107000); the handle
    must be finalized again before a launch."""
    if not args or not param or data is None:
        return E_ACL
    try:
        size = int(param_size) if param_size is not None else len(data)
    except (TypeError, ValueError):
        return E_ACL
    if size <= 0:
        return E_ACL
    h, code = _get("args", args)
    if code:
        return code
    p, code = _get("param", param)
    if code:
        return code
    if p.type != 0 or p.size != size:
        return E_PARAM
    b = _bytes_of(data, size)
    if b is None:
        return E_PARAM
    h.buffer[p.offset:p.offset + size] = np.frombuffer(b, np.uint8)
    h.updating = True
    return OK


def _c2c_addr(device) -> int:
    addr = getattr(device, "c2c_addr", 0)
    if not addr:
        addr = device.c2c_addr = device.state.mem.malloc(64)
    return addr


def kernel_args_finalize(args) -> int:
    """aclrtKernelArgsFinalize: the overflow slot if not done; on chips with the inter-core sync
    address, kernels needing it get it in the first 8 bytes; finalized, not updating."""
    if not args:
        return E_ACL
    h, code = _get("args", args)
    if code:
        return code
    code = _process_overflow(h)
    if code:
        return code
    ctx = _ctx()
    if ctx is None:
        return E_CTX
    k = h.kernel
    if k.reg_type == REG_NON_CPU and k.need_ffts_addr and \
            runtime_features(ctx.device.profile).inter_core_sync_addr and h.buffer_size >= 8:
        h.buffer[0:8] = np.frombuffer(_c2c_addr(ctx.device).to_bytes(8, "little"), np.uint8)
    h.finalized, h.updating = True, False
    return OK


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
        return E_ACL
    if not num_blocks or not args or reserve is not None:
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
        return E_PARAM
    phs = []
    for p in h.params:
        if p.type == 1:
            if p.offset >= h.args_size or p.data_offset >= h.args_size:
                return E_PARAM
            phs.append((p.offset, p.data_offset))
    s, dev, tc, rfeats, code = _config_and_stream(k, s, cfg)
    if code:
        return code
    code = _prefetch_nops(k, s, tc)
    if code:
        return code
    addr = _place_host_args(s, h.buffer, h.args_size, phs)
    return _submit(k, func, s, dev, num_blocks, addr, h.args_size, tc, rfeats)


# ==== function info ====
def _func(func):
    if not func:
        return None, E_ACL
    return _get("function", func)


def get_function_name(func, max_len):
    """aclrtGetFunctionName -> name: acl (name buffer: always given here) -> 107017 ->
    kernel NULL 107000 -> maxLen < len(name) + 1 -> 107000."""
    k, code = _get("function", func)
    if code:
        return None, code
    if k is None:
        return None, E_PARAM
    if int(max_len) & 0xFFFFFFFF < len(k.name.encode("utf-8", "surrogateescape")) + 1:
        return None, E_PARAM
    return k.name, OK


def _ratio(mix: int, ration: int) -> tuple[int, int]:
    """ComputeRatio (kernel_utils.cc): (aic, aiv)."""
    if mix == MixType.MIX_AIC:
        return 1, 0
    if mix == MixType.MIX_AIV:
        return 0, 1
    if mix == MixType.MIX_AIC_AIV_MAIN_AIC:
        return (1, 1) if ration == 1 else (1, 2) if ration == 2 else (0, 0)
    if mix == MixType.MIX_AIC_AIV_MAIN_AIV:
        return (1, 1) if ration == 1 else (2, 1) if ration == 2 else (0, 0)
    return 0, 0


def get_function_attribute(func, attr):
    """aclrtGetFunctionAttribute -> int64: acl (func NULL -> 100000) -> 107017 -> attr outside
    [1, 3] 107000 -> KERNEL_RATIO: chip without ACL graph 207000, CPU kernel 107000. The ratio is
    u16[0] = aiv, u16[1] = aic (the value's upper 32 bits are 0 here)."""
    k, code = _func(func)
    if code:
        return None, code
    try:
        attr = int(attr) & 0xFFFFFFFF
    except (TypeError, ValueError):
        return None, E_PARAM
    if not 1 <= attr <= 3:
        return None, E_PARAM
    if attr == ACL_FUNC_ATTR_KERNEL_TYPE:
        return int(k.attr_type), OK
    if attr == ACL_FUNC_ATTR_KERNEL_RATIO:
        if not runtime_features(profile()).acl_graph:
            return None, E_UNSUPPORTED
        if k.reg_type != REG_NON_CPU:
            return None, E_PARAM
        aic, aiv = _ratio(k.mix_type, k.task_ration)
        return aiv | (aic << 16), OK
    return int(k.sched_mode), OK


def _vector(k) -> bool:
    return k.attr_type == AttrType.VECTOR or k.mix_type == MixType.MIX_AIV


def get_function_addr(func):
    """aclrtGetFunctionAddr -> (aic, aiv): CPU kernel 107000; lazy programs load here; a single
    address of a vector kernel is the aiv one."""
    k, code = _func(func)
    if code:
        return None, None, code
    if k.reg_type != REG_NON_CPU:
        return None, None, E_PARAM
    ctx = _ctx()
    if ctx is None:
        return None, None, E_CTX
    code, f1, f2 = L.function_addresses(k, ctx.device)
    if code:
        return None, None, code
    if f1 and not f2 and _vector(k):
        return 0, f1, OK
    return f1, f2, OK


def get_function_size(func):
    """aclrtGetFunctionSize -> (aic, aiv): no acl checks; 107017 -> kernel NULL 107000 ->
    chip without ACL graph 207000 -> CPU kernel 107000."""
    k, code = _get("function", func)
    if code:
        return None, None, code
    if k is None:
        return None, None, E_PARAM
    if not runtime_features(profile()).acl_graph:
        return None, None, E_UNSUPPORTED
    if k.reg_type != REG_NON_CPU:
        return None, None, E_PARAM
    if k.length1 and not k.length2 and _vector(k):
        return 0, k.length1, OK
    return k.length1, k.length2, OK


def function_get_binary(func):
    k, code = _func(func)
    if code:
        return None, code
    return k.program.handle, OK


def function_get_param_count(func):
    """aclrtFunctionGetParamCount: CPU 207000, no PARAM_SUMMARY 107000."""
    k, code = _func(func)
    if code:
        return None, code
    if k.reg_type == REG_CPU:
        return None, E_UNSUPPORTED
    if not k.has_param_summary:
        return None, E_PARAM
    return k.param_count, OK


def function_get_param_info(func, index):
    """aclrtFunctionGetParamInfo -> (offset, size): CPU 207000, no summary or index >= count
    107000."""
    k, code = _func(func)
    if code:
        return None, None, code
    if k.reg_type == REG_CPU:
        return None, None, E_UNSUPPORTED
    if not k.has_param_summary or not 0 <= int(index) < k.param_count:
        return None, None, E_PARAM
    p = k.params[int(index)]
    return p.offset, p.size, OK


def register_cpu_func(binary, func_name, kernel_name):
    """aclrtRegisterCpuFunc: acl (all NULL checks -> 100000) -> 107017 -> not a CPU program
    107000 -> an existing name returns its kernel -> make valid on the current device."""
    if not binary or func_name is None or kernel_name is None:
        return None, E_ACL
    prog, code = _get("binary", binary)
    if code:
        return None, code
    if prog.reg_type != REG_CPU:
        return None, E_PARAM
    k = prog.kernels.get(kernel_name)
    if k is None:
        k = prog.kernels[kernel_name] = cpu_kernel(prog, str(kernel_name), str(func_name),
                                                   prog.so_name or "", 4)
    dev, code = _make_valid_here(prog)
    if code:
        return None, code
    return _export(k), OK


# ==== exceptions ====
class ExceptionInfo:
    """aclrtExceptionInfo as the simulator fills it for a faulted kernel task."""

    def __init__(self, **kw):
        self.task_id = kw.get("task_id", 0)
        self.stream_id = kw.get("stream_id", 0)
        self.thread_id = kw.get("thread_id", 0)
        self.device_id = kw.get("device_id", 0)
        self.retcode = kw.get("retcode", 0)
        self.type = kw.get("type", ACL_RT_EXCEPTION_AICORE)
        self.args_addr = kw.get("args_addr", 0)
        self.args_size = kw.get("args_size", 0)
        self.func = kw.get("func", 0)

    def __repr__(self):
        return (f"ExceptionInfo(device {self.device_id}, stream {self.stream_id}, task "
                f"{self.task_id}, retcode {self.retcode}, func 0x{self.func:x})")


def get_args_from_exception_info(info):
    """aclrtGetArgsFromExceptionInfo -> (device args address, size); info NULL or not an AI
    Core / AICPU exception -> ACL_ERROR_INVALID_EXCEPTION_INFO (0xFFFFFFFF)."""
    if info is None:
        return None, None, ACL_ERROR_INVALID_EXCEPTION_INFO
    if getattr(info, "type", None) not in (ACL_RT_EXCEPTION_AICORE, ACL_RT_EXCEPTION_AICPU):
        return None, None, ACL_ERROR_INVALID_EXCEPTION_INFO
    return info.args_addr, info.args_size & 0xFFFFFFFF, OK


def get_func_handle_from_exception_info(info):
    """aclrtGetFuncHandleFromExceptionInfo: the handle is re-validated (unloaded -> 107017)."""
    if info is None:
        return None, ACL_ERROR_INVALID_EXCEPTION_INFO
    k, code = _get("function", getattr(info, "func", 0))
    if code:
        return None, code
    if k is None:
        return None, E_PARAM
    return info.func, OK


def task_id_of(info):
    return ACL_ERROR_INVALID_EXCEPTION_INFO if info is None else info.task_id


# ---- engine hooks: exception callbacks and printf drain after every device run
def _on_device_run(device) -> None:
    P.drain(device)
    faults = device.state.faults
    seen = getattr(device, "_kernel_faults_seen", 0)
    if seen >= len(faults):
        return
    device._kernel_faults_seen = len(faults)
    from .device import fault_code
    st = device.state
    for f in faults[seen:]:
        if f.kernel < 0:
            continue
        row = st.pool[st.row_of(f.sq, f.pos)]
        func = L.LAST_HANDLE_OF_KID.get(f.kernel, 0)    # the task carries the body id only
        k, code = _get("function", func)
        if k is None or code:
            continue
        cb = k.program.exception_callback
        if cb is None:
            continue
        s = device.streams.get(f.sq) or device.streams_by_sq_model.get(f.sq)
        info = ExceptionInfo(
            task_id=int(row["task_id"]), stream_id=getattr(s, "id", f.sq),
            thread_id=threading.get_ident(), device_id=device.id, retcode=fault_code(f),
            type=ACL_RT_EXCEPTION_AICPU if k.reg_type == REG_CPU else ACL_RT_EXCEPTION_AICORE,
            args_addr=int(row["a1"]), args_size=int(row["a2"]), func=func)
        try:
            cb(info, k.program.exception_user_data)
        except Exception as e:                     # a user callback must not break a sync
            import sys
            print(f"npusim: exception callback raised {e!r}", file=sys.stderr)


AFTER_RUN_HOOKS.append(_on_device_run)
