"""The generator of the libascendcl-compatible C library (issue 39; docs/cabi.md).

What it does, in order:

1. reads the C prototypes from headers (``cdecl.parse``: ``cc -E`` + pycparser) — npusim's own
   declarations in ``npusim/cabi/include`` or a user's CANN headers (``headers=``);
2. matches every ``acl*`` function the facade has (``api_refused.facade_name``) to its facade
   function (:func:`plan`): C inputs to the facade's parameters in order, the C output pointers
   (non-const pointers to integers, floats or handles the facade has no parameter for) to the
   facade's tuple outputs; functions whose shapes differ in ways the generic rule cannot map have
   a hand-written marshaller (:mod:`npusim.cabi.special`) or are left out (:data:`Plan.skipped`,
   with the reason);
3. generates one C wrapper per function — the header's own prototype, so the compiler checks
   every exported signature against the declaration (the headers are ``#include``d) — that
   passes integers (pointers and handles as ``uintptr_t``, integers as ``int64_t`` /
   ``uint64_t``, floats as ``double``) to ONE ``extern "Python"`` function, which calls the facade
   function Python callers use and stashes the outputs in a small ``int64_t`` array on the C
   wrapper's stack (with a bit mask of those it set); the wrapper writes them through the
   caller's pointers. A NULL output pointer is refused by the wrapper before the crossing
   (100000, the acl layer's ``ACL_REQUIRES_NOT_NULL``; docs/fidelity.md row 441);
4. compiles it with cffi's embedding mode into ``libascendcl.so``: the first call starts the
   interpreter (``Py_SetPythonHome`` to the build's base prefix; ``sys.path`` the build's), calls
   ``hostmem.use_real_memory()`` and imports the facade (:data:`INIT`).

:func:`install` writes the CANN-shaped tree around it (``lib64``, ``include``, ``bin/setenv.bash``,
``set_env.sh``, stub libraries, the Ascend C CMake stand-in).
"""
from __future__ import annotations

import inspect
import json
import os
import pathlib
import shutil
import sys
import sysconfig
import tempfile

from . import cdecl

HERE = pathlib.Path(__file__).resolve().parent
INCLUDE = HERE / "include"            # npusim's own declarations (helper chdr's)
ROOT = HERE.parents[1]                # the npusim source root (on the embedded sys.path)
MODULE = "_npusim_cabi"               # the cffi module name inside the library

OUT_SLOTS = 16                        # outputs + the mask, per C thread (cabi_out_)
E_INTERNAL = 507000                   # ACL_ERROR_RT_INTERNAL_ERROR: the interpreter did not start
E_ACL = 100000                        # ACL_ERROR_INVALID_PARAM (a NULL output pointer)


def snake(name: str) -> str:
    import re
    s = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    return re.sub(r"(?<=[A-Z])(?=[A-Z][a-z])", "_", s).lower()


def header_list(include_dir: pathlib.Path) -> list[str]:
    """The ``acl/*.h`` headers to read: ``acl.h`` first (it includes the core ones), then the
    others present (allocator, prof, tdt ...), error-code headers through them."""
    names = sorted(p.name for p in (include_dir / "acl").glob("*.h"))
    first = ["acl.h"] if "acl.h" in names else []
    return [f"acl/{n}" for n in first + [n for n in names if n != "acl.h"]]


# ---- matching C declarations to facade functions ----
class Export:
    """One exported function: the C declaration, the facade function's dotted name, how each C
    parameter crosses (``ins``: (C name, CType, facade kind name); ``outs``: (C name, CType)),
    and ``mode``: "generic", "refused" (any arguments; the refusal's code / NULL) or "special"
    (a hand-written marshaller in :mod:`special`)."""
    __slots__ = ("func", "facade", "fn", "mode", "ins", "outs", "ret_outputs")

    def __init__(self, func, facade, fn, mode, ins=(), outs=(), ret_outputs=0):
        self.func, self.facade, self.fn, self.mode = func, facade, fn, mode
        self.ins, self.outs, self.ret_outputs = list(ins), list(outs), ret_outputs


class Plan:
    """The exports and the functions left out (name -> reason)."""
    __slots__ = ("exports", "skipped")

    def __init__(self):
        self.exports: list[Export] = []
        self.skipped: dict[str, str] = {}

    def skip(self, f, fname, fn, why: str) -> None:
        """A function whose shape the generic rule cannot map: exported all the same (a program
        calling it still links), answering 207000 with the reason as the recent error."""
        self.skipped[f.name] = why
        self.exports.append(Export(f, fname, fn, "unmapped"))


