"""``acl.sys``: the aclsys* version queries of chapter 24. ``get_version_str`` and
``get_version_num`` read the install's ``version.info`` files as the runtime does
(``runtime/api_version.py``); ``get_cann_version`` (deprecated) is refused by design with 207000
and the reason (``runtime/api_refused.py``).

Naming (design.md §3.1, docs/pyacl.md "Naming"): ``aclsys``X -> ``acl.sys.x``.
"""
import sys as _sys

from ..runtime.api_refused import install as _install
from ..runtime.api_version import get_version_num, get_version_str  # noqa: F401
from ._hosttrace import instrument as _instrument

_install(globals(), "sys")
_instrument(_sys.modules[__name__], "aclsys")     # the boundary, the trace, the recent error
