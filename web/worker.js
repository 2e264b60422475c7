// A Web Worker holding one instance of the simulator (schedlab.wasm), so a run never
// freezes the page; the page cancels a run by terminating the worker.
//
// Messages in: { id, request } (a request of crates/wasm/src/api.rs).
// Messages out: { id, progress: nowNs } during a run, then { id, answer } (the module's
// JSON answer) or { id, answer: { error: { kind: "crash", message } } } if the module trapped.
"use strict";
importScripts("glue.js");

let current = null; // the id whose run reports progress
let lastPanic = null;
let lastProgress = 0;

const ready = fetch("schedlab.wasm")
  .then((r) => {
    if (!r.ok) throw new Error(`schedlab.wasm: HTTP ${r.status}`);
    return r.arrayBuffer();
  })
  .then((bytes) =>
    instantiateSchedlab(bytes, {
      progress: (nowNs) => {
        // At most ~20 messages a second: the page only moves a bar.
        const t = Date.now();
        if (t - lastProgress > 50) {
          lastProgress = t;
          postMessage({ id: current, progress: nowNs });
        }
        return true;
      },
      panicked: (message) => {
        lastPanic = message;
      },
    }),
  );

onmessage = async (e) => {
  const { id, request } = e.data;
  let answer;
  try {
    const sim = await ready;
    current = id;
    lastPanic = null;
    answer = sim.call(request);
  } catch (err) {
    const why = lastPanic ? `the simulator panicked (a bug; please report it): ${lastPanic}` : String(err);
    answer = { error: { kind: "crash", message: why } };
  }
  postMessage({ id, answer });
};