def resolve(facade: str):
    """The facade callable of a dotted ``acl....`` name, or None."""
    import npusim
    obj = npusim
    try:
        for part in facade.split("."):
            obj = getattr(obj, part)
    except AttributeError:
        return None
    return obj if callable(obj) else None


def _is_output(t: cdecl.CType) -> bool:
    return (t.kind == "ptr" and not t.const and not t.char and t.to is not None
            and t.to.kind in ("int", "float", "ptr", "fn"))


# facade functions returning more outputs than _params.outputs_of says (unannotated)
MORE_OUTPUTS = {"aclrtGetVersion": 3}

_INT_KINDS = ("u32", "u64", "size", "i32", "enum", "blocks")
_PTR_KINDS = ("pointer", "handle", "nullable", "any", "buffer", "seq", "path", "name", "attrs",
              "struct", "placeholders")


def plan(funcs: dict[str, cdecl.CFunc]) -> Plan:
    from ..acl import _params
    from ..runtime.api_refused import facade_name
    from . import special

    out = Plan()
    for name in sorted(funcs):
        f = funcs[name]
        if not name.startswith("acl"):
            continue
        try:
            fname = facade_name(name)
        except ValueError:
            continue
        fn = resolve(fname)
        if fn is None:
            continue
        if any(n == "..." for n, _ in f.params):
            out.skip(f, fname, fn, "variadic")
            continue
        if any(t.kind == "struct" for _, t in f.params) or f.ret.kind == "struct":
            if name not in special.HANDLERS:
                out.skip(f, fname, fn, "a struct passed by value")
                continue
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            out.skip(f, fname, fn, "no signature")
            continue
        params = [p for p in sig.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if any(p.kind == p.VAR_POSITIONAL for p in sig.parameters.values()):
            out.exports.append(Export(f, fname, fn, "refused"))
            continue
        if name in special.HANDLERS:
            out.exports.append(Export(f, fname, fn, "special"))
            continue
        attr = fname.rsplit(".", 1)[-1]
        n_out = MORE_OUTPUTS.get(name, _params.outputs_of(attr, fn))
        pnames = {p.name for p in params}
        outs = [(n, t) for n, t in f.params if _is_output(t) and snake(n) not in pnames]
        ins = [(n, t) for n, t in f.params if (n, t) not in outs]
        if not outs and f.ret.kind != "void" and not f.ret.text.startswith("aclError"):
            n_out = -1             # the C function returns the value itself (a string, an id)
        why = None
        if n_out < 0:
            if outs:
                why = "returns its object and has output pointers"
            elif f.ret.kind not in ("int", "ptr", "float"):
                why = "returns an object of a type the wrapper cannot return"
        elif len(outs) != n_out:
            why = f"{len(outs)} C output pointers, the facade returns {n_out} outputs"
        if why is None and len(ins) > len(params):
            why = f"{len(ins)} C inputs, the facade takes {len(params)}"
        if why is None and len(ins) < len([p for p in params if p.default is p.empty]):
            why = f"{len(ins)} C inputs, the facade requires more"
        kinds = []
        if why is None:
            for (cn, t), p in zip(ins, params):
                k = _params.spec_of(attr, p.name).kind.name
                if t.kind in ("int",) and k not in _INT_KINDS + ("any", "handle", "pointer"):
                    why = f"{cn}: a C integer for a facade {k}"
                elif t.kind == "float" and k != "any":
                    why = f"{cn}: a C float for a facade {k}"
                elif t.kind == "fn" and k not in ("nullable", "any"):
                    why = f"{cn}: a C callback for a facade {k}"
                elif t.kind == "ptr" and k not in _PTR_KINDS:
                    why = f"{cn}: a C pointer for a facade {k}" + (
                        " (an in/out pointer)" if _is_output(t) and k in _INT_KINDS else "")
                elif k in ("seq", "struct", "placeholders", "inout") or \
                        k == "any" and t.kind == "ptr" and cn not in special.ANY_AS_INT:
                    why = f"{cn}: a {k} parameter (C array or struct)"
                kinds.append(k)
                if why:
                    break
        if why is None:
            for _, t in outs:
                if t.to.kind == "ptr" and t.to.char:
                    why = "a string output"
        if why is not None:
            out.skip(f, fname, fn, why)
            continue
        out.exports.append(Export(f, fname, fn, "generic",
                                  [(cn, t, k) for (cn, t), k in zip(ins, kinds)], outs,
                                  n_out))
    return out


# ---- C source ----
def c_arg(name: str, t: cdecl.CType) -> tuple[str, str]:
    """(the extern's parameter type, the C expression passed) of one C input."""
    if t.kind == "int":
        return ("int64_t", f"(int64_t){name}") if t.signed else \
            ("uint64_t", f"(uint64_t){name}")
    if t.kind == "float":
        return "double", f"(double){name}"
    return "uintptr_t", f"(uintptr_t){name}"


def c_ret(t: cdecl.CType) -> str:
    if t.kind == "int":
        return "int64_t" if t.signed else "uint64_t"
    if t.kind == "float":
        return "double"
    if t.kind == "void":
        return "int"
    return "uintptr_t"


def _wrapper_c(e: Export, idx: int) -> tuple[str, str]:
    """(the cdef line of the extern, the C wrapper) of a generic or refused export."""
    f = e.func
    params = ", ".join(cdecl.param_text(f)) or "void"
    head = f.decl.split("(", 1)[0]          # return type and name as declared
    ext = f"cabi_py_{f.name}"
    if e.mode in ("refused", "unmapped"):
        body = f"    int64_t r_ = cabi_py_{e.mode}_({idx});\n"
        body += f"    if (__builtin_expect(!cabi_ready_, 0)) r_ = {E_INTERNAL};\n"
        if f.ret.kind == "void":
            body += "    (void)r_;\n"
        elif f.ret.kind == "ptr":
            body += f"    (void)r_; return NULL;\n"
        elif f.ret.kind == "int" and f.ret.text.startswith("aclError"):
            body += "    return (aclError)r_;\n"
        else:
            body += f"    (void)r_; return ({f.ret.text.strip()})0;\n"
        return "", f"{head}({params})\n{{\n{body}}}\n"
    args, exprs = [], []
    for cn, t, k in e.ins:
        a, x = c_arg(cn, t)
        args.append(a)
        exprs.append(x)
    lines = []
    n = len(e.outs)
    if n:
        for i, (cn, t) in enumerate(e.outs):
            lines.append(f"    if ({cn} == NULL) return ({f.ret.text})cabi_py_null_({idx}, {i});")
        lines.append("    int64_t *o_ = cabi_out_;")
        lines.append(f"    o_[{n}] = 0;")
    rt = c_ret(f.ret)
    call = f"{ext}({', '.join(exprs)})"
    if f.ret.kind == "void":
        lines.append(f"    {call};")
    else:
        lines.append(f"    {rt} r_ = {call};")
        if f.ret.text.startswith("aclError"):
            lines.append("    if (__builtin_expect(!cabi_ready_, 0)) "
                         f"return (aclError){E_INTERNAL};")
    for i, (cn, t) in enumerate(e.outs):
        if t.to.kind == "float":
            val = f"((double *)o_)[{i}]"
        elif t.to.kind in ("ptr", "fn"):
            val = f"(uintptr_t)o_[{i}]"
        else:
            val = f"o_[{i}]"
        lines.append(f"    if (o_[{n}] & {1 << i}) *{cn} = (__typeof__(*{cn})){val};")
    if f.ret.kind == "ptr":
        lines.append("    return (void *)r_;" if "const" not in f.ret.text else
                     f"    return ({f.ret.text.strip()})(uintptr_t)r_;")
    elif f.ret.kind != "void":
        lines.append(f"    return ({f.ret.text.strip()})r_;")
    cdef = f'extern "Python" {rt} {ext}({", ".join(args) or "void"});'
    return cdef, f"{head}({params})\n{{\n" + "\n".join(lines) + "\n}\n"


# ---- Python side (the extern "Python" functions, defined when the library starts) ----
def _wrapper_py(e: Export, idx: int) -> str:
    """The Python source of one generic export's extern."""
    f = e.func
    a = [f"a{i}" for i in range(len(e.ins))]
    conv = []
    for i, (cn, t, k) in enumerate(e.ins):
        if k in ("path", "name"):
            conv.append(f"    a{i} = STR(a{i})")
        elif k == "buffer":
            size = _size_param(e, i)
            conv.append(f"    a{i} = BYTES(a{i}, {size})" if size else f"    a{i} = a{i} or None")
        elif t.kind == "fn":
            kinds = tuple("f" if x.kind == "float" else "i" if x.kind == "int" else "p"
                          for x in t.args)
            conv.append(f"    a{i} = CALLBACK({t.cffi()!r}, {kinds!r}, a{i})")
        elif k == "attrs":
            lst = "options" if "BinaryLoadOptions" in t.text else \
                "malloc" if "MallocConfig" in t.text else "launch"
            conv.append(f"    a{i} = ATTRS(a{i}, {lst!r})")
        elif k == "nullable":
            conv.append(f"    a{i} = OBJ(a{i})")
    call = f"F{idx}({', '.join(a[:len(e.ins)])})"
    if not conv and not e.outs and e.ret_outputs == 0:
        # nothing to convert: the facade function itself is the extern (one frame fewer)
        return f"ffi.def_extern(name='cabi_py_{f.name}', onerror=ONERROR)(F{idx})\n"
    body = [f"@ffi.def_extern(name='cabi_py_{f.name}', onerror=ONERROR)",
            f"def _x{idx}({', '.join(a)}):", *conv]
    if e.ret_outputs < 0:
        body[0] = body[0].replace("ONERROR", "ONERROR_ZERO")
        if f.ret.kind == "ptr" and f.ret.char:
            body.append(f"    return CSTR({call})")
        elif f.ret.kind == "ptr":
            body.append(f"    return PTR({call})")
        else:
            body.append(f"    r = {call}")
            body.append("    return 0 if r is None else r")
        return "\n".join(body) + "\n"
    if not e.outs:
        body.append(f"    return {call}")
        return "\n".join(body) + "\n"
    n = len(e.outs)
    body.append(f"    r = {call}")
    body.append("    try:\n        o = TL.q\n    except AttributeError:\n        o = OUTBUF()")
    body.append("    m = 0")
    for i, (cn, t) in enumerate(e.outs):
        v = f"r[{i}]"
        if t.to.kind == "float":
            body.append(f"    if {v} is not None: TL.d[{i}] = {v}; m |= {1 << i}")
        elif t.to.kind == "int" and t.to.signed or t.to.kind == "int" and t.to.base in (
                "uint8_t", "uint16_t", "uint32_t"):
            body.append(f"    v = {v}")
            body.append(f"    if v is not None: o[{i}] = v; m |= {1 << i}")
        else:                                  # 64-bit unsigned / pointers: wrap to int64
            body.append(f"    v = {v}")
            body.append(f"    if v is not None: o[{i}] = v if v < {1 << 63} else v - {1 << 64}; "
                        f"m |= {1 << i}")
    body.append(f"    o[{n}] = m")
    body.append("    return r[-1]")
    return "\n".join(body) + "\n"


def _size_param(e: Export, i: int) -> str | None:
    """The extern argument holding the byte count of buffer input ``i``: the next size_t."""
    for j in range(i + 1, len(e.ins)):
        cn, t, k = e.ins[j]
        if t.kind == "int" and k in ("size", "u32", "u64"):
            return f"a{j}"
    return None


PY_PRELUDE = r'''
import sys, threading
from _npusim_cabi import ffi, lib
for _p in reversed(PATHS):
    if _p not in sys.path:
        sys.path.insert(0, _p)
from npusim.runtime import hostmem as _hostmem
_hostmem.use_real_memory()
import npusim
from npusim.cabi import runtime_side as RS
from npusim.runtime.runtime import set_recent_error as _set_recent_error
CAST = ffi.cast
P64 = ffi.typeof("int64_t *")
PD = ffi.typeof("double *")
STR = RS.c_string
BYTES = RS.c_bytes
OBJ = RS.obj_of
PTR = RS.ptr_of
CSTR = RS.keep_string
I64 = RS.i64
CALLBACK = RS.callback
ATTRS = RS.attrs
PROP = RS.prop
ACCESS = RS.access
WRITE_HANDLES = RS.write_handles
WRITE_STRING = RS.write_string
PAIRS = RS.pairs
U64S = RS.u64s
BATCH_ATTRS = RS.batch_attrs
TASK_PARAMS = RS.task_params
TASK_PARAMS_OUT = RS.task_params_out
ARRAY_OUT = RS.array_out
ATTR_WIDTH = RS.attr_width
ATTR_WORD = RS.attr_word
ONERROR = RS.onerror
ONERROR_ZERO = RS.onerror_zero
RS.FFI = ffi
TL = threading.local()


def OUTBUF():
    """This C thread's output array (``cabi_out_``, thread-local in C) as int64 / double views."""
    raw = ffi.buffer(ffi.cast("char *", lib.cabi_out_buffer()), 8 * CABI_OUT_SLOTS)
    TL.q = memoryview(raw).cast("q")
    TL.d = memoryview(raw).cast("d")
    return TL.q


@ffi.def_extern(name="cabi_py_refused_", onerror=ONERROR)
def _refused(i):
    r = REFUSED[i]()
    if r is None:
        return 0
    return r if type(r) is int else r[-1]


@ffi.def_extern(name="cabi_py_unmapped_", onerror=ONERROR)
def _unmapped(i):
    name, why = UNMAPPED[i]
    _set_recent_error(f"{name} returned 207000 ACL_ERROR_RT_FEATURE_NOT_SUPPORT: not available "
                      f"through npusim's C library yet ({why}); the Python facade has it")
    return 207000


@ffi.def_extern(name="cabi_py_null_", onerror=ONERROR)
def _null(i, j):
    name, param = NULLS[i][j]
    _set_recent_error(f"{name} returned 100000 ACL_ERROR_INVALID_PARAM: {param} is NULL "
                      "(an output pointer must not be NULL)")
    return 100000
'''


def generate(plan_: Plan, include_names: list[str], paths: list[str]) -> tuple[str, str, str]:
    """(cdef, C source, Python init code) of the library."""
    from . import special
    cdefs = ["uintptr_t cabi_out_buffer(void);", "void cabi_mark_ready(void);",
             'extern "Python" int64_t cabi_py_refused_(int);',
             'extern "Python" int64_t cabi_py_null_(int, int);',
             'extern "Python" int64_t cabi_py_unmapped_(int);']
    head = ["#include <stdint.h>", "#include <stddef.h>", "#include <string.h>",
            *[f'#include "{h}"' for h in include_names],
            "static int64_t cabi_py_refused_(int);",
            "static int64_t cabi_py_null_(int, int);",
            "static int64_t cabi_py_unmapped_(int);",
            f"static thread_local int64_t cabi_out_[{OUT_SLOTS}];",
            "static uintptr_t cabi_out_buffer(void) { return (uintptr_t)cabi_out_; }",
            "/* set by the init code's last line: a call that started the interpreter and found",
            "   it failed (cffi then returns 0 from every extern) answers 507000, not success */",
            "static volatile int cabi_ready_ = 0;",
            "static void cabi_mark_ready(void) { cabi_ready_ = 1; }"]
    csrc: list[str] = []
    py = [f"PATHS = {paths!r}", f"CABI_OUT_SLOTS = {OUT_SLOTS}", PY_PRELUDE, "F = {}",
          "REFUSED = {}", "UNMAPPED = {}", "NULLS = {}",
          "import npusim.cabi.build as _B"]
    for idx, e in enumerate(plan_.exports):
        py.append(f"F{idx} = _B.resolve({e.facade!r})")
        if e.mode == "unmapped":
            py.append(f"UNMAPPED[{idx}] = ({e.func.name!r}, {plan_.skipped[e.func.name]!r})")
            _, c = _wrapper_c(e, idx)
            csrc.append(c)
            continue
        if e.mode == "refused":
            py.append(f"REFUSED[{idx}] = F{idx}")
            _, c = _wrapper_c(e, idx)
            csrc.append(c)
            continue
        if e.mode == "special":
            cd, c, p = special.HANDLERS[e.func.name](e, idx)
            cdefs.extend(cd)
            csrc.append(c)
            py.append(p)
            continue
        cd, c = _wrapper_c(e, idx)
        cdefs.append(cd)
        csrc.append(c)
        if e.outs:
            py.append(f"NULLS[{idx}] = {[(e.func.name, n) for n, _ in e.outs]!r}")
        py.append(_wrapper_py(e, idx))
    # the externs are static functions of cffi's generated code (after this source): declare
    # them first. C linkage for every definition: one whose types differ from the header's
    # declaration is then a "conflicting declaration of C function" error, not a C++ overload
    head += ["static " + cd.replace('extern "Python" ', "") for cd in cdefs[5:] if cd]
    csrc = head + ['extern "C" {', *csrc, special.C_SUPPORT, "}"]
    return "\n".join(cdefs), "\n".join(csrc), "\n".join(py)


PREAMBLE = r"""
#include <Python.h>
#include <wchar.h>
/* C linkage for the library's own entry point (cffi defines it further down) */
extern "C" int npusim_cabi_started(void);
static void cabi_set_home(void) __attribute__((constructor));
static void cabi_set_home(void)
{
    /* the interpreter the library was built with, as its program name: Python's start-up then
       finds its prefix from there exactly as that interpreter does (a venv's pyvenv.cfg: the
       venv's site-packages, the base installation's standard library, and not the base's own
       site-packages, whose cffi backend may differ), unless the user sets PYTHONHOME */
    static wchar_t prog[4096];
    if (getenv("PYTHONHOME") != NULL || getenv("NPUSIM_CABI_NO_HOME") != NULL)
        return;
    if (mbstowcs(prog, CABI_PYTHON, 4095) == (size_t)-1)
        return;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    Py_SetProgramName(prog);
#pragma GCC diagnostic pop
}
"""


def check_tools() -> None:
    """Raise RuntimeError naming the fix when cffi or a C compiler is missing."""
    try:
        import cffi  # noqa: F401
    except ImportError:
        raise RuntimeError("cffi is not installed: pip install 'npusim[cabi]' (or pip install "
                           "cffi)") from None
    if not (shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")):
        raise RuntimeError("no C compiler found: install gcc (e.g. apt-get install gcc) or "
                           "set CC to one")


def build_library(out_dir: os.PathLike, headers: os.PathLike | None = None,
                  verbose: bool = False) -> pathlib.Path:
    """Generate and compile ``libascendcl.so`` into ``out_dir``; returns its path."""
    check_tools()
    import cffi
    include = pathlib.Path(headers) if headers else INCLUDE
    if not (include / "acl" / "acl.h").exists():
        raise RuntimeError(f"no acl/acl.h under {include}")
    names = header_list(include)
    funcs, _ = cdecl.parse(include, names)
    p = plan(funcs)
    paths = sitepaths()
    cdef, csrc, pysrc = generate(p, names, paths)
    ffi = cffi.FFI()
    ffi.embedding_api("int npusim_cabi_started(void);")
    ffi.cdef(cdef)
    ffi.embedding_init_code(pysrc + "\n\n@ffi.def_extern()\ndef npusim_cabi_started():\n"
                            "    return 1\n\n\nlib.cabi_mark_ready()\n")
    python = sys.executable.replace("\\", "\\\\").replace('"', '\\"')
    ffi.set_source(MODULE, f'#define CABI_PYTHON "{python}"\n' + PREAMBLE + csrc,
                   include_dirs=[str(include)], source_extension=".cpp",
                   extra_compile_args=["-O1", "-Wno-unused-variable", "-Wno-unused-function",
                                       "-Werror=narrowing"])
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        built = ffi.compile(tmpdir=tmp, target="libascendcl.so", verbose=verbose)
        dest = out / "libascendcl.so"
        shutil.copy2(built, dest)
        (out / "npusim_cabi_source.cpp").write_text(csrc)
    (out / "npusim_cabi_skipped.txt").write_text(
        "".join(f"{k}\t{v}\n" for k, v in sorted(p.skipped.items())))
    return dest


def sitepaths() -> list[str]:
    """The embedded interpreter's sys.path additions: the npusim source root and the running
    interpreter's site-packages (a venv's included)."""
    out = [str(ROOT)]
    for key in ("purelib", "platlib"):
        pth = sysconfig.get_paths()[key]
        if pth not in out:
            out.append(pth)
    for pth in sys.path:
        if pth.endswith("site-packages") and pth not in out:
            out.append(pth)
    return out


# the libraries the samples link besides libascendcl (their CMakeLists), written empty
STUB_LIBS = ("libnnopbase.so", "libopapi.so", "libacl_op_compiler.so", "libascend_dump.so",
             "libmsprofiler.so", "libruntime.so", "libascendalog.so", "libacl_tdt_channel.so",
             "libacl_prof.so", "libacl_tdt_queue.so", "libprofapi.so", "libc_sec.so", "libgraph.so",
             "libge_runner.so",
             "libascendc_runtime.a", "libplatform.so", "libtiling_api.a", "libregister.so",
             "libunified_dlog.so", "liberror_manager.so", "libmmpa.so", "libacl_cblas.so",
             "libacl_dvpp.so", "libacl_dvpp_mpi.so", "libascendcl_impl.so")


def _stub(path: pathlib.Path) -> None:
    import subprocess
    if path.suffix == ".a":
        subprocess.run(["ar", "rcs", str(path)], check=True)
        return
    cc = shutil.which(os.environ.get("CC", "cc")) or "gcc"
    with tempfile.TemporaryDirectory() as tmp:
        src = pathlib.Path(tmp, "stub.c")
        src.write_text("/* an empty stand-in library written by npusim cabi */\n"
                       "int npusim_cabi_stub_library(void) { return 0; }\n")
        subprocess.run([cc, "-shared", "-fPIC", "-o", str(path), str(src)], check=True)


SETENV = """# written by `npusim cabi`: the environment of a CANN install's setenv.bash, over npusim
export ASCEND_HOME_PATH="{prefix}"
export ASCEND_TOOLKIT_HOME="{prefix}"
export ASCEND_INSTALL_PATH="{prefix}"
export ASCEND_OPP_PATH="{prefix}/opp"
export ASCEND_AICPU_PATH="{prefix}"
export ASCENDC_CMAKE_DIR="{prefix}/tools/tikcpp/ascendc_kernel_cmake"
export SOC_VERSION="${{SOC_VERSION:-Ascend910B1}}"
export NPUSIM_CABI_PREFIX="{prefix}"
export LD_LIBRARY_PATH="{prefix}/lib64:{pylib}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}"
export LIBRARY_PATH="{prefix}/lib64${{LIBRARY_PATH:+:$LIBRARY_PATH}}"
export CPATH="{prefix}/include${{CPATH:+:$CPATH}}"
export PATH="{prefix}/bin${{PATH:+:$PATH}}"
"""


def install(prefix: os.PathLike, headers: os.PathLike | None = None,
            verbose: bool = False) -> pathlib.Path:
    """Write a CANN-shaped install at ``prefix`` (docs/cabi.md "Install"); returns the prefix."""
    prefix = pathlib.Path(prefix).resolve()
    lib = prefix / "lib64"
    lib.mkdir(parents=True, exist_ok=True)
    so = build_library(lib, headers, verbose)
    for alias in ("libacl_rt.so", "libacl_rt_impl.so"):
        target = lib / alias
        if target.is_symlink() or target.exists():
            target.unlink()
        target.symlink_to(so.name)
    for name in STUB_LIBS:
        if not (lib / name).exists():
            _stub(lib / name)
    inc = prefix / "include"
    if inc.exists():
        shutil.rmtree(inc)
    shutil.copytree(pathlib.Path(headers) if headers else INCLUDE, inc)
    (prefix / "bin").mkdir(exist_ok=True)
    pylib = sysconfig.get_config_var("LIBDIR") or ""
    text = SETENV.format(prefix=prefix, pylib=pylib)
    (prefix / "bin" / "setenv.bash").write_text(text)
    (prefix / "set_env.sh").write_text(text)
    (prefix / "opp").mkdir(exist_ok=True)
    (prefix / "version.info").write_text("Version=npusim-cabi\n")
    # the runtime package's version where aclsysGetVersionStr / Num read it
    # ($ASCEND_HOME_PATH/share/info/runtime/version.info: runtime/api_version.py)
    from ..runtime import api_version as V
    info = prefix / V.RUNTIME_INFO
    info.parent.mkdir(parents=True, exist_ok=True)
    info.write_text(f"Version={V.RUNTIME_VERSION}\n")
    # the runtime versions the CANN attributes need, beside the library (aclGetCannAttribute*)
    (prefix / V.SW_CONFIG).parent.mkdir(parents=True, exist_ok=True)
    (prefix / V.SW_CONFIG).write_text(json.dumps(V.FEATURE_MINIMUMS, indent=2) + "\n")
    from . import ascendc                # the Ascend C CMake stand-in (helper chdr's)
    ascendc.install(prefix)
    return prefix
