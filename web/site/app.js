// web/site/app.js: the page's controls, its URL, and its drawing (docs/web.md).
//
// Every schedule, time, bubble, peak and closed form shown here is computed by the C++
// library in worker.js (web/binding.cpp); this file turns the controls into the tool's
// options (`-s 1f1b -P 4 --costs f=1,i=1,w=1`), which the tool's own parser reads and
// checks there, and draws the readout that comes back. Exact values are shown as the
// library writes them ("3/11"); the doubles beside them only place boxes on the canvas.
"use strict";

const COLORS = { F: "#4e79a7", B: "#59a14f", I: "#76b7b2", W: "#b07aa1", OVERLAP_F_B: "#9c755f" };
const STALL_COLOR = "#f4a09a";
const COMPARE_HEADER = 16;  // px above each schedule's rows in compare mode: its name
const FONT = '11px "DejaVu Sans", "Liberation Sans", Arial, sans-serif';
const DEFAULT_COMPARE = ["gpipe", "1f1b", "interleaved-1f1b", "zb-h1", "zb-h2", "zbv"];
const TEXT_FIELDS = ["f", "b", "i", "w", "c", "fb", "gamma", "stage_scale", "microbatch_scale"];
/// The URL's keys and their controls (besides the lists: compare, view).
const HASH_KEYS = { s: "schedule", P: "P-num", m: "m-num", V: "V-num", placement: "placement", variant: "variant",
  g: "group", warmup: "warmup", pairs: "pairs", f: "f", b: "b", i: "i", w: "w", c: "c", fb: "fb", gamma: "gamma",
  stage_scale: "stage_scale", microbatch_scale: "microbatch_scale", runtime: "runtime" };
const HASH_DEFAULTS = { s: "1f1b", P: "4", m: "8", V: "1", placement: "", variant: "megatron", g: "0", warmup: "2",
  pairs: "fused", f: "1", b: "", i: "1", w: "1", c: "0", fb: "", gamma: "1", stage_scale: "", microbatch_scale: "",
  runtime: "" };
/// The menus: a value from the URL that a menu does not offer goes to the tool's parser
/// as it is, under the menu's option, and the parser's message names it.
const MENUS = { schedule: "-s", placement: "--placement", variant: "--variant", pairs: "--pair-model",
  runtime: "--runtime" };

const $ = (id) => document.getElementById(id);
const state = {
  families: [], kindNames: [], view: "timeline",
  seq: 0, busy: false, pending: null, last: null, drawn: 0, timings: [],
  invalid: {},  // per menu: a value from the URL it does not offer, shown as an error until changed
};
window.ctpipePage = state;  // read by tests/web/page_test.mjs and bench/web_redraw.mjs

/// A request still running after this many ms while a newer one waits is abandoned: the
/// worker is replaced, so a huge shape never holds up the next one.
const ABANDON_MS = 400;

let worker = null;
function startWorker() {
  worker = new Worker("worker.js");
  worker.onmessage = (event) => (event.data.ready ? ready(event.data) : receive(event.data));
  worker.onerror = (event) => {
    event.preventDefault();
    if (!state.families.length) {
      setStatus("error", "the library failed to load (serve this folder over http: ./scripts/web.sh)");
      return;
    }
    const job = state.job;
    restartWorker();
    if (job) showError(`ctpipe: the library stopped on this shape (${event.message || "out of memory"}); try a smaller one`);
  };
}
function restartWorker() {
  worker.terminate();
  state.busy = false;
  state.job = null;
  state.restarting = true;
  startWorker();
}
startWorker();

/// The worker's first message: at the page's start, the library's lists; after a
/// restart, the go-ahead for what waits.
function ready(info) {
  if (state.restarting) {
    state.restarting = false;
    send();
    return;
  }
  start(info);
}

function setStatus(name, text) {
  document.body.dataset.state = name;
  $("status").textContent = text;
}

function family(name) { return state.families.find((f) => f.name === name); }

// --- start: fill the controls from the library, then from the URL ---------------------

function start(info) {
  state.families = info.families;
  state.kindNames = info.kind_names;
  for (const f of info.families) $("schedule").add(new Option(f.name, f.name));
  for (const m of info.runtime_models) $("runtime").add(new Option(`a run under ${m}`, m));
  for (const f of info.families) {
    const box = document.createElement("label");
    box.innerHTML = `<input type="checkbox" value="${f.name}"> ${f.name}`;
    box.firstChild.checked = DEFAULT_COMPARE.includes(f.name);
    $("compare-families").append(box);
  }
  wireControls();
  readHash();
  window.addEventListener("hashchange", () => { readHash(); request(); });
  window.addEventListener("resize", () => state.last && draw(state.last));
  request();
}

