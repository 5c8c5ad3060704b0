"""How a benchmark's leaderboard table looks, declared by its package: its views (a language, a
subset, a tool…), its metric columns, how a report and a published row fill them, and how to sort.
The board (evaluators/service/board.py) reads this and knows no benchmark by name."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# report JSON -> {view: {column: value}}
RunValues = Callable[[dict[str, Any]], dict[str, dict[str, Any]]]
# a published row of leaderboard_data/<name>.json -> (view, {column: value})
PublishedValues = Callable[[dict[str, Any]], tuple[str, dict[str, Any]]]

# A run's view values may carry, under this key, the tokens its priced column is computed from: a list of parts,
# each (prompt_tokens, completion_tokens, units), e.g. one domain's agent tokens over its trajectories. The board
# layer prices them (publish/run_costs.py): the column is the mean over the parts of each part's USD per unit at the
# model's list price. A benchmark never sees a price; the board never sees what a unit is.
TOKEN_USAGE = "token_usage"
TokenPart = tuple[int, int, int]


def per_subset_run_values(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """One view per subset with its metrics, and `all` with the summary."""
    views = {name: dict(subset.get("metrics") or {}) for name, subset in (report.get("subsets") or {}).items()}
    summary = report.get("summary") or {}
    if summary:
        views["all"] = dict(summary)
    return views


def per_subset_published(row: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A published row names its subset (default `all`) and holds `metrics` or `summary`."""
    return row.get("subset", "all"), dict(row.get("metrics") or row.get("summary") or {})


@dataclass(frozen=True)
class BoardLayout:
    """A benchmark's table: its views, its metric columns and how reports fill them."""

    view_label: str
    views: tuple[str, ...]
    columns: tuple[str, ...]
    run_values: RunValues = per_subset_run_values
    published_values: PublishedValues = per_subset_published
    detail_columns: tuple[str, ...] = ()
    # Labels beside the numbers (e.g. input modality, how parameters were judged); published rows that
    # differ in them are different rows.
    text_columns: tuple[str, ...] = ()
    # Views that average others for our own runs (e.g. combined = mean of en and zh).
    combine_views: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # A view that averages the others, derived for published tables that print only the parts.
    macro_view: str | None = None
    # The column a run's rows fill with USD per unit from their TOKEN_USAGE (None: no such column).
    priced_column: str | None = None
    # The column the ranking sorts by; None: the first column.
    sort_by: str | None = None
    # Filled from the benchmark's metric declarations (Benchmark.board_layout), not by hand.
    lower_is_better: frozenset[str] = frozenset()
    labels: dict[str, str] = field(default_factory=dict)

    @property
    def default_sort(self) -> str:
        return self.sort_by or self.columns[0]


def plain_layout(subsets: tuple[str, ...], metrics: tuple[str, ...]) -> BoardLayout:
    """The table of a benchmark that declares none: a view per subset and `all`, a column per metric."""
    return BoardLayout(view_label="Subset", views=(*subsets, "all"), columns=metrics)
