"""The Pythonic API: objects over handles, exceptions over codes.

Every method goes through the ``npusim.acl`` facade and raises ``AclError`` (with ``.code`` and the
ACL name) where the facade returns a non-zero code, so both APIs share one set of rules.


One module per object, lowest first (each imports only the ones above it):

* ``base.py``      — ``configure``, ``reset``, ``freeze_permanent``, and ``_ok`` / ``_out``: a non-zero code becomes
  ``AclError``;
* ``stream.py``    — ``Buffer``, ``Stream``, ``Event``, ``ExternalEvent``, ``random_task_info``;
* ``kernel.py``    — ``Function``, ``Binary`` / ``load_binary``, kernel cost models;
* ``graph.py``     — ``Graph`` / ``graph()``, ``Condition``, ``Branch``, ``BuiltModel``;
* ``taskgroup.py`` — ``graph_task_*``, ``task_group`` / ``task_update``;
* ``device.py``    — ``Device``;
* ``comm.py``      — ``communicator``, ``Comm``, ``HcclError`` (HCCL on several devices).

Every name is re-exported here: ``npusim.api.Device``, ``npusim.api.reset`` ... (``npusim``
re-exports the public ones).
"""
from __future__ import annotations

from ..runtime.runtime import RT  # noqa: F401  (npusim.api.RT: tests read the host clock)
from .base import configure, freeze_permanent, reset, _cause, _detail, _ok, _out  # noqa: F401
from .stream import (Buffer, Event, ExternalEvent, Stream, random_task_info, _CONDITIONS,
                     _RANDOM_DEFAULTS, _RANDOM_DIST, _RANDOM_TYPES)  # noqa: F401
from .kernel import (Binary, Function, load_binary, reset_kernel_cost, roofline, set_kernel_cost,
                     _host_args, _is_user_kernel, _kernel_id)  # noqa: F401
from .graph import Branch, BuiltModel, Condition, Graph, graph, _MODES  # noqa: F401
from .taskgroup import (TaskGroup, TaskUpdate, graph_task_group_begin, graph_task_group_end,
                        graph_task_update_begin, graph_task_update_end, task_group, task_update,
                        _ContextManagerOnly, _user_site)  # noqa: F401
from .device import Device  # noqa: F401
from .comm import Comm, HcclError, communicator  # noqa: F401,E402
