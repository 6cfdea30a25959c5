"""Runtime functions npusim refuses by design: present so a program gets a code and a reason
instead of an ``AttributeError``, and returning 207000 (``ACL_ERROR_RT_FEATURE_NOT_SUPPORT``) with
the reason as the thread's recent error message (``acl.get_recent_err_msg()``).

What is refused is what a one-process simulator cannot mean: memory and events shared with other
processes (IPC), cache maintenance and address-space management of real hardware.
``docs/api_coverage.md`` lists every function of the chapters capture programs use, with these.
"""
from __future__ import annotations

from .. import errors as ERR

BY_DESIGN: dict[str, str] = {}
"""C name -> why npusim does not simulate it."""
