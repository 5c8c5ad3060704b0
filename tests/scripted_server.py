"""A scripted OpenAI-compatible chat server on 127.0.0.1 for tests and benchmarks: real HTTP,
injectable latency and faults (status codes with Retry-After, timeouts, malformed bodies), and
counters (requests per prompt, peak in-flight requests, headers seen)."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Fault:
    """What to do instead of answering: an HTTP status, a hang, or a malformed body."""

    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    hang: float = 0.0
    malformed: bool = False


def prompt_key(body: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(body.get("messages"), sort_keys=True).encode()).hexdigest()[:16]


def last_user_text(body: dict[str, Any]) -> str:
    users = [m.get("content") for m in body.get("messages", []) if m.get("role") == "user"]
    return users[-1] if users else ""


class ScriptedServer:
    def __init__(
        self,
        reply: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
        latency: float = 0.0,
        fault: Callable[[str, int], Fault | None] | None = None,
    ):
        self.reply = reply or (lambda body: {"content": "[]"})
        self.latency = latency
        self.fault = fault
        self.lock = threading.Lock()
        self.requests = 0
        self.per_key: Counter[str] = Counter()
        self.answered: Counter[str] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self.headers_seen: list[dict[str, str]] = []
        self.bodies: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                server._serve(self, body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> ScriptedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def _send(self, handler: BaseHTTPRequestHandler, status: int, payload: bytes, headers: dict[str, str]) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(payload)))
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.end_headers()
        try:
            handler.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _serve(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        key = prompt_key(body)
        with self.lock:
            self.requests += 1
            self.per_key[key] += 1
            attempt = self.per_key[key]
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.headers_seen.append({k.lower(): v for k, v in handler.headers.items()})
            self.bodies.append(body)
        try:
            if self.latency:
                time.sleep(self.latency)
            fault = self.fault(key, attempt) if self.fault else None
            if fault and fault.hang:
                time.sleep(fault.hang)
            if fault and fault.status:
                payload = json.dumps({"error": {"message": f"scripted {fault.status}", "type": "scripted"}}).encode()
                self._send(handler, fault.status, payload, fault.headers)
                return
            if fault and fault.malformed:
                self._send(handler, 200, b'{"choices": [{"mess', {})
                return
            message = {"role": "assistant", "content": None, **self.reply(body)}
            completion = {
                "id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()), "model": body.get("model"),
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            }
            self._send(handler, 200, json.dumps(completion).encode(), {})
            with self.lock:
                self.answered[key] += 1
        finally:
            with self.lock:
                self.in_flight -= 1
