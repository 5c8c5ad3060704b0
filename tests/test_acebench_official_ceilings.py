"""Gold answers as predictions reproduce the official checker's ceilings (specs/acebench.md §6)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluators.benchmarks.acebench.oracle import gold_prediction
from evaluators.core.registry import get_benchmark, score_all

CEILINGS = {
    "en": {
        "normal_single_turn_single_function": 1.0,
        "normal_single_turn_parallel_function": 0.99,
        "normal_multi_turn_user_switch": 0.74,
        "normal_multi_turn_user_adjust": 0.76,
        "normal_similar_api": 1.0,
        "normal_preference": 0.98,
    },
    "zh": {
        "normal_single_turn_single_function": 1.0,
        "normal_single_turn_parallel_function": 0.98,
        "normal_multi_turn_user_switch": 0.98,
        "normal_multi_turn_user_adjust": 0.98,
        "normal_similar_api": 0.96,
        "normal_preference": 1.0,
    },
}
SUMMARY = {
    "en": {"normal": 0.956, "special": 1.0, "agent": 1.0, "overall": 0.975},
    "zh": {"normal": 0.988, "special": 1.0, "agent": 1.0, "overall": 0.993},
}


@pytest.fixture(scope="module", params=["en", "zh"])
def oracle_report(request, real_acebench_dir: Path, tmp_path_factory: pytest.TempPathFactory):
    language = request.param
    benchmark = get_benchmark("acebench")
    samples = benchmark.load(real_acebench_dir, language=language)
    path = tmp_path_factory.mktemp("oracle") / f"gold_{language}.jsonl"
    path.write_text("".join(json.dumps(gold_prediction(s), ensure_ascii=False) + "\n" for s in samples), encoding="utf-8")
    predictions = benchmark.read_predictions(path, samples)
    scores = score_all(benchmark, samples, predictions, "official")
    return language, benchmark.report(samples, scores, mode="official", language=language), samples, predictions


def test_category_ceilings(oracle_report):
    language, report, _, _ = oracle_report
    for category, expected in CEILINGS[language].items():
        assert report.subsets[category].metrics["accuracy"] == expected, category
    if language == "en":
        assert all(report.subsets[c].metrics["accuracy"] == 1.0 for c in report.subsets if "atom" in c)


def test_summary_ceilings(oracle_report):
    language, report, _, _ = oracle_report
    for key, expected in SUMMARY[language].items():
        assert report.summary[key] == expected, key
    assert report.subsets["agent_multi_turn"].metrics["process_accuracy"] == 1.0


def test_strict_mode_lifts_the_whitespace_ceiling(oracle_report):
    language, _, samples, predictions = oracle_report
    benchmark = get_benchmark("acebench")
    strict = benchmark.report(samples, score_all(benchmark, samples, predictions, "strict"), mode="strict", language=language)
    assert strict.subsets["normal_multi_turn_user_switch"].metrics["accuracy"] == 1.0
    assert strict.summary["normal"] > SUMMARY[language]["normal"]
