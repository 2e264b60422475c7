"""Every record the library makes validates against the checked-in JSON Schema
(docs/record.schema.json, generated from the record's types): simulated runs under each
scheduler family, with time series, spans, a deadlock, a sched_ext policy's exit."""
from __future__ import annotations

import json
import pathlib

import jsonschema
import pytest

import schedlab

ROOT = pathlib.Path(__file__).resolve().parents[3]
SCHEMA = json.loads((ROOT / "docs" / "record.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)

DEADLOCK = """
[[mutex]]
name = "a"
[[mutex]]
name = "b"
[[task]]
name = "x"
program = [ { lock = "a" }, { run = "1ms" }, { lock = "b" } ]
[[task]]
name = "y"
program = [ { lock = "b" }, { run = "1ms" }, { lock = "a" } ]
"""


def errors(record: dict) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in VALIDATOR.iter_errors(record)]


def test_the_schema_is_a_valid_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["x-schema-version"] == 2


@pytest.mark.parametrize("sched", ["eevdf", "cfs", "ule", "o1", "ext:simple"])
def test_records_validate(sched: str) -> None:
    r = schedlab.run(str(ROOT / "examples" / "workloads" / "webserver.toml"), sched=sched, duration="30ms", sample="5ms")
    assert errors(r.record) == []


def test_a_deadlocked_record_validates() -> None:
    r = schedlab.run(DEADLOCK, duration="50ms")
    assert r.record["end_reason"] == "deadlock"
    assert errors(r.record) == []


def test_a_record_missing_a_required_key_does_not() -> None:
    r = schedlab.run(DEADLOCK, duration="50ms")
    del r.record["tasks"]
    assert any("tasks" in e for e in errors(r.record))
