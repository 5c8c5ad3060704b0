"""BFCL's web search categories played against an endpoint: the two tools the official `WebSearchAPI` offers,
written here, with the official result shapes and texts, over a pluggable search backend.

- `WebSearchTools`: `search_engine_query(keywords, max_results=10, region="wt-wt")` returns a list of
  `{"title", "href", "body"}` (no `body` in web_search_no_snippet), `{"error": "Failed to retrieve ..."}` when
  the payload has no organic results, `{"error": str(e)}` when the recording lacks the search; `fetch_url_content(url,
  mode="raw")` returns `{"content": ...}` (raw, markdown through html2text, truncate through BeautifulSoup),
  raises `Invalid URL: ...` for a URL that is not http(s) (the loop shows `Error during execution: ...`), and
  returns `{"error": "An error occurred while fetching <url>: <e>"}` for any failure of the download or the mode.
- Backends: `SerpApiBackend` (the official SerpAPI DuckDuckGo query; the key from SERPAPI_API_KEY, read at run
  time, never stored; HTTP 429 retried a bounded number of times, a deviation from the official unbounded loop; a
  search SerpAPI cannot answer, SearchBackendFailed, ends the item as a request error, another deviation)
  and `RecordedBackend` (a JSON recording of search payloads and pages: an item replays exactly, nothing is sent).
- `guarded_fetch`: every download of a model-chosen URL, checked as a public deployment checks hosts (no loopback,
  private, link-local... address), redirects followed by hand with each hop checked, a byte cap and a deadline.
  Always on, on every deployment: there is no unguarded path.
- `WebSearchHost`: the environment host's interface (open/execute/state/close) run in this process, so the
  multi-turn rollout plays a web search item unchanged; calls are executed as the multi-turn worker executes
  them (execution.execute_call_texts: the official rewrite, blocked names, error texts), in a thread, a bounded
  number at a time.

The recording (TOOLBOARD_BFCL_WEB_SEARCH_RECORDING):
```
{"searches": [{"keywords": "...", "region": "wt-wt", "payload": {"organic_results": [{"title", "link",
               "snippet"}, ...]}}, ...],
 "pages": {"https://...": {"text": "<html>...", "status": 200}, ...}}
```
"""

from __future__ import annotations

import asyncio
import http
import json
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from evaluators.benchmarks.bfcl.categories import WEB_SEARCH
from evaluators.benchmarks.bfcl.wheel import pinned_wheel, read_member  # also: its settings are declared first
from evaluators.core.environment import declare
from evaluators.core.errors import ToolboardError
from evaluators.core.public_hosts import DEFAULT_PORTS, HostNotAllowedError, IPAddress, public_addresses
from evaluators.core.types import Prediction, Sample

RECORDING = declare("bfcl_web_search_recording", "none",
                    "a JSON file of recorded search results and pages that BFCL web search replays (with "
                    "--option web_search_backend=recorded)")
SERPAPI_KEY_ENV = "SERPAPI_API_KEY"  # the official variable
SERPAPI_URL = "https://serpapi.com/search"
SERPAPI_URL_SETTING = declare("serpapi_url", SERPAPI_URL,
                              "tests only: where BFCL web search sends its SerpAPI searches")
BACKEND_OPTION = "web_search_backend"
SERPAPI, RECORDED = "serpapi", "recorded"
BACKENDS = (SERPAPI, RECORDED)
WEB_SEARCH_CLASS = "WebSearchAPI"
NO_SNIPPET = "no_snippet"

