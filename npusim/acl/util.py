"""``acl.util``: pyACL's helpers, and only those (pyACL reference pages aclpythondevg_01_0052 to
_0059: ``numpy_to_ptr``, ``numpy_contiguous_to_ptr``, ``ptr_to_numpy``, ``bytes_to_ptr``,
``ptr_to_bytes``, ``start_thread``, ``stop_thread``). Their implementation and the facade's
record of registered host buffers live in ``_hostptr.py``; nothing of it is public here, so
every name a program finds in ``acl.util`` is one pyACL documents (docs/fidelity.md row 204).
"""
from ._hostptr import (bytes_to_ptr, numpy_contiguous_to_ptr, numpy_to_ptr, ptr_to_bytes,
                       ptr_to_numpy, start_thread, stop_thread)

__all__ = ["bytes_to_ptr", "numpy_contiguous_to_ptr", "numpy_to_ptr", "ptr_to_bytes",
           "ptr_to_numpy", "start_thread", "stop_thread"]
