"""scx_simple in Python: the `ext:simple` example policy (crates/policies/src/ext/examples/
simple.rs, modelled on tools/sched_ext/scx_simple.bpf.c of Linux 6.12), callback for callback.

One shared dispatch queue for the whole machine, FIFO (``fifo=True``) or ordered by weighted
vtime: a waking task that finds an idle CPU goes straight to that CPU's local DSQ; every
other task waits in the shared DSQ; an idle CPU takes its first task. Run with the same
workload, machine and seed, it makes the same decisions as ``--sched ext:simple`` (with
``--set fifo=1`` for the FIFO mode), so the runs have the same trace hash::

    import schedlab
    from scx_simple import Simple
    r = schedlab.run("examples/workloads/hackbench.toml", sched=Simple(fifo=True), duration="50ms")

Deterministic: it decides from its arguments and its own state only (no clock, no random).
"""

from __future__ import annotations

from typing import Dict, Optional

from schedlab import ext

#: The shared DSQ's id (``SHARED_DSQ``).
SHARED_DSQ = 0
_U64 = (1 << 64) - 1


class Simple:
    name = "simple-py"

    def __init__(self, fifo: bool = False) -> None:
        self.fifo = fifo
        #: The largest vtime of a task that started running.
        self.vtime_now = 0
        self.nr_local = 0
        self.nr_global = 0

    def init(self, ctx: ext.ScxCtx) -> None:
        ctx.create_dsq(SHARED_DSQ)

    def select_cpu(self, ctx: ext.ScxCtx, p: int, prev_cpu: int, wake_flags: int) -> int:
        cpu, idle = ctx.select_cpu_dfl(p, prev_cpu, wake_flags)
        if idle:
            self.nr_local += 1
            ctx.dsq_insert(p, ext.DSQ_LOCAL, ext.SLICE_DFL)
        return cpu

    def enqueue(self, ctx: ext.ScxCtx, p: int, enq_flags: int) -> None:
        self.nr_global += 1
        if self.fifo:
            ctx.dsq_insert(p, SHARED_DSQ, ext.SLICE_DFL, enq_flags)
            return
        # A sleeper banks at most one slice of credit.
        vtime = ctx.dsq_vtime(p)
        floor = (self.vtime_now - ext.SLICE_DFL) & _U64
        if ext.vtime_before(vtime, floor):
            vtime = floor
        ctx.dsq_insert_vtime(p, SHARED_DSQ, ext.SLICE_DFL, vtime, enq_flags)

    def dispatch(self, ctx: ext.ScxCtx, cpu: int, prev: Optional[int]) -> None:
        ctx.dsq_move_to_local(SHARED_DSQ)

    def running(self, ctx: ext.ScxCtx, p: int) -> None:
        if not self.fifo and ext.vtime_before(self.vtime_now, ctx.dsq_vtime(p)):
            self.vtime_now = ctx.dsq_vtime(p)

    def stopping(self, ctx: ext.ScxCtx, p: int, runnable: bool) -> None:
        if self.fifo:
            return
        # The slice used, scaled by the inverse weight (100 at nice 0).
        used = max(ext.SLICE_DFL - ctx.slice(p), 0)
        ctx.set_dsq_vtime(p, (ctx.dsq_vtime(p) + used * 100 // ctx.weight(p)) & _U64)

    def enable(self, ctx: ext.ScxCtx, p: int) -> None:
        ctx.set_dsq_vtime(p, self.vtime_now)

    def counters(self) -> Dict[str, int]:
        return {"local": self.nr_local, "global": self.nr_global}
