"""Overview tab: one row per model with each benchmark's headline figures side by side, ranked head to head by
mean win rate (evaluators/service/overview.py states the rule), with a control to list only the models with
at least N benchmarks; each model's name opens its page. An HTML table on a desktop, one card per model on a
phone; a button per benchmark opens its table."""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import gradio as gr
import pandas as pd

from evaluators.core.display_names import subset_title
from evaluators.core.registry import all_benchmarks
from evaluators.service.board import RANK_COLUMN
from evaluators.service.overview import (
    AGGREGATE_COLUMN,
    COVERAGE_COLUMN,
    COVERED_COLUMN,
    LACKS_COLUMN,
    MODEL_COLUMN,
    SOURCE_SUFFIX,
    Headline,
    aggregate_rule,
    at_least,
    headlines,
    overview_rows,
    shown_percent,
)
from ui.api import declare_overview_api
from ui.context import READ_EVENT, AppContext

# The overview compares published figures: official scoring only (strict mode has no published rows).
MODE = "official"
TEXT_COLUMNS = (RANK_COLUMN, MODEL_COLUMN, COVERAGE_COLUMN, COVERED_COLUMN, LACKS_COLUMN)
# The page's own styles: a table that scrolls sideways inside its box on a desktop, a card per model on a phone;
# figures never break inside.
CSS = """
.overview-html { overflow-x: auto; }
.overview-html table { border-collapse: collapse; width: 100%; font-size: var(--text-md); }
.overview-html th, .overview-html td { padding: 4px 8px; border-bottom: 1px solid var(--border-color-primary);
  text-align: right; vertical-align: top; }
.overview-html th { word-break: normal; overflow-wrap: normal; font-weight: 700; white-space: nowrap; }
.overview-html th.ov-bench { text-align: center; border-bottom: none; }
.overview-html .ov-model, .overview-html th.ov-model { text-align: left; }
.overview-html .ov-num { white-space: nowrap; font-variant-numeric: tabular-nums; }
.overview-html .ov-blank { color: var(--body-text-color-subdued); }
.overview-html .ov-model { min-width: 200px; }
/* What a model lacks: the coverage cell's tooltip on a desktop (rows stay one line), under the name on a phone. */
.overview-html .ov-lacks { display: none; font-size: var(--text-sm); font-weight: 400; color: var(--body-text-color-subdued); }
@media (max-width: 640px) {
  .overview-html thead { display: none; }
  .overview-html table { border: none !important; }
  .overview-html table, .overview-html tbody, .overview-html tr, .overview-html td { display: block; width: auto; }
  .overview-html tr { border: 1px solid var(--border-color-primary); border-radius: 8px; margin: 0 0 8px; padding: 6px 8px; }
  .overview-html td { border: none; padding: 1px 0; text-align: left; }
  .overview-html td[data-label]::before { content: attr(data-label) ": "; color: var(--body-text-color-subdued); }
  .overview-html td.ov-model { font-size: var(--text-lg); font-weight: 700; }
  .overview-html .ov-lacks { display: block; }
  .overview-html td.ov-model::before { content: none; }
  .overview-html td.ov-blank { display: none; }
}
"""


def overview_frame(context: AppContext) -> pd.DataFrame:
    """The overview (fractions) from each declaring benchmark's cached board; built once per change of the
    store and shared (every page load asks for it)."""
    return context.board_view(("overview",), lambda: overview_rows(
        {h.benchmark.name: context.board_frame(h.benchmark.name, MODE) for h in headlines()}))


def coverage_note(frame: pd.DataFrame) -> str:
    """Said above the table: how far the models' coverage goes (no model may have every benchmark yet)."""
    total = len(headlines())
    if frame.empty:
        return "No model has a figure yet."
    most = int(frame[COVERED_COLUMN].max())
    if most == total:
        complete = int((frame[COVERED_COLUMN] == total).sum())
        return f"{complete} model{'s have' if complete != 1 else ' has'} a figure on all {total} benchmarks."
    return (f"**No model has a figure on every benchmark yet** (the most any has is {most} of {total}), so models are "
            "ranked head to head on the benchmarks they share. Evaluate a model on the benchmarks it lacks to rank it "
            "against more models.")


def _figures(frame: pd.DataFrame) -> list[str]:
    return [c for c in frame.columns if c not in TEXT_COLUMNS and not c.endswith(SOURCE_SUFFIX)]


def in_percent(frame: pd.DataFrame) -> pd.DataFrame:
    """Figures and the win rate as percentages with one decimal (numbers; None where blank), as the board's API."""
    shown = frame.copy()
    for column in _figures(frame):
        shown[column] = shown_percent(pd.to_numeric(shown[column], errors="coerce"))
    return shown


def model_link(name: str) -> str:
    """The model's name as a link to its page (the app's `?model=<quoted name>` deep link), escaped."""
    return f'<a href="?model={html.escape(quote(name), quote=True)}">{html.escape(name)}</a>'


def _figure_cell(value: Any, label: str, source: str = "") -> str:
    title = f' title="{html.escape(source, quote=True)}"' if source else ""
    if value is None or pd.isna(value):
        return f'<td class="ov-num ov-blank" data-label="{html.escape(label, quote=True)}"{title}>–</td>'
    return f'<td class="ov-num" data-label="{html.escape(label, quote=True)}"{title}>{float(value) * 100:.1f}</td>'


