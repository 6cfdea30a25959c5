"""``npusim.hccl``: HCCL collectives on several simulated NPUs, in the facade's style (issue 38,
``../shared/spec/hccl.md``).

The functions are ``api.py``'s (``HcclAllReduce`` -> ``npusim.hccl.all_reduce`` ...: outputs
first, the ``HcclResult`` last, never raising); the constants are ``types.py``'s with their C
names (``HCCL_SUCCESS``, ``HCCL_DATA_TYPE_FP32``, ``HCCL_REDUCE_SUM`` ...). The package's
modules: ``types`` (the header's enums), ``algo`` (schedules and their α–β cost), ``reduce``
(the move kernel; ``npusim.hccl.reduce`` is HcclReduce), ``comm`` (communicators), ``lower`` (a schedule as tasks), ``diagnose``
(cross-rank mismatches), ``api`` (the facade).
"""
from .types import *  # noqa: F401,F403  (the C constants)
from .api import (all_gather, all_reduce, alltoall, alltoallv, alltoallvc, barrier,  # noqa: F401
                  batch_send_recv, broadcast, comm_config_init, comm_destroy, comm_init_all,
                  comm_init_cluster_info, comm_init_root_info, comm_init_root_info_config,
                  get_comm_async_error, get_error_string, get_rank_id, get_rank_size,
                  get_root_info, group_end, group_start, recv, reduce, reduce_scatter, scatter,
                  send)
