"""The Pythonic API over the eager runtime: objects over handles, AclError exceptions over codes
(design.md §3.2)."""
from __future__ import annotations

import numpy as np
import pytest

import npusim
from npusim import acl, errors


@pytest.fixture
def dev():
    return npusim.Device()


def test_device_defaults_to_ascend910b(dev):
    assert dev.profile.name == "Ascend910B"
    assert dev.id == 0


def test_device_with_other_profile_starts_fresh_simulator(dev):
    d = npusim.Device("Ascend950")
    assert d.profile.name == "Ascend950"


def test_buffer_write_read_round_trip(dev):
    b = dev.malloc(64)
    b.write(np.arange(16, dtype=np.uint32))
    assert list(b.read(np.uint32)) == list(range(16))


def test_buffer_is_a_kernel_argument(dev):
    s, b = dev.stream(), dev.malloc(64).fill(0)
    s.launch("EasyOPf", blocks=4, args=(b,))
    s.synchronize()
    assert list(b.read(np.uint32, 5)) == [1, 1, 1, 1, 0]


def test_kernels_compose_in_stream_order(dev):
    s, b = dev.stream(), dev.malloc(64).fill(0)
    for k in ("EasyOPf", "EasyOPf", "ShortOPf", "EasyOPf"):
        s.launch(k, args=(b,))
    s.synchronize()
    assert b.read(np.uint32, 1)[0] == 5


def test_vector_add_kernel_computes(dev):
    n = 256
    a, c, d = dev.malloc(4 * n), dev.malloc(4 * n), dev.malloc(4 * n)
    a.write(np.arange(n, dtype=np.float32))
    c.write(np.ones(n, np.float32))
    s = dev.stream()
    s.launch("VectorAddKernel", blocks=1, args=(a, c, d, 0.5, n))
    s.synchronize()
    assert np.allclose(d.read(np.float32), np.arange(n) + 0.5)


def test_default_stream_launch(dev):
    b = dev.malloc(64).fill(0)
    dev.launch("EasyOPf", None, 1, (b,))
    dev.default_stream.synchronize()
    assert b.read(np.uint32, 1)[0] == 1


def test_device_synchronize_waits_for_all_streams(dev):
    b = dev.malloc(64).fill(0)
    for i in range(3):
        dev.stream().launch("EasyOPf", args=(int(b) + 4 * i,))
    dev.synchronize()
    assert list(b.read(np.uint32, 3)) == [1, 1, 1]


def test_stream_query_reflects_progress(dev):
    s = dev.stream()
    s.launch("LongOPf", args=(dev.malloc(64),))
    assert not s.query()
    s.synchronize()
    assert s.query()


def test_now_ns_moves_on_synchronize(dev):
    s = dev.stream()
    s.launch("LongOPf", args=(dev.malloc(64),))
    before = dev.now_ns
    s.synchronize()
    assert dev.now_ns - before >= 50_000_000


def test_event_record_synchronize_and_elapsed(dev):
    s, b = dev.stream(), dev.malloc(64)
    start, end = dev.event(), dev.event()
    s.record(start)
    s.launch("EasyOPf", args=(b,), duration_ns=2_000_000)
    s.record(end)
    end.synchronize()
    assert end.query()
    assert 2.0 <= start.elapsed_ms(end) < 2.1


def test_stream_wait_orders_two_streams(dev):
    s1, s2, b = dev.stream(), dev.stream(), dev.malloc(64).fill(0)
    e = dev.event()
    s1.launch("EasyOPf", args=(b,), duration_ns=1_000_000)
    s1.record(e)
    s2.wait(e)
    s2.launch("ShortOPf", args=(b,))
    s2.synchronize()
    assert b.read(np.uint32, 1)[0] == 2


def test_stream_copy_with_pinned_memory(dev):
    s, b, h = dev.stream(), dev.malloc(64), dev.malloc_host(64)
    h.write(np.arange(16, dtype=np.uint32))
    s.copy(b, h, 64)
    s.synchronize()
    assert list(b.read(np.uint32)) == list(range(16))


