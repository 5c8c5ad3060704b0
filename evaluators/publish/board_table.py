"""The board's table: every row a store makes of a benchmark's leaderboard (published rows, runs evaluated
here and uploaded prediction files, side by side in the layout of each benchmark's published table), with
its columns. Pure data (pandas). The service's board queries (evaluators/service/board.py) filter, sort and
rank it for the app; the results dataset (results_dataset.py) publishes it as its `contents`; the other
results datasets (other_results.py) are read back into its shape. Here, below the service, so that
publishing imports nothing above it.

Each benchmark's package declares its table (core/board_layout.py): views (a language, a subset, a
tool…) and metric columns. Values are fractions in [0, 1], as in reports; the app formats them.
Every row also carries its model's facts (leaderboard_data/models.json, matched by model_key), how its
requests were made and the date of its numbers, to filter on and to read beside the scores.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, cast

import pandas as pd

from evaluators.core.board_layout import TOKEN_USAGE, BoardLayout
from evaluators.core.errors import DataError, ToolboardError
from evaluators.core.intervals import Z95, Estimate, bounds, weighted_sum
from evaluators.core.leaderboard import ModelFacts, load_model_facts, load_published, normalised_model_name
from evaluators.core.limits import MAX_MODEL_NAME_CHARS, MAX_NOTES_CHARS, cut_text, shown_text
from evaluators.core.registry import Benchmark, get_benchmark
from evaluators.engine.settings import SAMPLING_FIELDS, roles_and_options
from evaluators.engine.store import RunRow, Store
from evaluators.publish.ranking_rule import on_example_data, unranked_reasons
from evaluators.publish.run_costs import COST_COLUMNS, add_priced_column, add_run_costs

# hub-reported: figures the Hugging Face Hub reports (publish/hub_reported.py), never ranked.
SOURCES = ("published", "evaluated", "uploaded", "hub-reported")
SOURCE_OF_RUN = {"endpoint": "evaluated", "upload": "uploaded"}
IDENTITY_COLUMNS = ("model", "source")
# Why a row is kept apart from the published ranking (empty: published, or the same experiment).
APART_COLUMN = "apart_reason"
INFO_COLUMNS = ("request_errors", "mode", "run_id", "fingerprint", "details")
# What is known of each row's model (leaderboard_data/models.json, applied by model_key) and how its
# requests were made ("prompt" or "native tools"); None where not known.
FACT_COLUMNS = ("organisation", "params_b", "licence", "open_weights", "request_mode", "link", "flag")
# A flagged row (as the Open LLM Leaderboard flags models): its model's facts entry says why its figures cannot be
# tied to one released model (which model or checkpoint was measured is not said, or its weights were not
# released); the reason is the row's `flag`, None on every other row. The board's hide_flagged filter hides them.
FLAG_COLUMN = "flag"
# The date (ISO, UTC) a row's numbers were produced: the published table's date, the run's end.
UPDATED_COLUMN = "updated"
# A run's configured request mode, as the board names it.
REQUEST_MODE_NAMES = {"prompt": "prompt", "tools": "native tools"}
# The newest evaluated or uploaded run (True on its rows).
NEWEST_COLUMN = "newest"
# The results dataset (Hub repo id) a row was read from (evaluators/publish/other_results.py); None on this
# project's own rows. Present only on boards built with `others` (board_rows), so an export of the
# board (dataset_rows.contents_table) never holds it, nor anyone else's rows.
ORIGIN_COLUMN = "origin"
# Beside each fraction column: the items behind it and its 95% Wilson interval (fractions).
N_SUFFIX, LOW_SUFFIX, HIGH_SUFFIX = "_n", "_low", "_high"
# Any other text a row shows (details, why not ranked, text columns, others' rows): at most this long. Model names
# and notes are refused over their limits when added (core/limits.py); rows stored before are cut when shown.
MAX_SHOWN_TEXT_CHARS = MAX_NOTES_CHARS + 200


def wilson_interval(p: float | None, n: int | None, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval (95% by default) of a share `p` observed over `n` items; None when
    either is unknown or n < 1. p=0.5, n=100 -> (0.404, 0.596)."""
    if p is None or n is None or isinstance(p, float) and math.isnan(p) or isinstance(n, float) and math.isnan(n) or n < 1:
        return None
    p = min(max(float(p), 0.0), 1.0)
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    # at p = 0 or 1 the bound on that side is exact (no rounding below 0 or above 1)
    return (0.0 if p == 0 else max(0.0, centre - half)), (1.0 if p == 1 else min(1.0, centre + half))


