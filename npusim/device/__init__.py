"""The device layer: the engine, its tables and memory, the kernel ABI (docs/architecture.md).

Importing it first installs npusim's salted numba cache locators (:mod:`.jitcache`), before any
npusim module defines a jitted function, so a cached body never outlives a change in the files it
inlines.
"""
from . import jitcache as _jitcache

_jitcache.install()
