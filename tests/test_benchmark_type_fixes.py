"""Behaviour the type checking of evaluators/benchmarks/ brought to light, each pinned by a small fixture in the
benchmark's own schema."""

from __future__ import annotations

import json
from pathlib import Path

from evaluators.core.registry import get_benchmark
from evaluators.core.types import Prediction
from evaluators.engine.scoring import score_and_report

ACE_SPEC = {
    "name": "Lamp_switch",
    "description": "Turn the lamp on or off.",
    "parameters": {"type": "object", "properties": {"on": {"type": "boolean"}}, "required": ["on"]},
}


def _write_json_lines(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def _acebench_data(root: Path, rows_by_category: dict[str, int]) -> Path:
    """An ACEBench data folder (data_en, prompts and answers) with `rows_by_category` rows per category."""
    for category, count in rows_by_category.items():
        ids = [f"{category}_{index}" for index in range(count)]
        _write_json_lines(root / "data_en" / f"data_{category}.json",
                          [{"id": i, "question": "user: lamp on\n", "function": [ACE_SPEC], "time": ""} for i in ids])
        _write_json_lines(root / "data_en" / "possible_answer" / f"data_{category}.json",
                          [{"id": i, "ground_truth": {"Lamp_switch": {"on": True}}} for i in ids])
    return root


def test_acebench_report_lists_a_requested_category_without_items_as_unavailable(tmp_path: Path):
    """acebench/report.py summarize shadowed its `subsets` argument: a chosen category whose file holds no item
    went unmentioned, while the other packages list it as unavailable."""
    benchmark = get_benchmark("acebench")
    root = _acebench_data(tmp_path, {"normal_atom_bool": 2, "normal_atom_enum": 0})
    chosen = ["normal_atom_bool", "normal_atom_enum"]
    samples = benchmark.load(root, language="en", subsets=chosen)
    predictions = {s.id: Prediction(s.id, output="[Lamp_switch(on=True)]") for s in samples}
    report = score_and_report(benchmark, samples, predictions, ["official"], language="en", subsets=chosen)["official"].report
    assert report.subsets["normal_atom_bool"].metrics == {"accuracy": 1.0}
    assert report.unavailable == ["normal_atom_enum"]
    assert report.to_json()["unavailable"] == ["normal_atom_enum"]


def test_acebench_report_without_chosen_categories_lists_none_unavailable(tmp_path: Path):
    benchmark = get_benchmark("acebench")
    samples = benchmark.load(_acebench_data(tmp_path, {"normal_atom_bool": 1}), language="en",
                             subsets=["normal_atom_bool"])
    report = benchmark.report(samples, [benchmark.score(samples[0], None, "official")])
    assert report.unavailable == [] and report.subsets["normal_atom_bool"].metrics == {"accuracy": 0.0}


# StepEval-Audio: the Optional values mypy pointed at are never None at run time (`\s*` always matches; only
# param_ok may be None, and it is never added). These pin the edges the typed code must keep.


def test_stepeval_call_reading_at_the_end_of_the_text():
    from evaluators.benchmarks.stepeval_audio.extract import extract_call

    def read(output: str):
        return extract_call(Prediction("x", output=output))

    assert read("<tool_call>") is None
    assert read("<tool_call>function") is None
    assert read("<tool_call> \n function\n get_weather\n") is None
    found = read("<tool_call>function \n get_date_time \n {}</tool_call>")
    assert found is not None and (found.name, found.arguments, found.source) == ("get_date_time", {}, "step_text")
    found = read('<tool_call>  {"name": "get_weather", "arguments": {"city": "Oslo"}} </tool_call>')
    assert found is not None and (found.name, found.arguments, found.source) == ("get_weather", {"city": "Oslo"},
                                                                                 "hermes_json")


def test_stepeval_report_keeps_param_ok_none_for_a_tool_without_arguments():
    from evaluators.benchmarks.stepeval_audio.report import summarize
    from evaluators.core.types import SampleScore

    def scored(tool: str, index: int, metrics: dict[str, float]) -> SampleScore:
        return SampleScore(sample_id=f"{tool}_{index}", subset=tool, correct=False, metrics=metrics)

    right = {"positive": 1.0, "called": 1.0, "right_tool": 1.0, "param_ok": 1.0}
    scores = [scored("get_date_time", 0, right), scored("get_date_time", 1, {"positive": 0.0, "called": 0.0,
                                                                              "called_target": 0.0}),
              scored("get_weather", 0, right), scored("get_weather", 1, {**right, "param_ok": 0.0}),
              scored("get_weather", 2, {"positive": 0.0, "called": 1.0, "called_target": 1.0})]
    report = summarize([], scores, subsets=["get_date_time", "get_weather"])
    date_time = report.subsets["get_date_time"].metrics
    assert date_time["param_ok"] is None and date_time["param_accuracy"] is None
    assert date_time["precision"] == 1.0 and date_time["negatives"] == 1
    weather = report.subsets["get_weather"].metrics
    assert (weather["TP"], weather["FP"], weather["param_ok"]) == (2, 1, 1)
    assert weather["precision"] == 2 / 3 and weather["param_accuracy"] == 0.5
    assert report.summary["param_accuracy"] == 0.5  # get_date_time has none to average
    assert report.summary["precision"] == (1.0 + 2 / 3) / 2
    assert list(report.subsets["get_weather"].metrics)[-8:] == ["positives", "negatives", "TP", "FN", "FP", "FP_any",
                                                                "right_tool", "param_ok"]
    assert "param_accuracy" not in report.intervals["subsets"]["get_date_time"]
