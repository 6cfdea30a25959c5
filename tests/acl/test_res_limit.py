"""aclrtSet/Get/ResetDeviceResLimit (docs/zh/api_ref/03_runtime_configuration.md; check order of
src/runtime/api/api_c_device.cc:167-207 and api_error.cc:6749-6794, value bound of
ApiImpl::SetDeviceResLimit api_impl.cc:7827-7848): codes, state after a failure, and kernels
started after a limit running their blocks in ceil(blocks / limit) waves over the limited unit."""
from __future__ import annotations

import pytest

import npusim
from npusim import acl
from npusim.profiles import get_profile

CUBE, VEC = acl.ACL_RT_DEV_RES_CUBE_CORE, acl.ACL_RT_DEV_RES_VECTOR_CORE
P = get_profile("Ascend910B")          # the default profile: 25 cube, 50 vector cores


@npusim.kernel
def vec_k(mem, ctx, b, nb):
    pass


@npusim.kernel(unit="aic")
def cube_k(mem, ctx, b, nb):
    pass


def test_constants_are_the_header_values():
    assert (CUBE, VEC) == (0, 1)


def test_get_defaults_to_the_hardware_counts(dev0):
    assert acl.rt.get_device_res_limit(0, CUBE) == (P.aic_cores, acl.ACL_SUCCESS)
    assert acl.rt.get_device_res_limit(0, VEC) == (P.aiv_cores, acl.ACL_SUCCESS)


def test_set_get_reset(dev0):
    assert acl.rt.set_device_res_limit(0, CUBE, 4) == acl.ACL_SUCCESS
    assert acl.rt.set_device_res_limit(0, VEC, 9) == acl.ACL_SUCCESS
    assert acl.rt.set_device_res_limit(0, VEC, 7) == acl.ACL_SUCCESS     # the last one wins
    assert acl.rt.get_device_res_limit(0, CUBE) == (4, acl.ACL_SUCCESS)
    assert acl.rt.get_device_res_limit(0, VEC) == (7, acl.ACL_SUCCESS)
    assert acl.rt.set_device_res_limit(0, CUBE, P.aic_cores) == acl.ACL_SUCCESS   # the bound
    assert acl.rt.set_device_res_limit(0, CUBE, 0) == acl.ACL_SUCCESS    # no lower bound
    assert acl.rt.get_device_res_limit(0, CUBE) == (0, acl.ACL_SUCCESS)
    assert acl.rt.reset_device_res_limit(0) == acl.ACL_SUCCESS
    assert acl.rt.get_device_res_limit(0, CUBE) == (P.aic_cores, acl.ACL_SUCCESS)
    assert acl.rt.get_device_res_limit(0, VEC) == (P.aiv_cores, acl.ACL_SUCCESS)


def test_codes_in_check_order(dev0):
    inv_dev, inv, setup = (acl.ACL_ERROR_RT_INVALID_DEVICEID, acl.ACL_ERROR_RT_PARAM_INVALID,
                           acl.ACL_ERROR_RT_DEV_SETUP_ERROR)
    n = acl.rt.get_device_count()[0]
    # a negative id before the type; the type before an id beyond the devices
    assert acl.rt.set_device_res_limit(-1, 5, 1 << 20) == inv_dev
    assert acl.rt.set_device_res_limit(n, 2, 1) == inv
    assert acl.rt.set_device_res_limit(0, -1, 1) == inv
    assert acl.rt.set_device_res_limit(n, CUBE, 1 << 20) == inv_dev
    assert acl.rt.set_device_res_limit(0, CUBE, P.aic_cores + 1) == inv
    assert acl.rt.set_device_res_limit(0, VEC, P.aiv_cores + 1) == inv
    assert acl.rt.set_device_res_limit(0, CUBE, -1) == inv             # not a uint32_t
    assert acl.rt.get_device_res_limit(-1, 9) == (None, inv_dev)
    assert acl.rt.get_device_res_limit(0, 2) == (None, inv)
    assert acl.rt.get_device_res_limit(n, CUBE) == (None, inv_dev)
    assert acl.rt.reset_device_res_limit(-1) == inv_dev
    assert acl.rt.reset_device_res_limit(n) == inv_dev
    if n > 1:                                   # a valid id not opened: Runtime::GetDevice NULL
        assert acl.rt.set_device_res_limit(1, CUBE, 1) == setup
        assert acl.rt.get_device_res_limit(1, CUBE) == (None, setup)
        assert acl.rt.reset_device_res_limit(1) == setup
    # nothing changed
    assert acl.rt.get_device_res_limit(0, CUBE) == (P.aic_cores, acl.ACL_SUCCESS)
    assert acl.rt.get_device_res_limit(0, VEC) == (P.aiv_cores, acl.ACL_SUCCESS)


