"""An aiohttp app served on 127.0.0.1 from its own thread and event loop, for test servers."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from aiohttp import web

SHUTDOWN_GRACE_S = 0.5


class LoopbackApp:
    """Subclasses add their routes in `routes(app)`; `port` is known once the context is entered."""

    def __init__(self) -> None:
        self.port = 0
        self.bind_port = 0  # 0: any free port; set before entering to come back on a known one
        self.bind_host = "127.0.0.1"  # another loopback address (127.0.0.2) can stand in for another host
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve_forever, daemon=True)

    def routes(self, app: web.Application) -> None:
        raise NotImplementedError

    def __enter__(self) -> Any:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError(f"{type(self).__name__} did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    def _serve_forever(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._main())
        self._loop.close()

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        app = web.Application(client_max_size=64 * 1024 * 1024)
        self.routes(app)
        # At exit, a request its client gave up on (a scripted hang) is cancelled after this grace instead of
        # keeping the test waiting until it would have answered.
        runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=SHUTDOWN_GRACE_S)
        await runner.setup()
        site = web.TCPSite(runner, self.bind_host, self.bind_port, backlog=1024)
        await site.start()
        self.port = runner.addresses[0][1]  # the port the system gave (bind_port 0)
        self._ready.set()
        await self._stop.wait()
        await runner.cleanup()
