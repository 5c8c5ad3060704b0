"""Leaderboard tab: published rows, runs evaluated here and uploads, filtered, sorted and ranked server-side and
drawn as HTML (ui/board_html.py: a table on a desktop, cards on a phone); charts of the models chosen; CSV/JSON
download of the current view; the view's state in the page URL.

One visitor action, one redraw: each control's own event (.input, .submit, a header's click; never .change, which
programmatic updates fire too) runs ONE handler that returns every control's update, the board's HTML, the note and
the address and the chart: one server call. The typed boxes (search, size bounds) have no server event: a script in
the page (BOARD_JS) redraws once typing pauses (TYPING_PAUSE_MS after the last key, a paste included) or on Enter. Events run side by side (no global queue line, so
50 visitors wait on nobody); a later redraw is never overwritten by an earlier one because each event carries the
page's own sequence number (a counter in the browser, BOARD_SEQ_JS) and the server answers a redraw that a newer one
of the same page has overtaken with no update at all (Overtaken)."""

from __future__ import annotations

import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypedDict

import gradio as gr

from evaluators.core.display_names import column_title, subset_title
from evaluators.core.registry import MODES, all_benchmarks, get_benchmark
from evaluators.service.board import (
    PAGE_NARROWING,
    SOURCES,
    board_updated,
    bounded,
    layout_for,
    published_table,
)
from ui import charts
from ui.api import declare_board_api, declare_download
from ui.board_html import board_html
from ui.board_state import (
    CONTROL_NAMES,
    MAX_SEARCH_CHARS,
    TRUE_WORDS,
    BoardState,
    Facts,
    bound_text,
    controls_state,
    default_state,
    hidden_choices,
    query_lists,
    state_from_params,
    state_query,
    view_key,
)
from ui.board_views import chart_choices, charted, facts_of, state_chart, state_percent
from ui.context import READ_EVENT, AppContext, ReadEvent
from ui.format import benchmark_choices, markdown_text

__all__ = ["MAX_SEARCH_CHARS", "TRUE_WORDS", "BoardState", "Facts", "controls_state", "default_state", "hidden_choices",
           "query_lists", "state_from_params", "state_query", "view_key"]

log = logging.getLogger(__name__)


# The board's event options, typed as the keywords of Gradio's event listeners they are passed as (`**REDRAW`).
class PrivateReadEvent(ReadEvent):
    api_visibility: Literal["public", "private", "undocumented"]


class RawEvent(TypedDict):
    preprocess: bool
    postprocess: bool


class RedrawEvent(PrivateReadEvent, RawEvent):
    queue: bool
    trigger_mode: Literal["once", "multiple", "always_last"] | None
    show_progress: Literal["full", "minimal", "hidden"]


# Read-only events of the board: run side by side (READ_EVENT), not listed in the API page; a burst of one
# control's events (typing) runs its last only; no progress overlay flickering over the board.
PRIVATE_READ: PrivateReadEvent = {**READ_EVENT, "api_visibility": "private"}
# The board's events skip Gradio's per-component processing (a thread hop and a config copy for each of ~20
# controls, most of a redraw's cost under a crowd): the handlers check what the page sent (controls_state) and
# answer values in the page's own form (the chart serialized once per view and cached).
RAW: RawEvent = {"preprocess": False, "postprocess": False}
REDRAW: RedrawEvent = {**PRIVATE_READ, **RAW, "queue": False, "trigger_mode": "always_last", "show_progress": "hidden"}
# The tab's id (the Overview's buttons select it).
TAB_ID = "leaderboard"
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
TYPING_PAUSE_MS = 180
TYPED_CLASS = "board-typed"
# A header's (or a phone's sort button's) click asks the server to sort and rank by that column. A typed box's
# keys redraw once: TYPING_PAUSE_MS after the last one (a paste or an autofill is an `input` too), or at Enter.
BOARD_JS = """
element.addEventListener('click', (event) => {
  const button = event.target.closest('[data-sort]');
  if (!button || !element.contains(button)) return;
  event.preventDefault();
  trigger('sort', {column: button.dataset.sort});
});
window.toolboardTyped = () => trigger('typed', {});
if (!window.toolboardTypedWired) {
  window.toolboardTypedWired = true;
  let timer = null;
  const typed = (event) => event.target && event.target.closest && event.target.closest('.TYPED');
  const fire = () => { clearTimeout(timer); timer = null; window.toolboardTyped(); };
  document.addEventListener('input', (event) => {
    if (!typed(event)) return;
    clearTimeout(timer);
    timer = setTimeout(fire, PAUSE);
  }, true);
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && typed(event)) fire();
  }, true);
}
""".replace("TYPED", TYPED_CLASS).replace("PAUSE", str(TYPING_PAUSE_MS))


