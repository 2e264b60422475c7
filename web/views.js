// What the page draws from run records: the runs' summary, per-task tables, the latency
// CDF (SVG) and the per-CPU / per-task timeline (canvas, zoom, pan, hover, click a wait).
// Pure functions of the records plus one Timeline class; app.js wires them to the page.
"use strict";

const Views = (() => {
  /** Duration in ns, as the CLI prints it (ns, us, ms, s). */
  function dur(ns) {
    if (ns === null || ns === undefined) return "–";
    const a = Math.abs(ns);
    if (a < 1e3) return `${ns} ns`;
    if (a < 1e6) return `${(ns / 1e3).toFixed(a < 1e4 ? 2 : 1)} us`;
    if (a < 1e9) return `${(ns / 1e6).toFixed(a < 1e7 ? 3 : 2)} ms`;
    return `${(ns / 1e9).toFixed(3)} s`;
  }

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else if (k === "text") e.textContent = v;
      else e.setAttribute(k, v);
    }
    for (const c of children) e.append(c);
    return e;
  }

  /** A cell showing `ns` as a duration and keeping the number (data-ns) for tests. */
  function nsCell(ns) {
    return el("td", { "data-ns": String(ns), text: dur(ns) });
  }

  function numCell(n) {
    return el("td", { "data-n": String(n), text: String(n) });
  }

  /** One row per run: scheduler, end, events, trace hash, total wait. */
  function summary(table, runs) {
    table.replaceChildren();
    table.append(el("tr", {}, ...["scheduler", "machine", "end", "simulated", "events", "trace hash", "total wait", "p99 latency"].map((h) => el("th", { text: h }))));
    for (const run of runs) {
      const r = run.record;
      const tr = el("tr", { "data-sched": run.sched });
      tr.append(el("td", { class: "mono", text: run.sched }), el("td", { text: `${r.machine.name} (${r.machine.cpus} CPUs)` }));
      tr.append(el("td", { text: r.end_reason }), nsCell(r.sim_ns), numCell(r.events));
      tr.append(el("td", { class: "mono trace-hash", text: r.trace_hash }));
      tr.append(nsCell(r.tasks.reduce((s, t) => s + t.wait_ns, 0)));
      const p99 = r.latency_cdf.find(([, f]) => f >= 0.99);
      tr.append(nsCell(p99 ? p99[0] : 0));
      table.append(tr);
      if (r.warnings && r.warnings.length) {
        table.append(el("tr", {}, el("td", { colspan: "8", class: "muted", text: `warnings: ${r.warnings.join("; ")}` })));
      }
    }
  }

  const TASK_COLUMNS = [
    ["task", (t) => el("td", { class: "mono", text: t.name })],
    ["tid", (t) => numCell(t.tid)],
    ["nice", (t) => numCell(t.nice)],
    ["runtime", (t) => nsCell(t.runtime_ns)],
    ["wait", (t) => nsCell(t.wait_ns)],
    ["sleep", (t) => nsCell(t.sleep_ns)],
    ["vol", (t) => numCell(t.switches_voluntary)],
    ["invol", (t) => numCell(t.switches_involuntary)],
    ["migr", (t) => numCell(t.migrations)],
    ["wakeups", (t) => numCell(t.wakeups)],
    ["lat p50", (t) => nsCell(t.wakeup_latency_ns.p50)],
    ["lat p99", (t) => nsCell(t.wakeup_latency_ns.p99)],
    ["lat max", (t) => nsCell(t.wakeup_latency_ns.max)],
  ];
  /** The record keys behind the columns (read back by the browser test). */
  const TASK_KEYS = [null, "tid", "nice", "runtime_ns", "wait_ns", "sleep_ns", "switches_voluntary", "switches_involuntary", "migrations", "wakeups", "lat_p50", "lat_p99", "lat_max"];

  /** One table per run, side by side. */
  function taskTables(div, runs) {
    div.replaceChildren();
    for (const run of runs) {
      const table = el("table", { class: "data tasks", "data-sched": run.sched });
      table.append(el("tr", {}, ...TASK_COLUMNS.map(([h]) => el("th", { text: h }))));
      for (const t of run.record.tasks) {
        table.append(el("tr", { "data-task": t.name }, ...TASK_COLUMNS.map(([, f]) => f(t))));
      }
      div.append(el("div", {}, el("h3", { text: run.sched }), table));
    }
  }

  const PALETTE = ["#2459c7", "#d9822b", "#2e9e5b", "#b23aa8", "#8c6d1f", "#1f9bb0", "#c23b3b", "#5a5a5a"];

  /** The runs' wakeup-latency CDFs on one log-x SVG. */
  function cdf(div, runs) {
    const W = 720, H = 300, L = 56, R = 150, T = 10, B = 36;
    const pts = runs.flatMap((r) => r.record.latency_cdf.map(([ns]) => ns)).filter((ns) => ns > 0);
    if (!pts.length) {
      div.replaceChildren(el("p", { class: "muted", text: "No wakeups: no latency to show." }));
      return;
    }
    const lo = Math.log10(Math.min(...pts)), hi = Math.max(lo + 1, Math.log10(Math.max(...pts)));
    const x = (ns) => L + ((Math.log10(Math.max(ns, 1)) - lo) / (hi - lo)) * (W - L - R);
    const y = (f) => T + (1 - f) * (H - T - B);
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
    const add = (tag, attrs, text) => {
      const e = document.createElementNS(ns, tag);
      for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
      if (text !== undefined) e.textContent = text;
      svg.append(e);
      return e;
    };
    add("rect", { x: L, y: T, width: W - L - R, height: H - T - B, fill: "none", stroke: "#d8dce3" });
    for (let d = Math.ceil(lo); d <= Math.floor(hi); d++) {
      add("line", { x1: x(10 ** d), x2: x(10 ** d), y1: T, y2: H - B, stroke: "#eceef2" });
      add("text", { x: x(10 ** d), y: H - B + 14, "text-anchor": "middle" }, dur(10 ** d));
    }
    for (const f of [0, 0.25, 0.5, 0.75, 0.9, 1]) {
      add("line", { x1: L, x2: W - R, y1: y(f), y2: y(f), stroke: "#eceef2" });
      add("text", { x: L - 6, y: y(f) + 4, "text-anchor": "end" }, String(f));
    }
    add("text", { x: (L + W - R) / 2, y: H - 4, "text-anchor": "middle" }, "wakeup latency (log scale)");
    runs.forEach((run, i) => {
      const c = PALETTE[i % PALETTE.length];
      const d = run.record.latency_cdf.map(([v, f], j) => `${j ? "L" : "M"}${x(v).toFixed(1)},${y(f).toFixed(1)}`).join("");
      add("path", { d, fill: "none", stroke: c, "stroke-width": 2, "data-sched": run.sched });
      add("rect", { x: W - R + 12, y: T + 6 + i * 18, width: 12, height: 4, fill: c });
      add("text", { x: W - R + 30, y: T + 11 + i * 18 }, run.sched);
    });
    div.replaceChildren(svg);
  }

  /** A task's colour: spread around the hue circle by its id. */
  function color(task) {
    // Starting at blue and stepping by the golden angle: neighbours differ, none is the waits' red.
    const hue = (210 + task * 137.508) % 360;
    return `hsl(${hue > 340 || hue < 20 ? (hue + 40) % 360 : hue}, 55%, 55%)`;
  }

  const LANE = 16, GAP = 4, LEFT = 96, MAX_TASK_LANES = 48;

  /**
   * One run's timeline on a canvas: a lane per CPU (who ran), then a lane per task (ran:
   * its colour; waited runnable: red). `view` ({from, to} in ns) is shared by all runs'
   * timelines; `onView` is told when this one zooms or pans, `onWait(task, wait)` when a
   * wait is clicked.
   */
  class Timeline {
    constructor(container, run, view, hooks) {
      this.run = run;
      this.tl = run.timeline;
      this.names = run.record.tasks.map((t) => t.name);
      this.view = view;
      this.hooks = hooks;
      this.lanes = Math.min(this.names.length, MAX_TASK_LANES);
      this.byTask = Array.from({ length: this.lanes }, () => []);
      for (const s of this.tl.slices) if (s[3] < this.lanes) this.byTask[s[3]].push(s);
      this.waits = Array.from({ length: this.lanes }, () => []);
      for (const w of this.tl.waits) if (w[0] < this.lanes) this.waits[w[0]].push(w);
      const note = [];
      if (this.names.length > this.lanes) note.push(`first ${this.lanes} of ${this.names.length} tasks`);
      if (this.tl.truncated) note.push("long run: the timeline shows its first events only");
      this.canvas = el("canvas", { "data-sched": run.sched });
      container.append(el("div", { class: "timeline" }, el("h3", { text: run.sched + (note.length ? ` (${note.join("; ")})` : "") }), this.canvas));
      this.height = (this.tl.nr_cpus + this.lanes) * (LANE + GAP) + 2 * GAP + 18;
      this.listen();
      this.draw();
    }

    width() {
      return this.canvas.clientWidth || 900;
    }

    /** ns at canvas x, and back. */
    t(x) {
      return this.view.from + ((x - LEFT) / (this.width() - LEFT)) * (this.view.to - this.view.from);
    }
    x(t) {
      return LEFT + ((t - this.view.from) / (this.view.to - this.view.from)) * (this.width() - LEFT);
    }
    laneY(i) {
      return GAP + i * (LANE + GAP) + (i >= this.tl.nr_cpus ? 8 : 0);
    }

    draw() {
      const c = this.canvas, dpr = window.devicePixelRatio || 1, w = this.width();
      c.width = w * dpr;
      c.height = this.height * dpr;
      c.style.height = `${this.height}px`;
      const g = c.getContext("2d");
      g.scale(dpr, dpr);
      g.fillStyle = "#fff";
      g.fillRect(0, 0, w, this.height);
      g.font = "11px ui-monospace, 'DejaVu Sans Mono', monospace";
      g.textBaseline = "middle";
      const { from, to } = this.view;
      // A run fills its lane; a wait is a thinner red bar, so runs and waits read apart.
      const box = (lane, a, b, fill, inset = 0) => {
        if (b < from || a > to) return;
        const x0 = Math.max(LEFT, this.x(a)), x1 = Math.min(w, this.x(b));
        g.fillStyle = fill;
        g.fillRect(x0, this.laneY(lane) + inset, Math.max(1, x1 - x0), LANE - 2 * inset);
      };
      for (let cpu = 0; cpu < this.tl.nr_cpus; cpu++) {
        g.fillStyle = "#f6f7f9";
        g.fillRect(LEFT, this.laneY(cpu), w - LEFT, LANE);
      }
      for (const [cpu, a, b, task] of this.tl.slices) box(cpu, a, b, color(task));
      for (let i = 0; i < this.lanes; i++) {
        const lane = this.tl.nr_cpus + i;
        for (const [, a, b] of this.waits[i]) box(lane, a, b, "#c62828", 4);
        for (const [, a, b] of this.byTask[i]) box(lane, a, b, color(i));
      }
      g.fillStyle = "#1d2330";
      for (let cpu = 0; cpu < this.tl.nr_cpus; cpu++) g.fillText(`CPU ${cpu}`, 4, this.laneY(cpu) + LANE / 2);
      for (let i = 0; i < this.lanes; i++) g.fillText(this.names[i].slice(0, 13), 4, this.laneY(this.tl.nr_cpus + i) + LANE / 2);
      g.fillStyle = "#69707d";
      g.fillText(dur(Math.round(from)), LEFT, this.height - 8);
      g.textAlign = "right";
      g.fillText(dur(Math.round(to)), w - 2, this.height - 8);
    }

    /** What is under canvas point (x, y): {kind: "slice"|"wait", task, cpu, a, b}. */
    hit(x, y) {
      if (x < LEFT) return null;
      const t = this.t(x), slack = ((this.view.to - this.view.from) / (this.width() - LEFT)) * 2;
      const lane = [...Array(this.tl.nr_cpus + this.lanes).keys()].find((i) => y >= this.laneY(i) && y < this.laneY(i) + LANE);
      if (lane === undefined) return null;
      const near = (a, b) => a - slack <= t && t <= b + slack;
      if (lane < this.tl.nr_cpus) {
        const s = this.tl.slices.find(([cpu, a, b]) => cpu === lane && near(a, b));
        return s && { kind: "slice", cpu: lane, task: s[3], a: s[1], b: s[2] };
      }
      const task = lane - this.tl.nr_cpus;
      const w = this.waits[task].find(([, a, b]) => a <= t && t <= b) || this.waits[task].find(([, a, b]) => near(a, b));
      if (w) return { kind: "wait", task, a: w[1], b: w[2] };
      const s = this.byTask[task].find(([, a, b]) => near(a, b));
      return s && { kind: "slice", cpu: s[0], task, a: s[1], b: s[2] };
    }

    describe(h) {
      const name = this.names[h.task];
      if (h.kind === "wait") return `${name} waited runnable ${dur(h.b - h.a)}\n${dur(h.a)} – ${dur(h.b)}\nclick: why it waited`;
      return `${name} ran on CPU ${h.cpu} for ${dur(h.b - h.a)}\n${dur(h.a)} – ${dur(h.b)}`;
    }

    /** Canvas coordinates of the middle of wait `i` of `task` (the browser test clicks it). */
    waitPoint(task, i) {
      const w = this.waits[task][i];
      return w && { x: this.x((w[1] + w[2]) / 2), y: this.laneY(this.tl.nr_cpus + task) + LANE / 2, wait: w };
    }

    listen() {
      const c = this.canvas, tip = document.getElementById("tooltip");
      const pos = (e) => {
        const r = c.getBoundingClientRect();
        return { x: e.clientX - r.left, y: e.clientY - r.top };
      };
      let drag = null;
      c.addEventListener("wheel", (e) => {
        e.preventDefault();
        const { x } = pos(e), at = this.t(x), k = e.deltaY > 0 ? 1.25 : 0.8;
        const span = Math.max(1000, (this.view.to - this.view.from) * k);
        const from = Math.max(0, at - ((at - this.view.from) / (this.view.to - this.view.from)) * span);
        this.hooks.onView({ from, to: Math.min(this.run.record.sim_ns, from + span) });
      });
      c.addEventListener("mousedown", (e) => {
        drag = { x: pos(e).x, view: { ...this.view }, moved: false };
      });
      window.addEventListener("mouseup", () => {
        // A drag that moved is a pan, not a click on what is under the pointer.
        this.dragged = Boolean(drag && drag.moved);
        drag = null;
      });
      c.addEventListener("mousemove", (e) => {
        const p = pos(e);
        if (drag && e.buttons) {
          const dt = ((drag.x - p.x) / (this.width() - LEFT)) * (drag.view.to - drag.view.from);
          if (Math.abs(drag.x - p.x) > 3) drag.moved = true;
          const span = drag.view.to - drag.view.from, end = this.run.record.sim_ns;
          const from = Math.min(Math.max(0, drag.view.from + dt), Math.max(0, end - span));
          this.hooks.onView({ from, to: from + span });
          return;
        }
        const h = this.hit(p.x, p.y);
        tip.hidden = !h;
        if (h) {
          tip.textContent = this.describe(h);
          tip.style.left = `${e.clientX + 12}px`;
          tip.style.top = `${e.clientY + 12}px`;
        }
      });
      c.addEventListener("mouseleave", () => {
        tip.hidden = true;
      });
      c.addEventListener("click", (e) => {
        if (this.dragged) {
          this.dragged = false;
          return;
        }
        const p = pos(e), h = this.hit(p.x, p.y);
        if (h && h.kind === "wait") this.hooks.onWait(this.run, this.names[h.task], h);
      });
    }
  }

  return { dur, el, summary, taskTables, cdf, Timeline, TASK_KEYS, PALETTE };
})();
