"""The facade's parameter kinds and the table that gives every ``acl.*`` parameter its kind:
``Kind`` (a fast test the generated wrapper inlines, and the normaliser of the general path),
``Spec``, ``PARAMS`` (by parameter name), ``OVERRIDES`` (by function and parameter),
``OUTPUTS`` / ``outputs_of`` (a function's result shape) and the refusal reasons. The wrapper
generated from them is ``_boundary.py``'s.

Kinds (C types from hicann/runtime ``include/external/acl/acl_rt.h``, ``acl_mdl.h``,
``acl_base_mdl.h``; ``docs/fidelity.md`` "Facade argument boundary" has the same table):

========== ================================ ============================== ======================
kind       C type                           accepted, as                   refused
========== ================================ ============================== ======================
handle     opaque pointer (aclrtStream ...) ``int`` as is; NULL: None/0;   anything else: passed
                                            numpy / 0-d integer -> int     as a handle no object
                                                                           has (the function's
                                                                           own check: 107017)
pointer    ``void*``                        0 <= v < 2**64 -> int; values  negative, >= 2**64,
                                            >= 2**63 as the int64 of the   non-integers: passed
                                            same 64 bits (what the SQE's   as NULL (the
                                            i64 operands hold)             function's NULL code)
blocks     ``uint32_t numBlocks``           0..65535 (the task's u16       above 65535, negative,
                                            field)                         non-integers: passed
                                                                           as 0 (the function's
                                                                           numBlocks check)
u32 / u64  ``uint32_t`` / ``uint64_t``,     ints in range; numpy ints,     out of range (incl.
size       ``size_t``                       0-d integer arrays, bool ->    negative), None where
i32 / enum ``int32_t``, C enums             int; None where the facade     the parameter has no
                                            default is None                None default, floats,
                                                                           str, arrays: the
                                                                           parameter's code
                                                                           (107000; 100000 where
                                                                           the acl layer checks
                                                                           it)
path, name ``const char*``                  str / bytes / os.PathLike ->   other types: 107000
                                            str cut at the first NUL
                                            (what C reads); None = NULL
buffer     host data (``void*`` + size)     bytes-like, numpy arrays, a    other types, or a
                                            host pointer (as ``pointer``)  size argument larger
                                                                           than the bytes given:
                                                                           107000, before the
                                                                           runtime allocates
seq        ``void**`` (args array)          None, list, tuple, 1-d ndarray other types: 107000
attrs      launch config / load options     None, a dict or (id, value)    an id outside int32,
                                            pairs -> ids int32, values     a value outside 64
                                            64-bit ints or (lo, hi) words  bits, a non-integer:
                                            (objects: parsed by the        107000
                                            runtime)
placeholders ``aclrtPlaceHolderInfo[]``     None, (addrOffset, dataOffset) a pair that is not
                                            pairs of uint32_t              two uint32: 107000
struct     ``aclmdlRITaskParams*``          None, a dict (its known fields a non-dict, or a field
                                            normalised like parameters;    outside its C range:
                                            the caller's dict is copied)   107000
nullable   reserved ``void*``, callbacks,   an integer 0 (numpy, bool,     --
           info structs                     0-d) -> None (NULL); others
                                            as is (the runtime checks)
any        user data                        as is (the runtime checks)
========== ================================ ============================== ======================

A float is refused even when integral (``8.0``): C's integer parameters take no floats, and
Python's own integer conversions (``operator.index``) refuse them. A 1-element numpy array is
refused like any array; a 0-d integer array is a scalar.

Refusals are checked at the boundary, before the function's own checks, so a call with two bad arguments
may name a later one; substitutions (handles, pointers, numBlocks) keep the function's order.
"""
from __future__ import annotations

import inspect
import operator
import os

import numpy as np

from .. import errors as _ERR

E_ACL = _ERR.ACL_ERROR_INVALID_PARAM              # 100000
E_PARAM = _ERR.ACL_ERROR_RT_PARAM_INVALID         # 107000
E_INTERNAL = _ERR.ACL_ERROR_RT_INTERNAL_ERROR     # 507000

# A handle no runtime object can have: odd, while every object handle is an aligned address.
NO_OBJECT = 0x7FFF_FFFF_FFFF_FFF1
U64 = 2 ** 64 - 1
BLOCKS_MAX = 0xFFFF          # numBlocks is stored as uint16_t (spec/kernel.md §5.1, §9.7)
UNDECLARED: list[tuple[str, str]] = []                 # (function, parameter) with no kind


_NOTHING = object()          # a _Refused's ``got`` when the whole argument was refused


