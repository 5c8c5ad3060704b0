"""One request attempt through the `openai` SDK: send a chat-completions body, keep what scoring needs
from the answer, and say what went wrong in a form the retry loop understands."""

from __future__ import annotations

import asyncio
import functools
import math
import re
import socket
import ssl
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import ModuleType
from typing import Any

from evaluators.core.lazy_packages import defer_sdk_type_catalogue
from evaluators.engine.redact import redact

# Before the SDK is first imported: it is used for chat completions only (see lazy_packages).
defer_sdk_type_catalogue()

RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504}
REDIRECT_STATUS = range(300, 400)
# Redirects are never followed, by any request to a model endpoint (the run's, the pre-flight's, a role's):
# an endpoint that passed the public-mode check must not bounce requests, and the key, to a host the check
# never saw. A 3xx is reported as this, without its body or where it points.
REDIRECT_REFUSED = "redirects are not followed: use the address it redirects to as the base URL"
_JSON_OPTIONS: dict[str, Any] = {"headers": {"Content-Type": "application/json"}, "follow_redirects": False}
# The longest wait a server's Retry-After may ask for: a longer one is cut to this (the retry loop's
# own cap, RetryPolicy.max_retry_after, may be lower).
MAX_RETRY_AFTER = 60.0
_DELAY_SECONDS = re.compile(r"\d+(\.\d+)?")
_DEFAULT_PORTS = {"http": 80, "https": 443}


class AttemptFailed(Exception):
    """One attempt that did not give a usable answer; `retryable` says whether another may."""

    def __init__(self, problem: str, retryable: bool, retry_after: float | None = None):
        super().__init__(problem)
        self.problem = problem
        self.retryable = retryable
        self.retry_after = retry_after


def usable_delay(value: Any) -> float | None:
    """`value` as a wait in seconds when it is a finite number of at least 0, else None (use backoff)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        return None
    return float(value)


@dataclass(frozen=True)
class EndpointSpec:
    """What an SDK client needs; the key travels only in memory."""

    base_url: str
    api_key: str | None = field(repr=False)
    timeout: float


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The certificate store the SDK's HTTP library would load, loaded once per process: loading it
    takes ~30 ms of CPU, which every new client (each run, its judge, its simulated user) paid again."""
    import httpx2  # the SDK's own HTTP library, so verification is exactly the SDK's default

    return httpx2.create_ssl_context()


@functools.cache
def _no_certificates() -> ssl.SSLContext:
    """A context that verifies against no certificate at all: any TLS handshake through it fails."""
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


def endpoint_tls_context(base_url: str) -> ssl.SSLContext:
    """The SDK's certificate store for an https endpoint. A plain-http endpoint never needs one (no redirect is
    followed, so no request leaves for another address): it gets a context that trusts nothing, so a TLS
    connection could never be made through it unverified, and the store (with the HTTP library's whole
    connection stack, ~110 ms) is not loaded for local and loopback servers."""
    return tls_context() if base_url.lower().startswith("https:") else _no_certificates()


# No chat completion is near this (32k tokens of text are ~128 KB, ~1 MB as \u escapes); an endpoint
# sending more is refused while it sends, so no answer can take a deployment's memory.
MAX_RESPONSE_BYTES = 16 << 20


class ResponseTooLarge(Exception):
    """The endpoint sent (or announced) a body over MAX_RESPONSE_BYTES."""


def _bounded_body(stream: Any, limit: int) -> Any:
    """`stream` (a response body, as httpx2 reads it) counted as it arrives: over `limit` bytes, it stops."""
    import httpx2

    class BoundedBody(httpx2.AsyncByteStream):
        async def __aiter__(self) -> Any:
            received = 0
            async for chunk in stream:
                received += len(chunk)
                if received > limit:
                    raise ResponseTooLarge(f"the response is larger than {limit >> 20} MiB")
                yield chunk

        async def aclose(self) -> None:
            await stream.aclose()

    return BoundedBody()


async def bound_response(response: Any) -> None:
    """An httpx2 response hook: every response, on any route out (the direct one and those for proxies:
    HTTPS_PROXY, ALL_PROXY…), has its body bounded by MAX_RESPONSE_BYTES. One announcing more is refused
    before its body is read (httpx2 closes a response whose hook raises)."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_RESPONSE_BYTES:
        raise ResponseTooLarge(f"the response announces {int(declared) >> 20} MiB; at most {MAX_RESPONSE_BYTES >> 20} MiB is read")
    response.stream = _bounded_body(response.stream, MAX_RESPONSE_BYTES)


def sdk_errors() -> ModuleType:
    """The SDK's package, for its exception classes (`APIStatusError`, `APIConnectionError`, …)."""
    import openai

    return openai


