"""A minimal Hugging Face Hub stand-in on 127.0.0.1: serves dataset files at
/datasets/<org>/<name>/resolve/<revision>/<file> the way `hf_hub_download` expects."""

from __future__ import annotations

import hashlib
from pathlib import Path

from aiohttp import web

from tests.loopback_app import LoopbackApp


class FakeHub(LoopbackApp):
    def __init__(self, files: dict[str, Path]):
        self.files = files
        self.requests: list[str] = []
        super().__init__()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def routes(self, app: web.Application) -> None:
        for method in ("HEAD", "GET"):
            app.router.add_route(method, "/datasets/{org}/{name}/resolve/{revision}/{file}", self._handle)

    async def _handle(self, request: web.Request) -> web.Response:
        name = request.match_info["file"]
        self.requests.append(f"{request.method} {name}")
        if name not in self.files:
            return web.Response(status=404, headers={"X-Error-Code": "EntryNotFound", "X-Error-Message": "no such file"})
        body = self.files[name].read_bytes()
        headers = {"X-Repo-Commit": "0" * 40, "ETag": f'"{hashlib.sha1(body).hexdigest()}"'}
        if request.method == "HEAD":
            return web.Response(headers={**headers, "Content-Length": str(len(body))})
        return web.Response(body=body, headers=headers)
