"""The Kernel module of ``acl.rt`` (spec/kernel.md §0, §2–§6): what its API modules share.

The APIs live by subject: :mod:`.api_binary` (binary load/unload, function lookup, globals,
legacy binaries, CPU-function registration, the exception-callback setter), :mod:`.api_launch`
(the launch configuration and the one kernel-submission core every launch variant ends in),
:mod:`.api_args` (args handles), :mod:`.api_function` (function info, exception info and the
exception callbacks). This module holds their enum values (``acl_rt.h``), the error codes they
return, and the argument helpers they share.

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
"""
from __future__ import annotations

import numpy as np

from .. import errors as ERR
from ..kernel.elf import features_for
from ..kernel.program import runtime_features
from .api_device import profile
from .hostmem import PAGEABLE, PINNED, host_bytes, locate
from .runtime import RT

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


def _items(obj, attr: str):
    """(items or None, code) of an options/config argument."""
    if obj is None:
        return [], OK
    param = "cfg" if attr == "attrs" else attr          # the facade parameter's name
    if hasattr(obj, attr):
        inner = getattr(obj, attr)
        if inner is None:
            RT.tls.explain(f"{param}: its .{attr} is None")
            return None, E_PARAM
        obj = inner
    if isinstance(obj, dict):
        return list(obj.items()), OK
    try:
        out = [(int(k), v) for k, v in obj]
    except (TypeError, ValueError):
        RT.tls.explain(f"{param}: expected None, a dict {{id: value}}, (id, value) pairs or an "
                       f"object with .{attr}; got a {type(obj).__name__}")
        return None, E_PARAM
    return out, OK


def _required(kind: str, handle):
    """(object, code) of a handle the ACL layer requires: NULL -> 100000, stale -> 107017."""
    if not handle:
        return None, E_ACL
    return _get(kind, handle)

