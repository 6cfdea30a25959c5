"""``acl.dump``: the acldump* functions of chapter 18 — refused by design with 207000 and
the reason (``runtime/api_refused.py``; aclmdlInitDump / SetDump / FinalizeDump are ``acl.mdl``).

Naming (design.md §3.1, docs/pyacl.md "Naming"): ``acldump``X -> ``acl.dump.x``.
"""
from ..runtime.api_refused import install as _install

_install(globals(), "dump")
