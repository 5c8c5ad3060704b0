"""BFCL reports and uploads: accuracy per category, the official summaries (unweighted means against the
item-weighted live figure, the Multi Turn mean, None when a needed category was not run; Overall only where
every part is present, else the parts it lacks), checked against the tables the official code prints, and
predictions files in our layout and in the official result layout (files, a folder or a zip), with errors by
line and field."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from evaluators.benchmarks.bfcl.categories import MULTI_TURN, SINGLE_TURN
from evaluators.benchmarks.bfcl.data import load
from evaluators.benchmarks.bfcl.predictions import match_predictions, read_predictions
from evaluators.benchmarks.bfcl.report import OVERALL_LACKS, official_overall, overall_lacks, summaries, summarize
from evaluators.core.errors import PredictionsError
from evaluators.core.types import Sample, SampleScore, ToolCall
from tests.bfcl_fixtures import write_bfcl_folder
from tests.bfcl_official_tables import official_tables
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
MULTI = {"multi_turn_base": (150, 200), "multi_turn_miss_func": (101, 200), "multi_turn_miss_param": (77, 200),
         "multi_turn_long_context": (3, 200)}
# Not run here; given to the official table code to check Overall's weights.
AGENTIC = {"web_search_base": (61, 100), "web_search_no_snippet": (40, 100), "memory_kv": (50, 155),
           "memory_vector": (71, 155), "memory_rec_sum": (90, 155)}
# The official tables print percentages with two decimals.
PRINTED = 0.00005 + 1e-12


def test_accuracy_per_category_and_the_official_summaries():
    report = summarize(*_run(FULL)).to_json()
    assert report["benchmark"] == "bfcl" and list(report["subsets"]) == list(SINGLE_TURN)
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
    # single-turn only: no Multi Turn, so no Overall, and the report names what Overall lacks
    assert summary["multi_turn"] is None and summary["overall"] is None
    assert summary[OVERALL_LACKS] == "multi-turn, web search, memory"


def test_multi_turn_is_the_mean_of_its_four_categories_and_overall_still_lacks_web_search_and_memory():
    report = summarize(*_run({**FULL, **MULTI})).to_json()
    assert list(report["subsets"]) == [*SINGLE_TURN, *MULTI_TURN]
    assert report["subsets"]["multi_turn_miss_func"] == {"n": 200, "metrics": {"accuracy": 0.505}}
    summary = report["summary"]
    assert summary["multi_turn"] == round((0.75 + 0.505 + 0.385 + 0.015) / 4, 4) == 0.4137
    # every single-turn summary is unchanged by the multi-turn categories
    assert {k: v for k, v in summary.items() if k not in ("multi_turn", "overall", OVERALL_LACKS)} == \
           {k: v for k, v in summarize(*_run(FULL)).summary.items() if k not in ("multi_turn", "overall", OVERALL_LACKS)}
    assert summary["overall"] is None and summary[OVERALL_LACKS] == "web search, memory"


def test_multi_turn_is_none_unless_all_four_categories_were_run():
    three = {name: MULTI[name] for name in MULTI_TURN[:3]}
    report = summarize(*_run(three), subsets=list(MULTI_TURN))
    assert report.summary["multi_turn"] is None and report.unavailable == ["multi_turn_long_context"]
    assert report.summary[OVERALL_LACKS] == "non-live AST, live AST, irrelevance, multi-turn, web search, memory"
    assert summaries({**MULTI, "multi_turn_base": (0, 200)})["multi_turn"] == pytest.approx((0 + 0.505 + 0.385 + 0.015) / 4)


def test_overall_weighs_its_five_parts_and_is_none_when_one_is_missing():
    parts = {"non_live_ast": 0.9, "live_ast": 0.8, "irrelevance_detection": 0.7, "multi_turn": 0.5,
             "web_search": 0.6, "memory": 0.4}
    assert official_overall(parts) == pytest.approx(0.1 * 0.9 + 0.1 * 0.8 + 0.1 * 0.7 + 0.3 * 0.5 + 0.4 * 0.5)
    assert overall_lacks(parts) == []
    for name in parts:
        lacking = {**parts, name: None}
        assert official_overall(lacking) is None and len(overall_lacks(lacking)) == 1
    # relevance is not a part of it
    assert official_overall({**parts, "relevance_detection": None}) == official_overall(parts)


def test_summaries_are_computed_from_unrounded_accuracies():
    figures = summaries({"simple_python": (1, 3), "simple_java": (1, 3), "simple_javascript": (1, 3)})
    assert figures["non_live_simple_ast"] == pytest.approx(1 / 3, abs=1e-15)
    assert figures["non_live_ast"] is None


def test_a_summary_is_none_when_a_needed_category_was_not_run():
    partial = {name: FULL[name] for name in ("simple_python", "multiple", "live_simple", "irrelevance", "live_relevance")}
    report = summarize(*_run(partial), subsets=list(partial))
    assert report.summary == {"non_live_ast": None, "live_ast": None, "irrelevance_detection": None,
                              "relevance_detection": 0.75, "non_live_simple_ast": None, "multi_turn": None,
                              "web_search": None, "memory": None, "agentic": None,
                              "overall": None, OVERALL_LACKS: "non-live AST, live AST, irrelevance, multi-turn, "
                                                              "web search, memory"}
    assert report.unavailable == []
    missing = summarize(*_run({"live_relevance": (1, 2)}), subsets=["live_relevance", "live_parallel"])
    assert missing.unavailable == ["live_parallel"]


def test_missing_predictions_are_listed():
    samples, scores = _run({"parallel": (1, 3)})
    scores[2].error_type = "missing"
    assert summarize(samples, scores).missing == ["parallel_2"]


# --- the official tables --------------------------------------------------------------------------

def _mean(counts: dict[str, tuple[int, int]]) -> float:
    return sum(c / t for c, t in counts.values()) / len(counts)


def test_multi_turn_and_overall_equal_the_official_tables(official_checker, tmp_path: Path):
    """generate_leaderboard_csv on the same accuracies: Multi Turn, and Overall from our summaries with the web
    search and memory figures the official code computes; where a part is missing the official tables count it
    as 0 and print a number, the report prints none and names the part."""
    cases = {"everything": {**FULL, **MULTI, **AGENTIC}, "no_agentic": {**FULL, **MULTI},
             "multi_only": dict(MULTI), "three_multi": {name: MULTI[name] for name in MULTI_TURN[:3]}}
    tables = official_tables(official_checker, tmp_path / "official", cases)
    ours = {name: summaries(counts) for name, counts in cases.items()}
    for name in ("everything", "no_agentic", "multi_only"):
        printed = tables[name]["data_multi_turn.csv"]
        assert ours[name]["multi_turn"] == pytest.approx(printed["Multi Turn Overall Acc"], abs=PRINTED), name
        assert printed["Multi Turn Overall Acc"] == tables[name]["data_overall.csv"]["Multi Turn Acc"]
    everything = tables["everything"]["data_overall.csv"]
    web_search = _mean({k: AGENTIC[k] for k in ("web_search_base", "web_search_no_snippet")})
    memory = _mean({k: AGENTIC[k] for k in ("memory_kv", "memory_vector", "memory_rec_sum")})
    assert (web_search, memory) == (pytest.approx(everything["Web Search Acc"], abs=PRINTED),
                                    pytest.approx(everything["Memory Acc"], abs=PRINTED))
    overall = official_overall({**ours["everything"], "web_search": web_search, "memory": memory})
    assert overall == pytest.approx(everything["Overall Acc"], abs=PRINTED)
    # the official tables count a missing part as 0; the report shows no number and names the parts
    assert tables["no_agentic"]["data_overall.csv"]["Overall Acc"] == pytest.approx(
        overall - 0.4 * (web_search + memory) / 2, abs=PRINTED)
    assert ours["no_agentic"]["overall"] is None and ours["multi_only"]["overall"] is None
    three = tables["three_multi"]["data_multi_turn.csv"]
    assert three["Multi Turn Overall Acc"] == pytest.approx(_mean({**MULTI, "multi_turn_long_context": (0, 200)}),
                                                            abs=PRINTED)
    assert three["Long Context"] is None and ours["three_multi"]["multi_turn"] is None


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


@pytest.mark.slow  # over half a second in the fast loop
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
                                 "non_live_simple_ast": 0.3333, "multi_turn": None, "overall": None,
                                 "web_search": None, "memory": None, "agentic": None,
                                 OVERALL_LACKS: "live AST, irrelevance, multi-turn, web search, memory"}
    assert report["missing"] == 2
