"""The board as the page draws it: server-rendered HTML of one view (ui.board_views.state_percent), every text
escaped. On a desktop a compact table, one line per row: a figure never breaks, its interval a quieter second
part; the rank and model columns stay while the rest scrolls sideways; a score's header sorts and re-ranks by
it. On a phone the same table is styled as one card per row (CSS in ui/app.py, the HTML sent once for both):
rank, model, the sorted figure with its interval, the reason a row is not ranked, and the other figures behind a
tap (each column's label written once, in a style of the table's own, shown only on a phone). Each model name links to its page (?model=NAME)."""

from __future__ import annotations

import functools
import html
import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from evaluators.core.display_names import column_title
from evaluators.core.text import plural
from evaluators.service.board import (
    APART_COLUMN,
    COST_COLUMN,
    COST_NOTE_COLUMN,
    HIGH_SUFFIX,
    LATENCY_MEAN_COLUMN,
    LATENCY_P95_COLUMN,
    LOW_SUFFIX,
    N_SUFFIX,
    NEWEST_COLUMN,
    ORIGIN_COLUMN,
    RANK_COLUMN,
    UPDATED_COLUMN,
    BoardLayout,
    bounded,
    cost_legend,
    layout_for,
    model_facts,
)
from ui.board_state import BoardState
from ui.format import COLUMN_LABELS, NEWEST_MARK, SAFE_URL, best_cells, interval_parts, model_href, not_fractions

RANKED_CAPTION = "Ranked"
APART_CAPTION = "Not ranked: partial, different requests, request errors, uploads of unknown provenance"
NO_DETAIL_FIGURES = ("Published rows have no per-subset figures: the published tables print only the headline "
                     "columns. Runs evaluated or uploaded here fill them.")
# Said when the published rows' figures of the sorted column come without an interval (the rows rank as points).
NO_PUBLISHED_INTERVALS = ("Published rows have no interval for {column}: the published table prints no item counts "
                          "behind it, so they rank by the figure alone; runs evaluated here carry theirs.")
# Columns after the figures, in this order (empty ones dropped); `source` carries another dataset's name.
AFTER = ("flag", COST_COLUMN, LATENCY_MEAN_COLUMN, LATENCY_P95_COLUMN, "organisation", "params_b", "licence",
         "open_weights", "request_mode", "link", UPDATED_COLUMN, "source",
         "request_errors", "run_id", "fingerprint", "details")


def text(value: Any) -> str:
    """Any value as escaped HTML text; braces and `$` too, so no template syntax survives in a model's name."""
    if value is None or (not isinstance(value, str | list | tuple | dict) and pd.isna(value)):
        return ""
    return html.escape(str(value)).replace("{", "&#123;").replace("}", "&#125;").replace("$", "&#36;")


