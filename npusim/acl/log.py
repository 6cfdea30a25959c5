"""``acl.log``: the acllog* functions of chapter 23.

``record`` / ``va_list`` write to Python's ``logging`` (logger ``npusim.acllog``) when
``check_debug_level`` says the level is enabled (``runtime/api_util.py``); the plog library's
callbacks (``register_callback`` / ``unregister_callback``) are refused with 207000 and the
reason. They return what C returns: nothing (None) for the records, an int for the check.
Naming (design.md §3.1): ``acllogX`` -> ``acl.log.x``.
"""
from ..runtime.api_refused import install as _install
from ..runtime.api_util import log_check_debug_level as check_debug_level  # noqa: F401
from ..runtime.api_util import log_record as record  # noqa: F401
from ..runtime.api_util import log_va_list as va_list  # noqa: F401

_install(globals(), "log")
