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
