"""Leaderboard tab: published rows, runs evaluated here and uploads, filtered server-side; charts;
CSV/JSON download of the current view; the view's state in the page URL."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlencode

import gradio as gr
from pandas.io.formats.style import Styler

from evaluators.core.registry import MODES, all_benchmarks, benchmark_names, get_benchmark
from evaluators.service.board import (
    PAGE_NARROWING,
    SOURCES,
    board_updated,
    bounded,
    fact_choices,
    layout_for,
    published_table,
)
from ui import charts
from ui.api import declare_board_api, declare_download
from ui.board_views import chart_figure, hashable, percent_table
from ui.context import READ_EVENT, AppContext
from ui.format import board_table, markdown_text

APART_LABEL = "Not ranked: partial, different requests, request errors, uploads of unknown provenance"
MAX_SEARCH_CHARS = 200
TRUE_WORDS = ("1", "true", "yes", "on")
# Read-only events of the board: run side by side (READ_EVENT), not listed in the API page.
PRIVATE_READ = {**READ_EVENT, "api_visibility": "private"}
# The page's redraws (the page load's and each control's) write the same tables and chart: taken one at a
# time in the order they were asked, so an earlier redraw never lands over a later one (a search typed
# while the page loads). Each serves a cached view, so the line moves fast.
TABLE_REDRAW = {"concurrency_limit": 1, "concurrency_id": "board-table-redraw", "api_visibility": "private"}
CHART_REDRAW = {"concurrency_limit": 1, "concurrency_id": "board-chart-redraw", "api_visibility": "private"}
# Writes the board's state (a query string the server built) into the address bar, without a reload;
# inside a Hugging Face Space (an iframe) the Space page's address too, which it forwards to the app.
URL_JS = """(query) => {
  const url = window.location.pathname + (query ? "?" + query : "") + window.location.hash;
  if (url !== window.location.pathname + window.location.search + window.location.hash) {
    window.history.replaceState(window.history.state, "", url);
  }
  if (window.parent !== window) {
    window.parent.postMessage({queryString: query ? "?" + query : ""}, "https://huggingface.co");
  }
  return [];
}"""


@dataclass(frozen=True)
class BoardState:
    """Every choice of the board's controls, valid for its benchmark: what a URL restores."""

    benchmark: str
    view: str
    search: str = ""
    sources: tuple[str, ...] = SOURCES
    columns: tuple[str, ...] = ()
    details: bool = False
    mode: str = "official"
    sort_by: str = ""
    organisations: tuple[str, ...] = ()
    open_weights_only: bool = False
    request_modes: tuple[str, ...] = ()

    def controls(self) -> tuple[Any, ...]:
        """The values of the page's filter controls, in their order."""
        return (self.benchmark, self.view, self.search, list(self.sources), list(self.columns), self.details, self.mode,
                self.sort_by, list(self.organisations), self.open_weights_only, list(self.request_modes))


def default_state(benchmark: str | None = None) -> BoardState:
    """The board as a first visit shows it: the first benchmark (or `benchmark`) with its defaults."""
    name = benchmark or benchmark_names()[0]
    layout = layout_for(name)
    return BoardState(benchmark=name, view=layout.views[0], columns=tuple(layout.columns), sort_by=layout.default_sort)


def view_key(benchmark: str) -> str:
    """The URL key of the benchmark's view: its label (language, subset, tool), so a URL reads plainly."""
    return re.sub(r"\W+", "_", layout_for(benchmark).view_label.lower()).strip("_") or "view"


Facts = Callable[[str, str], Mapping[str, list[str]]]


