"""A scripted OpenAI-compatible chat server on 127.0.0.1 for tests and benchmarks: real HTTP (aiohttp,
on its own thread and event loop), injectable latency and faults (status codes with Retry-After and
a chosen error message, hangs, malformed bodies, bodies dripped a byte at a time), and counters
(requests per prompt, peak in-flight requests, headers, bytes dripped)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.loopback_app import LoopbackApp


@dataclass
class Fault:
    """What to do instead of answering: an HTTP status (with `message` as its error text), a hang, a
    malformed body, or the answer sent one byte every `drip` seconds."""

    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    hang: float = 0.0
    malformed: bool = False
    message: str | None = None
    drip: float = 0.0


def prompt_key(body: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(body.get("messages"), sort_keys=True).encode()).hexdigest()[:16]


def last_user_text(body: dict[str, Any]) -> str:
    users = [m.get("content") for m in body.get("messages", []) if m.get("role") == "user"]
    return users[-1] if users else ""


class ScriptedServer(LoopbackApp):
    def __init__(
        self,
        reply: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
        latency: float = 0.0,
        fault: Callable[[str, int], Fault | None] | None = None,
        on_request: Callable[[dict[str, Any]], None] | None = None,
        models: list[str] | None = None,
    ):
        self.reply = reply or (lambda body: {"content": "[]"})
        # What /v1/models lists; empty: none (any model name is served), as llama.cpp-like servers answer.
        self.models = list(models or [])
        self.latency = latency
        self.fault = fault
        self.on_request = on_request
        self.requests = 0
        self.per_key: Counter[str] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self.headers_seen: list[dict[str, str]] = []
        self.bodies: list[dict[str, Any]] = []
        # Each request body's bytes as received, in arrival order (for byte-for-byte request comparisons).
        self.raw_bodies: list[bytes] = []
        # Bytes of each dripped answer that were sent before it ended (or the client hung up).
        self.dripped: list[int] = []
        # Wall-clock times (time.time()) of the first request's arrival and the last answer's return.
        self.first_request_at: float | None = None
        self.last_answer_at: float | None = None
        super().__init__()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/chat/completions", self._handle)
        app.router.add_get("/v1/models", self._models)

    async def _models(self, request: web.Request) -> web.Response:
        """The model list a run's pre-flight check reads: `models` (by default none: any name is served)."""
        return web.json_response({"object": "list", "data": [{"id": name, "object": "model"} for name in self.models]})

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        if self.first_request_at is None:
            self.first_request_at = time.time()
        try:
            return await self._answer(request)
        finally:
            self.last_answer_at = time.time()

    def reset_clock(self) -> None:
        """Forget the request bodies and the first and last times (the next process is timed afresh)."""
        self.first_request_at = self.last_answer_at = None
        self.raw_bodies.clear()
        self.bodies.clear()

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        self.raw_bodies.append(await request.read())
        body = await request.json()
        key = prompt_key(body)
        self.requests += 1
        self.per_key[key] += 1
        attempt = self.per_key[key]
        self.headers_seen.append({k.lower(): v for k, v in request.headers.items()})
        self.bodies.append(body)
        if self.on_request:
            self.on_request(body)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.latency:
                await asyncio.sleep(self.latency)
            fault = self.fault(key, attempt) if self.fault else None
            if fault and fault.hang:
                await asyncio.sleep(fault.hang)
            if fault and fault.status:
                error = {"error": {"message": fault.message or f"scripted {fault.status}", "type": "scripted"}}
                return web.json_response(error, status=fault.status, headers=fault.headers)
            if fault and fault.malformed:
                return web.Response(text='{"choices": [{"mess', content_type="application/json")
            message = {"role": "assistant", "content": None, **self.reply(body)}
            answer = {
                "id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()), "model": body.get("model"),
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            }
            if fault and fault.drip:
                return await self._drip(request, json.dumps(answer).encode(), fault.drip)
            return web.json_response(answer)
        finally:
            self.in_flight -= 1

    async def _drip(self, request: web.Request, payload: bytes, interval: float) -> web.StreamResponse:
        """Send `payload` one byte every `interval` seconds, until done or the client hangs up."""
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        response.content_length = len(payload)
        await response.prepare(request)
        index = len(self.dripped)
        self.dripped.append(0)
        for position in range(len(payload)):
            if request.transport is None or request.transport.is_closing():
                break
            try:
                await response.write(payload[position:position + 1])
            except ConnectionError:
                break
            self.dripped[index] += 1
            await asyncio.sleep(interval)
        return response


def _correct_script(data: str | None) -> Callable[[dict[str, Any]], dict[str, Any]]:
    from tests.engine_fixtures import correct_reply

    return correct_reply


def _acebench_agent_script(data: str | None, to_limit: bool = False) -> Callable[[dict[str, Any]], dict[str, Any]]:
    if not data:
        raise SystemExit("--script acebench_agent needs --script-data DIR (a folder holding ACEBench's data_en)")
    from benchmarks.acebench_agent_script import agent_script
    from tests.engine_fixtures import correct_reply

    return agent_script(data, fallback=correct_reply, to_limit=to_limit)


# The reply functions main() can serve, by name; each takes the --script-data folder (or None).
REPLY_SCRIPTS: dict[str, Callable[[str | None], Callable[[dict[str, Any]], dict[str, Any]]]] = {
    "correct": _correct_script,
    "acebench_agent": _acebench_agent_script,
    "acebench_agent_to_limit": lambda data: _acebench_agent_script(data, to_limit=True),
}


def main() -> None:
    """Serve from its own process: python -m tests.scripted_server --latency 0.2 (prints the base URL;
    answers "stats" on stdin with the counters and the first and last times as JSON, "reset" by forgetting the
    bodies and times, "dump PATH" by writing the bodies received since, one per line). `--script NAME` chooses the
    reply function: `correct` (default, tests.engine_fixtures.correct_reply) or `acebench_agent` (the real ACEBench
    agent items played through, benchmarks/acebench_agent_script.py, reading the data in `--script-data DIR`; any
    other request gets correct_reply's answer) or `acebench_agent_to_limit` (the same, every rollout run to the
    message limit)."""
    import argparse
    import sys

    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--fault-rate", type=float, default=0.0, help="share of prompts whose first attempt gets a 503")
    parser.add_argument("--script", choices=sorted(REPLY_SCRIPTS), default="correct", help="the reply function")
    parser.add_argument("--script-data", default=None, help="the data folder a script reads (acebench_agent)")
    args = parser.parse_args()
    reply = REPLY_SCRIPTS[args.script](args.script_data)

    def fault(key: str, attempt: int) -> Fault | None:
        unlucky = int(key, 16) % 1000 < args.fault_rate * 1000
        return Fault(status=503, headers={"Retry-After": "0"}) if attempt == 1 and unlucky else None

    with ScriptedServer(reply=reply, latency=args.latency, fault=fault) as server:
        print(server.base_url, flush=True)
        for line in sys.stdin:
            command = line.strip()
            if command == "stats":
                print(json.dumps({"requests": server.requests, "max_in_flight": server.max_in_flight,
                                  "first_request_at": server.first_request_at, "last_answer_at": server.last_answer_at,
                                  "bodies": len(server.raw_bodies)}), flush=True)
            elif command == "reset":
                server.reset_clock()
                print("{}", flush=True)
            elif command.startswith("dump "):  # the bodies received since the last reset, one per line
                with open(command[5:], "wb") as dump:
                    dump.writelines(body.replace(b"\n", b" ") + b"\n" for body in server.raw_bodies)
                print("{}", flush=True)


if __name__ == "__main__":
    main()
