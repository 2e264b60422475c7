"""sched_ext policies written in Python (docs/write-a-scheduler.md, "In Python"): a port
of ext:simple makes the Rust example's decisions (same trace hash), runs are
deterministic, and a policy that raises or misbehaves is ejected to fair with the reason
reported, as sched_ext ejects a BPF scheduler."""

from __future__ import annotations

import importlib.util
import json
from typing import Any, Dict, Optional

import pytest

import schedlab
from schedlab import ext
from conftest import ROOT, without_host

HACKBENCH = str(ROOT / "examples" / "workloads" / "hackbench.toml")
RUN = dict(machine="smp4", duration="20ms", seed=3, check=True)
# Six workers on four CPUs, each wanting half a CPU: under any working scheduler every one
# runs about 10 ms of the 20.
WORKERS = """
[[task]]
name = "w"
count = 6
program = [ { loop = 1000, do = [ { run = "1ms" }, { sleep = "1ms" } ] } ]
"""


def _simple() -> Any:
    spec = importlib.util.spec_from_file_location("scx_simple", ROOT / "examples" / "policies" / "scx_simple.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.Simple


def _same_run(a: Dict[str, Any], b: Dict[str, Any]) -> Dict[str, Any]:
    """The parts of two records that must agree when two policies decide alike."""
    return {k: (a[k], b[k]) for k in ("trace_hash", "events", "tasks", "cpus", "locks", "policy_counters",
                                       "sim_ns", "end_reason") if a[k] != b[k]}


@pytest.mark.parametrize("fifo", [True, False])
def test_python_port_of_simple_has_the_rust_trace_hash(fifo: bool) -> None:
    py = schedlab.run(HACKBENCH, sched=_simple()(fifo=fifo), **RUN)
    rs = schedlab.run(HACKBENCH, sched="ext:simple", set={"fifo": int(fifo)}, **RUN)
    assert py.policy_error is None and py.record["scheduler"].get("exit") is None
    assert py.scheduler == "ext:simple-py"
    assert _same_run(py.record, rs.record) == {}
    # The policy's own counters arrive as the Rust one's do.
    assert py.record["policy_counters"]["ext.global"] > 0


def test_a_python_policy_run_is_deterministic() -> None:
    a = schedlab.run(HACKBENCH, sched=("ext", _simple()()), **RUN)
    b = schedlab.run(HACKBENCH, sched=("ext", _simple()()), **RUN)
    assert without_host(a.record) == without_host(b.record)


class Raising:
    """A FIFO policy whose enqueue raises on its fifth call."""

    def __init__(self) -> None:
        self.calls = 0

    def init(self, ctx: ext.ScxCtx) -> None:
        ctx.create_dsq(1)

    def enqueue(self, ctx: ext.ScxCtx, p: int, enq_flags: int) -> None:
        self.calls += 1
        if self.calls == 5:
            raise ZeroDivisionError("the policy's own bug")
        ctx.dsq_insert(p, 1, ext.SLICE_DFL, enq_flags)

    def dispatch(self, ctx: ext.ScxCtx, cpu: int, prev: Optional[int]) -> None:
        ctx.dsq_move_to_local(1)


def test_a_raising_policy_is_ejected_to_fair_with_the_reason() -> None:
    r = schedlab.run(WORKERS, sched=Raising(), **RUN)
    assert isinstance(r.policy_error, ZeroDivisionError)
    exit = r.record["scheduler"]["exit"]
    assert "ops.enqueue() raised ZeroDivisionError: the policy's own bug" in exit, exit
    assert "test_policy.py:" in exit and "in enqueue" in exit, exit
    assert r.scheduler == "ext:py:Raising"
    # The run went on under fair to its end: every task kept running; ejection is counted.
    assert r.record["sim_ns"] == 20_000_000
    assert all(t["runtime_ns"] >= 5_000_000 for t in r.record["tasks"]), r.record["tasks"]
    assert r.record["policy_counters"]["ext_ejected"] == 1


class RaisingCounters:
    """A global-FIFO policy whose counters() raises when the run ends."""

    def enqueue(self, ctx: ext.ScxCtx, p: int, enq_flags: int) -> None:
        ctx.dsq_insert(p, ext.DSQ_GLOBAL, ext.SLICE_DFL, enq_flags)

    def counters(self) -> Dict[str, int]:
        raise ValueError("no counters today")


def test_a_raising_counters_is_reported_as_the_policy_error() -> None:
    r = schedlab.run(WORKERS, sched=RaisingCounters(), **RUN)
    assert isinstance(r.policy_error, ValueError)
    exit = r.record["scheduler"]["exit"]
    assert "ops.counters() raised ValueError: no counters today" in exit, exit
    assert "test_policy.py:" in exit and "in counters" in exit, exit
    assert not any(k.startswith("ext.") for k in r.record["policy_counters"])


class BadCpu:
    def select_cpu(self, ctx: ext.ScxCtx, p: int, prev_cpu: int, wake_flags: int) -> int:
        return ctx.nr_cpus() + 3


class BadInit:
    def init(self, ctx: ext.ScxCtx) -> None:
        ctx.create_dsq(ext.DSQ_GLOBAL)


class Stash:
    """Keeps the ctx past its callback, which must not work."""

    ctx: Any = None

    def init(self, ctx: ext.ScxCtx) -> None:
        Stash.ctx = ctx


@pytest.mark.parametrize("policy,reason", [
    (BadCpu(), "invalid CPU: 7 from ops.select_cpu()"),
    (BadInit(), "ops.init() failed: ops.init() raised ValueError: DSQ id 0x8000000000000001 has the builtin flag"),
])
def test_misbehaving_policies_are_ejected(policy: Any, reason: str) -> None:
    r = schedlab.run(WORKERS, sched=policy, **RUN)
    assert r.record["scheduler"]["exit"].startswith(reason), r.record["scheduler"]["exit"]
    assert all(t["runtime_ns"] >= 5_000_000 for t in r.record["tasks"]), r.record["tasks"]


def test_ctx_is_valid_during_the_callback_only() -> None:
    r = schedlab.run(HACKBENCH, sched=Stash(), **RUN)
    assert r.policy_error is None and r.record["scheduler"].get("exit") is None
    with pytest.raises(RuntimeError, match="outside a policy callback"):
        Stash.ctx.nr_cpus()


def test_compare_mixes_names_and_python_policies() -> None:
    Simple = _simple()
    c = schedlab.compare(HACKBENCH, ["ext:simple", Simple(fifo=True), "cfs"],
                         set={"ext:simple:fifo": 1}, **RUN)
    assert [r.scheduler for r in c] == ["ext:simple", "ext:simple-py", "cfs"]
    assert c["ext:simple"].record["trace_hash"] == c["ext:simple-py"].record["trace_hash"]
    assert c["cfs"].record["trace_hash"] != c["ext:simple"].record["trace_hash"]
    assert list(c.tasks["scheduler"].unique()) == ["ext:simple", "ext:simple-py", "cfs"]


def test_not_a_policy_is_an_input_error() -> None:
    with pytest.raises(schedlab.InputError, match="neither a scheduler name nor a policy"):
        schedlab.run(HACKBENCH, sched=object(), **RUN)


class Interrupted:
    """Ctrl-C while the policy's Python code runs: KeyboardInterrupt inside a callback."""

    def dispatch(self, ctx: ext.ScxCtx, cpu: int, prev: Optional[int]) -> None:
        if ctx.now() > 5_000_000:
            raise KeyboardInterrupt


def test_keyboard_interrupt_in_a_callback_stops_the_run() -> None:
    with pytest.raises(KeyboardInterrupt):
        schedlab.run(WORKERS, sched=Interrupted(), **RUN)


def test_a_set_aimed_at_a_python_policy_reaches_only_it() -> None:
    c = schedlab.compare(WORKERS, [_simple()(), "ext:simple"], set={"ext:simple-py:watchdog_timeout_ms": 1000},
                         **RUN)
    assert c["ext:simple-py"].record["scheduler"]["tunables"]["watchdog_timeout_ms"] == "1000"
    assert c["ext:simple"].record["scheduler"]["tunables"]["watchdog_timeout_ms"] == "30000"
