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
