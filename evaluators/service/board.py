"""Board queries: a benchmark's board (the table of evaluators/publish/board_table.py, every row a store
makes) filtered, sorted and ranked server-side for the app and the API, bounded to what one read sends. The
table's names are offered here too: the front doors ask the service, not the publishing layer.
"""

from __future__ import annotations

import bisect
import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evaluators.core.board_layout import BoardLayout
from evaluators.core.limits import MAX_MODEL_NAME_CHARS
from evaluators.publish.board_table import (
    APART_COLUMN,
    FACT_COLUMNS,
    HIGH_SUFFIX,
    IDENTITY_COLUMNS,
    INFO_COLUMNS,
    LOW_SUFFIX,
    N_SUFFIX,
    NEWEST_COLUMN,
    ORIGIN_COLUMN,
    SOURCE_OF_RUN,
    SOURCES,
    UPDATED_COLUMN,
    board_columns,
    board_rows,
    board_updated,
    column_n,
    fact_choices,
    fraction_columns,
    is_missing,
    item_share_columns,
    layout_for,
    model_facts,
    model_key,
    published_table,
    run_ids_of,
    wilson_interval,
)

# The ranked position (ranked rows only).
RANK_COLUMN = "rank"
PARTS = ("all", "ranked", "apart")
# At most this many rows per table in one read of the board (each of the page's two tables, /leaderboard,
# /leaderboard_ranked, /leaderboard_apart), however many the store holds: the ranked rows first, then each part
# in the table's order (the sort column), so what is left out is what would be read last; a line says how many
# more there are and how to narrow the view (see bounded, more_rows_note). The downloads hold every row.
MAX_BOARD_ROWS = 200


@dataclass(frozen=True)
class BoardQuery:
    """What the user chose to see."""

    view: str | None = None
    search: str = ""
    sources: tuple[str, ...] = SOURCES
    columns: tuple[str, ...] | None = None  # metric columns to show; None = the layout's
    details: bool = False
    sort_by: str | None = None
    descending: bool | None = None
    # "ranked": the published rows and the comparable runs (empty apart_reason), with their rank;
    # "apart": every other row; "all": the ranked rows, then the others.
    part: str = "all"
    # Model facts: None = every row; a row whose fact is unknown is dropped by a filter that names values.
    organisations: tuple[str, ...] | None = None
    open_weights_only: bool = False
    request_modes: tuple[str, ...] | None = None


def ranks(values: list[float | None], lows: list[float | None], highs: list[float | None],
          lower_is_better: bool = False) -> list[int | None]:
    """Ranks with intervals, as the public boards that rank with intervals do (LMArena): a row's rank is
    1 + the number of rows that are better beyond both intervals, i.e. whose 95% low bound is above this
    row's high bound (lower_is_better: whose high bound is below this row's low bound). Rows whose
    intervals overlap are not told apart, so several rows may share a rank and the next rank is not always
    taken. A row without an interval counts as the single point of its value; rows without a value get no
    rank and count for no one. The rows may come in any order; O(n log n) (sorted bounds, bisected)."""
    def number(value: float | None) -> float | None:
        return float(value) if isinstance(value, int | float) and not math.isnan(value) else None

    bounds: list[tuple[float, float] | None] = []
    for value, low, high in zip(values, lows, highs):
        point, low, high = number(value), number(low), number(high)
        if point is None:
            bounds.append(None)
        elif low is None or high is None:
            bounds.append((point, point))
        else:  # the value itself always lies in its own interval (a rounded published figure may not)
            bounds.append((min(low, high, point), max(low, high, point)))
    known = [b for b in bounds if b is not None]
    if lower_is_better:
        sorted_highs = sorted(high for _, high in known)
        return [None if b is None else 1 + bisect.bisect_left(sorted_highs, b[0]) for b in bounds]
    sorted_lows = sorted(low for low, _ in known)
    return [None if b is None else 1 + len(sorted_lows) - bisect.bisect_right(sorted_lows, b[1]) for b in bounds]