def overview_html(frame: pd.DataFrame, parts: list[Headline] | None = None) -> str:
    """The page's table: rank, model (a link to its page), coverage (what the model lacks as its tooltip), win rate,
    then each benchmark's figures (in %, one decimal; each with its source as a tooltip); on a phone, what a model
    lacks is written under its name."""
    parts = headlines() if parts is None else parts
    figure_columns = [(h, column) for h in parts for column in h.columns]
    # Two header rows, so no header wraps into several lines: each benchmark's title over its figures, then each
    # figure's name (values in %, said once above the table).
    first = ['<th class="ov-num" rowspan="2">#</th>', '<th class="ov-model" rowspan="2">Model</th>',
             '<th rowspan="2">Coverage</th>', '<th rowspan="2">Win rate</th>',
             *[f'<th class="ov-bench" colspan="{len(h.columns)}">{html.escape(h.benchmark.title)}</th>' for h in parts]]
    second = [f"<th>{html.escape(h.benchmark.metric(metric).shown_as)}</th>"
              for h in parts for metric in h.overview.columns]
    width = 4 + len(second)  # columns, for the row that says the table is empty
    body = []
    for record in frame.to_dict("records"):
        rank = record[RANK_COLUMN]
        lacks = str(record.get(LACKS_COLUMN) or "")
        cells = [
            f'<td class="ov-num" data-label="Rank">{"" if rank is None or pd.isna(rank) else int(rank)}</td>',
            f'<td class="ov-model">{model_link(str(record[MODEL_COLUMN]))}'
            + (f'<span class="ov-lacks">lacks {html.escape(lacks)}</span>' if lacks else "") + "</td>",
            '<td class="ov-num" data-label="Coverage"'
            + (f' title="lacks {html.escape(lacks, quote=True)}"' if lacks else "")
            + f">{html.escape(str(record[COVERAGE_COLUMN]))}</td>",
            _figure_cell(record[AGGREGATE_COLUMN], "Win rate %"),
            *[_figure_cell(record[column], f"{column} %", str(record.get(h.source_column) or ""))
              for h, column in figure_columns],
        ]
        body.append("<tr>" + "".join(cells) + "</tr>")
    rows = "".join(body) or f'<tr><td colspan="{width}">No model has this many benchmarks.</td></tr>'
    return (f'<div class="overview-html" data-rows="{len(body)}"><table><thead><tr>{"".join(first)}</tr>'
            f'<tr>{"".join(second)}</tr></thead><tbody>{rows}</tbody></table></div>')


def overview_note() -> str:
    """What the page states above the table: how models are ranked, and the view each benchmark's figures come from."""
    lines = ["**How models are ranked.** " + aggregate_rule(), "",
             "Values in %. On a desktop a figure's tooltip says where it comes from and a coverage's what the model "
             "lacks (a phone's card says it under the name); a model's name opens its page. "
             "Each benchmark's figures come from one view of its table:"]
    for h in headlines():
        view = f"{h.benchmark.board_layout().view_label.lower()} {subset_title(h.benchmark.name, h.overview.view)}"
        lines.append(f"- **{h.benchmark.title}**: {view}" + (f" ({h.overview.why})" if h.overview.why else ""))
    return "\n".join(lines)


def coverage_choices() -> list[tuple[str, int]]:
    """The minimum-coverage control's choices: "any" (1) up to every benchmark."""
    total = len(headlines())
    return [("any", 1), *[(f"{n} of {total}+" if n < total else f"all {total}", n) for n in range(2, total + 1)]]


OPENING = '<p class="overview-opening">Drawing the overview…</p>'


@dataclass
class OverviewParts:
    """What the app wires: the table (and its note) drawn when the tab opens, redrawn from the minimum-coverage
    control, and each button to open its benchmark's table."""

    table: list[Any]  # the table, and the note on coverage
    inputs: list[Any]  # the minimum-coverage control
    refresh: Callable[[int], tuple[str, str]]
    open_buttons: list[tuple[gr.Button, str]]


SUMMARY = ("Every model with a published or comparable figure, ranked head to head by **mean win rate** on the "
           "benchmarks it has (values in %); no model is ever placed above one that beats it on every figure they "
           "share.")


def build(context: AppContext) -> OverviewParts:
    # The rule in one line; its whole statement folded, so a phone reaches the first card at once.
    gr.Markdown(SUMMARY)
    with gr.Accordion("How models are ranked, and where each figure comes from", open=False):
        gr.Markdown(overview_note())

    def refresh(minimum: int | None = 1) -> tuple[str, str]:
        frame = overview_frame(context)
        return overview_html(at_least(frame, int(minimum or 1))), coverage_note(frame)

    # The table (the widest HTML of the app) is drawn when the tab opens, not sent with every page.
    note = gr.Markdown(coverage_note(overview_frame(context)))
    minimum = gr.Radio(coverage_choices(), value=1, label="Models with at least this many benchmarks",
                       elem_classes="overview-minimum")
    table = gr.HTML(OPENING, elem_classes="overview-table")
    minimum.change(refresh, minimum, [table, note], api_visibility="private", **READ_EVENT)
    with gr.Row():
        open_buttons = [(gr.Button(f"Open {b.title} table", size="sm"), b.name) for b in all_benchmarks()]

    declare_overview_api(context, lambda: in_percent(overview_frame(context)))
    return OverviewParts([table, note], [minimum], refresh, open_buttons)
