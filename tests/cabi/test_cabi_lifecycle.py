"""The C path (libascendcl.so built by ``npusim cabi``): codes, outputs written back, lifecycle,
copies with malloc'd and pinned host memory, the recent error message (docs/cabi.md)."""
from __future__ import annotations

import json
import subprocess
import sys

ZERO = ("init", "set_device", "get_device", "get_device_count", "create_context",
        "get_current_context", "create_stream", "create_event", "create_event2", "malloc",
        "record1", "memcpy_h2d", "memset_async", "record2", "sync_stream", "elapsed",
        "memcpy_d2h", "malloc_host", "memcpy_pinned_h2d", "memcpy_d2h_malloc",
        "memcpy_h2d_again", "memcpy_d2pinned", "free_host", "destroy_event", "destroy_event2",
        "free", "destroy_stream", "destroy_context", "reset_device", "finalize")

# the same hostile calls from Python, in a fresh process (the C program's own process state)
PY = r"""
import json
from npusim import acl
acl.init()
acl.rt.set_device(0)
s, _ = acl.rt.create_stream()
d, _ = acl.rt.malloc(4096, 0)
out = {"malloc_zero": acl.rt.malloc(0, 0)[-1],
       "bad_stream": acl.rt.synchronize_stream(0x7FFFFFF1),
       "bad_event": acl.rt.query_event_status(0x7FFFFFF1)[-1],
       "query_null": acl.rt.query_event_status(None)[-1],
       "memcpy_null": acl.rt.memcpy(0, 4096, b"x" * 4096, 4096, 1),
       "memcpy_kind": acl.rt.memcpy(d, 4096, b"x" * 4096, 4096, 99)}
print(json.dumps(out))
"""


def test_lifecycle_codes_and_outputs(run_c):
    r = run_c("lifecycle")
    bad = {k: r[k] for k in ZERO if r[k] != 0}
    assert not bad, (bad, r["__stderr__"])
    assert r["device"] == 0
    assert r["count_positive"] == 1 and r["same_context"] == 1 and r["stream_nonnull"] == 1
    assert r["elapsed_nonneg"] == 1
    assert r["d2h_bytes"] == 1                   # malloc'd memory both ways, memset applied
    assert r["pinned_bytes"] == 1 and r["pinned_read"] == 1   # aclrtMallocHost memory is real
    # a NULL output pointer: 100000 and a reason naming it
    assert r["get_device_null"] == 100000 and r["msg_null_output"] == 1


def test_hostile_codes_match_python(run_c):
    r = run_c("lifecycle")
    py = json.loads(subprocess.run([sys.executable, "-c", PY], capture_output=True, text=True,
                                   check=True).stdout.splitlines()[-1])
    assert {k: r[k] for k in py} == py
