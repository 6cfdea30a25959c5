"""Chapter 02 (initialization and finalization): aclInit / aclFinalize with the callbacks
other components register on them (``aclInitCallbackRegister`` / ``UnRegister``,
``aclFinalizeCallbackRegister`` / ``UnRegister``) and ``aclFinalizeReference``.

Sources (hicann/runtime): ``src/acl/aclrt_impl/init_callback_manager.cpp`` (one callback per
type except ACL_REG_TYPE_OTHER, which takes any number; NULL 100000; a type already taken or an
unregister of a callback not registered 500000; an init callback registered after aclInit is
called at once with the config string, its result ignored), ``src/acl/aclrt_impl/acl.cpp``
(aclInit notifies ACL_REG_TYPE_ACL_MODEL, then ACL_REG_TYPE_ACL_OP_EXECUTOR when a config path
is given, then ACL_REG_TYPE_ACL_DVPP and ACL_REG_TYPE_OTHER, lines 438-526 — a callback's
non-zero result is aclInit's result and the process stays uninitialized; aclFinalize notifies
ACL_REG_TYPE_ACL_OP_COMPILER, ACL_REG_TYPE_ACL_MODEL, ACL_REG_TYPE_ACL_DVPP, ACL_REG_TYPE_OTHER,
lines 560-617, and stops at the first failure; aclFinalizeReference, lines 648-682, counts down
the references repeated aclInit calls took and finalizes at the last). docs/fidelity.md rows
220-222.

Callbacks are Python callables: ``init_cb(config_str, length, user_data)`` and
``finalize_cb(user_data)``; a result that is not an int (``None``) counts as 0.
"""
from __future__ import annotations

import os
import sys

from .. import errors as ERR
from .runtime import RT

OK = ERR.ACL_SUCCESS

# aclRegisterCallbackType (acl_rt.h:5028)
(ACL_REG_TYPE_ACL_MODEL, ACL_REG_TYPE_ACL_OP_EXECUTOR, ACL_REG_TYPE_ACL_OP_CBLAS,
 ACL_REG_TYPE_ACL_OP_COMPILER, ACL_REG_TYPE_ACL_TDT_CHANNEL, ACL_REG_TYPE_ACL_TDT_QUEUE,
 ACL_REG_TYPE_ACL_DVPP, ACL_REG_TYPE_ACL_RETR) = range(8)
ACL_REG_TYPE_OTHER = 0xFFFF

def _table(name: str) -> list:
    """``"init"`` / ``"finalize"``: (type, callback, user data) in registration order, the
    runtime's ``initCallbackMap_`` / ``finalizeCallbackMap_`` (multimaps: registration order
    within a type); ``"config"``: [the config string the last successful aclInit read, what a
    late init callback gets]. Process-wide like its singleton (``RT.callbacks``)."""
    return RT.callbacks.setdefault(f"acl{name}", [""] if name == "config" else [])


def _register(table: list, reg_type, callback, user_data) -> int:
    if callback is None or not callable(callback):
        RT.tls.explain("cbFunc is NULL" if callback is None else
                       f"cbFunc {callback!r} cannot be called")
        return ERR.ACL_ERROR_INVALID_PARAM
    if reg_type != ACL_REG_TYPE_OTHER and any(t == reg_type for t, _, _ in table):
        RT.tls.explain(f"a callback of type {reg_type} is registered already (only "
                       "ACL_REG_TYPE_OTHER takes several)")
        return ERR.ACL_ERROR_INTERNAL_ERROR
    table.append((reg_type, callback, user_data))
    return OK


def _unregister(table: list, reg_type, callback) -> int:
    if callback is None:
        RT.tls.explain("cbFunc is NULL")
        return ERR.ACL_ERROR_INVALID_PARAM
    for i, (t, cb, _) in enumerate(table):
        if t == reg_type and cb == callback:
            del table[i]
            return OK
    RT.tls.explain(f"no callback {callback!r} of type {reg_type} is registered")
    return ERR.ACL_ERROR_INTERNAL_ERROR


def _result(r) -> int:
    return int(r) if isinstance(r, int) and not isinstance(r, bool) else OK


