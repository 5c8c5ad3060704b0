"""The one async chat interface every benchmark's `solve` talks through: the `openai` SDK, with our
own retries, a response cache, concurrency limits and paced request starts (see `pacing`)."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import hashlib
import hmac
import json
import random
import secrets
import time
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from evaluators.core import phase_log
from evaluators.core.environment import read_number
from evaluators.core.errors import ToolboardError
from evaluators.core.limits import echoed
from evaluators.core.loop_limit import LoopLimit
from evaluators.core.paths import toolboard_home
from evaluators.core.secret_file import secret_file
from evaluators.core.types import ChatRequest, ToolCall
from evaluators.engine import local_model
from evaluators.engine.endpoint_guard import check_api_key
from evaluators.engine.pacing import SendPacer, pacing_enabled
from evaluators.engine.redact import redact
from evaluators.engine.sdk_transport import (
    MAX_RETRY_AFTER,
    AttemptFailed,
    EndpointSpec,
    make_sdk_client,
    post_completion,
    sdk_echo,
    usable_delay,
)
from evaluators.engine.settings import ModelSettings
from evaluators.engine.store import MAX_EVIDENCE_BYTES, JSONText, oversized_note, row_request_note

# In TOOLBOARD_HOME: this installation's random secret, mixed with API keys in cache keys (see cache_key).
CACHE_SALT_FILE = "cache_salt"


_REQUESTS_IN_TASK: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar("requests_in_task", default=None)


def start_request_count() -> list[int]:
    """Count the HTTP requests the current task sends from now on (its box holds the count)."""
    box = [0]
    _REQUESTS_IN_TASK.set(box)
    return box


@dataclass
class SentRequests:
    """The chat requests one client made for the current sample: how many (a cache hit counts, as the
    body is the same; retries of one request do not), and the last body as sent (its encoded bytes, so
    a message list changed after sending never changes what is kept)."""

    client: Any  # the ChatClient whose requests these are (the tested model's)
    count: int = 0
    last: bytes | None = None

    def evidence(self) -> dict[str, Any] | JSONText:
        """The request a sample's row keeps (see store.Evidence): {"requests": n, "body": the last body sent,
        null when none was}, as JSON text around the body's own bytes (valid JSON, never parsed again);
        a body over the store's bound becomes its note."""
        if self.last is not None and len(self.last) > MAX_EVIDENCE_BYTES:
            return self._shortened()
        body = self.last.decode() if self.last is not None else "null"
        return JSONText(f'{{"requests": {self.count}, "body": {body}}}')

    def _shortened(self) -> dict[str, Any]:
        """A body over the bound (e.g. audio sent as base64): kept with each very long text replaced by its
        length, so the messages still show; a note if it is still too big."""
        assert self.last is not None
        body = _without_long_texts(json.loads(self.last))
        if len(json.dumps(body, ensure_ascii=False).encode()) > MAX_EVIDENCE_BYTES:
            return oversized_note("request body", len(self.last), {"requests": self.count})
        return {"requests": self.count, "body": body, "shortened": True,
                "note": f"the request was {len(self.last):,} bytes; texts over {LONG_TEXT:,} characters (e.g. audio) "
                        "are shown by their length"}


# In a request kept as evidence, longer texts (base64 audio) are replaced by their length when the body is too big.
LONG_TEXT = 4096


def _without_long_texts(value: Any) -> Any:
    if isinstance(value, str):
        return value if len(value) <= LONG_TEXT else f"<{len(value):,} characters not kept>"
    if isinstance(value, list):
        return [_without_long_texts(item) for item in value]
    if isinstance(value, dict):
        return {key: _without_long_texts(item) for key, item in value.items()}
    return value


_SENT_IN_TASK: contextvars.ContextVar[SentRequests | None] = contextvars.ContextVar("sent_in_task", default=None)

# A sample's model calls are kept up to this many; later ones are counted, not kept.
MAX_EVENTS = 200
# Of a call's response, at most this many characters of text are kept.
MAX_EVENT_TEXT = 8192


@dataclass
class _Call:
    role: str
    payload: bytes
    response: dict[str, Any] | None
    error: str | None
    latency: float
    cached: bool


