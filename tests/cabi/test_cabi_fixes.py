"""Sample blockers fixed in the C path (docs/cabi_samples.md "Blockers"): C programs of
npusim's own calling what the runtime's samples call."""
from __future__ import annotations

ZERO = ("init", "set_device", "create_stream", "malloc_out", "malloc_counter", "memset_counter",
        "random_num", "sync", "d2h", "res_cube", "set_res_limit", "res_vec", "reset_res_limit",
        "query_status", "free_out", "free_counter", "destroy_stream", "reset", "finalize")


def test_random_num_res_limits_and_device_status_from_c(run_c):
    r = run_c("fixes")
    err = r.pop("__stderr__")
    assert not {k: r[k] for k in ZERO if r[k]}, err
    # B6: the struct crossed byte for byte (the facade's 104-byte form); NULL and a bad data type
    # are the facade's 100000
    assert r["random_in_range"] == 1 and r["random_distinct"] == 1, err
    assert r["random_num_null"] == 100000 and r["random_num_bad_type"] == 100000
    # B2: the device's counts (25 cube cores on the default profile; the vector limit set);
    # a type outside [0, 2) 107000, a NULL output 100000 (the acl layer, before the runtime)
    assert r["cube_cores"] == 25 and r["vector_cores"] == 3
    assert r["res_bad_type"] == 107000 and r["res_null"] == 100000
    # B3: NORMAL written back; a bad id 107001; a NULL output 100000
    assert r["status_normal"] == 1
    assert r["query_status_bad_id"] == 107001 and r["query_status_null"] == 100000


OVERFLOW_ZERO = ("init", "set_device", "create_stream", "get_mode", "set_sat", "get_mode2",
                 "set_switch", "get_switch", "malloc", "memset", "get_status", "sync", "d2h",
                 "reset_status", "sync2", "restore", "info_vector", "info_aicore", "info_l2",
                 "util", "util_bad_id", "free", "destroy_stream", "reset", "finalize")


def test_overflow_and_device_queries_from_c(run_c):
    """B10: the overflow sample's calls; B15: the device queries of 1_device_multi_thread."""
    r = run_c("overflow")
    err = r.pop("__stderr__")
    assert not {k: r[k] for k in OVERFLOW_ZERO if r[k]}, err
    # INFNAN by default on A2, SATURATION once set; UNDEF 107000; a NULL output 100000
    assert (r["mode_default"], r["mode_set"]) == (1, 0)
    assert r["set_undef"] == 107000 and r["get_mode_null"] == 100000
    assert r["switch"] == 1
    # the 64 status bytes written in stream order (zero); size 32 107000, NULL 100000
    assert r["status_zero"] == 1
    assert r["get_status_size"] == 107000 and r["get_status_null"] == 100000
    # the platform file's counts (Ascend910B1.ini)
    assert (r["vector"], r["aicore"], r["l2"]) == (48, 24, 201_326_592)
    assert r["info_bad_attr"] == 107000 and r["info_bad_id"] == 107000
    assert r["info_null"] == 100000
    # utilization: 0 / 0 / 0 / -1; a bad id -1 with success; NULL info or a non-NULL extension
    # 100000 (the acl layer)
    assert (r["cube"], r["vec"], r["aicpu"], r["mem"]) == (0, 0, 0, -1)
    assert r["cube_bad"] == -1
    assert r["util_null"] == 100000 and r["util_extend"] == 100000


def test_versions_from_c(run_c, cabi_lib, tmp_path, monkeypatch):
    """B1: the runtime package's version read from $ASCEND_HOME_PATH as `npusim cabi` installs
    it; the buffer left alone on a failure; NULLs 100000 (the acl layer). The CANN attributes
    found from the library's own directory (its parent holds what an install holds there)."""
    import json
    from npusim.runtime import api_version as V
    info = tmp_path / "share" / "info" / "runtime"
    info.mkdir(parents=True)
    (info / "version.info").write_text("Version=9.1.0\n")
    monkeypatch.setenv("ASCEND_HOME_PATH", str(tmp_path))
    root = cabi_lib[0].parent
    for rel, text in ((V.RUNTIME_INFO, "Version=9.1.0\n"),
                      (V.SW_CONFIG, json.dumps(V.FEATURE_MINIMUMS))):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    r = run_c("versions")
    err = r.pop("__stderr__")
    assert (r["init"], r["str"], r["num"], r["finalize"]) == (0, 0, 0, 0), err
    assert r["str_is_9_1_0"] == 1 and r["number"] == 90_100_000
    assert r["str_missing"] == 100003 and r["str_unchanged"] == 1
    assert r["str_null_out"] == r["str_null_name"] == r["num_null_out"] == 100000
    assert r["list"] == 0 and r["count"] == 3
    assert [r[f"attr{i}"] for i in range(3)] == [0, 1, 2]
    assert [(r[f"get{i}"], r[f"value{i}"]) for i in range(3)] == [(0, 1)] * 3
    assert r["list_null"] == r["list_num_null"] == r["get_bad"] == r["get_null"] == 100000


def test_user_allocator_from_c(run_c):
    """B7: the descriptor's functions, a registration on the stream and its read-back, as
    0_custom_allocator makes them; the caller's function pointers come back as they went in."""
    r = run_c("allocator")
    err = r.pop("__stderr__")
    zero = ("init", "set_device", "create_stream", "set_obj", "set_alloc", "set_free",
            "set_advise", "set_addr", "register", "get", "get_optional_null", "unregister",
            "unregister_again", "destroy_desc", "destroy_stream", "reset", "finalize")
    assert not {k: r[k] for k in zero if r[k]}, err
    assert r["desc_made"] == 1 and r["same"] == 1
    assert (r["allocs"], r["frees"]) == (2, 2)
    # an incomplete desc, a NULL function, a NULL stream, a NULL desc output, a stream with no
    # allocator, a NULL desc: 100000 (the acl layer)
    assert r["register_empty"] == r["set_null_func"] == r["register_null_stream"] == 100000
    assert r["get_desc_null"] == r["get_none"] == r["destroy_null"] == 100000


def test_labels_from_c(run_c):
    """B4: the simple_label sample's calls, and the branch index 1 takes: label 1's memset runs,
    label 0's is jumped over."""
    r = run_c("labels")
    err = r.pop("__stderr__")
    bad = {"list_null": 100000, "list_zero": 107000, "set_again": 507000}
    assert not {k: v for k, v in r.items() if k not in bad and not k.endswith("_value") and v}, err
    assert {k: r[k] for k in bad} == bad
    assert (r["mark0_value"], r["mark1_value"]) == (0, 9)
