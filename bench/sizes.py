"""What users download: `python -m bench.sizes`.

Builds the two packages from this checkout as tests/packaging does — the wheel
(`python -m build --wheel --no-isolation`) and the npm package of the tag
(scripts/build_npm, `npm pack`) — and reports their sizes beside the runtime
files every page loads (vendor/streampace.zip, the boot snapshot as gzip and brotli). Needs the
runtime laid out (scripts/setup_runtime) and npm; a package that cannot be
built is reported as missing, not guessed.

Results: bench/results/sizes.md and sizes.json. Figures, never assertions.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.report import md_table, write_json

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
# Runtime files a page fetches on every cold boot, beside the packages.
RUNTIME_FILES = ("vendor/streampace.zip", "vendor/snapshot/streampace.snap.gz",
                 "vendor/snapshot/streampace.snap.br")


def build_wheel(out: Path, timeout_s: float = 600) -> Path:
    """This checkout's wheel, built into `out` (the packaging tests install it too)."""
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation",
                    "--outdir", str(out), str(ROOT)],
                   check=True, capture_output=True, timeout=timeout_s)
    (wheel,) = out.glob("streampace-*.whl")
    return wheel


def build_npm(out: Path, timeout_s: float = 600) -> Path:
    """The tag's npm tarball (scripts/build_npm), packed into `out`."""
    subprocess.run([sys.executable, str(ROOT / "scripts" / "build_npm"), "--out", str(out)],
                   check=True, capture_output=True, timeout=timeout_s)
    (tarball,) = out.glob("streampace-*.tgz")
    return tarball


def measure() -> dict[str, Any]:
    """Each artefact's size in bytes (None where it could not be built or is absent),
    with the reason when missing."""
    sizes: dict[str, int | None] = {}
    missing: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="sp-sizes-") as tmp:
        builders = {"wheel": build_wheel, "npm tarball": build_npm}
        for name, build in builders.items():
            if name == "npm tarball" and shutil.which("npm") is None:
                sizes[name], missing[name] = None, "npm is not installed"
                continue
            try:
                sizes[name] = build(Path(tmp) / name.replace(" ", "-")).stat().st_size
            except (subprocess.SubprocessError, ValueError) as exc:
                sizes[name], missing[name] = None, f"build failed: {exc}"
    for rel in RUNTIME_FILES:
        path = ROOT / rel
        sizes[rel] = path.stat().st_size if path.is_file() else None
        if sizes[rel] is None:
            missing[rel] = "absent: run scripts/setup_runtime"
    return {"bytes": sizes, "missing": missing}


def markdown(data: dict[str, Any]) -> str:
    rows = []
    for name, size in data["bytes"].items():
        shown = f"{size:,}" if size is not None else "—"
        mib = f"{size / (1 << 20):.2f}" if size is not None else "—"
        rows.append([name, shown, mib, data["missing"].get(name, "")])
    return ("# Sizes\n\nWhat users download, built from this checkout (`python -m bench.sizes`)."
            "\n\n" + md_table(["artefact", "bytes", "MiB", "missing"], rows) + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    data = measure()
    args.out.mkdir(parents=True, exist_ok=True)
    write_json(args.out / "sizes.json", data)
    text = markdown(data)
    (args.out / "sizes.md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
