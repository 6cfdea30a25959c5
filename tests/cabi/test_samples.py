"""The runtime's own samples built by their own run.sh and CMake against an npusim cabi install
(scripts/run_runtime_samples.py, issue 39): a few short ones, when a hicann/runtime checkout is
at hand (NPUSIM_RUNTIME_SRC, or the mirror at /work/.mirror/hicann+runtime/repo); skipped
otherwise. docs/cabi_samples.md has the full table."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import run_runtime_samples as rrs  # noqa: E402

SRC = os.environ.get("NPUSIM_RUNTIME_SRC", rrs.MIRROR)


def test_compare_reads_the_readme_conventions():
    out = "noise\n[INFO]  stream=0x5a2000000040 ok\n[INFO]  took 12.5 ms\n[INFO]  v 8.1.0\n"
    assert rrs.compare(["[INFO]  stream=<stream_pointer> ok", "[INFO]  took ... ms",
                        "[INFO]  v 8.x.x"], out) == []
    assert rrs.compare(["[INFO]  took ... ms", "[INFO]  stream=0x1 ok"], out) == \
        ["[INFO]  stream=0x1 ok"]          # in order
    assert rrs.compare(["[INFO]  result is: 2."], "[INFO]  result is: 0.") == ["[INFO]  result is: 2."]


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    if not os.path.exists(SRC):
        pytest.skip("no hicann/runtime checkout (NPUSIM_RUNTIME_SRC) or mirror")
    if shutil.which("cmake") is None or shutil.which("g++") is None:
        pytest.skip("no cmake / g++")
    from npusim.cabi import build
    try:
        build.check_tools()
    except RuntimeError as e:
        pytest.skip(f"npusim cabi cannot be built here: {e}")
    work = tmp_path_factory.mktemp("samples")
    example = rrs.copy_examples(SRC, str(work))
    prefix = str(work / "cann")
    build.install(prefix)
    return example, prefix


@pytest.mark.parametrize("rel", [
    "1_basic_features/stream/0_simple_stream",         # 3002 EasyOPf launches through the stand-in
    "1_basic_features/memory/0_h2h_memory_copy",       # runtime only
    "2_advanced_features/kernel/1_launch_kernel_with_reslimit",  # fatbin + args handles
])
def test_sample_builds_and_runs(samples, rel):
    example, prefix = samples
    assert rrs.scope(example, rel) is None
    res = rrs.run_one(example, rel, prefix, timeout=600)
    assert res["rc"] == 0, res["output"]
    assert res["expected_lines"] > 0
    assert res["missing"] == [], res["output"]


def test_out_of_scope_samples_are_named(samples):
    example, _ = samples
    assert "aclnn" in rrs.scope(example, "0_quickstart/0_hello_cann")
    assert "tdt" in rrs.scope(example, "2_advanced_features/tdt_queue/0_simple_queue")
