"""Model tab: one model across every benchmark (its figures with their 95% intervals, drawn; its facts; its runs on
this deployment, as the visitor may see them: evaluators/service/model_page.py) and two to six models compared on
one benchmark's view. Opened by the app's address with `?model=<urllib.parse.quote(name)>` (the board's model
names link there). Every text from a model, a file or a visitor is escaped; the page is cards in one column, so a
phone reads it as a desktop does."""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gradio as gr
import plotly.graph_objects as go  # type: ignore[import-untyped]  # Plotly ships no type information

from evaluators.core.display_names import subset_title
from evaluators.core.errors import ToolboardError
from evaluators.core.registry import all_benchmarks
from evaluators.service import model_page
from ui.api import declare_model_api
from ui.context import READ_EVENT, AppContext
from ui.format import MODEL_PARAMETER, interval_parts, model_href, user_error
from ui.tab_select import select_tab_js
from ui.visitor import owner_of

# Tab id (the deep link selects it) and the address's parameter naming the model.
TAB_ID = "model"
SOURCE_COLOURS = {"published": "#64748b", "evaluated": "#2563eb", "uploaded": "#d97706"}
CSS = """
.model-page { display: flex; flex-direction: column; gap: .75em; }
.model-cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(260px, 1fr)); gap: .6em; }
.model-card { border: 1px solid var(--border-color-primary); border-radius: 8px; padding: .5em .7em; min-width: 0; }
.model-card h4 { margin: 0 0 .2em 0; font-size: var(--text-md); }
.model-head { font-size: var(--text-sm); color: var(--body-text-color-subdued); }
.model-figure { white-space: nowrap; }
.model-figure b { font-size: 1.25em; }
.model-ci { color: var(--body-text-color-subdued); font-size: var(--text-sm); white-space: nowrap; }
.model-more { font-size: var(--text-sm); line-height: 1.5; }
.model-more span { white-space: nowrap; margin-right: .8em; display: inline-block; }
.model-facts { display: flex; flex-wrap: wrap; gap: .3em 1.2em; }
.model-facts span { white-space: nowrap; }
.model-apart { font-size: var(--text-sm); color: var(--body-text-color-subdued); overflow-wrap: anywhere; }
"""


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}"


def _interval(figure: dict[str, Any]) -> str:
    """The 95% interval as the board writes it (ui/format.interval_parts: `± 1.2`, or each side where lopsided)."""
    if figure["value"] is None or figure["low"] is None or figure["high"] is None:
        return ""
    _, interval = interval_parts(figure["value"] * 100, figure["low"] * 100, figure["high"] * 100)
    return f"<span class='model-ci'>{html.escape(interval)}</span>"


def _fact_line(facts: dict[str, Any] | None) -> str:
    if facts is None:
        return "<p class='model-head'>No facts known for this model (organisation, size, licence).</p>"
    size = "not disclosed" if facts["params_b"] is None else f"{facts['params_b']:g} B parameters"
    weights = {True: "open weights", False: "closed weights", None: "weights: not known"}[facts["open_weights"]]
    parts = [f"<span><b>Organisation</b> {html.escape(str(facts['organisation'] or '—'))}</span>",
             f"<span><b>Size</b> {html.escape(size)}</span>",
             f"<span><b>Licence</b> {html.escape(str(facts['licence'] or 'not known'))}</span>",
             f"<span>{html.escape(weights)}</span>"]
    for label, key in (("Link", "link"), ("Source", "source")):
        url = str(facts.get(key) or "")
        if url.startswith(("https://", "http://")):
            parts.append(f"<span><a href='{html.escape(url)}' target='_blank' rel='noopener'>{label}</a></span>")
    return f"<div class='model-facts'>{''.join(parts)}</div>"


