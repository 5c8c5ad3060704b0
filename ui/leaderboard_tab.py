"""Leaderboard tab: published rows, runs evaluated here and uploads, filtered server-side; charts;
CSV/JSON download of the current view."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr
import pandas as pd

from evaluators.board import SOURCES, BoardQuery, as_json_records, layout_for, published_table, query_board
from evaluators.core.registry import MODES, benchmark_names
from ui import charts
from ui.context import AppContext
from ui.format import as_percent, board_display, markdown_text, table_json, user_error, without_empty_info_columns

APART_LABEL = "Not ranked: partial, different requests, request errors, uploads of unknown provenance"


def _query(view: str | None, search: str, sources: list[str] | None, columns: list[str] | None, details: bool,
           sort_by: str | None, part: str = "all") -> BoardQuery:
    return BoardQuery(view=view or None, search=search or "", sources=tuple(SOURCES if sources is None else sources),
                      columns=tuple(columns) if columns is not None else None,
                      details=bool(details), sort_by=sort_by or None, part=part)


def view_table(context: AppContext, benchmark: str, view: str | None, search: str, sources: list[str] | None,
               columns: list[str] | None, details: bool, mode: str, sort_by: str | None, part: str = "all") -> pd.DataFrame:
    """The rows of the current view as fractions (what downloads and charts use); `part` as in BoardQuery."""
    layout = layout_for(benchmark)
    # While the page switches benchmark, a control may still hold the previous benchmark's choice.
    if view and view not in layout.views:
        view = layout.views[0]
    if columns is not None:
        columns = list(dict.fromkeys(c for c in columns if c in layout.columns)) or (list(layout.columns) if columns else [])
    frame = context.board_frame(benchmark, mode)
    return query_board(frame, layout, _query(view, search, sources, columns, details, sort_by, part))


def source_note(benchmark: str, mode: str) -> str:
    table = published_table(benchmark)
    lines = ["Values in %, `± x.x` = half the width of the 95% Wilson interval (n = items behind the sort column; "
             "CSV/JSON keep fractions with `<column>_n`, `_low`, `_high`). Sources: **published** (the paper or the "
             "benchmark's site), **evaluated** (runs in this app, with their settings fingerprint), **uploaded** (scored "
             "predictions files). Published tables print no sample counts, so their rows have no interval.",
             "**Ranked**: the published rows and the evaluated runs that are the same experiment (the reference's "
             "requests and sampling, text mode, every item); rows whose intervals overlap the first row of the rank "
             "above share its rank; the best value of each column is highlighted. Every other row is in the **Not "
             "ranked** table below, its reason in **apart_reason**. ★ marks the newest evaluated or uploaded run."]
    if table:
        source = table.get("source") or {}
        lines.append(f"Published rows: [{source.get('title', 'source')}]({source.get('url', '')}).")
        for caveat in table.get("caveats", []) + table.get("notes", [])[:2]:
            lines.append(f"- {markdown_text(caveat)}")
    if mode != "official":
        lines.append("**Strict mode**: published rows are official numbers, so they are hidden here; only runs scored "
                     "with the documented checker bugs fixed are shown.")
    return "\n".join(lines)


@dataclass
class LeaderboardParts:
    """What the app wires to the page load: the table and the chart are refreshed on every visit."""

    filters: list[Any]
    table: list[gr.Dataframe]  # the ranking, and the rows kept apart
    refresh: Callable[..., pd.DataFrame]
    chart_inputs: list[Any]
    plot: gr.Plot
    chart: Callable[..., Any]


def build(context: AppContext) -> LeaderboardParts:
    names = benchmark_names()
    shown = names[0]
    layout = layout_for(shown)
    with gr.Row():
        benchmark = gr.Dropdown(names, value=shown, label="Benchmark", scale=2)
        view = gr.Dropdown(list(layout.views), value=layout.views[0], label=layout.view_label, scale=1,
                           allow_custom_value=True)
        mode = gr.Radio(list(MODES), value="official", label="Scoring mode", scale=1)
        search = gr.Textbox(label="Search models", placeholder="model name or notes…", scale=2)
    with gr.Row():
        sources = gr.CheckboxGroup(list(SOURCES), value=list(SOURCES), label="Rows from", scale=2)
        columns = gr.Dropdown(list(layout.columns), value=list(layout.columns), multiselect=True, allow_custom_value=True,
                              label="Columns", scale=4)
        details = gr.Checkbox(label="Per-subset detail", value=False, scale=1)
        sort_by = gr.Dropdown(list(layout.columns), value=layout.default_sort, label="Sort by", scale=1,
                              allow_custom_value=True)
    note = gr.Markdown(source_note(shown, "official"))
    def shown_tables(benchmark: str, view: str, search: str, sources: list[str], columns: list[str], details: bool,
                     mode: str, sort_by: str) -> tuple[Any, Any]:
        chosen = layout_for(benchmark)
        frame = as_percent(view_table(context, benchmark, view, search, sources, columns, details, mode, sort_by), chosen)
        apart = frame["apart_reason"].fillna("").astype(str) != ""
        return (board_display(frame[~apart], chosen, sort_by, ranked=True),
                board_display(frame[apart], chosen, sort_by, ranked=False))

    initial, initial_apart = shown_tables(shown, layout.views[0], "", list(SOURCES), list(layout.columns), False,
                                          "official", layout.default_sort)
    table = gr.Dataframe(initial, interactive=False, pinned_columns=3, buttons=["fullscreen", "copy"], max_height=560,
                         wrap=True, label="Leaderboard")
    apart_table = gr.Dataframe(initial_apart, interactive=False, pinned_columns=1, buttons=["fullscreen", "copy"],
                               max_height=400, wrap=True, label=APART_LABEL)
    with gr.Row():
        csv_button = gr.Button("Download CSV", size="sm")
        json_button = gr.Button("Download JSON", size="sm")
        download = gr.File(label="Download", interactive=False, height=60)
    with gr.Accordion("Charts", open=True):
        with gr.Row():
            chart_kind = gr.Dropdown(list(charts.CHARTS), value="subset bars", label="Chart", scale=1)
            chart_rows = gr.Slider(1, charts.MAX_MODELS, value=5, step=1, label="Top rows of the view to chart", scale=2)
        plot = gr.Plot(label="Chart")

    filters = [benchmark, view, search, sources, columns, details, mode, sort_by]

    def api_table(benchmark: str, view: str, search: str, sources: list[str], columns: list[str], details: bool, mode: str,
                  sort_by: str, part: str = "all") -> pd.DataFrame:
        frame = view_table(context, benchmark, view, search, sources, columns, details, mode, sort_by, part)
        return without_empty_info_columns(as_percent(frame, layout_for(benchmark)))

    refresh = shown_tables
    tables = [table, apart_table]

    def switch_benchmark(name: str, mode: str):
        chosen = layout_for(name)
        return (gr.update(choices=list(chosen.views), value=chosen.views[0], label=chosen.view_label),
                gr.update(choices=list(chosen.columns), value=list(chosen.columns)),
                gr.update(choices=list(chosen.columns), value=chosen.default_sort),
                source_note(name, mode))

    def draw_chart(benchmark: str, view: str, search: str, sources: list[str], columns: list[str], details: bool, mode: str,
              sort_by: str, kind: str, top: float):
        chosen = layout_for(benchmark)
        rows = view_table(context, benchmark, view, search, sources, columns, details, mode, sort_by).head(int(top))
        title = f"{benchmark} · {chosen.view_label.lower()} {view} · {mode}"
        if kind == "radar":
            return charts.radar(rows, chosen, title)
        if kind in ("accuracy vs latency", "accuracy vs tokens"):
            return charts.accuracy_vs_cost(context.store, rows, chosen, kind.split()[-1], title)
        if kind == "error types":
            return charts.error_types(context.store, rows, title)
        return charts.subset_bars(rows, chosen, title)

    def export(kind: str):
        def write(*values):
            frame = view_table(context, *values)
            folder = Path(tempfile.mkdtemp(prefix="toolboard-view-"))
            name = re.sub(r"[^A-Za-z0-9_.-]", "_", f"leaderboard-{values[0]}-{values[1] or 'all'}")
            path = folder / f"{name}.{kind}"
            if kind == "csv":
                frame.to_csv(path, index=False)
            else:
                path.write_text(as_json_records(frame), encoding="utf-8")
            return str(path)
        return write

    # Switching benchmark replaces the view, column and sort choices first, then redraws: a redraw
    # racing the switch would send the old benchmark's view to the new one's choices.
    benchmark.change(switch_benchmark, [benchmark, mode], [view, columns, sort_by, note], api_visibility="private").then(
        refresh, filters, tables, api_visibility="private").then(
        draw_chart, [*filters, chart_kind, chart_rows], plot, api_visibility="private")
    mode.change(lambda name, m: source_note(name, m), [benchmark, mode], note, api_visibility="private")
    for control in filters[1:]:
        control.change(refresh, filters, tables, api_visibility="private")
    csv_button.click(export("csv"), filters, download, api_name="download_csv")
    json_button.click(export("json"), filters, download, api_name="download_json")
    for control in [*filters[1:], chart_kind, chart_rows]:
        control.change(draw_chart, [*filters, chart_kind, chart_rows], plot, api_visibility="private")

    def leaderboard_api(benchmark: str, view: str = "", search: str = "", sources: list[str] | None = None,
                        columns: list[str] | None = None, details: bool = False, mode: str = "official",
                        sort_by: str = "") -> dict[str, Any]:
        """The leaderboard's current view (values in %): {"headers", "data"}; the ranked rows (with `rank`)
        first, then the rows kept apart (with `apart_reason`); `newest` marks the newest evaluated or uploaded
        run; `<column>_n`, `_low`, `_high`: n and 95% Wilson interval of each fraction column."""
        return part_api(benchmark, view, search, sources, columns, details, mode, sort_by, "all")

    def part_api(benchmark: str, view: str, search: str, sources: list[str] | None, columns: list[str] | None,
                 details: bool, mode: str, sort_by: str, part: str) -> dict[str, Any]:
        try:
            frame = api_table(benchmark, view, search, sources, columns, details, mode, sort_by, part)
        except Exception as exc:  # noqa: BLE001 - API callers get the reason, not a generic failure
            raise gr.Error(user_error(exc, context.redact_paths)) from None
        return table_json(frame)

    def leaderboard_ranked_api(benchmark: str, view: str = "", search: str = "", sources: list[str] | None = None,
                               columns: list[str] | None = None, details: bool = False, mode: str = "official",
                               sort_by: str = "") -> dict[str, Any]:
        """The ranked table only: published rows and comparable runs, with `rank` (values in %)."""
        return part_api(benchmark, view, search, sources, columns, details, mode, sort_by, "ranked")

    def leaderboard_apart_api(benchmark: str, view: str = "", search: str = "", sources: list[str] | None = None,
                              columns: list[str] | None = None, details: bool = False, mode: str = "official",
                              sort_by: str = "") -> dict[str, Any]:
        """The rows kept out of the ranking, each with its `apart_reason` (values in %)."""
        return part_api(benchmark, view, search, sources, columns, details, mode, sort_by, "apart")

    def chart_api(benchmark: str, view: str = "", search: str = "", sources: list[str] | None = None,
                  columns: list[str] | None = None, mode: str = "official", kind: str = "subset bars",
                  top: int = 5) -> dict[str, Any]:
        """A chart of the view's top rows, as plotly JSON: {"type": "plotly", "plot": str}."""
        try:
            figure = draw_chart(benchmark, view, search, sources, columns, False, mode, "", kind, top)
        except Exception as exc:  # noqa: BLE001
            raise gr.Error(user_error(exc, context.redact_paths)) from None
        return {"type": "plotly", "plot": figure.to_json()}

    # Typed API endpoints: any benchmark's views and columns, independent of what the page shows.
    gr.api(leaderboard_api, api_name="leaderboard")
    gr.api(leaderboard_ranked_api, api_name="leaderboard_ranked")
    gr.api(leaderboard_apart_api, api_name="leaderboard_apart")
    gr.api(chart_api, api_name="chart")
    return LeaderboardParts(filters, tables, refresh, [*filters, chart_kind, chart_rows], plot, draw_chart)
