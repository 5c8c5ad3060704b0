"""A minimal Hugging Face Hub stand-in on 127.0.0.1: serves dataset files at
/datasets/<org>/<name>/resolve/<revision>/<file> the way `hf_hub_download` expects."""

from __future__ import annotations

import asyncio
import hashlib
import threading
from pathlib import Path

from aiohttp import web


class FakeHub:
    def __init__(self, files: dict[str, Path]):
        self.files = files
        self.requests: list[str] = []
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.port = 0

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> FakeHub:
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    def _run(self) -> None:
        self._loop.run_until_complete(self._main())

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        app = web.Application()
        for method in ("HEAD", "GET"):
            app.router.add_route(method, "/datasets/{org}/{name}/resolve/{revision}/{file}", self._handle)
        runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._ready.set()
        await self._stop.wait()
        await runner.cleanup()

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