def composite_interval(row: dict[str, Any], column: str, parts_of: dict[str, tuple[tuple[str, float], ...]],
                       z: float = Z95) -> tuple[float, float] | None:
    """The 95% interval of a figure that is a weighted sum of item shares (`parts_of[column]`, nested sums
    allowed): value ± z·se with se² = Σ weight² · se(part)², an item share p over n items having se² = p(1 − p)/n
    (core/intervals.weighted_sum, share_estimate). That is the variance of the item bootstrap that resamples each
    part's items apart (as lm-evaluation-harness bootstraps aggregates), computed exactly instead of by resampling.
    None when the value, or any part's value or n, is not known."""
    def estimate(name: str, depth: int) -> Estimate | None:
        if name in parts_of and depth <= len(parts_of):  # the depth bounds a declaration that names itself
            found = [(weight, estimate(part, depth + 1)) for part, weight in parts_of[name]]
            known = [(weight, part) for weight, part in found if part is not None]
            return weighted_sum(known) if len(known) == len(found) else None
        share, n = row.get(name), row.get(name + N_SUFFIX)
        if not isinstance(share, int | float) or isinstance(share, bool) or math.isnan(share):
            return None
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            return None
        share = min(max(float(share), 0.0), 1.0)
        return share, share * (1 - share) / n

    value = row.get(column)
    if column not in parts_of or not isinstance(value, int | float) or math.isnan(value):
        return None
    found = estimate(column, 0)
    # around the row's own figure (a published Overall, rounded as printed), with the parts' spread
    interval = bounds((float(value), found[1]), z=z) if found is not None else None
    return (interval[0], interval[1]) if interval is not None else None


def fraction_columns(benchmark: Benchmark, layout: BoardLayout) -> list[str]:
    """The layout's metric columns that are shares (declared kind "fraction"; undeclared ones count as shares)."""
    return [c for c in (*layout.columns, *layout.detail_columns) if benchmark.metric(c).kind == "fraction"]


def composite_columns(benchmark: Benchmark, layout: BoardLayout) -> dict[str, tuple[tuple[str, float], ...]]:
    """The parts of every declared weighted sum among the benchmark's metrics (Metric.made_of), by column."""
    names = {*layout.columns, *layout.detail_columns, *(m.name for m in (*benchmark.metrics, *benchmark.summary_metrics))}
    return {name: benchmark.metric(name).made_of for name in names if benchmark.metric(name).made_of}


def item_share_columns(benchmark: Benchmark, layout: BoardLayout) -> list[str]:
    """The share columns whose value is a share of the view's items (Metric.share_of_items): only these get
    an n and a Wilson interval; a precision, a mean F1 or a share of some other count would get a wrong one."""
    return [c for c in fraction_columns(benchmark, layout) if benchmark.metric(c).share_of_items]


def column_n(report: dict[str, Any], benchmark: Benchmark, view: str, column: str) -> int | None:
    """The items behind a column of a run's row, from the report's per-subset `n`: the subset of the
    column's name; else the sum over the benchmark's group of that name; else the subset the view
    names; else the sum over every subset in the report (a summary over the whole view)."""
    subsets = {name: (value or {}).get("n") for name, value in (report.get("subsets") or {}).items()}

    def total(names: Any) -> int | None:
        counts = [count for count in (subsets.get(name) for name in names) if isinstance(count, int)]
        return sum(counts) if counts else None

    for name in (column, view):
        if name in subsets:
            return subsets[name] if isinstance(subsets[name], int) else None
        if name == column and name in benchmark.groups:
            return total(benchmark.groups[name])
    return total(subsets)


@lru_cache(maxsize=2)
def _facts_by_spelling(with_snapshots: bool) -> dict[str, ModelFacts]:
    """Each known spelling of a model (its name and aliases, and with_snapshots its dated versions, as written
    and normalised) -> its facts."""
    table: dict[str, ModelFacts] = {}
    for model in load_model_facts():
        for spelling in (model.name, *model.aliases, *(model.snapshots if with_snapshots else ())):
            table.setdefault(spelling.strip().lower(), model)
            table.setdefault(normalised_model_name(spelling), model)
    return table


