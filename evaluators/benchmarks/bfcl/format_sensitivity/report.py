"""Format sensitivity's figures, as the official `format_sensitivity_runner` writes them in its score file's header
(eval_runner.py of bfcl-eval 2026.3.23): per configuration `{accuracy, correct_count, total_count}`, and over the
configurations' accuracies (official_format_sensitivity_statistics):
- `accuracy_max_delta` = round((max - min) × 100, 2),
- `accuracy_std` = round(sample standard deviation × 100, 2) (`statistics.stdev`),
- `accuracy_variance` = round(sample variance × 100², 2),
all three 0.0 when fewer than two configurations were scored. The board shows Max Delta and Standard Deviation as the
official data_format_sensitivity.csv does; here they are kept as fractions (the official points / 100), the
project's unit for every figure. They are outside every summary and Overall (the official NON_SCORING_CATEGORY).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from evaluators.benchmarks.bfcl.categories import FORMAT_SENSITIVITY
from evaluators.benchmarks.bfcl.format_sensitivity.data import CONFIGURATIONS, SEPARATOR
from evaluators.core.types import SampleScore

MAX_DELTA = "format_sensitivity_max_delta"
STANDARD_DEVIATION = "format_sensitivity_std"
SUMMARY_KEYS = (MAX_DELTA, STANDARD_DEVIATION)
POINTS = 100
# The official header rounds its points to two decimals.
OFFICIAL_DECIMALS = 2


# A score file that holds no format sensitivity result: every item of the category missing (the official table
# prints N/A, not 0).
MISSING = "missing"


def configuration_counts(scores: Sequence[SampleScore]) -> dict[str, tuple[int, int]]:
    """(correct, total) per configuration scored (the configuration is the middle part of the id), in the
    official configuration order."""
    counts: dict[str, tuple[int, int]] = {}
    for result in scores:
        if result.subset != FORMAT_SENSITIVITY:
            continue
        configuration = result.sample_id.split(SEPARATOR)[1]
        correct, total = counts.get(configuration, (0, 0))
        counts[configuration] = (correct + bool(result.correct), total + 1)
    order = {configuration: index for index, configuration in enumerate(CONFIGURATIONS)}
    return dict(sorted(counts.items(), key=lambda item: order.get(item[0], len(order))))


def official_format_sensitivity_statistics(counts: dict[str, tuple[int, int]]) -> dict[str, float]:
    """The header's three statistics, in the official points (max delta 81.5 = 81.5 points)."""
    accuracies = [correct / total for correct, total in counts.values() if total]
    if len(accuracies) < 2:
        return {"accuracy_max_delta": 0.0, "accuracy_variance": 0.0, "accuracy_std": 0.0}
    return {
        "accuracy_max_delta": round((max(accuracies) - min(accuracies)) * POINTS, OFFICIAL_DECIMALS),
        "accuracy_variance": round(statistics.variance(accuracies) * POINTS ** 2, OFFICIAL_DECIMALS),
        "accuracy_std": round(statistics.stdev(accuracies) * POINTS, OFFICIAL_DECIMALS),
    }


def format_sensitivity_summary(scores: Sequence[SampleScore]) -> dict[str, float | None]:
    """Max Delta and Standard Deviation as fractions; None when no format sensitivity item was answered (an upload
    without the category's results); nothing when the report holds no format sensitivity item."""
    counts = configuration_counts(scores)
    if not counts:
        return {}
    if all(s.error_type == MISSING for s in scores if s.subset == FORMAT_SENSITIVITY):
        return dict.fromkeys(SUMMARY_KEYS)
    figures = official_format_sensitivity_statistics(counts)
    # points with two decimals -> fractions with four, exactly (no float tail)
    places = OFFICIAL_DECIMALS + 2
    return {MAX_DELTA: round(figures["accuracy_max_delta"] / POINTS, places),
            STANDARD_DEVIATION: round(figures["accuracy_std"] / POINTS, places)}


def configuration_metrics(scores: Sequence[SampleScore]) -> dict[str, float | None]:
    """Per configuration its accuracy, correct and total items (`accuracy[ret_fmt=…]`, `correct[…]`, `total[…]`),
    kept beside the category's accuracy in the report."""
    metrics: dict[str, float | None] = {}
    for configuration, (correct, total) in configuration_counts(scores).items():
        metrics[f"accuracy[{configuration}]"] = round(correct / total, 4)
        metrics[f"correct[{configuration}]"] = correct
        metrics[f"total[{configuration}]"] = total
    return metrics
