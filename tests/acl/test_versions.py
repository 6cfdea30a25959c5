"""aclsysGetVersionStr / aclsysGetVersionNum (24_other_APIs; ``acl.cpp:903-1248``): the
``Version=`` line of ``$ASCEND_HOME_PATH/share/info/<pkg>/version.info``, the other spelling of
the name second, 100003 without one; the number ``major * 10^7 + minor * 10^5 + patch * 10^3``
less an alpha / beta / rc weight; ``npusim cabi`` installs the runtime package's 9.1.0
(fidelity row 510). The runtime's ``0_quickstart/2_system_info`` sample prints both."""
from __future__ import annotations

import pytest

from npusim import acl
from npusim.runtime.api_version import RUNTIME_VERSION, version_number

OK = acl.ACL_SUCCESS


def _install(root, pkg: str, text: str):
    d = root / "share" / "info" / pkg
    d.mkdir(parents=True, exist_ok=True)
    (d / "version.info").write_text(text)


def test_reads_the_install(tmp_path, monkeypatch):
    _install(tmp_path, "runtime", f"Version={RUNTIME_VERSION}\n")
    _install(tmp_path, "bisheng_compiler", "version_dir=x\nVersion= 8.5.0.beta.1 \n")
    monkeypatch.setenv("ASCEND_HOME_PATH", str(tmp_path))
    assert acl.sys.get_version_str("runtime") == ("9.1.0", OK)
    assert acl.sys.get_version_num("runtime") == (90_100_000, OK)
    # "bisheng-compiler" is found under its other spelling; the value trimmed
    assert acl.sys.get_version_str("bisheng-compiler") == ("8.5.0.beta.1", OK)
    assert acl.sys.get_version_num("bisheng-compiler") == (80_499_801, OK)


def test_no_install_is_100003(tmp_path, monkeypatch):
    monkeypatch.delenv("ASCEND_HOME_PATH", raising=False)
    assert acl.sys.get_version_str("runtime") == (None, acl.ACL_ERROR_INVALID_FILE)
    assert "npusim cabi" in acl.get_recent_err_msg()
    monkeypatch.setenv("ASCEND_HOME_PATH", str(tmp_path / "missing"))
    assert acl.sys.get_version_num("runtime") == (None, acl.ACL_ERROR_INVALID_FILE)
    monkeypatch.setenv("ASCEND_HOME_PATH", str(tmp_path))
    _install(tmp_path, "hccl", "Name=hccl\n")                      # no Version= line
    assert acl.sys.get_version_str("hccl") == (None, acl.ACL_ERROR_INVALID_FILE)
    _install(tmp_path, "toolkit", "Version=\n")                    # empty
    assert acl.sys.get_version_str("toolkit") == (None, acl.ACL_ERROR_INVALID_FILE)


def test_limits(tmp_path, monkeypatch):
    monkeypatch.setenv("ASCEND_HOME_PATH", str(tmp_path))
    _install(tmp_path, "long", "Version=" + "9" * 128 + "\n")
    assert acl.sys.get_version_str("long") == (None, acl.ACL_ERROR_INTERNAL_ERROR)
    _install(tmp_path, "short", "Version=8.5\n")
    assert acl.sys.get_version_str("short") == ("8.5", OK)
    assert acl.sys.get_version_num("short") == (None, acl.ACL_ERROR_INTERNAL_ERROR)
    assert acl.sys.get_version_str(None) == (None, acl.ACL_ERROR_INVALID_PARAM)
    assert acl.sys.get_version_num(None) == (None, acl.ACL_ERROR_INVALID_PARAM)


@pytest.mark.parametrize("text,num", [
    ("9.1.0", 90_100_000), ("8.5.1", 80_501_000), ("8.5.0.beta.1", 80_499_801),
    ("8.5.0-alpha.1", 80_499_701), ("8.5.0.RC2", 80_499_902), ("8.5.0rc3", 80_499_903),
    ("8.5.0-rc.1", 80_499_901),
    ("8.5", None), ("8", None), ("8.5.0.1", None), ("8.5.0-gamma", None), ("8.5.0..alpha", None),
    ("8.5.0-rc.1a", None), ("23.0.rc1", None), ("8.x.0", None)])
