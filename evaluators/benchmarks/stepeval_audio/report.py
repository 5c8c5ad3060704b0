"""Per-tool trigger precision / recall, type and parameter accuracy with the counts behind them, and
their macro average over tools (spec §7 reconstruction). Fractions, unrounded."""

from __future__ import annotations

from collections import Counter
from typing import Any, TypedDict

from evaluators.benchmarks.stepeval_audio.tools import NO_PARAMETER_TOOLS, TOOLS
from evaluators.core.intervals import Estimate, bounds, mean_of_estimates, share_estimate
from evaluators.core.types import Report, Sample, SampleScore, SubsetResult

METRICS = ("precision", "recall", "type_accuracy", "param_accuracy")
# Integer counts reported beside the metrics so that every fraction can be checked by hand.
COUNTS = ("positives", "negatives", "TP", "FN", "FP", "FP_any", "right_tool", "param_ok")


class ToolCounts(TypedDict):
    """The counts behind one tool's figures (COUNTS); param_ok is None for a tool without arguments."""

    positives: int
    negatives: int
    TP: int
    FN: int
    FP: int
    FP_any: int
    right_tool: int
    param_ok: int | None


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def tool_counts(tool: str, scores: list[SampleScore]) -> ToolCounts:
    """TP = positives with any call; FP = negatives calling this tool; FP_any = negatives calling any tool;
    param_ok is None for tools without arguments."""
    flags = [s.metrics or {} for s in scores]
    positives = [f for f in flags if f.get("positive") == 1.0]
    negatives = [f for f in flags if f.get("positive") == 0.0]
    tp = sum(int(f.get("called", 0)) for f in positives)
    return {
        "positives": len(positives),
        "negatives": len(negatives),
        "TP": tp,
        "FN": len(positives) - tp,
        "FP": sum(int(f.get("called_target", 0)) for f in negatives),
        "FP_any": sum(int(f.get("called", 0)) for f in negatives),
        "right_tool": sum(int(f.get("right_tool", 0)) for f in positives),
        "param_ok": None if tool in NO_PARAMETER_TOOLS else sum(int(f.get("param_ok", 0)) for f in positives),
    }


def tool_metrics(counts: ToolCounts) -> dict[str, float | None]:
    return {
        "precision": _ratio(counts["TP"], counts["TP"] + counts["FP"]),
        "recall": _ratio(counts["TP"], counts["positives"]),
        "type_accuracy": _ratio(counts["right_tool"], counts["TP"]),
        "param_accuracy": None if counts["param_ok"] is None else _ratio(counts["param_ok"], counts["right_tool"]),
    }


def counts_as_metrics(counts: ToolCounts) -> dict[str, float | None]:
    """The counts as a report's metrics, in COUNTS order."""
    return {"positives": counts["positives"], "negatives": counts["negatives"], "TP": counts["TP"], "FN": counts["FN"],
            "FP": counts["FP"], "FP_any": counts["FP_any"], "right_tool": counts["right_tool"],
            "param_ok": counts["param_ok"]}


def tool_estimates(counts: ToolCounts) -> dict[str, Estimate | None]:
    """Each of tool_metrics' figures as a share of what it counts (trigger precision: of the calls the tool drew,
    TP + FP; recall: of the positives; type accuracy: of TP; parameter accuracy: of the right tool), with its
    variance (core/intervals.share_estimate)."""
    tp, fp, right = counts["TP"], counts["FP"], counts["right_tool"]
    return {
        "precision": share_estimate(tp, tp + fp),
        "recall": share_estimate(tp, counts["positives"]),
        "type_accuracy": share_estimate(right, tp),
        "param_accuracy": None if counts["param_ok"] is None else share_estimate(counts["param_ok"], right),
    }


def tool_intervals(estimates: dict[str, dict[str, Estimate | None]]) -> dict[str, Any]:
    """The 95% intervals of each tool's figures and of their macro averages (the mean of independent shares), in
    the report's shape (Report.intervals)."""
    per_tool = {tool: {name: found for name, estimate in figures.items() if (found := bounds(estimate)) is not None}
                for tool, figures in estimates.items()}
    macro = {}
    for name in METRICS:
        parts = [estimate for figures in estimates.values() if (estimate := figures.get(name)) is not None]
        found = bounds(mean_of_estimates(parts))
        if found is not None:
            macro[name] = found
    return {"summary": macro, "subsets": per_tool}


def macro_average(per_tool: dict[str, dict[str, float | None]]) -> dict[str, float | None]:
    """Each metric's mean over the tools where it is defined (param_accuracy: not get_date_time)."""
    averages: dict[str, float | None] = {}
    for name in METRICS:
        values = [value for metrics in per_tool.values() if (value := metrics[name]) is not None]
        averages[name] = sum(values) / len(values) if values else None
    return averages


def _label(values: set[str]) -> str | None:
    """One label for a set of per-sample labels: the value, `mixed:a+b`, or None when there are none."""
    if not values:
        return None
    return next(iter(values)) if len(values) == 1 else "mixed:" + "+".join(sorted(values))


def param_method(scores: list[SampleScore]) -> str | None:
    """How parameters were rated: `judge:<model>` or `exact`."""
    methods = {s.decoded["param"]["method"] for s in scores if isinstance(s.decoded, dict) and s.decoded.get("param")}
    return _label(methods - {None})


def modality(scores: list[SampleScore]) -> str | None:
    """The predictions' modality when they record it (runs do; uploaded files do not)."""
    return _label({s.decoded["modality"] for s in scores if isinstance(s.decoded, dict) and s.decoded.get("modality")})


def summarize(
    samples: list[Sample], scores: list[SampleScore], mode: str = "official", language: str | None = None,
    subsets: list[str] | None = None,
) -> Report:
    by_tool: dict[str, list[SampleScore]] = {}
    for result in scores:
        by_tool.setdefault(result.subset, []).append(result)
    per_tool: dict[str, dict[str, float | None]] = {}
    estimates: dict[str, dict[str, Estimate | None]] = {}
    report_subsets: dict[str, SubsetResult] = {}
    for tool in TOOLS:
        if tool not in by_tool:
            continue
        counts = tool_counts(tool, by_tool[tool])
        per_tool[tool] = tool_metrics(counts)
        estimates[tool] = tool_estimates(counts)
        report_subsets[tool] = SubsetResult(len(by_tool[tool]), {**per_tool[tool], **counts_as_metrics(counts)})
    summary: dict[str, object] = {**macro_average(per_tool), "param_method": param_method(scores)}
    if modality(scores) is not None:
        summary["modality"] = modality(scores)
    errors = Counter(s.error_type for s in scores if s.error_type)
    requested = subsets or list(TOOLS)
    return Report(
        benchmark="stepeval_audio",
        mode=mode,
        subsets=report_subsets,
        summary=summary,  # type: ignore[arg-type]  # Report.summary holds figures; these labels sit beside them
        errors=dict(sorted(errors.items())),
        missing=[s.sample_id for s in scores if s.error_type == "missing_prediction"],
        unavailable=[name for name in requested if name not in by_tool],
        intervals=tool_intervals(estimates),
    )
