// Demo page glue (UI only, no pacing): boot progress, the early session socket,
// the live chart. Python (the page's <script type="py">, which runs demo/demo.py as
// streampace_demo through PyScript) imports this module and drives everything else.
import * as bridge from "../js_shim/bridge.js";
import { mark } from "../js_shim/boot.js";
import { runtimeInfo } from "../js_shim/pyscript.js";

const $ = (id) => document.getElementById(id);

// A session the server mints (ws/sessions/new), kept per tab (below); the
// socket opens now, before Python boots, and buffers whatever arrives. A HEAD request for this page first asks whether
// a streampace server is here (its responses carry X-Streampace-Protocol): on
// plain static files no WebSocket is tried (a failed handshake would be logged
// as a console error) and the page falls back to the in-page simulation.
// The in-page simulation's session id (no server: static files).
export const sessionId = `demo-${Math.random().toString(36).slice(2, 10)}`;
const params = new URLSearchParams(location.search);
const speed = Number(params.get("speed") || "1");
export const simSpeed = Number.isFinite(speed) && speed > 0 ? speed : 1;
// ?max_lag=120: the pacing law's one knob (ms a grapheme may trail its arrival);
// absent or "auto": automatic.
export const maxLag = params.get("max_lag") || "auto";
// The tab keeps the session the server minted (sessionStorage, as the tag's
// default remember="tab"): a reload shows the conversation again and a running
// answer goes on; a new tab is a new conversation.
export const earlySocket = bridge.openSession("ws/sessions/new", {
  retryBeforeOpen: false,
  probeUrl: location.href,
  remember: bridge.sessionStore("tab"),
  rememberKey: bridge.sessionKey("ws/sessions/new", "demo"),
});

// ---- boot progress (js_shim/boot.js reports each step as a "streampace:progress"
// event; PyScript its own as "py:progress")
const bootStarted = performance.now();
const bootText = $("boot-text");
const bootBar = $("boot-progress");
let steps = 0;
function bootProgress(text) {
  steps += 1;
  if (bootText) bootText.textContent = text;
  if (bootBar) bootBar.value = Math.min(0.95, steps / 6);
}
document.addEventListener("streampace:progress", (ev) => bootProgress(ev.detail));
addEventListener("py:progress", (ev) => {
  if (ev.detail === "Loaded Pyodide") bootProgress("Starting the demo…");
});

export const state = { ready: false, mode: null, bootMs: null, stats: null };

export function setReady(mode) {
  state.ready = true;
  state.mode = mode;
  state.snapshot = runtimeInfo.snapshot;
  state.bootMs = performance.now() - bootStarted;
  mark("ready");
  const boot = $("boot");
  if (boot) boot.hidden = true;
  document.body.classList.add("ready");
  $("prompt")?.focus();
  document.dispatchEvent(new CustomEvent("streampace:ready", { detail: { mode, bootMs: state.bootMs } }));
}

export function attachDemo(statsJson) {
  mark("package-ready");
  state.stats = () => JSON.parse(statsJson());
}

// The demo page's one global, for tests and the curious.
window.streampaceDemo = state;

// ---- live chart: graphemes revealed per frame, backlog, display lag
//
// A strip twice as wide as its window (the canvas's parent, which clips it),
// moved left by a CSS transform as samples come: a frame draws only its new
// samples, at the strip's right end, and moves it (composited, no bitmap copy).
// Once the strip's end is reached, what shows is copied to its left half, once
// every window's width of samples. Redrawing the whole history every frame was
// rasterised in the frame's commit (at 4x CPU 15-30 ms as the chart filled,
// python -m bench.frame_trace --page demo); shifting the drawn bitmap left by a
// sample instead (two copies of it a frame) still cost ~1 ms a frame at 4x.
// The scales are "nice" numbers (1, 2, 2.5, 5 x 10^k) that only change when the
// data crosses one, so the whole chart is redrawn only then (and on a resize or
// a colour-scheme change). Everything is in device pixels with a whole number of
// pixels per sample, so a copy moves pixels exactly.
// (The constants and loops here allocate nothing per frame: over a long answer a
// literal array per call was the page's fourth-largest JS allocation.)
const NICE = [1, 2, 2.5, 5, 10];

function niceCeil(x) {
  const p = 10 ** Math.floor(Math.log10(x));
  for (let i = 0; i < NICE.length; i++) if (NICE[i] * p >= x) return NICE[i] * p;
  return 10 * p;
}

// `fn` once the page is idle (Safari has no requestIdleCallback: a task then).
function whenIdle(fn) {
  if (globalThis.requestIdleCallback) requestIdleCallback(fn, { timeout: 2000 });
  else setTimeout(fn, 0);
}

