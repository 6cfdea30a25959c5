"""npusim: a simulator of the Ascend NPU runtime's ACL Graph and Kernel module.

Two APIs over one set of rules: ``npusim.acl`` (pyACL-style, returns codes) and the Pythonic API
here (objects, ``AclError`` exceptions). See README.md and docs/architecture.md.
"""
from __future__ import annotations

import warnings as _warnings

from numba import NumbaExperimentalFeatureWarning as _NEFW

_warnings.filterwarnings("ignore", category=_NEFW)

from . import acl, errors  # noqa: E402
from .api import (Buffer, Device, Event, Graph, Stream, configure, graph,  # noqa: E402
                  graph_task_group_begin, graph_task_group_end, graph_task_update_begin,
                  graph_task_update_end, reset)
from .errors import AclError  # noqa: E402
from .kernel import builtin as _builtin  # noqa: E402,F401  (registers the sample kernel bodies)

__version__ = "0.1.0"
__all__ = ["acl", "errors", "AclError", "Device", "Stream", "Event", "Buffer", "Graph", "graph",
           "configure", "reset", "graph_task_group_begin", "graph_task_group_end",
           "graph_task_update_begin", "graph_task_update_end"]