def sequence_js(counter: str, position: int) -> str:
    """Numbers this page's redraws in the order the visitor asked for them: the input at `position` carries it."""
    return (f"(...values) => {{ window.{counter} = (window.{counter} || 0) + 1; values[{position}] = window.{counter};"
            " return values; }")


class Overtaken:
    """The newest redraw number each page (Gradio session) sent: a redraw that finishes after a newer one of the
    same page started is answered with no update, so what the page shows is always its latest choice."""

    MAX_PAGES = 10_000

    def __init__(self) -> None:
        self._newest: OrderedDict[tuple[str, str], int] = OrderedDict()
        self._lock = threading.Lock()

    def start(self, kind: str, page: str, number: Any) -> int:
        sequence = int(number) if isinstance(number, int | float) else 0
        with self._lock:
            key = (kind, page)
            self._newest[key] = max(self._newest.get(key, 0), sequence)
            self._newest.move_to_end(key)
            while len(self._newest) > self.MAX_PAGES:
                self._newest.popitem(last=False)
        return sequence

    def overtaken(self, kind: str, page: str, sequence: int) -> bool:
        with self._lock:
            return self._newest.get((kind, page), 0) > sequence


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
             "counted in the benchmark's data for its view, where its published table names the view, else it has no "
             "interval.",
             "**Ranked**: the published rows and the evaluated runs that are the same experiment (the reference's "
             "requests and sampling, text mode, every item). A row's **rank** is 1 + the number of ranked rows of its "
             "view that are better beyond both 95% intervals in the sorted column (click a score's header to sort and "
             "rank by it), so rows no other row clearly beats share a rank; searching and the model filters hide "
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
    """What the app wires: the page load (restore), a redraw after the store changed (refresh) and the switch to a
    benchmark from another tab (open_benchmark); each answer holds the board, its controls and its chart."""

    load: Callable[..., tuple[Any, ...]]
    load_outputs: list[Any]
    refresh: Callable[..., tuple[Any, ...]]
    inputs: list[Any]
    outputs: list[Any]
    # (benchmark name, *inputs' values) -> outputs' values: the board switched to that benchmark
    open_benchmark: Callable[..., tuple[Any, ...]]
    # How every event answering `outputs` or `load_outputs` must be wired (the answers are in the page's own form)
    event_options: RawEvent = field(default_factory=lambda: RawEvent(**RAW))


def view_choices(benchmark: str) -> list[tuple[str, str]]:
    return [(subset_title(benchmark, view), view) for view in layout_for(benchmark).views]


def column_choices(benchmark: str) -> list[tuple[str, str]]:
    return [(column_title(benchmark, column), column) for column in layout_for(benchmark).columns]


def chart_kind_of(kind: Any) -> str:
    """The chart the page asked for; anything else (an API caller's value) is the default."""
    return kind if kind in charts.CHARTS else charts.CHARTS[0]


def page_form(component: Any, value: Any) -> Any:
    """`value` as Gradio sends it to the page for `component` (what an event without postprocessing must answer)."""
    sent = component.postprocess(value)
    return sent.model_dump() if hasattr(sent, "model_dump") else sent


