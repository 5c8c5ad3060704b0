"""ACEBench's leaderboard table: one view per language (and their mean), the published table's
columns, and the 17 categories as detail columns."""

from __future__ import annotations

from typing import Any

from evaluators.benchmarks.acebench import categories
from evaluators.core.board_layout import BoardLayout

# Detail columns in the order of the published table's groups.
BOARD_CATEGORIES = (*[c for group in categories.SUB_COLUMNS.values() for c in group], *categories.SPECIAL,
                    *categories.AGENT)


def run_values(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    values: dict[str, Any] = dict(report.get("summary") or {})
    for name, subset in (report.get("subsets") or {}).items():
        values[name] = subset.get("metrics", {}).get("accuracy")
    return {report.get("language") or "en": values}


def published_values(row: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return row.get("language", "en"), dict(row.get("summary") or {})


LAYOUT = BoardLayout(
    view_label="Language", views=("en", "zh", "combined"),
    columns=("atom", "single", "multi", "api", "pref", "normal", "special", "agent", "overall"),
    run_values=run_values, published_values=published_values, detail_columns=BOARD_CATEGORIES,
    combine_views={"combined": ("en", "zh")}, sort_by="overall",
)
