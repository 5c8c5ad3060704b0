"""BFCL reports and uploads: accuracy per category, the official summaries (unweighted means against the
item-weighted live figure, None when a needed category was not run), and predictions files in our layout
and in the official result layout (files, a folder or a zip), with errors by line and field."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from evaluators.benchmarks.bfcl.categories import SINGLE_TURN as CATEGORIES
from evaluators.benchmarks.bfcl.data import load
from evaluators.benchmarks.bfcl.predictions import match_predictions, read_predictions
from evaluators.benchmarks.bfcl.report import summaries, summarize
from evaluators.core.errors import PredictionsError
from evaluators.core.types import Sample, SampleScore, ToolCall
from tests.bfcl_fixtures import write_bfcl_folder
from tests.conftest import run_cli


def _run(counts: dict[str, tuple[int, int]]) -> tuple[list[Sample], list[SampleScore]]:
    """Samples and scores with `correct` of `total` right per category."""
    samples, scores = [], []
    for category, (correct, total) in counts.items():
        for index in range(total):
            sample = Sample(f"{category}_{index}", category, {}, None, {"category": category})
            samples.append(sample)
            scores.append(SampleScore(sample.id, category, correct=index < correct,
                                      error_type=None if index < correct else "value_error"))
    return samples, scores


FULL = {"simple_python": (300, 400), "simple_java": (60, 100), "simple_javascript": (30, 50), "multiple": (180, 200),
        "parallel": (170, 200), "parallel_multiple": (150, 200), "irrelevance": (200, 240), "live_simple": (200, 258),
        "live_multiple": (700, 1053), "live_parallel": (8, 16), "live_parallel_multiple": (12, 24),
        "live_irrelevance": (700, 884), "live_relevance": (12, 16)}


def test_accuracy_per_category_and_the_official_summaries():
    report = summarize(*_run(FULL)).to_json()
    assert report["benchmark"] == "bfcl" and list(report["subsets"]) == list(CATEGORIES)
    assert report["subsets"]["simple_python"] == {"n": 400, "metrics": {"accuracy": 0.75}}
    assert report["subsets"]["live_multiple"]["metrics"]["accuracy"] == round(700 / 1053, 4)
    simple = (0.75 + 0.6 + 0.6) / 3
    summary = report["summary"]
    assert summary["non_live_simple_ast"] == round(simple, 4) == 0.65
    assert summary["non_live_ast"] == round((simple + 0.9 + 0.85 + 0.75) / 4, 4)
    # live: item-weighted (the big live_multiple counts by its size), not the mean of the four accuracies
    assert summary["live_ast"] == round((200 + 700 + 8 + 12) / 1351, 4) == 0.681
    assert summary["live_ast"] != round((200 / 258 + 700 / 1053 + 0.5 + 0.5) / 4, 4)
    assert summary["irrelevance_detection"] == round((200 / 240 + 700 / 884) / 2, 4)
    assert summary["relevance_detection"] == 0.75
    assert report["errors"] == {"value_error": sum(t - c for c, t in FULL.values())}


def test_summaries_are_computed_from_unrounded_accuracies():
    figures = summaries({"simple_python": (1, 3), "simple_java": (1, 3), "simple_javascript": (1, 3)})
    assert figures["non_live_simple_ast"] == pytest.approx(1 / 3, abs=1e-15)
    assert figures["non_live_ast"] is None


def test_a_summary_is_none_when_a_needed_category_was_not_run():
    partial = {name: FULL[name] for name in ("simple_python", "multiple", "live_simple", "irrelevance", "live_relevance")}
    report = summarize(*_run(partial), subsets=list(partial))
    assert report.summary == {"non_live_ast": None, "live_ast": None, "irrelevance_detection": None,
                              "relevance_detection": 0.75, "non_live_simple_ast": None}
    assert report.unavailable == []
    missing = summarize(*_run({"live_relevance": (1, 2)}), subsets=["live_relevance", "live_parallel"])
    assert missing.unavailable == ["live_parallel"]


def test_missing_predictions_are_listed():
    samples, scores = _run({"parallel": (1, 3)})
    scores[2].error_type = "missing"
    assert summarize(samples, scores).missing == ["parallel_2"]


# --- predictions files ------------------------------------------------------------------------------

@pytest.fixture
def samples(tmp_path: Path) -> list[Sample]:
    return load(write_bfcl_folder(tmp_path / "data"), subsets=["simple_python", "multiple", "live_relevance"])


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_our_layout_with_output_and_tool_calls(tmp_path: Path, samples: list[Sample]):
    path = _write(tmp_path / "p.jsonl", [
        {"id": "simple_python_0", "output": "[kitchen.kettle.boil(litres=1.5)]"},
        {"id": "simple_python_1", "tool_calls": [{"name": "set_lamp", "arguments": "{\"on\": true}"}]},
        {"id": "multiple_0", "output": "", "tool_calls": [{"function": {"name": "set_lamp", "arguments": {"on": False}}}]},
        {"id": "parallel_0", "output": "[]"},  # another category: counted, not an error
    ])
    predictions, summary = match_predictions(path, samples)
    assert predictions["simple_python_0"].output == "[kitchen.kettle.boil(litres=1.5)]"
    assert predictions["simple_python_1"].tool_calls == [ToolCall("set_lamp", "{\"on\": true}")]
    assert predictions["multiple_0"].tool_calls == [ToolCall("set_lamp", {"on": False})]
    assert summary.other_subsets == 1 and summary.missing == ["simple_python_2", "live_relevance_0-0-0"]


def test_the_official_result_layout_files_folder_and_zip(tmp_path: Path, samples: list[Sample]):
    folder = tmp_path / "result" / "some-model"
    folder.mkdir(parents=True)
    _write(folder / "BFCL_v4_simple_python_result.json", [
        {"id": f"simple_python_{i}", "result": "[kitchen.kettle.boil(litres=2)]", "input_token_count": 10}
        for i in range(3)])
    _write(folder / "BFCL_v4_multiple_result.json", [
        {"id": "multiple_0", "result": [{"set_lamp": "{\"on\": false}"}], "latency": 0.5}])
    _write(folder / "BFCL_v4_live_relevance_result.json", [{"id": "live_relevance_0-0-0", "result": "no call"}])
    from_folder = read_predictions(folder, samples)
    assert from_folder["simple_python_2"].output == "[kitchen.kettle.boil(litres=2)]"
    assert from_folder["multiple_0"].tool_calls == [ToolCall("set_lamp", "{\"on\": false}")]
    bundle = tmp_path / "results.zip"
    with zipfile.ZipFile(bundle, "w", zipfile.ZIP_DEFLATED) as out:
        for path in folder.iterdir():
            out.write(path, f"some-model/{path.name}")
    from_zip = read_predictions(bundle, samples)
    assert {k: (v.output, v.tool_calls) for k, v in from_zip.items()} == \
           {k: (v.output, v.tool_calls) for k, v in from_folder.items()}


def test_bad_lines_are_named_by_line_and_field(tmp_path: Path, samples: list[Sample]):
    path = _write(tmp_path / "bad.jsonl", [
        {"id": "simple_python_0", "output": 5},
        {"id": "simple_python_1", "result": {"set_lamp": {}}},
        {"id": "simple_python_2", "result": [{"a": {}, "b": {}}]},
        {"id": "multiple_0"},
        {"id": "simple_python_0", "output": "x"},
        {"id": "nothing_0", "output": "x"},
    ])
    with pytest.raises(PredictionsError) as raised:
        read_predictions(path, samples)
    message = str(raised.value)
    assert "line 1: field 'output' must be a string" in message
    assert "line 2: field 'result' must be the raw model text (a string) or a list of {name: arguments} calls" in message
    assert "line 3: result[0] must be one {name: arguments} object" in message
    assert "line 4: needs 'output' (or 'result') text and/or 'tool_calls'" in message
    assert "line 5: duplicate id 'simple_python_0'" in message
    assert "line 6: unknown id 'nothing_0'" in message


def test_scoring_an_upload_from_the_cli(tmp_path: Path):
    data = write_bfcl_folder(tmp_path / "data")
    predictions = _write(tmp_path / "p.jsonl", [
        {"id": "simple_python_0", "output": "[kitchen.kettle.boil(litres=1.5)]"},
        {"id": "simple_python_1", "output": "[set_lamp(on=True, brightness=40)]"},
        {"id": "simple_python_2", "output": "kitchen.kettle.boil(litres=2.0, whistle=False)"},
        {"id": "multiple_0", "output": "[set_lamp(on=False)]"},
        {"id": "parallel_0", "output": "[kitchen.kettle.boil(litres=2.0), kitchen.kettle.boil(litres=1.0)]"},
        {"id": "parallel_multiple_0", "output": "[]"},
        {"id": "irrelevance_0", "output": "None of these functions can answer that."},
    ])
    scored = run_cli("score", "bfcl", str(predictions), "--data-dir", str(data), "--subset", "non_live", "--json")
    assert scored.returncode == 0, scored.stderr
    report = json.loads(scored.stdout)
    accuracy = {name: subset["metrics"]["accuracy"] for name, subset in report["subsets"].items()}
    assert accuracy == {"simple_python": 1.0, "simple_java": 0.0, "simple_javascript": 0.0, "multiple": 1.0,
                        "parallel": 1.0, "parallel_multiple": 0.0, "irrelevance": 1.0}
    assert report["summary"] == {"non_live_ast": round((1 / 3 + 1 + 1 + 0) / 4, 4), "live_ast": None,
                                 "irrelevance_detection": None, "relevance_detection": None,
                                 "non_live_simple_ast": 0.3333}
    assert report["missing"] == 2
