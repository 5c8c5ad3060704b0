"""The board's views as the front doors query them: a benchmark's rows (evaluators.service.board, cached by the
application services) narrowed to one view, search, sources, columns, facts and part, the invalid choices of a
control that still holds another benchmark's values put right."""

from __future__ import annotations

import pandas as pd

from evaluators.core.errors import ToolboardError
from evaluators.core.registry import MODES
from evaluators.service.app_services import AppServices
from evaluators.service.board import SOURCES, BoardQuery, check_filters, layout_for, query_board


def _query(view: str | None, search: str, sources: list[str] | None, columns: list[str] | None, details: bool,
           sort_by: str | None, part: str = "all", organisations: list[str] | None = None, open_weights_only: bool = False,
           request_modes: list[str] | None = None, min_params_b: float | None = None, max_params_b: float | None = None,
           weights: str = "any", hide_flagged: bool = False) -> BoardQuery:
    return BoardQuery(view=view or None, search=search or "", sources=tuple(SOURCES if sources is None else sources),
                      columns=tuple(columns) if columns is not None else None,
                      details=bool(details), sort_by=sort_by or None, part=part,
                      organisations=tuple(organisations) if organisations else None,
                      open_weights_only=bool(open_weights_only),
                      request_modes=tuple(request_modes) if request_modes else None,
                      min_params_b=min_params_b, max_params_b=max_params_b, weights=weights or "any",
                      hide_flagged=bool(hide_flagged))


def view_rows(services: AppServices, benchmark: str, view: str | None, search: str, sources: list[str] | None,
              columns: list[str] | None, details: bool, mode: str, sort_by: str | None, part: str = "all",
              organisations: list[str] | None = None, open_weights_only: bool = False,
              request_modes: list[str] | None = None, min_params_b: float | None = None,
              max_params_b: float | None = None, weights: str = "any", hide_flagged: bool = False) -> pd.DataFrame:
    """The rows of the current view as fractions (what charts use); `part` as in BoardQuery; empty
    organisations or request modes: every one; min_params_b / max_params_b: a size range in billions (a row of
    unknown size is dropped when either is given); weights: "any", "open" or "closed" (open_weights_only=True is
    weights="open"); hide_flagged: drop the flagged rows (FLAG_COLUMN). A bad filter raises ToolboardError."""
    # Checked before anything is built, so a bad choice costs nothing.
    check_filters(min_params_b, max_params_b, weights or "any", open_weights_only)
    layout = layout_for(benchmark)
    if mode not in MODES:  # each scoring mode is a board of its own: never build one for a made-up name
        raise ToolboardError(f"unknown scoring mode {mode!r}: choose one of {', '.join(MODES)}")
    # While the page switches benchmark, a control may still hold the previous benchmark's choice.
    if view and view not in layout.views:
        view = layout.views[0]
    if columns is not None:
        columns = list(dict.fromkeys(c for c in columns if c in layout.columns)) or (list(layout.columns) if columns else [])
    frame = services.board_frame(benchmark, mode)
    return query_board(frame, layout, _query(view, search, sources, columns, details, sort_by, part, organisations,
                                             open_weights_only, request_modes, min_params_b, max_params_b, weights,
                                             hide_flagged))
