"""schedlab: a laboratory for multicore CPU schedulers, from Python.

Simulate a workload under Linux's and FreeBSD's schedulers and get the results as pandas
DataFrames::

    import schedlab
    r = schedlab.run("examples/workloads/hackbench.toml", sched="cfs", duration="100ms")
    r.tasks          # one row per task
    r.cpus           # one row per CPU
    r.locks          # one row per (lock, site)
    r.series         # time series, long format (needs sample=...)
    r.json           # the record, exactly `schedlab run --format json`

The columns are documented in docs/python.md. Errors raise :class:`InputError` (bad
input; the message names file:line:col and the field, as the command line does) or
:class:`SimulationError`; both are :class:`SchedlabError`.
"""

from __future__ import annotations

import json as _json
import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import pandas as pd

from . import _native, ext
from ._frames import cpus_frame, groups_frame, locks_frame, series_frame, spans_frame, tasks_frame
from ._native import InputError, SchedlabError, SimulationError

__all__ = [
    "run",
    "compare",
    "study",
    "sweep",
    "explain",
    "machines",
    "schedulers",
    "studies",
    "Result",
    "Comparison",
    "Study",
    "Explanation",
    "SchedlabError",
    "InputError",
    "SimulationError",
    "DEFAULT_SCHEDULER",
    "Sched",
    "ext",
    "__version__",
]

__version__: str = _native.__version__

#: The scheduler of :func:`run` by default: the one Linux runs today.
DEFAULT_SCHEDULER = "eevdf"

Workload = Union[str, "os.PathLike[str]", Mapping[str, Any]]
Duration = Union[str, int, None]
Settings = Union[Mapping[str, Any], Sequence[Tuple[str, Any]], None]
#: A scheduler: a name (``"eevdf"``, ``"ext:simple"``), a Python sched_ext policy object
#: (:mod:`schedlab.ext`), or ``("ext", policy)``.
Sched = Union[str, Any, Tuple[str, Any]]

#: The callbacks that make an object a sched_ext policy (docs/write-a-scheduler.md).
_CALLBACKS = ("select_cpu", "enqueue", "dequeue", "dispatch", "runnable", "running", "stopping", "quiescent",
              "tick", "yield_task", "set_weight", "set_cpumask", "init_task", "enable", "exit_task",
              "cpu_acquire", "cpu_release", "init", "timer")


class Result:
    """One run's record, with DataFrames built from its JSON on first use."""

    def __init__(self, record_json: str, record: Optional[Dict[str, Any]] = None) -> None:
        self.json: str = record_json
        self.record: Dict[str, Any] = record if record is not None else _json.loads(record_json)
        self._frames: Dict[str, pd.DataFrame] = {}
        #: A Python policy's first exception (the run went on under fair), else None.
        self.policy_error: Optional[BaseException] = None

    def _frame(self, name: str, make: Any) -> pd.DataFrame:
        if name not in self._frames:
            self._frames[name] = make(self.record)
        return self._frames[name]

    @property
    def scheduler(self) -> str:
        return str(self.record["scheduler"]["name"])

    @property
    def tasks(self) -> pd.DataFrame:
        """One row per task (see docs/python.md for the columns)."""
        return self._frame("tasks", tasks_frame)

    @property
    def cpus(self) -> pd.DataFrame:
        """One row per CPU: time by mode and kernel time by path."""
        return self._frame("cpus", cpus_frame)

    @property
    def locks(self) -> pd.DataFrame:
        """One row per (lock, site) that was taken."""
        return self._frame("locks", locks_frame)

    @property
    def spans(self) -> pd.DataFrame:
        """One row per named span (mark_begin/mark_end) of the workload."""
        return self._frame("spans", spans_frame)

    @property
    def groups(self) -> pd.DataFrame:
        """One row per bandwidth-limited group (cpu.max): its limit and cpu.stat."""
        return self._frame("groups", groups_frame)

    @property
    def series(self) -> pd.DataFrame:
        """Sampled time series in long format (empty unless run with ``sample=``)."""
        return self._frame("series", series_frame)

    def __repr__(self) -> str:
        r = self.record
        return (
            f"<schedlab.Result {r['workload']['name']} under {self.scheduler} on {r['machine']['name']}: "
            f"{len(r['tasks'])} tasks, {r['sim_ns'] / 1e6:.3f} ms simulated ({r['end_reason']})>"
        )