function wireControls() {
  for (const id of ["P", "m", "V"]) {
    $(id).addEventListener("input", () => { $(`${id}-num`).value = $(id).value; request(); });
    $(`${id}-num`).addEventListener("input", () => { $(id).value = $(`${id}-num`).value; request(); });
  }
  for (const id of Object.keys(MENUS)) $(id).addEventListener("input", () => delete state.invalid[id]);
  $("schedule").addEventListener("change", () => {
    const f = family($("schedule").value);
    if (f) setNumber("V", f.default_V);
    request();
  });
  // Compare mode starts the families with several chunks at their default V = 2 (V = 1
  // would make interleaved 1F1B plain 1F1B), as `ctpipe compare` runs them without -V.
  $("compare").addEventListener("input", () => {
    if ($("compare").checked && $("V-num").value === "1") setNumber("V", 2);
    request();
  });
  for (const id of ["placement", "variant", "group", "warmup", "pairs", "structural", "runtime", ...TEXT_FIELDS]) {
    $(id).addEventListener("input", () => request());
  }
  $("compare-families").addEventListener("change", () => {
    delete state.invalid.compare;
    request();
  });
  $("tab-timeline").addEventListener("click", () => setView("timeline"));
  $("tab-inflight").addEventListener("click", () => setView("inflight"));
  $("controls").addEventListener("submit", (e) => e.preventDefault());
  $("canvas").addEventListener("mousemove", hover);
}

function setNumber(id, value) {
  $(id).value = value;
  $(`${id}-num`).value = value;
}

function setView(view) {
  state.view = view;
  $("tab-timeline").setAttribute("aria-selected", view === "timeline");
  $("tab-inflight").setAttribute("aria-selected", view === "inflight");
  writeHash();
  if (state.last) draw(state.last);
}

function readHash() {
  const params = new URLSearchParams(location.hash.slice(1));
  for (const [key, id] of Object.entries(HASH_KEYS)) {
    const value = params.has(key) ? params.get(key) : HASH_DEFAULTS[key];
    if (key === "V" && !params.has("V") && params.has("s") && family(params.get("s"))) {
      setNumber("V", family(params.get("s")).default_V);
    } else if (id.endsWith("-num")) {
      setNumber(id.slice(0, -4), value);
    } else {
      $(id).value = value;
    }
    delete state.invalid[id];
    if (id in MENUS && $(id).value !== value) state.invalid[id] = value;  // a menu takes only its own values
  }
  $("structural").checked = params.get("structural") === "1";
  const compare = params.get("compare");
  $("compare").checked = compare !== null;
  delete state.invalid.compare;
  // A link fixes the whole view: without `compare`, the boxes go back to the defaults.
  const names = compare === null ? DEFAULT_COMPARE : compare.split(",").filter((name) => name !== "");
  for (const box of $("compare-families").querySelectorAll("input")) box.checked = names.includes(box.value);
  if (compare !== null) {
    const unknown = names.filter((name) => !family(name));
    if (unknown.length) state.invalid.compare = unknown.join(",");
    if (!params.has("V")) setNumber("V", 2);  // as `ctpipe compare` without -V runs the families with several chunks
  }
  state.view = params.get("view") === "inflight" ? "inflight" : "timeline";
  $("tab-timeline").setAttribute("aria-selected", state.view === "timeline");
  $("tab-inflight").setAttribute("aria-selected", state.view === "inflight");
}

function writeHash() {
  const params = new URLSearchParams();
  for (const [key, id] of Object.entries(HASH_KEYS)) {
    const value = state.invalid[id] ?? $(id).value;
    if (["s", "P", "m", "V"].includes(key) || value !== HASH_DEFAULTS[key]) params.set(key, value);
  }
  if ($("structural").checked) params.set("structural", "1");
  if ($("compare").checked) params.set("compare", comparedNames().join(","));
  if (state.view !== "timeline") params.set("view", state.view);
  const hash = `#${params.toString().replace(/%2C/g, ",").replace(/%2F/g, "/")}`;
  if (hash !== location.hash) history.replaceState(null, "", hash);
  $("share").href = hash;
}

// --- requests: the controls as the library's configuration -----------------------------

function comparedNames() {
  return [...$("compare-families").querySelectorAll("input:checked")].map((box) => box.value);
}

/// The value of menu `id`: the URL's value it does not offer, if any, else its own.
const menuValue = (id) => state.invalid[id] ?? $(id).value;

/// The tool's --costs of the cost fields (`f=1,i=1,w=1,c=0`): each field given, as typed;
/// an empty field takes the tool's default (t_f 1, t_i 1, t_w 1, t_c 0; t_b = t_i + t_w,
/// t_fb = t_f + t_b). The tool's parser reads and checks the text.
function costsOption() {
  const given = ["f", "b", "i", "w", "c", "fb"].filter((key) => $(key).value !== "");
  return given.length ? ["--costs", given.map((key) => `${key}=${$(key).value}`).join(",")] : [];
}

