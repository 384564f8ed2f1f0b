"""Static files of the page, from a whitelist of paths under the repository root."""

from __future__ import annotations

import os
from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response

__all__ = ["StaticSite", "MIME_TYPES"]

MIME_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".map": "application/json",
    ".toml": "text/plain; charset=utf-8",  # PyScript fetches and parses it itself
    ".py": "text/plain; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".md": "text/plain; charset=utf-8",
    ".jsonl": "text/plain; charset=utf-8",
    ".wasm": "application/wasm",
    ".whl": "application/zip",  # a wheel is a zip archive; Pyodide reads the bytes
    ".zip": "application/zip",
    ".tar": "application/x-tar",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".woff2": "font/woff2",
}

TOP_FILES = ("index.html", "pyscript.toml", "favicon.ico")
TOP_DIRS = ("py", "js_shim", "vendor", "examples", "demo")

# The vendored runtime is versioned by its npm package version: cache for good.
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"


def _not_found() -> Response:
    return PlainTextResponse("not found\n", status_code=404)


class StaticSite:
    def __init__(self, root: Path) -> None:
        self.root = Path(os.path.realpath(root))

    def resolve(self, url_path: str) -> Path | None:
        """The file for a decoded URL path, or None if it is not ours to serve."""
        if "\x00" in url_path or "\\" in url_path:
            return None
        parts = url_path.lstrip("/").split("/") if url_path.strip("/") else ["index.html"]
        for part in parts:
            # No empty, "." or ".." segments, no hidden files (.git, .env, ...).
            if not part or part.startswith("."):
                return None
        if len(parts) == 1:
            if parts[0] not in TOP_FILES:
                return None
        elif parts[0] not in TOP_DIRS:
            return None
        allowed_base = self.root / parts[0] if len(parts) > 1 else self.root
        candidate = Path(os.path.realpath(self.root.joinpath(*parts)))
        base = Path(os.path.realpath(allowed_base))
        # realpath resolves symlinks: a link that leads outside its directory is refused.
        if not candidate.is_relative_to(base) or not candidate.is_relative_to(self.root):
            return None
        if not candidate.is_file():
            return None
        if "__pycache__" in candidate.parts:
            return None
        return candidate

    async def handle(self, request: Request) -> Response:
        if request.method not in ("GET", "HEAD"):
            return PlainTextResponse("method not allowed\n", status_code=405,
                                     headers={"Allow": "GET, HEAD"})
        path = request.path_params.get("path", "")
        if path == "favicon.ico" and not (self.root / "favicon.ico").is_file():
            return Response(status_code=204)  # browsers ask for it; keep their console clean
        target = self.resolve(path)
        if target is None:
            return _not_found()
        rel = target.relative_to(self.root)
        media = MIME_TYPES.get(target.suffix.lower(), "application/octet-stream")
        cache = IMMUTABLE if rel.parts[0] == "vendor" else REVALIDATE
        return FileResponse(target, media_type=media, headers={"Cache-Control": cache})
