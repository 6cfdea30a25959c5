"""``acl.log``: the acllog* functions of chapter 23.

``record`` / ``va_list`` write to Python's ``logging`` (logger ``npusim.acllog``) when
``check_debug_level`` says the level is enabled (``runtime/api_util.py``); ``register_callback``
returns (handle, result) and ``unregister_callback`` the result, as plog does (0 / -1; the
callbacks get the device's log records, which the simulated devices do not write). They return
what C returns: nothing (None) for the records, an int for the others.
Naming (design.md §3.1): ``acllogX`` -> ``acl.log.x``.
"""
from ..runtime.api_refused import install as _install
from ..runtime.api_util import log_check_debug_level as check_debug_level  # noqa: F401
from ..runtime.api_util import log_register_callback as register_callback  # noqa: F401
from ..runtime.api_util import log_unregister_callback as unregister_callback  # noqa: F401
from ..runtime.api_util import log_record as record  # noqa: F401
from ..runtime.api_util import log_va_list as va_list  # noqa: F401

_install(globals(), "log")
