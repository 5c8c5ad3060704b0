"""Overview tab: one row per model with each benchmark's headline figures side by side, ranked by the
stated aggregate over the models that have every column; a button per benchmark opens its table."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gradio as gr
import pandas as pd

from evaluators.core.registry import all_benchmarks
from evaluators.service.board import RANK_COLUMN
from evaluators.service.overview import LACKS_COLUMN, MODEL_COLUMN, SOURCE_SUFFIX, aggregate_rule, headlines, overview_rows
from ui.api import declare_overview_api
from ui.context import AppContext
from ui.format import in_percent_points

# The overview compares published figures: official scoring only (strict mode has no published rows).
MODE = "official"
TEXT_COLUMNS = (RANK_COLUMN, MODEL_COLUMN, LACKS_COLUMN)


def overview_frame(context: AppContext) -> pd.DataFrame:
    """The overview (fractions) from each declaring benchmark's cached board; built once per change of the
    store and shared (every page load asks for it)."""
    return context.board_view(("overview",), lambda: overview_rows(
        {h.benchmark.name: context.board_frame(h.benchmark.name, MODE) for h in headlines()}))


def nobody_ranked_note(frame: pd.DataFrame) -> str:
    """Said when no model has every benchmark's figure yet (so the table below is unranked)."""
    if frame[RANK_COLUMN].notna().any():
        return ""
    return ("**No model has a figure on every benchmark yet**, so none is ranked: the models below are listed by "
            "how many benchmarks they have. Evaluate a model on every benchmark here to rank it.")


def _figures(frame: pd.DataFrame) -> list[str]:
    return [c for c in frame.columns if c not in TEXT_COLUMNS and not c.endswith(SOURCE_SUFFIX)]


def in_percent(frame: pd.DataFrame) -> pd.DataFrame:
    """Figures and aggregate as percentages with one decimal (numbers; None where blank), as the board's API."""
    shown = frame.copy()
    for column in _figures(frame):
        shown[column] = in_percent_points(shown[column])
    return shown


def overview_display(frame: pd.DataFrame) -> pd.DataFrame:
    """The page's table: percentages as text with one decimal, blanks empty, rank as text."""
    shown = in_percent(frame)
    for column in _figures(frame):
        shown[column] = ["" if pd.isna(v) else f"{v:.1f}" for v in shown[column]]
    shown[RANK_COLUMN] = ["" if pd.isna(v) else str(int(v)) for v in shown[RANK_COLUMN]]
    return shown


def column_widths(frame: pd.DataFrame) -> list[str]:
    """Narrow rank and figure columns, wide model, lacks and source columns (headers wrap, values do not)."""
    wide = {MODEL_COLUMN: "220px", LACKS_COLUMN: "300px"}
    return [wide.get(c, "200px" if c.endswith(SOURCE_SUFFIX) else "56px" if c == RANK_COLUMN else "120px")
            for c in frame.columns]


def overview_note() -> str:
    """What the page states above the table: the aggregate, and the view each benchmark's figures come from."""
    lines = ["**How models are ranked.** " + aggregate_rule(), "",
             "Values in %. Each benchmark's figures come from one view of its table:"]
    for h in headlines():
        view = f"{h.benchmark.board_layout().view_label.lower()} `{h.overview.view}`"
        lines.append(f"- **{h.benchmark.title}**: {view}" + (f" ({h.overview.why})" if h.overview.why else ""))
    return "\n".join(lines)


@dataclass
class OverviewParts:
    """What the app wires: the table refreshed on page load, and each button to open its benchmark's table."""

    table: list[Any]  # the table, and the line said when nobody is ranked
    refresh: Callable[[], tuple[pd.DataFrame, str]]
    open_buttons: list[tuple[gr.Button, str]]


def build(context: AppContext) -> OverviewParts:
    gr.Markdown(overview_note())
    nobody = gr.Markdown(nobody_ranked_note(overview_frame(context)))

    def refresh() -> tuple[pd.DataFrame, str]:
        frame = overview_frame(context)
        return overview_display(frame), nobody_ranked_note(frame)

    initial = refresh()[0]
    table = gr.Dataframe(initial, interactive=False, pinned_columns=2, column_widths=column_widths(initial),
                         buttons=["fullscreen", "copy"], max_height=560, wrap=True, label="Overview across benchmarks")
    with gr.Row():
        open_buttons = [(gr.Button(f"Open {b.title} table", size="sm"), b.name) for b in all_benchmarks()]

    declare_overview_api(context, lambda: in_percent(overview_frame(context)))
    return OverviewParts([table, nobody], refresh, open_buttons)