def state_from_params(params: Mapping[str, list[str]], facts: Facts) -> BoardState:
    """A board state from a URL's query (key -> its values): anything unknown or invalid is ignored and
    keeps its default. `facts(benchmark, mode)` gives the organisations and request modes to accept."""
    def first(key: str) -> str | None:
        values = params.get(key) or []
        return str(values[0]) if values else None

    names = benchmark_names()
    benchmark = first("benchmark") if first("benchmark") in names else names[0]
    state, layout = default_state(benchmark), layout_for(benchmark)
    view = first(view_key(benchmark))
    mode = first("mode") if first("mode") in MODES else state.mode
    changes: dict[str, Any] = {"mode": mode, "search": (first("q") or "")[:MAX_SEARCH_CHARS],
                               "details": (first("detail") or "").lower() in TRUE_WORDS,
                               "open_weights_only": (first("open") or "").lower() in TRUE_WORDS}
    if view in layout.views:
        changes["view"] = view
    if "sources" in params:  # present and empty: no source chosen
        changes["sources"] = tuple(dict.fromkeys(s for s in params["sources"] if s in SOURCES))
    columns = tuple(dict.fromkeys(c for c in params.get("columns", []) if c in layout.columns))
    if columns or params.get("columns") == [""]:
        changes["columns"] = columns
    if first("sort") in layout.columns:
        changes["sort_by"] = first("sort")
    known = facts(benchmark, mode)
    changes["organisations"] = tuple(dict.fromkeys(o for o in params.get("org", []) if o in known.get("organisation", [])))
    changes["request_modes"] = tuple(dict.fromkeys(r for r in params.get("req", []) if r in known.get("request_mode", [])))
    return replace(state, **changes)


def state_query(state: BoardState) -> str:
    """The URL query of a board state: only what differs from the defaults, so a plain visit has none."""
    default = default_state(state.benchmark)
    pairs: list[tuple[str, str]] = []
    if state.benchmark != benchmark_names()[0]:
        pairs.append(("benchmark", state.benchmark))
    if state.view != default.view:
        pairs.append((view_key(state.benchmark), state.view))
    if state.mode != default.mode:
        pairs.append(("mode", state.mode))
    if state.search:
        pairs.append(("q", state.search))
    if set(state.sources) != set(default.sources):
        pairs += [("sources", s) for s in state.sources] or [("sources", "")]
    if state.columns != default.columns:
        pairs += [("columns", c) for c in state.columns] or [("columns", "")]
    if state.details:
        pairs.append(("detail", "1"))
    if state.sort_by != default.sort_by:
        pairs.append(("sort", state.sort_by))
    pairs += [("org", o) for o in state.organisations]
    if state.open_weights_only:
        pairs.append(("open", "1"))
    pairs += [("req", r) for r in state.request_modes]
    return urlencode(pairs)


def query_lists(query_params: Any) -> dict[str, list[str]]:
    """A request's query parameters as key -> every value given (a key may repeat)."""
    items = query_params.multi_items() if hasattr(query_params, "multi_items") else dict(query_params or {}).items()
    found: dict[str, list[str]] = {}
    for key, value in items:
        found.setdefault(str(key), []).append(str(value))
    return found


def controls_state(values: tuple[Any, ...], facts: Facts) -> BoardState:
    """The page's control values as a valid state: while the page switches benchmark a control may
    still hold the previous benchmark's choice; it falls back to the default like an invalid URL."""
    (benchmark, view, search, sources, columns, details, mode, sort_by, organisations, open_only, request_modes) = values
    benchmark = benchmark or benchmark_names()[0]
    params: dict[str, list[str]] = {"benchmark": [benchmark], "q": [search or ""], "mode": [mode or "official"],
                                    "sources": list(SOURCES if sources is None else sources) or [""],
                                    "detail": ["1" if details else ""], "open": ["1" if open_only else ""],
                                    "org": list(organisations or []), "req": list(request_modes or [])}
    if benchmark in benchmark_names():
        params[view_key(benchmark)] = [view or ""]
    if columns is not None:
        params["columns"] = list(columns) or [""]
    if sort_by:
        params["sort"] = [sort_by]
    return state_from_params(params, facts)