def blank(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA or str(value).strip() == ""


def number(value: Any) -> float:
    """A cell as a float (NaN when blank or not a number): cheaper than pandas per cell."""
    try:
        return float(value) if value is not None and value is not pd.NA else math.nan
    except (TypeError, ValueError):
        return math.nan


Row = Mapping[Hashable, Any]  # a frame's record (DataFrame.to_dict("records")): its values by column


@dataclass(frozen=True)
class Shown:
    """The columns one table shows: its figure columns (the sorted one's id), the rest after them."""

    figures: list[str]
    sorted_by: str | None
    after: list[str]


def shown_columns(frame: pd.DataFrame, layout: BoardLayout, state: BoardState) -> Shown:
    """The figure columns with a value in some row (the headline first), and the other columns with one."""
    metrics = set(layout.columns) | set(layout.detail_columns)
    figures = [c for c in frame.columns if c in metrics]
    if layout.default_sort in figures:
        figures.remove(layout.default_sort)
        figures.insert(0, layout.default_sort)
    chosen = state.sort_by if state.sort_by in figures else layout.default_sort if layout.default_sort in figures else None
    figures = [c for c in figures if not frame[c].map(blank).all()] if len(frame) else figures
    after = [c for c in AFTER if c in frame.columns and len(frame) and not frame[c].map(blank).all()]
    return Shown(figures, chosen, after)


@functools.lru_cache(maxsize=4096)
def label_of(benchmark: str, column: str, is_metric: bool) -> str:
    return column_title(benchmark, column) if is_metric else COLUMN_LABELS.get(column) or column.replace("_", " ")


def label(layout: BoardLayout, benchmark: str, column: str) -> str:
    """A column's header: a metric's display name (evaluators.core.display_names), else the board's short name."""
    return label_of(benchmark, column, column in layout.labels or column in (*layout.columns, *layout.detail_columns))


def count_text(value: Any) -> str:
    """Counts as integers; a mean of counts (a combined view) with one decimal."""
    found = number(value)
    if math.isnan(found):
        return ""
    return f"{found:.0f}" if found.is_integer() else f"{found:.1f}"


PHONE_WIDTH_PX = 640


def css_string(value: str) -> str:
    """A CSS string literal holding `value`: every character but letters, digits and spaces as a CSS escape, so
    nothing in it can close the string or the style element."""
    return '"' + "".join(c if c.isalnum() or c == " " else f"\\{ord(c):x} " for c in value) + '"'


def phone_labels(kind: str, labels: list[tuple[int, str]]) -> str:
    """The labels of a table's cells when its rows are a phone's cards (a desktop reads the header): one rule per
    column (its position in the row), written once for the table instead of in every cell."""
    rules = "".join(f".{kind} td:nth-child({position})::before{{content:{css_string(name)}}}"
                    for position, name in labels)
    return f"<style>@media (max-width:{PHONE_WIDTH_PX}px){{{rules}}}</style>"


def figure_html(row: Row, column: str, plain: frozenset[str]) -> str:
    """A figure: its value, then its interval in a quieter span (never broken over lines: CSS nowrap)."""
    if column in plain:
        return f'<span class="v">{text(count_text(row.get(column)))}</span>'
    value, interval = interval_parts(number(row.get(column)), number(row.get(column + LOW_SUFFIX)),
                                     number(row.get(column + HIGH_SUFFIX)))
    if not value:
        return ""
    return f'<span class="v">{value}</span>' + (f' <span class="ci">{text(interval)}</span>' if interval else "")


def other_html(row: Row, column: str) -> str:
    """A fact or run detail: web links as links (only plain http(s) addresses), counts whole, the rest as text."""
    value = row.get(column)
    if value is None or blank(value):  # None named apart too: the figures below are read as floats
        return ""
    if column in ("link", "details") and isinstance(value, str) and SAFE_URL.match(value.strip()):
        shown = "link" if column == "link" else "source"
        return f'<a href="{text(value.strip())}" target="_blank" rel="noopener noreferrer">{shown}</a>'
    if column in ("params_b", "request_errors"):
        return text(count_text(value))
    if column == "open_weights":
        return "yes" if bool(value) else "no"
    if column == "source":
        origin = row.get(ORIGIN_COLUMN)
        return text(f"{value} · from {origin}" if isinstance(origin, str) and origin else value)
    if column == UPDATED_COLUMN:
        return text(str(value)[:10])
    if column == COST_COLUMN:
        note = row.get(COST_NOTE_COLUMN)
        tip = f' title="{text(note)}"' if isinstance(note, str) and note else ""
        return f"<span{tip}>{text(f'{float(value):.3g}')}</span>"
    if column in (LATENCY_MEAN_COLUMN, LATENCY_P95_COLUMN):
        return text(f"{float(value):.2f}")
    return text(value)


def model_cell(row: Row) -> str:
    """The row's model as its table spells it, a link to the model's page; its one name (the facts table's) in the
    tooltip when the table spells it otherwise."""
    name = str(row.get("model") or "")
    newest = bool(row.get(NEWEST_COLUMN)) if not blank(row.get(NEWEST_COLUMN)) else False
    star = f' <span class="newest" title="newest evaluated or uploaded run">{NEWEST_MARK}</span>' if newest else ""
    facts = model_facts(name)
    known = f"{facts.name}, {name} in this table" if facts is not None and facts.name != name else name
    return f'<a href="{text(model_href(name))}" title="{text(known)}: every benchmark">{text(name)}</a>{star}'


def rank_text(row: Row) -> str:
    value = number(row.get(RANK_COLUMN))
    return "" if math.isnan(value) else str(int(value))


def header_html(layout: BoardLayout, state: BoardState, shown: Shown, ranked: bool) -> str:
    cells = ['<th class="rank" title="rank by the sorted column">#</th>'] if ranked else []
    cells.append('<th class="model">model</th>')
    if not ranked:
        cells.append('<th class="reason">why not ranked</th>')
    for column in shown.figures:
        name = text(label(layout, state.benchmark, column))
        if column in layout.columns:  # the columns a state may sort by (and a URL keep)
            is_sorted = column == shown.sorted_by
            arrow = ("▲" if column in layout.lower_is_better else "▼") if is_sorted else ""
            sort = ("ascending" if column in layout.lower_is_better else "descending") if is_sorted else "none"
            cells.append(f'<th class="fig sortable{" sorted" if is_sorted else ""}" data-col="{text(column)}" '
                         f'aria-sort="{sort}"><button type="button" data-sort="{text(column)}" '
                         f'title="Sort and rank by {name}">{name}<span class="arrow">{arrow}</span></button></th>')
        else:
            cells.append(f'<th class="fig" data-col="{text(column)}">{name}</th>')
    cells.append('<th class="num" title="items behind the sorted column">n</th>')
    cells += [f'<th class="other" data-col="{text(c)}">{text(label(layout, state.benchmark, c))}</th>'
              for c in shown.after]
    return "<thead><tr>" + "".join(cells) + "</tr></thead>"


MORE_CELL = '<td class="card-more"><details><summary>More figures</summary></details></td>'


def rows_html(frame: pd.DataFrame, layout: BoardLayout, state: BoardState, shown: Shown, ranked: bool) -> str:
    """The rows; on a phone each is a card: rank, model, the sorted figure (card-main), the reason, and the other
    cells once its "More figures" is open."""
    plain = not_fractions()
    best = best_cells(frame, layout) if ranked else {}
    sort_n = (shown.sorted_by or layout.default_sort) + N_SUFFIX
    main = shown.sorted_by or (shown.figures[0] if shown.figures else None)
    lines = []
    for position, row in enumerate(frame.to_dict("records")):
        cells = [f'<td class="rank card-rank"><span class="hash">#</span>{rank_text(row)}</td>'] if ranked else []
        cells.append(f'<td class="model card-model">{model_cell(row)}</td>')
        if not ranked:
            cells.append(f'<td class="reason card-reason">{text(row.get(APART_COLUMN))}</td>')
        for column in shown.figures:
            mark = (" best" if position in best.get(column, []) else "") + (" card-main" if column == main else "")
            cells.append(f'<td class="fig{mark}">{figure_html(row, column, plain)}</td>')
        cells.append(f'<td class="num">{text(count_text(row.get(sort_n)))}</td>')
        for column in shown.after:
            value = row.get(column)
            tip = f' title="{text(value)}"' if isinstance(value, str) and len(value) > 24 else ""
            cells.append(f'<td class="other"{tip}>{other_html(row, column)}</td>')
        cells.append(MORE_CELL)
        lines.append('<tr class="board-card">' + "".join(cells) + "</tr>")
    return "<tbody>" + "".join(lines) + "</tbody>"


def table_html(frame: pd.DataFrame, layout: BoardLayout, state: BoardState, shown: Shown, ranked: bool) -> str:
    kind = "board-ranked" if ranked else "board-apart"
    caption = RANKED_CAPTION if ranked else APART_CAPTION
    first = 3  # the figures' first position in a row: after rank and model, or model and reason
    columns = [*shown.figures, N_SUFFIX, *shown.after]
    labels = [(first + offset, "n" if column == N_SUFFIX else label(layout, state.benchmark, column))
              for offset, column in enumerate(columns)]
    return (f'<div class="board-scroll {kind} {kind}-cards" tabindex="0">{phone_labels(kind, labels)}'
            f'<table class="board-table"><caption>{text(caption)} · {len(frame):,} {plural("row", len(frame))}</caption>'
            f'{header_html(layout, state, shown, ranked)}{rows_html(frame, layout, state, shown, ranked)}</table></div>')


def sort_bar(layout: BoardLayout, state: BoardState, shown: Shown) -> str:
    """On a phone (no headers): the columns to sort and rank by, as buttons."""
    buttons = "".join(
        f'<button type="button" data-sort="{text(c)}" class="{"sorted" if c == shown.sorted_by else ""}">'
        f'{text(label(layout, state.benchmark, c))}</button>' for c in shown.figures if c in layout.columns)
    return f'<div class="board-sortbar">Sort and rank by: {buttons}</div>' if buttons else ""


def board_html(frame: pd.DataFrame, state: BoardState, query: str, lines: list[str] | None = None) -> str:
    """The board of a view in % (`frame`: the ranked rows, then the rows kept apart) as the page draws it; `query`
    is the state's URL query (the root's data-board-state, the contract with the browser benchmark); `lines`:
    plain-text notes above the table (why it is empty, rows left out)."""
    layout = layout_for(state.benchmark)
    apart = frame[APART_COLUMN].fillna("").astype(str) != "" if APART_COLUMN in frame.columns else pd.Series(
        [False] * len(frame), index=frame.index, dtype=bool)
    (ranked, _), (others, _) = bounded(frame[~apart]), bounded(frame[apart])
    notes = [*(lines or [])]
    published = frame[frame["source"] == "published"] if "source" in frame.columns else frame.iloc[:0]
    details = [c for c in layout.detail_columns if c in published.columns]
    if state.details and len(published) and details and all(published[c].map(blank).all() for c in details):
        notes.append(NO_DETAIL_FIGURES)
    sort_column = state.sort_by or layout.default_sort
    if len(published) and sort_column in published.columns and (sort_column + LOW_SUFFIX) in published.columns:
        figured = published[~published[sort_column].map(blank)]
        if len(figured) and figured[sort_column + LOW_SUFFIX].map(blank).all():
            notes.append(NO_PUBLISHED_INTERVALS.format(column=label(layout, state.benchmark, sort_column)))
    parts = [f'<div class="board-html" data-board-state="{text(query)}" data-rows="{len(ranked) + len(others)}">']
    parts += [f'<p class="board-line">{text(line)}</p>' for line in notes]
    shown_ranked, shown_others = shown_columns(ranked, layout, state), shown_columns(others, layout, state)
    parts.append(sort_bar(layout, state, shown_ranked if len(ranked) else shown_others))
    if len(ranked):
        parts.append(table_html(ranked, layout, state, shown_ranked, True))
    if len(others):
        parts.append(table_html(others, layout, state, shown_others, False))
    parts.append('<p class="board-legend">Click a score\'s header to sort by it: the rank (#) is then the rank by that '
                 'column. <span class="ci">± x.x</span> is half the 95% interval; a model\'s name opens its page.</p>')
    if any(COST_COLUMN in shown.after for shown in (shown_ranked, shown_others)):
        parts.append(f'<p class="board-legend">{text(cost_legend(frame.get(COST_NOTE_COLUMN, pd.Series(dtype=object))))}</p>')
    parts.append("</div>")
    return "".join(parts)
