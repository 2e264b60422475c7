"""The Python API: DataFrames equal the JSON field for field, the JSON equals the CLI's,
errors carry the CLI's located messages, and the listings match the CLI's."""

from __future__ import annotations

import json
import pathlib

import pandas as pd
import pytest

import schedlab
from conftest import WORKLOAD, cell, cli, flatten, without_host


def test_tasks_cpus_locks_equal_the_json_field_for_field(workload_file: pathlib.Path) -> None:
    r = schedlab.run(workload_file, sched="cfs", seed=3)
    rec = json.loads(r.json)
    assert len(r.tasks) == len(rec["tasks"]) == 3
    for (_, row), task in zip(r.tasks.iterrows(), rec["tasks"]):
        flat = flatten(task)
        assert set(flat) | {"scheduler"} == set(r.tasks.columns)
        assert all(cell(row[k]) == v for k, v in flat.items()), (dict(row), task)
        assert row["scheduler"] == "cfs"
    for (_, row), c in zip(r.cpus.iterrows(), rec["cpus"]):
        flat = flatten(c)
        assert all(cell(row[k]) == v for k, v in flat.items()), (dict(row), c)
        # Kernel time by path sums to kernel time (ARCHITECTURE.md).
        paths = [k for k in r.cpus.columns if k.startswith("kernel_paths.")]
        assert paths and row[paths].sum() == row["kernel_ns"]
    assert len(r.locks) == len(rec["locks"]) > 0
    for (_, row), lk in zip(r.locks.iterrows(), rec["locks"]):
        assert all(cell(row[k]) == v for k, v in lk.items())
    # The task names with a comma and quotes arrive whole.
    assert set(r.tasks["name"].str.split(".").str[0]) == {'worker, "one"'}


def test_energy_columns_equal_the_json_on_an_energy_model_machine(workload_file: pathlib.Path) -> None:
    r = schedlab.run(workload_file, sched="eevdf", machine="big-little", duration="20ms")
    rec = json.loads(r.json)
    assert r.tasks["energy_nj"].tolist() == [t["energy_nj"] for t in rec["tasks"]]
    assert r.tasks["energy_nj"].sum() > 0
    assert r.cpus["energy.active_nj"].tolist() == [c["energy"]["active_nj"] for c in rec["cpus"]]
    # Without an energy model there is no energy column at all.
    assert "energy_nj" not in schedlab.run(workload_file, duration="5ms").tasks.columns


def test_run_json_equals_the_cli(workload_file: pathlib.Path) -> None:
    r = schedlab.run(str(workload_file), sched="ule", seed=2, duration="30ms")
    out = cli("run", str(workload_file), "--sched", "ule", "--seed", "2", "--duration", "30ms", "--format", "json")
    assert out.returncode == 0, out.stderr
    assert without_host(json.loads(out.stdout)) == without_host(json.loads(r.json))


def test_compare_equals_the_cli_and_concatenates(workload_file: pathlib.Path) -> None:
    c = schedlab.compare(workload_file, ["eevdf", "cfs", "ule"], set={"cfs:sched_min_granularity_ns": 1_000_000})
    out = cli("compare", str(workload_file), "--sched", "eevdf,cfs,ule", "--set",
              "cfs:sched_min_granularity_ns=1000000", "--format", "json")
    assert out.returncode == 0, out.stderr
    assert without_host(json.loads(out.stdout)) == without_host(json.loads(c.json))
    assert [r.scheduler for r in c] == ["eevdf", "cfs", "ule"]
    assert list(c.tasks["scheduler"].unique()) == ["eevdf", "cfs", "ule"]
    assert len(c.tasks) == 9 and len(c.cpus) == 6
    assert c["cfs"].record["scheduler"]["tunables"]["sched_min_granularity_ns"] == "1000000"
    for r, rec in zip(c, json.loads(c.json)):
        assert r.tasks["runtime_ns"].tolist() == [t["runtime_ns"] for t in rec["tasks"]]


def test_workload_as_string_and_dict_give_the_same_run(workload_file: pathlib.Path) -> None:
    from_file = without_host(schedlab.run(workload_file, seed=4).record)
    from_text = without_host(schedlab.run(WORKLOAD, seed=4).record)
    as_dict = {
        "name": "small", "machine": "smp2", "duration": "40ms", "params": {"workers": 3},
        "task": [{"name": 'worker, "one"', "count": "$workers",
                  "program": [{"loop": 400, "do": [{"run": "300us"}, {"sleep": "200us"}]}]}],
    }
    from_dict = without_host(schedlab.run(as_dict, seed=4).record)
    for rec in (from_text, from_dict):
        assert rec["trace_hash"] == from_file["trace_hash"]
        assert rec["tasks"] == from_file["tasks"]


