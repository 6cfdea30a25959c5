"""pyACL's own names for the facade, the functions of areas npusim does not simulate, and the
drop-in (``npusim.install_as_acl()``, ``npusim run``): an unmodified ``import acl`` program runs
on the simulator.

Three tables, each defined once here and rendered into ``docs/pyacl.md`` by :func:`table_markdown`
(``tests/acl/test_pyacl_table.py`` checks the page against it and walks every row against the
module):

* :data:`ALIASES` — where pyACL's documented spelling differs from the C-derived one
  (design.md §3.1): pyACL's name is bound to the *same* facade function (one implementation, one
  boundary wrapper, one injection point, named by its C function);
* :data:`PYACL_ONLY` — pyACL functions with no C-derived twin in ``npusim.acl`` (the acl-level
  queries, the callback / report-thread functions and ``acl.util``'s helpers);
* :data:`REFUSED` — pyACL functions of areas npusim does not simulate (offline-model inference
  from ``.om`` files, media / DVPP, profiling, dumps, single-operator execution, and the
  ``acl.rt`` functions outside what npusim models: peer access, hardware counters, task abort,
  virtual memory ...). Each exists,
  returns 207000 ``ACL_ERROR_RT_FEATURE_NOT_SUPPORT`` in its pyACL return shape (outputs ``None``,
  the code last; a function whose C form returns an object returns ``None``) and says once on
  stderr which area is not simulated. ``acl.media``, ``acl.prof`` and ``acl.op`` refuse every
  name, listed or not. Refused names are answered by the modules' ``__getattr__``
  (:func:`refused_getattr`), so they are not facade functions (no boundary wrapper, no
  injection point, not walked by the facade fuzz).

Sources of the spellings (per row in docs/pyacl.md): the pages of Huawei's pyACL reference
kept as data in :mod:`npusim.acl.pyacl_reference` (page id, edition, the page's Python form,
which the table shows for those rows), pyACL's own documentation source for functions without a
page found (file and commit), and, for the rest, pyACL's naming rule, which the facade follows
(C prefix -> module, CamelCase -> snake_case).
"""
from __future__ import annotations

import inspect
import sys
import types

from .. import errors as _ERR
from ..runtime.api_refused import BY_DESIGN, c_name
from ..runtime.runtime import set_recent_error
from . import _boundary
from .pyacl_reference import PAGES, SOURCE_REPO, SOURCES

E_NOT_SUPPORTED = _ERR.ACL_ERROR_RT_FEATURE_NOT_SUPPORT          # 207000

REF = "pyACL reference"          # the spelling is on a page of Huawei's pyACL reference
SRC = "pyACL doc source"         # ... in pyACL's own documentation source (SOURCES), no page found
RULE = "C-derived rule"          # pyACL's naming rule applied to the C name (design.md §3.1)

# pyACL name -> the facade name it is an alias of (module "rt" / "mdl")
ALIASES: dict[tuple[str, str], str] = {
    ("rt", "set_context"): "set_current_context",
    ("rt", "get_context"): "get_current_context",
    ("rt", "get_op_timeout_interval"): "get_op_time_out_interval",     # "Timeout", not "TimeOut"
    ("rt", "set_op_execute_timeout_v2"): "set_op_execute_time_out_v2",
}

# C names the naming rule cannot derive
C_NAMES = {("rt", "unsubscribe_report"): "aclrtUnSubscribeReport",
           ("rt", "get_context"): "aclrtGetCurrentContext",
           ("rt", "set_context"): "aclrtSetCurrentContext"}

# pyACL functions that are not a C-derived facade name: (module, name, C name); their forms
# are their reference pages' (PAGES)
PYACL_ONLY: list[tuple[str, str, str]] = [
    ("acl", "init", "aclInit"),
    ("acl", "finalize", "aclFinalize"),
    ("acl", "get_soc_name", "aclrtGetSocName"),
    ("acl", "get_version", "aclrtGetVersion"),
    ("acl", "get_recent_err_msg", "aclGetRecentErrMsg"),
    ("util", "ptr_to_numpy", "-"),
    ("util", "numpy_to_ptr", "-"),
    ("util", "numpy_contiguous_to_ptr", "-"),
    ("util", "bytes_to_ptr", "-"),
    ("util", "ptr_to_bytes", "-"),
    ("util", "start_thread", "-"),
    ("util", "stop_thread", "-"),
    ("media", "dvpp_malloc", "acldvppMalloc"),       # device memory; the rest of acl.media is
    ("media", "dvpp_free", "acldvppFree"),           # refused (runtime/api_dvpp.py)
]

