// The page written by `mabd view`: plays the run's animated glTF with three.js and charts its
// per-step statistics with uPlot, a cursor line on every chart following the animation time.
//
// The page holds its data in three inline elements (all written by `mabd view`):
//   <script id="mabd-glb" type="application/octet-stream">  the .glb, base64
//   <script id="mabd-stats" type="application/json">        the stats, one array per key, or null
//   <script id="mabd-meta" type="application/json">         {"title": ..., "glb": ..., "stats": ...}
// and nothing is fetched: the page works from file:// without a network.
import {
  AnimationMixer,
  Box3,
  Color,
  DirectionalLight,
  GridHelper,
  HemisphereLight,
  LoopRepeat,
  PerspectiveCamera,
  Scene,
  Vector3,
  WebGLRenderer,
} from 'three';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';
import uPlot from 'uplot';

const SPEEDS = [0.25, 0.5, 1, 2, 4];
const CHART_HEIGHT = 140;
const BACKGROUND = 0xeef1f5;
// Tick steps of integer charts (iterations, contact points): 1, 2, 5, 10, ... 5e12.
const INTEGER_INCREMENTS = Array.from({ length: 39 },
  (_, i) => [1, 2, 5][i % 3] * 10 ** Math.floor(i / 3));
// A linear chart whose largest |value| is outside [1e-12, 1e12] is drawn scaled by a power of
// ten (said in its title): uPlot's axes only place ticks from 1e-32 to 1e32.
const LINEAR_LIMIT = 12;
// Options of the follow-camera selector (beyond it, the URL parameter still works).
const MAX_FOLLOW_OPTIONS = 2000;

function readJson(id) {
  const el = document.getElementById(id);
  if (!el) return null;
  const text = el.textContent.trim();
  return text ? JSON.parse(text) : null;
}

function base64ToArrayBuffer(text) {
  const binary = atob(text.replace(/\s+/g, ''));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; ++i) bytes[i] = binary.charCodeAt(i);
  return bytes.buffer;
}

function el(tag, attrs = {}, children = []) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === 'text') node.textContent = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) node.appendChild(child);
  return node;
}

// Legend values: 4 significant digits, exponent notation for very small or large values.
function formatValue(u, v) {
  if (v == null || !Number.isFinite(v)) return '--';
  const a = Math.abs(v);
  return a === 0 || (a >= 1e-3 && a < 1e6) ? String(Number(v.toPrecision(4))) : v.toExponential(2);
}

// Axis tick labels, short enough for the axis: 2 significant digits in exponent notation
// outside [0.01, 10000).
function formatTick(v) {
  if (v == null || !Number.isFinite(v)) return '';
  const a = Math.abs(v);
  if (a === 0) return '0';
  if (a >= 1e4 || a < 1e-2) return Number(v.toPrecision(2)).toExponential().replace('e+', 'e');
  return String(Number(v.toPrecision(4)));
}

// Tick steps of a log chart's exponent axis: every decade, or every 2nd, 5th, 10th ... one.
const DECADE_INCREMENTS = [1, 2, 5, 10, 20, 50, 100, 200];

function formatTime(t) {
  return t.toFixed(3);
}

// ---- page layout ----------------------------------------------------------------------------

function buildLayout(meta, hasStats) {
  const root = document.getElementById('mabd-viewer') || document.body.appendChild(el('div'));
  root.id = 'mabd-viewer';
  root.className = hasStats ? 'with-charts' : 'no-charts';

  const view = el('div', { id: 'view' });
  const title = el('div', { id: 'title' }, [
    el('span', { class: 'name', text: meta.title || 'mabd run' }),
    el('span', { id: 'model-info', class: 'info', text: 'loading…' }),
  ]);
  const message = el('div', { id: 'message', hidden: '' });

  const play = el('button', { id: 'play', type: 'button', title: 'Play / pause (space)', text: 'Play' });
  const scrubber = el('input', {
    id: 'scrubber', type: 'range', min: '0', max: '1', step: 'any', value: '0',
    'aria-label': 'Animation time',
  });
  const readout = el('span', { id: 'time', text: 't = 0.000 s' });
  const speed = el('select', { id: 'speed', title: 'Playback speed', 'aria-label': 'Playback speed' });
  for (const s of SPEEDS) {
    const option = el('option', { value: String(s), text: `${s}×` });
    if (s === 1) option.selected = true;
    speed.appendChild(option);
  }
  const follow = el('select', {
    id: 'follow', title: 'Camera: free, or following a body', 'aria-label': 'Camera follows',
  });
  follow.appendChild(el('option', { value: '', text: 'free camera' }));
  const controls = el('div', { id: 'controls' }, [play, scrubber, readout, speed, follow]);
  view.append(title, message, controls);

  const charts = el('div', { id: 'charts' });
  if (!hasStats) charts.hidden = true;
  root.append(view, charts);
  return { root, view, title, message, play, scrubber, readout, speed, follow, charts };
}

