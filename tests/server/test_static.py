"""Serving the page: whitelist, MIME types, cache and security headers, traversal."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import httpx
import pytest

from .conftest import RunningServer, Serve


@pytest.fixture
def site(tmp_path: Path, serve: Serve) -> RunningServer:
    root = tmp_path / "root"
    (root / "py" / "streampace").mkdir(parents=True)
    (root / "js_shim").mkdir()
    (root / "vendor" / "pyodide").mkdir(parents=True)
    (root / "examples").mkdir()
    (root / "demo").mkdir()
    (root / "demo" / "demo.css").write_text("body{}\n")
    (root / "index.html").write_text("<!doctype html><title>t</title>")
    (root / "pyscript.toml").write_text('name = "t"\n')
    (root / "pyproject.toml").write_text("secret-ish\n")
    (root / ".env").write_text("KEY=1\n")
    (root / "py" / "streampace" / "x.py").write_text("print('hi')\n")
    (root / "js_shim" / "boot.mjs").write_text("export {};\n")
    (root / "js_shim" / "old.js").write_text("1;\n")
    (root / "vendor" / "pyodide" / "pyodide.asm.wasm").write_bytes(b"\0asm\1\0\0\0")
    (root / "vendor" / "pyodide" / "pyodide-lock.json").write_text("{}")
    (root / "vendor" / "w-1.0-py3-none-any.whl").write_bytes(b"PK\3\4")
    (root / "vendor" / "python_stdlib.zip").write_bytes(b"PK\3\4")
    outside = tmp_path / "outside.txt"
    outside.write_text("must not be served\n")
    os.symlink(outside, root / "examples" / "escape.txt")
    os.symlink(tmp_path, root / "examples" / "up")
    (root / "examples" / "inside.txt").write_text("fine\n")
    (root / "examples" / "mine.html").write_text(
        '<!doctype html><script type="py" config="./pyscript.toml">import streampace</script>')
    (root / "examples" / "embed.html").write_text(
        '<!doctype html><script type="module" src="../js_shim/streampace.js"></script>')
    (root / "wheels").mkdir()
    (root / "wheels" / "mine-1.0-py3-none-any.whl").write_bytes(b"PK\3\4")
    server = serve("demo", root=root)
    return server


def _raw_get(server: RunningServer, target: str) -> int:
    """Send the request line exactly as given (no client-side normalisation)."""
    host, port = server.url.split("//")[1].strip("/").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(f"GET {target} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n"
                  .encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return int(data.split(b" ", 2)[1])


@pytest.mark.parametrize(
    ("path", "ctype"),
    [
        ("/", "text/html"),
        ("/index.html", "text/html"),
        ("/pyscript.toml", "text/plain"),
        ("/py/streampace/x.py", "text/plain"),
        ("/js_shim/boot.mjs", "text/javascript"),
        ("/js_shim/old.js", "text/javascript"),
        ("/vendor/pyodide/pyodide.asm.wasm", "application/wasm"),
        ("/vendor/pyodide/pyodide-lock.json", "application/json"),
        ("/vendor/w-1.0-py3-none-any.whl", "application/zip"),
        ("/vendor/python_stdlib.zip", "application/zip"),
        ("/examples/inside.txt", "text/plain"),
        ("/demo/demo.css", "text/css"),
        ("/wheels/mine-1.0-py3-none-any.whl", "application/zip"),
    ],
)
def test_whitelisted_files_with_types_and_headers(
        site: RunningServer, path: str, ctype: str) -> None:
    r = httpx.get(site.url.rstrip("/") + path)
    assert r.status_code == 200
    assert r.headers["content-type"].startswith(ctype)
    assert r.headers["x-content-type-options"] == "nosniff"
    csp = r.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "'wasm-unsafe-eval'" in csp
    host = site.url.split("//")[1].strip("/")
    assert f"ws://{host}" in csp and "object-src 'none'" in csp
    assert "*" not in csp.replace("'", "")
    if path.startswith(("/vendor/pyodide/", "/vendor/pyscript/")):
        assert "immutable" in r.headers["cache-control"]
        assert "max-age=31536000" in r.headers["cache-control"]
    else:
        assert r.headers["cache-control"] == "no-cache"


def _script_src(site: RunningServer, path: str) -> str:
    csp = httpx.get(site.url.rstrip("/") + path).headers.get_list("content-security-policy")
    assert len(csp) == 1, csp  # one policy: a second could only narrow the first
    return next(d for d in csp[0].split(";") if d.strip().startswith("script-src"))


def test_only_pyscript_pages_may_eval(site: RunningServer) -> None:
    # PyScript's core builds helpers with Function(...): its pages need 'unsafe-eval'.
    assert "'unsafe-eval'" in _script_src(site, "/examples/mine.html")
    for path in ("/", "/examples/embed.html", "/js_shim/old.js", "/pyscript.toml"):
        assert "'unsafe-eval'" not in _script_src(site, path), path


@pytest.mark.parametrize(
    "target",
    [
        "/py/../pyproject.toml",
        "/py/%2e%2e/pyproject.toml",
        "/py/%2E%2E/%2E%2E/etc/passwd",
        "/py/..%2fpyproject.toml",
        "/py/%2e%2e%2fpyproject.toml",
        "/%2e%2e/%2e%2e/etc/passwd",
        "//etc/passwd",
        "/etc/passwd",
        "/py/..\\pyproject.toml",
        "/py/%5c..%5cpyproject.toml",
        "/pyproject.toml",
        "/.env",
        "/py/./streampace/x.py",
        "/py//streampace/x.py",
        "/py/streampace/x.py%00.html",
        "/examples/escape.txt",
        "/examples/up/outside.txt",
        "/examples/",
        "/py",
        "/nothing-here.html",
        "/vendor/../pyproject.toml",
    ],
)
def test_traversal_and_non_whitelisted_paths_are_404(site: RunningServer, target: str) -> None:
    assert _raw_get(site, target) == 404


def test_other_methods_refused(site: RunningServer) -> None:
    r = httpx.post(site.url + "index.html", content=b"x")
    assert r.status_code in (404, 405)


def test_missing_root_files_are_404_not_500(serve: Serve, tmp_path: Path) -> None:
    server = serve("demo", root=tmp_path)
    assert httpx.get(server.url).status_code == 404
    assert httpx.get(server.url + "vendor/pyodide/pyodide.mjs").status_code == 404


# -- caching and precompressed files (scripts/setup_runtime writes the .gz) ----
@pytest.fixture
def gz_site(tmp_path: Path, serve: Serve) -> tuple[RunningServer, bytes]:
    import gzip

    root = tmp_path / "root"
    pyo = root / "vendor" / "pyodide"
    pyo.mkdir(parents=True)
    (root / "index.html").write_text("<!doctype html><title>t</title>")
    wasm = b"\0asm\1\0\0\0" + bytes(range(256)) * 64
    (pyo / "pyodide.asm.wasm").write_bytes(wasm)
    gz = pyo / "pyodide.asm.wasm.gz"
    gz.write_bytes(gzip.compress(wasm, mtime=0))
    os.utime(gz, (1, 1))  # mtimes do not matter (an installed wheel has its own)
    # Stale .gz files: same length, other content; other length.
    (pyo / "pyodide.asm.mjs").write_text("export const x = 1;\n")
    (pyo / "pyodide.asm.mjs.gz").write_bytes(gzip.compress(b"export const y = 1;\n", mtime=0))
    (pyo / "pyodide.mjs").write_text("export const z = 1;\n")
    (pyo / "pyodide.mjs.gz").write_bytes(gzip.compress(b"export const old = 1;\n" * 9))
    (root / "vendor" / "snapshot").mkdir()
    (root / "vendor" / "snapshot" / "manifest.json").write_text('{"key": "k"}')
    (root / "vendor" / "streampace.zip").write_bytes(b"PK\3\4")
    return serve("demo", root=root), wasm


# The heap a snapshot holds (it exists only compressed: .snap.gz, .snap.br).
SNAP_HEAP = bytes(range(256)) * 300 + b"\0" * 4096


@pytest.fixture
def br_site(tmp_path: Path, serve: Serve) -> tuple[RunningServer, bytes]:
    """Runtime files with .br and .gz twins (fresh and stale) and a snapshot."""
    import gzip

    import brotli  # type: ignore[import-untyped,unused-ignore]

    root = tmp_path / "root"
    pyo, snap = root / "vendor" / "pyodide", root / "vendor" / "snapshot"
    pyo.mkdir(parents=True)
    snap.mkdir()
    (root / "index.html").write_text("<!doctype html><title>t</title>")
    wasm = b"\0asm\1\0\0\0" + bytes(range(256)) * 64
    for name, body in (("pyodide.asm.wasm", wasm), ("pyodide.mjs", b"export const z = 1;\n" * 50)):
        (pyo / name).write_bytes(body)
        (pyo / f"{name}.gz").write_bytes(gzip.compress(body, mtime=0))
        (pyo / f"{name}.br").write_bytes(brotli.compress(body))
    # Stale .br twins: other content of the same length; not brotli at all.
    (pyo / "pyodide.asm.mjs").write_text("export const x = 1;\n")
    (pyo / "pyodide.asm.mjs.gz").write_bytes(gzip.compress(b"export const x = 1;\n", mtime=0))
    (pyo / "pyodide.asm.mjs.br").write_bytes(brotli.compress(b"export const y = 1;\n"))
    (pyo / "python_stdlib.zip").write_bytes(b"PK\5\6" + bytes(18))
    (pyo / "python_stdlib.zip.br").write_bytes(b"not brotli at all")
    (snap / "streampace.snap.gz").write_bytes(gzip.compress(SNAP_HEAP, mtime=0))
    (snap / "streampace.snap.br").write_bytes(brotli.compress(SNAP_HEAP))
    return serve("demo", root=root), wasm


@pytest.mark.parametrize(("accept", "coding"), [
    ("gzip, deflate, br, zstd", "br"), ("br;q=1.0", "br"), ("*", "br"),
    ("gzip, br;q=0", "gzip"), ("gzip", "gzip"), ("identity", None), ("*;q=0", None)])
def test_brotli_is_sent_to_clients_that_accept_it_else_gzip_else_the_file(
        br_site: tuple[RunningServer, bytes], accept: str, coding: str | None) -> None:
    server, wasm = br_site
    url = server.url.rstrip("/") + "/vendor/pyodide/pyodide.asm.wasm"
    r = httpx.get(url, headers={"Accept-Encoding": accept})
    assert r.headers.get("content-encoding") == coding
    assert r.headers["vary"] == "Accept-Encoding"
    assert r.headers["content-type"] == "application/wasm"
    assert r.content == wasm  # httpx decodes br (the brotli package) and gzip
    if coding:
        assert int(r.headers["content-length"]) < len(wasm)
    again = httpx.get(url, headers={"Accept-Encoding": accept, "If-None-Match": r.headers["etag"]})
    assert again.status_code == 304 and "content-encoding" not in again.headers


@pytest.mark.parametrize(("path", "coding"), [("pyodide.asm.mjs", "gzip"),
                                              ("python_stdlib.zip", None)])
def test_a_stale_or_broken_br_is_never_sent(
        br_site: tuple[RunningServer, bytes], path: str, coding: str | None) -> None:
    server, _ = br_site
    url = server.url.rstrip("/") + "/vendor/pyodide/" + path
    r = httpx.get(url, headers={"Accept-Encoding": "gzip, br"})
    assert r.headers.get("content-encoding") == coding
    plain = httpx.get(url, headers={"Accept-Encoding": "identity"})
    assert r.content == plain.content


def test_the_snapshot_is_sent_as_brotli_or_as_its_gz_file(
        br_site: tuple[RunningServer, bytes], tmp_path: Path) -> None:
    import gzip

    server, _ = br_site
    url = server.url.rstrip("/") + "/vendor/snapshot/streampace.snap.gz"
    # A browser that takes brotli: the heap, Content-Encoding: br (decoded by it).
    br = httpx.get(url, headers={"Accept-Encoding": "gzip, br"})
    assert br.headers["content-encoding"] == "br" and br.headers["vary"] == "Accept-Encoding"
    assert br.content == SNAP_HEAP
    # Otherwise the .gz file itself, no Content-Encoding: the page gunzips it.
    for accept in ("gzip", "identity"):
        gz = httpx.get(url, headers={"Accept-Encoding": accept})
        assert "content-encoding" not in gz.headers
        assert gzip.decompress(gz.content) == SNAP_HEAP
    assert gz.headers["etag"] != br.headers["etag"]
    # A .br left from another snapshot is not sent for this one.
    snap = tmp_path / "root" / "vendor" / "snapshot"
    (snap / "streampace.snap.gz").write_bytes(gzip.compress(SNAP_HEAP[::-1], mtime=0))
    stale = httpx.get(url, headers={"Accept-Encoding": "gzip, br"})
    assert "content-encoding" not in stale.headers
    assert gzip.decompress(stale.content) == SNAP_HEAP[::-1]


def test_precompressed_gzip_is_sent_to_clients_that_accept_it(
        gz_site: tuple[RunningServer, bytes]) -> None:
    server, wasm = gz_site
    url = server.url.rstrip("/") + "/vendor/pyodide/pyodide.asm.wasm"
    r = httpx.get(url, headers={"Accept-Encoding": "gzip"})
    assert r.headers["content-encoding"] == "gzip"
    assert r.headers["content-type"] == "application/wasm"
    assert r.headers["vary"] == "Accept-Encoding"
    assert int(r.headers["content-length"]) < len(wasm)
    assert r.content == wasm  # httpx decodes it
    plain = httpx.get(url, headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers
    assert plain.content == wasm and plain.headers["etag"] != r.headers["etag"]
    refused = httpx.get(url, headers={"Accept-Encoding": "gzip;q=0"})
    assert "content-encoding" not in refused.headers


@pytest.mark.parametrize(("name", "text"), [("pyodide.asm.mjs", "export const x = 1;\n"),
                                          ("pyodide.mjs", "export const z = 1;\n")])
def test_a_stale_gz_is_never_sent(
        gz_site: tuple[RunningServer, bytes], name: str, text: str) -> None:
    server, _ = gz_site
    r = httpx.get(server.url.rstrip("/") + "/vendor/pyodide/" + name,
                  headers={"Accept-Encoding": "gzip"})
    assert "content-encoding" not in r.headers
    assert r.text == text


@pytest.mark.parametrize("path", ["/vendor/streampace.zip", "/vendor/snapshot/manifest.json",
                                  "/vendor/pyodide/pyodide.asm.wasm", "/index.html"])
def test_revalidation_answers_304_and_rebuilt_files_are_never_immutable(
        gz_site: tuple[RunningServer, bytes], path: str) -> None:
    server, _ = gz_site
    url = server.url.rstrip("/") + path
    first = httpx.get(url, headers={"Accept-Encoding": "gzip"})
    assert first.status_code == 200
    again = httpx.get(url, headers={"Accept-Encoding": "gzip",
                                    "If-None-Match": first.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    assert again.headers["etag"] == first.headers["etag"]
    immutable = "immutable" in first.headers["cache-control"]
    # Our package and its snapshot change with the code: always revalidated.
    assert immutable == path.startswith("/vendor/pyodide/")
    other = httpx.get(url, headers={"If-None-Match": '"something-else"'})
    assert other.status_code == 200
