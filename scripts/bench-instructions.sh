#!/usr/bin/env bash
# The simulator's cost in instructions, which do not depend on the machine's load:
# periodic-200 for 2 s under each scheduler of crates/cli/src/bench_baseline.tsv, counted
# by callgrind (start-up and output included), as instructions per event against the
# baseline's third column. Fails if any scheduler needs more than 5 % above its baseline.
# Not part of the test suite (about a minute under valgrind). Update the baseline
# deliberately, with the change that moved it.
#
# usage: scripts/bench-instructions.sh [path/to/schedlab]   (default: target/release/schedlab)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/schedlab}
baseline=crates/cli/src/bench_baseline.tsv
command -v valgrind >/dev/null || { echo "bench-instructions: valgrind is not installed" >&2; exit 2; }
[ -x "$bin" ] || { echo "bench-instructions: no binary at $bin (cargo build --release -p schedlab)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
printf '%-12s %14s %10s %12s %12s %8s\n' scheduler instructions events "instr/event" baseline change
while IFS=$'\t' read -r sched _ want; do
    case "$sched" in '#'* | '') continue ;; esac
    valgrind --tool=callgrind --dump-instr=no --callgrind-out-file="$tmp/cg.out" \
        "$bin" run examples/workloads/periodic-200.toml --sched "$sched" --duration 2s --format json \
        >"$tmp/run.json" 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 2; }
    ir=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$tmp/err")
    events=$(sed -n 's/^ *"events": \([0-9]*\).*/\1/p' "$tmp/run.json" | head -1)
    read -r per change fail < <(awk -v ir="$ir" -v ev="$events" -v want="$want" 'BEGIN {
        per = ir / ev; ch = per / want - 1; printf "%.0f %+.1f%% %d\n", per, 100 * ch, (ch > 0.05) }')
    printf '%-12s %14s %10s %12s %12s %8s\n' "$sched" "$ir" "$events" "$per" "$want" "$change"
    if [ "$fail" = 1 ]; then
        echo "bench-instructions: $sched needs $per instructions an event, more than 5 % above $want" >&2
        status=1
    fi
done <"$baseline"
exit $status