function showMessage(ui, text) {
  ui.message.textContent = text;
  ui.message.hidden = false;
}

// ---- statistics charts ----------------------------------------------------------------------

function norms(rows) {
  if (!rows) return null;
  return rows.map((v) => (Array.isArray(v) ? Math.hypot(...v) : null));
}

// Finite numbers, everything else (null, strings, overflowed sums) null.
function finiteOrNull(values) {
  if (!values) return null;
  return values.map((v) => (typeof v === 'number' && Number.isFinite(v) ? v : null));
}

// log10 of the positive finite values, null for zero, negative and missing values. Log charts
// are drawn as linear charts of the exponent, so any positive double (5e-324 to 1.8e308)
// has a place on the axis.
function log10OrNull(values) {
  if (!values) return null;
  return values.map((v) => (typeof v === 'number' && v > 0 && Number.isFinite(v) ? Math.log10(v) : null));
}

// v / 10^e without overflow or underflow of 10^e on its own (e may be about +-330).
function scaleByPow10(v, e) {
  const a = Math.trunc(e / 2);
  return v * 10 ** -a * 10 ** -(e - a);
}

// The power of ten a linear chart's scale is drawn in: 0 unless its largest |value| is outside
// [1e-LINEAR_LIMIT, 1e+LINEAR_LIMIT].
function displayExponent(columns) {
  let largest = 0;
  for (const values of columns) {
    for (const v of values) if (v !== null && Math.abs(v) > largest) largest = Math.abs(v);
  }
  if (largest === 0) return 0;
  const e = Math.floor(Math.log10(largest));
  return Math.abs(e) > LINEAR_LIMIT ? e : 0;
}

// Decade labels of a log chart's exponent axis: 0.01, 0.1, 1, 10, 100, then 1e-3, 1e3 ...
function decadeLabel(k) {
  if (!Number.isInteger(k)) return '';
  if (k >= -2 && k <= 2) return String(10 ** k);
  return `1e${k}`;
}

function column(stats, key) {
  const values = stats[key];
  return Array.isArray(values) ? values : null;
}

// The column if some value in it is a positive number (older stats files lack the contact
// and phase columns; runs without contacts have only zeros there), else null.
function positiveColumn(stats, key) {
  const values = column(stats, key);
  return values && values.some((v) => typeof v === 'number' && v > 0) ? values : null;
}

// The range of a log chart's exponent axis: whole decades around the data, [1e-16, 1]
// without a positive value.
function decadeRange(u, min, max) {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return [-16, 0];
  const lo = Math.floor(min);
  const hi = Math.ceil(max);
  return hi > lo ? [lo, hi] : [lo - 1, hi + 1];
}