class Comparison:
    """Several runs of one workload, one per scheduler, in the order named."""

    def __init__(self, records_json: str) -> None:
        self.json: str = records_json
        self.runs: List[Result] = [Result(_json.dumps(r, indent=2), r) for r in _json.loads(records_json)]

    def __getitem__(self, scheduler: str) -> Result:
        for r in self.runs:
            if r.scheduler == scheduler:
                return r
        raise KeyError(scheduler)

    def __iter__(self) -> Any:
        return iter(self.runs)

    def __len__(self) -> int:
        return len(self.runs)

    def _concat(self, attr: str) -> pd.DataFrame:
        return pd.concat([getattr(r, attr) for r in self.runs], ignore_index=True)

    @property
    def tasks(self) -> pd.DataFrame:
        return self._concat("tasks")

    @property
    def cpus(self) -> pd.DataFrame:
        return self._concat("cpus")

    @property
    def locks(self) -> pd.DataFrame:
        return self._concat("locks")

    @property
    def spans(self) -> pd.DataFrame:
        return self._concat("spans")

    @property
    def groups(self) -> pd.DataFrame:
        return self._concat("groups")

    @property
    def series(self) -> pd.DataFrame:
        return self._concat("series")

    def __repr__(self) -> str:
        return f"<schedlab.Comparison of {', '.join(r.scheduler for r in self.runs)}>"


class Study:
    """A study's comparison: ``text`` (as ``schedlab study`` prints it), ``tables`` (for a
    built-in multi-experiment study: one DataFrame per experiment, metrics × configurations)
    and ``runs`` (every run, as :class:`Result`)."""

    def __init__(self, study_json: str) -> None:
        data = _json.loads(study_json)
        self.name: str = data["name"]
        self.text: str = data["text"]
        self.tables: Dict[str, pd.DataFrame] = {}
        self.runs: List[Result] = []
        for x in data.get("experiments", []):
            rows = {metric: values for metric, values in x["rows"]}
            self.tables[x["name"]] = pd.DataFrame.from_dict(rows, orient="index", columns=x["labels"])
            self.runs += [Result(_json.dumps(r, indent=2), r) for r in x["records"]]
        self.runs += [Result(_json.dumps(r, indent=2), r) for r in data.get("records", [])]

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"<schedlab.Study {self.name}: {len(self.runs)} runs>"


class Explanation:
    """What ``schedlab explain`` prints: ``text``; ``json`` and ``data`` (parsed): the
    selected waits of the task (``waits``: who ran instead and why, why no other CPU took
    it, how it was woken) and every task's waiting by cause (``tasks``, also as a DataFrame
    with columns ``task``, ``tid``, ``wait_ns``, ``waits``, ``by_cause.CAUSE``)."""

    def __init__(self, text: str, data_json: str) -> None:
        self.text: str = text
        self.json: str = data_json
        self.data: Dict[str, Any] = _json.loads(data_json)

    @property
    def waits(self) -> List[Dict[str, Any]]:
        return list(self.data["waits"])

    @property
    def tasks(self) -> pd.DataFrame:
        rows = [{"task": t["task"], "tid": t["tid"], "wait_ns": t["wait_ns"], "waits": t["waits"],
                 **{f"by_cause.{c}": v for c, v in t["by_cause"].items()}} for t in self.data["tasks"]]
        return pd.DataFrame(rows)

    def __str__(self) -> str:
        return self.text


def _workload(workload: Workload) -> Tuple[str, str, bool]:
    """(name for errors, text, text is JSON) of a path, a TOML string or a dict."""
    if isinstance(workload, Mapping):
        # An rt-app description ("tasks" object) is read as JSON; a native one ("task"
        # array) is written as TOML first.
        return ("<dict>", _json.dumps(workload), "tasks" not in workload)
    text = os.fspath(workload)
    if "\n" not in text and os.path.exists(text):
        with open(text, encoding="utf-8") as f:
            return (text, f.read(), False)
    if "\n" in text or "=" in text or text.lstrip().startswith("{"):
        return ("<string>", text, False)
    raise InputError(f"{text}: no such workload file (pass a path, a TOML string or a dict)")


def _duration(value: Duration, what: str) -> Optional[str]:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value}ns"
    raise InputError(f"{what}: expected a duration such as '100ms' or integer nanoseconds")


def _pairs(values: Settings) -> List[Tuple[str, str]]:
    if values is None:
        return []
    items = values.items() if isinstance(values, Mapping) else values
    return [(str(k), str(v).lower() if isinstance(v, bool) else str(v)) for k, v in items]


