"""The launch memo's hit in C (issue 40): an optional accelerator of ``acl/_launchmemo.py``.

The memo's hit in Python costs about 0.55 µs, most of it the interpreter: the key's lookup, seven
argument tests and numba's entry point unboxing six integers. The same steps in a small CPython
extension take about 0.1 µs: the entry of the last hit (or the memo's), the handles' identity,
the arguments' exact int type and range, then the compiled body through its C address (numba
``cfunc`` of ``launchjit.memo_capture`` / ``memo_eager``), and the run and ``last_event``
bookkeeping. It holds the GIL throughout, so the hit stays one atomic step (docs/architecture.md
§16).

It is built when the memo keeps its first entry, with the C compiler Python was built with (``sysconfig``), next to this
file's ``__pycache__`` (or in the temporary directory when that is read-only), and loaded from
there afterwards. Without a compiler, headers or a writable directory, ``HIT[0]`` stays None
and the front keeps its Python hit: the same effects, slower. ``NPUSIM_NO_CFRONT=1`` leaves it out.

``hit(func, num_blocks, args_ptr, args_size, stream)`` returns 0 (launched), -1 (a miss: the
general path) or 1 (not handled: the reference path is selected, or the entry's fields are not
plain ints; the front's Python hit decides).
"""
from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import subprocess
import sysconfig
import tempfile

from ..device import launchjit as _LJ

_SOURCE = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

typedef int64_t (*memo_fn)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t);

static PyObject *memo, *last, *zero, *miss, *unhandled, *s_last_event;
static int64_t *ctl;
static Py_ssize_t compiled_word;
static memo_fn cap_fn, eag_fn;
static int64_t new_run;

/* the entry: (size, jd, gq, kd, cstream or None, model or None, runs or None, func, stream) */
static PyObject *hit(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5 || memo == NULL || !ctl[compiled_word])
        return Py_NewRef(unhandled);
    PyObject *func = args[0], *nb = args[1], *ap = args[2], *as = args[3], *st = args[4];
    PyObject *e = PyList_GET_ITEM(last, 0);
    if (e == Py_None || PyTuple_GET_ITEM(e, 7) != func || PyTuple_GET_ITEM(e, 8) != st) {
        PyObject *key = PyTuple_Pack(2, func, st);
        if (key == NULL) {
            PyErr_Clear();
            return Py_NewRef(miss);
        }
        e = PyDict_GetItemWithError(memo, key);         /* borrowed */
        Py_DECREF(key);
        if (e == NULL) {
            PyErr_Clear();                              /* an unhashable value: a miss */
            return Py_NewRef(miss);
        }
        if (PyTuple_GET_ITEM(e, 7) != func || PyTuple_GET_ITEM(e, 8) != st)
            return Py_NewRef(miss);
    }
    if (!PyLong_CheckExact(nb) || !PyLong_CheckExact(ap) || !PyLong_CheckExact(as))
        return Py_NewRef(miss);
    int over = 0;
    long long b = PyLong_AsLongLongAndOverflow(nb, &over);
    if (over || b <= 0 || b >= 0x10000)
        return Py_NewRef(miss);
    long long p = PyLong_AsLongLongAndOverflow(ap, &over);
    if (over || p <= 0)
        return Py_NewRef(miss);
    long long sz = PyLong_AsLongLongAndOverflow(as, &over);
    PyObject *esz = PyTuple_GET_ITEM(e, 0);
    if (over || sz != PyLong_AsLongLong(esz))
        return Py_NewRef(miss);
    long long d = PyLong_AsLongLongAndOverflow(PyTuple_GET_ITEM(e, 1), &over);
    long long gq = over ? 0 : PyLong_AsLongLongAndOverflow(PyTuple_GET_ITEM(e, 2), &over);
    long long kd = over ? 0 : PyLong_AsLongLongAndOverflow(PyTuple_GET_ITEM(e, 3), &over);
    if (over || PyErr_Occurred()) {
        PyErr_Clear();
        return Py_NewRef(unhandled);
    }
    PyObject *cs = PyTuple_GET_ITEM(e, 4);
    if (cs == Py_None) {
        if (eag_fn(d, gq, kd, p, sz, b) < 0)
            return Py_NewRef(miss);
    } else {
        int64_t r = cap_fn(d, gq, kd, p, sz, b);
        if (r < 0)
            return Py_NewRef(miss);
        if (r >> 62) {                                   /* a new run of the capture order */
            PyObject *v = PyLong_FromLongLong(r ^ new_run);
            if (v == NULL || PyList_Append(PyTuple_GET_ITEM(e, 6), v) < 0)
                Py_FatalError("npusim launch memo: a capture-order run was lost");
            Py_DECREF(v);
        }
        PyObject *ev = PyObject_GetAttr(cs, s_last_event);
        if (ev == NULL)
            Py_FatalError("npusim launch memo: no last_event");
        if (ev != Py_None && PyObject_SetAttr(cs, s_last_event, Py_None) < 0)
            Py_FatalError("npusim launch memo: last_event not cleared");
        Py_DECREF(ev);
    }
    if (PyList_GET_ITEM(last, 0) != e) {
        Py_INCREF(e);
        PyList_SetItem(last, 0, e);                      /* steals e; drops the old one */
    }
    return Py_NewRef(zero);
}