def source_note(benchmark: str, mode: str, updated: str | None = None) -> str:
    """What the board shows and where its numbers come from: the scale, sources, ranking, links, freshness."""
    table = published_table(benchmark)
    about = get_benchmark(benchmark).about
    lines = ["**Scale**: every share is in **%** with one decimal, the same in the table, the CSV/JSON downloads and "
             "the `/leaderboard` API (with `<column>_n` = items behind it, `_low`/`_high` = its 95% Wilson interval, "
             "also in %); counts are whole numbers. `± x.x` = half the width of the 95% Wilson interval (`+a/−b` "
             "where it is lopsided, near 0 or 100; `n` = items behind the sort column). Only shares of the view's "
             "items have an interval: a precision, a mean F1 or ROUGE has a different denominator, so none is shown; "
             "a mean over categories is treated as a share of all their items. Sources: **published** (the paper or "
             "the benchmark's site), **evaluated** (runs in this app, with their settings fingerprint), **uploaded** "
             "(scored predictions files). Published tables print no sample counts: a published row's n is the items "
             "counted in the benchmark's data for its view where the table gives them (`n_by_view`), else it has no "
             "interval.",
             "**Ranked**: the published rows and the evaluated runs that are the same experiment (the reference's "
             "requests and sampling, text mode, every item); rows whose intervals overlap the first row of the rank "
             "above share its rank; a rank is the row's place in its view, so searching and the model filters hide "
             "rows without re-ranking them; the best value of each column is highlighted. Every other row is in the "
             "**Not ranked** table below, its reason in **why not ranked**. ★ marks the newest evaluated or "
             "uploaded run. The page's address keeps these choices: copy it to share this view."]
    links = [f"[{markdown_text(text)}]({url})" for text, url in
             (("benchmark source", about.source_url), (about.paper or "paper", about.paper_url)) if url.startswith("http")]
    if links:
        lines.append("Benchmark: " + " · ".join(links) + ".")
    if table:
        source = table.get("source") or {}
        lines.append(f"Published rows: [{source.get('title', 'source')}]({source.get('url', '')}).")
        for caveat in table.get("caveats", []) + table.get("notes", [])[:2]:
            lines.append(f"- {markdown_text(caveat)}")
    if updated and re.match(r"\d{4}-\d{2}-\d{2}", updated):  # an ISO date from the data, nothing else
        lines.append(f"**Last updated**: {updated[:10]} (the newest row of this board; each row's date "
                     "is in its **updated** column).")
    if mode != "official":
        lines.append("**Strict mode**: published rows are official numbers, so they are hidden here; only runs scored "
                     "with the documented checker bugs fixed are shown.")
    return "\n\n".join(lines)  # paragraphs: a line after a caveat must not join its list item


def hidden_choices(state: BoardState) -> bool:
    """Whether a choice in the closed "more filters" section differs from the default (then it opens)."""
    default = default_state(state.benchmark)
    return (set(state.sources) != set(default.sources) or state.columns != default.columns
            or state.sort_by != default.sort_by or bool(state.organisations) or bool(state.request_modes)
            or state.open_weights_only)


def empty_reason(mode: str, ranked: int, apart: int) -> str:
    """A line above the table when it has no rows: why (strict mode has no published rows)."""
    if ranked:
        return ""
    if mode != "official" and not apart:
        return ("⚠️ **Strict mode: no rows here.** Published numbers come from the official checkers, so strict mode "
                "hides them; it shows only runs evaluated or uploaded here, rescored with the checker bugs fixed, and "
                "none matches this view. Evaluate or upload a run, or switch to official scoring.")
    if not apart:
        return "No rows match these filters."
    return "No ranked rows in this view: the rows kept apart are below."


@dataclass
class LeaderboardParts:
    """What the app wires to the page load: the URL's choices restored, then the tables and the chart."""

    filters: list[Any]
    restore: Callable[..., tuple[Any, ...]]
    restore_outputs: list[Any]
    table: list[Any]  # the ranking, the rows kept apart, and what refresh updates with them
    refresh: Callable[..., tuple[Any, ...]]
    chart_inputs: list[Any]
    plot: gr.Plot
    chart: Callable[..., Any]
    # (benchmark name, open_inputs' values) -> values of open_outputs: the board switched to that benchmark
    open_benchmark: Callable[..., tuple[Any, ...]]
    open_inputs: list[Any]
    open_outputs: list[Any]


def benchmark_choices() -> list[tuple[str, str]]:
    """(title, name): the page shows titles, the value (and the API) keeps names."""
    return [(benchmark.title, benchmark.name) for benchmark in all_benchmarks()]


