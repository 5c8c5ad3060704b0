"""One model across every benchmark (the Model page and its API): the figures the boards hold for it (published,
evaluated here, uploaded; each with its 95% interval), its facts (leaderboard_data/models.json) and its runs on
this deployment (public fields only: no endpoint, key, owner or configuration; on a public deployment a run the
visitor may not see, ownership.may_see_job, only as the Queue shows it: no id, tokens, latency or errors); and two
to six models compared on one benchmark's view, with the latency of the runs behind their rows.

Everything is read from the cached boards (AppServices.board_frame) and the store: nothing is rebuilt here; what
depends on the visitor (their runs) is read after the cache, never kept in it. Model text is returned as data; the
front doors escape it."""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pandas as pd

from evaluators.core.display_names import column_title, subset_title
from evaluators.core.errors import ToolboardError
from evaluators.core.leaderboard import load_model_facts
from evaluators.core.limits import MAX_MODEL_NAME_CHARS, echoed, shown_text
from evaluators.core.registry import all_benchmarks, get_benchmark
from evaluators.engine.store import RunRow
from evaluators.service.app_services import AppServices
from evaluators.service.board import (
    APART_COLUMN,
    COST_COLUMN,
    COST_NOTE_COLUMN,
    HIGH_SUFFIX,
    LATENCY_MEAN_COLUMN,
    LATENCY_P95_COLUMN,
    LOW_SUFFIX,
    N_SUFFIX,
    SOURCE_OF_RUN,
    SOURCES,
    UPDATED_COLUMN,
    cost_legend,
    is_missing,
    layout_for,
    model_facts,
    model_key,
    run_ids_of,
)
from evaluators.service.ownership import may_see_job

# The page's figures come from each benchmark's official board (the published tables are official figures).
PAGE_MODE = "official"
MIN_COMPARED, MAX_COMPARED = 2, 6
# Names offered when a model is not found.
MAX_SUGGESTIONS = 8
# The runs listed on a model's page, newest first.
MAX_LISTED_RUNS = 50
# Which row stands for a model in a comparison: a ranked row first (published, then evaluated here), then any row
# evaluated here, then an upload.
SOURCE_PREFERENCE = {("published", True): 0, ("evaluated", True): 1, ("evaluated", False): 2,
                     ("uploaded", True): 3, ("uploaded", False): 3, ("published", False): 4}


@dataclass(frozen=True)
class Figure:
    """One column of one board row of the model: a share (fraction) and its 95% interval where known."""

    column: str
    title: str
    value: float | None
    low: float | None
    high: float | None
    n: int | None
    lower_is_better: bool


def _number(value: Any) -> float | None:
    if is_missing(value):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def _count(value: Any) -> int | None:
    number = _number(value)
    return None if number is None else int(number)


def _day(timestamp: float | None) -> str | None:
    return None if timestamp is None else datetime.fromtimestamp(timestamp, UTC).date().isoformat()


def _figures(row: pd.Series, benchmark: str, columns: tuple[str, ...], lower: frozenset[str]) -> list[dict[str, Any]]:
    figures = []
    for column in columns:
        value = _number(row.get(column))
        if value is None:
            continue
        figures.append(Figure(column, column_title(benchmark, column), value, _number(row.get(column + LOW_SUFFIX)),
                              _number(row.get(column + HIGH_SUFFIX)), _count(row.get(column + N_SUFFIX)),
                              column in lower).__dict__)
    return figures


def _record(row: pd.Series) -> dict[str, Any]:
    """A board row's values by column name (the board's columns are named by text)."""
    return {str(column): value for column, value in row.items()}


def _model_rows(services: AppServices, benchmark: str, key: str, mode: str = PAGE_MODE,
                family: bool = False) -> pd.DataFrame:
    """The rows of a benchmark's (cached) board whose model is `key` (`family`: or one of its dated snapshots)."""
    frame = services.board_frame(benchmark, mode)
    if frame.empty:
        return frame
    keys = services.board_view(("model_keys", benchmark, mode), lambda: frame["model"].astype(str).map(model_key))
    return frame[keys.isin(family_keys(key) if family else (key,))]


def family_keys(key: str) -> tuple[str, ...]:
    """A model and its dated snapshots (the facts table's `snapshots`: the same facts, each its own model on the
    boards): one page shows them all, each row named by the board's spelling so that figures that differ stay
    apart."""
    facts = next((facts for facts in load_model_facts() if facts.name == key), None)
    snapshots = [model_key(snapshot) for snapshot in facts.snapshots] if facts is not None else []
    return tuple(dict.fromkeys([key, *snapshots]))


