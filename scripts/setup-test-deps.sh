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

# Perfetto's official protobuf definitions (PyPI `perfetto`), to decode our traces with the
# real schema in tests/see_inside.rs. Kept under target/ (not committed).
venv="$(dirname "$0")/../target/test-venv"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import perfetto, google.protobuf" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q "perfetto==0.59.1" "protobuf>=4,<7"
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