class _Refused(Exception):
    """A value its kind refuses; ``code`` is the code the call returns, ``rule`` what the
    parameter takes ("an integer in 0..4294967295 (uint32_t)"), ``got`` the refused part when
    it is not the whole argument (an attribute's value, a struct's field)."""

    def __init__(self, code: int, rule: str = "", got=_NOTHING, what: str = ""):
        self.code, self.rule, self.got, self.what = code, rule, got, what
        self.explained = ""


def show(v, limit: int = 60) -> str:
    """A refused value as a reason names it: its repr, cut at ``limit`` characters; data
    (bytes, arrays, long sequences) by type and size, so a 4 GiB buffer is not printed."""
    try:
        if isinstance(v, (bytes, bytearray, memoryview)):
            return f"{type(v).__name__} of {len(v)} bytes" if len(v) > 16 else repr(v)
        if isinstance(v, np.ndarray):
            return f"numpy array {v.dtype}{list(v.shape)}" if v.size > 4 else \
                f"numpy array {v.dtype}{list(v.shape)} {v.tolist()!r}"
        if isinstance(v, (list, tuple, dict)) and len(v) > 8:
            return f"{type(v).__name__} of {len(v)} items"
        if isinstance(v, str) and len(v) > limit:
            v = v[:limit]
        r = repr(v)
    except Exception:        # noqa: BLE001 -- a user's __repr__ / __len__
        return f"a {type(v).__name__} object"
    return r if len(r) <= limit else r[:limit - 3] + "..."


def refusal(name: str, r: _Refused, value) -> str:
    """The reason of a refused argument: "stream: expected a handle (int), got 'abc'"."""
    got = value if r.got is _NOTHING else r.got
    what = f" ({r.what})" if r.what else ""
    return f"{name}{what}: expected {r.rule}, got {show(got)}"


# ---- kinds ----
class Kind:
    """A parameter kind: ``fast`` is a Python expression over ``{p}`` true for the values that
    need no work; ``norm(value, spec)`` returns the value the runtime gets or raises _Refused."""
    __slots__ = ("name", "fast", "norm")

    def __init__(self, name: str, fast: str | None, norm):
        self.name, self.fast, self.norm = name, fast, norm


class Spec:
    """One parameter: its kind, the code a refusal returns, whether ``None`` means "not given"."""
    __slots__ = ("kind", "code", "optional")

    def __init__(self, kind: Kind, code: int = E_PARAM, optional: bool = False):
        self.kind, self.code, self.optional = kind, code, optional


def _as_int(v):
    """The int of an integer-like value (int, bool, numpy integer, 0-d integer array), else
    None. Floats, strings and arrays with a dimension are not integers."""
    if type(v) is int:
        return v
    if isinstance(v, (float, complex, str, bytes, bytearray)):
        return None
    try:
        return operator.index(v)
    except Exception:        # noqa: BLE001 -- any object: __index__ may raise anything
        return None


def _in_range(lo: int, hi: int) -> str:
    """The fast test of an int ``{p}`` in ``lo..hi``, a range of 2**k values starting at ``lo``
    (every C integer type's): ``not ({p} - lo) >> k`` — one shift where a chained comparison
    takes three tests (a value below ``lo`` shifts to -1, one above ``hi`` to >= 1)."""
    bits = (hi - lo + 1).bit_length() - 1
    assert hi - lo + 1 == 1 << bits, (lo, hi)
    return f"not {{p}} >> {bits}" if lo == 0 else f"not ({{p}} + {-lo}) >> {bits}"


def _rule(lo: int, hi: int, ctype: str) -> str:
    return f"an integer in {lo}..{hi} ({ctype})"


def _int_kind(name: str, lo: int, hi: int, ctype: str) -> Kind:
    rule = _rule(lo, hi, ctype)

    def norm(v, spec):
        if v is None and spec.optional:
            return None
        i = _as_int(v)
        if i is None or not lo <= i <= hi:
            raise _Refused(spec.code, rule)
        return i
    return Kind(name, f"(type({{p}}) is int and {_in_range(lo, hi)})", norm)


U32 = _int_kind("u32", 0, 2 ** 32 - 1, "uint32_t")
U64K = _int_kind("u64", 0, U64, "uint64_t")
SIZE = _int_kind("size", 0, U64, "size_t")
I32 = _int_kind("i32", -2 ** 31, 2 ** 31 - 1, "int32_t")
ENUM = _int_kind("enum", -2 ** 31, 2 ** 31 - 1, "a C enum, int32_t")


def _handle(v, spec):
    if v is None:
        return None
    i = _as_int(v)
    return NO_OBJECT if i is None else i


HANDLE = Kind("handle", "(type({p}) is int or {p} is None)", _handle)