# (module, pyACL name) -> (the documented Python form, the table's "spelling from" text):
# Huawei's pyACL reference pages, then pyACL's documentation source for the functions without a
# page found
PAGE_OF: dict[tuple[str, str], tuple[str, str]] = {
    **{(mod, name): (form, f"{SRC} `{path}` ({SOURCE_REPO}@{commit[:8]})")
       for mod, name, _, form, path, commit in SOURCES},
    **{(mod, name): (form, f"{REF} `{page}` ({edition})")
       for mod, name, _, form, page, edition in PAGES}}

# refused: (module, name, C name, outputs before the code (-1: returns an object), area)
_OM = "offline-model inference from .om files"
_DVPP = "media / DVPP"
_PROF = "profiling"
_DUMP = "dumps"
_OP = "single-operator execution"
_HW = "hardware attributes, topology, ids and counters of a real device"
_SAT = "floating-point saturation modes and overflow status"
_LIMIT = "runtime system parameters, resource limits and the primary context's state"
_ABORT = "aborting unfinished tasks (device task abort)"
_IPC = "inter-process memory sharing (IPC): npusim simulates one process"
_CMO = "cache maintenance of real hardware: simulated device memory is always coherent"
REFUSED: list[tuple[str, str, str, int, str]] = [
    ("acl", "create_data_buffer", "aclCreateDataBuffer", -1, _OM),
    ("acl", "destroy_data_buffer", "aclDestroyDataBuffer", 0, _OM),
    ("acl", "get_data_buffer_addr", "aclGetDataBufferAddr", -1, _OM),
    ("acl", "get_data_buffer_size_v2", "aclGetDataBufferSizeV2", -1, _OM),
    ("mdl", "load_from_file", "aclmdlLoadFromFile", 1, _OM),
    ("mdl", "load_from_mem", "aclmdlLoadFromMem", 1, _OM),
    ("mdl", "load_from_file_with_mem", "aclmdlLoadFromFileWithMem", 1, _OM),
    ("mdl", "load_from_mem_with_mem", "aclmdlLoadFromMemWithMem", 1, _OM),
    ("mdl", "query_size", "aclmdlQuerySize", 2, _OM),
    ("mdl", "unload", "aclmdlUnload", 0, _OM),
    ("mdl", "execute", "aclmdlExecute", 0, _OM),
    ("mdl", "execute_async", "aclmdlExecuteAsync", 0, _OM),
    ("mdl", "create_desc", "aclmdlCreateDesc", -1, _OM),
    ("mdl", "get_desc", "aclmdlGetDesc", 0, _OM),
    ("mdl", "destroy_desc", "aclmdlDestroyDesc", 0, _OM),
    ("mdl", "get_num_inputs", "aclmdlGetNumInputs", -1, _OM),
    ("mdl", "get_num_outputs", "aclmdlGetNumOutputs", -1, _OM),
    ("mdl", "get_input_size_by_index", "aclmdlGetInputSizeByIndex", -1, _OM),
    ("mdl", "get_output_size_by_index", "aclmdlGetOutputSizeByIndex", -1, _OM),
    ("mdl", "create_dataset", "aclmdlCreateDataset", -1, _OM),
    ("mdl", "add_dataset_buffer", "aclmdlAddDatasetBuffer", 1, _OM),
    ("mdl", "get_dataset_buffer", "aclmdlGetDatasetBuffer", -1, _OM),
    ("mdl", "get_dataset_num_buffers", "aclmdlGetDatasetNumBuffers", -1, _OM),
    ("mdl", "destroy_dataset", "aclmdlDestroyDataset", 0, _OM),
    ("mdl", "set_dynamic_batch_size", "aclmdlSetDynamicBatchSize", 0, _OM),
    ("mdl", "init_dump", "aclmdlInitDump", 0, _DUMP),
    ("mdl", "set_dump", "aclmdlSetDump", 0, _DUMP),
    ("mdl", "finalize_dump", "aclmdlFinalizeDump", 0, _DUMP),
    ("media", "dvpp_create_channel_desc", "acldvppCreateChannelDesc", -1, _DVPP),
    ("media", "dvpp_destroy_channel_desc", "acldvppDestroyChannelDesc", 0, _DVPP),
    ("media", "dvpp_create_channel", "acldvppCreateChannel", 0, _DVPP),
    ("media", "dvpp_destroy_channel", "acldvppDestroyChannel", 0, _DVPP),
    ("media", "dvpp_create_pic_desc", "acldvppCreatePicDesc", -1, _DVPP),
    ("media", "dvpp_destroy_pic_desc", "acldvppDestroyPicDesc", 0, _DVPP),
    ("media", "dvpp_vpc_resize_async", "acldvppVpcResizeAsync", 0, _DVPP),
    ("media", "dvpp_jpeg_decode_async", "acldvppJpegDecodeAsync", 0, _DVPP),
    ("media", "vdec_create_channel", "aclvdecCreateChannel", 0, _DVPP),
    ("media", "venc_create_channel", "aclvencCreateChannel", 0, _DVPP),
    ("prof", "init", "aclprofInit", 0, _PROF),
    ("prof", "finalize", "aclprofFinalize", 0, _PROF),
    ("prof", "create_config", "aclprofCreateConfig", -1, _PROF),
    ("prof", "destroy_config", "aclprofDestroyConfig", 0, _PROF),
    ("prof", "start", "aclprofStart", 0, _PROF),
    ("prof", "stop", "aclprofStop", 0, _PROF),
    ("op", "execute_v2", "aclopExecuteV2", 0, _OP),
    ("op", "compile", "aclopCompile", 0, _OP),
    ("op", "set_model_dir", "aclopSetModelDir", 0, _OP),
    # acl.rt functions of pyACL's runtime reference that npusim does not simulate (the names are
    # pyACL's index, hicann/runtime python/docs/zh/api_ref/runtime/README.md; the output counts
    # are the C functions' out-parameters, include/external/acl/acl_rt.h)
    ("rt", "get_devices_topo", "aclrtGetDevicesTopo", 1, _HW),
    ("rt", "device_get_uuid", "aclrtDeviceGetUuid", 1, _HW),
    ("rt", "device_get_bare_tgid", "aclrtDeviceGetBareTgid", 1, _HW),
    ("rt", "set_ts_device", "aclrtSetTsDevice", 0, _LIMIT),
    ("rt", "device_set_limit", "aclrtDeviceSetLimit", 0, _LIMIT),
    ("rt", "device_get_limit", "aclrtDeviceGetLimit", 1, _LIMIT),
    ("rt", "set_sys_param_opt", "aclrtSetSysParamOpt", 0, _LIMIT),
    ("rt", "get_sys_param_opt", "aclrtGetSysParamOpt", 1, _LIMIT),
    ("rt", "ctx_set_sys_param_opt", "aclrtCtxSetSysParamOpt", 0, _LIMIT),
    ("rt", "ctx_get_sys_param_opt", "aclrtCtxGetSysParamOpt", 1, _LIMIT),
    ("rt", "get_primary_ctx_state", "aclrtGetPrimaryCtxState", 2, _LIMIT),
    ("rt", "get_stream_res_limit", "aclrtGetStreamResLimit", 1, _LIMIT),
    ("rt", "set_stream_res_limit", "aclrtSetStreamResLimit", 0, _LIMIT),
    ("rt", "reset_stream_res_limit", "aclrtResetStreamResLimit", 0, _LIMIT),
    ("rt", "use_stream_res_in_current_thread", "aclrtUseStreamResInCurrentThread", 0, _LIMIT),
    ("rt", "unuse_stream_res_in_current_thread", "aclrtUnuseStreamResInCurrentThread", 0, _LIMIT),
    ("rt", "device_task_abort", "aclrtDeviceTaskAbort", 0, _ABORT),
    # chapter 11-04's sharing of physical memory between processes (the rest is simulated:
    # runtime/api_vmm.py)
    ("rt", "mem_export_to_shareable_handle", "aclrtMemExportToShareableHandle", 1, _IPC),
    ("rt", "mem_set_pid_to_shareable_handle", "aclrtMemSetPidToShareableHandle", 0, _IPC),
    ("rt", "mem_import_from_shareable_handle", "aclrtMemImportFromShareableHandle", 1, _IPC),
    ("rt", "mem_export_to_shareable_handle_v2", "aclrtMemExportToShareableHandleV2", 1, _IPC),
    ("rt", "mem_set_pid_to_shareable_handle_v2", "aclrtMemSetPidToShareableHandleV2", 0, _IPC),
    ("rt", "mem_import_from_shareable_handle_v2", "aclrtMemImportFromShareableHandleV2", 1,
     _IPC),
    ("rt", "ipc_mem_get_export_key", "aclrtIpcMemGetExportKey", 1, _IPC),
    ("rt", "ipc_mem_set_import_pid", "aclrtIpcMemSetImportPid", 0, _IPC),
    ("rt", "ipc_mem_import_by_key", "aclrtIpcMemImportByKey", 1, _IPC),
    ("rt", "ipc_mem_close", "aclrtIpcMemClose", 0, _IPC),
    ("rt", "cmo_async", "aclrtCmoAsync", 0, _CMO),
]
WHOLE_AREAS = {"media": _DVPP, "prof": _PROF, "op": _OP}   # modules that refuse any name