function chartDefinitions(stats) {
  const t = column(stats, 'time');
  const ke = column(stats, 'kinetic_energy');
  const pe = column(stats, 'potential_energy');
  const total = ke && pe ? ke.map((k, i) => (k == null || pe[i] == null ? null : k + pe[i])) : null;
  const defs = [
    {
      id: 'chart-energy', title: 'Energy (J)',
      series: [
        { label: 'kinetic', stroke: '#d62728', data: ke },
        { label: 'potential', stroke: '#1f77b4', data: pe },
        { label: 'total', stroke: '#222222', data: total },
      ],
    },
    {
      id: 'chart-momentum', title: 'Momentum',
      series: [
        { label: '|p| (kg m/s)', stroke: '#2ca02c', data: norms(column(stats, 'linear_momentum')) },
        { label: '|L| (kg m²/s)', stroke: '#9467bd', data: norms(column(stats, 'angular_momentum')), scale: 'R' },
      ],
    },
    {
      id: 'chart-residual', title: 'Residuals (m, log scale)', log: true,
      series: [
        { label: 'Newton increment', stroke: '#ff7f0e', data: column(stats, 'residual') },
        { label: 'joint |C|', stroke: '#17becf', data: column(stats, 'joint_residual') },
      ],
    },
    {
      id: 'chart-iterations', title: 'Newton iterations per step', integer: true,
      series: [{ label: 'iterations', stroke: '#8c564b', data: column(stats, 'newton_iterations') }],
    },
    {
      id: 'chart-wall', title: 'Wall time (ms per step)',
      series: [
        { label: 'ms/step', stroke: '#7f7f7f', data: column(stats, 'wall_ms') },
        // The step's phases, when the stats have them.
        { label: 'detect', stroke: '#e377c2', data: positiveColumn(stats, 'detect_ms') },
        { label: 'predict', stroke: '#9467bd', data: positiveColumn(stats, 'predict_ms') },
        { label: 'body', stroke: '#bcbd22', data: positiveColumn(stats, 'body_ms') },
        { label: 'rows', stroke: '#8c564b', data: positiveColumn(stats, 'rows_ms') },
        { label: 'dual', stroke: '#17becf', data: positiveColumn(stats, 'dual_ms') },
        { label: 'contact', stroke: '#2ca02c', data: positiveColumn(stats, 'contact_ms') },
        { label: 'check', stroke: '#1f77b4', data: positiveColumn(stats, 'check_ms') },
        { label: 'finish', stroke: '#ff7f0e', data: positiveColumn(stats, 'finish_ms') },
      ],
    },
  ];
  // Contacts, only for runs that had some: active contact points (left axis) and the largest
  // penetration (right axis, mm).
  const contacts = positiveColumn(stats, 'contacts');
  if (contacts) {
    const penetration = column(stats, 'max_penetration');
    defs.push({
      id: 'chart-contacts', title: 'Contacts', integer: true,
      series: [
        { label: 'contact points', stroke: '#2ca02c', data: contacts },
        {
          label: 'max penetration (mm)', stroke: '#d62728', scale: 'R',
          data: penetration ? penetration.map((v) => (typeof v === 'number' ? 1e3 * v : null)) : null,
        },
      ],
    });
  }
  return { t, defs };
}

// The series of a chart that have data, each with its recorded values (`raw`: finite numbers
// or null) and the values drawn (`plotted`): exponents on log charts, and on linear charts the
// values in the power of ten that keeps each axis within uPlot's reach (then named in the
// chart's title, e.g. "left axis ×1e-15").
function plottedSeries(def) {
  const series = def.series.filter((s) => s.data).map((s) => ({ ...s, raw: finiteOrNull(s.data) }));
  if (def.log) {
    for (const s of series) s.plotted = log10OrNull(s.raw);
    return series;
  }
  const notes = [];
  for (const [scale, side] of [['y', 'left'], ['R', 'right']]) {
    const onScale = series.filter((s) => (s.scale || 'y') === scale);
    const e = displayExponent(onScale.map((s) => s.raw));
    for (const s of onScale) {
      s.plotted = e ? s.raw.map((v) => (v === null ? null : scaleByPow10(v, e))) : s.raw;
    }
    if (e) notes.push(`${side} axis ×1e${e}`);
  }
  if (notes.length) def.title = `${def.title} — ${notes.join(', ')}`;
  return series;
}