def _facts_of(name: str, with_snapshots: bool) -> ModelFacts | None:
    table = _facts_by_spelling(with_snapshots)
    return table.get(name.strip().lower()) or table.get(normalised_model_name(name))


def model_facts(name: str) -> ModelFacts | None:
    """The facts entry of a model name (any known spelling or dated snapshot, case-insensitive, with or without
    a known provider prefix)."""
    return _facts_of(name, with_snapshots=True)


def model_key(name: str) -> str:
    """What tells "the same model" across tables and runs: the facts table's name for a spelling of that very
    model, else the normalised name (so each dated snapshot, and each fine-tune under another prefix, stays
    its own model)."""
    facts = _facts_of(name, with_snapshots=False)
    return facts.name if facts is not None else normalised_model_name(name)


def _fact_values(name: str) -> dict[str, Any]:
    facts = model_facts(name)
    if facts is None:
        return {}
    return {"organisation": facts.organisation, "params_b": facts.params_b, "licence": facts.licence,
            "open_weights": facts.open_weights, "link": facts.link, FLAG_COLUMN: facts.flag}


def _iso_day(timestamp: float | None) -> str | None:
    return None if timestamp is None else datetime.fromtimestamp(timestamp, UTC).date().isoformat()


def _run_request_mode(run: RunRow) -> str | None:
    """How an evaluated run sent its requests; None for uploads (how the predictions were made is not known)."""
    if run.source != "endpoint":
        return None
    mode = (run.config.get("model") or {}).get("request_mode", "prompt")
    name: str | None = REQUEST_MODE_NAMES.get(mode, mode)
    return name


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
    source = table.get("source") or {}
    link = source.get("url", "")
    rows = []
    for row in table.get("rows", []):
        view, values = layout.published_values(row)
        # how the published numbers were requested: the table's statement, unless the row says otherwise
        request_mode = row.get("request_mode", table.get("request_mode"))
        # A row may name its own date (when its figures were submitted) and why it is not the experiment the table
        # ranks (e.g. another simulated user): such a row is kept apart, as a run would be.
        rows.append({"model": row["model"], "source": "published", "view": view, "mode": "official", "run_id": "",
                     "fingerprint": "", "details": link, "request_mode": request_mode,
                     UPDATED_COLUMN: row.get("date") or source.get("date"), **values,
                     **_published_n(row.get("n", (table.get("n_by_view") or {}).get(view)), layout),
                     **({APART_COLUMN: row[APART_COLUMN]} if row.get(APART_COLUMN) else {})})
    return rows + _published_macro_rows(layout, rows)


def _published_n(given: Any, layout: BoardLayout) -> dict[str, Any]:
    """The items behind a published row's columns: the row's own `n`, else the table's `n_by_view` for the
    row's view (counted in the benchmark's data: the published tables print no sample counts); one count for
    every column, or {column: count}. Without it the row's intervals stay empty."""
    if isinstance(given, int):
        return {c + N_SUFFIX: given for c in (*layout.columns, *layout.detail_columns)}
    if isinstance(given, dict):
        return {c + N_SUFFIX: v for c, v in given.items() if isinstance(v, int)}
    return {}