NO_RESULTS = "Failed to retrieve the search results from server. Please try again later."
# Deviations from the official loop, bounded where the official one is not.
SERPAPI_ATTEMPTS = 5  # the official loop retries a 429 forever
SERPAPI_MAX_WAIT_S = 120.0  # the official cap of one wait
SERPAPI_TIMEOUT_S = 60.0
MAX_REDIRECTS = 5
MAX_PAGE_BYTES = 5_000_000  # the official fetch reads any size
FETCH_TIMEOUT_S = 20.0  # the official per-operation timeout
FETCH_DEADLINE_S = 60.0  # a whole download, redirects included
STORED_RESULT_CHARS = 2_000  # what the evidence keeps of one tool result
WEB_CALLS_AT_ONCE = 8
# The headers the official fetch sends (a browser's).
BROWSER_HEADERS = {
    "User-Agent": "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
                  "Chrome/112.0.0.0 Safari/537.36",
    "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,"
              "application/signed-exchange;v=b3;q=0.7",
    "Accept-Language": "en-US,en;q=0.9",
    "Accept-Encoding": "gzip, deflate, br",
    "Connection": "keep-alive",
    "Upgrade-Insecure-Requests": "1",
    "Referer": "https://www.google.com/",
    "Sec-Fetch-Site": "same-origin",
    "Sec-Fetch-Mode": "navigate",
    "Sec-Fetch-User": "?1",
    "Sec-Fetch-Dest": "document",
}


class WebSearchBackendMissing(ToolboardError):
    """A web search run with no backend to answer its searches."""


class FetchRefused(Exception):
    """A download the guard stopped (its text is what the model reads after 'An error occurred while fetching')."""


class SearchBackendFailed(Exception):
    """The search backend could not answer: no connection, an HTTP error status, or 429s past the attempts (quota or
    rate). Not the model's doing: the item ends as a request error, re-runnable (`run --rerun-errors`), never scored
    on an answer the model gave without its search (officially the model is shown "Failed to retrieve…" and goes on)."""


class HTTPStatusError(Exception):
    """An HTTP error status, worded as requests' raise_for_status words it."""


def status_error_text(status: int, url: str) -> str:
    try:
        reason = http.HTTPStatus(status).phrase
    except ValueError:
        reason = ""
    kind = "Client" if 400 <= status < 500 else "Server"
    return f"{status} {kind} Error: {reason} for url: {url}"


# ---- the downloads -----------------------------------------------------------------------------------------

# A host check: raises HostNotAllowedError, else returns the checked addresses the fetch connects to (None: connect
# by name, for a check that allows a test's own loopback server).
HostCheck = Callable[[str, int], "list[IPAddress] | None"]


def public_host_check(host: str, port: int) -> list[IPAddress]:
    """The public-deployment host check, applied on every deployment to model-chosen URLs; the checked addresses."""
    return public_addresses(host, port, HostNotAllowedError)


@dataclass(frozen=True)
class Target:
    """Where a fetch connects: the URL as sent (its host the checked address, when pinned), the Host header and
    the name TLS verifies (the URL's host, as the model wrote it)."""

    url: str
    host_header: str | None = None
    tls_name: str | None = None


def _pinned_target(url: str, address: IPAddress | None) -> Target:
    """The URL sent to `address` itself (no second DNS lookup that could answer differently: rebinding), the name
    kept for the Host header and for TLS (SNI and the certificate's name)."""
    if address is None:
        return Target(url)
    parts = urlsplit(url)
    literal = f"[{address}]" if address.version == 6 else str(address)
    netloc = literal + (f":{parts.port}" if parts.port else "")
    host_header = parts.netloc.rpartition("@")[2]
    tls_name = parts.hostname if parts.scheme.lower() == "https" else None
    return Target(urlunsplit((parts.scheme, netloc, parts.path, parts.query, "")), host_header, tls_name)


def _checked_url(url: str, host_check: HostCheck) -> Target:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        raise FetchRefused("only http(s) URLs with a host are fetched")
    if "@" in parts.netloc:
        raise FetchRefused("a URL with a user name or password is not fetched")
    try:
        port = parts.port or DEFAULT_PORTS[scheme]
    except ValueError:
        raise FetchRefused(f"host {parts.hostname!r} has an invalid port") from None
    try:
        addresses = host_check(parts.hostname, port)
    except HostNotAllowedError as refused:
        raise FetchRefused(f"not fetched: {str(refused).replace(' on a public deployment', '')}") from None
    return _pinned_target(url, addresses[0] if addresses else None)


