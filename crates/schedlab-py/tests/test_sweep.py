"""Sweeps: the same tidy table from `schedlab sweep`, from schedlab.sweep on local cores,
and from schedlab.sweep(ray=True) with one Ray task per run on a local Ray (num_cpus=2)."""

from __future__ import annotations

import io
import pathlib
import sys
import tomllib

import pandas as pd
import pytest

import schedlab
from conftest import WORKLOAD, cli

SPEC = """
workload = "small.toml"
duration = "20ms"
[grid]
schedulers = ["eevdf", "cfs", "ule"]
seeds = [1, 2]
params = { workers = [1, 3] }
set = { "cfs:sched_min_granularity_ns" = ["750000", "3000000"] }
[[run]]
scheduler = "o1"
machine = "smp4"
seed = 5
"""

# 3 schedulers x 2 seeds x 2 worker counts, cfs twice more for its tunable, and one listed run.
RUNS = 2 * 2 * (1 + 2 + 1) + 1


@pytest.fixture
def spec(tmp_path: pathlib.Path) -> pathlib.Path:
    (tmp_path / "small.toml").write_text(WORKLOAD)
    p = tmp_path / "sweep.toml"
    p.write_text(SPEC)
    return p


def test_local_sweep_equals_the_cli(spec: pathlib.Path) -> None:
    df = schedlab.sweep(spec, jobs=2)
    assert len(df) == RUNS and df["run"].tolist() == list(range(RUNS))
    out = cli("sweep", str(spec), "--jobs", "1")
    assert out.returncode == 0, out.stderr
    pd.testing.assert_frame_equal(df, pd.read_csv(io.StringIO(out.stdout)))
    # The targeted tunable appears in cfs's rows only.
    tuned = df[df["set.sched_min_granularity_ns"].notna()]
    assert set(tuned["scheduler"]) == {"cfs"} and len(tuned) == 8
    assert df.iloc[-1]["machine"] == "smp4" and df.iloc[-1]["scheduler"] == "o1"
    # Each run's figures are its own: rerunning one point alone gives its row.
    one = schedlab.run(WORKLOAD, sched="ule", seed=2, params={"workers": 3}, duration="20ms")
    row = df[(df.scheduler == "ule") & (df.seed == 2) & (df["param.workers"] == 3)].iloc[0]
    assert row["trace_hash"] == one.record["trace_hash"]
    assert row["runtime_ns"] == one.tasks["runtime_ns"].sum()


def test_the_cli_parquet_table_reads_as_the_same_dataframe(spec: pathlib.Path) -> None:
    # `schedlab sweep -o x.parquet`, read by pandas through pyarrow (not by the crate that
    # wrote it): the same rows, columns and dtypes as the CSV.
    pytest.importorskip("pyarrow", reason="pyarrow is not installed (scripts/setup-test-deps.sh installs it)")
    out = spec.parent / "table.parquet"
    run = cli("sweep", str(spec), "-o", str(out))
    assert run.returncode == 0, run.stderr
    pd.testing.assert_frame_equal(pd.read_parquet(out), schedlab.sweep(spec))


def test_sweep_from_text_and_located_errors(spec: pathlib.Path) -> None:
    with pytest.raises(schedlab.InputError) as e:
        schedlab.sweep(str(spec.parent / "sweep.toml").replace("sweep.toml", "missing.toml"))
    assert "no such sweep file" in str(e.value)
    bad = spec.parent / "bad.toml"
    bad.write_text('workload = "small.toml"\n[grid]\nschedulers = ["cfs"]\nseed = [1]\n')
    with pytest.raises(schedlab.InputError) as e:
        schedlab.sweep(bad)
    assert str(e.value).startswith(f"{bad}:4:1: field `grid.seed`: unknown key"), str(e.value)


def test_sweep_from_a_dict_equals_the_file(spec: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The same sweep as a dict: the workload by path (relative to the current directory),
    # then given inline as a dict, as schedlab.run takes it.
    d = tomllib.loads(SPEC)
    monkeypatch.chdir(spec.parent)
    from_file = schedlab.sweep(spec, jobs=2)
    pd.testing.assert_frame_equal(schedlab.sweep(d, jobs=2), from_file)
    inline = dict(d, workload=tomllib.loads(WORKLOAD))
    pd.testing.assert_frame_equal(schedlab.sweep(inline, jobs=2), from_file)
    # A bad key is named by its field path.
    with pytest.raises(schedlab.InputError) as e:
        schedlab.sweep(dict(d, grid={"schedulers": ["cfs"], "seed": [1]}))
    assert str(e.value).startswith("<dict>:") and "field `grid.seed`: unknown key" in str(e.value), str(e.value)


def test_ray_sweep_equals_the_local_sweep(spec: pathlib.Path) -> None:
    ray = pytest.importorskip("ray", reason="Ray is not installed (scripts/setup-test-deps.sh installs it)")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    # Points carry their workload's text, so an inline workload dict needs no file anywhere.
    inline = dict(tomllib.loads(SPEC), workload=tomllib.loads(WORKLOAD))
    try:
        distributed = schedlab.sweep(spec, ray=True)
        distributed_dict = schedlab.sweep(inline, ray=True)
    finally:
        ray.shutdown()
    local = schedlab.sweep(spec)
    assert len(distributed) == RUNS
    pd.testing.assert_frame_equal(distributed, local)
    pd.testing.assert_frame_equal(distributed_dict, local)


def test_cli_sweep_on_a_two_node_ray_cluster_equals_the_local_table(spec: pathlib.Path) -> None:
    """`schedlab sweep --ray ADDRESS` against a real Ray cluster of two nodes (a head and a
    worker node, each its own raylet with one CPU, started here and torn down after by the
    processes this test started): the table is the local sweep's, byte for byte."""
    pytest.importorskip("ray", reason="Ray is not installed (scripts/setup-test-deps.sh installs it)")
    from ray.cluster_utils import Cluster

    local = cli("sweep", str(spec))
    assert local.returncode == 0, local.stderr
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    try:
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        out = cli("sweep", str(spec), "--ray", cluster.address, "--python", sys.executable)
    finally:
        cluster.shutdown()
    assert out.returncode == 0, out.stderr
    assert out.stdout == local.stdout
    assert len(pd.read_csv(io.StringIO(out.stdout))) == RUNS


def test_cli_sweep_on_ray_names_a_python_without_the_package() -> None:
    """--python naming an interpreter that cannot run the driver fails with a message that
    says what it needs."""
    out = cli("sweep", "examples/sweeps/hackbench-groups.toml", "--ray", "local", "--python", "/nonexistent/python")
    assert out.returncode != 0
    assert "--python /nonexistent/python: cannot start it" in out.stderr, out.stderr
