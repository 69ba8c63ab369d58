// tests/web/page_test.mjs (CTest web.page, label integration, preset web): the page of
// web/site/, built by emscripten, driven in Debian's headless Chromium through
// puppeteer-core as a person would use it: keys on the sliders, clicks on the tabs,
// typing into the cost fields. Expected values are docs/spec.md §5's table (1F1B and
// interleaved 1F1B at P = 4, m = 8, and at P = 8, m = 16) and the library's own messages.
//
// Arguments: --site DIR (the built page) --modules DIR (where npm ci put puppeteer-core)
// --chromium PATH --compare PATH (ImageMagick) --python PATH --reference PNG --out DIR.
// The screenshot of the default view is saved to OUT/default.png and compared with the
// kept REFERENCE: at most 1% of its pixels may differ by more than 20% (fonts and
// anti-aliasing differ a little between machines; a changed layout or colour does not
// pass). CTPIPE_UPDATE_REFERENCE=1 writes the reference instead (then look at it).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values: arg } = parseArgs({
  options: Object.fromEntries(["site", "modules", "chromium", "compare", "python", "reference", "out"].map((k) => [k, { type: "string" }])),
});
const puppeteer = createRequire(join(arg.modules, "package.json"))("puppeteer-core");

/// python3 -m http.server on a free loopback port, serving the built page.
async function serve(dir) {
  const server = spawn(arg.python, ["-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", dir],
    { stdio: ["ignore", "pipe", "ignore"] });
  const port = await new Promise((resolve, reject) => {
    server.stdout.on("data", (d) => { const m = /port (\d+)/.exec(String(d)); if (m) resolve(m[1]); });
    server.on("exit", () => reject(new Error("http.server exited")));
  });
  return { server, url: `http://127.0.0.1:${port}/` };
}

/// Waits until the page has drawn past `drawnBefore` and nothing is pending.
async function settled(page, drawnBefore) {
  await page.waitForFunction((before) => Number(document.body.dataset.drawn || 0) > before &&
    document.body.dataset.state === "ready" && !window.ctpipePage.busy && !window.ctpipePage.pending,
  { timeout: 20000 }, drawnBefore);
}

const drawnCount = (page) => page.evaluate(() => Number(document.body.dataset.drawn || 0));
const text = (page, selector) => page.$eval(selector, (e) => e.textContent.trim());

/// Does `act` and waits for the redraw it causes.
async function andRedraw(page, act) {
  const before = await drawnCount(page);
  await act();
  await settled(page, before);
}

/// Replaces the text of input `selector` by typing, as a person would.
async function typeInto(page, selector, value) {
  await andRedraw(page, async () => {
    await page.click(selector, { clickCount: 3 });
    await page.keyboard.type(value);
  });
}

