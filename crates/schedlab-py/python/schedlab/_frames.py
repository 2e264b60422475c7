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
LOCK_LINE_COLUMNS = ["line_transfers", "line_ns"]
SPAN_COLUMNS = ["name", "count", "per_sec", "mean_ns", "min_ns"]
GROUP_COLUMNS = [
    "name", "max_quota_ns", "max_period_ns", "max_burst_ns", "nr_periods", "nr_throttled", "throttled_ns",
    "nr_bursts", "burst_ns",
]
# Absent from a record when unlimited (max_quota_ns) or from v5.15's cpu.stat (the bursts).
GROUP_OPTIONAL = ["max_quota_ns", "nr_bursts", "burst_ns"]
SERIES_COLUMNS = ["scheduler", "time_ns", "entity", "id", "name", "metric", "value"]


def _frame(record: Dict[str, Any], rows: List[Dict[str, Any]], columns: List[str]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=columns)
    df.insert(0, "scheduler", record["scheduler"]["name"])
    return df


def _flat(d: Dict[str, Any], prefix: str) -> Dict[str, Any]:
    """``{a: {b: 1}}`` under ``prefix`` as ``{prefix.a.b: 1}`` (lists stay one cell)."""
    out: Dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def _nested(items: List[Dict[str, Any]], fields: List[str]) -> List[Dict[str, Any]]:
    """Each item's nested object ``fields`` (the machine's charges, frequency, line time by
    path) flattened; a key an item leaves out (the record omits zeros) is 0."""
    flats = [{k: v for f in fields for k, v in _flat(it.get(f) or {}, f"{f}.").items()} for it in items]
    keys: List[str] = []
    for fl in flats:
        keys += [k for k in fl if k not in keys]
    return [{k: fl.get(k, 0) for k in keys} for fl in flats]


def tasks_frame(record: Dict[str, Any]) -> pd.DataFrame:
    cols = TASK_COLUMNS + [f"wakeup_latency_ns.{k}" for k in LATENCY_KEYS] + ["exit_ns"]
    # The energy of the CPUs while it ran (nJ): only with the machine's energy model.
    energy = any("energy_nj" in t for t in record["tasks"])
    if energy:
        cols.append("energy_nj")
    # Forced idle under core scheduling (ns): only when core scheduling acted.
    forceidle = any("core_forceidle_sum_ns" in t for t in record["tasks"])
    if forceidle:
        cols.append("core_forceidle_sum_ns")
    rows = []
    for t, extra in zip(record["tasks"], _nested(record["tasks"], ["costs"])):
        row = {c: t[c] for c in TASK_COLUMNS}
        row.update({f"wakeup_latency_ns.{k}": t["wakeup_latency_ns"][k] for k in LATENCY_KEYS})
        row["exit_ns"] = t["exit_ns"]
        if energy:
            row["energy_nj"] = t.get("energy_nj")
        if forceidle:
            row["core_forceidle_sum_ns"] = t.get("core_forceidle_sum_ns")
        row.update(extra)
        rows.append(row)
    cols += [k for k in (rows[0] if rows else {}) if k not in cols]
    df = _frame(record, rows, cols)
    # A task still alive at the end has no exit time: a nullable integer, not a float.
    df["exit_ns"] = df["exit_ns"].astype("Int64")
    if energy:
        df["energy_nj"] = df["energy_nj"].astype("Int64")
    if forceidle:
        df["core_forceidle_sum_ns"] = df["core_forceidle_sum_ns"].astype("Int64")
    return df


def cpus_frame(record: Dict[str, Any]) -> pd.DataFrame:
    paths: List[str] = []
    for c in record["cpus"]:
        paths += [p for p in c.get("kernel_paths", {}) if p not in paths]
    rows = []
    # energy.{active,idle}_nj: null where the model has no power (a nullable column).
    nested = _nested(record["cpus"], ["kernel_path_lines", "costs", "freq", "energy"])
    for c, extra in zip(record["cpus"], nested):
        row = {k: c.get(k, 0) for k in CPU_COLUMNS}
        row.update({f"kernel_paths.{p}": c.get("kernel_paths", {}).get(p, 0) for p in paths})
        row.update(extra)
        # Time and entries per idle state: a list of {name, usage, time_ns}, one cell.
        row["idle_states"] = c.get("idle_states", [])
        rows.append(row)
    cols = CPU_COLUMNS + [f"kernel_paths.{p}" for p in paths]
    cols += [k for k in (rows[0] if rows else {}) if k not in cols]
    return _frame(record, rows, cols)


def locks_frame(record: Dict[str, Any]) -> pd.DataFrame:
    # The cache-line transfers a site caused and their time (omitted when zero).
    cols = LOCK_COLUMNS + LOCK_LINE_COLUMNS
    return _frame(record, [{k: lk.get(k, 0) for k in cols} for lk in record["locks"]], cols)


def spans_frame(record: Dict[str, Any]) -> pd.DataFrame:
    cols = SPAN_COLUMNS + [f"latency_ns.{k}" for k in LATENCY_KEYS]
    rows = []
    for s in record.get("spans", []):
        row = {k: s[k] for k in SPAN_COLUMNS}
        row.update({f"latency_ns.{k}": s["latency_ns"][k] for k in LATENCY_KEYS})
        rows.append(row)
    return _frame(record, rows, cols)


def groups_frame(record: Dict[str, Any]) -> pd.DataFrame:
    """One row per bandwidth-limited group: its cpu.max and cpu.stat; the optional fields
    are nullable ``Int64`` (missing when absent)."""
    rows = [{k: g.get(k) for k in GROUP_COLUMNS} for g in record.get("groups", [])]
    df = _frame(record, rows, GROUP_COLUMNS)
    for k in GROUP_OPTIONAL:
        df[k] = df[k].astype("Int64")
    return df


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
