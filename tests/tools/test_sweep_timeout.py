"""``npusim.sweep(..., timeout=)`` and ``npusim sweep --timeout``: a point that hangs is a failed
row with its reason and the other points complete, in this process's serial sweep (a worker
process, killed and replaced) and on a Dask cluster (the worker restarted); ``--resume`` keeps
integer columns integers (docs/sweep.md, docs/fidelity.md row 345)."""
from __future__ import annotations

import pandas as pd
import pytest

import npusim
from npusim.cli import main

from helpers import sweep_points as P

TIMEOUT = 3.0          # seconds: far above a point's real time, far below the hang


def test_serial_a_hung_point_is_a_failed_row_and_the_rest_complete():
    df = npusim.sweep(P.hangs_at, n=[1, 2, 3, 4], client="serial", timeout=TIMEOUT)
    assert list(df["result"].astype("float").fillna(-1)) == [10, -1, 30, 40]
    assert df["error"][1].startswith("TimeoutError: the point ran past the sweep's timeout "
                                     "of 3 s; its worker process was killed")
    assert df["error"].isna().sum() == 3
    assert str(df["result"].dtype) == "Int64"          # integers with a missing value


def test_serial_with_a_timeout_keeps_the_callers_simulator_and_fresh_points():
    npusim.configure(profile="Ascend310P")
    df = npusim.sweep(P.timed, n=[1, 2], cost=[0], profile=["Ascend910B"], client="serial",
                      timeout=60)
    assert npusim.Device().profile.name == "Ascend310P"      # the caller's simulator as it was
    same = npusim.sweep(P.timed, n=[1, 2], cost=[0], profile=["Ascend910B"], client="serial")
    pd.testing.assert_frame_equal(df[P.SIM], same[P.SIM])
    assert df["error"].isna().all()


def test_a_timeout_must_be_positive():
    with pytest.raises(ValueError, match="timeout"):
        npusim.sweep(P.hangs_at, n=[1], client="serial", timeout=0)


SCRIPT = '''
import os, time

def square(n):
    if n == 3 and os.environ.get("SWEEP_FAIL_3"):
        raise RuntimeError("three")
    if n == 4 and os.environ.get("SWEEP_HANG_4"):
        time.sleep(3600)
    return {"square": n * n, "half": n / 2}
'''


def test_cli_timeout_and_resume_keep_integers(tmp_path, monkeypatch, capsys):
    script, out = tmp_path / "job.py", tmp_path / "rows.csv"
    script.write_text(SCRIPT)
    monkeypatch.setenv("SWEEP_FAIL_3", "1")
    monkeypatch.setenv("SWEEP_HANG_4", "1")
    args = ["sweep", f"{script}:square", "--scheduler", "serial", "--out", str(out),
            "--timeout", str(TIMEOUT)]
    assert main(args + ["--axis", "n=1,2,3,4,5"]) == 1        # n=3 failed, n=4 timed out
    df = pd.read_csv(out)
    assert df["error"].str.startswith("TimeoutError").sum() == 1
    assert "1,1,0.5," in out.read_text()                      # square written as an integer
    monkeypatch.delenv("SWEEP_FAIL_3")
    monkeypatch.delenv("SWEEP_HANG_4")
    assert main(args + ["--axis", "n=1,2,3,4,5,6", "--resume"]) == 0
    text = out.read_text()
    df = pd.read_csv(out).sort_values("n")
    assert list(df["n"]) == [1, 2, 3, 4, 5, 6] and df["error"].isna().all()
    assert df["square"].dtype == "int64" and list(df["square"]) == [1, 4, 9, 16, 25, 36]
    assert df["half"].dtype == "float64"
    for line in text.splitlines()[1:]:
        n, square = line.split(",")[:2]
        assert "." not in n and "." not in square, line
    assert main(["sweep", f"{script}:square", "--axis", "n=1", "--timeout", "0"]) == 2


def test_serial_with_a_timeout_a_point_that_does_not_pickle_is_a_failed_row():
    import threading
    df = npusim.sweep(lambda n, lock: n, grid=[dict(n=1, lock=None),
                                               dict(n=2, lock=threading.Lock())],
                      client="serial", timeout=60)
    assert df["result"][0] == 1
    assert df["error"][1].startswith("the point does not pickle")


distributed = pytest.importorskip("distributed")
cloudpickle = pytest.importorskip("cloudpickle")


def test_cluster_a_hung_point_restarts_its_worker_and_the_rest_complete():
    import logging
    cloudpickle.register_pickle_by_value(P)
    try:
        with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                      dashboard_address=None,
                                      silence_logs=logging.ERROR) as cluster:
            df = npusim.sweep(P.hangs_at, n=[1, 2, 3, 4], client=cluster.scheduler_address,
                              timeout=TIMEOUT)
    finally:
        cloudpickle.unregister_pickle_by_value(P)
    assert df["error"][1].startswith("TimeoutError: the point ran past the sweep's timeout "
                                     "of 3 s; its Dask worker was restarted")
    assert list(df["result"].astype("float").fillna(-1)) == [10, -1, 30, 40]
    assert "_restart" not in df.columns

