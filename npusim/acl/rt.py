"""``acl.rt``: the aclrt* functions (devices, contexts, streams, events, notifies, memory)."""
from __future__ import annotations

from ..runtime.api_device import (create_context, destroy_context,  # noqa: F401
                                  get_current_context, get_device, get_device_count,
                                  get_op_execute_timeout, get_op_time_out_interval, reset_device,
                                  set_current_context, set_device, set_op_execute_time_out,
                                  set_op_execute_time_out_v2, set_op_execute_time_out_with_ms,
                                  synchronize_device)
from ..runtime.api_event import (create_event, create_event_ex_with_flag,  # noqa: F401
                                 create_event_with_flag, create_notify, destroy_event,
                                 destroy_notify, event_elapsed_time, event_get_timestamp,
                                 get_event_avail_num, get_event_id, get_notify_id,
                                 notify_batch_reset, query_event,
                                 query_event_status, query_event_wait_status, record_event,
                                 record_event_with_flag, stream_wait_event_with_flag,
                                 record_notify, reset_event, set_op_wait_timeout,
                                 stream_wait_event, stream_wait_event_with_timeout,
                                 synchronize_event, synchronize_event_with_timeout,
                                 wait_and_reset_notify)
from ..runtime.api_memory import (check_mem_type, free, free_host,  # noqa: F401
                                  free_host_with_dev_sync,
                                  free_with_dev_sync, get_mem_info, malloc, malloc_align32,
                                  malloc_cached, malloc_for_task_scheduler, malloc_host,
                                  malloc_host_with_cfg, malloc_with_cfg, memcpy, memcpy2d, memcpy_async,
                                  memset, memset_async, memset_d32, value_wait, value_write)
from ..runtime.api_stream import (create_stream, create_stream_with_config,  # noqa: F401
                                  ctx_get_current_default_stream, destroy_stream,
                                  get_stream_attribute, get_stream_available_num,
                                  get_stream_overflow_switch, set_stream_attribute,
                                  set_stream_failure_mode, set_stream_overflow_switch,
                                  stream_get_flags, stream_get_id, stream_get_priority,
                                  stream_query, synchronize_stream,
                                  synchronize_stream_with_timeout)
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
                                    launch_host_func,
                                    process_report, subscribe_report, unsubscribe_report)
from ..runtime.api_build import (active_stream, check_arch_compatibility,  # noqa: F401,E402
                                 destroy_stream_force, persistent_task_clean,
                                 reg_stream_state_callback, stream_abort, stream_stop,
                                 switch_stream)
from ..runtime.api_memcopy import (get_mem_usage_info, get_memcpy_desc_size,  # noqa: F401,E402
                                   memcpy2d_async, memcpy_async_with_condition,
                                   memcpy_async_with_desc, memcpy_async_with_offset, memcpy_batch,
                                   memcpy_batch_async, memcpy_batch_async_v2, memcpy_batch_v2,
                                   memset_d32_async, set_memcpy_desc)
from ..runtime.api_exception import (get_device_id_from_exception_info,  # noqa: F401,E402
                                     get_error_code_from_exception_info, get_error_verbose,
                                     get_last_error, get_stream_id_from_exception_info,
                                     get_task_id_from_exception_info,
                                     get_thread_id_from_exception_info, get_thread_last_task_id,
                                     peek_at_last_error, set_exception_info_callback)
from ..runtime.api_launch import (function_get_avail_dyn_ubuf_per_block,  # noqa: F401,E402
                                  get_func_by_symbol, launch_simt_kernel_with_args_array,
                                  launch_simt_kernel_with_host_args)

from ..runtime.api_device import (device_get_stream_priority_range,  # noqa: F401,E402
                                  synchronize_device_with_timeout)
from ..runtime.api_reduce import reduce_async  # noqa: F401,E402
from ..runtime.api_random import random_num_async, task_update_async  # noqa: F401,E402
from ..runtime.api_device import (get_device_res_limit,  # noqa: F401,E402
                                  reset_device_res_limit, set_device_res_limit)
# chapter 11-04 virtual memory management (runtime/api_vmm.py)
from ..runtime.api_vmm import (free_physical, malloc_physical, map_mem,  # noqa: F401,E402
                               mem_get_access, mem_get_address_range,
                               mem_get_allocation_granularity,
                               mem_get_allocation_properties_from_handle, mem_map_no_access,
                               mem_map_selected_link,
                               mem_retain_allocation_handle, mem_set_access, release_mem_address,
                               reserve_mem_address, reserve_mem_address_no_uc_memory, unmap_mem)
