"""The npm package of the embed tag: scripts/build_npm (npm pack), installed from the
tarball into a temporary directory, served by a plain static server; the stream comes
from `streampace serve` on another port with the page's Origin allowed. In headless
Chromium the tag boots and shows a run, with no request outside the page's origin
besides that stream."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.sizes import build_npm
from tests.browser.browser_harness import BOOT_TIMEOUT_S, requested_urls, wait_for

from .install_harness import ROOT, pyproject_version, static_server, streampace_serve

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>npm embed</title>
<link rel="stylesheet" href="/node_modules/streampace/js_shim/streampace.css">
</head>
<body>
<div id="answer"></div>
<script type="module" src="/node_modules/streampace/js_shim/streampace.js"
        data-target="#answer"></script>
<script type="module">
  // One conversation per visitor (README: choosing session ids).
  const id = sessionStorage.getItem("session") || crypto.randomUUID();
  sessionStorage.setItem("session", id);
  streampace.connect("{stream}" + id);
</script>
</body></html>
"""

# A recorded agent run for `serve --source replay:`: the same ids every run, as many
# agents do; an answer with a long code line and right-to-left text.
ANSWER = ("Here is a line of code:\n\n```python\n"
          + "value = compute(" + ", ".join(f"argument_{i}=option_{i}" for i in range(7))
          + ")\n```\n\nوهذه فقرة باللغة العربية.\n")