/// The tool's options for schedule `name` under the controls (its default view, docs/tool.md),
/// as web/binding.cpp's analyze() takes them: the shape as typed; V only for the families whose V
/// is the caller's choice; the interleaved and DualPipe options for those families (or
/// when their menu holds a value the page does not offer, for the parser to name it).
function argsFor(name, compare) {
  const f = family(name);
  const args = ["-s", name, "-P", $("P-num").value, "-m", $("m-num").value];
  if (!f || f.chunks_free) args.push("-V", $("V-num").value);
  const menu = (id) => (menuValue(id) !== "" ? [MENUS[id], menuValue(id)] : []);
  const offered = (id) => !(id in state.invalid);
  args.push(...menu("placement"));
  if ((f && f.interleaved) || !offered("variant")) args.push(...menu("variant"));
  // The group and the warmup factor as typed when they differ from the tool's defaults
  // (0: the variant's own group; 2), which the tool refuses to be given at V = 1.
  if (f && (f.interleaved || f.name === "combined-1f1b") && $("group").value !== "0") {
    args.push("--group", $("group").value);
  }
  if (f && f.interleaved && $("warmup").value !== "2") args.push("--warmup-factor", $("warmup").value);
  const dual = f && (f.name === "dualpipev" || f.name === "dualpipe");
  if (dual || (f && f.name === "combined-1f1b") || !offered("pairs")) args.push(...menu("pairs"));
  if (dual && $("structural").checked) args.push("--structural-minimum");
  args.push(...costsOption());
  if ($("gamma").value !== "") args.push("--gamma", $("gamma").value);
  if ($("stage_scale").value !== "") args.push("--stage-scale", $("stage_scale").value);
  if ($("microbatch_scale").value !== "") args.push("--microbatch-scale", $("microbatch_scale").value);
  args.push(...menu("runtime"));
  return { schedule: compare ? name : menuValue("schedule"), args };
}

function currentConfigs() {
  const compare = $("compare").checked;
  let names = compare ? comparedNames() : [menuValue("schedule")];
  if (compare && "compare" in state.invalid) names = [...names, ...state.invalid.compare.split(",")];
  if (!names.length) throw new Error("ctpipe: compare: check at least one schedule");
  return names.map((name) => argsFor(name, compare));
}

/// Greys out the controls that none of the chosen schedules reads: V where the family
/// fixes it, the interleaved and DualPipe options, t_b where every schedule splits its
/// backward, t_i and t_w where none does, t_fb without overlapped pairs.
function updateEnabled() {
  const compare = $("compare").checked;
  const chosen = (compare ? comparedNames() : [$("schedule").value]).map(family).filter(Boolean);
  const any = (test) => chosen.some(test);
  const f = family($("schedule").value);
  if (!compare && f && !f.chunks_free) setNumber("V", f.default_V);
  const dual = (g) => g.name === "dualpipev" || g.name === "dualpipe";
  const paired = (g) => dual(g) || g.name === "combined-1f1b";  // the families with overlapped pairs
  const grouped = (g) => g.interleaved || g.name === "combined-1f1b";  // the families with a group size
  const off = { V: !any((g) => g.chunks_free), "V-num": !any((g) => g.chunks_free),
    variant: !any((g) => g.interleaved), group: !any(grouped), warmup: !any((g) => g.interleaved),
    pairs: !any(paired), structural: !any(dual), b: !any((g) => !g.splits_backward), i: !any((g) => g.splits_backward),
    w: !any((g) => g.splits_backward), fb: !any(paired) };
  for (const [id, disabled] of Object.entries(off)) $(id).disabled = disabled;
  $("schedule").disabled = compare;
}

/// Sends the controls' configuration to the worker; while one request runs, the latest
/// configuration waits and is sent when it returns (a dragged slider never queues).
function request() {
  updateEnabled();
  writeHash();
  let configs;
  try {
    configs = currentConfigs();
  } catch (e) {
    state.pending = null;
    state.localError = true;  // a request still running is not drawn over this message
    showError(e.message);
    return;
  }
  state.localError = false;
  state.pending = { configs, at: performance.now(), compare: $("compare").checked, V: $("V-num").value,
    runtime: menuValue("runtime") };
  send();
}

function send() {
  if (state.restarting || !state.pending) return;
  if (state.busy) {
    const job = state.job;
    setTimeout(() => { if (state.busy && state.job === job && state.pending) restartWorker(); }, Math.max(0, ABANDON_MS - (performance.now() - job.sentAt)));
    return;
  }
  const job = state.pending;
  state.pending = null;
  state.busy = true;
  job.seq = ++state.seq;
  job.sentAt = performance.now();
  state.job = job;
  setTimeout(() => { if (state.busy && state.job === job) setStatus("working", "computing…"); }, 100);
  worker.postMessage({ seq: job.seq, configs: job.configs });
}

