"""The package version, from pyproject.toml via the installed metadata."""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["package_version"]

UNKNOWN = "0+unknown"


def package_version() -> str:
    """The installed distribution's version; in a bare checkout, pyproject.toml's."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("streampace")
    except PackageNotFoundError:
        pass
    # Not installed (e.g. the page's copy of the package, or PYTHONPATH=py).
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    try:
        found = re.search(r'(?m)^version = "([^"]+)"', pyproject.read_text(encoding="utf-8"))
    except OSError:
        return UNKNOWN
    return found.group(1) if found else UNKNOWN