@dataclass
class EventLog:
    """Every model call made for one sample, in the order made, whichever client made it (the tested model,
    a judge, a simulated user): recorded by ChatClient.complete, where every call goes through, while the
    log is the current task's (`record_events`; tasks a sample's solve starts share it). `events()` is the
    record kept with the sample, bounded: see there."""

    calls: list[_Call] = field(default_factory=list)
    not_kept: int = 0

    def add(self, call: _Call) -> None:
        if len(self.calls) < MAX_EVENTS:
            self.calls.append(call)
        else:
            self.not_kept += 1

    def events(self, budget: int = MAX_EVIDENCE_BYTES // 2) -> list[dict[str, Any]]:
        """The calls as events: {"role", "request", "response", "error", "latency", "cached"}. A request whose
        messages begin a later request of the same role, all its other fields equal (a dialogue's step before
        the next one), is kept as a reference to that request (`repeated_request`; `request_of_event` rebuilds
        it). Other request bodies are kept from the last call backwards while they fit in `budget` bytes; an
        earlier one left out is a note saying its size. A very big body (audio) is kept with its long texts
        shortened (_kept_body); response texts over MAX_EVENT_TEXT are cut."""
        events: list[dict[str, Any]] = json.loads(self.events_json(budget).text)
        return events

    def events_json(self, budget: int = MAX_EVIDENCE_BYTES // 2, row_body: bytes | None = None) -> JSONText:
        """`events()` as the JSON text a sample's row keeps: each body kept as sent goes in as its own bytes,
        never parsed and written again (a body is parsed only to compare it with a later one of its role).
        `row_body`: the body the row's request column keeps whole; the last call that sent it keeps a note
        instead (store.ROW_REQUEST), which the store turns back into that body when it reads the row."""
        requests: list[bytes | dict[str, Any]] = []
        row_body_noted = row_body is None or len(row_body) > MAX_EVENT_BODY_BYTES
        # Per role: the number (1-based) and body of the nearest later request kept whole (parsed when asked).
        later_kept: dict[str, tuple[int, _Body]] = {}
        for index in range(len(self.calls) - 1, -1, -1):
            call = self.calls[index]
            later = later_kept.get(call.role)
            if later is not None and len(call.payload) <= MAX_EVENT_BODY_BYTES:
                reference = repeated_request(json.loads(call.payload), later[0], later[1].parsed(), len(call.payload))
                if reference is not None:
                    requests.append(reference)
                    continue
            # A body kept as sent weighs its own bytes: when those do not fit, it is not parsed at all.
            may_fit = len(call.payload) > MAX_EVENT_BODY_BYTES or len(call.payload) <= budget
            body, size = _kept_body(call.payload) if may_fit else (None, len(call.payload))
            if isinstance(body, bytes) and not row_body_noted and body == row_body:
                row_body_noted = True
                requests.append(row_request_note(size))
                later_kept[call.role] = (index + 1, _Body(body))
            elif body is not None and size <= budget:
                budget -= size
                requests.append(body)
                if isinstance(body, bytes):
                    later_kept[call.role] = (index + 1, _Body(body))
            else:
                requests.append({"not_kept": True, "bytes": len(call.payload),
                                 "note": "an earlier request of this sample, left out to keep its record bounded"})
        events = [_event_json(call, request) for call, request in zip(self.calls, reversed(requests), strict=True)]
        if self.not_kept:
            events.append(json.dumps({"role": None, "note": f"{self.not_kept} more model calls, not kept (over {MAX_EVENTS})"},
                                     ensure_ascii=False))
        return JSONText("[" + ", ".join(events) + "]")


@dataclass
class _Body:
    """A request body as sent, parsed only if it is compared with an earlier one."""

    payload: bytes
    _parsed: Any = None

    def parsed(self) -> Any:
        if self._parsed is None:
            self._parsed = json.loads(self.payload)
        return self._parsed


REPEATED = "repeated_in"


def repeated_request(body: Any, later_number: int, later: dict[str, Any], size: int) -> dict[str, Any] | None:
    """The note kept for a request body that is the first messages of a later one (`later`, event number
    `later_number`) with the same other fields; None when it is not."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return None
    messages, later_messages = body["messages"], later.get("messages")
    if not isinstance(later_messages, list) or len(messages) > len(later_messages):
        return None
    if later_messages[:len(messages)] != messages:
        return None
    if {k: v for k, v in body.items() if k != "messages"} != {k: v for k, v in later.items() if k != "messages"}:
        return None
    return {REPEATED: later_number, "messages": len(messages), "bytes": size,
            "note": f"the first {len(messages)} messages of request {later_number}, its other fields the same: "
                    "not stored twice"}


def request_of_event(events: list[Any], number: int) -> Any:
    """The request of event `number` (1-based) as sent: a `repeated_request` note rebuilt from the request it
    refers to; anything else as kept."""
    request = events[number - 1].get("request") if isinstance(events[number - 1], dict) else None
    if not isinstance(request, dict) or not isinstance(request.get(REPEATED), int):
        return request
    later_number, count = request[REPEATED], request.get("messages")
    if not (number < later_number <= len(events)) or not isinstance(count, int):
        return request
    later = request_of_event(events, later_number)
    if not isinstance(later, dict) or not isinstance(later.get("messages"), list):
        return request
    return {**later, "messages": later["messages"][:count]}


# A request body over this many bytes (audio sent as base64) is kept with its long texts shortened.
MAX_EVENT_BODY_BYTES = MAX_EVIDENCE_BYTES // 4


def _kept_body(payload: bytes) -> tuple[bytes | dict[str, Any], int]:
    """A request body as an event keeps it, and its size in bytes: as sent (its bytes), or, over
    MAX_EVENT_BODY_BYTES, parsed with each text over LONG_TEXT characters replaced by its length."""
    if len(payload) <= MAX_EVENT_BODY_BYTES:
        return payload, len(payload)
    shortened = _without_long_texts(json.loads(payload))
    return shortened, len(json.dumps(shortened, ensure_ascii=False).encode())


def _event_json(call: _Call, request: bytes | dict[str, Any]) -> str:
    """One event as JSON text: {"role", "request", "response", "error", "latency", "cached"}."""
    response = None
    if call.response is not None:
        text = call.response.get("text")
        if isinstance(text, str):
            text = echoed(text, MAX_EVENT_TEXT)
        response = {"text": text, "tool_calls": call.response.get("tool_calls"), "usage": call.response.get("usage")}
    request_text = request.decode() if isinstance(request, bytes) else _json(request)
    error = "null" if call.error is None else _json(call.error)
    return (f'{{"role": {_json(call.role)}, "request": {request_text}, "response": {_json(response)}, '
            f'"error": {error}, "latency": {json.dumps(round(call.latency, 6))}, "cached": {"true" if call.cached else "false"}}}')


def _json(value: Any) -> str:
    """JSON text of a value an event holds (a lone surrogate, which UTF-8 cannot carry, as its escape)."""
    text = json.dumps(value, ensure_ascii=False)
    try:
        text.encode()
    except UnicodeEncodeError:
        return json.dumps(value)
    return text


_EVENTS_IN_TASK: contextvars.ContextVar[EventLog | None] = contextvars.ContextVar("events_in_task", default=None)


def record_events() -> EventLog:
    """Record every model call the current task (and the tasks it starts) makes from now on: one sample's."""
    log = EventLog()
    _EVENTS_IN_TASK.set(log)
    return log


class PlayingRole:
    """The tested model's client playing a role of its own (e.g. the simulated user): the same cache,
    limits and counts, but its requests are not the sample's evidence; its calls are recorded under the role."""

    def __init__(self, client: ChatClient, role: str = ""):
        self.client = client
        self.role = role or client.role

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    async def complete(self, request: ChatRequest) -> ChatResult:
        return await self.client.complete(request, evidence=False, role=self.role)


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
    # The answer's message as the server sent it (answers cached by earlier versions: as the SDK echoes it).
    message: dict[str, Any] | None = None

    def echoed_message(self) -> dict[str, Any]:
        """The assistant message a dialogue appends after this answer, as an official harness that appends
        the SDK's `choices[0].message` sends it (sdk_transport.sdk_echo, made here: most answers are never
        echoed). Answers cached before the message was kept give the plain assistant message {"content",
        "role"} (what a server sending just those two fields gives)."""
        return sdk_echo(self.message) if self.message is not None else {"content": self.text, "role": "assistant"}


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
    max_retry_after: float = MAX_RETRY_AFTER

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before attempt `attempt + 1`: the server's wish when it is a usable number
        (finite, not negative; capped), else backoff. A NaN must never reach the event loop's timers."""
        wish = usable_delay(retry_after)
        if wish is not None:
            return min(wish, self.max_retry_after)
        return random.uniform(0, min(self.max_delay, self.base_delay * 2 ** (attempt - 1)))


class _CacheLookups:
    """The response cache read once per loop turn for every request that asked in it: a run's samples ask
    together (all at once when a rerun is answered by the cache), and one query for many keys costs about what
    one for a key does. One per store and event loop."""

    _by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[int, _CacheLookups]] = weakref.WeakKeyDictionary()

    def __init__(self, store: Any):
        self.store = store
        self.waiting: dict[str, list[asyncio.Future[dict[str, Any] | None]]] = {}

    @classmethod
    def of(cls, store: Any) -> _CacheLookups:
        loop = asyncio.get_running_loop()
        per_store = cls._by_loop.setdefault(loop, {})
        lookups = per_store.get(id(store))
        if lookups is None or lookups.store is not store:
            lookups = per_store[id(store)] = cls(store)
        return lookups

    def get(self, key: str) -> asyncio.Future[dict[str, Any] | None]:
        loop = asyncio.get_running_loop()
        if not self.waiting:
            loop.call_soon(self._answer)
        future: asyncio.Future[dict[str, Any] | None] = loop.create_future()
        self.waiting.setdefault(key, []).append(future)
        return future

    def _answer(self) -> None:
        waiting, self.waiting = self.waiting, {}
        try:
            found = self.store.cache_get_many(list(waiting))
        except Exception as error:  # noqa: BLE001 - each asker gets the store's error, as a lookup of its own would
            for futures in waiting.values():
                for future in futures:
                    if not future.done():
                        future.set_exception(error)
            return
        for key, futures in waiting.items():
            for future in futures:
                if not future.done():
                    future.set_result(found.get(key))


class RequestLimit(LoopLimit):
    """At most `concurrency` requests in flight across the clients that share it: a run's clients of one endpoint
    (the tested model and a role on the same server share one limit, so `--concurrency` is what the server sees)."""


# One limit on in-flight requests shared by every run on the same event loop.
def global_request_limit() -> int:
    """TOOLBOARD_GLOBAL_CONCURRENCY now (a bad value is refused saying what it takes)."""
    return int(read_number("global_concurrency", whole=True))


_GLOBAL_LIMIT = RequestLimit(global_request_limit)


class _InFlightSends:
    """Requests out now, by cache key: a request equal to one already out waits for that answer instead of being
    sent too (samples solved at once may ask the same thing, e.g. a benchmark's twin items' first step; the cache
    only answers once the first is back). A send that fails gives the waiters nothing: each then sends its own.
    One per store and event loop."""

    _by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[int, _InFlightSends]] = weakref.WeakKeyDictionary()

    def __init__(self, store: Any):
        self.store = store
        self.out: dict[str, asyncio.Future[dict[str, Any] | None]] = {}

    @classmethod
    def of(cls, store: Any) -> _InFlightSends:
        per_store = cls._by_loop.setdefault(asyncio.get_running_loop(), {})
        found = per_store.get(id(store))
        if found is None or found.store is not store:
            found = per_store[id(store)] = cls(store)
        return found

    async def answer_of(self, key: str) -> dict[str, Any] | None:
        """The answer of the equal request out now, once it is back (None: none is out, or it failed)."""
        pending = self.out.get(key)
        return None if pending is None else await asyncio.shield(pending)

    @contextlib.contextmanager
    def sent(self, key: str) -> Iterator[Callable[[dict[str, Any]], None]]:
        """Mark `key` as out while the block sends it; the block shares the answer through the callable given."""
        pending: asyncio.Future[dict[str, Any] | None] = asyncio.get_running_loop().create_future()
        self.out[key] = pending

        def share(response: dict[str, Any]) -> None:
            if not pending.done():
                pending.set_result(response)

        try:
            yield share
        finally:
            if not pending.done():
                pending.set_result(None)
            if self.out.get(key) is pending:
                del self.out[key]