// The largest of the last `count` values, at least `floor`.
function windowMax(arr, count, floor) {
  let m = floor;
  for (let i = Math.max(0, arr.length - count); i < arr.length; i++) if (arr[i] > m) m = arr[i];
  return m;
}

export class Chart {
  // `canvas`: the strip, twice its parent's width in CSS (the parent is the
  // window that shows it and clips the rest).
  constructor(canvas, size = 360) {
    this.canvas = canvas;
    this.size = size;
    this.shown = [];
    this.backlog = [];
    this.lag = [];
    this.keep = size;  // samples kept: at least what fits the window's width
    this.pushed = 0;  // samples pushed so far
    this.drawnAt = 0;  // `pushed` when the canvas was last drawn
    this.scales = null;  // [shown, backlog, lag] the canvas is drawn with
    this.fullDraws = 0;  // whole redraws (tests, the curious)
    this.copies = 0;  // strip ends reached: what showed copied to the left half
    this.pending = false;
    this.inView = true;  // whether the window is on the screen (IntersectionObserver)
    this.stale = false;  // a draw was left for when it is
    this.ctx = canvas ? canvas.getContext("2d") : null;
    this.buffer = null;  // a canvas for the copy at the strip's end (wrap)
    this.end = 0;  // device pixels: the drawn samples' right edge on the strip
    // The series' colours, read once (and again when the colour scheme changes):
    // getComputedStyle in every draw forced a style recalculation each frame.
    this.colors = null;
    matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => {
      this.colors = null;
      if (this.shown.length && !this.pending) this.schedule();
    });
    // Read while the page is idle, before any answer: read in the first draw, in a
    // frame whose DOM the views had just changed, they forced a style
    // recalculation of the whole page (13 ms at 4x CPU, in one of the answer's
    // first long frames).
    if (canvas) {
      whenIdle(() => {
        if (this.colors === null) this.colors = this.readColors();
      });
    }
    this.width = 0;  // the window's CSS size, from its last resize
    this.height = 0;
    const frame = canvas && canvas.parentElement;
    if (frame) {
      // Off the screen (on a phone the chart is below the panes) the chart is not
      // drawn (it was ~10 % of the demo's frame callbacks' time at 4x CPU over
      // md_32k, on a phone, for nothing seen). The samples are kept; it is drawn
      // once it shows.
      new IntersectionObserver((entries) => {
        this.inView = entries[entries.length - 1].isIntersecting;
        if (this.inView && this.stale && !this.pending) this.schedule();
      }).observe(frame);
      new ResizeObserver((entries) => {
        const box = entries[entries.length - 1].contentRect;
        this.width = box.width;
        this.height = box.height;
        if (this.shown.length && !this.pending) this.schedule();
      }).observe(frame);
    }
  }

  schedule() {
    this.stale = !this.inView;
    if (this.stale) return;
    this.pending = true;
    requestAnimationFrame(() => this.draw());
  }

  readColors() {
    const css = getComputedStyle(this.canvas);
    const color = (name) => css.getPropertyValue(name).trim() || "#888";
    return { shown: color("--chart-shown"), backlog: color("--chart-backlog"), lag: color("--chart-lag") };
  }

  push(shown, backlog, lag) {
    this.shown.push(shown);
    this.backlog.push(backlog);
    this.lag.push(lag);
    if (this.shown.length > this.keep) {
      this.shown.shift();
      this.backlog.shift();
      this.lag.shift();
    }
    this.pushed += 1;
    if (!this.pending && this.ctx) this.schedule();
  }

  draw(whole = false) {
    this.pending = false;
    const { canvas, ctx } = this;
    const dpr = window.devicePixelRatio || 1;
    // The window's CSS size from the last resize, not clientWidth (a layout read:
    // it would force the frame's layout of the whole page from this callback).
    if (!this.width || !this.height) return;
    const W = Math.round(this.width * dpr);  // the window, in device pixels
    const H = Math.round(this.height * dpr);
    if (canvas.width !== 2 * W || canvas.height !== H) {
      canvas.width = 2 * W;  // clears the canvas
      canvas.height = H;
      whole = true;
    }
    if (this.colors === null) {
      this.colors = this.readColors();
      whole = true;
    }
    // A whole number of device pixels per sample, about `size` samples across.
    const step = Math.max(1, Math.round(W / this.size));
    const visible = Math.ceil(W / step);
    // One sample more than fits: the lines enter from the left edge, as when shifted in.
    this.keep = Math.max(this.size, visible + 1);
    const shownMax = niceCeil(windowMax(this.shown, visible, 8));
    const backlogMax = niceCeil(windowMax(this.backlog, visible, 50));
    const lagMax = niceCeil(windowMax(this.lag, visible, 300));
    const old = this.scales;
    const rescaled = !old || shownMax !== old[0] || backlogMax !== old[1] || lagMax !== old[2];
    if (rescaled) {
      this.scales = [shownMax, backlogMax, lagMax];
      whole = true;
    }
    const added = this.pushed - this.drawnAt;
    this.drawnAt = this.pushed;
    const n = this.shown.length;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    if (whole || (added + 1) * step >= W) {
      this.fullDraws += 1;
      ctx.clearRect(0, 0, 2 * W, H);
      this.end = W;
      this.drawSamples(0, W, H, step, dpr);
    } else if (added > 0) {
      if (this.end + added * step > 2 * W) this.wrap(W, H);
      // Drawn from the last sample drawn before, so its line segments join the new ones.
      const x0 = this.end - step;
      const x1 = this.end + added * step;
      ctx.save();
      ctx.beginPath();
      ctx.rect(x0, 0, x1 - x0, H);
      ctx.clip();
      ctx.clearRect(x0, 0, x1 - x0, H);
      this.end = x1;
      this.drawSamples(Math.max(0, n - added - 1), W, H, step, dpr);
      ctx.restore();
    }
    // The strip moved left by what lies before the window's width at its end.
    canvas.style.transform = `translateX(${(W - this.end) / dpr}px)`;
    if (rescaled) {  // the legend's text changes with the scales, and only then
      $("chart-scale").textContent =
        `scales: ${shownMax} graphemes/frame · ${backlogMax} backlog · ${lagMax} ms lag`;
    }
  }

  // The strip's end is reached: what shows (its last W pixels) is copied to its
  // left half, the rest cleared. Through a second canvas: Chromium's recorded 2D
  // canvas resolved a canvas drawn onto itself only when it flushed, after the
  // new samples were drawn (they showed up moved too).
  wrap(W, H) {
    if (!this.buffer) this.buffer = document.createElement("canvas");
    const buffer = this.buffer;
    if (buffer.width !== W || buffer.height !== H) {
      buffer.width = W;
      buffer.height = H;
    }
    const bctx = buffer.getContext("2d");
    bctx.clearRect(0, 0, W, H);
    bctx.drawImage(this.canvas, this.end - W, 0, W, H, 0, 0, W, H);
    this.ctx.clearRect(0, 0, 2 * W, H);
    this.ctx.drawImage(buffer, 0, 0);
    this.end = W;
    this.copies += 1;
  }

  // What the window shows: the strip's pixels under it (tests, the curious).
  shownImage() {
    const W = this.canvas.width / 2;
    return this.ctx.getImageData(this.end - W, 0, W, this.canvas.height);
  }

  // Samples from index `from` on (the newest ending at the strip's `end`); the
  // lines start one sample earlier so that they join what is already drawn.
  drawSamples(from, W, H, step, dpr) {
    const { ctx, colors } = this;
    const maxShown = this.scales[0], maxBacklog = this.scales[1], maxLag = this.scales[2];
    const n = this.shown.length;
    const end = this.end;
    const left = (i) => end - (n - i) * step;  // sample i's column
    const first = Math.max(from, n - Math.ceil(W / step));
    ctx.fillStyle = colors.shown;
    const barWidth = step > 2 ? step - 1 : step;
    for (let i = first; i < n; i++) {
      const bh = (this.shown[i] / maxShown) * (H - 4 * dpr);
      ctx.fillRect(left(i), H - bh, barWidth, bh);
    }
    const line = (arr, max, stroke) => {
      ctx.strokeStyle = stroke;
      ctx.lineWidth = 1.5 * dpr;
      // Round joins stay within half the line's width of the sample's centre, so
      // the join that extending a line adds is inside the region redrawn.
      ctx.lineJoin = "round";
      ctx.beginPath();
      for (let i = Math.max(0, first - 1); i < n; i++) {
        const x = left(i) + step / 2;
        const y = H - 2 * dpr - (arr[i] / max) * (H - 6 * dpr);
        if (i === Math.max(0, first - 1)) ctx.moveTo(x, y);
        else ctx.lineTo(x, y);
      }
      ctx.stroke();
    };
    line(this.backlog, maxBacklog, colors.backlog);
    line(this.lag, maxLag, colors.lag);
  }
}

export const chart = new Chart($("chart"));

// ---- boot: js_shim/pyscript.js boots Python (from the memory snapshot when it
// matches) and loads PyScript, which runs the page's Python. A failed boot is
// shown here; an exception in the page's Python, by PyScript's error banner.
document.addEventListener("streampace:error", (ev) => {
  if (state.ready || !ev.detail || ev.detail.where !== "boot") return;
  console.error("streampace demo: boot failed", ev.detail.message);
  if (bootText) bootText.textContent = `The demo failed to start: ${ev.detail.message}`;
  if (bootBar) bootBar.hidden = true;
});