def query_board(frame: pd.DataFrame, layout: BoardLayout, query: BoardQuery) -> pd.DataFrame:
    """Filter, choose columns, sort and rank, server-side. The ranking (published rows and comparable
    runs) comes first, ranked by the sort column (by default the layout's) within each view; the rows kept
    apart follow (or alone, with part="apart"), without a rank. A rank is the row's place among the ranked
    rows of its view from the chosen sources: searching and the model filters hide rows, never re-rank."""
    rows = frame
    if query.view:
        rows = rows[rows["view"] == query.view]
    rows = rows[rows["source"].isin(query.sources)]
    metrics = [c for c in (query.columns if query.columns is not None else layout.columns) if c in frame.columns]
    if query.details:
        metrics += [c for c in layout.detail_columns if c not in metrics]
    sort_by = query.sort_by if query.sort_by in metrics else (layout.default_sort if layout.default_sort in metrics else None)
    rows = _ranked_in_order(rows, layout, query, sort_by)
    if query.search.strip():
        # No name on the board is longer than a model name may be: a longer search would only cost its scan.
        needle = query.search.strip().lower()[:MAX_MODEL_NAME_CHARS]
        rows = rows[rows["model"].str.lower().str.contains(needle, regex=False)
                    | rows["details"].fillna("").astype(str).str.lower().str.contains(needle, regex=False)]
    rows = _facts_filtered(rows, query)
    apart = rows[APART_COLUMN].fillna("").astype(str) != ""
    if query.part == "ranked":
        rows = rows[~apart]
    elif query.part == "apart":
        rows = rows[apart]
    rows = rows.reset_index(drop=True)
    intervals = [c + suffix for c in metrics for suffix in (N_SUFFIX, LOW_SUFFIX, HIGH_SUFFIX)]
    shown = [*IDENTITY_COLUMNS, APART_COLUMN, *metrics, *layout.text_columns, *FACT_COLUMNS, UPDATED_COLUMN,
             *INFO_COLUMNS, ORIGIN_COLUMN, RANK_COLUMN, NEWEST_COLUMN, *intervals]
    if not query.view:
        shown.insert(2, "view")
    return rows[[c for c in shown if c in rows.columns]]


def _ranked_in_order(rows: pd.DataFrame, layout: BoardLayout, query: BoardQuery, sort_by: str | None) -> pd.DataFrame:
    """The rows in order, each ranked row with its rank within its view by the sort column: the ranked rows first
    (by view first when every view is shown), by rank, then by the sort column; the rows kept apart after them,
    by the sort column. A row with a wide interval may rank above rows of higher value (none is clearly better
    than it): going by rank keeps the rank column from going back on itself."""
    rows = rows.reset_index(drop=True)
    apart = (rows[APART_COLUMN].fillna("").astype(str) != "").to_numpy()
    by_view = [] if query.view else ["view"]
    rank = pd.array([None] * len(rows), dtype="Int64")
    if not sort_by:
        return rows.assign(_apart=apart, **{RANK_COLUMN: rank}).sort_values(
            ["_apart", *by_view], kind="stable").drop(columns="_apart").reset_index(drop=True)
    # "Better" is the column's own direction, whichever way the rows are shown: the other way lists the same
    # ranks from the bottom.
    lower_is_better = sort_by in layout.lower_is_better
    descending = query.descending if query.descending is not None else not lower_is_better
    columns = [_numbers(rows, sort_by + suffix) for suffix in ("", LOW_SUFFIX, HIGH_SUFFIX)]
    views = rows["view"].to_numpy()
    for view in dict.fromkeys(views[~apart]):
        where = (views == view) & ~apart
        found = ranks(*(column[where].tolist() for column in columns), lower_is_better=lower_is_better)
        rank[where.nonzero()[0]] = pd.array(found, dtype="Int64")
    best_first = descending != lower_is_better
    return rows.assign(_apart=apart, **{RANK_COLUMN: rank}).sort_values(
        ["_apart", *by_view, RANK_COLUMN, sort_by], ascending=[True, *(True for _ in by_view), best_first, not descending],
        na_position="last", kind="stable").drop(columns="_apart").reset_index(drop=True)