@dataclass
class Page:
    status: int
    text: str
    url: str


def _text_of(body: bytes, content_type: str) -> str:
    """The body as text, as requests decodes it: the header's charset; text/* without one is ISO-8859-1; else
    UTF-8 (requests guesses with charset_normalizer there: a documented difference, which rarely matters)."""
    charset = None
    for part in content_type.split(";")[1:]:
        key, _, value = part.strip().partition("=")
        if key.lower() == "charset" and value:
            charset = value.strip("\"' ")
    if charset is None and content_type.strip().lower().startswith("text/"):
        charset = "ISO-8859-1"
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:
        return body.decode("utf-8", errors="replace")


def guarded_fetch(url: str, host_check: HostCheck = public_host_check, max_bytes: int = MAX_PAGE_BYTES,
                  timeout: float = FETCH_TIMEOUT_S, deadline_s: float = FETCH_DEADLINE_S) -> Page:
    """GET `url` with the official headers; redirects followed by hand (at most MAX_REDIRECTS), every hop's host
    checked first and then connected to at an address the check passed (never resolved again); the body read up to
    `max_bytes` (more: refused) within `deadline_s` in all."""
    import httpx

    deadline = time.monotonic() + deadline_s
    with httpx.Client(follow_redirects=False, timeout=timeout, headers=BROWSER_HEADERS, trust_env=False) as client:
        for _ in range(MAX_REDIRECTS + 1):
            target = _checked_url(url, host_check)
            with client.stream("GET", target.url, headers={"Host": target.host_header} if target.host_header else None,
                               extensions={"sni_hostname": target.tls_name} if target.tls_name else None) as response:
                if response.is_redirect and "location" in response.headers:
                    url = urljoin(url, response.headers["location"])
                    continue
                body = bytearray()
                for chunk in response.iter_bytes():
                    body += chunk
                    if len(body) > max_bytes:
                        raise FetchRefused(f"the page is larger than {max_bytes} bytes, the cap of a fetch")
                    if time.monotonic() > deadline:
                        raise FetchRefused(f"the download took longer than {deadline_s:g} s, the bound of a fetch")
                if response.status_code >= 400:
                    raise HTTPStatusError(status_error_text(response.status_code, url))
                return Page(response.status_code, _text_of(bytes(body), response.headers.get("content-type", "")), url)
    raise FetchRefused(f"more than {MAX_REDIRECTS} redirects")


# ---- the backends ------------------------------------------------------------------------------------------


class SerpApiBackend:
    """The official search: SerpAPI's DuckDuckGo engine (q, kl=region), its key from SERPAPI_API_KEY; a 429 (an
    exception or a payload error naming it) waits and retries, at most SERPAPI_ATTEMPTS times in all."""

    def __init__(self, key: str, url: str = SERPAPI_URL, host_check: HostCheck = public_host_check,
                 sleep: Callable[[float], None] = time.sleep, attempts: int = SERPAPI_ATTEMPTS):
        self._key = key
        self.url = url
        self.host_check = host_check
        self.sleep = sleep
        self.attempts = attempts

    def __repr__(self) -> str:  # never the key
        return f"SerpApiBackend(url={self.url!r})"

    def _get(self, keywords: str, region: str) -> tuple[int, dict[str, Any]]:
        import httpx

        params = {"engine": "duckduckgo", "q": keywords, "kl": region, "api_key": self._key, "source": "python",
                  "output": "json"}
        response = httpx.get(self.url, params=params, timeout=SERPAPI_TIMEOUT_S)  # as the official client: no raise
        payload = response.json()
        return response.status_code, payload if isinstance(payload, dict) else {}

    def search(self, keywords: str, region: str) -> dict[str, Any]:
        """The payload SerpAPI answered with HTTP 200 (its own "no results" error included, as the official client
        returns it); a 429 (the status, or an error naming it) is waited out and tried again while attempts remain.
        SearchBackendFailed when it cannot be reached, answers another error status, or 429s past the attempts."""
        backoff = 2.0
        for attempt in range(self.attempts):
            last = attempt + 1 == self.attempts
            try:
                status, payload = self._get(keywords, region)
            except Exception as failure:  # noqa: BLE001 - only a 429 is retried, as officially
                text = self._without_key(str(failure))
                if "429" in text and not last:
                    self._wait(backoff)
                    backoff = min(backoff * 2, SERPAPI_MAX_WAIT_S)
                    continue
                raise SearchBackendFailed(f"SerpAPI could not be reached: {text}") from None
            if (status == 429 or "429" in str(payload.get("error", ""))) and not last:
                self._wait(backoff)
                backoff = min(backoff * 2, SERPAPI_MAX_WAIT_S)
                continue
            if status >= 400:
                said = self._without_key(str(payload.get("error", "")))
                raise SearchBackendFailed(f"SerpAPI answered HTTP {status}" + (f": {said}" if said else "")
                                          + (f" (after {self.attempts} attempts)" if status == 429 else ""))
            return payload
        return {}  # pragma: no cover - the last attempt returns

    def _without_key(self, text: str) -> str:
        """A failure's words without the key (or any other key-shaped token): the one redaction module's rule,
        imported only when a search fails (it brings the store)."""
        from evaluators.engine.redact import redact

        return redact(text, [self._key])

    def _wait(self, backoff: float) -> None:
        self.sleep(backoff + random.uniform(0, backoff))

    def fetch(self, url: str) -> Page:
        return guarded_fetch(url, self.host_check)


