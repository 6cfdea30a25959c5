"""What a synchronize costs the host (docs/timing.md "Synchronize", docs/fidelity.md row 330):
the host returns ``cqe_report_ns + host_sync_ns`` after the end of the work it waited for, or
``host_sync_ns`` after the call when that work had already ended — so the host clock after a
synchronize keeps the kernels' durations, however short."""
import pytest

import npusim


def _launch_then(sync: str, kernel_ns: int, profile: str = "Ascend910B"):
    """(host time at the synchronize call, host time after it, end of the kernel) for one
    kernel of ``kernel_ns`` followed by a synchronize of kind ``sync``."""
    npusim.reset()
    npusim.configure(trace=True)
    dev = npusim.Device(profile)
    s, x = dev.stream(), dev.malloc(64)
    ev = dev.event()
    s.launch("EasyOPf", 1, (x,), duration_ns=kernel_ns)
    if sync == "event":
        s.record(ev)
    t_call = dev.now_ns
    {"stream": s.synchronize, "device": dev.synchronize, "event": ev.synchronize}[sync]()
    t_after = dev.now_ns
    rows = dev.trace().rows
    end = int(rows["end"][rows["op"] == 1].max())
    return t_call, t_after, end


@pytest.mark.parametrize("sync", ["stream", "device", "event"])
@pytest.mark.parametrize("profile", ["Ascend910B", "Ascend310P"])
def test_the_host_clock_after_a_synchronize_follows_the_kernel_duration(sync, profile):
    short = _launch_then(sync, 500, profile)
    long = _launch_then(sync, 2_000, profile)
    assert short[0] == long[0]                           # the same host time at the call
    assert long[1] - short[1] == 2_000 - 500             # additive: the difference survives


@pytest.mark.parametrize("sync", ["stream", "device"])
def test_a_waiting_synchronize_returns_report_plus_call_after_the_work(sync):
    t = npusim.profiles.get_profile("Ascend910B").timing
    t_call, t_after, end = _launch_then(sync, 4_000)
    assert end > t_call                                  # it had to wait
    assert t_after == end + t.cqe_report_ns + t.host_sync_ns


def test_a_synchronize_with_nothing_left_to_wait_for_costs_the_call():
    t = npusim.profiles.get_profile("Ascend910B").timing
    npusim.reset()
    dev = npusim.Device("Ascend910B")
    s, x = dev.stream(), dev.malloc(64)
    s.launch("EasyOPf", 1, (x,), duration_ns=500)
    s.synchronize()
    t0 = dev.now_ns
    s.synchronize()                                      # the work ended before this call
    assert dev.now_ns - t0 == t.host_sync_ns
    dev.synchronize()
    assert dev.now_ns - t0 == 2 * t.host_sync_ns


def test_a_timeout_compares_the_time_waited_not_the_call():
    """aclrtSynchronizeStreamWithTimeout: 1 ms against a kernel that ends 0.5 ms after the call
    succeeds even though the call's own cost comes on top."""
    npusim.reset()
    dev = npusim.Device("Ascend910B")
    s, x = dev.stream(), dev.malloc(64)
    s.launch("EasyOPf", 1, (x,), duration_ns=500_000)
    assert npusim.acl.rt.synchronize_stream_with_timeout(s.handle, 1) == 0
    s.launch("EasyOPf", 1, (x,), duration_ns=2_000_000)
    assert npusim.acl.rt.synchronize_stream_with_timeout(s.handle, 1) == 507046