_SAID: set[str] = set()          # refusals already explained on stderr (once per function)


def refusal(full: str, outputs: int, area: str):
    """A pyACL function of an area npusim does not simulate: any arguments, never raises,
    returns 207000 in the function's return shape, and explains itself once on stderr (and every
    time in the recent error message, ``acl.get_recent_err_msg()``)."""
    text = (f"{full} returned {E_NOT_SUPPORTED} ACL_ERROR_RT_FEATURE_NOT_SUPPORT: not "
            f"simulated — {area}")

    def refused(*args, **kwargs):
        set_recent_error(text)
        if full not in _SAID:
            _SAID.add(full)
            print(f"npusim: {full} is not simulated ({area}); it returns {E_NOT_SUPPORTED} "
                  "ACL_ERROR_RT_FEATURE_NOT_SUPPORT", file=sys.stderr)
        if outputs < 0:
            return None
        return E_NOT_SUPPORTED if outputs == 0 else (None,) * outputs + (E_NOT_SUPPORTED,)
    refused.__name__ = refused.__qualname__ = full.rsplit(".", 1)[-1]
    refused.__doc__ = f"Not simulated ({area}): returns {E_NOT_SUPPORTED}."
    refused.__refused_area__ = area
    return refused


def refused_in(module: str) -> dict:
    """The refused functions of one module (``"acl"``, ``"mdl"``, ``"media"`` ...), by name."""
    prefix = "acl" if module == "acl" else f"acl.{module}"
    return {name: refusal(f"{prefix}.{name}", outputs, area)
            for mod, name, _, outputs, area in REFUSED if mod == module}


