// End-to-end test of `mabd view` in headless Chromium (Debian's /usr/bin/chromium, driven by
// playwright-core, software WebGL through SwiftShader).
//
// Test mode (what ctest runs):
//   node tests/browser/viewer_e2e.mjs [--mabd build/mabd] [--node-modules build/viewer/node_modules]
//        [--chromium /usr/bin/chromium] [--work-dir DIR]
// runs a small chain scene with `mabd run --out x.glb --stats x.jsonl`, writes pages with and
// without stats with `mabd view`, opens them from file:// and checks: no console or page
// errors, no network requests, a non-blank WebGL canvas showing the model, playback changes
// the frame, the scrubber and speed selector work, the charts are there (with a time cursor
// that follows playback) only when stats are given; a stats file with extreme values (residuals
// of 1e-30, 0 and 5e-324, energies of 1e300) still gives five drawn charts without errors; the
// URL's t= sets the start time and follow= keeps a body at the centre of the view.
//
// Screenshot mode:
//   node tests/browser/viewer_e2e.mjs --screenshot OUT.png --page PAGE.html [--at SECONDS]
//        [--width 1600 --height 900]
// opens PAGE.html, moves the animation to SECONDS (default: half the duration) and saves a
// PNG of the whole page.
//
// Exit codes: 0 passed, 1 failed, 77 skipped (no Chromium), as ctest's SKIP_RETURN_CODE.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import zlib from 'node:zlib';

const SKIP = 77;

// A small scene whose bodies are large enough on screen to be counted reliably: 12 chunky
// ball-jointed links with a heavy ball at the end, released horizontal, 1.5 s.
const TEST_SCENE = {
  description: 'Browser test: 12 links and a heavy ball, released horizontal.',
  settings: { dt: 0.01, newton_iterations: 1, steps: 150 },
  materials: { link: { density: 1000, youngs_modulus: 1e8, poisson_ratio: 0.3 } },
  bodies: [],
  generators: [{
    type: 'chain', name: 'chain', links: 12, spacing: 0.2,
    link: { shape: { type: 'box', size: [0.2, 0.06, 0.06] }, material: 'link' },
    end_mass: { shape: { type: 'sphere', radius: 0.12 }, material: 'link', mass: 10 },
    start: [0, 0, 0], direction: [1, 0, 0],
  }],
};
const sourceDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

function parseArgs(argv) {
  const args = {
    mabd: path.join(sourceDir, 'build', 'mabd'),
    nodeModules: path.join(sourceDir, 'build', 'viewer', 'node_modules'),
    chromium: '/usr/bin/chromium',
    workDir: '',
    screenshot: '',
    page: '',
    at: NaN,
    width: 1600,
    height: 900,
  };
  const names = {
    '--mabd': 'mabd', '--node-modules': 'nodeModules', '--chromium': 'chromium',
    '--work-dir': 'workDir', '--screenshot': 'screenshot', '--page': 'page', '--at': 'at',
    '--width': 'width', '--height': 'height',
  };
  for (let i = 0; i < argv.length; ++i) {
    const key = names[argv[i]];
    if (!key || i + 1 >= argv.length) throw new Error(`unknown or incomplete option '${argv[i]}'`);
    const value = argv[++i];
    args[key] = typeof args[key] === 'number' ? Number(value) : value;
  }
  return args;
}

// ---- PNG decoding (8-bit RGB/RGBA, non-interlaced: what Chromium's screenshots are) ------