def recording(path: Path) -> Path:
    pieces = [ANSWER[i:i + 12] for i in range(0, len(ANSWER), 12)]
    events = [{"type": "RUN_STARTED", "threadId": "t", "runId": "r", "timestamp": 0},
              {"type": "TEXT_MESSAGE_START", "messageId": "a1", "role": "assistant",
               "timestamp": 0}]
    events += [{"type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": piece,
                "timestamp": 40 * (i + 1)} for i, piece in enumerate(pieces)]
    end = 40 * (len(pieces) + 1)
    events += [{"type": "TEXT_MESSAGE_END", "messageId": "a1", "timestamp": end},
               {"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "timestamp": end}]
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def tarball(runtime_laid_out: None, tmp_path_factory: Any) -> Path:
    if shutil.which("npm") is None:
        pytest.fail("npm is missing")
    out = tmp_path_factory.mktemp("npm-dist")
    return build_npm(out, timeout_s=300)


@pytest.fixture(scope="module")
def site(tarball: Path, tmp_path_factory: Any) -> Path:
    """A temporary directory with the tarball installed (npm install, offline)."""
    site = tmp_path_factory.mktemp("npm-site")
    (site / "package.json").write_text('{"name": "host-page", "private": true}\n')
    subprocess.run(["npm", "install", "--offline", "--no-audit", "--no-fund",
                    "--loglevel=error", str(tarball)],
                   cwd=site, check=True, capture_output=True, timeout=300)
    return site


def test_tarball_holds_exactly_what_the_tag_needs(tarball: Path) -> None:
    with tarfile.open(tarball) as tar:
        names = {m.name.removeprefix("package/") for m in tar.getmembers() if m.isfile()}
        manifest = json.load(tar.extractfile("package/package.json"))  # type: ignore[arg-type]
    assert manifest["name"] == "streampace" and manifest["version"] == pyproject_version()
    assert {"README.md", "package.json", "js_shim/streampace.js", "js_shim/bridge.js",
            "js_shim/store.js", "js_shim/kept.js", "js_shim/lean_check.js",
            "js_shim/boot.js", "js_shim/streampace.css", "vendor/snapshot/manifest.json",
            "vendor/streampace.zip", "vendor/streampace-version.js", "vendor/runtime-config.mjs",
            "vendor/pyodide/pyodide.mjs", "vendor/pyodide/pyodide.asm.wasm",
            "vendor/pyodide/python_stdlib.zip", "vendor/pyodide/pyodide-lock.json"} <= names
    # Generic: whatever setup_runtime laid out ships (a boot snapshot included) ...
    vendor = ROOT / "vendor"
    laid_out = {p.relative_to(ROOT).as_posix() for p in vendor.rglob("*")
                if p.is_file() and not any(part.startswith(".") for part in p.parts)
                and not {"test-wheels", "pyscript"} & set(p.relative_to(vendor).parts)
                and p.name != "commonmark-spec.json"
                and not (p.suffix in (".gz", ".br") and p.with_suffix("").is_file())
                and p.name != "streampace.snap.br"}
    assert laid_out <= names
    # No precompressed twin (a static server sends the file itself; only
    # `streampace serve` uses them) and no test cache; the snapshot is only .gz.
    assert not [n for n in names if n.endswith((".gz", ".br"))
                and n[:-3] in names]
    assert "vendor/commonmark-spec.json" not in names
    assert "vendor/snapshot/streampace.snap.gz" in names
    assert not [n for n in names if n.endswith(".br")]
    # ... and nothing of the demo, the server or the tests; PyScript is for PyScript pages only.
    extra = {n for n in names if not n.startswith(("js_shim/", "vendor/"))}
    assert extra == {"README.md", "package.json"}
    assert not [n for n in names if n.startswith("vendor/pyscript/") or n.endswith(".py")
                or "test-wheels" in n or n.split("/")[-1].startswith(".")]
    # Its size, beside the wheel's: `python -m bench.sizes`.


def test_readme_shows_the_one_tag(site: Path) -> None:
    readme = (site / "node_modules" / "streampace" / "README.md").read_text()
    assert ('<script type="module" src="/node_modules/streampace/js_shim/streampace.js"'
            in readme)


@pytest.mark.browser
def test_tag_from_node_modules_boots_and_streams_offline(site: Path, driver: Any,
                                                         tmp_path: Path) -> None:
    with static_server(site) as page_origin:
        # This page picks its own (random) session ids: the operator allows it.
        command = [sys.executable, "-m", "streampace", "serve", "--allow-origin", page_origin,
                   "--source", f"replay:{recording(tmp_path / 'agent.jsonl')}",
                   "--client-session-ids"]
        with streampace_serve(command, tmp_path) as stream_url:
            streams = stream_url.replace("http://", "ws://") + "ws/sessions/"
            (site / "index.html").write_text(PAGE.replace("{stream}", streams))
            assert httpx.get(page_origin + "/node_modules/streampace/vendor/"
                             "pyodide/pyodide.asm.wasm").status_code == 200
            requested_urls(driver)
            driver.get(page_origin + "/")
            wait_for(driver, "return !!(window.streampace && window.streampace.instances.length"
                             " && window.streampace.instances[0].controller)", BOOT_TIMEOUT_S)
            assert driver.execute_script("return window.streampace.version") == \
                pyproject_version()
            driver.execute_script(
                "window.__ends = []; window.__errors = [];"
                "document.addEventListener('streampace:run-end', (e) => __ends.push(e.detail));"
                "document.addEventListener('streampace:error', (e) => __errors.push(e.detail));")
            for n, prompt in enumerate(("first question", "second question"), 1):
                driver.execute_script("window.streampace.send({type: 'run', prompt: arguments[0]})",
                                      prompt)
                wait_for(driver, "return window.__ends.length === arguments[0]", 60, n)
            shown = driver.execute_script(
                "return [...document.querySelectorAll('#answer .sp-message')]"
                ".map((m) => [m.dataset.role, m.querySelector('.sp-text').textContent])")
            # The agent's ids are the same both runs: two answers, each once.
            answer = [m for m in shown if m[0] == "assistant"]
            assert [m[1] for m in shown if m[0] == "user"] == ["first question",
                                                               "second question"]
            assert len(answer) == 2 and answer[0] == answer[1] and "compute(" in answer[0][1]
            assert [e["status"] for e in driver.execute_script("return window.__ends")] == [
                "finished", "finished"]
            # Stop: a cancelled run is "Stopped", not an error.
            driver.execute_script("window.streampace.send({type: 'run', prompt: 'stop me'})")
            wait_for(driver, "return document.querySelector('#answer .sp-view')"
                             ".dataset.run === 'running'", 30)
            driver.execute_script("window.streampace.send({type: 'cancel'})")
            wait_for(driver, "return window.__ends.length === 3", 30)
            assert driver.execute_script("return window.__ends[2].status") == "stopped"
            assert driver.execute_script(
                "return document.querySelector('#answer .sp-status').textContent") == "Stopped"
            assert driver.execute_script("return window.__errors") == []
            # The stylesheet from node_modules applies; the page keeps its width.
            look = driver.execute_script(
                "const v = document.querySelector('#answer .sp-view');"
                "const d = document.documentElement;"
                "const s = getComputedStyle(v);"
                "return [s.getPropertyValue('--sp-measure').trim(), s.backgroundColor,"
                " d.scrollWidth <= d.clientWidth,"
                " document.querySelector('#answer p[dir=auto]') !== null]")
            # (the view is see-through since issue 27: the host's background shows)
            assert look == ["46rem", "rgba(0, 0, 0, 0)", True, True]
            session = driver.execute_script("return sessionStorage.getItem('session')")
            urls = requested_urls(driver)
    assert any(u.endswith("/node_modules/streampace/vendor/pyodide/pyodide.asm.wasm")
               for u in urls)
    outside = [u for u in urls if not u.startswith((page_origin + "/", "data:", "blob:"))]
    assert outside == [streams + session]  # the one stream the page asked for, nothing else
