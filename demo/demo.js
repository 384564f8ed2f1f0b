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
class Chart {
  constructor(canvas, size = 360) {
    this.canvas = canvas;
    this.size = size;
    this.shown = [];
    this.backlog = [];
    this.lag = [];
    this.pending = false;
    this.ctx = canvas ? canvas.getContext("2d") : null;
    // The series' colours, read once (and again when the colour scheme changes):
    // getComputedStyle in every draw forced a style recalculation each frame.
    this.colors = null;
    matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => {
      this.colors = null;
    });
    this.scale = "";
    this.width = 0;
    this.height = 0;
    if (canvas) {
      new ResizeObserver((entries) => {
        const box = entries[entries.length - 1].contentRect;
        this.width = box.width;
        this.height = box.height;
        if (this.shown.length && !this.pending) this.schedule();
      }).observe(canvas);
    }
  }

  schedule() {
    this.pending = true;
    requestAnimationFrame(() => this.draw());
  }

  readColors() {
    const css = getComputedStyle(this.canvas);
    const color = (name) => css.getPropertyValue(name).trim() || "#888";
    return { shown: color("--chart-shown"), backlog: color("--chart-backlog"), lag: color("--chart-lag") };
  }

  push(shown, backlog, lag) {
    for (const [arr, v] of [[this.shown, shown], [this.backlog, backlog], [this.lag, lag]]) {
      arr.push(v);
      if (arr.length > this.size) arr.shift();
    }
    if (!this.pending && this.ctx) this.schedule();
  }

  draw() {
    this.pending = false;
    const { canvas, ctx } = this;
    const dpr = window.devicePixelRatio || 1;
    // The canvas's CSS size from the last resize, not clientWidth (a layout read:
    // it would force the frame's layout of the whole page from this callback).
    const w = this.width;
    const h = this.height;
    if (!w || !h) return;
    if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
      canvas.width = Math.round(w * dpr);
      canvas.height = Math.round(h * dpr);
    }
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    if (this.colors === null) this.colors = this.readColors();
    const colors = this.colors;
    ctx.clearRect(0, 0, w, h);
    const n = this.size;
    const dx = w / n;
    const maxShown = Math.max(8, ...this.shown);
    const maxBacklog = Math.max(50, ...this.backlog);
    const maxLag = Math.max(300, ...this.lag);
    const off = n - this.shown.length;
    ctx.fillStyle = colors.shown;
    this.shown.forEach((v, i) => {
      const bh = (v / maxShown) * (h - 4);
      ctx.fillRect((off + i) * dx, h - bh, Math.max(1, dx - 0.5), bh);
    });
    const line = (arr, max, stroke) => {
      ctx.strokeStyle = stroke;
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      arr.forEach((v, i) => {
        const x = (off + i) * dx + dx / 2;
        const y = h - 2 - (v / max) * (h - 6);
        if (i === 0) ctx.moveTo(x, y);
        else ctx.lineTo(x, y);
      });
      ctx.stroke();
    };
    line(this.backlog, maxBacklog, colors.backlog);
    line(this.lag, maxLag, colors.lag);
    const scale =
      `scales: ${maxShown} graphemes/frame · ${maxBacklog} backlog · ${Math.round(maxLag)} ms lag`;
    if (scale !== this.scale) {  // a DOM write only when the text changes
      this.scale = scale;
      $("chart-scale").textContent = scale;
    }
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