function decodePng(buffer) {
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  if (!buffer.subarray(0, 8).equals(signature)) throw new Error('not a PNG');
  let offset = 8;
  let width = 0, height = 0, colorType = 0;
  const idat = [];
  while (offset < buffer.length) {
    const length = buffer.readUInt32BE(offset);
    const type = buffer.toString('ascii', offset + 4, offset + 8);
    const data = buffer.subarray(offset + 8, offset + 8 + length);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      const bitDepth = data[8];
      colorType = data[9];
      if (bitDepth !== 8 || (colorType !== 2 && colorType !== 6) || data[12] !== 0) {
        throw new Error(`unsupported PNG (bit depth ${bitDepth}, colour type ${colorType})`);
      }
    } else if (type === 'IDAT') {
      idat.push(data);
    } else if (type === 'IEND') {
      break;
    }
    offset += 12 + length;
  }
  const channels = colorType === 6 ? 4 : 3;
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const out = Buffer.alloc(width * height * 4);
  const previous = Buffer.alloc(stride);
  const line = Buffer.alloc(stride);
  for (let y = 0; y < height; ++y) {
    const filter = raw[y * (stride + 1)];
    const src = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; ++x) {
      const a = x >= channels ? line[x - channels] : 0;
      const b = previous[x];
      const c = x >= channels ? previous[x - channels] : 0;
      let v = src[x];
      if (filter === 1) v += a;
      else if (filter === 2) v += b;
      else if (filter === 3) v += (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      line[x] = v & 0xff;
    }
    for (let x = 0; x < width; ++x) {
      for (let k = 0; k < 3; ++k) out[(y * width + x) * 4 + k] = line[x * channels + k];
      out[(y * width + x) * 4 + 3] = channels === 4 ? line[x * channels + 3] : 255;
    }
    line.copy(previous);
  }
  return { width, height, data: out };
}

// Pixels far from the page background, and "model" pixels (the orange of dynamic bodies).
function countPixels(image) {
  const bg = [0xee, 0xf1, 0xf5];
  let nonBackground = 0, model = 0;
  for (let i = 0; i < image.data.length; i += 4) {
    const r = image.data[i], g = image.data[i + 1], b = image.data[i + 2];
    if (Math.abs(r - bg[0]) + Math.abs(g - bg[1]) + Math.abs(b - bg[2]) > 30) ++nonBackground;
    if (r > g + 30 && r > b + 60) ++model;
  }
  return { nonBackground, model, total: image.width * image.height };
}

function countChanged(a, b) {
  if (a.width !== b.width || a.height !== b.height) return a.width * a.height;
  let changed = 0;
  for (let i = 0; i < a.data.length; i += 4) {
    const d = Math.abs(a.data[i] - b.data[i]) + Math.abs(a.data[i + 1] - b.data[i + 1]) +
              Math.abs(a.data[i + 2] - b.data[i + 2]);
    if (d > 30) ++changed;
  }
  return changed;
}

// ---- browser ------------------------------------------------------------------------------

function loadPlaywright(nodeModules) {
  const require = createRequire(path.join(path.resolve(nodeModules), 'noop.js'));
  try {
    return require('playwright-core');
  } catch (e) {
    throw new Error(`playwright-core not found under ${nodeModules} (build the viewer bundle ` +
                    `first: cmake --build BUILD --target mabd_cli): ${e.message}`);
  }
}

async function launch(args) {
  const { chromium } = loadPlaywright(args.nodeModules);
  return chromium.launch({
    executablePath: args.chromium,
    headless: true,
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
      '--use-angle=swiftshader', '--enable-unsafe-swiftshader',
    ],
  });
}

