"""Shared fixtures: the repository root, the CLI binary (built by `cargo test --release`
before .ci/run runs pytest) and a small workload."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import tempfile
from typing import Any, Dict, List

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
CLI = ROOT / "target" / "release" / "schedlab"

# Three workers that run and sleep, on two CPUs: wakeups, migrations and lock traffic.
WORKLOAD = """
name = "small"
machine = "smp2"
duration = "40ms"
[params]
workers = 3
[[task]]
name = "worker, \\"one\\""
count = "$workers"
program = [ { loop = 400, do = [ { run = "300us" }, { sleep = "200us" } ] } ]
"""


@pytest.fixture(autouse=True, scope="session")
def ray_temp_dir():
    """Ray's session files (sockets, logs) in a directory of the tests' own, not /tmp/ray:
    RAY_TMPDIR is read by every Ray process these tests start, the CLI's driver included.
    Short (`/tmp/rtXXXX`): Ray's Unix socket paths must fit in 107 bytes."""
    d = tempfile.mkdtemp(prefix="rt")
    old = os.environ.get("RAY_TMPDIR")
    os.environ["RAY_TMPDIR"] = d
    yield d
    if old is None:
        del os.environ["RAY_TMPDIR"]
    else:
        os.environ["RAY_TMPDIR"] = old
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def root() -> pathlib.Path:
    return ROOT


@pytest.fixture
def workload_file(tmp_path: pathlib.Path) -> pathlib.Path:
    p = tmp_path / "small.toml"
    p.write_text(WORKLOAD)
    return p


def cli(*args: str) -> subprocess.CompletedProcess:
    """Runs the schedlab binary; skips when `cargo test --release` has not built it."""
    if not CLI.exists():
        pytest.skip(f"{CLI} not built (cargo build --release -p schedlab)")
    return subprocess.run([str(CLI), *args], capture_output=True, text=True, cwd=ROOT, timeout=300)


def without_host(record: Any) -> Any:
    """A record without its wall-clock `host` key (the only one that varies run to run)."""
    if isinstance(record, list):
        return [without_host(r) for r in record]
    return {k: v for k, v in record.items() if k != "host"}


def load(text: str) -> Any:
    return json.loads(text)


def flatten(d: Dict[str, Any], prefix: str = "") -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def cell(v: Any) -> Any:
    """A DataFrame cell as the JSON has it: missing values (pd.NA, NaN) are None."""
    import pandas as pd

    if v is None or v is pd.NA or (isinstance(v, float) and v != v):
        return None
    return v.item() if hasattr(v, "item") else v


os.environ.setdefault("RAY_DISABLE_IMPORT_WARNING", "1")