def build(context: AppContext) -> LeaderboardParts:
    def facts(benchmark: str, mode: str) -> dict[str, list[str]]:
        return fact_choices(context.board_frame(benchmark, mode))

    state = default_state()
    layout = layout_for(state.benchmark)
    known = facts(state.benchmark, state.mode)
    with gr.Column(elem_classes="board"):
        with gr.Row(elem_classes="board-main"):
            benchmark = gr.Dropdown(benchmark_choices(), value=state.benchmark, label="Benchmark", scale=2, min_width=150)
            view = gr.Dropdown(list(layout.views), value=state.view, label=layout.view_label, scale=1,
                               allow_custom_value=True, min_width=110)
            mode = gr.Radio(list(MODES), value=state.mode, label="Scoring mode", scale=1, min_width=170)
            details = gr.Checkbox(label="Per-subset detail", value=False, scale=1, min_width=140)
            search = gr.Textbox(label="Search models", placeholder="model name or notes…", scale=2, min_width=150)
        # Closed, so the first screen shows ranked rows; a shared link that sets one of these opens it.
        with gr.Accordion("More filters and columns", open=False, elem_classes="board-filters") as more:
            with gr.Row():
                sources = gr.CheckboxGroup(list(SOURCES), value=list(SOURCES), label="Rows from", scale=2, min_width=220)
                sort_by = gr.Dropdown(list(layout.columns), value=state.sort_by, label="Sort by", scale=1,
                                      allow_custom_value=True, min_width=140)
                open_only = gr.Checkbox(label="Open weights only", value=False, scale=1, min_width=140)
            with gr.Row():
                organisations = gr.Dropdown(known["organisation"], value=[], multiselect=True, label="Organisation",
                                            info="empty: every organisation", scale=2, min_width=200)
                request_modes = gr.Dropdown(known["request_mode"], value=[], multiselect=True, label="Request mode",
                                            info="empty: every mode", scale=1, min_width=160)
            columns = gr.Dropdown(list(layout.columns), value=list(layout.columns), multiselect=True,
                                  allow_custom_value=True, label="Columns")
        status = gr.Markdown("", visible=False, elem_classes="board-status")
        filters = [benchmark, view, search, sources, columns, details, mode, sort_by, organisations, open_only,
                   request_modes]
        first = shown_tables(context, state.controls(), facts)
        table = gr.Dataframe(first[0].value, datatype=first[0].datatype, column_widths=first[0].column_widths,
                             interactive=False, pinned_columns=3, buttons=["fullscreen", "copy"], max_height=560,
                             wrap=True, label="Leaderboard", elem_classes=["board-table", "board-ranked"])
        legend = gr.Markdown(first[2], elem_classes="board-legend")
        # Over the rows kept apart when the view has more than one read sends (evaluators.service.board.MAX_BOARD_ROWS).
        apart_more = gr.Markdown(more_rows_line(first[1], "not-ranked rows", state.benchmark), visible=first[1].more > 0,
                                 elem_classes="board-legend")
        apart_table = gr.Dataframe(first[1].value, datatype=first[1].datatype, column_widths=first[1].column_widths,
                                   visible=first[1].rows > 0, interactive=False, pinned_columns=1,
                                   buttons=["fullscreen", "copy"], max_height=400,
                                   wrap=True, label=APART_LABEL, elem_classes=["board-table", "board-apart"])
        note = gr.Markdown(source_note(state.benchmark, state.mode, board_updated(context.board_frame(state.benchmark,
                                                                                                     state.mode))))
        with gr.Row():
            csv_button = gr.Button("Download CSV", size="sm", scale=0, min_width=140)
            json_button = gr.Button("Download JSON", size="sm", scale=0, min_width=140)
            download = gr.File(label="Download", interactive=False, height=60, visible=False)
        # The query string of the board's state; hidden but rendered, so its change runs the URL script.
        address = gr.Textbox("", visible="hidden", elem_classes="board-address")
        with gr.Accordion("Charts", open=True):
            with gr.Row():
                chart_kind = gr.Dropdown(list(charts.CHARTS), value="subset bars", label="Chart", scale=1)
                chart_rows = gr.Slider(1, charts.MAX_MODELS, value=5, step=1, label="Top rows of the view to chart",
                                       scale=2)
            plot = gr.Plot(label="Chart")

    def refresh(*values: Any) -> tuple[Any, ...]:
        chosen = controls_state(values, facts)
        ranked, apart, legend_text = shown_tables(context, chosen.controls(), facts)
        reason = "\n\n".join(line for line in (empty_reason(chosen.mode, ranked.rows, apart.rows),
                                                more_rows_line(ranked, "ranked rows", chosen.benchmark)) if line)
        apart_line = more_rows_line(apart, "not-ranked rows", chosen.benchmark)
        return (ranked.update(), apart.update(hide_empty=True), legend_text, gr.update(value=reason, visible=bool(reason)),
                gr.update(value=None, visible=False), state_query(chosen),
                gr.update(value=apart_line, visible=bool(apart_line)))

    def switch_benchmark(name: str, mode: str) -> tuple[Any, ...]:
        chosen, known = default_state(name), facts(name, mode)
        layout = layout_for(name)
        return (gr.update(choices=list(layout.views), value=chosen.view, label=layout.view_label),
                gr.update(choices=list(layout.columns), value=list(chosen.columns)),
                gr.update(choices=list(layout.columns), value=chosen.sort_by),
                gr.update(choices=known["organisation"], value=[]), gr.update(choices=known["request_mode"], value=[]),
                source_note(name, mode, board_updated(context.board_frame(name, mode))))

    def switch_mode(name: str, mode: str, chosen_orgs: list[str], chosen_modes: list[str]) -> tuple[Any, ...]:
        known = facts(name, mode)
        return (gr.update(choices=known["organisation"], value=[o for o in chosen_orgs or [] if o in known["organisation"]]),
                gr.update(choices=known["request_mode"],
                          value=[r for r in chosen_modes or [] if r in known["request_mode"]]),
                source_note(name, mode, board_updated(context.board_frame(name, mode))))

    def restore(request: gr.Request) -> tuple[Any, ...]:
        """The controls as the page URL's query gives them (a shared link), every invalid value ignored."""
        chosen = state_from_params(query_lists(getattr(request, "query_params", None) or {}), facts)
        note_now = source_note(chosen.benchmark, chosen.mode, board_updated(context.board_frame(chosen.benchmark,
                                                                                                chosen.mode)))
        if chosen == default_state():
            # A plain visit: the controls stay as built (the visitor may already be typing in them).
            return (*(gr.update() for _ in filters), note_now, gr.update())
        layout, known = layout_for(chosen.benchmark), facts(chosen.benchmark, chosen.mode)
        return (chosen.benchmark, gr.update(choices=list(layout.views), value=chosen.view, label=layout.view_label),
                chosen.search, list(chosen.sources), gr.update(choices=list(layout.columns), value=list(chosen.columns)),
                chosen.details, chosen.mode, gr.update(choices=list(layout.columns), value=chosen.sort_by),
                gr.update(choices=known["organisation"], value=list(chosen.organisations)), chosen.open_weights_only,
                gr.update(choices=known["request_mode"], value=list(chosen.request_modes)), note_now,
                gr.update(open=hidden_choices(chosen)))

    def draw_chart(*values: Any) -> Any:
        return chart_figure(context, *values)

    outputs = [table, apart_table, legend, status, download, address, apart_more]
    chart_inputs = [*filters, chart_kind, chart_rows]
    # A benchmark chosen by the visitor brings its own views, columns, sort and facts; those controls'
    # own changes redraw. Set by a shared URL (restore), the choices come with the values instead.
    benchmark.input(switch_benchmark, [benchmark, mode], [view, columns, sort_by, organisations, request_modes, note],
                    **PRIVATE_READ)
    mode.input(switch_mode, [benchmark, mode, organisations, request_modes], [organisations, request_modes, note],
               **PRIVATE_READ)
    for control in filters:
        control.change(refresh, filters, outputs, trigger_mode="always_last", **TABLE_REDRAW)
        control.change(draw_chart, chart_inputs, plot, trigger_mode="always_last", **CHART_REDRAW)
    for control in (chart_kind, chart_rows):
        control.change(draw_chart, chart_inputs, plot, trigger_mode="always_last", **CHART_REDRAW)
    address.change(None, address, None, js=URL_JS, **PRIVATE_READ)
    # The file box shows once it holds a file (API callers get the plain path); any change of the view
    # empties and hides it again (refresh), so it never offers the previous view's file.
    for button, kind in ((csv_button, "csv"), (json_button, "json")):
        declare_download(context, kind, button, filters, download).then(
            lambda: gr.update(visible=True), None, download, **PRIVATE_READ)

    declare_board_api(context)
    restore_outputs = [*filters, note, more]

    def open_benchmark(name: str, mode: str) -> tuple[Any, ...]:
        """Another page's link to a benchmark's table: the benchmark with its own views, columns, sort and facts
        (what a visitor's own pick brings); its change then redraws."""
        return (name, *switch_benchmark(name, mode))

    return LeaderboardParts(filters, restore, restore_outputs, outputs, refresh, chart_inputs, plot, draw_chart,
                            open_benchmark, [mode], [benchmark, view, columns, sort_by, organisations, request_modes, note])


