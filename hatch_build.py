"""Hatch build hook: the browser side goes into the package.

A wheel carries the page files (index.html, pyscript.toml, demo/ but demo.py,
js_shim/, examples/) and the runtime that scripts/setup_runtime laid out under
vendor/ (Pyodide, the PyScript files our pages load, vendor/streampace.zip, the
runtime config, the boot snapshot when there is one) as `streampace/_site/...`,
so `streampace serve` works from an installed package (server/config.py:
default_root). The sdist carries vendor/ as well (it is gitignored, so not picked
up by default), so a wheel built from the sdist is complete too. Editable
installs get nothing extra: they serve the checkout.

vendor/ is taken whole (minus hidden files and test leftovers) so that what
setup_runtime adds later ships without touching this file.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

PAGE_FILES = ("index.html", "pyscript.toml")
PAGE_DIRS = ("demo", "js_shim", "examples", "vendor")
# Without these the page cannot boot: refuse to build a wheel that would 404.
REQUIRED = (
    "vendor/pyodide/pyodide.mjs",
    "vendor/pyodide/pyodide.asm.wasm",
    "vendor/pyodide/python_stdlib.zip",
    "vendor/pyscript/core.js",
    "vendor/streampace.zip",
    "vendor/streampace-version.js",
)
SKIP_DIRS = {"__pycache__", "test-wheels", "node_modules"}
# The demo's Python ships inside vendor/streampace.zip (as streampace_demo); no
# page fetches the source file. tests/markdown caches the CommonMark spec in vendor/.
SKIP_FILES = {"demo/demo.py", "vendor/commonmark-spec.json"}
SITE_PREFIX = "streampace/_site/"


def site_files(root: Path, dirs: tuple[str, ...] = PAGE_DIRS) -> list[str]:
    """Relative paths of the page files under ``root``, sorted."""
    out = [name for name in PAGE_FILES if (root / name).is_file()]
    for top in dirs:
        for base, subdirs, files in os.walk(root / top):
            subdirs[:] = sorted(d for d in subdirs if d not in SKIP_DIRS and not d.startswith("."))
            for name in sorted(files):
                if name.startswith(".") or name.endswith((".pyc", ".tmp")):
                    continue
                rel = (Path(base) / name).relative_to(root).as_posix()
                if rel not in SKIP_FILES:
                    out.append(rel)
    return sorted(out)


def check_runtime(root: Path, version: str) -> None:
    missing = [rel for rel in REQUIRED if not (root / rel).is_file()]
    if missing:
        raise RuntimeError(
            f"streampace build: {', '.join(missing)} missing; run scripts/setup_runtime "
            "(needs npm) before building, so the package carries the browser runtime"
        )
    stamp = (root / "vendor" / "streampace-version.js").read_text(encoding="utf-8")
    found = re.search(r'version = "([^"]+)"', stamp)
    if found is None or found.group(1) != version:
        raise RuntimeError(
            f"streampace build: vendor/streampace-version.js says "
            f"{found.group(1) if found else '?'}, pyproject.toml says {version}; "
            "run scripts/setup_runtime"
        )


class SiteFilesHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name == "wheel" and version == "editable":
            return
        root = Path(self.root)
        check_runtime(root, self.metadata.version)
        if self.target_name == "wheel":
            for rel in site_files(root):
                build_data["force_include"][str(root / rel)] = SITE_PREFIX + rel
        elif self.target_name == "sdist":
            for rel in site_files(root, ("vendor",)):
                if rel.startswith("vendor/"):
                    build_data["force_include"][str(root / rel)] = rel
