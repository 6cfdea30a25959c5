"""``acldvppMalloc`` / ``acldvppFree`` (pyACL: ``acl.media.dvpp_malloc`` / ``dvpp_free``): the
device memory the media (DVPP) functions take. The media processing itself is not simulated
(``acl.media``'s other functions return 207000); the allocation is, because programs that never
touch DVPP still allocate their buffers with it (docs/fidelity.md row 201).

The rules, as documented and as the runtime implements them:

* the size actually allocated is the size asked for rounded up to a multiple of 32, plus 32
  bytes (acldvppMalloc's reference page, "aclcppdevg_03_0323", zh/canncommercial/800, and
  pyACL's ``acl.media.dvpp_malloc`` page "aclpythondevg_01_0231", en/canncommercial/800: "the
  allocation size is the input size rounded up to the nearest multiple of 32, plus 32 bytes");
  the runtime rounds to 32 again (``ApiImpl::DevDvppMalloc``, hicann/runtime
  src/runtime/api/impl/api_impl.cc:2386-2393), which changes nothing;
* the start address is 128-byte aligned (same pages); npusim's device blocks are 512-byte
  aligned (``device/memory.py`` ``DEV_ALIGN``), which is;
* no current context -> 107002 (``CHECK_CONTEXT_VALID_WITH_RETURN``, api_impl.cc:2388);
* memory that cannot be had -> 207001 ``ACL_ERROR_RT_MEMORY_ALLOCATION``;
* ``acldvppFree``: NULL -> 100000 (the acl layer's NULL check, as ``aclrtFree``'s;
  ``ApiErrorDecorator::DevDvppFree`` would refuse it with ``RT_ERROR_INVALID_VALUE``,
  api_error.cc:1925-1929); anything but the start of a live device allocation the program made
  -> 107000 (``ApiImpl::DevDvppFree`` requires a device location, api_impl.cc:2396-2423, then
  the driver frees the block). Needs no context (DevDvppFree falls back to the default
  driver).

DVPP memory is device memory of the current device: every copy, memset and kernel takes it,
and ``aclrtFree`` frees it too (the runtime's ``DevDvppFree`` ends in ``DevFree``).
"""
from __future__ import annotations

import numpy as np

from .. import errors as ERR
from ..device.memory import OutOfMemory
from .handles import CREATE_HOOKS
from .hostmem import DEVICE, locate
from .runtime import RT

DVPP_SIZE_ALIGN = 32            # sizes are rounded up to this ...
DVPP_SIZE_EXTRA = 32            # ... and this much is added
DVPP_ADDR_ALIGN = 128           # the documented alignment of the start address


def dvpp_size(size: int) -> int:
    """The bytes acldvppMalloc allocates for ``size``: ALIGN_UP(size, 32) + 32."""
    return -(-int(size) // DVPP_SIZE_ALIGN) * DVPP_SIZE_ALIGN + DVPP_SIZE_EXTRA


def dvpp_malloc(size):
    """acldvppMalloc: ``(dev_ptr, code)`` — ``ALIGN_UP(size, 32) + 32`` bytes of device memory
    of the current context's device, 128-byte aligned (module text). A size of 0 gets the 32
    extra bytes, as the documented rule gives."""
    if not isinstance(size, (int, np.integer)) or size < 0:
        RT.tls.explain(f"size {size!r} is not a size_t")
        return None, ERR.ACL_ERROR_INVALID_PARAM
    ctx = RT.current_context
    if ctx is None:
        RT.tls.explain("no current context: call acl.rt.set_device or acl.rt.set_context first")
        return None, ERR.ACL_ERROR_RT_CONTEXT_NULL
    dev = ctx.device
    nbytes = dvpp_size(size)
    RT.tick(dev.timing.host_malloc_ns)
    try:
        ptr = dev.state.mem.malloc(nbytes, user=True)
    except OutOfMemory:
        RT.tls.explain(f"{nbytes} bytes (ALIGN_UP({int(size)}, 32) + 32) of device memory are "
                       "not free")
        return None, ERR.ACL_ERROR_RT_MEMORY_ALLOCATION
    if CREATE_HOOKS:
        for hook in CREATE_HOOKS:
            hook("malloc", ptr)
    return ptr, ERR.ACL_SUCCESS


def dvpp_free(dev_ptr) -> int:
    """acldvppFree: free memory acldvppMalloc (or aclrtMalloc) returned."""
    if not dev_ptr:
        RT.tls.explain("dev_ptr is NULL")
        return ERR.ACL_ERROR_INVALID_PARAM
    w = locate(dev_ptr)
    if w.kind != DEVICE or w.start != dev_ptr or not w.device.state.mem.is_user(int(dev_ptr)):
        RT.tls.explain(f"dev_ptr 0x{int(dev_ptr):x} is not the start of a live device allocation "
                       "(freed already, host memory, or inside a block)")
        return ERR.ACL_ERROR_RT_PARAM_INVALID
    RT.tick(w.device.timing.host_free_ns)
    w.device.state.mem.free(int(dev_ptr))
    return ERR.ACL_SUCCESS