def _published_macro_rows(layout: BoardLayout, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The macro view of a published table that prints only per-part rows: the mean of each column
    over the parts that have a value (as our reports compute it), labelled as computed here."""
    if layout.macro_view is None:
        return []
    parts = [v for v in layout.views if v != layout.macro_view]
    grouped: dict[tuple[str, tuple[str, ...]], dict[str, dict[str, Any]]] = {}
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
            counts = [by_view[p].get(column + N_SUFFIX) for p in parts]
            if numbers and all(isinstance(c, int) for c in counts):
                values[column + N_SUFFIX] = sum(counts)
        first = by_view[parts[0]]
        extras = {c: first.get(c) for c in layout.text_columns if first.get(c) is not None}
        modes = {by_view[p].get("request_mode") for p in parts}
        extras["request_mode"] = modes.pop() if len(modes) == 1 else None  # parts that differ: not one mode
        extras[UPDATED_COLUMN] = _newest(by_view[p].get(UPDATED_COLUMN) for p in parts)
        macro.append({"model": model, "source": "published", "view": layout.macro_view, "mode": "official", "run_id": "",
                      "fingerprint": "", "details": f"mean over the {len(parts)} published per-{layout.view_label.lower()} "
                      "rows, computed here", **extras, **values})
    return macro


def _run_rows(benchmark: Benchmark, layout: BoardLayout, store: Store, mode: str) -> list[dict[str, Any]]:
    rows = []
    # Runs on the built-in example never join: a few items shipped to try the app measure no model.
    finished, repeats = _distinct_runs([run for run in store.list_runs() if run.benchmark == benchmark.name
                                        and run.status == "finished" and not on_example_data(run.config, benchmark)])
    all_totals = store.all_run_totals([run.id for run in finished if run.source == "endpoint"])
    for run in finished:
        report = store.load_report(run.id, mode)
        if report is None:
            continue
        # Failed requests score as failures: the count stays beside the scores so nobody mistakes them.
        errors = all_totals[run.id]["errors"] if run.source == "endpoint" else None
        apart = apart_reason(run, benchmark, all_totals.get(run.id), report)
        item_shares = item_share_columns(benchmark, layout)
        kept_bounds = report_bounds(layout, report)
        for view, values in layout.run_values(report).items():
            counts: dict[str, float | None] = {c + N_SUFFIX: column_n(report, benchmark, view, c)
                                               for c in item_shares if c in values}
            counts |= {column + suffix: bound for column, pair in kept_bounds.get(view, {}).items()
                       for suffix, bound in zip((LOW_SUFFIX, HIGH_SUFFIX), pair)}
            reason = "; ".join(filter(None, [apart, own_figures(benchmark, layout, values)])) if apart else apart
            rows.append({"model": cut_text(run.model, MAX_MODEL_NAME_CHARS),
                         "source": SOURCE_OF_RUN.get(run.source, run.source), "view": view,
                         "mode": mode, "run_id": run.id, "fingerprint": run.fingerprint,
                         "details": _run_details(run) + _repeated(repeats.get(run.id, 0)),
                         "request_errors": errors, "pair_key": _pair_key(run), APART_COLUMN: reason,
                         "request_mode": _run_request_mode(run), UPDATED_COLUMN: _iso_day(run.finished_at),
                         NEWEST_COLUMN: run.id == finished[0].id, **values, **counts})
    return rows


# At most this many of a partial row's own figures written in its reason.
MAX_OWN_FIGURES = 4


def own_figures(benchmark: Benchmark, layout: BoardLayout, values: dict[str, Any]) -> str:
    """What a row kept apart has when none of the table's headline columns is filled (a file or a run of a few
    subsets: the summaries need every part): its per-subset figures, in %, said in its reason ("its figures:
    Atom bool 20.0%, …"); empty when it has a headline figure or nothing at all."""
    def number(column: str) -> float | None:
        value = values.get(column)
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) and not math.isnan(value) \
            else None

    if any(number(column) is not None for column in layout.columns):
        return ""
    found = [(column, value) for column, value in ((c, number(c)) for c in layout.detail_columns) if value is not None]
    if not found:
        return ""
    shown = ", ".join(f"{benchmark.column_title(column)} {value * 100:.1f}%" for column, value in found[:MAX_OWN_FIGURES])
    more = f" and {len(found) - MAX_OWN_FIGURES} more in the per-subset detail" if len(found) > MAX_OWN_FIGURES else ""
    return f"its figures: {shown}{more}"


def report_bounds(layout: BoardLayout, report: dict[str, Any]) -> dict[str, dict[str, tuple[float, float]]]:
    """The intervals a report keeps (Report.intervals: figures that are not a plain share of items), by view and
    column: each side is read through the layout as if it were the report's figures, so a benchmark's own view
    mapping (e.g. a macro view over its subsets) applies to them unchanged."""
    kept = report.get("intervals") or {}
    if not kept:
        return {}

    def side(index: int) -> dict[str, Any]:
        per_subset = kept.get("subsets") or {}
        return {**report, "summary": {name: pair[index] for name, pair in (kept.get("summary") or {}).items()},
                "subsets": {name: {"n": (value or {}).get("n"),
                                   "metrics": {metric: pair[index] for metric, pair in (per_subset.get(name) or {}).items()}}
                            for name, value in (report.get("subsets") or {}).items()}}

    lows, highs = layout.run_values(side(0)), layout.run_values(side(1))
    found: dict[str, dict[str, tuple[float, float]]] = {}
    for view, values in lows.items():
        for column, low in values.items():
            high = (highs.get(view) or {}).get(column)
            if isinstance(low, int | float) and isinstance(high, int | float) and not isinstance(low, bool):
                found.setdefault(view, {})[column] = (float(low), float(high))
    return found


