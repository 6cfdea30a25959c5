"""Chip profiles (npusim.profiles): spec values, aliases, overrides."""
import dataclasses

import pytest

from npusim import profiles as P

SPEC = {  # spec/aclgraph.md §11, spec/kernel.md §8, config/*/dev_info_reg.cc
    "Ascend910B": dict(aic_cores=25, aiv_cores=50, rtsq_depth=2048, expand_stream_rsv_task_num=0,
                       additional_sqe_num=1, sq_depth_adapt=0, task_prefetch_count=8,
                       max_physical_streams=2038, max_streams=32768, max_task_num_per_stream=2013,
                       stub_event_count=65536, software_sq=True, is_v200=False),
    "Ascend910_93": dict(aic_cores=25, aiv_cores=50, rtsq_depth=2048, expand_stream_rsv_task_num=0,
                         additional_sqe_num=1, sq_depth_adapt=0, task_prefetch_count=8,
                         max_physical_streams=2038, max_streams=32768, max_task_num_per_stream=2013,
                         stub_event_count=65536, software_sq=True, is_v200=False),
    "Ascend950": dict(aic_cores=36, aiv_cores=72, rtsq_depth=2049, expand_stream_rsv_task_num=8,
                      additional_sqe_num=8, sq_depth_adapt=7, task_prefetch_count=8,
                      max_physical_streams=2016, max_streams=65535, max_task_num_per_stream=2014,
                      stub_event_count=131072, software_sq=True, is_v200=True),
    "Ascend310P": dict(rtsq_depth=2048, expand_stream_rsv_task_num=0, additional_sqe_num=0,
                       sq_depth_adapt=0, task_prefetch_count=10, max_physical_streams=992,
                       max_streams=992, max_task_num_per_stream=2042, stub_event_count=1024,
                       software_sq=False, is_v200=False),
}


@pytest.mark.parametrize("name", list(SPEC))
def test_profile_matches_spec(name):
    p = P.PROFILES[name]
    assert {k: getattr(p, k) for k in SPEC[name]} == SPEC[name]


@pytest.mark.parametrize("name", list(SPEC))
def test_common_capture_constants(name):
    p = P.PROFILES[name]
    assert (p.capture_sq_depth_swsq, p.capture_reserve, p.sqcq_pool, p.hw_event_reserve,
            p.max_dev_num) == (32768, 32, 1024, 8192, 64)


def test_only_swsq_chips_have_cond_and_update():
    for p in P.PROFILES.values():
        assert p.acl_graph
        assert p.cond_supported == p.model_update_supported == p.software_sq


def test_310p_has_no_task_value_wait():
    assert not P.Ascend310P.has_task_value_wait
    assert P.Ascend910B.has_task_value_wait and P.Ascend950.has_task_value_wait


def test_event_and_notify_budgets():
    assert (P.Ascend910B.max_events, P.Ascend910B.max_notifies) == (65536, 8192)
    assert (P.Ascend950.max_events, P.Ascend950.max_notifies) == (65536, 65535)
    assert (P.Ascend310P.max_events, P.Ascend310P.max_notifies) == (1023, 1024)


def test_hbm_is_the_chips():
    # platform_config/*.ini memory_size (the arena is reserved address space: docs/fidelity.md #260)
    assert P.Ascend910B.hbm_bytes == P.Ascend910_93.hbm_bytes == 64 * P.GiB
    assert P.Ascend950.hbm_bytes == 128 * P.GiB
    assert P.Ascend310P.hbm_bytes == 24_000_000_000
    for p in P.PROFILES.values():
        assert p.host_pinned_bytes == 1 * P.GiB


def test_timing_constants_are_positive_ints():
    for p in P.PROFILES.values():
        for f in dataclasses.fields(P.Timing):
            v = getattr(p.timing, f.name)
            assert isinstance(v, int) and v > 0, (p.name, f.name)


def test_950_is_faster_than_910b():
    a2, t950 = P.Ascend910B.timing, P.Ascend950.timing
    assert t950.host_kernel_launch_ns < a2.host_kernel_launch_ns
    assert t950.sqe_dispatch_graph_ns < a2.sqe_dispatch_graph_ns


def test_graph_dispatch_cheaper_than_eager():
    for p in P.PROFILES.values():
        assert p.timing.sqe_dispatch_graph_ns < p.timing.sqe_dispatch_eager_ns
        assert p.timing.host_capture_task_ns < p.timing.host_kernel_launch_ns


def test_kernel_ns_counts_waves_and_blocks():
    t = P.Timing()
    assert t.kernel_ns(25, 25) == t.kernel_default_ns + 25 * t.kernel_per_block_ns
    assert t.kernel_ns(26, 25) == 2 * t.kernel_default_ns + 26 * t.kernel_per_block_ns
    assert t.kernel_ns(1, 25, body_ns=7) == 7 + t.kernel_per_block_ns


def test_fixed_cost_by_op_covers_opcode_names():
    costs = P.Timing().fixed_cost_by_op()
    assert costs["STREAM_ACTIVE"] == P.Timing().stream_active_ns
    assert {"NOP", "KERNEL", "MEMCPY", "COND_FIRST", "SQE_UPDATE", "END_GRAPH"} <= set(costs)


@pytest.mark.parametrize("alias,name", [
    ("A2", "Ascend910B"), ("910B", "Ascend910B"), ("a3", "Ascend910_93"), ("910_93", "Ascend910_93"),
    ("950", "Ascend950"), ("310P", "Ascend310P"), ("ascend950", "Ascend950"), ("Ascend310P", "Ascend310P"),
])
def test_aliases(alias, name):
    assert P.get_profile(alias).name == name


def test_default_profile():
    assert P.DEFAULT_PROFILE == "Ascend910B"
    assert P.get_profile() is P.Ascend910B


def test_get_profile_passes_profile_through():
    assert P.get_profile(P.Ascend950) is P.Ascend950


def test_unknown_profile_lists_valid_names():
    with pytest.raises(KeyError) as ei:
        P.get_profile("H100")
    msg = str(ei.value)
    assert "H100" in msg and all(n in msg for n in P.PROFILES) and "A2" in msg


def test_with_timing_overrides_copy_only():
    p = P.Ascend910B.with_timing(doorbell_ns=7, host_kernel_launch_ns=9)
    assert (p.timing.doorbell_ns, p.timing.host_kernel_launch_ns) == (7, 9)
    assert p.timing.nop_ns == P.Ascend910B.timing.nop_ns
    assert P.Ascend910B.timing.doorbell_ns != 7
    assert p.rtsq_depth == P.Ascend910B.rtsq_depth


def test_with_timing_rejects_unknown_name():
    with pytest.raises(TypeError):
        P.Ascend910B.with_timing(no_such_ns=1)


def test_profiles_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        P.Ascend910B.rtsq_depth = 1