function receive(message) {
  const job = state.job;
  if (!job || message.seq !== job.seq) return;  // from an abandoned request
  state.busy = false;
  if (state.localError) {
    setStatus("ready", "ready");
    return;
  }
  const view = { compare: job.compare, results: message.results, configs: job.configs, V: job.V, runtime: job.runtime };
  state.last = view;
  draw(view);
  const ms = performance.now() - job.at;
  state.timings.push({ ms, libraryMs: message.ms, ops: view.results.reduce((n, r) => n + (r.ok ? r.op_start_ticks.length : 0), 0) });
  $("timing").textContent = `redrawn ${ms.toFixed(1)} ms after the change (library ${message.ms.toFixed(1)} ms)`;
  state.drawn += 1;
  document.body.dataset.drawn = state.drawn;
  if (state.pending) send();
  else setStatus("ready", "ready");
}

function showError(text) {
  $("error").hidden = false;
  $("error").textContent = text;
  $("readouts").innerHTML = "";
  $("title").textContent = "";
  const canvas = $("canvas");
  canvas.getContext("2d").clearRect(0, 0, canvas.width, canvas.height);
  canvas.style.display = "none";
  state.drawn += 1;
  document.body.dataset.drawn = state.drawn;
  setStatus("ready", "ready");
}

// --- drawing ---------------------------------------------------------------------------

function draw(view) {
  const ok = view.results.filter((r) => r.ok);
  if (!view.compare && !ok.length) return showError(view.results[0].error);
  $("error").hidden = true;
  $("canvas").style.display = "block";
  if (!ok.length) return showError(view.results.map((r, k) => `${view.configs[k].schedule}: ${r.error}`).join("\n"));
  $("title").textContent = view.compare ? compareTitle(view) : title(ok[0]);
  if (state.view === "timeline") drawTimelines(view);
  else drawInFlight(view);
  $("readouts").innerHTML = view.compare ? compareTable(view) : readoutTable(ok[0]);
}

/// The title line: the tool's (render_title(): the schedule and its parameters, the
/// costs as the library read them, the run the timeline draws), then gamma.
function title(r) {
  return `${r.title}  gamma = ${r.gamma}`;
}

function costsText(r) {
  const c = r.costs;
  const stages = r.stage_scale.length ? `  stage scale ${r.stage_scale.join(",")}` : "";
  const microbatches = r.microbatch_scale.length ? `  micro-batch scale ${r.microbatch_scale.join(",")}` : "";
  return `costs t_f = ${c.f}, t_b = ${c.b}, t_i = ${c.i}, t_w = ${c.w}, t_c = ${c.c}${stages}${microbatches}`;
}

/// Compare mode's title: the shape, the interleaved parameters and DualPipe's pairs as
/// the library ran them, the costs and gamma as it read them.
function compareTitle(view) {
  const ok = view.results.filter((x) => x.ok);
  const r = ok[0];
  const interleaved = ok.find((x) => x.interleaved);
  const params = interleaved ? `  interleaved: variant ${interleaved.interleaved.variant}, g = ${interleaved.interleaved.group}, ` +
    `warmup factor ${interleaved.interleaved.warmup_factor}` : "";
  const paired = ok.find((x) => x.pairs !== "");
  const dual = paired ? `  t_fb = ${r.costs.fb}  pairs ${paired.pairs}` : "";
  const run = r.executed ? `  timelines: runs executed under ${r.executed.model}` : "";
  return `compare  P = ${r.P}  m = ${r.m}  V = ${view.V} (families whose V is free)${params}  ${costsText(r)}${dual}` +
    `  gamma = ${r.gamma}${run}`;
}

/// A canvas sized to the view's width and `height` CSS pixels, sharp on any screen.
function canvasFor(height) {
  const canvas = $("canvas");
  const width = Math.max(300, canvas.parentElement.clientWidth - 2);
  const ratio = window.devicePixelRatio || 1;
  canvas.width = Math.round(width * ratio);
  canvas.height = Math.round(height * ratio);
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  const ctx = canvas.getContext("2d");
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.clearRect(0, 0, width, height);
  ctx.font = FONT;
  return { ctx, width };
}

function hatch(ctx) {
  const tile = document.createElement("canvas");
  tile.width = tile.height = 6;
  const t = tile.getContext("2d");
  t.fillStyle = "#f4f4f4";
  t.fillRect(0, 0, 6, 6);
  t.strokeStyle = "#c8c8c8";
  t.beginPath();
  t.moveTo(0, 6);
  t.lineTo(6, 0);
  t.stroke();
  return ctx.createPattern(tile, "repeat");
}