def run_on_example_data(run: RunRow) -> bool:
    """Whether a stored run read its benchmark's built-in example (False for a benchmark no longer registered)."""
    try:
        return on_example_data(run.config, get_benchmark(run.benchmark))
    except ToolboardError:
        return False


# Beside a run wherever its owner sees it (Explore, the jobs panel) when it read the built-in example.
EXAMPLE_DATA_LABEL = "example data"


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


def upload_coverage(report: dict[str, Any], benchmark: Benchmark) -> str:
    """What part of the benchmark an uploaded file covers, when not all of it: "partial: 1 of 17 subsets, 10 of
    50 items answered" (the subsets its lines named; their items it left out score as failures); empty when whole."""
    subsets = report.get("subsets") or {}
    items = sum(int((value or {}).get("n") or 0) for value in subsets.values())
    given = report.get("missing") or 0  # a report keeps the count (older ones: the ids)
    missing = len(given) if isinstance(given, list) else int(given)
    parts = []
    if len(subsets) < len(benchmark.subsets):
        parts.append(f"{len(subsets)} of {len(benchmark.subsets)} subsets")
    if missing and items:
        parts.append(f"{items - missing:,} of {items:,} items answered")
    return "partial: " + ", ".join(parts) if parts else ""


UPLOAD_REASON = "uploaded: how the predictions were made is not known"


def upload_reason(report: dict[str, Any], benchmark: Benchmark) -> str:
    """Why an upload's rows are kept apart (an upload never ranks: how its predictions were made is not known),
    what part of the benchmark it covers first when not all of it."""
    return "; ".join(filter(None, [upload_coverage(report, benchmark), UPLOAD_REASON]))


def upload_preview(report: dict[str, Any], benchmark: Benchmark) -> str:
    """How a checked upload's row will read on the board once added: not ranked, its reason, and its own figures
    when it has no headline figure (as the board's rows say them; the first view of the benchmark's table)."""
    layout = benchmark.board_layout()
    views = layout.run_values(report)
    values = next(iter(views.values()), {}) if views else {}
    return "; ".join(filter(None, [upload_reason(report, benchmark), own_figures(benchmark, layout, values)]))


def apart_reason(run: RunRow, benchmark: Benchmark, totals: dict[str, int] | None = None,
                 report: dict[str, Any] | None = None) -> str:
    """Empty when an evaluated run is the same experiment as the published rows (its settings, by the one
    rule the Evaluate form also reads: publish/ranking_rule.py, and every request answered); else, plainly,
    why it is not. An upload says first what part of the benchmark it covers (`report`: its report), when not
    all of it."""
    if run.source != "endpoint":
        return upload_reason(report or {}, benchmark)
    reasons = unranked_reasons(run.config, benchmark)
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
        return str(cut_text(run.notes, MAX_NOTES_CHARS) or "uploaded predictions")
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
            values: dict[str, Any] = {}
            for column in (*layout.columns, *layout.detail_columns):
                numbers = [number for p in parts if isinstance(number := by_view[p].get(column), int | float)]
                values[column] = round(sum(numbers) / len(numbers), 3) if len(numbers) == len(parts) else None
                counts = [count for p in parts if isinstance(count := by_view[p].get(column + N_SUFFIX), int)]
                if values[column] is not None and len(counts) == len(parts):
                    values[column + N_SUFFIX] = sum(counts)  # the mean of the parts, over all their items
            if layout.priced_column is not None:  # priced later from every part's tokens, not averaged here
                usage = [found for p in parts if (found := by_view[p].get(TOKEN_USAGE))]
                values[TOKEN_USAGE] = [part for found in usage for part in found] if len(usage) == len(parts) else None
            first = by_view[parts[0]]
            errors = [by_view[p]["request_errors"] for p in parts]
            apart = "; ".join(dict.fromkeys(r for p in parts for r in by_view[p][APART_COLUMN].split("; ") if r))
            combined.append({"model": model, "source": source, "view": view, "mode": first["mode"],
                             "run_id": " + ".join(by_view[p]["run_id"] for p in parts), "fingerprint": "",
                             "details": "mean of " + " and ".join(parts), "pair_key": first["pair_key"],
                             "request_errors": None if None in errors else sum(errors), APART_COLUMN: apart,
                             "request_mode": first.get("request_mode"),  # the same in every part (pair_key)
                             UPDATED_COLUMN: _newest(by_view[p].get(UPDATED_COLUMN) for p in parts),
                             NEWEST_COLUMN: any(by_view[p].get(NEWEST_COLUMN) for p in parts), **values})
    return combined


