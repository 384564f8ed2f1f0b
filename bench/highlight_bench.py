"""Syntax highlighter choice, measured in Pyodide: ours vs Pygments.

    .venv/bin/python bench/highlight_bench.py            # headless Chromium, 3 fresh pages

Per fresh page (a new Pyodide, packages unpacked from a local zip — offline,
as the page would load them): milliseconds to import the highlighter and make
it ready for the 13 languages, and milliseconds per line to highlight 200-line
samples (Python, JavaScript, JSON, shell, HTML, CSS, SQL, Rust, Go, C, Java,
YAML, diff), each block at once. Pygments runs as a chat UI would use it: a
lexer per language, `lex()` over the whole block. Bytes: the deflated archive
each would add to what the page downloads. Figures are measured, never asserted.
"""

from __future__ import annotations

import io
import json
import statistics
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "py"))

SAMPLES = {
    "python": "def f(x: int) -> str:\n    return f'{x}' if x > 0 else None  # c\n",
    "javascript": "const a = `x${y}`; // c\nfunction g() { return null }\n",
    "json": '{"key": "v", "n": -1.5e3, "ok": true, "z": null}\n',
    "shell": "export PATH=$HOME/bin:$PATH\necho \"hi $USER\" | grep -q x  # c\n",
    "html": '<a href="/x" class="y">t &amp; u</a>\n<!-- c -->\n',
    "css": ".a > b { color: #fff; margin: 0 auto; } /* c */\n",
    "sql": "SELECT id, count(*) FROM t WHERE name = 'x' -- c\n",
    "rust": "fn main() { let v: Vec<u8> = vec![1, 2]; println!(\"{}\", v.len()); }\n",
    "go": "func main() {\n\tfmt.Println(\"x\", nil) // c\n}\n",
    "c": "#include <stdio.h>\nint main(void) { printf(\"%d\\n\", 42); }\n",
    "java": "@Override\npublic static void main(String[] a) { return; }\n",
    "yaml": "name: app\nitems:\n  - key: 1  # c\n",
    "diff": "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-old\n+new\n",
}
PYGMENTS_NAMES = {"python": "python", "javascript": "javascript", "json": "json",
                  "shell": "bash", "html": "html", "css": "css", "sql": "sql", "rust": "rust",
                  "go": "go", "c": "c", "java": "java", "yaml": "yaml", "diff": "diff"}

PAGE = """<!doctype html><meta charset="utf-8"><title>highlight bench</title>
<script type="module">
const R = (window.hlBench = { phase: "boot" });
try {
  const { loadPyodide } = await import("/vendor/pyodide/pyodide.mjs");
  const which = new URLSearchParams(location.search).get("which");
  const [py, zip, src] = await Promise.all([
    loadPyodide({ indexURL: "/vendor/pyodide/" }),
    fetch("/bench/hl-" + which + ".zip").then((r) => r.arrayBuffer()),
    fetch("/bench/hl-page.py").then((r) => r.text()),
  ]);
  py.unpackArchive(zip, "zip", { extractDir: "/home/pyodide/hl" });
  py.runPython("import sys; sys.path.insert(0, '/home/pyodide/hl')");
  py.globals.set("WHICH", which);
  R.result = JSON.parse(py.runPython(src));
  R.phase = "ready";
} catch (err) { R.error = String((err && err.stack) || err); R.phase = "error"; }
</script>
"""

PAGE_PY = r'''
import json, time
SAMPLES = json.loads(SAMPLES_JSON)
NAMES = json.loads(NAMES_JSON)
t0 = time.perf_counter()
if WHICH == "ours":
    from streampace.markdown.highlight import highlight
    def run(lang, code):
        return highlight(lang, code)
    ready = {lang: lang for lang in SAMPLES}
else:
    from pygments import lex
    from pygments.lexers import get_lexer_by_name
    ready = {lang: get_lexer_by_name(NAMES[lang]) for lang in SAMPLES}
    def run(lang, code):
        return list(lex(code, ready[lang]))
t1 = time.perf_counter()
per_line = {}
for lang, sample in SAMPLES.items():
    code = sample * max(1, 200 // sample.count("\n"))
    lines = code.count("\n")
    run(lang, code)  # warm
    t = time.perf_counter()
    for _ in range(3):
        run(lang, code)
    per_line[lang] = (time.perf_counter() - t) * 1000 / 3 / lines
json.dumps({"import_ready_ms": (t1 - t0) * 1000, "per_line_ms": per_line})
'''


