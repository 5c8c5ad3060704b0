"""Leaderboard tables: published rows, runs evaluated here and uploaded prediction files, side by
side in the layout of each benchmark's published table. Pure data (pandas); the app only shows it.

Each benchmark's package declares its table (core/board_layout.py): views (a language, a subset, a
tool…) and metric columns. Values are fractions in [0, 1], as in reports; the app formats them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pandas as pd

from evaluators.core.board_layout import BoardLayout
from evaluators.core.errors import DataError
from evaluators.core.leaderboard import load_published
from evaluators.core.registry import Benchmark, get_benchmark
from evaluators.engine.settings import SAMPLING_FIELDS, roles_and_options
from evaluators.engine.store import RunRow, Store

SOURCES = ("published", "evaluated", "uploaded")
SOURCE_OF_RUN = {"endpoint": "evaluated", "upload": "uploaded"}
IDENTITY_COLUMNS = ("model", "source")
# Why a row is kept apart from the published ranking (empty: published, or the same experiment).
APART_COLUMN = "apart_reason"
INFO_COLUMNS = ("request_errors", "mode", "run_id", "fingerprint", "details")


def layout_for(benchmark: str) -> BoardLayout:
    """The benchmark's table as its package declares it."""
    return get_benchmark(benchmark).board_layout()


def published_table(benchmark: str) -> dict[str, Any] | None:
    try:
        return load_published(benchmark)
    except DataError:
        return None


def _published_rows(benchmark: str, layout: BoardLayout) -> list[dict[str, Any]]:
    table = published_table(benchmark)
    if table is None:
        return []
    link = (table.get("source") or {}).get("url", "")
    rows = []
    for row in table.get("rows", []):
        view, values = layout.published_values(row)
        rows.append({"model": row["model"], "source": "published", "view": view, "mode": "official", "run_id": "",
                     "fingerprint": "", "details": link, **values})
    return rows + _published_macro_rows(layout, rows)


