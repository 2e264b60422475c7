"""sched_ext policies in Python: the constants a policy uses, named as in the kernel's
``include/linux/sched/ext.h`` (v6.12) and as in the Rust ``ScxOps`` API.

A policy is any object with some of the callbacks of ``struct sched_ext_ops`` as methods
(``select_cpu``, ``enqueue``, ``dequeue``, ``dispatch``, ``runnable``, ``running``,
``stopping``, ``quiescent``, ``tick``, ``yield_task``, ``set_weight``, ``set_cpumask``,
``init_task``, ``enable``, ``exit_task``, ``cpu_acquire``, ``cpu_release``, ``init``,
``timer``, ``counters``); each receives a :class:`ScxCtx` first. Run it with
``schedlab.run(workload, sched=MyPolicy())``. docs/write-a-scheduler.md has the tutorial.

Determinism: a run is a pure function of the workload, the machine, the seed and the
policy's decisions, so a policy must decide from what it is given and its own state only:
no wall clock (``time``), no ``random`` (unless seeded by the policy itself), no iteration
over sets of objects whose order varies between processes.
"""

from __future__ import annotations

from ._native import ScxCtx

__all__ = [
    "ScxCtx",
    "DSQ_FLAG_BUILTIN",
    "DSQ_FLAG_LOCAL_ON",
    "DSQ_INVALID",
    "DSQ_GLOBAL",
    "DSQ_LOCAL",
    "DSQ_LOCAL_ON",
    "local_on",
    "SLICE_DFL",
    "SLICE_INF",
    "ENQ_WAKEUP",
    "ENQ_HEAD",
    "ENQ_CPU_SELECTED",
    "ENQ_PREEMPT",
    "ENQ_LAST",
    "DEQ_SLEEP",
    "KICK_IDLE",
    "KICK_PREEMPT",
    "OPS_ENQ_LAST",
    "OPS_SWITCH_PARTIAL",
    "WF_SYNC",
    "vtime_before",
]

#: ``SCX_DSQ_FLAG_BUILTIN``: ids with bit 63 set are the kernel's.
DSQ_FLAG_BUILTIN: int = 1 << 63
#: ``SCX_DSQ_FLAG_LOCAL_ON``: with the builtin flag, the low 32 bits name a CPU.
DSQ_FLAG_LOCAL_ON: int = 1 << 62
DSQ_INVALID: int = DSQ_FLAG_BUILTIN
#: ``SCX_DSQ_GLOBAL``: the global FIFO (one per NUMA node).
DSQ_GLOBAL: int = DSQ_FLAG_BUILTIN | 1
#: ``SCX_DSQ_LOCAL``: the local DSQ of the CPU the task is enqueued on (from
#: ``select_cpu``/``enqueue``) or of the dispatching CPU (from ``dispatch``).
DSQ_LOCAL: int = DSQ_FLAG_BUILTIN | 2
#: ``SCX_DSQ_LOCAL_ON``: or-ed with a CPU number (:func:`local_on`).
DSQ_LOCAL_ON: int = DSQ_FLAG_BUILTIN | DSQ_FLAG_LOCAL_ON

#: ``SCX_SLICE_DFL``: 20 ms.
SLICE_DFL: int = 20_000_000
#: ``SCX_SLICE_INF``: never expires.
SLICE_INF: int = (1 << 64) - 1

ENQ_WAKEUP: int = 1
ENQ_HEAD: int = 1 << 4
ENQ_CPU_SELECTED: int = 1 << 10
ENQ_PREEMPT: int = 1 << 32
ENQ_LAST: int = 1 << 41
DEQ_SLEEP: int = 1
KICK_IDLE: int = 1
KICK_PREEMPT: int = 1 << 1
#: ``SCX_OPS_ENQ_LAST`` and ``SCX_OPS_SWITCH_PARTIAL``, for a policy's ``flags`` attribute.
OPS_ENQ_LAST: int = 1 << 1
OPS_SWITCH_PARTIAL: int = 1 << 3
#: The synchronous-wakeup bit of ``select_cpu``'s ``wake_flags`` (the simulator's
#: ``wf::SYNC``: the waker is about to sleep).
WF_SYNC: int = 0x01

_U64 = (1 << 64) - 1


def local_on(cpu: int) -> int:
    """``SCX_DSQ_LOCAL_ON | cpu``: that CPU's local DSQ."""
    return DSQ_LOCAL_ON | cpu


def vtime_before(a: int, b: int) -> bool:
    """Wrap-safe ``a < b`` on 64-bit vtimes, as the example schedulers write it."""
    d = (a - b) & _U64
    return d >= 1 << 63
