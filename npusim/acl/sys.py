"""``acl.sys``: the aclsys* version queries of chapter 24 — refused by design with 207000
and the reason (``runtime/api_refused.py``): npusim has no CANN installation to read.

Naming (design.md §3.1, docs/pyacl.md "Naming"): ``aclsys``X -> ``acl.sys.x``.
"""
from ..runtime.api_refused import install as _install

_install(globals(), "sys")