class NotHttpAnswer(Exception):
    """The endpoint answered with something that is not HTTP (another protocol on that port)."""


@functools.cache
def sdk_client_classes() -> tuple[Any, Any]:
    """The SDK's async client and its aiohttp-based HTTP client, the latter telling an answer that is not HTTP
    at all as a protocol error (the SDK reports it as a connection failure): aiohttp raises its own
    ClientResponseError there, which neither the SDK nor anything above expects. Imported when first asked:
    the SDK is slow to import and only runs need it."""
    import aiohttp
    import httpx2
    from openai import AsyncOpenAI, DefaultAioHttpClient

    class HttpClient(DefaultAioHttpClient):
        async def send(self, request: Any, **kwargs: Any) -> Any:
            try:
                return await super().send(request, **kwargs)
            except aiohttp.ClientResponseError as error:
                raise httpx2.RemoteProtocolError("not an HTTP answer", request=request) from NotHttpAnswer(str(error.message))

    return AsyncOpenAI, HttpClient


def load_sdk() -> None:
    """Import the SDK now, e.g. in a thread of a long-lived process, so that its first run does not wait for
    it before its first request."""
    sdk_client_classes()
    from openai.types.chat import ChatCompletionMessage  # noqa: F401


def make_sdk_client(spec: EndpointSpec) -> Any:
    # The SDK's aiohttp transport costs a fraction of the CPU per request of the default one, which matters at
    # high concurrency.
    AsyncOpenAI, HttpClient = sdk_client_classes()

    # No redirect is followed (see REDIRECT_REFUSED), also by the SDK's own calls (models.list).
    http_client = HttpClient(timeout=spec.timeout, verify=endpoint_tls_context(spec.base_url),
                                       follow_redirects=False, event_hooks={"response": [bound_response]})
    return AsyncOpenAI(
        base_url=spec.base_url,
        api_key=spec.api_key or "not-needed",
        timeout=spec.timeout,
        max_retries=0,  # the engine retries, with its own policy
        http_client=http_client,
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
    given_usage = data.get("usage")
    usage = given_usage if isinstance(given_usage, dict) else {}
    return {
        "text": message.get("content") if isinstance(message.get("content"), str) else None,
        "tool_calls": calls or None,
        "usage": {"prompt_tokens": int(usage.get("prompt_tokens") or 0), "completion_tokens": int(usage.get("completion_tokens") or 0)},
        # As sent: the SDK's echo of it (sdk_echo) is made only when a dialogue sends it back (ChatResult.echoed_message).
        "message": message,
    }


def sdk_echo(message: dict[str, Any]) -> dict[str, Any]:
    """The answer's message (as the server sent it, or this echo of it: the echo of an echo is itself) as the
    SDK sends it back when a caller puts `choices[0].message` (the SDK's own object) into the next request's
    messages: the SDK builds that object without validation and dumps it with exclude_unset, in JSON mode.
    So: the fields the server sent, in the model's field order (content, refusal, role, …, tool_calls),
    nested objects likewise, and unknown fields after, as sent. Multi-turn dialogues that echo the assistant
    message this way send exactly these bytes."""
    from openai.types.chat import ChatCompletionMessage

    built = ChatCompletionMessage.construct(**message)
    # Values of unexpected types (a number as content) are dumped as they are; pydantic would warn about each.
    return built.model_dump(mode="json", exclude_unset=True, warnings=False,
                            exclude=getattr(built, "__api_exclude__", None))


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """A Retry-After header as seconds to wait, at most MAX_RETRY_AFTER: whole or decimal seconds, or an
    HTTP date (a past one is 0). None for anything else (nan, inf, negative, garbage): use backoff."""
    if value is None:
        return None
    text = value.strip()
    if _DELAY_SECONDS.fullmatch(text):
        return min(float(text), MAX_RETRY_AFTER)
    try:
        from email.utils import parsedate_to_datetime  # here: the email package costs every run ~5 ms to import

        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:  # "-0000": a date in UTC
        when = when.replace(tzinfo=UTC)
    seconds = (when - (now or datetime.now(UTC))).total_seconds()
    return min(max(seconds, 0.0), MAX_RETRY_AFTER)


def _retry_after(exc: Exception) -> float | None:
    response = getattr(exc, "response", None)
    return parse_retry_after(response.headers.get("retry-after") if response is not None else None)


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """The exception and those it was raised from, outermost first."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _host_port(exc: BaseException) -> str:
    """host:port of the request that failed (never the whole URL: it may hold user:pass@)."""
    url = getattr(getattr(exc, "request", None), "url", None)
    host = getattr(url, "host", None)
    if not host:
        return "the endpoint"
    port = getattr(url, "port", None) or _DEFAULT_PORTS.get(str(getattr(url, "scheme", "")), "")
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _tls_problem(error: ssl.SSLError, where: str) -> str:
    # The innermost error is the ssl module's, with its short reason; aiohttp's wrappers lack those attributes.
    if isinstance(error, ssl.SSLCertVerificationError) and getattr(error, "verify_message", None):
        return f"TLS certificate of {where} not accepted: {short(error.verify_message)}"
    return f"TLS error with {where}: {short(getattr(error, 'reason', None) or str(error))}"


def connection_problem(exc: BaseException, timeout: float) -> str:
    """What a failed connection really was: the SDK labels refused, reset, DNS and TLS failures alike
    as timeouts (APITimeoutError), so its causes are read instead."""
    where = _host_port(exc)
    causes = list(_causes(exc))
    for cause in causes:
        if isinstance(cause, ConnectionRefusedError):
            return f"connection refused by {where}"
        if isinstance(cause, ConnectionResetError):
            return f"connection reset by {where}"
        if isinstance(cause, socket.gaierror):
            return f"host {where.rsplit(':', 1)[0]} could not be resolved ({cause.strerror or cause})"
        if isinstance(cause, ssl.SSLError):
            return _tls_problem([c for c in causes if isinstance(c, ssl.SSLError)][-1], where)
        if isinstance(cause, TimeoutError):
            return f"timeout after {timeout:g} s"
        if isinstance(cause, NotHttpAnswer):
            return f"{where} does not answer in HTTP (another service on that port?)"
    root = causes[-1]
    if "Timeout" in type(root).__name__:
        return f"timeout after {timeout:g} s"
    return f"connection to {where} failed: {short(str(root) or type(root).__name__)}"


def short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


_NOT_SHOWN = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]+")
SNIPPET_CHARS = 160


def snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    """What an endpoint said, as much as a message quotes: one line, no control or invisible characters,
    at most `limit` characters (a refusal's body can be a whole HTML page, or something else's answer)."""
    return short(" ".join(_NOT_SHOWN.sub(" ", text).split()), limit)


async def post_completion(sdk_client: Any, payload: bytes, timeout: float) -> dict[str, Any]:
    """Send one encoded request body; the parsed answer, or AttemptFailed. `timeout` bounds the whole
    attempt (the SDK's own bounds each read: a body sent a byte at a time would never end). Problems
    never hold the client's key, even when the endpoint echoes it."""
    key = getattr(sdk_client, "api_key", None)
    try:
        async with asyncio.timeout(timeout):
            return await _post(sdk_client, payload, timeout, key)
    except TimeoutError:
        raise AttemptFailed(f"timeout after {timeout:g} s", True) from None
    except AttemptFailed as failure:  # every problem leaves redacted, also those not built with `told`
        raise AttemptFailed(redact(failure.problem, (key,)), failure.retryable, failure.retry_after) from None


async def _post(sdk_client: Any, payload: bytes, timeout: float, key: str | None) -> dict[str, Any]:
    errors = sdk_errors()

    def told(text: str) -> str:
        # Redacted before being cut short, so no cut leaves part of a key behind.
        return snippet(redact(text, (key,)))

    try:
        raw = await sdk_client.post("/chat/completions", content=payload, cast_to=object, options=_JSON_OPTIONS)
        return parse_completion(raw if isinstance(raw, dict) else {})
    except errors.APIStatusError as exc:
        if exc.status_code in REDIRECT_STATUS:  # asking again would be redirected again
            raise AttemptFailed(f"HTTP {exc.status_code} redirect: {REDIRECT_REFUSED}", False) from None
        retryable = exc.status_code in RETRYABLE_STATUS
        problem = f"HTTP {exc.status_code}" if retryable else f"HTTP {exc.status_code}: {told(exc.message)}"
        raise AttemptFailed(problem, retryable, _retry_after(exc) if retryable else None) from None
    except ResponseTooLarge as exc:  # asking again would only cost the same again
        raise AttemptFailed(str(exc), False) from None
    except errors.APIConnectionError as exc:  # APITimeoutError too: see connection_problem
        too_large = next((c for c in _causes(exc) if isinstance(c, ResponseTooLarge)), None)
        if too_large is not None:  # asking again would only cost the same again
            raise AttemptFailed(str(too_large), False) from None
        raise AttemptFailed(connection_problem(exc, timeout), True) from None
    except (ValueError, TypeError, errors.APIResponseValidationError) as exc:
        raise AttemptFailed(f"malformed response: {told(str(exc))}", True) from None