static PyObject *setup(PyObject *self, PyObject *args)
{
    PyObject *m, *l;
    unsigned long long ctl_addr, cap_addr, eag_addr;
    Py_ssize_t word;
    long long nr;
    if (!PyArg_ParseTuple(args, "O!O!KnKKL", &PyDict_Type, &m, &PyList_Type, &l, &ctl_addr,
                          &word, &cap_addr, &eag_addr, &nr))
        return NULL;
    Py_XSETREF(memo, Py_NewRef(m));
    Py_XSETREF(last, Py_NewRef(l));
    ctl = (int64_t *)(uintptr_t)ctl_addr;
    compiled_word = word;
    cap_fn = (memo_fn)(uintptr_t)cap_addr;
    eag_fn = (memo_fn)(uintptr_t)eag_addr;
    new_run = nr;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"hit", (PyCFunction)(void (*)(void))hit, METH_FASTCALL, "the launch memo's hit"},
    {"setup", setup, METH_VARARGS, "the memo, the last hit's box, CTL and the bodies"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "NAME", NULL, -1, methods};

PyMODINIT_FUNC PyInit_NAME(void)
{
    zero = PyLong_FromLong(0);
    miss = PyLong_FromLong(-1);
    unhandled = PyLong_FromLong(1);
    s_last_event = PyUnicode_InternFromString("last_event");
    return PyModule_Create(&module);
}
"""


def _build():
    """The extension module, built now if not yet, or None (module docstring)."""
    if os.environ.get("NPUSIM_NO_CFRONT", "") not in ("", "0"):
        return None
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    include = sysconfig.get_paths().get("include")
    if not include or not os.path.exists(os.path.join(include, "Python.h")):
        return None
    tag = hashlib.sha256((_SOURCE + suffix + include).encode()).hexdigest()[:12]
    name = f"_npusim_launch_{tag}"
    src = _SOURCE.replace("NAME", name)
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__")
    for d in (here, os.path.join(tempfile.gettempdir(), "npusim-cfront")):
        path = os.path.join(d, name + suffix)
        if not os.path.exists(path):
            try:
                os.makedirs(d, exist_ok=True)
                cfile = os.path.join(d, f"{name}.{os.getpid()}.c")
                tmp = path + f".{os.getpid()}.tmp"
                with open(cfile, "w") as f:
                    f.write(src)
                cc = (sysconfig.get_config_var("CC") or "cc").split()
                subprocess.run(cc + ["-O2", "-shared", "-fPIC", f"-I{include}", cfile, "-o",
                                     tmp], check=True, capture_output=True, timeout=120)
                os.replace(tmp, path)                    # atomic: another process may race
                os.unlink(cfile)
            except (OSError, subprocess.SubprocessError):
                continue
        try:
            loader = importlib.machinery.ExtensionFileLoader(name, path)
            spec = importlib.util.spec_from_file_location(name, path, loader=loader)
            mod = importlib.util.module_from_spec(spec)
            loader.exec_module(mod)
            return mod
        except (ImportError, OSError):
            continue
    return None


def _make():
    mod = _build()
    if mod is None:
        return None
    try:
        cap, eag = _LJ.memo_addresses()
    except Exception:                       # noqa: BLE001 -- no cfunc: the Python hit
        return None
    mod.setup(_LJ.MEMO, _LJ.LAST, _LJ.CTL.ctypes.data, _LJ.C_COMPILED, cap, eag, _LJ.NEW_RUN)
    return mod.hit


HIT = [None]
"""``[the C hit]``, or ``[None]`` (the front's Python hit then): made by :func:`ensure`."""
_TRIED = [False]


def ensure() -> None:
    """Build and load the C hit once, when the memo keeps its first entry (not at import: a
    program that never repeats a launch pays nothing; the first build takes about a second)."""
    if not _TRIED[0]:
        _TRIED[0] = True
        HIT[0] = None if _LJ.MEMO_CHECK else _make()