function buildCharts(stats, container, seek) {
  const { t, defs } = chartDefinitions(stats);
  if (!t || t.length === 0) return [];
  const charts = [];
  const width = () => Math.max(240, container.clientWidth - 24);
  for (const def of defs) {
    const series = plottedSeries(def);
    if (series.length === 0) continue;
    const box = el('div', { id: def.id, class: 'chart' }, [el('div', { class: 'chart-title', text: def.title })]);
    container.appendChild(box);
    // Series with scale 'R' use a second axis on the right.
    const usesR = series.some((s) => s.scale === 'R');
    const axes = [
      { size: 26 },
      def.log
        ? {
          size: 56, space: 20, incrs: DECADE_INCREMENTS, values: (u, vals) => vals.map(decadeLabel),
        }
        : {
          size: 56, space: 20, values: (u, vals) => vals.map(formatTick),
          ...(def.integer ? { incrs: INTEGER_INCREMENTS } : {}),
        },
    ];
    if (usesR) {
      axes.push({
        scale: 'R', side: 1, size: 50, space: 20, grid: { show: false },
        values: (u, vals) => vals.map(formatTick),
      });
    }
    const opts = {
      width: width(),
      height: CHART_HEIGHT,
      cursor: { sync: { key: 'mabd-stats' }, drag: { x: true, y: false } },
      legend: { live: true },
      scales: {
        // From t = 0 (the stats start after the first step), where the animation starts.
        x: { time: false, range: (u, min, max) => [Math.min(0, min), max] },
        y: def.log ? { range: decadeRange } : {},
        ...(usesR ? { R: {} } : {}),
      },
      axes,
      series: [
        { label: 't (s)', value: (u, v) => (v == null ? '--' : v.toFixed(3)) },
        ...series.map((s) => ({
          label: s.label, stroke: s.stroke, width: 1.5, scale: s.scale || 'y', spanGaps: false,
          // The legend shows the value as recorded, whatever the chart draws.
          value: (u, v, seriesIdx, idx) => formatValue(u, idx == null ? null : s.raw[idx]),
          points: { show: false },
        })),
      ],
    };
    const plot = new uPlot(opts, [t, ...series.map((s) => s.plotted)], box);
    const line = el('div', { class: 'time-line' });
    plot.over.appendChild(line);
    // A click (not a drag, which zooms) moves the animation to that time.
    let downX = null;
    plot.over.addEventListener('mousedown', (e) => { downX = e.clientX; });
    plot.over.addEventListener('mouseup', (e) => {
      if (downX !== null && Math.abs(e.clientX - downX) < 3) seek(plot.posToVal(e.offsetX, 'x'));
      downX = null;
    });
    let hovering = false;
    plot.over.addEventListener('mouseenter', () => { hovering = true; });
    plot.over.addEventListener('mouseleave', () => { hovering = false; });
    charts.push({ plot, line, t, isHovered: () => hovering });
  }
  const resize = () => { for (const c of charts) c.plot.setSize({ width: width(), height: CHART_HEIGHT }); };
  window.addEventListener('resize', resize);
  return charts;
}

// Index of the stats row nearest to `time` (t is sorted).
function nearestIndex(t, time) {
  let lo = 0, hi = t.length - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (t[mid] <= time) lo = mid; else hi = mid;
  }
  return Math.abs(t[hi] - time) < Math.abs(t[lo] - time) ? hi : lo;
}

// Moves each chart's time line to `time`; the legends show the values at that time unless
// the mouse is over a chart (then uPlot shows the hovered values).
function updateTimeLines(charts, time) {
  for (const chart of charts) {
    const { plot, line } = chart;
    if (!chart.isHovered()) {
      // uPlot's own cursor updates (its first layout included) also set the legend's row.
      const idx = nearestIndex(chart.t, time);
      if (plot.legend.idx !== idx) plot.setLegend({ idx }, false);
    }
    const x = plot.valToPos(time, 'x');
    const inside = Number.isFinite(x) && x >= 0 && x <= plot.over.clientWidth;
    line.style.display = inside ? 'block' : 'none';
    if (inside) line.style.transform = `translateX(${x}px)`;
  }
}

// ---- 3D view --------------------------------------------------------------------------------

// True for the square a plane (ground, wall) is drawn as: its size is arbitrary, so it is left
// out when framing the scene. The exporter marks plane nodes with extras {"mabd_shape": "plane"},
// which GLTFLoader puts in userData.
function isPlane(object, root) {
  for (let o = object; o && o !== root; o = o.parent) {
    if (o.userData && o.userData.mabd_shape === 'plane') return true;
  }
  return false;
}

// Bounding box of the bodies other than planes (of every object when all are planes).
function modelBounds(model) {
  model.updateMatrixWorld(true);
  const box = new Box3();
  model.traverse((o) => { if (o.isMesh && !isPlane(o, model)) box.expandByObject(o); });
  return box.isEmpty() ? new Box3().setFromObject(model) : box;
}