def test_buffer_fill_on_stream(dev):
    s, b = dev.stream(), dev.malloc(64)
    b.fill(3, stream=s)
    s.synchronize()
    assert (b.read() == 3).all()


def test_kernel_trap_raises_kernel_error_with_detail(dev):
    s = dev.stream()
    s.launch("ErrorOPf")
    with pytest.raises(errors.KernelError) as info:
        s.synchronize()
    assert info.value.code == 507035
    assert info.value.name == "ACL_ERROR_RT_VECTOR_CORE_EXCEPTION"
    assert "ErrorOPf" in info.value.detail


def test_out_of_bounds_kernel_raises_kernel_error_naming_the_address(dev):
    s = dev.stream()
    s.launch("EasyOPf", args=(0x1000,))
    with pytest.raises(errors.KernelError) as info:
        s.synchronize()
    assert "out-of-bounds" in info.value.detail and "0x1000" in info.value.detail


def test_stream_usable_after_kernel_error(dev):
    s, b = dev.stream(), dev.malloc(64).fill(0)
    s.launch("ErrorOPf")
    with pytest.raises(errors.KernelError):
        s.synchronize()
    s.launch("EasyOPf", args=(b,))
    s.synchronize()
    assert b.read(np.uint32, 1)[0] == 1


def test_destroyed_stream_raises_handle_error(dev):
    s = dev.stream()
    s.destroy()
    with pytest.raises(errors.HandleError) as info:
        s.synchronize()
    assert info.value.code == 107017


def test_usage_error_does_not_carry_an_old_device_explanation(dev):
    s = dev.stream()
    s.launch("ErrorOPf")
    assert acl.rt.synchronize_stream(s.handle) == 507035        # facade: detail not consumed
    s.destroy()
    with pytest.raises(errors.HandleError) as info:
        s.synchronize()
    # the code's own advice (lint.ADVICE), not the older kernel fault's explanation
    assert "ErrorOPf" not in info.value.detail and "stale" in info.value.detail


def test_double_free_raises_param_error(dev):
    b = dev.malloc(64)
    b.free()
    with pytest.raises(errors.ParamError) as info:
        b.free()
    assert info.value.code == 107000


def test_unknown_kernel_name_raises_param_error(dev):
    with pytest.raises(errors.ParamError) as info:
        dev.stream().launch("NoSuchKernel")
    assert info.value.code == 107000


def test_device_reset_past_zero_raises(dev):
    dev.reset()
    with pytest.raises(npusim.AclError) as info:
        dev.reset()
    assert info.value.code == 507007


def test_launch_without_context_raises_context_error(dev):
    dev.reset()
    with pytest.raises(errors.ContextError) as info:
        dev.launch("EasyOPf", None, 1, (0,))
    assert info.value.code == 107002


def test_task_group_and_task_update_context_managers():
    import npusim
    dev = npusim.Device("Ascend910B")
    s, u = dev.stream(), dev.stream()
    q, k = dev.malloc(64).fill(0), dev.malloc(64).fill(0)
    with npusim.graph(s) as g:
        with npusim.task_group(s) as tg:
            s.launch("EasyOPf", 1, args=(q,))
    assert tg.handle
    assert g.num_tasks > 1                      # the group's prefetch NOPs count too
    with tg.update(u):
        u.launch("EasyOPf", 1, args=(k,))
    u.synchronize()
    g.replay(s)
    s.synchronize()
    with npusim.task_update(u, tg.handle):
        u.launch("EasyOPf", 1, args=(q,))
    u.synchronize()
    g.replay(s)
    s.synchronize()
    assert (int(q.read(np.uint32, 1)[0]), int(k.read(np.uint32, 1)[0])) == (1, 1)
    with pytest.raises(errors.InternalError, match="no kernel was launched"):
        with npusim.task_update(u, tg):
            pass


def test_stream_reset_exists_and_is_documented():
    import npusim
    assert "aclrtResetEvent" in npusim.Stream.reset.__doc__
