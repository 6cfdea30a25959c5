"""``npusim.sweep`` on a Dask LocalCluster of two worker processes (one cluster for the module:
start-up costs seconds): the same rows as in this process, failures in their rows, the
scheduler reached by its address."""
from __future__ import annotations

import pandas as pd
import pytest

import npusim

from helpers import sweep_points as P


distributed = pytest.importorskip("distributed")
cloudpickle = pytest.importorskip("cloudpickle")


@pytest.fixture(scope="module")
def cluster():
    import logging
    cloudpickle.register_pickle_by_value(P)   # the workers need npusim, not the tests
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=logging.ERROR) as c:
        yield c
    cloudpickle.unregister_pickle_by_value(P)


def test_the_cluster_gives_the_rows_of_the_serial_run(cluster):
    grid = [dict(n=n, cost=c, profile=p) for n in (1, 3, 6) for c in (0, 40_000)
            for p in ("Ascend910B", "Ascend310P", "Ascend950")]
    with distributed.Client(cluster) as client:
        dist = npusim.sweep(P.timed, grid, client=client)
        assert client.status == "running"             # a client given is left open
    serial = npusim.sweep(P.timed, grid, client="serial")
    pd.testing.assert_frame_equal(dist[P.SIM], serial[P.SIM])
    assert dist["worker"].nunique() == 2               # both workers took points


def test_failures_on_the_cluster_stay_in_their_rows(cluster):
    df = npusim.sweep(P.flaky, n=[1, 2, 3, 4, 5], client=cluster.scheduler_address)
    assert list(df["error_code"].astype("float").fillna(-1)) == [-1, -1, 107001, 207005, -1]
    assert df["error"][1] == "ValueError: boom"
    assert list(df["result"].iloc[[0, 4]]) == [10, 50]


def test_a_result_that_cannot_be_sent_back_or_a_function_that_cannot_load_is_a_failed_row(
        cluster):
    with distributed.Client(cluster) as client:
        df = npusim.sweep(P.unpicklable, n=[1, 2, 3], client=client)
        assert list(df["result"].iloc[[0, 2]]) == [1, 3]
        assert df["error"][1].startswith("the result does not pickle: TypeError")
        df = npusim.sweep(P.NotOnWorkers(), n=[1, 2], client=client)
        assert list(df["error"]) == ["ImportError: no module named 'job' on this worker"] * 2
        assert df["wall_s"].isna().all()
