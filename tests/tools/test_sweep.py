"""``npusim.sweep`` in this process (``client="serial"``): the grid, the rows, failures, a fresh
simulator per point, the ``npusim sweep`` command with ``--resume``, ``npusim plan`` over a grid,
the plots; ``import npusim`` imports none of dask, pandas, matplotlib (nor the sweep package
before its first use)."""
from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

import npusim
from npusim.cli import main
from npusim.sweep import expand, point_key

from helpers import sweep_points as P



def test_the_grid_is_the_product_of_the_axes_or_the_list_given():
    assert expand(None, dict(a=[1, 2], b="xy", c=(5, 6))) == [
        dict(a=1, b="xy", c=5), dict(a=1, b="xy", c=6), dict(a=2, b="xy", c=5),
        dict(a=2, b="xy", c=6)]
    assert expand([{"a": 1}, {"a": 2, "b": 3}]) == [{"a": 1}, {"a": 2, "b": 3}]
    with pytest.raises(TypeError):
        expand([{"a": 1}], dict(b=[1]))
    with pytest.raises(TypeError):
        expand(None, {})
    assert point_key({"n": 8, "p": "A2"}, ["n", "p"]) == point_key({"n": "8", "p": "A2"},
                                                                   ["n", "p"]) \
        == point_key({"n": 8.0, "p": "A2"}, ["n", "p"])


def test_rows_hold_the_axes_the_results_and_the_bookkeeping():
    df = npusim.sweep(P.timed, n=[1, 4], profile=["Ascend910B", "Ascend310P"], client="serial")
    assert list(df.columns) == ["n", "profile", "elapsed_ms", "profile_in_force", "draw",
                                "error_code", "error", "wall_s", "worker"]
    assert len(df) == 4 and df["error"].isna().all() and (df["wall_s"] > 0).all()
    assert list(df["profile_in_force"]) == list(df["profile"])    # the profile axis is honoured
    assert df.loc[df["n"] == 4, "elapsed_ms"].min() > df.loc[df["n"] == 1, "elapsed_ms"].max()
    scalar = npusim.sweep(lambda n: n + 1, n=[1, 2], client="serial")
    assert list(scalar["result"]) == [2, 3]


def test_a_failing_point_is_reported_in_its_row_and_the_others_complete():
    df = npusim.sweep(P.flaky, n=[1, 2, 3, 4, 5], client="serial")
    assert list(df["result"].iloc[[0, 4]]) == [10, 50]
    assert df["error"].iloc[[0, 4]].isna().all()
    assert df["error"][1] == "ValueError: boom" and pd.isna(df["error_code"][1])
    assert df["error_code"][2] == 107001 and "ACL_ERROR_RT_INVALID_DEVICEID" in df["error"][2]
    assert df["error_code"][3] == 207005 and "ACL_ERROR_RT_RESOURCE_ALLOC_FAIL" in df["error"][3]
    assert str(df["error_code"].dtype) == "Int64"


def test_every_point_starts_from_a_fresh_simulator_whatever_ran_before():
    """A point that changes a kernel's cost, configures a profile or draws random numbers does
    not change the next one: the grid run backwards gives the same rows."""
    grid = [dict(n=n, cost=c, profile=p) for n in (2, 8) for c in (0, 50_000)
            for p in ("Ascend910B", "Ascend950")]
    fwd = npusim.sweep(P.timed, grid, client="serial")
    back = npusim.sweep(P.timed, grid[::-1], client="serial").iloc[::-1].reset_index(drop=True)
    pd.testing.assert_frame_equal(fwd[P.SIM], back[P.SIM])
    plain = fwd[fwd["cost"] == 0]
    assert (fwd.loc[fwd["cost"] > 0, "elapsed_ms"].to_numpy() >
            plain["elapsed_ms"].to_numpy()).all()
    assert fwd["draw"].nunique() == len(fwd)          # each point its own seed


def test_an_axis_the_function_does_not_take_is_refused_before_anything_runs():
    with pytest.raises(TypeError, match="'k'"):
        npusim.sweep(P.timed, n=[1], k=[1, 2], client="serial")
    df = npusim.sweep(lambda n: n, n=[1], profile=["Ascend310P"], client="serial")
    assert df["result"][0] == 1                       # profile: configuration only


