"""Per-category accuracy and the leaderboard summary, with the official weights and rounding."""

from __future__ import annotations

from collections import Counter

from evaluators.benchmarks.acebench.categories import (
    CATEGORIES,
    GROUPS,
    OVERALL_WEIGHTS,
    SUB_COLUMNS,
    is_agent,
    is_multi_turn,
    is_special,
)
from evaluators.benchmarks.acebench.evidence import process_score_of
from evaluators.core.types import Report, Sample, SampleScore, SubsetResult


def official_round(value: float) -> float:
    return round(value, 3)


def mean_in_order(values: list[float]) -> float:
    """sum / count with a left-to-right float sum, as the reference accumulates (an exact sum such
    as statistics.fmean can round differently at a .xxx5 boundary)."""
    total = 0.0
    for value in values:
        total += value
    return total / len(values) if values else 0.0


def conversation_scores(samples: list[Sample], scores: list[SampleScore]) -> list[list[bool]]:
    """Multi-turn rows grouped into conversations: consecutive rows with the same conversation key."""
    groups: list[list[bool]] = []
    last_key: object = object()
    for sample, result in zip(samples, scores):
        key = sample.meta.get("conversation")
        if not groups or key != last_key:
            groups.append([])
        groups[-1].append(result.correct)
        last_key = key
    return groups


def multi_turn_metrics(samples: list[Sample], scores: list[SampleScore]) -> dict[str, float]:
    """End accuracy = share of conversations with every turn right; process = mean share of right
    turns, each rounded to 3 places before averaging (as `multiplt_turn_accuracy` does)."""
    conversations = conversation_scores(samples, scores)
    if not conversations:
        return {"accuracy": 0.0, "process_accuracy": 0.0}
    end = official_round(mean_in_order([1 if all(turns) else 0 for turns in conversations]))
    process = official_round(mean_in_order([official_round(sum(turns) / len(turns)) for turns in conversations]))
    return {"accuracy": end, "process_accuracy": process}


def category_metrics(category: str, samples: list[Sample], scores: list[SampleScore]) -> dict[str, float]:
    if is_multi_turn(category):
        return multi_turn_metrics(samples, scores)
    correct = sum(s.correct for s in scores)
    share = correct / len(scores) if scores else 0.0
    if is_special(category):
        return {"accuracy": official_special_accuracy_unrounded(correct, len(scores))}
    if is_agent(category):
        process = mean_in_order([process_score_of(s.metrics) for s in scores])
        return {"accuracy": official_round(share), "process_accuracy": official_round(process)}
    return {"accuracy": official_round(share)}


def official_special_accuracy_unrounded(correct: int, total: int) -> float:
    """Special categories report correct/total without rounding (the others round to 3 places)."""
    return correct / total if total else 0.0


def _mean_of(categories: tuple[str, ...], accuracy: dict[str, float]) -> float | None:
    if not all(c in accuracy for c in categories):
        return None
    return official_round(mean_in_order([accuracy[c] for c in categories]))


def summarize(
    samples: list[Sample], scores: list[SampleScore], mode: str = "official", language: str | None = None,
    subsets: list[str] | None = None,
) -> Report:
    """The report; a group (and the overall) is null unless every one of its categories was scored. A requested
    category (`subsets`; None: the samples' own) without samples is listed as unavailable."""
    by_category: dict[str, tuple[list[Sample], list[SampleScore]]] = {}
    for sample, result in zip(samples, scores):
        rows = by_category.setdefault(sample.subset, ([], []))
        rows[0].append(sample)
        rows[1].append(result)
    report_subsets: dict[str, SubsetResult] = {}
    accuracy: dict[str, float] = {}
    for category in CATEGORIES:
        if category in by_category:
            cat_samples, cat_scores = by_category[category]
            metrics = category_metrics(category, cat_samples, cat_scores)
            # a copy, as the report's metrics may hold None where a figure is missing
            report_subsets[category] = SubsetResult(len(cat_samples), {**metrics})
            accuracy[category] = metrics["accuracy"]
    summary: dict[str, float | None] = {}
    for group in ("normal", "special", "agent"):
        summary[group] = _mean_of(GROUPS[group], accuracy)
    weighted = [OVERALL_WEIGHTS[g] * mean for g in OVERALL_WEIGHTS if (mean := summary[g]) is not None]
    summary["overall"] = official_round(sum(weighted)) if len(weighted) == len(OVERALL_WEIGHTS) else None
    for column, categories in SUB_COLUMNS.items():
        summary[column] = _mean_of(categories, accuracy)
    errors = Counter(s.error_type for s in scores if not s.correct and s.error_type)
    missing = [s.sample_id for s in scores if s.error_type == "missing_prediction"]
    return Report(
        benchmark="acebench",
        mode=mode,
        subsets=report_subsets,
        summary=summary,
        errors=dict(sorted(errors.items())),
        language=language,
        missing=missing,
        unavailable=[name for name in subsets or () if name not in by_category],
    )
