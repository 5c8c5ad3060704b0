"""BFCL web search runs from the CLI against the scripted server: with the recorded backend every item ends
scored (search, fetch, answer), the no-snippet variant sees no bodies, the transcript is stored; with SerpAPI (a
fake one on loopback) the key is in no stored run, output or log; without a backend the run is refused before
any request."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PROJECT
from tests.engine_fixtures import stored_predictions
from tests.scripted_server import ScriptedServer
from tests.web_search_fixtures import FakeSerpApi, write_recording

WEB_SEARCH = ("web_search_base", "web_search_no_snippet")
RUN_SECONDS = 300
KEY = "serp-sentinel-key-7f3a9c"


@pytest.fixture
def wheel_env(bfcl_official: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    from evaluators.benchmarks.bfcl.wheel import WHEEL_PATH_ENV

    monkeypatch.setenv(WHEEL_PATH_ENV, str(bfcl_official.wheel))
    env = {**os.environ, "TOOLBOARD_HOME": str(tmp_path / "home"), WHEEL_PATH_ENV: str(bfcl_official.wheel)}
    for name in ("SERPAPI_API_KEY", "TOOLBOARD_BFCL_WEB_SEARCH_RECORDING", "TOOLBOARD_SERPAPI_URL"):
        env.pop(name, None)
    return env


def _script(samples: list[Any]) -> Any:
    """Per item: search, then fetch the first result, then answer with the item's first expected answer."""
    answers = {sample.input["question"][0][-1]["content"]: sample.gold[0] for sample in samples}

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        step = (len(messages) - 2) // 2
        if step == 0:
            return {"content": "[search_engine_query(keywords='company founder', max_results=2)]"}
        if step == 1:
            return {"content": "[fetch_url_content(url='https://site1.example/page', mode='truncate')]"}
        return {"content": f"The answer is {answers[messages[1]['content']]}."}

    return reply


