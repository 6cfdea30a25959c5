"""``npusim cabi``: a libascendcl-compatible C library over the simulator (issue 39).

C and C++ programs written for the Ascend runtime (the runtime's own samples, framework back-ends)
link against ``libascendcl.so`` / ``libacl_rt.so`` and include ``acl/acl.h``. This package writes a
CANN-shaped install (``npusim cabi --prefix DIR``): a cffi-embedded shared library whose every
exported ``acl*`` function forwards into the same runtime as ``npusim.acl`` (no second
implementation), npusim's own declarations of the interface (written from the documentation, never
copied from CANN's headers), ``bin/setenv.bash``, and a stand-in for the Ascend C CMake support that
maps the samples' kernel sources to npusim's built-in kernels. See ``docs/cabi.md``.
"""
