"""``acl.mdl``: the aclmdlRI* functions (capture, execution, model lifecycle, dumps)."""
from __future__ import annotations

from ..runtime.api_mdl import (ri_abort, ri_capture_begin, ri_capture_end,  # noqa: F401
                               ri_capture_get_info, ri_capture_thread_exchange_mode,
                               ri_capture_to_model_ri_begin, ri_debug_json_print,
                               ri_debug_print, ri_destroy, ri_destroy_register_callback,
                               ri_destroy_unregister_callback, ri_execute,
                               ri_execute_async, ri_get_id, ri_get_name, ri_get_streams,
                               ri_set_name, ri_update)
from ..runtime.taskgroup import (ri_capture_task_grp_begin,  # noqa: F401,E402
                                 ri_capture_task_grp_end, ri_capture_task_update_begin,
                                 ri_capture_task_update_end)
from ..runtime.tasks import (ri_get_tasks_by_stream, ri_kernel_task_get_attribute,  # noqa
                             ri_task_disable,
                             ri_task_get_params, ri_task_get_seq_id, ri_task_get_type,
                             ri_task_set_params)
from ..runtime import cond as _cond  # noqa: E402,F401  (registers the launch hook)
from ..runtime.cond import (ri_add_cond_task, ri_cond_handle_create,  # noqa: F401,E402
                            ri_cond_handle_get_cond_ptr)
from ..runtime.api_build import (ri_bind_stream, ri_build_begin,  # noqa: F401,E402
                                 ri_build_end, ri_end_task, ri_unbind_stream)
