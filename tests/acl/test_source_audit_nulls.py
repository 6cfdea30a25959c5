"""NULL pointers and check order across the facade, read against the runtime's source (issue
36 item 4, classes 1 and 7; docs/fidelity.md rows 290, 297)."""
from __future__ import annotations

import numpy as np
import pytest

import npusim
from npusim import acl
from npusim import errors as E

from helpers.capture import OK, new_stream

A, P, H = E.ACL_ERROR_INVALID_PARAM, E.ACL_ERROR_RT_PARAM_INVALID, E.ACL_ERROR_RT_INVALID_HANDLE
STALE = 0x7FFF_FFFF_FFFF_FF01          # a handle no object has (odd: never an object's)


@pytest.fixture
def func(dev0):
    lib, ret = acl.rt.binary_load_from_file(npusim.samples.binary_path())
    assert ret == OK
    f, ret = acl.rt.binary_get_function(lib, "EasyOPf")
    assert ret == OK
    return f


@pytest.mark.parametrize("null", [0, None, np.uint64(0)])
def test_kernel_args_init_by_user_mem_null_pointers_are_100000(func, null):
    """``aclrtKernelArgsInitByUserMemImpl`` (kernel.cpp:296-299): funcHandle, argsHandle and
    userHostMem NULL -> ACL_ERROR_INVALID_PARAM; an argsHandle of 0 made a handle before."""
    buf = np.zeros(64, np.uint8)
    assert acl.rt.kernel_args_init_by_user_mem(func, null, buf, 64) == (None, A)
    assert acl.rt.kernel_args_init_by_user_mem(func, buf, null, 64) == (None, A)


def test_kernel_args_para_update_null_param_is_100000(func):
    """``aclrtKernelArgsParaUpdateImpl`` (kernel.cpp:371-374): a NULL ``param`` (the new data)
    is 100000, like the handles; 0 answered 107000 before."""
    args, ret = acl.rt.kernel_args_init(func)
    assert ret == OK
    p, ret = acl.rt.kernel_args_append(args, np.zeros(8, np.uint8), 8)
    assert ret == OK
    assert acl.rt.kernel_args_para_update(args, p, 0, 8) == A
    assert acl.rt.kernel_args_para_update(args, p, None, 8) == A
    assert acl.rt.kernel_args_para_update(args, p, np.ones(8, np.uint8), 8) == OK


def test_exception_info_readers_take_zero_as_null(dev0):
    """``aclrtGet*FromExceptionInfoImpl`` (callback.cpp): a NULL info returns
    ACL_ERROR_INVALID_EXCEPTION_INFO; 0 is NULL (``aclrtGetFuncHandleFromExceptionInfo`` gave
    107000 for 0)."""
    for name in ("get_task_id_from_exception_info", "get_stream_id_from_exception_info",
                 "get_thread_id_from_exception_info", "get_device_id_from_exception_info",
                 "get_error_code_from_exception_info"):
        f = getattr(acl.rt, name)
        assert f(0) == f(None) == 0xFFFFFFFF, name
    f = acl.rt.get_func_handle_from_exception_info
    assert f(0) == f(None)
    assert f(0)[-1] == 0xFFFFFFFF


def test_launch_host_func_checks_the_stream_handle_before_the_function(dev0):
    """``rtsLaunchHostFunc`` validates the stream handle (api_c.cc:4126) before the decorator's
    NULL function check (api_error.cc:7518): a stale stream with a NULL function is 107017
    (was 107000)."""
    assert acl.rt.launch_host_func(STALE, None, None) == H
    assert acl.rt.launch_host_func(new_stream(), None, None) == P


def test_launch_callback_checks_the_stream_handle_before_the_function(dev0):
    """``aclrtLaunchCallbackImpl`` checks the block type (callback.cpp:162-166, 100000), then
    ``rtCallbackLaunch`` the handle (api_c.cc:2187), then the decorator the function
    (api_error.cc:4714)."""
    assert acl.rt.launch_callback(None, None, 7, STALE) == A
    assert acl.rt.launch_callback(None, None, acl.ACL_CALLBACK_BLOCK, STALE) == H
    assert acl.rt.launch_callback(None, None, acl.ACL_CALLBACK_BLOCK, new_stream()) == P


def test_destroy_callbacks_check_the_model_handle_before_the_function(dev0):
    """``rtModelDestroy(Un)registerCallback`` validate the model (api_c_standard_soc.cc:1802,
    1814) before ``ApiErrorDecorator``'s NULL checks (api_error.cc:7021-7024): a stale model
    with a NULL function is 107017 (was 107000); a NULL model stays 107000."""
    assert acl.mdl.ri_destroy_register_callback(STALE, None, None) == H
    assert acl.mdl.ri_destroy_unregister_callback(STALE, 0) == H
    assert acl.mdl.ri_destroy_register_callback(0, print, None) == P
    m, ret = acl.mdl.ri_build_begin(0)
    assert ret == OK
    assert acl.mdl.ri_destroy_register_callback(m, 0, None) == P
    assert acl.mdl.ri_destroy_register_callback(m, print, None) == OK


def test_binary_exception_callback_zero_is_null(func):
    """``aclrtBinarySetExceptionCallbackImpl`` (callback.cpp: ACL_REQUIRES_NOT_NULL on the
    callback) -> 100000 for NULL; a callback of 0 was registered before (and later called)."""
    lib, ret = acl.rt.binary_load_from_file(npusim.samples.binary_path())
    assert ret == OK
    assert acl.rt.binary_set_exception_callback(lib, 0, None) == A
    assert acl.rt.binary_set_exception_callback(lib, None, None) == A
    assert acl.rt.binary_set_exception_callback(lib, print, None) == OK
