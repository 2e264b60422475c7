"""docs/python.md's worked example runs, cell after cell, as a notebook would run it."""

from __future__ import annotations

import os
import re

from conftest import ROOT


def test_the_worked_example_runs() -> None:
    text = (ROOT / "docs" / "python.md").read_text()
    example = text[text.index("## A worked example"):]
    cells = re.findall(r"```python\n(.*?)```", example, re.S)
    assert len(cells) >= 6
    namespace: dict = {}
    old = os.getcwd()
    os.chdir(ROOT)
    try:
        for i, cell in enumerate(cells):
            exec(compile(cell, f"docs/python.md cell {i + 1}", "exec"), namespace)
    finally:
        os.chdir(old)
    assert namespace["message"].startswith("<string>:3:")


def test_the_python_policy_of_write_a_scheduler_runs() -> None:
    text = (ROOT / "docs" / "write-a-scheduler.md").read_text()
    section = text[text.index("## 6. In Python"):]
    cells = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(cells) == 1
    namespace: dict = {}
    old = os.getcwd()
    os.chdir(ROOT)
    try:
        exec(compile(cells[0], "docs/write-a-scheduler.md section 6", "exec"), namespace)
    finally:
        os.chdir(old)
    r, c = namespace["r"], namespace["c"]
    assert r.scheduler == "ext:mine" and r.policy_error is None and r.record["scheduler"].get("exit") is None
    # Four hogs pinned to CPU 0 share it: each runs about a quarter of the 300 ms.
    for s in ("ext:mine", "ext:simple", "eevdf"):
        runtimes = c[s].tasks["runtime_ns"].tolist()
        assert len(runtimes) == 4 and all(60_000_000 <= t <= 90_000_000 for t in runtimes), (s, runtimes)