def _zip(which: str) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        if which == "ours":
            src = ROOT / "py"
            for path in sorted((src / "streampace" / "markdown").glob("*.py")):
                if path.name in ("highlight.py", "tree.py", "__init__.py"):
                    rel = path.relative_to(src).as_posix()
                    text = "" if path.name == "__init__.py" else path.read_text()
                    zf.writestr(rel, text)
            zf.writestr("streampace/__init__.py", "")
        else:
            import pygments

            base = Path(pygments.__file__).parent
            for path in sorted(base.rglob("*.py")):
                if "__pycache__" not in path.parts:
                    zf.write(path, path.relative_to(base.parent).as_posix())
    return buf.getvalue()


def main() -> None:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.responses import HTMLResponse, PlainTextResponse, Response
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    from bench.browser_bench import ThreadedServer, chromium

    zips = {w: _zip(w) for w in ("ours", "pygments")}
    page_py = PAGE_PY.replace(
        "json.loads(SAMPLES_JSON)", f"json.loads({json.dumps(json.dumps(SAMPLES))})").replace(
        "json.loads(NAMES_JSON)", f"json.loads({json.dumps(json.dumps(PYGMENTS_NAMES))})")

    async def page(_r: Any) -> Response:
        return HTMLResponse(PAGE)

    async def py(_r: Any) -> Response:
        return PlainTextResponse(page_py)

    def zip_route(which: str) -> Any:
        async def serve(_r: Any) -> Response:
            return Response(zips[which], media_type="application/zip")
        return serve

    app = Starlette(routes=[
        Route("/bench/hl-page", page), Route("/bench/hl-page.py", py),
        Route("/bench/hl-ours.zip", zip_route("ours")),
        Route("/bench/hl-pygments.zip", zip_route("pygments")),
        Mount("/", StaticFiles(directory=str(ROOT))),
    ])
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = ThreadedServer(uvicorn.Config(app, host="127.0.0.1", port=port,
                                           log_level="warning"))
    server.start()
    out: dict[str, Any] = {"zip_bytes": {w: len(z) for w, z in zips.items()}, "runs": {}}
    try:
        with chromium() as driver:
            for which in ("ours", "pygments", "ours", "pygments", "ours", "pygments"):
                driver.get(f"http://127.0.0.1:{port}/bench/hl-page?which={which}")
                deadline = time.monotonic() + 180
                while time.monotonic() < deadline:
                    phase = driver.execute_script(
                        "return window.hlBench && window.hlBench.phase")
                    if phase in ("ready", "error"):
                        break
                    time.sleep(0.1)
                if phase != "ready":
                    raise RuntimeError(driver.execute_script("return window.hlBench.error"))
                out["runs"].setdefault(which, []).append(
                    driver.execute_script("return window.hlBench.result"))
    finally:
        server.stop()
    summary = {}
    for which, runs in out["runs"].items():
        per_line = [statistics.median(r["per_line_ms"].values()) for r in runs]
        worst = [max(r["per_line_ms"].values()) for r in runs]
        summary[which] = {
            "import_ready_ms": [round(r["import_ready_ms"], 1) for r in runs],
            "median_ms_per_line": [round(v, 4) for v in per_line],
            "worst_language_ms_per_line": [round(v, 4) for v in worst],
            "zip_bytes": out["zip_bytes"][which],
        }
    out["summary"] = summary
    path = ROOT / "bench" / "results" / "highlight.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
