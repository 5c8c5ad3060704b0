"""Gradio's own front-end files (its JavaScript and CSS chunks, fonts) served from memory.

A first visit fetches ~90 of them before the page can draw the board. Gradio serves each from disk through worker
threads and compresses it again on every request (~3 ms of the server's one event loop each, most of a first
visit's server time). This middleware answers them from memory instead, compressed once, and lets browsers keep
the chunks whose names carry a content hash for good. Everything else goes on to Gradio untouched."""

from __future__ import annotations

import hashlib
import mimetypes
import re
from dataclasses import dataclass
from pathlib import Path

import anyio
import brotli  # type: ignore[import-untyped]  # Brotli ships no type information, and typeshed has no stubs for it
import gradio
from starlette.types import ASGIApp, Receive, Scope, Send

# URL prefix -> the folder of Gradio's package it serves (what Gradio's own /assets and /static routes serve).
FRONTEND = Path(gradio.__file__).parent / "templates" / "frontend"
FOLDERS = {"/assets/": FRONTEND / "assets", "/static/": FRONTEND / "static"}
MAX_FILE_BYTES = 8 * 1024 * 1024  # Plotly's chunk is 4.6 MB
MAX_CACHED_BYTES = 96 * 1024 * 1024
COMPRESSED_TYPES = ("text/", "application/javascript", "application/json", "image/svg+xml")
BROTLI_QUALITY = 5  # once per file: close to the best ratio, a few ms for the largest chunk
# A bundler's content hash in the name (`Index-Akn07EZk2.js`): the name changes whenever the content does.
HASHED_NAME = re.compile(r"-[A-Za-z0-9_]{8,}\.(?:js|css|woff2?)$")
FOREVER = "public, max-age=31536000, immutable"
REVALIDATE = "public, max-age=0, must-revalidate"


@dataclass(frozen=True)
class CachedFile:
    body: bytes
    compressed: bytes | None  # brotli, when that is smaller
    content_type: str
    etag: str
    cache_control: str


def cached_file(path: Path, url_path: str) -> CachedFile:
    body = path.read_bytes()
    content_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    if content_type.startswith("text/") or content_type == "application/javascript":
        content_type += "; charset=utf-8"
    compressed = brotli.compress(body, quality=BROTLI_QUALITY) if content_type.startswith(COMPRESSED_TYPES) else None
    return CachedFile(body, compressed if compressed is not None and len(compressed) < len(body) else None,
                      content_type, '"' + hashlib.sha1(body).hexdigest()[:20] + '"',
                      FOREVER if HASHED_NAME.search(url_path) else REVALIDATE)


def file_under(folder: Path, relative: str) -> Path | None:
    """The regular file `relative` names inside `folder`, or None (outside it, missing, a folder, a link out)."""
    if not relative or "\x00" in relative or relative.startswith("/"):
        return None
    try:
        path = (folder / relative).resolve()
        root = folder.resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    if root not in path.parents or not path.is_file():
        return None
    return path


class FrontendFiles:
    """ASGI middleware: GET and HEAD of Gradio's front-end files from memory (see the module's docstring)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.files: dict[str, CachedFile | None] = {}  # None: not one of ours (too big, missing), Gradio answers
        self.cached_bytes = 0

    def lookup(self, url_path: str) -> CachedFile | None:
        if url_path in self.files:
            return self.files[url_path]
        found: CachedFile | None = None
        for prefix, folder in FOLDERS.items():
            if url_path.startswith(prefix):
                path = file_under(folder, url_path[len(prefix):])
                if path is not None and path.stat().st_size <= MAX_FILE_BYTES:
                    found = cached_file(path, url_path)
                break
        size = len(found.body) + len(found.compressed or b"") if found else 0
        if found is None or self.cached_bytes + size <= MAX_CACHED_BYTES:
            self.files[url_path] = found
            self.cached_bytes += size
        return found

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http" or scope.get("method") not in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        path = str(scope.get("path") or "")
        root = str(scope.get("root_path") or "")
        if root and path.startswith(root):
            path = path[len(root):]
        if not path.startswith(tuple(FOLDERS)):
            await self.app(scope, receive, send)
            return
        # A file's first request reads and compresses it in a worker thread (the largest takes a moment).
        found = self.files[path] if path in self.files else await anyio.to_thread.run_sync(self.lookup, path)
        if found is None:
            await self.app(scope, receive, send)
            return
        request_headers = {key.decode("latin-1").lower(): value.decode("latin-1")
                           for key, value in scope.get("headers") or []}
        headers = [(b"cache-control", found.cache_control.encode()), (b"etag", found.etag.encode()),
                   (b"vary", b"Accept-Encoding")]
        if found.etag in request_headers.get("if-none-match", ""):
            await send({"type": "http.response.start", "status": 304, "headers": headers})
            await send({"type": "http.response.body", "body": b""})
            return
        use_brotli = found.compressed is not None and "br" in request_headers.get("accept-encoding", "")
        body = found.compressed if use_brotli and found.compressed is not None else found.body
        headers += [(b"content-type", found.content_type.encode()), (b"content-length", str(len(body)).encode())]
        if use_brotli:
            headers.append((b"content-encoding", b"br"))
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body if scope["method"] == "GET" else b""})
