"""Behaviour the type checking of evaluators/benchmarks/ brought to light, each pinned by a small fixture in the
benchmark's own schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluators.core.errors import DataError
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


# BFCL


class _IndexAnswer:
    """What urllib's opener answers for the package index's JSON page."""

    def __init__(self, body: bytes):
        self.body = body

    def open(self, url: str, timeout: float) -> _IndexAnswer:
        return self

    def __enter__(self) -> _IndexAnswer:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def read(self, limit: int) -> bytes:
        return self.body[:limit]


def test_bfcl_an_index_entry_without_a_url_is_no_wheel(monkeypatch: pytest.MonkeyPatch):
    """bfcl/wheel.py took the index entry's `url` as text: a null one made urljoin answer the index page's own
    address, which was then downloaded as the wheel."""
    from evaluators.benchmarks.bfcl import wheel

    def index_listing(link: object) -> bytes:
        entry = {"filename": wheel.WHEEL_NAME, "url": link}
        return json.dumps({"releases": {wheel.VERSION: [entry]}, "urls": []}).encode()

    monkeypatch.setattr(wheel, "checked_opener", lambda: _IndexAnswer(index_listing("/files/bfcl.whl")))
    assert wheel.wheel_url_from_index() == wheel.index_url().split("/pypi/")[0] + "/files/bfcl.whl"
    for link in (None, 7):
        monkeypatch.setattr(wheel, "checked_opener", lambda link=link: _IndexAnswer(index_listing(link)))
        with pytest.raises(DataError, match=f"the package index lists no {wheel.WHEEL_NAME}"):
            wheel.wheel_url_from_index()


def test_bfcl_summaries_need_every_part():
    from evaluators.benchmarks.bfcl.report import official_overall, summaries

    figures = summaries({"simple_python": (1, 2), "simple_java": (1, 1), "simple_javascript": (0, 1),
                         "multiple": (1, 1), "parallel": (1, 1)})
    assert figures["non_live_simple_ast"] == 0.5 and figures["non_live_ast"] is None  # parallel_multiple not run
    parts = {"non_live_ast": 0.5, "live_ast": 0.5, "irrelevance_detection": 1.0, "multi_turn": 0.25,
             "web_search": 0.5, "memory": 1.0}
    assert official_overall(parts) == pytest.approx(0.05 + 0.05 + 0.1 + 0.075 + 0.3)
    assert official_overall({**parts, "memory": None}) is None


# ACEBench


def test_acebench_a_gold_call_no_tool_describes_still_crashes_the_official_check():
    """official_simple_function_check now takes the spec official_find_description may not find, and raises the
    reference's own error for it."""
    from tests.acebench_fixtures import verdict

    official = verdict("[Other(city='x')]", {"Other": {"city": "x"}})
    assert (official.error_type, official.detail) == ("checker_crash", "TypeError: 'NoneType' object is not subscriptable")
    strict = verdict("[Other(city='x')]", {"Other": {"city": "x"}}, strict=True)
    assert (strict.error_type, strict.rule) == ("wrong_function", "strict_find_description")


def test_acebench_agent_unary_minus_on_text_is_the_reference_error():
    from evaluators.benchmarks.acebench.agent.calls import ReplySyntaxError, parse_reply

    assert parse_reply("[f(a=-2.5, b=-True, c=~1j)]")[0].arguments == (("a", "-2.5"), ("b", "-1"), ("c", "(-0-1j)"))
    with pytest.raises(ReplySyntaxError, match="^bad operand type for unary -: 'str'$"):
        parse_reply("[f(a=-'x')]")
    with pytest.raises(ReplySyntaxError, match="^bad operand type for unary -: 'NoneType'$"):
        parse_reply("[f(a=-None)]")
