"""``acl.tdt``: tensor data transfer channels, shared queues and their buffers (acltdt*,
chapter 17) — refused by design with 207000 and the reason (``runtime/api_refused.py``).

Naming (design.md §3.1, docs/pyacl.md "Naming"): ``acltdt``X -> ``acl.tdt.x``.
"""
from ..runtime.api_refused import install as _install

_install(globals(), "tdt")