def bound_box(value: float | None) -> str:
    return "" if value is None else bound_text(value)


WEIGHT_CHOICES = [("any", "any"), ("open weights", "open"), ("closed", "closed")]


@dataclass(frozen=True)
class DrawnView:
    """One state's board as the page draws it, shared by every visitor asking it until the board changes."""

    html: str
    note: str
    models: list[str]  # the view's rows as chart choices (ui.board_views.chart_key), in the table's order


def drawn_view(context: AppContext, state: BoardState) -> DrawnView:
    return context.board_view(("page-html", state), lambda: _drawn_view(context, state))


def _drawn_view(context: AppContext, state: BoardState) -> DrawnView:
    frame = state_percent(context, state)
    apart = frame["apart_reason"].fillna("").astype(str) != ""
    ranked_more, apart_more = bounded(frame[~apart])[1], bounded(frame[apart])[1]
    lines = [empty_reason(state.mode, int((~apart).sum()), int(apart.sum())),
             more_rows_line(int((~apart).sum()) - ranked_more, ranked_more, "ranked rows", state.benchmark),
             more_rows_line(int(apart.sum()) - apart_more, apart_more, "not-ranked rows", state.benchmark)]
    if context.hub_reported.version and get_benchmark(state.benchmark).hub is not None:
        lines.append(context.hub_reported.current.summary())  # when it was read, what was skipped and why
    note = source_note(state.benchmark, state.mode, board_updated(context.board_frame(state.benchmark, state.mode)))
    return DrawnView(board_html(frame, state, state_query(state), [line for line in lines if line]), note,
                     chart_choices(frame))


def warm_up(context: AppContext) -> None:
    """Draw each other benchmark's first view; a failure here only leaves it to the first visitor who asks."""
    for benchmark in all_benchmarks()[1:]:
        try:
            drawn_view(context, default_state(benchmark.name))
        except Exception:  # noqa: BLE001 - the app closing under it (tests), a store being rebuilt
            log.debug("board warm-up of %s skipped", benchmark.name, exc_info=True)
            return


# One click downloads: once the file box shows the view's file, the browser is asked to save it (the box stays, with
# the file's name, for a second copy).
SAVE_DOWNLOAD_JS = """() => {
  let tries = 0;
  const save = () => {
    const link = document.querySelector('#board-download a[download], #board-download a[href*="/file="]');
    if (link) { link.click(); return; }
    if (++tries < 40) setTimeout(save, 50);
  };
  save();
}"""


