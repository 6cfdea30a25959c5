"""``acl.media``: pyACL's media / DVPP functions. ``acl.media.dvpp_malloc`` / ``dvpp_free``
(acldvppMalloc / acldvppFree) are simulated — device memory with DVPP's size and alignment rules
(``runtime/api_dvpp.py``, docs/fidelity.md row 201); the media processing itself (channels,
picture descriptions, VPC, JPEG, video codecs) is not.

Every other function, listed in docs/pyacl.md or not, exists and returns 207000
``ACL_ERROR_RT_FEATURE_NOT_SUPPORT`` (saying once on stderr which area is not simulated), so a
pyACL program fails with a code, not an ``AttributeError`` (``pyacl.py``).
"""
from ..runtime.api_dvpp import dvpp_free, dvpp_malloc  # noqa: F401
from .pyacl import refused_getattr as _refused_getattr

__getattr__ = _refused_getattr("media")
