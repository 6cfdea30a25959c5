"""The facade's argument boundary: every ``acl.*`` argument is normalised by its parameter's
kind before the runtime sees it, so a hostile Python value becomes an ACL code, never an
exception and never half-done state.

Why here: the runtime functions (``runtime/api_*.py``) reproduce the C check orders for values a
C caller can pass — ints of the parameter's C type, NULL, pointers. Python callers can also pass
what C cannot: ``numpy.int32`` counts, ``None`` or NaN for a size, a float enum, a multi-element
array as a handle, a string with a NUL, ints outside the C type. One layer, generated once per
function from its signature and the kind table below, turns each such value into either the
canonical Python value the C API would see, or a refusal — before the function runs.

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

Refusals are checked here, before the function's own checks, so a call with two bad arguments
may name a later one; substitutions (handles, pointers, numBlocks) keep the function's order.

Reasons (``acl.get_recent_err_msg()``, the ``AclError`` message; docs/fidelity.md row 342): a
refusal names the parameter, the value and the rule ("size: expected an integer in
0..18446744073709551615 (size_t), got 1.5"); a substituted value is noted ("dst: expected a
pointer ..., got 'x': passed as NULL") before the runtime function's own reason if the call
fails; a 100000 / 107000 the runtime function did not explain gets the NULL or 0 argument by
name (``_null_or_zero``, through ``analysis.lint.ARG_REASONS``). All of it on the failure paths
only.

Last resort: an exception that still escapes a runtime function (or this module's own
normalisation) is caught here, recorded in :data:`ESCAPES` (function, arguments, exception) and
returned as ``ACL_ERROR_RT_INTERNAL_ERROR`` (507000) with ``None`` outputs. It is a bug:
``tests/acl/test_facade_fuzz.py`` fails on any escape not on its list of known runtime bugs.

Cost: the generated wrapper tests ``type(x) is int`` (and the range, one shift: ``_in_range``) of
every integer argument in one expression; only a value that fails it takes the general path.
"""
from __future__ import annotations

import collections
import inspect
import operator
import os
import types

import numpy as np

from .. import errors as _ERR
from ..analysis import lint as _lint
from ..faults import ARMED as _ARMED
from ..runtime.api_refused import c_name
from ..runtime.runtime import RT as _RT
from . import _hostptr as _util

_LINTED = frozenset(_lint.HINTS)      # codes the capture linter explains (acl/_hosttrace.py)

E_ACL = _ERR.ACL_ERROR_INVALID_PARAM              # 100000
E_PARAM = _ERR.ACL_ERROR_RT_PARAM_INVALID         # 107000
E_INTERNAL = _ERR.ACL_ERROR_RT_INTERNAL_ERROR     # 507000

# A handle no runtime object can have: odd, while every object handle is an aligned address.
NO_OBJECT = 0x7FFF_FFFF_FFFF_FFF1
U64 = 2 ** 64 - 1
BLOCKS_MAX = 0xFFFF          # numBlocks is stored as uint16_t (spec/kernel.md §5.1, §9.7)

# (function, arguments, exception) of the latest escapes; bounded, for long runs
ESCAPES: collections.deque[tuple[str, tuple, BaseException]] = collections.deque(maxlen=1000)
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
                                  "right_value")},
    # size_t
    **{n: Spec(SIZE) for n in ("dest_max", "count", "max_count", "size", "args_size",
                               "data_size", "user_args_size", "actual_args_size", "index",
                               "dpitch", "spitch", "width", "height", "mem_size", "n",
                               "num")},
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
                               "stm_attr_type", "block_type", "condition", "data_type")},
    # strings, buffers, structs
    "path": Spec(PATH), "config_path": Spec(PATH),
    **{n: Spec(NAME) for n in ("kernel_name", "func_name", "name", "reg_name",
                               "soc_version")},
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
    **{(f, "res_type"): Spec(ENUM) for f in ("set_device_res_limit", "get_device_res_limit")},
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
OUTPUTS.update({"mem_get_access": 2, "mem_get_address_range": 2})   # chapter 11-04 (api_vmm)


def outputs_of(attr: str, fn) -> int:
    if attr in OUTPUTS:
        return OUTPUTS[attr]
    if hasattr(fn, "__outputs__"):        # a refusal (runtime/api_refused.py) says its shape
        return fn.__outputs__
    return 0 if inspect.signature(fn).return_annotation in (int, "int") else 1


# ---- wrapper generation ----
def _fail(outputs: int, code: int):
    if outputs < 0:                      # a function whose C form returns the object itself
        return None
    return code if outputs == 0 else (None,) * outputs + (code,)


