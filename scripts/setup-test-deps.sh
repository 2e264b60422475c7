#!/usr/bin/env bash
# System packages the test suite needs, installed by the project (not by hand):
# Debian's Chromium renders the HTML report headless in tests/report_html.rs.
set -euo pipefail
if ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
    else
        echo "setup-test-deps: chromium missing and not root; install it with: sudo apt-get install chromium" >&2
        exit 1
    fi
fi

# perf (Debian's linux-perf): scripts/record-trace-fixtures.sh records the trace fixtures of
# crates/trace-import with `perf sched record`; the tests read the committed fixtures.
if ! command -v perf >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends linux-perf >/dev/null
    else
        echo "setup-test-deps: perf missing and not root; install it with: sudo apt-get install linux-perf" >&2
    fi
fi

# Perfetto's official protobuf definitions (PyPI `perfetto`), to decode our traces with the
# real schema in tests/see_inside.rs. Kept under target/ (not committed).
venv="$(dirname "$0")/../target/test-venv"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import perfetto, google.protobuf" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q "perfetto==0.59.1" "protobuf>=4,<7"
fi

# The Python package (crates/schedlab-py, docs/python.md) and what its tests use: maturin
# builds it, pandas holds its tables, Ray runs sweeps as tasks, pyarrow reads the Parquet
# tables `schedlab sweep -o x.parquet` writes, pytest runs the tests. The
# wheel is rebuilt and reinstalled only when a Rust or Python source changed (a stamp of
# their hashes), so this step is quick when nothing did.
py="$venv/bin/python"
if ! "$py" -c "import maturin, pandas, pytest, ray, pyarrow" 2>/dev/null; then
    "$py" -m pip install -q "maturin==1.16.0" "pandas==3.1.1" "pytest==9.2.0" "ray==2.60.0" "pyarrow==26.0.1"
fi
root="$(cd "$(dirname "$0")/.." && pwd)"
stamp="$venv/schedlab-py.stamp"
sum="$(cd "$root" && find crates -path '*/target' -prune -o \( -name '*.rs' -o -name '*.py' -o -name '*.pyi' -o -name '*.toml' \) -type f -print \
    | LC_ALL=C sort | xargs sha256sum | cat - Cargo.lock Cargo.toml | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$sum" ] || ! "$py" -c "import schedlab" 2>/dev/null; then
    rm -rf "$root/target/wheels"
    (cd "$root" && "$py" -m maturin build --release --quiet -m crates/schedlab-py/Cargo.toml -i "$py" -o target/wheels)
    "$py" -m pip install -q --force-reinstall --no-deps "$root"/target/wheels/schedlab-*.whl
    echo "$sum" > "$stamp"
fi

# SimSo (PyPI `simso` 0.8.5, with SimPy 2.3.1 and numpy), the real-time scheduling simulator
# whose global EDF the `edf-simso` study runs beside SCHED_DEADLINE. If pip cannot install
# it (no network, no wheel), the reason goes to $venv/simso-unavailable and that study's test
# skips SimSo's side, saying so; it is removed again once SimSo imports.
if ! "$venv/bin/python" -c "import simso" 2>/dev/null; then
    if ! log=$("$venv/bin/python" -m pip install -q "simso==0.8.5" "SimPy==2.3.1" 2>&1); then
        printf 'pip install simso==0.8.5 SimPy==2.3.1 failed: %s\n' "$(printf '%s' "$log" | tail -n 1)" >"$venv/simso-unavailable"
        echo "setup-test-deps: $(cat "$venv/simso-unavailable")" >&2
    fi
fi
if "$venv/bin/python" -c "import simso" 2>/dev/null; then
    rm -f "$venv/simso-unavailable"
fi