SCRIPT = '''
import os
import npusim

def square(n, profile):
    with open(os.environ["SWEEP_LOG"], "a") as f:
        f.write(f"{n},{profile}\\n")
    if n == 3 and os.environ.get("SWEEP_FAIL_3"):
        raise RuntimeError("three")
    return {"square": n * n, "profile_seen": npusim.Device().profile.name}

if __name__ == "__main__":
    raise SystemExit("the sweep must not run the main block")
'''


def test_cli_resume_runs_only_the_missing_points(tmp_path, monkeypatch, capsys):
    script, out, log = tmp_path / "job.py", tmp_path / "rows.csv", tmp_path / "calls.log"
    script.write_text(SCRIPT)
    monkeypatch.setenv("SWEEP_LOG", str(log))
    monkeypatch.setenv("SWEEP_FAIL_3", "1")
    args = ["sweep", f"{script}:square", "--axis", "profile=Ascend910B", "--scheduler", "serial",
            "--out", str(out)]
    assert main(args + ["--axis", "n=1,2,3"]) == 1            # n=3 failed
    assert len(pd.read_csv(out)) == 3
    log.write_text("")
    monkeypatch.delenv("SWEEP_FAIL_3")
    assert main(args + ["--axis", "n=1,2,3,4,5", "--resume"]) == 0
    assert sorted(log.read_text().split()) == ["3,Ascend910B", "4,Ascend910B", "5,Ascend910B"]
    df = pd.read_csv(out).sort_values("n")
    assert list(df["n"]) == [1, 2, 3, 4, 5] and df["error"].isna().all()
    assert list(df["square"]) == [1, 4, 9, 16, 25]
    assert set(df["profile_seen"]) == {"Ascend910B"}
    assert "3 points on this process (2 already in" in capsys.readouterr().err


def test_cli_prints_the_table_and_refuses_bad_usage(tmp_path, monkeypatch, capsys):
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    monkeypatch.setenv("SWEEP_LOG", str(tmp_path / "calls.log"))
    assert main(["sweep", f"{script}:square", "--axis", "n=2,3", "--axis",
                 "profile=Ascend310P", "--scheduler", "serial"]) == 0
    out = capsys.readouterr().out
    assert "square" in out and "Ascend310P" in out and " 9 " in out
    assert main(["sweep", f"{script}:nothing", "--axis", "n=1", "--scheduler", "serial"]) == 2
    assert main(["sweep", f"{script}:square", "--scheduler", "serial"]) == 2
    assert main(["sweep", f"{script}:square", "--axis", "n=1", "--axis", "k=1",
                 "--scheduler", "serial"]) == 2
    assert main(["sweep", f"{script}:square", "--axis", "n=1", "--resume"]) == 2


def test_cli_plan_over_a_grid_of_profiles_and_sizes(capsys):
    assert main(["plan", "--profile", "A2,310P", "--sizes", "1,2", "--sizes", "1,2,4",
                 "--layers", "1", "--tasks-per-layer", "3", "--extra-streams", "0,1",
                 "--simulate", "--scheduler", "serial"]) == 0
    out = capsys.readouterr().out
    assert "8 plans: prediction and simulation agree on all" in out
    assert out.count("Ascend310P") == 4 and "predicted_fit" in out and "simulated_fit" in out
    assert main(["plan", "--profile", "310P", "--sizes", "1,2,3,4,5,6", "--layers", "1,2",
                 "--tasks-per-layer", "3", "--extra-streams", "100", "--fresh-streams"]) == 0
    assert "207008" in capsys.readouterr().out


def test_plots_of_the_usual_shapes(tmp_path):
    pytest.importorskip("matplotlib")
    df = npusim.sweep(P.timed, n=[1, 2, 4], cost=[0, 10_000], profile=["Ascend910B", "Ascend950"],
                      client="serial")
    fig = npusim.sweep.heatmap(df, "n", "cost", "elapsed_ms", path=tmp_path / "h.png")
    assert (tmp_path / "h.png").stat().st_size > 0 and fig.axes
    fig = npusim.sweep.lines(df, "n", "elapsed_ms", logx=True, path=tmp_path / "l.png")
    assert len(fig.axes[0].lines) == 2


def test_importing_npusim_imports_no_dask_pandas_or_matplotlib():
    """Nor the sweep package itself until ``npusim.sweep`` is first used."""
    code = ("import sys, npusim; print('npusim.sweep' in sys.modules); npusim.sweep; "
            "print([m for m in ('dask', 'distributed', 'pandas', 'matplotlib') "
            "if m in sys.modules], callable(npusim.sweep))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout
    assert out.split("\n")[:2] == ["False", "[] True"]
