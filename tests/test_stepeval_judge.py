"""The parameter judge: verdict parsing, and a scripted judge server behind `score --role judge=…` and
`run --role judge=…` (and the older --judge-… flags) (verdicts cached like any request, the key never stored)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evaluators.benchmarks.stepeval_audio.extract import ExtractedCall
from evaluators.benchmarks.stepeval_audio.judge import judge_request, needs_judge, parse_verdict
from evaluators.core.registry import get_benchmark
from tests.conftest import PROJECT
from tests.scripted_server import Fault, ScriptedServer
from tests.stepeval_fixtures import judge_reply, write_stepeval


@pytest.mark.parametrize(("answer", "label"), [
    ('{"reason": "city matches", "label": "yes"}', "yes"),
    ('Some thoughts {not json}. Final: {"reason": "wrong city", "label": "no"}', "no"),
    ('<think>maybe {"label": "no"}</think>\n{"reason": "fine", "label": "YES"}', "yes"),
    ('reasoning…</think>```json\n{"label": "是", "reason": "合理"}\n```', "yes"),
    ('{"reason": "a", "label": "yes"} then corrected: {"reason": "b", "label": "no"}', "no"),
    ('{"label": true}', "yes"),
    ("Label: no", "no"),
    ("参数是否合理？否", "no"),
    ("I think yes.", "yes"),
    ("I cannot tell {", None),
    ("", None),
])
def test_parse_verdict(answer: str, label: str | None):
    assert parse_verdict(answer)[0] == label


def test_parse_verdict_keeps_the_reason():
    assert parse_verdict('{"reason": "上海不是北京", "label": "no"}') == ("no", "上海不是北京")


def test_judge_request_shows_dialogue_schema_gold_and_prediction(tmp_path: Path):
    samples = get_benchmark("stepeval_audio").load(write_stepeval(tmp_path / "d"))
    sample = next(s for s in samples if s.id == "timbre_positive_0")
    call = ExtractedCall("timbre_rag", "timbre_rag", {"query": "默认音色"}, "native")
    assert needs_judge(sample, call)
    text = judge_request(sample, call).messages[1]["content"]
    assert "Human: 小跃，换成一个温柔的女声吧。" in text and "Input: 你的音色已经更新完成" in text
    assert '"name": "timbre_rag"' in text and "默认男音色" in text and "默认音色" in text and '"label": "yes"' in text
    date_time = next(s for s in samples if s.id == "get_date_time_positive_0")
    assert not needs_judge(date_time, ExtractedCall("get_date_time", "get_date_time", {}, "native"))
    negative = next(s for s in samples if s.id == "get_weather_negative_0")
    assert not needs_judge(negative, ExtractedCall("get_weather", "get_weather", {"location": "x"}, "native"))


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evaluators", *args], cwd=PROJECT, capture_output=True, text=True,
                          timeout=120, env={**os.environ, **(env or {})})


def _predictions(path: Path) -> Path:
    rows = [
        {"id": "get_weather_positive_0", "tool_calls": [{"name": "get_weather", "arguments": {"location": "Hangzhou, China"}}]},
        {"id": "get_weather_positive_1", "output": '<tool_call>function\nget_weather\n{"location": "shanghai"}</tool_call>'},
        {"id": "web_search_positive_0", "output": '<tool_call>{"name": "search", "arguments": {"query": "电影排行榜"}}</tool_call>'},
        {"id": "web_search_positive_1", "output": "长城很长。"},
        {"id": "get_date_time_positive_0", "tool_calls": [{"name": "get_date_time", "arguments": "{}"}]},
    ]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.slow
def test_score_with_a_judge_is_labelled_cached_and_keeps_the_key_out(tmp_path: Path, isolated_home: Path):
    data = write_stepeval(tmp_path / "d")
    predictions = _predictions(tmp_path / "p.jsonl")
    env = {"TOOLBOARD_TEST_JUDGE_KEY": "sk-judge-secret"}
    with ScriptedServer(reply=judge_reply) as judge:
        args = ("score", "stepeval_audio", str(predictions), "--data-dir", str(data), "--subset", "get_weather", "web_search",
                "get_date_time", "--json", "--role", f"judge={judge.base_url},judge-m,TOOLBOARD_TEST_JUDGE_KEY")
        first = run_cli(*args, env=env)
        assert first.returncode == 0, first.stderr
        assert judge.requests == 3  # the right-tool positives of tools with arguments
        assert judge.headers_seen[0]["authorization"] == "Bearer sk-judge-secret"
        assert all(body["model"] == "judge-m" and body["temperature"] == 0.0 for body in judge.bodies)
        second = run_cli(*args, env=env)
        assert judge.requests == 3  # every verdict came from the cache
    report = json.loads(first.stdout)
    assert json.loads(second.stdout) == report
    assert report["summary"]["param_method"] == "judge:judge-m"
    weather = report["subsets"]["get_weather"]["metrics"]
    assert (weather["param_ok"], weather["right_tool"], weather["param_accuracy"]) == (1, 2, 0.5)  # exact match would give 0/2
    assert report["subsets"]["web_search"]["metrics"]["param_accuracy"] == 1.0
    assert b"sk-judge-secret" not in (isolated_home / "toolboard.db").read_bytes()


@pytest.mark.slow
def test_score_stops_clearly_when_the_judge_fails(tmp_path: Path):
    data = write_stepeval(tmp_path / "d")
    with ScriptedServer(fault=lambda key, attempt: Fault(status=401)) as judge:
        result = run_cli("score", "stepeval_audio", str(_predictions(tmp_path / "p.jsonl")), "--data-dir", str(data),
                         "--judge-base-url", judge.base_url, "--judge-model", "judge-m")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "judge judge-m: HTTP 401" in result.stderr and "_positive_" in result.stderr


def test_judge_prediction_with_a_judge_client(tmp_path: Path):
    import asyncio

    from evaluators.benchmarks.stepeval_audio.judge import JUDGE_ROLE, judge_client, judge_prediction
    from evaluators.core.types import Prediction, ToolCall
    from evaluators.engine.settings import Endpoint, role_settings

    async def judged(sample, prediction, url):
        client = judge_client(role_settings(JUDGE_ROLE, Endpoint(url, "j")))
        try:
            return await judge_prediction(sample, prediction, client)
        finally:
            await client.close()

    samples = get_benchmark("stepeval_audio").load(write_stepeval(tmp_path / "d"))
    weather = next(s for s in samples if s.id == "get_weather_positive_1")
    prediction = Prediction(weather.id, tool_calls=[ToolCall("get_weather", {"location": "shanghai"})])
    with ScriptedServer(reply=judge_reply) as judge:
        verdict = asyncio.run(judged(weather, prediction, judge.base_url))
        reply = asyncio.run(judged(weather, Prediction(weather.id, output="好的"), judge.base_url))
        assert judge.requests == 1
    assert verdict["label"] == "no" and verdict["method"] == "judge:j" and reply is None
