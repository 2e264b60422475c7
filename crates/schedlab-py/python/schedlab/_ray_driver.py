"""The Ray side of `schedlab sweep --ray ADDRESS`: sweep points (one JSON object a line) on
stdin, one line a finished run on stdout: `{"i": index, "row": row}`, as the batches end.

The points are dealt round-robin into one batch per CPU of the cluster (at most one a
point); each batch is one Ray task that runs its points in turn. A task per point costs a
scheduling round trip and a worker's import of the native module per run, which on a
small cluster costs more than the runs (40 runs: 70 s on Ray against 5.6 s locally with a
task each); a batch per CPU pays it once per CPU. Runs are deterministic, so the table
does not depend on how the points were batched.

Run by the CLI as `PYTHON -m schedlab._ray_driver ADDRESS`; `ADDRESS` is a Ray cluster's
address (`HOST:PORT`), `auto` (the cluster this machine belongs to, as `ray.init` finds
it) or `local` (a Ray started for this sweep and stopped after it).
"""

from __future__ import annotations

import json
import sys
from typing import Any, List, Optional, Tuple


def _run_batch(batch: List[Tuple[int, str]]) -> List[Tuple[int, str]]:
    """A batch of (index, point) in a Ray worker: (index, row as JSON) each."""
    from schedlab import _native as native

    return [(i, str(native.sweep_run(p))) for i, p in batch]


def batches(points: List[str], cpus: int) -> List[List[Tuple[int, str]]]:
    """The points dealt round-robin into min(cpus, points) batches (at least one)."""
    n = max(1, min(cpus, len(points)))
    out: List[List[Tuple[int, str]]] = [[] for _ in range(n)]
    for i, p in enumerate(points):
        out[i % n].append((i, p))
    return out


def run(points: List[str], address: Optional[str], on_row: Any) -> None:
    """Runs `points` on the Ray cluster at `address` (None: a local Ray), calling
    `on_row(index, row)` as each batch ends."""
    import ray

    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False, configure_logging=False)
    cpus = int(ray.cluster_resources().get("CPU", 1))
    task = ray.remote(num_cpus=1)(_run_batch)
    pending = [task.remote(b) for b in batches(points, cpus)]
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        for i, row in ray.get(done[0]):
            on_row(i, row)


def main(argv: List[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m schedlab._ray_driver ADDRESS|auto|local < points", file=sys.stderr)
        return 2
    try:
        import ray  # noqa: F401
    except ImportError:
        print(f"{sys.executable}: Ray is not installed here (pip install 'ray>=2.9')", file=sys.stderr)
        return 3
    address = None if argv[1] == "local" else argv[1]
    points = [line for line in sys.stdin.read().splitlines() if line.strip()]

    def emit(i: int, row: str) -> None:
        sys.stdout.write(json.dumps({"i": i, "row": json.loads(row)}) + "\n")
        sys.stdout.flush()

    try:
        run(points, address, emit)
    finally:
        import ray

        ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
