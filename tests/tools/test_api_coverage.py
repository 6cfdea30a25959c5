"""docs/api_coverage.md against the facade: the table is what ``scripts/api_coverage.py`` would
write now (so a function implemented or refused without the table, or the table edited by hand,
fails here), refused functions return 207000 with their reason, and the missing ones are known."""
from __future__ import annotations

import importlib.util
import pathlib

from npusim import acl
from npusim.runtime.api_refused import BY_DESIGN, facade_name

ROOT = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("api_coverage", ROOT / "scripts" / "api_coverage.py")
cov = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cov)


def _resolve(c: str):
    obj = acl
    for part in facade_name(c).split(".")[1:]:
        obj = getattr(obj, part, None)
    return obj


def test_the_table_is_current():
    rows = cov.read_table()
    assert len(rows) >= 460                              # chapters 02-24 of the reference
    # every chapter but 22, whose error-reporting entries are C++ macros, not ACL functions
    assert {ch[:2] for ch, _ in rows} == {f"{n:02d}" for n in range(2, 25)} - {"22"}
    assert cov.TABLE.read_text(encoding="utf-8") == cov.render(rows), \
        "docs/api_coverage.md is stale: run python scripts/api_coverage.py"


def test_every_refused_function_is_in_the_table_and_returns_207000_with_its_reason():
    listed = {c for _, c in cov.read_table()}
    assert set(BY_DESIGN) <= listed
    for c, (outputs, why) in BY_DESIGN.items():
        fn = _resolve(c)
        assert fn is not None, c
        r = fn(object(), None, -1)                       # any arguments: nothing is read
        if outputs < 0:                                  # C returns a value or nothing
            assert r is None, c
        else:
            code = r if outputs == 0 else r[-1]
            assert code == acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT, c
        if outputs > 0:
            assert r[:-1] == (None,) * outputs
        assert why in acl.get_recent_err_msg()


def test_facade_names_follow_the_rule():
    assert facade_name("aclrtCreateStreamWithConfig") == "acl.rt.create_stream_with_config"
    assert facade_name("aclrtMemcpy2dAsync") == "acl.rt.memcpy2d_async"
    assert facade_name("aclmdlRICaptureTaskGrpBegin") == "acl.mdl.ri_capture_task_grp_begin"
    assert facade_name("aclGetRecentErrMsg") == "acl.get_recent_err_msg"
    assert facade_name("aclrtUnSubscribeReport") == "acl.rt.unsubscribe_report"
    # a lower-case word after "acl" is a submodule; acronyms and linking digits are one word
    assert facade_name("acltdtCreateChannel") == "acl.tdt.create_channel"
    assert facade_name("aclprofStr2Id") == "acl.prof.str2id"
    assert facade_name("aclsysGetCANNVersion") == "acl.sys.get_cann_version"
    assert facade_name("aclrtDeviceGetPCIBusId") == "acl.rt.device_get_pci_bus_id"
    assert facade_name("aclrtDeviceGetP2PAtomicCapabilities") == \
        "acl.rt.device_get_p2p_atomic_capabilities"
    assert facade_name("aclFloat16ToFloat") == "acl.float16_to_float"
    assert facade_name("aclmdlInitDump") == "acl.mdl.init_dump"


def test_no_function_of_the_chapters_is_missing():
    missing = [c for _, c in cov.read_table() if cov.status(c)[0] == "missing"]
    assert not missing, f"{len(missing)} missing: {missing}"


def test_the_chapter_list_is_read_from_the_reference_when_it_is_there():
    ref = pathlib.Path("/tmp/apiref")
    if not ref.is_dir():
        return                                           # the table's own list is checked above
    assert cov.read_api_ref(ref) == cov.read_table()


def test_every_facade_function_names_its_c_function_and_result_in_its_docstring():
    from npusim.runtime.api_refused import c_name
    for c in [c for _, c in cov.read_table()]:
        assert c_name(facade_name(c)) == c                 # the two directions agree
    for mod, prefix in ((acl.rt, "acl.rt."), (acl.mdl, "acl.mdl.")):
        for n in dir(mod):
            fn = getattr(mod, n)
            if n.startswith("_") or not callable(fn) or isinstance(fn, type):
                continue
            doc = fn.__doc__ or ""                         # (a pyACL alias: its function's)
            assert doc.startswith(c_name(prefix + fn.__name__)), (n, doc[:60])
            assert "returns" in doc.splitlines()[0], n