def _opts(machine: Optional[str], set: Settings, params: Settings, seed: int, duration: Duration,
          sample: Duration, check: bool) -> Dict[str, Any]:
    return {
        "machine": machine,
        "sets": _pairs(set),
        "params": _pairs(params),
        "seed": int(seed),
        "duration": _duration(duration, "duration"),
        "sample": _duration(sample, "sample"),
        "check": bool(check),
    }


def run(workload: Workload, *, machine: Optional[str] = None, sched: Sched = DEFAULT_SCHEDULER,
        set: Settings = None, params: Settings = None, seed: int = 1, duration: Duration = None,
        sample: Duration = None, check: bool = False) -> Result:
    """Simulates ``workload`` (a path, a TOML string or a dict) under one scheduler.

    ``machine``: a preset (:func:`machines`) or a machine file; default the workload's.
    ``set``: tunables ``{name: value}``; ``params``: workload parameter overrides.
    ``duration``/``sample``: ``"100ms"`` or integer ns; ``sample`` records time series.
    ``check``: verify the kernel's and the policy's invariants after every event (slow).
    ``sched``: a name, or a Python sched_ext policy (an object with ``ScxOps`` callbacks, or
    ``("ext", policy)``; docs/write-a-scheduler.md). A policy's callback that raises ejects
    it (the run goes on under fair, ``record["scheduler"]["exit"]`` says why) and the
    exception is kept in :attr:`Result.policy_error`.
    """
    name, text, is_json = _workload(workload)
    opts = _opts(machine, set, params, seed, duration, sample, check)
    pol = _policy(sched)
    if pol is not None:
        return _run_policy(name, text, is_json, pol, opts)
    return Result(_native.run(name, text, is_json, sched, opts))


def _policy(sched: Any) -> Optional[Tuple[str, Any]]:
    """``(label, object)`` of a Python policy; None for a scheduler name."""
    if isinstance(sched, str):
        return None
    if isinstance(sched, tuple) and len(sched) == 2 and sched[0] == "ext":
        sched = sched[1]
    if isinstance(sched, (str, tuple)) or not any(callable(getattr(sched, c, None)) for c in _CALLBACKS):
        raise InputError(f"sched: {sched!r} is neither a scheduler name nor a policy with sched_ext callbacks "
                         f"({', '.join(_CALLBACKS)})")
    label = getattr(sched, "name", None)
    if not isinstance(label, str) or not label:
        label = f"py:{type(sched).__name__}"
    return (label if label.startswith("ext:") else f"ext:{label}", sched)


def _run_policy(name: str, text: str, is_json: bool, pol: Tuple[str, Any], opts: Dict[str, Any]) -> Result:
    record_json, raised = _native.run_policy(name, text, is_json, pol[0], pol[1], opts)
    r = Result(record_json)
    r.policy_error = raised
    return r


def compare(workload: Workload, sched: Union[str, Sequence[Sched], None] = None, *,
            machine: Optional[str] = None, set: Settings = None, params: Settings = None, seed: int = 1,
            duration: Duration = None, sample: Duration = None, check: bool = False) -> Comparison:
    """Simulates ``workload`` under several schedulers (default: the workload's
    ``schedulers``, else eevdf, cfs, ule) in parallel on the local cores. A tunable
    ``"SCHED:name"`` applies to that scheduler only. Python policies (see :func:`run`)
    may be among them; they run one after another on the calling thread."""
    name, text, is_json = _workload(workload)
    opts = _opts(machine, set, params, seed, duration, sample, check)
    items: List[Any] = _schedulers(sched) if sched is None or isinstance(sched, str) else list(sched)
    pols = {i: _policy(s) for i, s in enumerate(items) if not isinstance(s, str)}
    if not pols:
        return Comparison(_native.compare(name, text, is_json, items, opts))
    return _compare_policies(name, text, is_json, items, pols, opts)


def _compare_policies(name: str, text: str, is_json: bool, items: List[Any],
                      pols: Dict[int, Optional[Tuple[str, Any]]], opts: Dict[str, Any]) -> Comparison:
    """Named schedulers in parallel, then each Python policy; the runs in the order given."""
    labels = [p[0] for p in pols.values() if p is not None]
    def aimed(k: str, label: str) -> bool:
        return k.startswith(label + ":")
    named = [s for s in items if isinstance(s, str)]
    native_sets = [(k, v) for k, v in opts["sets"] if not any(aimed(k, lb) for lb in labels)]
    if not named and any(":" in k for k, _ in native_sets):
        raise InputError(f"set `{next(k for k, _ in native_sets if ':' in k)}`: aimed at none of the "
                         f"schedulers run ({', '.join(labels)})")
    runs: List[Result] = []
    if named:
        runs = Comparison(_native.compare(name, text, is_json, named, {**opts, "sets": native_sets})).runs
    out: List[Result] = []
    for i, s in enumerate(items):
        pol = pols.get(i)
        if pol is None:
            out.append(runs.pop(0))
            continue
        sets = [(k, v) for k, v in opts["sets"] if ":" not in k]
        sets += [(k[len(pol[0]) + 1:], v) for k, v in opts["sets"] if aimed(k, pol[0])]
        out.append(_run_policy(name, text, is_json, pol, {**opts, "sets": sets}))
    c = Comparison(_json.dumps([r.record for r in out]))
    for r, made in zip(c.runs, out):
        r.policy_error = made.policy_error
    return c


