"""BFCL web search played here: the two tools' official result shapes and texts (the no-snippet rule, the error
texts), the recorded and SerpAPI backends (bounded 429 retries, the key never in a result), the guard on every
fetch (loopback, private, redirects, size), and a run refused before it starts without a backend."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from evaluators.benchmarks.bfcl.agentic.web_search import (
    NO_RESULTS,
    RECORDED,
    SERPAPI,
    SERPAPI_KEY_ENV,
    FetchRefused,
    RecordedBackend,
    SerpApiBackend,
    WebSearchHost,
    backend_problem,
    bounded_transcript,
    guarded_fetch,
    public_host_check,
    read_recording,
)
from evaluators.benchmarks.bfcl.categories import WEB_SEARCH
from evaluators.core.types import Sample
from evaluators.engine.client import RequestFailed
from tests.web_search_fixtures import PAGE_HTML, FakeSerpApi, PageServer, recording, write_recording


def _sample(sample_id: str = "web_search_base_0") -> Sample:
    return Sample(sample_id, sample_id.rsplit("_", 1)[0], input={"question": [[{"role": "user", "content": "?"}]]},
                  gold=["Ada Example"])


def _execute(backend: Any, calls: list[str], sample_id: str = "web_search_base_0") -> list[str]:
    host = WebSearchHost(backend)

    async def play() -> list[str]:
        session = await host.open_async(_sample(sample_id), "org_model")
        return await host.execute_async(session, calls)

    return asyncio.run(play())


@pytest.fixture
def recorded(tmp_path: Path) -> RecordedBackend:
    return RecordedBackend(read_recording(write_recording(tmp_path)))


# ---- search_engine_query ---------------------------------------------------------------------------------


def test_a_search_returns_the_official_list_as_python_repr_at_most_max_results(recorded: RecordedBackend):
    [text] = _execute(recorded, ["search_engine_query(keywords='company founder', max_results=2)"])
    assert text == ("[{'title': 'Result 1 \u00e9', 'href': 'https://site1.example/page', 'body': \"Snippet 1 with "
                    "'quotes'\"}, {'title': 'Result 2 \u00e9', 'href': 'https://site2.example/page', 'body': "
                    "\"Snippet 2 with 'quotes'\"}]")
    [default] = _execute(recorded, ["search_engine_query(keywords='company founder')"])
    assert default.count("'title'") == 10  # max_results=10 by default, of 12
    [region] = _execute(recorded, ["search_engine_query(keywords='company founder', region='de-de')"])
    assert region.count("'title'") == 2


def test_no_snippet_drops_the_body(recorded: RecordedBackend):
    [text] = _execute(recorded, ["search_engine_query(keywords='company founder', max_results=1)"],
                      "web_search_no_snippet_3")
    assert text == "[{'title': 'Result 1 \u00e9', 'href': 'https://site1.example/page'}]"
    # a result without a snippet: fine without bodies, the official KeyError with them
    assert _execute(recorded, ["search_engine_query(keywords='no snippet')"], "web_search_no_snippet_3") == [
        "[{'title': 'Result 1 \u00e9', 'href': 'https://site1.example/page'}]"]
    assert _execute(recorded, ["search_engine_query(keywords='no snippet')"]) == ["Error during execution: 'snippet'"]


def test_the_search_error_texts(recorded: RecordedBackend):
    assert _execute(recorded, ["search_engine_query(keywords='empty answer')"]) == [
        json.dumps({"error": NO_RESULTS})]
    [missing] = _execute(recorded, ["search_engine_query(keywords='never recorded')"])
    assert json.loads(missing) == {"error": "no recorded search for keywords 'never recorded' in region 'wt-wt'"}
    [positional] = _execute(recorded, ["search_engine_query('company founder', 1)"])
    assert positional.startswith("[{'title': 'Result 1")


# ---- fetch_url_content -----------------------------------------------------------------------------------


def test_fetch_modes_and_error_texts(recorded: RecordedBackend):
    raw, truncated, markdown, unsupported, gone, invalid, absent = _execute(recorded, [
        "fetch_url_content(url='https://site1.example/page')",
        "fetch_url_content(url='https://site1.example/page', mode='truncate')",
        "fetch_url_content(url='https://site1.example/page', mode='markdown')",
        "fetch_url_content(url='https://site1.example/page', mode='pdf')",
        "fetch_url_content(url='https://gone.example/page')",
        "fetch_url_content(url='ftp://site1.example/page')",
        "fetch_url_content(url='https://nowhere.example/')",
    ])
    assert raw == json.dumps({"content": PAGE_HTML})
    assert json.loads(truncated) == {"content": "Founders\nFounders\nThe company was founded by\nAda Example\nin "
                                                "1999.\nCaf\u00e9 \u00e0 la carte"}
    assert "# Founders" in json.loads(markdown)["content"] and "**Ada Example**" in json.loads(markdown)["content"]
    assert json.loads(unsupported) == {"error": "An error occurred while fetching https://site1.example/page: "
                                                "Unsupported mode: pdf"}
    assert json.loads(gone) == {"error": "An error occurred while fetching https://gone.example/page: 404 Client "
                                         "Error: Not Found for url: https://gone.example/page"}
    assert invalid == "Error during execution: Invalid URL: ftp://site1.example/page"
    assert json.loads(absent) == {"error": "An error occurred while fetching https://nowhere.example/: no recorded "
                                           "page for https://nowhere.example/"}


def test_the_state_keeps_the_queries_and_pages_and_the_transcript_is_bounded(recorded: RecordedBackend):
    host = WebSearchHost(recorded)

    async def play() -> dict[str, Any]:
        session = await host.open_async(_sample(), "m")
        await host.execute_async(session, ["search_engine_query(keywords='company founder')",
                                           "fetch_url_content(url='https://site1.example/page')"])
        return await host.state_async(session)

    assert asyncio.run(play()) == {"WebSearchAPI": {"show_snippet": True, "calls": [
        {"search": "company founder", "region": "wt-wt"}, {"fetch": "https://site1.example/page", "mode": "raw"}]}}
    transcript = [{"steps": [{"results": ["x" * 5000, "short"]}]}]
    [[long, short]] = [step["results"] for step in bounded_transcript(transcript, 100)[0]["steps"]]
    assert long == "x" * 100 + "... [4900 more characters not stored]" and short == "short"


# ---- the guard ---------------------------------------------------------------------------------------------


def test_the_guard_refuses_loopback_private_and_link_local_hosts():
    for url, why in (("http://127.0.0.1:9/page", "loopback"), ("http://localhost:9/", "localhost"),
                     ("http://10.0.0.1/", "private"), ("http://169.254.169.254/latest/meta-data", "link-local"),
                     ("http://[::1]/", "loopback"), ("http://user:pw@example.org/", "user name")):
        with pytest.raises(FetchRefused, match=why):
            guarded_fetch(url)


def test_the_guard_checks_every_redirect_hop_and_caps_size(tmp_path: Path):
    with PageServer(big_bytes=50_000) as pages, PageServer() as other:
        allowed = {("127.0.0.1", pages.port)}

        def only_the_page_server(host: str, port: int) -> None:
            from evaluators.core.public_hosts import HostNotAllowedError, check_public_host

            if (host, port) not in allowed:
                check_public_host(host, port, HostNotAllowedError)

        page = guarded_fetch(f"{pages.base}/hop", only_the_page_server)
        assert page.text == PAGE_HTML and pages.hits == ["/hop", "/page"]
        with pytest.raises(FetchRefused, match="loopback"):
            guarded_fetch(f"{pages.base}/to/{other.port}", only_the_page_server)
        assert other.hits == []  # the unchecked host was never asked
        with pytest.raises(FetchRefused, match="private"):
            guarded_fetch(f"{pages.base}/private", only_the_page_server)
        with pytest.raises(FetchRefused, match="larger than 10000 bytes"):
            guarded_fetch(f"{pages.base}/big", only_the_page_server, max_bytes=10_000)
        assert len(guarded_fetch(f"{pages.base}/big", only_the_page_server).text) == 50_000


def test_a_fetch_connects_to_the_address_its_check_passed_never_to_a_second_dns_answer(
        monkeypatch: pytest.MonkeyPatch):
    """DNS rebinding: a name that resolves to a public address for the check and to this machine afterwards. The
    fetch connects to the checked address itself, so the loopback server is never reached; a pinned fetch still
    names the host (the Host header) as the model wrote it."""
    import ipaddress
    import socket

    real_getaddrinfo = socket.getaddrinfo
    answers: dict[str, list[str]] = {"rebind.example": ["8.8.8.8", "127.0.0.1"], "pages.example": ["10.0.0.1"]}

    def changing_dns(host: str, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host in answers:
            address = answers[host][0] if len(answers[host]) == 1 else answers[host].pop(0)
            return real_getaddrinfo(address, port, *args, **kwargs)
        return real_getaddrinfo(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", changing_dns)
    with PageServer() as pages:
        with pytest.raises(Exception) as failed:  # 8.8.8.8 is unreachable here: what matters is where it went
            guarded_fetch(f"http://rebind.example:{pages.port}/page", timeout=2, deadline_s=5)
        assert not isinstance(failed.value, FetchRefused) and pages.hits == []  # checked public; loopback never asked

        def pinned_to_the_page_server(host: str, port: int) -> list[Any]:
            return [ipaddress.ip_address("127.0.0.1")] if host == "pages.example" else public_host_check(host, port)

        page = guarded_fetch(f"http://pages.example:{pages.port}/page", pinned_to_the_page_server)
    assert page.text == PAGE_HTML and page.url == f"http://pages.example:{pages.port}/page"
    assert pages.host_headers == [f"pages.example:{pages.port}"]  # a private DNS answer was never used


def test_a_serpapi_fetch_of_a_loopback_url_is_an_error_text_for_the_model():
    backend = SerpApiBackend("k" * 20)
    [text] = _execute(backend, ["fetch_url_content(url='http://127.0.0.1:1/admin')"])
    error = json.loads(text)["error"]
    assert error.startswith("An error occurred while fetching http://127.0.0.1:1/admin: not fetched: host ")
    assert "loopback" in error


# ---- SerpAPI ------------------------------------------------------------------------------------------------


def test_serpapi_sends_the_official_query_and_retries_429_a_bounded_number_of_times():
    key = "serp-secret-key-123456"
    waits: list[float] = []
    with FakeSerpApi(busy=2) as serp:
        backend = SerpApiBackend(key, url=serp.url, sleep=waits.append)
        [text] = _execute(backend, ["search_engine_query(keywords='q one', region='us-en', max_results=1)"])
        assert text.startswith("[{'title': 'Result 1")
        assert len(waits) == 2 and 2 <= waits[0] <= 4 and 4 <= waits[1] <= 8
        assert serp.params[-1] == {"engine": "duckduckgo", "q": "q one", "kl": "us-en", "api_key": key,
                                   "source": "python", "output": "json"}
    with FakeSerpApi(busy=100) as serp:
        backend = SerpApiBackend(key, url=serp.url, sleep=waits.append, attempts=3)
        # the attempts spent (quota or rate): the item ends as a request error, never answered without its search
        with pytest.raises(RequestFailed, match=r"SerpAPI answered HTTP 429: .*run out of searches.* \(after 3 "
                                                r"attempts\).*--rerun-errors"):
            _execute(backend, ["search_engine_query(keywords='q')"])
        assert len(serp.params) == 3
    assert key not in repr(backend)


def test_a_search_backend_that_fails_ends_the_item_as_a_request_error_without_the_key():
    key = "serp-secret-key-123456"
    backend = SerpApiBackend(key, url=f"http://127.0.0.1:1/search?echo={key}")
    with pytest.raises(RequestFailed, match="SerpAPI could not be reached") as unreachable:
        _execute(backend, ["search_engine_query(keywords='q')"])
    assert key not in str(unreachable.value)
    with FakeSerpApi({"q": {"error": f"Invalid API key {key}."}}, statuses={"q": 401}) as serp:
        with pytest.raises(RequestFailed, match=r"HTTP 401: Invalid API key \[redacted\]") as refused:
            _execute(SerpApiBackend(key, url=serp.url), ["search_engine_query(keywords='q')"])
        assert key not in str(refused.value)
    # SerpAPI's own "no results" (an answer, HTTP 200): the official text, shown to the model
    with FakeSerpApi({"q": {"error": "DuckDuckGo hasn't returned any results for this query."}}) as serp:
        [text] = _execute(SerpApiBackend(key, url=serp.url), ["search_engine_query(keywords='q')"])
        assert json.loads(text) == {"error": NO_RESULTS}


# ---- configuration ---------------------------------------------------------------------------------------


def test_a_missing_backend_is_named_with_what_to_set(tmp_path: Path):
    problem = backend_problem(SERPAPI, {})
    assert problem is not None and "web search (web_search_base, web_search_no_snippet)" in problem
    assert SERPAPI_KEY_ENV in problem and "TOOLBOARD_BFCL_WEB_SEARCH_RECORDING" in problem
    assert backend_problem(SERPAPI, {SERPAPI_KEY_ENV: "k"}) is None
    pasted = str(backend_problem(SERPAPI, {SERPAPI_KEY_ENV: "serp\u200bsecret"}))
    assert "the key in SERPAPI_API_KEY holds a zero-width space" in pasted and "secret" not in pasted
    recorded = backend_problem(RECORDED, {})
    assert recorded is not None and "TOOLBOARD_BFCL_WEB_SEARCH_RECORDING" in recorded
    assert "is not a file" in str(backend_problem(RECORDED, {"TOOLBOARD_BFCL_WEB_SEARCH_RECORDING": str(tmp_path)}))
    path = write_recording(tmp_path, recording())
    assert backend_problem(RECORDED, {"TOOLBOARD_BFCL_WEB_SEARCH_RECORDING": str(path)}) is None


def test_a_run_naming_web_search_needs_a_backend_and_every_category_leaves_it_out_without_one(
        bfcl_official: Any, monkeypatch: pytest.MonkeyPatch):
    from evaluators.benchmarks.bfcl.solve import request_profile, run_problem, runs_web_search
    from evaluators.benchmarks.bfcl.wheel import WHEEL_PATH_ENV
    from evaluators.core.errors import ToolboardError
    from evaluators.core.registry import get_benchmark
    from evaluators.core.selection import runnable_subsets
    from evaluators.engine.settings import ModelSettings, RunConfig

    monkeypatch.setenv(WHEEL_PATH_ENV, str(bfcl_official.wheel))
    monkeypatch.delenv(SERPAPI_KEY_ENV, raising=False)
    monkeypatch.delenv("TOOLBOARD_BFCL_WEB_SEARCH_RECORDING", raising=False)
    benchmark = get_benchmark("bfcl")
    model = ModelSettings(base_url="http://127.0.0.1:9/v1", model="m")
    for subsets in (("web_search_no_snippet",), ("agentic",), ("web_search", "simple_python")):
        with pytest.raises(ToolboardError, match="needs a search backend: set SERPAPI_API_KEY"):
            request_profile(RunConfig("bfcl", model, subsets=subsets))
        assert "needs a search backend" in str(run_problem(RunConfig("bfcl", model, subsets=subsets)))
    # every category (none named, or `all`): web search left out, as memory is; the run goes on
    for names in (None, ["all"]):
        assert not set(WEB_SEARCH) & set(runnable_subsets(benchmark, names))
    assert not runs_web_search(RunConfig("bfcl", model)) and run_problem(RunConfig("bfcl", model)) is None
    assert "web_search" not in str(request_profile(RunConfig("bfcl", model)).differences)
    # with a backend configured, every category plays it
    monkeypatch.setenv(SERPAPI_KEY_ENV, "k")
    assert set(WEB_SEARCH) <= set(runnable_subsets(benchmark, None))
    assert runs_web_search(RunConfig("bfcl", model, subsets=("all",)))
    # ... but not from a folder of the single-turn files only
    assert not runs_web_search(RunConfig("bfcl", model, data_dir=str(bfcl_official.data_dir)))
    profile = request_profile(RunConfig("bfcl", model, subsets=("web_search",)))
    assert profile.sampling["multi_turn"] == {"temperature": 0.001, "store": False}
    assert any("at most 5000000 bytes" in difference for difference in profile.differences)
    # the option names the backend: a recording asked for but not set is refused, naming the variable
    with pytest.raises(ToolboardError, match="TOOLBOARD_BFCL_WEB_SEARCH_RECORDING"):
        request_profile(RunConfig("bfcl", model, subsets=("web_search",), options={"web_search_backend": "recorded"}))
    tools = ModelSettings(base_url="http://127.0.0.1:9/v1", model="m", request_mode="tools")
    with pytest.raises(ToolboardError, match="prompt mode only"):
        request_profile(RunConfig("bfcl", tools, subsets=("web_search_base",)))


def test_a_public_deployment_never_spends_the_operators_serpapi_key(bfcl_official: Any, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch):
    """The SerpAPI key sits in the server's environment: a visitor's run reading it would search on the operator's
    account. A public deployment refuses such a run, saying what to choose instead; a private one runs it."""
    from evaluators.benchmarks.bfcl.wheel import WHEEL_PATH_ENV
    from evaluators.core.errors import ToolboardError
    from evaluators.service.run_request import RunPolicy, build_run_request

    monkeypatch.setenv(WHEEL_PATH_ENV, str(bfcl_official.wheel))
    monkeypatch.setenv(SERPAPI_KEY_ENV, "operator-secret")
    public = RunPolicy(public=True, public_hosts_only=False)
    raw = {"benchmark": "bfcl", "base_url": "http://127.0.0.1:9/v1", "model": "m", "limit": 2}
    for subsets in (["web_search"], ["all"], []):
        with pytest.raises(ToolboardError, match="cannot read a key from the server's environment: SERPAPI_API_KEY") as refused:
            build_run_request({**raw, "subsets": subsets}, public)
        assert "operator-secret" not in str(refused.value) and "choose categories without web search" in str(refused.value)
    assert build_run_request({**raw, "subsets": ["multi_turn"]}, public).config.subsets == ("multi_turn",)
    # a recording the operator provides reads no key; a private deployment may spend its own key
    monkeypatch.setenv("TOOLBOARD_BFCL_WEB_SEARCH_RECORDING", str(write_recording(tmp_path, recording())))
    assert build_run_request({**raw, "subsets": ["web_search"], "options": {"web_search_backend": "recorded"}}, public)
    assert build_run_request({**raw, "subsets": ["web_search"]}, RunPolicy()).config.subsets == ("web_search",)