// Bounding box of the model over the whole animation (sampled), so that the camera and the
// grid frame every pose the bodies take, not only the first.
function animationBounds(model, mixer, action, duration) {
  const box = new Box3();
  const samples = duration > 0 ? 24 : 0;
  for (let i = 0; i <= samples; ++i) {
    action.time = samples ? (duration * i) / samples : 0;
    mixer.update(0);
    model.updateMatrixWorld(true);
    box.union(modelBounds(model));
  }
  action.time = 0;
  mixer.update(0);
  return box;
}

function niceStep(x) {
  const p = Math.pow(10, Math.floor(Math.log10(x)));
  const m = x / p;
  return (m < 2 ? 1 : m < 5 ? 2 : 5) * p;
}

// Distance along `direction` from the box centre at which every corner of the box is inside
// the camera's field of view (with a margin).
function fitDistance(camera, box, direction) {
  const center = box.getCenter(new Vector3());
  const back = direction.clone().normalize();
  const right = new Vector3(0, 1, 0).cross(back).normalize();
  const up = back.clone().cross(right);
  const tanV = Math.tan((camera.fov * Math.PI) / 360);
  const tanH = tanV * camera.aspect;
  let distance = 0;
  for (let i = 0; i < 8; ++i) {
    const corner = new Vector3(
      i & 1 ? box.max.x : box.min.x, i & 2 ? box.max.y : box.min.y, i & 4 ? box.max.z : box.min.z,
    ).sub(center);
    const depth = corner.dot(back);
    distance = Math.max(distance, depth + Math.abs(corner.dot(right)) / tanH,
                        depth + Math.abs(corner.dot(up)) / tanV);
  }
  return Math.max(distance * 1.12, 1e-3);
}

// The bodies the camera can follow: the children of the exporter's root node other than
// planes, by their names in the file (GLTFLoader's object names are sanitized copies).
function followableBodies(gltf, model) {
  const root = model.getObjectByName('mabd_world') || model;
  const nodes = (gltf.parser && gltf.parser.json.nodes) || [];
  const bodies = new Map();
  for (const object of root.children) {
    if (isPlane(object, model)) continue;
    const mapping = gltf.parser && gltf.parser.associations.get(object);
    const node = mapping && mapping.nodes !== undefined ? nodes[mapping.nodes] : null;
    const name = (node && node.name) || object.name;
    if (name && !bodies.has(name)) bodies.set(name, { name, object, local: null });
  }
  return bodies;
}

// The point of a body the follow camera aims at (world frame): the centre of its bounding box
// at the time it was first followed, carried along with the body.
function followPoint(body) {
  body.object.updateWorldMatrix(true, false);
  if (!body.local) {
    const center = new Box3().setFromObject(body.object).getCenter(new Vector3());
    body.local = body.object.worldToLocal(center);
  }
  return body.object.localToWorld(body.local.clone());
}