function drawTimelines(view) {
  const rows = view.results.map((r) => (r.ok ? r.P : 1));
  const rowH = Math.max(12, Math.min(26, Math.floor(420 / rows.reduce((a, b) => a + b, 0))));
  const header = view.compare ? COMPARE_HEADER : 0;
  const height = 10 + rows.reduce((a, n) => a + n * rowH + header + 6, 0) + 36;
  const { ctx, width } = canvasFor(height);
  const left = view.compare ? 130 : 60;
  const end = Math.max(...view.results.filter((r) => r.ok).map((r) => (r.executed && r.executed.completed ? r.executed.makespan_value : r.makespan_value)));
  const scale = (width - left - 16) / (end || 1);
  const pattern = hatch(ctx);
  state.layout = [];
  const y = eachSchedule(ctx, view, left, rowH, (r, top) => {
    drawRanks(ctx, r, { left, top, rowH, scale, pattern });
    state.layout.push({ r, left, top, rowH, scale });
    return r.P * rowH;
  });
  drawAxis(ctx, left, y, scale, end, width);
}

/// Draws each schedule of `view` downwards from y = 10: its name first in compare mode,
/// then `drawOne(r, top)`, which returns the height it used, or the library's message
/// for a schedule the shape does not suit, in one row of `rowH`. Returns the y below.
function eachSchedule(ctx, view, left, rowH, drawOne) {
  let y = 10;
  view.results.forEach((r, k) => {
    if (view.compare) {
      ctx.fillStyle = "#222";
      ctx.fillText(view.configs[k].schedule, 4, y + 11);
      y += COMPARE_HEADER;
    }
    if (!r.ok) {
      ctx.fillStyle = "#8a1f11";
      ctx.fillText(r.error, left, y + rowH / 2 + 4);
      y += rowH + 6;
      return;
    }
    y += drawOne(r, y) + 6;
  });
  return y;
}

/// The label of op k as the SVG view writes it: its micro-batch, `.chunk` when V > 1; an
/// overlapped pair `F4/B0` (F4.1/B0.0).
function opLabel(r, k, pair) {
  const mb = (j) => (r.V > 1 ? `${r.op_microbatch[j]}.${r.op_chunk[j]}` : `${r.op_microbatch[j]}`);
  return pair ? `F${mb(k)}/B${mb(k + 1)}` : mb(k);
}

/// The kind's colour for chunk c of V: later chunks lighter (mixed with white), as the
/// SVG view draws them (svg_fill()).
function fill(kind, chunk, V) {
  const base = COLORS[kind] || "#edc948";
  if (V <= 1 || chunk === 0) return base;
  const mix = (0.5 * chunk) / (V - 1);
  return `#${[1, 3, 5].map((i) => {
    const value = parseInt(base.slice(i, i + 2), 16);
    return Math.floor(value + (255 - value) * mix).toString(16).padStart(2, "0");
  }).join("")}`;
}

/// ticks * tick_num / tick_den in lowest terms: an exact time as the library writes it.
function exactTime(r, ticks) {
  const gcd = (a, b) => (b ? gcd(b, a % b) : Math.abs(a));
  const num = ticks * r.tick_num;
  const g = gcd(num, r.tick_den) || 1;
  return r.tick_den / g === 1 ? `${num / g}` : `${num / g}/${r.tick_den / g}`;
}

/// One row per rank: the bubble hatched, stalls of an executed run in red, each op a box
/// (an overlapped F&B pair one box) labelled where it fits.
function drawRanks(ctx, r, g) {
  const makespan = r.executed && r.executed.completed ? r.executed.makespan_value : r.makespan_value;
  const digit = ctx.measureText("0").width;
  for (let rank = 0; rank < r.P; ++rank) {
    const y = g.top + rank * g.rowH;
    ctx.fillStyle = "#222";
    ctx.fillText(`rank ${rank}`, g.left - 50, y + g.rowH / 2 + 4);
    ctx.fillStyle = g.pattern;
    ctx.fillRect(g.left, y + 1, makespan * g.scale, g.rowH - 2);
    if (r.executed && r.executed.completed) {
      const spans = r.executed.stalls[rank];
      ctx.fillStyle = STALL_COLOR;
      for (let s = 0; s < spans.length; s += 2) ctx.fillRect(g.left + spans[s] * g.scale, y + 1, (spans[s + 1] - spans[s]) * g.scale, g.rowH - 2);
    }
    let lastPixel = -1;  // ops narrower than a pixel: one box per pixel column (large shapes)
    const unit = g.scale * (r.tick_num / r.tick_den);
    for (let k = r.offsets[rank]; k < r.offsets[rank + 1]; ++k) {
      const kind = state.kindNames[r.op_kind[k]];
      const pair = kind === "OVERLAP_F_B" && k + 1 < r.offsets[rank + 1] && state.kindNames[r.op_kind[k + 1]] === "B";
      const x = g.left + r.op_start_ticks[k] * unit;
      const w = (r.op_end_ticks[k] - r.op_start_ticks[k]) * unit;
      const first = k;
      if (pair) ++k;
      if (w < 1 && Math.floor(x) === lastPixel) continue;
      lastPixel = Math.floor(x);
      ctx.fillStyle = pair ? COLORS.OVERLAP_F_B : fill(kind, r.op_chunk[first], r.V);
      ctx.fillRect(x, y + 1, Math.max(w - 0.5, 0.5), g.rowH - 2);
      if (w < 2 * digit || g.rowH < 14) continue;
      let label = opLabel(r, first, pair);
      if (w < label.length * digit + 3) {  // shorter: the chunk shows by its colour
        label = pair ? `F${r.op_microbatch[first]}/B${r.op_microbatch[first + 1]}` : `${r.op_microbatch[first]}`;
      }
      if (w >= label.length * digit + 3) {
        ctx.fillStyle = !pair && r.V > 1 && 2 * r.op_chunk[first] >= r.V ? "#222" : "#fff";  // dark on the lighter chunks
        ctx.textAlign = "center";
        ctx.fillText(label, x + w / 2, y + g.rowH / 2 + 4);
        ctx.textAlign = "left";
      }
    }
  }
}

