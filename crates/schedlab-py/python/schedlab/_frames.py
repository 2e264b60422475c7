"""DataFrames from a run's record (the JSON of `schedlab run --format json`).

Every frame starts with a ``scheduler`` column so frames of several runs concatenate. A
nested JSON field ``a: {b: …}`` becomes column ``a.b`` (as ``pandas.json_normalize`` names
it); times are integer nanoseconds.
"""

from __future__ import annotations

from typing import Any, Dict, List

import numpy as np
import pandas as pd

TASK_COLUMNS = [
    "name", "tid", "nice", "start_ns", "runtime_ns", "wait_ns", "sleep_ns", "switches_voluntary",
    "switches_involuntary", "migrations", "wakeups",
]
LATENCY_KEYS = ["p50", "p90", "p99", "max"]
CPU_COLUMNS = ["cpu", "user_ns", "kernel_ns", "spin_ns", "idle_ns", "other_ns"]
LOCK_COLUMNS = ["lock", "site", "acquisitions", "contended", "spin_ns"]
SPAN_COLUMNS = ["name", "count", "per_sec", "mean_ns", "min_ns"]
SERIES_COLUMNS = ["scheduler", "time_ns", "entity", "id", "name", "metric", "value"]


def _frame(record: Dict[str, Any], rows: List[Dict[str, Any]], columns: List[str]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=columns)
    df.insert(0, "scheduler", record["scheduler"]["name"])
    return df


def tasks_frame(record: Dict[str, Any]) -> pd.DataFrame:
    cols = TASK_COLUMNS + [f"wakeup_latency_ns.{k}" for k in LATENCY_KEYS] + ["exit_ns"]
    rows = []
    for t in record["tasks"]:
        row = {c: t[c] for c in TASK_COLUMNS}
        row.update({f"wakeup_latency_ns.{k}": t["wakeup_latency_ns"][k] for k in LATENCY_KEYS})
        row["exit_ns"] = t["exit_ns"]
        rows.append(row)
    df = _frame(record, rows, cols)
    # A task still alive at the end has no exit time: a nullable integer, not a float.
    df["exit_ns"] = df["exit_ns"].astype("Int64")
    return df


def cpus_frame(record: Dict[str, Any]) -> pd.DataFrame:
    paths: List[str] = []
    for c in record["cpus"]:
        paths += [p for p in c.get("kernel_paths", {}) if p not in paths]
    rows = []
    for c in record["cpus"]:
        row = {k: c.get(k, 0) for k in CPU_COLUMNS}
        row.update({f"kernel_paths.{p}": c.get("kernel_paths", {}).get(p, 0) for p in paths})
        rows.append(row)
    return _frame(record, rows, CPU_COLUMNS + [f"kernel_paths.{p}" for p in paths])


def locks_frame(record: Dict[str, Any]) -> pd.DataFrame:
    return _frame(record, [{k: lk[k] for k in LOCK_COLUMNS} for lk in record["locks"]], LOCK_COLUMNS)


def spans_frame(record: Dict[str, Any]) -> pd.DataFrame:
    cols = SPAN_COLUMNS + [f"latency_ns.{k}" for k in LATENCY_KEYS]
    rows = []
    for s in record.get("spans", []):
        row = {k: s[k] for k in SPAN_COLUMNS}
        row.update({f"latency_ns.{k}": s["latency_ns"][k] for k in LATENCY_KEYS})
        rows.append(row)
    return _frame(record, rows, cols)


def series_frame(record: Dict[str, Any]) -> pd.DataFrame:
    """Long format: one row per (sample, entity, metric). ``entity`` is ``cpu`` (metrics
    ``runnable``, ``busy``; ``id`` the CPU), ``task`` (``runtime_ns`` and the policy's
    statistics; ``id`` the task's index in ``tasks``), or ``machine`` (``rq_lock_acquisitions``,
    ``rq_lock_contended``, cumulative; ``id`` 0)."""
    s = record.get("series")
    if not s:
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in zip(
            SERIES_COLUMNS, ["object", "int64", "object", "int64", "object", "object", "int64"])})
    times = np.asarray(s["times_ns"], dtype=np.int64)
    parts: List[pd.DataFrame] = []

    def add(t: np.ndarray, entity: str, ident: int, name: str, metric: str, values: List[int]) -> None:
        v = np.asarray(values, dtype=np.int64)
        parts.append(pd.DataFrame({"time_ns": t[: len(v)], "entity": entity, "id": ident, "name": name,
                                   "metric": metric, "value": v}))

    for cpu, (runnable, busy) in enumerate(zip(s["cpu_runnable"], s["cpu_busy"])):
        add(times, "cpu", cpu, f"cpu{cpu}", "runnable", runnable)
        add(times, "cpu", cpu, f"cpu{cpu}", "busy", busy)
    add(times, "machine", 0, "rq_lock", "rq_lock_acquisitions", s["rq_lock_acquisitions"])
    add(times, "machine", 0, "rq_lock", "rq_lock_contended", s["rq_lock_contended"])
    tasks = record["tasks"]
    for t, first in enumerate(s["first"]):
        name = tasks[t]["name"] if t < len(tasks) else str(t)
        add(times[first:], "task", t, name, "runtime_ns", s["runtime_ns"][t])
        for k, stat in enumerate(s["stat_names"]):
            if t < len(s["stats"]) and k < len(s["stats"][t]):
                add(times[first:], "task", t, name, stat, s["stats"][t][k])
    df = pd.concat(parts, ignore_index=True)
    df.insert(0, "scheduler", record["scheduler"]["name"])
    return df[SERIES_COLUMNS]