// Settings in the page's URL, after '?' or '#' (the '#' ones win): t (s), follow (body name).
function urlSettings() {
  const params = new URLSearchParams(window.location.search);
  for (const [key, value] of new URLSearchParams(window.location.hash.replace(/^#/, ''))) {
    params.set(key, value);
  }
  const t = params.has('t') ? Number(params.get('t')) : NaN;
  return {
    t: Number.isFinite(t) ? t : null,
    follow: params.has('follow') ? params.get('follow') : null,
  };
}

function frameScene(scene, camera, controls, box) {
  const size = box.getSize(new Vector3());
  const center = box.getCenter(new Vector3());
  const radius = Math.max(size.length() / 2, 1e-3);
  const direction = new Vector3(0.3, 0.2, 1).normalize();
  const distance = fitDistance(camera, box, direction);
  camera.position.copy(center).addScaledVector(direction, distance);
  camera.near = distance / 200;
  camera.far = distance * 20 + 4 * radius;
  camera.updateProjectionMatrix();
  controls.target.copy(center);
  controls.update();

  // Ground grid under the lowest point of the motion, covering its footprint.
  const span = Math.max(size.x, size.z, radius) * 1.3;
  const cell = niceStep(span / 20);
  const divisions = Math.max(2, Math.ceil(span / cell / 2) * 2);
  const grid = new GridHelper(cell * divisions, divisions, 0x8a94a6, 0xc5ccd6);
  grid.position.set(center.x, box.min.y - 0.02 * radius, center.z);
  scene.add(grid);

  const sun = new DirectionalLight(0xffffff, 2.2);
  sun.position.copy(center).add(new Vector3(0.5, 1.0, 0.8).multiplyScalar(distance));
  sun.target.position.copy(center);
  scene.add(sun, sun.target);
}

async function main() {
  const meta = readJson('mabd-meta') || {};
  const stats = readJson('mabd-stats');
  const ui = buildLayout(meta, Boolean(stats));
  if (meta.title) document.title = `${meta.title} — mabd viewer`;

  const glbElement = document.getElementById('mabd-glb');
  if (!glbElement || !glbElement.textContent.trim()) {
    showMessage(ui, 'This page holds no glTF data.');
    return;
  }

  let renderer;
  try {
    renderer = new WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
  } catch (e) {
    showMessage(ui, `WebGL is not available in this browser: ${e.message}`);
    throw e;
  }
  renderer.setPixelRatio(window.devicePixelRatio || 1);
  renderer.setClearColor(BACKGROUND);
  ui.view.insertBefore(renderer.domElement, ui.view.firstChild);

  const scene = new Scene();
  scene.background = new Color(BACKGROUND);
  scene.add(new HemisphereLight(0xffffff, 0x8d8d8d, 1.6));
  const camera = new PerspectiveCamera(40, 1, 0.01, 1000);
  const controls = new OrbitControls(camera, renderer.domElement);
  controls.enableDamping = true;

  const gltf = await new GLTFLoader().parseAsync(base64ToArrayBuffer(glbElement.textContent), '');
  const model = gltf.scene;
  scene.add(model);
  const clip = gltf.animations[0] || null;
  const mixer = new AnimationMixer(model);
  const action = clip ? mixer.clipAction(clip) : null;
  const duration = clip ? clip.duration : 0;
  if (action) {
    action.setLoop(LoopRepeat, Infinity);
    action.play();
  }
  let bodies = 0;
  model.traverse((o) => { if (o.isMesh) ++bodies; });
  const box = action ? animationBounds(model, mixer, action, duration) : modelBounds(model);
  camera.aspect = Math.max(1, ui.view.clientWidth) / Math.max(1, ui.view.clientHeight);
  frameScene(scene, camera, controls, box);

  const followable = followableBodies(gltf, model);
  let options = 0;
  for (const name of followable.keys()) {
    if (++options > MAX_FOLLOW_OPTIONS) break;
    ui.follow.appendChild(el('option', { value: name, text: name }));
  }
  ui.follow.hidden = followable.size === 0;

  const frames = clip && clip.tracks.length ? clip.tracks[0].times.length : 1;
  document.getElementById('model-info').textContent =
    `${bodies} bodies · ${frames} frames · ${formatTime(duration)} s`;

  // ---- playback state -----------------------------------------------------------------------
  let time = 0;
  let playing = false;
  let speed = 1;
  let charts = [];
  let dirty = true;
  let followed = null;

  // Keeps the followed body at the orbit target (the centre of the view): the camera moves
  // with it, so orbiting and zooming around it still work.
  const applyFollow = () => {
    if (!followed) return;
    const p = followPoint(followed);
    if (!p.equals(controls.target)) {
      camera.position.add(p.clone().sub(controls.target));
      controls.target.copy(p);
      dirty = true;
    }
  };
  const setFollow = (name) => {
    followed = (name && followable.get(name)) || null;
    if (name && !followed) showMessage(ui, `No body named '${name}' to follow.`);
    if (followed && ![...ui.follow.options].some((o) => o.value === name)) {
      ui.follow.appendChild(el('option', { value: name, text: name }));
    }
    ui.follow.value = followed ? followed.name : '';
    if (!followed) return;
    // Aim at the body, closing in to a few times its size if the view is farther out.
    const p = followPoint(followed);
    const offset = camera.position.clone().sub(controls.target);
    const near = 6 * fitDistance(camera, new Box3().setFromObject(followed.object), offset);
    if (offset.length() > near) offset.setLength(near);
    controls.target.copy(p);
    camera.position.copy(p).add(offset);
    camera.near = Math.min(camera.near, offset.length() / 200);
    camera.updateProjectionMatrix();
    controls.update();
    dirty = true;
  };

  const setTime = (t) => {
    time = Math.min(Math.max(Number.isFinite(t) ? t : 0, 0), duration);
    if (action) {
      action.time = time;
      mixer.update(0);
    }
    applyFollow();
    ui.scrubber.value = String(time);
    ui.readout.textContent = `t = ${formatTime(time)} s / ${formatTime(duration)} s`;
    updateTimeLines(charts, time);
    dirty = true;
  };
  const setPlaying = (p) => {
    playing = p && duration > 0;
    ui.play.textContent = playing ? 'Pause' : 'Play';
    ui.play.classList.toggle('playing', playing);
  };

  ui.scrubber.max = String(duration);
  ui.scrubber.step = String(duration > 0 ? duration / Math.max(1, frames - 1) / 4 : 1);
  ui.play.disabled = duration <= 0;
  ui.play.addEventListener('click', () => setPlaying(!playing));
  ui.scrubber.addEventListener('input', () => setTime(parseFloat(ui.scrubber.value)));
  ui.speed.addEventListener('change', () => { speed = parseFloat(ui.speed.value) || 1; });
  ui.follow.addEventListener('change', () => setFollow(ui.follow.value));
  window.addEventListener('keydown', (e) => {
    if (e.code === 'Space' && e.target === document.body) {
      e.preventDefault();
      setPlaying(!playing);
    }
  });
  controls.addEventListener('change', () => { dirty = true; });

  if (stats) charts = buildCharts(stats, ui.charts, (t) => setTime(t));

  const resize = () => {
    const w = Math.max(1, ui.view.clientWidth);
    const h = Math.max(1, ui.view.clientHeight);
    renderer.setSize(w, h);
    camera.aspect = w / h;
    camera.updateProjectionMatrix();
    dirty = true;
  };
  window.addEventListener('resize', resize);
  resize();
  // The URL may set the start time and the followed body (page.html#t=2.5&follow=link_3).
  const applyUrl = () => {
    const settings = urlSettings();
    if (settings.follow !== null) setFollow(settings.follow);
    setTime(settings.t ?? time);
  };
  applyUrl();
  window.addEventListener('hashchange', applyUrl);

  let last = performance.now();
  const frame = (now) => {
    const dt = Math.min((now - last) / 1000, 0.5);
    last = now;
    if (playing) {
      let t = time + dt * speed;
      if (t > duration) t = duration > 0 ? t % duration : 0;
      setTime(t);
    }
    updateTimeLines(charts, time);  // also after the charts' own layout and resizes
    if (controls.update() || dirty) {
      renderer.render(scene, camera);
      dirty = false;
    }
    requestAnimationFrame(frame);
  };
  renderer.render(scene, camera);
  requestAnimationFrame(frame);

  // Handle for scripts and tests driving the page.
  window.mabdViewer = {
    get time() { return time; },
    get playing() { return playing; },
    duration,
    bodies,
    charts: charts.length,
    play: () => setPlaying(true),
    pause: () => setPlaying(false),
    seek: (t) => setTime(t),
    bodyNames: [...followable.keys()],
    get followed() { return followed ? followed.name : ''; },
    follow: (name) => setFollow(name),
    // Where a body's followed point is on screen, in normalized device coordinates (-1 to 1,
    // 0 0 at the centre of the view).
    screenPosition: (name) => {
      const body = followable.get(name);
      if (!body) return null;
      camera.updateMatrixWorld();
      const p = followPoint(body).project(camera);
      return { x: p.x, y: p.y };
    },
  };
  document.body.dataset.ready = 'true';
}

main().catch((e) => {
  console.error(`mabd viewer: ${e && e.message ? e.message : e}`);
  document.body.dataset.ready = 'error';
  const message = document.getElementById('message');
  if (message) {
    message.textContent = `Could not show this run: ${e && e.message ? e.message : e}`;
    message.hidden = false;
  }
});