function drawAxis(ctx, left, y, scale, end, width) {
  ctx.strokeStyle = "#888";
  ctx.fillStyle = "#444";
  ctx.beginPath();
  ctx.moveTo(left, y);
  ctx.lineTo(left + end * scale, y);
  const raw = end / Math.max(2, Math.floor((width - left) / 70));
  const mag = 10 ** Math.floor(Math.log10(raw || 1));
  const step = [1, 2, 5, 10].map((s) => s * mag).find((s) => s >= raw) || raw;
  for (let t = 0; t <= end + 1e-9; t += step) {
    const x = left + t * scale;
    const label = String(+t.toFixed(6));
    ctx.moveTo(x, y);
    ctx.lineTo(x, y + 4);
    ctx.fillText(label, Math.min(x - 4, width - 2 - ctx.measureText(label).width), y + 16);  // the last one stays in view
  }
  ctx.stroke();
  ctx.fillText("time (in the costs' unit)", left, y + 28);
}

/// The op under the pointer, as a tooltip: its PyTorch action string and exact times
/// (`rank 0: 0F3 [3, 4]`), from the lists the library returned.
function hover(event) {
  const canvas = $("canvas");
  const box = canvas.getBoundingClientRect();
  const px = event.clientX - box.left;
  const py = event.clientY - box.top;
  const block = state.view === "timeline" && (state.layout || []).find((b) => py >= b.top && py < b.top + b.r.P * b.rowH);
  canvas.title = "";
  if (!block) return;
  const r = block.r;
  const rank = Math.floor((py - block.top) / block.rowH);
  const ticks = ((px - block.left) / block.scale) * (r.tick_den / r.tick_num);
  let lo = r.offsets[rank];
  let hi = r.offsets[rank + 1];
  while (hi - lo > 1) {  // the last op starting at or before the pointer
    const mid = (lo + hi) >> 1;
    if (r.op_start_ticks[mid] <= ticks) lo = mid;
    else hi = mid;
  }
  if (lo >= r.offsets[rank + 1] || r.op_start_ticks[lo] > ticks || r.op_end_ticks[lo] <= ticks) return;
  if (state.kindNames[r.op_kind[lo]] === "B" && lo > r.offsets[rank] && state.kindNames[r.op_kind[lo - 1]] === "OVERLAP_F_B") lo -= 1;
  const action = (k) => `${r.op_stage[k]}${state.kindNames[r.op_kind[k]]}${r.op_microbatch[k]}`;
  const name = state.kindNames[r.op_kind[lo]] === "OVERLAP_F_B" && lo + 1 < r.offsets[rank + 1]
    ? `(${r.op_stage[lo]}F${r.op_microbatch[lo]};${action(lo + 1)})OVERLAP_F_B` : action(lo);
  canvas.title = `rank ${rank}: ${name} [${exactTime(r, r.op_start_ticks[lo])}, ${exactTime(r, r.op_end_ticks[lo])}]`;
}

