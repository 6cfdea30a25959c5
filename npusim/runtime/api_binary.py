"""Kernel binaries of ``acl.rt`` (spec/kernel.md §2–§4): load from a file or from memory
(``BinaryLoader``, ``binary_loader.cc``), unload, function lookup by name and by entry, device
address and globals of a binary, the exception-callback setter, the legacy descriptors
(``aclrtCreateBinary`` / ``aclrtBinaryLoad``) and CPU-function registration.

Check orders and argument forms: :mod:`.api_kernel`.
"""
from __future__ import annotations

import difflib

import json
import os

import numpy as np

from .. import errors as ERR
from ..kernel import loader as L
from ..kernel.cpu import JsonError, parse_cpu_json, so_name_from_data
from ..kernel.elf import ElfError, parse_elf, register_kernels
from ..kernel.program import (JSON_MAGICS, MAGICS, REG_CPU, REG_NON_CPU, ElfProgram,
                              PlainProgram, cpu_kernel, magic_attr_type)
from .api_device import profile
from .api_kernel import (ACL_RT_BINARY_LOAD_OPT_CPU_KERNEL_MODE, ACL_RT_BINARY_LOAD_OPT_LAZY_LOAD,
                         ACL_RT_BINARY_LOAD_OPT_MAGIC, E_ACL, E_CTX, E_PARAM, E_UNSUPPORTED, OK,
                         _bytes_of, _ctx, _features, _get, _items, _required)
from .runtime import RT


# ---- binary load
def _with_ext(path: str, ext: str) -> str:
    """GetFilePathByExtension: replace from the last '.' anywhere in the path."""
    i = path.rfind(".")
    return (path[:i] if i >= 0 else "") + ext


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
        RT.tls.explain(f"{'path' if json_path is not None else 'data'}: not a kernel ELF this "
                       f"chip loads: {e}")
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
        RT.tls.explain(f"path: expected a str or os.PathLike, got a {type(path).__name__}")
        return None, E_PARAM
    opts, code = _parse_load_options(options, from_file=True)
    if code:
        return None, code
    if opts.cpu_mode is not None:
        prog, code = _load_cpu_from_file(path, opts.cpu_mode)
    else:
        real, data = _read_file(path)
        if real is None or not data:
            RT.tls.explain(f"path: {path!r} " + ("is not a readable file" if real is None
                                                 else "is an empty file"))
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
        RT.tls.explain("data: not host data (bytes-like, a numpy array, or a host pointer "
                       "with length bytes of pinned or registered memory)")
        return None, E_PARAM
    if not raw:
        RT.tls.explain("length: 0 bytes of data")
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
        close = difflib.get_close_matches(str(kernel_name), list(prog.kernels), n=3)
        RT.tls.explain(f"kernel_name: {prog.describe()} has no kernel named {kernel_name!r}"
                       + (f"; did you mean {', '.join(map(repr, close))}?" if close else
                          f"; it has {', '.join(map(repr, list(prog.kernels)[:8]))}"
                          + (" ..." if len(prog.kernels) > 8 else "")))
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
        RT.tls.explain("binary is NULL" if not binary else "callback is NULL (None)")
        return E_ACL
    prog, code = _get("binary", binary)
    if code:
        return code
    prog.exception_callback, prog.exception_user_data = callback, user_data
    return OK


# ---- legacy binary descriptors (aclrtCreateBinary / aclrtBinaryLoad)
class _DevBinary:
    """rtDevBinary_t {magic 0, version 0, data, length}: only a descriptor. A live descriptor
    is a registry handle of kind ``binary_desc`` (counted by ``npusim.census()``; freed by
    aclrtDestroyBinary or a reset)."""
    __slots__ = ("data", "length", "handle")

    def __init__(self, data, length):
        self.data, self.length = data, length
        self.handle = 0


def create_binary(data, data_len=None):
    """aclrtCreateBinary: the descriptor handle, or None when data is NULL (no error code)."""
    if data is None or (isinstance(data, (int, np.integer)) and not data):
        return None
    if data_len is None:
        data_len = len(data) if hasattr(data, "__len__") else 0
    return RT.handles.add("binary_desc", _DevBinary(data, int(data_len)))


def destroy_binary(binary) -> int:
    """aclrtDestroyBinary: NULL -> 100000 (the acl layer's only check, kernel.cpp:61); the C
    function then deletes whatever the pointer points at, so a handle no descriptor has (never
    created, already destroyed, another kind's) is undefined behaviour there: npusim answers
    107017 like every other handle it does not know (docs/fidelity.md row 341)."""
    if not binary:
        RT.tls.explain("binary is NULL")
        return E_ACL
    desc, code = RT.handles.get("binary_desc", binary)
    if code:
        RT.tls.explain(f"binary: 0x{binary:x} is not a live aclrtCreateBinary descriptor "
                       f"(never created, or destroyed already)" if isinstance(binary, int)
                       else f"binary: {binary!r} is not a descriptor handle")
        return code
    RT.handles.remove(binary)
    return OK


def binary_load(binary):
    """aclrtBinaryLoad (rtBinaryLoadWithoutTilingKey): length 0 -> 107000; unsupported chip ->
    207000; needs a context (107002); name map only (no entry table); loaded on the current
    device at once; old flow (valid on every device, unloaded from the current one). A handle
    no descriptor has: 107000 (the runtime reads garbage data and length there)."""
    if not binary:
        RT.tls.explain("binary is NULL")
        return None, E_ACL
    desc, code = RT.handles.get("binary_desc", binary)
    if code:
        RT.tls.explain(f"binary: 0x{binary:x} is not a live aclrtCreateBinary descriptor"
                       if isinstance(binary, int) else
                       f"binary: {binary!r} is not a descriptor handle")
        return None, E_PARAM
    if desc.length == 0:
        RT.tls.explain("binary: the descriptor's length (aclrtCreateBinary dataLen) is 0")
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

