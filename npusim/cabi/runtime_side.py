"""The Python half of the C library (docs/cabi.md "Design"): the conversions the generated
``extern "Python"`` functions use inside ``libascendcl.so`` — C strings and host buffers read
from C memory, Python objects the facade hands to C callbacks (exception infos) kept behind
integer handles, per-thread strings returned to C, and C function pointers wrapped as Python
callables the runtime calls like any other callback (on the thread the runtime calls it on).

Imported only by the library's init code (after ``FFI`` is set to the library's ``ffi``).
"""
from __future__ import annotations

import sys
import threading
import traceback

FFI = None                     # the library's cffi FFI object, set by its init code
E_INTERNAL = 507000            # ACL_ERROR_RT_INTERNAL_ERROR: an exception in the glue (a bug)
_T64 = 1 << 64
_T63 = 1 << 63

OBJECTS: dict[int, object] = {}          # handle (id) -> a Python object C holds as a pointer
_TLS = threading.local()                 # per C thread: the string last returned to C
_CALLBACKS: dict[tuple[str, int], object] = {}   # (C type, address) -> its Python callable
_LOCK = threading.Lock()


def c_string(p: int):
    """``const char*`` -> str (None for NULL)."""
    if not p:
        return None
    return FFI.string(FFI.cast("char *", p)).decode("utf-8", "surrogateescape")


def c_bytes(p: int, n: int):
    """``const void*`` + size -> the bytes there (None for NULL), copied byte for byte."""
    if not p:
        return None
    return bytes(FFI.buffer(FFI.cast("char *", p), n)) if n else b""


def obj_of(p: int):
    """A pointer C passes back: the Python object it stands for, else the integer (NULL None)."""
    if not p:
        return None
    return OBJECTS.get(p, p)


def ptr_of(x) -> int:
    """A facade value C receives as a pointer: ints as they are, objects by a handle."""
    if x is None:
        return 0
    if type(x) is int:
        return x & (_T64 - 1)
    try:
        return int(x) & (_T64 - 1)
    except (TypeError, ValueError):
        h = id(x)
        OBJECTS[h] = x
        return h


def i64(v) -> int:
    """An output value as the int64 the C wrapper stores (pointers >= 2**63 wrap)."""
    v = int(v)
    if v >= _T63:
        return v - _T64
    return v


def keep_string(s) -> int:
    """A str returned to C as ``const char*``: valid on this thread until its next string (the
    runtime keeps its message per thread the same way)."""
    if s is None:
        return 0
    buf = FFI.new("char[]", str(s).encode("utf-8", "surrogateescape"))
    _TLS.buf = buf
    return int(FFI.cast("uintptr_t", buf))


def callback(ctype: str, arg_kinds: tuple, p: int):
    """A C function pointer as a Python callable (NULL -> None); the same pointer gives the same
    callable, so registering and unregistering match."""
    if not p:
        return None
    key = (ctype, p)
    fn = _CALLBACKS.get(key)
    if fn is not None:
        return fn
    cfn = FFI.cast(ctype, p)
    cast = FFI.cast

    def call(*args):
        conv = []
        for k, a in zip(arg_kinds, args):
            if k == "p":
                conv.append(cast("void *", ptr_of(a)))
            elif k == "f":
                conv.append(float(a))
            else:
                conv.append(int(a) if a is not None else 0)
        r = cfn(*conv)
        if isinstance(r, FFI.CData):
            return int(cast("uintptr_t", r)) or None
        return r

    call.c_function = p
    with _LOCK:
        fn = _CALLBACKS.setdefault(key, call)
    return fn


def onerror(exc, value, tb):
    """An exception in the glue (never the facade's: it does not raise) — a bug: say it and
    return the internal-error code."""
    print("npusim cabi: an exception in the C library's glue (a bug, please report it):",
          file=sys.stderr)
    traceback.print_exception(exc, value, tb)
    return E_INTERNAL


