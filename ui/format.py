"""Turning library values into what the page shows: percentages, escaped model text, errors."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import numpy as np
import pandas as pd

from evaluators.core.limits import message_of
from evaluators.core.registry import all_benchmarks
from evaluators.core.text import show
from evaluators.engine.redact import shown_as_is
from evaluators.service.board import (
    APART_COLUMN,
    COST_COLUMN,
    HIGH_SUFFIX,
    INFO_COLUMNS,
    LATENCY_MEAN_COLUMN,
    LATENCY_P95_COLUMN,
    LOW_SUFFIX,
    N_SUFFIX,
    NEWEST_COLUMN,
    ORIGIN_COLUMN,
    RANK_COLUMN,
    BoardLayout,
)

# Shown as they are: the sample count, and every metric a benchmark declares as a count or a label.
PLAIN_COLUMNS = ("n",)


# The model page's deep link: the app's address with ?model=<the name, quoted> (the board's and the overview's
# links, the model page's suggestions; read back by the model page).
MODEL_PARAMETER = "model"


def model_href(name: str) -> str:
    """The address (relative to the app's root) of a model's page."""
    return f"?{MODEL_PARAMETER}={quote(str(name), safe='')}"


def benchmark_choices() -> list[tuple[str, str]]:
    """(title, name) of every benchmark, as a dropdown offers them: the page shows titles, the value (and the API)
    keeps names."""
    return [(benchmark.title, benchmark.name) for benchmark in all_benchmarks()]


def not_fractions() -> frozenset[str]:
    declared = (metric for b in all_benchmarks() for metric in (*b.metrics, *b.summary_metrics))
    return frozenset(PLAIN_COLUMNS).union(metric.name for metric in declared if metric.kind != "fraction")


def in_percent_points(shares: pd.Series) -> pd.Series:
    """Shares as percentages with one decimal (numbers; NaN where blank), as the board and its API give them."""
    return pd.to_numeric(shares, errors="coerce").mul(100).round(1)


def as_percent(frame: pd.DataFrame, layout: BoardLayout) -> pd.DataFrame:
    """Metric fractions (and their interval bounds) as percentages with one decimal, as the published
    tables print them."""
    shown = frame.copy()
    plain = not_fractions()
    fractions = [c for c in (*layout.columns, *layout.detail_columns) if c not in plain]
    converted = {*fractions, *(c + suffix for c in fractions for suffix in (LOW_SUFFIX, HIGH_SUFFIX))}
    columns = [c for c in shown.columns if c in converted]
    if not columns:
        return shown
    try:  # every switch of every visitor comes here: one block of numbers, not a column at a time
        block = shown[columns].to_numpy(dtype=float, na_value=np.nan)
    except (TypeError, ValueError):  # a cell that is not a number: each column coerced on its own
        for column in columns:
            shown[column] = in_percent_points(shown[column])
        return shown
    shown[columns] = np.round(block * 100, 1)
    return shown


NEWEST_MARK = "★"
BEST_STYLE = "font-weight: bold; background-color: rgba(34, 197, 94, 0.18)"


def interval_parts(value: Any, low: Any, high: Any) -> tuple[str, str]:
    """(`81.1`, `± 1.2`): the value and half the width of its 95% interval, in points; where the interval is
    lopsided (near 0 or 100, few items) each side apart: `+0.0/−27.8`, never a bound past 0 or 100. No
    interval part without an interval; ("", "") without a value."""
    if value is None or pd.isna(value):
        return "", ""
    if low is None or high is None or pd.isna(low) or pd.isna(high):
        return f"{value:.1f}", ""
    above, below = max(high - value, 0.0), max(value - low, 0.0)
    if abs(above - below) > 0.25 * max(above, below):
        return f"{value:.1f}", f"+{above:.1f}/−{below:.1f}"
    return f"{value:.1f}", f"± {(high - low) / 2:.1f}"


def _percent_text(value: Any, low: Any, high: Any) -> str:
    """`81.1 ± 1.2` (interval_parts on one line): what the tests and the Dataframe views read."""
    return " ".join(part for part in interval_parts(value, low, high) if part)


def best_cells(frame: pd.DataFrame, layout: BoardLayout) -> dict[str, list[int]]:
    """Per fraction column of a board view (values as numbers): the positions of the best value
    (the highest, or the lowest where the metric is lower-is-better)."""
    plain = not_fractions()
    best: dict[str, list[int]] = {}
    for column in (*layout.columns, *layout.detail_columns):
        if column not in frame.columns or column in plain:
            continue
        values = pd.to_numeric(frame[column], errors="coerce").reset_index(drop=True)
        if values.notna().any():
            target = values.min() if column in layout.lower_is_better else values.max()
            best[column] = [int(i) for i in values.index[values == target]]
    return best


def board_display(frame: pd.DataFrame, layout: BoardLayout, sort_by: str | None, ranked: bool) -> Any:
    """A board view in % (as_percent) as the page shows it: `value ± half-interval` text, the newest
    run marked ★, `n` of the sort column; the ranked table starts with its rank and has the best value
    of each fraction column highlighted, the other table starts with the model and its reason."""
    plain = not_fractions()
    metrics = [c for c in (*layout.columns, *layout.detail_columns) if c in frame.columns]
    shown = frame.reset_index(drop=True).copy()
    best = best_cells(shown, layout) if ranked else {}
    for column in metrics:
        if column in plain:
            shown[column] = shown[column].map(lambda v: "" if v is None or pd.isna(v) else f"{v:g}")
            continue
        low = shown.get(column + LOW_SUFFIX, pd.Series([None] * len(shown)))
        high = shown.get(column + HIGH_SUFFIX, pd.Series([None] * len(shown)))
        shown[column] = [_percent_text(v, lo, hi) for v, lo, hi in zip(shown[column], low, high)]
    sort_n = (sort_by or layout.default_sort) + N_SUFFIX
    counts = shown[sort_n] if sort_n in shown.columns else pd.Series([None] * len(shown))
    shown["n"] = ["" if v is None or pd.isna(v) else str(int(v)) for v in counts]
    marks = shown[NEWEST_COLUMN] if NEWEST_COLUMN in shown.columns else pd.Series([False] * len(shown))
    shown[NEWEST_COLUMN] = [NEWEST_MARK if bool(v) else "" for v in marks]
    extra = [c for c in shown.columns if c.endswith((N_SUFFIX, LOW_SUFFIX, HIGH_SUFFIX)) and c != "n"]
    shown = without_empty_info_columns(shown.drop(columns=extra))
    if ranked:
        ranks = shown[RANK_COLUMN] if RANK_COLUMN in shown.columns else pd.Series([None] * len(shown))
        shown[RANK_COLUMN] = ["" if v is None or pd.isna(v) else str(int(v)) for v in ranks]
        first = [RANK_COLUMN, NEWEST_COLUMN, "model"]
    else:
        shown = shown.drop(columns=[RANK_COLUMN], errors="ignore")
        first = ["model", APART_COLUMN, NEWEST_COLUMN]
    rest = [c for c in shown.columns if c not in first]
    # the count right after the metrics
    rest = [c for c in rest if c != "n"]
    after = max((rest.index(c) for c in metrics if c in rest), default=len(rest) - 1) + 1
    rest.insert(after, "n")
    shown = shown[[c for c in first if c in shown.columns] + rest]
    shown = shown.rename(columns={NEWEST_COLUMN: NEWEST_MARK})
    if not best:
        return shown

    def highlight(data: pd.DataFrame) -> pd.DataFrame:
        styles = pd.DataFrame("", index=data.index, columns=data.columns)
        for column, positions in best.items():
            if column in styles.columns:
                styles.iloc[positions, styles.columns.get_indexer(pd.Index([column]))] = BEST_STYLE
        return styles

    return shown.style.apply(highlight, axis=None)


# Headers of the page's board that are not metric labels (the metric labels come from the declarations).
COLUMN_LABELS = {RANK_COLUMN: "#", "params_b": "params (B)", "open_weights": "open weights", "request_mode": "mode",
                 APART_COLUMN: "why not ranked", "request_errors": "request errors", "run_id": "run id",
                 ORIGIN_COLUMN: "from dataset", COST_COLUMN: "$/1k items", LATENCY_MEAN_COLUMN: "latency (s)",
                 LATENCY_P95_COLUMN: "p95 latency (s)"}
SAFE_URL = re.compile(r"^https?://[^\s<>\"'`]+$")  # a row's link is shown only when it is a plain web address


def without_empty_info_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """Drop run id / fingerprint / details columns that are blank in every shown row (published-only views), and
    `origin` when no shown row comes from another results dataset."""
    empty = [c for c in (APART_COLUMN, *INFO_COLUMNS, ORIGIN_COLUMN) if c in frame.columns
             and frame[c].map(lambda value: value is None or pd.isna(value) or str(value).strip() == "").all()]
    return frame.drop(columns=empty)


def spoken_list(items: list[str]) -> str:
    """["a", "b", "c"] -> "a, b and c"."""
    if len(items) < 2:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


MARKDOWN_SPECIALS = "\\`*_{}[]()#+-.!|<>~&"


def markdown_text(text: str) -> str:
    """Text for a Markdown component, shown as written: no formatting, links, images or HTML (model
    names and messages may come from visitors and files); a URL in it is plain text, not a link.

    The page's renderer finds URLs and e-mail addresses (GitHub's autolinks) before it reads backslash
    escapes, so `http://127\\.0…` kept its backslashes and linked to `127%5C.0…`: the `:` of `://` and
    every `@` are written as HTML character references, and no autolink starts."""
    text = str(text)
    return "".join("\\" + char if char in MARKDOWN_SPECIALS
                   else "&#58;" if char == ":" and text.startswith("//", at + 1)
                   else "&#64;" if char == "@" else char
                   for at, char in enumerate(text))


MAX_BLOCK_CHARS = 20_000


def escaped_block(title: str, value: Any) -> str:
    """A titled <pre> block; everything from a model or a file is escaped."""
    if value is None or value == "" or value == [] or value == {}:
        return ""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, indent=1, default=repr)
        except (ValueError, TypeError, RecursionError):  # tuple keys, an integer too long to print
            text = show(value, limit=MAX_BLOCK_CHARS)
    return f"<h4>{html.escape(title)}</h4><pre style='white-space:pre-wrap'>{html.escape(text)}</pre>"


def user_error(exc: Exception, redact: Callable[[str], str] = shown_as_is) -> str:
    """A message for the page: our own errors as they are, anything else with its type; `redact` takes
    server paths out on a public deployment."""
    return f"⚠️ {markdown_text(redact(message_of(exc)))}"


def table_json(frame: pd.DataFrame, **extra: Any) -> dict[str, Any]:
    """A table for API callers, in the Dataframe's own shape: {"headers", "data"} with None for blanks."""
    return {"headers": list(frame.columns), "data": frame.astype(object).where(frame.notna(), None).values.tolist(), **extra}


def picked_value(table: pd.DataFrame, row: Any, column: str) -> str:
    """The `column` value of the row a user clicked in a Dataframe (the select event's index)."""
    index = row[0] if isinstance(row, list | tuple) else row
    return str(table.iloc[index][column]) if isinstance(index, int) and 0 <= index < len(table) else ""
