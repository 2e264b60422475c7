"""Sweeps from Python: locally on every core (the same code as `schedlab sweep`), or on Ray,
one task per batch of runs per CPU (`_ray_driver`). Both end in the same CSV writer, so the tables are identical."""

from __future__ import annotations

import io
import json
import os
from typing import Any, List, Mapping, Optional, Tuple, Union

import pandas as pd

from . import _native
from ._native import InputError


Spec = Union[str, "os.PathLike[str]", Mapping[str, Any]]

# The name a dict sweep's inline workload goes by (in errors, and in the `workload` column).
INLINE = "<workload dict>"


def _source(spec: Spec) -> Tuple[str, str, str, Optional[Tuple[str, str, bool]]]:
    """(name for errors, TOML text, directory the workload path is relative to, the
    workload given inline in a dict: (its name, text, text is JSON to write as TOML))."""
    if isinstance(spec, Mapping):
        spec = dict(spec)
        inline = None
        if isinstance(spec.get("workload"), Mapping):
            from . import _workload

            _, text, is_json = _workload(spec["workload"])
            inline = (INLINE, text, is_json)
            spec["workload"] = INLINE
        return ("<dict>", _native.sweep_toml(json.dumps(spec)), os.getcwd(), inline)
    text = os.fspath(spec)
    if "\n" not in text and os.path.exists(text):
        with open(text, encoding="utf-8") as f:
            return (text, f.read(), os.path.dirname(os.path.abspath(text)), None)
    if "\n" in text or "=" in text:
        return ("<string>", text, os.getcwd(), None)
    raise InputError(f"{text}: no such sweep file (pass a path, the TOML text or a dict)")


def _ray_rows(points: List[str], address: Optional[str]) -> List[str]:
    """The rows of `points` run on Ray, one batch of points per CPU (`_ray_driver`), in
    the points' order. A Ray this process started is left running for later sweeps;
    ray.shutdown() stops it."""
    try:
        import ray  # noqa: F401
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("schedlab.sweep(ray=True) needs Ray: pip install 'ray>=2.9'") from e
    from . import _ray_driver

    rows: List[Optional[str]] = [None] * len(points)

    def keep(i: int, row: str) -> None:
        rows[i] = row

    _ray_driver.run(points, address, keep)
    return [str(r) for r in rows]


def run_sweep(spec: Spec, *, ray: bool, address: Optional[str], jobs: int) -> pd.DataFrame:
    name, text, base, inline = _source(spec)
    if ray:
        points = _native.sweep_points(name, text, base, inline)
        csv = _native.sweep_csv(_ray_rows(points, address))
    else:
        if address is not None:
            raise InputError("sweep: address= applies with ray=True only")
        csv = _native.sweep_local(name, text, base, int(jobs), inline)
    return read_table(csv)


def read_table(csv: str) -> pd.DataFrame:
    """The sweep's CSV as a DataFrame (empty cells are missing values)."""
    return pd.read_csv(io.StringIO(csv))