def _run(server: ScriptedServer, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess:
    args = [sys.executable, "-m", "evaluators", "run", "bfcl", "--subset", "web_search", "--limit", "2",
            "--base-url", server.base_url, "--model", "org/scripted-model", "--api-key-env", "", "--concurrency", "2",
            "--json", *extra]
    return subprocess.run(args, cwd=PROJECT, env=env, capture_output=True, text=True, timeout=RUN_SECONDS)


@pytest.mark.slow
def test_a_recorded_web_search_run_ends_with_every_item_scored(wheel_env: dict[str, str], tmp_path: Path):
    from evaluators.benchmarks.bfcl.data import load

    samples = load(subsets=list(WEB_SEARCH), limit=2)
    env = {**wheel_env, "TOOLBOARD_BFCL_WEB_SEARCH_RECORDING": str(write_recording(tmp_path))}
    with ScriptedServer(reply=_script(samples)) as server:
        done = _run(server, env, "--option", "web_search_backend=recorded")
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert {name: (s["n"], s["metrics"]["accuracy"]) for name, s in report["subsets"].items()} == {
        "web_search_base": (2, 1.0), "web_search_no_snippet": (2, 1.0)}
    assert server.requests == 10  # the first step of each no-snippet twin: answered by the cache
    first = server.bodies[0]
    assert first["temperature"] == 0.001 and first["store"] is False and "tools" not in first
    system = first["messages"][0]["content"]
    assert "search_engine_query" in system and "Note that the provided function is in Python 3 syntax." in system
    predictions = stored_predictions(Path(env["TOOLBOARD_HOME"]), report["run_id"])
    for sample in samples:
        prediction = predictions[sample.id]
        assert prediction.error is None and prediction.extra["stop"] == "completed"
        [steps] = prediction.extra["turns"]
        assert len(steps) == 3 and sample.gold[0] in steps[-1]
        [record] = prediction.extra["transcript"]
        search, fetch = record["steps"][0]["results"][0], record["steps"][1]["results"][0]
        assert ("'body'" in search) == (sample.subset == "web_search_base")
        assert "Ada Example" in json.loads(fetch)["content"]
        assert record["state"]["WebSearchAPI"]["calls"] == [
            {"search": "company founder", "region": "wt-wt"},
            {"fetch": "https://site1.example/page", "mode": "truncate"}]


@pytest.mark.slow
def test_a_serpapi_run_keeps_the_key_out_of_the_store_output_and_logs(wheel_env: dict[str, str], tmp_path: Path):
    from evaluators.benchmarks.bfcl.data import load

    samples = load(subsets=list(WEB_SEARCH), limit=2)
    with FakeSerpApi({"company founder": {"error": f"Invalid API key {KEY}"}}) as serp, \
            ScriptedServer(reply=_script(samples)) as server:
        env = {**wheel_env, "SERPAPI_API_KEY": KEY, "TOOLBOARD_SERPAPI_URL": serp.url}
        done = _run(server, env)
        assert {params["api_key"] for params in serp.params} == {KEY}, done.stderr[-3000:]
        assert len(serp.params) == 4
    assert done.returncode == 0, done.stderr[-3000:]
    assert KEY not in done.stdout and KEY not in done.stderr
    report = json.loads(done.stdout)
    assert all(s["n"] == 2 for s in report["subsets"].values())
    for path in Path(env["TOOLBOARD_HOME"]).rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
    for body in server.bodies:
        assert KEY not in json.dumps(body)
    predictions = stored_predictions(Path(env["TOOLBOARD_HOME"]), report["run_id"])
    search = predictions[samples[0].id].extra["transcript"][0]["steps"][0]["results"][0]
    assert json.loads(search) == {"error": "Failed to retrieve the search results from server. Please try again "
                                           "later."}
    fetch = predictions[samples[0].id].extra["transcript"][0]["steps"][1]["results"][0]
    assert json.loads(fetch)["error"].startswith("An error occurred while fetching https://site1.example/page: ")


@pytest.mark.slow
def test_a_web_search_run_without_a_backend_is_refused_before_it_starts(wheel_env: dict[str, str]):
    with ScriptedServer() as server:
        done = _run(server, wheel_env)
        recorded = _run(server, wheel_env, "--option", "web_search_backend=recorded")
    assert done.returncode != 0 and recorded.returncode != 0 and server.requests == 0
    assert "web search (web_search_base, web_search_no_snippet) needs a search backend: set SERPAPI_API_KEY" in (
        done.stderr + done.stdout)
    assert "TOOLBOARD_BFCL_WEB_SEARCH_RECORDING" in recorded.stderr + recorded.stdout
    assert not (Path(wheel_env["TOOLBOARD_HOME"]) / "toolboard.db").exists() or "run_id" not in done.stdout


@pytest.mark.slow
def test_a_failing_search_backend_ends_only_its_item_as_a_request_error_and_a_rerun_scores_it(
        wheel_env: dict[str, str], tmp_path: Path):
    """SerpAPI answers HTTP 500 to one item's search: that item ends as a request error (not a wrong answer), the
    others are played; `--rerun-errors` with the backend answering again plays it and scores it."""
    from evaluators.benchmarks.bfcl.data import load

    samples = load(subsets=["web_search_base"], limit=2)
    failing = samples[0].input["question"][0][-1]["content"][:40]

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        if len(messages) == 2:  # the first step: search for the question's start
            return {"content": f"[search_engine_query(keywords={messages[1]['content'][:40]!r})]"}
        return {"content": "I do not know."}

    with ScriptedServer(reply=reply) as server:
        with FakeSerpApi(statuses={failing: 500}) as serp:
            env = {**wheel_env, "SERPAPI_API_KEY": KEY, "TOOLBOARD_SERPAPI_URL": serp.url}
            args = ["--subset", "web_search_base"]
            done = subprocess.run(
                [sys.executable, "-m", "evaluators", "run", "bfcl", *args, "--limit", "2", "--base-url",
                 server.base_url, "--model", "org/scripted-model", "--api-key-env", "", "--json"],
                cwd=PROJECT, env=env, capture_output=True, text=True, timeout=RUN_SECONDS)
        assert done.returncode == 0, done.stderr[-3000:]
        report = json.loads(done.stdout)
        predictions = stored_predictions(Path(env["TOOLBOARD_HOME"]), report["run_id"])
        error = predictions[samples[0].id].error
        assert error and "SerpAPI answered HTTP 500" in error and "--rerun-errors" in error and KEY not in error
        assert predictions[samples[1].id].error is None  # the other item was played
        with FakeSerpApi() as healthy:
            env["TOOLBOARD_SERPAPI_URL"] = healthy.url
            again = subprocess.run([sys.executable, "-m", "evaluators", "run", "--rerun-errors", report["run_id"],
                                    "--json"], cwd=PROJECT, env=env, capture_output=True, text=True,
                                   timeout=RUN_SECONDS)
    assert again.returncode == 0, again.stderr[-3000:]
    predictions = stored_predictions(Path(env["TOOLBOARD_HOME"]), report["run_id"])
    assert all(prediction.error is None for prediction in predictions.values())
    assert json.loads(again.stdout)["subsets"]["web_search_base"]["n"] == 2
