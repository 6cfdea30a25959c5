"""The error-code table and the AclError hierarchy (npusim.errors)."""
import pickle

import pytest

from npusim import errors as E


@pytest.mark.parametrize("name,value", [
    ("ACL_SUCCESS", 0), ("ACL_RT_SUCCESS", 0), ("ACL_ERROR_NONE", 0),
    ("ACL_ERROR_INVALID_PARAM", 100000), ("ACL_ERROR_INVALID_BUNDLE_MODEL_ID", 148053),
    ("ACL_ERROR_BAD_ALLOC", 200000), ("ACL_ERROR_STORAGE_OVER_LIMIT", 300000),
    ("ACL_ERROR_PROFILING_FAILURE", 500005),
    ("ACL_ERROR_RT_PARAM_INVALID", 107000), ("ACL_ERROR_RT_CONTEXT_NULL", 107002),
    ("ACL_ERROR_RT_INVALID_HANDLE", 107017), ("ACL_ERROR_RT_CAPTURE_DEPENDENCY", 107024),
    ("ACL_ERROR_RT_STREAM_CAPTURED", 107027), ("ACL_ERROR_STREAM_CAPTURE_CONFLICT", 107032),
    ("ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC", 107041), ("ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING", 107045),
    ("ACL_ERROR_RT_FEATURE_NOT_SUPPORT", 207000), ("ACL_ERROR_RT_RESOURCE_ALLOC_FAIL", 207005),
    ("ACL_ERROR_RT_DEVICE_OOM", 207018), ("ACL_ERROR_RT_LINK_TYPE_NOT_SUPPORTED", 207021),
    ("ACL_ERROR_RT_INTERNAL_ERROR", 507000), ("ACL_ERROR_RT_MODEL_EXECUTE", 507011),
    ("ACL_ERROR_RT_VECTOR_CORE_EXCEPTION", 507035), ("ACL_ERROR_RT_DRV_INTERNAL_ERROR", 507899),
    ("ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED", 507903), ("ACL_ERROR_RT_CCU_EXCEPTION", 507916),
    ("ACL_ERROR_GE_PARAM_INVALID", 145000), ("ACL_ERROR_GE_REDEPLOYING", 545602),
])
def test_code_has_header_value(name, value):
    assert getattr(E, name) == value
    assert E.BY_NAME[name].value == value


def test_module_constants_are_exported():
    assert "ACL_ERROR_RT_STREAM_CAPTURED" in E.__all__
    assert len([n for n in E.__all__ if n.startswith("ACL_")]) == len(E.CODES)


def test_table_has_no_duplicate_names():
    names = [c.name for c in E.CODES]
    assert len(names) == len(set(names))


def test_only_success_value_has_several_names():
    values = [c.value for c in E.CODES]
    dups = {v for v in values if values.count(v) > 1}
    assert dups == {0}


def test_by_value_returns_canonical_name():
    assert E.BY_VALUE[0].name == "ACL_SUCCESS"
    assert E.BY_VALUE[107027].name == "ACL_ERROR_RT_STREAM_CAPTURED"
    assert E.name_of(999999) == "ACL_ERROR_UNKNOWN"


def test_every_code_has_a_meaning():
    assert all(c.meaning and c.meaning.strip() == c.meaning for c in E.CODES)


@pytest.mark.parametrize("code,cls", [
    (100000, E.ParamError), (107000, E.ParamError), (107017, E.HandleError),
    (107002, E.ContextError), (107024, E.CaptureError), (107027, E.CaptureError),
    (107045, E.CaptureError), (507903, E.CaptureError), (207000, E.FeatureNotSupported),
    (207005, E.ResourceError), (207008, E.ResourceError), (207001, E.OutOfMemory),
    (507011, E.DeviceError), (507035, E.KernelError), (507015, E.KernelError),
    (507046, E.AclTimeoutError), (507000, E.InternalError), (100003, E.UsageError),
    (300000, E.ServiceError),
])
def test_error_for_picks_family_class(code, cls):
    assert type(E.error_for(code)) is cls


def test_family_classes_share_the_base():
    assert issubclass(E.KernelError, E.DeviceError)
    assert issubclass(E.DeviceError, E.InternalError)
    assert issubclass(E.OutOfMemory, E.ResourceError)
    assert issubclass(E.AclTimeoutError, TimeoutError)
    assert all(issubclass(c, E.AclError) for c in E._FAMILY.values())


def test_unknown_code_falls_back_by_leading_digit():
    assert type(E.error_for(199999)) is E.UsageError
    assert type(E.error_for(599999)) is E.InternalError
    assert type(E.error_for(42)) is E.AclError


def test_error_for_zero_is_rejected():
    with pytest.raises(ValueError):
        E.error_for(0)


def test_check_passes_on_success():
    assert E.check(0) is None


def test_check_raises_with_code_and_detail():
    with pytest.raises(E.CaptureError) as ei:
        E.check(107027, "aclrtSynchronizeStream")
    err = ei.value
    assert err.code == 107027 and err.name == "ACL_ERROR_RT_STREAM_CAPTURED"
    assert err.detail == "aclrtSynchronizeStream"


def test_str_contains_name_value_meaning_and_detail():
    s = str(E.error_for(107027, "sync on capturing stream"))
    assert s.startswith("ACL_ERROR_RT_STREAM_CAPTURED (107027): stream is capturing")
    assert s.endswith("— sync on capturing stream")


def test_str_without_detail_has_no_dash():
    assert "—" not in str(E.error_for(107017))


def test_error_survives_pickle():
    err = pickle.loads(pickle.dumps(E.error_for(507035, "x")))
    assert type(err) is E.KernelError and err.code == 507035 and err.detail == "x"


def test_internal_codes_map_to_external():
    assert E.INTERNAL["RT_ERROR_INVALID_VALUE"] == (0x07110001, 107000)
    assert E.INTERNAL["RT_ERROR_STREAM_CAPTURED"].external == E.ACL_ERROR_RT_STREAM_CAPTURED
    assert all(i.external in E.BY_VALUE for i in E.INTERNAL.values())


def test_to_external_translates_like_the_runtime():
    assert E.to_external(0x07110001) == 107000
    assert E.to_external(0x07FFFFFF) == 507000  # unmapped internal code
    assert E.to_external(107027) == 107027      # already external
    assert E.to_external(0) == 0