def board_models(services: AppServices) -> list[str]:
    """Every model of the boards and of the facts table, one name per model (the facts' name when it has one, else
    the first spelling a board shows), sorted case-insensitively; kept until a board changes."""
    def build() -> list[str]:
        names: dict[str, str] = {facts.name: facts.name for facts in load_model_facts()}
        for benchmark in all_benchmarks():
            for name in services.board_frame(benchmark.name, PAGE_MODE)["model"].astype(str):
                names.setdefault(model_key(name), name)
        return sorted(names.values(), key=str.lower)

    return services.board_view(("model_names",), build)


# At most this many other spellings written beside a model's name in a picker.
MAX_SHOWN_ALIASES = 3


def board_model_choices(services: AppServices) -> list[tuple[str, str]]:
    """(label, name) for every model of board_models: the label names the other spellings the boards and the facts
    table use ("Kimi-K2-Instruct (also Kimi-k2-0711, Kimi K2, …)"), so that typing a board's name finds the model;
    the value is its one name. Kept until a board changes."""
    def build() -> list[tuple[str, str]]:
        spellings: dict[str, list[str]] = {}
        for facts in load_model_facts():
            spellings.setdefault(facts.name, []).extend(facts.aliases)
        for benchmark in all_benchmarks():
            for name in dict.fromkeys(services.board_frame(benchmark.name, PAGE_MODE)["model"].astype(str)):
                spellings.setdefault(model_key(name), []).append(name)
        choices = []
        for name in board_models(services):
            others = list(dict.fromkeys(spelling for spelling in spellings.get(model_key(name), [])
                                        if spelling.lower() != name.lower()))
            shown = ", ".join(others[:MAX_SHOWN_ALIASES]) + (", …" if len(others) > MAX_SHOWN_ALIASES else "")
            choices.append((f"{name} (also {shown})" if others else name, name))
        return choices

    return services.board_view(("model_choices",), build)


def suggestions(services: AppServices, name: str, limit: int = MAX_SUGGESTIONS) -> list[str]:
    """Names of the boards close to `name` (case aside): those spelled alike, then those containing it."""
    names = board_models(services)
    by_lower = {known.lower(): known for known in names}
    needle = name.strip().lower()
    alike = [by_lower[known] for known in difflib.get_close_matches(needle, list(by_lower), n=limit, cutoff=0.6)]
    containing = [known for known in names if needle and needle in known.lower()]
    return list(dict.fromkeys([*alike, *containing]))[:limit]


def _facts(name: str) -> dict[str, Any] | None:
    facts = model_facts(name)
    if facts is None:
        return None
    return {"name": facts.name, "organisation": facts.organisation, "params_b": facts.params_b,
            "licence": facts.licence, "open_weights": facts.open_weights, "link": facts.link, "source": facts.source}


def _benchmark_part(services: AppServices, benchmark_name: str, key: str) -> dict[str, Any] | None:
    rows = _model_rows(services, benchmark_name, key, family=True)
    if rows.empty:
        return None
    benchmark, layout = get_benchmark(benchmark_name), layout_for(benchmark_name)
    order = {view: index for index, view in enumerate(layout.views)}
    sources = {source: index for index, source in enumerate(SOURCES)}
    found: list[dict[str, Any]] = []
    for _, row in rows.iterrows():
        apart = "" if is_missing(row.get(APART_COLUMN)) else str(row.get(APART_COLUMN))
        found.append({
            "view": str(row["view"]), "view_title": subset_title(benchmark_name, str(row["view"])),
            "source": str(row["source"]), "model": str(row["model"]), "run_ids": run_ids_of(_record(row)),
            "snapshot": model_key(str(row["model"])) != key,
            "ranked": not apart, "apart_reason": apart,
            "updated": None if is_missing(row.get(UPDATED_COLUMN)) else str(row.get(UPDATED_COLUMN)),
            # a row without a headline figure (a few subsets) shows the per-subset figures it has
            "figures": (_figures(row, benchmark_name, layout.columns, layout.lower_is_better)
                        or _figures(row, benchmark_name, layout.detail_columns, layout.lower_is_better)),
        })
    found.sort(key=lambda part: (order.get(part["view"], len(order)), sources.get(part["source"], len(sources)),
                                 not part["ranked"]))
    return {"benchmark": benchmark_name, "title": benchmark.title, "view_label": layout.view_label,
            "headline": layout.default_sort, "headline_title": column_title(benchmark_name, layout.default_sort),
            "rows": found}