@dataclass(frozen=True)
class ShownTable:
    """One of the page's two tables, ready for its Dataframe: at most MAX_BOARD_ROWS of the view's rows."""

    value: Any
    datatype: list[str]
    column_widths: list[str]
    rows: int
    more: int = 0  # the view's rows of this table left out (evaluators.service.board.bounded)

    def update(self, hide_empty: bool = False) -> Any:
        return gr.update(value=self.value, datatype=self.datatype, column_widths=self.column_widths,
                         visible=not hide_empty or self.rows > 0)


def shown_tables(context: AppContext, controls: tuple[Any, ...], facts: Facts) -> tuple[ShownTable, ShownTable, str]:
    """The ranked table, the rows kept apart, and the legend of the short headers, for valid controls; shared
    by every visitor asking the same view until the board changes."""
    ranked, apart, legend = context.board_view(("page", *hashable(controls)), lambda: _shown_tables(context, controls,
                                                                                                      facts))
    return own_styler(ranked), own_styler(apart), legend


def own_styler(table: ShownTable) -> ShownTable:
    """A shared table with a Styler of its own: Gradio renders a Styler by recomputing its styles in place,
    which two visitors must not do on one object at once."""
    if isinstance(table.value, Styler):
        return replace(table, value=table.value.data.style.use(table.value.export()))
    return table