@dataclass
class Recording:
    searches: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    pages: dict[str, dict[str, Any]] = field(default_factory=dict)


def read_recording(path: str | Path) -> Recording:
    where = Path(path)
    try:
        data = json.loads(where.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise WebSearchBackendMissing(f"the web search recording {str(where)!r} does not exist") from None
    except (OSError, ValueError) as failure:
        raise ToolboardError(f"the web search recording {str(where)!r} cannot be read as JSON: {failure}") from None
    if not isinstance(data, dict):
        raise ToolboardError(f"the web search recording {str(where)!r} must be an object with 'searches' and 'pages'")
    recording = Recording()
    for index, entry in enumerate(data.get("searches") or []):
        if not (isinstance(entry, dict) and isinstance(entry.get("keywords"), str)
                and isinstance(entry.get("payload"), dict)):
            raise ToolboardError(f"searches[{index}] of the web search recording needs 'keywords' (text) and "
                                 "'payload' (SerpAPI's answer, an object)")
        recording.searches[(entry["keywords"], str(entry.get("region", "wt-wt")))] = entry["payload"]
    pages = data.get("pages") or {}
    if not isinstance(pages, dict):
        raise ToolboardError("'pages' of the web search recording must map URLs to {'text', 'status'}")
    for url, page in pages.items():
        if not (isinstance(page, dict) and isinstance(page.get("text", ""), str)):
            raise ToolboardError(f"page {url!r} of the web search recording must be an object with a 'text'")
        recording.pages[url] = page
    return recording


class RecordedBackend:
    """Searches and pages answered from a recording; nothing is sent. What the recording lacks fails that call."""

    def __init__(self, recording: Recording):
        self.recording = recording

    def search(self, keywords: str, region: str) -> dict[str, Any]:
        payload = self.recording.searches.get((keywords, region))
        if payload is None:
            raise LookupError(f"no recorded search for keywords {keywords!r} in region {region!r}")
        copied: dict[str, Any] = json.loads(json.dumps(payload))
        return copied

    def fetch(self, url: str) -> Page:
        page = self.recording.pages.get(url)
        if page is None:
            raise LookupError(f"no recorded page for {url}")
        status = int(page.get("status", 200))
        if status >= 400:
            raise HTTPStatusError(status_error_text(status, url))
        return Page(status, str(page.get("text", "")), url)


Backend = SerpApiBackend | RecordedBackend


def backend_problem(backend: str, environ: dict[str, str] | None = None) -> str | None:
    """Why a web search run with this backend cannot start (None: it can), naming what to set."""
    import os

    environ = dict(os.environ) if environ is None else environ
    part = f"web search ({', '.join(WEB_SEARCH)})"
    if backend == RECORDED:
        path = RECORDING.read(environ)
        if not path:
            return (f"bfcl: {part} with --option {BACKEND_OPTION}=recorded needs a recording: set {RECORDING.name} "
                    "to a JSON file of recorded searches and pages")
        if not Path(path).is_file():
            return f"bfcl: {part}: the recording in {RECORDING.name} ({path!r}) is not a file"
        return None
    if backend == SERPAPI:
        key = (environ.get(SERPAPI_KEY_ENV) or "").strip()
        if not key:
            return (f"bfcl: {part} needs a search backend: set {SERPAPI_KEY_ENV} (a SerpAPI key, the official "
                    f"backend), or replay a recording with --option {BACKEND_OPTION}=recorded and "
                    f"{RECORDING.name}=<file>; or choose categories without web search (e.g. the groups "
                    "single_turn and multi_turn)")
        from evaluators.engine.endpoint_guard import InvalidApiKeyError, check_api_key

        try:
            check_api_key(environ.get(SERPAPI_KEY_ENV), f"the key in {SERPAPI_KEY_ENV}")
        except InvalidApiKeyError as invalid:
            return f"bfcl: {part}: {invalid}"
        return None
    return f"bfcl: unknown web search backend {backend!r}; known: {', '.join(BACKENDS)}"


def unavailable_now(environ: dict[str, str] | None = None) -> tuple[str, ...]:
    """Benchmark.unavailable_now: web search when no backend is configured (no SerpAPI key, no recording), so a
    run of every category leaves it out instead of being refused."""
    configured = backend_problem(SERPAPI, environ) is None or backend_problem(RECORDED, environ) is None
    return () if configured else WEB_SEARCH


def make_backend(backend: str) -> Backend:
    """The backend a run's option names, configured from the environment (the key read now, kept in memory)."""
    import os

    from evaluators.engine.endpoint_guard import check_api_key

    problem = backend_problem(backend)
    if problem is not None:
        raise WebSearchBackendMissing(problem)
    if backend == RECORDED:
        return RecordedBackend(read_recording(str(RECORDING.read())))
    key = check_api_key(os.environ.get(SERPAPI_KEY_ENV), f"the key in {SERPAPI_KEY_ENV}")
    return SerpApiBackend(key or "", url=SERPAPI_URL_SETTING.read() or SERPAPI_URL)


# ---- the tools -------------------------------------------------------------------------------------------


def _markdown(text: str) -> str:
    import html2text

    return html2text.HTML2Text().handle(text)


def _visible_text(text: str) -> str:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(text, "html.parser")
    for element in soup(["script", "style"]):
        element.extract()
    return soup.get_text(separator="\n", strip=True)


class WebSearchTools:
    """One item's tools (the official class's public methods, same names, parameters and results). `log` keeps,
    for the evidence, each search's keywords and each fetched URL."""

    def __init__(self, backend: Backend):
        self._backend = backend
        self._show_snippet = True
        self._log: list[dict[str, Any]] = []
        self.backend_failure: str | None = None  # SearchBackendFailed's text: the host then ends the item

    def _load_scenario(self, initial_config: dict, long_context: bool = False) -> None:
        self._show_snippet = initial_config["show_snippet"]

    def search_engine_query(self, keywords: str, max_results: int | None = 10, region: str | None = "wt-wt") -> Any:
        self._log.append({"search": keywords, "region": region})
        try:
            payload = self._backend.search(keywords, region)  # type: ignore[arg-type]
        except SearchBackendFailed as failure:
            self.backend_failure = str(failure)
            return {"error": str(failure)}
        except Exception as failure:  # noqa: BLE001 - the official result of a failed search
            return {"error": str(failure)}
        if "organic_results" not in payload:
            return {"error": NO_RESULTS}
        results = []
        for result in payload["organic_results"][:max_results]:
            item = {"title": result["title"], "href": result["link"]}
            if self._show_snippet:
                item["body"] = result["snippet"]
            results.append(item)
        return results

    def fetch_url_content(self, url: str, mode: str = "raw") -> Any:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"Invalid URL: {url}")
        self._log.append({"fetch": url, "mode": mode})
        try:
            text = self._backend.fetch(url).text
            if mode == "raw":
                return {"content": text}
            if mode == "markdown":
                return {"content": _markdown(text)}
            if mode == "truncate":
                return {"content": _visible_text(text)}
            raise ValueError(f"Unsupported mode: {mode}")
        except Exception as failure:  # noqa: BLE001 - the official result of a failed fetch
            return {"error": f"An error occurred while fetching {url}: {failure}"}