def _escaped(name: str, outputs: int, args: tuple, exc: BaseException):
    ESCAPES.append((name, args, exc))
    _RT.tls.explain(f"an exception escaped the simulator (a bug, please report it): "
                    f"{type(exc).__name__}: {exc}")
    _lint.failed(name, E_INTERNAL, args)
    return _fail(outputs, E_INTERNAL)


# (buffer parameter, size parameter): the size may not exceed the bytes given
_SIZED = (("data", "length"), ("data", "data_len"), ("param", "param_size"),
          ("data", "param_size"), ("host_args", "args_size"))


# copies and memsets: (size parameter, target pointer, source pointer or None), checked against
# the registered arrays pageable memory cannot hold faithfully (util.GUARDED)
_HOST_RANGES = {"memcpy": ("count", "dst", "src"), "memcpy_async": ("count", "dst", "src"),
                "memset": ("count", "ptr", None), "memset_async": ("count", "ptr", None)}


def _guard_refuses(attr: str, names: list, vals: list) -> str:
    """A copy into a read-only array, or past the bytes of an empty or read-only array: the
    reason, or "" when the copy fits."""
    size, dst, src = _HOST_RANGES[attr]
    n = vals[names.index(size)]
    if not n:
        return ""
    for p in (dst, src):
        if p is None:
            continue
        g = _util.guarded(vals[names.index(p)])
        if g is None:
            continue
        where = f"{p} 0x{vals[names.index(p)]:x} is in a host buffer of {g[1]} bytes registered " \
            "with acl.util: "
        if p == dst and not g[2]:
            return where + ("it is read-only (a read-only numpy array, or an empty or one-byte "
                            f"bytes object, which CPython shares); the {n}-byte write is refused")
        if vals[names.index(p)] + n > g[0] + g[1]:
            return where + f"{size}: {n} bytes from there reach past its end"
    return ""


def _substituted(kind: Kind, v) -> str:
    """What the boundary passes for a value of the wrong type that the function's own check
    refuses (a handle no object has, NULL, numBlocks 0): the note for a failure's reason, or
    "" for a value passed as it is."""
    if kind is HANDLE:
        if v is not None and _as_int(v) is None:
            return "expected a handle (int), got {}: passed as a handle no object has"
    elif kind is POINTER:
        i = _as_int(v)
        if v is not None and (i is None or not 0 <= i <= U64):
            return "expected a pointer (an int in 0..2**64-1), got {}: passed as NULL"
    elif kind is BLOCKS:
        i = _as_int(v)
        if i is None or not 0 <= i <= BLOCKS_MAX:
            return (f"expected numBlocks in 0..{BLOCKS_MAX} (the task's uint16_t field), got "
                    "{}: passed as 0")
    return ""


def _slow(name, outputs, names, specs, call, args):
    """Normalise every argument; the runtime's result, or the refusal. A refusal's reason names
    the parameter, the value and the rule (``RT.tls.explain``); a substituted value's note
    (``_substituted``) goes before the runtime's own reason if the call then fails."""
    notes = []
    try:
        vals = []
        for s, v, n in zip(specs, args, names):
            try:
                vals.append(s.kind.norm(v, s))
            except _Refused as r:
                r.explained = refusal(n, r, v)
                raise
            note = _substituted(s.kind, v)
            if note:
                notes.append(f"{n}: " + note.format(show(v)))
        attr = name.rsplit(".", 1)[-1]
        if attr in _HOST_RANGES and _util.GUARDED:
            why = _guard_refuses(attr, names, vals)
            if why:
                r = _Refused(E_PARAM)
                r.explained = why
                raise r
        for buf, size in _SIZED:
            if buf in names and size in names:
                b, n = vals[names.index(buf)], vals[names.index(size)]
                if n is not None and isinstance(b, (bytes, bytearray, memoryview, np.ndarray)):
                    have = b.nbytes if isinstance(b, (memoryview, np.ndarray)) else len(b)
                    if n > have:
                        r = _Refused(E_PARAM)
                        r.explained = (f"{size}: {n} is more than the {have} bytes {buf} "
                                       f"holds ({show(b)})")
                        raise r
    except _Refused as r:
        _RT.tls.explain(r.explained)
        _lint.failed(name, r.code, tuple(args))
        return _fail(outputs, r.code)
    except Exception as e:  # noqa: BLE001 -- a bug of this module: recorded like the runtime's
        return _escaped(f"{name} (argument boundary)", outputs, tuple(args), e)
    tls = _RT.tls
    tls.arg_note = "; ".join(notes)
    try:
        return call(*vals)
    except Exception as e:  # noqa: BLE001 -- the last resort: recorded, reported as 507000
        return _escaped(name, outputs, tuple(args), e)
    finally:
        tls.arg_note = ""


