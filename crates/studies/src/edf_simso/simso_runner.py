"""Runs task sets under SimSo's global EDF (simso.schedulers.EDF) for schedlab's
`study edf-simso`. Reads JSON on stdin:
  {"cpus": m, "duration_us": D, "sets": [[{"period_us": T, "wcet_us": C}, ...], ...]}
and writes JSON on stdout: {"simso": VERSION, "sets": [[[response_ns or -1, ...] per task] per set]},
one entry per job whose absolute deadline falls within the duration, in release order;
-1 marks a job that had not finished by the end. Jobs are released synchronously at 0,
deadlines are implicit, every job runs exactly its WCET, overheads are zero, and a late
job is not aborted (its successor waits for it), as a periodic rt-app task behaves.
"""
import contextlib
import io
import json
import sys

import simso
from simso.configuration import Configuration
from simso.core import Model


def run_set(tasks, cpus, duration_us):
    cfg = Configuration()
    cfg.cycles_per_ms = 1_000_000  # one cycle per ns
    cfg.duration = duration_us * 1000
    for i, t in enumerate(tasks):
        period_ms = t["period_us"] / 1000.0
        cfg.add_task(name="t%d" % i, identifier=i + 1, period=period_ms, activation_date=0,
                     wcet=t["wcet_us"] / 1000.0, deadline=period_ms, abort_on_miss=False)
    for c in range(cpus):
        cfg.add_processor(name="CPU %d" % c, identifier=c + 1)
    cfg.scheduler_info.clas = "simso.schedulers.EDF"
    cfg.check_all()
    model = Model(cfg)
    # SimSo's EDF prints each decision; keep stdout for the answer.
    with contextlib.redirect_stdout(io.StringIO()):
        model.run_model()
    out = []
    for task in sorted(model.task_list, key=lambda t: t.identifier):
        resp = []
        for job in task.jobs:
            if job.absolute_deadline * 1000 > duration_us:
                continue
            if job.end_date is None:
                resp.append(-1)
            else:
                resp.append(round(job.response_time * 1_000_000))
        out.append(resp)
    return out


def main():
    req = json.load(sys.stdin)
    sets = [run_set(s, req["cpus"], req["duration_us"]) for s in req["sets"]]
    json.dump({"simso": simso.__version__, "sets": sets}, sys.stdout)


main()
