"""``acl.platform``: the aclplatform* queries of chapter 24 — refused by design with
207000 and the reason (``runtime/api_refused.py``).

Naming (design.md §3.1, docs/pyacl.md "Naming"): ``aclplatform``X -> ``acl.platform.x``.
"""
from ..runtime.api_refused import install as _install

_install(globals(), "platform")