def _schedulers(sched: Union[str, Sequence[str], None]) -> List[str]:
    if sched is None:
        return []
    if isinstance(sched, str):
        return [s.strip() for s in sched.split(",") if s.strip()]
    return list(sched)


def study(name: Union[str, "os.PathLike[str]"], sched: Union[str, Sequence[str], None] = None, *,
          machine: Optional[str] = None, set: Settings = None, params: Settings = None, seed: int = 1,
          duration: Duration = None, sample: Duration = None) -> Study:
    """Runs a study: a built-in name (:func:`studies`) or a workload file, under several
    schedulers, with the comparison ``schedlab study`` prints."""
    path = os.fspath(name)
    text: Optional[str] = None
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            text = f.read()
    opts = _opts(machine, set, params, seed, duration, sample, False)
    return Study(_native.study(path, text, _schedulers(sched), opts))


def explain(workload: Workload, task: Optional[str] = None, *, at: Duration = None, worst: Optional[int] = None,
            between: Optional[Tuple[Duration, Duration]] = None, summary: bool = False,
            sched: str = DEFAULT_SCHEDULER, machine: Optional[str] = None, set: Settings = None,
            params: Settings = None, seed: int = 1, duration: Duration = None,
            experiment: Optional[str] = None, config: Optional[str] = None) -> Explanation:
    """Explains the waits of ``task`` (a name, or a template's: ``worker`` matches
    ``worker.3``): the one in progress ``at`` a time, those overlapping ``between``, else the
    ``worst`` (3) longest; with ``task=None`` (or ``summary=True``) every task's waiting by
    cause. With ``experiment``, ``workload`` is a built-in study's name and the run explained
    is that experiment's ``config`` (a column label, a scheduler or its base name; default
    the first), as ``schedlab explain STUDY --experiment X --config C``. Simulator only
    (docs/explain.md)."""
    if experiment is not None:
        if not isinstance(workload, str):
            raise InputError("explain(experiment=...): the workload is a built-in study's name")
        name, text, is_json = workload, "", False
    else:
        name, text, is_json = _workload(workload)
    span = None if between is None else (_duration(between[0], "between"), _duration(between[1], "between"))
    ask = {"task": task, "at": _duration(at, "at"), "worst": worst, "between": span, "summary": bool(summary),
           "experiment": experiment, "config": config}
    opts = _opts(machine, set, params, seed, duration, None, False)
    out_text, out_json = _native.explain(name, text, is_json, sched, opts, ask)
    return Explanation(out_text, out_json)


def machines() -> Dict[str, str]:
    """Machine presets: name → description."""
    return dict(_native.machines())


def studies() -> Dict[str, str]:
    """Built-in studies: name → description."""
    return dict(_native.suites())


def schedulers(machine: str = "smp8") -> List[Dict[str, Any]]:
    """Schedulers: ``name``, ``doc``, ``versions`` (default last) and ``tunables`` (each
    ``name``, ``value`` (the default on ``machine``), ``doc``)."""
    return list(_json.loads(_native.schedulers(machine)))


def sweep(spec: Union[str, "os.PathLike[str]", Mapping[str, Any]], *, ray: bool = False,
          address: Optional[str] = None, jobs: int = 0) -> pd.DataFrame:
    """Runs a sweep (docs/sweep.md) and returns its tidy table, one row per run. ``spec`` is
    a sweep file's path, its TOML text, or the same as a dict, whose ``workload`` may be a
    path, a built-in study's name or the workload itself as a dict (as :func:`run` takes).
    A relative workload path is relative to the sweep file, or to the current directory for
    text and dicts. Locally on ``jobs`` threads (0: every core), or with ``ray=True`` as one
    Ray task per run (a local Ray unless ``address`` names a cluster). The table is the
    same either way (the CSV ``schedlab sweep`` writes)."""
    from ._sweep import run_sweep

    return run_sweep(spec, ray=ray, address=address, jobs=jobs)
