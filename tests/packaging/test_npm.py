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
from browser_harness import BOOT_TIMEOUT_S, record_figure, requested_urls, wait_for
from install_harness import ROOT, pyproject_version, static_server, streampace_serve

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>npm embed</title></head>
<body>
<div id="answer"></div>
<script type="module" src="/node_modules/streampace/js_shim/streampace.js"
        data-stream="{stream}" data-target="#answer"></script>
</body></html>
"""


@pytest.fixture(scope="module")
def tarball(runtime_laid_out: None, tmp_path_factory: Any) -> Path:
    if shutil.which("npm") is None:
        pytest.fail("npm is missing")
    out = tmp_path_factory.mktemp("npm-dist")
    subprocess.run([sys.executable, str(ROOT / "scripts" / "build_npm"), "--out", str(out)],
                   check=True, capture_output=True, timeout=300)
    (tgz,) = out.glob("streampace-*.tgz")
    return tgz


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
            "js_shim/boot.js", "vendor/snapshot/manifest.json",
            "vendor/streampace.zip", "vendor/streampace-version.js", "vendor/runtime-config.mjs",
            "vendor/pyodide/pyodide.mjs", "vendor/pyodide/pyodide.asm.wasm",
            "vendor/pyodide/python_stdlib.zip", "vendor/pyodide/pyodide-lock.json"} <= names
    # Generic: whatever setup_runtime laid out ships (a boot snapshot included) ...
    vendor = ROOT / "vendor"
    laid_out = {p.relative_to(ROOT).as_posix() for p in vendor.rglob("*")
                if p.is_file() and not any(part.startswith(".") for part in p.parts)
                and not {"test-wheels", "pyscript"} & set(p.relative_to(vendor).parts)}
    assert laid_out <= names
    # ... and nothing of the demo, the server or the tests; PyScript is for PyScript pages only.
    extra = {n for n in names if not n.startswith(("js_shim/", "vendor/"))}
    assert extra == {"README.md", "package.json"}
    assert not [n for n in names if n.startswith("vendor/pyscript/") or n.endswith(".py")
                or "test-wheels" in n or n.split("/")[-1].startswith(".")]
    record_figure("npm tarball size (bytes)", tarball.stat().st_size)


def test_readme_shows_the_one_tag(site: Path) -> None:
    readme = (site / "node_modules" / "streampace" / "README.md").read_text()
    assert ('<script type="module" src="/node_modules/streampace/js_shim/streampace.js"'
            in readme)


@pytest.mark.browser
def test_tag_from_node_modules_boots_and_streams_offline(site: Path, driver: Any,
                                                         tmp_path: Path) -> None:
    with static_server(site) as page_origin:
        command = [sys.executable, "-m", "streampace", "serve", "--speed", "4",
                   "--allow-origin", page_origin]
        with streampace_serve(command, tmp_path) as stream_url:
            stream_ws = stream_url.replace("http://", "ws://") + "ws/sessions/npm-page"
            (site / "index.html").write_text(PAGE.format(stream=stream_ws))
            assert httpx.get(page_origin + "/node_modules/streampace/vendor/"
                             "pyodide/pyodide.asm.wasm").status_code == 200
            requested_urls(driver)
            driver.get(page_origin + "/")
            wait_for(driver, "return !!(window.streampace && window.streampace.instances.length"
                             " && window.streampace.instances[0].controller)", BOOT_TIMEOUT_S)
            assert driver.execute_script("return window.streampace.version") == \
                pyproject_version()
            driver.execute_script(
                "window.streampace.send({type: 'run', prompt: 'from node_modules',"
                " scenario: 'fast'})")
            wait_for(driver, "const v = document.querySelector('#answer .sp-view');"
                             " return v && v.getAttribute('data-run') === 'finished'", 90)
            shown = driver.execute_script(
                "return [...document.querySelectorAll('#answer .sp-message .sp-text')]"
                ".map(n => n.textContent)")
            assert shown[0] == "from node_modules" and len(shown[-1]) > 100
            urls = requested_urls(driver)
    assert any(u.endswith("/node_modules/streampace/vendor/pyodide/pyodide.asm.wasm")
               for u in urls)
    outside = [u for u in urls if not u.startswith((page_origin + "/", "data:", "blob:"))]
    assert outside == [stream_ws]  # the one stream the page asked for, nothing else