def _published_macro_rows(layout: BoardLayout, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The macro view of a published table that prints only per-part rows: the mean of each column
    over the parts that have a value (as our reports compute it), labelled as computed here."""
    if layout.macro_view is None:
        return []
    parts = [v for v in layout.views if v != layout.macro_view]
    grouped: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for row in rows:
        if row["view"] in parts:
            labels = tuple(str(row.get(column, "")) for column in layout.text_columns)
            grouped.setdefault((row["model"], labels), {})[row["view"]] = row
    macro = []
    for (model, _), by_view in grouped.items():
        if set(by_view) != set(parts):
            continue
        values: dict[str, Any] = {}
        for column in layout.columns:
            numbers = [by_view[p][column] for p in parts if isinstance(by_view[p].get(column), int | float)]
            values[column] = round(sum(numbers) / len(numbers), 4) if numbers else None
        first = by_view[parts[0]]
        extras = {c: first.get(c) for c in layout.text_columns if first.get(c) is not None}
        macro.append({"model": model, "source": "published", "view": layout.macro_view, "mode": "official", "run_id": "",
                      "fingerprint": "", "details": f"mean over the {len(parts)} published per-{layout.view_label.lower()} "
                      "rows, computed here", **extras, **values})
    return macro


def _run_rows(benchmark: Benchmark, layout: BoardLayout, store: Store, mode: str) -> list[dict[str, Any]]:
    rows = []
    finished, repeats = _distinct_runs([run for run in store.list_runs()
                                        if run.benchmark == benchmark.name and run.status == "finished"])
    all_totals = store.all_run_totals([run.id for run in finished if run.source == "endpoint"])
    for run in finished:
        report = store.load_report(run.id, mode)
        if report is None:
            continue
        # Failed requests score as failures: the count stays beside the scores so nobody mistakes them.
        errors = all_totals[run.id]["errors"] if run.source == "endpoint" else None
        apart = apart_reason(run, benchmark, all_totals.get(run.id))
        for view, values in layout.run_values(report).items():
            rows.append({"model": run.model, "source": SOURCE_OF_RUN.get(run.source, run.source), "view": view,
                         "mode": mode, "run_id": run.id, "fingerprint": run.fingerprint,
                         "details": _run_details(run) + _repeated(repeats.get(run.id, 0)),
                         "request_errors": errors, "pair_key": _pair_key(run), APART_COLUMN: apart, **values})
    return rows


def _distinct_runs(runs: list[RunRow]) -> tuple[list[RunRow], dict[str, int]]:
    """One run per distinct experiment (same settings fingerprint, language, model, source and selection): the
    newest (runs come newest first); with how many identical earlier runs each stands for."""
    kept: dict[tuple[str, str, str], RunRow] = {}
    repeats: dict[str, int] = {}
    for run in runs:
        key = (run.fingerprint, run.language or "", _pair_key(run))
        if key in kept:
            repeats[kept[key].id] = repeats.get(kept[key].id, 0) + 1
        else:
            kept[key] = run
    return list(kept.values()), repeats


def _repeated(count: int) -> str:
    return f" (and {count} identical earlier run{'s' if count > 1 else ''})" if count else ""


def apart_reason(run: RunRow, benchmark: Benchmark, totals: dict[str, int] | None = None) -> str:
    """Empty when an evaluated run is the same experiment as the published rows (the reference's
    requests and sampling, text mode, every item, every request answered); else, plainly, why it is not."""
    if run.source != "endpoint":
        return "uploaded: how the predictions were made is not known"
    config = run.config
    model = config.get("model") or {}
    reasons = []
    if model.get("request_mode", "prompt") != "prompt":
        reasons.append("native tools")
    if benchmark.request_profile is not None:
        if model.get("prompt_style") != "official":
            reasons.append("own prompts")
        changed = [name for name in SAMPLING_FIELDS if model.get(name) is not None]
        if changed:
            reasons.append("own sampling (" + ", ".join(f"{name} {model[name]}" for name in changed) + ")")
    if model.get("extra_body"):
        reasons.append("extra request fields")
    if config.get("limit"):
        reasons.append(f"partial: {config['limit']} per subset")
    chosen = benchmark.expand_subsets(config.get("subsets") or None)
    if len(chosen) < len(benchmark.subsets):
        reasons.append(f"partial: {len(chosen)} of {len(benchmark.subsets)} subsets")
    if totals and totals.get("errors"):
        # Failed requests score as failures: not a measure of the model until they are re-sent.
        share = totals["errors"] / max(totals.get("done") or 0, 1)
        reasons.append(f"request errors: {totals['errors']} of {totals.get('done')} ({share:.0%}); re-send them")
    return "; ".join(reasons)


def _pair_key(run: RunRow) -> str:
    """What two runs must share to be averaged across languages: everything but the language."""
    config = run.config
    model = config.get("model") or {}
    return json.dumps([run.model, run.source, run.notes, model.get("request_mode"), model.get("prompt_style"),
                       *(model.get(name) for name in SAMPLING_FIELDS), model.get("extra_body"),
                       config.get("limit"), config.get("subsets")], sort_keys=True, default=str)


def _run_details(run: RunRow) -> str:
    if run.source == "upload":
        return run.notes or "uploaded predictions"
    model = run.config.get("model", {})
    parts = [f"{model.get('request_mode', 'prompt')} mode"]
    if model.get("prompt_style"):
        parts.append(f"{model['prompt_style']} prompts")
    sampling = [f"{short}={model[name]}" for name, short in zip(SAMPLING_FIELDS, ("T", "top_p", "max_tokens"))
                if model.get(name) is not None]
    parts.append(", ".join(sampling) if sampling else "the benchmark's sampling")
    if run.config.get("limit"):
        parts.append(f"limit {run.config['limit']}")
    roles, options = roles_and_options(run.config)
    parts += [f"{name} {value}" for name, value in sorted(options.items())]
    parts += [f"{name}: {endpoint.get('model')}" for name, endpoint in sorted(roles.items())]
    return ", ".join(parts)


def _combined_rows(layout: BoardLayout, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Views that average others (e.g. a mean over languages), for our own runs:
    the newest run of a model in each part view, when every part exists."""
    combined = []
    for view, parts in layout.combine_views.items():
        latest: dict[tuple[str, str, str], dict[str, dict[str, Any]]] = {}
        for row in rows:  # newest first, as list_runs orders them
            if row["source"] != "published" and row["view"] in parts:
                latest.setdefault((row["model"], row["source"], row["pair_key"]), {}).setdefault(row["view"], row)
        for (model, source, _), by_view in latest.items():
            if set(by_view) != set(parts):
                continue
            values = {}
            for column in (*layout.columns, *layout.detail_columns):
                numbers = [by_view[p].get(column) for p in parts]
                values[column] = round(sum(numbers) / len(numbers), 3) if all(isinstance(n, int | float) for n in numbers) else None
            first = by_view[parts[0]]
            errors = [by_view[p]["request_errors"] for p in parts]
            apart = "; ".join(dict.fromkeys(r for p in parts for r in by_view[p][APART_COLUMN].split("; ") if r))
            combined.append({"model": model, "source": source, "view": view, "mode": first["mode"],
                             "run_id": " + ".join(by_view[p]["run_id"] for p in parts), "fingerprint": "",
                             "details": "mean of " + " and ".join(parts), "pair_key": first["pair_key"],
                             "request_errors": None if None in errors else sum(errors), APART_COLUMN: apart, **values})
    return combined


def board_rows(benchmark: str, store: Store | None, mode: str = "official") -> pd.DataFrame:
    """Every row of the benchmark's table in every view, one column per metric (fractions)."""
    spec = get_benchmark(benchmark)
    layout = spec.board_layout()
    rows = _published_rows(benchmark, layout) if mode == "official" else []
    if store is not None:
        ours = _run_rows(spec, layout, store, mode)
        rows += ours + _combined_rows(layout, ours)
    columns = [*IDENTITY_COLUMNS, APART_COLUMN, "view", *layout.columns, *layout.detail_columns, *layout.text_columns,
               *INFO_COLUMNS]
    frame = pd.DataFrame(rows)
    for column in columns:
        if column not in frame.columns:
            frame[column] = None
    return frame[columns]


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


def query_board(frame: pd.DataFrame, layout: BoardLayout, query: BoardQuery) -> pd.DataFrame:
    """Filter, choose columns and sort, server-side."""
    rows = frame
    if query.view:
        rows = rows[rows["view"] == query.view]
    rows = rows[rows["source"].isin(query.sources)]
    if query.search.strip():
        needle = query.search.strip().lower()
        rows = rows[rows["model"].str.lower().str.contains(needle, regex=False)
                    | rows["details"].fillna("").astype(str).str.lower().str.contains(needle, regex=False)]
    metrics = [c for c in (query.columns if query.columns is not None else layout.columns) if c in frame.columns]
    if query.details:
        metrics += [c for c in layout.detail_columns if c not in metrics]
    sort_by = query.sort_by if query.sort_by in metrics else (layout.default_sort if layout.default_sort in metrics else None)
    # The ranking holds the published rows and the runs that are the same experiment; the rest follow it.
    apart = rows[APART_COLUMN].fillna("").astype(str) != ""
    if sort_by:
        descending = query.descending if query.descending is not None else sort_by not in layout.lower_is_better
        rows = rows.assign(_apart=apart).sort_values(["_apart", sort_by], ascending=[True, not descending],
                                                     na_position="last", kind="stable").drop(columns="_apart")
    else:
        rows = rows.assign(_apart=apart).sort_values("_apart", kind="stable").drop(columns="_apart")
    shown = [*IDENTITY_COLUMNS, APART_COLUMN, *metrics, *layout.text_columns, *INFO_COLUMNS]
    if not query.view:
        shown.insert(2, "view")
    return rows[[c for c in shown if c in rows.columns]].reset_index(drop=True)


def as_json_records(frame: pd.DataFrame) -> str:
    return json.dumps(json.loads(frame.to_json(orient="records", force_ascii=False)), ensure_ascii=False, indent=1)