def initial_config(sample: Sample) -> dict[str, Any]:
    """populate_initial_settings_for_web_search_test_cases: snippets shown unless the id says no_snippet."""
    return {WEB_SEARCH_CLASS: {"show_snippet": NO_SNIPPET not in sample.id}}


# ---- the host the rollout plays in ---------------------------------------------------------------------------

_WEB_CALLS = threading.BoundedSemaphore(WEB_CALLS_AT_ONCE)


@dataclass(eq=False)
class WebSession:
    environment: Any
    tools: WebSearchTools

    @property
    def state(self) -> dict[str, Any]:
        """The state after the latest open or execute, as an environment Session carries it (the rollout reads it
        after each turn): whether snippets show, and the searches and fetches so far."""
        return {WEB_SEARCH_CLASS: {"show_snippet": self.tools._show_snippet,
                                   "calls": [dict(entry) for entry in self.tools._log]}}


class WebSearchHost:
    """EnvironmentHost's async interface for web search items, in this process: the tools' calls run in threads
    (blocking downloads, each bounded in time and size), WEB_CALLS_AT_ONCE at a time across the process."""

    def __init__(self, backend: Backend):
        self.backend = backend

    def open(self, sample: Sample, namespace: str) -> WebSession:
        import httpx  # noqa: F401 - imported here, once, before the calls' threads use it (two threads' first imports race)

        from evaluators.benchmarks.bfcl.multi_turn.execution import open_environment

        tools: dict[str, WebSearchTools] = {}

        def made() -> WebSearchTools:
            tools["made"] = WebSearchTools(self.backend)
            return tools["made"]

        environment = open_environment({WEB_SEARCH_CLASS: made}, initial_config(sample),  # type: ignore[dict-item]
                                       namespace, sample.id, long_context=False)
        return WebSession(environment, tools["made"])

    def execute(self, session: WebSession, call_texts: list[str]) -> list[str]:
        from evaluators.benchmarks.bfcl.multi_turn.execution import execute_call_texts
        from evaluators.engine.client import RequestFailed

        with _WEB_CALLS:
            results = execute_call_texts(session.environment, call_texts)
        if session.tools.backend_failure:
            raise RequestFailed(f"the web search backend failed ({session.tools.backend_failure}); the item was not "
                                "scored and can be played again: run --rerun-errors RUN_ID", 1)
        return results

    async def open_async(self, sample: Sample, namespace: str, track_state: bool = False) -> WebSession:
        return self.open(sample, namespace)  # the state is always at hand here (WebSession.state)

    async def execute_async(self, session: WebSession, call_texts: list[str]) -> list[str]:
        return await asyncio.to_thread(self.execute, session, call_texts)

    async def state_async(self, session: WebSession) -> dict[str, Any]:
        return session.state

    async def close_async(self, session: WebSession) -> None:
        return None