def _queued_run(services: AppServices, run: RunRow, totals: dict[str, Any]) -> dict[str, Any]:
    """A run the visitor may not see, as the Queue shows it (runs.public_queue): benchmark, language, model, status,
    done of total, the days it was created and finished; the other fields None (no id, tokens, latency or
    errors)."""
    return {"run_id": None, "benchmark": run.benchmark, "benchmark_title": get_benchmark(run.benchmark).title,
            "language": run.language, "source": None, "status": run.status,
            "model": shown_text(services.redact_paths(run.model), MAX_MODEL_NAME_CHARS), "created": _day(run.created_at),
            "finished": _day(run.finished_at), "items": run.total, "done": int(totals.get("done") or 0),
            "request_errors": None, "latency_mean_s": None, "tokens": None, "hidden": True}


def _public_run(run: RunRow, totals: dict[str, Any]) -> dict[str, Any]:
    """What anyone who may see the run may read of it: never its endpoint, key, owner, configuration or message."""
    done = int(totals.get("done") or 0)
    latency = _number(totals.get("latency"))
    return {"run_id": run.id, "benchmark": run.benchmark, "benchmark_title": get_benchmark(run.benchmark).title,
            "language": run.language, "source": SOURCE_OF_RUN.get(run.source, run.source), "status": run.status,
            "model": shown_text(run.model, MAX_MODEL_NAME_CHARS), "created": _day(run.created_at),
            "finished": _day(run.finished_at), "items": run.total, "done": done,
            "request_errors": int(totals.get("errors") or 0) if run.source == "endpoint" else None,
            "latency_mean_s": round(latency / done, 3) if run.source == "endpoint" and done and latency else None,
            "tokens": int((totals.get("prompt_tokens") or 0) + (totals.get("completion_tokens") or 0)) or None,
            "hidden": False}


def model_runs(services: AppServices, key: str, owner: str | None = None,
               limit: int = MAX_LISTED_RUNS) -> list[dict[str, Any]]:
    """The model's runs on this deployment (every status), newest first, public fields only. On a public
    deployment a run `owner` may not see (ownership.may_see_job) is listed only as the Queue lists it
    (_queued_run: "hidden" True, run_id None), and only if the Queue lists it (a run evaluated here, not an
    upload); a private deployment's are everyone's."""
    family = family_keys(key)
    runs = [(run, may_see_job(services.public, run, owner)) for run in services.store.list_runs()
            if model_key(run.model) in family]
    listed = [(run, seen) for run, seen in runs if seen or run.source == "endpoint"][:limit]
    totals = services.store.all_run_totals([run.id for run, _ in listed]) if listed else {}
    return [_public_run(run, totals.get(run.id, {})) if seen else _queued_run(services, run, totals.get(run.id, {}))
            for run, seen in listed]


def model_page(services: AppServices, name: str, owner: str | None = None) -> dict[str, Any]:
    """Everything the Model page shows of `name` (any spelling the boards or the facts table know) to the visitor
    `owner` (their hash; None on a private deployment, or for nobody in particular):
    {"query", "found", "model", "key", "facts", "benchmarks": [{"benchmark", "title", "view_label", "headline",
    "headline_title", "rows": [{"view", "view_title", "source", "model", "snapshot", "run_ids", "ranked", "apart_reason",
    "updated", "figures": [{"column", "title", "value", "low", "high", "n", "lower_is_better"}]}]}], "runs",
    "suggestions"}. Values are fractions. Not found: found False, and names alike in `suggestions`. The boards'
    part is cached for every visitor alike (AppServices.board_view); the runs are read for this visitor
    (model_runs: on a public deployment a run they may not see has no id, tokens or latency)."""
    query = str(name or "").strip()
    if not query:
        return {"query": "", "found": False, "model": "", "key": "", "facts": None, "benchmarks": [], "runs": [],
                "suggestions": []}
    if len(query) > MAX_MODEL_NAME_CHARS:
        raise ToolboardError(f"a model name is at most {MAX_MODEL_NAME_CHARS} characters: {echoed(query)!r}")
    key = model_key(query)
    benchmarks = services.board_view(("model_page", key), lambda: [
        part for benchmark in all_benchmarks() if (part := _benchmark_part(services, benchmark.name, key))])
    facts = _facts(query)
    runs = model_runs(services, key, owner)
    found = bool(benchmarks or facts or runs)
    shown = facts["name"] if facts else next((row["model"] for part in benchmarks for row in part["rows"]),
                                             runs[0]["model"] if runs else query)
    return {"query": query, "found": found, "model": shown, "key": key, "facts": facts, "benchmarks": benchmarks,
            "runs": runs, "suggestions": [] if found else suggestions(services, query)}


# ---- two to six models compared on one benchmark's view ---------------------------------------------------------


