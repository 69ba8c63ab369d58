// web/site/worker.js: runs the library (ctpipe_web.js / .wasm, built from
// web/binding.cpp) off the page's main thread, so that a large shape never freezes the
// tab. Protocol:
//   page -> worker: {seq, configs: [config, ...]}  (config: {schedule, args}, args the
//                   tool's options that web/binding.cpp's analyze() takes)
//   worker -> page: {ready: true, families, runtime_models, kind_names}  once, at start
//                   {seq, results: [result, ...], ms}  per request, in order
// Every number in a result comes from the library; this file only moves them.
"use strict";

var Module = {
  onRuntimeInitialized() {
    postMessage({
      ready: true,
      families: Module.families(),
      runtime_models: Module.runtime_models(),
      kind_names: Module.kind_names(),
    });
  },
};
importScripts("ctpipe_web.js");

/// The typed arrays' buffers of `result`, handed over without a copy.
function buffers(result) {
  const out = [];
  for (const value of Object.values(result)) {
    if (ArrayBuffer.isView(value)) out.push(value.buffer);
  }
  if (result.executed && result.executed.stalls) {
    for (const spans of result.executed.stalls) out.push(spans.buffer);
  }
  return out;
}

onmessage = (event) => {
  const { seq, configs } = event.data;
  const start = performance.now();
  const results = configs.map((config) => Module.analyze(config.args));
  const ms = performance.now() - start;
  postMessage({ seq, results, ms }, results.flatMap(buffers));
};