def _pointer(v, spec=None):
    i = _as_int(v)
    if i is None or not 0 <= i <= U64:
        return 0
    return i - 2 ** 64 if i >= 2 ** 63 else i


POINTER = Kind("pointer", f"(type({{p}}) is int and {_in_range(0, 2 ** 63 - 1)})", _pointer)


def _blocks(v, spec):
    i = _as_int(v)
    return i if i is not None and 0 <= i <= BLOCKS_MAX else 0


BLOCKS = Kind("blocks", f"(type({{p}}) is int and {_in_range(0, BLOCKS_MAX)})", _blocks)


_STRING_RULE = "a C string: str, bytes or os.PathLike"


def _string(v, spec):
    if v is None:
        return None
    try:
        if isinstance(v, os.PathLike):
            v = os.fspath(v)
        if isinstance(v, (bytes, bytearray)):
            v = os.fsdecode(bytes(v))
    except Exception:        # noqa: BLE001 -- a user's __fspath__, undecodable bytes
        raise _Refused(spec.code, _STRING_RULE + " that decodes") from None
    if not isinstance(v, str):
        raise _Refused(spec.code, _STRING_RULE)
    v = str.__str__(v)
    nul = v.find("\0")
    return v if nul < 0 else v[:nul]


PATH = Kind("path", "(type({p}) is str and '\\0' not in {p})", _string)
NAME = Kind("name", "(type({p}) is str and '\\0' not in {p})", _string)


def _buffer(v, spec):
    if isinstance(v, np.ndarray):
        return v.reshape(1) if v.ndim == 0 else v
    if v is None or isinstance(v, (bytes, bytearray, memoryview)):
        return v
    i = _as_int(v)
    if i is None:
        raise _Refused(spec.code, "host data: bytes-like, a numpy array or a host pointer (int)")
    return _pointer(i)


BUFFER = Kind("buffer", "(type({p}) is bytes or type({p}) is bytearray)", _buffer)


def _seq(v, spec):
    if v is None or isinstance(v, (list, tuple)) or isinstance(v, np.ndarray) and v.ndim == 1:
        return v
    raise _Refused(spec.code, "an array: None, a list, a tuple or a 1-d numpy array")


SEQ = Kind("seq", "({p} is None or type({p}) is list or type({p}) is tuple)", _seq)
ANY = Kind("any", "True", lambda v, spec: v)


def _nullable(v, spec):
    """A ``void*`` the runtime only tests for NULL (a reserved argument, a callback): an integer
    0 (``0``, ``False``, a numpy 0, a 0-d integer array) is NULL, passed as None; anything else
    as is (docs/fidelity.md row 290)."""
    if v is None or callable(v):
        return v
    i = _as_int(v)
    return None if i == 0 else v


NULLABLE = Kind("nullable", "({p} is None or callable({p}))", _nullable)


def _int_in(v, lo: int, hi: int, code: int, what: str = "", ctype: str = "") -> int:
    i = _as_int(v)
    if i is None or not lo <= i <= hi:
        raise _Refused(code, _rule(lo, hi, ctype or "its C type"), v, what)
    return i


def _pair(v, lo: int, hi: int, code: int, what: str = "") -> tuple[int, int]:
    if not (isinstance(v, (list, tuple)) and len(v) == 2 or
            isinstance(v, np.ndarray) and v.shape == (2,)):
        raise _Refused(code, "a pair of two uint32_t", v, what)
    return (_int_in(v[0], lo, hi, code, what, "uint32_t"),
            _int_in(v[1], lo, hi, code, what, "uint32_t"))


def _placeholders(v, spec):
    """aclrtPlaceHolderInfo[]: (addrOffset, dataOffset) pairs of uint32_t."""
    if v is None:
        return None
    if not isinstance(v, (list, tuple, np.ndarray)) or np.ndim(v) == 0:
        raise _Refused(spec.code, "None or a list of (addrOffset, dataOffset) uint32_t pairs")
    return [_pair(p, 0, 2 ** 32 - 1, spec.code, f"placeholder {i}") for i, p in enumerate(v)]


PLACEHOLDERS = Kind("placeholders", "({p} is None)", _placeholders)


def _attr_value(v, code: int, what: str = ""):
    """A union attribute value: one 64-bit integer, or a (low, high) pair of 32-bit words."""
    if isinstance(v, (list, tuple)):
        return _pair(v, 0, 2 ** 32 - 1, code, what)
    return _int_in(v, -2 ** 63, U64, code, what, "a 64-bit attribute value")


_STRUCT_LISTS = (("attrs", "numAttrs"), ("options", "numOpt"))   # the C structs' array fields
_ITEM_IDS = ("id", "type")      # aclrtLaunchKernelAttr.id, aclrtBinaryLoadOption.type