def _newest(days: Any) -> str | None:
    """The latest of some ISO dates (they sort as text); None when none is known."""
    known = [day for day in days if isinstance(day, str) and day]
    return max(known) if known else None


def board_columns(benchmark: Benchmark, layout: BoardLayout, others: bool = False) -> list[str]:
    """The columns of board_rows, in order (with `origin` after the info columns when `others` is True)."""
    interval_columns = [c + suffix for c in fraction_columns(benchmark, layout) for suffix in (N_SUFFIX, LOW_SUFFIX, HIGH_SUFFIX)]
    return [*IDENTITY_COLUMNS, APART_COLUMN, "view", *layout.columns, *layout.detail_columns, *layout.text_columns,
            *FACT_COLUMNS, UPDATED_COLUMN, *INFO_COLUMNS, *([ORIGIN_COLUMN] if others else []), NEWEST_COLUMN,
            *COST_COLUMNS,
            *interval_columns]


def frame_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A board frame's rows as dicts by column name (its columns are all names)."""
    return cast(list[dict[str, Any]], frame.to_dict("records"))


def run_ids_of(row: dict[str, Any]) -> list[str]:
    """The runs behind a board row (a view averaging runs names them `a + b`); none for published rows."""
    return [part for part in str(row.get("run_id") or "").split(" + ") if part]


def _others_rows(others: pd.DataFrame | Iterable[dict[str, Any]], store: Store | None) -> list[dict[str, Any]]:
    """Rows read from other results datasets (evaluators/publish/other_results.py), as plain values; a row naming a
    run of the local store (any part of `a + b`) is left out: local rows win, whatever was loaded before."""
    records = frame_records(others) if isinstance(others, pd.DataFrame) else list(others)
    local = {run.id for run in store.list_runs()} if store is not None and records else set()
    rows = []
    for record in records:
        row = {name: None if is_missing(value) else value for name, value in record.items()}
        if local.intersection(run_ids_of(row)):
            continue
        row[NEWEST_COLUMN] = False  # ★ marks this board's own newest run only
        rows.append(row)
    return rows


