// Steps the browser test (crates/cli/tests/playground.rs) drives through the DevTools
// protocol: each works the page through its DOM (selects, buttons, the timeline canvas)
// as a user would and returns what the page then shows, read back from the DOM. Inert
// unless called.
"use strict";

const Selftest = (() => {
  const $ = (id) => document.getElementById(id);
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

  function change(id, value) {
    $(id).value = value;
    $(id).dispatchEvent(new Event("change"));
  }

  /** Picks `sched` (`NAME` or `NAME@VERSION`) in the pickers and presses Add. */
  function addScheduler(sched) {
    const [name, version] = sched.split("@");
    change("sched-pick", name);
    if (version) change("version-pick", version);
    $("sched-add").click();
  }

  /** The per-task tables as { sched: { task: { key: number } } }, from the cells' data. */
  function tables() {
    const out = {};
    for (const table of document.querySelectorAll("table.tasks")) {
      const rows = {};
      for (const tr of table.querySelectorAll("tr[data-task]")) {
        const row = {};
        [...tr.children].forEach((td, i) => {
          const key = Views.TASK_KEYS[i];
          const v = td.dataset.ns ?? td.dataset.n;
          if (key && v !== undefined) row[key] = Number(v);
        });
        rows[tr.dataset.task] = row;
      }
      out[table.dataset.sched] = rows;
    }
    return out;
  }

  function summary() {
    const out = {};
    for (const tr of document.querySelectorAll("#summary tr[data-sched]")) {
      out[tr.dataset.sched] = { trace_hash: tr.querySelector(".trace-hash").textContent };
    }
    return out;
  }

  /** Loads example `name`, picks `scheds`, presses Run and waits for the results. */
  async function runExample(name, scheds, seed) {
    await App.ready;
    change("example", name);
    change("seed", String(seed));
    // The chips re-render on each removal: click the first until none is left.
    while (document.querySelector("#scheds .chip button")) document.querySelector("#scheds .chip button").click();
    scheds.forEach(addScheduler);
    $("run").click();
    await App.lastRun;
    const error = $("error").hidden ? null : $("error").textContent;
    return { error, summary: summary(), tables: tables(), chips: [...document.querySelectorAll("#scheds .chip")].map((c) => c.dataset.sched) };
  }

  /** Clicks the longest wait drawn in the first timeline that has one; returns the explanation shown. */
  async function clickLongestWait() {
    for (const t of App.timelines) {
      let best = null;
      t.waits.forEach((ws, task) => ws.forEach((w, i) => {
        if (!best || w[2] - w[1] > best.len) best = { task, i, len: w[2] - w[1] };
      }));
      if (!best) continue;
      // Zoom onto the wait so it is wide enough to hit, then click its middle.
      const w = t.waits[best.task][best.i];
      $("zoom-reset").click();
      t.hooks.onView({ from: Math.max(0, w[1] - best.len), to: w[2] + best.len });
      const p = t.waitPoint(best.task, best.i);
      const r = t.canvas.getBoundingClientRect();
      t.canvas.dispatchEvent(new MouseEvent("click", { clientX: r.left + p.x, clientY: r.top + p.y, bubbles: true }));
      await App.lastExplain;
      const box = $("explain");
      const text = $("explain-text");
      return {
        sched: box.dataset.sched,
        task: box.dataset.task,
        at_ns: Number(box.dataset.at),
        wait: { start_ns: w[1], end_ns: w[2] },
        text: text ? text.textContent : box.textContent,
      };
    }
    return { error: "no timeline shows a wait" };
  }

  /** Types `text` into the editor and waits for the located error the page shows. */
  async function typeInvalid(text, file) {
    change("file", file);
    $("text").value = text;
    $("text").dispatchEvent(new Event("input"));
    for (let i = 0; i < 100 && $("error").hidden; i++) await sleep(50);
    const bad = document.querySelector("#gutter .bad");
    return {
      shown: !$("error").hidden,
      message: $("error").textContent,
      kind: $("error").dataset.kind,
      line: Number($("error").dataset.line),
      column: Number($("error").dataset.column),
      marked_line: bad ? Number(bad.textContent) : null,
    };
  }

  /** Starts a long run, waits until its progress bars move, presses Cancel. */
  async function cancelLongRun(duration) {
    change("duration", duration);
    $("run").click();
    const moved = () => [...document.querySelectorAll("#progress .fill")].some((f) => parseFloat(f.style.width) > 0);
    for (let i = 0; i < 400 && !moved(); i++) await sleep(25);
    const progressed = moved();
    $("cancel").click();
    await App.lastRun;
    change("duration", "");
    return {
      progressed,
      labels: [...document.querySelectorAll("#progress .bar span")].map((l) => l.textContent),
      run_enabled: !$("run").disabled,
    };
  }

  /** Presses Run with `duration` and returns the error shown before anything ran. */
  async function runWithDuration(duration) {
    change("duration", duration);
    $("progress").replaceChildren();
    $("run").click();
    await App.lastRun;
    const shown = { shown: !$("error").hidden, message: $("error").textContent, started: $("progress").children.length };
    change("duration", "");
    return shown;
  }

  /** Trace hashes of `runs` ([{example, sched, seed}]) computed by the page's module. */
  async function hashes(runs) {
    await App.ready;
    const worker = new Worker("worker.js");
    const ask = (req) =>
      new Promise((resolve) => {
        const id = Math.random();
        const listen = (e) => {
          if (e.data.id === id && e.data.answer) {
            worker.removeEventListener("message", listen);
            resolve(e.data.answer);
          }
        };
        worker.addEventListener("message", listen);
        worker.postMessage({ id, request: req });
      });
    const out = [];
    for (const r of runs) {
      const x = App.catalog.examples.find((e) => e.name === r.example);
      const a = await ask({ op: "run", file: x.file, text: x.text, sched: r.sched, seed: r.seed });
      out.push({ ...r, trace_hash: a.ok ? a.ok.record.trace_hash : null, events: a.ok ? a.ok.record.events : null, error: a.error || null });
    }
    worker.terminate();
    return out;
  }

  /** The page's current link (the fragment encodes the workload and the choices). */
  function link() {
    return location.href;
  }

  return { runExample, clickLongestWait, typeInvalid, cancelLongRun, runWithDuration, hashes, tables, summary, link };
})();