def bounded_transcript(transcript: list[dict[str, Any]], limit: int = STORED_RESULT_CHARS) -> list[dict[str, Any]]:
    """The transcript as stored: each tool result cut to `limit` characters (the model saw it whole)."""
    for record in transcript:
        for step in record.get("steps", []):
            step["results"] = [text if len(text) <= limit else
                               text[:limit] + f"... [{len(text) - limit} more characters not stored]"
                               for text in step.get("results", [])]
    return transcript


# ---- one item, played ----------------------------------------------------------------------------------------

AGENTIC_FORMAT = "ADDITIONAL_SYSTEM_PROMPT_FOR_AGENTIC_RESPONSE_FORMAT"


def agentic_format_text(wheel: Path | None = None) -> str:
    """The system message the official loader puts first in an agentic item's first turn, read from the wheel."""
    return _agentic_format_of(str(wheel or _pinned()))


def _pinned() -> Path:
    return pinned_wheel()


@lru_cache(maxsize=4)
def _agentic_format_of(wheel_text: str) -> str:
    from evaluators.benchmarks.bfcl.official_source import PROMPTS_FILE, decode, module_constants
    from evaluators.core.errors import DataError

    where = f"{wheel_text}:{PROMPTS_FILE}"
    text = module_constants(decode(read_member(Path(wheel_text), PROMPTS_FILE), where), where).get(AGENTIC_FORMAT)
    if not isinstance(text, str):
        raise DataError(f"{AGENTIC_FORMAT} is not a text literal in {PROMPTS_FILE}", where)
    return text


