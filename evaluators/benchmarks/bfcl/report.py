"""Per-category accuracy, the official summaries of `generate_leaderboard_csv` (single-turn, Multi Turn, Web
Search, Memory, Agentic), and the official Overall where every part of it is present (a run without memory_vector's
optional extra, or without a web search backend, lacks a part)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from evaluators.benchmarks.bfcl.categories import (
    AGENTIC as AGENTIC_CATEGORIES,
)
from evaluators.benchmarks.bfcl.categories import (
    CATEGORIES,
    FORMAT_SENSITIVITY,
    IRRELEVANCE,
    MEMORY,
    MULTI_TURN,
    RELEVANCE,
    SINGLE_TURN,
    WEB_SEARCH,
)
from evaluators.benchmarks.bfcl.format_sensitivity.report import configuration_metrics, format_sensitivity_summary
from evaluators.core.types import Report, Sample, SampleScore, SubsetResult

SIMPLE_AST = ("simple_python", "simple_java", "simple_javascript")
NON_LIVE_AST_REST = ("multiple", "parallel", "parallel_multiple")
LIVE_AST = ("live_simple", "live_multiple", "live_parallel", "live_parallel_multiple")
SUMMARY_KEYS = ("non_live_ast", "live_ast", "irrelevance_detection", "relevance_detection", "non_live_simple_ast",
                "multi_turn", "web_search", "memory", "agentic", "overall")
# Every category a report can hold, in the official order.
REPORTED = tuple(dict.fromkeys((*SINGLE_TURN, *MULTI_TURN, *AGENTIC_CATEGORIES, *CATEGORIES)))
# The official Overall Acc: its parts and their weights (generate_leaderboard_csv, normalised by their sum);
# "agentic" is the unweighted mean of web search and memory. Relevance and format sensitivity are not in it.
OVERALL_WEIGHTS = {"non_live_ast": 10, "live_ast": 10, "irrelevance_detection": 10, "multi_turn": 30, "agentic": 40}
AGENTIC = ("web_search", "memory")
# What a person reads for each part of Overall when it is missing from a run.
OVERALL_PART_NAMES = {"non_live_ast": "non-live AST", "live_ast": "live AST", "irrelevance_detection": "irrelevance",
                      "multi_turn": "multi-turn", "web_search": "web search", "memory": "memory"}
# The summary label that names the parts of Overall a report lacks (e.g. memory, for a run without memory_vector's
# extra; an upload of its result file brings it).
OVERALL_LACKS = "overall_lacks"
# The tables print percentages with two decimals: four places as fractions.
OFFICIAL_PLACES = 4


def mean_of(parts: Sequence[str]) -> tuple[tuple[str, float], ...]:
    """An unweighted mean's parts as a Metric's `made_of`: each part weighs the same."""
    return tuple((part, 1 / len(parts)) for part in parts)


def overall_parts() -> tuple[tuple[str, float], ...]:
    """The official Overall as a Metric's `made_of`: each part and its share of the whole (agentic split evenly
    between web search and memory)."""
    total = sum(OVERALL_WEIGHTS.values())
    parts = [(name, weight / total) for name, weight in OVERALL_WEIGHTS.items() if name != "agentic"]
    return (*parts, *((name, OVERALL_WEIGHTS["agentic"] / total / len(AGENTIC)) for name in AGENTIC))


def official_round(value: float | None) -> float | None:
    return None if value is None else round(value, OFFICIAL_PLACES)


def _unweighted_mean(values: Sequence[float | None]) -> float | None:
    """official_unweighted_mean: each part counts once whatever its size; None when a part is missing."""
    present = [value for value in values if value is not None]
    if len(present) < len(values):
        return None
    return sum(present) / len(present)


def _item_weighted(counts: dict[str, tuple[int, int]], categories: Sequence[str]) -> float | None:
    """official_live_ast_item_weighted: correct items over all items of the categories."""
    if not all(category in counts for category in categories):
        return None
    correct = sum(counts[c][0] for c in categories)
    total = sum(counts[c][1] for c in categories)
    return correct / total if total else None


def official_overall(parts: dict[str, float | None]) -> float | None:
    """official_overall_weighted: 10% non-live AST, 10% live AST, 10% irrelevance, 30% multi-turn and 40% the
    mean of web search and memory. None unless every part is present: the official table would count a
    missing part as 0, which makes a number no run here could be compared by."""
    values = {**parts, "agentic": _unweighted_mean([parts.get(name) for name in AGENTIC])}
    present = {name: value for name in OVERALL_WEIGHTS if (value := values.get(name)) is not None}
    if len(present) < len(OVERALL_WEIGHTS):
        return None
    total = sum(OVERALL_WEIGHTS.values())
    return sum(weight / total * present[name] for name, weight in OVERALL_WEIGHTS.items())


def overall_lacks(parts: dict[str, float | None]) -> list[str]:
    """The parts of Overall a set of summaries has no figure for, as a person reads them."""
    needed = [name for name in OVERALL_WEIGHTS if name != "agentic"] + list(AGENTIC)
    return [OVERALL_PART_NAMES[name] for name in needed if parts.get(name) is None]


def summaries(counts: dict[str, tuple[int, int]]) -> dict[str, float | None]:
    """The summary figures from (correct, total) per category, unrounded; None unless every category they need
    is present (Overall: only with the agentic categories, which come from uploaded result files)."""
    accuracy = {name: correct / total for name, (correct, total) in counts.items() if total}
    simple = _unweighted_mean([accuracy.get(c) for c in SIMPLE_AST])
    figures = {
        "non_live_ast": _unweighted_mean([simple, *(accuracy.get(c) for c in NON_LIVE_AST_REST)]),
        "live_ast": _item_weighted(counts, LIVE_AST),
        "irrelevance_detection": _unweighted_mean([accuracy.get(c) for c in IRRELEVANCE]),
        "relevance_detection": _unweighted_mean([accuracy.get(c) for c in RELEVANCE]),
        "non_live_simple_ast": simple,
        # official_multi_turn_unweighted: the mean of the four categories (200 items each)
        "multi_turn": _unweighted_mean([accuracy.get(c) for c in MULTI_TURN]),
        # official_web_search_unweighted, official_memory_unweighted: the official Web Search Summary (base,
        # no_snippet; 100 items each) and Memory Summary (kv, vector, rec_sum; 155 each)
        "web_search": _unweighted_mean([accuracy.get(c) for c in WEB_SEARCH]),
        "memory": _unweighted_mean([accuracy.get(c) for c in MEMORY]),
    }
    # official_agentic_unweighted: Agentic Overall Acc, the mean of the two summaries (only when both are present;
    # the official table counts a missing one as 0)
    figures["agentic"] = _unweighted_mean([figures["web_search"], figures["memory"]])
    figures["overall"] = official_overall(figures)
    return figures


def summarize(samples: list[Sample], scores: list[SampleScore], mode: str = "official", language: str | None = None,
              subsets: list[str] | None = None) -> Report:
    """Accuracy per category (correct / items, four places) and the summaries computed from the unrounded
    accuracies, then rounded to four places as the official tables print them; beside the empty Overall, the
    parts of it this run lacks."""
    counts: dict[str, tuple[int, int]] = {}
    for result in scores:
        correct, total = counts.get(result.subset, (0, 0))
        counts[result.subset] = (correct + bool(result.correct), total + 1)
    report_subsets = {
        category: SubsetResult(counts[category][1], {"accuracy": official_round(counts[category][0] / counts[category][1])})
        for category in REPORTED if category in counts
    }
    requested = subsets or list(CATEGORIES)
    errors = Counter(s.error_type for s in scores if not s.correct and s.error_type)
    figures = summaries(counts)
    summary: dict[str, float | str | None] = {key: official_round(value) for key, value in figures.items()}
    # Format sensitivity (outside every summary and Overall): its statistics, and its per-configuration figures.
    summary.update(format_sensitivity_summary(scores))
    if FORMAT_SENSITIVITY in report_subsets:
        report_subsets[FORMAT_SENSITIVITY].metrics.update(configuration_metrics(scores))
    lacking = overall_lacks(figures)
    if lacking:
        summary[OVERALL_LACKS] = ", ".join(lacking)
    return Report(
        benchmark="bfcl",
        mode=mode,
        subsets=report_subsets,
        summary=summary,  # type: ignore[arg-type]  # a text label beside the figures, as other packages keep
        errors=dict(sorted(errors.items())),
        language=language,
        missing=[s.sample_id for s in scores if s.error_type == "missing"],
        unavailable=[name for name in requested if name in REPORTED and name not in counts],
    )