test("the page, in headless Chromium", async (t) => {
  const { server, url } = await serve(arg.site);
  const profile = mkdtempSync(join(tmpdir(), "ctpipe-chromium-"));
  const browser = await puppeteer.launch({
    executablePath: arg.chromium, headless: true, userDataDir: profile,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--font-render-hinting=none"],
  });
  const errors = [];
  try {
    const page = await browser.newPage();
    page.on("pageerror", (e) => errors.push(e.message));
    await page.setViewport({ width: 1280, height: 800, deviceScaleFactor: 1 });
    await page.goto(url);
    await settled(page, 0);
    mkdirSync(arg.out, { recursive: true });

    await t.test("loads the article's default: 1F1B, P = 4, m = 8, bubble 3/11", async () => {
      assert.equal(await text(page, "#bubble"), "3/11");
      assert.match(await text(page, "#bubble-formula"), /^formula \(P-1\)\/\(m\+P-1\) = 3\/11/);
      assert.equal(await text(page, "#makespan"), "33");
      assert.equal(await page.evaluate(() => location.hash), "#s=1f1b&P=4&m=8&V=1");
    });

    await t.test("pointing at a box names its op and its exact times", async () => {
      // Rank 3's B0 of 1F1B P = 4, m = 8 runs over [4, 6]: the middle of the box.
      const where = await page.evaluate(() => {
        const b = window.ctpipePage.layout[0];
        const box = document.getElementById("canvas").getBoundingClientRect();
        return { x: box.left + b.left + 5 * b.scale, y: box.top + b.top + 3.5 * b.rowH };
      });
      await page.mouse.move(where.x, where.y);
      assert.equal(await page.$eval("#canvas", (e) => e.title), "rank 3: 3B0 [4, 6]");
    });

    await t.test("the screenshot of the default view matches the kept one", async () => {
      const shot = join(arg.out, "default.png");
      await page.screenshot({ path: shot });
      if (process.env.CTPIPE_UPDATE_REFERENCE === "1") {
        copyFileSync(shot, arg.reference);
        return;
      }
      const diff = spawnSync(arg.compare, ["-metric", "AE", "-fuzz", "20%", arg.reference, shot, join(arg.out, "diff.png")],
        { encoding: "utf8" });
      const differing = Number.parseFloat(diff.stderr);
      assert.ok(Number.isFinite(differing), `compare printed: ${diff.stderr}`);
      assert.ok(differing <= 0.01 * 1280 * 800, `${differing} pixels differ from ${arg.reference} (see ${arg.out}/diff.png)`);
    });

    await t.test("interleaved 1F1B: V moved from 1 to 2 takes the bubble from 3/11 to 3/19", async () => {
      await andRedraw(page, () => page.select("#schedule", "interleaved-1f1b"));
      await page.focus("#V");
      await andRedraw(page, () => page.keyboard.press("Home"));  // V = 1: plain 1F1B
      assert.equal(await page.$eval("#V-num", (e) => e.value), "1");
      assert.equal(await text(page, "#bubble"), "3/11");
      await andRedraw(page, () => page.keyboard.press("ArrowRight"));  // V = 2
      assert.equal(await page.$eval("#V-num", (e) => e.value), "2");
      assert.equal(await text(page, "#bubble"), "3/19");
      assert.equal(await text(page, "#makespan"), "57/2");
      assert.match(await text(page, "#bubble-formula"), /= 3\/19/);
      assert.equal(await page.evaluate(() => location.hash), "#s=interleaved-1f1b&P=4&m=8&V=2");
    });

    await t.test("the in-flight view: rank 0 holds 11 chunks, as its closed form says", async () => {
      await page.click("#tab-inflight");
      assert.equal(await page.$eval("#tab-inflight", (e) => e.getAttribute("aria-selected")), "true");
      assert.equal(await text(page, "#peak-0"), "11");
      assert.equal(await text(page, "#peak-3"), "5");
      assert.match(await text(page, "#peak-formula-0"), /= 11/);
      assert.match(await page.evaluate(() => location.hash), /view=inflight/);
      await page.screenshot({ path: join(arg.out, "in-flight.png") });
      await page.click("#tab-timeline");
    });

    await t.test("a configuration the library rejects shows its message instead of a picture", async () => {
      await typeInto(page, "#f", "0");
      assert.equal(await text(page, "#error"), "ctpipe: t_f (forward cost) must be > 0");
      assert.equal(await page.$eval("#canvas", (e) => e.style.display), "none");
      await typeInto(page, "#f", "1");
      assert.equal(await page.$eval("#error", (e) => e.hidden), true);
      await typeInto(page, "#P-num", "0");
      assert.equal(await text(page, "#error"), "ctpipe: P (pipeline ranks) must be >= 1");
      await typeInto(page, "#P-num", "4");
      assert.equal(await text(page, "#bubble"), "3/19");
    });

    await t.test("values from a link that the page or the library rejects give messages, not a stale picture", async () => {
      const cases = [
        ["#s=bogus", /^ctpipe: unknown schedule 'bogus' \(known: gpipe, 1f1b, /],
        ["#s=1f1b&pairs=bogus", /^ctpipe: --pair-model takes fused or split, not 'bogus'$/],
        ["#s=interleaved-1f1b&V=0", /^ctpipe: V \(model chunks per rank\) must be >= 1$/],
        ["#s=1f1b&P=abc", /^ctpipe: -P takes a whole number, not 'abc'$/],
        ["#s=1f1b&f=x", /^ctpipe: --costs f: not an exact number \(use 3, 1\/2 or 0.25\)$/],
        ["#s=interleaved-1f1b&P=512&m=1024&V=4", /^ctpipe: 4194304 ops are too many for the page \(at most 2097152\)$/],
        ["#s=interleaved-1f1b&variant=bogus", /^ctpipe: --variant takes megatron, megatron-legacy or torch, not 'bogus'$/],
        ["#s=1f1b&P=4&m=8&c=1/2&runtime=nope", /^ctpipe: --runtime takes blocking, rendezvous, posted, batched, stream-rank, stream-peer, stream-direction or stream-edge, not 'nope'$/],
        ["#s=1f1b&compare=bogus", /^bogus: ctpipe: unknown schedule 'bogus' \(known: gpipe, /],
      ];
      for (const [hash, message] of cases) {
        await page.goto(`${url}${hash}`);
        await settled(page, 0);
        assert.match(await text(page, "#error"), message, hash);
        assert.equal(await page.$eval("#canvas", (e) => e.style.display), "none", hash);
      }
    });

    await t.test("the formula for every m: 1F1B with latency repeats every 4 micro-batches from m = 7", async () => {
      await page.goto(`${url}#s=1f1b&P=4&m=8&c=1/2`);
      await settled(page, 0);
      assert.match(await text(page, "#certificate"), /^makespan = \[37, 41, 45, 48\]\[\(m − 7\) mod 4\] \+ 15 · ⌊\(m − 7\) \/ 4⌋/);
      assert.match(await text(page, "#certificate"), /makespan no, bubble no, peaks every m$/);
      await page.goto(`${url}#s=zb-h1&P=4&m=8`);
      await settled(page, 0);
      // 3m + 3, the closed form m(t_f+t_i+t_w) + (P-1)(t_f+t_i-t_w)
      assert.match(await text(page, "#certificate"), /^makespan = 24 \+ 3 · \(m − 7\)/);
      assert.match(await text(page, "#certificate"), /makespan m ≥ 4, bubble m ≥ 4, peaks m ≥ 4$/);
      // GPipe: a phased program (its forwards, then its backwards), 12 + 3(m - 1).
      await page.goto(`${url}#s=gpipe&P=4&m=8`);
      await settled(page, 0);
      assert.match(await text(page, "#certificate"), /^makespan = 12 \+ 3 · \(m − 1\)/);
      assert.match(await text(page, "#certificate"), /makespan every m, bubble every m, peaks every m$/);
      await page.goto(`${url}#s=v-half&P=4&m=8`);
      await settled(page, 0);
      assert.match(await text(page, "#certificate"), /^no certificate: its warm-up and cool-down are moved op by op/);
      // Interleaved 1F1B: the class of the chosen m modulo its group (as ctpipe formula -m 9).
      await page.goto(`${url}#s=interleaved-1f1b&P=4&m=9&V=2&g=5&c=1/2`);
      await settled(page, 0);
      assert.match(await text(page, "#certificate"), /^makespan = 98 \+ 15 · \(m − 29\) \/ 5/);
      assert.equal(await page.$eval("#certificate", (e) => e.previousElementSibling.textContent),
                   "for every m ≥ 29, m ≡ 4 (mod 5)");
    });

    await t.test("the percentages are the tool's: 1/16 prints as 6.2% (an exact tie rounds to even)", async () => {
      await page.goto(`${url}#s=dualpipev&P=2&m=4&fb=5/2`);
      await settled(page, 0);
      assert.equal(await text(page, "#bubble"), "1/16");
      assert.equal(await page.$eval("#bubble", (e) => e.nextElementSibling.textContent), "6.2%");
    });

    await t.test("combined-1f1b takes the group and the pair model: P = 4, m = 10, g = 5, split", async () => {
      await page.goto(`${url}#s=combined-1f1b&P=4&m=10&V=2&g=5&pairs=split`);
      await settled(page, 0);
      assert.equal(await page.$eval("#schedule", (e) => e.value), "combined-1f1b");
      assert.equal(await page.$eval("#group", (e) => e.disabled), false);
      assert.equal(await page.$eval("#pairs", (e) => e.disabled), false);
      assert.equal(await page.$eval("#warmup", (e) => e.disabled), true);
      assert.equal(await text(page, "#makespan"), "69/2");
      assert.equal(await text(page, "#peak-0"), "13");
      await typeInto(page, "#group", "10");
      assert.equal(await text(page, "#makespan"), "69/2");  // the article's costs: interleaved's, for any group
      await typeInto(page, "#m-num", "6");
      assert.match(await text(page, "#error"), /^ctpipe: combined-1f1b needs the group size in \[P, m\]/);
    });

    await t.test("unequal stages: 1F1B with the last stage 5/4 slower takes 39 (docs/spec.md §2.2)", async () => {
      await page.goto(`${url}#s=1f1b&P=4&m=8&stage_scale=1,1,1,5/4`);
      await settled(page, 0);
      assert.equal(await text(page, "#makespan"), "39");
      assert.match(await text(page, "#makespan-formula"), /= 39/);
      assert.equal(await page.evaluate(() => location.hash), "#s=1f1b&P=4&m=8&V=1&stage_scale=1,1,1,5/4");
      await typeInto(page, "#stage_scale", "1,2");
      assert.equal(await text(page, "#error"), "ctpipe: --stage-scale needs one factor per stage, 4 of them (P*V); 2 given");
      await typeInto(page, "#stage_scale", "1,1,x,1");
      assert.equal(await text(page, "#error"), "ctpipe: --stage-scale: not an exact number (use 3, 1/2 or 0.25)");
    });

    await t.test("the URL holds the configuration: a shared link opens the same view", async () => {
      await page.goto(`${url}#s=interleaved-1f1b&P=8&m=16&V=2`);
      await settled(page, 0);
      assert.equal(await page.$eval("#schedule", (e) => e.value), "interleaved-1f1b");
      assert.equal(await page.$eval("#P-num", (e) => e.value), "8");
      assert.equal(await text(page, "#bubble"), "7/39");
      assert.equal(await text(page, "#makespan"), "117/2");
      assert.equal(await text(page, "#peak-0"), "23");
    });

    await t.test("compare mode puts the schedules on one time axis with their readouts", async () => {
      await page.goto(`${url}#s=1f1b&P=4&m=8&V=1`);
      await settled(page, 0);
      await andRedraw(page, () => page.click("#compare"));
      const rows = await page.$$eval("#compare-table tr", (trs) => trs.slice(1).map((tr) => [...tr.cells].map((c) => c.textContent.trim())));
      assert.deepEqual(rows.map((r) => r[0]), ["gpipe", "1f1b", "interleaved-1f1b (V = 2)", "zb-h1", "zb-h2", "zbv (V = 2)"]);
      assert.equal(rows[1][1], "33");
      assert.match(rows[1][2], /^3\/11 /);
      assert.match(rows[2][2], /^3\/19 /);
      assert.match(await page.evaluate(() => location.hash), /compare=gpipe,1f1b,interleaved-1f1b,zb-h1,zb-h2,zbv/);
      await andRedraw(page, () => page.select("#runtime", "blocking"));  // the executed runs join the table
      const executed = await page.$$eval("#compare-table tr", (trs) => trs.slice(1).map((tr) => tr.cells[7].textContent.trim()));
      assert.equal(executed[1], "33, 3/11 (27.3%)");
      await andRedraw(page, () => page.select("#runtime", ""));
      await andRedraw(page, () => page.click("#compare"));
    });

    await t.test("the timeline of an executed run: every runtime model at t_c = 0 takes the simulated 33", async () => {
      for (const model of ["blocking", "rendezvous", "posted", "batched", "stream-rank", "stream-peer", "stream-direction",
                           "stream-edge"]) {
        await andRedraw(page, () => page.select("#runtime", model));
        assert.equal(await text(page, "#executed"), "makespan 33", model);
      }
      await andRedraw(page, () => page.select("#runtime", ""));
    });

    await t.test("a large shape keeps the tab responsive and says that it is working", async () => {
      // P = 256, m = 1024, V = 4: 2,097,152 ops, lowered and executed under posted, about
      // a second of the library's time in the worker. While it runs, the page answers and
      // its status says so; then it draws.
      const before = await drawnCount(page);
      await page.evaluate(() => { location.hash = "#s=interleaved-1f1b&P=256&m=1024&V=4&runtime=posted"; });
      await page.waitForFunction(() => document.body.dataset.state === "working", { timeout: 20000 });
      assert.equal(await text(page, "#status"), "computing…");  // answered by the page while the library runs
      await settled(page, before);
      assert.equal(await page.evaluate(() => window.ctpipePage.last.results[0].op_start_ticks.length), 2097152);
      assert.equal(await page.$eval("#error", (e) => e.hidden), true);
    });

    await t.test("the page timed its redraws and raised no script error", async () => {
      const timings = await page.evaluate(() => window.ctpipePage.timings.length);
      assert.ok(timings > 5);
      assert.deepEqual(errors, []);
    });
  } finally {
    await browser.close();
    server.kill();
    rmSync(profile, { recursive: true, force: true });
  }
});
