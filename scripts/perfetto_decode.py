"""Decode a schedlab Perfetto trace with Perfetto's own protobuf definitions and print a
JSON summary: sched_switch count per CPU, run time per pid from the switch events, the
other ftrace event kinds seen, thread names, counter tracks, and the explained wait slices
(time per thread, causes, argument names), and the wakeup flows (waker instants → the
wakee's wait slice: how many start, how many end, and whether every one that ends started).

Usage: perfetto_decode.py TRACE END_NS
"""
import json
import sys

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb


def main():
    path, end = sys.argv[1], int(sys.argv[2])
    trace = pb.Trace()
    with open(path, "rb") as f:
        trace.ParseFromString(f.read())
    switches, kinds, threads, tracks, counters = {}, {}, {}, set(), 0
    since, run = {}, {}
    thread_track, open_slice, wait_ns, causes, args = {}, {}, {}, {}, set()
    flow_from, flow_to, woken_by = {}, {}, {}
    for p in trace.packet:
        if p.HasField("process_tree"):
            for t in p.process_tree.threads:
                threads[t.tid] = t.name
        if p.HasField("track_descriptor") and p.track_descriptor.HasField("counter"):
            tracks.add(p.track_descriptor.name)
        if p.HasField("track_descriptor") and p.track_descriptor.HasField("thread"):
            thread_track[p.track_descriptor.uuid] = p.track_descriptor.thread.tid
        if p.HasField("track_event") and p.track_event.type == pb.TrackEvent.TYPE_COUNTER:
            counters += 1
        if p.HasField("track_event") and p.track_event.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
            ev = p.track_event
            a = {d.name: d for d in ev.debug_annotations}
            args.update(a)
            for f in ev.terminating_flow_ids:
                flow_to[f] = ev.track_uuid
            if "woken_by" in a:
                by = a["woken_by"].string_value
                woken_by[by] = woken_by.get(by, 0) + 1
            cause = a["cause"].string_value
            causes[cause] = causes.get(cause, 0) + 1
            open_slice[ev.track_uuid] = p.timestamp
        if p.HasField("track_event") and p.track_event.type == pb.TrackEvent.TYPE_INSTANT:
            for f in p.track_event.flow_ids:
                flow_from[f] = p.track_event.track_uuid
        if p.HasField("track_event") and p.track_event.type == pb.TrackEvent.TYPE_SLICE_END:
            tid = thread_track[p.track_event.track_uuid]
            t0 = open_slice.pop(p.track_event.track_uuid)
            wait_ns[tid] = wait_ns.get(tid, 0) + p.timestamp - t0
        if not p.HasField("ftrace_events"):
            continue
        cpu = p.ftrace_events.cpu
        for e in p.ftrace_events.event:
            kind = e.WhichOneof("event")
            kinds[kind] = kinds.get(kind, 0) + 1
            if kind != "sched_switch":
                continue
            sw = e.sched_switch
            if sw.next_pid != 0:
                switches[cpu] = switches.get(cpu, 0) + 1
            if cpu in since:
                t0, pid = since.pop(cpu)
                run[pid] = run.get(pid, 0) + e.timestamp - t0
            if sw.next_pid != 0:
                since[cpu] = (e.timestamp, sw.next_pid)
    for cpu, (t0, pid) in since.items():
        run[pid] = run.get(pid, 0) + end - t0
    json.dump(
        {
            "switches": {str(k): v for k, v in sorted(switches.items())},
            "run_ns": {str(k): v for k, v in sorted(run.items())},
            "kinds": kinds,
            "threads": {str(k): v for k, v in sorted(threads.items())},
            "counter_tracks": sorted(tracks),
            "counter_values": counters,
            "wait_ns": {str(k): v for k, v in sorted(wait_ns.items())},
            "wait_causes": causes,
            "wait_args": sorted(args),
            "flows_started": len(flow_from),
            "flows_ended": len(flow_to),
            "flows_unmatched": len(set(flow_to) - set(flow_from)),
            "flows_to_self": sum(1 for f, t in flow_to.items() if flow_from.get(f) == t),
            "woken_by": woken_by,
        },
        sys.stdout,
    )


main()