_SIGS: dict = {}
"""facade name -> (parameter names, specs) of every wrapped function, for :func:`_null_or_zero`."""
_NULL_OK = frozenset(("stream", "sh", "exec_stream", "h"))   # NULL: the default stream / context
_NULLABLE = (HANDLE, POINTER, BUFFER, PATH, NAME)
_COUNTS = (SIZE,)                 # size_t: sizes and counts (a uint32_t 0 is often valid)


def _is_null(v) -> bool:
    return v is None or (type(v) is int and v == 0)


def _null_or_zero(api: str, code: int, args: tuple) -> str:
    """A failure's reason when its runtime function gave none (``lint.ARG_REASONS``), from the
    arguments alone, in the order the checks run (NULLs first, in parameter order): the first
    required handle / pointer / buffer / string that is NULL (then a NULL stream), else a
    size, count, numBlocks, timeout or max_len that is 0, else an enum that is negative. "" when no argument is any of these."""
    sig = _SIGS.get(api)
    if sig is None:
        return ""
    names, specs = sig
    items = list(zip(names, specs, args))
    for n, s, v in items:
        if s.kind in _NULLABLE and not s.optional and n not in _NULL_OK and _is_null(v):
            return f"{n} is NULL ({show(v)}): a required argument"
    for n, s, v in items:
        if s.kind in _NULLABLE and not s.optional and _is_null(v):
            return f"{n} is NULL ({show(v)}): this function takes no default stream"
    for n, s, v in items:
        if type(v) is int and v == 0 and (s.kind in _COUNTS and n not in ("flag", "flags")
                                          or s.kind is BLOCKS or "timeout" in n
                                          or n == "max_len"):
            return f"{n} is 0: it must be at least 1"
    for n, s, v in items:
        if s.kind is ENUM and type(v) is int and v < 0:
            return f"{n} is {v}: not a value of its enum"
    return ""


_lint.ARG_REASONS[:] = [_null_or_zero]


def _doc(name: str, outputs: int, fn) -> str:
    """The facade function's docstring: its C name and result shape, then the runtime
    function's own text."""
    shape = {-1: "the object itself (the C function returns it), None on failure",
             0: "the error code (0: success)", 1: "(value, code)"}.get(
        outputs, f"({', '.join(['value'] * outputs)}, code)")
    head = (f"{c_name(name)} — returns {shape}; never raises. A failure's reason: "
            f"acl.get_recent_err_msg().")
    raw = inspect.unwrap(fn)
    own = inspect.getdoc(raw) or ""
    return head + ("\n\n" + own if own else "") + "\n\n" + _codes_line(raw)


def _codes_line(fn) -> str:
    """``Codes:`` the codes the runtime function names itself (its code object's ``ERR.*``
    attributes and ``E_*`` aliases: read without its source, so importing the facade stays
    cheap), then the ones every call may give."""
    codes = set()
    plain = isinstance(fn, types.FunctionType)
    glb = fn.__globals__ if plain else {}
    for n in (fn.__code__.co_names if plain else ()):
        c = _ERR.BY_NAME.get(n)
        if c is None and n.startswith("E_") and isinstance(glb.get(n), int):
            c = _ERR.BY_VALUE.get(glb[n])
        if c is not None and c.value:
            codes.add(c.value)
    named = ", ".join(f"{v} {_ERR.BY_VALUE[v].name}" for v in sorted(codes))
    return ("Codes: 0 success" + (f"; {named}" if named else "")
            + "; the shared checks' codes (argument kinds 100000 / 107000, handles 107017, "
              "context 107002, capture state, docs/eager_api_checks.md); 507000 if npusim "
              "itself fails (recorded).")


def spec_of(fname: str, pname: str) -> Spec:
    s = OVERRIDES.get((fname, pname)) or PARAMS.get(pname)
    if s is None:
        UNDECLARED.append((fname, pname))
        return Spec(ANY)
    return s


def _fail_check(outputs: int, tup: str) -> str:
    """The generated lines that tell the linter of a failed call (``r`` is the result): a
    code-only function's result is its code, so success costs one test; with outputs the code is
    the tuple's last item (a non-tuple result is taken as the code either way)."""
    if outputs < 0:                      # the object itself: no code
        return ""
    if outputs == 0:
        return (f"            if r:\n"
                f"                _on_fail(_name, r[-1] if r.__class__ is tuple else r, {tup})\n")
    return (f"            c = r[-1] if r.__class__ is tuple else r\n"
            f"            if c:\n"
            f"                _on_fail(_name, c, {tup})\n")