def refused_getattr(module: str):
    """The module ``__getattr__`` that answers the refused names of ``module`` (``"acl"``,
    ``"mdl"``, ``"media"`` ...): they are not in the module's namespace, so the facade's own
    functions stay exactly the boundary-wrapped ones; a wholly unsimulated area
    (:data:`WHOLE_AREAS`) refuses any name."""
    table = refused_in(module)
    area = WHOLE_AREAS.get(module)
    label = "acl" if module == "acl" else f"acl.{module}"

    def __getattr__(name: str):
        fn = table.get(name)
        if fn is None:
            if area is None or name.startswith("__"):
                raise AttributeError(f"module '{label}' has no attribute '{name}'")
            fn = table[name] = refusal(f"{label}.{name}", 0, area)
        return fn
    return __getattr__


# ---- the table of docs/pyacl.md ----
def _form(full: str, fn, outputs: int) -> str:
    """pyACL's form of a facade function, from its signature and output count."""
    params = ", ".join(p for p in inspect.signature(fn).parameters)
    outs = "obj = " if outputs < 0 else "ret = " if outputs == 0 else \
        ("out, " if outputs == 1 else "".join(f"out{i + 1}, " for i in range(outputs))) + "ret = "
    return f"{outs}{full}({params})"


def _source(page: str) -> str:
    return page or RULE


def _defined(acl, mod: str, name: str) -> bool:
    """Whether the facade itself defines ``name`` (a refused name a facade function shadows is
    simulated: the module's ``__getattr__`` is never asked for it)."""
    module = acl if mod == "acl" else vars(acl)[mod]
    return isinstance(vars(module).get(name), types.FunctionType)


