"""StepEval scoring: the spec's formulas computed independently on a varied prediction set (native
calls, <tool_call> text, Hermes JSON, aliases, other-tool calls on negatives, plain replies) and
compared with the report, through the library and `python -m evaluators score … --json`."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from evaluators.benchmarks.stepeval_audio.checker import exact_arguments_match, score
from evaluators.core.registry import get_benchmark, score_all
from evaluators.core.types import Prediction, Sample, ToolCall
from tests import stepeval_fixtures
from tests.conftest import run_cli
from tests.stepeval_fixtures import spec_formulas, write_stepeval

real_stepeval_dir = stepeval_fixtures.real_stepeval_dir  # the real slices, skipped when absent

TOOLS = ("timbre_rag", "get_date_time", "get_weather", "web_search")
OTHER = {"timbre_rag": "web_search", "get_date_time": "get_weather", "get_weather": "calculate", "web_search": "timbre_rag"}


def _wrong_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    return {key: "完全无关的内容" for key in arguments} or {"unexpected": 1}


def _shouted(arguments: dict[str, Any]) -> dict[str, Any]:
    """Equal to gold after normalisation (case, outer and inner whitespace)."""
    return {key: f"  {str(value).upper()} " if isinstance(value, str) else value for key, value in arguments.items()}


def _as_row(sample_id: str, style: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    text_args = json.dumps(arguments, ensure_ascii=False)
    if style == "native":
        return {"id": sample_id, "output": "", "tool_calls": [{"name": name, "arguments": arguments}]}
    if style == "native_string_args":
        return {"id": sample_id, "tool_calls": [{"function": {"name": name, "arguments": text_args}}]}
    if style == "step_text":
        return {"id": sample_id, "output": f"好的。<tool_call>function  \n{name}  \n{text_args}</tool_call>"}
    if style == "hermes":
        return {"id": sample_id, "output": f'<tool_call>\n{{"name": "{name}", "arguments": {text_args}}}\n</tool_call>'}
    if style == "two_calls":  # only the first counts
        return {"id": sample_id, "output": f"<tool_call>function\n{name}\n{text_args}</tool_call>"
                                           "<tool_call>function\ncalculate\n{\"expression\": \"1+1\"}</tool_call>"}
    raise AssertionError(style)


STYLES = ("native", "native_string_args", "step_text", "hermes", "two_calls")


def varied_predictions(samples: list[Sample], seed: int = 7) -> tuple[list[dict[str, Any]], dict[str, tuple[str | None, bool]]]:
    """Rows for a predictions file, and what each row means: (called tool or None, arguments fine)."""
    rng = random.Random(seed)
    rows, meaning = [], {}
    for sample in samples:
        tool, gold = sample.subset, sample.gold["call"]
        style = rng.choice(STYLES)
        if sample.input["polarity"] == "positive":
            kind = rng.choice(["gold", "gold", "shouted", "alias", "wrong_args", "wrong_tool", "reply", "missing"])
            if kind == "alias" and tool != "web_search":
                kind = "gold"
            if kind in ("gold", "alias"):
                name = "search" if kind == "alias" else tool
                rows.append(_as_row(sample.id, style, name, gold["arguments"]))
                meaning[sample.id] = (tool, True)
            elif kind == "shouted":
                rows.append(_as_row(sample.id, style, tool, _shouted(gold["arguments"])))
                meaning[sample.id] = (tool, True)
            elif kind == "wrong_args":
                rows.append(_as_row(sample.id, style, tool, _wrong_arguments(gold["arguments"])))
                meaning[sample.id] = (tool, False)
            elif kind == "wrong_tool":
                rows.append(_as_row(sample.id, style, OTHER[tool], {"query": "x"}))
                meaning[sample.id] = (OTHER[tool], False)
            elif kind == "reply":
                rows.append({"id": sample.id, "output": "我不太确定，你可以再说一遍吗？"})
                meaning[sample.id] = (None, False)
            else:
                meaning[sample.id] = (None, False)  # no row at all: a missing prediction
        else:
            kind = rng.choice(["reply", "reply", "target", "other", "gold"])
            if kind == "target":
                name = "search" if tool == "web_search" and rng.random() < 0.5 else tool
                rows.append(_as_row(sample.id, style, name, {"query": "x"} if tool != "get_date_time" else {}))
                meaning[sample.id] = (tool, False)
            elif kind == "other" or (kind == "gold" and gold is not None):
                call = gold if kind == "gold" else {"name": OTHER[tool], "arguments": {"query": "y"}}
                rows.append(_as_row(sample.id, style, call["name"], call["arguments"]))
                meaning[sample.id] = (call["name"], False)
            else:
                rows.append({"id": sample.id, "output": "好的，没问题。"})
                meaning[sample.id] = (None, False)
    return rows, meaning


def _write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def _compare(report: dict[str, Any], expected: dict[str, dict[str, Any]]) -> None:
    assert set(report["subsets"]) == set(expected)
    for tool, values in expected.items():
        metrics = report["subsets"][tool]["metrics"]
        for name, value in values.items():
            assert metrics[name] == (pytest.approx(value) if value is not None else None), (tool, name)
    for name in ("precision", "recall", "type_accuracy", "param_accuracy"):
        values = [v[name] for v in expected.values() if v[name] is not None]
        assert report["summary"][name] == pytest.approx(sum(values) / len(values))


@pytest.fixture
def fixture_dir(tmp_path: Path) -> Path:
    return write_stepeval(tmp_path / "stepeval")


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_report_equals_the_spec_formulas_on_varied_predictions(fixture_dir: Path, tmp_path: Path, seed: int):
    benchmark = get_benchmark("stepeval_audio")
    samples = benchmark.load(fixture_dir)
    rows, meaning = varied_predictions(samples, seed)
    predictions = benchmark.read_predictions(_write_rows(tmp_path / "p.jsonl", rows), samples)
    report = benchmark.report(samples, score_all(benchmark, samples, predictions)).to_json()
    _compare(report, spec_formulas(samples, meaning))
    assert report["summary"]["param_method"] == "exact"
    assert report["errors"].get("missing_prediction", 0) == len(samples) - len(rows)


def test_cli_score_json_on_the_real_head_slice(tmp_path: Path, real_stepeval_dir: Path):
    folder = real_stepeval_dir / "head"
    samples = get_benchmark("stepeval_audio").load(folder)
    assert len(samples) == 143
    rows, meaning = varied_predictions(samples, seed=11)
    result = run_cli("score", "stepeval_audio", str(_write_rows(tmp_path / "p.jsonl", rows)), "--data-dir", str(folder), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["benchmark"] == "stepeval_audio" and report["mode"] == "official"
    _compare(report, spec_formulas(samples, meaning))
    for tool in TOOLS:
        assert {"precision", "recall", "type_accuracy", "param_accuracy", "TP", "FN", "FP", "FP_any"} <= set(report["subsets"][tool]["metrics"])
    assert report["summary"]["param_method"] == "exact"


@pytest.mark.slow
def test_gold_answers_score_perfectly_and_counts_add_up(fixture_dir: Path, tmp_path: Path):
    benchmark = get_benchmark("stepeval_audio")
    samples = benchmark.load(fixture_dir)
    rows = [_as_row(s.id, "step_text", s.gold["call"]["name"], s.gold["call"]["arguments"]) if s.gold["call"]
            else {"id": s.id, "output": s.gold["text"]} for s in samples]
    result = run_cli("score", "stepeval_audio", str(_write_rows(tmp_path / "gold.jsonl", rows)), "--data-dir", str(fixture_dir), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    weather = report["subsets"]["get_weather"]
    assert weather["n"] == 4
    # the gold negatives call calculate: no FP for get_weather, but FP_any counts it
    assert weather["metrics"] == {"precision": 1.0, "recall": 1.0, "type_accuracy": 1.0, "param_accuracy": 1.0, "positives": 2,
                                  "negatives": 2, "TP": 2, "FN": 0, "FP": 0, "FP_any": 1, "right_tool": 2, "param_ok": 2}
    assert report["subsets"]["get_date_time"]["metrics"]["param_accuracy"] is None
    assert report["subsets"]["get_date_time"]["metrics"]["param_ok"] is None
    assert report["summary"] == {"precision": 1.0, "recall": 1.0, "type_accuracy": 1.0, "param_accuracy": 1.0, "param_method": "exact"}
    text = run_cli("score", "stepeval_audio", str(tmp_path / "gold.jsonl"), "--data-dir", str(fixture_dir))
    assert text.returncode == 0 and "param_method=exact" in text.stdout


def test_no_call_no_data_gives_null_not_zero(fixture_dir: Path):
    benchmark = get_benchmark("stepeval_audio")
    samples = benchmark.load(fixture_dir, subsets=["web_search"])
    report = benchmark.report(samples, score_all(benchmark, samples, {}), subsets=["web_search"]).to_json()
    metrics = report["subsets"]["web_search"]["metrics"]
    # nothing called: recall 0, precision and type accuracy undefined (0/0)
    assert metrics["recall"] == 0.0 and metrics["precision"] is None and metrics["type_accuracy"] is None
    assert metrics["param_accuracy"] is None and report["missing"] == 4 and report["summary"]["param_method"] is None
    assert report["errors"] == {"missing_prediction": 4}


def test_unavailable_tool_and_subset_choice(fixture_dir: Path):
    for stem in ("timbre_positive", "timbre_negative"):
        (fixture_dir / f"{stem}.jsonl").unlink()
    benchmark = get_benchmark("stepeval_audio")
    samples = benchmark.load(fixture_dir)
    report = benchmark.report(samples, score_all(benchmark, samples, {})).to_json()
    assert report["unavailable"] == ["timbre_rag"] and "timbre_rag" not in report["subsets"]


def _sample(samples: list[Sample], sample_id: str) -> Sample:
    return next(s for s in samples if s.id == sample_id)


def test_error_types_and_evidence(fixture_dir: Path):
    samples = get_benchmark("stepeval_audio").load(fixture_dir)
    weather = _sample(samples, "get_weather_positive_0")
    wrong_tool = score(weather, Prediction(weather.id, tool_calls=[ToolCall("web_search", {"query": "杭州天气"})]))
    assert wrong_tool.error_type == "wrong_tool" and wrong_tool.metrics == {"positive": 1.0, "called": 1.0, "right_tool": 0.0}
    wrong_args = score(weather, Prediction(weather.id, tool_calls=[ToolCall("get_weather", '{"location": "shanghai"}')]))
    assert wrong_args.error_type == "wrong_arguments" and wrong_args.decoded["param"]["method"] == "exact"
    unreadable = score(weather, Prediction(weather.id, tool_calls=[ToolCall("get_weather", "{location: hangzhou")]))
    assert unreadable.error_type == "wrong_arguments" and unreadable.decoded["call"]["arguments"] is None
    assert score(weather, Prediction(weather.id, output="好的")).error_type == "missed_call"
    assert score(weather, Prediction(weather.id, error="HTTP 500")).error_type == "request_error"
    negative = _sample(samples, "web_search_negative_0")
    false_trigger = score(negative, Prediction(negative.id, tool_calls=[ToolCall("search", {"query": "早上好"})]))
    assert false_trigger.error_type == "false_trigger" and false_trigger.metrics["called_target"] == 1.0
    other = score(negative, Prediction(negative.id, tool_calls=[ToolCall("calculate", {"expression": "1"})]))
    assert other.correct and other.metrics == {"positive": 0.0, "called": 1.0, "called_target": 0.0}
    assert score(weather, None, "strict").error_type == "missing_prediction"


def test_judge_verdict_on_the_prediction_is_used_only_for_the_same_call(fixture_dir: Path):
    samples = get_benchmark("stepeval_audio").load(fixture_dir)
    weather = _sample(samples, "get_weather_positive_0")
    call = ToolCall("get_weather", {"location": "Hangzhou City"})
    verdict = {"method": "judge:qwen", "label": "yes", "reasonable": True, "reason": "same city",
               "call": {"name": "get_weather", "arguments": {"location": "Hangzhou City"}}}
    judged = score(weather, Prediction(weather.id, tool_calls=[call], extra={"judge": verdict}))
    assert judged.correct and judged.decoded["param"] == {"ok": True, "method": "judge:qwen", "reason": "same city", "label": "yes"}
    stale = score(weather, Prediction(weather.id, tool_calls=[ToolCall("get_weather", {"location": "x"})], extra={"judge": verdict}))
    assert stale.decoded["param"]["method"] == "exact" and stale.error_type == "wrong_arguments"


def test_exact_arguments_match():
    assert exact_arguments_match({"location": " New York "}, {"location": "new york"})
    assert exact_arguments_match({"query": "苹果 公司"}, {"query": "苹果公司"})
    assert not exact_arguments_match({"location": "newyork", "days": 3}, {"location": "new york"})
    assert not exact_arguments_match(None, {"location": "x"})
    assert exact_arguments_match({"n": 1}, {"n": 1}) and not exact_arguments_match({"n": 1}, {"n": 2})


@pytest.mark.slow
def test_prediction_errors_name_the_line(fixture_dir: Path, tmp_path: Path):
    bad = _write_rows(tmp_path / "bad.jsonl", [{"id": "get_weather_positive_0", "output": 5},
                                               {"id": "web_search_positive_99", "output": "x"}])
    result = run_cli("score", "stepeval_audio", str(bad), "--data-dir", str(fixture_dir))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "bad.jsonl, line 1: field 'output' must be a string" in result.stderr
    assert "line 2: unknown id 'web_search_positive_99'" in result.stderr
    ok = _write_rows(tmp_path / "other.jsonl", [{"id": "timbre_positive_0", "output": "x"}])
    result = run_cli("score", "stepeval_audio", str(ok), "--data-dir", str(fixture_dir), "--subset", "web_search", "--json")
    assert result.returncode == 0, result.stderr  # an id of a tool not being scored is not an error


@pytest.mark.slow
def test_judge_flags_are_refused_elsewhere(example_dir: Path):
    result = run_cli("score", "acebench", str(example_dir / "predictions.jsonl"), "--data-dir", str(example_dir),
                     "--judge-base-url", "http://127.0.0.1:9/v1", "--judge-model", "j")
    assert result.returncode == 2 and "acebench has no role 'judge'; its roles: user" in result.stderr
    result = run_cli("score", "stepeval_audio", "x.jsonl", "--judge-model", "j")
    assert result.returncode == 2 and "--judge-base-url and --judge-model go together" in result.stderr


def test_an_upload_without_chosen_subsets_keeps_every_tool_whose_ids_are_file_stems(tmp_path: Path):
    """StepEval ids are file stems (`timbre_positive_0`), not `<subset>_…`: the benchmark maps them to
    their tool, so an upload covering timbre_rag keeps those rows when no subset is chosen."""
    from evaluators.service.submissions import check_submission

    data = write_stepeval(tmp_path / "d")
    predictions = tmp_path / "p.jsonl"
    predictions.write_text("".join(json.dumps({"id": sample_id, "output": "好的"}) + "\n" for sample_id in
                                   ("timbre_positive_0", "timbre_negative_0", "get_weather_positive_0")), encoding="utf-8")
    submission = check_submission(predictions, "stepeval_audio", data_dir=data)
    assert submission.subsets == ["timbre_rag", "get_weather"]
    assert get_benchmark("stepeval_audio").subset_of("timbre_negative_12") == "timbre_rag"