def build(context: AppContext) -> LeaderboardParts:
    facts = facts_of(context)
    overtaken = Overtaken()
    state = default_state()
    known = facts(state.benchmark, state.mode)
    built_version = context.board_version()
    first = drawn_view(context, state)
    # Each other benchmark's first view drawn in the background, so a visitor's first switch finds it ready.
    threading.Thread(target=warm_up, args=(context,), name="board-warm-up", daemon=True).start()
    layout = layout_for(state.benchmark)
    with gr.Column(elem_classes="board"):
        with gr.Row(elem_classes="board-main"):
            benchmark = gr.Dropdown(benchmark_choices(), value=state.benchmark, label="Benchmark", scale=2, min_width=150)
            view = gr.Dropdown(view_choices(state.benchmark), value=state.view, label=layout.view_label, scale=1,
                               min_width=110, allow_custom_value=True)
            mode = gr.Radio(list(MODES), value=state.mode, label="Scoring mode", scale=1, min_width=170)
            details = gr.Checkbox(label="Per-subset detail", value=False, scale=1, min_width=140)
            search = gr.Textbox(label="Search models", placeholder="model name or notes…", scale=2, min_width=150,
                                elem_classes=TYPED_CLASS)
        # Closed, so the first screen shows ranked rows; a shared link that sets one of these opens it.
        with gr.Accordion("More filters and columns", open=False, elem_classes="board-filters") as more:
            with gr.Row():
                sources = gr.CheckboxGroup(list(SOURCES), value=list(SOURCES), label="Rows from", scale=2, min_width=220)
                weights = gr.Radio(WEIGHT_CHOICES, value="any", label="Model weights", scale=1, min_width=200)
                hide_flagged = gr.Checkbox(label="Hide flagged models", value=False, scale=1, min_width=140)
            with gr.Row():
                # Text boxes, not numbers: empty (no bound) is their default, for the page and the download API.
                min_params = gr.Textbox("", label="Size from (B parameters)", placeholder="e.g. 7", scale=1,
                                        min_width=140, elem_classes=TYPED_CLASS)
                max_params = gr.Textbox("", label="Size up to (B parameters)", placeholder="e.g. 70", scale=1,
                                        min_width=140, elem_classes=TYPED_CLASS)
                organisations = gr.Dropdown(known["organisation"], value=[], multiselect=True, label="Organisation",
                                            info="empty: every organisation", scale=2, min_width=200,
                                            allow_custom_value=True)
                request_modes = gr.Dropdown(known["request_mode"], value=[], multiselect=True, label="Request mode",
                                            info="empty: every mode", scale=1, min_width=160,
                                            allow_custom_value=True)
            columns = gr.Dropdown(column_choices(state.benchmark), value=list(state.columns), multiselect=True,
                                  label="Columns", allow_custom_value=True)
        # The column the board is sorted and ranked by: set by a header's click (the URL's `sort`).
        sort_by = gr.Textbox(state.sort_by, visible=False)
        sequence = gr.Number(0, visible=False)
        board = gr.HTML(first.html, js_on_load=BOARD_JS, elem_classes="board-view", padding=False)
        note = gr.Markdown(first.note)
        with gr.Row():
            csv_button = gr.Button("Download CSV", size="sm", scale=0, min_width=140)
            json_button = gr.Button("Download JSON", size="sm", scale=0, min_width=140)
            download = gr.File(label="Download", interactive=False, height=60, visible=False, elem_id="board-download")
            # Whether the download box shows a file: a redraw hides it (an update, which costs) only then.
            download_shown = gr.Checkbox(False, visible=False)
        # The query string of the board's state; hidden but rendered, so its change runs the URL script.
        address = gr.Textbox("", visible="hidden", elem_classes="board-address")
        # Folded on arrival: drawing the plot (its script and the figure) held a first visit's page busy about 1.4 s on
        # 2 cores, and a click made meanwhile waited for it. A visitor opens it with one click; it draws then.
        with gr.Accordion("Charts", open=False, elem_id="board-charts"):
            with gr.Row():
                chart_kind = gr.Dropdown(list(charts.CHARTS), value="subset bars", label="Chart", scale=1)
                chart_models = gr.Dropdown(first.models, value=charted(first.models, None), multiselect=True,
                                           label="Models to chart", info=f"up to {charts.MAX_MODELS}; default: "
                                           "the first 5 rows", max_choices=charts.MAX_MODELS, scale=3,
                                           allow_custom_value=True)
            plot = gr.Plot(state_chart(context, state, "subset bars", charted(first.models, None)), label="Chart")

    filters = [benchmark, view, search, sources, columns, details, mode, sort_by, organisations, weights,
               request_modes, min_params, max_params, hide_flagged]
    assert len(filters) == len(CONTROL_NAMES)
    inputs = [*filters, sequence, chart_kind, chart_models, download_shown]
    outputs = [*filters, board, note, address, download, download_shown, chart_models, plot]
    typed = (search, min_params, max_params)
    # What each kind of visitor action can change, and so answers: a switch (benchmark, scoring mode) brings the
    # benchmark's own choices and leaves the typed boxes as the visitor is typing them; any other action only
    # redraws the board, its chart and the address (and the sort a header's click chose).
    switch_outputs = [component for component in outputs if component not in typed]
    view_outputs = [sort_by, board, address, download, download_shown, chart_models, plot]
    board_js = sequence_js("toolboardBoardSeq", len(filters))

    def control_values(chosen: BoardState, level: str) -> dict[Any, Any]:
        """The new values of the controls that change, by component: all of them for "all" (a shared link); for
        "switch" (a benchmark or mode picked: new choices) all but the typed boxes, left as the visitor is typing
        them; for "none" and "refresh" only the hidden sort."""
        if level in ("none", "refresh"):
            return {sort_by: chosen.sort_by}
        known = facts(chosen.benchmark, chosen.mode)
        chosen_layout = layout_for(chosen.benchmark)
        values = dict(zip(filters, (
            chosen.benchmark,
            gr.update(choices=view_choices(chosen.benchmark), value=chosen.view, label=chosen_layout.view_label),
            chosen.search, list(chosen.sources),
            gr.update(choices=column_choices(chosen.benchmark), value=list(chosen.columns)), chosen.details,
            chosen.mode, chosen.sort_by, gr.update(choices=known["organisation"], value=list(chosen.organisations)),
            chosen.weights, gr.update(choices=known["request_mode"], value=list(chosen.request_modes)),
            bound_box(chosen.min_params_b), bound_box(chosen.max_params_b), chosen.hide_flagged)))
        return values if level == "all" else {key: value for key, value in values.items() if key not in typed}

    def chart_value(chosen: BoardState, kind: str, models: list[str]) -> Any:
        """The chart as the page takes it (the Plot's own serialization), made once per view and chart."""
        return context.board_view(("chart-sent", chosen, kind, tuple(models)),
                                  lambda: page_form(plot, state_chart(context, chosen, kind, models)))

    def drawn(chosen: BoardState, level: str, kind: Any, models: Any, file_shown: Any,
              answered: list[Any]) -> tuple[Any, ...]:
        """The `answered` outputs' values for `chosen`, the chart included. Level "none" keeps the benchmark and
        mode, so the note (which depends on them and the store only) is not sent again, except by a refresh."""
        shown = drawn_view(context, chosen)
        models_shown = charted(shown.models, [str(m) for m in models] if isinstance(models, list) else None)
        values = {**control_values(chosen, level), board: shown.html, address: state_query(chosen),
                  download: gr.update(value=None, visible=False) if file_shown is True else None,
                  download_shown: False,
                  chart_models: gr.update(choices=shown.models, value=models_shown),
                  plot: chart_value(chosen, chart_kind_of(kind), models_shown)}
        if level != "none":
            values[note] = shown.note
        # an output this level does not change is left as the page shows it
        return tuple(values[component] if component in values else gr.update() for component in answered)

    def nothing(count: int) -> tuple[Any, ...]:
        return tuple(gr.update() for _ in range(count))

    # What each kind of action answers (see switch_outputs).
    answered_by_level = {"switch": switch_outputs, "none": view_outputs}

    def redraw(level: str, change: Callable[[BoardState, Any], BoardState] | None = None) -> Callable[..., tuple[Any, ...]]:
        """A control's event handler: the state its values give (changed by `change`), drawn in one answer."""
        answered = answered_by_level[level]

        # Gradio passes the request and event data by their annotations, placed before the control values.
        def handler(request: gr.Request, event: gr.EventData, *values: Any) -> tuple[Any, ...]:
            *controls, number, kind, models, file_shown = values
            page = getattr(request, "session_hash", None) or ""
            sequence_number = overtaken.start("board", page, number)
            chosen = controls_state(tuple(controls), facts)
            if change is not None:
                chosen = change(chosen, event)
            answer = drawn(chosen, level, kind, models, file_shown, answered)
            return nothing(len(answered)) if overtaken.overtaken("board", page, sequence_number) else answer
        return handler

    def switched_benchmark(chosen: BoardState, _event: Any) -> BoardState:
        fresh = default_state(chosen.benchmark)
        return replace(chosen, view=fresh.view, columns=fresh.columns, sort_by=fresh.sort_by, organisations=(),
                       request_modes=())

    def sorted_by(chosen: BoardState, event: Any) -> BoardState:
        try:  # the event's data, as gr.EventData gives it: its keys as attributes
            column = str(event.column or "")
        except (AttributeError, TypeError):  # no data, or none with a column
            column = ""
        return replace(chosen, sort_by=column) if column in layout_for(chosen.benchmark).columns else chosen

    def wire(event: Callable[..., Any], level: str, change: Callable[[BoardState, Any], BoardState] | None = None) -> None:
        event(redraw(level, change), inputs, answered_by_level[level], js=board_js, **REDRAW)

    # A single-choice dropdown dispatches `input` twice per pick (Gradio 6.31) but `select` once.
    wire(benchmark.select, "switch", switched_benchmark)
    wire(mode.input, "switch")
    wire(view.select, "none")
    for control in (details, sources, columns, organisations, weights, request_modes, hide_flagged):
        wire(control.input, "none")
    # The typed boxes: BOARD_JS's `typed` event once typing pauses (their own `change` would fire on every key).
    wire(board.typed, "none")
    wire(board.sort, "none", sorted_by)
    # The chart's controls redraw through the same handler (its board cached): one sequence of redraws per page, so
    # a chart never lands over a later view.
    for control in (chart_kind, chart_models):
        wire(control.input, "none")
    address.change(None, address, None, js=URL_JS, **PRIVATE_READ)
    # The file box shows once it holds a file (API callers get the plain path); any change of the view
    # empties and hides it again (each redraw), so it never offers the previous view's file.
    for button, kind in ((csv_button, "csv"), (json_button, "json")):
        declare_download(context, kind, button, filters, download).then(
            lambda: (gr.update(visible=True), True), None, [download, download_shown], **PRIVATE_READ).then(
            None, None, None, js=SAVE_DOWNLOAD_JS, **PRIVATE_READ)

    declare_board_api(context)
    load_outputs = [*outputs, more]

    def load(request: gr.Request) -> tuple[Any, ...]:
        """The page's load: the board as the page's URL gives it (a shared link), every invalid value ignored. A
        plain visit to an unchanged board keeps what the page was built with (no redraw at all)."""
        chosen = state_from_params(query_lists(getattr(request, "query_params", None) or {}), facts)
        if chosen == default_state() and context.board_version() == built_version:
            return nothing(len(load_outputs))
        page = getattr(request, "session_hash", None) or ""
        answer = (*drawn(chosen, "all" if chosen != default_state() else "switch", "subset bars", None, None, outputs),
                  gr.update(open=hidden_choices(chosen)) if chosen != default_state() else gr.update())
        # A visitor's own choice made while the page loaded wins over the load's.
        return nothing(len(load_outputs)) if overtaken.overtaken("board", page, 0) else answer

    def refresh(*values: Any) -> tuple[Any, ...]:
        """The board redrawn as the controls stand (the store changed: other results loaded)."""
        *controls, _number, kind, models, file_shown = values
        return drawn(controls_state(tuple(controls), facts), "refresh", kind, models, file_shown, outputs)

    def open_benchmark(name: str, *values: Any) -> tuple[Any, ...]:
        """Another tab's link to a benchmark's table: the benchmark with its own views, columns, sort and facts
        (what a visitor's own pick brings)."""
        *controls, _number, kind, models, file_shown = values
        chosen = switched_benchmark(controls_state((name, *controls[1:]), facts), None)
        return drawn(chosen, "switch", kind, models, file_shown, outputs)

    return LeaderboardParts(load, load_outputs, refresh, inputs, outputs, open_benchmark)


def more_rows_line(shown: int, more: int, what: str, benchmark: str) -> str:
    """The line over a table holding only part of the view's rows (plain text; empty when it holds them all)."""
    if not more:
        return ""
    narrow = PAGE_NARROWING.format(view=layout_for(benchmark).view_label.lower())
    return f"{more:,} more {what} are not shown ({shown:,} of {shown + more:,} are, in the table's order). {narrow}"
