"""Helpers for the conditional-control-flow tests (``spec/aclgraph.md`` §8): cond handles, cond
tasks, sub-model capture, the cond word, and the one kernel-launch helper.

Capture helpers (``begin``, ``end``, ``new_stream`` ...) and fixtures (``dev0``, ``stream``,
``chip``) come from ``tests/helpers/capture.py`` and ``tests/conftest.py``.
"""
from __future__ import annotations

import numpy as np

from npusim import acl
from npusim.runtime.runtime import RT

from helpers.acl import launch, read, write
from helpers.capture import OK

IF, WHILE, SWITCH = (acl.ACL_MODEL_RI_COND_TYPE_IF, acl.ACL_MODEL_RI_COND_TYPE_WHILE,
                     acl.ACL_MODEL_RI_COND_TYPE_SWITCH)
USER, ASSIGN_DEFAULT = 0, acl.ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT


def k(s: int, kernel: str, *args) -> None:
    """Launch a built-in kernel (1 block) on stream handle ``s`` and assert 0. The only kernel
    launch of the cond tests: swap it here for the Kernel-module facade when it is finished."""
    assert launch(s, kernel, 1, args) == OK


def cond(mh: int, default: int = 0, flag: int = USER) -> tuple[int, int]:
    """aclmdlRICondHandleCreate + GetCondPtr: (handle, device address of the 8-byte word)."""
    h, ret = acl.mdl.ri_cond_handle_create(mh, default, flag)
    assert ret == OK, ret
    p, ret = acl.mdl.ri_cond_handle_get_cond_ptr(h)
    assert ret == OK, ret
    return h, p


def add(h: int, typ: int, size: int, s: int) -> list[int]:
    subs, ret = acl.mdl.ri_add_cond_task(h, typ, size, s)
    assert ret == OK, ret
    assert len(subs) == size
    return subs


def sub_begin(s: int, sub: int, mode: int = 0) -> None:
    assert acl.mdl.ri_capture_to_model_ri_begin(s, sub, mode) == OK


def sub_end(s: int) -> int:
    h, ret = acl.mdl.ri_capture_end(s)
    assert ret == OK, ret
    return h


def capture_sub(s: int, sub: int, body=None) -> None:
    """Capture sub-model ``sub`` on stream ``s``: ``body()`` issues its work."""
    sub_begin(s, sub)
    if body is not None:
        body()
    sub_end(s)


def set_word(ptr: int, value: int) -> None:
    """Host write of the cond word (a synchronous aclrtMemcpy H2D, as the runtime sample does)."""
    write(ptr, np.array([value & (2 ** 64 - 1)], np.uint64))


def word(ptr: int) -> int:
    return int(read(ptr, 1, np.uint64)[0])


def set_i64(ptr: int, value: int) -> None:
    write(ptr, np.array([value], np.int64))


def i64(ptr: int) -> int:
    return int(read(ptr, 1, np.int64)[0])


def cond_obj(h: int):
    """The CondHandle behind a cond handle."""
    ch, code = RT.handles.get("cond", h)
    assert code == OK and ch is not None
    return ch


def live_models() -> int:
    return len(RT.handles.live("model"))
