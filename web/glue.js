// The glue between JavaScript and the simulator module (crates/wasm): one call taking a
// JSON request and returning the JSON answer. Loaded by worker.js (importScripts) and by
// Node for quick checks (require); no wasm-bindgen.
"use strict";

/**
 * Instantiates the module from its bytes. `hooks.progress(nowNs)` is called every few
 * thousand simulated events and returns whether to go on; `hooks.panicked(message)` gets a
 * panic's message just before the module traps.
 */
async function instantiateSchedlab(bytes, hooks) {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let exports = null;
  const text = (ptr, len) => decoder.decode(new Uint8Array(exports.memory.buffer, ptr >>> 0, len >>> 0));
  const imports = {
    schedlab: {
      progress: (nowNs) => (hooks && hooks.progress && !hooks.progress(nowNs) ? 0 : 1),
      panicked: (ptr, len) => hooks && hooks.panicked && hooks.panicked(text(ptr, len)),
    },
  };
  const { instance } = await WebAssembly.instantiate(bytes, imports);
  exports = instance.exports;
  return {
    /** Sends `request` (an object with an `op`), returns the parsed answer. */
    call(request) {
      const bytes = encoder.encode(JSON.stringify(request));
      const ptr = exports.schedlab_alloc(bytes.length);
      new Uint8Array(exports.memory.buffer, ptr >>> 0, bytes.length).set(bytes);
      let len;
      try {
        len = exports.schedlab_call(ptr, bytes.length);
      } finally {
        exports.schedlab_free(ptr, bytes.length);
      }
      return JSON.parse(text(exports.schedlab_out_ptr(), len));
    },
  };
}

if (typeof module !== "undefined") {
  module.exports = { instantiateSchedlab };
}