/// One bar per rank (per schedule in compare mode): its peak in flight, in chunks with
/// the closed form's value marked where one holds; in compare mode in full activations
/// (chunks x chunk fraction), the unit schedules with different V share.
function drawInFlight(view) {
  state.layout = [];
  const results = view.results;
  const ok = results.filter((r) => r.ok);
  const bars = ok.reduce((n, r) => n + r.P, 0);
  const barH = Math.max(10, Math.min(22, Math.floor(420 / Math.max(bars, 1))));
  const header = view.compare ? COMPARE_HEADER : 0;
  const height = 14 + results.reduce((a, r) => a + (r.ok ? r.P : 1) * barH + header + 6, 0) + 10;
  const { ctx, width } = canvasFor(height);
  const left = view.compare ? 130 : 60;
  const valueOf = (r, rank) => (view.compare ? r.peak_activations_value[rank] : r.peak_in_flight_value[rank]);
  const marks = view.compare ? [] : ok.flatMap((r) => r.peak_in_flight_formula.map((f) => f.value_number || 0));
  const most = Math.max(...ok.flatMap((r) => r.peak_in_flight_value.map((_, rank) => valueOf(r, rank))), ...marks);
  const labels = ok.flatMap((r) => r.peak_in_flight.map((_, rank) => barLabel(r, rank, view.compare)));
  const room = Math.max(...labels.map((label) => ctx.measureText(label).width)) + 12;
  const scale = Math.max(width - left - room, 40) / (most || 1);
  eachSchedule(ctx, view, left, barH, (r, top) => {
    for (let rank = 0; rank < r.P; ++rank) {
      drawBar(ctx, r, rank, { left, y: top + rank * barH, barH, scale, value: valueOf(r, rank), compare: view.compare });
    }
    return r.P * barH;
  });
}

function drawBar(ctx, r, rank, g) {
  const f = r.peak_in_flight_formula[rank];
  ctx.fillStyle = "#222";
  ctx.fillText(`rank ${rank}`, g.left - 50, g.y + g.barH / 2 + 4);
  ctx.fillStyle = "#f28e2b";
  ctx.fillRect(g.left, g.y + 2, g.value * g.scale, g.barH - 4);
  if (f.holds && !g.compare) {
    ctx.strokeStyle = "#222";
    ctx.setLineDash([3, 2]);
    ctx.beginPath();
    ctx.moveTo(g.left + f.value_number * g.scale, g.y);
    ctx.lineTo(g.left + f.value_number * g.scale, g.y + g.barH);
    ctx.stroke();
    ctx.setLineDash([]);
  }
  ctx.fillStyle = "#222";
  ctx.fillText(barLabel(r, rank, g.compare), g.left + g.value * g.scale + 6, g.y + g.barH / 2 + 4);
}

/// The bar's value and its formula: `11 chunks  (formula TEXT = 11)`, `... (no closed
/// form)`; in compare mode `3 full activations (6 chunks)`.
function barLabel(r, rank, compare) {
  if (compare) return `${r.peak_activations[rank]} full activations (${r.peak_in_flight[rank]} chunks)`;
  const f = r.peak_in_flight_formula[rank];
  return `${r.peak_in_flight[rank]} chunks  (${f.holds ? `formula ${f.formula} = ${f.value}` : "no closed form"})`;
}

// --- readouts --------------------------------------------------------------------------

const escapeHtml = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]));


/// The closed form beside a simulated value: `formula TEXT = VALUE (source; condition)`,
/// or `no closed form: WHY`.
function formulaCell(f, id) {
  if (!f.holds) return `<td class="none" id="${id}">no closed form${f.condition ? `: ${escapeHtml(f.condition)}` : ""}</td>`;
  return `<td class="formula" id="${id}">formula <span class="exact">${escapeHtml(f.formula)}</span> = ` +
    `<span class="exact">${escapeHtml(f.value)}</span> <small>(${escapeHtml(f.source)}${f.condition ? `; ${escapeHtml(f.condition)}` : ""})</small></td>`;
}

function readoutTable(r) {
  const rows = [
    ["makespan", "makespan", r.makespan, "", r.makespan_formula],
    ["bubble fraction (simulated)", "bubble", r.bubble_fraction, r.bubble_fraction_percent, r.bubble_fraction_formula],
    ["span bubble (largest span - busy)", "span-bubble", r.span_bubble, "", r.span_bubble_formula],
    ["messages", "messages", String(r.messages), "", r.messages_formula],
  ];
  let html = "<table><tr><th>readout</th><th>simulated</th><th></th><th>closed form</th></tr>";
  for (const [name, id, value, extra, f] of rows) {
    html += `<tr><td>${name}</td><td class="exact" id="${id}">${escapeHtml(value)}</td><td>${extra}</td>${formulaCell(f, `${id}-formula`)}</tr>`;
  }
  html += `<tr><td>idle per rank</td><td class="exact" id="idle" colspan="3">${r.idle.join(" ")}</td></tr>`;
  html += certificateRow(r.certificate);
  if (r.executed) html += executedRow(r.executed);
  html += "</table>";
  return html + peakTable(r);
}