def wrap(name: str, attr: str, fn, outputs: int, raw=None, fast_failed=None):
    """A wrapper of ``fn`` (a facade function named ``name``) with ``fn``'s signature that
    normalises its arguments by kind: one generated ``def`` per function.

    With ``raw`` (the runtime function under ``fn``'s trace and injection wrappers) the common
    case — canonical arguments, tracing off, nothing injected into this function — is one
    frame: the runtime lock, ``raw``, the stall wake-up and the capture linter inline; anything
    else goes through ``fn``. ``fast_failed``: ``(linter call, snapshot box)`` of a function
    whose linter snapshot its own failing hooks take (``ri_capture_end``,
    ``acl/_hosttrace.py``): the one-frame path empties the box before ``raw`` and reports a
    failure through that call, which reads it."""
    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    names = [p.name for p in params]
    specs = [spec_of(attr, n) for n in names]
    specs = [Spec(s.kind, s.code, True) if p.default is None else s
             for s, p in zip(specs, params)]
    _SIGS[name] = (names, specs)
    ns = {"_fn": fn, "_slow": _slow, "_escaped": _escaped, "_names": names, "_specs": specs,
          "_name": name, "_outputs": outputs, "_guarded": _util.GUARDED, "_raw": raw,
          "_RT": _RT, "_acquire": _RT.lock.acquire, "_release": _RT.lock.release, "_ARMED": _ARMED, "_LINTED": _LINTED,
          "_on_fail": _lint.failed if fast_failed is None else fast_failed[0],
          "_box": fast_failed[1] if fast_failed is not None else None}
    head = []
    for i, p in enumerate(params):
        if p.default is inspect.Parameter.empty:
            head.append(p.name)
        else:
            ns[f"_d{i}"] = p.default
            head.append(f"{p.name}=_d{i}")
    arglist = ", ".join(names)
    terms, slow_only = [], False
    for s, n in zip(specs, names):
        if s.kind.fast is None:
            slow_only = True
        elif s.kind.fast != "True":
            t = s.kind.fast.format(p=n)
            terms.append(f"({n} is None or {t})" if s.optional and s.kind is not HANDLE else t)
    for buf, size in _SIZED:
        if buf in names and size in names and specs[names.index(buf)].kind is BUFFER:
            terms.append(f"({size} is None or {size} <= len({buf}))")
    if attr in _HOST_RANGES:
        terms.append("not _guarded")
    tup = f"({arglist},)" if names else "()"
    if slow_only:
        body = f"    return _slow(_name, _outputs, _names, _specs, _fn, {tup})\n"
    elif raw is not None:
        body = (f"    if {' and '.join(terms) or 'True'}:\n"
                f"        if not _RT.trace_on and _name not in _ARMED:\n"
                f"            _acquire()\n"
                f"            try:\n"
                + (f"                _box[0] = None\n" if fast_failed is not None else "") +
                f"                r = _raw({arglist})\n"
                f"                if _RT.stalled:\n"
                f"                    _RT.progress.notify_all()\n"
                f"            except Exception as e:\n"
                f"                return _escaped(_name, _outputs, {tup}, e)\n"
                f"            finally:\n"
                f"                _release()\n"
                + _fail_check(outputs, tup) +
                f"            return r\n"
                f"        try:\n"
                f"            return _fn({arglist})\n"
                f"        except Exception as e:\n"
                f"            return _escaped(_name, _outputs, {tup}, e)\n"
                f"    return _slow(_name, _outputs, _names, _specs, _fn, {tup})\n")
    else:
        body = (f"    if {' and '.join(terms) or 'True'}:\n"
                f"        try:\n"
                f"            return _fn({arglist})\n"
                f"        except Exception as e:\n"
                f"            return _escaped(_name, _outputs, {tup}, e)\n"
                f"    return _slow(_name, _outputs, _names, _specs, _fn, {tup})\n")
    src = f"def {attr}({', '.join(head)}):\n{body}"
    # compiled as this file's code: source sites (runtime/recording.py) skip npusim frames
    exec(compile(src, __file__, "exec"), ns)   # noqa: S102 -- generated once per function
    out = ns[attr]
    out.__doc__, out.__module__, out.__qualname__ = _doc(name, outputs, fn), fn.__module__, attr
    out.__wrapped__ = fn
    out.__boundary__ = tuple(zip(names, (s.kind.name for s in specs)))
    return out
