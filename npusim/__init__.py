"""npusim: a simulator of the Ascend NPU runtime's ACL Graph and Kernel module.

Two APIs over one set of rules: ``npusim.acl`` (pyACL-style, returns codes) and the Pythonic API
here (objects, ``AclError`` exceptions). See README.md and docs/architecture.md.
"""
from __future__ import annotations

import warnings as _warnings

from numba import NumbaExperimentalFeatureWarning as _NEFW

_warnings.filterwarnings("ignore", category=_NEFW)

from . import acl, errors  # noqa: E402
from .acl import install_as_acl, uninstall_as_acl  # noqa: E402  (``import acl`` -> npusim.acl)
from .api import (Binary, Buffer, Device, Event, ExternalEvent, Function,  # noqa: E402
                  Graph, Stream, configure, freeze_permanent, graph, graph_task_group_begin, graph_task_group_end,
                  graph_task_update_begin, graph_task_update_end, load_binary, reset,
                  reset_kernel_cost, roofline, set_kernel_cost, TaskGroup, TaskUpdate,
                  task_group, task_update)
from .api import BuiltModel, random_task_info  # noqa: E402,F401
from .api import Comm, HcclError, communicator  # noqa: E402  (HCCL on several devices)
from . import hccl  # noqa: E402  (the HCCL facade: npusim.hccl.all_reduce ...)
from .errors import AclError  # noqa: E402
from . import analysis  # noqa: E402  (races, capture linter, deadlock chains)
from .faults import clear_injections, inject  # noqa: E402
from .kernel import builtin as _builtin  # noqa: E402,F401  (registers the sample kernel bodies)
from . import kernel, samples  # noqa: E402  (``@npusim.kernel`` is the kernel package, callable)
from .kernel.cpu import cpu_kernel, register_cpu_kernel  # noqa: E402
from .runtime.census import Census, census  # noqa: E402


def __getattr__(name):
    """``npusim.sweep`` (the package, callable: ``npusim.sweep(fn, ...)``) loads at first use,
    so ``import npusim`` does not pay for it."""
    if name == "sweep":
        import importlib                # deferred: the sweep package loads when first used
        return importlib.import_module(f"{__name__}.sweep")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__version__ = "0.1.0"
__all__ = ["acl", "hccl", "communicator", "Comm", "HcclError", "errors", "AclError", "Device", "Stream", "Event", "ExternalEvent", "Buffer",
           "Graph", "graph", "BuiltModel",
           "configure", "freeze_permanent", "reset", "graph_task_group_begin", "graph_task_group_end",
           "graph_task_update_begin", "graph_task_update_end", "load_binary", "Binary",
           "Function", "kernel", "samples", "cpu_kernel", "register_cpu_kernel", "set_kernel_cost",
           "reset_kernel_cost", "roofline", "inject", "clear_injections", "analysis", "census",
           "Census", "install_as_acl", "uninstall_as_acl", "sweep", "TaskGroup", "TaskUpdate",
           "task_group", "task_update", "random_task_info"]