/// The formula for every m (the periodic certificate, `ctpipe formula`): `for every m >=
/// m0: makespan = base[(m - m0) mod c] + floor((m - m0) / c) x increment` (`base +
/// increment x (m - m0)` for a cycle of 1; for interleaved 1F1B's class of m modulo its
/// group g, `m = r (mod g)` and the index ((m - m0) mod c) / g), and which
/// closed forms hold for every m; or why there is none.
function certificateRow(c) {
  if (!c) return "";
  if (!c.available) return `<tr><td>for every m</td><td colspan="3" class="none" id="certificate">no certificate: ${escapeHtml(c.reason)}</td></tr>`;
  const range = (r) => (!r.correct ? "disagrees (a bug)" : r.from === null ? "no" : r.from === 1 ? "every m" : `m &ge; ${r.from}`);
  const forms = ` <small>closed forms hold for: makespan ${range(c.closed_forms.makespan)}, ` +
    `bubble ${range(c.closed_forms.bubble_fraction)}, peaks ${range(c.closed_forms.peak_in_flight)}</small>`;
  const per = c.m_step === 1 ? "" : ` / ${c.m_step}`;
  const makespan = c.cycle === c.m_step ? `${c.base[0]} + ${escapeHtml(c.increment)} &middot; (m &minus; ${c.m0})${per}`
    : `[${c.base.join(", ")}][${c.m_step === 1 ? `(m &minus; ${c.m0}) mod ${c.cycle}` : `((m &minus; ${c.m0}) mod ${c.cycle})${per}`}] + ${escapeHtml(c.increment)} &middot; &lfloor;(m &minus; ${c.m0}) / ${c.cycle}&rfloor;`;
  const every = c.m_step === 1 ? `for every m &ge; ${c.m0}` : `for every m &ge; ${c.m0}, m &equiv; ${c.m_residue} (mod ${c.m_step})`;
  return `<tr><td>${every}</td><td class="exact" id="certificate" colspan="3">makespan = ${makespan}${forms}</td></tr>`;
}

function executedRow(e) {
  if (!e.completed) return `<tr><td>executed, ${e.model}</td><td colspan="3" id="executed">hangs: ${escapeHtml(e.hang)}</td></tr>`;
  return `<tr><td>executed, ${e.model}</td><td class="exact" id="executed">makespan ${e.makespan}</td><td>bubble ${e.bubble} (${e.bubble_percent})</td>` +
    `<td>stall per rank <span class="exact">${e.stall.join(" ")}</span></td></tr>`;
}

/// Per rank the peak in flight; with gamma < 1 it is gamma-weighted (I frees 1 - gamma,
/// W gamma) and the plain count follows in brackets, as the tool's `6 [7]`.
function peakTable(r) {
  const weighted = r.gamma !== "1";
  const head = weighted ? `peak in flight (chunks, gamma = ${r.gamma}) [plain count]` : "peak in flight (chunks)";
  let html = `<table id="peaks"><tr><th>rank</th><th>${head}</th><th>full activations</th><th>closed form (chunks)</th></tr>`;
  for (let rank = 0; rank < r.P; ++rank) {
    const plain = weighted ? ` <span class="plain">[${r.peak_in_flight_plain[rank]}]</span>` : "";
    html += `<tr><td>${rank}</td><td class="exact"><span id="peak-${rank}">${r.peak_in_flight[rank]}</span>${plain}</td>` +
      `<td class="exact">${r.peak_activations[rank]}</td>${formulaCell(r.peak_in_flight_formula[rank], `peak-formula-${rank}`)}</tr>`;
  }
  return `${html}</table>`;
}

/// One row per schedule, as `ctpipe compare`'s table: makespan, bubble and its formula,
/// peaks per rank in chunks and rank 0's in full activations, messages; with a runtime
/// model, the executed run's makespan and bubble.
function compareTable(view) {
  const model = view.runtime;
  const run = model ? `<th>executed, ${escapeHtml(model)}: makespan, bubble</th>` : "";
  let html = "<table id=\"compare-table\"><tr><th>schedule</th><th>makespan</th><th>bubble fraction</th><th>closed form</th>" +
    `<th>peak in flight per rank (chunks)</th><th>peak rank 0 (full activations)</th><th>messages</th>${run}</tr>`;
  view.results.forEach((r, k) => {
    const name = escapeHtml(view.configs[k].schedule);
    if (!r.ok) {
      html += `<tr><td>${name}</td><td colspan="${model ? 7 : 6}" class="none">${escapeHtml(r.error)}</td></tr>`;
      return;
    }
    const e = r.executed;
    const executed = !e ? "" : e.completed ? `<td class="exact">${e.makespan}, ${e.bubble} (${e.bubble_percent})</td>`
      : `<td>hangs: ${escapeHtml(e.hang)}</td>`;
    html += `<tr><td>${name}${r.V > 1 ? ` (V = ${r.V})` : ""}</td><td class="exact">${r.makespan}</td>` +
      `<td class="exact">${r.bubble_fraction} (${r.bubble_fraction_percent})</td>${formulaCell(r.bubble_fraction_formula, `bubble-formula-${name}`)}` +
      `<td class="exact">${r.peak_in_flight.join(" ")}</td><td class="exact">${r.peak_activations[0]}</td>` +
      `<td class="exact">${r.messages}</td>${executed}</tr>`;
  });
  return `${html}</table>`;
}