def playable_sample(sample: Sample, agentic_format: str) -> Sample:
    """The item as the official loader leaves it for generation (process_agentic_test_case): the agentic format
    message first in its first turn. The docs (web_search.json) are in input["function"] since the load."""
    if not sample.input.get("function"):
        from evaluators.core.errors import DataError

        raise DataError("no function docs for this web search item (the data source lacks "
                        "multi_turn_func_doc/web_search.json)", sample.id)
    question = [list(turn) for turn in sample.input["question"]]
    question[0].insert(0, {"role": "system", "content": agentic_format})
    return replace(sample, input={**sample.input, "question": question})


async def run_web_search_item(sample: Sample, chat: Any, backend: Backend) -> Prediction:
    """The official prompting loop over one web search item (the multi-turn rollout, one turn, the step limit),
    its tools answered by `backend`; the stored transcript keeps each result bounded."""
    from evaluators.benchmarks.bfcl.multi_turn.rollout import run_rollout

    prediction = await run_rollout(playable_sample(sample, agentic_format_text()), chat,
                                   host=WebSearchHost(backend))  # type: ignore[arg-type]
    from evaluators.benchmarks.bfcl.multi_turn.evidence import TRANSCRIPT

    if prediction.extra and isinstance(prediction.extra.get(TRANSCRIPT), list):
        bounded_transcript(prediction.extra[TRANSCRIPT])
    return prediction


WEB_SEARCH_DIFFERENCES = (
    "web search: every fetch of a model-chosen URL is guarded (public hosts only, each redirect hop checked, at "
    f"most {MAX_PAGE_BYTES} bytes and {FETCH_DEADLINE_S:g} s), a SerpAPI 429 is retried {SERPAPI_ATTEMPTS} times "
    "at most (officially forever), a search SerpAPI cannot answer (no connection, an HTTP error status, 429s past "
    "those attempts) ends its item as a request error to re-run (officially the model is shown the failure text); "
    "with the recorded backend, searches and pages come from the recording",
)
_BACKENDS: dict[tuple[str, str | None, float | None], Backend] = {}
_BACKENDS_LOCK = threading.Lock()


def run_backend(backend: str) -> Backend:
    """The backend for this process's runs: made once per (kind, recording file and its time), so a recording
    is read once, and read anew when it changes."""
    path = RECORDING.read() if backend == RECORDED else None
    stamp = None
    if path is not None:
        try:
            stamp = Path(path).stat().st_mtime
        except OSError:
            stamp = None
    with _BACKENDS_LOCK:
        key = (backend, path, stamp)
        if backend == SERPAPI:  # the key is read anew for every item, and not kept beyond it
            return make_backend(backend)
        if key not in _BACKENDS:
            _BACKENDS[key] = make_backend(backend)
        return _BACKENDS[key]


async def run_with_backend(sample: Sample, chat: Any, backend: str) -> Prediction:
    return await run_web_search_item(sample, chat, run_backend(backend))
