"""Board queries: a benchmark's board (the table of evaluators/publish/board_table.py, every row a store
makes) filtered, sorted and ranked server-side for the app and the API, bounded to what one read sends. The
table's names are offered here too: the front doors ask the service, not the publishing layer.
"""

from __future__ import annotations

import bisect
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from evaluators.core.board_layout import BoardLayout
from evaluators.core.errors import ToolboardError
from evaluators.core.limits import MAX_MODEL_NAME_CHARS
from evaluators.publish.board_table import (
    APART_COLUMN,
    EXAMPLE_DATA_LABEL,
    FACT_COLUMNS,
    FLAG_COLUMN,
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
    run_on_example_data,
    wilson_interval,
)
from evaluators.publish.run_costs import (
    COST_COLUMN,
    COST_COLUMNS,
    COST_NOTE_COLUMN,
    LATENCY_MEAN_COLUMN,
    LATENCY_P95_COLUMN,
    cost_legend,
)

# The ranked position (ranked rows only).
RANK_COLUMN = "rank"
PARTS = ("all", "ranked", "apart")
# The weights filter: every row, or the rows whose model's weights are known to be published (open) or not (closed).
WEIGHTS = ("any", "open", "closed")
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
    open_weights_only: bool = False  # the same as weights="open" (kept for the callers that name it)
    request_modes: tuple[str, ...] | None = None
    # Size in billions of parameters (params_b), bounds included; with either bound, a row of unknown size is dropped.
    min_params_b: float | None = None
    max_params_b: float | None = None
    weights: str = "any"  # one of WEIGHTS: "open" or "closed" keep the rows whose model is known to be so
    hide_flagged: bool = False  # drop the flagged rows (FLAG_COLUMN)

    def __post_init__(self) -> None:
        check_filters(self.min_params_b, self.max_params_b, self.weights, self.open_weights_only)

    @property
    def chosen_weights(self) -> str:
        return "open" if self.open_weights_only else self.weights