// Opens a page and records what a person would not want to see: console errors, page
// errors, requests to anything but the page itself.
async function openPage(browser, file, viewport, urlSuffix = '') {
  const page = await browser.newPage({ viewport, deviceScaleFactor: 1 });
  const problems = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console error: ${msg.text()}`);
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('request', (req) => {
    const url = req.url();
    if (!url.startsWith('file:') && !url.startsWith('data:') && !url.startsWith('blob:')) {
      problems.push(`network request: ${url}`);
    }
  });
  await page.goto(pathToFileURL(file).href + urlSuffix);
  await page.waitForFunction(() => !!document.body.dataset.ready, null, { timeout: 120000 });
  const ready = await page.evaluate(() => document.body.dataset.ready);
  if (ready !== 'true') {
    throw new Error(`${file}: the viewer did not start: ${problems.join('; ') || ready}`);
  }
  return { page, problems };
}

// Screenshot of the 3D view without the overlays (title box and playback bar).
async function viewPixels(page) {
  const canvas = await page.locator('#view canvas').boundingBox();
  const title = await page.locator('#title').boundingBox();
  const bar = await page.locator('#controls').boundingBox();
  const top = Math.ceil(title.y + title.height + 4);
  const clip = { x: canvas.x, y: top, width: canvas.width, height: Math.floor(bar.y - 4 - top) };
  return decodePng(await page.screenshot({ clip }));
}

// Pixels of a chart's plot canvas close to `rgb` (a series' stroke colour).
async function chartPixels(page, chartId, rgb) {
  const image = decodePng(await page.locator(`#${chartId} .uplot canvas`).first().screenshot());
  let count = 0;
  for (let i = 0; i < image.data.length; i += 4) {
    const d = Math.abs(image.data[i] - rgb[0]) + Math.abs(image.data[i + 1] - rgb[1]) +
              Math.abs(image.data[i + 2] - rgb[2]);
    if (d < 60) ++count;
  }
  return count;
}

// The stats file with values at the edges of what a double holds: residuals of 1e-30, 0,
// 5e-324 (the smallest subnormal) and 3e-25 in the first rows, then falling from 1e-3 to 1e-40
// with zeros in between; no positive joint residual at all; a kinetic energy of 1e300 and
// -1e-300 potential energy in a few rows; wall times of 1e-40 ms.
function extremeStats(lines) {
  const first = [1e-30, 0, 5e-324, 3e-25];
  return lines.map((line, i) => {
    const row = JSON.parse(line);
    row.residual = i < first.length ? first[i] : i % 7 === 0 ? 0 : 1e-3 * 10 ** (-i / 4);
    row.joint_residual = 0;
    if (i % 50 === 7) {
      row.kinetic_energy = 1e300;
      row.potential_energy = -1e-300;
    }
    row.wall_ms = 1e-40;
    return JSON.stringify(row);
  }).join('\n') + '\n';
}

// ---- checks -------------------------------------------------------------------------------

let failures = 0;
let passes = 0;
function check(condition, what) {
  if (condition) {
    ++passes;
    console.log(`ok: ${what}`);
  } else {
    ++failures;
    console.log(`FAILED: ${what}`);
  }
}

