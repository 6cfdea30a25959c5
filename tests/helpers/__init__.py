"""Helpers shared by the test suites (``tests/<subject>/``): ``acl`` (launch by name, device
reads and writes, fresh threads), ``capture``, ``cond``, ``taskgroup``, ``kernel`` (ELF and args
helpers), ``elf`` (crafting and patching ELF files), ``examples`` (loading ``examples/*.py``),
``pytester_run`` (an inner pytest session of this checkout, for the plugin's suites).
``tests/conftest.py`` puts ``tests/`` on ``sys.path`` so every suite imports them as
``helpers.<name>``."""
