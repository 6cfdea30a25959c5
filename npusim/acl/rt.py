"""``acl.rt``: the aclrt* functions (devices, contexts, streams, events, notifies, memory)."""
from __future__ import annotations

from ..runtime.api_device import (create_context, destroy_context,  # noqa: F401
                                  get_current_context, get_device, get_device_count, reset_device,
                                  set_current_context, set_device, synchronize_device)
from ..runtime.api_event import (create_event, create_event_ex_with_flag,  # noqa: F401
                                 create_event_with_flag, create_notify, destroy_event,
                                 destroy_notify, event_elapsed_time, query_event,
                                 query_event_status, record_event, record_notify, reset_event,
                                 stream_wait_event, synchronize_event,
                                 synchronize_event_with_timeout, wait_and_reset_notify)
from ..runtime.api_memory import (free, free_host, malloc, malloc_host, memcpy,  # noqa: F401
                                  memcpy_async, memset, memset_async)
from ..runtime.api_stream import (create_stream, create_stream_with_config,  # noqa: F401
                                  destroy_stream, set_stream_failure_mode, stream_query,
                                  synchronize_stream, synchronize_stream_with_timeout)
from ..runtime.api_mdl import stream_add_to_model  # noqa: F401,E402
from ..runtime.api_args import (kernel_args_append,  # noqa: F401,E402
                               kernel_args_append_place_holder, kernel_args_finalize,
                               kernel_args_get_handle_mem_size, kernel_args_get_mem_size,
                               kernel_args_get_place_holder_buffer, kernel_args_init,
                               kernel_args_init_by_user_mem, kernel_args_para_update)
from ..runtime.api_binary import (binary_get_dev_address, binary_get_function,  # noqa: F401,E402
                                  binary_get_function_by_entry, binary_get_global, binary_load,
                                  binary_load_from_data, binary_load_from_file,
                                  binary_set_exception_callback, binary_unload, create_binary,
                                  destroy_binary, register_cpu_func)
from ..runtime.api_function import (function_get_binary,  # noqa: F401,E402
                                    function_get_param_count, function_get_param_info,
                                    get_args_from_exception_info,
                                    get_func_handle_from_exception_info, get_function_addr,
                                    get_function_attribute, get_function_name, get_function_size)
from ..runtime.api_launch import (launch_kernel, launch_kernel_v2,  # noqa: F401,E402
                                  launch_kernel_with_args_array, launch_kernel_with_config,
                                  launch_kernel_with_host_args)
from ..runtime.api_callback import (get_run_mode, launch_callback,  # noqa: F401,E402
                                    process_report, subscribe_report, unsubscribe_report)
from ..runtime.api_event import query_event_wait_status  # noqa: F401,E402
