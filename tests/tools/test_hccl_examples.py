"""The HCCL examples (``examples/hccl/``) run as programs and print what they print on a board.

Each example is a Python port of one of hccl's ``examples/01_point_to_point`` and
``examples/02_collectives`` programs, of hcomm's ``examples/01_communicators`` or of its ACL-graph
AllReduce demo. It runs here in a subprocess, as a user runs it (``python example.py`` with the
repository on ``PYTHONPATH``), and its whole output is compared with the lines the example's
arithmetic gives on the profile's 8 devices — for hccl's examples the same lines as the
"Sample Output" of the example's README.
"""
from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "hccl"
N = 8                                       # the default profile's device count


def _floats(values) -> str:
    """Floats as C++'s ``std::cout`` prints them (6.0 -> ``6``)."""
    return " ".join(f"{float(v):g}" for v in values)


def _lines(rows) -> str:
    """``rankId: r, output: [ ... ]`` per (rank, values)."""
    return "".join(f"rankId: {r}, output: [ {_floats(v)} ]\n" for r, v in rows)


FOUND = f"Found {N} NPU device(s) available\n"
ARANGE = list(range(N))
SUM_OF_RANKS = N * (N - 1) // 2            # 28
SUM_OF_RANKS_1 = N * (N + 1) // 2          # 36: the ranks' (r + 1)

EXPECTED = {
    # even ranks send their id to the next rank; the odd ranks print what they received
    "01_point_to_point/01_send_recv.py":
        FOUND + _lines((r, [r - 1] * N) for r in range(1, N, 2)),
    # a ring: every rank receives the previous rank's id
    "01_point_to_point/02_batch_send_recv_ring.py":
        FOUND + _lines((r, [(r - 1) % N] * N) for r in range(N)),
    # every rank sends 0..n-1: the sum is n * i
    "02_collectives/01_allreduce.py":
        FOUND + _lines((r, [N * i for i in range(N)]) for r in range(N)),
    # rank 0's 0..n-1 on every rank
    "02_collectives/02_broadcast.py": FOUND + _lines((r, ARANGE) for r in range(N)),
    # one element (the rank id) from each rank, in rank order
    "02_collectives/03_allgather.py": FOUND + _lines((r, ARANGE) for r in range(N)),
    # element r of the sum of every rank's 0..n-1
    "02_collectives/04_reduce_scatter.py": FOUND + _lines((r, [N * r]) for r in range(N)),
    # the sum on the root; the other ranks' receive buffers stay as allocated (zeros)
    "02_collectives/05_reduce.py":
        FOUND + _lines([(0, [N * i for i in range(N)])] + [(r, [0] * N) for r in range(1, N)]),
    # element q of rank q's buffer (all q) to every rank
    "02_collectives/06_alltoall.py": FOUND + _lines((r, ARANGE) for r in range(N)),
    "02_collectives/07_alltoallv.py": FOUND + _lines((r, ARANGE) for r in range(N)),
    "02_collectives/08_alltoallvc.py": FOUND + _lines((r, ARANGE) for r in range(N)),
    # element r of the root's 0..n-1 to rank r
    "02_collectives/09_scatter.py": FOUND + _lines((r, [r]) for r in range(N)),
    # rank r sends (r + 1)(i + 1): every rank gets 36 (i + 1)
    "communicators/01_root_info_one_device_per_thread.py":
        FOUND + "".join(f"rankId: {r}, rankSize: {N}, output: [ "
                        f"{_floats(SUM_OF_RANKS_1 * (i + 1) for i in range(N))} ]\n"
                        for r in range(N)),
    # 2 servers x 4 devices: hierarchical AllReduce, recursive halving-doubling AllGather
    "communicators/02_rank_table_two_servers.py":
        FOUND + "".join(f"rankId: {r}, server: {r // 4}, device: {r}, allreduce: [ "
                        f"{_floats(SUM_OF_RANKS_1 * (i + 1) for i in range(N))} ]\n"
                        for r in range(N))
        + "".join(f"rankId: {r}, allgather: [ {_floats(10 * q for q in range(N))} ]\n"
                  for r in range(N)),
    # one thread: the AllReduce as above, then the last rank's input broadcast
    "communicators/03_init_all_one_thread.py":
        FOUND + "".join(f"rankId: {r}, device: {r}, allreduce: [ "
                        f"{_floats(SUM_OF_RANKS_1 * (i + 1) for i in range(N))} ]\n"
                        for r in range(N))
        + "".join(f"rankId: {r}, broadcast: [ {_floats(N * (i + 1) for i in range(N))} ]\n"
                  for r in range(N)),
    # rank k sends all k: every replay gives 28 everywhere (printf %.0f)
    "aclgraphs/allreduce_aclgraph_demo.py":
        FOUND + "".join(f"[rank {r}] AllReduce(sum) replayed 4 times, recvBuf = ["
                        + f" {SUM_OF_RANKS}" * N + " ]\n" for r in range(N)),
}


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))


def _run(*argv, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *map(str, argv)], cwd=cwd, env=_env(),
                          capture_output=True, text=True, timeout=120)


def test_every_example_is_checked():
    found = {p.relative_to(EXAMPLES).as_posix() for p in EXAMPLES.rglob("*.py")}
    assert found == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_an_hccl_example_prints_what_the_hardware_prints(name, tmp_path):
    r = _run(EXAMPLES / name, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == EXPECTED[name]
    assert r.stderr == ""


def test_an_example_runs_under_npusim_run(tmp_path):
    r = _run("-m", "npusim", "run", EXAMPLES / "02_collectives" / "01_allreduce.py", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == EXPECTED["02_collectives/01_allreduce.py"]


ONE_THREAD = "communicators/03_init_all_one_thread.py"


@pytest.mark.parametrize("name", sorted(set(EXPECTED) - {ONE_THREAD}))
def test_the_ports_keep_the_program_shape(name):
    """One thread per device, each setting its device; no sleeping to order the output (the
    lines are printed in rank order at the end); each rank destroys its communicator."""
    src = (EXAMPLES / name).read_text()
    assert "threading.Thread(" in src
    assert re.search(r"acl\.rt\.set_device\((device|dev_id)\)", src)
    assert "time.sleep" not in src and "import time" not in src
    assert "hccl.comm_destroy(comm)" in src


def test_the_one_thread_example_drives_every_rank_from_one_thread():
    src = (EXAMPLES / ONE_THREAD).read_text()
    assert "threading" not in src
    assert "hccl.comm_init_all(" in src
    assert src.index("hccl.group_start()") < src.index("hccl.all_reduce(") \
        < src.index("hccl.group_end()")
