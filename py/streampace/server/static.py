"""Static files of the page, from a whitelist of paths under the repository root."""

from __future__ import annotations

import os
import zlib
from pathlib import Path

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response

from .headers import content_security_policy

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
# wheels/: where a page's own wheels go (pyscript.toml `packages`, micropip).
TOP_DIRS = ("py", "js_shim", "vendor", "examples", "demo", "wheels")
# A PyScript page: an HTML document with a <script type="py"> (PyScript's core
# needs 'unsafe-eval' to boot; every other response goes without it).
PYSCRIPT_MARKERS = (b'<script type="py"', b"<script type='py'")
PYSCRIPT_SNIFF_BYTES = 256 * 1024

# The npm runtime (vendor/pyodide/, vendor/pyscript/) is versioned by its
# package version: cache for good. Everything else, vendor/streampace.zip and
# vendor/snapshot/ included (rebuilt whenever our code changes), is revalidated:
# a returning visitor pays one 304 per file, never runs stale code.
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
IMMUTABLE_DIRS = (("vendor", "pyodide"), ("vendor", "pyscript"))
# scripts/setup_runtime writes `<file>.br` and `<file>.gz` next to the big runtime
# files; sent with Content-Encoding: br or gzip to clients that accept it (wasm
# 9.6 MB -> 3.1 MB br, 3.5 MB gzip). The snapshot exists only compressed: its
# `<name>.gz` is sent as it is (the page gunzips it) unless a `<name>.br` of the
# same bytes is there and the client takes brotli: then that, Content-Encoding: br.
GZIP_SUFFIX = ".gz"
BROTLI_SUFFIX = ".br"
_BROTLI_CHUNK = 1 << 18


def _not_found() -> Response:
    return PlainTextResponse("not found\n", status_code=404)


def _accepts(request: Request, coding: str) -> bool:
    """Whether Accept-Encoding takes `coding` (named or `*`, with q > 0)."""
    named: bool | None = None
    star = False
    for part in request.headers.get("accept-encoding", "").split(","):
        name, _, params = part.strip().partition(";")
        name = name.strip().lower()
        if name not in (coding, "*"):
            continue
        q = params.strip().lower()
        ok = not (q.startswith("q=") and q[2:].strip() in ("0", "0.0", "0.00", "0.000"))
        if name == coding:
            named = ok
        else:
            star = ok
    return star if named is None else named


def _gzip_trailer(path: Path) -> tuple[int, int]:
    """(CRC-32, ISIZE) from a gzip file's trailer: what it decodes to."""
    with path.open("rb") as f:
        f.seek(-8, os.SEEK_END)
        tail = f.read(8)
    return int.from_bytes(tail[:4], "little"), int.from_bytes(tail[4:], "little")


def _crc32(path: Path) -> tuple[int, int]:
    """(CRC-32, length mod 2**32) of a file, as a gzip trailer states them."""
    crc = 0
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            crc = zlib.crc32(chunk, crc)
    return crc, path.stat().st_size % (1 << 32)


def _brotli_decoded(path: Path) -> tuple[int, int] | None:
    """(CRC-32, length mod 2**32) of what a brotli file decodes to; None if it
    does not decode (or the brotli package is missing: then no .br is sent)."""
    try:
        import brotli  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        return None
    decoder = brotli.Decompressor()
    crc = length = 0
    try:
        with path.open("rb") as f:
            while chunk := f.read(_BROTLI_CHUNK):
                out = decoder.process(chunk)
                crc = zlib.crc32(out, crc)
                length += len(out)
        if not decoder.is_finished():
            return None
    except brotli.error:
        return None
    return crc, length % (1 << 32)


def _etag(stat: os.stat_result, variant: str = "") -> str:
    return f'"{stat.st_size:x}-{stat.st_mtime_ns:x}{variant}"'


def _etag_matches(request: Request, etag: str) -> bool:
    header = request.headers.get("if-none-match")
    if header is None:
        return False
    tags = {t.strip().removeprefix("W/") for t in header.split(",")}
    return "*" in tags or etag in tags