def _shown_tables(context: AppContext, controls: tuple[Any, ...], facts: Facts) -> tuple[ShownTable, ShownTable, str]:
    chosen = controls_state(controls, facts)
    layout = layout_for(chosen.benchmark)
    (benchmark, view, search, sources, columns, details, mode, sort_by, organisations, open_only,
     request_modes) = chosen.controls()
    frame = percent_table(context, benchmark, view, search, sources, columns, details, mode, sort_by, organisations,
                          open_only, request_modes)
    apart = frame["apart_reason"].fillna("").astype(str) != ""
    (ranked_rows, ranked_more), (apart_rows, apart_more) = bounded(frame[~apart]), bounded(frame[apart])
    ranked = board_table(ranked_rows, layout, sort_by, ranked=True)
    others = board_table(apart_rows, layout, sort_by, ranked=False)
    legend = f"Headers: {ranked.legend}." if ranked.legend else ""
    return (ShownTable(ranked.table, ranked.datatype, ranked.column_widths, len(ranked_rows), ranked_more),
            ShownTable(others.table, others.datatype, others.column_widths, len(apart_rows), apart_more), legend)


def more_rows_line(table: ShownTable, what: str, benchmark: str) -> str:
    """The line over a table holding only part of the view's rows (Markdown; empty when it holds them all)."""
    if not table.more:
        return ""
    narrow = PAGE_NARROWING.format(view=layout_for(benchmark).view_label.lower())
    return (f"**{table.more:,} more {what} are not shown** ({table.rows:,} of {table.rows + table.more:,} are, in the "
            f"table's order). {markdown_text(narrow)}")