def check_filters(min_params_b: Any = None, max_params_b: Any = None, weights: Any = "any",
                  open_weights_only: Any = False) -> None:
    """Refuse, saying why, a size bound that is not a number of billions of at least 0, bounds the wrong way round,
    a weights choice not in WEIGHTS, or open_weights_only with weights "closed"."""
    for name, bound in (("min_params_b", min_params_b), ("max_params_b", max_params_b)):
        if bound is None:
            continue
        if isinstance(bound, bool) or not isinstance(bound, int | float) or math.isnan(bound) or math.isinf(bound):
            raise ToolboardError(f"{name} must be a number of billions of parameters (or empty for no bound), got {bound!r}")
        if bound < 0:
            raise ToolboardError(f"{name} must be 0 or more billions of parameters, got {bound:g}")
    if min_params_b is not None and max_params_b is not None and min_params_b > max_params_b:
        raise ToolboardError(f"min_params_b ({min_params_b:g}) is above max_params_b ({max_params_b:g}): no size is in "
                             "that range")
    if weights not in WEIGHTS:
        raise ToolboardError(f"weights must be one of {', '.join(WEIGHTS)}, got {weights!r}")
    if open_weights_only and weights == "closed":
        raise ToolboardError("open_weights_only asks for open models and weights for closed ones: choose one "
                             "(weights alone is enough)")


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
    rows of its view from the chosen sources: searching and the model filters hide rows, never re-rank.
    This runs on every switch, sort and search of every visitor: the few columns it reads are read once as
    arrays, the rows are chosen and ordered as positions, and only the rows and columns shown are copied."""
    board = _Columns(frame)
    metrics = [c for c in (query.columns if query.columns is not None else layout.columns) if c in frame.columns]
    if query.details:
        metrics += [c for c in layout.detail_columns if c not in metrics]
    sort_by = query.sort_by if query.sort_by in metrics else (layout.default_sort if layout.default_sort in metrics else None)
    chosen = board.member("source", query.sources)
    if query.view:
        chosen &= board.views == query.view
    rank = np.full(len(frame), np.nan)
    keys: list[Any] = []  # np.lexsort's keys, the least significant first
    if sort_by:
        # "Better" is the column's own direction, whichever way the rows are shown: the other way lists the
        # same ranks from the bottom.
        lower_is_better = sort_by in layout.lower_is_better
        descending = query.descending if query.descending is not None else not lower_is_better
        value, low, high = (board.numbers(sort_by + suffix) for suffix in ("", LOW_SUFFIX, HIGH_SUFFIX))
        ranked = chosen & ~board.apart
        for view in dict.fromkeys(board.views[ranked]):
            where = ranked & (board.views == view)
            found = ranks(value[where].tolist(), low[where].tolist(), high[where].tolist(), lower_is_better=lower_is_better)
            rank[where] = [np.nan if r is None else r for r in found]
        # The ranked rows by rank, then by the column: a row with a wide interval may rank above rows of higher
        # value (none is clearly better than it); going by rank keeps the rank column from going back on itself.
        best_first = descending != lower_is_better
        keys = [_nan_last(-value if descending else value), _nan_last(rank if best_first else -rank)]
    if not query.view:
        keys.append(board.view_order)
    keys.append(board.apart)
    keep = chosen & board.searched(query.search) & _facts_kept(board, query)
    if query.part == "ranked":
        keep &= ~board.apart
    elif query.part == "apart":
        keep &= board.apart
    order = np.lexsort([np.arange(len(frame)), *keys])
    positions: npt.NDArray[np.intp] = order[keep[order]]
    intervals = [c + suffix for c in metrics for suffix in (N_SUFFIX, LOW_SUFFIX, HIGH_SUFFIX)]
    shown = [*IDENTITY_COLUMNS, APART_COLUMN, *metrics, *layout.text_columns, *FACT_COLUMNS, UPDATED_COLUMN,
             *COST_COLUMNS, *INFO_COLUMNS, ORIGIN_COLUMN, RANK_COLUMN, NEWEST_COLUMN, *intervals]
    if not query.view:
        shown.insert(2, "view")
    shown = [c for c in shown if c in frame.columns or c == RANK_COLUMN]
    taken = [c for c in shown if c != RANK_COLUMN]
    rows = frame.iloc[positions, frame.columns.get_indexer(pd.Index(taken))].reset_index(drop=True)
    rows.insert(shown.index(RANK_COLUMN), RANK_COLUMN,
                pd.Series([None if np.isnan(r) else int(r) for r in rank[positions]], index=rows.index, dtype="Int64"))
    return rows


class _Columns:
    """The columns of a board frame that a query reads, as arrays (the frame is read, never changed)."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame
        self.views = self.column("view")
        self.apart = _texts_given(self.column(APART_COLUMN))
        # each row's view by its place in the sorted views: the rows of every view come view by view
        self.view_order = np.unique(self.views.astype(str), return_inverse=True)[1] if len(frame) else np.zeros(0, int)

    def column(self, name: str) -> Any:
        """The column's values (None where the frame has no such column)."""
        if name not in self.frame.columns:
            return np.full(len(self.frame), None, dtype=object)
        return self.frame[name].to_numpy(dtype=object)

    def numbers(self, name: str) -> Any:
        """The column as floats (NaN where empty or not a number, or where the frame has no such column)."""
        if name not in self.frame.columns:
            return np.full(len(self.frame), np.nan)
        return pd.to_numeric(self.frame[name], errors="coerce").to_numpy(dtype=float, na_value=np.nan)

    def member(self, name: str, wanted: Iterable[Any]) -> Any:
        """Whether each row's value of the column is one of `wanted`."""
        chosen = set(wanted)
        return np.fromiter((value in chosen for value in self.column(name)), dtype=bool, count=len(self.frame))

    def searched(self, search: str) -> Any:
        """The rows whose model (as the row spells it, or by its one name in the facts table: a search for
        "Kimi-K2-Instruct" finds the row "Kimi-k2-0711") or details hold the search, ignoring case (every row for an
        empty search)."""
        # No name on the board is longer than a model name may be: a longer search would only cost its scan.
        needle = search.strip().lower()[:MAX_MODEL_NAME_CHARS]
        if not needle:
            return np.ones(len(self.frame), dtype=bool)
        return np.fromiter((needle in str(model).lower() or needle in model_key(str(model)).lower()
                            or (not is_missing(details) and needle in str(details).lower())
                            for model, details in zip(self.column("model"), self.column("details"))),
                           dtype=bool, count=len(self.frame))