def _attrs(v, spec):
    """aclrtLaunchKernelCfg / aclrtBinaryLoadOptions as a dict or (id, value) pairs: ids are
    enums, values 64-bit integers (or word pairs). The literal C shapes a port writes are read
    too: items ``{"id": a, "value": v}`` (aclrtLaunchKernelAttr) or ``{"type": t, "value": v}``
    (aclrtBinaryLoadOption), and the struct itself, ``{"attrs": [...], "numAttrs": n}`` /
    ``{"options": [...], "numOpt": n}`` (the first n items, as C reads them). Other objects
    (``.attrs`` / ``.options``) are parsed by the runtime."""
    if isinstance(v, dict):
        for field, count in _STRUCT_LISTS:
            if field in v and all(k in (field, count) for k in v):
                items = v[field]
                if not isinstance(items, (list, tuple)):
                    raise _Refused(spec.code, "a list", items, f"field {field!r}")
                n = _int_in(v.get(count, len(items)), 0, len(items), spec.code,
                            f"field {count!r}", f"the count of {field}")
                return _attrs(list(items[:n]), spec)
        return {_int_in(k, -2 ** 31, 2 ** 31 - 1, spec.code, "an attribute id", "int32_t"):
                _attr_value(x, spec.code, f"attribute {show(k)}") for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        out = []
        for item in v:
            if isinstance(item, dict):
                key = next((k for k in _ITEM_IDS if k in item), None)
                if key is None or "value" not in item or len(item) != 2:
                    raise _Refused(spec.code, "an item {'id' or 'type': ..., 'value': ...}",
                                   item, "an item")
                item = (item[key], item["value"])
            if not isinstance(item, (list, tuple)) or len(item) != 2:
                raise _Refused(spec.code, "an (id, value) pair", item, "an item")
            out.append((_int_in(item[0], -2 ** 31, 2 ** 31 - 1, spec.code, "an attribute id",
                                "int32_t"),
                        _attr_value(item[1], spec.code, f"attribute {show(item[0])}")))
        return out
    return v


ATTRS = Kind("attrs", "({p} is None)", _attrs)

# aclmdlRITaskParams: the fields ri_task_set_params reads, with their C ranges
_I32, _U32 = (-2 ** 31, 2 ** 31 - 1), (0, 2 ** 32 - 1)
_TASK_FIELDS = {"type": _I32, "func": (-2 ** 63, U64), "args": (0, U64), "args_size": _U32,
                "num_blocks": (0, BLOCKS_MAX), "dev_addr": (0, U64), "value": (0, U64),
                "flag": _U32, "is_host_args": _U32, "task_grp": (0, U64),
                "op_info_ptr": (0, U64), "op_info_size": (0, U64)}
_TASK_POINTERS = ("args", "dev_addr")


def _struct(v, spec):
    """A copy of the dict with each known field an int of its C range (pointers as int64)."""
    if v is None:
        return None
    if not isinstance(v, dict):
        raise _Refused(spec.code, "None or a dict of the struct's C fields")
    out = dict(v)
    for key, (lo, hi) in _TASK_FIELDS.items():
        if key in out and not (key == "func" and out[key] is None):
            i = _as_int(out[key])
            if i is None or not lo <= i <= hi:
                raise _Refused(spec.code, _rule(lo, hi, "its C type"), out[key],
                               f"field {key!r}")
            out[key] = _pointer(i) if key in _TASK_POINTERS else i
    return out


STRUCT = Kind("struct", None, _struct)


# ---- the table: parameter name -> spec, then per-function overrides ----
PARAMS: dict[str, Spec] = {
    # handles
    **{n: Spec(HANDLE) for n in ("stream", "sh", "h", "eh", "start_h", "end_h", "nh", "func",
                                 "binary", "args", "model_ri", "task", "handle", "cond",
                                 "param", "active_stream", "true_stream", "false_stream",
                                 "task_stream", "exec_stream")},
    # pointers
    **{n: Spec(POINTER) for n in ("ptr", "dst", "src", "args_ptr", "dev_addr", "left_value",
                                  "right_value", "output_addr")},
    # size_t
    **{n: Spec(SIZE) for n in ("dest_max", "count", "max_count", "size", "args_size",
                               "data_size", "user_args_size", "actual_args_size", "index",
                               "dpitch", "spitch", "width", "height", "mem_size", "n",
                               "num", "output_size")},
    **{n: Spec(SIZE, optional=True) for n in ("length", "data_len", "param_size",
                                              "place_holder_num")},
    # uint32_t
    **{n: Spec(U32) for n in ("flag", "flags", "priority", "max_len", "timeout_s",
                              "default_value")},
    "num_blocks": Spec(BLOCKS),
    "func_entry": Spec(U64K),
    "thread_id": Spec(U64K),                                # uint64_t threadId (callbacks)
    # int32_t and enums
    **{n: Spec(I32) for n in ("dev_id", "timeout_ms", "timeout", "value")},
    **{n: Spec(ENUM) for n in ("kind", "policy", "mode", "attr", "attr_id", "cond_type",
                               "stm_attr_type", "block_type", "condition", "data_type",
                               "cann_attr")},
    # strings, buffers, structs
    "path": Spec(PATH), "config_path": Spec(PATH),
    **{n: Spec(NAME) for n in ("kernel_name", "func_name", "name", "reg_name",
                               "soc_version", "pkg_name")},
    **{n: Spec(BUFFER) for n in ("data", "host_args", "args_handle_mem", "user_host_mem")},
    "place_holders": Spec(PLACEHOLDERS),
    **{n: Spec(ATTRS) for n in ("options", "cfg")},
    "params": Spec(STRUCT),
    # parsed by the runtime
    "user_data": Spec(ANY),
    # pointers the runtime only tests for NULL (reserved, callbacks, info structs): 0 is NULL
    # (docs/fidelity.md row 290)
    **{n: Spec(NULLABLE) for n in ("reserve", "callback", "fn", "info", "task_info")},
}

OVERRIDES: dict[tuple[str, str], Spec] = {
    # the acl layer range-checks these (a refusal there is 100000)
    ("malloc", "size"): Spec(SIZE, E_ACL), ("malloc_host", "size"): Spec(SIZE, E_ACL),
    **{(f, "size"): Spec(SIZE, E_ACL) for f in ("malloc_align32", "malloc_cached",
                                               "malloc_with_cfg", "malloc_for_task_scheduler",
                                               "malloc_host_with_cfg")},
    ("memcpy", "kind"): Spec(ENUM, E_ACL), ("memcpy_async", "kind"): Spec(ENUM, E_ACL),
    ("memcpy2d", "kind"): Spec(ENUM, E_ACL),
    ("memset_d32", "value"): Spec(U32),                     # uint32_t value
    ("notify_batch_reset", "notifies"): Spec(SEQ),          # aclrtNotify* notifies
    ("check_mem_type", "addr_list"): Spec(SEQ),             # void** addrList
    ("check_mem_type", "size"): Spec(U32), ("check_mem_type", "mem_type"): Spec(U32),
    ("check_mem_type", "reserve"): Spec(U32),
    ("ri_cond_handle_create", "flag"): Spec(ENUM, E_ACL),
    ("launch_callback", "block_type"): Spec(ENUM, E_ACL),
    ("process_report", "timeout"): Spec(I32, E_ACL),
    ("kernel_args_append", "param_size"): Spec(SIZE, E_ACL, optional=True),
    ("kernel_args_para_update", "param_size"): Spec(SIZE, E_ACL, optional=True),
    ("kernel_args_get_place_holder_buffer", "data_size"): Spec(SIZE, E_ACL),
    ("kernel_args_init_by_user_mem", "actual_args_size"): Spec(SIZE, E_ACL),
    # other C types than the name's default
    ("create_notify", "flag"): Spec(U64K),                  # uint64_t flag
    ("set_stream_failure_mode", "mode"): Spec(U64K),        # uint64_t mode
    ("ri_add_cond_task", "size"): Spec(U32),                # aclmdlRICondTaskParams.size
    ("kernel_args_append", "param"): Spec(BUFFER),          # void* param (host data)
    ("kernel_args_para_update", "data"): Spec(BUFFER),
    ("launch_kernel_with_args_array", "args"): Spec(SEQ),   # void** args
    ("ri_capture_thread_exchange_mode", "mode"): Spec(ENUM, optional=True),  # in/out pointer
    ("value_write", "value"): Spec(U64K), ("value_wait", "value"): Spec(U64K),   # uint64_t value
    ("set_stream_attribute", "value"): Spec(U64K, optional=True),  # aclrtStreamAttrValue*
    ("set_op_wait_timeout", "timeout"): Spec(U32),          # uint32_t timeout (seconds)
    ("stream_wait_event_with_flag", "timeout"): Spec(U32),  # uint32_t timeout (seconds)
    ("set_op_execute_time_out", "timeout"): Spec(U32),
    ("set_op_execute_time_out_with_ms", "timeout"): Spec(U32),
    ("set_op_execute_time_out_v2", "timeout"): Spec(U64K),  # uint64_t timeout (µs)
    ("ri_get_streams", "num_streams"): Spec(U32, optional=True),  # uint32_t *numStreams
    # acl.media (runtime/api_dvpp.py): size_t size checked by the acl layer, void *devPtr
    ("dvpp_malloc", "size"): Spec(SIZE, E_ACL), ("dvpp_free", "dev_ptr"): Spec(POINTER),
    ("ri_destroy_register_callback", "func"): Spec(NULLABLE),   # aclrtCallback: a callable
    ("launch_host_func", "args"): Spec(ANY),                # void* args: the user's data
    ("ri_destroy_unregister_callback", "func"): Spec(NULLABLE),
    # chapter 11-03 / 11-01 (runtime/api_memcopy.py)
    **{(f, n): Spec(SEQ) for f in ("memcpy_batch", "memcpy_batch_v2", "memcpy_batch_async",
                                   "memcpy_batch_async_v2")
       for n in ("dsts", "dest_maxs", "srcs", "sizes", "attrs", "attrs_indexes")},
    **{(f, n): Spec(SIZE, E_ACL) for f in ("memcpy_batch", "memcpy_batch_v2",
                                           "memcpy_batch_async", "memcpy_batch_async_v2")
       for n in ("num_batches", "num_attrs")},
    **{(f, "kind"): Spec(ENUM, E_ACL) for f in ("get_memcpy_desc_size", "set_memcpy_desc",
                                                "memcpy_async_with_desc", "memcpy2d_async",
                                                "memcpy_async_with_condition")},
    ("set_memcpy_desc", "count"): Spec(SIZE, E_ACL),
    **{(f, "desc"): Spec(POINTER) for f in ("set_memcpy_desc", "memcpy_async_with_desc")},
    **{("set_memcpy_desc", n): Spec(POINTER) for n in ("src_addr", "dst_addr")},
    ("set_memcpy_desc", "config"): Spec(NULLABLE),          # void* config (reserved, NULL)
    **{("memcpy_async_with_offset", n): Spec(SIZE) for n in ("dst_data_offset",
                                                              "src_data_offset")},
    ("memset_d32_async", "value"): Spec(U32),               # uint32_t value
    ("get_mem_usage_info", "input_num"): Spec(SIZE),
    # chapter 14 (runtime/api_launch.py)
    **{(f, n): Spec(ANY) for f in ("launch_simt_kernel_with_host_args",
                                   "launch_simt_kernel_with_args_array")
       for n in ("grid_dim", "block_dim")},                 # dim3: (x, y, z), a dict or an int
    **{(f, "dyn_ubuf_size"): Spec(SIZE) for f in ("launch_simt_kernel_with_host_args",
                                                 "launch_simt_kernel_with_args_array")},
    ("launch_simt_kernel_with_args_array", "args"): Spec(SEQ),   # void** args
    ("get_func_by_symbol", "symbol"): Spec(ANY),            # the kernel's name
    ("function_get_avail_dyn_ubuf_per_block", "flags"): Spec(U32, E_ACL),
    # chapter 3 device resource limits (runtime/api_device.py)
    **{(f, "res_type"): Spec(ENUM) for f in ("set_device_res_limit", "get_device_res_limit",
                                              "get_res_in_current_thread")},
    ("set_device_res_limit", "value"): Spec(U32),           # uint32_t value
    # chapter 12 (runtime/api_random.py): uint32_t taskId
    ("task_update_async", "task_id"): Spec(U32),
    # chapter 13 (runtime/api_exception.py)
    # they return the code itself (no output shape): the function checks its level
    **{(f, "level"): Spec(ANY) for f in ("peek_at_last_error", "get_last_error")},
    # chapters 02 / 04 / 13 / 24 callbacks and helpers (runtime/api_lifecycle.py,
    # api_devstate.py, api_util.py)
    **{(f, "reg_type"): Spec(ENUM, E_ACL) for f in (
        "init_callback_register", "init_callback_un_register", "finalize_callback_register",
        "finalize_callback_un_register")},
    **{(f, "args"): Spec(ANY) for f in ("reg_device_state_callback",
                                        "set_device_task_abort_callback")},
    **{(f, "value"): Spec(ANY) for f in ("float16_to_float", "float_to_float16")},
    ("get_device_capability", "device_id"): Spec(U32, E_ACL),
    ("get_device_info", "device_id"): Spec(U32),            # uint32_t deviceId
    ("get_device_utilization_rate", "device_id"): Spec(I32),  # int32_t deviceId
    ("get_device_capability", "dev_feature_type"): Spec(ENUM),  # acl.rt's aclrtDevFeatureType
    # user allocators (runtime/api_allocator.py): the desc is npusim's handle; the allocator
    # object and the functions are the caller's pointers, only tested for NULL
    **{(f, "allocator_desc"): Spec(HANDLE) for f in (
        "allocator_destroy_desc", "allocator_set_obj_to_desc", "allocator_set_alloc_func_to_desc",
        "allocator_set_free_func_to_desc", "allocator_set_alloc_advise_func_to_desc",
        "allocator_set_get_addr_from_block_func_to_desc", "allocator_register")},
    ("allocator_set_obj_to_desc", "allocator"): Spec(NULLABLE),
    # labels (runtime/api_label.py)
    **{(f, "label"): Spec(HANDLE) for f in ("destroy_label", "set_label")},
    **{(f, "label_list"): Spec(HANDLE) for f in ("destroy_label_list", "switch_label_by_index")},
    ("create_label_list", "labels"): Spec(SEQ),             # aclrtLabel *labels
    ("switch_label_by_index", "max_value"): Spec(U32),      # uint32_t maxValue
    # peer access (runtime/api_peer.py): int32_t deviceId / peerDeviceId
    **{(f, n): Spec(I32) for f, n in (
        ("device_can_access_peer", "device_id"), ("device_can_access_peer", "peer_device_id"),
        ("device_enable_peer_access", "peer_device_id"),
        ("device_disable_peer_access", "peer_device_id"),
        ("device_peer_access_status", "device_id"),
        ("device_peer_access_status", "peer_device_id"))},
    **{(f, "cnt_notify"): Spec(HANDLE) for f in (
        "cnt_notify_destroy", "cnt_notify_record", "cnt_notify_reset", "cnt_notify_get_id",
        "cnt_notify_wait_with_timeout")},
    ("cnt_notify_create", "flag"): Spec(U64K),              # uint64_t flag
    **{(f, n): Spec(I32) for f, n in (
        ("get_logic_dev_id_by_phy_dev_id", "phy_dev_id"),
        ("get_user_dev_id_by_phy_dev_id", "phy_dev_id"),
        ("get_phy_dev_id_by_logic_dev_id", "logic_dev_id"),
        ("get_user_dev_id_by_logic_dev_id", "logic_dev_id"),
        ("get_phy_dev_id_by_user_dev_id", "user_dev_id"),
        ("get_logic_dev_id_by_user_dev_id", "user_dev_id"))},
    ("get_device_capability", "device_info"): Spec(ENUM, E_ACL),
    ("prof_trace", "userdata"): Spec(ANY),                  # void*: bytes or a host pointer
    ("prof_trace", "length"): Spec(I32),                    # int32_t length
    # chapter 11-04 virtual memory (runtime/api_vmm.py)
    **{(f, "flags"): Spec(U64K) for f in ("reserve_mem_address",
                                          "reserve_mem_address_no_uc_memory", "malloc_physical",
                                          "map_mem", "mem_map_no_access")},
    **{(f, "size"): Spec(SIZE, E_ACL) for f in ("reserve_mem_address",     # the acl layer's
                                               "reserve_mem_address_no_uc_memory",
                                               "malloc_physical", "map_mem",
                                               "mem_map_no_access")},   # positive-size check
    **{(f, "alignment"): Spec(SIZE) for f in ("reserve_mem_address",
                                              "reserve_mem_address_no_uc_memory")},
    **{(f, "expect_ptr"): Spec(POINTER) for f in ("reserve_mem_address",
                                                  "reserve_mem_address_no_uc_memory")},
    **{(f, "prop"): Spec(ANY) for f in ("malloc_physical", "mem_get_allocation_granularity")},
    **{(f, "offset"): Spec(SIZE) for f in ("map_mem", "mem_map_no_access")},
    **{("mem_map_selected_link", n): Spec(POINTER) for n in ("vir_ptr_dst", "vir_ptr_src")},
    ("mem_map_selected_link", "size"): Spec(SIZE, E_ACL),
    ("mem_map_selected_link", "link_idx"): Spec(U32, E_ACL),
    ("mem_set_access", "desc"): Spec(ANY),                  # aclrtMemAccessDesc (list)
    ("mem_set_access", "count"): Spec(SIZE, optional=True),
    ("mem_get_allocation_granularity", "option"): Spec(ENUM),
    # chapter 11-10 stream-ordered memory pools (runtime/api_mempool.py)
    ("mem_pool_create", "pool_props"): Spec(ANY),           # aclrtMemPoolProps
    **{(f, "mem_pool"): Spec(HANDLE) for f in ("mem_pool_destroy", "mem_pool_set_attr",
                                               "mem_pool_get_attr", "mem_pool_malloc_async",
                                               "mem_pool_trim_to")},
    ("mem_pool_set_attr", "value"): Spec(ANY),              # void* value: the attribute's type
    ("mem_pool_trim_to", "min_bytes_to_keep"): Spec(SIZE),
    # chapter 11-11 device variables (runtime/api_symbol.py)
    ("register_variable", "host_var"): Spec(POINTER),
    ("register_variable", "device_var_name"): Spec(NAME),
    **{(f, "symbol"): Spec(POINTER) for f in ("get_symbol_address", "get_symbol_size",
                                              "memcpy_from_symbol", "memcpy_from_symbol_async",
                                              "memcpy_to_symbol", "memcpy_to_symbol_async")},
    **{(f, n): Spec(SIZE) for f in ("memcpy_from_symbol", "memcpy_from_symbol_async",
                                    "memcpy_to_symbol", "memcpy_to_symbol_async")
       for n in ("dst_max", "offset")},
    **{(f, "kind"): Spec(ENUM, E_ACL) for f in ("memcpy_from_symbol", "memcpy_from_symbol_async",
                                                "memcpy_to_symbol", "memcpy_to_symbol_async")},
    # chapter 11-05 managed memory (runtime/api_managed.py)
    ("mem_alloc_managed", "size"): Spec(SIZE),
    **{(f, "size"): Spec(SIZE, E_ACL) for f in ("mem_managed_advise", "mem_managed_get_attr",
                                               "mem_managed_get_attrs",
                                               "mem_managed_prefetch_async", "mem_p2p_map")},
    ("mem_managed_advise", "advise"): Spec(U32),
    **{(f, "location"): Spec(ANY) for f in ("mem_managed_advise", "mem_managed_prefetch_async")},
    ("mem_managed_get_attr", "attribute"): Spec(ENUM),
    ("mem_managed_get_attrs", "attributes"): Spec(SEQ),
    ("mem_managed_get_attrs", "num_attributes"): Spec(SIZE),
    ("mem_managed_prefetch_async", "flags"): Spec(U32, E_ACL),
    **{("mem_managed_prefetch_batch_async", n): Spec(SEQ)
       for n in ("ptrs", "sizes", "prefetch_locs", "prefetch_loc_idxs")},
    **{("mem_managed_prefetch_batch_async", n): Spec(SIZE, E_ACL)
       for n in ("count", "num_prefetch_locs")},
    ("mem_managed_prefetch_batch_async", "flags"): Spec(U64K, E_ACL),
    ("mem_p2p_map", "dev_ptr"): Spec(POINTER),
    ("mem_p2p_map", "dst_dev_id"): Spec(I32),
    ("mem_p2p_map", "flags"): Spec(U64K, E_ACL),
}


# Outputs before the code, where a function's return annotation does not say it (``-> int``:
# none; unannotated: one). -1: the C function returns the object itself (no code).
OUTPUTS = {"launch_kernel": 0, "launch_kernel_v2": 0, "launch_kernel_with_args_array": 0,
           "launch_kernel_with_config": 0, "launch_kernel_with_host_args": 0,
           "binary_get_dev_address": 2, "binary_get_global": 2, "function_get_param_info": 2,
           "get_args_from_exception_info": 2, "get_function_addr": 2, "get_function_size": 2,
           "ri_capture_get_info": 2, "create_binary": -1, "get_mem_info": 2,
           "device_get_stream_priority_range": 2,
           "memcpy_batch": 1, "memcpy_batch_async": 1,
           **{f"get_{x}_from_exception_info": -1
              for x in ("task_id", "stream_id", "thread_id", "device_id", "error_code")},
           "peek_at_last_error": -1, "get_last_error": -1,
           "launch_simt_kernel_with_host_args": 0, "launch_simt_kernel_with_args_array": 0,
           "data_type_size": -1, "float16_to_float": -1, "float_to_float16": -1,
           "get_device_capability": 1, "finalize_reference": 1}
OUTPUTS.update({"mem_get_access": 2, "mem_get_address_range": 2})
OUTPUTS.update({"allocator_create_desc": -1, "allocator_get_by_stream": 6})   # api_allocator   # chapter 11-04 (api_vmm)


def outputs_of(attr: str, fn) -> int:
    if attr in OUTPUTS:
        return OUTPUTS[attr]
    if hasattr(fn, "__outputs__"):        # a refusal (runtime/api_refused.py) says its shape
        return fn.__outputs__
    return 0 if inspect.signature(fn).return_annotation in (int, "int") else 1


def spec_of(fname: str, pname: str) -> Spec:
    s = OVERRIDES.get((fname, pname)) or PARAMS.get(pname)
    if s is None:
        UNDECLARED.append((fname, pname))
        return Spec(ANY)
    return s