def _figure_of(row: pd.Series, column: str) -> float | None:
    value = row.get(column)
    return None if value is None or is_missing(value) else round(float(value), 4)


def _chosen_row(rows: pd.DataFrame) -> pd.Series | None:
    """The row that stands for a model in a comparison (SOURCE_PREFERENCE; the board's order within a source)."""
    if rows.empty:
        return None
    ranked = rows[APART_COLUMN].map(lambda value: is_missing(value) or str(value) == "")
    preference = [SOURCE_PREFERENCE.get((str(source), bool(is_ranked)), 5)
                  for source, is_ranked in zip(rows["source"], ranked)]
    return rows.iloc[min(range(len(rows)), key=lambda index: preference[index])]


def checked_models(names: list[str] | None) -> list[str]:
    """Two to six distinct model names (spellings of the same model count once), else a clear error."""
    chosen = list(dict.fromkeys(str(name).strip() for name in names or [] if str(name or "").strip()))
    distinct = list({model_key(name): name for name in reversed(chosen)}.values())[::-1]
    if not MIN_COMPARED <= len(distinct) <= MAX_COMPARED:
        raise ToolboardError(f"choose {MIN_COMPARED} to {MAX_COMPARED} different models to compare "
                             f"({len(distinct)} chosen)")
    too_long = [name for name in distinct if len(name) > MAX_MODEL_NAME_CHARS]
    if too_long:
        raise ToolboardError(f"a model name is at most {MAX_MODEL_NAME_CHARS} characters: {echoed(too_long[0])!r}")
    return distinct


def compare_models(services: AppServices, names: list[str] | None, benchmark: str, view: str | None = None) -> dict[str, Any]:
    """Two to six models on one benchmark's view (default: the benchmark's overview view, else its first), each
    by one row (published and ranked first: SOURCE_PREFERENCE): {"benchmark", "title", "view", "view_title",
    "view_label", "columns": [{"column", "title", "lower_is_better"}], "models": [{"name", "identity" (the model's one
    name: the facts table's, else the name given), "model" (the row's own spelling), "source",
    "run_ids", "apart_reason", "figures", "latency_mean_s", "latency_p95_s", "cost", "cost_note"}], "missing": [names
    without a row in the view], "cost_note"}. Values are fractions; cost (USD per 1,000 items) and latency (seconds
    per item, mean and p95) are the board's columns of the runs behind a row evaluated here
    (published rows and uploads have none)."""
    chosen = checked_models(names)
    spec = get_benchmark(benchmark)
    layout = spec.board_layout()
    default_view = spec.overview.view if spec.overview is not None else layout.views[0]
    view = view or default_view
    if view not in layout.views:
        raise ToolboardError(f"{spec.title} has no {layout.view_label.lower()} {echoed(view)!r}: choose one of "
                             + ", ".join(layout.views))
    models, missing = [], []
    for name in chosen:
        rows = _model_rows(services, benchmark, model_key(name))
        row = _chosen_row(rows[rows["view"] == view]) if not rows.empty else None
        if row is None:
            missing.append(name)
            continue
        run_ids = run_ids_of(_record(row))
        apart = "" if is_missing(row.get(APART_COLUMN)) else str(row.get(APART_COLUMN))
        facts = model_facts(name)
        models.append({"name": name, "identity": facts.name if facts is not None else name,
                       "model": str(row["model"]), "source": str(row["source"]), "run_ids": run_ids,
                       "apart_reason": apart, "figures": _figures(row, benchmark, layout.columns, layout.lower_is_better),
                       "latency_mean_s": _figure_of(row, LATENCY_MEAN_COLUMN),
                       "latency_p95_s": _figure_of(row, LATENCY_P95_COLUMN), "cost": _figure_of(row, COST_COLUMN),
                       "cost_note": "" if is_missing(row.get(COST_NOTE_COLUMN)) else str(row.get(COST_NOTE_COLUMN))})
    return {"benchmark": benchmark, "title": spec.title, "view": view, "view_title": subset_title(benchmark, view),
            "view_label": layout.view_label,
            "columns": [{"column": c, "title": column_title(benchmark, c), "lower_is_better": c in layout.lower_is_better}
                        for c in layout.columns],
            "models": models, "missing": missing,
            "cost_note": cost_legend(model.get("cost_note") for model in models)}


def benchmark_views(benchmark: str) -> tuple[list[tuple[str, str]], str]:
    """A benchmark's views as (display name, id) pairs and the one a comparison opens on."""
    spec = get_benchmark(benchmark)
    layout = spec.board_layout()
    default_view = spec.overview.view if spec.overview is not None else layout.views[0]
    return [(subset_title(benchmark, view), view) for view in layout.views], default_view
