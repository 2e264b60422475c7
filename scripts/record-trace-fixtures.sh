#!/usr/bin/env bash
# Records the trace fixtures of crates/trace-import/tests/fixtures on this machine (as root):
#   messaging.perf.data  perf sched record of `perf bench sched messaging -g 1 -l 10`
#   messaging.ftrace.txt the same benchmark through a private tracefs instance (the `trace`
#                        file with sched_switch, sched_waking, sched_wakeup_new,
#                        sched_migrate_task, sched_process_fork and sched_process_exit)
# Each recording lasts well under 2 s. tracefs is mounted if it is not, and unmounted again
# only if this script mounted it; the instance is removed on every exit path.
set -euo pipefail
out="${1:-$(dirname "$0")/../crates/trace-import/tests/fixtures}"
mkdir -p "$out"
bench=(perf bench sched messaging -g 1 -l 5)

tracing=/sys/kernel/tracing
mounted_here=0
if [ ! -e "$tracing/instances" ]; then
    # perf mounts tracefs itself when it is missing: either way this script unmounts it.
    mounted_here=1
fi
inst="$tracing/instances/schedlab-fixture-$$"
cleanup() {
    if [ -d "$inst" ]; then rmdir "$inst" 2>/dev/null || true; fi
    if [ "$mounted_here" = 1 ]; then umount "$tracing" 2>/dev/null || true; fi
}
trap cleanup EXIT

perf sched record -o "$out/messaging.perf.data" -- "${bench[@]}" >/dev/null 2>&1

if [ ! -e "$tracing/instances" ]; then
    mount -t tracefs nodev "$tracing"
fi
mkdir "$inst"
echo 4096 >"$inst/buffer_size_kb"
for e in sched_switch sched_waking sched_wakeup_new sched_migrate_task sched_process_fork sched_process_exit; do
    echo 1 >"$inst/events/sched/$e/enable"
done
echo 1 >"$inst/tracing_on"
"${bench[@]}" >/dev/null 2>&1
echo 0 >"$inst/tracing_on"
cat "$inst/trace" >"$out/messaging.ftrace.txt"
ls -l "$out"
