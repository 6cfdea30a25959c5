"""The hand-marshalled C functions (npusim/cabi/special.py) and the exception callback through
C (docs/cabi.md "Design")."""
from __future__ import annotations

import npusim.samples

ZERO = ("set_device", "granularity", "malloc_physical", "reserve", "map", "set_access", "h2d",
        "d2h", "unmap", "release", "free_physical", "exchange", "exchange_back",
        "error_verbose", "set_exception_cb", "create_stream", "load", "get_function",
        "malloc_args", "launch", "get_version", "set_stream_attr", "get_stream_attr", "get_easy",
        "function_name", "malloc_x", "memset_x", "pointer_attributes", "launch_host_args",
        "sync_host_args", "d2h_x", "get_access", "prop_from_handle", "check_mem_type",
        "read_elf", "load_from_data", "get_easy2", "unload2", "notify0", "notify1",
        "notify_batch_reset", "destroy_notify0", "destroy_notify1")


def test_structs_inout_and_exception_callback(run_c):
    r = run_c("misc", str(npusim.samples.binary_path()))
    err = r.pop("__stderr__")
    assert not {k: r[k] for k in ZERO if r[k]}, err
    # aclrtPhysicalMemProp read field by field; the granularity written back; NULL outputs 100000
    assert r["granularity_positive"] == 1 and r["granularity_null"] == 100000
    assert r["malloc_physical_null_prop"] == 100000
    assert r["vmm_bytes"] == 1                    # the access descriptor opened the mapping
    # the in/out mode: the old mode written back each time
    assert r["old_mode"] == 0 and r["new_mode"] == 2 and r["exchange_null"] == 100000
    assert r["error_type"] == 0                   # ACL_RT_NO_ERROR, the struct written
    assert r["version_set"] == 1                  # three outputs written back
    assert r["set_stream_attr_null"] == 107000 and r["failure_mode"] == 1   # the union member
    assert r["function_name_ok"] == 1 and r["function_name_short"] == 107000   # a str output
    assert r["pointer_is_device"] == 1            # the attribute struct written
    assert r["host_args_result"] == 1             # host arguments from the caller's buffer
    assert r["access_read"] == 1 and r["prop_read"] == 1 and r["check_result"] == 1
    # aclrtBinaryLoadFromData copied the bytes at the call (the buffer was then cleared, freed)
    assert r["load_from_data_empty"] == 107000 and r["notify_batch_reset_zero"] == 107000
    # a trapping kernel: the C exception callback ran once, with an info the getters read
    assert r["sync_failed"] == 1 and r["exception_calls"] == 1 and r["exception_device"] == 0
    assert r["exception_thread"] == 1


def test_kernel_args_config_batch_copy_and_async_pinned_copy(run_c):
    r = run_c("args", str(npusim.samples.binary_path()))
    err = r.pop("__stderr__")
    # NULL param with a size: the facade's code; an unknown launch attribute id: 107000
    assert r.pop("args_append_null") == 100000 and r.pop("launch_bad_attr") == 107000
    # two eager launches + two replays of one captured launch, read back through pinned memory
    assert r.pop("result") == 1, err
    # aclrtMemcpyBatch: arrays and attribute structs read from C memory, failIndex written
    assert r.pop("batch_result") == 1, err
    assert r.pop("memcpy_batch_rsv") == 100000            # a non-zero rsv byte (facade's rule)
    assert r.pop("memcpy_batch_null_fail") == 100000      # a NULL output pointer
    # tasks: the count query, the array written (NULL-padded), a NULL count 107000, a stream still
    # capturing 107000; a kernel task's parameters read into and set from aclmdlRITaskParams
    assert r.pop("ntask") == 1 and r.pop("tasks_written") == 1
    assert r.pop("tasks_null_count") == 107000 and r.pop("tasks_capturing_stream") == 107000
    assert r.pop("streams_written") == 1 and r.pop("task_is_kernel") == 1
    assert r.pop("task_set_params_null") == 107000 and r.pop("task_get_params_null") == 100000
    assert r.pop("task_updated") == 1
    assert r.pop("task_attribute_null") == 100000
    assert not {k: v for k, v in r.items() if v}, err
