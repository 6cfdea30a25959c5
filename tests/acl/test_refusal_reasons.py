"""Every 100000 / 107000 the facade returns for a hostile argument says which argument and why.

The walk of ``test_facade_fuzz.py`` (every facade function, each parameter in turn given a
hostile value, the others valid; eager, and with the streams capturing): where the call
returns ACL_ERROR_INVALID_PARAM (100000) or ACL_ERROR_RT_PARAM_INVALID (107000),
``acl.get_recent_err_msg()`` must name that parameter in its reason (the text after the code's
meaning) — the boundary's refusal ("size: expected an integer in 0..2**64-1 (size_t), got
1.5"), its note on a value it substituted ("dst: expected a pointer ..., got 'x': passed as
NULL"), or the runtime function's own ``RT.tls.explain``. ``UNEXPLAINED`` lists the (function,
parameter) pairs whose refusals do not yet; it may only shrink. docs/fidelity.md row 342.
"""
from __future__ import annotations

import importlib.util
import inspect
import pathlib

import pytest

from npusim import acl

_spec = importlib.util.spec_from_file_location(
    "_facade_fuzz", pathlib.Path(__file__).with_name("test_facade_fuzz.py"))
F = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(F)

CODES = (acl.ACL_ERROR_INVALID_PARAM, acl.ACL_ERROR_RT_PARAM_INVALID)
LABELS = ("str", "1.5", "nan", "None", "-1", "2**64", "2**64-1", "object", "bytes", "list",
          "dict", "array[2]", "complex", "0-size", "12345")
EXTRA = {"0-size": 0, "12345": 12345}

UNEXPLAINED: set[tuple[str, str]] = set()
ABOUT_ANOTHER = {
    ("task_update_async", "exec_stream"):
        "NULL is the default stream, which is not capturing: the call passes the capture check "
        "and the task check refuses the environment's task (a kernel task), with its reason",
}
"""A hostile value that lets the call reach a later check, which refuses ANOTHER argument of
the environment (with that argument's reason)."""


@pytest.fixture(autouse=True)
def _in_a_temporary_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def _reason(msg: str) -> str:
    return msg.split(" — ", 1)[1] if msg and " — " in msg else ""


def _walk(capturing: bool):
    gaps = {}
    e = F.make_env(capturing)
    for _, attr, fn in F.FUNCTIONS:
        if attr in F.TEARDOWN:
            continue
        params = list(inspect.signature(fn).parameters)
        base = fn(*F._valid_args(attr, params, e))
        code = base if type(base) is int else (base[-1] if type(base) is tuple else None)
        if code == acl.ACL_SUCCESS:
            e = F.make_env(capturing)
        elif code in CODES:
            continue              # no valid call to start from: a refusal names no one value
        for i, p in enumerate(params):
            for label in LABELS:
                value = EXTRA[label] if label in EXTRA else F.HOSTILE[label]
                args = F._valid_args(attr, params, e)
                args[i] = value
                acl.get_recent_err_msg()                  # clear
                r = fn(*args)
                code = r if type(r) is int else (r[-1] if type(r) is tuple else None)
                if code in CODES:
                    msg = acl.get_recent_err_msg()
                    if p not in _reason(msg):
                        gaps.setdefault((attr, p), (label, msg))
                elif code == acl.ACL_SUCCESS:
                    e = F.make_env(capturing)
    return gaps


@pytest.mark.parametrize("capturing", [False, True], ids=["eager", "capturing"])
def test_every_refusal_of_a_hostile_argument_names_it(capturing):
    gaps = _walk(capturing)
    new = {k: v for k, v in gaps.items() if k not in UNEXPLAINED and k not in ABOUT_ANOTHER}
    assert not new, "refusals that do not name their argument:\n" + "\n".join(
        f"  {a}({p}={label}): {msg}" for (a, p), (label, msg) in sorted(new.items()))
    fixed = UNEXPLAINED - set(gaps)
    assert not fixed, f"explained now, remove from UNEXPLAINED: {sorted(fixed)}"


def test_the_boundary_names_parameter_value_and_rule(dev0):
    s, _ = acl.rt.create_stream()
    assert acl.rt.malloc(1.5, 0)[1] == acl.ACL_ERROR_INVALID_PARAM
    assert acl.get_recent_err_msg().endswith(
        "— size: expected an integer in 0..18446744073709551615 (size_t), got 1.5")
    assert acl.rt.create_event_with_flag("x")[1] == acl.ACL_ERROR_RT_PARAM_INVALID
    assert "flag: expected an integer in 0..4294967295 (uint32_t), got 'x'" in \
        acl.get_recent_err_msg()
    assert acl.rt.memcpy("x" * 500, 8, 0, 8, 1) == acl.ACL_ERROR_INVALID_PARAM
    msg = acl.get_recent_err_msg()
    assert "dst: expected a pointer" in msg and "passed as NULL" in msg and len(msg) < 400
    assert acl.rt.launch_kernel_with_host_args(1, 1, s, None, b"\0" * 4096, 2 ** 20) == \
        acl.ACL_ERROR_RT_PARAM_INVALID
    assert "args_size: 1048576 is more than the 4096 bytes host_args holds (bytes of 4096 " \
           "bytes)" in acl.get_recent_err_msg()


def test_the_reason_reaches_the_pythonic_aclerror(dev0):
    import npusim
    with pytest.raises(npusim.AclError, match="size is 0"):
        npusim.Device().malloc(0)
