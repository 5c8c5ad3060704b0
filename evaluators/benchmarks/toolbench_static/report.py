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


def mean_over_carriers(scores: list[SampleScore]) -> dict[str, float | None]:
    """Each metric averaged over the steps that carry it (None when no step does)."""
    return {name: (sum(v) / len(v) if v else None) for name, v in carried_values(scores).items()}


def carrier_intervals(scores: list[SampleScore]) -> dict[str, list[float]]:
    """The 95% interval of each metric's mean over the steps that carry it (core/intervals.mean_estimate)."""
    found = {name: bounds(mean_estimate(values)) for name, values in carried_values(scores).items()}
    return {name: interval for name, interval in found.items() if interval is not None}


def summarize(
    samples: list[Sample], scores: list[SampleScore], mode: str = "official", language: str | None = None,
    subsets: list[str] | None = None,
) -> Report:
    by_subset: dict[str, list[SampleScore]] = {}
    for result in scores:
        by_subset.setdefault(result.subset, []).append(result)
    report_subsets = {
        name: SubsetResult(len(by_subset[name]), mean_over_carriers(by_subset[name])) for name in SUBSETS if name in by_subset
    }
    errors = Counter(s.error_type for s in scores if s.error_type)
    requested = subsets or list(SUBSETS)
    return Report(
        benchmark="toolbench_static",
        mode=mode,
        subsets=report_subsets,
        summary=mean_over_carriers(scores),
        errors=dict(sorted(errors.items())),
        missing=[s.sample_id for s in scores if s.error_type == "missing_prediction"],
        unavailable=[name for name in requested if name not in by_subset],
        intervals={"summary": carrier_intervals(scores),
                   "subsets": {name: carrier_intervals(by_subset[name]) for name in report_subsets}},
    )
