"""A small web search recording and servers for the web search tests: a page server on loopback (pages,
redirects, a large page) and a fake SerpAPI (payloads by query, 429s on demand, the key it was sent)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aiohttp import web

from tests.loopback_app import LoopbackApp

PAGE_HTML = ("<html><head><title>Founders</title><style>p {color: red}</style><script>var x = 1;</script></head>"
             "<body><h1>Founders</h1><p>The company was founded by <b>Ada Example</b> in 1999.</p>"
             "<p>Caf\u00e9 \u00e0 la carte</p></body></html>")


def organic(n: int, snippet: bool = True) -> list[dict[str, Any]]:
    results = []
    for index in range(1, n + 1):
        result = {"position": index, "title": f"Result {index} \u00e9", "link": f"https://site{index}.example/page"}
        if snippet:
            result["snippet"] = f"Snippet {index} with 'quotes'"
        results.append(result)
    return results


def recording(extra_searches: list[dict[str, Any]] = (), extra_pages: dict[str, Any] | None = None  # type: ignore[assignment]
              ) -> dict[str, Any]:
    return {
        "searches": [
            {"keywords": "company founder", "region": "wt-wt", "payload": {"organic_results": organic(12)}},
            {"keywords": "company founder", "region": "de-de", "payload": {"organic_results": organic(2)}},
            {"keywords": "empty answer", "region": "wt-wt", "payload": {"search_metadata": {"status": "Success"}}},
            {"keywords": "no snippet", "region": "wt-wt", "payload": {"organic_results": organic(1, snippet=False)}},
            *extra_searches,
        ],
        "pages": {
            "https://site1.example/page": {"text": PAGE_HTML},
            "https://gone.example/page": {"text": "missing", "status": 404},
            **(extra_pages or {}),
        },
    }


def write_recording(folder: Path, data: dict[str, Any] | None = None) -> Path:
    path = folder / "recording.json"
    path.write_text(json.dumps(data or recording(), ensure_ascii=False), encoding="utf-8")
    return path


class PageServer(LoopbackApp):
    """/page (HTML), /big (larger than any small cap), /to/<port> (a redirect to another loopback port),
    /private (a redirect to a private address), /hop (a redirect to /page on this server)."""

    def __init__(self, big_bytes: int = 200_000):
        super().__init__()
        self.big_bytes = big_bytes
        self.hits: list[str] = []
        self.host_headers: list[str] = []

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/page", self._page)
        app.router.add_get("/big", self._big)
        app.router.add_get("/to/{port}", self._to)
        app.router.add_get("/private", self._private)
        app.router.add_get("/hop", self._hop)

    async def _page(self, request: web.Request) -> web.Response:
        self.hits.append("/page")
        self.host_headers.append(request.headers.get("Host", ""))
        return web.Response(text=PAGE_HTML, content_type="text/html", charset="utf-8")

    async def _big(self, request: web.Request) -> web.Response:
        self.hits.append("/big")
        return web.Response(text="x" * self.big_bytes, content_type="text/plain")

    async def _to(self, request: web.Request) -> web.Response:
        self.hits.append("/to")
        raise web.HTTPFound(f"http://127.0.0.1:{request.match_info['port']}/page")

    async def _private(self, request: web.Request) -> web.Response:
        self.hits.append("/private")
        raise web.HTTPFound("http://10.1.2.3/page")

    async def _hop(self, request: web.Request) -> web.Response:
        self.hits.append("/hop")
        raise web.HTTPFound("/page")


class FakeSerpApi(LoopbackApp):
    """GET /search: the payload for the query `q` (organic results by default), with its HTTP status from `statuses`
    (200 by default); `busy` 429s first."""

    def __init__(self, payloads: dict[str, dict[str, Any]] | None = None, busy: int = 0,
                 statuses: dict[str, int] | None = None):
        super().__init__()
        self.payloads = payloads or {}
        self.statuses = statuses or {}
        self.busy = busy
        self.params: list[dict[str, str]] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/search"

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/search", self._search)

    async def _search(self, request: web.Request) -> web.Response:
        self.params.append(dict(request.query))
        if self.busy > 0:
            self.busy -= 1
            return web.json_response({"error": "Your account has run out of searches (429)."}, status=429)
        query = request.query.get("q", "")
        payload = self.payloads.get(query, {"organic_results": organic(3)})
        return web.json_response(payload, status=self.statuses.get(query, 200))
