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