def rows(acl) -> list[tuple[str, str, str, str, str, str]]:
    """(pyACL name, C name, status, pyACL form, note, spelling source) for every row: the
    facade's functions under pyACL's names, pyACL's own functions, then the refused ones."""
    out = []
    alias_of = {(m, v): n for (m, n), v in ALIASES.items()}
    refused = {(m, n) for m, n, _, _, _ in REFUSED if not _defined(acl, m, n)}
    for short in ("rt", "mdl"):
        module = vars(acl)[short]
        for attr, fn in sorted(vars(module).items()):
            if attr.startswith("_") or not isinstance(fn, types.FunctionType) or \
                    (short, attr) in ALIASES or (short, attr) in refused:
                continue
            name = alias_of.get((short, attr), attr)
            full = f"acl.{short}.{name}"
            c = C_NAMES.get((short, name)) or c_name(f"acl.{short}.{attr}")
            form, page = PAGE_OF.get((short, name)) or \
                (_form(full, fn, _boundary.outputs_of(attr, inspect.unwrap(fn))), "")
            note = f"alias: `acl.{short}.{attr}` (the same function)" if name != attr else ""
            by_design = BY_DESIGN.get(c_name(f"acl.{short}.{attr}"))
            if by_design:                 # present, but refused by design (runtime/api_refused)
                out.append((full, c, f"refused: {E_NOT_SUPPORTED}", page and form,
                            f"not simulated: {by_design[1]}", _source(page)))
                continue
            out.append((full, c, "simulated", form, note, _source(page)))
    for mod, name, c in PYACL_ONLY:
        full = f"acl.{name}" if mod == "acl" else f"acl.{mod}.{name}"
        form, page = PAGE_OF[(mod, name)]
        out.append((full, c, "simulated", form, "", _source(page)))
    for mod, name, c, outputs, area in REFUSED:
        if (mod, name) not in refused:
            continue
        full = f"acl.{name}" if mod == "acl" else f"acl.{mod}.{name}"
        form, page = PAGE_OF.get((mod, name), ("", ""))
        out.append((full, c, f"refused: {E_NOT_SUPPORTED}", form, f"not simulated: {area}",
                    _source(page)))
    return sorted(out, key=lambda r: (r[2] != "simulated", r[0]))


def table_markdown(acl) -> str:
    """The table of docs/pyacl.md and its counts line."""
    rs = rows(acl)
    sim = sum(r[2] == "simulated" for r in rs)
    lines = ["| pyACL name | C name | status | pyACL form | note | spelling from |",
             "|---|---|---|---|---|---|"]
    lines += [f"| `{a}` | `{c}` | {st} | {'`' + f + '`' if f else ''} | {n} | {src} |"
              for a, c, st, f, n, src in rs]
    paged = [r for r in rs if r[5].startswith(REF)]
    psim = sum(r[2] == "simulated" for r in paged)
    sourced = [r for r in rs if r[5].startswith(SRC)]
    ssim = sum(r[2] == "simulated" for r in sourced)
    lines += ["", f"Counts: {len(rs)} pyACL functions: {sim} simulated, {len(rs) - sim} "
              f"refused with {E_NOT_SUPPORTED}; {len(paged)} of them ({psim} simulated, "
              f"{len(paged) - psim} refused) checked against a page of the pyACL reference and "
              f"{len(sourced)} ({ssim} simulated, {len(sourced) - ssim} refused) against pyACL's "
              "documentation source, the others named by the C-derived rule; "
              f"{len(ALIASES)} of the simulated ones are "
              "pyACL spellings of a C-derived facade name (both names work)."]
    return "\n".join(lines) + "\n"


# ---- the drop-in ----
SUBMODULES = ("rt", "mdl", "util", "media", "prof", "op", "tdt", "dump", "log", "sys", "platform")
_SAVED: dict[str, types.ModuleType | None] = {}


def install_as_acl(force: bool = False):
    """Make ``import acl`` (and ``acl.rt``, ``acl.mdl``, ``acl.util``, ``acl.media``,
    ``acl.prof``, ``acl.op``) resolve to npusim's facade in this process, e.g. in a notebook or
    a test session; returns the facade. A real ``acl`` already imported is left alone —
    ``RuntimeError`` — unless ``force=True``; :func:`uninstall_as_acl` puts back what was
    there."""
    facade = sys.modules[__package__]   # npusim.acl, which imports this module
    current = sys.modules.get("acl")
    if current is facade:
        return facade
    if current is not None and not force:
        raise RuntimeError("a module named 'acl' is already imported (a real pyACL?); "
                           "npusim.install_as_acl(force=True) replaces it")
    for name in ("acl", *(f"acl.{s}" for s in SUBMODULES)):
        _SAVED.setdefault(name, sys.modules.get(name))
    sys.modules["acl"] = facade
    for s in SUBMODULES:
        sys.modules[f"acl.{s}"] = vars(facade)[s]
    return facade


def uninstall_as_acl() -> None:
    """Undo :func:`install_as_acl`: ``acl`` is again whatever it was before (or nothing)."""
    for name, old in list(_SAVED.items()):
        if old is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = old
    _SAVED.clear()
