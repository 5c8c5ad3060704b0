"""The board's state: every choice of the Leaderboard tab's controls, as the page's URL keeps it (only what
differs from the defaults) and as the controls send it (a stale or invalid value falls back to its default)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlencode

from evaluators.core.registry import MODES, benchmark_names
from evaluators.service.board import SOURCES, layout_for

MAX_SEARCH_CHARS = 200
MAX_SENT_CHARS = 1_000  # a control's text as sent: longer is cut before any check
TRUE_WORDS = ("1", "true", "yes", "on")
# Model type by weights: every model, open-weights models only, closed (API-only) models only.
WEIGHTS = ("any", "open", "closed")
MAX_PARAMS_B = 100_000.0  # a size bound past any model: larger input is not a size


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
    weights: str = "any"
    request_modes: tuple[str, ...] = ()
    min_params_b: float | None = None
    max_params_b: float | None = None
    hide_flagged: bool = False

    def controls(self) -> tuple[Any, ...]:
        """The values of the page's filter controls, in their order (CONTROL_NAMES)."""
        return (self.benchmark, self.view, self.search, list(self.sources), list(self.columns), self.details, self.mode,
                self.sort_by, list(self.organisations), self.weights, list(self.request_modes), self.min_params_b,
                self.max_params_b, self.hide_flagged)


CONTROL_NAMES = ("benchmark", "view", "search", "sources", "columns", "details", "mode", "sort_by", "organisations",
                 "weights", "request_modes", "min_params_b", "max_params_b", "hide_flagged")


def default_state(benchmark: str | None = None) -> BoardState:
    """The board as a first visit shows it: the first benchmark (or `benchmark`) with its defaults."""
    name = benchmark or benchmark_names()[0]
    layout = layout_for(name)
    return BoardState(benchmark=name, view=layout.views[0], columns=tuple(layout.columns), sort_by=layout.default_sort)


def view_key(benchmark: str) -> str:
    """The URL key of the benchmark's view: its label (language, subset, tool), so a URL reads plainly."""
    return re.sub(r"\W+", "_", layout_for(benchmark).view_label.lower()).strip("_") or "view"


Facts = Callable[[str, str], Mapping[str, list[str]]]


def params_bound(text: str | None) -> float | None:
    """A size bound (billions of parameters) from a URL or a number box: None when empty or not a size."""
    try:
        value = float(str(text).strip()) if text is not None and str(text).strip() else None
    except ValueError:
        return None
    return value if value is not None and math.isfinite(value) and 0 <= value <= MAX_PARAMS_B else None


def bound_text(value: float) -> str:
    return f"{value:g}"


def state_from_params(params: Mapping[str, list[str]], facts: Facts) -> BoardState:
    """A board state from a URL's query (key -> its values): anything unknown or invalid is ignored and
    keeps its default. `facts(benchmark, mode)` gives the organisations and request modes to accept."""
    def first(key: str) -> str | None:
        values = params.get(key) or []
        return str(values[0]) if values else None

    names = benchmark_names()
    asked_benchmark, asked_mode = first("benchmark"), first("mode")
    benchmark = asked_benchmark if asked_benchmark is not None and asked_benchmark in names else names[0]
    state, layout = default_state(benchmark), layout_for(benchmark)
    view = first(view_key(benchmark))
    mode = asked_mode if asked_mode is not None and asked_mode in MODES else state.mode
    weights = first("weights") if first("weights") in WEIGHTS else (
        "open" if (first("open") or "").lower() in TRUE_WORDS else "any")  # `open=1`: the older links' key
    changes: dict[str, Any] = {"mode": mode, "search": (first("q") or "")[:MAX_SEARCH_CHARS],
                               "details": (first("detail") or "").lower() in TRUE_WORDS, "weights": weights,
                               "hide_flagged": (first("noflag") or "").lower() in TRUE_WORDS,
                               "min_params_b": params_bound(first("pmin")), "max_params_b": params_bound(first("pmax"))}
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
    if state.weights != default.weights:
        pairs.append(("weights", state.weights))
    pairs += [("req", r) for r in state.request_modes]
    if state.min_params_b is not None:
        pairs.append(("pmin", bound_text(state.min_params_b)))
    if state.max_params_b is not None:
        pairs.append(("pmax", bound_text(state.max_params_b)))
    if state.hide_flagged:
        pairs.append(("noflag", "1"))
    return urlencode(pairs)


