"""The one async chat interface every benchmark's `solve` talks through: the `openai` SDK, with our
own retries, a response cache and concurrency limits."""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import json
import os
import random
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from evaluators.core.types import ChatRequest, ToolCall
from evaluators.engine import local_model
from evaluators.engine.settings import ModelSettings

RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504}
# Redirects are not followed: an endpoint that passed the public-mode check must not bounce requests
# elsewhere (a 3xx is reported as an HTTP error).
_JSON_OPTIONS: dict[str, Any] = {"headers": {"Content-Type": "application/json"}, "follow_redirects": False}
GLOBAL_LIMIT_ENV = "TOOLBOARD_GLOBAL_CONCURRENCY"


_REQUESTS_IN_TASK: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar("requests_in_task", default=None)


def start_request_count() -> list[int]:
    """Count the HTTP requests the current task sends from now on (its box holds the count)."""
    box = [0]
    _REQUESTS_IN_TASK.set(box)
    return box


class RequestFailed(Exception):
    """A request that could not be completed (retries exhausted, or a non-retryable error)."""

    def __init__(self, message: str, attempts: int):
        super().__init__(message)
        self.attempts = attempts


@dataclass
class ChatResult:
    text: str | None
    tool_calls: list[ToolCall] | None
    usage: dict[str, int]
    latency: float
    attempts: int
    cached: bool
    cache_key: str
    response: dict[str, Any]


def calls_with_benchmark_names(result: ChatResult, request: ChatRequest) -> list[ToolCall] | None:
    """The result's tool calls under the benchmark's own names (requests may rename tools)."""
    if not result.tool_calls:
        return None
    return [ToolCall(request.tool_names.get(call.name, call.name), call.arguments) for call in result.tool_calls]


@dataclass
class RetryPolicy:
    """Exponential backoff with full jitter; a server's Retry-After is honoured (capped)."""

    max_attempts: int = 6
    base_delay: float = 0.5
    max_delay: float = 30.0
    max_retry_after: float = 60.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_retry_after)
        return random.uniform(0, min(self.max_delay, self.base_delay * 2 ** (attempt - 1)))


class _GlobalLimit:
    """One limit on in-flight requests shared by every run on the same event loop."""

    _semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = weakref.WeakKeyDictionary()

    @classmethod
    def get(cls) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if loop not in cls._semaphores:
            cls._semaphores[loop] = asyncio.Semaphore(int(os.environ.get(GLOBAL_LIMIT_ENV, "256")))
        return cls._semaphores[loop]


def _retry_after(exc: Exception) -> float | None:
    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def request_body(request: ChatRequest, settings: ModelSettings) -> dict[str, Any]:
    body: dict[str, Any] = {"model": settings.model, "messages": request.messages, "temperature": settings.temperature}
    if settings.max_tokens is not None:
        body["max_tokens"] = settings.max_tokens
    if request.tools:
        body["tools"] = request.tools
        if request.tool_choice is not None:
            body["tool_choice"] = request.tool_choice
    body.update(settings.extra_body)
    return body


def encode_body(body: dict[str, Any]) -> bytes:
    """The request body as sent. Key order is fixed by `request_body`, so equal requests encode equally."""
    return json.dumps(body, ensure_ascii=False).encode()


def cache_key(base_url: str, payload: bytes) -> str:
    return hashlib.sha256(base_url.rstrip("/").encode() + b"\n" + payload).hexdigest()


def _parse_completion(data: dict[str, Any]) -> dict[str, Any]:
    """Keep what scoring needs from a chat completion; raise ValueError when it is malformed."""
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ValueError("response has no choices")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise ValueError("response choice has no message")
    calls = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise ValueError("malformed tool call in response")
        calls.append({"name": function["name"], "arguments": function.get("arguments") or ""})
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return {
        "text": message.get("content") if isinstance(message.get("content"), str) else None,
        "tool_calls": calls or None,
        "usage": {"prompt_tokens": int(usage.get("prompt_tokens") or 0), "completion_tokens": int(usage.get("completion_tokens") or 0)},
    }


@dataclass
class ChatClient:
    settings: ModelSettings
    api_key: str | None = None
    store: Any = None  # evaluators.engine.store.Store, for the response cache
    # Where fresh responses go; by default straight into the store's cache. A run batches them.
    on_response: Callable[[str, dict[str, Any]], None] | None = None
    use_cache: bool = True
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    concurrency: int = 8
    requests_sent: int = 0

    def __post_init__(self) -> None:
        # Imported here: the SDK is slow to import and only runs need it. Its aiohttp transport costs
        # a fraction of the CPU per request of the default one, which matters at high concurrency.
        from openai import AsyncOpenAI, DefaultAioHttpClient

        # `local:NAME` is the built-in local model: its server starts on first use (cache keys keep the name).
        self._client = AsyncOpenAI(
            base_url=local_model.resolve(self.settings.base_url),
            api_key=self.api_key or "not-needed",
            timeout=self.settings.timeout,
            max_retries=0,
            http_client=DefaultAioHttpClient(timeout=self.settings.timeout),
        )
        self._limit: asyncio.Semaphore | None = None

    async def close(self) -> None:
        await self._client.close()

    def _result(self, response: dict[str, Any], key: str, latency: float, attempts: int, cached: bool) -> ChatResult:
        calls = [ToolCall(c["name"], c["arguments"]) for c in response["tool_calls"]] if response["tool_calls"] else None
        return ChatResult(response["text"], calls, response["usage"], latency, attempts, cached, key, response)

    async def complete(self, request: ChatRequest) -> ChatResult:
        payload = encode_body(request_body(request, self.settings))
        key = cache_key(self.settings.base_url, payload)
        if self.use_cache and self.store is not None:
            cached = self.store.cache_get(key)
            if cached is not None:
                return self._result(cached, key, 0.0, 0, cached=True)
        if self._limit is None:
            self._limit = asyncio.Semaphore(self.concurrency)
        async with self._limit, _GlobalLimit.get():
            return await self._send_with_retries(payload, key)

    async def _send_with_retries(self, payload: bytes, key: str) -> ChatResult:
        import openai

        attempt = 0
        while True:
            attempt += 1
            started = time.perf_counter()
            retry_after: float | None = None
            try:
                self.requests_sent += 1
                box = _REQUESTS_IN_TASK.get()
                if box is not None:
                    box[0] += 1
                raw = await self._client.post("/chat/completions", content=payload, cast_to=object, options=_JSON_OPTIONS)
                response = _parse_completion(raw if isinstance(raw, dict) else {})
                if self.on_response is not None:
                    self.on_response(key, response)
                elif self.store is not None:
                    self.store.cache_put(key, response)
                return self._result(response, key, time.perf_counter() - started, attempt, cached=False)
            except openai.APIStatusError as exc:
                if exc.status_code not in RETRYABLE_STATUS:
                    raise RequestFailed(f"HTTP {exc.status_code}: {_short(exc.message)}", attempt) from None
                problem = f"HTTP {exc.status_code}"
                retry_after = _retry_after(exc)
            except openai.APITimeoutError:
                problem = f"timeout after {self.settings.timeout:g} s"
            except openai.APIConnectionError as exc:
                problem = f"connection error: {_short(str(exc))}"
            except (ValueError, TypeError, openai.APIResponseValidationError) as exc:
                problem = f"malformed response: {_short(str(exc))}"
            if attempt >= self.retry.max_attempts:
                raise RequestFailed(f"{problem} (gave up after {attempt} attempts)", attempt)
            await asyncio.sleep(self.retry.delay(attempt, retry_after))


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
