"""Chapter 14's SIMT launches, the dynamic UB per block and aclrtGetFuncBySymbol: success, the
runtime's codes in order, the device args a SIMT kernel gets (the implicit parameters first) and
a SIMT launch captured into a graph (docs/fidelity.md row 108)."""
from __future__ import annotations

import numpy as np
import pytest

import npusim
from npusim import acl
from npusim.kernel.elfwrite import KernelSpec, ParamSpec, write_elf
from npusim.runtime.runtime import RT

from helpers.acl import in_fresh_thread
from helpers.capture import begin, end, new_stream, run
from helpers.kernel import E_ACL, E_CTX, E_HANDLE, E_PARAM, OK, out

INVALID_DEVICE_FUNCTION = acl.ACL_ERROR_RT_INVALID_DEVICE_FUNCTION


@pytest.fixture
def chip950():
    npusim.reset()
    npusim.configure(profile="Ascend950")
    acl.init()
    acl.rt.set_device(0)
    yield
    npusim.reset()
    npusim.configure(profile="Ascend910B")


def _load(**kw):
    binary = out(*acl.rt.binary_load_from_data(write_elf([KernelSpec("k", b"\0" * 16, **kw)])))
    return out(*acl.rt.binary_get_function(binary, "k"))


def _simt(share=1024):
    return _load(aiv_type=3, share_mem_size=share, params=[ParamSpec(0, 8), ParamSpec(8, 8)])


def _last_kernel_args(stream):
    """(args bytes, blocks) of the stream's last task (a kernel)."""
    s = RT.handles.get("stream", stream)[0]
    st = s.device.state
    st.flush()
    row = st.pool[st.row_of(s.sq, s.tail - 1)]
    return st.mem.view(int(row["a1"]), int(row["a2"])).tobytes(), int(row["blocks"])


def test_simt_host_args_put_the_implicit_parameters_first(chip950):
    f = _simt()
    s = new_stream()
    args = np.array([0x1111, 0x2222], np.uint64)
    assert acl.rt.launch_simt_kernel_with_host_args(f, (2, 3, 1), (32, 2, 1), 4096, s, None,
                                                    args.tobytes(), 16, [(8, 0)]) == OK
    data, blocks = _last_kernel_args(s)
    assert blocks == 6
    assert data[:8] == bytes(8)
    assert np.frombuffer(data[8:32], np.uint32).tolist() == [1, 2, 32, 1, 3, 2]
    user = np.frombuffer(data[32:], np.uint64)
    s_obj = RT.handles.get("stream", s)[0]
    st = s_obj.device.state
    row = st.pool[st.row_of(s_obj.sq, s_obj.tail - 1)]
    assert user[0] == 0x1111 and user[1] == int(row["a1"]) + 32   # the placeholder, patched
    assert args.tolist() == [0x1111, 0x2222]                      # the caller's buffer as it was
    assert acl.rt.synchronize_stream(s) == OK


def test_simt_args_array_and_capture(chip950):
    f = _simt()
    s, x = new_stream(), new_stream()
    a, b = np.array([7], np.uint64), np.array([9], np.uint64)
    assert acl.rt.launch_simt_kernel_with_args_array(f, 4, (8, 1, 1), 0, s, None, [a, b]) == OK
    data, blocks = _last_kernel_args(s)
    assert blocks == 4 and np.frombuffer(data[32:], np.uint64).tolist() == [7, 9]
    mh = begin(s)
    assert acl.rt.launch_simt_kernel_with_args_array(f, {"x": 2, "y": 1, "z": 1}, 16, 0, s,
                                                     None, [a, b]) == OK
    end(s)
    run(mh, x)


def test_simt_codes_in_order(chip950):
    f, plain = _simt(), _load(params=[ParamSpec(0, 8)])
    s = new_stream()
    L = acl.rt.launch_simt_kernel_with_host_args
    buf = bytes(16)
    assert L(0, 1, 1, 0, s, None, buf, 16) == E_ACL
    assert L(f, 1, 1, 0, s, None, None, 16) == E_ACL
    assert L(f, 1, 1, 0, s, None, buf, 0) == E_ACL
    assert L(f, 1, 1, 0, 0x7777, None, buf, 16) == E_HANDLE          # the stream first
    assert L(0x7777, 1, 1, 0, 0x7771, None, buf, 16) == E_HANDLE
    assert L(plain, 1, 1, 0, s, None, buf, 16) == E_PARAM            # not a SIMT kernel
    assert L(_load(aiv_type=3), 1, 1, 0, s, None, buf, 16) == E_PARAM   # no PARAM_SUMMARY
    assert L(f, (1, 0, 1), 1, 0, s, None, buf, 16) == E_PARAM
    assert L(f, 1, (0, 1, 1), 0, s, None, buf, 16) == E_PARAM
    assert L(f, 1, 1, 0, s, None, buf, 16, None, 1) == E_PARAM       # a count, no array
    assert L(f, 1, 1, 0, s, None, buf, 16, [(16, 0)]) == E_PARAM     # offset >= argsSize
    assert L(f, 1, 1, 230 * 1024, s, None, buf, 16) == E_PARAM       # over the SIMT UB
    assert L(f, (300, 300, 1), 1, 0, s, None, buf, 16) == E_PARAM            # numBlocks is uint16
    assert in_fresh_thread(L, f, 1, 1, 0, None, None, buf, 16) == E_CTX
    A = acl.rt.launch_simt_kernel_with_args_array
    assert A(0, 1, 1, 0, s, None, []) == E_ACL
    assert A(f, 1, 1, 0, s, None, None) == E_PARAM
    assert A(f, 1, 1, 0, s, None, [np.zeros(1, np.uint64), None]) == E_PARAM
    assert acl.rt.synchronize_stream(s) == OK


def test_simt_launch_on_a_chip_without_simt_is_107000(dev0):
    f = _simt()
    assert acl.rt.launch_simt_kernel_with_host_args(f, 1, 1, 0, None, None, bytes(16), 16) == \
        E_PARAM


def test_avail_dyn_ubuf_per_block(dev0):
    f = acl.rt.function_get_avail_dyn_ubuf_per_block
    assert f(_simt(1024), 0) == (224 * 1024 - 1024, OK)
    assert f(_load(), 0) == (0, OK)                                   # not SIMT: 0
    assert f(_simt(230 * 1024), 0) == (None, E_PARAM)
    assert f(0, 0) == (None, E_ACL)
    assert f(_simt(), 1) == (None, E_ACL)
    assert f(0x7777, 0) == (None, E_HANDLE)


def test_get_func_by_symbol(dev0):
    h, ret = acl.rt.get_func_by_symbol("EasyOPf")
    assert ret == OK
    assert acl.rt.get_function_name(h, 64) == ("EasyOPf", OK)
    assert acl.rt.get_func_by_symbol("EasyOPf")[0] == h
    assert acl.rt.get_func_by_symbol("no_such_kernel") == (None, INVALID_DEVICE_FUNCTION)
    assert acl.rt.get_func_by_symbol(None) == (None, E_ACL)
    assert acl.rt.get_func_by_symbol(12345) == (None, INVALID_DEVICE_FUNCTION)
    assert in_fresh_thread(acl.rt.get_func_by_symbol, "EasyOPf") == (None, E_CTX)
