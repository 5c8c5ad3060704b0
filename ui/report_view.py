"""A finished report shown as the board shows it: a summary line, a table of the board's views (values
in %, one decimal, with n), a per-subset table when the subsets are not the board's views, and the raw
JSON behind a closed accordion. Everything comes from the benchmark's declarations; views, subsets and
columns read as their declared titles (evaluators/core/display_names.py), the keys stay in the raw JSON."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import gradio as gr
import pandas as pd

from evaluators.core.declarations import Metric
from evaluators.core.display_names import column_title, error_type_title, subset_title
from evaluators.core.errors import ToolboardError
from evaluators.core.registry import Benchmark, get_benchmark
from evaluators.service.board import column_n
from ui.format import markdown_text

NOTE = "Values in % (one decimal); counts as they are; n = items behind the row."
SCORED_AT_THE_END = "scored at the end"
# What the hidden tables hold until a report comes (a table with no column at all is not one to draw).
EMPTY_VIEWS = pd.DataFrame(columns=["view", "n"])
EMPTY_SUBSETS = pd.DataFrame(columns=["Subset", "n"])
SUBSET_HEADER = "Subset"


@dataclass(frozen=True)
class ReportView:
    """What the page shows of one report."""

    summary: str  # Markdown, escaped
    views: pd.DataFrame  # one row per board view (a language, a subset, a tool…)
    subsets: pd.DataFrame | None  # one row per subset; None when the views are the subsets already


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and not math.isnan(value)


def cell(value: Any, kind: str) -> str:
    """A value as the board prints it: a share in % with one decimal, a count as it is, blanks empty."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if kind == "fraction" and is_number(value):
        return f"{value * 100:.1f}"
    if kind == "count" and is_number(value):
        return f"{value:g}"
    return str(value)


def _benchmark_of(report: Mapping[str, Any]) -> Benchmark | None:
    try:
        return get_benchmark(str(report.get("benchmark") or ""))
    except ToolboardError:
        return None