def _texts_given(values: Any) -> Any:
    """Whether each value is a non-empty text (not None, NaN or blank)."""
    return np.fromiter((not is_missing(value) and str(value).strip() != "" for value in values), dtype=bool,
                       count=len(values))


def _nan_last(keys: Any) -> Any:
    """Sort keys with NaN (no value, no rank) after every number."""
    return np.where(np.isnan(keys), np.inf, keys)


def _facts_kept(board: _Columns, query: BoardQuery) -> Any:
    """The rows whose model facts match the query (applied after ranking: a filter hides rows, never re-ranks)."""
    keep = np.ones(len(board.frame), dtype=bool)
    if query.organisations is not None and "organisation" in board.frame.columns:
        keep &= board.member("organisation", query.organisations)
    weights = query.chosen_weights
    if weights != "any" and "open_weights" in board.frame.columns:
        wanted = weights == "open"  # an unknown (None) is neither
        keep &= np.fromiter((not is_missing(value) and bool(value) == wanted for value in board.column("open_weights")),
                            dtype=bool, count=len(keep))
    if query.request_modes is not None and "request_mode" in board.frame.columns:
        keep &= board.member("request_mode", query.request_modes)
    if query.min_params_b is not None or query.max_params_b is not None:
        size = board.numbers("params_b")  # NaN where unknown: no comparison keeps it
        if query.min_params_b is not None:
            keep &= size >= query.min_params_b
        if query.max_params_b is not None:
            keep &= size <= query.max_params_b
    if query.hide_flagged and FLAG_COLUMN in board.frame.columns:
        keep &= ~_texts_given(board.column(FLAG_COLUMN))
    return keep


def bounded(frame: pd.DataFrame, limit: int | None = None) -> tuple[pd.DataFrame, int]:
    """(the first `limit` rows, default MAX_BOARD_ROWS, of a queried board; how many more it has). query_board
    orders the ranked rows first and each part by the sort column, so the rows left out are the not-ranked rows
    (or, past the cap, the lowest ranked ones) a reader would come to last."""
    limit = MAX_BOARD_ROWS if limit is None else limit
    return (frame, 0) if len(frame) <= limit else (frame.head(limit), len(frame) - limit)


# How a reader of a bounded table sees the rows left out: on the page, and through the API.
# ({view}: the layout's view label, e.g. language).
PAGE_NARROWING = ("Search for a model or notes, or narrow the view with the filters ({view}, sources, organisation, "
                  "request mode, size, open or closed weights, hide flagged) to see them; the CSV and JSON downloads "
                  "hold every row.")
API_NARROWING = ("Narrow with search, view, sources, organisations, request_modes, min_params_b, max_params_b, weights "
                 "or hide_flagged to see them; /download_csv and /download_json return every row.")


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
    "EXAMPLE_DATA_LABEL",
    "run_on_example_data",
    "APART_COLUMN",
    "COST_COLUMN",
    "COST_COLUMNS",
    "COST_NOTE_COLUMN",
    "LATENCY_MEAN_COLUMN",
    "LATENCY_P95_COLUMN",
    "cost_legend",
    "API_NARROWING",
    "BoardLayout",
    "BoardQuery",
    "FACT_COLUMNS",
    "FLAG_COLUMN",
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
    "WEIGHTS",
    "as_json_records",
    "board_columns",
    "board_rows",
    "board_updated",
    "bounded",
    "check_filters",
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