def test_the_number(text, num):
    assert version_number(text) == num


def _cann(root, version="9.1.0", config=None):
    """An install as `npusim cabi` writes it: lib64, the runtime's version.info, swFeatureList."""
    import json
    from npusim.runtime import api_version as V
    (root / "lib64").mkdir(parents=True, exist_ok=True)
    if version is not None:
        _install(root, "runtime", f"Version={version}\n")
    cfg = root / V.SW_CONFIG
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text(config if config is not None else json.dumps(V.FEATURE_MINIMUMS))


def test_cann_attributes(tmp_path, monkeypatch):
    """All three on A2 with runtime 9.1 (each needs 7.1 or 6.4 and, for INF_NAN / BF16, the
    SoC's key); in the enum's order; an unknown attribute 100000."""
    _cann(tmp_path)
    monkeypatch.setenv("ASCEND_HOME_PATH", str(tmp_path))
    assert acl.get_cann_attribute_list() == ([0, 1, 2], 3, OK)
    for a in (acl.ACL_CANN_ATTR_INF_NAN, acl.ACL_CANN_ATTR_BF16, acl.ACL_CANN_ATTR_JIT_COMPILE):
        assert acl.get_cann_attribute(a) == (1, OK)
    for bad in (acl.ACL_CANN_ATTR_UNDEFINED, 3):
        assert acl.get_cann_attribute(bad) == (None, acl.ACL_ERROR_INVALID_PARAM)


def test_cann_attributes_follow_version_and_chip(tmp_path, monkeypatch):
    """Runtime 7.0: only JIT_COMPILE (6.4); 310P, whose platform file has neither SoC key:
    only JIT_COMPILE; an attribute the config does not name needs no version."""
    import npusim
    _cann(tmp_path, version="7.0.0")
    monkeypatch.setenv("ASCEND_HOME_PATH", str(tmp_path))
    assert acl.get_cann_attribute_list() == ([2], 1, OK)
    assert acl.get_cann_attribute(acl.ACL_CANN_ATTR_BF16) == (0, OK)
    _cann(tmp_path, version="9.1.0", config='{"JIT_COMPILE": {"runtimeVersion": "9.2"}}')
    assert acl.get_cann_attribute_list() == ([0, 1], 2, OK)
    npusim.reset()
    npusim.configure(profile="Ascend310P")
    _cann(tmp_path)
    assert acl.get_cann_attribute_list() == ([2], 1, OK)


def test_cann_attribute_files(tmp_path, monkeypatch):
    """No install 100003 with the fix; the config missing 100003, not JSON 100006; the runtime's
    version missing 500000. The config is also found in a parent of the library's directory."""
    monkeypatch.delenv("ASCEND_HOME_PATH", raising=False)
    assert acl.get_cann_attribute_list() == (None, None, acl.ACL_ERROR_INVALID_FILE)
    assert "npusim cabi" in acl.get_recent_err_msg()
    monkeypatch.setenv("ASCEND_HOME_PATH", str(tmp_path))
    (tmp_path / "lib64").mkdir()
    assert acl.get_cann_attribute(0) == (None, acl.ACL_ERROR_INVALID_FILE)
    _cann(tmp_path, version=None, config="{not json")
    assert acl.get_cann_attribute(0) == (None, acl.ACL_ERROR_PARSE_FILE)
    _cann(tmp_path, version=None)
    assert acl.get_cann_attribute(0) == (None, acl.ACL_ERROR_INTERNAL_ERROR)
    _install(tmp_path, "runtime", "Version=9.1.0\n")
    assert acl.get_cann_attribute(0) == (1, OK)