# Attribute lists in C: ``struct { Item *items; size_t count; }`` with ``Item`` an ``int32_t`` id
# and a 16-byte union (aclrtLaunchKernelCfg / aclrtLaunchKernelAttr, aclrtBinaryLoadOptions /
# aclrtBinaryLoadOption: acl_rt.h). The union member in use is the id's: its width is read, not
# the 16 bytes (a C program setting ``value.schemMode`` leaves the other bytes undefined).
LAUNCH_ATTR_WIDTH = {1: 1, 2: 4, 3: 4, 4: 4, 5: 1, 6: 1, 7: 2, 8: 8, 9: 1}
BINARY_OPTION_WIDTH = {1: 4, 2: 4, 3: 4}
MALLOC_ATTR_WIDTH = {1: 2, 2: 4, 3: 4}        # aclrtMallocAttribute: 12-byte items (8-byte union)
# list kind -> (item size, the id's value width)
LISTS = {"launch": (20, LAUNCH_ATTR_WIDTH), "options": (20, BINARY_OPTION_WIDTH),
         "malloc": (12, MALLOC_ATTR_WIDTH)}


def attrs(p: int, param: str):
    """A C attribute-list struct as the facade's (id, value) pairs (None for NULL); ``param``
    the list's kind (:data:`LISTS`)."""
    if not p:
        return None
    head = FFI.cast("uint64_t *", p)
    items, count = int(head[0]), int(head[1])
    if count and not items:
        return {"attrs": None, "numAttrs": count} if param != "options" else \
            {"options": None, "numOpt": count}
    size, width = LISTS[param]
    out = []
    for i in range(min(count, 1 << 16)):
        rec = FFI.cast("uint32_t *", items + i * size)
        aid = FFI.cast("int32_t *", rec)[0]
        w = width.get(aid, 4)
        if w == 8:
            out.append((aid, (int(rec[1]), int(rec[2]))))
        else:
            out.append((aid, int(rec[1]) & ((1 << (8 * w)) - 1)))
    return out


def prop(present, handle_type, allocation_type, mem_attr, loc_type, loc_id, reserve):
    """aclrtPhysicalMemProp's fields (passed by the C wrapper) as the facade's dict."""
    if not present:
        return None
    return {"handleType": handle_type, "allocationType": allocation_type, "memAttr": mem_attr,
            "location": {"type": loc_type, "id": loc_id}, "reserve": reserve}


def access(p, count, size, off_flags, off_type, off_id):
    """``count`` aclrtMemAccessDesc at ``p`` (the C layout's size and offsets) as dicts."""
    if not p:
        return None
    out = []
    for i in range(min(count, 1 << 16)):
        base = p + i * size
        u32 = lambda off: int(FFI.cast("uint32_t *", base + off)[0])   # noqa: E731
        out.append({"flags": u32(off_flags), "location": {"type": u32(off_type),
                                                           "id": u32(off_id)}})
    return out


def write_handles(p, handles, size):
    """Handles the facade returned, written into the caller's array (at most ``size``)."""
    if not p or not handles:
        return
    arr = FFI.cast("uint64_t *", p)
    for i, h in enumerate(list(handles)[:size]):
        arr[i] = ptr_of(h)


def write_string(p, s, max_len):
    """A str into the caller's ``char`` buffer of ``max_len`` bytes, NUL-terminated, cut to
    fit (the facade has already refused a buffer shorter than the name)."""
    if not p or not max_len:
        return
    b = str(s).encode("utf-8", "surrogateescape")[:max_len - 1] + b"\0"
    FFI.memmove(FFI.cast("char *", p), b, len(b))


def pairs(p, n):
    """``n`` (uint32, uint32) pairs at ``p`` (aclrtPlaceHolderInfo[]), None for NULL."""
    if not p:
        return None
    a = FFI.cast("uint32_t *", p)
    return [(int(a[2 * i]), int(a[2 * i + 1])) for i in range(min(n, 1 << 16))]


def u64s(p, n):
    """``n`` 64-bit values at ``p`` (``void**`` / ``size_t*`` arrays), None for NULL."""
    if not p:
        return None
    a = FFI.cast("uint64_t *", p)
    return [int(a[i]) for i in range(n)]


def batch_attrs(p, n, size, off_dst, off_src, off_rsv, rsv_len, off_id, off_type):
    """``n`` aclrtMemcpyBatchAttr at ``p`` (the C layout's size and offsets) as the facade's
    dicts ``{"dstLoc": {"id", "type"}, "srcLoc": {...}, "rsv": [...]}``."""
    if not p:
        return None
    out = []
    for i in range(n):
        base = p + i * size

        def loc(off):
            return {"id": int(FFI.cast("uint32_t *", base + off + off_id)[0]),
                    "type": int(FFI.cast("int32_t *", base + off + off_type)[0])}
        rsv = list(bytes(FFI.buffer(FFI.cast("char *", base + off_rsv), rsv_len)))
        out.append({"dstLoc": loc(off_dst), "srcLoc": loc(off_src), "rsv": rsv})
    return out