# chapter 11-10 stream-ordered memory pools (runtime/api_mempool.py)
from ..runtime.api_mempool import (mem_pool_create, mem_pool_destroy,  # noqa: F401,E402
                                   mem_pool_free_async, mem_pool_get_attr,
                                   mem_pool_malloc_async, mem_pool_set_attr, mem_pool_trim_to)
# chapter 11-11 device variables (runtime/api_symbol.py)
from ..runtime.api_symbol import (get_symbol_address, get_symbol_size,  # noqa: F401,E402
                                  memcpy_from_symbol, memcpy_from_symbol_async, memcpy_to_symbol,
                                  memcpy_to_symbol_async, register_variable)
# chapter 11-05 unified (managed) memory (runtime/api_managed.py)
from ..runtime.api_managed import (mem_alloc_managed, mem_managed_advise,  # noqa: F401,E402
                                   mem_managed_get_attr, mem_managed_get_attrs,
                                   mem_managed_prefetch_async, mem_managed_prefetch_batch_async,
                                   mem_p2p_map, pointer_get_attributes)
from ..runtime.api_refused import BY_DESIGN as _BY_DESIGN  # noqa: E402
from ..runtime.api_refused import facade_name as _facade_name, refusal as _refusal  # noqa: E402

for _c in _BY_DESIGN:                     # refused by design (docs/api_coverage.md): 207000
    if _facade_name(_c).startswith("acl.rt."):
        globals()[_facade_name(_c)[7:]] = _refusal(_c)

# chapters 02-24 beyond the capture surface (issue 36 item 3): callbacks of chapters 04 / 13
from ..runtime.api_devstate import (reg_device_state_callback,  # noqa: F401,E402
                                    set_device_task_abort_callback)
from ..runtime.api_exception import (exception_info_callback_register,  # noqa: F401,E402
                                     exception_info_callback_unregister)
from ..runtime.api_devid import (ctx_get_float_overflow_addr,  # noqa: F401,E402
                                 get_logic_dev_id_by_phy_dev_id,
                                 get_logic_dev_id_by_user_dev_id,
                                 get_phy_dev_id_by_logic_dev_id, get_phy_dev_id_by_user_dev_id,
                                 get_user_dev_id_by_logic_dev_id, get_user_dev_id_by_phy_dev_id)
from ..runtime.api_cntnotify import (cnt_notify_create, cnt_notify_destroy,  # noqa: F401,E402
                                     cnt_notify_get_id, cnt_notify_record, cnt_notify_reset,
                                     cnt_notify_wait_with_timeout)
from ..runtime.api_util import prof_trace  # noqa: F401,E402
# chapter 11 peer access between devices (runtime/api_peer.py, issue 38)
from ..runtime.api_peer import (device_can_access_peer,  # noqa: F401,E402
                                device_disable_peer_access, device_enable_peer_access,
                                device_peer_access_status)
# aclrtResetDeviceForce (issue 39 item 4: the samples' teardown)
from ..runtime.api_device import reset_device_force  # noqa: F401,E402
# aclrtGetResInCurrentThread, aclrtQueryDeviceStatus (issue 39: the samples' context and device
# queries)
from ..runtime.api_device import (get_res_in_current_thread,  # noqa: F401,E402
                                  query_device_status)
# aclrtGetDeviceInfo, aclrtGetDeviceUtilizationRate, the saturation mode and overflow status
# (chapter 04: the samples' device and overflow queries)
from ..runtime.api_device import (get_device_capability, get_device_info,  # noqa: F401,E402
                                  get_device_utilization_rate)
from ..runtime.api_overflow import (get_device_sat_mode, get_overflow_status,  # noqa: F401,E402
                                    reset_overflow_status, set_device_sat_mode)
# labels (chapter 10): jumps within and between the streams of a built model
from ..runtime.api_label import (create_label, create_label_list, destroy_label,  # noqa: F401,E402
                                 destroy_label_list, set_label, switch_label_by_index)
# user memory allocators registered on a stream (chapter 11-08, the 25-03 desc functions)
from ..runtime.api_allocator import (allocator_create_desc,  # noqa: F401,E402
                                     allocator_destroy_desc, allocator_get_by_stream,
                                     allocator_register,
                                     allocator_set_alloc_advise_func_to_desc,
                                     allocator_set_alloc_func_to_desc,
                                     allocator_set_free_func_to_desc,
                                     allocator_set_get_addr_from_block_func_to_desc,
                                     allocator_set_obj_to_desc, allocator_unregister)
