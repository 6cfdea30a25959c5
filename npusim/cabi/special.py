"""Hand-written marshallers of the C functions the generic rule of ``build.plan`` cannot map
(C structs and arrays, in/out pointers, string outputs); each returns (cdef lines, the C
wrapper, the Python extern) for :func:`build.generate`."""
from __future__ import annotations

HANDLERS: dict = {}

# facade parameters of kind "any" that C passes as a plain pointer (user data)
ANY_AS_INT = {"userData", "args", "userdata", "hostData", "arg", "fnData"}

C_SUPPORT = ""
