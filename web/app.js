// The playground page: the workload editor, the pickers, runs in Web Workers (one per
// scheduler, side by side, with progress and cancel), the results, and the URL fragment
// that carries the workload and the choices so that a link reproduces a run.
"use strict";

const App = (() => {
  const $ = (id) => document.getElementById(id);
  const { dur, el } = Views;

  let catalog = null;
  let checker = null; // the worker answering catalog and check requests
  let running = []; // workers of the runs in progress
  let runs = []; // finished runs: { sched, args, worker, record, timeline }
  let timelines = [];
  let view = { from: 0, to: 1 };
  let seq = 0;
  let checkTimer = null;
  /** The last run's promise (resolves when its results are drawn), for the browser test. */
  let lastRun = Promise.resolve();
  let lastExplain = Promise.resolve();
  const scheds = [];

  /** Sends `req` to `worker`; resolves with the answer, rejects when the worker is ended. */
  function request(worker, req, onProgress) {
    const id = ++seq;
    return new Promise((resolve, reject) => {
      const listen = (e) => {
        if (e.data.id !== id) return;
        if (e.data.progress !== undefined) {
          if (onProgress) onProgress(e.data.progress);
          return;
        }
        worker.removeEventListener("message", listen);
        // A module that trapped may hold broken state: the checker is started afresh.
        if (worker === checker && e.data.answer.error && e.data.answer.error.kind === "crash") {
          worker.terminate();
          checker = new Worker("worker.js");
        }
        resolve(e.data.answer);
      };
      worker.addEventListener("message", listen);
      worker.cancel = () => reject(new Error("cancelled"));
      worker.postMessage({ id, request: req });
    });
  }

  function lines(id) {
    return $(id).value.split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("#"));
  }

  /** The request arguments of a run under `sched`, from the page's fields. */
  function args(sched, timeline) {
    return {
      file: $("file").value.trim() || "workload.toml",
      text: $("text").value,
      machine: $("machine").value || null,
      sched,
      sets: lines("sets"),
      params: lines("params"),
      seed: Number($("seed").value || 1),
      duration: $("duration").value.trim() || null,
      kernel: $("kernel").value,
      timeline,
    };
  }

  // --- the editor and its located errors -------------------------------------------

  function gutter(bad) {
    const n = $("text").value.split("\n").length;
    const g = $("gutter");
    g.replaceChildren(...Array.from({ length: n }, (_, i) => el("span", { class: i + 1 === bad ? "bad" : "", text: `${i + 1}\n` })));
    g.scrollTop = $("text").scrollTop;
  }

  /** Shows `err` (an answer's error) under the editor; a workload error marks its line. */
  function showError(err, context) {
    const box = $("error");
    if (!err) {
      box.hidden = true;
      gutter(0);
      return;
    }
    box.hidden = false;
    box.textContent = (context ? `${context}: ` : "") + err.message;
    box.dataset.kind = err.kind;
    box.dataset.line = err.line || "";
    box.dataset.column = err.column || "";
    gutter(err.kind === "source" ? err.line : 0);
    box.onclick = () => err.line && selectAt(err.line, err.column || 1);
  }

  function selectAt(line, column) {
    const t = $("text"), ls = t.value.split("\n");
    const at = ls.slice(0, line - 1).reduce((s, l) => s + l.length + 1, 0) + column - 1;
    t.focus();
    t.setSelectionRange(at, Math.min(at + 1, t.value.length));
    t.scrollTop = Math.max(0, (line - 5) * 18.85);
  }

  /** Loads and validates the workload without running it (the CLI's up-front checks). */
  async function check() {
    const a = await request(checker, { op: "check", ...args(scheds[0] || catalog.default_scheduler, false) });
    if (a.error) {
      $("check").textContent = "";
      showError(a.error);
    } else {
      showError(null);
      $("check").textContent = `${a.ok.tasks} tasks on ${a.ok.machine} (${a.ok.cpus} CPUs), ${dur(a.ok.end_ns)} simulated`;
    }
    return a;
  }

  function checkSoon() {
    clearTimeout(checkTimer);
    checkTimer = setTimeout(check, 300);
  }

  // --- pickers ---------------------------------------------------------------------

  function renderScheds() {
    $("scheds").replaceChildren(
      ...scheds.map((s, i) => {
        const x = el("button", { type: "button", title: "remove", text: "×", "aria-label": `remove ${s}` });
        x.onclick = () => {
          scheds.splice(i, 1);
          renderScheds();
        };
        return el("span", { class: "chip", "data-sched": s }, s, x);
      }),
    );
  }

  function pickedEntry() {
    return catalog.schedulers.find((s) => s.name === $("sched-pick").value);
  }

  function renderPick() {
    const e = pickedEntry();
    const versions = e.versions.length ? e.versions : [""];
    $("version-pick").replaceChildren(
      ...versions.map((v, i) => el("option", { value: v, text: v ? `${v}${i === versions.length - 1 ? " (default)" : ""}` : "—" })),
    );
    $("version-pick").value = versions[versions.length - 1];
    $("tunable-table").replaceChildren(
      el("tr", {}, el("td", { colspan: "3", text: e.doc })),
      ...e.tunables.map((t) => el("tr", {}, el("td", { class: "mono", text: t.name }), el("td", { class: "mono", text: t.default }), el("td", { text: `${t.doc} [${t.values}]` }))),
    );
  }

  function addPicked() {
    const e = pickedEntry(), v = $("version-pick").value;
    const name = v && v !== e.versions[e.versions.length - 1] ? `${e.name}@${v}` : e.name;
    if (!scheds.includes(name)) scheds.push(name);
    renderScheds();
  }

  function fillPickers() {
    const opt = (value, text) => el("option", { value, text });
    const groups = [["Examples", ""], ["rt-app examples", "rt-app/"], ["Studies' workloads", "study/"]];
    $("example").replaceChildren(
      opt("", "— pick a workload —"),
      ...groups.map(([label, prefix]) => {
        const g = el("optgroup", { label });
        const mine = catalog.examples.filter((x) => (prefix ? x.name.startsWith(prefix) : !x.name.includes("/")));
        g.append(...mine.map((x) => opt(x.name, x.name)));
        return g;
      }),
    );
    $("machine").replaceChildren(opt("", "the workload's (else smp4)"), ...catalog.machines.map((m) => opt(m.name, `${m.name} — ${m.doc}`)));
    $("kernel").replaceChildren(...catalog.kernel_versions.map((v) => opt(v, v)));
    $("kernel").value = "5.15";
    $("sched-pick").replaceChildren(...catalog.schedulers.map((s) => opt(s.name, s.name)));
    renderPick();
    const l = catalog.limits;
    $("limits").textContent = `limits as on the CLI: ${l.max_tasks} tasks, ${l.max_cpus} CPUs, ${dur(l.max_sim_time_ns)} simulated`;
    $("version").textContent = `v${catalog.version}`;
  }

  function loadExample(name) {
    const x = catalog.examples.find((e) => e.name === name);
    if (!x) return false;
    $("text").value = x.text;
    $("file").value = x.file;
    $("example").value = name;
    checkSoon();
    gutter(0);
    return true;
  }

  // --- the URL fragment --------------------------------------------------------------

  const b64 = (bytes) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  const unb64 = (s) => Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));

  async function pipe(bytes, stream) {
    return new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(stream)).arrayBuffer());
  }

  /** The page's choices as a fragment: `z` + deflated JSON, base64url. */
  async function encodeState() {
    const s = { ...args(null, false), scheds: [...scheds] };
    delete s.sched;
    delete s.timeline;
    const json = new TextEncoder().encode(JSON.stringify(s));
    return "z" + b64(await pipe(json, new CompressionStream("deflate-raw")));
  }

  async function decodeState(frag) {
    if (!frag.startsWith("z")) throw new Error("not a playground link");
    return JSON.parse(new TextDecoder().decode(await pipe(unb64(frag.slice(1)), new DecompressionStream("deflate-raw"))));
  }

  function applyState(s) {
    $("text").value = s.text;
    $("file").value = s.file;
    $("machine").value = s.machine || "";
    $("seed").value = s.seed;
    $("duration").value = s.duration || "";
    $("kernel").value = s.kernel || "5.15";
    $("sets").value = (s.sets || []).join("\n");
    $("params").value = (s.params || []).join("\n");
    scheds.splice(0, scheds.length, ...s.scheds);
    renderScheds();
    gutter(0);
  }

  // --- runs -------------------------------------------------------------------------

  function cancel() {
    for (const w of running) {
      w.terminate();
      if (w.cancel) w.cancel();
    }
    running = [];
    $("cancel").disabled = true;
    $("run").disabled = false;
  }

  function progressBar(sched) {
    const fill = el("div", { class: "fill" });
    const label = el("span", { text: `${sched}: starting` });
    const bar = el("div", { class: "bar", "data-sched": sched }, label, el("div", { class: "track" }, fill));
    $("progress").append(bar);
    return { bar, fill, label };
  }

  /** Runs the workload under every picked scheduler; checks them all first. */
  async function run() {
    cancel();
    showError(null);
    $("progress").replaceChildren();
    if (!scheds.length) {
      showError({ kind: "input", message: "pick at least one scheduler" });
      return;
    }
    history.replaceState(null, "", "#" + (await encodeState()));
    // Every run is checked before any starts (names, tunables, limits), as `compare` does.
    let end = 0;
    for (const s of scheds) {
      const a = await request(checker, { op: "check", ...args(s, false) });
      if (a.error) {
        showError(a.error, a.error.kind === "source" ? "" : s);
        return;
      }
      end = a.ok.end_ns;
    }
    $("run").disabled = true;
    $("cancel").disabled = false;
    for (const r of runs) r.worker.terminate();
    runs = [];
    const started = scheds.map((sched) => {
      const worker = new Worker("worker.js");
      running.push(worker);
      const p = progressBar(sched);
      const a = args(sched, true);
      const t0 = performance.now();
      return request(worker, { op: "run", ...a }, (now) => {
        p.fill.style.width = `${Math.min(100, (100 * now) / end)}%`;
        p.label.textContent = `${sched}: ${dur(now)} of ${dur(end)}`;
      }).then(
        (answer) => {
          if (answer.error) {
            p.bar.classList.add("failed");
            p.label.textContent = `${sched}: ${answer.error.message}`;
            throw answer.error;
          }
          p.fill.style.width = "100%";
          p.label.textContent = `${sched}: done in ${((performance.now() - t0) / 1000).toFixed(2)} s`;
          return { sched, args: a, worker, record: answer.ok.record, timeline: answer.ok.timeline };
        },
        (err) => {
          p.bar.classList.add("failed");
          p.label.textContent = `${sched}: cancelled`;
          throw err;
        },
      );
    });
    try {
      runs = await Promise.all(started);
      render();
    } catch (err) {
      if (err && err.kind) showError(err);
    } finally {
      running = [];
      $("cancel").disabled = true;
      $("run").disabled = false;
    }
  }

  function setView(v) {
    view = v;
    for (const t of timelines) {
      t.view = view;
      t.draw();
    }
    $("window").textContent = `${dur(Math.round(view.from))} – ${dur(Math.round(view.to))}`;
  }

  function render() {
    $("results").hidden = false;
    Views.summary($("summary"), runs);
    const end = Math.max(...runs.map((r) => r.record.sim_ns), 1);
    view = { from: 0, to: end };
    $("timelines").replaceChildren();
    timelines = runs.map((r) => new Views.Timeline($("timelines"), r, view, { onView: setView, onWait: explain }));
    setView(view);
    Views.taskTables($("tables"), runs);
    Views.cdf($("cdf"), runs);
    $("explain").replaceChildren(el("p", { class: "muted", text: "Click a wait (red) in a task's lane." }));
  }

  /** Explains the wait `h` of `task` in `run`: the same run again, explained for that task. */
  function explain(run, task, h) {
    const at = Math.floor((h.a + h.b) / 2);
    const box = $("explain");
    box.replaceChildren(el("p", { class: "muted", text: `explaining ${task}'s wait at ${dur(at)} under ${run.sched} (the run again, explained)…` }));
    const req = { op: "explain", ...run.args, timeline: false, task, at_ns: at };
    lastExplain = request(run.worker, req).then((a) => {
      if (a.error) {
        box.replaceChildren(el("p", { class: "error", text: a.error.message }));
        return a;
      }
      const head = el("p", {}, `${run.sched}: ${task} waited ${dur(h.b - h.a)} from ${dur(h.a)} (as `, el("code", { text: `schedlab explain --sched ${run.sched} --task ${task} --at ${at}ns` }), " prints it)");
      const json = el("details", {}, el("summary", { text: "the explain record (JSON)" }), el("pre", { text: JSON.stringify(a.ok.explain, null, 2) }));
      box.replaceChildren(head, el("pre", { id: "explain-text", text: a.ok.text }), json);
      box.dataset.task = task;
      box.dataset.at = String(at);
      box.dataset.sched = run.sched;
      return a;
    });
    return lastExplain;
  }

  async function copyLink() {
    const url = location.href.split("#")[0] + "#" + (await encodeState());
    history.replaceState(null, "", url);
    try {
      await navigator.clipboard.writeText(url);
      $("check").textContent = "link copied";
    } catch {
      $("check").textContent = "link in the address bar";
    }
  }

  async function init() {
    checker = new Worker("worker.js");
    const a = await request(checker, { op: "catalog" });
    if (a.error) throw new Error(a.error.message);
    catalog = a.ok;
    fillPickers();
    $("example").onchange = () => loadExample($("example").value);
    $("sched-pick").onchange = renderPick;
    $("sched-add").onclick = addPicked;
    $("run").onclick = () => {
      lastRun = run();
    };
    $("cancel").onclick = cancel;
    $("link").onclick = copyLink;
    $("zoom-reset").onclick = () => setView({ from: 0, to: Math.max(...runs.map((r) => r.record.sim_ns), 1) });
    $("text").addEventListener("input", () => {
      gutter(0);
      checkSoon();
    });
    $("text").addEventListener("scroll", () => {
      $("gutter").scrollTop = $("text").scrollTop;
    });
    for (const id of ["file", "machine", "kernel", "seed", "duration", "sets", "params"]) $(id).addEventListener("change", checkSoon);
    window.addEventListener("resize", () => setView(view));
    const frag = location.hash.slice(1);
    if (frag) {
      try {
        applyState(await decodeState(frag));
        lastRun = run();
        return;
      } catch (err) {
        showError({ kind: "input", message: `the link's workload could not be read: ${err.message}` });
      }
    }
    loadExample("four-hogs");
    scheds.push(...catalog.default_compare.split(","));
    renderScheds();
  }

  const ready = init().catch((err) => {
    showError({ kind: "crash", message: `the simulator did not load: ${err.message}` });
    throw err;
  });

  return {
    ready,
    get lastRun() {
      return lastRun;
    },
    get lastExplain() {
      return lastExplain;
    },
    get runs() {
      return runs;
    },
    get timelines() {
      return timelines;
    },
    get catalog() {
      return catalog;
    },
    check,
    scheds,
    renderScheds,
  };
})();
