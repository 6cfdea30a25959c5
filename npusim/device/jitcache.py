"""numba's on-disk cache for npusim's own jitted functions, keyed on what they inline.

numba caches a ``cache=True`` function's object code next to its source and reuses it while the
index's *source stamp* matches: the stamp is the function's own file only (its time and size, or
its hash). npusim's jitted code inlines functions and freezes constants from other files — every
kernel body and the engine call ``memview``'s views and read the context-array positions of
``memory``, the engine reads the SQE layout of ``sqe`` and the timing table's indices — so after
an upgrade or an edit of one of those files a warm cache would go on running object code built
against the old layout (seen: a segfault from a kernel that read a pointer where a count had
moved). Here each npusim function's stamp is salted with a hash of those files, :data:`ABI_FILES`:
change one and every npusim cache entry is stale at once, recompiled on first use and written
back in place (numba overwrites a stale index; no files pile up).

:func:`install` puts a salted subclass of each of numba's source-file locators first in
``CacheImpl``'s locator list; it runs when ``npusim.device`` is imported, before any npusim module
defines a jitted function (numba picks a function's locator when it is decorated). A salted
locator answers only for files inside the npusim package; everything else — a user's own
``cache=True`` functions, the wrappers of ``@npusim.kernel`` (kept in the kernel cache under a name
that ``kernel/decorator.py`` hashes from the body and :data:`SALT`) — goes on to numba's locators
unchanged.
"""
from __future__ import annotations

import hashlib
import os

from numba.core import caching as _caching

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))     # .../npusim
_DEVICE = os.path.join(PACKAGE, "device")

#: The files whose code or constants other files' jitted functions inline: the device layer with
#: its subpackages — every module of the engine package (``device/engine/``) inlines the others'
#: — (its host-only ``state.py``, the launch path's ``launchjit.py``, whose jitted calls nothing
#: inlines, and the package's own ``__init__`` aside), device printf, and the
#: argument converters that ``@npusim.kernel``'s generated wrappers call.
ABI_FILES = tuple(sorted(
    os.path.join(d, f) for d, _, files in os.walk(_DEVICE) if "__pycache__" not in d
    for f in files if f.endswith(".py")
    and os.path.join(d, f) not in (os.path.join(_DEVICE, "__init__.py"),
                                   os.path.join(_DEVICE, "state.py"),
                                   # the launch path's own jitted calls: no other jitted code
                                   # inlines them, and numba's stamp of the file covers them
                                   os.path.join(_DEVICE, "launchjit.py")))) + (
    os.path.join(PACKAGE, "kernel", "printf.py"), os.path.join(PACKAGE, "kernel", "decorator.py"))


def _salt() -> str:
    h = hashlib.sha256()
    for path in ABI_FILES:
        h.update(os.path.relpath(path, PACKAGE).encode() + b"\0")
        with open(path, "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:16]


#: The hash of :data:`ABI_FILES` this process salts npusim's cache stamps with.
SALT = _salt()


def _base(name: str):
    """numba's locator class ``name`` (numba < 0.60 spells its locators with an underscore)."""
    return getattr(_caching, name, None) or getattr(_caching, "_" + name)


def _salted(base):
    class Salted(base):
        __doc__ = f"numba's {base.__name__}, for npusim's files, its stamp salted with SALT."

        @classmethod
        def from_function(cls, py_func, py_file):
            if not os.path.abspath(py_file).startswith(PACKAGE + os.sep):
                return None
            return super().from_function(py_func, py_file)

        def get_source_stamp(self):
            return super().get_source_stamp(), SALT

    Salted.__name__ = Salted.__qualname__ = "Npusim" + base.__name__.lstrip("_")
    return Salted


#: The salted locators, in numba's order of the base classes.
LOCATORS = tuple(_salted(_base(n)) for n in
                 ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator"))


def install() -> None:
    """Put :data:`LOCATORS` first in numba's locator list (idempotent)."""
    impl = getattr(_caching, "CacheImpl", None) or _caching._CacheImpl
    classes = impl._locator_classes
    if classes[:len(LOCATORS)] != list(LOCATORS):
        classes[:] = list(LOCATORS) + [c for c in classes if c not in LOCATORS]