from ..runtime.tasks import (ACL_MODEL_RI_TASK_EVENT_RECORD as _RECORD,  # noqa: E402
                             ACL_MODEL_RI_TASK_EVENT_RESET as _RESET,
                             ACL_MODEL_RI_TASK_EVENT_WAIT as _EWAIT,
                             ACL_MODEL_RI_TASK_KERNEL as _KERNEL,
                             ACL_MODEL_RI_TASK_VALUE_WAIT as _WAIT,
                             ACL_MODEL_RI_TASK_VALUE_WRITE as _WRITE)
_EVENT_FLAG = {_RECORD: "record_flag", _EWAIT: "wait_flag", _RESET: "reset_flag"}


def task_params(present, ty, grp, op, opsize, f0, f1, f2, f3, f4, f5):
    """aclmdlRITaskParams' fields (as the C wrapper read them for the type) as the facade's
    dict (None for NULL)."""
    if not present:
        return None
    d = {"type": ty, "task_grp": grp, "op_info_ptr": op, "op_info_size": opsize}
    if ty == _KERNEL:
        d.update(func=f0 or None, cfg=attrs(f1, "launch"), args=f2, is_host_args=f3,
                 args_size=f4, num_blocks=f5)
    elif ty in (_WRITE, _WAIT):
        d.update(dev_addr=f0, value=f1)
        if ty == _WAIT:
            d["flag"] = f2
    elif ty in _EVENT_FLAG:
        d.update(event=f0 or None, event_flag=f1)
        d[_EVENT_FLAG[ty]] = f2
    return d


def task_params_out(d, o):
    """The facade's task-parameter dict into the output slots the C wrapper reads by type."""
    ty = int(d.get("type", 0))
    o[0] = ty

    def put(i, key):
        v = d.get(key)
        o[i] = 0 if v is None else i64(ptr_of(v))
    if ty == _KERNEL:
        for i, k in enumerate(("func", "args", "args_size", "num_blocks", "is_host_args"), 1):
            put(i, k)
    elif ty in (_WRITE, _WAIT):
        put(1, "dev_addr")
        put(2, "value")
        put(3, "flag")
    elif ty in _EVENT_FLAG:
        put(1, "event")
        put(2, "event_flag")
        put(3, _EVENT_FLAG[ty])


E_PARAM = 107000                 # ACL_ERROR_RT_PARAM_INVALID
E_INSUFFICIENT = 107039          # ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY


def array_out(name, num_name, handles, code, arr, num):
    """Handles the facade returned into a C array of ``*num`` entries (``Stream::StreamGetTasks``
    ``stream.cc:5409-5447``): a NULL array gets the count; else the first min(*num, count) and
    NULL padding, ``*num`` the count written, 107039 when the array was short."""
    from ..runtime.runtime import set_recent_error
    if code and code != E_INSUFFICIENT:
        return code
    if not num:
        set_recent_error(f"{name} returned {E_PARAM} ACL_ERROR_RT_PARAM_INVALID: {num_name} is "
                         "NULL")
        return E_PARAM
    n = FFI.cast("uint32_t *", num)
    handles = list(handles or ())
    if not arr:
        n[0] = len(handles)
        return 0
    cap = int(n[0])
    k = min(cap, len(handles))
    a = FFI.cast("uint64_t *", arr)
    for i in range(cap):
        a[i] = ptr_of(handles[i]) if i < k else 0
    n[0] = k
    if code or k < len(handles):
        set_recent_error(f"{name} returned {E_INSUFFICIENT} ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY:"
                         f" the array holds {cap}, there are {len(handles)}")
        return E_INSUFFICIENT
    return 0


def attr_width(aid: int) -> int:
    """Bytes of the aclrtLaunchKernelAttrValue member attribute ``aid`` selects."""
    return LAUNCH_ATTR_WIDTH.get(aid, 4)


def attr_word(v) -> int:
    """A launch attribute value as its little-endian 64-bit word ((low, high) pairs joined)."""
    if isinstance(v, (tuple, list)) and len(v) == 2:
        return (int(v[0]) & 0xFFFFFFFF) | (int(v[1]) & 0xFFFFFFFF) << 32
    return int(v) & (_T64 - 1)


def onerror_zero(exc, value, tb):
    """:func:`onerror` for the functions whose C form returns a value (a pointer, an id):
    NULL / 0 instead of a code."""
    onerror(exc, value, tb)
    return 0
