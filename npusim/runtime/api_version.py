"""The installed packages' versions (chapter 24: ``aclsysGetVersionStr``, ``aclsysGetVersionNum``),
read as the runtime reads them: from ``version.info`` files of the CANN install that
``ASCEND_HOME_PATH`` names (``src/acl/aclrt_impl/acl.cpp:903-1248``).

npusim has no CANN of its own, but ``npusim cabi --prefix DIR`` writes a CANN-shaped install whose
``bin/setenv.bash`` exports ``ASCEND_HOME_PATH=DIR``; it writes ``share/info/runtime/version.info``
with :data:`RUNTIME_VERSION`, the version of the runtime source npusim follows
(``hicann/runtime`` ``version.cmake``: ``npu-runtime`` 9.1.0). So a program started from that
environment reads 9.1.0 / 90100000, and a process without one gets the runtime's own 100003, as
on a machine without CANN. docs/fidelity.md row 510.
"""
from __future__ import annotations

import os
import re

from .. import errors as ERR
from .runtime import RT

RUNTIME_VERSION = "9.1.0"
"""The ``npu-runtime`` package version of the runtime source npusim follows (version.cmake)."""
VERSION_MAX = 128
"""``ACL_PKG_VERSION_MAX_SIZE``: the caller's buffer for a version string, NUL included."""
INSTALL_INFO = "/etc/ascend_install.info"
"""Where the driver's and firmware's install paths are recorded (``Driver_Install_Path_Param=``)."""

_KEYS = {"driver": "Driver_Install_Path_Param=", "firmware": "Firmware_Install_Path_Param="}
_WEIGHTS = (("alpha", 300), ("beta", 200), ("rc", 100))


def _other_spelling(name: str) -> str | None:
    """The name the runtime tries second: ``-`` as ``_``, else ``_`` as ``-``."""
    if "-" in name:
        return name.replace("-", "_")
    if "_" in name:
        return name.replace("_", "-")
    return None


def _key_line(path: str, key: str) -> str | None:
    """What follows ``key`` on the first line holding it, trimmed; None: no file or no line."""
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            for line in f:
                if key in line:
                    return line.split(key, 1)[1].strip()
    except OSError:
        return None
    return None


def _version_file(name: str) -> str | None:
    """The ``version.info`` of package ``name``, or None (``GetPkgVersionInfoPath``)."""
    if name in _KEYS:
        base = _key_line(INSTALL_INFO, _KEYS[name])
        return os.path.join(base, name, "version.info") if base else None
    home = os.environ.get("ASCEND_HOME_PATH", "")
    if not home or not os.path.exists(home):
        return None
    return os.path.join(os.path.realpath(home), "share", "info", name, "version.info")


def _read_version(pkg_name: str):
    """(version string, code): the first ``Version=`` line of the package's file, trying the
    other spelling of its name second; 100003 when neither gives a non-empty one."""
    for name in (pkg_name, _other_spelling(pkg_name)):
        if name is None:
            continue
        path = _version_file(name)
        v = _key_line(path, "Version=") if path else None
        if v:
            return v, ERR.ACL_SUCCESS
    RT.tls.explain(f"no version of package {pkg_name!r}: ASCEND_HOME_PATH="
                   f"{os.environ.get('ASCEND_HOME_PATH', '(unset)')!s} has no "
                   f"share/info/{pkg_name}/version.info with a Version= line (`npusim cabi "
                   f"--prefix DIR` writes one; source DIR/bin/setenv.bash)")
    return None, ERR.ACL_ERROR_INVALID_FILE


def get_version_str(pkg_name):
    """aclsysGetVersionStr -> (version string, code): checks in order: NULL (100000 in C, both
    pointers); the file (100003); a version of 128 characters or more 500000."""
    if pkg_name is None:
        RT.tls.explain("pkgName is NULL")
        return None, ERR.ACL_ERROR_INVALID_PARAM
    v, code = _read_version(pkg_name)
    if code:
        return None, code
    if len(v.encode("utf-8", "surrogateescape")) >= VERSION_MAX:
        RT.tls.explain(f"the version of {pkg_name!r} is {len(v)} characters; the buffer holds "
                       f"{VERSION_MAX - 1}")
        return None, ERR.ACL_ERROR_INTERNAL_ERROR
    return v, ERR.ACL_SUCCESS


_NUM = re.compile(r"(\d+)\.(\d+)\.(\d+)(.*)\Z", re.S)


def version_number(v: str) -> int | None:
    """``major * 10,000,000 + minor * 100,000 + patch * 1,000``, less 300 / 200 / 100 for an
    alpha / beta / rc suffix plus its number (``8.5.0.beta.1`` -> 80,499,801); None when ``v``
    is not ``X.Y.Z`` with such a suffix at most (``aclsysGetVersionNum``'s rules)."""
    m = _NUM.match(v)
    if m is None:
        return None
    num = int(m[1]) * 10_000_000 + int(m[2]) * 100_000 + int(m[3]) * 1_000
    rest = m[4].lower()
    if not rest:
        return num
    for word, weight in _WEIGHTS:
        at = rest.find(word)
        if at < 0:
            continue
        tail = rest[at + len(word):]
        if at > 1 or not re.fullmatch(r"[.-]?\d+", tail):
            return None
        return num - weight + int(tail.lstrip(".-"))
    return None


def get_version_num(pkg_name):
    """aclsysGetVersionNum -> (version number, code): the file as for the string (100003), then
    :func:`version_number`; a version that does not follow its form 500000."""
    if pkg_name is None:
        RT.tls.explain("pkgName is NULL")
        return None, ERR.ACL_ERROR_INVALID_PARAM
    v, code = _read_version(pkg_name)
    if code:
        return None, code
    n = version_number(v)
    if n is None:
        RT.tls.explain(f"version {v!r} of {pkg_name!r} is not X.Y.Z with an optional alpha / "
                       f"beta / rc number")
        return None, ERR.ACL_ERROR_INTERNAL_ERROR
    return n, ERR.ACL_SUCCESS