def _numbers(rows: pd.DataFrame, column: str) -> Any:
    """A column as floats (NaN where empty or not a number; all NaN when the board has no such column)."""
    if column not in rows.columns:
        return np.full(len(rows), np.nan)
    return pd.to_numeric(rows[column], errors="coerce").to_numpy(dtype=float, na_value=np.nan)


def _facts_filtered(rows: pd.DataFrame, query: BoardQuery) -> pd.DataFrame:
    """The rows whose model facts match the query (after ranking: a filter hides rows, never re-ranks)."""
    if query.organisations is not None and "organisation" in rows.columns:
        rows = rows[rows["organisation"].isin(query.organisations)]
    if query.open_weights_only and "open_weights" in rows.columns:
        # a Series, not a list: an empty list would select no columns instead of no rows
        rows = rows[pd.Series([not is_missing(value) and bool(value) for value in rows["open_weights"]],
                              index=rows.index, dtype=bool)]
    if query.request_modes is not None and "request_mode" in rows.columns:
        rows = rows[rows["request_mode"].isin(query.request_modes)]
    return rows


def bounded(frame: pd.DataFrame, limit: int | None = None) -> tuple[pd.DataFrame, int]:
    """(the first `limit` rows, default MAX_BOARD_ROWS, of a queried board; how many more it has). query_board
    orders the ranked rows first and each part by the sort column, so the rows left out are the not-ranked rows
    (or, past the cap, the lowest ranked ones) a reader would come to last."""
    limit = MAX_BOARD_ROWS if limit is None else limit
    return (frame, 0) if len(frame) <= limit else (frame.head(limit), len(frame) - limit)


# How a reader of a bounded table sees the rows left out: on the page, and through the API.
# ({view}: the layout's view label, e.g. language).
PAGE_NARROWING = ("Search for a model or notes, or narrow the view with the filters ({view}, sources, organisation, "
                  "request mode, open weights) to see them; the CSV and JSON downloads hold every row.")
API_NARROWING = ("Narrow with search, view, sources, organisations, request_modes or open_weights_only to see them; "
                 "/download_csv and /download_json return every row.")


def more_rows_note(shown: int, more: int, what: str = "rows", narrow: str = API_NARROWING) -> str:
    """The line beside a bounded table: how many of its rows are shown, how many more exist and how to see them
    (plain text, no Markdown); empty when nothing was left out."""
    if not more:
        return ""
    return f"{shown:,} of {shown + more:,} {what} shown; {more:,} more are not. {narrow}"


def as_json_records(frame: pd.DataFrame) -> str:
    return json.dumps(json.loads(frame.to_json(orient="records", force_ascii=False)), ensure_ascii=False, indent=1)


# The service's board: its queries, and the table's names the front doors read.
__all__ = [
    "APART_COLUMN",
    "API_NARROWING",
    "BoardLayout",
    "BoardQuery",
    "FACT_COLUMNS",
    "HIGH_SUFFIX",
    "IDENTITY_COLUMNS",
    "INFO_COLUMNS",
    "LOW_SUFFIX",
    "MAX_BOARD_ROWS",
    "NEWEST_COLUMN",
    "N_SUFFIX",
    "ORIGIN_COLUMN",
    "PAGE_NARROWING",
    "PARTS",
    "RANK_COLUMN",
    "SOURCES",
    "SOURCE_OF_RUN",
    "UPDATED_COLUMN",
    "as_json_records",
    "board_columns",
    "board_rows",
    "board_updated",
    "bounded",
    "column_n",
    "fact_choices",
    "fraction_columns",
    "is_missing",
    "item_share_columns",
    "layout_for",
    "model_facts",
    "model_key",
    "more_rows_note",
    "published_table",
    "query_board",
    "ranks",
    "run_ids_of",
    "wilson_interval",
]
