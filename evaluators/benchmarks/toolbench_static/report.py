"""Per-subset means over the steps that carry each metric, and the pooled overall."""

from __future__ import annotations

from collections import Counter

from evaluators.benchmarks.toolbench_static.data import SUBSETS
from evaluators.core.intervals import bounds, mean_estimate
from evaluators.core.types import Report, Sample, SampleScore, SubsetResult

METRICS = ("act_em", "plan_em", "f1", "easy_f1", "hard_f1", "hallu_rate", "rouge_l")


def carried_values(scores: list[SampleScore]) -> dict[str, list[float]]:
    """Each metric's values over the steps that carry it."""
    values: dict[str, list[float]] = {name: [] for name in METRICS}
    for result in scores:
        for name, value in (result.metrics or {}).items():
            values[name].append(value)
    return values


def carrier_figures(scores: list[SampleScore]) -> tuple[dict[str, float | None], dict[str, list[float]]]:
    """Each metric's mean over the steps that carry it (None when no step does), and the 95% interval of each mean
    that has one (core/intervals.mean_estimate), from one pass over the steps."""
    means: dict[str, float | None] = {}
    intervals: dict[str, list[float]] = {}
    for name, values in carried_values(scores).items():
        estimate = mean_estimate(values)
        means[name] = estimate[0] if estimate is not None else None
        interval = bounds(estimate)
        if interval is not None:
            intervals[name] = interval
    return means, intervals


def summarize(
    samples: list[Sample], scores: list[SampleScore], mode: str = "official", language: str | None = None,
    subsets: list[str] | None = None,
) -> Report:
    by_subset: dict[str, list[SampleScore]] = {}
    for result in scores:
        by_subset.setdefault(result.subset, []).append(result)
    figures = {name: carrier_figures(by_subset[name]) for name in SUBSETS if name in by_subset}
    report_subsets = {name: SubsetResult(len(by_subset[name]), means) for name, (means, _) in figures.items()}
    summary, summary_intervals = carrier_figures(scores)
    errors = Counter(s.error_type for s in scores if s.error_type)
    requested = subsets or list(SUBSETS)
    return Report(
        benchmark="toolbench_static",
        mode=mode,
        subsets=report_subsets,
        summary=summary,
        errors=dict(sorted(errors.items())),
        missing=[s.sample_id for s in scores if s.error_type == "missing_prediction"],
        unavailable=[name for name in requested if name not in by_subset],
        intervals={"summary": summary_intervals, "subsets": {name: kept for name, (_, kept) in figures.items()}},
    )
