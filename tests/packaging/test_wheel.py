"""The wheel: built from this checkout, installed into a fresh venv outside the repository,
`streampace serve` run from a temporary directory serves the page from the installed
package; in headless Chromium the demo boots and streams a run, and the embed tag works
on the example page."""

from __future__ import annotations

import runpy
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.browser.browser_harness import BOOT_TIMEOUT_S, requested_urls, wait_for

from .install_harness import ROOT, InstalledWheel, pyproject_version, streampace_serve

# Page files a wheel must carry (the runtime list mirrors hatch_build.REQUIRED).
MUST_CARRY = (
    "index.html", "demo/demo.js", "js_shim/streampace.js", "js_shim/bridge.js",
    "js_shim/boot.js", "js_shim/streampace.css", "vendor/snapshot/manifest.json",
    "examples/embed.html", "js_shim/store.js", "js_shim/kept.js", "js_shim/lean_check.js",
    "vendor/pyodide/pyodide.mjs",
    "vendor/pyodide/pyodide.asm.wasm", "vendor/pyodide/python_stdlib.zip",
    "vendor/pyodide/pyodide.asm.wasm.br", "vendor/snapshot/streampace.snap.br",
    "vendor/pyodide/pyodide-lock.json", "vendor/pyscript/core.js", "vendor/streampace.zip",
    "vendor/streampace-version.js", "vendor/runtime-config.mjs", "pyscript.toml",
    "js_shim/pyscript.js", "examples/pyscript.html", "examples/pyscript.toml",
)


def site_root(wheel: InstalledWheel) -> Path:
    out = subprocess.run([str(wheel.python), "-c",
                          "from streampace.server.config import default_root; "
                          "print(default_root())"],
                         check=True, capture_output=True, text=True, cwd="/")
    return Path(out.stdout.strip())


def test_wheel_carries_the_page_and_the_runtime(installed_wheel: InstalledWheel) -> None:
    names = set(zipfile.ZipFile(installed_wheel.wheel).namelist())
    missing = [rel for rel in MUST_CARRY if f"streampace/_site/{rel}" not in names]
    assert missing == []
    vendor = ROOT / "vendor"
    skipped = runpy.run_path(str(ROOT / "hatch_build.py"))["SKIP_FILES"]
    laid_out = {p.relative_to(ROOT).as_posix() for p in vendor.rglob("*")
                if p.is_file() and not any(part.startswith(".") for part in p.parts)
                and "test-wheels" not in p.parts} - skipped
    # Generic: whatever setup_runtime laid out ships (a boot snapshot included).
    assert {f"streampace/_site/{rel}" for rel in laid_out} <= names
    assert not [n for n in names if "__pycache__" in n or "/." in n or "test-wheels" in n]
    assert not {f"streampace/_site/{rel}" for rel in skipped} & names
    # Of PyScript, only the files its pages load (scripts/setup_runtime PYSCRIPT_FILES).
    pyscript = {n.removeprefix("streampace/_site/vendor/pyscript/").removesuffix(".gz")
                .removesuffix(".br")
                for n in names if n.startswith("streampace/_site/vendor/pyscript/")}
    assert pyscript == set(runpy.run_path(str(ROOT / "scripts" / "setup_runtime"))
                           ["PYSCRIPT_FILES"])
    # Its size, beside the npm package's: `python -m bench.sizes`.


def test_installed_package_serves_from_any_directory(installed_wheel: InstalledWheel,
                                                     tmp_path: Path) -> None:
    root = site_root(installed_wheel)
    assert root.is_relative_to(installed_wheel.venv), root
    where = subprocess.run([str(installed_wheel.python), "-c",
                            "import streampace, starlette, uvicorn, regex; print(streampace."
                            "__file__, starlette.__file__, uvicorn.__file__, regex.__file__)"],
                           cwd=tmp_path, check=True, capture_output=True, text=True)
    assert all(Path(f).is_relative_to(installed_wheel.venv) for f in where.stdout.split())
    version = subprocess.run([str(installed_wheel.streampace), "--version"], cwd=tmp_path,
                             check=True, capture_output=True, text=True).stdout.strip()
    assert version == f"streampace {pyproject_version()}"
    module_version = subprocess.run([str(installed_wheel.python), "-c",
                                     "import streampace; print(streampace.__version__)"],
                                    cwd=tmp_path, check=True, capture_output=True, text=True)
    assert module_version.stdout.strip() == pyproject_version()
    with streampace_serve([str(installed_wheel.streampace), "serve"], tmp_path) as url:
        for rel in ("", "js_shim/streampace.js", "vendor/streampace.zip", "examples/embed.html",
                    "vendor/pyodide/pyodide.asm.wasm"):
            got = httpx.get(url + rel)
            assert got.status_code == 200, rel
            assert got.content == (root / (rel or "index.html")).read_bytes(), rel


@pytest.mark.browser
def test_installed_demo_boots_and_streams_and_the_embed_example_works(
        installed_wheel: InstalledWheel, tmp_path: Path, driver: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    with streampace_serve([str(installed_wheel.streampace), "serve", "--speed", "4"],
                          tmp_path) as url:
        origin = url.rstrip("/")
        ws_origin = origin.replace("http://", "ws://")
        requested_urls(driver)
        driver.get(url)
        wait_for(driver, "return !!(window.streampaceDemo && window.streampaceDemo.ready)",
                 BOOT_TIMEOUT_S)
        assert driver.execute_script("return window.streampaceDemo.mode") == "server"
        prompt = driver.find_element(By.ID, "prompt")
        prompt.clear()
        prompt.send_keys("from the installed wheel")
        prompt.send_keys(Keys.CONTROL, Keys.ENTER)
        wait_for(driver, "const v = document.querySelector('#paced .sp-view');"
                         " return v && v.getAttribute('data-run') === 'finished'", 90)
        paced = driver.execute_script(
            "return [...document.querySelectorAll('#paced .sp-message .sp-text')]"
            ".map(n => n.textContent).join('\\n')")
        assert "from the installed wheel" in paced and len(paced) > 200

        driver.get(url + "examples/embed.html")
        wait_for(driver, "return !document.getElementById('ask-button').disabled",
                 BOOT_TIMEOUT_S)
        assert driver.execute_script("return window.streampace.version") == pyproject_version()
        driver.find_element(By.ID, "ask-button").click()
        wait_for(driver, "return document.getElementById('embed-status').textContent"
                         " === 'Answered.'", 90)
        shown = driver.execute_script(
            "return [...document.querySelectorAll('#answer .sp-message .sp-text')]"
            ".map(n => n.textContent)")
        assert shown[0] == "Which tea suits a cold morning?" and len(shown[-1]) > 100
        urls = requested_urls(driver)
        assert any(u.endswith("/vendor/pyodide/pyodide.asm.wasm") for u in urls)
        foreign = [u for u in urls
                   if not u.startswith((origin + "/", ws_origin + "/", "data:", "blob:"))]
        assert foreign == []
