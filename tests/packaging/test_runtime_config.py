"""pyscript.toml is the one configuration of every boot path: scripts/setup_runtime
checks its [streampace] table and writes it into vendor/runtime-config.mjs, which
js_shim/boot.js (embed, PyScript) and scripts/make_snapshot.mjs import."""

from __future__ import annotations

import json
import re
import runpy
import tomllib
from pathlib import Path
from typing import Any

import pytest

from .install_harness import ROOT


@pytest.fixture(scope="module")
def setup_runtime() -> dict[str, Any]:
    """scripts/setup_runtime's functions and constants (main() is not run)."""
    return runpy.run_path(str(ROOT / "scripts" / "setup_runtime"))


def test_runtime_config_is_pyscript_toml(runtime_laid_out: None) -> None:
    table = tomllib.loads((ROOT / "pyscript.toml").read_text(encoding="utf-8"))["streampace"]
    text = (ROOT / "vendor" / "runtime-config.mjs").read_text(encoding="utf-8")
    frozen = re.search(r"Object\.freeze\((\{.*\})\);", text, re.S)
    assert frozen is not None, "runtime-config.mjs freezes no object"
    written = json.loads(frozen.group(1))
    assert {"pyodide": table["pyodide"], "package": table["package"],
            "packagePath": table["package_path"], "snapshot": table["snapshot"]} == {
        k: written[k] for k in ("pyodide", "package", "packagePath", "snapshot")}
    pyodide = json.loads((ROOT / "node_modules" / "pyodide" / "package.json").read_text())
    assert written["pyodideVersion"] == pyodide["version"]
    # Nothing else of ours names these places: they come from the config.
    for path in ("js_shim/boot.js", "js_shim/pyscript.js", "scripts/make_snapshot.mjs"):
        source = (ROOT / path).read_text(encoding="utf-8")
        for value in (table["package_path"], table["package"], "streampace.snap.gz"):
            assert value not in source, (path, value)


@pytest.mark.parametrize(("table", "complaint"), [
    ('pyodide = "vendor/pyodide/"\npackage = "vendor/streampace.zip"\n'
     'snapshot = "vendor/snapshot/"\n', "needs exactly"),
    ('pyodide = "../elsewhere/"\npackage = "vendor/streampace.zip"\n'
     'package_path = "/home/pyodide/streampace.zip"\nsnapshot = "vendor/snapshot/"\n',
     "pyodide"),
    ('pyodide = "vendor/pyodide/"\npackage = "vendor/streampace.zip/"\n'
     'package_path = "/home/pyodide/streampace.zip"\nsnapshot = "vendor/snapshot/"\n',
     "package"),
    ('pyodide = "vendor/pyodide/"\npackage = "vendor/streampace.zip"\n'
     'package_path = "streampace.zip"\nsnapshot = "vendor/snapshot/"\n', "package_path"),
])
def test_setup_refuses_a_bad_streampace_table(setup_runtime: dict[str, Any], tmp_path: Path,
                                              table: str, complaint: str) -> None:
    config = tmp_path / "pyscript.toml"
    config.write_text('interpreter = "./js_shim/pyscript.js"\n[streampace]\n' + table)
    read = setup_runtime["read_page_config"]
    read.__globals__["PAGE_CONFIG"] = config
    try:
        with pytest.raises(SystemExit, match=complaint):
            read()
    finally:
        read.__globals__["PAGE_CONFIG"] = ROOT / "pyscript.toml"


def test_the_package_archive_is_stored_and_sent_as_brotli(runtime_laid_out: None) -> None:
    """Our archive is a stored zip with .br and .gz twins of the same bytes, so
    `streampace serve` sends it as brotli (the first visit's 10 MB needs it) and
    every server hands the page the archive the snapshot was made with."""
    import gzip
    import zipfile

    import brotli  # type: ignore[import-untyped,unused-ignore]

    archive = ROOT / "vendor" / "streampace.zip"
    with zipfile.ZipFile(archive) as zf:
        kinds = {info.compress_type for info in zf.infolist()}
    assert kinds == {zipfile.ZIP_STORED}
    body = archive.read_bytes()
    packed = archive.with_name(archive.name + ".br").read_bytes()
    assert brotli.decompress(packed) == body
    assert len(packed) < len(body) // 3
    assert gzip.decompress(archive.with_name(archive.name + ".gz").read_bytes()) == body