def test_params_duration_in_ns_and_machine(workload_file: pathlib.Path) -> None:
    r = schedlab.run(workload_file, params={"workers": 1}, duration=20_000_000, machine="smp4")
    assert len(r.tasks) == 1 and r.record["sim_ns"] <= 20_000_000 and len(r.cpus) == 4


def test_series_long_format(workload_file: pathlib.Path) -> None:
    r = schedlab.run(workload_file, sched="cfs", sample="1ms")
    s = r.series
    assert list(s.columns) == ["scheduler", "time_ns", "entity", "id", "name", "metric", "value"]
    rec = r.record["series"]
    runnable = s[(s.entity == "cpu") & (s.id == 1) & (s.metric == "runnable")]["value"].tolist()
    assert runnable == rec["cpu_runnable"][1]
    # A task's cumulative run time never decreases and ends at most at its run time.
    t0 = s[(s.entity == "task") & (s.id == 0) & (s.metric == "runtime_ns")]["value"]
    assert t0.is_monotonic_increasing and t0.iloc[-1] <= r.tasks["runtime_ns"][0]
    assert {"vruntime"} <= set(s[s.entity == "task"]["metric"])
    assert schedlab.run(workload_file).series.empty


def test_a_bad_workload_raises_the_clis_located_message(tmp_path: pathlib.Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[[task]]\nname = "t"\nprogram = [ { run = "5 parsecs" } ]\n')
    with pytest.raises(schedlab.InputError) as e:
        schedlab.run(bad)
    msg = str(e.value)
    assert msg.startswith(f"{bad}:3:"), msg
    out = cli("run", str(bad))
    assert out.returncode == 2 and out.stderr.strip() == f"error: {msg}"


def test_other_errors() -> None:
    with pytest.raises(schedlab.InputError, match="unknown machine `cray-1`"):
        schedlab.run(WORKLOAD, machine="cray-1")
    with pytest.raises(schedlab.InputError, match="not among the schedulers run"):
        schedlab.compare(WORKLOAD, "cfs,ule", set={"eevdf:base_slice_ns": 3_000_000})
    with pytest.raises(schedlab.SchedlabError, match="no such workload file"):
        schedlab.run("does-not-exist.toml")
    with pytest.raises(schedlab.InputError, match="duration"):
        schedlab.run(WORKLOAD, duration="soon")


def test_listings_match_the_cli() -> None:
    m = schedlab.machines()
    assert "smp4" in m and "smp2" in m
    scheds = schedlab.schedulers()
    names = [s["name"] for s in scheds]
    assert {"eevdf", "cfs", "ule", "o1", "fifo"} <= set(names)
    cfs = next(s for s in scheds if s["name"] == "cfs")
    assert any(t["name"] == "sched_min_granularity_ns" for t in cfs["tunables"])
    assert "cfs-eevdf" in schedlab.studies()
    out = cli("list")
    assert out.returncode == 0
    for n in names + list(m):
        assert f"  {n} " in out.stdout


def test_study_of_a_workload_prints_the_clis_table(workload_file: pathlib.Path) -> None:
    s = schedlab.study(workload_file, "cfs,ule")
    out = cli("study", str(workload_file), "--sched", "cfs,ule")
    assert out.returncode == 0, out.stderr
    assert s.text == out.stdout
    assert [r.scheduler for r in s.runs] == ["cfs", "ule"]
    assert not s.runs[0].series.empty  # studies sample every 10 ms


def test_results_are_deterministic(workload_file: pathlib.Path) -> None:
    a = schedlab.run(workload_file, sched="eevdf", seed=7)
    b = schedlab.run(workload_file, sched="eevdf", seed=7)
    pd.testing.assert_frame_equal(a.tasks, b.tasks)
    assert without_host(a.record) == without_host(b.record)


RTAPP = {"global": {"duration": 1}, "tasks": {"worker": {"instance": 2, "loop": -1, "run": 3000, "sleep": 2000}}}


def test_rtapp_json_as_dict_string_and_file(tmp_path: pathlib.Path) -> None:
    f = tmp_path / "rt.json"
    f.write_text(json.dumps(RTAPP, indent=2))
    runs = [schedlab.run(w, machine="smp2", duration="30ms") for w in (RTAPP, json.dumps(RTAPP), f)]
    assert len(runs[0].tasks) == 2 and runs[0].tasks["runtime_ns"].min() > 0
    assert runs[0].record["trace_hash"] == runs[1].record["trace_hash"] == runs[2].record["trace_hash"]


def test_explain_equals_the_cli(workload_file: pathlib.Path) -> None:
    name = schedlab.run(workload_file).tasks["name"][1]
    e = schedlab.explain(workload_file, name, worst=2, sched="cfs")
    out = cli("explain", str(workload_file), "--task", name, "--worst", "2", "--sched", "cfs")
    assert out.returncode == 0, out.stderr
    assert e.text == out.stdout
    out = cli("explain", str(workload_file), "--task", name, "--worst", "2", "--sched", "cfs", "--format", "json")
    assert e.data == json.loads(out.stdout)
    assert 0 < len(e.waits) <= 2
    summary = schedlab.explain(workload_file, sched="cfs").tasks
    assert len(summary) == 3 and (summary.filter(like="by_cause.").sum(axis=1) == summary["wait_ns"]).all()
    with pytest.raises(schedlab.InputError, match="no task of that name"):
        schedlab.explain(workload_file, "nobody")


def test_explain_a_study_experiment_equals_the_cli() -> None:
    args = ("--experiment", "sleeper", "--config", "eevdf", "--duration", "300ms")
    e = schedlab.explain("cfs-eevdf", experiment="sleeper", config="eevdf", duration="300ms")
    out = cli("explain", "cfs-eevdf", *args)
    assert out.returncode == 0, out.stderr
    assert e.text == out.stdout and len(e.tasks) > 0
    with pytest.raises(schedlab.InputError, match="no such experiment"):
        schedlab.explain("cfs-eevdf", experiment="nope")
    with pytest.raises(schedlab.InputError, match="not a multi-experiment study"):
        schedlab.explain("ule-cfs-fibo-sysbench", experiment="x")


def test_every_kernel_switch_is_set_from_python(workload_file: pathlib.Path) -> None:
    # The kernel's switches go through `set` like tunables, and the record reports each as
    # the kernel ran it; the CLI's flags are shorthands for the same switches.
    sets = {"kernel.version": "3.4", "kernel.ttwu_queue": "0", "kernel.delayed_wakeup": "1",
            "kernel.lb_narrow_lock": "1", "futex.vip": "0", "futex.vip_starvation_ns": "5ms",
            "futex.max_lock_depth": "7"}
    r = schedlab.run(workload_file, sched="cfs", duration="5ms", set=sets)
    got = r.record["kernel"]["switches"]
    want = dict(sets, **{"futex.vip_starvation_ns": "5000000"})
    assert got == want, got
    out = cli("run", str(workload_file), "--sched", "cfs", "--duration", "5ms", "--format", "json",
              "--kernel", "3.4", "--no-ttwu-queue", "--delayed-wakeup", "--lb-narrow-lock",
              "--set", "futex.vip=0", "--set", "futex.vip_starvation_ns=5ms", "--set", "futex.max_lock_depth=7")
    assert out.returncode == 0, out.stderr
    assert without_host(json.loads(out.stdout)) == without_host(r.record)
    with pytest.raises(schedlab.InputError, match="kernel.nope"):
        schedlab.run(workload_file, sched="cfs", duration="5ms", set={"kernel.nope": "1"})


def test_groups_equal_the_json_field_for_field() -> None:
    text = ('[[group]]\nname = "lim"\nmax = "20ms/100ms"\nburst = "5ms"\n[[task]]\nname = "h"\ngroup = "lim"\n'
            'program = [ { loop = "forever", do = [ { run = "100ms" } ] } ]\n')
    for sched, bursts in [("cfs", False), ("eevdf", True)]:
        r = schedlab.run(text, sched=sched, duration="500ms")
        rec = json.loads(r.json)
        assert len(r.groups) == len(rec["groups"]) == 1
        for (_, row), g in zip(r.groups.iterrows(), rec["groups"]):
            assert set(g) | {"scheduler"} <= set(r.groups.columns)
            assert all(cell(row[k]) == v for k, v in g.items()), (dict(row), g)
            assert ("nr_bursts" in g) == bursts and g["nr_throttled"] > 0
    assert schedlab.run(WORKLOAD, duration="10ms").groups.empty
