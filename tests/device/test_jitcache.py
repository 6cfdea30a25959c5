"""npusim's jitted functions are cached under a stamp salted with the ABI files' hash.

numba keys a cache entry on its own source file only; ``npusim.device.jitcache`` adds the hash of
the files npusim's jitted code inlines, so editing one (or upgrading npusim) makes every npusim
entry stale instead of running object code built against the old layout.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

from numba.core import caching

import npusim  # noqa: F401  (imports every npusim module that jits)
from npusim.device import engine, jitcache
from npusim.device.engine import bodies, layout, loop, opcodes, sched

#: the engine package's modules (``inspect`` reads each one's source)
ENGINE = (layout, sched, opcodes, bodies, loop)


def _locator(dispatcher):
    return dispatcher._cache._impl.locator


def test_locators_come_first():
    classes = caching.CacheImpl._locator_classes
    assert classes[:len(jitcache.LOCATORS)] == list(jitcache.LOCATORS)
    jitcache.install()                                    # idempotent
    assert classes.count(jitcache.LOCATORS[0]) == 1


def test_every_npusim_cached_function_is_salted():
    """Every ``cache=True`` dispatcher of npusim's modules took a salted locator: none was
    decorated before ``install`` ran."""
    seen = 0
    for name, mod in list(sys.modules.items()):
        if not (name == "npusim" or name.startswith("npusim.")) or mod is None:
            continue
        for obj in list(vars(mod).values()):
            cache = getattr(obj, "_cache", None)
            impl = getattr(cache, "_impl", None)
            if impl is None or getattr(obj, "__module__", None) != name:
                continue
            assert isinstance(impl.locator, jitcache.LOCATORS), (name, obj)
            assert impl.locator.get_source_stamp()[1] == jitcache.SALT
            seen += 1
    assert seen > 20


def test_the_salt_covers_the_layouts_jitted_code_inlines():
    files = {os.path.relpath(p, jitcache.PACKAGE) for p in jitcache.ABI_FILES}
    for f in ("device/memview.py", "device/memory.py", "device/sqe.py", "device/kernels.py",
              "device/timing.py", "kernel/printf.py", "kernel/decorator.py"):
        assert f in files
    for f in ENGINE:                                # every module of the engine package
        f = os.path.relpath(f.__file__, jitcache.PACKAGE)
        assert f in files
    assert "device/state.py" not in files           # host code: jitted code inlines none of it
    assert "device/launchjit.py" not in files       # its jitted calls: none inlined elsewhere


def test_a_user_function_keeps_numbas_own_locator(tmp_path):
    src = tmp_path / "userjit.py"
    src.write_text("from numba import njit\n@njit(cache=True)\ndef f(x):\n    return x + 1\n")
    sys.path.insert(0, str(tmp_path))
    try:
        import userjit
        assert userjit.f(1) == 2
        assert not isinstance(_locator(userjit.f), jitcache.LOCATORS)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("userjit", None)


def test_salted_stamp_is_numbas_stamp_and_the_salt():
    """The salted stamp keeps numba's own (the file's freshness) and adds the salt, so an edit of
    the function's own file still makes its entry stale."""
    loc = _locator(engine.run)
    base = next(c for c in type(loc).__mro__[1:] if "get_source_stamp" in vars(c))
    assert loc.get_source_stamp() == (base.get_source_stamp(loc), jitcache.SALT)


def test_an_edited_abi_file_makes_the_cache_stale(tmp_path):
    """A copy of the package in fresh processes: an npusim function is loaded from numba's cache
    while its inputs stand, and recompiled (a miss, written back in place) once an ABI file —
    not its own — changes; a host-only file's change keeps the cache."""
    copy = tmp_path / "src"
    shutil.copytree(jitcache.PACKAGE, copy / "npusim",
                    ignore=shutil.ignore_patterns("__pycache__", "*.nb[ic]"))
    code = textwrap.dedent("""
        import numpy as np
        import npusim
        from npusim.device import half
        assert npusim.__file__.startswith(%r)
        assert half.h2f(np.uint16(0x3C00)) == 1.0
        print(len(half.h2f.stats.cache_hits), len(half.h2f.stats.cache_misses))
    """ % str(copy))
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "nc"), PYTHONPATH=str(copy))

    def run():
        out = subprocess.run([sys.executable, "-c", code], env=env, cwd=copy, check=True,
                             capture_output=True, text=True).stdout.split()
        return int(out[0]), int(out[1])

    def edit(rel):
        with open(copy / "npusim" / rel, "a") as f:
            f.write("# edited\n")
    assert run() == (0, 1)             # compiled, written
    assert run() == (1, 0)             # loaded
    edit("device/state.py")            # host code: not an ABI file
    assert run() == (1, 0)
    edit("device/sqe.py")              # a layout half.py does not import, still ABI: stale
    assert run() == (0, 1)
    assert run() == (1, 0)
    index = next((tmp_path / "nc").rglob("half.h2f*.nbi")).parent
    assert len([f for f in os.listdir(index) if f.startswith("half.h2f")]) == 2  # no pile-up


def test_plain_engine_helpers_never_get_int_literals():
    """architecture.md, "how it compiles": numba compiles a plain (not ``inline="always"``)
    function once per distinct int *literal* among its arguments, and an int constant of the
    module is a literal to it. So every argument an engine function passes to a plain engine
    helper is a variable, an expression, or a constant of type ``np.int64`` — ``run`` handing
    ``_finish`` its ``R_*`` codes as ints compiled ``_finish`` five times at a cold start."""
    import ast
    import inspect

    from numba.core.registry import CPUDispatcher

    tree = ast.Module(body=[n for m in ENGINE for n in ast.parse(inspect.getsource(m)).body],
                      type_ignores=[])
    names = {k: v for m in ENGINE for k, v in vars(m).items()}
    inlined = {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)
               and any(isinstance(k, ast.keyword) and k.arg == "inline"
                       for d in node.decorator_list if isinstance(d, ast.Call)
                       for k in d.keywords)}
    plain = {n for n, obj in names.items()
             if isinstance(obj, CPUDispatcher) and n not in inlined}
    bad = []
    for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
        for call in (c for c in ast.walk(fn) if isinstance(c, ast.Call)):
            if not (isinstance(call.func, ast.Name) and call.func.id in plain):
                continue
            for arg in call.args:
                if isinstance(arg, ast.Constant) and type(arg.value) in (int, bool):
                    bad.append(f"{fn.name} -> {call.func.id}({arg.value!r})")
                elif isinstance(arg, ast.Name) and type(names.get(arg.id)) in (int, bool):
                    bad.append(f"{fn.name} -> {call.func.id}({arg.id})")
    assert plain and not bad, bad
