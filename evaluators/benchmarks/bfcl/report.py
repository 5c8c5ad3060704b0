"""Per-category accuracy and the official single-turn summaries (`generate_leaderboard_csv`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from evaluators.benchmarks.bfcl.categories import CATEGORIES, IRRELEVANCE, RELEVANCE
from evaluators.core.types import Report, Sample, SampleScore, SubsetResult

SIMPLE_AST = ("simple_python", "simple_java", "simple_javascript")
NON_LIVE_AST_REST = ("multiple", "parallel", "parallel_multiple")
LIVE_AST = ("live_simple", "live_multiple", "live_parallel", "live_parallel_multiple")
SUMMARY_KEYS = ("non_live_ast", "live_ast", "irrelevance_detection", "relevance_detection", "non_live_simple_ast")
# The tables print percentages with two decimals: four places as fractions.
OFFICIAL_PLACES = 4


def official_round(value: float | None) -> float | None:
    return None if value is None else round(value, OFFICIAL_PLACES)


def _unweighted_mean(values: Sequence[float | None]) -> float | None:
    """official_unweighted_mean: each part counts once whatever its size; None when a part is missing."""
    if any(value is None for value in values):
        return None
    return sum(values) / len(values)  # type: ignore[arg-type]


def _item_weighted(counts: dict[str, tuple[int, int]], categories: Sequence[str]) -> float | None:
    """official_live_ast_item_weighted: correct items over all items of the categories."""
    if not all(category in counts for category in categories):
        return None
    correct = sum(counts[c][0] for c in categories)
    total = sum(counts[c][1] for c in categories)
    return correct / total if total else None


def summaries(counts: dict[str, tuple[int, int]]) -> dict[str, float | None]:
    """The five summary figures from (correct, total) per category, unrounded; None unless every category
    they need was run."""
    accuracy = {name: correct / total for name, (correct, total) in counts.items() if total}
    simple = _unweighted_mean([accuracy.get(c) for c in SIMPLE_AST])
    return {
        "non_live_ast": _unweighted_mean([simple, *(accuracy.get(c) for c in NON_LIVE_AST_REST)]),
        "live_ast": _item_weighted(counts, LIVE_AST),
        "irrelevance_detection": _unweighted_mean([accuracy.get(c) for c in IRRELEVANCE]),
        "relevance_detection": _unweighted_mean([accuracy.get(c) for c in RELEVANCE]),
        "non_live_simple_ast": simple,
    }


def summarize(samples: list[Sample], scores: list[SampleScore], mode: str = "official", language: str | None = None,
              subsets: list[str] | None = None) -> Report:
    """Accuracy per category (correct / items, four places) and the summaries computed from the unrounded
    accuracies, then rounded to four places as the official tables print them."""
    counts: dict[str, tuple[int, int]] = {}
    for result in scores:
        correct, total = counts.get(result.subset, (0, 0))
        counts[result.subset] = (correct + bool(result.correct), total + 1)
    report_subsets = {
        category: SubsetResult(counts[category][1], {"accuracy": official_round(counts[category][0] / counts[category][1])})
        for category in CATEGORIES if category in counts
    }
    requested = subsets or list(CATEGORIES)
    errors = Counter(s.error_type for s in scores if not s.correct and s.error_type)
    return Report(
        benchmark="bfcl",
        mode=mode,
        subsets=report_subsets,
        summary={key: official_round(value) for key, value in summaries(counts).items()},
        errors=dict(sorted(errors.items())),
        language=language,
        missing=[s.sample_id for s in scores if s.error_type == "missing"],
        unavailable=[name for name in requested if name in CATEGORIES and name not in counts],
    )