def query_lists(query_params: Any) -> dict[str, list[str]]:
    """A request's query parameters as key -> every value given (a key may repeat)."""
    items = query_params.multi_items() if hasattr(query_params, "multi_items") else dict(query_params or {}).items()
    found: dict[str, list[str]] = {}
    for key, value in items:
        found.setdefault(str(key), []).append(str(value))
    return found


# What each control holds as the page sends it: one text, several texts, or a yes/no.
CONTROL_KINDS = {"benchmark": str, "view": str, "search": str, "sources": list, "columns": list, "details": bool,
                 "mode": str, "sort_by": str, "organisations": list, "weights": str, "request_modes": list,
                 "min_params_b": str, "max_params_b": str, "hide_flagged": bool}


def sent_value(kind: type, value: Any) -> Any:
    """One control's value as a page or an API caller sent it (the board's events skip Gradio's checks) in the shape
    the control holds, else None (the control's default). A size bound may come as a number, the weights control
    as an older page's checkbox."""
    if kind is list:
        return [str(item) for item in value if isinstance(item, str | int | float) and not isinstance(item, bool)] \
            if isinstance(value, list) else None
    if kind is bool:
        return value if isinstance(value, bool) else None
    if isinstance(value, str):
        return value[:MAX_SENT_CHARS]
    return value if isinstance(value, int | float) else None


def sent_controls(values: tuple[Any, ...]) -> tuple[Any, ...]:
    """The page's control values (CONTROL_NAMES order) with every value of an unexpected shape dropped."""
    return tuple(sent_value(CONTROL_KINDS[name], value) for name, value in zip(CONTROL_NAMES, values))


def controls_state(values: tuple[Any, ...], facts: Facts) -> BoardState:
    """The page's control values (in CONTROL_NAMES order; API callers may send only the first eleven) as a valid
    state: while the page switches benchmark a control may still hold the previous benchmark's choice; it falls
    back to the default like an invalid URL. The weights control may be the older open-weights-only checkbox."""
    given = sent_controls(values)
    padded = (*given, *default_state().controls()[len(given):])[:len(CONTROL_NAMES)]
    (benchmark, view, search, sources, columns, details, mode, sort_by, organisations, weights, request_modes,
     min_params_b, max_params_b, hide_flagged) = padded
    if isinstance(weights, bool) or weights is None:
        weights = "open" if weights else "any"
    benchmark = benchmark or benchmark_names()[0]
    params: dict[str, list[str]] = {"benchmark": [benchmark], "q": [search or ""], "mode": [mode or "official"],
                                    "sources": list(SOURCES if sources is None else sources) or [""],
                                    "detail": ["1" if details else ""], "weights": [str(weights)],
                                    "org": list(organisations or []), "req": list(request_modes or []),
                                    "noflag": ["1" if hide_flagged else ""]}
    for key, bound in (("pmin", min_params_b), ("pmax", max_params_b)):
        if bound is not None:
            params[key] = [str(bound)]
    if benchmark in benchmark_names():
        params[view_key(benchmark)] = [view or ""]
    if columns is not None:
        params["columns"] = list(columns) or [""]
    if sort_by:
        params["sort"] = [sort_by]
    return state_from_params(params, facts)


def hidden_choices(state: BoardState) -> bool:
    """Whether a choice in the closed "more filters" section differs from the default (then it opens)."""
    default = default_state(state.benchmark)
    return (set(state.sources) != set(default.sources) or state.columns != default.columns
            or bool(state.organisations) or bool(state.request_modes) or state.weights != default.weights
            or state.min_params_b is not None or state.max_params_b is not None or state.hide_flagged)
