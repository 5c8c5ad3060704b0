"""StepEval against a scripted OpenAI-compatible server: `python -m evaluators run` in text mode on the
real samples, the judge inside runs, audio-mode runs, and the run's stored settings and fingerprint."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from evaluators.benchmarks.stepeval_audio.checker import exact_arguments_match
from evaluators.core.registry import get_benchmark
from evaluators.core.types import Sample
from evaluators.engine.client import RetryPolicy
from evaluators.engine.runner import execute, start_run
from evaluators.engine.settings import Endpoint, ModelSettings, RunConfig, RunRequest, fingerprint
from evaluators.engine.store import Store
from tests import stepeval_fixtures
from tests.conftest import PROJECT
from tests.scripted_server import Fault, ScriptedServer
from tests.stepeval_fixtures import judge_reply, spec_formulas, write_stepeval, write_wavs

real_stepeval_dir = stepeval_fixtures.real_stepeval_dir  # the real slices, skipped when absent

FAST_RETRY = RetryPolicy(max_attempts=2, base_delay=0.01, max_delay=0.02)
CITIES = {"成都": "chengdu", "深圳": "shenzhen", "杭州": "hangzhou", "北京": "beijing"}


def _last_user(messages: list[dict[str, Any]]) -> str:
    content = [m for m in messages if m["role"] == "user"][-1]["content"]
    return content if isinstance(content, str) else "<audio>"


def decide(last_user: str) -> tuple[str, str | None, dict[str, Any]]:
    """(reply style, tool or None, arguments) the scripted model picks from the last user turn."""
    if "几点" in last_user or "几号" in last_user:
        return "native", "get_date_time", {}
    if "天气" in last_user:
        city = next((english for chinese, english in CITIES.items() if chinese in last_user), "somewhere")
        return "step_text", "get_weather", {"location": city}
    if "音色" in last_user or "声音" in last_user:
        return "hermes", "timbre_rag", {"query": "默认男音色"}
    if "查" in last_user or "搜" in last_user:
        return "native", "search", {"query": last_user}
    return "reply", None, {}


def model_reply(body: dict[str, Any]) -> dict[str, Any]:
    style, name, arguments = decide(_last_user(body["messages"]))
    text_args = json.dumps(arguments, ensure_ascii=False)
    if style == "native":
        return {"tool_calls": [{"id": "c1", "type": "function", "function": {"name": name, "arguments": text_args}}]}
    if style == "step_text":
        return {"content": f"<tool_call>function\n{name}\n{text_args}</tool_call>"}
    if style == "hermes":
        return {"content": f'<tool_call>{{"name": "{name}", "arguments": {text_args}}}</tool_call>'}
    return {"content": "好的，我明白了。"}


def expected_meaning(samples: list[Sample]) -> dict[str, tuple[str | None, bool]]:
    meaning = {}
    for sample in samples:
        _, name, arguments = decide([t for t in sample.input["history"] if t["kind"] == "user"][-1]["text"])
        name = "web_search" if name == "search" else name
        gold = sample.gold["call"]
        meaning[sample.id] = (name, bool(gold) and name == gold["name"] and exact_arguments_match(arguments, gold["arguments"]))
    return meaning


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evaluators", *args], cwd=PROJECT, capture_output=True, text=True,
                          timeout=180, env=dict(os.environ))


def test_cli_run_text_mode_on_the_real_samples(tmp_path: Path, real_stepeval_dir: Path):
    folder = real_stepeval_dir / "samples"
    samples = get_benchmark("stepeval_audio").load(folder)
    with ScriptedServer(reply=model_reply) as server:
        args = ("run", "stepeval_audio", "--base-url", server.base_url, "--model", "scripted", "--data-dir", str(folder),
                "--request-mode", "tools", "--api-key-env", "TOOLBOARD_TEST_KEY", "--json")
        result = run_cli(*args)
        assert result.returncode == 0, result.stderr
        assert server.requests == len(samples) == 13
        again = run_cli(*args)
        assert again.returncode == 0 and server.requests == 13  # answered from the cache
    report = json.loads(result.stdout)
    expected = spec_formulas(samples, expected_meaning(samples))
    for tool, values in expected.items():
        for name, value in values.items():
            assert report["subsets"][tool]["metrics"][name] == (pytest.approx(value) if value is not None else None), (tool, name)
    assert report["summary"]["modality"] == "text" and report["summary"]["param_method"] == "exact"
    assert report["subsets"]["get_weather"]["metrics"]["param_accuracy"] == 1.0
    for body in server.bodies:
        assert [t["function"]["name"] for t in body["tools"]][-1] == "calculate" and body["messages"][0]["role"] == "system"
    with_history = [b for b in server.bodies if any(m["role"] == "tool" for m in b["messages"])]
    assert len(with_history) == 1 and with_history[0]["messages"][6]["tool_calls"][0]["id"] == "call_5"
    exported = json.loads(run_cli("export", report["run_id"]).stdout)
    assert exported["config"]["options"] == {} and exported["config"]["roles"] == {}


def _config(server: ScriptedServer, data: Path, judge: Endpoint | None = None, **options: str) -> RunConfig:
    settings = ModelSettings(base_url=server.base_url, model="scripted", request_mode="tools", api_key_env="TOOLBOARD_TEST_KEY",
                             timeout=5.0)
    return RunConfig("stepeval_audio", settings, data_dir=str(data), concurrency=4, max_attempts=2,
                     roles={"judge": judge} if judge else {}, options=options)


def _run(store: Store, config: RunConfig, rerun: str | None = None):
    if rerun:
        return asyncio.run(execute(store, rerun, rerun_errors=True, retry=FAST_RETRY))
    run_id, samples = start_run(RunRequest(config), store)
    return asyncio.run(execute(store, run_id, samples, retry=FAST_RETRY))


def test_run_with_a_judge_stores_verdicts_and_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    data = write_stepeval(tmp_path / "d")
    monkeypatch.setenv("TOOLBOARD_TEST_JUDGE_KEY", "sk-run-judge")
    import evaluators.benchmarks.stepeval_audio.judge as judge_module

    def no_client_per_call(*args, **kwargs):
        raise AssertionError("a run hands its one judge client to solve")

    monkeypatch.setattr(judge_module, "judge_client", no_client_per_call)
    store = Store(tmp_path / "db.sqlite")
    with ScriptedServer(reply=model_reply) as server, ScriptedServer(reply=judge_reply) as judge:
        judge_settings = Endpoint(judge.base_url, "judge-m", api_key_env="TOOLBOARD_TEST_JUDGE_KEY")
        outcome = _run(store, _config(server, data, judge=judge_settings))
        plain = _run(store, _config(server, data))
        assert judge.requests == 5  # right-tool positives of tools with arguments: weather 2, timbre 2, web search 1
        assert judge.headers_seen[0]["authorization"] == "Bearer sk-run-judge"
    report = outcome.report.to_json()
    assert report["summary"]["param_method"] == "judge:judge-m" and plain.report.to_json()["summary"]["param_method"] == "exact"
    # the scripted model always asks for the default timbre: the judge says yes where exact match says no
    assert report["subsets"]["timbre_rag"]["metrics"]["param_accuracy"] == 1.0
    assert plain.report.to_json()["subsets"]["timbre_rag"]["metrics"]["param_accuracy"] == 0.5
    verdict = store.load_predictions(outcome.run_id)["timbre_positive_1"].extra["judge"]
    assert verdict["method"] == "judge:judge-m" and verdict["label"] == "yes" and verdict["call"]["name"] == "timbre_rag"
    # Both calls of the sample are its events, the judge's under its role, with the body its server received.
    events = store.load_sample_evidence(outcome.run_id, "timbre_positive_1").events
    assert [event["role"] for event in events] == ["model", "judge"]
    assert events[1]["request"]["model"] == "judge-m" and events[1]["response"]["text"] == verdict["answer"]
    assert store.load_sample_evidence(outcome.run_id, "timbre_negative_0").events[0]["role"] == "model"
    run = store.get_run(outcome.run_id)
    assert run.config["roles"] == {"judge": {"base_url": judge.base_url, "model": "judge-m",
                                             "api_key_env": "TOOLBOARD_TEST_JUDGE_KEY"}}
    assert run.fingerprint != store.get_run(plain.run_id).fingerprint
    assert RunConfig.from_json(run.config).roles["judge"] == judge_settings
    assert b"sk-run-judge" not in (tmp_path / "db.sqlite").read_bytes()


def test_a_failed_judge_is_a_request_error_and_reruns_without_asking_the_model_again(tmp_path: Path):
    data = write_stepeval(tmp_path / "d")
    store = Store(tmp_path / "db.sqlite")
    failing = {"on": True}
    with ScriptedServer(reply=model_reply) as server, ScriptedServer(
        reply=judge_reply, fault=lambda key, attempt: Fault(status=503) if failing["on"] else None
    ) as judge:
        outcome = _run(store, _config(server, data, judge=Endpoint(judge.base_url, "judge-m")))
        report = outcome.report.to_json()
        assert report["errors"]["request_error"] == 5
        errors = [p.error for p in store.load_predictions(outcome.run_id).values() if p.error]
        assert all(e.startswith("judge judge-m: HTTP 503") for e in errors)
        sent = server.requests
        failing["on"] = False
        rerun = _run(store, None, rerun=outcome.run_id)  # type: ignore[arg-type]
        assert server.requests == sent  # the model's answers came from the cache
    assert "request_error" not in rerun.report.to_json()["errors"]
    assert rerun.report.to_json()["summary"]["param_method"] == "judge:judge-m"


def test_audio_mode_run_sends_wavs_and_records_its_modality(tmp_path: Path):
    data = write_stepeval(tmp_path / "d")
    write_wavs(data)
    store = Store(tmp_path / "db.sqlite")
    with ScriptedServer(reply=model_reply) as server:
        outcome = _run(store, _config(server, data, modality="audio"))
    assert server.requests == 16
    for body in server.bodies:
        users = [m for m in body["messages"] if m["role"] == "user"]
        assert users and all(m["content"][0]["type"] == "input_audio" for m in users)
    report = outcome.report.to_json()
    assert report["summary"]["modality"] == "audio" and "request_error" not in report["errors"]
    assert store.get_run(outcome.run_id).config["options"] == {"modality": "audio"}


def test_audio_mode_without_wavs_fails_each_sample_clearly(tmp_path: Path):
    data = write_stepeval(tmp_path / "d")
    store = Store(tmp_path / "db.sqlite")
    with ScriptedServer(reply=model_reply) as server:
        outcome = _run(store, _config(server, data, modality="audio"))
        assert server.requests == 0
    errors = {p.error for p in store.load_predictions(outcome.run_id).values()}
    assert len(errors) == 1 and "audio mode needs the wav files" in errors.pop()


def test_stored_configs_load_and_their_fingerprint_names_roles_and_options_only_when_set():
    stored = {"benchmark": "acebench", "model": {"base_url": "http://x/v1", "model": "m", "api_key_env": "K", "request_mode": "prompt",
                                                 "temperature": 0.0, "max_tokens": None, "timeout": 120.0, "extra_body": {}},
              "language": "en", "subsets": [], "limit": None, "data_dir": None, "concurrency": 8, "use_cache": True, "max_attempts": 6}
    config = RunConfig.from_json(stored)
    assert config.options == {} and config.roles == {}
    identity = {"benchmark": "acebench", "language": "en", "data_version": "d", "evaluator_version": "v",
                "generation": {"model": "m", "request_mode": "prompt", "temperature": 0.0, "max_tokens": None, "extra_body": {}}}
    import hashlib

    def hashed(value: dict) -> str:
        return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]

    assert fingerprint(config, "d", "v") == hashed(identity)
    judged = RunConfig(stored["benchmark"], config.model, language="en",
                       roles={"judge": Endpoint("http://j/v1", "j", "J")}, options={"modality": "audio"})
    assert RunConfig.from_json(json.loads(json.dumps(judged.to_json()))) == judged
    # a role counts by its model (not its URL or key variable), an option by its value
    expected = hashed({**identity, "roles": {"judge": {"model": "j"}}, "options": {"modality": "audio"}})
    assert fingerprint(judged, "d", "v") == expected != fingerprint(config, "d", "v")


@pytest.mark.slow
def test_cli_refuses_audio_and_judge_where_they_do_not_apply(example_dir: Path):
    result = run_cli("run", "acebench", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--modality", "audio")
    assert result.returncode == 2 and "acebench has no option 'modality'" in result.stderr
    result = run_cli("run", "toolbench_static", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
                     "--judge-base-url", "http://127.0.0.1:9/v1", "--judge-model", "j")
    assert result.returncode == 2 and "toolbench_static has no role 'judge'" in result.stderr
    result = run_cli("run", "toolbench_static", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
                     "--role", "judge=http://127.0.0.1:9/v1,j")
    assert result.returncode == 2 and "toolbench_static has no role 'judge'; its roles: none" in result.stderr
    result = run_cli("run", "stepeval_audio", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--option", "modality=video")
    assert result.returncode == 2 and "option modality of stepeval_audio takes text, audio (got 'video')" in result.stderr
    result = run_cli("run", "stepeval_audio", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--role", "judge=only-a-url")
    assert result.returncode == 2 and "expected NAME=URL,MODEL[,KEY_ENV]" in result.stderr