def request_body(request: ChatRequest, settings: ModelSettings) -> dict[str, Any]:
    body: dict[str, Any] = {"model": settings.model, "messages": request.messages}
    body.update(settings.sampling_for(request.sampling))
    if request.tools:
        body["tools"] = request.tools
        if request.tool_choice is not None:
            body["tool_choice"] = request.tool_choice
    body.update(settings.extra_body)
    return body


def _served_url(base_url: str) -> str:
    """The URL requests go to: the built-in local model's server (started here on first use) for `local:NAME`."""
    if not local_model.is_local(base_url):
        return base_url
    from evaluators.engine.local_model_server import resolve  # its HTTP server machinery only when used

    return resolve(base_url)


def encode_body(body: dict[str, Any]) -> bytes:
    """The request body as sent. Key order is fixed by `request_body`, so equal requests encode equally.
    A lone surrogate (a model's earlier reply can hold one, fed back in a dialogue) goes as its \\u escape."""
    try:
        return json.dumps(body, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        return json.dumps(body).encode()


def installation_salt() -> bytes:
    """This installation's secret for cache keys: made on first use, readable by its owner only. Made
    aside and linked into place, so a process that starts at the same moment never reads half of it."""
    path = toolboard_home() / CACHE_SALT_FILE
    text = secret_file(path, secrets.token_hex(32).encode("ascii")).decode("ascii", errors="replace").strip()
    try:
        salt = bytes.fromhex(text)
    except ValueError:
        salt = b""
    if len(salt) < 16:
        raise ToolboardError(f"{path} is damaged (it should hold 64 hex digits); delete it: a new one is made, and"
                             " answers cached for endpoints with keys are asked again")
    return salt


def key_identity(api_key: str) -> str:
    """Stands for the key in cache keys: an HMAC with this installation's secret, so what is stored is
    neither the key nor a plain hash of it that guesses could be checked against."""
    return hmac.new(installation_salt(), api_key.encode(), hashlib.sha256).hexdigest()


CACHE_KEY_VERSION = b"toolboard cache key 2\n"


def cache_key(base_url: str, payload: bytes, key_id: str | None = None) -> str:
    """The response cache's key: endpoint, the key's identity (`key_identity`) and body, so a visitor
    with another key (or a wrong one, or none) never gets answers paid for with someone else's. Keys of
    the first form (URL and body only: answers paid with any key) are never made again; migration 4 of
    the store dropped them."""
    who = b"key " + key_id.encode() if key_id else b"no key"
    return hashlib.sha256(CACHE_KEY_VERSION + base_url.rstrip("/").encode() + b"\n" + who + b"\n" + payload).hexdigest()


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
    # Whose calls these are in a sample's events: the tested model's ("model") or a role's (e.g. "judge").
    role: str = "model"
    # The requests in flight this client counts against (default: its own limit of `concurrency`).
    request_limit: RequestLimit | None = None

    def __post_init__(self) -> None:
        # A key that cannot be sent (a newline, a zero-width space) fails each request at once and
        # clearly, not after retries as a "malformed response"; runs should refuse it before starting.
        self._key_problem: str | None = None
        try:
            self.api_key = check_api_key(self.api_key)
        except ToolboardError as problem:
            self._key_problem = str(problem)
            self.api_key = None
        self._key_id = key_identity(self.api_key) if self.api_key else None
        # `local:NAME` is the built-in local model: its server starts on first use (cache keys keep the name).
        self._endpoint = EndpointSpec(_served_url(self.settings.base_url), self.api_key, self.settings.timeout)
        self._sdk_client: Any = None
        self.limit = self.request_limit or RequestLimit(self.concurrency)
        self._pacer = SendPacer(self.concurrency) if pacing_enabled() else None

    def capture_requests(self) -> SentRequests:
        """Record the requests this client (the tested model's) makes for the current task from now on, as
        `start_request_count` counts them; other clients' (a judge, a simulated user with its own client) are
        not recorded, so they never replace the tested model's."""
        record = SentRequests(self)
        _SENT_IN_TASK.set(record)
        return record

    async def close(self) -> None:
        if self._sdk_client is not None:
            await self._sdk_client.close()

    async def _attempt(self, payload: bytes) -> dict[str, Any]:
        """One attempt through the SDK, on this event loop."""
        if self._sdk_client is None:
            self._sdk_client = make_sdk_client(self._endpoint)
        phase_log.mark("first request")
        response = await post_completion(self._sdk_client, payload, self.settings.timeout)
        phase_log.mark_latest("last answer")
        return response

    def _result(self, response: dict[str, Any], key: str, latency: float, attempts: int, cached: bool) -> ChatResult:
        calls = [ToolCall(c["name"], c["arguments"]) for c in response["tool_calls"]] if response["tool_calls"] else None
        message = response.get("message")
        return ChatResult(response["text"], calls, response["usage"], latency, attempts, cached, key, response,
                          message if isinstance(message, dict) else None)

    async def complete(self, request: ChatRequest, evidence: bool = True, role: str | None = None) -> ChatResult:
        """One chat completion (from the cache when allowed), recorded in the sample's events (see EventLog)
        under `role` (default: this client's). `evidence=False`: not recorded as the sample's request (the
        tested model playing another role, e.g. the simulated user)."""
        payload = encode_body(request_body(request, self.settings))
        log = _EVENTS_IN_TASK.get()
        started = time.perf_counter()
        try:
            result = await self._complete(payload, evidence)
        except RequestFailed as failure:
            if log is not None:
                log.add(_Call(role or self.role, payload, None, str(failure), time.perf_counter() - started, False))
            raise
        if log is not None:
            log.add(_Call(role or self.role, payload, result.response, None, result.latency, result.cached))
        return result

    async def _complete(self, payload: bytes, evidence: bool) -> ChatResult:
        if self._key_problem is not None:
            raise RequestFailed(self._key_problem, 0)
        key = cache_key(self.settings.base_url, payload, self._key_id)
        record = _SENT_IN_TASK.get()
        if evidence and record is not None and record.client is self:  # before the cache: a cached answer's body was sent too
            record.count += 1
            record.last = payload
        if not (self.use_cache and self.store is not None):
            async with self.limit.semaphore():
                return await self._send_with_retries(payload, key)
        cached = await _CacheLookups.of(self.store).get(key)
        if cached is not None:
            return self._result(cached, key, 0.0, 0, cached=True)
        sending = _InFlightSends.of(self.store)
        answer = await sending.answer_of(key)
        if answer is not None:  # the same request was out: its answer, as the cache would have given it
            return self._result(answer, key, 0.0, 0, cached=True)
        with sending.sent(key) as share:
            async with self.limit.semaphore():
                result = await self._send_with_retries(payload, key)
            share(result.response)
            return result

    async def _send_with_retries(self, payload: bytes, key: str) -> ChatResult:
        attempt = 0
        while True:
            attempt += 1
            if self._pacer is not None:
                await self._pacer.wait()
            self.requests_sent += 1
            box = _REQUESTS_IN_TASK.get()
            if box is not None:
                box[0] += 1
            try:
                # The global limit is held only while a request is out: not while paced or backing off.
                async with _GLOBAL_LIMIT.semaphore():
                    started = time.perf_counter()
                    response = await self._attempt(payload)
                    latency = time.perf_counter() - started
            except AttemptFailed as failure:
                # Redacted here too: whatever sent the attempt, no key leaves this client in an error.
                problem = redact(failure.problem, (self.api_key,))
                if not failure.retryable:
                    raise RequestFailed(problem, attempt) from None
                if attempt >= self.retry.max_attempts:
                    raise RequestFailed(f"{problem} (gave up after {attempt} attempts)", attempt) from None
                await asyncio.sleep(self.retry.delay(attempt, failure.retry_after))
                continue
            if self._pacer is not None:
                self._pacer.observe(latency)
            if self.on_response is not None:
                self.on_response(key, response)
            elif self.store is not None:
                self.store.cache_put(key, response)
            return self._result(response, key, latency, attempt, cached=False)
