"""``acl.prof``: pyACL's profiling (aclprof*) — not simulated.

Every function, listed in docs/pyacl.md or not, exists and returns 207000
``ACL_ERROR_RT_FEATURE_NOT_SUPPORT`` (saying once on stderr which area is not simulated), so a
pyACL program fails with a code, not an ``AttributeError`` (``pyacl.py``).
"""
from .pyacl import refused_getattr

__getattr__ = refused_getattr("prof")

from ..runtime.api_refused import install as _install  # noqa: E402

_install(globals(), "prof")      # BY_DESIGN: the reason in acl.get_recent_err_msg()
