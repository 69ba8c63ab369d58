// bench/web_redraw.mjs: how long the page (web/site/) takes to redraw after a slider
// moves, measured in headless Chromium (Debian's chromium, software rendering, no GPU).
//
//   cmake --workflow --preset web          # builds build/web/site and installs puppeteer-core
//   node bench/web_redraw.mjs [build/web] [moves]
//
// For each shape it opens the page, then moves the V slider back and forth `moves` times
// (default 60, the first 10 not kept) the way a drag does: the slider's value changes and its `input` event
// fires. The page times each change itself (window.ctpipePage.timings): from the input
// event to the end of the redraw (the worker's run of the library, the transfer of its
// arrays, the canvas and the readouts), and the library's share alone. Printed: median,
// 95th percentile and largest, in ms, over the moves that land on the shape named.
// A benchmark, not a test: nothing here passes or fails.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const build = resolve(process.argv[2] || "build/web");
const moves = Number(process.argv[3] || 60);
const warmup = 10;  // the first moves of each shape are not kept (the JIT warms up)
const puppeteer = createRequire(join(build, "npm", "package.json"))("puppeteer-core");

const shapes = [
  { name: "interleaved-1f1b P = 8, m = 32, V = 4", hash: "s=interleaved-1f1b&P=8&m=32&V=4", V: [4, 3] },
  { name: "interleaved-1f1b P = 16, m = 64, V = 4", hash: "s=interleaved-1f1b&P=16&m=64&V=4", V: [4, 3] },
  { name: "zbv P = 8, m = 32 (V fixed at 2; m moved 32/24)", hash: "s=zbv&P=8&m=32&V=2", m: [32, 24] },
  { name: "compare, 6 families, P = 8, m = 32, V = 4", hash: "s=1f1b&P=8&m=32&V=4&compare=gpipe,1f1b,interleaved-1f1b,zb-h1,zb-h2,zbv", V: [4, 3] },
];

function quantile(sorted, q) { return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]; }

async function measure(page, url, shape) {
  await page.goto(`${url}#${shape.hash}`);
  await page.waitForFunction(() => document.body.dataset.state === "ready" && Number(document.body.dataset.drawn) > 0);
  const [id, values] = shape.V ? ["V", shape.V] : ["m", shape.m];
  const kept = [];
  for (let k = 0; k < moves; ++k) {
    const value = values[(k + 1) % 2];
    const before = await page.evaluate(() => window.ctpipePage.timings.length);
    await page.evaluate((slider, v) => {
      const input = document.getElementById(slider);
      input.value = v;
      input.dispatchEvent(new Event("input", { bubbles: true }));
    }, id, value);
    await page.waitForFunction((n) => window.ctpipePage.timings.length > n && !window.ctpipePage.busy, {}, before);
    const t = await page.evaluate(() => window.ctpipePage.timings.at(-1));
    if (value === values[0] && k >= warmup) kept.push(t);
  }
  const all = kept.map((t) => t.ms).sort((a, b) => a - b);
  const lib = kept.map((t) => t.libraryMs).sort((a, b) => a - b);
  return { ops: kept[0].ops, median: quantile(all, 0.5), p95: quantile(all, 0.95), max: all.at(-1), library: quantile(lib, 0.5) };
}

const server = spawn("python3", ["-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", join(build, "site")],
  { stdio: ["ignore", "pipe", "ignore"] });
const port = await new Promise((ok) => server.stdout.on("data", (d) => { const m = /port (\d+)/.exec(String(d)); if (m) ok(m[1]); }));
const profile = mkdtempSync(join(tmpdir(), "ctpipe-bench-"));
const browser = await puppeteer.launch({
  executablePath: "/usr/bin/chromium", headless: true, userDataDir: profile,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
});
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 800, deviceScaleFactor: 1 });
  console.log(`| shape | ops drawn | redraw median (ms) | 95th percentile | largest | library alone, median |`);
  console.log(`|---|---|---|---|---|---|`);
  for (const shape of shapes) {
    const r = await measure(page, `http://127.0.0.1:${port}/`, shape);
    console.log(`| ${shape.name} | ${r.ops} | ${r.median.toFixed(1)} | ${r.p95.toFixed(1)} | ${r.max.toFixed(1)} | ${r.library.toFixed(1)} |`);
  }
} finally {
  await browser.close();
  server.kill();
  rmSync(profile, { recursive: true, force: true });
}