def _row_card(part: dict[str, Any], row: dict[str, Any], page_model: str = "") -> str:
    figures = row["figures"]
    headline = next((f for f in figures if f["column"] == part["headline"]), figures[0] if figures else None)
    status = "ranked" if row["ranked"] else "not ranked"
    # The board's own spelling when it is not the page's name: a snapshot, a request mode ("(FC)", "(Prompt)").
    spelled = "" if row["model"] == page_model else (
        f" · {'snapshot ' if row.get('snapshot') else 'as '}<b>{html.escape(row['model'])}</b>")
    head = (f"<div class='model-head'>{html.escape(part['view_label'])} {html.escape(row['view_title'])} · "
            f"{html.escape(row['source'])} · {status}{' · ' + html.escape(row['updated']) if row['updated'] else ''}"
            f"{spelled}</div>")
    top = ("<div class='model-figure'>no figure</div>" if headline is None else
           f"<div class='model-figure'>{html.escape(headline['title'])} <b>{_percent(headline['value'])}</b> "
           f"{_interval(headline)}</div>")
    others = "".join(f"<span>{html.escape(f['title'])} {_percent(f['value'])}</span>" for f in figures if f is not headline)
    apart = f"<div class='model-apart'>{html.escape(row['apart_reason'])}</div>" if row["apart_reason"] else ""
    return f"<div class='model-card'>{head}{top}<div class='model-more'>{others}</div>{apart}</div>"


def page_html(page: dict[str, Any]) -> str:
    """The model's name, facts and per-benchmark cards (values in %, each headline with its 95% interval)."""
    if not page["query"]:
        return "<div class='model-page'><p>Choose a model above (type to search), or open one from a board row.</p></div>"
    if not page["found"]:
        offered = "".join(f"<li><a href='{html.escape(model_href(name))}'>{html.escape(name)}</a></li>"
                          for name in page["suggestions"])
        hint = f"<p>Models with a similar name:</p><ul>{offered}</ul>" if offered else "<p>Type part of its name above.</p>"
        return (f"<div class='model-page'><h2>Model not found: {html.escape(page['query'])}</h2>"
                f"<p>No board, run or facts entry knows this model.</p>{hint}</div>")
    sections = []
    for part in page["benchmarks"]:
        cards = "".join(_row_card(part, row, page["model"]) for row in part["rows"])
        sections.append(f"<h3>{html.escape(part['title'])}</h3><div class='model-cards'>{cards}</div>")
    figures = "".join(sections) or "<p>No board holds figures for this model yet.</p>"
    return (f"<div class='model-page'><h2>{html.escape(page['model'])}</h2>{_fact_line(page['facts'])}"
            f"<p class='model-head'>Figures in %, each headline with its 95% interval (Wilson, over the items behind "
            f"it); published figures are the official tables'.</p>{figures}</div>")


def runs_html(runs: list[dict[str, Any]]) -> str:
    """The model's runs on this deployment as cards (no endpoint, key or configuration: model_page.model_runs); a
    run the visitor may not see ("hidden") as the Queue shows it, without its id."""
    if not runs:
        return "<div class='model-page'><h3>Runs on this deployment</h3><p>None yet.</p></div>"
    cards = []
    for run in runs:
        if run.get("hidden"):
            cards.append(_queued_card(run))
            continue
        facts = [f"{run['done']:,} of {run['items']:,} items"]
        if run["request_errors"]:
            facts.append(f"{run['request_errors']:,} request errors")
        if run["latency_mean_s"] is not None:
            facts.append(f"mean latency {run['latency_mean_s']:.2f} s")
        if run["tokens"]:
            facts.append(f"{run['tokens']:,} tokens")
        when = run["finished"] or run["created"] or ""
        cards.append(f"<div class='model-card'><h4><code>{html.escape(run['run_id'])}</code></h4>"
                     f"<div class='model-head'>{html.escape(run['benchmark_title'])}"
                     f"{' ' + html.escape(subset_title(run['benchmark'], run['language'])) if run['language'] else ''} · "
                     f"{html.escape(run['source'])} · "
                     f"{html.escape(run['status'])} {html.escape(when)}</div>"
                     f"<div class='model-more'>{''.join(f'<span>{html.escape(f)}</span>' for f in facts)}</div></div>")
    hidden = ("<p class='model-head'>A run listed without its id is one you may not open (another visitor's, until it "
              "has finished and they share it): it is shown as the Queue shows it.</p>"
              if any(run.get("hidden") for run in runs) else "")
    return (f"<div class='model-page'><h3>Runs on this deployment ({len(runs)})</h3>"
            f"<div class='model-cards'>{''.join(cards)}</div>{hidden}</div>")