def _ordered_views(benchmark: Benchmark, report: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The report's board views, in the layout's order (views the layout does not list come last)."""
    layout = benchmark.board_layout()
    views = layout.run_values(dict(report))
    order = [v for v in layout.views if v in views] + [v for v in views if v not in layout.views]
    return {view: views[view] for view in order}


def headline(report: Mapping[str, Any] | None) -> tuple[str, float | None]:
    """(column, share) of the benchmark's headline: the layout's default sort column, from the summary or
    else the first view that has it; a report without it (e.g. a run of part of the subsets) falls back
    to the first other share column with a value. ("", None) when nothing is scored."""
    if not report:
        return "", None
    benchmark = _benchmark_of(report)
    if benchmark is None:
        return "", None
    layout = benchmark.board_layout()
    summary = report.get("summary") or {}
    try:
        views = _ordered_views(benchmark, report)
    except Exception:  # noqa: BLE001 - an odd report: the summary alone (the jobs panel must keep refreshing)
        views = {}
    for column in dict.fromkeys((layout.default_sort, *layout.columns, *layout.detail_columns)):
        if benchmark.metric(column).kind != "fraction":
            continue
        for values in (summary, *views.values()):
            if is_number(values.get(column)):
                return column, float(values[column])
    return layout.default_sort, None


def score_text(report: Mapping[str, Any] | None) -> str:
    """The jobs table's score of a finished run: `Overall 61.7%` (the column's title); empty without a score."""
    column, value = headline(report)
    if value is None:
        return ""
    return f"{column_title(str((report or {}).get('benchmark') or ''), column)} {value * 100:.1f}%"


def _views_table(benchmark: Benchmark, report: Mapping[str, Any], with_details: bool) -> pd.DataFrame:
    layout = benchmark.board_layout()
    views = _ordered_views(benchmark, report)
    details = layout.detail_columns if with_details else ()
    # The board's columns always (an empty one says it was not measured); labels and details when filled.
    columns = [c for c in dict.fromkeys((*layout.text_columns, *layout.columns, *details))
               if c in layout.columns or any(values.get(c) is not None for values in views.values())]
    rows = []
    for view, values in views.items():
        row = [subset_title(benchmark.name, view)]
        row += [cell(values.get(c), benchmark.metric(c).kind if c not in layout.text_columns else "text") for c in columns]
        n = column_n(dict(report), benchmark, view, layout.default_sort)
        rows.append([*row, "" if n is None else str(n)])
    return pd.DataFrame(rows, columns=[layout.view_label, *_titles(benchmark, columns), "n"])


def _titles(benchmark: Benchmark, columns: list[str]) -> list[str]:
    """Headers as a person reads them; two columns with one title keep their keys apart."""
    titles = [column_title(benchmark.name, c) for c in columns]
    return [f"{title} ({c})" if titles.count(title) > 1 else title for title, c in zip(titles, columns)]


def _subsets_table(benchmark: Benchmark, report: Mapping[str, Any]) -> pd.DataFrame:
    subsets = report.get("subsets") or {}
    # Declared per-subset metrics only: reports may keep helper counts the board never shows.
    columns = [m.name for m in benchmark.metrics
               if any((s.get("metrics") or {}).get(m.name) is not None for s in subsets.values())]
    rows = [[subset_title(benchmark.name, name), *(cell((s.get("metrics") or {}).get(c), benchmark.metric(c).kind)
                                                   for c in columns), "" if s.get("n") is None else str(s["n"])]
            for name, s in subsets.items()]
    return pd.DataFrame(rows, columns=[SUBSET_HEADER, *_titles(benchmark, columns), "n"])


def _summary_line(benchmark: Benchmark, summary: Mapping[str, Any], column: str) -> str:
    """The summary metrics in their declared order, the headline `column` in bold."""
    parts = []
    shown = [m.name for m in benchmark.summary_metrics] + [k for k in summary if k not in benchmark.summary_names]
    for name in shown:
        if name not in summary:
            continue
        metric = benchmark.metric(name)
        value = summary[name]
        if name not in benchmark.summary_names:
            if value is None:  # an undeclared label the report left empty (e.g. how parameters were judged)
                continue
            metric = Metric(name, column_title(benchmark.name, name), kind="fraction" if is_number(value) else "text")
        text = cell(value, metric.kind) or "—"
        unit = "%" if metric.kind == "fraction" and is_number(value) else ""
        part = f"{markdown_text(metric.shown_as)} {markdown_text(text)}{unit}"
        parts.append(f"**{part}**" if name == column else part)
    return " · ".join(parts)


def report_view(report: Mapping[str, Any] | None) -> ReportView:
    """The tables and summary of a report as stored (Store.load_report) or as a checked upload has it."""
    try:
        return _report_view(report)
    except Exception:  # noqa: BLE001 - an odd report (an old schema, a hub copy) must not break the page's refresh
        return ReportView("This report could not be shown as tables: see the raw JSON.", pd.DataFrame(), None)


def _report_view(report: Mapping[str, Any] | None) -> ReportView:
    if not report:
        return ReportView("", pd.DataFrame(), None)
    benchmark = _benchmark_of(report)
    if benchmark is None:
        return ReportView(f"Report of an unknown benchmark ({markdown_text(str(report.get('benchmark')))}): see the raw "
                          "JSON.", pd.DataFrame(), None)
    views = _ordered_views(benchmark, report)
    subsets = report.get("subsets") or {}
    # Subsets that are not the board's views (e.g. categories under a language) get their own table.
    apart = bool(subsets) and not set(subsets) <= set(views)
    column, _ = headline(report)
    mode = markdown_text(str(report.get("mode") or ""))
    lines = [f"**{markdown_text(benchmark.title)}**" + (f" ({mode} scoring)" if mode else "") + ": "
             + (_summary_line(benchmark, report.get("summary") or {}, column) or "no summary")]
    if isinstance(report.get("strict_summary"), Mapping):
        lines.append("Strict scoring: " + _summary_line(benchmark, report["strict_summary"], column))
    total = sum(s.get("n") or 0 for s in subsets.values())
    errors = {str(k): v for k, v in (report.get("errors") or {}).items() if is_number(v) and v}
    if errors:
        listed = ", ".join(f"{markdown_text(error_type_title(kind))} {count:g}"
                           for kind, count in sorted(errors.items(), key=lambda e: -e[1]))
        lines.append(f"Error types (of {total} items): {listed}.")
    if report.get("missing"):
        lines.append(f"{markdown_text(str(report['missing']))} items had no prediction: scored as failures.")
    if report.get("unavailable"):
        unavailable = (subset_title(benchmark.name, str(name)) for name in report["unavailable"])
        lines.append("Not in the data: " + markdown_text(", ".join(unavailable)) + ".")
    lines.append(markdown_text(NOTE))
    return ReportView("\n\n".join(lines), _views_table(benchmark, report, with_details=not apart),
                      _subsets_table(benchmark, report) if apart else None)


@dataclass
class ReportPanel:
    """The page's parts for one report: summary, tables, and the raw JSON in a closed accordion."""

    summary: gr.Markdown
    views: gr.Dataframe
    subsets: gr.Dataframe
    accordion: gr.Accordion
    raw: gr.JSON

    def outputs(self) -> list[Any]:
        return [self.summary, self.views, self.subsets, self.accordion]

    def updates(self, report: Mapping[str, Any] | None) -> list[Any]:
        """Values for `outputs()`; nothing shown without a report."""
        view = report_view(report)
        shown = bool(report)
        return [view.summary,
                gr.update(value=view.views if not view.views.empty else EMPTY_VIEWS.copy(),
                          visible=shown and not view.views.empty),
                gr.update(value=view.subsets if view.subsets is not None else EMPTY_SUBSETS.copy(),
                          visible=view.subsets is not None),
                gr.update(visible=shown)]

    def all_outputs(self) -> list[Any]:
        """`outputs()` and the raw JSON, for events that set the report itself."""
        return [*self.outputs(), self.raw]

    def all_updates(self, report: Mapping[str, Any] | None) -> list[Any]:
        return [*self.updates(report), report]


def build_report_panel(title: str) -> ReportPanel:
    """Summary line, the views table, the per-subset table and the raw JSON (closed), all hidden until a
    report comes."""
    summary = gr.Markdown()
    views = gr.Dataframe(EMPTY_VIEWS.copy(), interactive=False, label=f"{title}: as on the leaderboard", wrap=True,
                         max_height=360, visible=False, buttons=["copy"])
    subsets = gr.Dataframe(EMPTY_SUBSETS.copy(), interactive=False, label=f"{title}: per subset", wrap=True, max_height=420,
                           visible=False, buttons=["copy"])
    with gr.Accordion("Raw report (JSON)", open=False, visible=False) as accordion:
        raw = gr.JSON(label=title)
    return ReportPanel(summary, views, subsets, accordion, raw)
