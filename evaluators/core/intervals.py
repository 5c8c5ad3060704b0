"""95% intervals of the figures a report holds that are not a plain share of the view's items (those get a Wilson
interval on the board): a mean over items, a share of some other count, a mean of such figures. Each is the
normal interval value ± z·se, where se is the standard error the item bootstrap would find (resampling the
items, within each part apart), computed exactly: for a mean over n items, the items' spread / √n; for a share p
of n counted things, √(p(1 − p)/n); for a weighted sum, √(Σ weight² · se²). Reports keep them beside their
figures (Report.intervals), in the report's own shape, so the board reads them through its layout like the figures.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Z95 = 1.959963984540054
# (value, variance of its estimate): a figure and what the item bootstrap would find of its spread.
Estimate = tuple[float, float]


def mean_estimate(values: Sequence[float]) -> Estimate | None:
    """The mean of per-item values and its variance (the items' population variance / n); None without items."""
    if not values:
        return None
    mean = sum(values) / len(values)
    spread = sum((value - mean) ** 2 for value in values) / len(values)
    return mean, spread / len(values)


def share_estimate(count: int | None, total: int | None) -> Estimate | None:
    """A share of `total` counted things and its variance p(1 − p)/n; None when there is nothing counted."""
    if count is None or not total:
        return None
    share = count / total
    return share, share * (1 - share) / total


def weighted_sum(parts: Sequence[tuple[float, Estimate]]) -> Estimate:
    """Σ weight · value of independent figures, (weight, estimate) each, and its variance Σ weight² · variance."""
    return (sum(weight * value for weight, (value, _) in parts),
            sum(weight * weight * variance for weight, (_, variance) in parts))


def mean_of_estimates(parts: Sequence[Estimate]) -> Estimate | None:
    """The unweighted mean of independent figures (a macro average) and its variance Σ variance / k²."""
    return weighted_sum([(1 / len(parts), part) for part in parts]) if parts else None


def bounds(estimate: Estimate | None, low: float = 0.0, high: float = 1.0, z: float = Z95) -> list[float] | None:
    """[low, high] of the 95% normal interval, kept within [low, high] (a share's range); None without an estimate."""
    if estimate is None or any(math.isnan(part) for part in estimate):
        return None
    value, variance = estimate
    half = z * math.sqrt(max(variance, 0.0))
    return [max(low, value - half), min(high, value + half)]