def _call(callback, *args) -> int:
    try:
        return _result(callback(*args))
    except Exception as e:              # noqa: BLE001 -- a user callback must not break init
        print(f"npusim: init/finalize callback raised {e!r}", file=sys.stderr)
        return ERR.ACL_ERROR_INTERNAL_ERROR


def init_callback_register(reg_type, callback, user_data) -> int:
    """aclInitCallbackRegister: ``callback(config_str, length, user_data)`` runs in aclInit
    (types MODEL, OP_EXECUTOR with a config path, DVPP, OTHER) — at once if aclInit has run."""
    code = _register(_table("init"), reg_type, callback, user_data)
    if code == OK and RT.init_refs > 0:
        config = _table("config")[0]
        _call(callback, config, len(config), user_data)         # its result is ignored
    return code


def init_callback_un_register(reg_type, callback) -> int:
    """aclInitCallbackUnRegister: NULL 100000; not registered under ``reg_type`` 500000."""
    return _unregister(_table("init"), reg_type, callback)


def finalize_callback_register(reg_type, callback, user_data) -> int:
    """aclFinalizeCallbackRegister: ``callback(user_data)`` runs in aclFinalize (types
    OP_COMPILER, MODEL, DVPP, OTHER, in that order)."""
    return _register(_table("finalize"), reg_type, callback, user_data)


def finalize_callback_un_register(reg_type, callback) -> int:
    """aclFinalizeCallbackUnRegister: NULL 100000; not registered under ``reg_type`` 500000."""
    return _unregister(_table("finalize"), reg_type, callback)


def _notify_init(reg_type, config: str) -> int:
    for t, cb, data in list(_table("init")):
        if t == reg_type:
            code = _call(cb, config, len(config), data)
            if code:
                return code
    return OK


def _notify_finalize(reg_type) -> int:
    for t, cb, data in list(_table("finalize")):
        if t == reg_type:
            code = _call(cb, data)
            if code:
                return code
    return OK


def _config_string(config_path) -> str:
    """The config file's text (``GetStrFromConfigPath``); npusim does not parse it."""
    if not config_path or not os.path.isfile(config_path):
        return ""
    try:
        with open(config_path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def init(config_path=None) -> int:
    """aclInit with its callbacks (the runtime part: ``RT.init``)."""
    first = RT.init_refs == 0
    code = RT.init()
    if code or not first:
        return code
    config = _config_string(config_path)
    types = [ACL_REG_TYPE_ACL_MODEL] + ([ACL_REG_TYPE_ACL_OP_EXECUTOR] if config_path else []) \
        + [ACL_REG_TYPE_ACL_DVPP, ACL_REG_TYPE_OTHER]
    for t in types:
        code = _notify_init(t, config)
        if code:
            RT.tls.explain(f"an init callback of type {t} returned {code}")
            RT.init_refs = 0               # aclInitRefCount is set only at the end (acl.cpp:535)
            RT.initialized = False
            return code
    _table("config")[0] = config
    return OK


def _finalize_internal() -> int:
    for t in (ACL_REG_TYPE_ACL_OP_COMPILER, ACL_REG_TYPE_ACL_MODEL, ACL_REG_TYPE_ACL_DVPP,
              ACL_REG_TYPE_OTHER):
        code = _notify_finalize(t)
        if code:
            RT.tls.explain(f"a finalize callback of type {t} returned {code}")
            return code
    return RT.finalize()


def finalize() -> int:
    """aclFinalize with its callbacks: 100037 after a finalize (acl.cpp:630-646)."""
    if RT.finalized:
        return ERR.ACL_ERROR_REPEAT_FINALIZE
    return _finalize_internal()


def finalize_reference():
    """aclFinalizeReference -> (references left, code): with several aclInit references it
    drops one (0, the count left); at the last it finalizes (callbacks included) and leaves 0;
    with none 100037 (acl.cpp:648-682)."""
    refs = RT.init_refs
    if refs > 1:
        RT.init_refs -= 1
        return RT.init_refs, OK
    if refs < 1:
        RT.tls.explain("aclFinalizeReference called repeatedly or without aclInit")
        return refs, ERR.ACL_ERROR_REPEAT_FINALIZE
    code = _finalize_internal()
    return RT.init_refs, code