def test_a_failed_set_keeps_the_previous_limit(dev0):
    assert acl.rt.set_device_res_limit(0, VEC, 3) == acl.ACL_SUCCESS
    assert acl.rt.set_device_res_limit(0, VEC, P.aiv_cores + 1) == acl.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.set_device_res_limit(0, 2, 1) == acl.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.get_device_res_limit(0, VEC) == (3, acl.ACL_SUCCESS)


def test_a_released_device_is_refused_and_starts_over_when_set_again(dev0):
    assert acl.rt.set_device_res_limit(0, CUBE, 2) == acl.ACL_SUCCESS
    assert acl.rt.reset_device(0) == acl.ACL_SUCCESS       # the fixture's one aclrtSetDevice
    assert acl.rt.get_device_res_limit(0, CUBE) == (None, acl.ACL_ERROR_RT_DEV_SETUP_ERROR)
    assert acl.rt.set_device_res_limit(0, CUBE, 2) == acl.ACL_ERROR_RT_DEV_SETUP_ERROR
    assert acl.rt.set_device(0) == acl.ACL_SUCCESS
    assert acl.rt.get_device_res_limit(0, CUBE) == (P.aic_cores, acl.ACL_SUCCESS)


def _body_ns(dev, fn, blocks):
    """The device time of one ``blocks``-block launch of ``fn`` (trace row minus dispatch)."""
    s = dev.stream()
    rows0 = len(dev.trace().rows)
    fn.launch(s, blocks, ())
    s.synchronize()
    r = dev.trace().rows[rows0:]
    r = r[r["op"] == 1]
    assert len(r) == 1
    return int(r["end"][0] - r["start"][0]) - dev.profile.timing.sqe_dispatch_eager_ns


@pytest.mark.parametrize("unit,res,fn", [("aiv", VEC, "vec_k"), ("aic", CUBE, "cube_k")])
def test_launches_run_in_waves_over_the_limit_and_back_after_reset(unit, res, fn):
    npusim.configure(trace=True)
    dev = npusim.Device("Ascend910B")
    t = dev.profile.timing
    f = npusim.load_binary({"vec_k": vec_k, "cube_k": cube_k}[fn])[fn]
    cores = P.aic_cores if unit == "aic" else P.aiv_cores
    other = VEC if res == CUBE else CUBE
    n = 2 * cores                                # two waves on the whole unit

    def expect(waves):
        return waves * t.kernel_default_ns + n * t.kernel_per_block_ns

    assert _body_ns(dev, f, n) == expect(2)
    assert acl.rt.set_device_res_limit(0, res, 7) == acl.ACL_SUCCESS
    assert acl.rt.set_device_res_limit(0, other, 1) == acl.ACL_SUCCESS   # the other unit's
    assert _body_ns(dev, f, n) == expect(-(-n // 7))
    assert acl.rt.set_device_res_limit(0, res, 0) == acl.ACL_SUCCESS     # runs on one core
    assert _body_ns(dev, f, n) == expect(n)
    assert acl.rt.reset_device_res_limit(0) == acl.ACL_SUCCESS
    assert _body_ns(dev, f, n) == expect(2)


def test_a_roofline_cost_divides_its_flops_over_the_limited_cores():
    npusim.configure(trace=True)
    dev = npusim.Device("Ascend910B")
    t = dev.profile.timing
    s = dev.stream()
    x = dev.malloc(256).fill(0)                  # EasyOPf writes one u32 per block
    npusim.set_kernel_cost("EasyOPf", cost=npusim.roofline(flops=lambda blocks, ptr: 1e9))
    try:
        def body(blocks):
            rows0 = len(dev.trace().rows)
            s.launch("EasyOPf", blocks, (x,))
            s.synchronize()
            r = dev.trace().rows[rows0:]
            r = r[r["op"] == 1]
            return int(r["end"][0] - r["start"][0]) - t.sqe_dispatch_eager_ns

        def want(cores, blocks):
            return -(-10 ** 9 // (t.aiv_flops_per_ns * cores)) + blocks * t.kernel_per_block_ns

        assert body(48) == want(48, 48)
        assert acl.rt.set_device_res_limit(0, VEC, 4) == acl.ACL_SUCCESS
        assert body(48) == want(4, 48)
        assert acl.rt.reset_device_res_limit(0) == acl.ACL_SUCCESS
        assert body(48) == want(48, 48)
    finally:
        npusim.reset_kernel_cost("EasyOPf")
