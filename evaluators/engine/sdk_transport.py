"""One request attempt through the `openai` SDK: send a chat-completions body, keep what scoring needs
from the answer, and say what went wrong in a form the retry loop understands. Used in the engine's
process and in its HTTP worker processes alike, so both behave the same."""

from __future__ import annotations

import functools
import ssl
from dataclasses import dataclass, field
from typing import Any

RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504}
# Redirects are not followed: an endpoint that passed the public-mode check must not bounce requests
# elsewhere (a 3xx is reported as an HTTP error).
_JSON_OPTIONS: dict[str, Any] = {"headers": {"Content-Type": "application/json"}, "follow_redirects": False}


class AttemptFailed(Exception):
    """One attempt that did not give a usable answer; `retryable` says whether another may."""

    def __init__(self, problem: str, retryable: bool, retry_after: float | None = None):
        super().__init__(problem)
        self.problem = problem
        self.retryable = retryable
        self.retry_after = retry_after

    def to_json(self) -> dict[str, Any]:
        return {"problem": self.problem, "retryable": self.retryable, "retry_after": self.retry_after}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AttemptFailed:
        return cls(str(data["problem"]), bool(data["retryable"]), data.get("retry_after"))


@dataclass(frozen=True)
class EndpointSpec:
    """What an SDK client needs; the key travels only in memory (and over a worker's private pipe)."""

    base_url: str
    api_key: str | None = field(repr=False)
    timeout: float

    def to_json(self) -> dict[str, Any]:
        return {"base_url": self.base_url, "api_key": self.api_key, "timeout": self.timeout}


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The certificate store the SDK's HTTP library would load, loaded once per process: loading it
    takes ~30 ms of CPU, which every new client (each run, its judge, its simulated user) paid again."""
    import httpx2  # the SDK's own HTTP library, so verification is exactly the SDK's default

    return httpx2.create_ssl_context()


def make_sdk_client(spec: EndpointSpec) -> Any:
    # Imported here: the SDK is slow to import and only runs need it. Its aiohttp transport costs a
    # fraction of the CPU per request of the default one, which matters at high concurrency.
    from openai import AsyncOpenAI, DefaultAioHttpClient

    return AsyncOpenAI(
        base_url=spec.base_url,
        api_key=spec.api_key or "not-needed",
        timeout=spec.timeout,
        max_retries=0,  # the engine retries, with its own policy
        http_client=DefaultAioHttpClient(timeout=spec.timeout, verify=tls_context()),
    )


def parse_completion(data: dict[str, Any]) -> dict[str, Any]:
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


def _retry_after(exc: Exception) -> float | None:
    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


async def post_completion(sdk_client: Any, payload: bytes, timeout: float) -> dict[str, Any]:
    """Send one encoded request body; the parsed answer, or AttemptFailed."""
    import openai

    try:
        raw = await sdk_client.post("/chat/completions", content=payload, cast_to=object, options=_JSON_OPTIONS)
        return parse_completion(raw if isinstance(raw, dict) else {})
    except openai.APIStatusError as exc:
        retryable = exc.status_code in RETRYABLE_STATUS
        problem = f"HTTP {exc.status_code}" if retryable else f"HTTP {exc.status_code}: {short(exc.message)}"
        raise AttemptFailed(problem, retryable, _retry_after(exc) if retryable else None) from None
    except openai.APITimeoutError:
        raise AttemptFailed(f"timeout after {timeout:g} s", True) from None
    except openai.APIConnectionError as exc:
        raise AttemptFailed(f"connection error: {short(str(exc))}", True) from None
    except (ValueError, TypeError, openai.APIResponseValidationError) as exc:
        raise AttemptFailed(f"malformed response: {short(str(exc))}", True) from None