class StaticSite:
    def __init__(self, root: Path, precompressed: bool = True, brotli: bool = True) -> None:
        self.root = Path(os.path.realpath(root))
        # Switches for the boot benchmark (bench/boot.py compares the encodings).
        self.precompressed = precompressed
        self.brotli = brotli
        self._twin_checked: dict[tuple, bool] = {}
        self._pyscript_checked: dict[tuple, bool] = {}

    def _twin(self, target: Path, suffix: str) -> Path | None:
        """`target`'s precompressed twin (`<target>.gz`, `<target>.br`; for a
        `<name>.gz`, `<name>.br`) if it decodes to what `target` stands for: the
        CRC-32 and length must match (computed once per version of the pair).
        Content, not mtimes: an installed wheel has its own mtimes."""
        if target.suffix == suffix:
            return None
        packed = target.suffix == GZIP_SUFFIX  # the snapshot: stands for what it decodes to
        name = target.name.removesuffix(GZIP_SUFFIX) if packed else target.name
        sibling = target.with_name(name + suffix)
        try:
            src, twin = target.stat(), sibling.stat()
        except OSError:
            return None
        key = (str(target), suffix, src.st_mtime_ns, src.st_size, twin.st_mtime_ns, twin.st_size)
        fresh = self._twin_checked.get(key)
        if fresh is None:
            fresh = (twin.st_size >= 8
                     and Path(os.path.realpath(sibling)).parent == target.parent
                     and self._decodes_to(sibling, suffix,
                                          _gzip_trailer(target) if packed else _crc32(target)))
            if len(self._twin_checked) > 1024:
                self._twin_checked.clear()
            self._twin_checked[key] = fresh
        return sibling if fresh else None

    @staticmethod
    def _decodes_to(twin: Path, suffix: str, want: tuple[int, int]) -> bool:
        if suffix == GZIP_SUFFIX:
            return twin.stat().st_size >= 18 and _gzip_trailer(twin) == want
        return _brotli_decoded(twin) == want

    def _encoded(self, request: Request, target: Path) -> tuple[Path, str | None, bool]:
        """(the file to send, its Content-Encoding, whether the answer depends
        on Accept-Encoding)."""
        if not self.precompressed:
            return target, None, False
        varies = False
        for suffix, coding in ((BROTLI_SUFFIX, "br"), (GZIP_SUFFIX, "gzip")):
            twin = self._twin(target, suffix) if self.brotli or coding != "br" else None
            if twin is None:
                continue
            varies = True
            if _accepts(request, coding):
                return twin, coding, True
        return target, None, varies

    def _is_pyscript_page(self, target: Path, stat: os.stat_result) -> bool:
        """Whether `target` is an HTML page that boots PyScript (read once per version)."""
        if target.suffix.lower() != ".html":
            return False
        key = (str(target), stat.st_mtime_ns, stat.st_size)
        found = self._pyscript_checked.get(key)
        if found is None:
            with target.open("rb") as f:
                head = f.read(PYSCRIPT_SNIFF_BYTES)
            found = any(marker in head for marker in PYSCRIPT_MARKERS)
            if len(self._pyscript_checked) > 1024:
                self._pyscript_checked.clear()
            self._pyscript_checked[key] = found
        return found

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
        cache = IMMUTABLE if rel.parts[:2] in IMMUTABLE_DIRS else REVALIDATE
        headers = {"Cache-Control": cache}
        # The first look at a twin decodes it (the snapshot's .br: tens of ms).
        body, coding, varies = await run_in_threadpool(self._encoded, request, target)
        variant = f"-{coding}" if coding else ""
        if varies:
            # The representation depends on Accept-Encoding: caches must know.
            headers["Vary"] = "Accept-Encoding"
        if coding:
            headers["Content-Encoding"] = coding
        stat = body.stat()
        if self._is_pyscript_page(target, stat):
            headers["Content-Security-Policy"] = content_security_policy(
                request.headers.get("host"), pyscript=True)
        headers["ETag"] = _etag(stat, variant)
        if _etag_matches(request, headers["ETag"]):
            headers.pop("Content-Encoding", None)
            return Response(status_code=304, headers=headers)
        return FileResponse(body, media_type=media, headers=headers, stat_result=stat)