def _queued_card(run: dict[str, Any]) -> str:
    """A run the visitor may not see: benchmark, language, status, progress and days only (as the Queue)."""
    language = f" {subset_title(run['benchmark'], run['language'])}" if run["language"] else ""
    days = " · ".join(f"{label} {run[key]}" for label, key in (("created", "created"), ("finished", "finished"))
                      if run[key])
    return (f"<div class='model-card'><h4>{html.escape(run['benchmark_title'] + language)}</h4>"
            f"<div class='model-head'>{html.escape(run['status'])}{' · ' + html.escape(days) if days else ''}</div>"
            f"<div class='model-more'><span>{run['done']:,} of {run['items']:,} items</span></div></div>")


def _empty_figure(message: str) -> go.Figure:
    figure = go.Figure()
    figure.add_annotation(text=html.escape(message), showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    figure.update_layout(xaxis={"visible": False}, yaxis={"visible": False}, height=160, margin={"l": 10, "r": 10, "t": 10, "b": 10})
    return figure


def _whiskers(values: list[float | None], lows: list[float | None], highs: list[float | None]) -> dict[str, Any]:
    return {"type": "data", "symmetric": False, "thickness": 1.5, "width": 4,
            "array": [None if v is None or h is None else (h - v) * 100 for v, h in zip(values, highs)],
            "arrayminus": [None if v is None or lo is None else (v - lo) * 100 for v, lo in zip(values, lows)]}


def figures_chart(page: dict[str, Any]) -> go.Figure:
    """Each board row's headline figure for the model as a horizontal bar with its 95% interval, by source."""
    bars: dict[str, dict[str, list[Any]]] = {}
    for part in page["benchmarks"]:
        for row in part["rows"]:
            figure = next((f for f in row["figures"] if f["column"] == part["headline"]), None)
            if figure is None:
                continue
            label = html.escape(f"{part['title']} · {row['view_title']} · {figure['title']} · {row['source']}")
            found = bars.setdefault(row["source"], {"y": [], "x": [], "low": [], "high": []})
            found["y"].append(label)
            found["x"].append(figure["value"])
            found["low"].append(figure["low"])
            found["high"].append(figure["high"])
    if not bars:
        return _empty_figure("No figure to draw for this model" if page["query"] else "Choose a model")
    chart = go.Figure()
    for source, found in bars.items():
        chart.add_trace(go.Bar(
            name=source, orientation="h", y=found["y"], x=[v * 100 for v in found["x"]], width=0.45,
            error_x=_whiskers(found["x"], found["low"], found["high"]), marker_color=SOURCE_COLOURS.get(source),
            hovertemplate="%{y}: %{x:.1f}%<extra></extra>"))
    labels = [label for found in bars.values() for label in found["y"]]
    # Each bar's name above it, not beside it: on a 390 px phone names at the side would leave the bars no room.
    for label in labels:
        chart.add_annotation(text=label, x=0, xref="paper", xanchor="left", y=label, yshift=17, showarrow=False,
                             font={"size": 12})
    # One bar per label (each names its source): overlaid, so no bar keeps room for the other sources' bars.
    chart.update_layout(barmode="overlay", height=90 + 46 * len(labels), showlegend=False,
                        xaxis={"title": {"text": "headline figure (%), 95% interval"}, "range": [0, 100]},
                        yaxis={"showticklabels": False, "autorange": "reversed"},
                        margin={"l": 10, "r": 10, "t": 44, "b": 40})
    return chart


def comparison_chart(compared: dict[str, Any]) -> go.Figure:
    """Grouped bars: one group per column of the view (display names), one bar per model, with 95% whiskers."""
    if not compared["models"]:
        return _empty_figure("None of these models has figures in this view")
    columns = compared["columns"]
    chart = go.Figure()
    for model in compared["models"]:
        by_column = {f["column"]: f for f in model["figures"]}
        values = [by_column.get(c["column"], {}).get("value") for c in columns]
        lows = [by_column.get(c["column"], {}).get("low") for c in columns]
        highs = [by_column.get(c["column"], {}).get("high") for c in columns]
        chart.add_trace(go.Bar(
            name=html.escape(f"{model['identity']} ({model['source']})"), x=[html.escape(c["title"]) for c in columns],
            y=[None if v is None else v * 100 for v in values], error_y=_whiskers(values, lows, highs),
            hovertemplate="%{x}: %{y:.1f}%<extra>%{fullData.name}</extra>"))
    lower = [c["title"] for c in columns if c["lower_is_better"]]
    title = f"{compared['title']} · {compared['view_label']} {compared['view_title']}"
    chart.update_layout(barmode="group", height=480, title={"text": html.escape(title)},
                        yaxis={"title": {"text": "score (%), 95% interval" + (f"; lower is better: {', '.join(lower)}"
                                                                             if lower else "")}, "range": [0, 100]},
                        legend={"orientation": "h", "x": 0, "y": -0.2, "yanchor": "top"},
                        margin={"l": 50, "r": 10, "t": 60})
    return chart


def comparison_html(compared: dict[str, Any]) -> str:
    """Which row stands for each model, the latency of the runs behind it, and what could not be compared."""
    cards = []
    for model in compared["models"]:
        latency = ("no runs evaluated here behind this row" if model["latency_mean_s"] is None else
                   f"latency mean {model['latency_mean_s']:.2f} s, p95 {model['latency_p95_s']:.2f} s")
        if model.get("cost") is not None:
            latency += f"; ${model['cost']:.3g} per 1,000 items"
        runs = ", ".join(model["run_ids"])
        spelled = "" if model["model"] == model["identity"] else f" <span class='model-ci'>as {html.escape(model['model'])}</span>"
        cards.append(f"<div class='model-card'><h4>{html.escape(model['identity'])}{spelled}</h4>"
                     f"<div class='model-head'>{html.escape(model['source'])}"
                     f"{' · run ' + html.escape(runs) if runs else ''}</div>"
                     f"<div class='model-more'><span>{html.escape(latency)}</span></div>"
                     f"{'<div class=model-apart>not ranked: ' + html.escape(model['apart_reason']) + '</div>' if model['apart_reason'] else ''}"
                     f"</div>")
    missing = (f"<p>No row in this view for: {html.escape(', '.join(compared['missing']))}.</p>"
               if compared["missing"] else "")
    return (f"<div class='model-page'><div class='model-cards'>{''.join(cards)}</div>{missing}"
            f"<p class='model-head'>Each model by one row of the view: its published row when ranked, else its run "
            f"evaluated here, else its upload. {html.escape(compared['cost_note'])}</p></div>")


@dataclass
class ModelTab:
    """What the app wires on page load: `open_from_url` (the page the address names; input: the visitor's token;
    outputs: `url_outputs`) and `select_from_url_js` (the page's script selecting the tab when the address names a
    model: ui/tab_select.py says why no event answers into the tabs)."""

    open_from_url: Callable[..., tuple[Any, ...]]
    url_outputs: list[Any]
    select_from_url_js: str


def build(context: AppContext, visitor: gr.BrowserState) -> ModelTab:
    """The tab; `visitor` holds the page's visitor token (whose runs the page shows with their ids)."""
    # Each model once, by its name, labelled with the other spellings the boards use (typing any of them finds it).
    names = model_page.board_model_choices(context)
    benchmarks = [(benchmark.title, benchmark.name) for benchmark in all_benchmarks()]
    first_views, first_view = model_page.benchmark_views(benchmarks[0][1])
    picker = gr.Dropdown(names, value=None, label="Model (type to search)", allow_custom_value=True, filterable=True)
    page = gr.HTML(page_html(model_page.model_page(context, "")), css_template=CSS, js_on_load=None)
    chart = gr.Plot(label="Figures with their 95% intervals", visible=False)
    runs = gr.HTML(css_template=CSS, js_on_load=None)
    gr.Markdown("### Compare models")
    chosen = gr.Dropdown(names, value=[], multiselect=True, max_choices=model_page.MAX_COMPARED, allow_custom_value=True,
                         label=f"Models ({model_page.MIN_COMPARED} to {model_page.MAX_COMPARED})")
    with gr.Row():
        benchmark = gr.Dropdown(benchmarks, value=benchmarks[0][1], label="Benchmark")
        view = gr.Dropdown(first_views, value=first_view, label="View")
    compare = gr.Button("Compare", size="sm")
    compare_note = gr.Markdown(elem_id="compare-note")
    compare_chart = gr.Plot(label="Per-column figures with their 95% intervals", visible=False)
    compare_detail = gr.HTML(css_template=CSS, js_on_load=None)

    declare_model_api(context)

    def viewer(token: Any, request: gr.Request | None) -> str | None:
        """The visitor, or nobody (only the runs everyone may see) when the token is not valid."""
        try:
            return owner_of(context, token, request)
        except ToolboardError:
            return None

    def show(name: str | None, token: Any = None, request: gr.Request | None = None) -> tuple[Any, ...]:
        """The page of `name` for whoever asks: its cards, its chart, its runs, and the comparison's models led by it."""
        try:
            found = model_page.model_page(context, str(name or ""), owner=viewer(token, request))
        except Exception as exc:  # noqa: BLE001 - the visitor reads why
            return (f"<p>⚠️ {html.escape(context.redact_paths(str(exc)))}</p>", gr.update(visible=False), "", gr.update())
        drawn = bool(found["found"] and found["benchmarks"])
        # The comparison offers every model of the boards now (runs finished since the page was built too).
        offered = (gr.update(choices=model_page.board_model_choices(context), value=[found["model"]]) if found["found"]
                   else gr.update())
        return (page_html(found), gr.update(value=figures_chart(found), visible=drawn),
                runs_html(found["runs"]) if found["found"] else "", offered)

    page_outputs = [page, chart, runs, chosen]

    def unchanged() -> tuple[Any, ...]:
        return tuple(gr.update() for _ in (picker, *page_outputs))

    def opened(name: str, token: Any, request: gr.Request | None) -> tuple[Any, ...]:
        """The Model tab's picker and page showing `name`."""
        shown = show(name, token, request)
        found = shown[-1].get("value") if isinstance(shown[-1], dict) else None
        return (gr.update(choices=model_page.board_model_choices(context), value=found[0] if found else name), *shown)

    def open_from_url(token: Any, request: gr.Request) -> tuple[Any, ...]:
        """On page load (inputs: the visitor's token): with `?model=NAME` in the address, the Model tab filled (the
        page's own script selects it: `select_from_url_js`); else nothing changes."""
        params = getattr(request, "query_params", None) or {}
        name = str(params.get(MODEL_PARAMETER) or "").strip()
        return opened(name, token, request) if name else unchanged()

    def views_of(name: str) -> Any:
        choices, default = model_page.benchmark_views(name)
        return gr.update(choices=choices, value=default)

    def compared(models: list[str] | None, benchmark_name: str, view_name: str | None) -> tuple[Any, ...]:
        try:
            found = model_page.compare_models(context, models, benchmark_name, view_name or None)
        except Exception as exc:  # noqa: BLE001 - the visitor reads why
            return user_error(exc, context.redact_paths), gr.update(visible=False), ""
        return "", gr.update(value=comparison_chart(found), visible=True), comparison_html(found)

    # The address follows the model shown, so it can be shared (in the browser, no call).
    picker.input(None, picker, None, api_visibility="private",
                 js=f"(name) => {{ const url = new URL(window.location.href); "
                    f"if (name) url.searchParams.set('{MODEL_PARAMETER}', name); "
                    f"else url.searchParams.delete('{MODEL_PARAMETER}'); "
                    "window.history.replaceState(null, '', url); return name; }")
    picker.input(show, [picker, visitor], page_outputs, api_visibility="private", **READ_EVENT)
    benchmark.input(views_of, benchmark, view, api_visibility="private", **READ_EVENT)
    compare.click(compared, [chosen, benchmark, view], [compare_note, compare_chart, compare_detail],
                  api_visibility="private", **READ_EVENT)
    return ModelTab(open_from_url=open_from_url, url_outputs=[picker, *page_outputs],
                    select_from_url_js=select_tab_js(TAB_ID, only_with_parameter=MODEL_PARAMETER))
