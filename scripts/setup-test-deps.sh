#!/usr/bin/env bash
# What the test suite needs beyond Rust, installed by the project (never by hand), one line
# per step saying what it installs and why. Steps already done are skipped quickly.
#
#   Debian: chromium (the HTML report and the playground are rendered headless), linux-perf (trace fixtures)
#   rustup: the wasm32-unknown-unknown target, and the playground built (scripts/build-playground.sh)
#   a venv under target/test-venv: Perfetto's protos, the Python package and its test
#   tools (maturin, pandas, pytest, Ray, pyarrow), SimSo for the edf-simso study
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
say() { printf 'setup-test-deps: %s\n' "$*"; }
t0=$SECONDS

apt_install() {
    # $1: why; the rest: packages.
    local why=$1
    shift
    if [ "$(id -u)" != 0 ]; then
        say "missing $* ($why) and not root: install it with: sudo apt-get install $*"
        return 1
    fi
    say "installing Debian's $* ($why; apt, about a minute)…"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

if command -v chromium >/dev/null 2>&1; then
    say "chromium: present"
else
    apt_install "renders the HTML report headless in the report tests" chromium fonts-dejavu-core
fi

# The browser playground (docs/playground.md): Rust's wasm32-unknown-unknown target
# (rustup) and the page with the simulator as WebAssembly, built into target/playground,
# which the browser test (crates/cli/tests/playground.rs) serves to headless Chromium.
if rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    say "Rust target wasm32-unknown-unknown: present"
else
    say "adding the Rust target wasm32-unknown-unknown (rustup; the browser playground)…"
    rustup target add wasm32-unknown-unknown
fi
say "building the browser playground into target/playground (scripts/build-playground.sh; a few minutes the first time)…"
bash "$root/scripts/build-playground.sh"

# perf: scripts/record-trace-fixtures.sh records the trace fixtures of crates/trace-import
# with `perf sched record`; the tests read the committed fixtures, so it is optional.
if command -v perf >/dev/null 2>&1; then
    say "perf: present"
else
    apt_install "records trace fixtures (optional for the tests)" linux-perf || true
fi

# Perfetto's official protobuf definitions (PyPI `perfetto`), to decode our traces with the
# real schema in tests/see_inside.rs. Kept under target/ (not committed).
venv="$root/target/test-venv"
py="$venv/bin/python"
if [ -x "$py" ] && "$py" -c "import perfetto, google.protobuf" 2>/dev/null; then
    say "venv with Perfetto's protos: present ($venv)"
else
    say "creating $venv with Perfetto's protos (decode our traces with the official schema)…"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q "perfetto==0.59.1" "protobuf>=4,<7"
fi

# The Python package (crates/schedlab-py, docs/python.md) and what its tests use: maturin
# builds it, pandas holds its tables, Ray runs sweeps as tasks, pyarrow reads the Parquet
# tables `schedlab sweep -o x.parquet` writes, pytest runs the tests, jsonschema checks
# records against docs/record.schema.json.
if "$py" -c "import maturin, pandas, pytest, ray, pyarrow, jsonschema" 2>/dev/null; then
    say "maturin, pandas, pytest, Ray, pyarrow, jsonschema: present"
else
    say "installing maturin, pandas, pytest, Ray, pyarrow, jsonschema (build and test the Python package; pip, a few minutes)…"
    "$py" -m pip install -q "maturin==1.16.0" "pandas==3.1.1" "pytest==9.2.0" "ray==2.60.0" "pyarrow==26.0.1" "jsonschema==4.26.0"
fi

# The wheel is rebuilt and reinstalled only when a Rust or Python source changed (a stamp of
# their hashes), so this step is quick when nothing did.
stamp="$venv/schedlab-py.stamp"
sum="$(cd "$root" && find crates -path '*/target' -prune -o \( -name '*.rs' -o -name '*.py' -o -name '*.pyi' -o -name '*.toml' \) -type f -print \
    | LC_ALL=C sort | xargs sha256sum | cat - Cargo.lock Cargo.toml | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" = "$sum" ] && "$py" -c "import schedlab" 2>/dev/null; then
    say "the schedlab Python package: up to date"
else
    say "building the schedlab Python package with maturin (release; a few minutes the first time)…"
    rm -rf "$root/target/wheels"
    (cd "$root" && "$py" -m maturin build --release --quiet -m crates/schedlab-py/Cargo.toml -i "$py" -o target/wheels)
    "$py" -m pip install -q --force-reinstall --no-deps "$root"/target/wheels/schedlab-*.whl
    echo "$sum" > "$stamp"
fi

# SimSo (PyPI `simso` 0.8.5, with SimPy 2.3.1 and numpy), the real-time scheduling simulator
# whose global EDF the `edf-simso` study runs beside SCHED_DEADLINE. If pip cannot install
# it (no network, no wheel), the reason goes to $venv/simso-unavailable and that study's test
# skips SimSo's side, saying so; it is removed again once SimSo imports.
if "$py" -c "import simso" 2>/dev/null; then
    say "SimSo: present"
else
    say "installing SimSo 0.8.5 (the edf-simso study runs it beside SCHED_DEADLINE)…"
    if ! log=$("$py" -m pip install -q "simso==0.8.5" "SimPy==2.3.1" 2>&1); then
        printf 'pip install simso==0.8.5 SimPy==2.3.1 failed: %s\n' "$(printf '%s' "$log" | tail -n 1)" >"$venv/simso-unavailable"
        say "$(cat "$venv/simso-unavailable") — the edf-simso test will skip SimSo's side"
    fi
fi
if "$py" -c "import simso" 2>/dev/null; then
    rm -f "$venv/simso-unavailable"
fi
say "done in $((SECONDS - t0)) s"