function mabd(args, cmdArgs) {
  return execFileSync(args.mabd, cmdArgs, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

async function testMode(args) {
  if (!fs.existsSync(args.mabd)) throw new Error(`${args.mabd}: no such program (build mabd_cli first)`);
  const work = args.workDir || fs.mkdtempSync(path.join(os.tmpdir(), 'mabd-viewer-e2e-'));
  fs.mkdirSync(work, { recursive: true });
  const glb = path.join(work, 'chain.glb');
  const stats = path.join(work, 'chain_stats.jsonl');
  const withStats = path.join(work, 'chain.html');
  const withoutStats = path.join(work, 'chain_nostats.html');
  const scene = path.join(work, 'chain.json');
  fs.writeFileSync(scene, JSON.stringify(TEST_SCENE, null, 1));
  mabd(args, ['run', scene, '--quiet', '--out', glb, '--stats', stats]);
  const printed = mabd(args, ['view', glb, '--stats', stats, '-o', withStats]).trim();
  check(printed === withStats, `mabd view prints the page path (${printed})`);
  mabd(args, ['view', glb, '-o', withoutStats]);
  const extreme = path.join(work, 'extreme_stats.jsonl');
  const withExtremeStats = path.join(work, 'chain_extreme.html');
  fs.writeFileSync(extreme, extremeStats(fs.readFileSync(stats, 'utf8').trim().split('\n')));
  mabd(args, ['view', glb, '--stats', extreme, '-o', withExtremeStats]);

  const browser = await launch(args);
  try {
    // ---- page with stats ----
    const { page, problems } = await openPage(browser, withStats, { width: 1280, height: 800 });
    const info = await page.evaluate(() => ({
      duration: window.mabdViewer.duration,
      bodies: window.mabdViewer.bodies,
      charts: window.mabdViewer.charts,
      webgl: !!document.querySelector('#view canvas').getContext('webgl2'),
    }));
    check(info.bodies === 13, `the model has the scene's 13 bodies (${info.bodies})`);
    check(Math.abs(info.duration - 1.5) < 0.02, `the animation lasts 1.5 s (${info.duration})`);

    const first = await viewPixels(page);
    const c1 = countPixels(first);
    console.log(`view at t = 0: ${c1.nonBackground} of ${c1.total} pixels drawn, ${c1.model} model pixels`);
    check(c1.nonBackground > 0.01 * c1.total, 'the WebGL view is not blank');
    check(c1.model > 1000, 'the bodies are visible (orange pixels)');

    // Charts: five uPlot charts with a time cursor at t = 0.
    check(await page.locator('#charts').isVisible(), 'the charts panel is shown with --stats');
    check(info.charts === 5 && (await page.locator('#charts .uplot').count()) === 5,
          `five charts (energy, momentum, residuals, iterations, ms/step) (${info.charts})`);
    check((await page.locator('#chart-residual .uplot canvas').count()) >= 1, 'the residual chart has a canvas');
    const legend = await page.locator('#chart-energy .u-legend').innerText();
    check(/kinetic/.test(legend) && /potential/.test(legend) && /total/.test(legend),
          'the energy chart has kinetic, potential and total series');
    const lineX = async () => page.evaluate(() => {
      const line = document.querySelector('#chart-energy .time-line');
      return line && line.style.display !== 'none' ? new DOMMatrix(getComputedStyle(line).transform).m41 : NaN;
    });
    const x0 = await lineX();
    check(Number.isFinite(x0) && x0 < 3, `the chart time cursor starts at t = 0 (x = ${x0})`);

    // Play: time advances, the frame changes, the chart cursor follows.
    await page.locator('#play').click();
    await page.waitForTimeout(700);
    const playing = await page.evaluate(() => ({ t: window.mabdViewer.time, playing: window.mabdViewer.playing }));
    check(playing.playing && playing.t > 0.2, `play advances the time (t = ${playing.t.toFixed(3)} s)`);
    await page.locator('#play').click();  // pause, so the screenshot and the readout agree
    const paused = await page.evaluate(() => window.mabdViewer.time);
    const second = await viewPixels(page);
    const changed = countChanged(first, second);
    console.log(`after playing to t = ${paused.toFixed(3)} s: ${changed} pixels changed`);
    check(changed > 1000, 'the animation moves the bodies on screen');
    check(countPixels(second).model > 1000, 'the bodies are still visible after playing');
    const x1 = await lineX();
    check(x1 > x0 + 10, `the chart time cursor follows the animation (x = ${x1})`);
    check((await page.locator('#time').innerText()).includes(paused.toFixed(3)),
          'the time readout shows the current time');

    // Scrubber and speed selector.
    await page.locator('#scrubber').evaluate((el) => {
      el.value = '1.2';
      el.dispatchEvent(new Event('input', { bubbles: true }));
    });
    const scrubbed = await page.evaluate(() => window.mabdViewer.time);
    check(Math.abs(scrubbed - 1.2) < 1e-6, `the scrubber sets the time (t = ${scrubbed})`);
    check((await page.locator('#time').innerText()).includes('1.200'), 'the readout follows the scrubber');
    const over = page.locator('#chart-energy .u-over');
    const overBox = await over.boundingBox();
    await over.click({ position: { x: overBox.width / 2, y: overBox.height / 2 } });
    const clicked = await page.evaluate(() => window.mabdViewer.time);
    check(Math.abs(clicked - 0.75) < 0.05, `a click in the middle of a chart seeks to t = 0.75 s (${clicked.toFixed(3)})`);
    const options = await page.locator('#speed option').evaluateAll((els) => els.map((e) => e.value));
    check(JSON.stringify(options) === JSON.stringify(['0.25', '0.5', '1', '2', '4']),
          `speeds 0.25x to 4x (${options.join(', ')})`);
    await page.locator('#scrubber').evaluate((el) => {
      el.value = '0';
      el.dispatchEvent(new Event('input', { bubbles: true }));
    });
    await page.selectOption('#speed', '4');
    const fast = await page.evaluate(() => new Promise((resolve) => {
      const v = window.mabdViewer;
      const start = performance.now();
      v.play();
      setTimeout(() => {
        v.pause();
        resolve({ t: v.time, wall: (performance.now() - start) / 1000 });
      }, 250);
    }));
    check(fast.t > 2.5 * fast.wall,
          `at 4x, ${fast.wall.toFixed(3)} s of wall time plays ${fast.t.toFixed(3)} s`);

    check(problems.length === 0, `no console errors, page errors or network requests${problems.length ? ': ' + problems.join('; ') : ''}`);
    await page.close();

    // ---- page without stats ----
    const plain = await openPage(browser, withoutStats, { width: 1024, height: 700 });
    check(await plain.page.locator('#charts').isHidden(), 'without --stats the charts panel is hidden');
    const c3 = countPixels(await viewPixels(plain.page));
    console.log(`view without stats: ${c3.nonBackground} of ${c3.total} pixels drawn, ${c3.model} model pixels`);
    check(c3.nonBackground > 0.01 * c3.total && c3.model > 1000, 'without --stats the model is drawn');
    check(plain.problems.length === 0, `no errors without stats${plain.problems.length ? ': ' + plain.problems.join('; ') : ''}`);
    await plain.page.close();

    // ---- extreme values: finite, zero and subnormal residuals on the log chart ----
    const ext = await openPage(browser, withExtremeStats, { width: 1280, height: 800 });
    check((await ext.page.evaluate(() => window.mabdViewer.charts)) === 5 &&
          (await ext.page.locator('#charts .uplot').count()) === 5,
          'five charts with residuals of 1e-30, 0 and 5e-324 and energies of 1e300');
    const orange = await chartPixels(ext.page, 'chart-residual', [0xff, 0x7f, 0x0e]);
    check(orange > 100, `the residual chart draws its line (${orange} line pixels)`);
    const black = await chartPixels(ext.page, 'chart-energy', [0x22, 0x22, 0x22]);
    check(black > 100, `the energy chart draws its total energy line (${black} line pixels)`);
    check(/×1e300/.test(await ext.page.locator('#chart-energy .chart-title').innerText()),
          'the energy chart says its axis is in units of 1e300 J');
    // The legends show the recorded values of the row at the animation time (row 0 at t = 0).
    const legendAt = async (t) => {
      await ext.page.evaluate((s) => window.mabdViewer.seek(s), t);
      await ext.page.waitForTimeout(100);
      return (await ext.page.locator('#chart-residual .u-legend').innerText()).replace(/\s+/g, ' ');
    };
    for (const [t, shown] of [[0, '1.00e-30'], [0.02, '0'], [0.03, '4.94e-324'], [0.04, '3.00e-25']]) {
      const text = await legendAt(t);
      check(text.includes(`Newton increment ${shown}`) || text.includes(`Newton increment${shown}`),
            `at t = ${t} s the residual legend shows ${shown} (${text})`);
    }
    check(ext.problems.length === 0, `no errors with extreme stats${ext.problems.length ? ': ' + ext.problems.join('; ') : ''}`);
    await ext.page.close();

    // ---- URL settings: the start time and the followed body ----
    for (const suffix of ['?t=0.9', '#t=0.9']) {
      const at = await openPage(browser, withStats, { width: 1024, height: 700 }, suffix);
      const t = await at.page.evaluate(() => window.mabdViewer.time);
      check(Math.abs(t - 0.9) < 1e-9 && (await at.page.locator('#time').innerText()).includes('0.900'),
            `${suffix} starts the page at t = 0.9 s (${t}, readout '${await at.page.locator('#time').innerText()}')`);
      check(at.problems.length === 0, `no errors with ${suffix}${at.problems.length ? ': ' + at.problems.join('; ') : ''}`);
      await at.page.close();
    }
    const names = await (async () => {
      const probe = await openPage(browser, withoutStats, { width: 800, height: 600 });
      const list = await probe.page.evaluate(() => window.mabdViewer.bodyNames);
      await probe.page.close();
      return list;
    })();
    check(names.length === 13, `13 bodies to follow (${names.join(' ')})`);
    const target = names[names.length - 1];
    const fol = await openPage(browser, withoutStats, { width: 1024, height: 700 },
                               `#t=0.3&follow=${encodeURIComponent(target)}`);
    const state = await fol.page.evaluate(() => ({ followed: window.mabdViewer.followed, t: window.mabdViewer.time }));
    check(state.followed === target && (await fol.page.locator('#follow').inputValue()) === target &&
          Math.abs(state.t - 0.3) < 1e-9,
          `#t=0.3&follow=${target} follows it (followed '${state.followed}', t = ${state.t})`);
    const off = (p) => Math.hypot(p.x, p.y);
    for (const t of [0.3, 0.75, 1.2, 1.5]) {
      await fol.page.evaluate((s) => window.mabdViewer.seek(s), t);
      await fol.page.waitForTimeout(100);
      const p = await fol.page.evaluate((n) => window.mabdViewer.screenPosition(n), target);
      check(off(p) < 0.02, `at t = ${t} s the followed body is at the centre (${p.x.toFixed(4)}, ${p.y.toFixed(4)})`);
    }
    // The centred ball is drawn: orange pixels in the middle of the view.
    const centre = await viewPixels(fol.page);
    check(countPixels(centre).model > 1000, 'the followed body is drawn');
    // A free camera stays put: the body then leaves the centre as it swings.
    await fol.page.selectOption('#follow', '');
    await fol.page.evaluate(() => window.mabdViewer.seek(0.3));
    const free = await fol.page.evaluate((n) => window.mabdViewer.screenPosition(n), target);
    check(off(free) > 0.1, `with the free camera the body leaves the centre (${free.x.toFixed(3)}, ${free.y.toFixed(3)})`);
    check(fol.problems.length === 0, `no errors while following${fol.problems.length ? ': ' + fol.problems.join('; ') : ''}`);
    await fol.page.close();
  } finally {
    await browser.close();
  }
  console.log(`${passes} passed, ${failures} failed`);
  return failures === 0 ? 0 : 1;
}

async function screenshotMode(args) {
  if (!args.page) throw new Error('--screenshot needs --page PAGE.html');
  const browser = await launch(args);
  try {
    const { page, problems } = await openPage(browser, args.page, { width: args.width, height: args.height });
    const t = await page.evaluate((at) => {
      const v = window.mabdViewer;
      v.pause();
      v.seek(Number.isFinite(at) ? at : v.duration / 2);
      return v.time;
    }, args.at);
    await page.waitForTimeout(500);
    fs.mkdirSync(path.dirname(path.resolve(args.screenshot)), { recursive: true });
    await page.screenshot({ path: args.screenshot });
    console.log(`${args.screenshot}: ${args.width}x${args.height} at t = ${t.toFixed(3)} s`);
    if (problems.length) {
      console.log(problems.join('\n'));
      return 1;
    }
    return 0;
  } finally {
    await browser.close();
  }
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (!fs.existsSync(args.chromium)) {
    console.log(`SKIPPED: Chromium not found at ${args.chromium} (Debian: apt-get install chromium)`);
    return SKIP;
  }
  return args.screenshot ? screenshotMode(args) : testMode(args);
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(`viewer_e2e: ${e && e.stack ? e.stack : e}`);
    process.exit(1);
  },
);