def board_rows(benchmark: str, store: Store | None, mode: str = "official",
               others: pd.DataFrame | Iterable[dict[str, Any]] | None = None) -> pd.DataFrame:
    """Every row of the benchmark's table in every view, one column per metric (fractions); beside each
    fraction column its n and 95% Wilson interval (`<column>_n`, `_low`, `_high`; empty when n is not
    known); `newest` marks the rows of the newest evaluated or uploaded run; FACT_COLUMNS and `updated`
    hold the model's facts (with its `flag`, FLAG_COLUMN), the request mode and the date of the row's numbers (None
    where not known).

    `others`: rows of other results datasets for this benchmark and mode (OtherResults.rows_for, already
    filtered and labelled with their `origin`). They are appended after this store's rows; their model facts,
    n and intervals are recomputed like any row's; `newest` is False on them; a row naming a run of the local
    store is dropped (local rows are never overwritten). With `others` given (even empty) the frame has an
    `origin` column (None on this project's own rows); without it, it has not."""
    spec = get_benchmark(benchmark)
    layout = spec.board_layout()
    rows = _published_rows(benchmark, layout) if mode == "official" else []
    if store is not None:
        ours = _run_rows(spec, layout, store, mode)
        rows += ours + _combined_rows(layout, ours)
    if others is not None:
        for row in rows:
            row[ORIGIN_COLUMN] = None
        rows += _others_rows(others, store)
    _add_cost_columns(rows, store)
    add_priced_column(rows, layout.priced_column)
    fractions, item_shares = fraction_columns(spec, layout), item_share_columns(spec, layout)
    parts_of = composite_columns(spec, layout)
    for row in rows:
        _cut_texts(row)
        row.setdefault(NEWEST_COLUMN, False)
        row.update(_fact_values(row["model"]))
        composites = {column: composite_interval(row, column, parts_of) for column in parts_of}
        for column in fractions:
            if column not in item_shares:  # its n is not the view's items (e.g. a precision): no Wilson interval
                row.pop(column + N_SUFFIX, None)
            value = row.get(column)
            if column in parts_of:
                interval = composites[column]
            elif column in item_shares:
                interval = wilson_interval(value, row.get(column + N_SUFFIX)) if isinstance(value, int | float) else None
            else:  # a figure that is not a share of the view's items: the interval its report keeps, if any
                low, high = row.get(column + LOW_SUFFIX), row.get(column + HIGH_SUFFIX)
                interval = (low, high) if isinstance(low, int | float) and isinstance(high, int | float) and isinstance(
                    value, int | float) else None
            row[column + LOW_SUFFIX], row[column + HIGH_SUFFIX] = interval or (None, None)
    interval_columns = [c + suffix for c in fractions for suffix in (N_SUFFIX, LOW_SUFFIX, HIGH_SUFFIX)]
    columns = board_columns(spec, layout, others=others is not None)
    frame = pd.DataFrame(rows)
    missing = [c for c in columns if c not in frame.columns]
    frame = pd.concat([frame, pd.DataFrame({c: [None] * len(frame) for c in missing}, index=frame.index, dtype=object)],
                      axis=1)[columns].copy()
    frame[NEWEST_COLUMN] = frame[NEWEST_COLUMN].fillna(False).astype(bool)
    for column in interval_columns:
        whole = int if column.endswith(N_SUFFIX) else float
        frame[column] = pd.Series([None if v is None or pd.isna(v) else whole(v) for v in frame[column]],
                                  index=frame.index, dtype=object)
    for column in (*FACT_COLUMNS, UPDATED_COLUMN, *COST_COLUMNS):  # None, never NaN, where not known
        frame[column] = pd.Series([None if is_missing(v) else v for v in frame[column]], index=frame.index, dtype=object)
    # One block per dtype again: the columns replaced one by one above left the frame in hundreds of blocks, which
    # made every later column added to it (the overview's, the board's rank) slow and warned of.
    return frame.copy()


def _add_cost_columns(rows: list[dict[str, Any]], store: Store | None) -> None:
    """$ per 1,000 items and latency (mean, p95) of the evaluated rows (evaluators/publish/run_costs.py): computed
    here, once per board frame, from every evaluated run's predictions in one query; None on other rows."""
    add_run_costs(rows, store, run_ids_of)


def _cut_texts(row: dict[str, Any]) -> None:
    """The row's texts as a board shows them (a store written before the limits, another results dataset): the
    model name cut to MAX_MODEL_NAME_CHARS, any other text to MAX_SHOWN_TEXT_CHARS, and every control or invisible
    character written out as its escape (core/limits.shown_text), so no row can pass for another model's."""
    for column, value in row.items():
        if isinstance(value, str):
            row[column] = shown_text(value, MAX_MODEL_NAME_CHARS if column == "model" else MAX_SHOWN_TEXT_CHARS,
                                     lines=column != "model")


def is_missing(value: Any) -> bool:
    return value is None or isinstance(value, float) and math.isnan(value) or value is pd.NA


def fact_choices(frame: pd.DataFrame) -> dict[str, list[str]]:
    """The distinct non-empty organisations and request modes of a board's rows, sorted: the page's filter choices."""
    return {column: sorted({str(v) for v in frame[column] if not is_missing(v) and str(v).strip()})
            if column in frame.columns else [] for column in ("organisation", "request_mode")}


def board_updated(frame: pd.DataFrame) -> str | None:
    """When the board's newest ranked numbers were produced (ISO date): a row kept apart (a partial run, an upload)
    changes no ranking, so it does not make the board newer; None for a board without ranked rows."""
    if UPDATED_COLUMN not in frame.columns:
        return None
    ranked = frame[UPDATED_COLUMN]
    if APART_COLUMN in frame.columns:
        ranked = ranked[[is_missing(reason) or not str(reason).strip() for reason in frame[APART_COLUMN]]]
    return _newest(ranked)
