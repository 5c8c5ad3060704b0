"""Aggregation: official rounding, conversations, group and overall weights."""

from __future__ import annotations

import pytest

from evaluators.benchmarks.acebench.categories import CATEGORIES
from evaluators.benchmarks.acebench.report import conversation_scores, multi_turn_metrics, official_round, summarize
from evaluators.core.types import Sample, SampleScore


def _rows(subset: str, verdicts: list[bool], conversations: list[str] | None = None):
    samples, scores = [], []
    for index, ok in enumerate(verdicts):
        meta = {"conversation": conversations[index]} if conversations else {}
        samples.append(Sample(id=f"{subset}_{index}", subset=subset, input={}, gold=None, meta=meta))
        scores.append(SampleScore(sample_id=f"{subset}_{index}", subset=subset, correct=ok,
                                  metrics={"process_score": 1.0 if ok else 0.5}))
    return samples, scores


def test_official_round():
    assert official_round(2 / 3) == 0.667


def test_conversations_group_consecutive_rows():
    samples, scores = _rows("normal_multi_turn_user_adjust", [True, False, True, True, True], ["0", "0", "1", "1", "0"])
    assert conversation_scores(samples, scores) == [[True, False], [True, True], [True]]
    assert multi_turn_metrics(samples, scores) == {"accuracy": 0.667, "process_accuracy": 0.833}


def test_official_special_accuracy_unrounded():
    samples, scores = _rows("special_incomplete", [True, True, False])
    report = summarize(samples, scores)
    assert report.subsets["special_incomplete"].metrics["accuracy"] == 2 / 3


def test_summary_uses_official_weights_and_rounding():
    samples, scores = [], []
    for category in CATEGORIES:
        verdicts = [True, True, False] if category.startswith("normal") else [True, False]
        convs = ["0", "1", "2"] if category.startswith("normal_multi_turn") else None
        s, r = _rows(category, verdicts, convs)
        samples += s
        scores += r
    report = summarize(samples, scores, language="en")
    assert report.summary["normal"] == 0.667
    assert report.summary["special"] == 0.5
    assert report.summary["agent"] == 0.5
    assert report.summary["overall"] == round(0.578 * 0.667 + 0.2676 * 0.5 + 0.1545 * 0.5, 3)
    assert report.summary["atom"] == 0.667 and report.summary["api"] == 0.667
    assert report.subsets["agent_multi_turn"].metrics == {"accuracy": 0.5, "process_accuracy": 0.75}
    as_json = report.to_json()
    assert set(as_json) >= {"benchmark", "language", "mode", "subsets", "summary", "errors"}


def test_partial_runs_leave_groups_and_overall_null():
    samples, scores = _rows("normal_atom_bool", [True])
    report = summarize(samples, scores)
    assert report.summary["normal"] is None and report.summary["overall"] is None
    assert report.summary["pref"] is None
    assert report.subsets["normal_atom_bool"].metrics["accuracy"] == 1.0


@pytest.mark.parametrize("error_type", ["missing_prediction", "format_error"])
def test_errors_are_counted_by_type(error_type: str):
    samples, scores = _rows("normal_atom_bool", [False])
    scores[0].error_type = error_type
    report = summarize(samples, scores)
    assert report.errors == {error_type: 1}
    assert report.missing == (["normal_atom_bool_0"] if error_type == "missing_prediction" else [])


def test_means_are_summed_left_to_right_like_the_reference():
    from evaluators.benchmarks.acebench.report import mean_in_order

    values = [0.1] * 3 + [0.7]
    total = 0.0
    for value in values:
        total += value
    assert mean_in_order(values) == total / 4
    # an exact sum rounds differently here: the reference's left-to-right sum is what counts
    scores = [1.0, 0.333, 0.667, 0.25, 0.5, 1.0, 0.2]
    running = 0.0
    for value in scores:
        running += value
    assert mean_in_order(scores) == running / len(scores)
