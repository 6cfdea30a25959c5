"""pyACL functions found by walking pyACL's own index of its runtime functions: the two pyACL
spellings of existing facade functions, the two functions added for it
(``acl.rt.synchronize_device_with_timeout``, ``acl.rt.device_get_stream_priority_range``), and
the ``acl.rt`` functions of areas npusim does not simulate, which answer 207000 naming the area."""
from __future__ import annotations

import pytest

from npusim import acl
from npusim.acl import pyacl
from helpers.acl import in_fresh_thread, launch

RT_REFUSED = [r for r in pyacl.REFUSED if r[0] == "rt"]


# ---- pyACL's spellings ----
def test_get_op_timeout_interval_is_pyacl_s_name_of_get_op_time_out_interval(dev0):
    assert acl.rt.get_op_timeout_interval is acl.rt.get_op_time_out_interval
    interval, ret = acl.rt.get_op_timeout_interval()
    assert ret == acl.ACL_SUCCESS and interval > 0


def test_set_op_execute_timeout_v2_is_pyacl_s_name_of_set_op_execute_time_out_v2(dev0):
    assert acl.rt.set_op_execute_timeout_v2 is acl.rt.set_op_execute_time_out_v2
    interval, _ = acl.rt.get_op_timeout_interval()
    actual, ret = acl.rt.set_op_execute_timeout_v2(interval + 1)      # rounded up to 2 steps
    assert (actual, ret) == (2 * interval, acl.ACL_SUCCESS)


def test_the_table_lists_the_pyacl_spellings_with_their_alias():
    rows = {r[0]: r for r in pyacl.rows(acl)}
    for name, alias in (("get_op_timeout_interval", "get_op_time_out_interval"),
                        ("set_op_execute_timeout_v2", "set_op_execute_time_out_v2")):
        row = rows[f"acl.rt.{name}"]
        assert row[2] == "simulated" and f"acl.rt.{alias}" in row[4]
        assert f"acl.rt.{alias}" not in rows


# ---- aclrtSynchronizeDeviceWithTimeout ----
@pytest.mark.parametrize("timeout", [0, -2])
def test_synchronize_device_with_bad_timeout_returns_107000(dev0, timeout):
    assert acl.rt.synchronize_device_with_timeout(timeout) == acl.ACL_ERROR_RT_PARAM_INVALID


def test_synchronize_device_with_timeout_without_context_returns_107002(dev0):
    assert in_fresh_thread(acl.rt.synchronize_device_with_timeout, -1) == \
        acl.ACL_ERROR_RT_CONTEXT_NULL


def test_synchronize_device_with_timeout_minus_one_waits_for_every_stream(stream, buf):
    launch(stream, "LongOPf", 1, (buf,))
    assert acl.rt.synchronize_device_with_timeout(-1) == acl.ACL_SUCCESS
    assert acl.rt.stream_query(stream) == (acl.ACL_STREAM_STATUS_COMPLETE, acl.ACL_SUCCESS)


def test_synchronize_device_with_timeout_expiry_returns_507046(stream, buf):
    launch(stream, "LongOPf", 1, (buf,))
    assert acl.rt.synchronize_device_with_timeout(1) == \
        acl.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT == 507046


def test_synchronize_device_with_a_long_enough_timeout_succeeds(stream, buf):
    launch(stream, "LongOPf", 1, (buf,))
    assert acl.rt.synchronize_device_with_timeout(60_000) == acl.ACL_SUCCESS


# ---- aclrtDeviceGetStreamPriorityRange ----
def test_stream_priority_range_is_least_7_greatest_0_with_or_without_a_device(acl):
    assert acl.rt.device_get_stream_priority_range() == (7, 0, acl.ACL_SUCCESS)
    assert in_fresh_thread(acl.rt.device_get_stream_priority_range) == (7, 0, acl.ACL_SUCCESS)


def test_streams_take_priorities_inside_the_reported_range(dev0):
    least, greatest, _ = acl.rt.device_get_stream_priority_range()
    for prio in (greatest, least):
        s, ret = acl.rt.create_stream_with_config(prio, 0)
        assert ret == acl.ACL_SUCCESS
        assert acl.rt.stream_get_priority(s) == (prio, acl.ACL_SUCCESS)


# ---- acl.rt functions of areas npusim does not simulate ----
@pytest.mark.parametrize("entry", RT_REFUSED, ids=lambda e: e[1])
def test_every_refused_rt_function_answers_207000_in_its_shape_and_names_its_area(entry, capsys):
    _, name, c, outputs, area = entry
    fn = getattr(acl.rt, name)
    assert fn.__refused_area__ == area and name not in vars(acl.rt)
    r = fn(None, None)
    if outputs < 0:
        assert r is None
    elif outputs == 0:
        assert r == acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    else:
        assert r == (None,) * outputs + (acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT,)


def test_a_refusal_says_its_area_once_on_stderr(capsys):
    pyacl._SAID.discard("acl.rt.device_task_abort")
    acl.rt.device_task_abort(0)
    acl.rt.device_task_abort(0)
    err = capsys.readouterr().err
    assert err.count("acl.rt.device_task_abort is not simulated (aborting unfinished tasks") == 1


def test_an_unknown_rt_name_is_still_an_attribute_error():
    with pytest.raises(AttributeError):
        acl.rt.no_such_function           # noqa: B018  (a typo stays a typo)


def test_a_refused_name_the_facade_defines_is_simulated():
    """If a facade function is added under a refused name, it wins: the module's ``__getattr__``
    is never asked and the table lists the name as simulated, once."""
    assert all(not pyacl._defined(acl, m, n) for m, n, *_ in pyacl.REFUSED)
    names = [r[0] for r in pyacl.rows(acl)]
    assert len(names) == len(set(names))
